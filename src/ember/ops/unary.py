"""Element-wise functions of one tensor: exp, log, sqrt, abs, relu, sigmoid, tanh, clamp, ..."""
import math

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..autograd.grad_mode import state as _grad_state
from ..backend import get_array_module, same_device
from ..backend import quiet as _quiet
from ..tensor import Tensor
from ._inplace import inplace
from ._util import INT_OF_SIZE, keep_where, needs_float, not_implemented_for, sum_to, xp_of

__all__ = ["exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "abs", "absolute", "relu",
           "sigmoid", "tanh", "sin", "cos", "clamp", "clip", "clamp_min", "clamp_max",
           "floor", "ceil", "round", "trunc", "fix", "sign", "exp_", "log_", "sqrt_", "abs_",
           "relu_", "sigmoid_", "tanh_", "clamp_", "clip_", "clamp_min_", "clamp_max_",
           "floor_", "ceil_", "round_", "trunc_", "sin_", "cos_", "log1p_", "expm1_",
           "rsqrt_", "sign_", "exp2", "log2", "log10", "tan", "asin", "acos", "atan",
           "arcsin", "arccos", "arctan", "sinh", "cosh", "asinh", "acosh", "atanh", "frac",
           "erf", "erfc", "erfinv", "sgn", "logit", "nan_to_num", "exp2_", "log2_", "log10_",
           "tan_", "asin_", "acos_", "atan_", "sinh_", "cosh_", "frac_", "erf_", "erfc_",
           "erfinv_", "sgn_", "logit_", "nan_to_num_", "fix_", "absolute_", "arcsin_",
           "arccos_", "arctan_", "asinh_", "acosh_", "atanh_", "positive"]


class Exp(Function):
    node_name = "ExpBackward0"

    @staticmethod
    def forward(ctx, a):
        with _quiet():
            out = Tensor._wrap(xp_of(a).exp(needs_float(a._array)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        out, = ctx.saved_tensors
        return grad_output * _cj(out)


class Log(Function):
    node_name = "LogBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with _quiet():
            return Tensor._wrap(xp_of(a).log(needs_float(a._array)))

    @staticmethod
    def backward(ctx, grad_output):
        a, = ctx.saved_tensors
        return grad_output / _cj(a)


class Log1p(Function):
    node_name = "Log1PBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with _quiet():
            return Tensor._wrap(xp_of(a).log1p(needs_float(a._array)))

    @staticmethod
    def backward(ctx, grad_output):
        a, = ctx.saved_tensors
        return grad_output / _cj(a + 1)


class Expm1(Function):
    node_name = "Expm1Backward0"

    @staticmethod
    def forward(ctx, a):
        with _quiet():
            out = Tensor._wrap(xp_of(a).expm1(needs_float(a._array)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        out, = ctx.saved_tensors
        return grad_output * _cj(out + 1)


class Sqrt(Function):
    node_name = "SqrtBackward0"

    @staticmethod
    def forward(ctx, a):
        with _quiet():
            out = Tensor._wrap(xp_of(a).sqrt(needs_float(a._array)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        out, = ctx.saved_tensors
        return grad_output / _cj(out * 2)


class Rsqrt(Function):
    node_name = "RsqrtBackward0"

    @staticmethod
    def forward(ctx, a):
        with _quiet():
            out = Tensor._wrap(1 / xp_of(a).sqrt(needs_float(a._array)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        out, = ctx.saved_tensors
        return grad_output * _cj(out * out * out * -0.5)


class Abs(Function):
    node_name = "AbsBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return Tensor._wrap(xp_of(a).abs(a._array))

    @staticmethod
    def backward(ctx, grad_output):
        a, = ctx.saved_tensors
        if a._array.dtype.kind == "c":
            return grad_output * sgn(a)    # (z / |z|: the complex gradient of |z|)
        return grad_output * sign(a)   # NOTE: subgradient 0 at 0, as torch


class Relu(Function):
    node_name = "ReluBackward0"

    @staticmethod
    def forward(ctx, a):
        arr = a._array
        out = Tensor._wrap(xp_of(a).maximum(arr, 0))    # (a Python 0 keeps the dtype)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        out, = ctx.saved_tensors
        return ReluGrad.apply(grad_output, out)   # NOTE: gradient 0 at 0, as torch

    @staticmethod
    def array_backward(ctx, grad_output):
        out, = ctx.saved_tensors
        return Tensor._wrap(_relu_grad(grad_output._array, out._array))


def _relu_grad(g, out):
    """``g`` with +0 where ``out <= 0`` (torch's test: a NaN output passes its gradient)."""
    if g.dtype.kind != "f" or g.shape != out.shape or g.size < 2048:
        res = g.copy(order="K")    # (a copy and a masked store: faster than where on small
        # arrays; in g's layout, as torch's)
        res[out <= 0] = 0
        return res
    # NOTE: as keep_where, a bit mask, built in the result's own buffer (no bool temporaries).
    xp = get_array_module(g)
    it = INT_OF_SIZE[g.itemsize]
    m = xp.less_equal(out, 0, out=xp.empty_like(g, dtype=it), casting="unsafe")
    m -= 1
    m &= g.view(it)
    return m.view(g.dtype)


class ReluGrad(Function):
    """``grad_output`` where ``out > 0``, else 0 (relu's backward, itself differentiable)."""

    node_name = "ThresholdBackwardBackward0"

    @staticmethod
    def forward(ctx, grad_output, out):
        ctx.save_for_backward(out)
        return Tensor._wrap(_relu_grad(grad_output._array, out._array))

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        # NOTE: as torch, a zero (not a missing) gradient for out: leaves behind it get .grad.
        zero = Tensor._wrap(xp_of(out).zeros_like(out._array)) if ctx.needs_input_grad[1] \
            else None
        return ReluGrad.apply(grad, out), zero


class MaskGrad(Function):
    """``grad_output`` where the bool ``mask`` is true, else 0 (a backward, differentiable)."""

    node_name = "MaskGradBackward0"

    @staticmethod
    def forward(ctx, grad_output, mask):
        ctx.save_for_backward(mask)
        return Tensor._wrap(keep_where(mask._array, grad_output._array))

    @staticmethod
    def backward(ctx, grad):
        mask, = ctx.saved_tensors
        return MaskGrad.apply(grad, mask), None


class Sigmoid(Function):
    node_name = "SigmoidBackward0"

    @staticmethod
    def forward(ctx, a):
        x = needs_float(a._array)
        xp = xp_of(a)
        if x.dtype.kind == "c":
            with _quiet():
                out = Tensor._wrap(1 / (1 + xp.exp(-x)))
            ctx.save_for_backward(out)
            return out
        d = x.dtype
        if d.itemsize == 2:    # (bfloat16, float16: computed in float32, rounded once)
            x = x.astype(np.float32)
        with _quiet():
            # NOTE: exp of -|x| only, so large |x| never overflows.
            e = xp.exp(-xp.abs(x))
            out = xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(d, copy=False)
        out = Tensor._wrap(out)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        out, = ctx.saved_tensors
        return SigmoidGrad.apply(grad_output, out)


class SigmoidGrad(Function):
    """``grad_output * conj(out * (1 - out))``: sigmoid's backward, itself differentiable."""

    node_name = "SigmoidBackwardBackward0"

    @staticmethod
    def forward(ctx, grad_output, out):
        ctx.save_for_backward(grad_output, out)
        y = out._array
        return Tensor._wrap(grad_output._array * _cj_arr(y * (1 - y)))

    @staticmethod
    def backward(ctx, grad):
        grad_output, out = ctx.saved_tensors
        outc = _cj(out)
        g_grad = SigmoidGrad.apply(grad, outc) if ctx.needs_input_grad[0] else None
        g_out = _cj(grad) * grad_output * (1 - 2 * outc) if ctx.needs_input_grad[1] else None
        return g_grad, g_out


class Tanh(Function):
    node_name = "TanhBackward0"

    @staticmethod
    def forward(ctx, a):
        out = Tensor._wrap(xp_of(a).tanh(needs_float(a._array)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        out, = ctx.saved_tensors
        return TanhGrad.apply(grad_output, out)


class TanhGrad(Function):
    """``grad_output * conj(1 - out ** 2)``: tanh's backward, itself differentiable."""

    node_name = "TanhBackwardBackward0"

    @staticmethod
    def forward(ctx, grad_output, out):
        ctx.save_for_backward(grad_output, out)
        y, g = out._array, grad_output._array
        if y.dtype.kind in "fV" and y.dtype.itemsize <= 4 and g.dtype == y.dtype:
            # NOTE: torch's kernel fuses 1 - y*y (one rounding) and works in float for 16-bit
            one_m = (1 - y.astype(np.float64) ** 2).astype(np.float32)
            out = g.astype(np.float32, copy=False) * one_m
            return Tensor._wrap(out.astype(y.dtype, copy=False))
        return Tensor._wrap(g * _cj_arr(1 - y * y))

    @staticmethod
    def backward(ctx, grad):
        grad_output, out = ctx.saved_tensors
        outc = _cj(out)
        g_grad = TanhGrad.apply(grad, outc) if ctx.needs_input_grad[0] else None
        g_out = _cj(grad) * (-2 * outc * grad_output) if ctx.needs_input_grad[1] else None
        return g_grad, g_out


class Sin(Function):
    node_name = "SinBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return Tensor._wrap(xp_of(a).sin(needs_float(a._array)))

    @staticmethod
    def backward(ctx, grad_output):
        a, = ctx.saved_tensors
        return grad_output * _cj(cos(a))


class Cos(Function):
    node_name = "CosBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return Tensor._wrap(xp_of(a).cos(needs_float(a._array)))

    @staticmethod
    def backward(ctx, grad_output):
        a, = ctx.saved_tensors
        return -grad_output * _cj(sin(a))


_NUMBER = (int, float, type(None))
_NO_COMPLEX_CLAMP = "clamp is not supported for complex types"
_INF = float("inf")
_FLOAT_MAX = {np.dtype(np.float16): ("c10::Half", 65504.0),
              np.dtype(np.float32): ("float", float(np.finfo(np.float32).max))}


class Clamp(Function):
    """``input`` limited to ``[lo, hi]`` (either may be None, a number or a tensor).

    ``op`` ("clamp", "clamp_min" or "clamp_max") only names the node as torch does.
    """

    node_name = "ClampBackward1"

    @staticmethod
    def forward(ctx, a, lo, hi, op):
        arr = a._array
        lo_a = lo._array if isinstance(lo, Tensor) else lo
        hi_a = hi._array if isinstance(hi, Tensor) else hi
        xp = xp_of(a)
        if arr.dtype.kind == "f" and type(lo_a) in _NUMBER and type(hi_a) in _NUMBER:
            d = arr.dtype    # the common case: a float tensor between Python numbers
            name, big = _FLOAT_MAX.get(d, (None, _INF))
            if (lo_a is not None and big < (lo_a if lo_a > 0 else -lo_a) < _INF) or \
                    (hi_a is not None and big < (hi_a if hi_a > 0 else -hi_a) < _INF):
                raise RuntimeError("value cannot be converted to type %s without overflow"
                                   % name)
            if hi_a is None:    # (a Python number keeps the array's float dtype)
                out = xp.maximum(arr, lo_a)
            else:
                out = xp.minimum(arr if lo_a is None else xp.maximum(arr, lo_a), hi_a)
            ctx.save_for_backward(a, None, None)
            ctx.bounds = (lo, hi)
            if op != "clamp":
                ctx.set_node_name(_CLAMP_NAMES[op, False])
            return Tensor._wrap(out)
        d = _dt.result_type(*[x for x in (a, lo, hi) if x is not None]).np
        if d.kind == "c":
            _complex_clamp(arr, lo, hi, d)
        if d.kind == "b" and not isinstance(lo, Tensor) and not isinstance(hi, Tensor):
            kernel = "clamp_scalar_cpu" if lo is not None and hi is not None else (
                "clamp_max_scalar_cpu" if lo is None else "clamp_min_scalar_cpu")
            not_implemented_for(arr, kernel, "b")
        for bound in (lo, hi):
            if bound is not None and not isinstance(bound, Tensor):
                _dt.check_scalar(bound, _dt.from_numpy_dtype(d))
        out = arr if arr.dtype == d else arr.astype(d)
        by_tensor = isinstance(lo, Tensor) or isinstance(hi, Tensor)
        if lo_a is not None:
            if by_tensor:
                same_device(arr, lo_a)
            out = xp.maximum(out, xp.asarray(lo_a).astype(d))    # (-1 wraps into uint8)
        if hi_a is not None:
            if by_tensor:
                same_device(arr, hi_a)
            out = xp.minimum(out, xp.asarray(hi_a).astype(d))
        ctx.save_for_backward(a, lo if isinstance(lo, Tensor) else None,
                              hi if isinstance(hi, Tensor) else None)
        # (the number bounds only: tensor bounds are saved above)
        ctx.bounds = (None if isinstance(lo, Tensor) else lo,
                      None if isinstance(hi, Tensor) else hi)
        if by_tensor or op != "clamp":
            ctx.set_node_name(_CLAMP_NAMES[op, by_tensor])
        return Tensor._wrap(out if out is not arr else out.copy())

    @staticmethod
    def backward(ctx, grad_output):
        return Clamp._grads(ctx, grad_output, *ctx.saved_tensors)

    @staticmethod
    def _grads(ctx, grad_output, a, lo_t, hi_t):
        lo, hi = ctx.bounds
        if lo_t is None and hi_t is None:
            # Python-number bounds: the mask needs no graph, so it is computed on the array.
            keep = _clamp_keep(a._array, lo, hi)
            return MaskGrad.apply(grad_output, Tensor._wrap(keep)), None, None, None
        from .comparison import where
        lo = lo_t if lo_t is not None else lo
        hi = hi_t if hi_t is not None else hi
        need = ctx.needs_input_grad
        # NOTE: the gradient passes at the boundary itself (a == min or a == max), as torch;
        # when min > max the output is max, so max gets the gradient.
        if lo is not None and hi is not None:
            keep = (a >= lo) & (a <= hi)
            to_lo = (a < lo) & (lo < hi) if need[1] else None
            to_hi = (a > hi) | (hi < lo) if need[2] else None
        else:
            keep = (a >= lo) if lo is not None else (a <= hi)
            to_lo = (a < lo) if need[1] else None
            to_hi = (a > hi) if need[2] else None
        ga = sum_to(where(keep, grad_output, 0.0), ctx._input_meta(0)[0]) if need[0] else None
        glo = sum_to(where(to_lo, grad_output, 0.0), ctx._input_meta(1)[0]) if need[1] else None
        ghi = sum_to(where(to_hi, grad_output, 0.0), ctx._input_meta(2)[0]) if need[2] else None
        return ga, glo, ghi, None

    @staticmethod
    def array_backward(ctx, grad_output):
        a, lo_t, hi_t = ctx.saved_tensors
        if lo_t is None and hi_t is None:
            keep = _clamp_keep(a._array, *ctx.bounds)
            return Tensor._wrap(keep_where(keep, grad_output._array)), None, None, None
        return Clamp._grads(ctx, grad_output, a, lo_t, hi_t)


def _clamp_keep(arr, lo, hi):
    """Where ``arr`` lies in ``[lo, hi]`` (number bounds, either None): clamp passes the
    gradient there, the boundary included."""
    if lo is not None and hi is not None:
        return (arr >= lo) & (arr <= hi)
    return (arr >= lo) if lo is not None else (arr <= hi)


# torch's node names of clamp's variants: (op, a tensor bound) -> name (clamp with numbers is
# the Function's own, ClampBackward1)
_CLAMP_NAMES = {("clamp", True): "ClampBackward0",
                ("clamp_min", False): "ClampMinBackward0", ("clamp_min", True): "ClampMinBackward1",
                ("clamp_max", False): "ClampMaxBackward0", ("clamp_max", True): "ClampMaxBackward1"}


class _ZeroGrad(Function):
    """Piecewise-constant functions (floor, ceil, round, trunc, sign): gradient zero."""

    node_name = "FloorBackward0"

    @staticmethod
    def backward(ctx, grad_output):
        # NOTE: zeros, not grad_output * 0, so an inf/nan upstream gradient still gives 0 (torch)
        return _zero_grad(grad_output), None    # (the second for ``name``, when given)


def _zero_grad(t):
    return Tensor._wrap(xp_of(t).zeros_like(t._array))


def _zero_grad_op(name, kernel, node):
    """A _ZeroGrad Function computing ``kernel(xp, array)``; ``apply(a, name)`` names the node
    ``name`` (a variant torch names apart, e.g. sgn of sign)."""
    def forward(ctx, a, name=None):
        if name is not None:
            ctx.set_node_name(name)
        return Tensor._wrap(kernel(xp_of(a), a._array))
    return type(name, (_ZeroGrad,), {"node_name": node, "forward": staticmethod(forward)})


def _sign(xp, arr):
    if arr.dtype == np.bool_:
        return arr.copy()
    out = xp.sign(arr)
    if arr.dtype.kind in "fV":
        out = xp.where(xp.isnan(arr), arr.dtype.type(0), out)   # NOTE: torch's sign(nan) is 0
    return out


Floor = _zero_grad_op("Floor", lambda xp, x: xp.floor(x), "FloorBackward0")
Ceil = _zero_grad_op("Ceil", lambda xp, x: xp.ceil(x), "CeilBackward0")
Trunc = _zero_grad_op("Trunc", lambda xp, x: xp.trunc(x), "TruncBackward0")
Sign = _zero_grad_op("Sign", _sign, "SignBackward0")
Round = _zero_grad_op("Round", lambda xp, x: xp.round(x), "RoundBackward0")


def exp(input, *, out=None):
    """``e ** input``."""
    return Exp.apply(input)


def log(input, *, out=None):
    """Natural logarithm."""
    return Log.apply(input)


def log1p(input, *, out=None):
    """``log(1 + input)``, accurate for small inputs."""
    return Log1p.apply(input)


def expm1(input, *, out=None):
    """``exp(input) - 1``, accurate for small inputs."""
    return Expm1.apply(input)


def sqrt(input, *, out=None):
    """Square root."""
    return Sqrt.apply(input)


def rsqrt(input, *, out=None):
    """``1 / sqrt(input)``."""
    return Rsqrt.apply(input)


def abs(input, *, out=None):
    """Absolute value."""
    not_implemented_for(input._array, "abs_cpu", "b")
    return Abs.apply(input)


absolute = abs


def relu(input, inplace=False):
    """``max(input, 0)``."""
    if input._array.dtype.kind in "bc":
        if input._array.dtype.kind == "c":
            raise NotImplementedError(_NO_COMPLEX_CLAMP)
        raise RuntimeError("Boolean inputs not supported for relu")
    if inplace:
        return relu_(input)
    return Relu.apply(input)


def sigmoid(input, *, out=None):
    """``1 / (1 + exp(-input))``, computed without overflow."""
    return Sigmoid.apply(input)


def tanh(input, *, out=None):
    """Hyperbolic tangent."""
    return Tanh.apply(input)


def sin(input, *, out=None):
    """Sine."""
    return Sin.apply(input)


def cos(input, *, out=None):
    """Cosine."""
    return Cos.apply(input)


def clamp(input, min=None, max=None, *, out=None):
    """Limit values to ``[min, max]`` (either may be None, a number or a tensor)."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        if isinstance(min, Tensor) and isinstance(max, Tensor) and \
                _dt.result_type(input, min, max) is _dt.bool:
            raise NotImplementedError("\"clamp_cpu\" not implemented for 'Bool'")
        return ClampTensors.apply(input, min, max, "clamp")
    return Clamp.apply(input, min, max, "clamp")


def _complex_clamp(arr, lo, hi, d):
    """torch's error for a clamp whose result type ``d`` is complex."""
    if arr.dtype.kind == "c":
        raise NotImplementedError(_NO_COMPLEX_CLAMP)
    for bound in (lo, hi):
        if isinstance(bound, complex):
            raise RuntimeError("value cannot be converted to type double without overflow")
    kernel = "clamp_cpu" if lo is not None and hi is not None else (
        "maximum_cpu" if hi is None else "minimum_cpu")
    raise NotImplementedError("\"%s\" not implemented for '%s'"
                              % (kernel, _dt.scalar_type_name(d)))


_CPP_INT = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool", "uint16": "unsigned short",
            "uint32": "unsigned int", "uint64": "unsigned long"}


def _castable_bounds(input, *bounds):
    """torch's in-place check, made before the kernel's: tensor bounds may not raise the result
    type's kind (a complex bound of a float tensor); a float or complex number may not bound an
    integer or bool tensor (torch names the C++ type)."""
    nums = {type(b) for b in bounds if isinstance(b, (float, complex))}
    if nums and input._array.dtype.kind in "iub":
        raise RuntimeError("result type %s can't be cast to the desired output type %s" % (
            "ComplexFloat" if complex in nums else "Float", _CPP_INT[input._array.dtype.name]))
    tensors = [b for b in bounds if isinstance(b, Tensor)]
    if tensors:
        res, dst = _dt.result_type(input, *tensors).np, input._array.dtype
        if res.kind == "c" and dst.kind != "c":
            raise RuntimeError("result type %s can't be cast to the desired output type %s"
                               % (_dt.scalar_type_name(res), _dt.scalar_type_name(dst)))


class ClampTensors(Clamp):
    """``clamp`` by tensor bounds: torch's node keeps an edge for each bound, None for an
    absent one."""

    edge_args = (0, 1, 2)


clip = clamp


def clamp_min(input, min):
    """``max(input, min)`` element-wise."""
    return Clamp.apply(input, min, None, "clamp_min")


def clamp_max(input, max):
    """``min(input, max)`` element-wise."""
    return Clamp.apply(input, None, max, "clamp_max")


def _no_complex(input, op):
    if input._array.dtype.kind == "c":
        raise NotImplementedError("%s is not supported for complex inputs" % op)


def _integral_copy(input, kernel):
    """Rounding an integer tensor gives a copy of it (a bool one raises, as torch)."""
    not_implemented_for(input._array, kernel, "b")
    return Tensor._wrap(input._array.copy())


def floor(input, *, out=None):
    """Round down (gradient zero)."""
    if input._array.dtype.kind in "iubc":
        _no_complex(input, "floor")
        return _integral_copy(input, "floor_vml_cpu")
    return Floor.apply(input)


def ceil(input, *, out=None):
    """Round up (gradient zero)."""
    if input._array.dtype.kind in "iubc":
        _no_complex(input, "ceil")
        return _integral_copy(input, "ceil_vml_cpu")
    return Ceil.apply(input)


class _DefaultDecimals(int):
    """``decimals``'s default, 0: told apart from an explicit 0 (torch's ``round.decimals``
    overload, node RoundBackward1)."""

    def __repr__(self):
        return "0"


_NO_DECIMALS = _DefaultDecimals(0)


def round(input, *, decimals=_NO_DECIMALS, out=None):
    """Round half to even, as torch (gradient zero)."""
    given = decimals is not _NO_DECIMALS
    if input._array.dtype.kind in "iubc":
        if decimals:
            not_implemented_for(input._array, "round_cpu", "iubc")
        not_implemented_for(input._array, "round_vml_cpu", "iubc" if given else "c")
        return _integral_copy(input, "round_vml_cpu")
    if given:
        return RoundDecimals.apply(input, decimals)
    return Round.apply(input)


class RoundDecimals(_ZeroGrad):
    """``round(x * 10**decimals) / 10**decimals`` (for negative ``decimals``, ``round(x /
    10**-decimals) * 10**-decimals``), in float32 for the 16-bit floats, as torch's kernel."""

    node_name = "RoundBackward1"

    @staticmethod
    def forward(ctx, a, decimals):
        arr = a._array
        work = arr.astype(np.float32) if arr.dtype.itemsize == 2 else arr
        d = -decimals if decimals < 0 else decimals
        xp = xp_of(a)
        with _quiet():
            scale = work.dtype.type(10.0 ** d if d < 309 else math.inf)
            out = xp.round(work / scale) * scale if decimals < 0 else \
                xp.round(work * scale) / scale
        return Tensor._wrap(out.astype(arr.dtype, copy=False))


def trunc(input, *, out=None):
    """Round toward zero (gradient zero)."""
    if input._array.dtype.kind in "iubc":
        _no_complex(input, "trunc")
        return _integral_copy(input, "trunc_vml_cpu")
    return Trunc.apply(input)


fix = trunc


def sign(input, *, out=None):
    """-1, 0 or 1 (gradient zero)."""
    if input._array.dtype.kind == "c":
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex "
                                  "numbers. Please use torch.sgn instead.")
    return Sign.apply(input)


def exp_(input):
    return inplace(input, exp)


def log_(input):
    return inplace(input, log)


def log1p_(input):
    return inplace(input, log1p)


def expm1_(input):
    return inplace(input, expm1)


def sqrt_(input):
    return inplace(input, sqrt)


def rsqrt_(input):
    return inplace(input, rsqrt)


def abs_(input):
    if input._array.dtype.kind == "c":
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return inplace(input, abs)


def relu_(input):
    return inplace(input, relu)


def sigmoid_(input):
    return inplace(input, sigmoid)


def tanh_(input):
    return inplace(input, tanh)


def sin_(input):
    return inplace(input, sin)


def cos_(input):
    return inplace(input, cos)


def clamp_(input, min=None, max=None):
    _castable_bounds(input, min, max)
    return inplace(input, clamp, min, max)


clip_ = clamp_


def clamp_min_(input, min):
    _castable_bounds(input, min)
    return inplace(input, clamp_min, min)


def clamp_max_(input, max):
    _castable_bounds(input, max)
    return inplace(input, clamp_max, max)


def floor_(input):
    return inplace(input, floor)


def ceil_(input):
    return inplace(input, ceil)


def round_(input, decimals=_NO_DECIMALS):
    return inplace(input, round, decimals=decimals)


def trunc_(input):
    return inplace(input, trunc)


def sign_(input):
    return inplace(input, sign)


def _cj_arr(arr):
    """``arr.conj()`` for a complex array, ``arr`` itself for a real one."""
    return arr.conj() if arr.dtype.kind == "c" else arr


def _cj(t):
    """``t.conj()`` for a complex tensor, ``t`` itself for a real one (complex backward)."""
    return t.conj() if t._array.dtype.kind == "c" else t


_LN2 = 0.6931471805599453
_LN10 = 2.302585092994046
_TWO_OVER_SQRT_PI = 1.1283791670955126


def _erf_f64(x):
    """erf in float64 to ~1e-15: a positive series below 3, erfc's continued fraction above."""
    xp = get_array_module(x)
    ax = xp.abs(x)
    out = xp.empty_like(ax)
    small = ax < 3.0
    xs = ax[small]
    x2 = xs * xs
    term = xs.copy()
    total = xs.copy()
    n = 0
    while term.size:
        n += 1
        term = term * (2 * x2) / (2 * n + 1)
        total += term
        if bool((term <= total * 1e-17).all()):
            break
    out[small] = _TWO_OVER_SQRT_PI * xp.exp(-x2) * total
    out[~small] = 1 - _erfc_large(ax[~small])
    return xp.copysign(out, x)


def _erfc_large(x):
    """erfc for x >= 3 by its continued fraction, evaluated bottom-up."""
    t = x.copy()
    with _quiet():
        for k in range(60, 0, -1):
            t = x + (k / 2) / t
        return get_array_module(x).exp(-x * x) / (1.7724538509055159 * t)


def _erfc_f64(x):
    out = 1 - _erf_f64(x)
    big = x >= 3.0
    if bool(big.any()):
        out[big] = _erfc_large(x[big])
    return out


def _erfinv_f64(y):
    """erfinv by a closed-form first guess refined with Newton steps on erf."""
    with _quiet():
        xp = get_array_module(y)
        w = xp.log1p(-y * y)
        a = 0.147
        b = 2 / (math.pi * a) + w / 2
        x = xp.copysign(xp.sqrt(xp.sqrt(b * b - w / a) - b), y)
        ok = xp.abs(y) < 1
        for _ in range(5):
            step = (_erf_f64(xp.where(ok, x, 0)) - y) / (_TWO_OVER_SQRT_PI * xp.exp(-x * x))
            x = xp.where(ok & xp.isfinite(step), x - step, x)
        x = xp.where(xp.abs(y) == 1, xp.copysign(math.inf, y), x)
        return xp.where((xp.abs(y) > 1) | xp.isnan(y), math.nan, x)


def _float_fn(f64_fn):
    """Run a float64 kernel on a float array and cast back to its dtype (a ``kernel(xp, x)``)."""
    def fn(xp, arr):
        if arr.dtype.kind == "c":
            raise NotImplementedError("\"%s_vml_cpu\" not implemented for '%s'" % (
                f64_fn.__name__[1:-4], _dt.from_numpy_dtype(arr.dtype)._legacy[:-6]))
        return f64_fn(arr.astype(np.float64).reshape(-1)).astype(arr.dtype).reshape(arr.shape)
    return fn


def _xp_kernel(fn_name):
    """``kernel(xp, x)`` calling the array module's function ``fn_name``."""
    def kernel(xp, x):
        return getattr(xp, fn_name)(x)
    return kernel


def _unary(name, kernel, node, grad, save="input"):
    """A Function for ``kernel(xp, array)`` (or the array module's function named ``kernel``)
    whose backward is ``grad(grad_output, saved)`` (Tensor ops).

    ``save`` says what ``grad`` receives: the input (``"input"``) or the output (``"output"``).
    """
    if isinstance(kernel, str):
        kernel = _xp_kernel(kernel)

    def forward(ctx, a):
        xp = xp_of(a)
        with _quiet():
            out = Tensor._wrap(xp.asarray(kernel(xp, needs_float(a._array))))
        ctx.save_for_backward(out if save == "output" else a)
        return out

    def backward(ctx, grad_output):
        saved, = ctx.saved_tensors
        if saved._array.dtype.kind == "c":
            # a holomorphic f: grad * conj(f'(z)), i.e. conj(grad(conj(g))) as grad is linear
            return grad(grad_output.conj(), saved).conj()
        return grad(grad_output, saved)
    return type(name, (Function,), {"node_name": node, "forward": staticmethod(forward),
                                    "backward": staticmethod(backward)})


Exp2 = _unary("Exp2", "exp2", "Exp2Backward0", lambda g, out: g * out * _LN2, "output")
Log2 = _unary("Log2", "log2", "Log2Backward0", lambda g, a: g / (a * _LN2))
Log10 = _unary("Log10", "log10", "Log10Backward0", lambda g, a: g / (a * _LN10))
Tan = _unary("Tan", "tan", "TanBackward0", lambda g, out: g * (out * out + 1), "output")
Asin = _unary("Asin", "arcsin", "AsinBackward0", lambda g, a: g * rsqrt(1 - a * a))
Acos = _unary("Acos", "arccos", "AcosBackward0", lambda g, a: -g * rsqrt(1 - a * a))
Atan = _unary("Atan", "arctan", "AtanBackward0", lambda g, a: g / (a * a + 1))
Sinh = _unary("Sinh", "sinh", "SinhBackward0", lambda g, a: g * cosh(a))
Cosh = _unary("Cosh", "cosh", "CoshBackward0", lambda g, a: g * sinh(a))
Asinh = _unary("Asinh", "arcsinh", "AsinhBackward0", lambda g, a: g * rsqrt(a * a + 1))
Acosh = _unary("Acosh", "arccosh", "AcoshBackward0", lambda g, a: _acosh_grad(g, a))
Atanh = _unary("Atanh", "arctanh", "AtanhBackward0", lambda g, a: g / (1 - a * a))
Frac = _unary("Frac", lambda xp, x: x - xp.trunc(x), "FracBackward0", lambda g, a: g)
Erf = _unary("Erf", _float_fn(_erf_f64), "ErfBackward0",
             lambda g, a: g * exp(-(a * a)) * _TWO_OVER_SQRT_PI)
Erfc = _unary("Erfc", _float_fn(_erfc_f64), "ErfcBackward0",
              lambda g, a: -g * exp(-(a * a)) * _TWO_OVER_SQRT_PI)
# NOTE: saves the input and recomputes erfinv in backward, as torch (so an in-place op on the
# result does not invalidate the graph).
Erfinv = _unary("Erfinv", _float_fn(_erfinv_f64), "ErfinvBackward0",
                lambda g, a: g * exp(erfinv(a) ** 2) * (math.sqrt(math.pi) / 2))


def exp2(input, *, out=None):
    """``2 ** input``."""
    return Exp2.apply(input)


def log2(input, *, out=None):
    """Base-2 logarithm."""
    return Log2.apply(input)


def log10(input, *, out=None):
    """Base-10 logarithm."""
    return Log10.apply(input)


def tan(input, *, out=None):
    """Tangent."""
    return Tan.apply(input)


def asin(input, *, out=None):
    """Inverse sine."""
    return Asin.apply(input)


def acos(input, *, out=None):
    """Inverse cosine."""
    return Acos.apply(input)


def atan(input, *, out=None):
    """Inverse tangent."""
    return Atan.apply(input)


arcsin, arccos, arctan = asin, acos, atan


def sinh(input, *, out=None):
    """Hyperbolic sine."""
    return Sinh.apply(input)


def cosh(input, *, out=None):
    """Hyperbolic cosine."""
    return Cosh.apply(input)


def asinh(input, *, out=None):
    """Inverse hyperbolic sine."""
    return Asinh.apply(input)


def _acosh_grad(g, a):
    if a._array.dtype.kind == "c":
        # NOTE: 1 / (sqrt(z - 1) sqrt(z + 1)), the branch torch's complex gradient takes
        return g * rsqrt(a - 1) * rsqrt(a + 1)
    return g * rsqrt(a * a - 1)


def acosh(input, *, out=None):
    """Inverse hyperbolic cosine."""
    return Acosh.apply(input)


def atanh(input, *, out=None):
    """Inverse hyperbolic tangent."""
    return Atanh.apply(input)


def frac(input, *, out=None):
    """``input - trunc(input)`` (gradient one)."""
    not_implemented_for(input._array, "frac_cpu", "iubc")
    return Frac.apply(input)


def erf(input, *, out=None):
    """The error function ``2/sqrt(pi) * integral_0^x exp(-t**2) dt``."""
    return Erf.apply(input)


def erfc(input, *, out=None):
    """``1 - erf(input)``, accurate for large inputs."""
    return Erfc.apply(input)


def erfinv(input, *, out=None):
    """The inverse of ``erf`` on ``[-1, 1]`` (nan outside, +-inf at +-1)."""
    return Erfinv.apply(input)


def sgn(input, *, out=None):
    """``z / |z|`` (0 at 0) for complex tensors; ``sign`` for real ones (gradient zero)."""
    if input._array.dtype.kind == "c":
        return SgnComplex.apply(input)
    return Sign.apply(input, "SgnBackward0")


class SgnComplex(Function):
    """``z / |z|`` of a complex tensor (0 where ``z`` is 0)."""

    node_name = "SgnBackward0"

    @staticmethod
    def forward(ctx, a):
        xp = xp_of(a)
        arr = a._array
        r = xp.abs(arr)
        with _quiet():
            out = xp.where(r == 0, arr.dtype.type(0), arr / r)
        out = Tensor._wrap(xp.asarray(out, dtype=arr.dtype))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        from .comparison import where
        a, out = ctx.saved_tensors
        r = abs(a)
        # NOTE: only the part of the gradient tangent to the unit circle moves z / |z|; 0 at 0.
        g = (grad_output - (grad_output * out.conj()).real * out) / r
        return where(r == 0, 0.0, g)


def positive(input):
    """``input`` itself."""
    if input._array.dtype == np.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


class Logit(Function):
    node_name = "LogitBackward0"

    @staticmethod
    def forward(ctx, a, eps):
        x = needs_float(a._array)
        xp = xp_of(a)
        if eps is not None and eps < 0:
            eps = None      # torch treats a negative eps as none
        if eps is not None:
            # NOTE: torch's ``x < lo ? lo : (x > hi ? hi : x)``: with eps > 0.5 (lo > hi) a small
            # x becomes lo, and a nan eps clamps nothing.
            lo = x.dtype.type(eps)
            hi = x.dtype.type(1) - lo
            x = xp.where(x < lo, lo, xp.where(x > hi, hi, x))
        ctx.save_for_backward(a)
        ctx.eps = eps
        with _quiet():
            return Tensor._wrap(xp.asarray(xp.log(x / (1 - x))))

    @staticmethod
    def backward(ctx, grad_output):
        from .comparison import where
        a, = ctx.saved_tensors
        # torch's logit_backward: ``grad * inf`` at 0 and 1 (-0.0 included), which is ``grad``
        # over a +0.0 denominator
        g = grad_output / where((a == 0) | (a == 1), 0.0, a * (1 - a))
        if ctx.eps is None:
            # NOTE: nan outside [0, 1], where logit is undefined
            return where((a < 0) | (a > 1), math.nan, g), None
        # NOTE: zero outside [eps, 1 - eps] (bounds in a's dtype), where the clamp holds the
        # value constant.
        lo = a._array.dtype.type(ctx.eps)
        hi = a._array.dtype.type(1) - lo
        return where((a < float(lo)) | (a > float(hi)), 0.0, g), None


def logit(input, eps=None, *, out=None):
    """``log(p / (1 - p))``, with ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given."""
    not_implemented_for(input._array, "logit_cpu", "c")
    return Logit.apply(input, eps)


class NanToNum(Function):
    node_name = "NanToNumBackward0"

    @staticmethod
    def forward(ctx, a, nan, posinf, neginf):
        arr = a._array
        ctx.save_for_backward(a)
        if arr.dtype.kind not in "fcV":
            return Tensor._wrap(arr.copy())
        if arr.dtype.kind == "c":   # (the real and imaginary parts apart)
            re = NanToNum.forward(ctx, Tensor._wrap(arr.real.copy()), nan, posinf, neginf)
            im = NanToNum.forward(ctx, Tensor._wrap(arr.imag.copy()), nan, posinf, neginf)
            ctx.save_for_backward(a)
            return Tensor._wrap(re._array + im._array * arr.dtype.type(1j))
        info = _dt.finfo(_dt.from_numpy_dtype(arr.dtype))
        xp = xp_of(a)
        out = xp.where(xp.isnan(arr), arr.dtype.type(nan), arr)
        out = xp.where(xp.isposinf(out), arr.dtype.type(info.max if posinf is None else posinf),
                       out)
        out = xp.where(xp.isneginf(out), arr.dtype.type(info.min if neginf is None else neginf),
                       out)
        return Tensor._wrap(out.astype(arr.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        from .comparison import isfinite
        a, = ctx.saved_tensors
        return grad_output * isfinite(a), None, None, None


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """Replace nan, +inf and -inf (default: 0, the dtype's largest and smallest value); a
    complex tensor has its real and imaginary parts replaced apart."""
    if input._array.dtype.kind == "c" and input._requires_grad and _grad_state.enabled:
        raise RuntimeError("nan_to_num does not support automatic differentiation for "
                           "outputs with complex dtype.")
    return NanToNum.apply(input, nan, posinf, neginf)


def exp2_(input):
    return inplace(input, exp2)


def log2_(input):
    return inplace(input, log2)


def log10_(input):
    return inplace(input, log10)


def tan_(input):
    return inplace(input, tan)


def asin_(input):
    return inplace(input, asin)


def acos_(input):
    return inplace(input, acos)


def atan_(input):
    return inplace(input, atan)


arcsin_, arccos_, arctan_ = asin_, acos_, atan_


def sinh_(input):
    return inplace(input, sinh)


def cosh_(input):
    return inplace(input, cosh)


class _NoInplaceDerivative(Function):
    """The in-place ``asinh_``, ``acosh_`` and ``atanh_``: torch records a node
    (``AcoshBackward1``, ...) whose backward raises."""

    node_name = "AcoshBackward1"

    @staticmethod
    def forward(ctx, a, fn):
        ctx.set_node_name("%sBackward1" % fn.__name__.capitalize())
        ctx.op = fn.__name__
        return fn(a)

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError("the derivative for 'inplace version of %s' is not "
                                  "implemented." % ctx.op)


def _no_derivative_inplace(fn):
    def op(input):
        return _NoInplaceDerivative.apply(input, fn)
    op.__name__ = fn.__name__

    def op_(input):
        return inplace(input, op)
    op_.__name__ = fn.__name__ + "_"
    return op_


asinh_ = _no_derivative_inplace(asinh)
acosh_ = _no_derivative_inplace(acosh)
atanh_ = _no_derivative_inplace(atanh)


def frac_(input):
    return inplace(input, frac)


def erf_(input):
    return inplace(input, erf)


def erfc_(input):
    return inplace(input, erfc)


def erfinv_(input):
    return inplace(input, erfinv)


def sgn_(input):
    return inplace(input, sgn)


def logit_(input, eps=None):
    return inplace(input, logit, eps)


def _nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    return NanToNum.apply(input, nan, posinf, neginf)


_nan_to_num.__name__ = "nan_to_num"


def nan_to_num_(input, nan=0.0, posinf=None, neginf=None):
    # (in place, torch records a complex tensor's node too)
    return inplace(input, _nan_to_num, nan, posinf, neginf)


fix_ = trunc_
absolute_ = abs_
