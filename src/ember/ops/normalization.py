"""Normalization: batch_norm, layer_norm, group_norm, instance-free and fused.

One Function per call, with torch's node: it standardises over a set of axes (``(x - mean) /
sqrt(var + eps)``, biased variance) and applies the affine part.
"""
import math

import numpy as np

from ..autograd._sum_to import sum_to_size
from ..autograd.function import Function
from ..autograd.grad_mode import state as _grad_state
from ..backend import errstate, get_array_module
from ..tensor import Tensor
from .. import dtypes as _dt
from ._util import not_implemented_for, xp_of
from .comparison import where
from .conversion import _in_order
from .creation import get_num_threads as _creation_threads
from .shape import CloneInOrder

# (``torch.batch_norm`` is the C++ form, ``ember._torch_ns.batch_norm``: another argument order)
__all__ = ["layer_norm", "group_norm"]


def _inv_std(var, eps):
    """``1 / sqrt(var + eps)`` of torch's batch-norm statistics (its ``InvStd``): 0 where both
    ``var`` and ``eps`` are 0."""
    with errstate(divide="ignore", invalid="ignore"):
        invstd = 1 / get_array_module(var).sqrt(var + eps)
    if eps == 0:
        invstd[var == 0] = 0
    return invstd


def fma(a, b, c):
    """``a * b + c`` rounded once, as the fused multiply-adds of torch's CPU kernels (float32:
    exact in double; float64: Dekker's two-product and two-sum, falling back to the plain
    form where those are not finite)."""
    xp = get_array_module(a, b, c)
    dt = np.result_type(*(getattr(v, "dtype", v) for v in (a, b, c)))
    with errstate(invalid="ignore", over="ignore"):
        if dt.itemsize <= 4:
            return (xp.asarray(a, dtype=np.float64) * xp.asarray(b, dtype=np.float64)
                    + xp.asarray(c, dtype=np.float64)).astype(dt)
        a, b, c = (xp.asarray(v, dtype=dt) for v in (a, b, c))
        p = a * b
        k = dt.type(134217729.0)        # (2**27 + 1: Veltkamp's split)
        ta, tb = a * k, b * k
        ah, bh = ta - (ta - a), tb - (tb - b)
        al, bl = a - ah, b - bh
        e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
        s = p + c
        z = s - p
        r = s + (((p - (s - z)) + (c - z)) + e)
        return xp.where(xp.isfinite(r), r, p + c)


def _add_moments(m0_add, m1_add, m2_add, acc):
    """torch's ``AddMoments``: merge (count, mean, M2) ``m0_add, m1_add, m2_add`` into the
    accumulator list ``acc``."""
    m0, m1, m2 = acc
    t = m1.dtype.type
    n = m0 + m0_add
    c = t(0) if n == 0 else t(m0_add) / t(n)
    delta = m1_add - m1
    # (fused multiply-adds where torch's build contracts them)
    acc[0], acc[1], acc[2] = n, fma(c, delta, m1), m2 + fma(delta * delta * c, t(m0), m2_add)


def _add_moments_vec(m0_add, m1_add, m2_add, acc):
    """torch's ``AddMomentsVec`` (its last step a fused multiply-add)."""
    m0, m1, m2 = acc
    t = m1.dtype.type
    n = m0 + m0_add
    c = t(0) if n == 0 else t(m0_add) / t(n)
    delta = m1_add - m1
    m2_tmp = m2 + m2_add
    cd = c * delta
    acc[0], acc[1], acc[2] = n, m1 + cd, fma(delta * t(m0), cd, m2_tmp)


def rowwise_moments(x):
    """Mean and biased variance of each row of the 2-d array ``x`` as torch's CPU
    ``RowwiseMoments`` (Welford per lane of 32-byte vectors in chunks of 16 with fused
    multiply-adds, a cascade, the scalar tail, then the lanes one by one; a 16-bit input in
    float32, each vector as two float32 halves): where rounding, infinities and NaN land.
    Returns float32 statistics for a 16-bit input, else ``x``'s dtype."""
    xp = get_array_module(x)
    rows, size = x.shape
    half = x.dtype.itemsize < 4
    v = 32 // x.dtype.itemsize                  # (elements per vector of the input dtype)
    fv = v // 2 if half else v                  # (lanes per accumulator vector)
    op = np.dtype(np.float32) if half else x.dtype
    t = op.type
    xf = x.astype(op) if half else x
    n = size // v
    m = -(-n // 16)
    depth = 1 if m <= 1 else int(m - 1).bit_length()

    def zeros():
        return xp.zeros((rows, fv), op)

    with errstate(invalid="ignore", over="ignore", divide="ignore"):
        # (the Welford steps of every chunk at once: chunk k holds vectors 16k .. 16k+15)
        body = xf[:, :n * v].reshape(rows, n, v)
        parts = [body] if not half else [body[:, :, :fv], body[:, :, fv:]]
        chunks = []
        for part in parts:
            full = n // 16
            res = []
            for lo, k, per in ((0, full, 16), (full * 16, 1, n - full * 16)):
                if k == 0 or per == 0:
                    res.append(None)
                    continue
                xs = part[:, lo:lo + k * per].reshape(rows, k, per, fv)
                m1 = xp.zeros((rows, k, fv), op)
                m2 = xp.zeros((rows, k, fv), op)
                for j in range(per):
                    xj = xs[:, :, j]
                    delta = xj - m1
                    m1 = fma(t(1) / t(j + 1), delta, m1)
                    m2 = fma(delta, xj - m1, m2)
                res.append((m1, m2))
            chunks.append(res)
        stk = [[0, zeros(), zeros()] for _ in range(depth)]
        full = n // 16
        for i in range(m):
            cnt = min(16, n - i * 16)
            for res in chunks:
                if i < full:
                    m1, m2 = res[0][0][:, i], res[0][1][:, i]
                else:
                    m1, m2 = res[1][0][:, 0], res[1][1][:, 0]
                _add_moments_vec(cnt, m1, m2, stk[0])
            mask, j = i + 1, 1
            while j < depth and mask & 1 == 0:
                _add_moments_vec(stk[j - 1][0], stk[j - 1][1], stk[j - 1][2], stk[j])
                stk[j - 1] = [0, zeros(), zeros()]
                mask >>= 1
                j += 1
        for i in range(1, depth):
            _add_moments_vec(stk[i][0], stk[i][1], stk[i][2], stk[0])
        acc = [0, xp.zeros(rows, op), xp.zeros(rows, op)]
        for k in range(n * v, size):
            xk = xf[:, k]
            delta = xk - acc[1]
            acc[0] += 1
            acc[1] = acc[1] + delta / t(acc[0])
            acc[2] = acc[2] + delta * (xk - acc[1])
        m0_add = n * v // fv
        for lane in range(fv):
            _add_moments(m0_add, stk[0][1][:, lane], stk[0][2][:, lane], acc)
        return acc[1], acc[2] / t(size)


def batch_stats(x, weight, bias, axes, eps):
    """torch's CPU batch-norm statistics in training of array ``x`` over ``axes``: ``(mean,
    invstd)`` (kept dims) in ``x``'s dtype, float32 with parameters of another dtype (torch's
    mixed-type kernel). Double accumulation; 16-bit dtypes follow torch's kernels (below)."""
    sdt = x.dtype
    if any(p is not None and p.numel() and p._array.dtype != x.dtype for p in (weight, bias)):
        sdt = np.dtype(np.float32)
    x64 = x.astype(np.float64)
    m64 = x64.mean(axis=axes, keepdims=True)
    mean = m64.astype(sdt)
    # (a dense input's kernels: float16 keeps float statistics; bfloat16 rounds the sum of
    # squares and the variance to it, taken about the rounded mean unless the input is
    # contiguous with spatial dims; a strided input's mean comes rounded, from at::mean)
    half = sdt.itemsize == 2 and not _strided(x)
    bf = half and sdt != np.float16
    n = math.prod(x.shape[a] for a in axes)
    d = x64 - (m64 if half and (not bf or x.flags.c_contiguous and n > x.shape[0]) else mean)
    var = (d * d).sum(axis=axes, keepdims=True)
    var = (var.astype(sdt).astype(np.float64) / n).astype(sdt) if bf else var / n
    return mean, _inv_std(var, eps).astype(sdt)


class Norm(Function):
    """Batch, layer and group norm in one node, as torch's ``NativeBatchNormBackward0``,
    ``NativeLayerNormBackward0`` and ``NativeGroupNormBackward0``: standardise over ``axes``
    of the input seen as ``gshape`` (group norm; None: as is), then scale and shift by
    ``weight`` and ``bias`` broadcast as ``pshape``.

    Edges: input, weight, bias (a 0-element placeholder stands for an absent one, so that its
    ``next_functions`` entry is None, as torch's). ``stats`` is None (batch statistics) or the
    boxed running ``(mean, var)`` of batch norm in evaluation mode: constants without an edge.
    """

    node_name = "NativeBatchNormBackward0"

    @staticmethod
    def forward(ctx, input, weight, bias, axes, eps, name, pshape, gshape, stats):
        if name != "NativeBatchNormBackward0":
            ctx.set_node_name(name)
        ctx.affine = (weight.numel() > 0, bias.numel() > 0)
        ctx.axes, ctx.eps, ctx.pshape, ctx.gshape = axes, eps, pshape, gshape
        ctx.deferred = stats[2] if stats is not None else None
        ctx.bn = name == "NativeBatchNormBackward0"
        ctx.gn = name == "NativeGroupNormBackward0"
        ctx.ln = name == "NativeLayerNormBackward0"
        order = _CHANNELS_LAST_ORDER.get(input._array.ndim)
        ctx.cl_order = order if (ctx.bn or ctx.gn) and order is not None and \
            not input._array.flags.c_contiguous and _in_order(input._array, order) else None
        if ctx.ln:
            x = input._array
            rows = math.prod(x.shape[:x.ndim - len(axes)])
            out, mean, rstd = layer_norm_forward(
                x.reshape(rows, x.size // rows if rows else math.prod(pshape)),
                weight._array.reshape(-1), bias._array.reshape(-1), eps, *ctx.affine)
            ctx.save_for_backward(input, weight, bias, None, None, Tensor._wrap(mean),
                                  Tensor._wrap(rstd))
            return Tensor._wrap(out.reshape(x.shape))
        if ctx.gn:
            out, mean, rstd = group_norm_forward(input._array, weight._array, bias._array,
                                                 gshape[1], eps, *ctx.affine)
            ctx.save_for_backward(input, weight, bias, None, None, Tensor._wrap(mean),
                                  Tensor._wrap(rstd))
            return Tensor._wrap(out)
        x = input._array
        xp = xp_of(input)
        xs = x if gshape is None else x.reshape(gshape)
        if stats is None and name == "NativeBatchNormBackward0" and x.dtype.itemsize <= 4:
            mean, invstd = batch_stats(x, weight, bias, axes, eps)
            xc = xs - mean
            ctx.save_for_backward(input, weight, bias, None, None, None, None)
        elif stats is None:
            mean = xs.mean(axis=axes, keepdims=True)
            xc = xs - mean
            var = (xc * xc).mean(axis=axes, keepdims=True)
            if name == "NativeBatchNormBackward0":
                invstd = _inv_std(var, x.dtype.type(eps))
            else:
                # (torch adds its double eps: the root in double, rounded to the dtype)
                with errstate(divide="ignore", invalid="ignore"):
                    invstd = (1 / xp.sqrt(var.astype(np.float64) + eps)).astype(var.dtype)
            ctx.save_for_backward(input, weight, bias, None, None, None, None)
        else:
            # (the running statistics in the opmath type: float32 for a 16-bit dtype)
            op = np.dtype(np.float32) if x.dtype.itemsize < 4 and name == \
                "NativeBatchNormBackward0" else x.dtype
            mean = stats[0]._array.reshape(pshape).astype(op, copy=False)
            invstd = 1 / xp.sqrt(stats[1]._array.reshape(pshape).astype(op, copy=False)
                                 + op.type(eps))
            xc = xs - mean
            ctx.save_for_backward(input, weight, bias, Tensor._wrap(mean), Tensor._wrap(invstd),
                                  None, None)
        if ctx.bn:
            # NOTE: torch's CPU kernel: x * alpha + beta with alpha = weight * invstd and
            # beta = bias - mean * alpha (which decides how inf/NaN parameters propagate).
            # (alpha, beta and the output in the opmath type: float32 for a 16-bit dtype)
            op = np.dtype(np.float32) if x.dtype.itemsize < 4 else x.dtype
            alpha = invstd.astype(op, copy=False)
            if ctx.affine[0]:
                with errstate(invalid="ignore"):     # (0 * inf: NaN, as torch)
                    alpha = alpha * weight._array.reshape(pshape).astype(op, copy=False)
            beta = -mean.astype(op, copy=False) * alpha
            if ctx.affine[1] and x.dtype.itemsize <= 4 and x.dtype.kind == "f":
                # (a fused multiply-add too: exact in double, then rounded)
                beta = (bias._array.reshape(pshape).astype(np.float64)
                        - mean.astype(np.float64) * alpha.astype(np.float64)).astype(op)
            elif ctx.affine[1]:
                beta = bias._array.reshape(pshape) + beta
            with errstate(invalid="ignore"):
                if _strided(x) or not all(p._array.flags.c_contiguous for p in
                                          (weight, bias) + tuple(stats[:2] if stats else ())):
                    # (torch's strided kernel, in training too: ((x - mean) * invstd) * w + b,
                    # element by element; a 16-bit input with parameters of its dtype rounds
                    # every step to it, as its scalar arithmetic does)
                    out = _strided_transform(xs, mean, invstd, weight, bias, stats, eps,
                                             pshape, ctx.affine, op)
                elif stats is not None and bool(xp.isfinite(alpha).all()) and \
                        bool(xp.isfinite(beta).all()):
                    # (finite parameters: the same value, without torch's cancellation near
                    # the running mean; see tests/test_extremes.py)
                    out = xc * alpha
                    if ctx.affine[1]:
                        out += bias._array.reshape(pshape)
                elif x.dtype.itemsize <= 4 and x.dtype.kind == "f":
                    # (torch's vectorised kernel: one fused multiply-add, exact in double)
                    out = (xs.astype(np.float64) * alpha.astype(np.float64)
                           + beta.astype(np.float64)).astype(op)
                else:
                    out = xs * alpha + beta
            return Tensor._wrap(out.astype(x.dtype, copy=False))
        xc *= invstd
        out = xc.reshape(x.shape)
        if ctx.affine[0]:
            out = out * weight._array.reshape(pshape)
        if ctx.affine[1]:
            out = out + bias._array.reshape(pshape)
        return Tensor._wrap(out.astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.deferred:
            raise RuntimeError(ctx.deferred)
        gx, gw, gb = _norm_grads(ctx, grad_output)
        order = ctx.cl_order
        if gx is not None and order is not None and not _in_order(gx._array, order):
            # (torch's batch and group norm kernels give the input's gradient the input's
            # memory format: channels-last stays so, whatever the incoming gradient's layout)
            gx = CloneInOrder.apply(gx, order)
        # (parameter gradients are contiguous, as torch's, whatever the input's layout)
        gw = None if gw is None else gw.contiguous()
        gb = None if gb is None else gb.contiguous()
        return gx, gw, gb, None, None, None, None, None, None


_CHANNELS_LAST_ORDER = {4: (0, 2, 3, 1), 5: (0, 2, 3, 4, 1)}


def _norm_grads(ctx, grad_output):
    """Norm's gradients (input, weight, bias) before their layout is settled."""
    input, weight, bias, mean, invstd, gmean, grstd = ctx.saved_tensors
    axes, pshape, gshape = ctx.axes, ctx.pshape, ctx.gshape
    if ctx.gn and not _grad_state.enabled:
        # (torch's kernel from the forward's statistics; a graph of the gradient takes
        # the recomputed, differentiable form below, as torch's double backward does)
        gx, gw, gb = group_norm_backward(
            grad_output._array, input._array, gmean._array, grstd._array, weight._array,
            gshape[1], ctx.affine, ctx.needs_input_grad)
        gx, gw, gb = (None if a is None else Tensor._wrap(a) for a in (gx, gw, gb))
        if ctx.needs_input_grad[1] and gw is None:
            gw = weight.detach().new_zeros(weight.shape)
        if ctx.needs_input_grad[2] and gb is None:
            gb = bias.detach().new_zeros(bias.shape)
        return gx, gw, gb
    x = input._array
    cols = math.prod(pshape) if ctx.ln else 0
    lanes = 32 // max(x.dtype.itemsize, 1)
    if ctx.ln and not _grad_state.enabled and (x.dtype.itemsize < 4 or
            cols <= lanes or cols % lanes == 0):
        # (torch's kernel; in float32/float64 its sums over a row that ends in a partial
        # vector are not reproduced, so those shapes take the centred form below)
        rows = gmean._array.size
        flat = (rows, cols)
        gx, gw, gb = layer_norm_backward(
            grad_output._array.reshape(flat), x.reshape(flat), gmean._array,
            grstd._array, weight._array.reshape(-1), ctx.affine, ctx.needs_input_grad)
        gx = None if gx is None else Tensor._wrap(gx.reshape(x.shape))
        gw = None if gw is None else Tensor._wrap(gw.reshape(weight.shape))
        gb = None if gb is None else Tensor._wrap(gb.reshape(bias.shape))
        if ctx.needs_input_grad[1] and gw is None:
            gw = weight.detach().new_zeros(weight.shape)
        if ctx.needs_input_grad[2] and gb is None:
            gb = bias.detach().new_zeros(bias.shape)
        return gx, gw, gb
    low = None
    if ctx.bn and not _grad_state.enabled and x.dtype.itemsize == 2 and x.dtype.kind in "fV":
        # (torch's batch-norm backward of a 16-bit input works in float32 and rounds
        # grad_input once; the parameters' gradients keep their own dtype)
        low, input, grad_output = input.dtype, input.float(), grad_output.float()
    xs = input if gshape is None else input.reshape(gshape)
    if mean is None:
        # NOTE: the statistics are recomputed as Tensor ops so that they depend on the
        # input: double backward differentiates through them.
        xc = xs - xs.mean(axes, keepdim=True)
        var = (xc * xc).mean(axes, keepdim=True)
        invstd = (var + ctx.eps).rsqrt()
        if ctx.bn and ctx.eps == 0:
            invstd = invstd.masked_fill(var == 0, 0.0)     # (torch's InvStd rule)
        xhat = xc * invstd
    else:
        xc = xs - mean
        xhat = xc * invstd
    g = grad_output
    gx = gw = gb = None
    if ctx.needs_input_grad[1] and ctx.affine[0] and ctx.bn:
        # (torch's batch norm: the dot product of the centred input and the gradient,
        # times invstd, which decides the sign of an infinite invstd's result)
        gw = (sum_to_size(g * xc.reshape(input.shape), pshape) * invstd).reshape(
            weight.shape)
    elif ctx.needs_input_grad[1] and ctx.affine[0]:
        gw = sum_to_size(g * xhat.reshape(input.shape), pshape).reshape(weight.shape)
    if ctx.needs_input_grad[2] and ctx.affine[1]:
        gb = sum_to_size(g, pshape).reshape(bias.shape)
    # (a placeholder takes no gradient: an empty weight or bias asking for one is real)
    if ctx.needs_input_grad[1] and gw is None:
        gw = weight.detach().new_zeros(weight.shape)
    if ctx.needs_input_grad[2] and gb is None:
        gb = bias.detach().new_zeros(bias.shape)
    if ctx.needs_input_grad[0] and ctx.bn:
        # NOTE: torch's order for batch norm (the weight is per channel): the centred
        # gradient times weight * invstd; in training ((dy - mean(dy) - xc * k) * invstd) * w
        # with k = sum(xc * dy) * invstd^2 / N (which decides where 0 * inf gives NaN).
        scale = invstd * weight.reshape(pshape) if ctx.affine[0] else invstd
        if mean is None:
            n = max(math.prod(xs.shape[a] for a in axes), 1)
            k = (g * xc).sum(axes, keepdim=True) * invstd * invstd / n
            g = (g - g.sum(axes, keepdim=True) / n - xc * k) * invstd
            scale = weight.reshape(pshape) if ctx.affine[0] else 1.0
        gx = g * scale
    elif ctx.needs_input_grad[0]:
        gy = g * weight.reshape(pshape) if ctx.affine[0] else g
        gy = gy if gshape is None else gy.reshape(gshape)
        if mean is None:
            gx = invstd * (gy - gy.mean(axes, keepdim=True)
                           - xhat * (gy * xhat).mean(axes, keepdim=True))
        if mean is None and gshape is None:
            xp = xp_of(xs)
            bad = ~(xp.isfinite(xs._array) & xp.isfinite(gy._array)).all(
                axis=axes, keepdims=True)
            if bool(bad.any()):
                # NOTE: a row holding inf/NaN takes torch's layer-norm order (which
                # decides where they spread): a * gy + b * x + c with a = rstd,
                # b = (db * mean - ds) * rstd^3 / N, c = -b * mean - db * rstd / N
                # (ds = sum(gy * x), db = sum(gy)); finite rows keep the centred form,
                # free of its cancellation
                n = max(math.prod(xs.shape[a] for a in axes), 1)
                mu = xs.mean(axes, keepdim=True)
                ds = (gy * xs).sum(axes, keepdim=True)
                db = gy.sum(axes, keepdim=True)
                b = (db * mu - ds) * invstd * invstd * invstd * (1.0 / n)
                c = -b * mu - db * invstd * (1.0 / n)
                gx = where(Tensor._wrap(bad), invstd * gy + b * xs + c, gx)
        if mean is not None:
            gx = gy * invstd
        gx = gx.reshape(input.shape)
    if low is not None:
        gx = None if gx is None else gx.to(low)
        gw = None if gw is None else gw.to(weight.dtype)
        gb = None if gb is None else gb.to(bias.dtype)
    return gx, gw, gb


def group_norm_forward(x, w, b, groups, eps, has_w, has_b):
    """torch's CPU group norm of the array ``x`` (N, C, *) with the parameter arrays ``w``,
    ``b`` (used where ``has_w``/``has_b``): ``(out, mean, rstd)``, the statistics (N, groups)
    in the parameters' dtype. Welford moments per group in the opmath type (float32 for a
    16-bit input), ``rstd = 1 / sqrt(max(var, 0) + eps)`` in double, then ``(x - mean) * rstd``
    without parameters, else the fused ``x * scale + shift`` with ``scale = rstd * w`` and
    ``shift = -scale * mean + b``."""
    xp = get_array_module(x)
    n, c = x.shape[0], x.shape[1]
    d = c // groups
    op = np.dtype(np.float32) if x.dtype.itemsize < 4 else x.dtype
    pdt = w.dtype if has_w else (b.dtype if has_b else x.dtype)
    pdt = op if pdt != x.dtype else x.dtype           # (float32 parameters of a 16-bit input)
    with errstate(invalid="ignore", over="ignore", divide="ignore"):
        rows = x.reshape(n * groups, d * math.prod(x.shape[2:]))
        if rows.size:
            mean, var = rowwise_moments(rows)
        else:
            mean, var = xp.zeros(n * groups, op), xp.full(n * groups, np.nan, op)
        var = xp.where(var < 0, op.type(0), var)
        rstd = (1 / xp.sqrt(var.astype(np.float64) + eps)).astype(op)
        xo = x.astype(op, copy=False).reshape(n, groups, d, math.prod(x.shape[2:]))
        mu, rs = mean.reshape(n, groups, 1, 1), rstd.reshape(n, groups, 1, 1)
        if not (has_w or has_b):
            out = (xo - mu) * rs
        else:
            scale = rs * (w.astype(op).reshape(1, groups, d, 1) if has_w else op.type(1))
            shift = fma(-scale, mu, b.astype(op).reshape(1, groups, d, 1) if has_b
                        else op.type(0))
            out = fma(scale, xo, shift)
    return (out.reshape(x.shape).astype(x.dtype, copy=False),
            mean.reshape(n, groups).astype(pdt), rstd.reshape(n, groups).astype(pdt))


def _reduce_all(a, lanes):
    """torch's ``vec::reduce_all`` of the last axis of ``a`` with ``lanes``-wide vectors: whole
    vectors summed lane-wise, the partial one into its first lanes, then a tree over the
    lanes (a row shorter than a vector: its elements in order)."""
    size = a.shape[-1]
    if size < lanes:
        acc = a[..., 0] if size else a.sum(axis=-1)
        for i in range(1, size):
            acc = acc + a[..., i]
        return acc
    full = size - size % lanes
    acc = a[..., :lanes]
    for d in range(lanes, full, lanes):
        acc = acc + a[..., d:d + lanes]
    if full < size:
        r = size - full
        acc = acc.copy()
        acc[..., :r] = acc[..., :r] + a[..., full:]
    while acc.shape[-1] > 1:
        h = acc.shape[-1] // 2
        acc = acc[..., :h] + acc[..., h:]
    return acc[..., 0]


def _lanes_dot(a, b, lanes):
    """``sum(a * b)`` over the last axis as torch's CPU loops with one vector accumulator
    (fused multiply-adds), its lanes added in order, then the scalar tail (fused too)."""
    size = a.shape[-1]
    full = size - size % lanes
    acc = None
    for d in range(0, full, lanes):
        acc = a[..., d:d + lanes] * b[..., d:d + lanes] if acc is None else \
            fma(a[..., d:d + lanes], b[..., d:d + lanes], acc)
    val = a[..., 0] * 0 if acc is None else acc[..., 0]
    if acc is not None:
        for i in range(1, lanes):
            val = val + acc[..., i]
    for i in range(full, size):
        val = fma(a[..., i], b[..., i], val)
    return val


def group_norm_backward(dy, x, mean, rstd, w, groups, affine, needs):
    """torch's CPU group-norm backward kernel on arrays (from the forward's ``mean``/``rstd``):
    ``(dx, dw, db)``, None where not needed or without the parameter. Its sums (per channel
    over the spatial dims, per group over the channels) take torch's vectorised orders."""
    n, c = x.shape[0], x.shape[1]
    d = c // groups
    half = x.dtype.itemsize < 4
    op = np.dtype(np.float32) if half else x.dtype
    lanes = 32 // op.itemsize
    hw = math.prod(x.shape[2:])
    t = op.type
    if n * c == 0:
        xp = get_array_module(x)
        return (xp.zeros(x.shape, x.dtype) if needs[0] else None,
                xp.zeros(c, mean.dtype) if needs[1] and affine[0] else None,
                xp.zeros(c, mean.dtype) if needs[2] and affine[1] else None)
    with errstate(invalid="ignore", over="ignore", divide="ignore"):
        dyo = dy.astype(op, copy=False).reshape(n, c, hw)
        xo = x.astype(op, copy=False).reshape(n, c, hw)
        if half:
            # (16-bit vectors of 2 * lanes, each as two float32 halves into one accumulator)
            k = 2 * lanes
            full = hw - hw % k
            ds = db = None
            for j in range(0, full, k):
                y0, y1 = dyo[..., j:j + lanes], dyo[..., j + lanes:j + k]
                x0, x1 = xo[..., j:j + lanes], xo[..., j + lanes:j + k]
                ds = y0 * x0 if ds is None else fma(y0, x0, ds)
                ds = fma(y1, x1, ds)
                db = y0 + y1 if db is None else (db + y0) + y1
            dsv = dyo[..., 0] * 0 if ds is None else ds[..., 0]
            dbv = dyo[..., 0] * 0 if db is None else db[..., 0]
            for i in range(1, lanes if ds is not None else 0):
                dsv, dbv = dsv + ds[..., i], dbv + db[..., i]
            for i in range(full, hw):
                dsv, dbv = fma(dyo[..., i], xo[..., i], dsv), dbv + dyo[..., i]
            ds, db = dsv, dbv
        else:
            ds = _reduce_all(dyo * xo, lanes)       # (n, c)
            db = _reduce_all(dyo, lanes)
        mu = mean.astype(op).reshape(n, groups, 1)
        rs = rstd.astype(op).reshape(n, groups, 1)
        dsg, dbg = ds.reshape(n, groups, d), db.reshape(n, groups, d)
        gx = gw = gb = None
        if needs[0]:
            s = t(1) / t(d * hw)
            wg = w.astype(op).reshape(1, groups, d) if affine[0] else \
                dsg[:1] * t(0) + t(1)
            wg = xp_broadcast(wg, dsg.shape)
            ds_val = _lanes_dot(dsg, wg, lanes)[..., None]
            db_val = _lanes_dot(dbg, wg, lanes)[..., None]
            c2 = fma(db_val, mu, -ds_val) * rs * rs * rs * s
            c3 = -c2 * mu - db_val * rs * s
            c1 = rs * wg                                   # (n, groups, d)
            xg = xo.reshape(n, groups, d, hw)
            gx = fma(c1[..., None], dyo.reshape(n, groups, d, hw), c2[..., None] * xg) \
                + c3[..., None]
            gx = gx.reshape(x.shape).astype(x.dtype, copy=False)
        if needs[1] and affine[0]:
            acc = None
            for i in range(n):
                term = fma(-dbg[i], mu[i], dsg[i])
                acc = term * rs[i] if acc is None else fma(term, rs[i], acc)
            gw = acc.reshape(c).astype(mean.dtype)
        if needs[2] and affine[1]:
            acc = db[0]
            for i in range(1, n):
                acc = acc + db[i]
            gb = acc.astype(mean.dtype)
    return gx, gw, gb


def layer_norm_forward(x, w, b, eps, has_w, has_b):
    """torch's CPU layer norm of the 2-d array ``x`` (rows normalised) with the flat parameter
    arrays ``w``, ``b``: ``(out, mean, rstd)``, the statistics per row in the parameters' dtype.
    Welford moments in the opmath type, ``rstd = 1 / sqrt(var + eps)`` with eps in that type,
    then ``(x - mean) * rstd * w + b`` (16-bit: ``(x * rstd - rstd * mean) * w + b``), fused."""
    xp = get_array_module(x)
    half = x.dtype.itemsize < 4
    op = np.dtype(np.float32) if half else x.dtype
    t = op.type
    pdt = w.dtype if has_w else (b.dtype if has_b else x.dtype)
    pdt = op if pdt != x.dtype else x.dtype
    m = x.shape[0]
    with errstate(invalid="ignore", over="ignore", divide="ignore"):
        if x.size:
            mean, var = rowwise_moments(x)
        else:
            mean, var = xp.zeros(m, op), xp.full(m, np.nan, op)
        rstd = t(1) / xp.sqrt(var + t(eps))
        g = w.astype(op) if has_w else t(1)
        bb = b.astype(op) if has_b else t(0)
        mu, rs = mean[:, None], rstd[:, None]
        xo = x.astype(op, copy=False)
        if half:
            out = fma(fma(xo, rs, -rs * mu), g, bb)
        else:
            out = fma((xo + -mu) * rs, g, bb)
    return out.astype(x.dtype, copy=False), mean.astype(pdt), rstd.astype(pdt)


def layer_norm_backward(dy, x, mean, rstd, w, affine, needs):
    """torch's CPU layer-norm backward kernel on 2-d arrays (from the forward's ``mean`` and
    ``rstd``): ``(dx, dw, db)``. The parameters' gradients sum each thread's rows into its own
    buffer (rows split in one chunk per thread), then the buffers in order."""
    xp = get_array_module(x)
    m, n = x.shape
    half = x.dtype.itemsize < 4
    op = np.dtype(np.float32) if half else x.dtype
    t = op.type
    lanes = 32 // op.itemsize
    with errstate(invalid="ignore", over="ignore", divide="ignore"):
        dyo = dy.astype(op, copy=False)
        xo = x.astype(op, copy=False)
        a = rstd.astype(op)[:, None]
        mu = mean.astype(op)[:, None]
        gx = gw = gb = None
        if needs[0]:
            g = w.astype(op)[None, :] if affine[0] else None
            if g is None:
                ds, db = _reduce_all(dyo * xo, lanes), _reduce_all(dyo, lanes)
            else:
                ds, db = _reduce_all(dyo * xo * g, lanes), _reduce_all(dyo * g, lanes)
            ds, db = ds[:, None], db[:, None]
            scale = t(1) / t(n)
            bc = fma(db, mu, -ds) * a * a * a * scale
            cc = fma(-bc, mu, -(db * a * scale))
            first = a * dyo if g is None else (a * dyo) * g
            gx = (fma(bc, xo, first) + cc).astype(x.dtype, copy=False)
        if (needs[1] and affine[0]) or (needs[2] and affine[1]):
            threads = max(1, min(_creation_threads(), m))
            chunk = -(-m // threads) if m else 1
            bufs_w, bufs_b = [], []
            for start in range(0, m, chunk):
                bw = xp.zeros(n, x.dtype)
                bb = xp.zeros(n, x.dtype)
                for i in range(start, min(start + chunk, m)):
                    ai = a[i, 0]
                    bi = -ai * mu[i, 0]
                    bw = fma(dyo[i], fma(ai, xo[i], bi), bw.astype(op)).astype(x.dtype)
                    bb = (bb.astype(op) + dyo[i]).astype(x.dtype)
                bufs_w.append(bw)
                bufs_b.append(bb)
            accw, accb = xp.zeros(n, op), xp.zeros(n, op)
            for bw, bb in zip(bufs_w, bufs_b):
                accw, accb = accw + bw.astype(op), accb + bb.astype(op)
            if needs[1] and affine[0]:
                gw = accw.astype(mean.dtype)
            if needs[2] and affine[1]:
                gb = accb.astype(mean.dtype)
    return gx, gw, gb


def group_norm_stats(input, weight, bias, group, eps):
    """The ``(mean, rstd)`` tensors (N, group) of torch's ``native_group_norm``: those its CPU
    kernel computes for the output (no graph)."""
    x = input._array
    w, b = _param(weight, input)._array, _param(bias, input)._array
    _, mean, rstd = group_norm_forward(x, w, b, group, eps, weight is not None,
                                       bias is not None)
    return Tensor._wrap(mean), Tensor._wrap(rstd)


def layer_norm_stats(input, normalized_shape, weight, bias, eps):
    """The ``(mean, rstd)`` tensors of torch's ``native_layer_norm`` (the normalized dims kept
    as 1): those its CPU kernel computes for the output (no graph)."""
    x = input._array
    k = len(normalized_shape)
    lead = tuple(x.shape[:x.ndim - k])
    rows, cols = math.prod(lead), math.prod(normalized_shape)
    w = _param(weight, input)._array.reshape(-1)
    b = _param(bias, input)._array.reshape(-1)
    _, mean, rstd = layer_norm_forward(x.reshape(rows, cols), w, b, eps, weight is not None,
                                       bias is not None)
    shape = lead + (1,) * k
    return Tensor._wrap(mean.reshape(shape)), Tensor._wrap(rstd.reshape(shape))


def xp_broadcast(a, shape):
    """``a`` broadcast to ``shape`` (a view)."""
    return get_array_module(a).broadcast_to(a, shape)


def _check_dtypes(kernel, input, *params):
    """torch's CPU checks of a norm's dtypes: a bfloat16/float16 input may take float32
    parameters (all of them), any other mix raises; then the kernel's dtype error."""
    x = input._array
    not_implemented_for(x, kernel, "biuc")
    defined = [p for p in params if p is not None]
    if defined and defined[0]._array.dtype != x.dtype:
        for p in defined:
            if p._array.dtype != _dt.float32.np:
                raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of "
                                   "Float")
        if x.dtype.kind != "V" and x.dtype != _dt.float16.np:
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        return
    for p in defined:
        if p._array.dtype != x.dtype:
            raise RuntimeError("expected scalar type %s but found %s"
                               % (_dt.scalar_type_name(x.dtype),
                                  _dt.scalar_type_name(p._array.dtype)))


def _param(t, input):
    """``t``, or a 0-element placeholder for an absent weight or bias (see ``Norm``)."""
    return Tensor._wrap(xp_of(input).empty(0, dtype=input._array.dtype)) if t is None else t


def update_running_stats(x, running_mean, running_var, momentum):
    """Batch norm's in-place update of ``running_mean``/``running_var`` (either may be None)
    from the batch array ``x`` (unbiased variance, as torch)."""
    if running_mean is None and running_var is None:
        return
    c = x.shape[1] if x.ndim > 1 else x.shape[0]
    n = x.size // max(c, 1)
    axes = (0,) + tuple(range(2, x.ndim))
    # (a 16-bit input: statistics and update in float32, torch's opmath type)
    op = np.dtype(np.float32) if x.dtype.itemsize < 4 and x.dtype.kind in "fV" else None
    if op is not None:
        x = x.astype(np.float64)
    if running_mean is not None:
        rm = running_mean._array
        mean = x.mean(axis=axes)
        if op is None:
            rm[...] = (1 - momentum) * rm + momentum * mean.astype(rm.dtype)
        else:
            rm[...] = (op.type(1 - momentum) * rm.astype(op)
                       + op.type(momentum) * mean.astype(op)).astype(rm.dtype)
        running_mean._bump()
    if running_var is not None:
        rv = running_var._array
        # (one value per channel: torch's unbiased variance is 0 / 0)
        with errstate(invalid="ignore"):
            var = x.var(axis=axes) * (n / (n - 1) if n > 1 else float("inf"))
        if op is None:
            rv[...] = (1 - momentum) * rv + momentum * var.astype(rv.dtype)
        else:
            rv[...] = (op.type(1 - momentum) * rv.astype(op)
                       + op.type(momentum) * var.astype(op)).astype(rv.dtype)
        running_var._bump()


def _strided_transform(xs, mean, invstd, weight, bias, stats, eps, pshape, affine, op):
    """torch's strided batch norm output, ``((x - mean) * invstd) * w + b``."""
    params = [p._array for p, on in zip((weight, bias), affine) if on]
    if stats is not None:
        params += [s._array for s in stats[:2]]
    if xs.dtype.itemsize < 4 and all(p.dtype == xs.dtype for p in params):
        op = xs.dtype
        if stats is not None:       # (1 / sqrt(var + eps), each step rounded to the dtype)
            var = stats[1]._array.reshape(pshape)
            var = (var.astype(np.float32) + np.float32(eps)).astype(op)
            invstd = 1 / xp_of(stats[1]).sqrt(var)
    out = xs.astype(op, copy=False) - mean.astype(op, copy=False)
    out *= invstd.astype(op, copy=False)
    if affine[0]:
        out *= weight._array.reshape(pshape).astype(op, copy=False)
    if affine[1]:
        out += bias._array.reshape(pshape).astype(op, copy=False)
    return out


def _strided(x):
    """Whether torch's CPU batch norm takes its strided path for array ``x`` (neither
    contiguous nor channels-last contiguous)."""
    if x.flags.c_contiguous:
        return False
    if x.ndim in (4, 5):
        return not x.transpose((0,) + tuple(range(2, x.ndim)) + (1,)).flags.c_contiguous
    return True


def check_stats_dtype(input, *params):
    """torch's CPU batch statistics in training: a strided input's mean (``at::mean``) comes
    first and rejects a non-floating, non-complex dtype, unless the first defined of
    ``params`` (weight, bias, running mean and var) has another dtype (then the kernel's
    NotImplementedError comes first)."""
    x = input._array
    first = next((p for p in params if p is not None), None)
    if first is not None and first._array.dtype != x.dtype:
        return
    if x.dtype.kind in "biu" and _strided(x):
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           "floating point or complex dtype. Got: %s"
                           % _dt.scalar_type_name(x.dtype))


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-05, *, _cxx=False):
    """Batch normalization over all dims but the channel dim 1.

    In training it normalises with the batch statistics and updates ``running_mean`` and
    ``running_var`` (the unbiased variance) in place; otherwise it uses the running ones.
    Matches ``torch.nn.functional.batch_norm`` (``_cxx``: without its Python-level checks of
    the batch size and ``eps``, as ``torch.batch_norm``).
    """
    x = input._array
    c = x.shape[1] if x.ndim > 1 else x.shape[0]
    if not _cxx:
        # (torch's Python checks, then torch.batch_norm's)
        if training and x.size // max(c, 1) == 1:
            raise ValueError("Expected more than 1 value per channel when training, got input "
                             "size %s" % (input.shape,))
        if training and eps <= 0.0:
            raise ValueError("batch_norm eps must be positive during training, but got %s" % eps)
        if not training and eps < 0.0:
            raise ValueError("batch_norm eps must be non-negative, but got %s" % eps)
        return batch_norm_cxx(input, weight, bias, running_mean, running_var, training,
                              momentum, eps)
    if training:
        check_stats_dtype(input, weight, bias, running_mean, running_var)
        if (running_mean is None) != (running_var is None):
            raise ValueError("running_mean and running_var must either both be None or neither "
                             "be None")
    shape = (1, c) + (1,) * (x.ndim - 2)
    deferred = None
    if not training and not x.flags.c_contiguous and weight is None and bias is None:
        # NOTE: torch's strided evaluation kernel casts the running stats; the dtype error
        # comes from its backward instead.
        _check_dtypes("batch_norm", input)
        try:
            _check_dtypes("batch_norm", input, running_mean, running_var)
        except RuntimeError as e:
            if "expected scalar type" not in str(e):
                raise
            deferred = str(e)
    else:
        _check_dtypes("batch_norm", input, weight, bias, running_mean, running_var)
    if training:
        axes = (0,) + tuple(range(2, x.ndim))
        out = Norm.apply(input, _param(weight, input), _param(bias, input), axes, eps,
                         "NativeBatchNormBackward0", shape, None, None)
        update_running_stats(x, running_mean, running_var, momentum)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
        out = Norm.apply(input, _param(weight, input), _param(bias, input), 0, eps,
                         "NativeBatchNormBackward0", shape, None,
                         (running_mean, running_var, deferred))
    return out


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """Normalise over the last ``len(normalized_shape)`` dims. Matches torch's layer_norm."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    k = len(normalized_shape)
    if tuple(input.shape[input.dim() - k:]) != normalized_shape or input.dim() < k:
        raise RuntimeError("Given normalized_shape=%s, expected input with shape [*, %s], but "
                           "got input of size%s" % (list(normalized_shape),
                                                    ", ".join(map(str, normalized_shape)),
                                                    list(input.shape)))
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and tuple(p.shape) != normalized_shape:
            raise RuntimeError("Expected %s to be of same shape as normalized_shape, but got %s "
                               "of shape %s and normalized_shape = %s"
                               % (name, name, list(p.shape), list(normalized_shape)))
    _check_dtypes("LayerNormKernelImpl", input, weight, bias)
    axes = tuple(range(input.dim() - k, input.dim()))
    return Norm.apply(input, _param(weight, input), _param(bias, input), axes, eps,
                      "NativeLayerNormBackward0", normalized_shape, None, None)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    """Normalise over groups of channels (and all spatial dims). Matches torch's group_norm."""
    if isinstance(num_groups, bool) or not isinstance(num_groups, (int, np.integer)):
        raise TypeError("group_norm(): argument 'num_groups' (position 2) must be int, not %s"
                        % type(num_groups).__name__)
    nd = input.dim()
    if nd < 2:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions" if nd == 0 else
                         "Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    n, c = input.shape[:2]
    if num_groups <= 0:
        raise RuntimeError("Expected num groups to be greater than 0, got %d" % num_groups)
    if c % num_groups:
        raise RuntimeError("Expected number of channels in input to be divisible by "
                           "num_groups, but got input of shape %s and num_groups=%d"
                           % (list(input.shape), num_groups))
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and (p.dim() != 1 or p.numel() != c):
            raise RuntimeError("Expected %s to be a vector of size equal to the number of "
                               "channels in input, but got %s of shape %s and input of shape %s"
                               % (name, name, list(p.shape), list(input.shape)))
    _check_dtypes("GroupNormKernelImpl", input, weight, bias)
    return Norm.apply(input, _param(weight, input), _param(bias, input), (2,), eps,
                      "NativeGroupNormBackward0", (1, c) + (1,) * (input.dim() - 2),
                      (n, num_groups, -1), None)


def batch_norm_cxx(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """``torch.batch_norm``'s C++ checks and result (an empty input gives a copy scaled by the
    first weight and shifted by the first bias, keeping the graph)."""
    if input.numel() == 0:
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
        return out
    c = input.shape[1] if input.dim() > 1 else input.size(1)
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t is not None and t.numel() != c:
            raise RuntimeError("%s should contain %d elements not %d" % (name, c, t.numel()))
        if t is None and not training:
            raise RuntimeError("%s must be defined in evaluation mode" % name)
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError("%s should contain %d elements not %d" % (name, c, t.numel()))
    return batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps,
                      _cxx=True)
