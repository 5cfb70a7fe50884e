"""Regression tests (fuzz wave 3): reductions, shapes, scatter, linalg and ldexp against torch."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _both(fn):
    """``fn`` run on ember and torch: ("ok", value) or ("raise", class name, message)."""
    out = []
    for L in (ember, torch):
        try:
            r = fn(L)
            out.append(("ok", r))
        except Exception as e:     # noqa: BLE001 (the class is compared)
            out.append(("raise", type(e).__name__, str(e)))
    return out


def _same(fn, atol=1e-6):
    e, t = _both(fn)
    assert e[0] == t[0], (e, t)
    if e[0] == "raise":
        assert e[1:] == t[1:]
        return
    ev, tv = e[1], t[1]
    if not isinstance(ev, (tuple, list)):
        ev, tv = (ev,), (tv,)
    for a, b in zip(ev, tv):
        a, b = np.asarray(a.detach().numpy()), b.detach().numpy()
        assert a.shape == b.shape and str(a.dtype) == str(b.dtype)
        np.testing.assert_allclose(a, b, atol=atol, equal_nan=True)


@pytest.mark.parametrize("op", ["median", "nanmedian"])
@pytest.mark.parametrize("shape,dtype,dim", [
    ((0,), "bool", -1), ((0,), "bool", None), ((2,), "bool", None), ((2,), "bool", 0),
    ((0, 3), "bool", 0), ((0, 3), "bool", 1), ((0,), "complex64", 0), ((2,), "complex64", 0),
    ((0,), "float16", 0), ((0,), "int64", None)])
def test_median_checks_size_before_dtype(op, shape, dtype, dim):
    def f(L):
        x = L.zeros(shape, dtype=getattr(L, dtype))
        r = getattr(x, op)() if dim is None else getattr(x, op)(dim)
        return r if dim is None else r.values
    _same(f)


@pytest.mark.parametrize("op", ["cumsum_", "cumprod_"])
@pytest.mark.parametrize("shape,dim", [((), -1), ((), 0), ((1,), 0), ((2, 2, 2), -1),
                                       ((2, 0), 1), ((2, 1), 1)])
def test_inplace_cum_on_bool(op, shape, dim):
    _same(lambda L: getattr(L.ones(shape, dtype=L.bool), op)(dim))


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_cum_with_bool_dtype(op):
    _same(lambda L: getattr(L.ones((2, 2), dtype=L.bool), op)(1, dtype=L.bool))
    _same(lambda L: getattr(L.ones((), dtype=L.bool), op)(0, dtype=L.bool))
    _same(lambda L: getattr(L.ones((2, 3), dtype=L.int8), op + "_")(1))


def test_cumprod_grad_single_element_dim_with_inf():
    vals = np.array([[np.inf, 1.5], [-np.inf, 0.0]])
    grads = []
    for L in (ember, torch):
        x = L.tensor(vals, requires_grad=True)
        y = L.cumprod(x.unsqueeze(-1), -1)
        y.sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], equal_nan=True)


def test_vander_grad_with_inf():
    vals = np.array([[np.inf, -np.inf], [1.70296387, -0.6521804]])
    grads = []
    for L in (ember, torch):
        x = L.tensor(vals, requires_grad=True)
        L.linalg.vander(x).mul(L.arange(8.).reshape(2, 2, 2)).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], equal_nan=True)


@pytest.mark.parametrize("name", ["view", "reshape"])
def test_view_reshape_need_a_shape(name):
    _same(lambda L: getattr(L.ones(2), name)())
    _same(lambda L: getattr(L.ones(()), name)(()))
    _same(lambda L: getattr(L.ones(()), name)([]))


def test_reshape_function_needs_a_shape():
    _same(lambda L: L.reshape(L.ones(2)))


def test_index_reduce_mean_bool_leaves_the_sum():
    states = []
    for L in (ember, torch):
        base = L.zeros(3, 8, dtype=L.bool)
        src = L.tensor(np.array([[True, False], [False, True], [True, True]]))
        with pytest.raises(NotImplementedError, match="div_floor_cpu"):
            base[..., ::2].index_reduce_(-1, L.tensor([3, 1]), src, "mean")
        states.append(base.numpy())
    np.testing.assert_array_equal(states[0], states[1])


@pytest.mark.parametrize("ord", [1, -1, 2, -2, float("inf"), -float("inf"), "fro", "nuc"])
@pytest.mark.parametrize("shape", [(3, 0), (0, 3), (2, 0, 3)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_matrix_norm_of_empty(ord, shape, keepdim):
    def f(L):
        r = L.linalg.matrix_norm(L.ones(shape, requires_grad=True), ord, keepdim=keepdim)
        return r, L.tensor(r.grad_fn is None)
    _same(f)


def test_linalg_norm_of_empty():
    _same(lambda L: L.linalg.norm(L.ones(3, 0), -2, keepdim=True))
    _same(lambda L: L.linalg.norm(L.ones(3, 0), 1))


def test_lu_unpack_pivots_only_checked_when_unpacked():
    for piv in ([1, 2], [1.0, 2.0], [1, 2, 3]):
        _same(lambda L: L.lu_unpack(L.ones(3, 2), L.tensor(piv), unpack_pivots=False)[1:])
    _same(lambda L: L.lu_unpack(L.ones(3, 2), L.tensor([1, 2]), unpack_pivots=True))


@pytest.mark.parametrize("sa,sb", [((2, 1, 3), (1, 1)), ((2, 1, 3), (2, 1)), ((2, 3, 2), (3, 2)),
                                   ((2, 3, 2), (2, 3)), ((3, 2), (3,)), ((2, 3, 2), (1, 3, 1)),
                                   ((2, 3, 2), (3, 1))])
def test_lstsq_vector_rule(sa, sb):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    _same(lambda L: L.linalg.lstsq(L.tensor(a), L.tensor(b))[:1], atol=1e-8)


def test_ldexp_broadcast_error_before_dtype():
    _same(lambda L: L.ldexp(L.ones(4, dtype=L.float64), L.ones(3, 0, dtype=L.bool)))
    _same(lambda L: L.ones(4).ldexp(L.ones(3, 0, dtype=L.bool)))
    _same(lambda L: L.ones(4).ldexp_(L.ones(3, 4, dtype=L.bool)))
    _same(lambda L: L.ones(4).ldexp_(L.ones(4, dtype=L.int64)))


def test_ldexp_complex_nonfinite():
    inf = np.inf
    b = np.array([inf + 0j, -inf + 0j, 1 + inf * 1j, np.nan + 0j, 2 + 1j, 0j, complex(inf, 1)])
    a = np.full(b.shape, 1.5 + 0.5j)
    _same(lambda L: L.ldexp(L.tensor(a), L.tensor(b)))


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cumsum_", "cumprod_"])
def test_cumulative_ops_check_the_dim_before_the_bool_dtype(name):
    # torch raises IndexError for an out-of-range dim before its bool-kernel error
    errors = []
    for lib in (torch, ember):
        with pytest.raises(Exception) as info:
            getattr(lib.ones(2, 1, 3, dtype=lib.bool), name)(3)
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]
