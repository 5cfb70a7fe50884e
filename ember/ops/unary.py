"""Element-wise functions of one tensor: exp, log, sqrt, abs, relu, sigmoid, tanh, clamp, ..."""
import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from ._inplace import inplace
from ._util import needs_float

__all__ = ["exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "abs", "absolute", "relu",
           "sigmoid", "tanh", "sin", "cos", "clamp", "clip", "clamp_min", "clamp_max",
           "floor", "ceil", "round", "trunc", "fix", "sign", "exp_", "log_", "sqrt_", "abs_",
           "relu_", "sigmoid_", "tanh_", "clamp_", "clip_", "clamp_min_", "clamp_max_",
           "floor_", "ceil_", "round_", "trunc_", "sin_", "cos_", "log1p_", "expm1_",
           "rsqrt_", "sign_"]


def _quiet():
    return np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore")


class Exp(Function):
    node_name = "ExpBackward0"

    @staticmethod
    def forward(ctx, a):
        with _quiet():
            out = Tensor._wrap(np.exp(needs_float(a._array)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        out, = ctx.saved_tensors
        return grad_output * out


class Log(Function):
    node_name = "LogBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with _quiet():
            return Tensor._wrap(np.log(needs_float(a._array)))

    @staticmethod
    def backward(ctx, grad_output):
        a, = ctx.saved_tensors
        return grad_output / a


class Log1p(Function):
    node_name = "Log1PBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with _quiet():
            return Tensor._wrap(np.log1p(needs_float(a._array)))

    @staticmethod
    def backward(ctx, grad_output):
        a, = ctx.saved_tensors
        return grad_output / (a + 1)


class Expm1(Function):
    node_name = "Expm1Backward0"

    @staticmethod
    def forward(ctx, a):
        with _quiet():
            out = Tensor._wrap(np.expm1(needs_float(a._array)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        out, = ctx.saved_tensors
        return grad_output * (out + 1)


class Sqrt(Function):
    node_name = "SqrtBackward0"

    @staticmethod
    def forward(ctx, a):
        with _quiet():
            out = Tensor._wrap(np.sqrt(needs_float(a._array)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        out, = ctx.saved_tensors
        return grad_output / (out * 2)


class Rsqrt(Function):
    node_name = "RsqrtBackward0"

    @staticmethod
    def forward(ctx, a):
        with _quiet():
            out = Tensor._wrap(1 / np.sqrt(needs_float(a._array)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        out, = ctx.saved_tensors
        return grad_output * out * out * out * -0.5


class Abs(Function):
    node_name = "AbsBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return Tensor._wrap(np.abs(a._array))

    @staticmethod
    def backward(ctx, grad_output):
        a, = ctx.saved_tensors
        return grad_output * sign(a)   # NOTE: subgradient 0 at 0, as torch


class Relu(Function):
    node_name = "ReluBackward0"

    @staticmethod
    def forward(ctx, a):
        arr = a._array
        out = Tensor._wrap(np.maximum(arr, arr.dtype.type(0)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        out, = ctx.saved_tensors
        return grad_output * (out > 0)   # NOTE: gradient 0 at 0, as torch


class Sigmoid(Function):
    node_name = "SigmoidBackward0"

    @staticmethod
    def forward(ctx, a):
        x = needs_float(a._array)
        with _quiet():
            # NOTE: exp of -|x| only, so large |x| never overflows.
            e = np.exp(-np.abs(x))
            out = np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)
        out = Tensor._wrap(out)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        out, = ctx.saved_tensors
        return grad_output * out * (1 - out)


class Tanh(Function):
    node_name = "TanhBackward0"

    @staticmethod
    def forward(ctx, a):
        out = Tensor._wrap(np.tanh(needs_float(a._array)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        out, = ctx.saved_tensors
        return grad_output * (1 - out * out)


class Sin(Function):
    node_name = "SinBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return Tensor._wrap(np.sin(needs_float(a._array)))

    @staticmethod
    def backward(ctx, grad_output):
        a, = ctx.saved_tensors
        return grad_output * cos(a)


class Cos(Function):
    node_name = "CosBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return Tensor._wrap(np.cos(needs_float(a._array)))

    @staticmethod
    def backward(ctx, grad_output):
        a, = ctx.saved_tensors
        return -grad_output * sin(a)


class Clamp(Function):
    node_name = "ClampBackward1"

    @staticmethod
    def forward(ctx, a, lo, hi):
        arr = a._array
        lo_a = lo._array if isinstance(lo, Tensor) else lo
        hi_a = hi._array if isinstance(hi, Tensor) else hi
        if lo_a is not None and hi_a is None:
            out = np.maximum(arr, lo_a)
        elif hi_a is not None and lo_a is None:
            out = np.minimum(arr, hi_a)
        else:
            out = np.minimum(np.maximum(arr, lo_a), hi_a)
        if out.dtype != arr.dtype and arr.dtype.kind == "f":
            out = out.astype(arr.dtype)
        ctx.save_for_backward(a, lo if isinstance(lo, Tensor) else None,
                              hi if isinstance(hi, Tensor) else None)
        ctx.bounds = (lo, hi)
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        from ._util import sum_to
        a, lo_t, hi_t = ctx.saved_tensors
        lo, hi = ctx.bounds
        lo = lo_t if lo_t is not None else lo
        hi = hi_t if hi_t is not None else hi
        # NOTE: the gradient passes at the boundary itself (a == min or a == max), as torch.
        mask = None
        if lo is not None:
            mask = a >= lo
        if hi is not None:
            mask = (a <= hi) if mask is None else mask & (a <= hi)
        ga = grad_output * mask if ctx.needs_input_grad[0] else None
        glo = ghi = None
        if ctx.needs_input_grad[1]:
            glo = sum_to(grad_output * (a < lo), ctx._input_meta(1)[0])
        if ctx.needs_input_grad[2]:
            ghi = sum_to(grad_output * (a > hi), ctx._input_meta(2)[0])
        return ga, glo, ghi


class _ZeroGrad(Function):
    """Piecewise-constant functions (floor, ceil, round, trunc, sign): gradient zero."""

    node_name = "FloorBackward0"
    fn = None

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 0


def _zero_grad_op(name, np_fn, node):
    def forward(ctx, a):
        return Tensor._wrap(np_fn(a._array))
    return type(name, (_ZeroGrad,), {"node_name": node, "forward": staticmethod(forward)})


Floor = _zero_grad_op("Floor", np.floor, "FloorBackward0")
Ceil = _zero_grad_op("Ceil", np.ceil, "CeilBackward0")
Trunc = _zero_grad_op("Trunc", np.trunc, "TruncBackward0")
Sign = _zero_grad_op("Sign", np.sign, "SignBackward0")
Round = _zero_grad_op("Round", np.round, "RoundBackward0")


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
    return Abs.apply(input)


absolute = abs


def relu(input, inplace=False):
    """``max(input, 0)``."""
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
    return Clamp.apply(input, min, max)


clip = clamp


def clamp_min(input, min):
    return Clamp.apply(input, min, None)


def clamp_max(input, max):
    return Clamp.apply(input, None, max)


def floor(input, *, out=None):
    """Round down (gradient zero)."""
    return input if input._array.dtype.kind in "iub" else Floor.apply(input)


def ceil(input, *, out=None):
    """Round up (gradient zero)."""
    return input if input._array.dtype.kind in "iub" else Ceil.apply(input)


def round(input, *, decimals=0, out=None):
    """Round half to even, as torch (gradient zero)."""
    if decimals:
        scale = 10.0 ** decimals
        return Round.apply(input * scale) / scale
    return Round.apply(input)


def trunc(input, *, out=None):
    """Round toward zero (gradient zero)."""
    return input if input._array.dtype.kind in "iub" else Trunc.apply(input)


fix = trunc


def sign(input, *, out=None):
    """-1, 0 or 1 (gradient zero)."""
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
    return inplace(input, clamp, min, max)


clip_ = clamp_


def clamp_min_(input, min):
    return inplace(input, clamp_min, min)


def clamp_max_(input, max):
    return inplace(input, clamp_max, max)


def floor_(input):
    return inplace(input, floor)


def ceil_(input):
    return inplace(input, ceil)


def round_(input, decimals=0):
    return inplace(input, round, decimals=decimals)


def trunc_(input):
    return inplace(input, trunc)


def sign_(input):
    return inplace(input, sign)
