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
    (seq, N, 4H); backward runs BPTT on raw arrays and computes the recurrent weight's
    gradient as one GEMM over all steps.
    """

    node_name = "MkldnnRnnLayerBackward0"

    @staticmethod
    def forward(ctx, gi, h0, c0, w_hh, b_hh, reverse):
        x, w = gi._array, w_hh._array
        seq, n, g4 = x.shape
        hid = g4 // 4
        h, c = h0._array, c0._array
        gates = np.empty((seq, n, g4), dtype=x.dtype)
        cs = np.empty((seq, n, hid), dtype=x.dtype)
        tcs = np.empty((seq, n, hid), dtype=x.dtype)
        hs = np.empty((seq, n, hid), dtype=x.dtype)
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
                _sigmoid_(gt[:, :2 * hid])
                np.tanh(gt[:, 2 * hid:3 * hid], out=gt[:, 2 * hid:3 * hid])
                _sigmoid_(gt[:, 3 * hid:])
                i, f, g, o = gt[:, :hid], gt[:, hid:2 * hid], gt[:, 2 * hid:3 * hid], gt[:, 3 * hid:]
                c_new = cs[t]
                np.multiply(f, c, out=c_new)
                c_new += i * g
                np.tanh(c_new, out=tcs[t])
                np.multiply(o, tcs[t], out=hs[t])
                h, c = hs[t], c_new
        ctx.conf = (gates, cs, tcs, hs, h0._array, c0._array, w, reverse)
        return Tensor._wrap(hs), Tensor._wrap(h.copy()), Tensor._wrap(c.copy())

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out, grad_hn, grad_cn):
        gates, cs, tcs, hs, h0, c0, w, reverse = ctx.conf
        seq, n, g4 = gates.shape
        hid = g4 // 4
        dt = hs.dtype
        dh_next = np.zeros((n, hid), dtype=dt) if grad_hn is None \
            else grad_hn._array.astype(dt, copy=True)
        dc_next = np.zeros((n, hid), dtype=dt) if grad_cn is None \
            else grad_cn._array.astype(dt, copy=True)
        go = None if grad_out is None else grad_out._array
        dgates = np.empty_like(gates)
        order = range(seq) if reverse else range(seq - 1, -1, -1)
        for t in order:
            prev = t + 1 if reverse else t - 1
            c_prev = c0 if prev < 0 or prev >= seq else cs[prev]
            gt = gates[t]
            i, f, g, o = gt[:, :hid], gt[:, hid:2 * hid], gt[:, 2 * hid:3 * hid], gt[:, 3 * hid:]
            tc = tcs[t]
            dh = dh_next if go is None else dh_next + go[t]
            dc = 1 - tc * tc
            dc *= o
            dc *= dh
            dc += dc_next
            dg = dgates[t]
            np.multiply(dc, g, out=dg[:, :hid])
            dg[:, :hid] *= i * (1 - i)
            np.multiply(dc, c_prev, out=dg[:, hid:2 * hid])
            dg[:, hid:2 * hid] *= f * (1 - f)
            np.multiply(dc, i, out=dg[:, 2 * hid:3 * hid])
            dg[:, 2 * hid:3 * hid] *= 1 - g * g
            np.multiply(dh, tc, out=dg[:, 3 * hid:])
            dg[:, 3 * hid:] *= o * (1 - o)
            dh_next = dg @ w
            dc_next = dc * f
        needs = ctx.needs_input_grad
        grad_w = grad_b = None
        if needs[3]:
            if reverse:
                h_prev = np.concatenate([hs[1:], h0[None]], axis=0)
            else:
                h_prev = np.concatenate([h0[None], hs[:-1]], axis=0)
            grad_w = Tensor._wrap(dgates.reshape(-1, g4).T @ h_prev.reshape(-1, hid))
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
        np.add.at(grad, idx.reshape(-1), g)
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
