"""Activations: softmax, log_softmax (numerically stable), selu, celu exposed as ``torch.NAME``;
the primitives behind nn.functional's softplus, hardtanh, leaky_relu, hardswish and gelu."""
import math

from .. import dtypes as _dt
from ..autograd.function import Function
from ..backend import errstate, get_array_module
from ..backend import quiet as _quiet
from ..tensor import Tensor
from ._inplace import inplace
from ._util import sum_to, wrap_dim, xp_of
from .comparison import where
from .shape import cat, narrow
from .unary import erf, exp, sigmoid, tanh

__all__ = ["softmax", "log_softmax", "selu", "celu", "selu_", "celu_", "hardshrink"]


def _kernel_check(name, arr, dim):
    if arr.dtype.kind not in "fc":
        raise NotImplementedError("\"%s_lastdim_kernel_impl\" not implemented for '%s'"
                                  % (name, _dt.scalar_type_name(arr.dtype)))


class Softmax(Function):
    node_name = "SoftmaxBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        arr = a._array
        _kernel_check("softmax", arr, dim)
        xp = xp_of(a)
        if arr.ndim == 0:
            out = xp.ones_like(arr)
        else:
            # NOTE: subtracting the max keeps exp from overflowing; an all -inf row gives nan.
            with errstate(invalid="ignore", over="ignore"):
                e = xp.exp(arr - arr.max(axis=dim, keepdims=True)) if arr.size else arr.copy()
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
        xp = xp_of(a)
        if arr.ndim == 0:
            out = xp.zeros_like(arr)
        elif arr.size == 0:
            out = arr.copy()
        else:
            with errstate(invalid="ignore", over="ignore", divide="ignore"):
                # NOTE: as torch, a row holding +inf, NaN or only -inf is all NaN (inf - inf).
                shifted = arr - arr.max(axis=dim, keepdims=True)
                out = shifted - xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))
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
    """``scale * x`` for ``x > 0``, else ``scale * alpha * expm1(input_scale * x)``, as torch.

    ``name`` names the node for a variant torch names apart (celu: "CeluBackward0").
    """

    node_name = "EluBackward0"

    @staticmethod
    def forward(ctx, input, alpha, scale, input_scale, name=None):
        x = input._array
        t = x.dtype.type
        xp = xp_of(input)
        with errstate(over="ignore"):
            neg = xp.expm1(xp.minimum(x, 0) * t(input_scale)) * t(alpha * scale)
        ctx.save_for_backward(input)
        ctx.conf = (alpha, scale, input_scale)
        if name is not None:
            ctx.set_node_name(name)
        return Tensor._wrap(xp.where(x > 0, x * t(scale), neg).astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        alpha, scale, input_scale = ctx.conf
        # NOTE: at x = 0 the slope is the negative side's (alpha * scale * input_scale) but its
        # derivative is the positive side's (0), as torch's elu_backward and its double backward;
        # where(x < 0, x, 0) also keeps exp from overflowing for large x.
        neg = exp(where(input < 0, input, 0.0) * input_scale) * (alpha * scale * input_scale)
        return grad_output * where(input > 0, scale, neg), None, None, None, None


def _elu(input, alpha=1.0, scale=1.0, input_scale=1.0):
    return Elu.apply(input, alpha, scale, input_scale)


def celu(input, alpha=1.0):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``. Matches ``torch.celu``."""
    return Elu.apply(input, alpha, 1.0, 1.0 / alpha, "CeluBackward0")


def selu(input):
    """``scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))``. Matches ``torch.selu``."""
    return Elu.apply(input, _SELU_ALPHA, _SELU_SCALE, 1.0)


def celu_(input, alpha=1.0):
    return inplace(input, celu, alpha)


def selu_(input):
    return inplace(input, selu)


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
        beta, threshold = ctx.conf
        bx = input * beta
        return where(bx > threshold, grad_output, grad_output * sigmoid(bx)), None, None


class Hardtanh(Function):
    """``input`` clamped to ``[min_val, max_val]``, with a zero gradient at the ends."""

    node_name = "HardtanhBackward0"

    @staticmethod
    def forward(ctx, input, min_val, max_val):
        ctx.save_for_backward(input)
        ctx.conf = (min_val, max_val)
        x = input._array
        t = x.dtype.type
        return Tensor._wrap(xp_of(input).clip(x, t(min_val), t(max_val)))

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        lo, hi = ctx.conf
        # NOTE: zero gradient at the kinks themselves, as torch's hardtanh_backward.
        return grad_output * ((input > lo) & (input < hi)), None, None


def _leaky(g, x, slope):
    """``g`` where ``x > 0``, else ``g * slope`` (a NaN ``x`` takes the slope, as torch)."""
    return get_array_module(g).where(x > 0, g, g * g.dtype.type(slope))


class LeakyRelu(Function):
    """``x`` where ``x > 0``, else ``negative_slope * x``."""

    node_name = "LeakyReluBackward0"

    @staticmethod
    def forward(ctx, input, negative_slope):
        x = input._array
        if x.dtype.kind not in "f":
            raise NotImplementedError("\"leaky_relu_cpu\" not implemented for '%s'"
                                      % _dt.from_numpy_dtype(x.dtype)._legacy[:-len("Tensor")])
        ctx.save_for_backward(input)
        ctx.slope = negative_slope
        return Tensor._wrap(_leaky(x, x, negative_slope))

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return LeakyReluGrad.apply(grad_output, input, ctx.slope), None


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
        ctx.save_for_backward(input)
        x = input._array
        return Tensor._wrap(x * xp_of(input).clip(x + 3, 0, 6) / 6)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        mid = grad_output * (input / 3 + 0.5)
        return where(input < -3, grad_output * 0, where(input <= 3, mid, grad_output))


_SQRT1_2 = 1 / math.sqrt(2.0)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


class Gelu(Function):
    """``x * Phi(x)`` with the exact normal cdf ``Phi`` (torch's ``approximate='none'``), or
    torch's tanh formula ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``."""

    node_name = "GeluBackward0"

    @staticmethod
    def forward(ctx, input, approximate="none"):
        x = input._array
        ctx.approximate = approximate
        if approximate == "tanh":
            xp = xp_of(input)
            ctx.save_for_backward(input, None)
            inner = (x + x * x * x * _GELU_C) * _SQRT_2_PI
            return Tensor._wrap((x * 0.5 * (xp.tanh(inner) + 1)).astype(x.dtype, copy=False))
        cdf = Tensor._wrap((erf(Tensor._wrap(x * _SQRT1_2))._array + 1) * 0.5)
        ctx.save_for_backward(input, cdf)    # (the cdf for array_backward)
        return Tensor._wrap(x * cdf._array)

    @staticmethod
    def backward(ctx, grad_output):
        input, _ = ctx.saved_tensors
        if ctx.approximate == "tanh":
            x2 = input * input
            t = tanh((input + input * x2 * _GELU_C) * _SQRT_2_PI)
            d = (t + 1) * 0.5 + input * 0.5 * (1 - t * t) * _SQRT_2_PI * (x2 * (3 * _GELU_C) + 1)
            return grad_output * d, None
        # NOTE: the cdf recomputed from the input, so that its derivative (the pdf) reaches a
        # second-order gradient.
        cdf = (erf(input * _SQRT1_2) + 1) * 0.5
        pdf = exp(input * input * -0.5) * _INV_SQRT_2PI
        return grad_output * (cdf + input * pdf), None

    @staticmethod
    def array_backward(ctx, grad_output):
        input, cdf = ctx.saved_tensors
        if ctx.approximate == "tanh":
            return Gelu.backward(ctx, grad_output)
        x = input._array
        pdf = xp_of(input).exp(x * x * -0.5) * _INV_SQRT_2PI
        return Tensor._wrap(grad_output._array * (cdf._array + x * pdf)), None


_GELU_C = 0.044715
_SQRT_2_PI = math.sqrt(2 / math.pi)


class Mish(Function):
    """``x * tanh(softplus(x))``."""

    node_name = "MishBackward0"

    @staticmethod
    def forward(ctx, input):
        x = input._array
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
        ctx.save_for_backward(input, weight)
        return Tensor._wrap(xp_of(input).where(x > 0, x, w * x).astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        input, weight = ctx.saved_tensors
        need = ctx.needs_input_grad
        pos = input > 0
        gi = where(pos, grad_output, weight * grad_output) if need[0] else None
        gw = sum_to(where(pos, grad_output * 0, input * grad_output), weight._array.shape) \
            if need[1] else None
        return gi, gw


class RreluWithNoise(Function):
    """Leaky ReLU whose negative slopes are ``noise`` (training) or ``(lower + upper) / 2``.

    ``noise_arr`` is a raw array of slopes (None in eval mode): torch gives it no edge.
    """

    node_name = "RreluWithNoiseBackward0"

    @staticmethod
    def forward(ctx, input, noise_arr, slope):
        x = input._array
        xp = xp_of(input)
        if noise_arr is not None:
            noise_arr = xp.where(x > 0, x.dtype.type(1), noise_arr).astype(x.dtype, copy=False)
            ctx.save_for_backward(input, Tensor._wrap(noise_arr))
            return Tensor._wrap(x * noise_arr)
        ctx.save_for_backward(input, None)
        ctx.slope = slope
        return Tensor._wrap(xp.where(x > 0, x, x * x.dtype.type(slope)))

    @staticmethod
    def backward(ctx, grad_output):
        input, noise = ctx.saved_tensors
        if noise is not None:
            return grad_output * noise, None, None
        return where(input > 0, grad_output, grad_output * ctx.slope), None, None


def _silu(xp, x, _):
    with _quiet():
        return x / (1 + xp.exp(-x))


def _silu_grad(x, g, _):
    s = sigmoid(x)
    return g * s * (1 + x * (1 - s))


def _logsigmoid(xp, x, _):
    with _quiet():
        return xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))


def _hardsigmoid(xp, x, _):
    return xp.clip(x / 6 + 0.5, 0, 1)


def _hardsigmoid_grad(x, g, _):
    return where((x > -3) & (x < 3), g / 6, g * 0)


def _threshold(xp, x, conf):
    return xp.where(x <= conf[0], x.dtype.type(conf[1]), x)     # (NaN stays NaN, as torch)


def _hardshrink(xp, x, conf):
    return xp.where((x >= -conf[0]) & (x <= conf[0]), 0, x)


def _softshrink(xp, x, conf):
    lambd = conf[0]
    return xp.where(x > lambd, x - lambd, xp.where(x < -lambd, x + lambd, x * 0))


def _pass_where(mask):
    """0 where ``mask(x, conf)`` holds, else the gradient ``g``."""
    return lambda x, g, conf: where(mask(x, conf), g * 0, g)


# kind -> (torch's node, forward on arrays (xp, x, conf), backward in Tensor ops (x, g, conf))
_POINTWISE = {
    "silu": ("SiluBackward0", _silu, _silu_grad),
    "logsigmoid": ("LogSigmoidBackward0", _logsigmoid, lambda x, g, _: g * sigmoid(-x)),
    "hardsigmoid": ("HardsigmoidBackward0", _hardsigmoid, _hardsigmoid_grad),
    "threshold": ("ThresholdBackward0", _threshold, _pass_where(lambda x, c: x <= c[0])),
    "hardshrink": ("HardshrinkBackward0", _hardshrink,
                   _pass_where(lambda x, c: (x >= -c[0]) & (x <= c[0]))),
    "softshrink": ("SoftshrinkBackward0", _softshrink,
                   _pass_where(lambda x, c: (x >= -c[0]) & (x <= c[0]))),
}


class Pointwise(Function):
    """An element-wise activation with torch's own node (``SiluBackward0``, ...): ``kind``
    names its row of ``_POINTWISE``; ``conf`` holds its Python-number parameters."""

    node_name = "SiluBackward0"

    @staticmethod
    def forward(ctx, input, kind, conf=()):
        name, fwd, _ = _POINTWISE[kind]
        if name != "SiluBackward0":
            ctx.set_node_name(name)
        ctx.kind, ctx.conf = kind, conf
        ctx.save_for_backward(input)
        x = input._array
        return Tensor._wrap(fwd(xp_of(input), x, conf).astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return _POINTWISE[ctx.kind][2](input, grad_output, ctx.conf), None, None
