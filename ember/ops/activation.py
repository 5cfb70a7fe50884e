"""Activations exposed as ``torch.NAME``: softmax, log_softmax (numerically stable), selu, celu."""
import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import wrap_dim

__all__ = ["softmax", "log_softmax", "selu", "celu", "selu_", "celu_", "hardshrink"]


def _kernel_check(name, arr, dim):
    if arr.dtype.kind not in "fc":
        raise NotImplementedError("\"%s_lastdim_kernel_impl\" not implemented for '%s'"
                           % (name, _dt.from_numpy_dtype(arr.dtype)._legacy.replace("Tensor", "")))


class Softmax(Function):
    node_name = "SoftmaxBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        arr = a._array
        _kernel_check("softmax", arr, dim)
        if arr.ndim == 0:
            out = np.ones_like(arr)
        else:
            # NOTE: subtracting the max keeps exp from overflowing; an all -inf row gives nan.
            with np.errstate(invalid="ignore", over="ignore"):
                e = np.exp(arr - arr.max(axis=dim, keepdims=True)) if arr.size else arr.copy()
                out = e / e.sum(axis=dim, keepdims=True)
        out = Tensor._wrap(out)
        ctx.dim = dim
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        from .reduction import sum
        out, = ctx.saved_tensors
        if out._array.ndim == 0:
            return grad_output * 0, None
        g = grad_output * out
        return g - out * sum(g, ctx.dim, keepdim=True), None


class LogSoftmax(Function):
    node_name = "LogSoftmaxBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        arr = a._array
        _kernel_check("log_softmax", arr, dim)
        if arr.ndim == 0:
            out = np.zeros_like(arr)
        elif arr.size == 0:
            out = arr.copy()
        else:
            with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
                m = arr.max(axis=dim, keepdims=True)
                m = np.where(np.isfinite(m), m, 0).astype(arr.dtype)
                shifted = arr - m
                out = shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
        out = Tensor._wrap(out)
        ctx.dim = dim
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        from .reduction import sum
        from .unary import exp
        out, = ctx.saved_tensors
        if out._array.ndim == 0:
            return grad_output * 0, None
        return grad_output - exp(out) * sum(grad_output, ctx.dim, keepdim=True), None


def _prepare(input, dim, dtype, op):
    if dtype is not None:
        from .conversion import to
        input = to(input, _dt.to_dtype(dtype))
    if dim is None:
        raise TypeError("%s() missing required argument 'dim' (pos 2)" % op)
    return input, wrap_dim(dim, input._array.ndim, op)


def softmax(input, dim, dtype=None):
    """``exp(input) / sum(exp(input), dim)``, computed stably. Matches ``torch.softmax``.

    Args:
        input: a floating tensor.
        dim: the dimension along which the values sum to 1.
        dtype: cast ``input`` to this dtype first.

    Example:
        >>> import ember
        >>> ember.softmax(ember.tensor([0., 0.]), dim=0)
        tensor([0.5000, 0.5000])
    """
    input, dim = _prepare(input, dim, dtype, "softmax")
    return Softmax.apply(input, dim)


def log_softmax(input, dim, dtype=None):
    """``log(softmax(input, dim))`` computed stably. Matches ``torch.log_softmax``."""
    input, dim = _prepare(input, dim, dtype, "log_softmax")
    return LogSoftmax.apply(input, dim)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def celu(input, alpha=1.0):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``. Matches ``torch.celu``."""
    from .comparison import where
    from .unary import clamp, expm1
    # NOTE: clamp first so the unused branch never overflows (inf * 0 = nan in the gradient).
    return where(input > 0, input, expm1(clamp(input, max=0) / alpha) * alpha)


def selu(input):
    """``scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))``. Matches ``torch.selu``."""
    from .comparison import where
    from .unary import clamp, expm1
    return where(input > 0, input, expm1(clamp(input, max=0)) * _SELU_ALPHA) * _SELU_SCALE


def celu_(input, alpha=1.0):
    from ._inplace import inplace
    return inplace(input, celu, alpha)


def selu_(input):
    from ._inplace import inplace
    return inplace(input, selu)


def hardshrink(input, lambd=0.5):
    """``x`` where ``|x| > lambd``, else 0. Matches ``torch.hardshrink``."""
    from .comparison import where
    from .unary import abs
    return where(abs(input) > lambd, input, input * 0)
