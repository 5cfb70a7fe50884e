"""Convolutions: conv1d/2d/3d, conv_transpose1d/2d/3d (3-d: strided windows and einsum).

Each is one GEMM over an im2col view of the padded input (``as_strided``, no copy until the
GEMM), run over the batch in cache-sized chunks; backward rebuilds the columns chunk by chunk
instead of keeping them (they are kh * kw times the input). The input gradient adds one GEMM
per kernel position into the padded input (col2im), with a loop over kernel positions only.
"""
import itertools
import warnings

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..autograd import _autocast
from ..autograd.grad_mode import is_grad_enabled, state as _grad_state
from ..backend import backend_of, get_array_module
from ..tensor import Tensor
from ._util import cpu_has as _cpu_has, not_implemented_for
from .conversion import _in_order
from .vision import _CL_ORDER, _channels_last_order, _in_layout

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "conv_tbc"]


def _pair(v, n, name="value"):
    if isinstance(v, (list, tuple)):
        if len(v) == 1:
            return tuple(int(v[0]) for _ in range(n))
        if len(v) != n:
            raise RuntimeError("expected %s to be a single integer value or a list of %d values "
                               "to match the convolution dimensions, but got %s=%s"
                               % (name, n, name, list(v)))
        return tuple(int(x) for x in v)
    return (int(v),) * n


# NOTE: the batch runs in chunks whose im2col columns take about this many bytes, so the
# columns stay in cache and are never all alive at once (none are kept for backward).
_CHUNK_BYTES = 1 << 20


def _batches(n, per_sample):
    """Equal slices of a batch of ``n`` whose scratch (``per_sample`` bytes each) is ~1 MiB."""
    chunks = max(1, min(n, -(-n * per_sample // _CHUNK_BYTES)))
    b = max(1, -(-n // chunks))
    return [slice(s, s + b) for s in range(0, n, b)]


def _pad(x, padding):
    """``x`` (N, C, H, W) zero-padded by (top, bottom, left, right)."""
    pt, pb, pl, pr = padding
    if not any(padding):
        return x
    n, c, h, w = x.shape
    out = get_array_module(x).zeros((n, c, h + pt + pb, w + pl + pr), dtype=x.dtype)
    out[:, :, pt:pt + h, pl:pl + w] = x
    return out


def _im2col(x, k, s, d, out_hw):
    """The patches of the padded input ``x`` as one contiguous array (N, C * kh * kw, Ho * Wo).

    Rows run over (c, i, j), so each copied run is a row of output pixels, not a kernel row.
    (The view stays writeable: ``writeable=False`` makes NumPy keep memory on every call.)
    """
    n, c, _, _ = x.shape
    s0, s1, s2, s3 = x.strides
    v = backend_of(x).as_strided(x, (n, c, k[0], k[1], out_hw[0], out_hw[1]),
                                 (s0, s1, s2 * d[0], s3 * d[1], s2 * s[0], s3 * s[1]))
    return get_array_module(x).ascontiguousarray(v).reshape(n, c * k[0] * k[1],
                                                            out_hw[0] * out_hw[1])


def _gemm(cols, w, groups, out):
    """out[n, o, (h, w)] = sum_{c, i, j} w[o, c, i, j] * cols[n, (c, i, j), (h, w)]."""
    n, o, length = out.shape
    k = cols.shape[1] // groups
    get_array_module(cols).matmul(w.reshape(groups, o // groups, k),
                                  cols.reshape(n, groups, k, length),
                                  out=out.reshape(n, groups, o // groups, length))
    return out


def _grad_weight(gy, cols, groups, w_shape):
    """dw[o, (c, i, j)] = sum_{n, (h, w)} gy[n, o, h, w] * cols[n, (c, i, j), (h, w)]."""
    n, o = gy.shape[:2]
    gm = gy.reshape(n, groups, o // groups, cols.shape[-1])
    cm = cols.reshape(n, groups, cols.shape[1] // groups, cols.shape[-1])
    # NOTE: columns @ gy^T (not gy @ columns^T) is the faster BLAS layout for these shapes.
    xp = get_array_module(cols)
    dw = xp.matmul(cm, gm.transpose(0, 1, 3, 2)).sum(axis=0)
    return xp.ascontiguousarray(dw.transpose(0, 2, 1)).reshape(w_shape)


def _col2im(gy, w, groups, padded_hw, s, d):
    """The gradient of the padded input (N, C, Hp, Wp): per kernel position, one GEMM added
    into the window of the input that position sees.

    With stride 1, ``gy`` is first zero-extended to the padded input's shape, so each kernel
    position adds one contiguous run (its zeros land outside the windows or add nothing).
    """
    o, cg, kh, kw = w.shape
    n, _, ho, wo = gy.shape
    hp, wp = padded_hw
    og = o // groups
    xp = get_array_module(gy)
    wk = xp.ascontiguousarray(w.reshape(groups, og, cg, kh * kw).transpose(3, 0, 2, 1))
    wide = s == (1, 1)
    if wide:
        gyw = xp.zeros((n, o, hp, wp), dtype=gy.dtype)
        gyw[:, :, :ho, :wo] = gy
        gy, ho, wo = gyw, hp, wp
        size = n * cg * groups * hp * wp
        dx = xp.zeros(size + (kh - 1) * d[0] * wp + (kw - 1) * d[1], dtype=gy.dtype)
    else:
        dx = xp.zeros((n, cg * groups, hp, wp), dtype=gy.dtype)
    g = gy.reshape(n, groups, og, ho * wo)
    for i in range(kh):
        for j in range(kw):
            part = xp.matmul(wk[i * kw + j], g)
            if wide:
                off = i * d[0] * wp + j * d[1]
                dx[off:off + size] += part.reshape(-1)
            else:
                h0, w0 = i * d[0], j * d[1]
                dx[:, :, h0:h0 + s[0] * (ho - 1) + 1:s[0], w0:w0 + s[1] * (wo - 1) + 1:s[1]] += \
                    part.reshape(n, cg * groups, ho, wo)
    return dx[:size].reshape(n, cg * groups, hp, wp) if wide else dx


def _low(dtype):
    """float16 or bfloat16: torch's (oneDNN's) kernels accumulate these in float32 and add the
    bias there, rounding once."""
    return dtype == np.float16 or dtype.kind == "V"


def _wide(*arrs):
    """The arrays as float32 when the first is half or bfloat16 (else unchanged), and the
    dtype to round the result to (None: no rounding)."""
    if not _low(arrs[0].dtype):
        return arrs + (None,)
    return tuple(None if a is None else a.astype(np.float32) for a in arrs) + (arrs[0].dtype,)


def _narrow(arr, dtype):
    return arr if dtype is None else arr.astype(dtype)


def _channels_last(arr):
    """Whether a 4-d (5-d) array is laid out channels-last (and not also C-contiguous): torch's
    ``suggest_memory_format``, which its convolutions give their output."""
    if arr.ndim == 5:
        return _channels_last_order(arr) is not None
    return arr.ndim == 4 and not arr.flags.c_contiguous and _in_order(arr, (0, 2, 3, 1))


def _as_input_layout(out, x, w):
    """``out`` laid out channels-last when the input or the weight is (as torch's)."""
    return _to_channels_last(out) if _channels_last(x) or _channels_last(w) else out


def _to_channels_last(arr):
    """``arr`` (4-d or 5-d) copied into channels-last order (torch's strides for size-1 dims)."""
    return _in_layout(arr, _CL_ORDER[arr.ndim])


def _grads_layout(ctx, x, w, *grads):
    """The input and weight gradients laid out channels-last when the input ``x`` or the
    weight ``w`` (arrays) of the 2-d convolution is (torch's backward takes the forward's
    memory format)."""
    if ctx.conf[-1] or not (_channels_last(x) or _channels_last(w)):
        return grads
    return tuple(None if g is None else Tensor._wrap(_to_channels_last(g._array)) for g in grads)


def _out_size(size, k, s, p, d):
    return (size + p - d * (k - 1) - 1) // s + 1


class Convolution(Function):
    node_name = "ConvolutionBackward0"
    edge_args = (0, 1, 2)     # (torch: a None edge for a missing bias)

    @staticmethod
    def forward(ctx, input, weight, bias, stride, padding, dilation, groups, squeeze):
        b = None if bias is None else bias._array
        x, w, b, low = _wide(input._array, weight._array, b)
        if squeeze:
            x, w = x[:, :, None, :], w[:, :, None, :]
        pt, pb, pl, pr = padding
        n, c, h, wd = x.shape
        k = w.shape[2:]
        out_hw = (_out_size(h, k[0], stride[0], pt + pb, dilation[0]),
                  _out_size(wd, k[1], stride[1], pl + pr, dilation[1]))
        out = get_array_module(x).empty((n, w.shape[0], out_hw[0] * out_hw[1]),
                                        dtype=x.dtype)
        for sl in _batches(n, c * k[0] * k[1] * out.shape[2] * x.itemsize):
            cols = _im2col(_pad(x[sl], padding), k, stride, dilation, out_hw)
            _gemm(cols, w, groups, out[sl])
            if b is not None:
                out[sl] += b.reshape(1, -1, 1)    # while the chunk is in cache
        out = _narrow(out.reshape(out.shape[:2] + out_hw), low)
        ctx.save_for_backward(input, weight)
        ctx.conf = (stride, padding, dilation, groups, squeeze)
        return Tensor._wrap(out[:, :, 0] if squeeze else
                            _as_input_layout(out, input._array, weight._array))

    @staticmethod
    def backward(ctx, grad_output):
        return _graph_grads(ctx, grad_output, False)

    @staticmethod
    def array_backward(ctx, grad_output):
        gy, x, w, low = _saved_arrays(ctx, grad_output)
        stride, padding, dilation, groups, squeeze = ctx.conf
        n, c, h, wd = x.shape
        pt, pb, pl, pr = padding
        k, out_hw = w.shape[2:], gy.shape[2:]
        need_x, need_w = ctx.needs_input_grad[:2]
        xp = get_array_module(x)
        gx = xp.empty(x.shape, dtype=x.dtype) if need_x else None
        gw = xp.zeros(w.shape, dtype=x.dtype) if need_w else None
        for sl in _batches(n, c * k[0] * k[1] * out_hw[0] * out_hw[1] * x.itemsize):
            if need_w:
                cols = _im2col(_pad(x[sl], padding), k, stride, dilation, out_hw)
                gw += _grad_weight(gy[sl], cols, groups, w.shape)
            if need_x:
                dxp = _col2im(gy[sl], w, groups, (h + pt + pb, wd + pl + pr), stride, dilation)
                gx[sl] = dxp[:, :, pt:pt + h, pl:pl + wd]
        gx = None if gx is None else Tensor._wrap(_narrow(gx[:, :, 0] if squeeze else gx, low))
        gw = None if gw is None else Tensor._wrap(_narrow(gw[:, :, 0] if squeeze else gw, low))
        gb = Tensor._wrap(_narrow(gy.sum(0).reshape(gy.shape[1], -1).sum(1), low)) \
            if ctx.needs_input_grad[2] else None
        gx, gw = _grads_layout(ctx, x, w, gx, gw)
        return gx, gw, gb, None, None, None, None, None


class ConvTranspose(Function):
    node_name = "ConvolutionBackward0"
    edge_args = (0, 1, 2)     # (torch: a None edge for a missing bias)

    @staticmethod
    def forward(ctx, input, weight, bias, stride, padding, output_padding, dilation, groups,
                squeeze):
        b = None if bias is None else bias._array
        x, w, b, low = _wide(input._array, weight._array, b)
        if squeeze:
            x, w = x[:, :, None, :], w[:, :, None, :]
        k = w.shape[2:]
        full = tuple((x.shape[2 + a] - 1) * stride[a] + dilation[a] * (k[a] - 1) + 1
                     + output_padding[a] for a in range(2))
        dxp = _col2im(x, w, groups, full, stride, dilation)
        out = dxp[:, :, padding[0]:full[0] - padding[0], padding[1]:full[1] - padding[1]]
        out = get_array_module(x).ascontiguousarray(out)
        if b is not None:
            out += b.reshape(1, -1, 1, 1)
        out = _narrow(out, low)
        ctx.save_for_backward(input, weight)
        ctx.conf = (stride, padding, dilation, groups, squeeze)
        return Tensor._wrap(out[:, :, 0] if squeeze else
                            _as_input_layout(out, input._array, weight._array))

    @staticmethod
    def backward(ctx, grad_output):
        return _graph_grads(ctx, grad_output, True)

    @staticmethod
    def array_backward(ctx, grad_output):
        gy, x, w, low = _saved_arrays(ctx, grad_output)
        stride, padding, dilation, groups, squeeze = ctx.conf
        p = padding
        cols = _im2col(_pad(gy, (p[0], p[0], p[1], p[1])), w.shape[2:], stride, dilation,
                       x.shape[2:])
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gx = get_array_module(x).empty(x.shape[:2] + (x.shape[2] * x.shape[3],),
                                           dtype=cols.dtype)
            gx = _gemm(cols, w, groups, gx).reshape(x.shape)
            gx = Tensor._wrap(_narrow(gx[:, :, 0] if squeeze else gx, low))
        if ctx.needs_input_grad[1]:
            gw = _grad_weight(x, cols, groups, w.shape)
            gw = Tensor._wrap(_narrow(gw[:, :, 0] if squeeze else gw, low))
        if ctx.needs_input_grad[2]:
            gb = Tensor._wrap(_narrow(gy.sum(axis=(0, 2, 3)), low))
        gx, gw = _grads_layout(ctx, x, w, gx, gw)
        return gx, gw, gb, None, None, None, None, None, None


def _saved_arrays(ctx, grad_output):
    """The backward's gradient, input and weight as 4-D arrays of the input's dtype."""
    input, weight = ctx.saved_tensors
    gy, x, w = grad_output._array, input._array, weight._array
    if ctx.conf[-1]:    # squeeze: a 1-d convolution run as 2-d
        gy, x, w = gy[:, :, None, :], x[:, :, None, :], w[:, :, None, :]
    if x.dtype.kind == "c":    # (the gradients of a complex product take the conjugates)
        x, w = x.conj(), w.conj()
    return _wide(gy.astype(x.dtype, copy=False), x, w)


def _weight_grad_graph(inp, gout, k, stride, pads, dilation, groups):
    """dw[o, c, i, j] = sum_{n, h, w} gout[n, o, h, w] * inp_padded[n, c, h*s + i*d, w*s + j*d]
    as one differentiable convolution: the batch becomes the channels, stride and dilation
    swap roles, and each group keeps its own channels."""
    n, c, hi, wi = inp.shape
    o, ho, wo = gout.shape[1:]
    g = groups
    x = inp.reshape(n, g, c // g, hi, wi).permute(2, 1, 0, 3, 4).reshape(c // g, g * n, hi, wi)
    w = gout.reshape(n, g, o // g, ho, wo).permute(1, 2, 0, 3, 4).reshape(o, n, ho, wo)
    out = Convolution.apply(x, w, None, dilation, pads, stride, g, False)
    return out[:, :, :k[0], :k[1]].permute(1, 0, 2, 3)


def _graph_grads(ctx, gy, transposed):
    """A convolution's (or transposed one's) gradients as Tensor ops built from convolutions
    and transposed convolutions, so that they can be differentiated again."""
    input, weight = ctx.saved_tensors
    stride, padding, dilation, groups, squeeze = ctx.conf
    x, w = (input.conj(), weight.conj()) if input.is_complex() else (input, weight)
    if squeeze:
        x, w, gy = x.unsqueeze(2), w.unsqueeze(2), gy.unsqueeze(2)
    need = ctx.needs_input_grad
    k, (h, wd) = w.shape[2:], x.shape[2:]
    pads = padding if not transposed else (padding[0], padding[0], padding[1], padding[1])
    gx = gw = None
    if need[0] and not transposed:
        # the padded input's rows past the last window (stride remainder) get no gradient
        rest = tuple(h_ + pads[2 * a] + pads[2 * a + 1] - (gy.shape[2 + a] - 1) * stride[a]
                     - dilation[a] * (k[a] - 1) - 1 for a, h_ in enumerate((h, wd)))
        full = ConvTranspose.apply(gy, w, None, stride, (0, 0), rest, dilation, groups, False)
        gx = full[:, :, pads[0]:pads[0] + h, pads[2]:pads[2] + wd]
    elif need[0]:
        gx = Convolution.apply(gy, w, None, stride, pads, dilation, groups, False)[:, :, :h, :wd]
    if need[1]:
        gw = _weight_grad_graph(x, gy, k, stride, pads, dilation, groups) if not transposed \
            else _weight_grad_graph(gy, x, k, stride, pads, dilation, groups)
    gb = gy.sum((0, 2, 3)) if need[2] else None
    if squeeze:
        gx = None if gx is None else gx.squeeze(2)
        gw = None if gw is None else gw.squeeze(2)
    return (gx, gw, gb) + (None,) * (6 if transposed else 5)


class NoChannelConvolution(Function):
    """A convolution of an input with no channels: no output channels either (torch's empty
    path); zero gradients."""

    node_name = "ConvolutionBackward0"
    edge_args = (0, 1, 2)

    @staticmethod
    def forward(ctx, input, weight, bias, out_sizes):
        ctx.save_for_backward(input, weight)
        x = input._array
        return Tensor._wrap(get_array_module(x).zeros(x.shape[:1] + (0,) + tuple(out_sizes),
                                                      dtype=x.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        input, weight = ctx.saved_tensors
        need = ctx.needs_input_grad
        xp = get_array_module(weight._array)
        return (Tensor._wrap(xp.zeros_like(input._array)) if need[0] else None,
                Tensor._wrap(xp.zeros_like(weight._array)) if need[1] else None,
                Tensor._wrap(xp.zeros(weight.shape[:1], dtype=weight._array.dtype))
                if need[2] else None, None)


def _conv_nd_arr(x, w, stride, pads, dilation, groups):
    """N-d cross-correlation of ``x`` (N, C, *spatial) with ``w`` (O, C / groups, *k) over
    strided windows; ``pads``: (before, after) per spatial dim, negative ones crop."""
    if x.dtype.kind == "V":         # (einsum has no bfloat16: float32, rounded back)
        return _conv_nd_arr(x.astype(np.float32), w.astype(np.float32), stride, pads,
                            dilation, groups).astype(x.dtype)
    xp = get_array_module(x)
    nd = w.ndim - 2
    x = x[(slice(None),) * 2 + tuple(slice(-lo if lo < 0 else None, hi if hi < 0 else None)
                                     for lo, hi in pads)]
    widths = ((0, 0),) * 2 + tuple((max(lo, 0), max(hi, 0)) for lo, hi in pads)
    if any(v for pair in widths for v in pair):
        x = xp.pad(x, widths)
    k = w.shape[2:]
    n, c = x.shape[:2]
    outs = tuple((x.shape[2 + a] - dilation[a] * (k[a] - 1) - 1) // stride[a] + 1
                 for a in range(nd))
    st = x.strides
    win = backend_of(x).as_strided(x, (n, c) + outs + k, st[:2]
                                   + tuple(st[2 + a] * stride[a] for a in range(nd))
                                   + tuple(st[2 + a] * dilation[a] for a in range(nd)))
    o, g = w.shape[0], groups
    win = win.reshape((n, g, c // g) + outs + k)
    sp, ks = "defhij"[:nd], "stuvxy"[:nd]
    out = xp.einsum("ngc%s%s,goc%s->ngo%s" % (sp, ks, ks, sp), win,
                    w.reshape((g, o // g, c // g) + k), optimize=True)
    return out.reshape((n, o) + outs).astype(x.dtype, copy=False)


def _conv_t_nd_arr(x, w, stride, padding, output_padding, dilation, groups):
    """The adjoint of ``_conv_nd_arr`` (``w``: (C_in, C_out / groups, *k)): each kernel
    position's products added into the output windows it reaches (col2im), so a non-finite
    weight reaches only the outputs it touches, as in torch."""
    if x.dtype.kind == "V":         # (einsum has no bfloat16: float32, rounded back)
        return _conv_t_nd_arr(x.astype(np.float32), w.astype(np.float32), stride, padding,
                              output_padding, dilation, groups).astype(x.dtype)
    xp = get_array_module(x)
    nd = w.ndim - 2
    n, c = x.shape[:2]
    k, sizes = w.shape[2:], x.shape[2:]
    g, og = groups, w.shape[1]
    full = tuple((sizes[a] - 1) * stride[a] + dilation[a] * (k[a] - 1) + 1 + output_padding[a]
                 for a in range(nd))
    out = xp.zeros((n, g, og) + full, dtype=x.dtype)
    xg = x.reshape((n, g, c // g) + sizes)
    wg = w.reshape((g, c // g, og) + k)
    sp = "defhij"[:nd]
    for pos in itertools.product(*(range(v) for v in k)):
        part = xp.einsum("ngc%s,gco->ngo%s" % (sp, sp), xg, wg[(Ellipsis,) + pos])
        win = tuple(slice(pos[a] * dilation[a], pos[a] * dilation[a]
                          + stride[a] * (sizes[a] - 1) + 1, stride[a]) for a in range(nd))
        out[(Ellipsis,) + win] += part
    crop = tuple(slice(padding[a], full[a] - padding[a]) for a in range(nd))
    return xp.ascontiguousarray(out[(Ellipsis,) + crop]).reshape((n, g * og) + tuple(
        full[a] - 2 * padding[a] for a in range(nd)))


def _wgrad_nd(inp, gout, k, stride, pads, dilation, groups):
    """dw[o, c, *k] of an N-d convolution of ``inp`` giving ``gout``, as one differentiable
    convolution (batch and channels swap; stride and dilation swap)."""
    n, c = inp.shape[:2]
    o = gout.shape[1]
    nd, g = len(k), groups
    rest = tuple(range(3, 3 + nd))
    x = inp.reshape((n, g, c // g) + tuple(inp.shape[2:])).permute(2, 1, 0, *rest)
    x = x.reshape((c // g, g * n) + tuple(inp.shape[2:]))
    w = gout.reshape((n, g, o // g) + tuple(gout.shape[2:])).permute(1, 2, 0, *rest)
    w = w.reshape((o, n) + tuple(gout.shape[2:]))
    out = ConvolutionNd.apply(x, w, None, dilation, pads, stride, g)
    out = out[(slice(None),) * 2 + tuple(slice(0, k_) for k_ in k)]
    return out.transpose(0, 1)


class ConvolutionNd(Function):
    """An N-d (3-d) convolution; ``pads``: (before, after) per spatial dim."""

    node_name = "ConvolutionBackward0"
    edge_args = (0, 1, 2)

    @staticmethod
    def forward(ctx, input, weight, bias, stride, pads, dilation, groups):
        b = None if bias is None else bias._array
        x, w, b, low = _wide(input._array, weight._array, b)
        out = _conv_nd_arr(x, w, stride, pads, dilation, groups)
        if b is not None:
            out += b.reshape((1, -1) + (1,) * (out.ndim - 2))
        out = _narrow(out, low)
        ctx.save_for_backward(input, weight)
        ctx.conf = (stride, pads, dilation, groups)
        return Tensor._wrap(_as_input_layout(out, input._array, weight._array))

    @staticmethod
    def backward(ctx, grad_output):
        input, weight = ctx.saved_tensors
        return _conv_nd_grads(input, weight, grad_output, ctx.conf, ctx.needs_input_grad) + \
            (None,) * 4


def _conv_nd_grads(input, weight, gy, conf, need):
    """The gradients (input, weight, bias) of an N-d convolution as differentiable convolutions
    and transposed convolutions."""
    stride, pads, dilation, groups = conf
    x, w = (input.conj(), weight.conj()) if input.is_complex() else (input, weight)
    nd = len(stride)
    k, sizes = tuple(w.shape[2:]), tuple(x.shape[2:])
    gx = gw = gb = None
    if need[0]:
        # the padded input's rows past the last window (stride remainder) get no gradient
        rest = tuple(sizes[a] + sum(pads[a]) - (gy.shape[2 + a] - 1) * stride[a]
                     - dilation[a] * (k[a] - 1) - 1 for a in range(nd))
        full = ConvTransposeNd.apply(gy, w, None, stride, (0,) * nd, rest, dilation, groups)
        gx = full[(slice(None),) * 2 + tuple(slice(pads[a][0], pads[a][0] + sizes[a])
                                             for a in range(nd))]
    if need[1]:
        gw = _wgrad_nd(x, gy, k, stride, pads, dilation, groups)
    if need[2]:
        gb = gy.sum((0,) + tuple(range(2, 2 + nd)))
    return gx, gw, gb


class ConvTransposeNd(Function):
    """An N-d (3-d) transposed convolution."""

    node_name = "ConvolutionBackward0"
    edge_args = (0, 1, 2)

    @staticmethod
    def forward(ctx, input, weight, bias, stride, padding, output_padding, dilation, groups):
        b = None if bias is None else bias._array
        x, w, b, low = _wide(input._array, weight._array, b)
        out = _conv_t_nd_arr(x, w, stride, padding, output_padding, dilation, groups)
        if b is not None:
            out += b.reshape((1, -1) + (1,) * (out.ndim - 2))
        out = _narrow(out, low)
        ctx.save_for_backward(input, weight)
        ctx.conf = (stride, padding, dilation, groups)
        return Tensor._wrap(_as_input_layout(out, input._array, weight._array))

    @staticmethod
    def backward(ctx, grad_output):
        input, weight = ctx.saved_tensors
        stride, padding, dilation, groups = ctx.conf
        x, w = (input.conj(), weight.conj()) if input.is_complex() else (input, weight)
        gy = grad_output
        nd = len(stride)
        pads = tuple((p_, p_) for p_ in padding)
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gx = ConvolutionNd.apply(gy, w, None, stride, pads, dilation, groups)
            gx = gx[(slice(None),) * 2 + tuple(slice(0, n_) for n_ in x.shape[2:])]
        if ctx.needs_input_grad[1]:
            gw = _wgrad_nd(gy, x, tuple(w.shape[2:]), stride, pads, dilation, groups)
        if ctx.needs_input_grad[2]:
            gb = gy.sum((0,) + tuple(range(2, 2 + nd)))
        return gx, gw, gb, None, None, None, None, None


def _check_weight_dim(input, weight, nd, transposed, geometry):
    """torch's errors for a weight whose rank is not the input's (the input batched): the
    geometry lists must fit the weight's spatial dims first (one value always does)."""
    k = weight.dim()
    if k < 3:
        raise RuntimeError("weight should have at least three dimensions")
    shape = list(input.shape) if input.dim() == nd + 2 else [1] + list(input.shape)
    stride, padding, output_padding, dilation = geometry
    if isinstance(padding, str) and padding == "same":
        raise RuntimeError("Expected %d-dimensional input for %d-dimensional weight%s, but got "
                           "%d-dimensional input of size %s instead"
                           % (k, k, list(weight.shape), len(shape), shape))
    if isinstance(padding, str):
        padding = 0
    # (an int argument arrives as nd values; a plain convolution's output_padding as one)
    named = (("stride", stride), ("padding", padding), ("dilation", dilation),
             ("output_padding", output_padding if transposed else (0,)))
    for name, v in named:
        values = list(v) if isinstance(v, (list, tuple)) else [v] * nd
        if len(values) not in (1, k - 2):
            raise RuntimeError("expected %s to be a single integer value or a list of %d values "
                               "to match the convolution dimensions, but got %s=%s"
                               % (name, k - 2, name, values))
    raise RuntimeError("Expected %d-dimensional input for %d-dimensional weight %s, but got "
                       "%d-dimensional input of size %s instead"
                       % (k, k, list(weight.shape), len(shape), shape))


def _check_input(op, input, weight, nd, transposed=False, groups=1, geometry=(), bias=None):
    if not isinstance(input, Tensor):
        raise TypeError("%s(): argument 'input' must be Tensor, not %s"
                        % (op, type(input).__name__))
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError("Expected %dD (unbatched) or %dD (batched) input to %s, but got "
                           "input of size: %s" % (nd + 1, nd + 2, op, list(input.shape)))
    if weight.dim() != nd + 2:
        _check_weight_dim(input, weight, nd, transposed, geometry)
    _check_params(nd, *geometry)
    if weight.shape[0] < groups:
        raise RuntimeError("Given groups=%d, expected weight to be at least %d at dimension 0, "
                           "but got weight of size %s instead"
                           % (groups, groups, list(weight.shape)))
    if weight.shape[0] % groups:
        raise RuntimeError("Given groups=%d, expected weight to be divisible by %d at dimension "
                           "0, but got weight of size %s instead"
                           % (groups, groups, list(weight.shape)))
    c = input.shape[1] if input.dim() == nd + 2 else input.shape[0]
    shape = list(input.shape) if input.dim() == nd + 2 else [1] + list(input.shape)
    if not transposed and c != weight.shape[1] * groups:
        raise RuntimeError("Given groups=%d, weight of size %s, expected input%s to have %d "
                           "channels, but got %d channels instead"
                           % (groups, list(weight.shape), shape, weight.shape[1] * groups, c))
    if transposed and c != weight.shape[0]:
        raise RuntimeError("Given transposed=1, weight of size %s, expected input%s to have %d "
                           "channels, but got %d channels instead"
                           % (list(weight.shape), shape, weight.shape[0], c))
    n = weight.shape[1] * groups if transposed else weight.shape[0]
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != n):
        raise RuntimeError("Given %sweight of size %s, expected bias to be 1-dimensional with %d "
                           "elements, but got bias of size %s instead"
                           % ("transposed=1, " if transposed else "", list(weight.shape), n,
                              list(bias.shape)))
    return input.dim() == nd + 1


_CXX = {"float32": "float", "float64": "double", "float16": "c10::Half",
        "bfloat16": "c10::BFloat16", "int32": "int", "int64": "long int", "int16": "short int",
        "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
        "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _type_string(arr, legacy=False, bf16=False):
    """torch's ``Tensor.toString()`` (complex: ``CPUComplexFloatType``) in conv's messages."""
    if (arr.dtype.kind == "c" and not legacy) or (bf16 and arr.dtype.name == "bfloat16"):
        return "CPU%sType" % _dt.scalar_type_name(arr.dtype)
    return "torch." + _dt.from_numpy_dtype(arr.dtype)._legacy


def _check_dtypes(input, weight, bias, transposed, nd, cxx=None, dilated=False):
    """torch's dtype errors of a convolution made before its kernel: complex weights and the
    bias. ``cxx`` (torch.convolution's form: whether a 3-d kernel runs without columns): no
    kernel takes a complex input."""
    x, w = input._array, weight._array
    if cxx is not None and x.dtype.kind == "c":
        if x.ndim == nd + 2 and x.shape[0] == 0:
            return
        if transposed:
            name = "slow_conv_transpose%dd_out_cpu" % max(nd, 2)
        elif dilated:
            name = "slow_conv_dilated<>"
        else:
            name = "slow_conv%dd_cpu" % max(nd, 2) if nd < 3 or cxx else "compute_columns3d"
        not_implemented_for(x, name, "c")
    if x.dtype.kind == "c" and w.dtype != x.dtype:
        raise RuntimeError("Input type (%s) and weight type (%s) should be the same"
                           % (_type_string(x), _type_string(w, w.dtype.kind != "c")))
    if bias is not None and not transposed and cxx is None and bias._array.dtype != x.dtype:
        raise RuntimeError("Input type (%s) and bias type (%s) should be the same"
                           % (_CXX.get(x.dtype.name, x.dtype.name),
                              _CXX.get(bias._array.dtype.name, bias._array.dtype.name)))


def _check_kernel_dtypes(input, weight, bias, transposed, nd, dilated):
    """The CPU kernels' dtype errors (a non-empty input): bool has none; integers other than
    int64 have no dilated or transposed one; then the weight (and bias) dtype must match."""
    x, w = input._array, weight._array
    no_int = "b" if x.dtype == np.int64 else "biu"
    if transposed:
        not_implemented_for(x, "slow_conv_transpose%dd_out_cpu" % max(nd, 2), no_int)
    elif dilated:
        not_implemented_for(x, "slow_conv_dilated<>", no_int)
    elif nd == 3 and w.dtype.kind == "b" and max(w.shape[2:]) > 1:
        not_implemented_for(x, "compute_columns3d", "b")
    else:
        not_implemented_for(x, "slow_conv%dd_cpu" % max(nd, 2), "b")
    for other in (w, bias._array) if bias is not None and transposed and nd == 3 else (w,):
        if other.dtype != x.dtype:
            raise RuntimeError("expected scalar type %s but found %s"
                               % (_dt.scalar_type_name(x.dtype),
                                  _dt.scalar_type_name(other.dtype)))


def _empty_batch(input, weight, bias, cxx=False):
    """An empty batch is torch's ``input * weight.flatten()[0]`` (no kernel runs): the input in
    that product's dtype. ``F.conv*`` split a complex input into real convolutions (autograd
    works); otherwise (``torch.convolution``: ``cxx``) a complex output refuses autograd."""
    w = weight._array
    w0 = Tensor._wrap(w.reshape(-1)[:1].reshape(()) if w.size else w.reshape(-1))
    dt = _dt.result_type(input, w0)
    split = input.is_complex() and not cxx
    if dt.is_complex and not split and is_grad_enabled() and any(
            t is not None and t.requires_grad for t in (input, weight, bias)):
        raise RuntimeError("convolution does not support automatic differentiation for outputs "
                           "with complex dtype.")
    return input if dt is input.dtype else input.to(dt)


def _check_params(nd, stride=1, padding=0, output_padding=0, dilation=1):
    """torch's checks of a convolution's geometry (before its channel checks)."""
    if not isinstance(padding, str) and min(_pair(padding, nd, "padding")) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(_pair(output_padding, nd, "output_padding")) < 0:
        raise RuntimeError("negative output_padding is not supported")
    if min(_pair(stride, nd, "stride")) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(_pair(dilation, nd, "dilation")) < 0:
        raise RuntimeError("dilation should be greater than zero")


def _check_zero_dilation(nd, dilation, transposed):
    """The kernels' error for a zero dilation (a non-empty batch; 1-d reads as 2-d)."""
    d = _pair(dilation, nd, "dilation")
    if min(d) > 0:
        return
    d = (1,) + d if nd == 1 else d
    if not transposed:
        raise RuntimeError("dilation should be greater than zero, but got %s" % list(d))
    raise RuntimeError("dilation should be greater than zero, but got " + ", ".join(
        "dilation_%s: %d" % (name, v) for name, v in zip(("depth", "height", "width")[-len(d):],
                                                          d)))


def _onednn(input, weight, nd, transposed, stride, dilation, output_padding, groups):
    """Whether torch's CPU convolution of this non-empty batch runs on oneDNN (``use_mkldnn``,
    on a machine with several threads and fp16/bf16 support): half and bfloat16 always (not a
    transposed one whose output padding reaches its stride); float32 (a complex input's real
    parts) unless small (1-d seen as 2-d)."""
    dt = np.finfo(input._array.dtype).dtype if input.is_complex() else input._array.dtype
    if transposed and any(o >= s for o, s in zip(output_padding, stride)):
        return False
    if dt == np.float16 or dt.kind == "V":      # (float16, bfloat16: where the CPU has them)
        return _cpu_has("fp16" if dt == np.float16 else "bf16")
    if dt != np.float32:
        return False
    shape = (input.shape[:2] + (1,) if nd == 1 else input.shape[:3]) + input.shape[2:][-1:]
    k = weight.shape[-2:] if nd > 1 else (1,) + tuple(weight.shape[-1:])
    return (groups > 1 or (k[0] > 3 and k[1] > 3) or shape[0] > 1
            or shape[0] * shape[1] * shape[2] * shape[3] > 20480)


def _onednn_checks(input, weight, bias, nd, transposed, dilation):
    """oneDNN's errors: its dtype check, then its refusal of a zero dilation."""
    x = input._array
    for name, other in (("weight", weight), ("bias", bias)):
        if other is not None and other._array.dtype != x.dtype:
            raise RuntimeError("Input type (%s) and %s type (%s) should be the same or input "
                               "should be a MKLDNN tensor and %s is a dense tensor"
                               % (_type_string(x, bf16=True), name,
                                  _type_string(other._array, bf16=True), name))
    if min(dilation) > 0:
        return
    if not transposed:
        raise RuntimeError("non-positive dilation is not supported")
    if nd == 3:
        raise RuntimeError("dimensions are invalid")
    raise RuntimeError("could not create a primitive descriptor for the deconvolution forward "
                       "propagation primitive. Run workload with environment variable "
                       "ONEDNN_VERBOSE=all to get additional diagnostic information.")


def _check_numel(input, nd):
    """torch sends only an empty batch or zero channels to its empty path (1-d seen as 2-d)."""
    if input.numel() == 0 and input.shape[0] and input.shape[1]:
        shape = list(input.shape)
        raise RuntimeError("Only zero batch or zero channel inputs are supported, but got input "
                           "shape: %s" % (shape[:2] + [1] + shape[2:] if nd == 1 else shape))


_WARNED_SAME = [False]


def _conv(op, nd, input, weight, bias, stride, padding, dilation, groups, cxx=False):
    if _grad_state.autocast:    # (autocast casts before torch's dtype checks)
        input, weight, bias = _autocast.inputs("lower", (input, weight, bias))
    if not cxx and bias is not None and isinstance(input, Tensor) and \
            bias._array.dtype != input._array.dtype:
        raise RuntimeError("Input type (%s) and bias type (%s) should be the same"
                           % (_CXX.get(input._array.dtype.name, input._array.dtype.name),
                              _CXX.get(bias._array.dtype.name, bias._array.dtype.name)))
    unbatched = _check_input(op, input, weight, nd, groups=groups,
                             geometry=(stride, padding, 0, dilation), bias=bias)
    direct = None
    if cxx:
        direct = (all(v == 1 for v in weight.shape[2:]) and max(_pair(stride, nd)) == 1
                  and not isinstance(padding, str) and max(_pair(padding, nd)) == 0)
    stride = _pair(stride, nd, "stride")
    dilation = _pair(dilation, nd, "dilation")
    dilated = any(d != 1 for d in dilation)
    _check_dtypes(input, weight, bias, False, nd, direct, dilated)
    if unbatched:
        input = input.unsqueeze(0)
    k = weight.shape[2:]
    if isinstance(padding, str):
        if padding == "valid":
            pads = [(0, 0)] * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            pads = []
            for a in range(nd):
                total = dilation[a] * (k[a] - 1)
                pads.append((total // 2, total - total // 2))
            if any(lo != hi for lo, hi in pads) and not _WARNED_SAME[0]:
                _WARNED_SAME[0] = True      # (torch's TORCH_WARN_ONCE)
                warnings.warn("Using padding='same' with even kernel lengths and odd dilation "
                              "may require a zero-padded copy of the input be created",
                              UserWarning, stacklevel=3)
        else:
            raise RuntimeError("Invalid padding string: '%s'" % padding)
    else:
        pads = [(p, p) for p in _pair(padding, nd, "padding")]
    sizes = input.shape[2:]
    padded = [sizes[a] + pads[a][0] + pads[a][1] for a in range(nd)]
    eff = [dilation[a] * (k[a] - 1) + 1 for a in range(nd)]
    if any(padded[a] < eff[a] for a in range(nd)):
        raise RuntimeError("Calculated padded input size per channel: (%s). Kernel size: (%s). "
                           "Kernel size can't be greater than actual input size"
                           % (" x ".join(map(str, padded)), " x ".join(map(str, eff))))
    no_channels = input.shape[0] and not input.shape[1]
    if input.shape[0] == 0 or no_channels:
        input = _empty_batch(input, weight, bias, cxx)
    else:
        _check_numel(input, nd)
        if _onednn(input, weight, nd, False, stride, dilation, (0,) * nd, groups):
            _onednn_checks(input, weight, bias, nd, False, dilation)
        else:
            _check_zero_dilation(nd, dilation, False)
            _check_kernel_dtypes(input, weight, bias, False, nd, dilated)
            if bias is not None and bias._array.dtype != input._array.dtype:
                bias = bias.to(input.dtype)     # (torch.convolution's kernels cast the bias)
    if no_channels:
        outs = [(padded[a] - eff[a]) // stride[a] + 1 for a in range(nd)]
        out = NoChannelConvolution.apply(input, weight, bias, outs)
    elif nd == 3:
        out = ConvolutionNd.apply(input, weight, bias, stride, tuple(pads), dilation, groups)
    else:
        if nd == 1:
            stride, dilation = (1,) + stride, (1,) + dilation
            pads = [(0, 0)] + pads
        out = Convolution.apply(input, weight, bias, stride, pads[0] + pads[1], dilation,
                                groups, nd == 1)
    return out.squeeze(0) if unbatched else out


def _transposed_size(input, weight, nd, unbatched, stride, padding, output_padding, dilation,
                     groups):
    """A transposed convolution's output size per spatial dim. An empty batch views its
    output to that shape (torch's error for negative sizes)."""
    sizes = tuple(input.shape[-nd:])
    s, p = _pair(stride, nd, "stride"), _pair(padding, nd, "padding")
    op, d = _pair(output_padding, nd, "output_padding"), _pair(dilation, nd, "dilation")
    k = tuple(weight.shape[2:])
    outs = tuple((sizes[a] - 1) * s[a] - 2 * p[a] + d[a] * (k[a] - 1) + op[a] + 1
                 for a in range(nd))
    if not unbatched and input.shape[0] == 0:
        _check_view([0, weight.shape[1] * groups] + [1] * (nd == 1) + list(outs))
    return outs


def _check_transposed_kernel(nd, sizes, outs, stride, output_padding, dilation):
    """The CPU kernel's shape checks (1-d reads as 2-d): zero dilation, output padding
    reaching both stride and dilation, an empty output."""
    _check_zero_dilation(nd, dilation, True)
    o_pad, o_str, o_dil = output_padding, stride, dilation
    if nd == 1:
        o_pad, o_str, o_dil = (0,) + o_pad, (1,) + o_str, (1,) + o_dil
        sizes, outs = (1,) + sizes, (1,) + outs
    for a in range(len(o_pad)):
        if o_pad[a] < o_str[a] or o_pad[a] < o_dil[a]:
            continue
        if nd == 3:
            raise RuntimeError("output padding must be smaller than either stride or dilation, "
                               "but got " + " ".join(
                                   "%s_%s: %d" % (what, dim, v[i]) for what, v in
                                   (("output_padding", o_pad), ("stride", o_str),
                                    ("dilation", o_dil))
                                   for i, dim in enumerate(("depth", "height", "width"))))
        raise RuntimeError("output padding must be smaller than either stride or dilation, "
                           "but got output_padding_height: %d output_padding_width: %d "
                           "stride_height: %d stride_width: %d dilation_height: %d "
                           "dilation_width: %d" % (o_pad[0], o_pad[-1], o_str[0], o_str[-1],
                                                   o_dil[0], o_dil[-1]))
    if any(o < 1 for o in outs):
        raise RuntimeError("Given input size per channel: (%s). Calculated output size per "
                           "channel: (%s). Output size is too small"
                           % (" x ".join(map(str, sizes)), " x ".join(map(str, outs))))


def _check_view(shape):
    """torch's error when an empty tensor is viewed to ``shape`` (negative sizes)."""
    infer = False
    for i, v in enumerate(shape):
        if v == -1:
            if infer:
                raise RuntimeError("only one dimension can be inferred")
            infer = True
        elif v < 0:
            raise RuntimeError("invalid shape dimension %d at index %d of shape %s"
                               % (v, i, list(shape)))
    if infer:
        raise RuntimeError("cannot reshape tensor of 0 elements into shape %s because the "
                           "unspecified dimension size -1 can be any value and is ambiguous"
                           % list(shape))


def _conv_t(op, nd, input, weight, bias, stride, padding, output_padding, groups, dilation,
            cxx=False):
    if _grad_state.autocast:
        input, weight, bias = _autocast.inputs("lower", (input, weight, bias))
    unbatched = _check_input(op, input, weight, nd, transposed=True, groups=groups,
                             geometry=(stride, padding, output_padding, dilation), bias=bias)
    outs = _transposed_size(input, weight, nd, unbatched, stride, padding, output_padding,
                            dilation, groups)
    _check_dtypes(input, weight, bias, True, nd, True if cxx else None)
    if unbatched:
        input = input.unsqueeze(0)
    stride = _pair(stride, nd, "stride")
    padding = _pair(padding, nd, "padding")
    output_padding = _pair(output_padding, nd, "output_padding")
    dilation = _pair(dilation, nd, "dilation")
    empty = input.shape[0] == 0
    if empty:
        input = _empty_batch(input, weight, bias, cxx)
    else:
        _check_numel(input, nd)
    if not empty and _onednn(input, weight, nd, True, stride, dilation, output_padding, groups):
        _onednn_checks(input, weight, bias, nd, True, dilation)
        if min(outs) < 0:
            raise RuntimeError("could not construct a memory descriptor using a format tag")
        if min(outs) == 0:      # (oneDNN returns an empty output)
            out = ConvTransposeNd.apply(input, weight, bias, stride, padding, output_padding,
                                        dilation, groups)
            return out.squeeze(0) if unbatched else out
    elif not empty:
        _check_transposed_kernel(nd, tuple(input.shape[2:]), outs, stride, output_padding,
                                 dilation)
        _check_kernel_dtypes(input, weight, bias, True, nd, False)
    if nd == 3:
        out = ConvTransposeNd.apply(input, weight, bias, stride, padding, output_padding,
                                    dilation, groups)
        return out.squeeze(0) if unbatched else out
    if nd == 1:
        stride, padding, dilation = (1,) + stride, (0,) + padding, (1,) + dilation
        output_padding = (0,) + output_padding
    out = ConvTranspose.apply(input, weight, bias, stride, padding, output_padding, dilation,
                              groups, nd == 1)
    return out.squeeze(0) if unbatched else out


def convolution_cxx(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                    groups):
    """``torch.convolution``: no complex kernel (``F.conv*`` split a complex convolution into
    real ones)."""
    n = input.dim() - 2
    if n not in (1, 2, 3):
        raise RuntimeError("Expected 3D (unbatched) or 4D (batched) input to conv2d, but got "
                           "input of size: %s" % list(input.shape))
    if transposed:
        return _conv_t("conv_transpose%dd" % n, n, input, weight, bias, stride, padding,
                       output_padding, groups, dilation, cxx=True)
    return _conv("conv%dd" % n, n, input, weight, bias, stride, padding, dilation, groups,
                 cxx=True)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution over ``(N, C_in, L)``. Matches ``torch.nn.functional.conv1d``."""
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution over ``(N, C_in, H, W)`` (one GEMM over an im2col view).

    Matches ``torch.nn.functional.conv2d``; ``padding`` may be an int, a pair, ``'valid'`` or
    ``'same'``.
    """
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution over ``(N, C_in, D, H, W)``. Matches ``torch.nn.functional.conv3d``."""
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """1-D transposed convolution. Matches ``torch.nn.functional.conv_transpose1d``."""
    return _conv_t("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding,
                   groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """2-D transposed convolution (the gradient of conv2d). Matches torch's."""
    return _conv_t("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding,
                   groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """3-D transposed convolution. Matches ``torch.nn.functional.conv_transpose3d``."""
    return _conv_t("conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding,
                   groups, dilation)


class ConvTbc(Function):
    """1-d convolution in time-batch-channel layout (torch's ``conv_tbc``)."""

    node_name = "ConvTbcBackward0"

    @staticmethod
    def forward(ctx, input, weight, bias, pad):
        x = input._array.transpose(1, 2, 0)
        w = weight._array.transpose(2, 1, 0)
        out = _conv_nd_arr(x, w, (1,), ((pad, pad),), (1,), 1) + bias._array.reshape(1, -1, 1)
        out = out.astype(x.dtype, copy=False)     # (torch's output takes the input's dtype)
        ctx.pad = pad
        ctx.save_for_backward(input, weight)
        return Tensor._wrap(get_array_module(out).ascontiguousarray(out.transpose(2, 0, 1)))

    @staticmethod
    def backward(ctx, grad_output):
        input, weight = ctx.saved_tensors
        gx, gw, gb = _conv_nd_grads(input.permute(1, 2, 0), weight.permute(2, 1, 0),
                                    grad_output.permute(1, 2, 0),
                                    ((1,), ((ctx.pad, ctx.pad),), (1,), 1), ctx.needs_input_grad)
        return (None if gx is None else gx.permute(2, 0, 1),
                None if gw is None else gw.permute(2, 1, 0), gb, None)


def conv_tbc(input, weight, bias, pad=0):
    """1-D convolution of ``input`` (T, B, C_in) with ``weight`` (k, C_in, C_out) and ``bias``
    (C_out,). Matches ``torch.conv_tbc``."""
    for name, t, n in (("Input", input, 3), ("Weight", weight, 3), ("Bias", bias, 1)):
        if t.dim() != n:
            raise RuntimeError("%s must have %d dims: time, batch, in_channel" % (name, n)
                               if name == "Input" else
                               "%s must have %d dims: kw, in_channels, out_channels" % (name, n)
                               if name == "Weight" else "Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if bias.shape[0] != weight.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    if input.is_complex() and is_grad_enabled() and any(
            t.requires_grad for t in (input, weight, bias)):
        raise RuntimeError("conv_tbc does not support automatic differentiation for outputs "
                           "with complex dtype.")
    _tbc_views(input, weight.shape[0], int(pad), weight.shape[2], weight._array.dtype)
    return ConvTbc.apply(input, weight, bias, int(pad))


def _tbc_views(input, kw, pad, out_channels, weight_dtype):
    """torch's conv_tbc views each kernel tap's time window (t, B, C) as (t * B, C): a strided
    input whose time and batch dims do not merge raises its view error."""
    length, b = input.shape[0], input.shape[1]
    st = input.stride()
    olen = length - kw + 1 + 2 * pad
    if olen < 0:
        raise RuntimeError("Trying to create tensor with negative dimension %d: %s"
                           % (olen, [olen, b, out_channels]))
    for k in range(kw):
        t = min(length + pad - k, olen) - max(0, pad - k)
        if t > 1 and b > 1 and input.shape[2] and st[0] != st[1] * b:
            raise RuntimeError("view size is not compatible with input tensor's size and stride "
                               "(at least one dimension spans across two contiguous subspaces). "
                               "Use .reshape(...) instead.")
        if t <= 0:
            continue
        if weight_dtype != input._array.dtype:
            raise RuntimeError("self and mat2 must have the same dtype, but got %s and %s"
                               % (_dt.scalar_type_name(input._array.dtype),
                                  _dt.scalar_type_name(weight_dtype)))
        if not b * out_channels:
            continue        # (torch's addmm returns before its kernel)
        if not input.shape[2]:
            if input._array.dtype.kind == "b":
                raise RuntimeError("result type Long can't be cast to the desired output type "
                                   "Bool")
            continue
        not_implemented_for(input._array, "addmm_impl_cpu_", "b")
