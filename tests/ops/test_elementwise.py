"""Element-wise ops beyond the op database: type promotion, errors, grad_fn names, in-place,
special values, and hypothesis tests on broadcast shapes and op chains (all against torch)."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import ember
from oracle import compare

__all__ = []

_INT_ARRAYS = {
    "int64": np.array([[3, -2, 5], [0, 7, -4]], dtype=np.int64),
    "int32": np.array([1, 2, -3], dtype=np.int32),
    "uint8": np.array([1, 2, 250], dtype=np.uint8),
    "bool": np.array([True, False, True]),
    "float32": np.array([0.5, -1.5, 2.0], dtype=np.float32),
    "float64": np.array([0.25, 1.5, -2.0], dtype=np.float64),
}
_SCALARS = [2, -3, 2.5, True]


def _both(torch, fn):
    """Run ``fn(lib)`` in both libraries: the results, or the exceptions they raise."""
    out = []
    for lib in (ember, torch):
        try:
            out.append(fn(lib))
        except Exception as e:  # noqa: BLE001  (compared across libraries below)
            out.append(e)
    return out


def _same_error_or_compare(torch, fn, *arrays):
    e, t = _both(torch, lambda lib: fn(lib, *[lib.tensor(a) for a in arrays]))
    if isinstance(t, Exception):
        assert isinstance(e, Exception), "torch raises %r, ember returns %r" % (t, e)
        return
    assert not isinstance(e, Exception), "ember raises %r, torch returns %r" % (e, t)
    compare(torch, fn, *arrays, grad=False)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "true_divide", "floor_divide",
                                "remainder", "fmod", "pow", "maximum", "minimum", "eq", "lt",
                                "ge", "logical_and", "logical_xor", "atan2", "hypot",
                                "logaddexp", "xlogy"])
@pytest.mark.parametrize("left, right", [("int64", "int64"), ("int64", "int32"),
                                         ("int32", "bool"), ("bool", "bool"),
                                         ("int64", "float32"), ("uint8", "int32"),
                                         ("float32", "float64"), ("bool", "float32")])
def test_tensor_tensor_promotion(torch, op, left, right):
    a, b = _INT_ARRAYS[left], _INT_ARRAYS[right]
    if a.shape != b.shape:
        a = a[0]
    if op == "pow" and b.dtype.kind in "iu":
        b = np.abs(b)
    _same_error_or_compare(torch, lambda L, x, y: getattr(L, op)(x, y), a, b)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "floor_divide", "remainder",
                                "fmod", "pow", "eq", "gt", "rsub"])
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float32"])
@pytest.mark.parametrize("scalar", _SCALARS)
def test_tensor_scalar_promotion(torch, op, dtype, scalar):
    a = _INT_ARRAYS[dtype]
    _same_error_or_compare(torch, lambda L, x: getattr(L, op)(x, scalar), a)


@pytest.mark.parametrize("expr", ["s + x", "s - x", "s * x", "s / x", "s ** x", "s // x",
                                  "s % x", "x ** s", "x / s", "x // s"])
@pytest.mark.parametrize("dtype", ["int64", "float32", "bool"])
def test_reflected_scalar_operators(torch, expr, dtype):
    a = _INT_ARRAYS[dtype]
    if dtype == "int64":
        a = np.abs(a) + 1
    _same_error_or_compare(torch, lambda L, x: eval(expr, {"x": x, "s": 3}), a)


@pytest.mark.parametrize("op", ["exp", "log", "sqrt", "sin", "sigmoid", "tanh", "erf",
                                "erfinv", "exp2", "log2", "reciprocal", "rsqrt", "abs", "neg",
                                "sign", "floor", "round", "square", "relu", "frac"])
@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_unary_integer_inputs(torch, op, dtype):
    """Integer and bool inputs: float results in the default dtype, or torch's error."""
    a = _INT_ARRAYS[dtype]
    if op in ("log", "sqrt", "log2", "rsqrt", "reciprocal") and dtype != "bool":
        a = np.abs(a) + 1
    if op == "erfinv":
        a = a.astype(bool)
    _same_error_or_compare(torch, lambda L, x: getattr(L, op)(x), a)


def test_default_dtype_float64_promotion(torch):
    prev = ember.get_default_dtype(), torch.get_default_dtype()
    ember.set_default_dtype(ember.float64)
    torch.set_default_dtype(torch.float64)
    try:
        compare(torch, lambda L, x: (L.exp(x), x / 2, x * 2.5, L.atan2(x, x)),
                np.array([1, 2, 3]), grad=False)
    finally:
        ember.set_default_dtype(prev[0])
        torch.set_default_dtype(prev[1])


@pytest.mark.parametrize("fn", [
    lambda L: L.ones(2, 3) + L.ones(4),
    lambda L: L.mul(L.ones(2, 3), L.ones(3, 2)),
    lambda L: L.maximum(L.ones(2), L.ones(3)),
    lambda L: L.atan2(L.ones(2, 3), L.ones(4, 1)),
    lambda L: L.where(L.ones(2) > 0, L.ones(3), L.ones(2)),
    lambda L: L.softmax(L.ones(2, 3), 2),
    lambda L: L.log_softmax(L.ones(2, 3), -3),
    lambda L: L.tensor([True]) - L.tensor([False]),
    lambda L: -L.tensor([True]),
    lambda L: L.tensor([1, 2]) - True,
    lambda L: L.tensor([5]) % 0,
    lambda L: L.tensor([5]) // 0,
    lambda L: L.fmod(L.tensor([5]), 0),
    lambda L: L.tensor([2]) ** -1,
    lambda L: L.div(L.ones(2), 2, rounding_mode="round"),
    lambda L: L.clamp(L.ones(2)),
    lambda L: L.ones(2, 3).add_(L.ones(2, 1, 3)),
    lambda L: L.tensor([1, 2]).add_(1.5),
    lambda L: L.softmax(L.tensor([1, 2]), 0),
], ids=lambda f: "")
def test_errors_match_torch(torch, fn):
    e, t = _both(torch, fn)
    assert isinstance(t, Exception), "torch does not raise here"
    assert isinstance(e, Exception), "ember does not raise; torch raises %r" % t
    assert isinstance(e, type(t)) or isinstance(t, type(e)), (e, t)
    first = str(t).splitlines()[0]
    assert str(e).splitlines()[0] == first or first in str(e), (str(e), str(t))


@pytest.mark.parametrize("expr", [
    "x + y", "x - y", "x * y", "x / y", "x ** 2", "x ** y", "2 ** x", "-x", "x.exp()",
    "x.log()", "x.sqrt()", "x.rsqrt()", "x.abs()", "x.sin()", "x.cos()", "x.tan()", "x.sigmoid()",
    "x.tanh()", "x.relu()", "x.floor()", "x.sign()", "x.erf()", "x.erfinv()", "x.exp2()",
    "x.log2()", "x.log10()", "x.log1p()", "x.expm1()", "x.frac()", "x.asin()", "x.atan()",
    "x.sinh()", "x.clamp(0, 1)", "x.clamp(min=0)", "x.clamp_min(0)", "x.clamp(y)",
    "L.maximum(x, y)", "L.minimum(x, y)", "L.atan2(x, y)", "L.hypot(x, y)", "L.logaddexp(x, y)",
    "L.xlogy(x, y)", "L.fmod(x, y)", "L.fmod(x, 2)", "L.remainder(x, y)", "x % 2",
    "L.where(x > 0.5, x, y)", "L.softmax(x, 0)", "L.log_softmax(x, 0)", "L.lerp(x, y, 0.5)",
    "L.lerp(x, y, y)", "L.nan_to_num(x)", "L.logit(x)", "x.reciprocal()", "x.square()",
    "L.div(x, y, rounding_mode='floor')", "x.clamp_min(y)", "x.clamp_max(0.5)",
    "x.clamp_max(y)", "1 - x", "L.rsub(x, y)", "L.rsub(x, 2)", "L.sgn(x)", "L.celu(x)",
    "L.selu(x)", "L.remainder(x, 2.0)", "L.fmod(x, 0.5)"])
def test_grad_fn_names(torch, expr):
    names = []
    for lib in (ember, torch):
        x = lib.tensor([0.3, 0.6], requires_grad=True)
        y = lib.tensor([0.2, 0.9], requires_grad=True)
        # (name(): a variant's node is named by ctx.set_node_name, not by its class)
        names.append(eval(expr, {"x": x, "y": y, "L": lib}).grad_fn.name())
    assert names[0] == names[1]


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge", "logical_and",
                                "logical_or", "logical_xor"])
def test_comparisons_have_no_grad_fn(op):
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    out = getattr(ember, op)(x, x * 2)
    assert out.dtype == ember.bool
    assert out.grad_fn is None and not out.requires_grad


def test_isnan_isinf_isfinite_logical_not(torch):
    a = np.array([1.0, np.nan, np.inf, -np.inf, 0.0])
    compare(torch, lambda L, x: (L.isnan(x), L.isinf(x), L.isfinite(x), L.logical_not(x),
                                 L.isposinf(x), L.isneginf(x)), a, grad=False)


def test_allclose_and_equal(torch):
    for lib in (ember, torch):
        a = lib.tensor([1.0, 2.0, float("nan")])
        b = lib.tensor([1.0, 2.0 + 1e-6, float("nan")])
        assert lib.allclose(a[:2], b[:2]) is True
        assert lib.allclose(a, b) is False
        assert lib.allclose(a, b, equal_nan=True) is True
        assert lib.equal(a[:2], a[:2]) is True
        assert lib.equal(a[:2], b[:2]) is False
        assert lib.equal(lib.ones(2), lib.ones(3)) is False


def test_zero_gradient_ops(torch):
    for expr in ("x.floor()", "x.ceil()", "x.round()", "x.trunc()", "x.sign()",
                 "L.div(x, 0.7, rounding_mode='trunc')"):
        compare(torch, lambda L, x: eval(expr, {"x": x, "L": L}),
                np.array([0.3, -1.6, 2.5]))


def test_floor_divide_backward_raises(torch):
    for lib in (ember, torch):
        x = lib.tensor([1.5, 2.5], requires_grad=True)
        with pytest.raises(RuntimeError, match="floor_divide"):
            lib.floor_divide(x, 2.0).sum().backward()


def test_sign_of_nan_and_nan_to_num_defaults(torch):
    compare(torch, lambda L, x: (L.sign(x), L.nan_to_num(x)),
            np.array([np.nan, -0.0, 3.0, np.inf, -np.inf], dtype=np.float32), grad=False)


def test_erf_accuracy_against_math():
    xs = np.concatenate([np.linspace(-7, 7, 2001), [0.0, 1e-300, -1e-8, 2.9999999, 3.0,
                                                   26.0, -np.inf, np.inf]])
    got = ember.erf(ember.tensor(xs)).numpy()
    want = np.array([math.erf(v) for v in xs])
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-300)
    got_c = ember.erfc(ember.tensor(xs)).numpy()
    want_c = np.array([math.erfc(v) for v in xs])
    np.testing.assert_allclose(got_c, want_c, rtol=1e-10, atol=1e-300)
    assert np.isnan(ember.erf(ember.tensor([np.nan])).numpy()[0])


def test_erfinv_inverts_erf(torch):
    y = np.concatenate([np.linspace(-0.999999, 0.999999, 1001), [-1.0, 1.0, 1.5, -2.0, 0.0]])
    compare(torch, lambda L, x: L.erfinv(x), y, grad=False)
    inner = y[np.abs(y) < 1]
    back = ember.erf(ember.erfinv(ember.tensor(inner))).numpy()
    np.testing.assert_allclose(back, inner, rtol=1e-13, atol=1e-15)


def test_special_values_match_torch(torch):
    a = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-30, 1e30])
    for op in ("exp", "log", "sqrt", "sigmoid", "tanh", "erf", "erfc", "expm1", "log1p",
               "atan", "relu", "abs", "exp2", "rsqrt", "reciprocal", "frac"):
        compare(torch, lambda L, x: getattr(L, op)(x), a, grad=False)


def test_sigmoid_extremes_gradient(torch):
    compare(torch, lambda L, x: L.sigmoid(x), np.array([-200.0, -50.0, 0.0, 50.0, 200.0]))


def test_pow_gradient_corner_cases(torch):
    compare(torch, lambda L, x, y: x ** y, np.array([0.0, 0.0, 2.0, -1.5]),
            np.array([0.0, 2.0, 0.0, 2.0]))
    compare(torch, lambda L, x: x ** 0, np.array([0.0, 3.0]))
    compare(torch, lambda L, x: 0.0 ** x, np.array([0.0, 3.0]))


def test_inplace_version_and_leaf_error(torch):
    x = ember.tensor([0.5, 1.5], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.exp_()
    y = x * 1
    v = y._version
    y.erf_().clamp_(max=0.6)
    assert y._version == v + 2
    assert type(y.grad_fn).__name__ == "ClampBackward1"


def test_inplace_through_view_matches_torch(torch):
    def fn(L, x):
        y = x * 1
        y[0].mul_(3).sigmoid_()
        return y
    compare(torch, fn, np.arange(6.0).reshape(2, 3) / 5)


def test_maximum_gradient_splits_ties(torch):
    compare(torch, lambda L, x, y: L.maximum(x, y) * L.minimum(x, y),
            np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 3.0]))


def test_softmax_rows_and_dtype_arg(torch):
    compare(torch, lambda L, x: (x.softmax(dim=-1), x.log_softmax(0, dtype=L.float64)),
            np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32) * 30)


def test_softmax_all_ninf_row(torch):
    compare(torch, lambda L, x: L.softmax(x, 1), np.array([[-np.inf, -np.inf], [0.0, 1.0]]),
            grad=False)


_SHAPE = st.lists(st.integers(1, 3), min_size=0, max_size=3)


def _broadcast_pair(data):
    out = data.draw(_SHAPE)
    a = [d if data.draw(st.booleans()) else 1 for d in out]
    b = [d if data.draw(st.booleans()) else 1 for d in out]
    a = a[data.draw(st.integers(0, len(a))):]
    b = b[data.draw(st.integers(0, len(b))):]
    return tuple(a), tuple(b)


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), op=st.sampled_from(["add", "sub", "mul", "div", "maximum", "atan2",
                                           "hypot", "logaddexp", "pow", "fmod", "xlogy",
                                           "minimum", "lerp"]))
def test_binary_broadcast_shapes(torch, data, op):
    sa, sb = _broadcast_pair(data)
    rng = np.random.default_rng(data.draw(st.integers(0, 1000)))
    a = rng.uniform(0.5, 2.0, sa)
    b = rng.uniform(0.5, 2.0, sb)
    if op == "lerp":
        compare(torch, lambda L, x, y: L.lerp(x, y, 0.25), a, b)
    else:
        compare(torch, lambda L, x, y: getattr(L, op)(x, y), a, b)


_CHAIN = ["exp", "tanh", "sigmoid", "sin", "erf", "atan", "abs", "neg", "square", "relu",
          "softmax", "log_softmax", "add_self", "mul_self", "cumsum", "clamp"]


def _apply(L, name, x):
    if name in ("softmax", "log_softmax", "cumsum"):
        return getattr(L, name)(x, -1)
    if name == "add_self":
        return x + x * 0.5
    if name == "mul_self":
        return x * x.sigmoid()
    if name == "clamp":
        return x.clamp(-0.8, 0.8)
    return getattr(L, name)(x)


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.sampled_from(_CHAIN), min_size=2, max_size=6),
       seed=st.integers(0, 1000))
def test_random_op_chains(torch, ops, seed):
    a = np.random.default_rng(seed).standard_normal((2, 3))

    def fn(L, x):
        for name in ops:
            x = _apply(L, name, x)
        return x
    compare(torch, fn, a)
