"""Pooling: max_pool1d/2d, avg_pool1d/2d, adaptive_avg_pool1d/2d, adaptive_max_pool1d/2d.

Windows are strided views; backward loops over kernel positions only, never over pixels.
"""
import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..autograd.function import Function
from ..autograd.grad_mode import state as _grad
from ..tensor import Tensor

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


def _windows(xp, k, s, d, out_hw):
    n, c = xp.shape[:2]
    s0, s1, s2, s3 = xp.strides
    return as_strided(xp, (n, c, out_hw[0], out_hw[1], k[0], k[1]),
                      (s0, s1, s2 * s[0], s3 * s[1], s2 * d[0], s3 * d[1]))


def _padded(x, p, out_hw, k, s, d, fill):
    """``x`` padded by ``p`` (and on the far side as far as ceil_mode windows reach)."""
    need = [(out_hw[a] - 1) * s[a] + d[a] * (k[a] - 1) + 1 for a in range(2)]
    extra = [max(0, need[a] - x.shape[2 + a] - 2 * p[a]) for a in range(2)]
    widths = ((0, 0), (0, 0), (p[0], p[0] + extra[0]), (p[1], p[1] + extra[1]))
    return np.pad(x, widths, constant_values=fill) if any(p) or any(extra) else x


def _scatter(g, k, s, d, shape):
    """Sum the window gradients ``g`` (N, C, Ho, Wo, kh, kw) back into an array of ``shape``."""
    out = np.zeros(shape, dtype=g.dtype)
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


def _max_exact(xp, k, s, p, d, out_hw, shape):
    """torch's scan per window: skip padding, replace on ``val > max or isnan(val)``."""
    ok = np.zeros(xp.shape[2:], dtype=bool)
    ok[p[0]:p[0] + shape[2], p[1]:p[1] + shape[3]] = True
    kk = k[0] * k[1]
    arg = np.zeros(xp.shape[:2] + tuple(out_hw), dtype=np.int64)
    for pos in range(kk - 1, -1, -1):
        np.copyto(arg, pos, where=_window(ok, pos // k[1], pos % k[1], s, d, out_hw))
    lowest = -np.inf if xp.dtype.kind == "f" else np.iinfo(xp.dtype).min
    out = np.full(arg.shape, lowest, dtype=xp.dtype)
    for pos in range(kk):
        i, j = divmod(pos, k[1])
        v = _window(xp, i, j, s, d, out_hw)
        upd = v > out
        if xp.dtype.kind == "f":
            upd |= np.isnan(v)
        upd &= _window(ok, i, j, s, d, out_hw)
        np.copyto(out, v, where=upd)
        np.copyto(arg, pos, where=upd)
    return out, arg


def _running_max(parts):
    """Element-wise max of the arrays ``parts`` and the index of the first one holding it."""
    if len(parts) == 1:
        return parts[0].copy(), np.zeros(parts[0].shape, dtype=np.int8)
    m = np.maximum(parts[0], parts[1])
    arg = (parts[1] > parts[0]).view(np.int8)
    for j in range(2, len(parts)):
        np.putmask(arg, parts[j] > m, j)
        np.maximum(m, parts[j], out=m)
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
        upd = np.greater(m, out)
        col += i * k[1]
        col -= arg
        col *= upd
        arg += col
        np.maximum(out, m, out=out)
    return out.reshape(n, c, h // k[0], w // k[1]), arg.reshape(n, c, h // k[0], w // k[1])


class MaxPool2d(Function):
    node_name = "MaxPool2DWithIndicesBackward0"

    @staticmethod
    def forward(ctx, input, k, s, p, d, ceil_mode, with_indices=True):
        x = input._array
        h, w = x.shape[2:]
        out_hw = (_out(h, k[0], s[0], p[0], d[0], ceil_mode),
                  _out(w, k[1], s[1], p[1], d[1], ceil_mode))
        fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        xp = _padded(x, p, out_hw, k, s, d, fill)
        blocks = (s == k and d == (1, 1) and xp is x and h % k[0] == 0 and w % k[1] == 0
                  and x.size > 0 and k[0] * k[1] < 128)
        if blocks:
            out, arg = _max_blocks(np.ascontiguousarray(x), k)
        else:
            # Loop over kernel positions (not pixels), keeping the running max and its position.
            # NOTE: strict '>' keeps the first maximum, torch's rule for ties.
            out = _window(xp, 0, 0, s, d, out_hw).copy()
            kk = k[0] * k[1]
            arg = np.zeros(out.shape, dtype=np.int8 if kk < 128 else np.int64)
            for pos in range(1, kk):
                v = _window(xp, pos // k[1], pos % k[1], s, d, out_hw)
                np.putmask(arg, v > out, pos)
                np.maximum(out, v, out=out)
        # NOTE: NaN, and an all -inf window next to padding, take torch's exact scan.
        if x.dtype.kind != "f" or np.isnan(out).any() or (xp is not x and np.isneginf(out).any()):
            out, arg = _max_exact(xp, k, s, p, d, out_hw, x.shape)
        # NOTE: saved as tensors so that the engine frees them right after this node's backward;
        # the input (saved by torch too) is only used by double backward.
        ctx.save_for_backward(Tensor._wrap(arg), input)
        ctx.conf = (k, s, p, d, xp.shape, x.shape, blocks)
        if not with_indices:
            return Tensor._wrap(out)
        return Tensor._wrap(out), Tensor._wrap(_flat_indices(arg, k, s, p, d, w))

    @staticmethod
    def backward(ctx, grad_output, grad_indices=None):
        arg, input = ctx.saved_tensors
        arg = arg._array
        if _grad.enabled:   # create_graph=True: a differentiable scatter (double backward)
            return (MaxPoolGrad.apply(grad_output, input, arg, ctx.conf),) + (None,) * 6
        return Tensor._wrap(_max_scatter(grad_output._array, arg, ctx.conf)), None, None, None, \
            None, None, None


def _flat_indices(arg, k, s, p, d, w):
    """Each window's maximum as a flat index into its (H, W) input plane (torch's indices)."""
    ki, kj = np.divmod(arg.astype(np.int64), k[1])
    hi = np.arange(arg.shape[2]).reshape(-1, 1) * s[0] - p[0] + ki * d[0]
    wi = np.arange(arg.shape[3]) * s[1] - p[1] + kj * d[1]
    return hi * w + wi


class MaxPoolGrad(Function):
    """Max-pool's backward (the gradient scattered to each window's maximum), differentiable:
    in the gradient its derivative gathers at the same positions; in the input it is zero."""

    node_name = "MaxPool2DWithIndicesBackwardBackward0"

    @staticmethod
    def forward(ctx, grad_output, input, arg, conf):
        ctx.arg, ctx.conf = arg, conf
        return Tensor._wrap(_max_scatter(grad_output._array, arg, conf))

    @staticmethod
    def backward(ctx, grad):
        k, s, p, d, _, shape, _ = ctx.conf
        return _gather_back(ctx, grad, _flat_indices(ctx.arg, k, s, p, d, shape[3]), shape) + \
            (None, None)


def _gather_back(ctx, grad, flat_idx, shape):
    """The derivative of a max-pool backward: ``grad`` gathered at each window's maximum (flat
    indices per plane), and a zero gradient for the pooled input (as torch)."""
    n, c, h, w = shape
    idx = Tensor._wrap(flat_idx.reshape(n, c, -1))
    gg = grad.reshape(n, c, h * w).gather(2, idx).reshape(flat_idx.shape)
    zero = Tensor._wrap(np.zeros(shape, grad._array.dtype)) if ctx.needs_input_grad[1] else None
    return gg, zero


def _max_scatter(g, arg, conf):
    """The input gradient of max-pool: each output's gradient added at its window's maximum."""
    k, s, p, d, pshape, shape, blocks = conf
    if blocks:
        # Non-overlapping windows: every output sends its gradient to one distinct input.
        n, c, h, w = shape
        ho, wo = g.shape[2:]
        offset = (np.arange(k[0], dtype=np.intp)[:, None] * w + np.arange(k[1])).reshape(-1)
        idx = np.take(offset, arg.reshape(-1, wo))
        idx += np.arange(0, n * c * h * w, k[0] * w, dtype=np.intp)[:, None]
        idx += np.arange(0, w, k[1], dtype=np.intp)
        gx = np.zeros(n * c * h * w, dtype=g.dtype)
        gx[idx.reshape(-1)] = g.reshape(-1)
        return gx.reshape(shape)
    gx = np.zeros(pshape, dtype=g.dtype)
    for pos in range(k[0] * k[1]):
        sl = _window(gx, pos // k[1], pos % k[1], s, d, g.shape[2:])
        np.add(sl, g, out=sl, where=arg == pos)
    if pshape != shape:
        gx = np.ascontiguousarray(gx[:, :, p[0]:p[0] + shape[2], p[1]:p[1] + shape[3]])
    return gx


class AvgPool2d(Function):
    node_name = "AvgPool2DBackward0"

    @staticmethod
    def forward(ctx, input, k, s, p, ceil_mode, count_include_pad, divisor_override):
        x = input._array
        h, w = x.shape[2:]
        d = (1, 1)
        out_hw = (_out(h, k[0], s[0], p[0], 1, ceil_mode), _out(w, k[1], s[1], p[1], 1, ceil_mode))
        xp = _padded(x, p, out_hw, k, s, d, 0)
        if divisor_override:
            div = np.full(out_hw, divisor_override, dtype=x.dtype)
        else:
            sizes = []
            for a, n in enumerate((h, w)):
                start = np.arange(out_hw[a]) * s[a] - p[a]
                end = np.minimum(start + k[a], n + p[a])
                if not count_include_pad:
                    start, end = np.maximum(start, 0), np.minimum(end, n)
                sizes.append(end - start)
            div = (sizes[0][:, None] * sizes[1][None, :]).astype(x.dtype)
        out = _windows(xp, k, s, d, out_hw).sum(axis=(4, 5)) / div
        ctx.conf = (div, k, s, p, xp.shape, x.shape)
        ctx.args = (k, s, p, ceil_mode, count_include_pad, divisor_override)
        ctx.save_for_backward(input)    # (as torch; only double backward uses it)
        return Tensor._wrap(out.astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        if _grad.enabled:   # create_graph=True: a differentiable spread (double backward)
            return (AvgPoolGrad.apply(grad_output, input, ctx.conf, ctx.args),) + (None,) * 6
        return Tensor._wrap(_avg_spread(grad_output._array, ctx.conf)), None, None, None, None, \
            None, None


def _avg_spread(g, conf):
    """The input gradient of average pooling: each output's gradient / divisor over its window."""
    div, k, s, p, pshape, shape = conf
    gw = np.broadcast_to((g / div)[..., None, None], g.shape + tuple(k))
    gx = _scatter(gw, k, s, (1, 1), pshape)[:, :, p[0]:p[0] + shape[2], p[1]:p[1] + shape[3]]
    return np.ascontiguousarray(gx)


class AvgPoolGrad(Function):
    """Average pooling's backward, differentiable: its adjoint is the pooling itself; in the
    input its derivative is zero."""

    node_name = "AvgPool2DBackwardBackward0"

    @staticmethod
    def forward(ctx, grad_output, input, conf, args):
        ctx.args = args
        return Tensor._wrap(_avg_spread(grad_output._array, conf))

    @staticmethod
    def backward(ctx, grad):
        zero = Tensor._wrap(np.zeros(grad._array.shape, grad._array.dtype)) \
            if ctx.needs_input_grad[1] else None
        return AvgPool2d.apply(grad, *ctx.args), zero, None, None


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


def _avg_matrix(n_in, n_out, dtype):
    m = np.zeros((n_out, n_in), dtype=dtype)
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
    from .creation import tensor
    from .linalg import matmul
    ho, wo = _out_size(output_size, tuple(input.shape[-2:]), 2)
    h, w = input.shape[-2:]
    dt = input._array.dtype
    if (ho, wo) == (1, 1):
        return input.mean(dim=(-2, -1), keepdim=True)
    mh = tensor(_avg_matrix(h, ho, dt))
    mw = tensor(_avg_matrix(w, wo, dt).T)
    return matmul(matmul(mh, input), mw)


def adaptive_avg_pool1d(input, output_size):
    """1-D adaptive average pooling over ``(N, C, L)``."""
    _check("adaptive_avg_pool1d", input, 1)
    from .creation import tensor
    from .linalg import matmul
    lo, = _tuple(output_size, 1)
    return matmul(input, tensor(_avg_matrix(input.shape[-1], lo, input._array.dtype).T))


class AdaptiveMaxPool2d(Function):
    node_name = "AdaptiveMaxPool2DBackward0"

    @staticmethod
    def forward(ctx, input, out_hw):
        x = input._array
        h, w = x.shape[2:]
        hb, wb = _bins(h, out_hw[0]), _bins(w, out_hw[1])
        out = np.empty(x.shape[:2] + tuple(out_hw), dtype=x.dtype)
        idx = np.empty(out.shape, dtype=np.int64)
        for i, (h0, h1) in enumerate(zip(*hb)):
            for j, (w0, w1) in enumerate(zip(*wb)):
                cell = x[:, :, h0:h1, w0:w1].reshape(x.shape[:2] + (-1,))
                a = np.argmax(cell, axis=-1)
                out[:, :, i, j] = np.take_along_axis(cell, a[..., None], -1)[..., 0]
                ah, aw = np.divmod(a, w1 - w0)
                idx[:, :, i, j] = (h0 + ah) * w + w0 + aw
        ctx.conf = (idx, x.shape)
        ctx.save_for_backward(input)    # (as torch; only double backward uses it)
        return Tensor._wrap(out), Tensor._wrap(idx)

    @staticmethod
    def backward(ctx, grad_output, grad_indices=None):
        input, = ctx.saved_tensors
        if _grad.enabled:   # create_graph=True: a differentiable scatter (double backward)
            return AdaptiveMaxPoolGrad.apply(grad_output, input, ctx.conf), None
        return Tensor._wrap(_scatter_planes(grad_output._array, *ctx.conf)), None


def _scatter_planes(g, idx, shape):
    """Zeros of ``shape`` (N, C, H, W) with ``g`` added at the flat plane indices ``idx``."""
    n, c = shape[:2]
    gx = np.zeros((n * c, shape[2] * shape[3]), dtype=g.dtype)
    np.add.at(gx, (np.arange(n * c)[:, None], idx.reshape(n * c, -1)), g.reshape(n * c, -1))
    return gx.reshape(shape)


class AdaptiveMaxPoolGrad(Function):
    """Adaptive max-pool's backward, differentiable (as MaxPoolGrad)."""

    node_name = "AdaptiveMaxPool2DBackwardBackward0"

    @staticmethod
    def forward(ctx, grad_output, input, conf):
        ctx.conf = conf
        return Tensor._wrap(_scatter_planes(grad_output._array, *conf))

    @staticmethod
    def backward(ctx, grad):
        idx, shape = ctx.conf
        return _gather_back(ctx, grad, idx, shape) + (None,)


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


