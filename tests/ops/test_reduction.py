"""Reductions beyond the op database: result types, errors, dtypes, ties, empty inputs, and
hypothesis tests over random shapes and dims (all against torch)."""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import ember
from oracle import compare

__all__ = []

_X = np.array([[1.0, 5.0, 5.0, 2.0], [7.0, 0.0, 3.0, 7.0], [2.0, 2.0, 2.0, 1.0]])


def _both(torch, fn):
    out = []
    for lib in (ember, torch):
        try:
            out.append(fn(lib))
        except Exception as e:  # noqa: BLE001  (compared across libraries below)
            out.append(e)
    return out


@pytest.mark.parametrize("name, call", [
    ("max", lambda L, x: L.max(x, 1)), ("min", lambda L, x: x.min(dim=0)),
    ("median", lambda L, x: x.median(1)), ("mode", lambda L, x: L.mode(x)),
    ("nanmedian", lambda L, x: x.nanmedian(0)),
])
def test_value_index_named_tuples(torch, name, call):
    e = call(ember, ember.tensor(_X))
    t = call(torch, torch.tensor(_X))
    assert type(e).__name__ == type(t).__name__ == name
    assert isinstance(e, tuple) and len(e) == 2
    assert e._fields == ("values", "indices")
    values, indices = e
    assert values is e.values and indices is e.indices and e[0] is e.values
    assert repr(e).startswith("torch.return_types.%s(\nvalues=tensor(" % name)
    assert "\nindices=tensor(" in repr(e)
    np.testing.assert_array_equal(e.values.numpy(), t.values.numpy())
    assert e.indices.dtype == ember.int64


def test_aminmax_named_tuple(torch):
    e = ember.aminmax(ember.tensor(_X), dim=1)
    t = torch.aminmax(torch.tensor(_X), dim=1)
    assert e._fields == ("min", "max")
    assert (e.min is e[0]) and (t.min.shape == e.min.shape)
    assert repr(e).startswith("torch.return_types.aminmax(\nmin=tensor(")
    np.testing.assert_array_equal(e.max.numpy(), t.max.numpy())


def test_max_of_two_tensors_is_maximum(torch):
    compare(torch, lambda L, a, b: (L.max(a, b), a.min(b)), _X, _X[::-1].copy())


@pytest.mark.parametrize("fn", [
    lambda L: L.zeros(0).max(),
    lambda L: L.zeros(0, 2).max(0),
    lambda L: L.zeros(2, 0).min(1),
    lambda L: L.zeros(0).amax(),
    lambda L: L.zeros(0, 3).amin(0),
    lambda L: L.zeros(0).argmax(),
    lambda L: L.zeros(0, 2).argmin(0),
    lambda L: L.zeros(0).aminmax(),
    lambda L: L.zeros(0, 3).median(0),
    lambda L: L.zeros(0, 3).mode(0),
    lambda L: L.zeros(2, 3).sum(2),
    lambda L: L.zeros(2, 3).mean(-3),
    lambda L: L.zeros(2, 3).max(5),
    lambda L: L.zeros(2, 3).amax((0, 0)),
    lambda L: L.zeros(2, 3).var((1, -1)),
    lambda L: L.zeros(2, 3).cumsum(2),
    lambda L: L.zeros(2, 3).logsumexp(-3),
    lambda L: L.zeros(2, 3).norm(dim=4),
    lambda L: L.tensor([1, 2]).mean(),
    lambda L: L.tensor([1, 2]).var(),
    lambda L: L.tensor([1, 2]).norm(),
    lambda L: L.zeros(0).norm(float("inf")),
    lambda L: L.zeros(2, 2, 2).norm(dim=(0, 1, 2)),
    lambda L: L.zeros(3).var(unbiased=True, correction=1),
], ids=lambda f: "")
def test_errors_match_torch(torch, fn):
    e, t = _both(torch, fn)
    assert isinstance(t, Exception), "torch does not raise here"
    assert isinstance(e, Exception), "ember does not raise; torch raises %r" % t
    assert isinstance(e, type(t)) or isinstance(t, type(e)), (e, t)


@pytest.mark.parametrize("fn", [
    lambda L: L.zeros(2, 3).sum(2),
    lambda L: L.zeros(2, 3).max(-3),
    lambda L: L.zeros(2, 3).amax(2),
    lambda L: L.zeros(2, 3).cumsum(-4),
    lambda L: L.zeros(()).sum(1),
    lambda L: L.zeros(0).max(),
    lambda L: L.zeros(0, 2).max(0),
    lambda L: L.tensor([1, 2]).mean(),
], ids=lambda f: "")
def test_error_messages_match_torch(torch, fn):
    e, t = _both(torch, fn)
    assert str(e) == str(t)


def test_empty_reductions(torch):
    z = np.zeros((0, 3))
    compare(torch, lambda L, x: (x.sum(), x.sum(0), x.prod(), x.prod(1), x.mean(), x.mean(0),
                                 x.norm(), x.logsumexp(0), x.cumsum(0), x.all(), x.any(),
                                 x.count_nonzero()), z)
    assert ember.tensor([]).median().isnan().item()


def test_zero_dim_reductions(torch):
    s = np.array(2.5)
    compare(torch, lambda L, x: (x.sum(0), x.mean(-1), x.max(0), x.argmax(0), x.amax(0),
                                 x.prod(0), x.cumsum(0), x.cumprod(0), x.logsumexp(0),
                                 x.norm(dim=0), x.median(0), x.softmax(0)), s)


@pytest.mark.parametrize("op", ["sum", "prod", "cumsum", "cumprod", "max", "amax", "argmax",
                                "median", "all", "any", "count_nonzero"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.bool_])
def test_integer_reduction_dtypes(torch, op, dtype):
    a = np.array([[1, 0, 3], [2, 2, 1]]).astype(dtype)
    if dtype == np.bool_ and op in ("argmax", "median"):
        e, t = _both(torch, lambda L: getattr(L, op)(L.tensor(a)))
        assert isinstance(t, Exception) and isinstance(e, type(t)) and str(e) == str(t)
        return
    if op in ("cumsum", "cumprod"):
        compare(torch, lambda L, x: getattr(L, op)(x, 1), a, grad=False)
    elif op == "count_nonzero":
        compare(torch, lambda L, x: (L.count_nonzero(x), L.count_nonzero(x, 0)), a, grad=False)
    else:
        compare(torch, lambda L, x: (getattr(L, op)(x), getattr(L, op)(x, 1)), a, grad=False)


def test_sum_prod_cumsum_dtype_argument(torch):
    a = np.array([[1, 2], [3, 4]])
    compare(torch, lambda L, x: (x.sum(dtype=L.float32), x.prod(1, dtype=L.float64),
                                 x.cumsum(0, dtype=L.float32), x.mean(dtype=L.float64)),
            a, grad=False)


def test_tie_gradients(torch):
    """Full max/min spread evenly over ties; max(dim) picks the first; amax spreads per slice."""
    compare(torch, lambda L, x: (x.max(), x.min(), x.max(1).values, x.min(0)[0],
                                 x.amax(1), x.amin(0), x.median(), x.norm(float("inf"))), _X)


def test_argmax_first_occurrence_and_keepdim_without_dim(torch):
    compare(torch, lambda L, x: (x.argmax(), x.argmin(1), x.argmax(keepdim=True),
                                 x.argmax(0, keepdim=True)), _X, grad=False)


def test_mode_picks_smallest_value_and_last_index(torch):
    a = np.array([[3.0, 2.0, 2.0, 3.0, 1.0], [4.0, 4.0, 4.0, 4.0, 0.0]])
    compare(torch, lambda L, x: (L.mode(x), L.mode(x, 0)), a)


def test_median_lower_and_nan(torch):
    compare(torch, lambda L, x: (x.median(), x.median(1)),
            np.array([[4.0, 1.0, 3.0, 2.0], [0.5, 2.5, 1.5, 3.5]]))
    compare(torch, lambda L, x: (x.median(), x.median(0), x.nanmedian(), x.nanmedian(0)),
            np.array([1.0, np.nan, 3.0, np.nan]))


def test_var_std_argument_forms(torch):
    compare(torch, lambda L, x: (L.var(x, 1), L.var(x, 1, True), L.var(x, 1, False, True),
                                 L.var(x, unbiased=False), L.var(x, False),
                                 L.std(x, dim=(0, 1), correction=0),
                                 L.std(x, 0, keepdim=True, correction=2),
                                 *L.var_mean(x, 1, keepdim=True), *L.std_mean(x, unbiased=False)),
            _X)


def test_var_single_element_warns_and_is_nan(torch):
    for lib in (ember, torch):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            out = lib.tensor([2.0]).var()
        assert np.isnan(out.item())
        assert any("degrees of freedom" in str(w.message) for w in rec)


def test_std_gradient_at_zero_spread(torch):
    compare(torch, lambda L, x: (x.std(1), x.std()), np.array([[1.0, 1.0, 1.0], [1.0, 2.0, 3.0]]))


def test_logsumexp_infinities(torch):
    compare(torch, lambda L, x: L.logsumexp(x, 1),
            np.array([[-np.inf, -np.inf], [np.inf, 1.0], [1000.0, 1000.0]]), grad=False)


def test_norm_gradient_at_zero(torch):
    compare(torch, lambda L, x: (x.norm(), x.norm(dim=1), x.norm(p=3, dim=1)),
            np.array([[0.0, 0.0], [3.0, -4.0]]))


def test_prod_and_cumprod_with_zeros(torch):
    a = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 1.5], [1.0, 2.0, 0.5]])
    compare(torch, lambda L, x: (x.prod(), x.prod(1), x.prod(0, keepdim=True), x.cumprod(1),
                                 x.cumprod(0)), a)


def test_grad_fn_names(torch):
    exprs = ["x.sum()", "x.sum(0)", "x.mean()", "x.mean(1)", "x.prod()", "x.prod(0)", "x.max()",
             "x.max(0)[0]", "x.min()", "x.min(1)[0]", "x.amax(0)", "x.amin()", "x.var()",
             "x.std(0)", "x.logsumexp(1)", "x.norm()", "x.norm(p=1, dim=0)", "x.cumsum(0)",
             "x.cumprod(1)", "x.median()", "x.median(0)[0]", "L.mode(x)[0]", "L.softmax(x, 0)",
             "L.log_softmax(x, 1)"]
    for expr in exprs:
        names = []
        for lib in (ember, torch):
            x = lib.tensor([[0.3, 0.6], [0.1, 0.9]], requires_grad=True)
            # (name(): a variant's node is named by ctx.set_node_name, not by its class)
            names.append(eval(expr, {"x": x, "L": lib}).grad_fn.name())
        assert names[0] == names[1], expr


def test_reductions_record_nothing_under_no_grad():
    x = ember.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    with ember.no_grad():
        outs = [x.sum(), x.max(0).values, x.var(), x.norm(), x.cumsum(0), x.logsumexp(1)]
    assert all(o.grad_fn is None and not o.requires_grad for o in outs)


def test_indices_are_not_differentiable():
    x = ember.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    r = x.max(1)
    assert r.values.requires_grad and not r.indices.requires_grad


def test_double_backward_through_softmax_and_var():
    x = ember.tensor([[0.2, -0.4, 1.1], [0.5, 0.3, -0.9]], dtype=ember.float64,
                     requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda t: ember.softmax(t, 1) * t.var(1, keepdim=True),
                                        (x,))


_SHAPES = st.lists(st.integers(1, 4), min_size=1, max_size=3)


def _dims(draw, ndim):
    dims = draw(st.lists(st.integers(-ndim, ndim - 1), min_size=1, max_size=ndim,
                         unique_by=lambda d: d % ndim))
    return tuple(dims)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), shape=_SHAPES,
       op=st.sampled_from(["sum", "mean", "var", "std", "amax", "amin", "logsumexp", "norm",
                           "nansum"]),
       keepdim=st.booleans())
def test_multi_dim_reductions(torch, data, shape, op, keepdim):
    dims = _dims(data.draw, len(shape))
    a = np.random.default_rng(len(shape) + sum(shape)).standard_normal(shape)
    if op in ("var", "std"):
        n = int(np.prod([shape[d] for d in dims]))
        if n < 2:
            return
    if op == "norm":
        compare(torch, lambda L, x: L.norm(x, 2, dim=dims, keepdim=keepdim), a)
        return
    compare(torch, lambda L, x: getattr(L, op)(x, dim=dims, keepdim=keepdim), a)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), shape=_SHAPES,
       op=st.sampled_from(["max", "min", "median", "argmax", "argmin", "cumsum", "cumprod",
                           "prod", "softmax", "log_softmax"]),
       keepdim=st.booleans())
def test_single_dim_reductions(torch, data, shape, op, keepdim):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    # distinct values, so that no tie decides an index
    a = np.random.default_rng(sum(shape)).permutation(int(np.prod(shape))).reshape(shape)
    a = a / 3.0 + 0.5

    def fn(L, x):
        f = getattr(L, op)
        if op in ("cumsum", "cumprod", "softmax", "log_softmax"):
            return f(x, dim)
        return f(x, dim, keepdim)
    compare(torch, fn, a)
