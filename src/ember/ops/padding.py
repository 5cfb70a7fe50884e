"""Padding: ``Pad``, behind ``nn.functional.pad`` (constant, reflect, replicate, circular).

Forward pads the input's array (negative pads crop); backward pads an array of input positions
the same way and sums the gradient back onto the positions it names.
"""
import math

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import backend_of, not_implemented_for, xp_of

__all__ = []

_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}   # -> xp.pad's
_NODE_NAMES = {"reflect": "ReflectionPad%dDBackward0", "replicate": "ReplicationPad%dDBackward0"}


def _pad(xp, arr, pads, mode, value):
    """``arr`` padded by ``pads`` ((before, after) per dim; negative: cropped)."""
    crop = tuple(slice(-lo if lo < 0 else None, hi if hi < 0 else None) for lo, hi in pads)
    pos = [(max(lo, 0), max(hi, 0)) for lo, hi in pads]
    if mode == "constant":
        return xp.pad(arr[crop], pos, mode="constant", constant_values=value)
    return xp.pad(arr[crop], pos, mode=_MODES[mode])


def _sources(xp, pads, mode, shape):
    """Where each output element comes from: (rows, inner size, kept output columns, their
    input columns), the dims before the first padded one flattened into rows."""
    lead = min(i for i, p in enumerate(pads) if p != (0, 0))
    inner = math.prod(shape[lead:])
    pos = xp.arange(inner, dtype=xp.int64).reshape(shape[lead:])
    flat = _pad(xp, pos, pads[lead:], mode, -1).reshape(-1)
    keep = xp.flatnonzero(flat >= 0)
    return math.prod(shape[:lead]), inner, keep, flat[keep]


class Pad(Function):
    """``input`` padded by ``pads`` (a (before, after) pair per dim) in ``mode``."""

    node_name = "ConstantPadNdBackward0"

    @staticmethod
    def forward(ctx, input, pads, mode, value, padded_dims=1):
        if mode in _NODE_NAMES:
            # (torch's reflection/replication kernels have no bool version)
            not_implemented_for(input._array, "%s_pad%dd" % (
                "reflection" if mode == "reflect" else "replication", padded_dims), "b")
            ctx.set_node_name(_NODE_NAMES[mode] % padded_dims)
        ctx.conf = (pads, mode, input.shape)
        return Tensor._wrap(_pad(xp_of(input), input._array, pads, mode, value))

    @staticmethod
    def backward(ctx, grad_output):
        pads, mode, shape = ctx.conf
        if all(p == (0, 0) for p in pads):    # nothing was padded
            return grad_output * 1, None, None, None, None
        # a differentiable scatter of the kept gradient onto the input positions
        xp = xp_of(grad_output)
        rows, inner, keep, cols = _sources(xp, pads, mode, shape)
        gk = grad_output.reshape(rows, -1).index_select(1, Tensor._wrap(keep))
        zero = Tensor._wrap(xp.zeros((rows, inner), dtype=grad_output._array.dtype))
        return zero.index_add(1, Tensor._wrap(cols), gk).reshape(shape), None, None, None, None

    @staticmethod
    def array_backward(ctx, grad_output):
        pads, mode, shape = ctx.conf
        g = grad_output._array
        if all(p == (0, 0) for p in pads):
            return Tensor._wrap(g.copy()), None, None, None, None
        xp = xp_of(grad_output)
        rows, inner, keep, cols = _sources(xp, pads, mode, shape)
        grad = xp.zeros((rows, inner), dtype=g.dtype)
        gk = g.reshape(rows, -1)[:, keep]
        if len(xp.unique(cols)) == len(cols):
            grad[:, cols] = gk
        else:
            backend_of(grad).scatter_add(grad, (slice(None), cols), gk)
        return Tensor._wrap(grad.reshape(shape)), None, None, None, None
