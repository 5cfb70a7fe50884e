"""``CrossMapLRN2d``'s legacy kernels, as torch keeps them: the forward's channel window is
built by a running sum that adds channel ``c + pre_pad - 1`` and drops ``c - pre_pad`` only
for ``c > pre_pad`` (so its first windows are wider than ``size``), and the backward uses the
plain symmetric window of ``size`` channels. Both are torch's, kept so that values and
gradients match it."""
from ..autograd.function import Function, once_differentiable
from ..ops import einsum, tensor, zeros
from ..tensor import Tensor


def _windows(channels, size):
    """0/1 matrix ``W[c, j]``: channel ``j`` is in the forward window of channel ``c``."""
    pre_pad = int((size - 1) / 2 + 1)
    rows, cur = [], set(range(min(pre_pad, channels)))
    rows.append(set(cur))
    for c in range(1, channels):
        if c < channels - pre_pad + 1:
            cur.add(c + pre_pad - 1)
        if c > pre_pad:
            cur.discard(c - pre_pad)
        rows.append(set(cur))
    return [[1.0 if j in r else 0.0 for j in range(channels)] for r in rows]


class CrossMapLRN2dFunction(Function):
    node_name = "CrossMapLRN2dBackward"

    @staticmethod
    def forward(ctx, input, size, alpha, beta, k):
        if input.dim() != 4:
            raise ValueError("CrossMapLRN2d: Expected input to be 4D, got %dD instead."
                             % input.dim())
        ctx.args = (size, alpha, beta, k)
        channels = input.shape[1]
        w = tensor(_windows(channels, size), dtype=input.dtype, device=input.device)
        scale = einsum("nchw,dc->ndhw", input * input, w) * (alpha / size) + k
        out = input * scale ** (-beta)
        ctx.save_for_backward(input, out, scale)
        return Tensor._wrap(out._array)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        input, out, scale = ctx.saved_tensors
        size, alpha, beta, k = ctx.args
        channels = input.shape[1]
        ratio = grad_output * out / scale
        inverse_pre_pad = int(size - (size - 1) / 2)
        shape = (input.shape[0], channels + size - 1) + tuple(input.shape[2:])
        padded = zeros(shape, dtype=input.dtype, device=input.device)
        padded[:, inverse_pre_pad:inverse_pre_pad + channels] = ratio
        cum = padded.cumsum(1)
        # (channel c sums padded channels c .. c + size - 1)
        accum = cum[:, size - 1:size - 1 + channels] - (cum[:, :channels]
                                                        - padded[:, :channels])
        grad = scale ** (-beta) * grad_output - (2 * alpha * beta / size) * input * accum
        return grad, None, None, None, None


def cross_map_lrn2d(input, size, alpha, beta, k):
    return CrossMapLRN2dFunction.apply(input, size, alpha, beta, k)
