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
                # NOTE: as torch, a row holding +inf, NaN or only -inf is all NaN (inf - inf).
                shifted = arr - arr.max(axis=dim, keepdims=True)
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


class Elu(Function):
    """``scale * x`` for ``x > 0``, else ``scale * alpha * expm1(input_scale * x)``, as torch."""

    node_name = "EluBackward0"

    @staticmethod
    def forward(ctx, input, alpha, scale, input_scale):
        x = input._array
        t = x.dtype.type
        with np.errstate(over="ignore"):
            neg = np.expm1(np.minimum(x, 0) * t(input_scale)) * t(alpha * scale)
        ctx.save_for_backward(input)
        ctx.conf = (alpha, scale, input_scale)
        return Tensor._wrap(np.where(x > 0, x * t(scale), neg).astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        from .comparison import where
        from .unary import exp
        input, = ctx.saved_tensors
        alpha, scale, input_scale = ctx.conf
        # NOTE: at x = 0 the slope is the negative side's (alpha * scale * input_scale) but its
        # derivative is the positive side's (0), as torch's elu_backward and its double backward;
        # where(x < 0, x, 0) also keeps exp from overflowing for large x.
        neg = exp(where(input < 0, input, 0.0) * input_scale) * (alpha * scale * input_scale)
        return grad_output * where(input > 0, scale, neg), None, None, None


class Celu(Elu):
    node_name = "CeluBackward0"


def _elu(input, alpha=1.0, scale=1.0, input_scale=1.0):
    return Elu.apply(input, alpha, scale, input_scale)


def celu(input, alpha=1.0):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``. Matches ``torch.celu``."""
    return Celu.apply(input, alpha, 1.0, 1.0 / alpha)


def selu(input):
    """``scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))``. Matches ``torch.selu``."""
    return Elu.apply(input, _SELU_ALPHA, _SELU_SCALE, 1.0)


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
