"""Vision ops, each one node as torch's: pixel_shuffle/pixel_unshuffle, channel_shuffle,
unfold (im2col)/fold (col2im), the separable resampling behind ``interpolate`` and
grid_sample (2-d).

Each op is linear in its input, so its backward is its adjoint, written as the adjoint op
(whose own backward is the op again): double backward comes free.
"""
import itertools

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..backend import backend_of
from ..tensor import Tensor
from ._util import not_implemented_for, xp_of
from .comparison import where
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
        return Tensor._wrap(xp_of(input).ascontiguousarray(_shuffle(input._array, r, False)))

    @staticmethod
    def backward(ctx, grad_output):
        return PixelUnshuffle.apply(grad_output, ctx.r), None


class PixelUnshuffle(Function):
    node_name = "PixelUnshuffleBackward0"
    edge_args = (0,)

    @staticmethod
    def forward(ctx, input, r):
        ctx.r = r
        return Tensor._wrap(xp_of(input).ascontiguousarray(_shuffle(input._array, r, True)))

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
        return Tensor._wrap(xp_of(input).ascontiguousarray(y).reshape(x.shape))

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


def _taps(xp, n_in, n_out, kind, align_corners, scale):
    """One dim's resampling as taps: (n_out, t) input indices and weights (float64)."""
    dst = xp.arange(n_out, dtype=np.float64)
    if kind in ("nearest", "nearest-exact"):
        shift = 0.5 if kind == "nearest-exact" else 0.0
        src = xp.minimum(xp.floor((dst + shift) * scale).astype(np.int64), n_in - 1)
        return src[:, None], xp.ones((n_out, 1))
    if align_corners:
        src = dst * ((n_in - 1) / (n_out - 1)) if n_out > 1 else dst * 0
    elif kind == "cubic":
        src = (dst + 0.5) * scale - 0.5
    else:
        src = xp.maximum((dst + 0.5) * scale - 0.5, 0)
    if kind == "cubic":
        i0 = xp.floor(src)
        w = xp.stack(_cubic_weights(src - i0), axis=1)
        idx = xp.clip(i0.astype(np.int64)[:, None] - 1 + xp.arange(4), 0, n_in - 1)
        return idx, w
    i0 = xp.minimum(xp.floor(src).astype(np.int64), n_in - 1)
    lam = src - i0
    return xp.stack([i0, xp.minimum(i0 + 1, n_in - 1)], axis=1), xp.stack([1 - lam, lam], axis=1)


def _resample(arr, taps, adjoint=False, in_sizes=None):
    """Apply each dim's taps along the trailing dims (or their adjoint, back to ``in_sizes``)."""
    xp = xp_of(Tensor._wrap(arr))
    nd = len(taps)
    lead = arr.ndim - nd
    out = arr
    small = arr.dtype.kind == "u"    # (uint8: computed in float32, rounded as torch)
    out = out.astype(np.float32) if small and taps[0][1].shape[1] > 1 else out
    for a, (idx, w) in enumerate(taps):
        axis = lead + a
        w = w.astype(out.dtype)
        if adjoint:
            moved = xp.moveaxis(out, axis, -1)
            res = xp.zeros(moved.shape[:-1] + (in_sizes[a],), dtype=out.dtype)
            for t in range(idx.shape[1]):
                backend_of(res).scatter_add(res, (Ellipsis, idx[:, t]), moved * w[:, t])
            out = xp.moveaxis(res, -1, axis)
            continue
        shape = (-1,) + (1,) * (arr.ndim - axis - 1)
        acc = None
        for t in range(idx.shape[1]):
            term = xp.take(out, idx[:, t], axis=axis)
            if idx.shape[1] > 1:
                term = term * w[:, t].reshape(shape)
            acc = term if acc is None else acc + term
        out = acc
    if out.dtype != arr.dtype:
        out = xp.clip(xp.floor(out + 0.5), 0, 255).astype(arr.dtype)
    return xp.ascontiguousarray(out)


_NODE = {("nearest", 1): "UpsampleNearest1D", ("nearest", 2): "UpsampleNearest2D",
         ("nearest", 3): "UpsampleNearest3D", ("nearest-exact", 1): "UpsampleNearestExact1D",
         ("nearest-exact", 2): "UpsampleNearestExact2D",
         ("nearest-exact", 3): "UpsampleNearestExact3D", ("linear", 1): "UpsampleLinear1D",
         ("linear", 2): "UpsampleBilinear2D", ("linear", 3): "UpsampleTrilinear3D",
         ("cubic", 2): "UpsampleBicubic2D"}


class Upsample(Function):
    """Separable resampling of the trailing dims by per-dim taps (``interpolate``)."""

    node_name = "UpsampleNearest2DBackward0"
    edge_args = (0,)

    @staticmethod
    def forward(ctx, input, taps, name):
        ctx.set_node_name(name + "Backward0")
        ctx.taps, ctx.base = taps, name
        ctx.in_sizes = tuple(input.shape[input.dim() - len(taps):])
        return Tensor._wrap(_resample(input._array, taps))

    @staticmethod
    def backward(ctx, grad_output):
        return UpsampleGrad.apply(grad_output, ctx.taps, ctx.base, ctx.in_sizes), None, None


class UpsampleGrad(Function):
    node_name = "UpsampleNearest2DBackwardBackward0"
    edge_args = (0,)

    @staticmethod
    def forward(ctx, grad_output, taps, name, in_sizes):
        ctx.set_node_name(name + "BackwardBackward0")
        ctx.taps, ctx.base = taps, name
        return Tensor._wrap(_resample(grad_output._array, taps, True, in_sizes))

    @staticmethod
    def backward(ctx, grad):
        return Upsample.apply(grad, ctx.taps, ctx.base), None, None, None


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


def resample(input, out_sizes, scales, kind, align_corners, mode=None):
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
    xp = xp_of(input)
    taps = tuple(_taps(xp, in_sizes[a], int(out_sizes[a]), kind, bool(align_corners),
                       scales[a]) for a in range(nd))
    _check_resample_dtype(input, kind, nd)
    return Upsample.apply(input, taps, _NODE[(kind, nd)])


def _clip_coords(xp, x, g, size):
    """torch's clip_coordinates_set_grad: into [0, size - 1]; the borders count as outside."""
    out = (x <= 0) | (x >= size - 1)
    return xp.clip(x, 0, size - 1), xp.where(out, 0.0, g)


def _source_coords(xp, coord, size, padding_mode, align_corners):
    """Each grid coordinate's source position in a dim of ``size`` and its derivative."""
    if align_corners:
        x, g = (coord + 1) / 2 * (size - 1), (size - 1) / 2
    else:
        x, g = ((coord + 1) * size - 1) / 2, size / 2
    g = xp.full(x.shape, g, dtype=x.dtype)
    if padding_mode == "border":
        return _clip_coords(xp, x, g, size)
    if padding_mode == "reflection":
        lo2, hi2 = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        if lo2 == hi2:
            return xp.zeros_like(x), xp.zeros_like(x)
        low, span = lo2 / 2, (hi2 - lo2) / 2
        x = x - low
        sign = xp.where(x < 0, -1.0, 1.0)
        x = xp.abs(x)
        extra = xp.fmod(x, span)
        even = xp.fmod(xp.floor(x / span), 2) == 0
        x = xp.where(even, extra + low, span - extra + low)
        return _clip_coords(xp, x, (g * xp.where(even, sign, -sign)).astype(x.dtype), size)
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
        planes = x.reshape(n, c, h * w)
        out = 0
        for flat, inside, xc, yc in _corners(xp, ix, iy, h, w, mode):
            v = xp.take_along_axis(planes, flat.reshape(n, 1, -1), axis=2)
            v = xp.where(inside.reshape(n, 1, -1), v, 0).reshape((n, c) + ix.shape[1:])
            if mode != "nearest":
                v = v * ((1 - xp.abs(ix - xc)) * (1 - xp.abs(iy - yc)))[:, None]
            out = out + v
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
        ixt = grid[..., 0] * Tensor._wrap(gxm) + Tensor._wrap(ix - gr[..., 0] * gxm)
        iyt = grid[..., 1] * Tensor._wrap(gym) + Tensor._wrap(iy - gr[..., 1] * gym)
        go = grad_output.reshape(n, c, -1)
        grad_in = Tensor._wrap(xp.zeros((n, c, h * w), dtype=input._array.dtype))
        gx = gy = 0
        for flat, inside, xc, yc in _corners(xp, ix, iy, h, w, mode):
            idx = Tensor._wrap(xp.broadcast_to(flat.reshape(n, 1, -1), (n, c, flat[0].size)))
            keep = Tensor._wrap(inside.reshape(n, 1, -1).astype(input._array.dtype))
            inb = Tensor._wrap(xp.broadcast_to(inside.reshape(n, 1, -1), (n, c, flat[0].size)))
            if mode == "nearest":
                grad_in = grad_in.scatter_add(2, idx, go * keep)
                continue
            sx = Tensor._wrap(xp.where(xc > ix, 1.0, -1.0).astype(gr.dtype))
            sy = Tensor._wrap(xp.where(yc > iy, 1.0, -1.0).astype(gr.dtype))
            wx = 1 + (ixt - Tensor._wrap(xc)) * sx     # (1 - |ix - xc|, differentiable)
            wy = 1 + (iyt - Tensor._wrap(yc)) * sy
            wt = (wx * wy).reshape(n, 1, -1)
            # (a nan weight of an outside corner sends nothing, as torch)
            grad_in = grad_in.scatter_add(2, idx, where(inb, go * wt, 0.0))
            if ctx.needs_input_grad[1]:
                v = where(inb, input.reshape(n, c, h * w).gather(2, idx), 0.0)
                gv = (go * v).sum(1)
                gx = gx + gv * (sx * wy).reshape(n, -1)
                gy = gy + gv * (sy * wx).reshape(n, -1)
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


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` (N, C, H, W) at ``grid`` (N, Ho, Wo, 2) points in [-1, 1] (x, y).

    Matches ``torch.nn.functional.grid_sample`` (2-d, ``bilinear``/``nearest``).
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         "'nearest' or 'bicubic', but got: '%s'" % mode)
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         "'border', or 'reflection', but got: '%s'" % padding_mode)
    return grid_sampler(input, grid, ("bilinear", "nearest", "bicubic").index(mode),
                        ("zeros", "border", "reflection").index(padding_mode),
                        bool(align_corners))


def _check_grid_sampler(input, grid, interpolation_mode):
    """torch's check_grid_sampler_common and its 2-d/3-d checks, in torch's order."""
    shapes = "input with sizes %s and grid with sizes %s" % (list(input.shape), list(grid.shape))
    if input.dim() != grid.dim():
        raise RuntimeError("grid_sampler(): expected grid and input to have same number of "
                           "dimensions, but got " + shapes)
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
    if input.dim() not in (4, 5):
        raise RuntimeError("grid_sampler(): expected 5D input and grid with same number of "
                           "dimensions, but got " + shapes)
    if input.dim() == 5 and interpolation_mode == 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """``torch.grid_sampler``: modes as ints (0 bilinear, 1 nearest, 2 bicubic; padding 0
    zeros, 1 border, 2 reflection). ember samples 4-D input in bilinear and nearest modes."""
    _check_grid_sampler(input, grid, interpolation_mode)
    nd = input.dim() - 2
    not_implemented_for(input._array, "grid_sampler_%dd_cpu" % nd if nd == 3 else
                        "grid_sampler_2d_cpu_kernel_impl", "biuc")
    if grid._array.dtype != input._array.dtype:
        raise RuntimeError("expected scalar type %s but found %s"
                           % (_dt.scalar_type_name(input._array.dtype),
                              _dt.scalar_type_name(grid._array.dtype)))
    if nd != 2 or interpolation_mode == 2:
        raise NotImplementedError("grid_sample: only 4-D input with bilinear or nearest mode "
                                  "is supported")
    return GridSampler2D.apply(input, grid, ("bilinear", "nearest")[interpolation_mode],
                               ("zeros", "border", "reflection")[padding_mode],
                               bool(align_corners))
