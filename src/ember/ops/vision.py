"""Vision ops, each one node as torch's: pixel_shuffle/pixel_unshuffle, channel_shuffle,
unfold (im2col)/fold (col2im), the separable resampling behind ``interpolate`` and
grid_sample.

Each op is linear in its input, so its backward is its adjoint, written as the adjoint op
(whose own backward is the op again): double backward comes free.
"""
import itertools
import math
import warnings

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..backend import backend_of
from ..tensor import Tensor
from ._util import not_implemented_for, xp_of
from .creation import _fma, _linspace
from .comparison import where
from ._index import copy_in_order
from .shape import stack

__all__ = ["pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle"]


def _shuffle(arr, r, inverse):
    """(*, C r^2, H, W) -> (*, C, H r, W r), or back when ``inverse``."""
    lead = arr.shape[:-3]
    n = len(lead)
    c, h, w = arr.shape[-3:]
    if inverse:
        x = arr.reshape(lead + (c, h // r, r, w // r, r))
        x = x.transpose(tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3))
        return x.reshape(lead + (c * r * r, h // r, w // r))
    x = arr.reshape(lead + (c // (r * r), r, r, h, w))
    x = x.transpose(tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2))
    return x.reshape(lead + (c // (r * r), h * r, w * r))


class PixelShuffle(Function):
    node_name = "PixelShuffleBackward0"
    edge_args = (0,)

    @staticmethod
    def forward(ctx, input, r):
        ctx.r = r
        out = xp_of(input).ascontiguousarray(_shuffle(input._array, r, False))
        return Tensor._wrap(_in_layout(out, _channels_last_order(input._array)))

    @staticmethod
    def backward(ctx, grad_output):
        return PixelUnshuffle.apply(grad_output, ctx.r), None


class PixelUnshuffle(Function):
    node_name = "PixelUnshuffleBackward0"
    edge_args = (0,)

    @staticmethod
    def forward(ctx, input, r):
        ctx.r = r
        out = xp_of(input).ascontiguousarray(_shuffle(input._array, r, True))
        return Tensor._wrap(_in_layout(out, _channels_last_order(input._array)))

    @staticmethod
    def backward(ctx, grad_output):
        return PixelShuffle.apply(grad_output, ctx.r), None


def pixel_shuffle(input, upscale_factor):
    """``(*, C r^2, H, W) -> (*, C, H r, W r)``. Matches ``torch.nn.functional.pixel_shuffle``.
    """
    r = int(upscale_factor)
    if input.dim() < 3:
        raise RuntimeError("pixel_shuffle expects input to have at least 3 dimensions, but got "
                           "input with %d dimension(s)" % input.dim())
    if r <= 0:
        raise RuntimeError("pixel_shuffle expects a positive upscale_factor, but got %d" % r)
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be "
                           "divisible by the square of upscale_factor, but input.size(-3)=%d is "
                           "not divisible by %d" % (c, r * r))
    return PixelShuffle.apply(input, r)


def pixel_unshuffle(input, downscale_factor):
    """``(*, C, H r, W r) -> (*, C r^2, H, W)``. Matches torch's."""
    r = int(downscale_factor)
    if input.dim() < 3:
        raise RuntimeError("pixel_unshuffle expects input to have at least 3 dimensions, but "
                           "got input with %d dimension(s)" % input.dim())
    if r <= 0:
        raise RuntimeError("pixel_unshuffle expects a positive downscale_factor, but got %d"
                           % r)
    h, w = input.shape[-2:]
    if h % r:
        raise RuntimeError("pixel_unshuffle expects height to be divisible by downscale_factor, "
                           "but input.size(-2)=%d is not divisible by %d" % (h, r))
    if w % r:
        raise RuntimeError("pixel_unshuffle expects width to be divisible by downscale_factor, "
                           "but input.size(-1)=%d is not divisible by %d" % (w, r))
    return PixelUnshuffle.apply(input, r)


class ChannelShuffle(Function):
    node_name = "ChannelShuffleBackward0"
    edge_args = (0,)

    @staticmethod
    def forward(ctx, input, groups):
        x = input._array
        n, c = x.shape[:2]
        ctx.groups, ctx.c = groups, c
        y = x.reshape((n, groups, c // groups) + x.shape[2:]).swapaxes(1, 2)
        out = xp_of(input).ascontiguousarray(y).reshape(x.shape)
        return Tensor._wrap(_in_layout(out, _channels_last_order(x)))

    @staticmethod
    def backward(ctx, grad_output):
        return ChannelShuffle.apply(grad_output, ctx.c // ctx.groups), None


class NativeChannelShuffle(Function):
    """``native_channel_shuffle``: channel_shuffle's values; torch has no derivative for it."""

    node_name = "NotImplemented"
    edge_args = (0,)

    @staticmethod
    def forward(ctx, input, groups):
        return ChannelShuffle.forward(ctx, input, groups)

    @staticmethod
    def backward(ctx, grad_output):
        raise RuntimeError("derivative for aten::native_channel_shuffle is not implemented")


def _channel_shuffle(input, groups, fn):
    if input.dim() <= 2:
        raise RuntimeError("channel_shuffle expects input with > 2 dims, but got input with "
                           "sizes %s" % list(input.shape))
    groups = int(groups)
    if groups <= 0:
        raise RuntimeError("Number of groups to divide channels in must be positive. Value of "
                           "groups:%d" % groups)
    c = input.shape[1]
    if c % groups:
        raise RuntimeError("Number of channels must be divisible by groups. Got %d channels and "
                           "%d groups." % (c, groups))
    return fn.apply(input, groups)


def channel_shuffle(input, groups):
    """Interleave the ``groups`` channel groups of dim 1. Matches torch's."""
    return _channel_shuffle(input, groups, ChannelShuffle)


def native_channel_shuffle(input, groups):
    """``channel_shuffle`` without a derivative (its backward raises, as torch's)."""
    return _channel_shuffle(input, groups, NativeChannelShuffle)


def _pair(v):
    if isinstance(v, (list, tuple)):
        return tuple(int(x) for x in v) * (2 if len(v) == 1 else 1)
    return (int(v),) * 2


def _blocks(size, k, d, p, s):
    return tuple((size[a] + 2 * p[a] - d[a] * (k[a] - 1) - 1) // s[a] + 1 for a in range(2))


def _im2col(x, k, d, p, s):
    """(..., C, H, W) -> (..., C kh kw, L): the sliding blocks as columns."""
    xp = xp_of(Tensor._wrap(x))
    lead = x.shape[:-3]
    c, h, w = x.shape[-3:]
    oh, ow = _blocks((h, w), k, d, p, s)
    if any(p):
        x = xp.pad(x, ((0, 0),) * (x.ndim - 2) + ((p[0], p[0]), (p[1], p[1])))
    st = x.strides
    v = backend_of(x).as_strided(x, lead + (c, k[0], k[1], oh, ow),
                                 st[:-2] + (st[-2] * d[0], st[-1] * d[1], st[-2] * s[0],
                                            st[-1] * s[1]))
    return xp.ascontiguousarray(v).reshape(lead + (c * k[0] * k[1], oh * ow))


def _col2im(cols, size, k, d, p, s):
    """The adjoint of ``_im2col``: the columns summed back into (..., C, H, W)."""
    xp = xp_of(Tensor._wrap(cols))
    lead = cols.shape[:-2]
    c = cols.shape[-2] // (k[0] * k[1])
    oh, ow = _blocks(size, k, d, p, s)
    v = cols.reshape(lead + (c, k[0], k[1], oh, ow))
    out = xp.zeros(lead + (c, size[0] + 2 * p[0], size[1] + 2 * p[1]), dtype=cols.dtype)
    for i, j in itertools.product(range(k[0]), range(k[1])):
        h0, w0 = i * d[0], j * d[1]
        out[..., h0:h0 + s[0] * (oh - 1) + 1:s[0], w0:w0 + s[1] * (ow - 1) + 1:s[1]] += \
            v[..., i, j, :, :]
    return xp.ascontiguousarray(out[..., p[0]:p[0] + size[0], p[1]:p[1] + size[1]])


class Im2Col(Function):
    node_name = "Im2ColBackward0"
    edge_args = (0,)

    @staticmethod
    def forward(ctx, input, k, d, p, s):
        ctx.conf = (tuple(input.shape[-2:]), k, d, p, s)
        return Tensor._wrap(_im2col(input._array, k, d, p, s))

    @staticmethod
    def backward(ctx, grad_output):
        return (Col2Im.apply(grad_output, *ctx.conf),) + (None,) * 4


class Col2Im(Function):
    node_name = "Col2ImBackward0"
    edge_args = (0,)

    @staticmethod
    def forward(ctx, input, size, k, d, p, s):
        ctx.conf = (k, d, p, s)
        return Tensor._wrap(_col2im(input._array, size, k, d, p, s))

    @staticmethod
    def backward(ctx, grad_output):
        return (Im2Col.apply(grad_output, *ctx.conf),) + (None,) * 5


def _check_window(k, d, p, s):
    for what, v, lo, pre in (("kernel size", k, 1, "kernel"), ("dilation", d, 1, "dilation"),
                             ("padding", p, 0, "pad"), ("stride", s, 1, "stride")):
        if min(v) < lo:
            raise RuntimeError("%s should be %s, but got %s_height: %d %s_width: %d"
                               % (what, "non-negative" if lo == 0 else "greater than zero",
                                  pre, v[0], pre, v[1]))


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: ``(N, C, H, W) -> (N, C kh kw, L)``. Matches ``torch.nn.functional.unfold``."""
    k, d, p, s = _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    if input.dim() < 3:
        raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got "
                         "2)" % (-max(input.dim(), 1), max(input.dim(), 1) - 1))
    _check_window(k, d, p, s)
    if input.dim() not in (3, 4) or 0 in tuple(input.shape)[-3:]:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
                           "other non-zero dimensions for input, but got: %s"
                           % list(input.shape))
    size = tuple(input.shape[-2:])
    blocks = _blocks(size, k, d, p, s)
    if min(blocks) < 1:
        raise RuntimeError("Given input with spatial size (%d, %d), kernel_size=(%d, %d), "
                           "dilation=(%d, %d), padding=(%d, %d), calculated shape of the array of "
                           "sliding blocks as (%d, %d), but its components must be at least one."
                           % (size + k + d + p + blocks))
    not_implemented_for(input._array, "im2col_out_cpu", "iu")
    return Im2Col.apply(input, k, d, p, s)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """col2im: sum the columns of ``unfold`` back into ``(N, C, H, W)``. Matches torch's."""
    size, k = _pair(output_size), _pair(kernel_size)
    d, p, s = _pair(dilation), _pair(padding), _pair(stride)
    _check_window(k, d, p, s)
    if input.dim() not in (2, 3) or 0 in tuple(input.shape)[-2:]:
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch "
                           "size and non-zero dimensions for input, but got: %s"
                           % list(input.shape))
    ck, length = input.shape[-2:]
    if ck % (k[0] * k[1]):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product "
                           "of kernel_size, but got input.size(1)=%d and kernel_size=(%d, %d)."
                           % ((ck,) + k))
    blocks = _blocks(size, k, d, p, s)
    if min(blocks) < 1 or blocks[0] * blocks[1] != length:
        raise RuntimeError("Given output_size=(%d, %d), kernel_size=(%d, %d), dilation=(%d, %d), "
                           "padding=(%d, %d), stride=(%d, %d), expected size of input's "
                           "dimension 2 to match the calculated number of sliding blocks %d * %d "
                           "= %d, but got input.size(2)=%d."
                           % (size + k + d + p + s + blocks + (blocks[0] * blocks[1], length)))
    not_implemented_for(input._array, "col2im_out_cpu", "iu")
    return Col2Im.apply(input, size, k, d, p, s)


def _cubic_weights(t):
    """torch's cubic-convolution weights (A = -0.75) of the 4 taps around offset ``t``."""
    a = -0.75

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)


def _source_index(xp, dst, scale, op):
    """``scale * (dst + 0.5) - 0.5`` as torch's kernels: one fused multiply-add in the opmath
    type ``op`` (float32 exactly through float64; float64 through Dekker's exact product)."""
    b = dst + 0.5
    if op == np.float32:
        return (np.float64(np.float32(scale)) * b - 0.5).astype(np.float32)
    p = scale * b
    split = 134217729.0     # (2 ** 27 + 1)
    ta, tb = scale * split, b * split
    ahi, bhi = ta - (ta - scale), tb - (tb - b)
    alo, blo = scale - ahi, b - bhi
    err = ((ahi * bhi - p) + ahi * blo + alo * bhi) + alo * blo
    s = p - 0.5
    bb = s - p
    err2 = (p - (s - bb)) + (-0.5 - bb)
    return s + (err + err2)


def _taps(xp, n_in, n_out, kind, align_corners, scale, op=np.float64):
    """One dim's resampling as taps: (n_out, t) input indices and weights (float64; computed
    in torch's opmath type ``op``)."""
    dst = xp.arange(n_out, dtype=np.float64)
    if kind in ("nearest", "nearest-exact"):
        shift = 0.5 if kind == "nearest-exact" else 0.0
        src = xp.minimum(xp.floor((dst + shift) * scale).astype(np.int64), n_in - 1)
        return src[:, None], xp.ones((n_out, 1))
    if align_corners:
        src = dst.astype(op) * op((n_in - 1) / (n_out - 1)) if n_out > 1 else \
            dst.astype(op) * 0
    elif kind == "cubic":
        src = _source_index(xp, dst, scale, op)
    else:
        src = xp.maximum(_source_index(xp, dst, scale, op), 0)
    if kind == "cubic":
        i0 = xp.floor(src)
        w = xp.stack(_cubic_weights((src - i0).astype(np.float64)), axis=1)
        idx = xp.clip(i0.astype(np.int64)[:, None] - 1 + xp.arange(4), 0, n_in - 1)
        return idx, w
    if n_out == n_in:
        # (torch copies: both taps on the same element, weights 1 and 0; 0 * inf is NaN)
        i0 = xp.arange(n_in)
        return xp.stack([i0, i0], axis=1), xp.stack([xp.ones(n_in), xp.zeros(n_in)], axis=1)
    # (torch's guard_index_and_lambda: floorf, so the floor of src rounded to float32, and
    # the fraction clamped to [0, 1])
    i0 = xp.minimum(xp.floor(src.astype(np.float32)).astype(np.int64), n_in - 1)
    lam = xp.clip(src - i0.astype(op), op(0), op(1))
    w = xp.stack([op(1) - lam, lam], axis=1).astype(np.float64)
    return xp.stack([i0, xp.minimum(i0 + 1, n_in - 1)], axis=1), w


def _aa_filter(kind, x):
    """torch's antialias filters: the triangle, or cubic convolution with A = -0.5 (PIL's)."""
    x = abs(x)
    one = x.dtype.type(1)
    if kind == "linear":
        return (x < 1) * (one - x)
    a = x.dtype.type(-0.5)
    near = ((a + 2) * x - (a + 3)) * x * x + one
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return (x < 1) * near + ((x >= 1) & (x < 2)) * far


def _taps_aa(xp, n_in, n_out, kind, align_corners, scale, op):
    """One dim's antialiased resampling (torch's ``_compute_weights_aa``) as taps: a window of
    the filter stretched by the downscale, weights normalised, computed in the dtype ``op``."""
    if align_corners:
        scale = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    scale = op(scale)
    half = 1.0 if kind == "linear" else 2.0
    support = op(half * scale) if scale >= 1.0 else op(half)
    invscale = op(1.0 / scale) if scale >= 1.0 else op(1.0)
    width = int(math.ceil(support)) * 2 + 1
    dst = xp.arange(n_out, dtype=np.float64)
    center = (np.float64(scale) * (dst + 0.5)).astype(op)
    xmin = xp.maximum(xp.trunc((center - support).astype(np.float64) + 0.5), 0).astype(np.int64)
    xmax = xp.minimum(xp.trunc((center + support).astype(np.float64) + 0.5), n_in)
    xsize = xp.clip(xmax.astype(np.int64) - xmin, 0, width)
    j = xp.arange(width)
    pos = (xmin[:, None] + j).astype(op) - center[:, None]
    w = _aa_filter(kind, ((pos.astype(np.float64) + 0.5) * np.float64(invscale)).astype(op))
    w = xp.where(j < xsize[:, None], w, op(0)).astype(op)
    total = w[:, 0]
    for t in range(1, width):
        total = total + w[:, t]
    w = xp.where(total[:, None] != 0, w / xp.where(total == 0, op(1), total)[:, None], w)
    # (taps past a window's size are -1: torch sums only the window, so 0 * inf never lands)
    return xp.where(j < xsize[:, None], xp.minimum(xmin[:, None] + j, n_in - 1), -1), w.astype(op)


def _resample(arr, taps, adjoint=False, in_sizes=None, masked=False):
    """Apply each dim's taps along the trailing dims (or their adjoint, back to ``in_sizes``);
    ``masked``: taps of index -1 are left out (antialiased windows)."""
    xp = xp_of(Tensor._wrap(arr))
    nd = len(taps)
    lead = arr.ndim - nd
    out = arr
    small = arr.dtype.kind == "u"    # (uint8: computed in float32, rounded as torch)
    out = out.astype(np.float32) if small and taps[0][1].shape[1] > 1 else out
    # (forward: the last dim first, as torch's kernels nest their sums: 0 * inf and inf - inf
    # land where torch's do)
    order = range(nd) if adjoint else reversed(range(nd))
    for a in order:
        idx, w = taps[a]
        axis = lead + a
        w = w.astype(out.dtype)
        if adjoint:
            moved = xp.moveaxis(out, axis, -1)
            res = xp.zeros(moved.shape[:-1] + (in_sizes[a],), dtype=out.dtype)
            for t in range(idx.shape[1]):
                term = moved * w[:, t]
                if masked:
                    term = xp.where(idx[:, t] >= 0, term, xp.zeros((), term.dtype))
                backend_of(res).scatter_add(res, (Ellipsis, xp.maximum(idx[:, t], 0)), term)
            out = xp.moveaxis(res, -1, axis)
            continue
        shape = (-1,) + (1,) * (arr.ndim - axis - 1)
        acc = None
        for t in range(idx.shape[1]):
            term = xp.take(out, xp.maximum(idx[:, t], 0) if masked else idx[:, t], axis=axis)
            if idx.shape[1] > 1:
                term = term * w[:, t].reshape(shape)
            if masked:
                term = xp.where((idx[:, t] >= 0).reshape(shape), term, xp.zeros((), term.dtype))
            acc = term if acc is None else acc + term
        out = acc
    if out.dtype != arr.dtype:
        out = xp.clip(xp.floor(out + 0.5), 0, 255).astype(arr.dtype)
    return xp.ascontiguousarray(out)


def _channels_last_order(arr):
    """The dims of a 4-d (5-d) array slowest first when it is laid out channels-last (not also
    C-contiguous): torch's ``suggest_memory_format``; None otherwise."""
    order = _CL_ORDER.get(arr.ndim)
    if order is None or (arr.flags.c_contiguous and 1 not in arr.shape):
        return None
    # torch's is_channels_last_strides_2d/3d: channels, then the spatial dims fastest first,
    # then the batch, each stride at least the span of the ones before (ambiguous: C order)
    st, low = arr.strides, 0
    if st[1] == 0:
        return None
    for d in (1,) + order[:0:-1][1:] + (0,):
        if arr.shape[d] == 0 or st[d] < low or (d == 0 and low == st[1]):
            return None
        low = st[d] * (arr.shape[d] if arr.shape[d] > 1 else 1)
    return order


_CL_ORDER = {4: (0, 2, 3, 1), 5: (0, 2, 3, 4, 1)}


def _in_layout(arr, order):
    """``arr`` copied into the memory order ``order`` (None: as it is)."""
    if order is None:
        return arr
    step, target = arr.itemsize, [0] * arr.ndim
    for d in reversed(order):
        target[d] = step
        step *= arr.shape[d]
    # (a fresh buffer: torch's strides for size-1 dims too, which ascontiguousarray keeps)
    return arr if tuple(target) == arr.strides else copy_in_order(arr, order)


# the backward kernels that lay the input's gradient out as the incoming gradient (the others
# give it contiguous)
_GRAD_KEEPS_LAYOUT = {"UpsampleNearest2D", "UpsampleNearestExact2D", "UpsampleBilinear2D",
                      "UpsampleBilinear2DAa", "UpsampleTrilinear3D"}

_NODE = {("nearest", 1): "UpsampleNearest1D", ("nearest", 2): "UpsampleNearest2D",
         ("nearest", 3): "UpsampleNearest3D", ("nearest-exact", 1): "UpsampleNearestExact1D",
         ("nearest-exact", 2): "UpsampleNearestExact2D",
         ("nearest-exact", 3): "UpsampleNearestExact3D", ("linear", 1): "UpsampleLinear1D",
         ("linear", 2): "UpsampleBilinear2D", ("linear", 3): "UpsampleTrilinear3D",
         ("cubic", 2): "UpsampleBicubic2D"}


def _save_taps(ctx, taps):
    """Each dim's (indices, weights) through ``save_for_backward``, flattened."""
    ctx.save_for_backward(*[Tensor._wrap(a) for pair in taps for a in pair])


def _saved_taps(ctx):
    saved = [t._array for t in ctx.saved_tensors]
    return tuple(zip(saved[0::2], saved[1::2]))


class Upsample(Function):
    """Separable resampling of the trailing dims by per-dim taps (``interpolate``)."""

    node_name = "UpsampleNearest2DBackward0"
    edge_args = (0,)

    @staticmethod
    def forward(ctx, input, taps, name):
        ctx.set_node_name(name + "Backward0")
        _save_taps(ctx, taps)
        ctx.base = name
        ctx.in_sizes = tuple(input.shape[input.dim() - len(taps):])
        # (torch's kernels write their output in the input's memory format)
        out = _resample(input._array, taps, masked=name.endswith("Aa"))
        return Tensor._wrap(_in_layout(out, _channels_last_order(input._array)))

    @staticmethod
    def backward(ctx, grad_output):
        return (UpsampleGrad.apply(grad_output, _saved_taps(ctx), ctx.base, ctx.in_sizes),
                None, None)


class UpsampleGrad(Function):
    node_name = "UpsampleNearest2DBackwardBackward0"
    edge_args = (0,)

    @staticmethod
    def forward(ctx, grad_output, taps, name, in_sizes):
        ctx.set_node_name(name + "BackwardBackward0")
        _save_taps(ctx, taps)
        ctx.base = name
        out = _resample(grad_output._array, taps, True, in_sizes, name.endswith("Aa"))
        if name in _GRAD_KEEPS_LAYOUT:
            out = _in_layout(out, _channels_last_order(grad_output._array))
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad):
        return Upsample.apply(grad, _saved_taps(ctx), ctx.base), None, None, None


def _check_resample_dtype(input, kind, nd):
    """torch's kernels: floating types, and uint8 but for linear 1-d/3-d."""
    x = input._array
    base = "nearest" if kind.startswith("nearest") else kind
    if input.dim() == 4 and nd == 2 and base in ("nearest", "linear"):
        kernel = "upsample_%s2d_channels_last" % ("bilinear" if base == "linear" else base)
    else:
        kernel = "compute_indices_weights_%s" % base
    if x.dtype == np.uint8 and not (base == "linear" and nd != 2):
        return
    not_implemented_for(x, kernel, "biuc")


def resample(input, out_sizes, scales, kind, align_corners, mode=None, antialias=False):
    """``interpolate``'s resampling once its arguments are parsed: the trailing
    ``len(out_sizes)`` dims of ``input`` resized by ``kind`` (``nearest``, ``nearest-exact``,
    ``linear`` or ``cubic``; ``mode``: interpolate's name for it), one node named as torch's."""
    nd = len(out_sizes)
    if input.dim() not in (3, 4, 5) or (kind, nd) not in _NODE:
        raise NotImplementedError("Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                                  "%dD) for the modes: nearest | linear | bilinear | bicubic | "
                                  "trilinear | lanczos | area | nearest-exact (got %s)"
                                  % (input.dim(), mode or kind))
    in_sizes = tuple(input.shape[-nd:])
    out_sizes = tuple(int(o) for o in out_sizes)
    if min(in_sizes + out_sizes) <= 0:
        names = "DHW"[3 - nd:]

        def fmt(sizes):
            return ", ".join("%s: %d" % (c, v) for c, v in zip(names, sizes))
        raise RuntimeError("Input and output sizes should be greater than 0, but got input (%s)%s "
                           "output (%s)" % (fmt(in_sizes), " and" if nd == 1 else "",
                                            fmt(out_sizes)))
    xp = xp_of(input)
    d = input._array.dtype
    op = np.float32 if d.kind in "fV" and d.itemsize <= 4 else np.float64
    if antialias:
        if d.kind in "fV" and d.itemsize == 2:
            raise NotImplementedError("\"compute_index_ranges_weights\" not implemented for '%s'"
                                      % _dt.scalar_type_name(d))
        if d.kind not in "f":
            raise NotImplementedError("interpolate: antialias=True supports floating inputs only")
        taps = tuple(_taps_aa(xp, in_sizes[a], int(out_sizes[a]), kind, bool(align_corners),
                              scales[a], np.dtype(d).type) for a in range(nd))
        return Upsample.apply(input, taps, _NODE[(kind, nd)] + "Aa")
    taps = tuple(_taps(xp, in_sizes[a], int(out_sizes[a]), kind, bool(align_corners),
                       scales[a], op) for a in range(nd))
    _check_resample_dtype(input, kind, nd)
    return Upsample.apply(input, taps, _NODE[(kind, nd)])


def _clip_coords(xp, x, g, size):
    """torch's clip_coordinates_set_grad: into [0, size - 1]; the borders count as outside."""
    out = (x <= 0) | (x >= size - 1)
    # (in the coordinates' dtype: NumPy would widen bfloat16 here)
    return (xp.clip(x, 0, size - 1).astype(x.dtype, copy=False),
            xp.where(out, 0.0, g).astype(g.dtype, copy=False))


def _unnormalize(xp, coord, size, align_corners):
    """A grid coordinate in [-1, 1] as a position in a dim of ``size``, and its derivative."""
    if align_corners:
        x, g = (coord + 1) / 2 * (size - 1), (size - 1) / 2
    else:
        x, g = ((coord + 1) * size - 1) / 2, size / 2
    return x, xp.full(x.shape, g, dtype=x.dtype)


def _fused(a, b, c):
    """``a * b + c`` rounded once in a's dtype, as the FMA torch's vectorised kernels compile
    to (float32 and below: through float64; float64: Dekker's exact product)."""
    dt = a.dtype
    if dt.itemsize >= 8:
        xp = backend_of(a).xp
        with np.errstate(invalid="ignore", over="ignore"):
            exact = _fma(a, b, c)
            # (Dekker's split overflows at inf and huge values: there the plain sum)
            return xp.where(xp.isfinite(exact), exact, a * b + c)
    return (a.astype(np.float64) * b + c).astype(dt)


def _source_coords(xp, coord, size, padding_mode, align_corners):
    """Each grid coordinate's source position in a dim of ``size`` and its derivative, as the
    2-d vectorised kernel: ``(coord + 1) * (size - 1) / 2``, or ``(coord + 1) * size / 2 - 0.5``
    fused."""
    dt = coord.dtype
    if align_corners:
        x, g = (coord + 1) * dt.type((size - 1) / 2), (size - 1) / 2
    else:
        x, g = _fused(coord + 1, dt.type(size / 2), dt.type(-0.5)), size / 2
    g = xp.full(x.shape, g, dtype=dt)
    return _pad_coords(xp, x, g, size, padding_mode, align_corners)


def _pad_coords(xp, x, g, size, padding_mode, align_corners):
    """Positions ``x`` (derivative ``g``) moved inside by the padding (the 2-d kernel's way)."""
    if padding_mode == "border":
        return _clip_coords(xp, x, g, size)
    if padding_mode == "reflection":
        # (torch's vectorised reflect_coordinates, op for op: its rounding at huge |x| shows)
        dt = x.dtype
        low, twice = (0.0, 2.0 * (size - 1)) if align_corners else (-0.5, 2.0 * size)
        if twice == 0:
            return xp.zeros_like(x), xp.zeros_like(x)
        shifted = x - low
        mag = xp.abs(shifted)
        extra = mag - xp.trunc(mag / twice) * twice
        flip = extra > twice - extra
        x = xp.where(flip, twice - extra, extra) + low
        g = g * xp.where(flip ^ (shifted < 0), -1.0, 1.0)
        return _clip_coords(xp, x.astype(dt, copy=False), g.astype(dt, copy=False), size)
    return x, g


def _corners(xp, ix, iy, h, w, mode):
    """(flat index, inside mask, x corner, y corner) per tap; nan positions are outside."""
    if mode == "nearest":
        taps = [(xp.round(iy), xp.round(ix))]     # (half to even, as torch's nearbyint)
    else:
        x0, y0 = xp.floor(ix), xp.floor(iy)
        taps = [(y0, x0), (y0, x0 + 1), (y0 + 1, x0), (y0 + 1, x0 + 1)]
    out = []
    for yc, xc in taps:
        inside = (xc >= 0) & (xc <= w - 1) & (yc >= 0) & (yc <= h - 1)
        flat = xp.where(inside, yc * w + xc, 0).astype(np.int64)
        out.append((flat, inside, xc, yc))
    return out


class GridSampler2D(Function):
    """``input`` (N, C, H, W) sampled at ``grid`` (N, Ho, Wo, 2) (torch's grid_sampler_2d)."""

    node_name = "GridSampler2DBackward0"
    edge_args = (0, 1)

    @staticmethod
    def forward(ctx, input, grid, mode, padding_mode, align_corners):
        x, gr = input._array, grid._array
        xp = xp_of(input)
        n, c, h, w = x.shape
        ix, _ = _source_coords(xp, gr[..., 0], w, padding_mode, align_corners)
        iy, _ = _source_coords(xp, gr[..., 1], h, padding_mode, align_corners)
        if padding_mode != "zeros":     # (torch's forward clip sends NaN to 0)
            ix, iy = xp.where(xp.isnan(ix), 0, ix), xp.where(xp.isnan(iy), 0, iy)
        planes = x.reshape(n, c, h * w)
        p = int(math.prod(ix.shape[1:]))
        if mode != "nearest":
            # (torch's weights: from the fractions w, n and their complements; summed by FMAs)
            fw, fn = ix - xp.floor(ix), iy - xp.floor(iy)
            fe, fs = 1 - fw, 1 - fn
            weights = [fs * fe, fs * fw, fn * fe, fn * fw]
        out = None
        for k, (flat, inside, xc, yc) in enumerate(_corners(xp, ix, iy, h, w, mode)):
            v = xp.take_along_axis(planes, flat.reshape(n, 1, p), axis=2)
            v = xp.where(inside.reshape(n, 1, p), v, 0).reshape((n, c) + ix.shape[1:])
            if mode == "nearest":
                out = v
            elif out is None:
                out = v * weights[k][:, None]
            else:
                out = _fused(v, weights[k][:, None], out)
        ctx.conf = (mode, padding_mode, align_corners)
        ctx.save_for_backward(input, grid)
        return Tensor._wrap(xp.ascontiguousarray(out).astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        input, grid = ctx.saved_tensors
        mode, padding_mode, align_corners = ctx.conf
        xp = xp_of(input)
        n, c, h, w = input.shape
        gr = grid._array
        ix, gxm = _source_coords(xp, gr[..., 0], w, padding_mode, align_corners)
        iy, gym = _source_coords(xp, gr[..., 1], h, padding_mode, align_corners)
        # the positions as Tensors of the grid (their derivative: the arrays gxm, gym)
        # (grid - gr is an exact zero: the value stays ix even at huge coordinates)
        ixt = (grid[..., 0] - Tensor._wrap(gr[..., 0])) * Tensor._wrap(gxm) + Tensor._wrap(ix)
        iyt = (grid[..., 1] - Tensor._wrap(gr[..., 1])) * Tensor._wrap(gym) + Tensor._wrap(iy)
        p = int(math.prod(ix.shape[1:]))
        go = grad_output.reshape(n, c, p)
        grad_in = Tensor._wrap(xp.zeros((n, c, h * w), dtype=input._array.dtype))
        gx = gy = 0
        for flat, inside, xc, yc in _corners(xp, ix, iy, h, w, mode):
            idx = Tensor._wrap(xp.broadcast_to(flat.reshape(n, 1, p), (n, c, p)))
            keep = Tensor._wrap(inside.reshape(n, 1, p).astype(input._array.dtype))
            inb = Tensor._wrap(xp.broadcast_to(inside.reshape(n, 1, p), (n, c, p)))
            if mode == "nearest":
                grad_in = grad_in.scatter_add(2, idx, go * keep)
                continue
            sx = Tensor._wrap(xp.where(xc > ix, 1.0, -1.0).astype(gr.dtype))
            sy = Tensor._wrap(xp.where(yc > iy, 1.0, -1.0).astype(gr.dtype))
            wx = 1 + (ixt - Tensor._wrap(xc)) * sx     # (1 - |ix - xc|, differentiable)
            wy = 1 + (iyt - Tensor._wrap(yc)) * sy
            wt = (wx * wy).reshape(n, 1, p)
            # (a nan weight of an outside corner sends nothing, as torch)
            grad_in = grad_in.scatter_add(2, idx, where(inb, go * wt, 0.0))
            if ctx.needs_input_grad[1]:
                v = where(inb, input.reshape(n, c, h * w).gather(2, idx), 0.0)
                gv = (go * v).sum(1)
                gx = gx + gv * (sx * wy).reshape(n, p)
                gy = gy + gv * (sy * wx).reshape(n, p)
        grad_in = grad_in.reshape(n, c, h, w) if ctx.needs_input_grad[0] else None
        grad_grid = None
        if ctx.needs_input_grad[1]:
            if mode == "nearest":     # (torch: zero, even at inf/NaN positions)
                grad_grid = Tensor._wrap(xp.zeros_like(gr))
            else:
                gx = gx.reshape(tuple(ix.shape)) * Tensor._wrap(gxm)
                gy = gy.reshape(tuple(iy.shape)) * Tensor._wrap(gym)
                grad_grid = stack([gx, gy], -1)
        return grad_in, grad_grid, None, None, None


def _base_grid(xp, dt, spatial, align_corners):
    """torch's base grid ((D,) H, W, nd + 1) of ``affine_grid``: x (W) first, then y (, z),
    then ones; linspace and the ``(n - 1) / n`` shrink in the dtype, as torch's."""
    nd = len(spatial)
    base = xp.zeros(tuple(spatial) + (nd + 1,), dtype=dt)
    for a, n in enumerate(spatial):
        if n <= 1:
            continue
        ramp = _linspace(xp, -1, 1, n, dt)
        if not align_corners:
            ramp = ramp * dt.type(n - 1) / dt.type(n)
        shape = [1] * nd
        shape[a] = n
        base[..., nd - 1 - a] = ramp.reshape(shape).astype(dt, copy=False)
    base[..., nd] = 1
    return base.reshape(-1, nd + 1)


def _small_bmm(xp, a, b):
    """``a @ b`` (batched) as torch's small-bmm CPU kernel: products summed in order in the
    dtype. torch takes it when contraction * rows * cols < 400; larger ones go to BLAS."""
    if a.shape[-1] * a.shape[-2] * b.shape[-1] >= 400:
        return xp.matmul(a, b)
    out = a[..., :, 0:1] * b[..., 0:1, :]
    for k in range(1, a.shape[-1]):
        out = out + a[..., :, k:k + 1] * b[..., k:k + 1, :]
    return out


class AffineGridGenerator(Function):
    """The sampling grid ``base @ theta^T`` of affine maps ``theta`` (N, nd, nd + 1)."""

    node_name = "AffineGridGeneratorBackward0"

    @staticmethod
    def forward(ctx, theta, size, align_corners):
        xp = xp_of(theta)
        base = _base_grid(xp, theta._array.dtype, size[2:], align_corners)
        ctx.save_for_backward(Tensor._wrap(base))
        out = _small_bmm(xp, xp.broadcast_to(base, (size[0],) + base.shape),
                         theta._array.transpose(0, 2, 1))
        return Tensor._wrap(out.reshape((size[0],) + tuple(size[2:]) + (len(size) - 2,)))

    @staticmethod
    def backward(ctx, grad_output):
        (base,) = ctx.saved_tensors
        g = grad_output.reshape(grad_output.shape[0], base.shape[0], grad_output.shape[-1])
        # (torch's grad: (base^T @ grad) transposed, so not contiguous)
        return base.t().matmul(g).transpose(1, 2), None, None


ALIGN_CORNERS_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                         "align_corners=False since 1.3.0. Please specify align_corners=True if "
                         "the old behavior is desired. See the documentation of grid_sample for "
                         "details.")
_CUBIC_A = -0.75


def _cubic_coeffs(t):
    """torch's get_cubic_coefficients (A = -0.75): the 4 taps' weights at offset t in [0, 1)."""
    a = _CUBIC_A
    x0, x2, x3 = t + 1, 1 - t, 2 - t
    return [((a * x0 - 5 * a) * x0 + 8 * a) * x0 - 4 * a,
            ((a + 2) * t - (a + 3)) * t * t + 1,
            ((a + 2) * x2 - (a + 3)) * x2 * x2 + 1,
            ((a * x3 - 5 * a) * x3 + 8 * a) * x3 - 4 * a]


def _cubic_coeffs_grad(t):
    """The derivatives of :func:`_cubic_coeffs` in t."""
    a = _CUBIC_A
    x0, x2, x3 = t + 1, 1 - t, 2 - t
    return [(3 * a * x0 - 10 * a) * x0 + 8 * a,
            (3 * (a + 2) * t - 2 * (a + 3)) * t,
            (2 * (a + 3) - 3 * (a + 2) * x2) * x2,
            (10 * a - 3 * a * x3) * x3 - 8 * a]


def _clip_scalar(xp, x, g, size, for_grad):
    """torch's scalar clip_coordinates (NaN goes to ``size - 1``) or, ``for_grad``,
    clip_coordinates_set_grad (NaN stays; the borders have derivative 0)."""
    if for_grad:
        out = (x <= 0) | (x >= size - 1)
        return xp.where(x <= 0, 0, xp.where(x >= size - 1, size - 1, x)), xp.where(out, 0, g)
    return xp.where(x < size - 1, xp.where(x < 0, 0, x), size - 1), g


def _source_coords_scalar(xp, coord, size, padding_mode, align_corners, for_grad):
    """torch's scalar grid_sampler_compute_source_index(_set_grad) (the 3-d kernels)."""
    x, g = _unnormalize(xp, coord, size, align_corners)
    if padding_mode == "reflection":
        lo2, hi2 = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        if lo2 == hi2:
            x, g = xp.zeros_like(x), xp.zeros_like(x)
        else:
            low, span = lo2 / 2, (hi2 - lo2) / 2
            x = x - low
            sign = xp.where(x < 0, -1.0, 1.0)
            x = xp.abs(x)
            extra = xp.fmod(x, span)
            flips = xp.floor(x / span)
            # (a flip count past int's range casts to INT_MIN: even)
            even = ~(flips < 2.0 ** 31) | (xp.fmod(flips, 2) == 0)
            x = xp.where(even, extra + low, span - extra + low)
            g = g * xp.where(even, sign, -sign)
    if padding_mode != "zeros":
        x, g = _clip_scalar(xp, x, g, size, for_grad)
    return x.astype(coord.dtype, copy=False), g.astype(coord.dtype, copy=False)


def _tap_dim(xp, coord, size, mode, padding_mode, align_corners, for_grad):
    """One spatial dim's (position, its derivative, first tap, [read coords], [inside])."""
    if mode == "cubic":
        pos, mult = _unnormalize(xp, coord, size, align_corners)
        first = xp.floor(pos)
        zero = xp.zeros_like(pos)
        reads = [_pad_coords(xp, first + k, zero, size, padding_mode, align_corners)[0]
                 for k in (-1, 0, 1, 2)]
        return pos, mult, first, reads, [(r > -1) & (r < size) for r in reads]
    pos, mult = _source_coords_scalar(xp, coord, size, padding_mode, align_corners, for_grad)
    first = xp.round(pos) if mode == "nearest" else xp.floor(pos)
    reads = [first] if mode == "nearest" else [first, first + 1]
    return pos, mult, first, reads, [(r >= 0) & (r <= size - 1) for r in reads]


def _tap_weights(mode, pos, first):
    """Per tap of a dim: the weights and their derivatives in ``pos`` (arrays or Tensors)."""
    if mode == "linear":
        return [first + 1 - pos, pos - first], [-1.0, 1.0]
    return _cubic_coeffs(pos - first), _cubic_coeffs_grad(pos - first)


def _tap_combos(xp, dims, sizes):
    """Each tap of the grid: (its per-dim tap numbers, inside mask, flat index)."""
    strides = [int(math.prod(sizes[:d])) for d in range(len(sizes))]
    for ks in itertools.product(*[range(len(dm[3])) for dm in dims]):
        inside = flat = None
        for d, k in enumerate(ks):
            ins, off = dims[d][4][k], dims[d][3][k] * strides[d]
            inside = ins if inside is None else inside & ins
            flat = off if flat is None else flat + off
        yield ks, inside, xp.where(inside, flat, 0).astype(np.int64)


class GridSamplerTaps(Function):
    """``input`` (N, C, [D,] H, W) sampled at ``grid`` (N, [Do,] Ho, Wo, nd) as a weighted sum
    of taps: torch's 3-d kernels (trilinear, nearest) and its 2-d bicubic one."""

    edge_args = (0, 1)

    @staticmethod
    def forward(ctx, input, grid, mode, padding_mode, align_corners):
        x, gr = input._array, grid._array
        xp = xp_of(input)
        n, c = x.shape[:2]
        nd = x.ndim - 2
        sizes = x.shape[2:][::-1]
        g = gr.reshape(n, int(math.prod(gr.shape[1:-1])), nd)
        dims = [_tap_dim(xp, g[..., d], sizes[d], mode, padding_mode, align_corners, False)
                for d in range(nd)]
        ws = [None if mode == "nearest" else _tap_weights(mode, dm[0], dm[2])[0] for dm in dims]
        planes = x.reshape(n, c, int(math.prod(sizes)))
        out = xp.zeros((n, c, g.shape[1]), dtype=x.dtype)
        for ks, inside, flat in _tap_combos(xp, dims, sizes):
            v = xp.take_along_axis(planes, flat[:, None], axis=2)
            if mode == "nearest":
                out = out + xp.where(inside[:, None], v, 0)
                continue
            w = ws[0][ks[0]]
            for d in range(1, nd):
                w = w * ws[d][ks[d]]
            if nd == 2:     # (the 2-d kernel: a NaN weight reaches the output)
                out = out + xp.where(inside[:, None], v, 0) * w[:, None]
            else:
                out = out + xp.where(inside[:, None], v * w[:, None], 0)
        ctx.conf = (mode, padding_mode, align_corners)
        ctx.set_node_name("GridSampler%dDBackward0" % nd)
        ctx.save_for_backward(input, grid)
        return Tensor._wrap(out.reshape((n, c) + gr.shape[1:-1]).astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        input, grid = ctx.saved_tensors
        mode, padding_mode, align_corners = ctx.conf
        xp = xp_of(input)
        n, c = input.shape[:2]
        nd = input.dim() - 2
        sizes = tuple(input.shape[2:])[::-1]
        gr = grid._array
        p = int(math.prod(gr.shape[1:-1]))
        g = gr.reshape(n, p, nd)
        dims = [_tap_dim(xp, g[..., d], sizes[d], mode, padding_mode, align_corners, True)
                for d in range(nd)]
        gt = grid.reshape(n, p, nd)
        wts = []
        for d, (pos, mult, first, _, _) in enumerate(dims):
            # the position as a Tensor of the grid (derivative ``mult``)
            # (gt - g is an exact zero: the value stays pos even at huge coordinates)
            live = Tensor._wrap(xp.isfinite(g[..., d]))
            post = where(live, (gt[..., d] - Tensor._wrap(g[..., d])) * Tensor._wrap(mult)
                         + Tensor._wrap(pos), Tensor._wrap(pos))
            wts.append(None if mode == "nearest" else
                       _tap_weights(mode, post, Tensor._wrap(first)))
        go = grad_output.reshape(n, c, p)
        grad_in = Tensor._wrap(xp.zeros((n, c, int(math.prod(sizes))), dtype=input._array.dtype))
        planes = input.reshape(n, c, int(math.prod(sizes)))
        gds = [0] * nd
        for ks, inside, flat in _tap_combos(xp, dims, sizes):
            idx = Tensor._wrap(xp.broadcast_to(flat[:, None], (n, c, p)))
            inb = Tensor._wrap(xp.broadcast_to(inside[:, None], (n, c, p)))
            if mode == "nearest":
                grad_in = grad_in.scatter_add(2, idx, where(inb, go, 0.0))
                continue
            w = wts[0][0][ks[0]]
            for d in range(1, nd):
                w = w * wts[d][0][ks[d]]
            grad_in = grad_in.scatter_add(2, idx, where(inb, go * w.reshape(n, 1, p), 0.0))
            if not ctx.needs_input_grad[1]:
                continue
            gv = (go * where(inb, planes.gather(2, idx), 0.0)).sum(1)
            for d in range(nd):
                term = gv * wts[d][1][ks[d]]
                for e in range(nd):
                    if e != d:
                        term = term * wts[e][0][ks[e]]
                if nd == 3:     # (the 3-d kernel skips outside corners)
                    term = where(Tensor._wrap(inside), term, 0.0)
                gds[d] = gds[d] + term
        grad_in = grad_in.reshape(input.shape) if ctx.needs_input_grad[0] else None
        grad_grid = None
        if ctx.needs_input_grad[1]:
            if mode == "nearest":     # (torch: zero)
                grad_grid = Tensor._wrap(xp.zeros_like(gr))
            else:
                grad_grid = stack([gds[d] * Tensor._wrap(dims[d][1]) for d in range(nd)], -1)
                grad_grid = grad_grid.reshape(grid.shape)
        return grad_in, grad_grid, None, None, None


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` (N, C, H, W) at ``grid`` (N, Ho, Wo, 2) points in [-1, 1] (x, y).

    Matches ``torch.nn.functional.grid_sample``: 4-D input (bilinear, nearest, bicubic) or
    5-D input (N, C, D, H, W) at (N, Do, Ho, Wo, 3) points (x, y, z) (bilinear, nearest).
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         "'nearest' or 'bicubic', but got: '%s'" % mode)
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         "'border', or 'reflection', but got: '%s'" % padding_mode)
    if align_corners is None:
        warnings.warn(ALIGN_CORNERS_WARNING, stacklevel=2)
    return grid_sampler(input, grid, ("bilinear", "nearest", "bicubic").index(mode),
                        ("zeros", "border", "reflection").index(padding_mode),
                        bool(align_corners))


def _check_grid_sampler(input, grid, interpolation_mode, nd=None):
    """torch's check_grid_sampler_common and its 2-d/3-d checks, in torch's order (``nd``:
    the rank grid_sampler_2d/3d ask for; else chosen by the input's)."""
    shapes = "input with sizes %s and grid with sizes %s" % (list(input.shape), list(grid.shape))
    if input.dim() == 0 or grid.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, "
                           "but got " + shapes)
    if grid.shape[-1] != input.dim() - 2:
        raise RuntimeError("grid_sampler(): expected grid to have size %d in last dimension, but "
                           "got grid with sizes %s" % (input.dim() - 2, list(grid.shape)))
    for i in range(2, input.dim()):
        if input.shape[i] <= 0:
            raise RuntimeError("grid_sampler(): expected input to have non-empty spatial "
                               "dimensions, but input has sizes %s with dimension %d being empty"
                               % (list(input.shape), i))
    nd = nd or (2 if input.dim() == 4 else 3)
    if input.dim() != nd + 2 or grid.dim() != nd + 2:
        raise RuntimeError("grid_sampler(): expected %dD input and grid with same number of "
                           "dimensions, but got %s" % (nd + 2, shapes))
    if nd == 3 and interpolation_mode == 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")


def _grid_sampler_checked(input, grid, interpolation_mode, padding_mode, align_corners):
    nd = input.dim() - 2
    not_implemented_for(input._array, "grid_sampler_%dd_cpu" % nd if nd == 3 else
                        "grid_sampler_2d_cpu_kernel_impl", "biuc")
    if grid._array.dtype != input._array.dtype:
        raise RuntimeError("expected scalar type %s but found %s"
                           % (_dt.scalar_type_name(input._array.dtype),
                              _dt.scalar_type_name(grid._array.dtype)))
    padding = ("zeros", "border", "reflection")[padding_mode]
    if nd == 3 or interpolation_mode == 2:
        kind = ("linear", "nearest", "cubic")[interpolation_mode]
        return GridSamplerTaps.apply(input, grid, kind, padding, bool(align_corners))
    return GridSampler2D.apply(input, grid, ("bilinear", "nearest")[interpolation_mode],
                               padding, bool(align_corners))


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """``torch.grid_sampler``: modes as ints (0 bilinear, 1 nearest, 2 bicubic; padding 0
    zeros, 1 border, 2 reflection); 4-D or 5-D (no bicubic) input."""
    _check_grid_sampler(input, grid, interpolation_mode)
    return _grid_sampler_checked(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    """``torch.grid_sampler_2d``: :func:`grid_sampler` on 4-D input only."""
    _check_grid_sampler(input, grid, interpolation_mode, 2)
    return _grid_sampler_checked(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    """``torch.grid_sampler_3d``: :func:`grid_sampler` on 5-D input only."""
    _check_grid_sampler(input, grid, interpolation_mode, 3)
    return _grid_sampler_checked(input, grid, interpolation_mode, padding_mode, align_corners)
