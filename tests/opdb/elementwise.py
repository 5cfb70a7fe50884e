"""Op-database entries of the element-wise family: unary, binary, comparisons, softmax."""
import numpy as np

from opdb import OpInfo, make

__all__ = ["OPS"]


def _unary_samples(low=-2.0, high=2.0):
    """A (2, 3) array, a transposed (non-contiguous) one, a 0-d one and a size-0 one."""
    def samples(dt):
        return [(make((2, 3), dt, low, high),),
                (make((3, 4), dt, low, high, seed=1).T,),
                (make((), dt, low, high, seed=2),),
                (make((0, 3), dt, low, high),)]
    return samples


def _binary_samples(low=-2.0, high=2.0, low2=None, high2=None):
    """Broadcasting pairs, a non-contiguous pair, a 0-d operand and a size-0 pair."""
    lo2 = low if low2 is None else low2
    hi2 = high if high2 is None else high2

    def samples(dt):
        return [(make((2, 3), dt, low, high), make((3,), dt, lo2, hi2, seed=1)),
                (make((2, 1), dt, low, high, seed=2), make((1, 3), dt, lo2, hi2, seed=3)),
                (make((4, 3), dt, low, high, seed=4).T, make((3, 4), dt, lo2, hi2, seed=5)),
                (make((2, 3), dt, low, high, seed=6), make((), dt, lo2, hi2, seed=7)),
                (make((0, 3), dt, low, high), make((3,), dt, lo2, hi2, seed=8))]
    return samples


def _inplace_samples(low2=-2.0, high2=2.0):
    """Pairs whose first operand already has the broadcast shape (in-place targets)."""
    def samples(dt):
        return [(make((2, 3), dt), make((3,), dt, low2, high2, seed=1)),
                (make((4, 3), dt, seed=4).T, make((3, 1), dt, low2, high2, seed=5)),
                (make((2, 3), dt, seed=6), make((), dt, low2, high2, seed=7))]
    return samples


def _with_scalar(scalar, low=-2.0, high=2.0):
    def samples(dt):
        return [(make((2, 3), dt, low, high), scalar), (make((), dt, low, high, seed=1), scalar)]
    return samples


def _unary(name, low=-2.0, high=2.0, **kw):
    return OpInfo(name, lambda L, x: getattr(L, name)(x), _unary_samples(low, high), **kw)


def _method(name, low=-2.0, high=2.0, **kw):
    return OpInfo(name + "_method", lambda L, x: getattr(x, name)(), _unary_samples(low, high),
                  **kw)


def _binary(name, low=-2.0, high=2.0, low2=None, high2=None, **kw):
    return OpInfo(name, lambda L, a, b: getattr(L, name)(a, b),
                  _binary_samples(low, high, low2, high2), **kw)


def _inplace(name, low=-2.0, high=2.0, **kw):
    return OpInfo(name + "_", lambda L, x: getattr(x * 1, name + "_")(),
                  _unary_samples(low, high), **kw)


_POS = dict(low=0.5, high=2.0)
_UNIT = dict(low=-0.9, high=0.9)

OPS = [
    _unary("exp"), _unary("exp2"), _unary("expm1"), _unary("log", **_POS),
    _unary("log2", **_POS), _unary("log10", **_POS), _unary("log1p", **_POS),
    _unary("sqrt", **_POS), _unary("rsqrt", **_POS), _unary("square"), _unary("abs"),
    _unary("sign"), _unary("sgn", differentiable=False), _unary("sin"), _unary("cos"),
    _unary("tan", low=-1.2, high=1.2), _unary("asin", **_UNIT), _unary("acos", **_UNIT),
    _unary("atan"), _unary("sinh"), _unary("cosh"), _unary("tanh"), _unary("sigmoid"),
    _unary("relu"), _unary("floor"), _unary("ceil"), _unary("round"), _unary("trunc"),
    _unary("frac"), _unary("erf"), _unary("erfc"), _unary("erfinv", **_UNIT), _unary("neg"),
    _unary("reciprocal", **_POS), _unary("logit", low=0.1, high=0.9), _unary("asinh"),
    _unary("acosh", low=1.2, high=3.0), _unary("atanh", **_UNIT), _unary("positive"),
    _method("exp"), _method("sigmoid"), _method("abs"), _method("log", **_POS),
    _inplace("exp"), _inplace("sqrt", **_POS), _inplace("tanh"), _inplace("erf"),
    _inplace("sigmoid"), _inplace("relu"), _inplace("neg"), _inplace("frac"),
    OpInfo("round_decimals", lambda L, x: L.round(x, decimals=2), _unary_samples()),
    OpInfo("logit_eps", lambda L, x: L.logit(x, eps=0.2), _unary_samples(0.0, 1.0)),
    OpInfo("nan_to_num", lambda L, x: L.nan_to_num(x, nan=0.5, posinf=3.0),
           lambda dt: [(np.array([1.0, np.nan, np.inf, -np.inf, -2.0], dtype=dt),)],
           skip_gradcheck=True),
    OpInfo("nan_to_num_default", lambda L, x: L.nan_to_num(x),
           lambda dt: [(np.array([1.0, np.nan, np.inf, -np.inf], dtype=dt),)],
           skip_gradcheck=True),
    OpInfo("clamp", lambda L, x: L.clamp(x, -0.5, 0.7), _unary_samples()),
    OpInfo("clamp_min", lambda L, x: L.clamp(x, min=0.1), _unary_samples()),
    OpInfo("clamp_max_method", lambda L, x: x.clamp(max=-0.1), _unary_samples()),
    OpInfo("clip", lambda L, x: L.clip(x, -1.0, 1.0), _unary_samples()),
    OpInfo("clamp_min_fn", lambda L, x: L.clamp_min(x, 0.3), _unary_samples()),
    OpInfo("clamp_max_fn", lambda L, x: L.clamp_max(x, 0.3), _unary_samples()),
    OpInfo("clamp_inverted", lambda L, x: L.clamp(x, 0.5, -0.5), _unary_samples()),
    OpInfo("clamp_tensor", lambda L, x, lo, hi: L.clamp(x, lo, hi),
           lambda dt: [(make((2, 3), dt), make((3,), dt, -1.5, 0.0, seed=1),
                        make((2, 1), dt, 0.0, 1.5, seed=2)),
                       (make((2, 3), dt), make((3,), dt, 0.0, 1.5, seed=3),
                        make((2, 1), dt, -1.5, 0.0, seed=4))]),
    OpInfo("clamp_tensor_min", lambda L, x, lo: x.clamp(min=lo),
           lambda dt: [(make((2, 3), dt), make((3,), dt, seed=1))]),
    OpInfo("clamp_", lambda L, x: (x * 1).clamp_(-0.5, 0.5), _unary_samples()),
    _binary("add"), _binary("sub"), _binary("mul"), _binary("div", low2=0.5, high2=2.0),
    _binary("true_divide", low2=0.5, high2=2.0),
    _binary("pow", low=0.5, high=2.0), _binary("atan2"), _binary("maximum"),
    _binary("minimum"), _binary("fmax"), _binary("fmin"), _binary("logaddexp"),
    _binary("logaddexp2"), _binary("hypot"), _binary("xlogy", low2=0.5, high2=2.0),
    _binary("fmod", low2=0.5, high2=2.0), _binary("remainder", low2=0.5, high2=2.0),
    _binary("floor_divide", low2=0.5, high2=2.0, differentiable=False),
    _binary("rsub"),
    OpInfo("fmod_neg", lambda L, a, b: L.fmod(a, b), _binary_samples(-2.0, 2.0, -2.0, -0.5)),
    OpInfo("remainder_neg", lambda L, a, b: a % b, _binary_samples(-2.0, 2.0, -2.0, -0.5)),
    OpInfo("div_floor", lambda L, a, b: L.div(a, b, rounding_mode="floor"),
           _binary_samples(-2.0, 2.0, 0.5, 2.0)),
    OpInfo("div_trunc", lambda L, a, b: L.div(a, b, rounding_mode="trunc"),
           _binary_samples(-2.0, 2.0, -2.0, -0.5)),
    OpInfo("add_alpha", lambda L, a, b: L.add(a, b, alpha=2.5), _binary_samples()),
    OpInfo("sub_alpha", lambda L, a, b: L.sub(a, b, alpha=-0.5), _binary_samples()),
    OpInfo("rsub_alpha", lambda L, a, b: L.rsub(a, b, alpha=3), _binary_samples()),
    OpInfo("add_scalar", lambda L, a, s: a + s, _with_scalar(2.5)),
    OpInfo("radd_scalar", lambda L, a, s: s + a, _with_scalar(2)),
    OpInfo("rsub_scalar", lambda L, a, s: s - a, _with_scalar(1.5)),
    OpInfo("rmul_scalar", lambda L, a, s: s * a, _with_scalar(-3)),
    OpInfo("rdiv_scalar", lambda L, a, s: s / a, _with_scalar(2.0, 0.5, 2.0)),
    OpInfo("div_scalar", lambda L, a, s: a / s, _with_scalar(4)),
    OpInfo("pow_scalar", lambda L, a, s: a ** s, _with_scalar(3)),
    OpInfo("pow_frac", lambda L, a, s: L.pow(a, s), _with_scalar(-1.5, 0.5, 2.0)),
    OpInfo("rpow_scalar", lambda L, a, s: s ** a, _with_scalar(2.5)),
    OpInfo("fmod_scalar", lambda L, a, s: L.fmod(a, s), _with_scalar(0.7)),
    OpInfo("remainder_scalar", lambda L, a, s: L.remainder(a, s), _with_scalar(-0.7)),
    OpInfo("floordiv_scalar", lambda L, a, s: a // s, _with_scalar(0.7), differentiable=False),
    OpInfo("xlogy_scalar_first", lambda L, a: L.xlogy(2.0, a), _unary_samples(0.5, 2.0)),
    OpInfo("add_", lambda L, a, b: (a * 1).add_(b, alpha=2), _inplace_samples()),
    OpInfo("mul_", lambda L, a, b: (a * 1).mul_(b), _inplace_samples()),
    OpInfo("div_", lambda L, a, b: (a * 1).div_(b), _inplace_samples(0.5, 2.0)),
    OpInfo("sub_", lambda L, a, s: (a * 1).sub_(s), _with_scalar(1.5)),
    OpInfo("pow_", lambda L, a, s: (a * 1).pow_(s), _with_scalar(2, 0.5, 2.0)),
    OpInfo("maximum_ties", lambda L, a, b: L.maximum(a, b),
           lambda dt: [(np.array([1.0, 2.0, 3.0, 2.0], dtype=dt),
                        np.array([1.0, 3.0, 2.0, 2.0], dtype=dt))], skip_gradcheck=True),
    OpInfo("minimum_ties", lambda L, a, b: L.minimum(a, b),
           lambda dt: [(np.array([1.0, 2.0, 3.0, 2.0], dtype=dt),
                        np.array([1.0, 3.0, 2.0, 2.0], dtype=dt))], skip_gradcheck=True),
    OpInfo("maximum_nan", lambda L, a, b: L.maximum(a, b),
           lambda dt: [(np.array([1.0, np.nan, 3.0], dtype=dt),
                        np.array([np.nan, 3.0, 2.0], dtype=dt))], skip_gradcheck=True),
    OpInfo("fmax_nan", lambda L, a, b: L.fmax(a, b),
           lambda dt: [(np.array([1.0, np.nan, 3.0], dtype=dt),
                        np.array([np.nan, 3.0, 2.0], dtype=dt))], skip_gradcheck=True),
    OpInfo("max_binary", lambda L, a, b: L.max(a, b), _binary_samples()),
    OpInfo("min_binary", lambda L, a, b: L.min(a, b), _binary_samples()),
    OpInfo("lerp_scalar", lambda L, a, b: L.lerp(a, b, 0.3), _binary_samples()),
    OpInfo("lerp_tensor", lambda L, a, b, w: L.lerp(a, b, w),
           lambda dt: [(make((2, 3), dt), make((3,), dt, seed=1), make((2, 1), dt, 0, 1, 2))]),
    OpInfo("where", lambda L, c, a, b: L.where(c, a, b),
           lambda dt: [(make((2, 3), np.bool_), make((2, 3), dt, seed=1), make((3,), dt, seed=2)),
                       (make((3,), np.bool_, seed=3), make((2, 1), dt, seed=4), make((), dt))]),
    OpInfo("where_scalar", lambda L, a: L.where(a > 0, a, 0.0), _unary_samples()),
    OpInfo("where_scalar_first", lambda L, a: L.where(a > 0, 1.5, a), _unary_samples()),
    OpInfo("softmax", lambda L, x: L.softmax(x, 1),
           lambda dt: [(make((2, 3), dt),), (make((3, 4), dt, seed=1).T,), (make((0, 3), dt),)]),
    OpInfo("softmax_neg_dim", lambda L, x: x.softmax(-2),
           lambda dt: [(make((2, 3, 2), dt),)]),
    OpInfo("softmax_dtype", lambda L, x: L.softmax(x, 0, dtype=L.float64),
           lambda dt: [(make((2, 3), dt),)]),
    OpInfo("softmax_0d", lambda L, x: L.softmax(x, 0), lambda dt: [(make((), dt),)]),
    OpInfo("softmax_large", lambda L, x: L.softmax(x, 0),
           lambda dt: [(np.array([1000.0, 999.0, -1000.0], dtype=dt),)]),
    OpInfo("log_softmax", lambda L, x: L.log_softmax(x, 1),
           lambda dt: [(make((2, 3), dt),), (make((3, 4), dt, seed=1).T,), (make((0, 3), dt),)]),
    OpInfo("log_softmax_large", lambda L, x: x.log_softmax(0),
           lambda dt: [(np.array([1000.0, 999.0, -1000.0], dtype=dt),)]),
    OpInfo("log_softmax_ninf", lambda L, x: L.log_softmax(x, 0),
           lambda dt: [(np.array([-np.inf, 0.0, 1.0], dtype=dt),)], skip_gradcheck=True),
    OpInfo("selu", lambda L, x: L.selu(x), _unary_samples()),
    OpInfo("celu", lambda L, x: L.celu(x, alpha=0.7), _unary_samples()),
    OpInfo("hardshrink", lambda L, x: L.hardshrink(x, 0.6), _unary_samples()),
]

for _name in ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"):
    OPS.append(OpInfo(_name, (lambda n: lambda L, a, b: getattr(L, n)(a, b))(_name),
                      lambda dt: [(np.array([1.0, 2.0, 0.0, 3.0], dtype=dt),
                                   np.array([1.0, 3.0, 0.0, 2.0], dtype=dt)),
                                  (make((2, 3), dt), make((3,), dt, seed=1))],
                      differentiable=False))
OPS += [
    OpInfo("eq_scalar", lambda L, a: a == 0.5, _unary_samples(), differentiable=False),
    OpInfo("logical_not", lambda L, a: L.logical_not(a),
           lambda dt: [(np.array([1.0, 0.0, -2.0], dtype=dt),)], differentiable=False),
    OpInfo("isnan", lambda L, a: (L.isnan(a), L.isinf(a), L.isfinite(a)),
           lambda dt: [(np.array([1.0, np.nan, np.inf, -np.inf], dtype=dt),)],
           differentiable=False),
]


def _primitive(torch_name, cls_name, *args):
    """torch's ``F.<torch_name>(x, *args)`` against ember's primitive
    ``ember.ops.activation.<cls_name>.apply(x, *args)`` (the Function behind nn.functional)."""
    def fn(L, x):
        if L.__name__ == "torch":
            return getattr(L.nn.functional, torch_name)(x, *args)
        return getattr(L.ops.activation, cls_name).apply(x, *args)
    return fn


def _large(dt):
    """Arrays large enough (>= 2048 elements) for the bit-mask gradient paths."""
    return [(make((64, 40), dt),), (make((40, 64), dt, seed=1).T,)]


OPS += [
    OpInfo("softplus", _primitive("softplus", "Softplus", 1.0, 20.0), _unary_samples()),
    OpInfo("softplus_beta", _primitive("softplus", "Softplus", 2.0, 3.5), _unary_samples()),
    OpInfo("hardtanh", _primitive("hardtanh", "Hardtanh", -0.5, 0.8), _unary_samples()),
    OpInfo("leaky_relu", _primitive("leaky_relu", "LeakyRelu", 0.2), _unary_samples()),
    OpInfo("hardswish", _primitive("hardswish", "Hardswish"), _unary_samples(-4.0, 4.0)),
    OpInfo("gelu", _primitive("gelu", "Gelu"), _unary_samples()),
    OpInfo("clamp_max_tensor", lambda L, x, hi: L.clamp_max(x, hi),
           lambda dt: [(make((2, 3), dt), make((3,), dt, seed=1))]),
    OpInfo("clamp_min_tensor_fn", lambda L, x, lo: L.clamp_min(x, lo),
           lambda dt: [(make((2, 3), dt), make((2, 1), dt, seed=2))]),
    OpInfo("mul_square", lambda L, x: x * x, _unary_samples()),
    OpInfo("relu_large", lambda L, x: L.relu(x), _large, skip_gradcheck=True),
    OpInfo("clamp_large", lambda L, x: L.clamp(x, -0.5, 0.5), _large, skip_gradcheck=True),
    OpInfo("leaky_relu_large", _primitive("leaky_relu", "LeakyRelu", 0.1), _large,
           skip_gradcheck=True),
]
