"""Pooling: max_pool1d/2d, avg_pool1d/2d, adaptive_avg_pool1d/2d, adaptive_max_pool1d/2d.

Windows are strided views; backward loops over kernel positions only, never over pixels.
"""
import numpy as np

from ..autograd.function import Function
from ..backend import backend_of, get_array_module
from ..tensor import Tensor
from ._util import keep_where, xp_of
from .matmul import matmul

__all__ = ["max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d"]


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
    lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    out = xp.full(arg.shape, lowest, dtype=x.dtype)
    for pos in range(kk):
        i, j = divmod(pos, k[1])
        v = _window(x, i, j, s, d, out_hw)
        upd = v > out
        if x.dtype.kind == "f":
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
        x = input._array
        xp = xp_of(input)
        h, w = x.shape[2:]
        out_hw = (_out(h, k[0], s[0], p[0], d[0], ceil_mode),
                  _out(w, k[1], s[1], p[1], d[1], ceil_mode))
        fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
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
        if not with_indices:
            return Tensor._wrap(out)
        return Tensor._wrap(out), Tensor._wrap(_flat_indices(arg, k, s, p, d, w))

    @staticmethod
    def array_backward(ctx, grad_output, grad_indices=None):
        arg, _ = ctx.saved_tensors
        return Tensor._wrap(_max_scatter(grad_output._array, arg._array, ctx.conf)), None, None, \
            None, None, None, None

    @staticmethod
    def backward(ctx, grad_output, grad_indices=None):
        arg, input = ctx.saved_tensors
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
        return Tensor._wrap(_max_scatter(grad_output._array, arg._array, conf))

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


class AvgPool2d(Function):
    node_name = "AvgPool2DBackward0"

    @staticmethod
    def forward(ctx, input, k, s, p, ceil_mode, count_include_pad, divisor_override):
        x = input._array
        h, w = x.shape[2:]
        d = (1, 1)
        out_hw = (_out(h, k[0], s[0], p[0], 1, ceil_mode), _out(w, k[1], s[1], p[1], 1, ceil_mode))
        xpad = _padded(x, p, out_hw, k, s, d, 0)
        div = _avg_divisor(xp_of(input), out_hw, h, w, k, s, p, count_include_pad,
                           divisor_override, x.dtype)
        out = _windows(xpad, k, s, d, out_hw).sum(axis=(4, 5)) / div
        ctx.conf = (k, s, p, xpad.shape, x.shape)
        ctx.args = (k, s, p, ceil_mode, count_include_pad, divisor_override)
        ctx.save_for_backward(input, Tensor._wrap(div))    # (input: as torch, for double backward)
        return Tensor._wrap(out.astype(x.dtype, copy=False))

    @staticmethod
    def array_backward(ctx, grad_output):
        _, div = ctx.saved_tensors
        return Tensor._wrap(_avg_spread(grad_output._array, div._array, ctx.conf)), None, None, \
            None, None, None, None

    @staticmethod
    def backward(ctx, grad_output):
        input, div = ctx.saved_tensors
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
        return Tensor._wrap(_avg_spread(grad_output._array, div._array, conf))

    @staticmethod
    def backward(ctx, grad):
        zero = Tensor._wrap(xp_of(grad).zeros(grad._array.shape, grad._array.dtype)) \
            if ctx.needs_input_grad[1] else None
        return AvgPool2d.apply(grad, *ctx.args), zero, None, None, None


def _check(op, input, nd):
    if input.dim() not in (nd + 1, nd + 2) or 0 in tuple(input.shape)[-nd:]:
        raise RuntimeError("%s: Expected %dD or %dD (batch mode) tensor with optional 0 dim "
                           "batch size for input, but got: %s"
                           % (op, nd + 1, nd + 2, list(input.shape)))


def _lift(input, nd):
    """(N, C, H, W) view of a 1-d or 2-d pooling input, and how to undo it."""
    unbatched = input.dim() == nd + 1
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
    for a in range(nd):
        if p[a] > (d[a] * (k[a] - 1) + 1) // 2:
            raise RuntimeError("pad should be at most half of effective kernel size, but got "
                               "pad=%d, kernel_size=%d and dilation=%d" % (p[a], k[a], d[a]))
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
    for a in range(nd):
        if p[a] > k[a] // 2:
            raise RuntimeError("pad should be at most half of effective kernel size, but got "
                               "pad=%d, kernel_size=%d and dilation=1" % (p[a], k[a]))
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


def _avg_matrix(n_in, n_out, dtype, xp):
    m = xp.zeros((n_out, n_in), dtype=dtype)
    for i, (a, b) in enumerate(zip(*_bins(n_in, n_out))):
        m[i, a:b] = 1.0 / (b - a)
    return m


def _out_size(output_size, shape, nd):
    sizes = _tuple(output_size, nd) if output_size is not None else shape
    if isinstance(output_size, (list, tuple)):
        sizes = tuple(shape[a] if output_size[a] is None else int(output_size[a])
                      for a in range(nd))
    return sizes


def adaptive_avg_pool2d(input, output_size):
    """Average over ``output_size`` near-equal bins per spatial dim (separable: two matmuls)."""
    _check("adaptive_avg_pool2d", input, 2)
    ho, wo = _out_size(output_size, tuple(input.shape[-2:]), 2)
    h, w = input.shape[-2:]
    dt = input._array.dtype
    if (ho, wo) == (1, 1):
        return input.mean(dim=(-2, -1), keepdim=True)
    xp = xp_of(input)
    mh = Tensor._wrap(_avg_matrix(h, ho, dt, xp))
    mw = Tensor._wrap(_avg_matrix(w, wo, dt, xp).T)
    return matmul(matmul(mh, input), mw)


def adaptive_avg_pool1d(input, output_size):
    """1-D adaptive average pooling over ``(N, C, L)``."""
    _check("adaptive_avg_pool1d", input, 1)
    lo, = _tuple(output_size, 1)
    m = _avg_matrix(input.shape[-1], lo, input._array.dtype, xp_of(input))
    return matmul(input, Tensor._wrap(m.T))


class AdaptiveMaxPool2d(Function):
    node_name = "AdaptiveMaxPool2DBackward0"

    @staticmethod
    def forward(ctx, input, out_hw):
        x = input._array
        xp = xp_of(input)
        h, w = x.shape[2:]
        hb, wb = _bins(h, out_hw[0]), _bins(w, out_hw[1])
        out = xp.empty(x.shape[:2] + tuple(out_hw), dtype=x.dtype)
        idx = xp.empty(out.shape, dtype=np.int64)
        for i, (h0, h1) in enumerate(zip(*hb)):
            for j, (w0, w1) in enumerate(zip(*wb)):
                cell = x[:, :, h0:h1, w0:w1].reshape(x.shape[:2] + (-1,))
                a = xp.argmax(cell, axis=-1)
                out[:, :, i, j] = xp.take_along_axis(cell, a[..., None], -1)[..., 0]
                ah, aw = xp.divmod(a, w1 - w0)
                idx[:, :, i, j] = (h0 + ah) * w + w0 + aw
        indices = Tensor._wrap(idx)
        # NOTE: the indices output is saved (as torch): changing it in place is an error.
        ctx.save_for_backward(input, indices)    # (input: as torch, for double backward)
        return Tensor._wrap(out), indices

    @staticmethod
    def array_backward(ctx, grad_output, grad_indices=None):
        input, idx = ctx.saved_tensors
        return Tensor._wrap(_scatter_planes(grad_output._array, idx._array,
                                            input._array.shape)), None

    @staticmethod
    def backward(ctx, grad_output, grad_indices=None):
        input, idx = ctx.saved_tensors
        return AdaptiveMaxPoolGrad.apply(grad_output, input, idx.detach()), None


def _scatter_planes(g, idx, shape):
    """Zeros of ``shape`` (N, C, H, W) with ``g`` added at the flat plane indices ``idx``."""
    n, c = shape[:2]
    xp = get_array_module(g)
    gx = xp.zeros((n * c, shape[2] * shape[3]), dtype=g.dtype)
    backend_of(gx).scatter_add(gx, (xp.arange(n * c)[:, None], idx.reshape(n * c, -1)),
                               g.reshape(n * c, -1))
    return gx.reshape(shape)


class AdaptiveMaxPoolGrad(Function):
    """Adaptive max-pool's backward, differentiable (as MaxPoolGrad)."""

    node_name = "AdaptiveMaxPool2DBackwardBackward0"

    @staticmethod
    def forward(ctx, grad_output, input, idx):
        ctx.shape = input._array.shape
        ctx.save_for_backward(idx)
        return Tensor._wrap(_scatter_planes(grad_output._array, idx._array, ctx.shape))

    @staticmethod
    def backward(ctx, grad):
        idx, = ctx.saved_tensors
        return _gather_back(ctx, grad, idx._array, ctx.shape) + (None,)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Maximum over ``output_size`` near-equal bins per spatial dim."""
    _check("adaptive_max_pool2d", input, 2)
    x, back = _lift(input, 2)
    out, idx = AdaptiveMaxPool2d.apply(x, _out_size(output_size, tuple(input.shape[-2:]), 2))
    return (back(out), back(idx)) if return_indices else back(out)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """1-D adaptive max pooling over ``(N, C, L)``."""
    _check("adaptive_max_pool1d", input, 1)
    x, back = _lift(input, 1)
    out, idx = AdaptiveMaxPool2d.apply(x, (1,) + _tuple(output_size, 1))
    return (back(out), back(idx)) if return_indices else back(out)


