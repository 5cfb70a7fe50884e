"""Pooling: max_pool1d/2d/3d, avg_pool1d/2d/3d, adaptive_avg_pool1d/2d/3d,
adaptive_max_pool1d/2d/3d.

Windows are strided views; backward loops over kernel positions only, never over pixels.
"""
import itertools
import math

import numpy as np

from .. import dtypes as _dt
from ..autograd import _autocast
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..backend import backend_of, get_array_module
from ..tensor import Tensor
from ._util import keep_where, not_implemented_for, xp_of
from .creation import rand
from .vision import _channels_last_order, _in_layout

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d",
           "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d",
           "adaptive_max_pool2d"]


def _keep(arr, like):
    """``arr`` laid out channels-last when the 4-d (5-d) array ``like`` is, else C-contiguous
    (torch's pooling kernels give their output and input gradient the input's
    ``suggest_memory_format``)."""
    order = _channels_last_order(like)
    return get_array_module(arr).ascontiguousarray(arr) if order is None else \
        _in_layout(arr, order)


def _tuple(v, n):
    if isinstance(v, (list, tuple)):
        return tuple(int(x) for x in v) if len(v) == n else (int(v[0]),) * n
    return (int(v),) * n


def _out(size, k, s, p, d, ceil_mode):
    eff = d * (k - 1) + 1
    num = size + 2 * p - eff
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _windows(x, k, s, d, out_hw):
    n, c = x.shape[:2]
    s0, s1, s2, s3 = x.strides
    return backend_of(x).as_strided(x, (n, c, out_hw[0], out_hw[1], k[0], k[1]),
                                    (s0, s1, s2 * s[0], s3 * s[1], s2 * d[0], s3 * d[1]))


def _padded(x, p, out_hw, k, s, d, fill):
    """``x`` padded by ``p`` (and on the far side as far as ceil_mode windows reach)."""
    need = [(out_hw[a] - 1) * s[a] + d[a] * (k[a] - 1) + 1 for a in range(2)]
    extra = [max(0, need[a] - x.shape[2 + a] - 2 * p[a]) for a in range(2)]
    widths = ((0, 0), (0, 0), (p[0], p[0] + extra[0]), (p[1], p[1] + extra[1]))
    if not any(p) and not any(extra):
        return x
    return get_array_module(x).pad(x, widths, constant_values=fill)


def _scatter(g, k, s, d, shape):
    """Sum the window gradients ``g`` (N, C, Ho, Wo, kh, kw) back into an array of ``shape``."""
    out = get_array_module(g).zeros(shape, dtype=g.dtype)
    ho, wo = g.shape[2:4]
    for i in range(k[0]):
        for j in range(k[1]):
            h0, w0 = i * d[0], j * d[1]
            out[:, :, h0:h0 + s[0] * (ho - 1) + 1:s[0], w0:w0 + s[1] * (wo - 1) + 1:s[1]] += \
                g[:, :, :, :, i, j]
    return out


def _window(xp, i, j, s, d, out_hw):
    """The strided view of ``xp`` that kernel position (i, j) sees in every window."""
    h0, w0 = i * d[0], j * d[1]
    return xp[..., h0:h0 + s[0] * (out_hw[0] - 1) + 1:s[0], w0:w0 + s[1] * (out_hw[1] - 1) + 1:s[1]]


def _max_exact(x, k, s, p, d, out_hw, shape):
    """torch's scan per window: skip padding, replace on ``val > max or isnan(val)``."""
    xp = get_array_module(x)
    ok = xp.zeros(x.shape[2:], dtype=bool)
    ok[p[0]:p[0] + shape[2], p[1]:p[1] + shape[3]] = True
    kk = k[0] * k[1]
    arg = xp.zeros(x.shape[:2] + tuple(out_hw), dtype=np.int64)
    for pos in range(kk - 1, -1, -1):
        xp.copyto(arg, pos, where=_window(ok, pos // k[1], pos % k[1], s, d, out_hw))
    lowest = -np.inf if x.dtype.kind in "fV" else np.iinfo(x.dtype).min
    out = xp.full(arg.shape, lowest, dtype=x.dtype)
    for pos in range(kk):
        i, j = divmod(pos, k[1])
        v = _window(x, i, j, s, d, out_hw)
        upd = v > out
        if x.dtype.kind in "fV":
            upd |= xp.isnan(v)
        upd &= _window(ok, i, j, s, d, out_hw)
        xp.copyto(out, v, where=upd)
        xp.copyto(arg, pos, where=upd)
    return out, arg


def _running_max(parts):
    """Element-wise max of the arrays ``parts`` and the index of the first one holding it."""
    xp = get_array_module(parts[0])
    if len(parts) == 1:
        return parts[0].copy(), xp.zeros(parts[0].shape, dtype=np.int8)
    m = xp.maximum(parts[0], parts[1])
    arg = (parts[1] > parts[0]).view(np.int8)
    for j in range(2, len(parts)):
        xp.putmask(arg, parts[j] > m, j)
        xp.maximum(m, parts[j], out=m)
    return m, arg


def _max_blocks(x, k):
    """Max over non-overlapping k-blocks of a contiguous (N, C, H, W) ``x`` (k divides H, W).

    Within each block row first, then the rows against each other, so the kernel position of
    the first maximum in row-major order (torch's rule for ties) comes out.
    """
    n, c, h, w = x.shape
    v = x.reshape(-1, k[0], w // k[1], k[1])
    out, arg = _running_max([v[:, 0, :, j] for j in range(k[1])])
    for i in range(1, k[0]):
        m, col = _running_max([v[:, i, :, j] for j in range(k[1])])
        # NOTE: strict '>' keeps the earlier row on ties; arg += (col - arg) * upd, no branches.
        upd = m > out
        col += i * k[1]
        col -= arg
        col *= upd
        arg += col
        get_array_module(out).maximum(out, m, out=out)
    return out.reshape(n, c, h // k[0], w // k[1]), arg.reshape(n, c, h // k[0], w // k[1])


class MaxPool2d(Function):
    node_name = "MaxPool2DWithIndicesBackward0"

    @staticmethod
    def forward(ctx, input, k, s, p, d, ceil_mode, with_indices=True):
        # (an unbatched (C, H, W) input is pooled as one batch, in this node, as torch)
        ctx.unbatched = input.dim() == 3
        x = input._array[None] if ctx.unbatched else input._array
        xp = xp_of(input)
        h, w = x.shape[2:]
        out_hw = (_out(h, k[0], s[0], p[0], d[0], ceil_mode),
                  _out(w, k[1], s[1], p[1], d[1], ceil_mode))
        fill = -np.inf if x.dtype.kind in "fV" else np.iinfo(x.dtype).min
        xpad = _padded(x, p, out_hw, k, s, d, fill)
        blocks = (s == k and d == (1, 1) and xpad is x and h % k[0] == 0 and w % k[1] == 0
                  and x.size > 0 and k[0] * k[1] < 128)
        if blocks:
            out, arg = _max_blocks(xp.ascontiguousarray(x), k)
        else:
            # Loop over kernel positions (not pixels), keeping the running max and its position.
            # NOTE: strict '>' keeps the first maximum, torch's rule for ties.
            out = _window(xpad, 0, 0, s, d, out_hw).copy()
            kk = k[0] * k[1]
            arg = xp.zeros(out.shape, dtype=np.int8 if kk < 128 else np.int64)
            for pos in range(1, kk):
                v = _window(xpad, pos // k[1], pos % k[1], s, d, out_hw)
                xp.putmask(arg, v > out, pos)
                xp.maximum(out, v, out=out)
        # NOTE: NaN, and an all -inf window next to padding, take torch's exact scan.
        if x.dtype.kind != "f" or bool(xp.isnan(out).any()) or \
                (xpad is not x and bool(xp.isneginf(out).any())):
            out, arg = _max_exact(xpad, k, s, p, d, out_hw, x.shape)
        # NOTE: the input (saved by torch too) is only read by double backward.
        ctx.save_for_backward(Tensor._wrap(arg), input)
        ctx.conf = (k, s, p, d, xpad.shape, x.shape, blocks)
        idx = _flat_indices(arg, k, s, p, d, w) if with_indices else None
        out, idx = _keep(out, input._array), None if idx is None else _keep(idx, input._array)
        if ctx.unbatched:
            out, idx = out[0], None if idx is None else idx[0]
        if not with_indices:
            return Tensor._wrap(out)
        return Tensor._wrap(out), Tensor._wrap(idx)

    @staticmethod
    def array_backward(ctx, grad_output, grad_indices=None):
        arg, input = ctx.saved_tensors
        g = grad_output._array[None] if ctx.unbatched else grad_output._array
        gx = _keep(_max_scatter(g, arg._array, ctx.conf), input._array)
        return Tensor._wrap(gx[0] if ctx.unbatched else gx), None, None, None, None, None, None

    @staticmethod
    def backward(ctx, grad_output, grad_indices=None):
        arg, input = ctx.saved_tensors
        if ctx.unbatched:
            gx = MaxPoolGrad.apply(grad_output.unsqueeze(0), input.unsqueeze(0), arg, ctx.conf)
            return (gx.squeeze(0),) + (None,) * 6
        return (MaxPoolGrad.apply(grad_output, input, arg, ctx.conf),) + (None,) * 6


def _flat_indices(arg, k, s, p, d, w):
    """Each window's maximum as a flat index into its (H, W) input plane (torch's indices)."""
    xp = get_array_module(arg)
    ki, kj = xp.divmod(arg.astype(np.int64), k[1])
    hi = xp.arange(arg.shape[2]).reshape(-1, 1) * s[0] - p[0] + ki * d[0]
    wi = xp.arange(arg.shape[3]) * s[1] - p[1] + kj * d[1]
    return hi * w + wi


class MaxPoolGrad(Function):
    """Max-pool's backward (the gradient scattered to each window's maximum), differentiable:
    in the gradient its derivative gathers at the same positions; in the input it is zero."""

    node_name = "MaxPool2DWithIndicesBackwardBackward0"

    @staticmethod
    def forward(ctx, grad_output, input, arg, conf):
        ctx.conf = conf
        ctx.save_for_backward(arg)
        return Tensor._wrap(_keep(_max_scatter(grad_output._array, arg._array, conf),
                                  input._array))

    @staticmethod
    def backward(ctx, grad):
        arg, = ctx.saved_tensors
        k, s, p, d, _, shape, _ = ctx.conf
        flat = _flat_indices(arg._array, k, s, p, d, shape[3])
        return _gather_back(ctx, grad, flat, shape) + (None, None)


def _gather_back(ctx, grad, flat_idx, shape):
    """The derivative of a max-pool backward: ``grad`` gathered at each window's maximum (flat
    indices per plane), and a zero gradient for the pooled input (as torch)."""
    n, c, h, w = shape
    idx = Tensor._wrap(flat_idx.reshape(n, c, -1))
    gg = grad.reshape(n, c, h * w).gather(2, idx).reshape(flat_idx.shape)
    zero = Tensor._wrap(xp_of(grad).zeros(shape, grad._array.dtype)) \
        if ctx.needs_input_grad[1] else None
    return gg, zero


def _max_scatter(g, arg, conf):
    """The input gradient of max-pool: each output's gradient added at its window's maximum."""
    k, s, p, d, pshape, shape, blocks = conf
    xp = get_array_module(g)
    if blocks:
        # Non-overlapping windows: every output sends its gradient to one distinct input.
        n, c, h, w = shape
        ho, wo = g.shape[2:]
        offset = (xp.arange(k[0], dtype=np.intp)[:, None] * w + xp.arange(k[1])).reshape(-1)
        idx = xp.take(offset, arg.reshape(-1, wo))
        idx += xp.arange(0, n * c * h * w, k[0] * w, dtype=np.intp)[:, None]
        idx += xp.arange(0, w, k[1], dtype=np.intp)
        gx = xp.zeros(n * c * h * w, dtype=g.dtype)
        gx[idx.reshape(-1)] = g.reshape(-1)
        return gx.reshape(shape)
    gx = xp.zeros(pshape, dtype=g.dtype)
    for pos in range(k[0] * k[1]):
        sl = _window(gx, pos // k[1], pos % k[1], s, d, g.shape[2:])
        sl += keep_where(arg == pos, g)
    if pshape != shape:
        gx = xp.ascontiguousarray(gx[:, :, p[0]:p[0] + shape[2], p[1]:p[1] + shape[3]])
    return gx


def _avg_divisor(xp, out_hw, h, w, k, s, p, count_include_pad, divisor_override, dtype):
    """Each output's divisor (Ho, Wo): the window's size, less padding unless counted."""
    if divisor_override:
        return xp.full(out_hw, divisor_override, dtype=dtype)
    sizes = []
    for a, n in enumerate((h, w)):
        start = xp.arange(out_hw[a]) * s[a] - p[a]
        end = xp.minimum(start + k[a], n + p[a])
        if not count_include_pad:
            start, end = xp.maximum(start, 0), xp.minimum(end, n)
        sizes.append(end - start)
    return (sizes[0][:, None] * sizes[1][None, :]).astype(dtype)


def _int_average(total, div):
    """torch's integer average: the window sum wraps in the input's dtype, then an int64
    division that truncates toward zero."""
    t, d = total.astype(np.int64), div.astype(np.int64)
    q = t // d
    return q + ((q * d != t) & ((t < 0) != (d < 0)))


class AvgPool2d(Function):
    node_name = "AvgPool2DBackward0"

    @staticmethod
    def forward(ctx, input, k, s, p, ceil_mode, count_include_pad, divisor_override):
        ctx.unbatched = input.dim() == 3
        x = input._array[None] if ctx.unbatched else input._array
        h, w = x.shape[2:]
        d = (1, 1)
        out_hw = (_out(h, k[0], s[0], p[0], 1, ceil_mode), _out(w, k[1], s[1], p[1], 1, ceil_mode))
        xpad = _padded(x, p, out_hw, k, s, d, 0)
        div = _avg_divisor(xp_of(input), out_hw, h, w, k, s, p, count_include_pad,
                           divisor_override, x.dtype)
        if x.dtype.kind in "iu":
            out = _int_average(_windows(xpad, k, s, d, out_hw).sum(axis=(4, 5), dtype=x.dtype),
                               div)
        else:
            out = _windows(xpad, k, s, d, out_hw).sum(axis=(4, 5)) / div
        ctx.conf = (k, s, p, xpad.shape, x.shape)
        ctx.args = (k, s, p, ceil_mode, count_include_pad, divisor_override)
        ctx.save_for_backward(input, Tensor._wrap(div))    # (input: as torch, for double backward)
        out = _keep(out.astype(x.dtype, copy=False), input._array)
        return Tensor._wrap(out[0] if ctx.unbatched else out)

    @staticmethod
    def array_backward(ctx, grad_output):
        input, div = ctx.saved_tensors
        g = grad_output._array[None] if ctx.unbatched else grad_output._array
        gx = _keep(_avg_spread(g, div._array, ctx.conf), input._array)
        return Tensor._wrap(gx[0] if ctx.unbatched else gx), None, None, None, None, None, None

    @staticmethod
    def backward(ctx, grad_output):
        input, div = ctx.saved_tensors
        if ctx.unbatched:
            gx = AvgPoolGrad.apply(grad_output.unsqueeze(0), input.unsqueeze(0), div, ctx.conf,
                                   ctx.args)
            return (gx.squeeze(0),) + (None,) * 6
        return (AvgPoolGrad.apply(grad_output, input, div, ctx.conf, ctx.args),) + (None,) * 6


def _avg_spread(g, div, conf):
    """The input gradient of average pooling: each output's gradient / divisor over its window."""
    k, s, p, pshape, shape = conf
    xp = get_array_module(g)
    gw = xp.broadcast_to((g / div)[..., None, None], g.shape + tuple(k))
    gx = _scatter(gw, k, s, (1, 1), pshape)[:, :, p[0]:p[0] + shape[2], p[1]:p[1] + shape[3]]
    return xp.ascontiguousarray(gx)


class AvgPoolGrad(Function):
    """Average pooling's backward, differentiable: its adjoint is the pooling itself; in the
    input its derivative is zero."""

    node_name = "AvgPool2DBackwardBackward0"

    @staticmethod
    def forward(ctx, grad_output, input, div, conf, args):
        ctx.args = args
        return Tensor._wrap(_keep(_avg_spread(grad_output._array, div._array, conf),
                                  input._array))

    @staticmethod
    def backward(ctx, grad):
        zero = Tensor._wrap(xp_of(grad).zeros(grad._array.shape, grad._array.dtype)) \
            if ctx.needs_input_grad[1] else None
        return AvgPool2d.apply(grad, *ctx.args), zero, None, None, None


def _check(op, input, nd):
    if input.dim() not in (nd + 1, nd + 2) or 0 in tuple(input.shape)[-nd:]:
        if op.startswith("avg_pool") and input.dim() < nd + 1:
            if nd == 1:
                raise RuntimeError("Expected 2 to 3 dimensions, but got %d-dimensional tensor "
                                   "for argument #1 'self' (while checking arguments for "
                                   "avg_pool1d)" % input.dim())
            raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but "
                             "got -3)" % (-max(input.dim(), 1), max(input.dim(), 1) - 1))
        if op == "max_pool2d" and input.dim() not in (nd + 1, nd + 2):
            raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
        raise RuntimeError("%sExpected %dD or %dD (batch mode) tensor with optional 0 dim "
                           "batch size for input, but got:%s"
                           % ("max_pool1d: " if op == "max_pool1d" else "", nd + 1, nd + 2,
                              list(input.shape)))


def _check_args(op, input, k, s, p, d, ceil_mode, nd):
    """torch's argument checks of max_pool1d/2d, avg_pool1d/2d (1-d runs as 2-d but for
    max_pool1d), in torch's order; returns the output sizes."""
    if op == "max_pool1d":
        for name, v, lo in (("kernel_size", k, 1), ("stride", s, 1), ("padding", p, 0),
                            ("dilation", d, 1)):
            if v[0] < lo:
                raise RuntimeError("max_pool1d() %s must be %s, but got %d"
                                   % (name, "non-negative" if lo == 0 else
                                      "greater than zero", v[0]))
        if p[0] > k[0] // 2:
            raise RuntimeError("max_pool1d() padding should be at most half of kernel size, but "
                               "got padding=%d and kernel_size=%d" % (p[0], k[0]))
        out = _out(input.shape[-1], k[0], s[0], p[0], d[0], ceil_mode)
        if out < 1:
            raise RuntimeError("max_pool1d() Invalid computed output size: %d" % out)
        return
    k2, s2, p2, d2 = ((((0,) if t is p else (1,)) + t) if nd == 1 else t for t in (k, s, p, d))
    if 0 in s2:
        raise RuntimeError("stride should not be zero")
    for a in range(2):
        if p2[a] < 0:
            raise RuntimeError("pad must be non-negative, but got pad: %d" % p2[a])
        if p2[a] > (d2[a] * (k2[a] - 1) + 1) // 2:
            raise RuntimeError("pad should be at most half of effective kernel size, but got "
                               "pad=%d, kernel_size=%d and dilation=%d" % (p2[a], k2[a], d2[a]))
    if min(k2) <= 0:
        raise RuntimeError("kernel size should be greater than zero, but got kH: %d kW: %d" % k2)
    if min(s2) <= 0:
        raise RuntimeError("stride should be greater than zero, but got dH: %d dW: %d" % s2)
    if min(d2) <= 0:
        raise RuntimeError("dilation should be greater than zero, but got dilationH: %d "
                           "dilationW: %d" % d2)
    size = (1,) * (nd == 1) + tuple(input.shape[-nd:])
    out = tuple(_out(size[a], k2[a], s2[a], p2[a], d2[a], ceil_mode) for a in range(2))
    if min(out) < 1:
        c = input.shape[-nd - 1]
        raise RuntimeError("Given input size: (%dx%dx%d). Calculated output size: (%dx%dx%d). "
                           "Output size is too small" % ((c,) + size + (c,) + out))


def _check_dtype(op, input):
    """torch's NotImplementedError for the dtypes a pooling kernel has no version for."""
    x = input._array
    if op == "max_pool1d":
        not_implemented_for(x, "max_pool1d_impl", "biuc")
    elif op == "max_pool2d":
        not_implemented_for(x, "max_pool2d", "bc")
    elif x.dtype != np.int64:
        not_implemented_for(x, "avg_pool2d", "biuc")
    else:
        not_implemented_for(x, "avg_pool2d", "bc")


def _lift(input, nd):
    """(N, C, H, W) view of a 1-d or 2-d pooling input, and how to undo it."""
    # (a 2-d unbatched input goes to the node as it is, as torch's)
    unbatched = nd == 1 and input.dim() == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    if nd == 1:
        x = x.unsqueeze(2)

    def back(t):
        if nd == 1:
            t = t.squeeze(2)
        return t.squeeze(0) if unbatched else t
    return x, back


def _max_pool(op, nd, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    _check(op, input, nd)
    k = _tuple(kernel_size, nd)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) \
        else _tuple(stride, nd)
    p, d = _tuple(padding, nd), _tuple(dilation, nd)
    _check_args(op, input, k, s, p, d, ceil_mode, nd)
    _check_dtype("max_pool2d" if return_indices else op, input)
    if nd == 1:
        k, s, p, d = (1,) + k, (1,) + s, (0,) + p, (1,) + d
    x, back = _lift(input, nd)
    if not return_indices:
        return back(MaxPool2d.apply(x, k, s, p, d, ceil_mode, False))
    out, idx = MaxPool2d.apply(x, k, s, p, d, ceil_mode, True)
    return back(out), back(idx)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """1-D max pooling over ``(N, C, L)``. Matches ``torch.nn.functional.max_pool1d``."""
    return _max_pool("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2-D max pooling over ``(N, C, H, W)``; ties go to the first maximum, as torch."""
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def _avg_pool(op, nd, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override):
    _check(op, input, nd)
    k = _tuple(kernel_size, nd)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) \
        else _tuple(stride, nd)
    p = _tuple(padding, nd)
    _check_args(op, input, k, s, p, (1,) * nd, ceil_mode, nd)
    if divisor_override is not None and not divisor_override:
        raise RuntimeError("divisor must be not zero")
    _check_dtype(op, input)
    if nd == 1:
        k, s, p = (1,) + k, (1,) + s, (0,) + p
    x, back = _lift(input, nd)
    return back(AvgPool2d.apply(x, k, s, p, ceil_mode, count_include_pad, divisor_override))


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """1-D average pooling. Matches ``torch.nn.functional.avg_pool1d``."""
    return _avg_pool("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """2-D average pooling. Matches ``torch.nn.functional.avg_pool2d``."""
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def _bins(n_in, n_out):
    start = [(i * n_in) // n_out for i in range(n_out)]
    end = [-(-((i + 1) * n_in) // n_out) for i in range(n_out)]
    return start, end


def _out_size(output_size, shape, nd):
    if isinstance(output_size, (list, tuple)) and len(output_size) == nd:
        return tuple(shape[a] if output_size[a] is None else int(output_size[a])
                     for a in range(nd))
    return _tuple(output_size, nd) if output_size is not None else shape


def _bin_index(xp, n_in, n_out):
    """Adaptive pooling's bins along one dim: (n_out, kmax) input positions, which of them
    belong to the bin (bins differ in size by one at most), and each bin's size."""
    o = xp.arange(n_out)
    start = (o * n_in) // n_out
    size = -((-(o + 1) * n_in) // n_out) - start
    kmax = -(-n_in // n_out) + 1 if n_out else 0
    idx = start[:, None] + xp.arange(kmax)
    valid = idx < (start + size)[:, None]
    return xp.minimum(idx, max(n_in - 1, 0)), valid, size


def _covering_bins(xp, n_in, n_out):
    """The transpose of ``_bin_index``: (n_in, jmax) the bins each input position is in."""
    i = xp.arange(n_in)
    first = (i * n_out) // n_in
    last = ((i + 1) * n_out - 1) // n_in
    jmax = -(-n_out // n_in) + 1 if n_in else 0
    idx = first[:, None] + xp.arange(jmax)
    return xp.minimum(idx, max(n_out - 1, 0)), idx <= last[:, None]


def _gather_sum(arr, axis, idx, valid):
    """``out[..., i, ...] = sum_j arr[..., idx[i, j], ...]`` over ``valid[i, j]`` (no
    arithmetic on the left-out values, so inf and nan stay where torch has them)."""
    xp = get_array_module(arr)
    m, j = idx.shape
    t = xp.take(arr, idx.reshape(-1), axis=axis)
    t = t.reshape(arr.shape[:axis] + (m, j) + arr.shape[axis + 1:])
    mask = valid.reshape((m, j) + (1,) * (arr.ndim - axis - 1))
    return xp.where(mask, t, 0).sum(axis=axis + 1)


def _adaptive_avg(x, outs, transpose=False, in_shape=None):
    """Adaptive average pooling of ``x`` (..., *spatial) to ``outs``; ``transpose``: its
    adjoint, from ``x`` pooled back to ``in_shape``."""
    xp = get_array_module(x)
    out = x
    lead = x.ndim - len(outs)
    for a in range(len(outs)):
        n_in = in_shape[lead + a] if transpose else x.shape[lead + a]
        idx, valid, size = _bin_index(xp, n_in, outs[a])
        shape = (-1,) + (1,) * (len(outs) - a - 1)
        if transpose:
            out = out / size.reshape(shape).astype(out.dtype)
            cov, cvalid = _covering_bins(xp, n_in, outs[a])
            out = _gather_sum(out, lead + a, cov, cvalid)
        else:
            out = _gather_sum(out, lead + a, idx, valid) / size.reshape(shape).astype(out.dtype)
    return out.astype(x.dtype, copy=False)


class AdaptiveAvgPool(Function):
    """Adaptive average pooling over the trailing 2 or 3 dims of (N, C, ...)."""

    node_name = "AdaptiveAvgPool2DBackward0"
    edge_args = (0,)

    @staticmethod
    def forward(ctx, input, outs):
        if len(outs) == 3:
            ctx.set_node_name("AdaptiveAvgPool3DBackward0")
        ctx.outs = tuple(outs)
        ctx.save_for_backward(input)    # (as torch: for the shape, and double backward)
        out = _adaptive_avg(input._array, ctx.outs)
        return Tensor._wrap(out if len(outs) == 3 else _keep(out, input._array))

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        # (torch checks the dims from 1 on, batched or not)
        _empty_grad_check("adaptive_avg_pool%dd" % len(ctx.outs), grad_output, True)
        return AdaptiveAvgPoolGrad.apply(grad_output, input, ctx.outs), None


class AdaptiveAvgPoolGrad(Function):
    """Adaptive average pooling's backward (its adjoint), differentiable; zero in the input."""

    node_name = "AdaptiveAvgPool2DBackwardBackward0"
    edge_args = (0, 1)

    @staticmethod
    def forward(ctx, grad_output, input, outs):
        if len(outs) == 3:
            ctx.set_node_name("AdaptiveAvgPool3DBackwardBackward0")
        ctx.outs, ctx.shape = outs, tuple(input.shape)
        gx = _adaptive_avg(grad_output._array, outs, True, ctx.shape)
        return Tensor._wrap(gx if len(outs) == 3 else _keep(gx, input._array))

    @staticmethod
    def backward(ctx, grad):
        zero = Tensor._wrap(xp_of(grad).zeros(ctx.shape, grad._array.dtype)) \
            if ctx.needs_input_grad[1] else None
        return AdaptiveAvgPool.apply(grad, ctx.outs), zero, None


def _list_with_default(input, output_size):
    """torch.nn.functional's step before a 2-d/3-d adaptive pool: None entries of a sequence
    ``output_size`` take the input's trailing sizes (and the input needs more dims than it)."""
    if isinstance(output_size, int):
        return output_size
    if input.dim() <= len(output_size):
        raise ValueError("Input dimension should be at least %d" % (len(output_size) + 1))
    defaults = tuple(input.shape)[-len(output_size):] if len(output_size) else ()
    return [d if v is None else v for v, d in zip(output_size, defaults)]


def _adaptive_size_arg(op, output_size, nd):
    """torch's argument parser's TypeErrors for ``output_size`` (None entries only for 2-d+)."""
    head = "%s(): argument 'output_size' (position 2) must be tuple of ints" % op
    if isinstance(output_size, list) and nd > 1 and output_size and \
            isinstance(output_size[0], int) and not isinstance(output_size[0], bool):
        for v in output_size[1:]:
            if not isinstance(v, int):
                raise TypeError("%s(): argument 'output_size' failed to unpack the object at "
                                "pos 2 with error \"type must be tuple of ints,but got %s\""
                                % (op, type(v).__name__))
    if isinstance(output_size, (list, tuple)):
        for i, v in enumerate(output_size):
            if not isinstance(v, int) and not (v is None and nd > 1):
                raise TypeError("%s, but found element of type %s at pos %d"
                                % (head, type(v).__name__, i))
    elif isinstance(output_size, bool) or not isinstance(output_size, int) and (
            nd == 1 or isinstance(output_size, float)):
        raise TypeError("%s, not %s" % (head, type(output_size).__name__))


def _adaptive_size_len(op, output_size, nd, message):
    """torch's kernel checks of how many sizes a sequence ``output_size`` holds."""
    if not isinstance(output_size, (list, tuple)) or len(output_size) == nd:
        return
    if nd == 1:
        raise RuntimeError("%s() argument 'output_size' should contain one int (got %d)"
                           % (op, len(output_size)))
    raise RuntimeError(message)


def _adaptive_avg_pool(op, input, output_size, nd):
    """adaptive_avg_pool1d/2d/3d: 1-d runs as 2-d (as torch), an all-ones output is a mean."""
    if nd > 1:
        output_size = _list_with_default(input, output_size)
    _adaptive_size_arg(op, output_size, nd)
    if nd == 1 and input.dim() not in (2, 3):
        raise RuntimeError("Expected 2 to 3 dimensions, but got %d-dimensional tensor for "
                           "argument #1 'self' (while checking arguments for adaptive_avg_pool1d)"
                           % input.dim())
    _adaptive_size_len(op, output_size, nd, "%s: output_size must be %d" % (op, nd))
    shape = tuple(input.shape)
    outs = _out_size(output_size, shape[-nd:], nd)
    k = max(nd, 2)
    if nd == 1:
        input, outs = input.unsqueeze(-2), (1,) + tuple(outs)
    if any(o < 0 for o in outs):
        raise RuntimeError("adaptive_avg_pool%dd: elements of output_size must be greater than "
                           "or equal to 0 but received {%s}"
                           % (k, ("%d, %d" if k == 2 else "%d, %d,%d") % tuple(outs)))
    if all(o == 1 for o in outs) and input.dim() >= k:
        if not (input.is_floating_point() or input.is_complex()):
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either "
                               "a floating point or complex dtype. Got: %s"
                               % _dt.scalar_type_name(input._array.dtype))
        out = input.mean(dim=tuple(range(-k, 0)), keepdim=True)
        if input.dim() == k + 2 and _channels_last_order(input._array) is not None:
            # torch restrides it in place to (C, 1, C, C[, C]): channels-last for 1x1 planes
            n, c = out.shape[:2]
            out._array = out._array.reshape((n,) + (1,) * k + (c,)).transpose(
                (0, k + 1) + tuple(range(1, k + 1)))
        return out.squeeze(-2) if nd == 1 else out
    if input.dim() not in (k + 1, k + 2):
        raise RuntimeError("adaptive_avg_pool%dd(): Expected %dD or %dD tensor, but got %s"
                           % (k, k + 1, k + 2, list(input.shape)))
    for a in range(1 if k == 3 else input.dim() - 2, input.dim()):     # (2-d: H and W only)
        if input.shape[a] == 0:
            raise RuntimeError("adaptive_avg_pool%dd(): Expected input to have non-zero size for "
                               "non-batch dimensions, but input has sizes %s with dimension %d "
                               "being empty" % (k, list(input.shape), a))
    kernel = "adaptive_avg_pool2d" if k == 2 else "adaptive_avg_pool3d_cpu"
    # NOTE: torch's 2-d kernel returns an empty output before its dtype dispatch, so only
    # autograd's complex check sees it.
    if k == 3 or math.prod(input.shape[:-k]) * math.prod(outs):
        not_implemented_for(input._array, kernel, "biuc")
    if input.is_complex() and input.requires_grad and is_grad_enabled():
        raise RuntimeError("_%s does not support automatic differentiation for outputs with "
                           "complex dtype." % kernel.replace("_cpu", ""))
    out = AdaptiveAvgPool.apply(input, tuple(outs))
    return out.squeeze(-2) if nd == 1 else out


def adaptive_avg_pool1d(input, output_size):
    """1-D adaptive average pooling over ``(N, C, L)``: the mean of ``output_size`` near-equal
    bins. Matches ``torch.nn.functional.adaptive_avg_pool1d``."""
    return _adaptive_avg_pool("adaptive_avg_pool1d", input, output_size, 1)


def adaptive_avg_pool2d(input, output_size):
    """2-D adaptive average pooling over ``(N, C, H, W)``. Matches torch's."""
    return _adaptive_avg_pool("adaptive_avg_pool2d", input, output_size, 2)


def adaptive_avg_pool3d(input, output_size):
    """3-D adaptive average pooling over ``(N, C, D, H, W)``. Matches torch's."""
    return _adaptive_avg_pool("adaptive_avg_pool3d", input, output_size, 3)


def _empty_grad_check(op, grad, batched):
    """torch's error for a backward through an empty adaptive pooling output."""
    for a in range(1 if batched else 0, grad.dim()):
        if grad.shape[a] == 0:
            raise RuntimeError("%s_backward(): Expected grad_output to have non-zero size for "
                               "non-batch dimensions, but grad_output has sizes %s with "
                               "dimension %d being empty" % (op, list(grad.shape), a))


def _adaptive_max_pool(op, input, output_size, nd):
    """adaptive_max_pool1d/2d (1-d runs as 2-d, as torch): (output, indices)."""
    if nd > 1:
        output_size = _list_with_default(input, output_size)
    _adaptive_size_arg(op, output_size, nd)
    if input.dim() not in (nd + 1, nd + 2):
        if nd == 1:
            raise RuntimeError("Expected 2 to 3 dimensions, but got %d-dimensional tensor for "
                               "argument #1 'self' (while checking arguments for "
                               "adaptive_max_pool1d)" % input.dim())
        raise RuntimeError("adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: %s"
                           % list(input.shape))
    _adaptive_size_len(op, output_size, nd,
                       "%s(): internal error: output_size.size() must be %d" % (op, nd))
    outs = tuple(_out_size(output_size, tuple(input.shape[-nd:]), nd))
    x = input.unsqueeze(-2) if nd == 1 else input
    outs = (1,) + outs if nd == 1 else outs
    for o in outs:
        if o < 0:
            raise RuntimeError("Trying to create tensor with negative dimension %d: %s"
                               % (o, list(x.shape[:-2]) + list(outs)))
    for a in range(1, input.dim()):
        if input.shape[a] == 0:
            raise RuntimeError("%s(): Expected input to have non-zero size for non-batch "
                               "dimensions, but input has sizes %s with dimension %d being "
                               "empty" % (op, list(input.shape), a))
    not_implemented_for(input._array, "adaptive_max_pool2d", "biuc")
    out, idx = MaxPoolIndexed.apply(x, _adaptive_max_find(outs), 2,
                                    ("AdaptiveMaxPool2DBackward0",
                                     "AdaptiveMaxPool2DBackwardBackward0"))
    return (out.squeeze(-2), idx.squeeze(-2)) if nd == 1 else (out, idx)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Maximum over ``output_size`` near-equal bins per spatial dim."""
    out, idx = _adaptive_max_pool("adaptive_max_pool2d", input, output_size, 2)
    return (out, idx) if return_indices else out


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """1-D adaptive max pooling over ``(N, C, L)``."""
    out, idx = _adaptive_max_pool("adaptive_max_pool1d", input, output_size, 1)
    return (out, idx) if return_indices else out


def _plane_scatter(g, idx, shape, nd):
    """Zeros of ``shape`` with ``g`` added at ``idx``, flat indices into the last ``nd`` dims."""
    xp = get_array_module(g)
    planes = math.prod(shape[:-nd])
    gx = xp.zeros((planes, math.prod(shape[-nd:])), dtype=g.dtype)
    per = math.prod(idx.shape[-nd:])
    backend_of(gx).scatter_add(gx, (xp.arange(planes)[:, None], idx.reshape(planes, per)),
                               g.reshape(planes, per))
    return gx.reshape(shape)


def _plane_take(x, idx, nd):
    """``x`` at ``idx``, flat indices into its last ``nd`` dims (one set per plane)."""
    xp = get_array_module(x)
    planes = math.prod(x.shape[:-nd])
    flat = x.reshape(planes, math.prod(x.shape[-nd:]))
    per = math.prod(idx.shape[-nd:])
    return xp.take_along_axis(flat, idx.reshape(planes, per), axis=1).reshape(idx.shape)


# the MaxPoolIndexed nodes whose output, indices and input gradient keep a channels-last
# input's layout (torch's adaptive_max_pool3d and fractional max pooling give them contiguous)
_KEEPS_LAYOUT = {"MaxPool3DWithIndicesBackward0", "MaxPool3DWithIndicesBackwardBackward0",
                 "AdaptiveMaxPool2DBackward0", "AdaptiveMaxPool2DBackwardBackward0"}


class MaxPoolIndexed(Function):
    """A max pooling whose windows are found on the arrays (``find``: the flat index of each
    window's maximum per plane of the last ``nd`` dims): the output is the input there."""

    node_name = "MaxPool3DWithIndicesBackward0"
    edge_args = (0,)

    @staticmethod
    def forward(ctx, input, find, nd, names):
        ctx.set_node_name(names[0])
        ctx.nd, ctx.grad_name = nd, names[1]
        x = input._array
        idx = find(x)
        out = _plane_take(x, idx, nd)
        if names[0] in _KEEPS_LAYOUT:
            out, idx = _keep(out, x), _keep(idx, x)
        indices = Tensor._wrap(idx)
        # NOTE: the indices output is saved (as torch): changing it in place is an error.
        ctx.save_for_backward(input, indices)
        return Tensor._wrap(out), indices

    @staticmethod
    def backward(ctx, grad_output, grad_indices=None):
        input, idx = ctx.saved_tensors
        if ctx.grad_name.startswith("Adaptive"):
            _empty_grad_check("adaptive_max_pool%dd" % ctx.nd, grad_output,
                              input.dim() == ctx.nd + 2)
        return PlaneScatter.apply(grad_output, input, idx.detach(), ctx.nd, ctx.grad_name), \
            None, None, None


class PlaneScatter(Function):
    """The backward of ``MaxPoolIndexed``: each gradient added at its window's maximum;
    differentiable (a gather at the same places; zero in the input)."""

    node_name = "MaxPool3DWithIndicesBackwardBackward0"
    edge_args = (0, 1)

    @staticmethod
    def forward(ctx, grad_output, input, idx, nd, name):
        ctx.set_node_name(name)
        ctx.shape, ctx.nd = tuple(input.shape), nd
        ctx.save_for_backward(idx)
        gx = _plane_scatter(grad_output._array, idx._array, ctx.shape, nd)
        return Tensor._wrap(_keep(gx, input._array) if name in _KEEPS_LAYOUT else gx)

    @staticmethod
    def backward(ctx, grad):
        idx, = ctx.saved_tensors
        nd, shape = ctx.nd, ctx.shape
        planes = math.prod(shape[:-nd])
        flat = grad.reshape(planes, math.prod(shape[-nd:]))
        gg = flat.gather(1, idx.reshape(planes, -1)).reshape(tuple(idx.shape))
        zero = Tensor._wrap(xp_of(grad).zeros(shape, grad._array.dtype)) \
            if ctx.needs_input_grad[1] else None
        return gg, zero, None, None, None


def _first_max(vals, valid):
    """torch's pick per window (last axis): the last nan, else the first maximum among the
    ``valid`` entries (a window of -inf picks its first valid entry)."""
    xp = get_array_module(vals)
    if vals.shape[-1] == 0:
        return xp.zeros(vals.shape[:-1], dtype=np.int64)
    floating = vals.dtype.kind in "fV"
    low = -np.inf if floating else np.iinfo(vals.dtype).min
    vv = xp.where(valid, vals, low)
    isn = xp.isnan(vv) if floating else None
    m = (xp.where(isn, low, vv) if floating else vv).max(axis=-1, keepdims=True)
    arg = xp.argmax((vv == m) & valid, axis=-1)
    if floating:
        last = vals.shape[-1] - 1 - xp.argmax(isn[..., ::-1], axis=-1)
        arg = xp.where(isn.any(axis=-1), last, arg)
    return arg


def _combine(pos, valid, sizes):
    """Per-dim window positions (out_a, k_a) and masks -> flat (*outs, *k) indices, mask."""
    nd = len(pos)
    flat, ok = 0, True
    mult = 1
    for a in reversed(range(nd)):
        shape = [1] * (2 * nd)
        shape[a], shape[nd + a] = pos[a].shape
        flat = flat + pos[a].reshape(shape) * mult
        ok = ok & valid[a].reshape(shape)
        mult *= sizes[a]
    return flat, ok


def _windowed_argmax(x, flat, ok, nd):
    """The flat index (per plane) of each window's maximum; ``flat``/``ok``: (*outs, *k)."""
    xp = get_array_module(x)
    outs = flat.shape[:nd]
    m, kk = math.prod(outs), math.prod(flat.shape[nd:])
    planes = x.reshape(math.prod(x.shape[:-nd]), math.prod(x.shape[-nd:]))
    vals = xp.take(planes, flat.reshape(-1), axis=1).reshape((planes.shape[0], m, kk))
    fl = xp.broadcast_to(flat.reshape(1, m, kk), vals.shape)
    arg = _first_max(vals, xp.broadcast_to(ok, flat.shape).reshape(1, m, kk))
    idx = xp.take_along_axis(fl, arg[..., None], axis=-1)[..., 0]
    return idx.reshape(x.shape[:-nd] + tuple(outs)).astype(np.int64)


def _max_pool3d_find(k, s, p, d, outs):
    def find(x):
        xp = get_array_module(x)
        sizes = x.shape[-3:]
        pos, valid = [], []
        for a in range(3):
            q = xp.arange(outs[a])[:, None] * s[a] - p[a] + xp.arange(k[a]) * d[a]
            valid.append((q >= 0) & (q < sizes[a]))
            pos.append(xp.clip(q, 0, sizes[a] - 1))
        flat, ok = _combine(pos, valid, sizes)
        return _windowed_argmax(x, flat, ok, 3)
    return find


def _pool3d_args(op, input, kernel_size, stride, padding, dilation, ceil_mode):
    """torch's checks of max_pool3d/avg_pool3d; (k, s, p, d, output sizes)."""
    if input.dim() not in (4, 5) or 0 in tuple(input.shape)[-4:]:
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    k = _tuple(kernel_size, 3)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) \
        else _tuple(stride, 3)
    p, d = _tuple(padding, 3), _tuple(dilation, 3)
    if 0 in s:
        raise RuntimeError("stride should not be zero")
    for a in range(3):
        if p[a] < 0:
            raise RuntimeError("pad must be non-negative, but got pad: %d" % p[a])
        if p[a] > (d[a] * (k[a] - 1) + 1) // 2:
            raise RuntimeError("pad should be at most half of effective kernel size, but got "
                               "pad=%d, kernel_size=%d and dilation=%d" % (p[a], k[a], d[a]))
    if min(k) <= 0:
        raise RuntimeError("kernel size should be greater than zero, but got kT: %d kH: %d "
                           "kW: %d" % k)
    if min(s) <= 0:
        raise RuntimeError("stride should be greater than zero, but got dT: %d dH: %d dW: %d"
                           % s)
    if min(d) <= 0:
        raise RuntimeError("dilation should be greater than zero, but got dilationT: %d "
                           "dilationH: %d dilationW: %d" % d)
    size = tuple(input.shape[-3:])
    outs = tuple(_out(size[a], k[a], s[a], p[a], d[a], ceil_mode) for a in range(3))
    if op == "avg_pool3d" and any(size[a] < k[a] for a in range(3)):   # (unpadded, as torch)
        raise RuntimeError("input image (T: %d H: %d W: %d) smaller than kernel size (kT: %d "
                           "kH: %d kW: %d)" % (size + k))
    if min(outs) < 1:
        c = input.shape[-4]
        raise RuntimeError("Given input size: (%dx%dx%dx%d). Calculated output size: "
                           "(%dx%dx%dx%d). Output size is too small" % ((c,) + size + (c,) + outs))
    return k, s, p, d, outs


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """3-D max pooling over ``(N, C, D, H, W)``; ties go to the first maximum, as torch.

    Matches ``torch.nn.functional.max_pool3d``.
    """
    k, s, p, d, outs = _pool3d_args("max_pool3d", input, kernel_size, stride, padding, dilation,
                                    ceil_mode)
    not_implemented_for(input._array, "max_pool3d", "bc")
    out, idx = MaxPoolIndexed.apply(input, _max_pool3d_find(k, s, p, d, outs), 3,
                                    ("MaxPool3DWithIndicesBackward0",
                                     "MaxPool3DWithIndicesBackwardBackward0"))
    return (out, idx) if return_indices else out


def _adaptive_max_find(outs):
    def find(x):
        xp = get_array_module(x)
        nd = len(outs)
        sizes = x.shape[-nd:]
        pos, valid = [], []
        for a in range(nd):
            idx, ok, _ = _bin_index(xp, sizes[a], outs[a])
            pos.append(idx)
            valid.append(ok)
        flat, ok = _combine(pos, valid, sizes)
        return _windowed_argmax(x, flat, ok, nd)
    return find


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """3-D adaptive max pooling over ``(N, C, D, H, W)``. Matches torch's."""
    output_size = _list_with_default(input, output_size)
    _adaptive_size_arg("adaptive_max_pool3d", output_size, 3)
    if input.dim() not in (4, 5):
        raise RuntimeError("adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: %s"
                           % list(input.shape))
    _adaptive_size_len("adaptive_max_pool3d", output_size, 3,
                       "adaptive_max_pool3d(): internal error: output_size.size() must be 3")
    outs = _out_size(output_size, tuple(input.shape[-3:]), 3)
    for o in outs:
        if o < 0:
            raise RuntimeError("Trying to create tensor with negative dimension %d: %s"
                               % (o, list(input.shape[:-3]) + list(outs)))
    for a in range(1, input.dim()):
        if input.shape[a] == 0:
            raise RuntimeError("adaptive_max_pool3d(): Expected input to have non-zero size for "
                               "non-batch dimensions, but input has sizes %s with dimension %d "
                               "being empty" % (list(input.shape), a))
    not_implemented_for(input._array, "adaptive_max_pool3d_cpu", "biuc")
    out, idx = MaxPoolIndexed.apply(input, _adaptive_max_find(outs), 3,
                                    ("AdaptiveMaxPool3DBackward0",
                                     "AdaptiveMaxPool3DBackwardBackward0"))
    return (out, idx) if return_indices else out


def _avg_divisor_nd(xp, outs, sizes, k, s, p, count_include_pad, divisor_override, dtype):
    """Each output's divisor (*outs): the window's size, less padding unless counted."""
    if divisor_override:
        return xp.full(outs, divisor_override, dtype=dtype)
    div = xp.ones(outs, dtype=dtype)
    for a, n in enumerate(sizes):
        start = xp.arange(outs[a]) * s[a] - p[a]
        end = xp.minimum(start + k[a], n + p[a])
        if not count_include_pad:
            start, end = xp.maximum(start, 0), xp.minimum(end, n)
        div = div * (end - start).reshape((-1,) + (1,) * (len(outs) - a - 1)).astype(dtype)
    return div


def _kernel_slices(offset, s, outs):
    """The slices of the last dims that kernel position ``offset`` sees in every window."""
    return (Ellipsis,) + tuple(slice(i, i + s[a] * (outs[a] - 1) + 1, s[a])
                               for a, i in enumerate(offset))


class AvgPool3d(Function):
    node_name = "AvgPool3DBackward0"
    edge_args = (0,)

    @staticmethod
    def forward(ctx, input, k, s, p, outs, count_include_pad, divisor_override):
        x = input._array
        xp = xp_of(input)
        sizes = x.shape[-3:]
        extra = [max(0, (outs[a] - 1) * s[a] + k[a] - sizes[a] - p[a]) for a in range(3)]
        widths = ((0, 0),) * (x.ndim - 3) + tuple((p[a], extra[a]) for a in range(3))
        xpad = xp.pad(x, widths) if any(p) or any(extra) else x
        st = xpad.strides
        lead = x.ndim - 3
        win = backend_of(xpad).as_strided(
            xpad, xpad.shape[:lead] + tuple(outs) + tuple(k),
            st[:lead] + tuple(st[lead + a] * s[a] for a in range(3)) + st[lead:])
        acc = np.float64 if x.dtype.kind in "iu" else x.dtype
        div = _avg_divisor_nd(xp, outs, sizes, k, s, p, count_include_pad, divisor_override,
                              acc)
        if x.dtype.kind in "iu":
            out = _int_average(win.sum(axis=(-3, -2, -1), dtype=x.dtype), div)
        else:
            out = win.sum(axis=(-3, -2, -1), dtype=acc) / div
        ctx.conf = (k, s, p, outs, xpad.shape, x.shape)
        ctx.args = (k, s, p, outs, count_include_pad, divisor_override)
        ctx.save_for_backward(input, Tensor._wrap(div))
        return Tensor._wrap(xp.ascontiguousarray(out.astype(x.dtype, copy=False)))

    @staticmethod
    def backward(ctx, grad_output):
        input, div = ctx.saved_tensors
        return (AvgPool3dGrad.apply(grad_output, input, div, ctx.conf, ctx.args),) + (None,) * 6


class AvgPool3dGrad(Function):
    """3-D average pooling's backward, differentiable: its adjoint is the pooling itself; in
    the input its derivative is zero."""

    node_name = "AvgPool3DBackwardBackward0"
    edge_args = (0, 1)

    @staticmethod
    def forward(ctx, grad_output, input, div, conf, args):
        k, s, p, outs, pshape, shape = conf
        ctx.args, ctx.shape = args, shape
        g = grad_output._array / div._array
        gx = xp_of(grad_output).zeros(pshape, dtype=g.dtype)
        for offset in itertools.product(*(range(n) for n in k)):
            gx[_kernel_slices(offset, s, outs)] += g
        crop = (Ellipsis,) + tuple(slice(p[a], p[a] + shape[-3 + a]) for a in range(3))
        return Tensor._wrap(xp_of(grad_output).ascontiguousarray(gx[crop]))

    @staticmethod
    def backward(ctx, grad):
        zero = Tensor._wrap(xp_of(grad).zeros(ctx.shape, grad._array.dtype)) \
            if ctx.needs_input_grad[1] else None
        return AvgPool3d.apply(grad, *ctx.args), zero, None, None, None


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """3-D average pooling over ``(N, C, D, H, W)``. Matches ``torch.nn.functional.avg_pool3d``.
    """
    input, = _autocast.inputs("fp32", (input,))
    k, s, p, _, outs = _pool3d_args("avg_pool3d", input, kernel_size, stride, padding, 1,
                                    ceil_mode)
    if divisor_override is not None and not divisor_override:
        raise RuntimeError("divisor must be not zero")
    if input._array.dtype.itemsize == 2 and _dt.kind(input._array.dtype) == "f":
        raise NotImplementedError("\"avg_pool3d_out_frame\" not implemented for '%s'"
                                  % _dt.scalar_type_name(input._array.dtype))
    if input._array.dtype != np.int64:
        not_implemented_for(input._array, "avg_pool3d_out_frame", "biuc")
    not_implemented_for(input._array, "avg_pool3d_out_frame", "bc")
    return AvgPool3d.apply(input, k, s, p, outs, count_include_pad, divisor_override)


def _fractional_starts(xp, sample, n_in, n_out, pool):
    """torch's window starts: ``int((i + u) * alpha) - int(u * alpha)`` in the input's dtype,
    the last window flush with the end. ``sample``: (P,) uniforms; returns (P, n_out)."""
    seq = xp.zeros(sample.shape + (n_out,), dtype=np.int64)
    if n_out > 1:
        alpha = sample.dtype.type(n_in - pool) / sample.dtype.type(n_out - 1)
        i = xp.arange(n_out - 1).astype(sample.dtype)
        start = ((i + sample[..., None]) * alpha).astype(np.int64)
        seq[..., :-1] = start - (sample * alpha).astype(np.int64)[..., None]
    if n_out > 0:
        seq[..., -1] = n_in - pool
    return seq


def _fractional_find(samples, k, outs):
    """Each plane's windows from its samples (torch's order: 2-d (w, h); 3-d (t, h, w))."""
    def find(x):
        xp = get_array_module(x)
        nd = len(k)
        sizes = x.shape[-nd:]
        if not math.prod(x.shape[:-nd]) or not math.prod(outs):
            return xp.zeros(x.shape[:-nd] + tuple(outs), dtype=np.int64)
        u = samples.reshape(-1, nd)
        order = (1, 0) if nd == 2 else (0, 1, 2)
        flat, mult = 0, 1
        for a in reversed(range(nd)):
            st = _fractional_starts(xp, u[:, order[a]], sizes[a], outs[a], k[a])
            shape = [u.shape[0]] + [1] * (2 * nd)
            shape[1 + a] = outs[a]
            kshape = [1] * (1 + 2 * nd)
            kshape[1 + nd + a] = k[a]
            flat = flat + (st.reshape(shape) + xp.arange(k[a]).reshape(kshape)) * mult
            mult *= sizes[a]
        planes = x.reshape(math.prod(x.shape[:-nd]), math.prod(sizes))
        flat = xp.broadcast_to(flat.reshape(u.shape[0], 1, -1),
                               (u.shape[0], planes.shape[0] // u.shape[0], flat[0].size))
        flat = flat.reshape(planes.shape[0], math.prod(outs), -1)
        vals = xp.take_along_axis(planes, flat.reshape(planes.shape[0], -1), axis=1)
        arg = _first_max(vals.reshape(flat.shape), xp.ones((1,) * 3, dtype=bool))
        idx = xp.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
        return idx.reshape(x.shape[:-nd] + tuple(outs))
    return find


_FRAC_DIM_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}


def fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices,
                        _random_samples, nd):
    """2-d/3-d max pooling over pseudo-random overlapping windows (Graham, 2014), as torch's
    ``fractional_max_pool2d``/``3d`` (``_random_samples``: (N, C, nd) uniforms)."""
    name = "fractional_max_pool%dd" % nd
    if output_size is None and output_ratio is None:
        raise ValueError("%s requires specifying either an output_size or an output_ratio"
                         % name)
    sizes = tuple(input.shape[-nd:])
    k = _tuple(kernel_size, nd)
    if output_size is None and nd == 2:     # (torch's Python takes len() of a 2-d ratio)
        if len(output_ratio) > 2:
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a single "
                             "Int or tuple of Ints.")
    if output_size is None:
        ratio = tuple(float(v) for v in output_ratio) if isinstance(
            output_ratio, (list, tuple)) else (float(output_ratio),) * nd
        outs = tuple(int(sizes[a] * ratio[a]) for a in range(nd))
    else:
        outs = _tuple(output_size, nd)
    n = 1 if input.dim() == nd + 1 else input.shape[0]
    if _random_samples is None:     # (torch's Python draws them before the kernel's checks)
        if input._array.dtype.kind in "biu":
            not_implemented_for(input._array, "check_uniform_bounds", "biu")   # (torch.rand's)
        _random_samples = rand(n, input.size(-nd - 1), nd, dtype=input.dtype,
                               device=input.device)
    where = name if nd == 2 else name + "_out"
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError("%s(): Expected %dD or %dD tensor, but got: %s"
                           % (where, nd + 1, nd + 2, list(input.shape)))
    for i in range(1, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError("%s(): Expected input to have non-zero size for non-batch "
                               "dimensions, but got%s with dimension %d being empty."
                               % (where, list(input.shape), i))
    for a in range(nd):
        # NOTE: torch's 3-d check is strict (a window may not end on the last element)
        if outs[a] + k[a] - 1 > sizes[a] - (nd == 3):
            what = _FRAC_DIM_NAMES[nd][a]
            raise RuntimeError("%s(): pool %s %d too large relative to input %s %d"
                               % (name if nd == 2 else name + "_out", what, k[a], what,
                                  sizes[a]))
    _check_samples(input, _random_samples, n, nd)
    if input.numel() and math.prod(outs):
        not_implemented_for(input._array, name + "_out_frame", "biuc")
    if input.is_complex() and is_grad_enabled() and input.requires_grad:
        raise RuntimeError("%s does not support automatic differentiation for outputs with "
                           "complex dtype." % name)
    _random_samples = _random_samples[:n]
    names = ("FractionalMaxPool%dDBackward0" % nd, "FractionalMaxPool%dDBackwardBackward0" % nd)
    out, idx = MaxPoolIndexed.apply(input, _fractional_find(_random_samples._array, k, outs),
                                    nd, names)
    return (out, idx) if return_indices else out


def _check_samples(input, samples, n, nd):
    """torch's checks of ``_random_samples`` against the input: (>= N, C, nd), same dtype."""
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.dim() != 3:
        raise RuntimeError("Expect _random_samples to have 3 dimensions, got %d" % samples.dim())
    if samples.shape[0] < n:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != input.shape[-nd - 1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != nd:
        raise RuntimeError("Expect _random_samples.size(2) equals to %d; got %d."
                           % (nd, samples.shape[2]))


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """2-D fractional max pooling. Matches ``torch.nn.functional.fractional_max_pool2d``."""
    return fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices,
                               _random_samples, 2)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """3-D fractional max pooling. Matches ``torch.nn.functional.fractional_max_pool3d``."""
    return fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices,
                               _random_samples, 3)


class MaxUnpool(Function):
    """Each value placed at its flat index (per plane of the last ``nd`` dims) in zeros."""

    node_name = "MaxUnpool2DBackward0"
    edge_args = (0,)

    @staticmethod
    def forward(ctx, input, indices, outs):
        nd = len(outs)
        ctx.set_node_name("MaxUnpool%dDBackward0" % nd)
        x, idx = input._array, indices._array
        xp = xp_of(input)
        planes = math.prod(x.shape[:-nd])
        out = xp.zeros((planes, math.prod(outs)), dtype=x.dtype)
        per = math.prod(x.shape[-nd:])
        out[xp.arange(planes)[:, None], idx.reshape(planes, per)] = x.reshape(planes, per)
        ctx.nd = nd
        ctx.save_for_backward(indices)
        return Tensor._wrap(out.reshape(x.shape[:-nd] + tuple(outs)))

    @staticmethod
    def backward(ctx, grad_output):
        idx, = ctx.saved_tensors
        nd = ctx.nd
        planes = math.prod(idx.shape[:-nd])
        flat = grad_output.reshape(planes, math.prod(grad_output.shape[-nd:]))
        per = math.prod(idx.shape[-nd:])
        return flat.gather(1, idx.reshape(planes, per)).reshape(tuple(idx.shape)), None, None


def max_unpool(input, indices, kernel_size, stride, padding, output_size, nd):
    """The partial inverse of ``max_pool{nd}d``: values at their indices in zeros (1-d runs
    as 2-d, as torch)."""
    k = _tuple(kernel_size, nd)
    s = _tuple(stride, nd) if stride is not None else k
    p = _tuple(padding, nd)
    sizes = tuple(input.shape[-nd:])
    default = tuple((sizes[a] - 1) * s[a] - 2 * p[a] + k[a] for a in range(nd))
    if output_size is None:
        outs = default
    else:
        if len(output_size) == nd + 2:
            output_size = output_size[2:]
        if len(output_size) != nd:
            raise ValueError("output_size should be a sequence containing %d or %d elements, "
                             "but it has a length of '%d'" % (nd, nd + 2, len(output_size)))
        outs = tuple(output_size)
        for a in range(nd):
            lo, hi = default[a] - s[a], default[a] + s[a]
            if not lo < outs[a] < hi:
                raise ValueError("invalid output_size \"%s\" (dim %d must be between %d and %d)"
                                 % (output_size, a, lo, hi))
    _check_unpool(input, indices, tuple(outs) + ((1,) if nd == 1 else ()),
                  "max_unpool3d" if nd == 3 else "max_unpool2d")
    if nd == 1:
        out = MaxUnpool.apply(input.unsqueeze(-1), indices.unsqueeze(-1), tuple(outs) + (1,))
        return out.squeeze(-1)
    return MaxUnpool.apply(input, indices, tuple(outs))


def _check_unpool(input, indices, outs, kernel):
    """torch's max_unpool kernels: floating types only (an empty input runs none), and every
    index inside its output plane."""
    if indices._array.dtype != np.int64:
        got = "" if kernel == "max_unpool3d" else \
            " but got: %s" % _dt.scalar_type_name(indices._array.dtype)
        raise RuntimeError("elements in indices should be type int64" + got)
    if input.numel() == 0:
        if input.is_complex() and input.requires_grad and is_grad_enabled():
            raise RuntimeError("%s does not support automatic differentiation for outputs with "
                               "complex dtype." % kernel)
        return
    not_implemented_for(input._array, kernel, "biuc")
    idx = indices._array.reshape(-1)
    bad = (idx < 0) | (idx >= math.prod(outs))
    if bad.any():
        raise RuntimeError("Found an invalid max index: %d (output volumes are of size %s)"
                           % (int(idx[bad][-1]), "x".join(map(str, outs))))
