"""Issue 21: fidelity leftovers (zero gradients under inf upstream, fmax/fmin ties, Python-scalar
TypeErrors, bfloat16 accumulation, overflow checks, dtype refusals), each compared with torch."""
import math

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

INF, NAN = math.inf, math.nan


def _both(fn):
    """``fn(lib)`` for ember and torch: (result or exception) pairs."""
    out = []
    for lib in (ember, torch):
        try:
            out.append(fn(lib))
        except Exception as e:    # noqa: BLE001 (the exception itself is compared)
            out.append(e)
    return out


def _same_error(fn):
    e, t = _both(fn)
    assert isinstance(t, Exception), "torch did not raise"
    assert type(e) is type(t), (e, t)
    assert str(e) == str(t)


def _np(t):
    t = t.detach()
    if t.dtype in (torch.bfloat16, ember.bfloat16):
        t = t.float()
    return np.asarray(t.numpy() if hasattr(t, "numpy") else t)


def _same_value(e, t, exact=True):
    assert str(e.dtype).replace("torch.", "") == str(t.dtype).replace("torch.", "")
    a, b = _np(e), _np(t)
    assert a.shape == b.shape
    if exact:
        np.testing.assert_array_equal(a, b)
        if a.dtype.kind == "f":    # (-0.0 vs 0.0; a nan's sign is not compared)
            np.testing.assert_array_equal(np.signbit(a) & ~np.isnan(a),
                                          np.signbit(b) & ~np.isnan(b))
    else:
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def _grads(fn, x_vals, g_vals, n_inputs=1, y_vals=None):
    """Gradients of ``fn(lib, *inputs)`` with upstream ``g_vals``, for ember and torch."""
    res = []
    for lib in (ember, torch):
        xs = [lib.tensor(x_vals, requires_grad=True)]
        if n_inputs == 2:
            xs.append(lib.tensor(y_vals, requires_grad=True))
        out = fn(lib, *xs)
        out.backward(lib.tensor(g_vals))
        res.append([x.grad for x in xs])
    return res


@pytest.mark.parametrize("name, fn", [
    ("pow0", lambda L, x: x.pow(0)),
    ("pow0.0", lambda L, x: x.pow(0.0)),
    ("div_floor", lambda L, x: x.div(2.0, rounding_mode="floor")),
    ("div_trunc", lambda L, x: x.div(2.0, rounding_mode="trunc")),
    ("where", lambda L, x: L.where(x > 0, x, x * 2)),
    ("angle", lambda L, x: L.angle(x)),
])
def test_zero_gradient_under_inf_upstream(name, fn):
    (ge,), (gt,) = _grads(fn, [-1.0, 0.0, 2.0], [INF, NAN, 1.0])
    _same_value(ge, gt)


def test_div_rounding_tensor_divisor_grads():
    ge, gt = _grads(lambda L, x, y: L.div(x, y, rounding_mode="floor"), [1.0, 2.0], [INF, NAN],
                    2, [3.0, 0.5])
    for a, b in zip(ge, gt):
        _same_value(a, b)


def test_rpow_zero_base_grad():
    (ge,), (gt,) = _grads(lambda L, b: L.pow(0.0, b), [0.0, 1.0, -1.0, NAN], [1.0, 1, 1, 1])
    _same_value(ge, gt)


@pytest.mark.parametrize("op", ["fmax", "fmin", "maximum", "minimum"])
@pytest.mark.parametrize("a, b", [([1.0, 2, NAN], [1.0, 1, 1]), ([1.0, NAN, NAN], [1.0, 1, NAN]),
                                  ([-0.0, 0.0, 3.0], [0.0, -0.0, 3.0])])
def test_min_max_values_and_tie_grads(op, a, b):
    e, t = _both(lambda L: getattr(L, op)(L.tensor(a), L.tensor(b)))
    _same_value(e, t)
    ge, gt = _grads(lambda L, x, y: getattr(L, op)(x, y), a, [1.0, 2.0, 3.0], 2, b)
    for x, y in zip(ge, gt):
        _same_value(x, y)


@pytest.mark.parametrize("op", ["fmax", "fmin", "maximum", "minimum"])
@pytest.mark.parametrize("dtype", ["bool", "int64", "float16", "bfloat16"])
def test_min_max_dtypes(op, dtype):
    e, t = _both(lambda L: getattr(L, op)(L.tensor([1, 0, 1]).to(getattr(L, dtype)),
                                          L.tensor([0, 0, 1]).to(getattr(L, dtype))))
    _same_value(e, t)


_SCALAR_OPS = [(ember, n) for n in ("maximum", "minimum", "fmax", "fmin", "atan2", "hypot",
                                    "logaddexp", "logaddexp2", "nextafter", "ldexp", "heaviside",
                                    "gcd", "lcm", "dist", "polar", "complex", "igamma",
                                    "igammac")]


@pytest.mark.parametrize("name", [n for _, n in _SCALAR_OPS])
def test_python_scalar_type_errors(name):
    t = [1.0, 2.0]
    _same_error(lambda L: getattr(L, name)(L.tensor(t), 2))
    _same_error(lambda L: getattr(L, name)(2.0, L.tensor(t)))


def test_copysign_scalar_first_message():
    _same_error(lambda L: L.copysign(2.0, L.tensor([1.0, -1.0])))
    e, t = _both(lambda L: L.copysign(L.tensor([1.0, -1.0]), -2))
    _same_value(e, t)


def test_scalar_type_error_leaves_input_alone():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError):
        ember.maximum(x, 2)
    assert x.grad is None and x._version == 0 and x.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("name, fn, exact", [
    ("sum", lambda L, x: x.sum(), True),
    ("sum_dim", lambda L, x: x.reshape(10, 100).sum(1), True),
    ("cumsum", lambda L, x: x.cumsum(0), True),
    ("mean", lambda L, x: x.mean(), True),
    ("mean_dim", lambda L, x: x.reshape(10, 100).mean(1), True),
    ("nansum", lambda L, x: x.nansum(), True),
    ("nanmean", lambda L, x: x.nanmean(), True),
    ("var", lambda L, x: (x * L.arange(1000).to(x.dtype)).var(), True),
    ("std", lambda L, x: (x * L.arange(1000).to(x.dtype)).std(), True),
    ("var_mean", lambda L, x: L.var_mean(x * L.arange(1000).to(x.dtype))[0], True),
    ("logsumexp", lambda L, x: x.logsumexp(0), True),
    ("norm", lambda L, x: x.norm(), True),
])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_low_precision_reductions(name, fn, exact, dtype):
    e, t = _both(lambda L: fn(L, L.full((1000,), 0.1, dtype=getattr(L, dtype))))
    _same_value(e, t, exact)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
def test_nansum_integers_keep_int64(dtype):
    e, t = _both(lambda L: L.tensor([1, 0, 1]).to(getattr(L, dtype)).nansum())
    _same_value(e, t)


@pytest.mark.parametrize("name", ["sigmoid", "exp", "log", "tanh", "sign", "nan_to_num"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_low_precision_unary(name, dtype):
    vals = [-3.3, -0.7, 0.1, 0.9, 2.7, NAN, INF]
    e, t = _both(lambda L: getattr(L, name)(L.tensor(vals).to(getattr(L, dtype))))
    _same_value(e, t)


@pytest.mark.parametrize("fn", [
    lambda L, a, b: L.mv(a.reshape(2, 150).repeat(1, 2), b),
    lambda L, a, b: L.bmm(a.reshape(1, 2, 150).repeat(1, 1, 2), b.reshape(1, 300, 1)),
    lambda L, a, b: L.einsum("ij,j->i", a.reshape(2, 150).repeat(1, 2), b),
    lambda L, a, b: L.mm(a.reshape(2, 150).repeat(1, 2), b.reshape(300, 1)),
])
def test_bfloat16_products(fn):
    e, t = _both(lambda L: fn(L, L.full((300,), 1.0, dtype=L.bfloat16),
                              L.full((300,), 0.1, dtype=L.bfloat16)))
    _same_value(e, t)


@pytest.mark.parametrize("eq, dtype, n", [
    ("i->", "bool", 1), ("i->", "uint8", 1), ("i->", "int32", 1), ("ij->j", "bool", 1),
    ("ii->", "int32", 1), ("ii->i", "int32", 1), ("ij->ji", "bool", 1), ("i,i->", "int32", 2),
    ("i,i->i", "bool", 2), ("i,j->ij", "bool", 2), ("i,j->", "bool", 2), ("i,i->", "bool", 2),
])
def test_einsum_integer_dtypes(eq, dtype, n):
    def fn(L):
        vals = {1: [1, 1], 2: [[1, 0], [1, 1]]}
        subs = eq.split("->")[0].split(",")
        return L.einsum(eq, *[L.tensor(vals[len(s)]).to(getattr(L, dtype)) for s in subs])
    e, t = _both(fn)
    if isinstance(t, Exception):
        _same_error(fn)
    else:
        _same_value(e, t)


@pytest.mark.parametrize("fn", [
    lambda L: L.clamp(L.ones(3, dtype=L.uint8), 0, 300),
    lambda L: L.clamp(L.ones(3, dtype=L.int8), -1000),
    lambda L: L.ones(3, dtype=L.uint8).clamp_(0, 300),
    lambda L: L.clamp_min(L.ones(3, dtype=L.uint8), 300),
    lambda L: L.where(L.tensor([True, False]), L.ones(2, dtype=L.uint8), 300),
    lambda L: L.where(L.tensor([True, False]), 300, L.ones(2, dtype=L.uint8)),
    lambda L: L.where(L.tensor([True, False]), L.ones(2, dtype=L.int8), -300),
    lambda L: L.where(L.tensor([True, False]), L.ones(2, dtype=L.int32), 2 ** 40),
    lambda L: L.where(L.tensor([True, False]), L.ones(2), 1e300),
])
def test_scalar_overflow_errors(fn):
    _same_error(fn)


@pytest.mark.parametrize("fn", [
    lambda L: L.clamp(L.ones(3, dtype=L.uint8), -1),
    lambda L: L.clamp(L.ones(3, dtype=L.int64), max=2.5),
    lambda L: L.where(L.tensor([True, False]), L.ones(2, dtype=L.uint8), -1),
    lambda L: L.where(L.tensor([True, False]), L.ones(2, dtype=L.float16), 1e6),
    lambda L: L.where(L.tensor([True, False]), L.ones(2, dtype=L.uint8), 2.5),
    lambda L: L.where(L.tensor([True, False]), L.ones(2, dtype=L.int64), INF),
])
def test_scalar_no_overflow(fn):
    e, t = _both(fn)
    _same_value(e, t)


def test_overflow_error_leaves_input_alone():
    x = ember.ones(3, dtype=ember.uint8)
    with pytest.raises(RuntimeError):
        x.clamp_(0, 300)
    assert x.tolist() == [1, 1, 1] and x._version == 0


@pytest.mark.parametrize("fn", [
    lambda L: L.logcumsumexp(L.ones(3, dtype=L.int64), 0),
    lambda L: L.logcumsumexp(L.ones(3, dtype=L.bool), 0),
    lambda L: L.cummax(L.ones(3, dtype=L.complex64), 0),
    lambda L: L.cummin(L.ones(3, dtype=L.complex64), 0),
    lambda L: L.isin(L.ones(3, dtype=L.bool), L.ones(3, dtype=L.bool)),
    lambda L: L.isin(L.ones(3, dtype=L.complex64), L.ones(3, dtype=L.complex64)),
    lambda L: L.isin(L.ones(3), L.ones(3, dtype=L.bool)),
    lambda L: L.bincount(L.ones(3, dtype=L.bool)),
    lambda L: L.trace(L.ones(3, 3, dtype=L.bool)),
    lambda L: L.cross(L.ones(3, dtype=L.bool), L.ones(3, dtype=L.bool), dim=0),
    lambda L: L.histc(L.ones(3, dtype=L.bool)),
    lambda L: L.histc(L.ones(3, dtype=L.complex64)),
    lambda L: L.histc(L.ones(3, dtype=L.complex64), min=0, max=1),
    lambda L: L.histc(L.ones(3, dtype=L.int64)),
    lambda L: L.nanquantile(L.ones(3, dtype=L.int64), 0.5),
    lambda L: L.nanquantile(L.ones(3), 1.5),
    lambda L: L.nanquantile(L.ones(3), L.tensor([0.5], dtype=L.float64)),
    lambda L: L.dist(L.ones(2, dtype=L.long), L.ones(2, dtype=L.long)),
])
def test_dtype_refusals(fn):
    _same_error(fn)


def test_dist_complex_is_real():
    e, t = _both(lambda L: L.dist(L.ones(2, dtype=L.complex64), L.ones(2) * 2j))
    _same_value(e, t, exact=False)


def test_trace_bfloat16_and_cummax_bool():
    e, t = _both(lambda L: L.trace(L.ones(3, 3, dtype=L.bfloat16)))
    _same_value(e, t)
    e, t = _both(lambda L: L.cummax(L.tensor([True, False, True]), 0)[0])
    _same_value(e, t)


@pytest.mark.parametrize("e", [0.5, -0.5, 1.5, -1, 3, 2.5])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pow_grad_at_signed_zero(e, dtype):
    res = []
    for lib in (ember, torch):
        x = lib.tensor([-0.0, 0.0, 1.0], dtype=getattr(lib, dtype), requires_grad=True)
        x.pow(e).backward(lib.ones(3, dtype=getattr(lib, dtype)))
        res.append(x.grad)
    _same_value(*res)
