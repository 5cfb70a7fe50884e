"""Functions behind nn.functional that need their own backward (stability, kinks, speed)."""
import math

import numpy as np

from ..autograd.function import Function, once_differentiable
from ..tensor import Tensor

__all__ = []


def _quiet():
    return np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore")


class Softplus(Function):
    node_name = "SoftplusBackward0"

    @staticmethod
    def forward(ctx, input, beta, threshold):
        x = input._array
        bx = x * beta
        with _quiet():
            # NOTE: log1p(exp(-|bx|)) + relu(bx) never overflows; above threshold it is x.
            soft = (np.log1p(np.exp(-np.abs(bx))) + np.maximum(bx, 0)) / beta
        out = np.where(bx > threshold, x, soft).astype(x.dtype, copy=False)
        ctx.save_for_backward(input)
        ctx.conf = (beta, threshold)
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        beta, threshold = ctx.conf
        bx = input * beta
        from .. import ops
        return ops.where(bx > threshold, grad_output, grad_output * ops.sigmoid(bx)), None, None


class BinaryCrossEntropy(Function):
    """Unreduced, unweighted binary cross entropy with torch's clamps (log >= -100)."""

    node_name = "BinaryCrossEntropyBackward0"

    @staticmethod
    def forward(ctx, input, target):
        x, t = input._array, target._array
        with _quiet():
            log_x = np.maximum(np.log(x), -100)
            log_1mx = np.maximum(np.log1p(-x), -100)
        ctx.save_for_backward(input, target)
        return Tensor._wrap(((t - 1) * log_1mx - t * log_x).astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        input, target = ctx.saved_tensors
        from .. import ops
        grad_input = grad_target = None
        if ctx.needs_input_grad[0]:
            # NOTE: torch divides by max(x (1 - x), 1e-12): finite at x = 0 and x = 1.
            denom = ops.clamp((1 - input) * input, min=1e-12)
            grad_input = grad_output * (input - target) / denom
        if ctx.needs_input_grad[1]:
            # NOTE: unclamped, as torch's binary_cross_entropy_target_backward (inf at 0, 1).
            grad_target = -grad_output * ops.logit(input)
        return grad_input, grad_target


class Hardtanh(Function):
    node_name = "HardtanhBackward0"

    @staticmethod
    def forward(ctx, input, min_val, max_val):
        ctx.save_for_backward(input)
        ctx.conf = (min_val, max_val)
        x = input._array
        return Tensor._wrap(np.clip(x, x.dtype.type(min_val), x.dtype.type(max_val)))

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        lo, hi = ctx.conf
        # NOTE: zero gradient at the kinks themselves, as torch's hardtanh_backward.
        return grad_output * ((input > lo) & (input < hi)), None, None


class Hardswish(Function):
    node_name = "HardswishBackward0"

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        x = input._array
        return Tensor._wrap(x * np.clip(x + 3, 0, 6) / 6)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        from .. import ops
        mid = grad_output * (input / 3 + 0.5)
        return ops.where(input < -3, grad_output * 0, ops.where(input <= 3, mid, grad_output))


class Gelu(Function):
    node_name = "GeluBackward0"

    @staticmethod
    def forward(ctx, input):
        from ..ops import erf
        x = input._array
        cdf = (erf(Tensor._wrap(x * (1 / math.sqrt(2.0))))._array + 1) * 0.5
        ctx.save_for_backward(input)
        ctx.cdf = Tensor._wrap(cdf)
        return Tensor._wrap(x * cdf)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        from .. import ops
        from ..autograd.grad_mode import is_grad_enabled
        pdf = ops.exp(input * input * -0.5) * (1 / math.sqrt(2 * math.pi))
        cdf = ctx.cdf
        if is_grad_enabled():
            # NOTE: create_graph: recompute the cdf from the input so its derivative (the pdf)
            # reaches the second-order gradient.
            cdf = (ops.erf(input * (1 / math.sqrt(2.0))) + 1) * 0.5
        return grad_output * (cdf + input * pdf)


def _sig(x):
    with _quiet():
        return 1 / (1 + np.exp(-x))


class LSTMCell(Function):
    node_name = "LSTMCellBackward0"

    @staticmethod
    def forward(ctx, gi, h, c, w_hh, b_hh):
        """One LSTM step from the precomputed input projection ``gi`` (gates i, f, g, o)."""
        gates = gi._array + h._array @ w_hh._array.T
        if b_hh is not None:
            gates += b_hh._array
        i, f, g, o = np.split(gates, 4, axis=-1)
        i, f, g, o = _sig(i), _sig(f), np.tanh(g), _sig(o)
        c_new = f * c._array + i * g
        tc = np.tanh(c_new)
        ctx.conf = (i, f, g, o, tc, h._array, c._array, w_hh._array)
        return Tensor._wrap(o * tc), Tensor._wrap(c_new)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_h, grad_c):
        i, f, g, o, tc, h, c, w = ctx.conf
        gh = 0 if grad_h is None else grad_h._array
        dc = (0 if grad_c is None else grad_c._array) + gh * o * (1 - tc * tc)
        dgates = np.concatenate([dc * g * i * (1 - i), dc * c * f * (1 - f),
                                 dc * i * (1 - g * g), gh * tc * o * (1 - o)],
                                axis=-1).astype(h.dtype, copy=False)
        needs = ctx.needs_input_grad
        grad_gi = Tensor._wrap(dgates) if needs[0] else None
        grad_hx = Tensor._wrap(dgates @ w) if needs[1] else None
        grad_cx = Tensor._wrap((dc * f).astype(h.dtype, copy=False)) if needs[2] else None
        grad_w = Tensor._wrap(dgates.T @ h) if needs[3] else None
        grad_b = Tensor._wrap(dgates.sum(0)) if needs[4] else None
        return grad_gi, grad_hx, grad_cx, grad_w, grad_b


def _sigmoid_(x):
    """``x = 1 / (1 + exp(-x))`` in place."""
    np.negative(x, out=x)
    np.exp(x, out=x)
    x += 1
    np.reciprocal(x, out=x)


class LSTMLayer(Function):
    """One LSTM layer and direction over a whole sequence: one graph node, not one per step.

    Forward loops over time on raw arrays from the precomputed input projection ``gi``
    (seq, N, 4H). While a step's gates are still in cache it also stores the factors BPTT needs
    (gate derivatives times their partners), so the backward loop is a GEMM and five
    element-wise products per step; the recurrent weight's gradient is one GEMM over all steps.
    """

    node_name = "MkldnnRnnLayerBackward0"

    @staticmethod
    def forward(ctx, gi, h0, c0, w_hh, b_hh, reverse):
        x, w = gi._array, w_hh._array
        seq, n, g4 = x.shape
        hid = g4 // 4
        dt = x.dtype
        h, c = h0._array, c0._array
        grad = any(ctx.needs_input_grad)
        gates = np.empty((seq, n, g4), dtype=dt)
        quad = gates.reshape(seq, n, 4, hid)
        hs = np.empty((seq, n, hid), dtype=dt)
        a_all = np.empty((seq, n, hid), dtype=dt) if grad else None
        f_all = np.empty((seq, n, hid), dtype=dt) if grad else None
        wt = np.ascontiguousarray(w.T)    # a row-major right operand: a faster GEMM per step
        b = None if b_hh is None else b_hh._array
        order = range(seq - 1, -1, -1) if reverse else range(seq)
        with _quiet():
            for t in order:
                gt = gates[t]
                np.matmul(h, wt, out=gt)
                gt += x[t]
                if b is not None:
                    gt += b
                i, f, g, o = quad[t, :, 0], quad[t, :, 1], quad[t, :, 2], quad[t, :, 3]
                tg = np.tanh(g)
                _sigmoid_(gt)
                g[...] = tg
                c_new = f * c
                c_new += i * g
                tc = np.tanh(c_new)
                np.multiply(o, tc, out=hs[t])
                if grad:
                    # NOTE: BPTT factors: dc = dh * A + dc_next; d(i, f, g, o) = dc * (K_i, K_f,
                    # K_g), dh * K_o with K_i = i(1-i)g, K_f = f(1-f)c_prev, K_g = (1-g^2)i,
                    # K_o = o(1-o)tanh(c); dc_prev = dc * f.
                    f_all[t] = f
                    a = a_all[t]
                    np.multiply(tc, tc, out=a)
                    np.subtract(1, a, out=a)
                    a *= o
                    k_g = g * g
                    np.subtract(1, k_g, out=k_g)
                    k_g *= i
                    d = 1 - gt
                    d *= gt
                    np.multiply(d[:, :hid], g, out=i)
                    np.multiply(d[:, hid:2 * hid], c, out=f)
                    np.multiply(d[:, 3 * hid:], tc, out=o)
                    g[...] = k_g
                h, c = hs[t], c_new
        out = Tensor._wrap(hs)
        ctx.save_for_backward(out, h0)    # version-checked: an in-place change raises
        ctx.conf = (quad, a_all, f_all, w, reverse)
        return out, Tensor._wrap(h.copy()), Tensor._wrap(c.copy())

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out, grad_hn, grad_cn):
        quad, a_all, f_all, w, reverse = ctx.conf
        out, h0 = ctx.saved_tensors
        hs, h0 = out._array, h0._array
        seq, n, _, hid = quad.shape
        dt = hs.dtype
        dh_next = np.zeros((n, hid), dtype=dt) if grad_hn is None \
            else grad_hn._array.astype(dt, copy=True)
        dc_next = np.zeros((n, hid), dtype=dt) if grad_cn is None \
            else grad_cn._array.astype(dt, copy=True)
        go = None if grad_out is None else grad_out._array.astype(dt, copy=False)
        dquad = np.empty_like(quad)
        dgates = dquad.reshape(seq, n, 4 * hid)
        order = range(seq) if reverse else range(seq - 1, -1, -1)
        for t in order:
            dh = dh_next if go is None else dh_next + go[t]
            dc = dh * a_all[t]
            dc += dc_next
            np.multiply(quad[t, :, 0], dc, out=dquad[t, :, 0])
            np.multiply(quad[t, :, 1], dc, out=dquad[t, :, 1])
            np.multiply(quad[t, :, 2], dc, out=dquad[t, :, 2])
            np.multiply(quad[t, :, 3], dh, out=dquad[t, :, 3])
            dh_next = dgates[t] @ w
            dc_next = dc * f_all[t]
        needs = ctx.needs_input_grad
        grad_w = grad_b = None
        if needs[3]:
            if reverse:
                h_prev = np.concatenate([hs[1:], h0[None]], axis=0)
            else:
                h_prev = np.concatenate([h0[None], hs[:-1]], axis=0)
            grad_w = Tensor._wrap(dgates.reshape(-1, 4 * hid).T @ h_prev.reshape(-1, hid))
        if needs[4]:
            grad_b = Tensor._wrap(dgates.sum(axis=(0, 1)))
        return (Tensor._wrap(dgates) if needs[0] else None,
                Tensor._wrap(dh_next) if needs[1] else None,
                Tensor._wrap(dc_next) if needs[2] else None, grad_w, grad_b, None)


class Embedding(Function):
    node_name = "EmbeddingBackward0"

    @staticmethod
    def forward(ctx, weight, indices, padding_idx):
        idx = indices._array
        ctx.conf = (idx, padding_idx)
        return Tensor._wrap(weight._array[idx])

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        idx, padding_idx = ctx.conf
        shape, dtype = ctx._input_meta(0)
        g = grad_output._array.reshape(-1, shape[1]).astype(dtype, copy=False)
        grad = np.zeros(shape, dtype=dtype)
        flat = idx.reshape(-1)
        if flat.size:
            # Sort the rows by index and sum each run: much faster than np.add.at.
            order = np.argsort(flat, kind="stable")
            rows = flat[order]
            starts = np.flatnonzero(np.concatenate(([True], rows[1:] != rows[:-1])))
            grad[rows[starts]] = np.add.reduceat(g[order], starts, axis=0)
        if padding_idx is not None:
            grad[padding_idx] = 0
        return Tensor._wrap(grad), None, None


class Pad(Function):
    node_name = "ConstantPadNdBackward0"

    @staticmethod
    def forward(ctx, input, pads, mode, value):
        x = input._array
        ctx.conf = (pads, mode, x.shape)
        crop = tuple(slice(-lo if lo < 0 else None, hi if hi < 0 else None) for lo, hi in pads)
        pos = [(max(lo, 0), max(hi, 0)) for lo, hi in pads]
        if mode == "constant":
            out = np.pad(x[crop], pos, mode="constant", constant_values=value)
        else:
            np_mode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
            out = np.pad(x[crop], pos, mode=np_mode)
        return Tensor._wrap(out)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        pads, mode, shape = ctx.conf
        g = grad_output._array
        # Pad an array of input positions the same way, then scatter-add the gradient back.
        lead = min(i for i, p in enumerate(pads + [(1, 1)]) if p != (0, 0))
        inner = shape[lead:]
        pos = np.arange(int(np.prod(inner)), dtype=np.int64).reshape(inner)
        sub = pads[lead:]
        crop = tuple(slice(-lo if lo < 0 else None, hi if hi < 0 else None) for lo, hi in sub)
        ppos = [(max(lo, 0), max(hi, 0)) for lo, hi in sub]
        if mode == "constant":
            pos = np.pad(pos[crop], ppos, mode="constant", constant_values=-1)
        else:
            np_mode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
            pos = np.pad(pos[crop], ppos, mode=np_mode)
        nb = int(np.prod(shape[:lead]))
        g2 = g.reshape(nb, -1)
        flat = pos.reshape(-1)
        keep = flat >= 0
        grad = np.zeros((nb, int(np.prod(inner))), dtype=g.dtype)
        cols = flat[keep]
        gk = g2[:, keep]
        if len(np.unique(cols)) == len(cols):
            grad[:, cols] = gk
        else:
            np.add.at(grad, (slice(None), cols), gk)
        return Tensor._wrap(grad.reshape(shape)), None, None, None
