"""Padding: ``Pad``, behind ``nn.functional.pad`` (constant, reflect, replicate, circular).

Forward pads the input's array (negative pads crop); backward pads an array of input positions
the same way and sums the gradient back onto the positions it names.
"""
import math

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import backend_of, not_implemented_for, xp_of
from .shape import CloneInOrder
from .vision import _channels_last_order, _in_layout

__all__ = []    # (``pad_nd`` is nn.functional.pad)

_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}   # -> xp.pad's
_NODE_NAMES = {"reflect": "ReflectionPad%dDBackward0", "replicate": "ReplicationPad%dDBackward0"}


def _pad(xp, arr, pads, mode, value):
    """``arr`` padded by ``pads`` ((before, after) per dim; negative: cropped)."""
    if all(p == (0, 0) for p in pads):
        return arr.copy()
    if mode in ("reflect", "replicate"):
        # torch's index map: output j reads input j - before, reflected (or clamped) once
        # into range, so a negative pad on one side still reflects the uncropped input
        for a, (lo, hi) in enumerate(pads):
            if lo or hi:
                n = arr.shape[a]
                src = xp.arange(n + lo + hi) - lo
                if mode == "reflect":
                    src = xp.abs(src)
                    src = xp.where(src >= n, 2 * (n - 1) - src, src)
                arr = xp.take(arr, xp.clip(src, 0, n - 1), axis=a)
        return arr
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
        # (torch's output takes the input's suggest_memory_format; its reflect/replicate input
        # gradient too, a constant pad's the incoming gradient's: its backward is a pad)
        ctx.order = _channels_last_order(input._array)
        return Tensor._wrap(_in_layout(_pad(xp_of(input), input._array, pads, mode, value),
                                       ctx.order))

    @staticmethod
    def backward(ctx, grad_output):
        pads, mode, shape = ctx.conf
        order = _channels_last_order(grad_output._array) if mode == "constant" else ctx.order
        if all(p == (0, 0) for p in pads):    # nothing was padded
            gx = grad_output * 1
        else:
            # a differentiable scatter of the kept gradient onto the input positions
            xp = xp_of(grad_output)
            rows, inner, keep, cols = _sources(xp, pads, mode, shape)
            gk = grad_output.reshape(rows, -1).index_select(1, Tensor._wrap(keep))
            zero = Tensor._wrap(xp.zeros((rows, inner), dtype=grad_output._array.dtype))
            gx = zero.index_add(1, Tensor._wrap(cols), gk).reshape(shape)
        if order is not None:
            gx = CloneInOrder.apply(gx, order)
        return gx, None, None, None, None

    @staticmethod
    def array_backward(ctx, grad_output):
        pads, mode, shape = ctx.conf
        g = grad_output._array
        order = _channels_last_order(g) if mode == "constant" else ctx.order
        if all(p == (0, 0) for p in pads):
            return Tensor._wrap(_in_layout(g, order) if order else g.copy()), None, None, None, \
                None
        xp = xp_of(grad_output)
        rows, inner, keep, cols = _sources(xp, pads, mode, shape)
        grad = xp.zeros((rows, inner), dtype=g.dtype)
        gk = g.reshape(rows, -1)[:, keep]
        if len(xp.unique(cols)) == len(cols):
            grad[:, cols] = gk
        else:
            backend_of(grad).scatter_add(grad, (slice(None), cols), gk)
        return Tensor._wrap(_in_layout(grad.reshape(shape), order)), None, None, None, None


class CopyRegion(Function):
    """``base`` with ``region`` (a tuple of slices) overwritten by ``src``: torch's node for a
    ``copy_`` into a slice of a tensor."""

    node_name = "CopySlices"

    @staticmethod
    def forward(ctx, base, src, region):
        out = base._array.copy()
        out[region] = src._array
        ctx.region = region
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        region = ctx.region
        g_base = g_src = None
        if ctx.needs_input_grad[0]:
            g = grad_output._array
            zero = Tensor._wrap(xp_of(grad_output).zeros(g[region].shape, dtype=g.dtype))
            g_base = CopyRegion.apply(grad_output, zero, region)
        if ctx.needs_input_grad[1]:
            g_src = grad_output[region].contiguous()    # (torch's CopySlices clones it)
        return g_base, g_src, None


_NON_CONSTANT = ("Padding size %d is not supported for %dD input tensor.\n"
                 "Supported combinations for non-constant padding:\n"
                 "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                 "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                 "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _slice(t, dim, start, end):
    """``t[start:end]`` along ``dim`` (Python's clamping) as torch's slice node, even in full."""
    start, end, _ = slice(start, end).indices(t.shape[dim])
    return t.narrow(dim, start, max(end - start, 0))


def _circular(input, pads, k):
    """torch's ``_pad_circular``: the input copied into the middle of a new tensor, then each
    padded side copied from the opposite edge (a chain of slice copies, last dim first)."""
    n = input.dim()
    shape = list(input.shape)
    out_shape = list(shape)
    for a in range(n - k, n):
        lo, hi = pads[a]
        out_shape[a] = shape[a] + lo + hi
        if lo > shape[a] or hi > shape[a]:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if out_shape[a] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    out = Tensor._wrap(xp_of(input).zeros(tuple(out_shape), dtype=input._array.dtype))
    dims = list(reversed(range(n - k, n)))
    region, src = [slice(None)] * n, input
    for a in dims:
        lo, hi = pads[a]
        region[a] = slice(max(lo, 0), out_shape[a] - max(hi, 0))
        src = _slice(src, a, max(-lo, 0), shape[a] - max(-hi, 0))
    out = CopyRegion.apply(out, src, tuple(region))
    for a in dims:
        lo, hi = pads[a]
        size, keep_hi = out_shape[a], max(hi, 0)
        edge = [slice(None)] * n
        if lo > 0:
            edge[a] = slice(0, lo)
            out = CopyRegion.apply(out, _slice(out, a, size - lo - keep_hi, size - keep_hi),
                                   tuple(edge))
        if hi > 0:
            edge[a] = slice(size - hi, size)
            out = CopyRegion.apply(out, _slice(out, a, max(lo, 0), max(lo, 0) + hi), tuple(edge))
    return out


def _check_batch_mode(input, k):
    """torch's padding kernels: (k + 1)-D, or (k + 2)-D with only the batch possibly empty."""
    first = 1 if input.dim() == k + 2 else 0
    if any(d == 0 for d in input.shape[first:]):
        raise RuntimeError("Expected %dD or %dD (batch mode) tensor with possibly 0 batch size "
                           "and other non-zero dimensions for input, but got: %s"
                           % (k + 1, k + 2, list(input.shape)))


def _check_reflect_replicate(input, pads, mode, k):
    _check_batch_mode(input, k)
    n = input.dim()
    sizes = [input.shape[a] for a in range(n - k, n)]
    if mode == "reflect":
        for j, a in enumerate(reversed(range(n - k, n))):
            lo, hi = pads[a]
            if lo >= input.shape[a] or hi >= input.shape[a]:
                raise RuntimeError("Argument #%d: Padding size should be less than the "
                                   "corresponding input dimension, but got: padding (%d, %d) at "
                                   "dimension %d of input %s"
                                   % (4 + 2 * j, lo, hi, a, list(input.shape)))
    outs = [sizes[j] + sum(pads[n - k + j]) for j in range(k)]
    if all(o < 1 for o in outs):
        if k == 1:
            msg = "input (W: %d) is too small. Calculated output W: %d" % (sizes[0], outs[0])
        elif k == 2:
            msg = ("input (H: %d, W: %d%s) is too small. Calculated output H: %d W: %d"
                   % (sizes[0], sizes[1], " " if mode == "replicate" else "", outs[0], outs[1]))
        else:
            msg = ("input (D: %d H: %d, W: %d) is too small. Calculated output D: %d H: %d W: %d"
                   % tuple(sizes + outs))
        raise RuntimeError(msg)
    for o in outs:
        if o < 0:
            if mode == "reflect":
                raise RuntimeError("numel: integer multiplication overflow")
            raise RuntimeError("Trying to create tensor with negative dimension %d: %s"
                               % (o, list(input.shape[:n - k]) + outs))


def pad_nd(input, pad, mode="constant", value=None):
    """``nn.functional.pad``: the last ``len(pad) // 2`` dims padded, torch's checks in order."""
    pad = tuple(pad)
    for i, p in enumerate(pad):
        if not isinstance(p, int) and not (hasattr(p, "__index__") and not hasattr(p, "shape")):
            raise TypeError("pad(): argument 'pad' (position 2) must be tuple of ints, but found "
                            "element of type %s at pos %d" % (type(p).__name__, i))
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError("Unrecognised padding mode %s" % mode)
    n = input.dim()
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * n:
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           "dimension but got padding length %d and input of dimension %d"
                           % (len(pad), n))
    k = len(pad) // 2
    pads = [(0, 0)] * (n - k) + [(int(pad[2 * i]), int(pad[2 * i + 1]))
                                 for i in reversed(range(k))]
    if mode == "constant":
        for a in range(n - k, n):       # (torch crops with narrow() first)
            size = input.shape[a]
            for p in pads[a]:
                if p < 0:
                    if size + p < 0:
                        raise RuntimeError("narrow(): length must be non-negative.")
                    size += p
        return Pad.apply(input, pads, mode, 0 if value is None else value, k)
    if value is not None and value != 0:
        raise RuntimeError("Padding mode \"%s\" doesn't take in value argument" % mode)
    if k not in (1, 2, 3) or n not in (k + 1, k + 2):
        raise NotImplementedError(_NON_CONSTANT % (len(pad), n))
    if mode == "circular":
        return _circular(input, pads, k)
    _check_reflect_replicate(input, pads, mode, k)
    return Pad.apply(input, pads, mode, 0, k)
