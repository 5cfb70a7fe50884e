"""Activations: softmax, log_softmax (numerically stable), selu, celu exposed as ``torch.NAME``;
the primitives behind nn.functional's softplus, hardtanh, leaky_relu, hardswish and gelu."""
import math
from functools import partial

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..autograd.grad_mode import state as _grad_state
from ..random import _gen
from ..backend import backend_of, errstate, get_array_module
from ..backend import quiet as _quiet
from ..tensor import Tensor
from ._inplace import inplace
from ._util import checked_scalar, not_implemented_for, sum_to, wrap_dim, xp_of
from .comparison import where
from .shape import c_order, cat, narrow
from .unary import erf, exp, sigmoid, tanh

__all__ = ["softmax", "log_softmax", "selu", "celu", "selu_", "celu_", "hardshrink"]


def _kernel_check(name, arr, dim):
    # (torch dispatches on the dtype only when there is something to compute)
    if arr.size or arr.ndim == 0:
        last = "_lastdim" if dim == (arr.ndim - 1 if arr.ndim else 0) else ""
        not_implemented_for(arr, "%s%s_kernel_impl" % (name, last), "biuc")


def _float_kernel(arr, kernel, complex_ok=False):
    """torch's NotImplementedError for a floating-only activation kernel (``"elu_cpu"``...)."""
    not_implemented_for(arr, kernel, "biu" if complex_ok else "biuc")


def _keep_layout(out, x):
    """``out`` (an array shaped as ``x``) laid out in ``x``'s memory order, as torch's
    element-wise kernels give it (channels-last in, channels-last out)."""
    if x.flags.c_contiguous or x.ndim < 2:
        return out
    res = get_array_module(x).empty_like(x, dtype=out.dtype)
    res[...] = out
    return res


def _opmath(x):
    """float16/bfloat16 values in float32, as torch's CPU softmax kernels compute them (one
    rounding at the end)."""
    return x.astype(np.float32) if x.dtype == np.float16 or x.dtype.kind == "V" else x


class Softmax(Function):
    node_name = "SoftmaxBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        arr = a._array
        given, dim = dim, wrap_dim(dim, arr.ndim)     # (given: the dim as passed)
        _kernel_check("softmax", arr, dim)
        xp = xp_of(a)
        # NOTE: subtracting the max keeps exp from overflowing; an all -inf row gives nan
        # (a 0-d input is a row of one: 1, or NaN when not finite, as torch).
        x = _opmath(arr.reshape(1) if arr.ndim == 0 else arr)
        with errstate(invalid="ignore", over="ignore"):
            if x.size:
                e = xp.exp(x - x.max(axis=dim, keepdims=True))
                out = (e / e.sum(axis=dim, keepdims=True)).reshape(arr.shape).astype(arr.dtype)
            else:
                out = arr.copy()
        out = Tensor._wrap(c_order(out))     # (always contiguous, as torch)
        ctx.dim, ctx.given = dim, given
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        from .reduction import sum
        out, = ctx.saved_tensors
        g = grad_output * out
        if out._array.ndim == 0:
            return g - out * g, None
        return g - out * sum(g, ctx.dim, keepdim=True), None


class SafeSoftmax(Softmax):
    """Softmax whose rows that are -inf throughout give zeros (not NaN), with zero gradient
    (torch's ``_safe_softmax``, used by attention)."""

    node_name = "SafeSoftmaxBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        arr = a._array
        xp = xp_of(a)
        out = Softmax.forward(ctx, a, dim)
        if arr.ndim and arr.size:
            dead = (arr == -xp.inf).all(axis=dim, keepdims=True)
            if dead.any():
                out._array[...] = xp.where(dead, 0, out._array)
        return out


def safe_softmax(input, dim):
    """Softmax over ``dim`` with all-masked (-inf) rows set to 0."""
    return SafeSoftmax.apply(input, dim)


class LogSoftmax(Function):
    node_name = "LogSoftmaxBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        arr = a._array
        given, dim = dim, wrap_dim(dim, arr.ndim)     # (given: the dim as passed)
        _kernel_check("log_softmax", arr, dim)
        xp = xp_of(a)
        x = _opmath(arr.reshape(1) if arr.ndim == 0 else arr)   # (0-d: a row of one)
        if arr.size == 0:
            out = arr.copy()
        else:
            with errstate(invalid="ignore", over="ignore", divide="ignore"):
                # NOTE: as torch, a row holding +inf, NaN or only -inf is all NaN (inf - inf).
                shifted = x - x.max(axis=dim, keepdims=True)
                lse = xp.exp(shifted).sum(axis=dim, keepdims=True)
                if arr.dtype.itemsize == 2 and dim == arr.ndim - 1:
                    # (torch's 16-bit last-dim kernel keeps the sum and its log in the dtype)
                    lse = lse.astype(arr.dtype).astype(x.dtype)
                    lse = xp.log(lse).astype(arr.dtype).astype(x.dtype)
                else:
                    lse = xp.log(lse)
                out = shifted - lse
                out = out.reshape(arr.shape).astype(arr.dtype)
        out = Tensor._wrap(c_order(out))     # (always contiguous, as torch)
        ctx.dim, ctx.given = dim, given
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        from .reduction import sum
        out, = ctx.saved_tensors
        if out._array.ndim == 0:
            return grad_output - exp(out) * grad_output, None
        return grad_output - exp(out) * sum(grad_output, ctx.dim, keepdim=True), None


def _prepare(input, dim, dtype, op):
    if dtype is not None:
        from .conversion import to
        input = to(input, _dt.to_dtype(dtype))
    if dim is None:
        raise TypeError("%s() missing required argument 'dim' (pos 2)" % op)
    dim = wrap_dim(dim, input._array.ndim, op)     # (torch checks dim before the complex error)
    if input._array.dtype.kind == "c" and input._array.size == 0 and input.requires_grad and \
            _grad_state.enabled:
        raise RuntimeError("_%s does not support automatic differentiation for outputs with "
                           "complex dtype." % op)
    return input, dim


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
    input, _ = _prepare(input, dim, dtype, "softmax")
    return Softmax.apply(input, dim)     # (the dim as passed)


def log_softmax(input, dim, dtype=None):
    """``log(softmax(input, dim))`` computed stably. Matches ``torch.log_softmax``."""
    input, _ = _prepare(input, dim, dtype, "log_softmax")
    return LogSoftmax.apply(input, dim)     # (the dim as passed)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


_ELU_INPLACE_MSG = ("In-place elu backward calculation is triggered with a negative slope which "
                    "is not supported. This is caused by calling in-place forward function with "
                    "a negative slope, please call out-of-place version instead.")


class ActivationGrad(Function):
    """An activation's backward ``grad(grad_output, input)`` (Tensor ops, linear in
    ``grad_output``) recorded as one node with torch's name (``GeluBackwardBackward0``, ...);
    ``grad_x(grad_output, input, grad)`` is its derivative in ``input`` (None: zero, as for
    torch's piecewise-linear activations; a string: torch has none, the node is named
    ``NotImplemented`` and raises when reached)."""

    node_name = "ActivationGradBackward0"

    @staticmethod
    def forward(ctx, grad_output, input, name, grad, grad_x):
        ctx.set_node_name("NotImplemented" if isinstance(grad_x, str) else name)
        ctx.fns = (name, grad, grad_x)
        ctx.save_for_backward(grad_output, input)
        return grad(grad_output, input)

    @staticmethod
    def backward(ctx, grad):
        grad_output, input = ctx.saved_tensors
        grad_x = ctx.fns[2]
        if isinstance(grad_x, str):
            raise RuntimeError("derivative for aten::%s is not implemented" % grad_x)
        g_out = ActivationGrad.apply(grad, input, *ctx.fns) if ctx.needs_input_grad[0] else None
        g_in = None
        if ctx.needs_input_grad[1]:
            g_in = Tensor._wrap(xp_of(input).zeros_like(input._array)) if grad_x is None \
                else grad_x(grad_output, input, grad)
        return g_out, g_in, None, None, None


class Elu(Function):
    """``scale * x`` for ``x > 0``, else ``scale * alpha * expm1(input_scale * x)``, as torch.

    ``name`` names the node for a variant torch names apart (celu: "CeluBackward0");
    ``is_result``: the in-place form, whose backward reads the output (torch's ...Backward1).
    """

    node_name = "EluBackward0"

    @staticmethod
    def forward(ctx, input, alpha, scale, input_scale, name=None, is_result=False):
        x = input._array
        _float_kernel(x, "elu_cpu")
        xp = xp_of(input)
        # (a 16-bit dtype computes in float32, torch's opmath type)
        xm = x.astype(np.float32) if x.dtype.itemsize < 4 else x
        t = xm.dtype.type
        with errstate(over="ignore", invalid="ignore"):
            # NOTE: torch's kernel: x < 0 ? expm1(x * input_scale) * (alpha * scale) :
            # x * scale, the coefficients in the opmath type (so a signed zero takes the
            # positive side and keeps its sign, whatever alpha is, an infinite or NaN one too)
            neg = xp.expm1(xp.where(xm < 0, xm, xm * 0) * t(input_scale)) * (t(alpha) * t(scale))
            out = Tensor._wrap(xp.where(xm < 0, neg, xm * t(scale)).astype(x.dtype, copy=False))
        ctx.save_for_backward(out if is_result else input)
        ctx.conf = (alpha, scale, input_scale, is_result)
        if name is not None:
            ctx.set_node_name(name)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        alpha, scale, input_scale, is_result = ctx.conf
        if is_result:
            if not alpha >= 0:    # (a NaN alpha too, as torch)
                raise RuntimeError(_ELU_INPLACE_MSG)
        return (ActivationGrad.apply(grad_output, x, "EluBackwardBackward0",
                                     partial(_elu_grad, conf=ctx.conf),
                                     partial(_elu_grad_x, conf=ctx.conf)),
                None, None, None, None, None)


def _elu_grad(grad_output, x, conf):
    """elu's backward (``x``: the input, or the result for the in-place form)."""
    alpha, scale, input_scale, is_result = conf
    # NOTE: a NaN input (or result) gives a NaN gradient in torch's vectorised kernel
    # (the one whole blocks of two AVX-512 vectors take) and the positive side's slope in
    # its scalar tail loop (``x <= 0`` false).
    pos = x > 0
    n = x.numel()
    tail = n - n % (128 // x.element_size())
    if tail < n:
        xp = xp_of(x)
        in_tail = Tensor._wrap(xp.arange(n).reshape(tuple(x.shape)) >= tail)
        pos = pos.logical_or(x.isnan().logical_and(in_tail))
    dt = x._array.dtype
    t = dt.type if dt.kind == "f" and dt.itemsize >= 4 else np.float32
    with errstate(invalid="ignore", over="ignore"):
        negcoef = float(t(alpha) * t(scale))
    # NOTE: torch's order: grad * input_scale * (result + alpha * scale) from the result,
    # grad * input_scale * (alpha * scale) * exp(x * input_scale) from the input. At x = 0
    # the slope is the negative side's but its derivative is the positive side's (0), as
    # torch's elu_backward and its double backward; where(x < 0, x, 0) also keeps exp from
    # overflowing for large x (x * 0 keeps a NaN input NaN).
    g = grad_output * input_scale
    if is_result:
        neg = g * (x + negcoef)
    else:
        neg = g * negcoef * exp(where(x < 0, x, x * 0.0) * input_scale)
    return where(pos, grad_output * scale, neg)


def _elu_grad_x(grad_output, x, grad, conf):
    """The derivative of elu's backward in ``x``, as torch's elu_double_backward."""
    g = grad * grad_output * conf[2]
    neg = (x < 0).to(x.dtype)
    return g * neg if conf[3] else _elu_grad(g, x, conf) * neg


def _elu(input, alpha=1.0, scale=1.0, input_scale=1.0):
    return Elu.apply(input, alpha, scale, input_scale)


def _celu_alpha(alpha):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return alpha


def celu(input, alpha=1.0):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``. Matches ``torch.celu``."""
    return Elu.apply(input, alpha, 1.0, 1.0 / _celu_alpha(alpha), "CeluBackward0")


def selu(input):
    """``scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))``. Matches ``torch.selu``."""
    return Elu.apply(input, _SELU_ALPHA, _SELU_SCALE, 1.0)


def _celu_result(input, alpha=1.0):
    return Elu.apply(input, alpha, 1.0, 1.0 / _celu_alpha(alpha), "CeluBackward1", True)


def _selu_result(input):
    return Elu.apply(input, _SELU_ALPHA, _SELU_SCALE, 1.0, "EluBackward1", True)


def _elu_result(input, alpha=1.0):
    return Elu.apply(input, alpha, 1.0, 1.0, "EluBackward1", True)


_celu_result.__name__, _selu_result.__name__, _elu_result.__name__ = "celu", "selu", "elu"


def celu_(input, alpha=1.0):
    return inplace(input, _celu_result, alpha)


def selu_(input):
    return inplace(input, _selu_result)


def hardshrink(input, lambd=0.5):
    """``x`` where ``|x| > lambd``, else 0. Matches ``torch.hardshrink``."""
    return Pointwise.apply(input, "hardshrink", (lambd,))



# The primitives behind nn.functional's activations that need their own backward (stability,
# kinks): torch's nodes, one Function each.

class Softplus(Function):
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``."""

    node_name = "SoftplusBackward0"

    @staticmethod
    def forward(ctx, input, beta, threshold):
        x = input._array
        _float_kernel(x, "softplus_cpu")
        xp = xp_of(input)
        bx = x * beta
        with _quiet():
            # NOTE: log1p(exp(-|bx|)) + relu(bx) never overflows; above threshold it is x.
            soft = (xp.log1p(xp.exp(-xp.abs(bx))) + xp.maximum(bx, 0)) / beta
        out = xp.where(bx > threshold, x, soft).astype(x.dtype, copy=False)
        ctx.save_for_backward(input)
        ctx.conf = (beta, threshold)
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return ActivationGrad.apply(grad_output, input, "SoftplusBackwardBackward0",
                                    partial(_softplus_grad, conf=ctx.conf),
                                    partial(_softplus_grad_x, conf=ctx.conf)), None, None


def _softplus_grad(grad_output, input, conf):
    bx = input * conf[0]
    return where(bx > conf[1], grad_output, grad_output * sigmoid(bx))


def _softplus_grad_x(grad_output, input, grad, conf):
    """As torch's softplus_double_backward."""
    beta, threshold = conf
    bx = input * beta
    s = sigmoid(bx)
    return s * (1 - s) * (grad * grad_output) * beta * (bx < threshold).to(s.dtype)


class Hardtanh(Function):
    """``input`` clamped to ``[min_val, max_val]``, with a zero gradient at the ends."""

    node_name = "HardtanhBackward0"

    @staticmethod
    def forward(ctx, input, min_val, max_val):
        x = input._array
        k = x.dtype.kind
        if k == "b":
            raise RuntimeError("Bool inputs not supported for hardtanh")
        if k == "c":
            raise NotImplementedError("clamp is not supported for complex types")
        if k == "u" and (min_val < 0 or max_val < 0):
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
        ctx.save_for_backward(input)
        ctx.conf = (min_val, max_val)
        if k in "iu":      # (the limits cast to the integer type, as C++ truncates them)
            lo, hi = int(min_val), int(max_val)
        else:
            lo, hi = min_val, max_val
        xp = xp_of(input)
        if lo != lo or hi != hi:     # (a NaN bound: torch's clamp gives NaN everywhere)
            return Tensor._wrap(xp.full_like(x, math.nan))
        lo, hi = x.dtype.type(lo), x.dtype.type(hi)
        # (where, not clip: -0.0 and NaN stay, as torch's clamp)
        y = xp.where(x < lo, lo, x)
        return Tensor._wrap(xp.where(y > hi, hi, y).astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        lo, hi = ctx.conf
        # NOTE: zero gradient at the kinks themselves and beyond, as torch's hardtanh_backward;
        # 0 at a NaN input too, as its vectorised kernel (its scalar tail loop passes it).
        # (a NaN bound: 0 everywhere, as the vectorised kernel; its scalar tail passes it)
        return ActivationGrad.apply(grad_output, input, "HardtanhBackwardBackward0",
                                    partial(_hardtanh_grad, conf=ctx.conf), None), None, None


def _hardtanh_grad(grad_output, input, conf):
    return where((input > conf[0]) & (input < conf[1]), grad_output, 0.0)


def _leaky(g, x, slope):
    """``g`` where ``x > 0``, else ``g * slope`` (a NaN ``x`` takes the slope, as torch)."""
    return get_array_module(g).where(x > 0, g, g * g.dtype.type(slope))


class LeakyRelu(Function):
    """``x`` where ``x > 0``, else ``negative_slope * x``."""

    node_name = "LeakyReluBackward0"

    @staticmethod
    def forward(ctx, input, negative_slope, is_result=False):
        x = input._array
        _float_kernel(x, "leaky_relu_cpu")
        out = Tensor._wrap(_leaky(x, x, negative_slope))
        ctx.save_for_backward(out if is_result else input)
        ctx.slope = negative_slope
        if is_result:
            ctx.set_node_name("LeakyReluBackward1")
            ctx.is_result = True
        return out

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        if ctx.slope < 0 and getattr(ctx, "is_result", False):
            raise RuntimeError(_LEAKY_INPLACE_MSG)
        return LeakyReluGrad.apply(grad_output, input, ctx.slope), None, None


_LEAKY_INPLACE_MSG = (
    "In-place leakyReLu backward calculation is triggered with a negative slope which is not "
    "supported. This is caused by calling in-place forward function with a negative slope, "
    "please call out-of-place version instead. File an issue at "
    "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu backward "
    "calculation with negative slope")


class LeakyReluGrad(Function):
    """Leaky ReLU's backward, itself differentiable (zero derivative in the input, as torch)."""

    node_name = "LeakyReluBackwardBackward0"

    @staticmethod
    def forward(ctx, grad_output, input, negative_slope):
        ctx.save_for_backward(input)
        ctx.slope = negative_slope
        return Tensor._wrap(_leaky(grad_output._array, input._array, negative_slope))

    @staticmethod
    def backward(ctx, grad):
        input, = ctx.saved_tensors
        zero = Tensor._wrap(xp_of(input).zeros_like(input._array)) \
            if ctx.needs_input_grad[1] else None
        return LeakyReluGrad.apply(grad, input, ctx.slope), zero, None


class Hardswish(Function):
    """``x * relu6(x + 3) / 6``."""

    node_name = "HardswishBackward0"

    @staticmethod
    def forward(ctx, input):
        x = input._array
        _float_kernel(x, "hardswish_cpu")
        ctx.save_for_backward(input)
        with _quiet():
            return Tensor._wrap((x * xp_of(input).clip(x + 3, 0, 6) / 6)
                                .astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return ActivationGrad.apply(grad_output, input, "HardswishBackwardBackward0",
                                    _hardswish_grad, _hardswish_grad_x)


def _hardswish_grad(grad_output, input):
    mid = grad_output * (input / 3 + 0.5)
    # NOTE: 0 at -3 and the gradient itself at 3, as torch
    return where(input <= -3, 0.0, where(input < 3, mid, grad_output))


def _hardswish_grad_x(grad_output, input, grad):
    return where((input > -3) & (input < 3), grad * grad_output / 3.0, 0.0)


_SQRT1_2 = 1 / math.sqrt(2.0)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


class Gelu(Function):
    """``x * Phi(x)`` with the exact normal cdf ``Phi`` (torch's ``approximate='none'``), or
    torch's tanh formula ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``."""

    node_name = "GeluBackward0"

    @staticmethod
    def forward(ctx, input, approximate="none"):
        x = input._array
        _float_kernel(x, "GeluKernelImpl")
        ctx.approximate = approximate
        xp = xp_of(input)
        xf = x.astype(np.float32) if x.dtype.itemsize == 2 else x     # (torch's opmath)
        if approximate == "tanh":
            ctx.save_for_backward(input)
            with _quiet():
                inner = (xf + xf * xf * xf * _GELU_C) * _SQRT_2_PI
                out = (xf * 0.5 * (xp.tanh(inner) + 1)).astype(x.dtype, copy=False)
                return Tensor._wrap(_keep_layout(out, x))
        ctx.save_for_backward(input)     # (the input only, as torch: a pack hook sees one)
        with _quiet():
            out = (xf * _gelu_cdf(xf)).astype(x.dtype, copy=False)
        if x.dtype.itemsize < 8:
            # NOTE: torch's float32/half kernel gives NaN at +inf (its erf-based formula), its
            # float64 one +inf; -inf is NaN in both.
            out = xp.where(x == xp.inf, x.dtype.type(xp.nan), out)
        return Tensor._wrap(_keep_layout(out, x))

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        if ctx.approximate == "tanh":
            return ActivationGrad.apply(grad_output, input, "GeluBackwardBackward0",
                                        _gelu_tanh_grad, _gelu_tanh_grad_x), None
        return ActivationGrad.apply(grad_output, input, "GeluBackwardBackward0",
                                    _gelu_grad, _gelu_grad_x), None

    @staticmethod
    def array_backward(ctx, grad_output):
        input, = ctx.saved_tensors
        x, g, dt = input._array, grad_output._array, input._array.dtype
        if dt.itemsize == 2:     # (torch's 16-bit kernel: in float32, rounded once)
            x, g = x.astype(np.float32), g.astype(np.float32)
        with _quiet():
            if ctx.approximate == "tanh":
                out = _gelu_tanh_grad(Tensor._wrap(g), Tensor._wrap(x))._array
            else:
                out = g * (_gelu_cdf(x) + x * (xp_of(input).exp(x * x * -0.5) * _INV_SQRT_2PI))
        return Tensor._wrap(out.astype(dt, copy=False)), None


def _gelu_cdf(x):
    """The normal cdf of the array ``x``."""
    return (erf(Tensor._wrap(x * _SQRT1_2))._array + 1) * 0.5


def _gelu_tanh_grad(grad_output, input):
    x2 = input * input
    t = tanh((input + input * x2 * _GELU_C) * _SQRT_2_PI)
    d = (t + 1) * 0.5 + input * 0.5 * (1 - t * t) * _SQRT_2_PI * (x2 * (3 * _GELU_C) + 1)
    return grad_output * d


def _gelu_tanh_grad_x(grad_output, input, grad):
    # d/dx of 0.5 (1 + t) + 0.5 x (1 - t^2) u', with t = tanh(u), u = k (x + c x^3)
    x2 = input * input
    t = tanh((input + input * x2 * _GELU_C) * _SQRT_2_PI)
    du = (x2 * (3 * _GELU_C) + 1) * _SQRT_2_PI
    sech2 = 1 - t * t
    dd = sech2 * (du - input * t * du * du + x2 * (3 * _GELU_C * _SQRT_2_PI))
    return grad * grad_output * dd


def _gelu_grad(grad_output, input):
    cdf = (erf(input * _SQRT1_2) + 1) * 0.5
    pdf = exp(input * input * -0.5) * _INV_SQRT_2PI
    return grad_output * (cdf + input * pdf)


def _gelu_grad_x(grad_output, input, grad):
    # d/dx (cdf + x pdf) = pdf (2 - x^2)
    pdf = exp(input * input * -0.5) * _INV_SQRT_2PI
    return grad * grad_output * pdf * (2 - input * input)


_GELU_C = 0.044715
_SQRT_2_PI = math.sqrt(2 / math.pi)


class Mish(Function):
    """``x * tanh(softplus(x))``."""

    node_name = "MishBackward0"

    @staticmethod
    def forward(ctx, input):
        x = input._array
        _float_kernel(x, "mish_cpu")
        xp = xp_of(input)
        ctx.save_for_backward(input)
        with _quiet():
            return Tensor._wrap((x * xp.tanh(xp.log1p(xp.exp(x)))).astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        t = tanh(Softplus.apply(input, 1.0, 20.0))
        return grad_output * (t + input * sigmoid(input) * (1 - t * t))


class Glu(Function):
    """``a * sigmoid(b)``, ``a`` and ``b`` the two halves of the input along ``dim``."""

    node_name = "GluBackward0"

    @staticmethod
    def forward(ctx, input, dim):
        x = input._array
        _float_kernel(x, "glu_cpu")
        h = x.shape[dim] // 2
        a = x[(slice(None),) * dim + (slice(0, h),)]
        b = x[(slice(None),) * dim + (slice(h, None),)]
        ctx.dim = dim
        ctx.save_for_backward(input)
        with _quiet():
            return Tensor._wrap((a / (1 + xp_of(input).exp(-b))).astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        dim = ctx.dim
        h = input._array.shape[dim] // 2
        a, b = narrow(input, dim, 0, h), narrow(input, dim, h, h)
        s = sigmoid(b)
        ga = grad_output * s
        return cat([ga, ga * a * (1 - s)], dim), None


class PreluKernel(Function):
    """``x`` where ``x > 0``, else ``weight * x`` (``weight`` broadcast to the input)."""

    node_name = "PreluKernelBackward0"

    @staticmethod
    def forward(ctx, input, weight):
        x, w = input._array, weight._array
        _float_kernel(x, "prelu_cpu")
        ctx.save_for_backward(input, weight)
        return Tensor._wrap(xp_of(input).where(x > 0, x, w * x).astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        input, weight = ctx.saved_tensors
        need = ctx.needs_input_grad
        gi, gw = PreluKernelGrad.apply(grad_output, input, weight)
        return (gi if need[0] else None,
                sum_to(gw, weight._array.shape) if need[1] else None)


class PreluKernelGrad(Function):
    """torch's ``_prelu_kernel_backward``: the input's gradient and the weight's (at the input's
    shape), a node of its own for double backward."""

    node_name = "PreluKernelBackwardBackward0"

    @staticmethod
    def forward(ctx, grad_output, input, weight):
        g, x, w = grad_output._array, input._array, weight._array
        ctx.save_for_backward(grad_output, input, weight)
        ctx.set_materialize_grads(False)
        xp = xp_of(input)
        pos = x > 0
        gi = xp.where(pos, g, w * g).astype(x.dtype, copy=False)
        gw = xp.where(pos, 0, x * g).astype(w.dtype, copy=False)
        return Tensor._wrap(gi), Tensor._wrap(xp.broadcast_to(gw, xp.broadcast_shapes(
            gi.shape, w.shape)).copy())

    @staticmethod
    def backward(ctx, grad_gi, grad_gw):
        # NOTE: torch's formulas (derivatives.yaml), with ``self >= 0`` as there
        grad_output, input, weight = ctx.saved_tensors
        need = ctx.needs_input_grad
        pos = input >= 0
        zero = Tensor._wrap(xp_of(input).zeros((), dtype=input._array.dtype))
        g_out = g_in = g_w = None
        if need[0] and (grad_gi is not None or grad_gw is not None):
            if grad_gi is None:
                g_out = where(pos, zero, grad_gw * input)
            elif grad_gw is None:
                g_out = where(pos, grad_gi, grad_gi * weight)
            else:
                g_out = where(pos, grad_gi, grad_gi * weight + grad_gw * input)
        if need[1]:
            g_in = where(pos, zero, grad_output * grad_gw) if grad_gw is not None else \
                Tensor._wrap(xp_of(input).zeros_like(input._array))
        if need[2]:
            g_w = where(pos, zero, grad_output * grad_gi) if grad_gi is not None else \
                Tensor._wrap(xp_of(input).zeros_like(input._array))
        return g_out, g_in, g_w


def _rrelu_noise(x, lower, upper, generator=None):
    """torch's training-mode rrelu slopes for array ``x``: 1 where not ``x <= 0``; elsewhere, in C
    order, one uniform draw each (double, from a 64-bit draw) on ``[lower, upper]`` rounded to
    ``x``'s compute type, then rounded to ``x``'s dtype."""
    compute = np.float64 if x.dtype == np.float64 else np.float32
    lo, hi = float(compute(lower)), float(compute(upper))
    xp = get_array_module(x)
    with _quiet():
        neg = x <= 0
    # host: the generator's draws, in torch's order, for the non-positive elements
    u = _gen(generator)._unit(int(xp.count_nonzero(neg)), np.float64)
    noise = xp.ones(x.shape, dtype=x.dtype)
    noise[neg] = backend_of(x).asarray((u * (hi - lo) + lo).astype(x.dtype))
    return noise


class RreluWithNoise(Function):
    """Leaky ReLU whose negative slopes are ``noise`` (training) or ``(lower + upper) / 2``.

    ``noise_arr`` is a raw array of slopes (None in eval mode): torch gives it no edge.
    """

    node_name = "RreluWithNoiseBackward0"

    @staticmethod
    def forward(ctx, input, noise_arr, slope, is_result=False):
        x = input._array
        xp = xp_of(input)
        if is_result:
            ctx.set_node_name("RreluWithNoiseBackward1")
        ctx.is_result = is_result
        if noise_arr is not None:
            noise_arr = xp.where(x > 0, x.dtype.type(1), noise_arr).astype(x.dtype, copy=False)
            ctx.save_for_backward(input, Tensor._wrap(noise_arr))
            return Tensor._wrap(x * noise_arr)
        ctx.slope = slope
        # (torch's eval rrelu makes a contiguous output, whatever the input's layout)
        out = Tensor._wrap(c_order(xp.where(x > 0, x, x * x.dtype.type(slope))))
        ctx.save_for_backward(out if is_result else input, None)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        input, noise = ctx.saved_tensors
        if noise is not None:
            return RreluNoiseGrad.apply(grad_output, input, (noise,)), None, None, None
        if ctx.is_result and ctx.slope < 0:
            raise RuntimeError(_LEAKY_INPLACE_MSG)
        return ActivationGrad.apply(grad_output, input, "RreluWithNoiseBackwardBackward0",
                                    partial(_rrelu_grad, slope=ctx.slope), None), \
            None, None, None


class RreluNoiseGrad(Function):
    """Training-mode rrelu's backward ``grad_output * noise`` as torch's node (``noise`` comes
    boxed: it has no edge); its derivative in ``input`` is zero."""

    node_name = "RreluWithNoiseBackwardBackward0"

    @staticmethod
    def forward(ctx, grad_output, input, noise):
        noise, = noise
        ctx.save_for_backward(input, noise)
        return Tensor._wrap(grad_output._array * noise._array)

    @staticmethod
    def backward(ctx, grad):
        input, noise = ctx.saved_tensors
        need = ctx.needs_input_grad
        g_out = RreluNoiseGrad.apply(grad, input, (noise,)) if need[0] else None
        g_in = Tensor._wrap(xp_of(input).zeros_like(input._array)) if need[1] else None
        return g_out, g_in, None


def _rrelu_grad(grad_output, input, slope):
    return where(input > 0, grad_output, grad_output * slope)


def _silu(xp, x, _):
    with _quiet():
        return x / (1 + xp.exp(-x))


def _silu_grad(x, g, _):
    s = sigmoid(x)
    d = s * (1 + x * (1 - s))
    return g * (d.conj() if d.is_complex() else d)


def _logsigmoid(xp, x, _):
    with _quiet():
        return xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))


def _hardsigmoid(xp, x, _):
    return xp.clip(x / 6 + 0.5, 0, 1)


def _hardsigmoid_grad(x, g, _):
    # NOTE: torch's vectorised kernel multiplies by the float literal 1.0f / 6.0f, in double
    # too (its scalar tail loop, for half, by that literal rounded to half).
    return where((x > -3) & (x < 3), g * _ONE_SIXTH_F32, 0.0)


_ONE_SIXTH_F32 = float(np.float32(1.0 / 6.0))


def _threshold(xp, x, conf):
    return xp.where(x <= conf[0], conf[1], x)     # (NaN stays NaN, as torch)


def _hardshrink(xp, x, conf):
    return xp.where((x >= -conf[0]) & (x <= conf[0]), x.dtype.type(0), x)


def _softshrink(xp, x, conf):
    lambd = x.dtype.type(conf[0])
    # NOTE: torch's kernel gives +0 in its vectorised loop (whole blocks of 64 bytes, in memory
    # order) and ``x * 0`` (-0 for a negative x) in its scalar tail loop, which takes all of a
    # strided input.
    zero = x * x.dtype.type(0)
    block = 64 // x.itemsize
    dense = x.flags.c_contiguous or x.flags.f_contiguous
    n = x.size - x.size % block if dense else 0
    if n:
        pos = xp.arange(x.size).reshape(x.shape, order="C" if x.flags.c_contiguous else "F")
        zero = xp.where(pos < n, x.dtype.type(0), zero)
    return xp.where(x > lambd, x - lambd, xp.where(x < -lambd, x + lambd, zero))


def _pass_where(mask):
    """0 where ``mask(x, conf)`` holds, else the gradient ``g``."""
    return lambda x, g, conf: where(mask(x, conf), 0.0, g)


def _shrink_grad(x, g, conf):
    # NOTE: 0 at a NaN input, as torch's vectorised kernel (its scalar tail loop passes it).
    return where((x < -conf[0]) | (x > conf[0]), g, 0.0)


def _logsigmoid_grad_x(grad_output, input, grad):
    """As torch's log_sigmoid_double_backward."""
    z = sigmoid(input)
    return grad * grad_output * (z - 1) * z


# kind -> (torch's node, forward on arrays (xp, x, conf), backward in Tensor ops (x, g, conf),
# torch's kernel name for its dtype error, whether complex input is allowed, its backward's
# node and derivative in the input as ActivationGrad takes them (None: a composite one))
_POINTWISE = {
    "silu": ("SiluBackward0", _silu, _silu_grad, "silu_cpu", True, None),
    "logsigmoid": ("LogSigmoidBackward0", _logsigmoid, lambda x, g, _: g * sigmoid(-x),
                   "log_sigmoid_cpu", False,
                   ("LogSigmoidBackwardBackward0", _logsigmoid_grad_x)),
    "hardsigmoid": ("HardsigmoidBackward0", _hardsigmoid, _hardsigmoid_grad, "hardsigmoid_cpu",
                    False, (None, "hardsigmoid_backward")),
    "threshold": ("ThresholdBackward0", _threshold, _pass_where(lambda x, c: x <= float(c[0])),
                  "threshold_cpu", False, ("ThresholdBackwardBackward0", None)),
    "threshold_": ("ThresholdBackward1", _threshold, _pass_where(lambda x, c: x <= float(c[0])),
                   "threshold_cpu", False, ("ThresholdBackwardBackward0", None)),  # (in place)
    "hardshrink": ("HardshrinkBackward0", _hardshrink, _shrink_grad, "hardshrink_cpu", False,
                   ("HardshrinkBackwardBackward0", None)),
    "softshrink": ("SoftshrinkBackward0", _softshrink, _shrink_grad, "softshrink_check", False,
                   ("SoftshrinkBackwardBackward0", None)),
}


class Pointwise(Function):
    """An element-wise activation with torch's own node (``SiluBackward0``, ...): ``kind``
    names its row of ``_POINTWISE``; ``conf`` holds its Python-number parameters."""

    node_name = "SiluBackward0"

    @staticmethod
    def forward(ctx, input, kind, conf=()):
        name, fwd, _, kernel, complex_ok, _ = _POINTWISE[kind]
        x = input._array
        if kind[:9] == "threshold":
            if x.dtype.kind in "bc":
                not_implemented_for(x, kernel, "bc")
            conf = _threshold_conf(x, conf)
        else:
            _float_kernel(x, kernel, complex_ok)
            if kind == "softshrink":
                _check_lambda(x, conf[0])
        if name != "SiluBackward0":
            ctx.set_node_name(name)
        ctx.kind, ctx.conf = kind, conf
        ctx.save_for_backward(input)
        with _quiet():
            out = fwd(xp_of(input), x, conf).astype(x.dtype, copy=False)
        # NOTE: torch's log_sigmoid_forward writes a fresh contiguous output
        return Tensor._wrap(c_order(out) if kind == "logsigmoid" else out)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        _, _, grad, _, _, double = _POINTWISE[ctx.kind]
        if double is None:      # (a composite second derivative, as torch's silu)
            return grad(input, grad_output, ctx.conf), None, None
        fn = partial(_swap_grad, grad=grad, conf=ctx.conf)
        return ActivationGrad.apply(grad_output, input, double[0], fn, double[1]), None, None


def _swap_grad(grad_output, input, grad, conf):
    return grad(input, grad_output, conf)


def _threshold_conf(x, conf):
    """``(threshold, value)`` as torch's kernel takes them: converted to ``x``'s dtype (an
    integer type truncates; out-of-range values raise torch's overflow error)."""
    d = _dt.from_numpy_dtype(x.dtype)
    out = []
    for v in conf:
        v = checked_scalar(v, d)
        if x.dtype.kind in "iu":
            v = int(v)
        out.append(x.dtype.type(v))
    return tuple(out)


def _check_lambda(x, lambd):
    top = float(_dt.finfo(_dt.from_numpy_dtype(x.dtype)).max)
    if not 0 <= lambd <= top:
        raise RuntimeError("lambda must be in range [0, %g] for input dtype %s, but found %g"
                           % (top, _dt.scalar_type_name(x.dtype), lambd))


def threshold(input, threshold, value):
    """``input`` where it exceeds ``threshold``, else ``value``. Matches ``torch.threshold``."""
    return Pointwise.apply(input, "threshold", (threshold, value))


def _threshold_result(input, threshold, value):
    return Pointwise.apply(input, "threshold_", (threshold, value))


_threshold_result.__name__ = "threshold"


def threshold_(input, threshold, value):
    """In-place ``threshold`` (torch's node ``ThresholdBackward1``)."""
    return inplace(input, _threshold_result, threshold, value)
