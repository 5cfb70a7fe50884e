"""Normalization: batch_norm, layer_norm, group_norm, instance-free and fused.

One Function standardises over a set of axes (``(x - mean) / sqrt(var + eps)``, biased
variance); the affine part is composed from element-wise ops.
"""
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import xp_of

__all__ = ["batch_norm", "layer_norm", "group_norm"]


class Standardize(Function):
    """``(x - mean) / sqrt(var + eps)`` over ``axes`` (biased variance).

    As torch, the node keeps the input and the per-row statistics (mean, 1 / std), not the
    full-size normalised output, and is named after the norm it serves (batch, layer, group).
    """

    node_name = "NativeBatchNormBackward0"

    @staticmethod
    def forward(ctx, input, axes, eps, name="NativeBatchNormBackward0"):
        x = input._array
        xp = xp_of(input)
        mean = x.mean(axis=axes, keepdims=True)
        xc = x - mean
        var = (xc * xc).mean(axis=axes, keepdims=True)
        invstd = 1 / xp.sqrt(var + x.dtype.type(eps))
        xc *= invstd
        ctx.axes, ctx.eps = axes, eps
        if name != "NativeBatchNormBackward0":
            ctx.set_node_name(name)
        ctx.save_for_backward(input, Tensor._wrap(mean), Tensor._wrap(invstd))
        return Tensor._wrap(xc)

    @staticmethod
    def array_backward(ctx, grad_output):
        input, mean, invstd = ctx.saved_tensors
        axes = ctx.axes
        g = grad_output._array
        invstd = invstd._array
        xhat = input._array - mean._array
        xhat *= invstd
        gx = g - g.mean(axis=axes, keepdims=True)
        gx -= xhat * (g * xhat).mean(axis=axes, keepdims=True)
        gx *= invstd
        return Tensor._wrap(gx.astype(xhat.dtype, copy=False)), None, None, None

    @staticmethod
    def backward(ctx, grad_output):
        input, _, _ = ctx.saved_tensors
        axes = ctx.axes
        # NOTE: the statistics are recomputed as Tensor ops so that they depend on the input
        # (the saved ones are constants): double backward differentiates through them.
        xc = input - input.mean(axes, keepdim=True)
        invstd = ((xc * xc).mean(axes, keepdim=True) + ctx.eps).rsqrt()
        xhat, g = xc * invstd, grad_output
        return invstd * (g - g.mean(axes, keepdim=True)
                         - xhat * (g * xhat).mean(axes, keepdim=True)), None, None, None


def _affine(out, weight, bias, shape):
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-05):
    """Batch normalization over all dims but the channel dim 1.

    In training it normalises with the batch statistics and updates ``running_mean`` and
    ``running_var`` (the unbiased variance) in place; otherwise it uses the running ones.
    Matches ``torch.nn.functional.batch_norm``.
    """
    x = input._array
    c = x.shape[1] if x.ndim > 1 else x.shape[0]
    shape = (1, c) + (1,) * (x.ndim - 2)
    if training:
        n = x.size // max(c, 1)
        if n <= 1:
            raise ValueError("Expected more than 1 value per channel when training, got input "
                             "size %s" % (input.shape,))
        if eps <= 0.0:
            raise ValueError("batch_norm eps must be positive during training, but got %s" % eps)
        axes = (0,) + tuple(range(2, x.ndim))
        fn = Standardize.apply(input, axes, eps)
        if running_mean is not None or running_var is not None:
            mean = x.mean(axis=axes)
            var = x.var(axis=axes) * (n / (n - 1))
            m = momentum
            if running_mean is not None:
                rm = running_mean._array
                rm[...] = (1 - m) * rm + m * mean.astype(rm.dtype)
                running_mean._bump()
            if running_var is not None:
                rv = running_var._array
                rv[...] = (1 - m) * rv + m * var.astype(rv.dtype)
                running_var._bump()
        out = fn
    else:
        if eps < 0.0:
            raise ValueError("batch_norm eps must be non-negative, but got %s" % eps)
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
        from .unary import rsqrt
        out = (input - running_mean.reshape(shape)) * rsqrt(running_var.reshape(shape) + eps)
    return _affine(out, weight, bias, shape)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """Normalise over the last ``len(normalized_shape)`` dims. Matches torch's layer_norm."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    k = len(normalized_shape)
    if tuple(input.shape[input.dim() - k:]) != normalized_shape or input.dim() < k:
        raise RuntimeError("Given normalized_shape=%s, expected input with shape [*, %s], but "
                           "got input of size%s" % (list(normalized_shape),
                                                    ", ".join(map(str, normalized_shape)),
                                                    list(input.shape)))
    axes = tuple(range(input.dim() - k, input.dim()))
    out = Standardize.apply(input, axes, eps, "NativeLayerNormBackward0")
    return _affine(out, weight, bias, normalized_shape)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    """Normalise over groups of channels (and all spatial dims). Matches torch's group_norm."""
    if input.dim() < 2:
        raise RuntimeError("Expected at least 2 dimensions for input tensor but received %d"
                           % input.dim())
    n, c = input.shape[:2]
    if c % num_groups:
        raise RuntimeError("Expected number of channels in input to be divisible by "
                           "num_groups, but got input of shape %s and num_groups=%d"
                           % (list(input.shape), num_groups))
    x = input.reshape(n, num_groups, -1)
    out = Standardize.apply(x, (2,), eps, "NativeGroupNormBackward0")
    out = out.reshape(tuple(input.shape))
    return _affine(out, weight, bias, (1, c) + (1,) * (input.dim() - 2))
