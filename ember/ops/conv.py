"""Convolutions: conv1d, conv2d, conv_transpose1d, conv_transpose2d.

Each is one GEMM over an im2col view of the padded input (``as_strided``, no copy until the
GEMM); the input gradient scatters back with a loop over kernel positions only (col2im).
"""
import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..autograd.function import Function, once_differentiable
from ..tensor import Tensor

__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d"]


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


def _im2col(xp, k, s, d, out_hw):
    """The patches of ``xp`` as one contiguous array (N, C * kh * kw, Ho * Wo).

    Rows run over (c, i, j), so each copied run is a row of output pixels, not a kernel row.
    """
    n, c, _, _ = xp.shape
    s0, s1, s2, s3 = xp.strides
    v = as_strided(xp, (n, c, k[0], k[1], out_hw[0], out_hw[1]),
                   (s0, s1, s2 * d[0], s3 * d[1], s2 * s[0], s3 * s[1]), writeable=False)
    return np.ascontiguousarray(v).reshape(n, c * k[0] * k[1], out_hw[0] * out_hw[1])


def _gemm(cols, w, groups, n, out_hw):
    """out[n, o, h, w] = sum_{c, i, j} w[o, c, i, j] * cols[n, (c, i, j), (h, w)]."""
    o = w.shape[0]
    if groups == 1:
        out = np.matmul(w.reshape(o, -1), cols)
    else:
        out = np.matmul(w.reshape(groups, o // groups, -1),
                        cols.reshape(n, groups, -1, cols.shape[-1]))
    return out.reshape(n, o, out_hw[0], out_hw[1])


def _grad_weight(gy, cols, groups, w_shape):
    """dw[o, (c, i, j)] = sum_{n, (h, w)} gy[n, o, h, w] * cols[n, (c, i, j), (h, w)]."""
    n, o = gy.shape[:2]
    gm = gy.reshape(n, groups, o // groups, -1)
    cm = cols.reshape(n, groups, -1, cols.shape[-1])
    return np.matmul(gm, cm.transpose(0, 1, 3, 2)).sum(axis=0).reshape(w_shape)


def _col2im(gy, w, groups, padded_shape, s, d):
    """The gradient of the padded input: GEMM to columns, then scatter per kernel position.

    With stride 1 the columns are computed for output rows as wide as the padded input (the
    extra columns of ``gy`` are zero), so each kernel position adds one long contiguous run.
    """
    o, cg, kh, kw = w.shape
    n, _, ho, wo = gy.shape
    hp, wp = padded_shape[2:]
    c = cg * groups
    wide = s == (1, 1)
    if wide:
        gyw = np.zeros((n, o, ho, wp), dtype=gy.dtype)
        gyw[..., :wo] = gy
        gy, wo = gyw, wp
    wt = w.reshape(groups, o // groups, -1).transpose(0, 2, 1)
    dcols = np.matmul(wt, gy.reshape(n, groups, o // groups, ho * wo))
    if wide:
        dcols = dcols.reshape(n, c, kh, kw, ho * wp)
        dx = np.zeros((n, c, hp * wp + (kw - 1) * d[1]), dtype=gy.dtype)
        for i in range(kh):
            for j in range(kw):
                off = i * d[0] * wp + j * d[1]
                dx[:, :, off:off + ho * wp] += dcols[:, :, i, j]
        return dx[:, :, :hp * wp].reshape(padded_shape)
    dcols = dcols.reshape(n, c, kh, kw, ho, wo)
    dx = np.zeros(padded_shape, dtype=gy.dtype)
    for i in range(kh):
        for j in range(kw):
            h0, w0 = i * d[0], j * d[1]
            dx[:, :, h0:h0 + s[0] * (ho - 1) + 1:s[0], w0:w0 + s[1] * (wo - 1) + 1:s[1]] += \
                dcols[:, :, i, j]
    return dx


def _out_size(size, k, s, p, d):
    return (size + p - d * (k - 1) - 1) // s + 1


class Convolution(Function):
    node_name = "ConvolutionBackward0"

    @staticmethod
    def forward(ctx, input, weight, bias, stride, padding, dilation, groups, squeeze):
        x, w = input._array, weight._array
        if squeeze:
            x, w = x[:, :, None, :], w[:, :, None, :]
        pt, pb, pl, pr = padding
        xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr))) if any(padding) else x
        k = w.shape[2:]
        out_hw = (_out_size(x.shape[2], k[0], stride[0], pt + pb, dilation[0]),
                  _out_size(x.shape[3], k[1], stride[1], pl + pr, dilation[1]))
        cols = _im2col(xp, k, stride, dilation, out_hw)
        out = _gemm(cols, w, groups, x.shape[0], out_hw)
        if bias is not None:
            out += bias._array.reshape(1, -1, 1, 1)
        ctx.save_for_backward(input, weight)
        ctx.cols = cols if weight.requires_grad else None
        ctx.conf = (stride, padding, dilation, groups, squeeze, xp.shape)
        return Tensor._wrap(out[:, :, 0] if squeeze else out)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        input, weight = ctx.saved_tensors
        stride, padding, dilation, groups, squeeze, padded_shape = ctx.conf
        gy, x, w = grad_output._array, input._array, weight._array
        if squeeze:
            gy, x, w = gy[:, :, None, :], x[:, :, None, :], w[:, :, None, :]
        gy = gy.astype(x.dtype, copy=False)
        gx = gw = gb = None
        pt, pb, pl, pr = padding
        if ctx.needs_input_grad[0]:
            dxp = _col2im(gy, w, groups, padded_shape, stride, dilation)
            gx = dxp[:, :, pt:pt + x.shape[2], pl:pl + x.shape[3]]
            gx = Tensor._wrap(np.ascontiguousarray(gx[:, :, 0] if squeeze else gx))
        if ctx.needs_input_grad[1]:
            cols = ctx.cols
            if cols is None:
                xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr))) if any(padding) else x
                cols = _im2col(xp, w.shape[2:], stride, dilation, gy.shape[2:])
            gw = _grad_weight(gy, cols, groups, w.shape)
            gw = Tensor._wrap(gw[:, :, 0] if squeeze else gw)
        if ctx.needs_input_grad[2]:
            gb = Tensor._wrap(gy.sum(axis=(0, 2, 3)))
        return gx, gw, gb, None, None, None, None, None


class ConvTranspose(Function):
    node_name = "ConvolutionBackward0"

    @staticmethod
    def forward(ctx, input, weight, bias, stride, padding, output_padding, dilation, groups,
                squeeze):
        x, w = input._array, weight._array
        if squeeze:
            x, w = x[:, :, None, :], w[:, :, None, :]
        k = w.shape[2:]
        full = tuple((x.shape[2 + a] - 1) * stride[a] + dilation[a] * (k[a] - 1) + 1
                     + output_padding[a] for a in range(2))
        cout = w.shape[1] * groups
        dxp = _col2im(x, w, groups, (x.shape[0], cout) + full, stride, dilation)
        out = dxp[:, :, padding[0]:full[0] - padding[0], padding[1]:full[1] - padding[1]]
        out = np.ascontiguousarray(out)
        if bias is not None:
            out += bias._array.reshape(1, -1, 1, 1)
        ctx.save_for_backward(input, weight)
        ctx.conf = (stride, padding, dilation, groups, squeeze)
        return Tensor._wrap(out[:, :, 0] if squeeze else out)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        input, weight = ctx.saved_tensors
        stride, padding, dilation, groups, squeeze = ctx.conf
        gy, x, w = grad_output._array, input._array, weight._array
        if squeeze:
            gy, x, w = gy[:, :, None, :], x[:, :, None, :], w[:, :, None, :]
        gy = gy.astype(x.dtype, copy=False)
        p = padding
        gyp = np.pad(gy, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1]))) if any(p) else gy
        cols = _im2col(gyp, w.shape[2:], stride, dilation, x.shape[2:])
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gx = _gemm(cols, w, groups, x.shape[0], x.shape[2:])
            gx = Tensor._wrap(gx[:, :, 0] if squeeze else gx)
        if ctx.needs_input_grad[1]:
            gw = _grad_weight(x, cols, groups, w.shape)
            gw = Tensor._wrap(gw[:, :, 0] if squeeze else gw)
        if ctx.needs_input_grad[2]:
            gb = Tensor._wrap(gy.sum(axis=(0, 2, 3)))
        return gx, gw, gb, None, None, None, None, None, None


def _check_input(op, input, weight, nd, transposed=False, groups=1):
    if not isinstance(input, Tensor):
        raise TypeError("%s(): argument 'input' must be Tensor, not %s"
                        % (op, type(input).__name__))
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError("Expected %dD (unbatched) or %dD (batched) input to %s, but got "
                           "input of size: %s" % (nd + 1, nd + 2, op, list(input.shape)))
    if weight.dim() != nd + 2:
        raise RuntimeError("%s: expected weight to be %d-D, got %d-D of shape %s"
                           % (op, nd + 2, weight.dim(), tuple(weight.shape)))
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
    return input.dim() == nd + 1


def _conv(op, nd, input, weight, bias, stride, padding, dilation, groups):
    unbatched = _check_input(op, input, weight, nd, groups=groups)
    if unbatched:
        input = input.unsqueeze(0)
    stride = _pair(stride, nd, "stride")
    dilation = _pair(dilation, nd, "dilation")
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
    if nd == 1:
        stride, dilation = (1,) + stride, (1,) + dilation
        pads = [(0, 0)] + pads
    out = Convolution.apply(input, weight, bias, stride, pads[0] + pads[1], dilation, groups,
                            nd == 1)
    return out.squeeze(0) if unbatched else out


def _conv_t(op, nd, input, weight, bias, stride, padding, output_padding, groups, dilation):
    unbatched = _check_input(op, input, weight, nd, transposed=True, groups=groups)
    if unbatched:
        input = input.unsqueeze(0)
    stride = _pair(stride, nd, "stride")
    padding = _pair(padding, nd, "padding")
    output_padding = _pair(output_padding, nd, "output_padding")
    dilation = _pair(dilation, nd, "dilation")
    for a in range(nd):
        if output_padding[a] >= stride[a] and output_padding[a] >= dilation[a]:
            raise RuntimeError("output padding must be smaller than either stride or dilation, "
                               "but got output_padding_height: %d output_padding_width: %d "
                               "stride_height: %d stride_width: %d dilation_height: %d "
                               "dilation_width: %d" % (output_padding[0], output_padding[-1],
                                                       stride[0], stride[-1], dilation[0],
                                                       dilation[-1]))
    if nd == 1:
        stride, padding, dilation = (1,) + stride, (0,) + padding, (1,) + dilation
        output_padding = (0,) + output_padding
    out = ConvTranspose.apply(input, weight, bias, stride, padding, output_padding, dilation,
                              groups, nd == 1)
    return out.squeeze(0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution over ``(N, C_in, L)``. Matches ``torch.nn.functional.conv1d``."""
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution over ``(N, C_in, H, W)`` (one GEMM over an im2col view).

    Matches ``torch.nn.functional.conv2d``; ``padding`` may be an int, a pair, ``'valid'`` or
    ``'same'``.
    """
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


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
