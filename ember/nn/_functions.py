"""Functions behind nn.functional that need their own backward (stability, kinks, speed)."""
import math
import sys
import threading

import numpy as np

from ..autograd.function import Function, once_differentiable
from ..autograd.grad_mode import is_grad_enabled
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


def _leaky(g, x, slope):
    """``g`` where ``x > 0``, else ``g * slope`` (a NaN ``x`` takes the slope, as torch)."""
    return np.where(x > 0, g, g * g.dtype.type(slope))


class LeakyRelu(Function):
    node_name = "LeakyReluBackward0"

    @staticmethod
    def forward(ctx, input, negative_slope):
        x = input._array
        if x.dtype.kind not in "f":
            from ..dtypes import from_numpy_dtype
            raise NotImplementedError("\"leaky_relu_cpu\" not implemented for '%s'"
                                      % from_numpy_dtype(x.dtype)._legacy[:-len("Tensor")])
        ctx.save_for_backward(input)
        ctx.slope = negative_slope
        return Tensor._wrap(_leaky(x, x, negative_slope))

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return LeakyReluGrad.apply(grad_output, input, ctx.slope), None


class LeakyReluGrad(Function):
    """Leaky ReLU's backward, itself differentiable (zero derivative in the input, as torch)."""

    node_name = "LeakyReluBackwardBackward0"

    @staticmethod
    def forward(ctx, grad_output, input, negative_slope):
        ctx.save_for_backward(input)
        ctx.slope = negative_slope
        return Tensor._wrap(_leaky(grad_output._array, input._array, negative_slope))

    @staticmethod
    def backward(ctx, grad):
        input, = ctx.saved_tensors
        zero = Tensor._wrap(np.zeros_like(input._array)) if ctx.needs_input_grad[1] else None
        return LeakyReluGrad.apply(grad, input, ctx.slope), zero, None


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


# LSTMLayer works on transposed states (H, N) so that each step's gates come out of one GEMM
# gate-major, (4H, N) = (4, H, N), in the order (o, i, f, g): the sigmoid gates (o, i, f) are one
# block for the forward and the cell-state gates (i, f, g) one block for the backward.
_ORDER = (3, 0, 1, 2)    # torch's gate index (i, f, g, o) of each of ours
_HALF = (0.5, 0.5, 0.5, 1)


def _gate_rows(w, hid, scale, out=None):
    """``w`` (4H, ...) with its gate blocks in our order, each times its ``scale``."""
    if out is None:
        out = np.empty(w.shape, dtype=w.dtype)
    for k, r in enumerate(_ORDER):
        np.multiply(w[r * hid:(r + 1) * hid], scale[k], out=out[k * hid:(k + 1) * hid])
    return out


_spare = {}     # name -> arrays earlier LSTMLayer calls allocated (newest first)
_spare_lock = threading.Lock()


def _free_refs():
    """getrefcount of an array only ``_buffer``'s list and loop hold (3 on CPython 3.11)."""
    for arr in [np.empty(0)]:
        return sys.getrefcount(arr)


_FREE_REFS = _free_refs()


def _buffer(name, shape, dtype):
    """An uninitialised array for ``name``, reusing an earlier call's once nothing holds it.

    Fresh multi-megabyte arrays page-fault on every training step (the allocator hands freed
    memory back to the OS), which costs a long sequence as much as its element-wise work.
    """
    with _spare_lock:
        arrays = _spare.setdefault(name, [])
        for arr in arrays:
            # NOTE: no more references than the list's and the loop's: no view, Tensor or graph
            # node uses it any more.
            if sys.getrefcount(arr) == _FREE_REFS and arr.shape == shape and arr.dtype == dtype:
                return arr
        arr = np.empty(shape, dtype=dtype)
        arrays.insert(0, arr)
        del arrays[4:]
        return arr


class LSTMLayer(Function):
    """One LSTM layer and direction over a whole sequence, input projection included: one graph
    node, not one per step.

    The input projection of all steps (bias included) is one batched GEMM; the time loop holds
    one GEMM (``W_hh @ h``) and in-place element-wise work on contiguous per-gate blocks. While
    a step's gates are still in cache forward stores the factors BPTT needs (gate derivatives
    times their partners), so the backward loop is one GEMM and a few element-wise products
    per step; every weight's gradient is one GEMM per gate over all steps.
    """

    node_name = "MkldnnRnnLayerBackward0"

    @staticmethod
    def forward(ctx, input, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse, recording=True):
        x = input._array
        seq, n, n_in = x.shape
        hid = w_hh.shape[1]
        dt = x.dtype
        # NOTE: sigmoid(z) = 0.5 * tanh(z / 2) + 0.5, so one tanh serves all four gates; the
        # halving of the sigmoid gates' inputs is folded into the weights (exact: a power of 2).
        half = np.array(_HALF, dtype=dt)
        w = _gate_rows(w_hh._array, hid, half, _buffer("w", (4 * hid, hid), dt))
        x_in = x.reshape(seq * n, n_in)
        w_in = w_ih._array
        biases = [b._array for b in (b_ih, b_hh) if b is not None]
        if biases:
            # the bias rides in the GEMM as the weight of an extra input fixed at 1 (and its
            # gradient in the weight gradient's GEMM)
            w_in = np.concatenate([w_in, sum(biases)[:, None]], axis=1)
            x2, x_in = x_in, _buffer("x_in", (seq * n, n_in + 1), dt)
            x_in[:, :n_in] = x2
            x_in[:, n_in] = 1
        gates = _buffer("gates", (seq, 4 * hid, n), dt)    # per step: (4H, N), our order
        np.matmul(_gate_rows(w_in, hid, half), x_in.reshape(seq, n, -1).transpose(0, 2, 1),
                  out=gates)
        gates = gates.reshape(seq, 4, hid, n)
        # hbuf holds h0 and every step's h in time order, so h_{t-1} of all steps is a view.
        hbuf = _buffer("hbuf_t", (seq + 1, hid, n), dt)
        hs, h_prev = (hbuf[:seq], hbuf[1:]) if reverse else (hbuf[1:], hbuf[:seq])
        h_prev[-1 if reverse else 0] = h0._array.T
        act = np.empty((4, hid, n), dtype=dt)
        sig = act[:3]
        o, i, f, g = act
        ig, tc = np.empty((2, hid, n), dtype=dt)
        cbuf = np.empty((2, hid, n), dtype=dt)
        grad = recording and any(ctx.needs_input_grad)    # (no BPTT factors under no_grad)
        if grad:
            a_f = _buffer("a_f", (seq, 2, hid, n), dt)
        c = c0._array.T
        order = range(seq - 1, -1, -1) if reverse else range(seq)
        with _quiet():
            for k, t in enumerate(order):
                np.matmul(w, h_prev[t], out=act.reshape(4 * hid, n))
                kt = gates[t]
                act += kt
                np.tanh(act, out=act)
                if grad:
                    # NOTE: BPTT factors, kept in place of the used gate inputs: K = gate' *
                    # partner (partners tanh(c), g, c_prev, i for o, i, f, g), with 1 - tanh^2
                    # for every gate's derivative: 4x the sigmoid's, a factor backward removes.
                    np.multiply(act, act, out=kt)
                    np.subtract(1, kt, out=kt)
                sig *= 0.5
                sig += 0.5
                c_new = cbuf[k & 1]
                np.multiply(f, c, out=c_new)
                np.multiply(i, g, out=ig)
                c_new += ig
                np.tanh(c_new, out=tc)
                np.multiply(o, tc, out=hs[t])
                if grad:
                    kt[0] *= tc
                    kt[1] *= g
                    kt[2] *= c
                    kt[3] *= i
                    # dc = dh * A + dc_next with A = o(1 - tanh(c)^2); dc_prev = dc * f
                    a = a_f[t, 0]
                    np.multiply(tc, tc, out=a)
                    np.subtract(1, a, out=a)
                    a *= o
                    a_f[t, 1] = f
                c = c_new
        hbuf_t, hbuf = hbuf, _buffer("hbuf", (seq + 1, n, hid), dt)
        np.copyto(hbuf, hbuf_t.transpose(0, 2, 1))
        hs, h_prev = (hbuf[:seq], hbuf[1:]) if reverse else (hbuf[1:], hbuf[:seq])
        out = Tensor._wrap(hs)
        if grad:
            ctx.save_for_backward(input, out, h0, w_ih, w_hh)    # version-checked
            ctx.conf = (gates, a_f, x_in, h_prev, reverse)
        h_n = hs[order[-1]] if seq else h0._array
        return out, Tensor._wrap(h_n.copy()), Tensor._wrap(c.T.copy())

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out, grad_hn, grad_cn):
        gates, a_f, x_in, h_prev, reverse = ctx.conf
        input, _, _, w_ih, w_hh = ctx.saved_tensors
        seq, _, hid, n = gates.shape
        dt = gates.dtype
        # The loop's gate gradients are 4x too large for the sigmoid gates (see forward):
        # ``quarter`` scales what they multiply.
        quarter = np.array((0.25, 0.25, 0.25, 1), dtype=dt)
        w_t = _gate_rows(w_hh._array, hid, quarter, _buffer("w_b", (4 * hid, hid), dt)).T
        dh_next, dc_next, dh, dc = np.zeros((4, hid, n), dtype=dt)
        if grad_hn is not None:
            np.copyto(dh_next, grad_hn._array.T)
        if grad_cn is not None:
            np.copyto(dc_next, grad_cn._array.T)
        go = None
        if grad_out is not None:
            go = _buffer("go", (seq, hid, n), dt)
            np.copyto(go, grad_out._array.transpose(0, 2, 1))
        # every step's gate gradients side by side for the weights' GEMMs: (4H, L, N), copied
        # from a ring of the last 8 steps' while they are in cache
        d2 = _buffer("dgates", (4 * hid, seq, n), dt)
        ring = _buffer("ring", (8,) + gates.shape[1:], dt)
        done = 7 if reverse else 0    # the step that completes a block of 8
        order = range(seq) if reverse else range(seq - 1, -1, -1)
        for t in order:
            if go is None:
                np.copyto(dh, dh_next)
            else:
                np.add(dh_next, go[t], out=dh)
            np.multiply(dh, a_f[t, 0], out=dc)
            dc += dc_next
            kt, dgt = gates[t], ring[t % 8]
            np.multiply(kt[1:], dc, out=dgt[1:])
            np.multiply(kt[0], dh, out=dgt[0])
            np.matmul(w_t, dgt.reshape(4 * hid, n), out=dh_next)
            np.multiply(dc, a_f[t, 1], out=dc_next)
            if t % 8 == done or t == order[-1]:
                block = d2[:, t - t % 8:t - t % 8 + 8]
                np.copyto(block, ring[:block.shape[1]].reshape(-1, 4 * hid, n).transpose(1, 0, 2))
        d2 = d2.reshape(4 * hid, seq * n)
        needs = ctx.needs_input_grad
        n_in = input.shape[-1]
        grad_x = grad_wih = grad_whh = grad_bih = grad_bhh = None
        if needs[0]:
            w_in = _gate_rows(w_ih._array, hid, quarter)
            grad_x = Tensor._wrap((d2.T @ w_in).reshape(input.shape))
        rows = [slice(r * hid, (r + 1) * hid) for r in _ORDER]
        if needs[3] or needs[5] or needs[6]:
            grad_in = _buffer("grad_in", (4 * hid, x_in.shape[1]), dt)    # [W_ih | b]
            for k, r in enumerate(rows):
                np.matmul(d2[k * hid:(k + 1) * hid], x_in, out=grad_in[r])
                grad_in[r] *= quarter[k]
            if needs[3]:
                grad_wih = Tensor._wrap(np.ascontiguousarray(grad_in[:, :n_in]))
            if needs[5]:
                grad_bih = Tensor._wrap(grad_in[:, n_in].copy())
            if needs[6]:
                grad_bhh = Tensor._wrap(grad_in[:, n_in].copy())
        if needs[4]:
            grad_whh = np.empty(w_hh.shape, dtype=dt)
            hp = h_prev.reshape(seq * n, hid)
            for k, r in enumerate(rows):
                np.matmul(d2[k * hid:(k + 1) * hid], hp, out=grad_whh[r])
                grad_whh[r] *= quarter[k]
            grad_whh = Tensor._wrap(grad_whh)
        return (grad_x, Tensor._wrap(dh_next.T.copy()) if needs[1] else None,
                Tensor._wrap(dc_next.T.copy()) if needs[2] else None, grad_wih, grad_whh,
                grad_bih, grad_bhh, None, None)


class Embedding(Function):
    node_name = "EmbeddingBackward0"

    @staticmethod
    def forward(ctx, weight, indices, padding_idx):
        idx = indices._array
        ctx.conf = (idx, padding_idx)
        return Tensor._wrap(weight._array[idx])

    @staticmethod
    def backward(ctx, grad_output):
        idx, padding_idx = ctx.conf
        shape, dtype = ctx._input_meta(0)
        if is_grad_enabled():   # create_graph=True: a differentiable index_add (double backward)
            rows = grad_output.reshape(-1, shape[1])
            grad = Tensor._wrap(np.zeros(shape, dtype)).index_add(0, Tensor._wrap(idx.reshape(-1)),
                                                                  rows)
            if padding_idx is not None:
                keep = np.ones((shape[0], 1), dtype)
                keep[padding_idx] = 0
                grad = grad * Tensor._wrap(keep)
            return grad, None, None
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
    def backward(ctx, grad_output):
        pads, mode, shape = ctx.conf
        g = grad_output._array
        if all(p == (0, 0) for p in pads):    # nothing was padded
            return (grad_output * 1 if is_grad_enabled() else Tensor._wrap(g.copy())), None, \
                None, None
        # Pad an array of input positions the same way, then scatter-add the gradient back.
        lead = min(i for i, p in enumerate(pads) if p != (0, 0))
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
        flat = pos.reshape(-1)
        keep = flat >= 0
        cols = flat[keep]
        if is_grad_enabled():   # create_graph=True: a differentiable scatter (double backward)
            gk = grad_output.reshape(nb, -1).index_select(1, Tensor._wrap(np.flatnonzero(keep)))
            zero = Tensor._wrap(np.zeros((nb, int(np.prod(inner))), dtype=g.dtype))
            return zero.index_add(1, Tensor._wrap(cols), gk).reshape(shape), None, None, None
        g2 = g.reshape(nb, -1)
        grad = np.zeros((nb, int(np.prod(inner))), dtype=g.dtype)
        gk = g2[:, keep]
        if len(np.unique(cols)) == len(cols):
            grad[:, cols] = gk
        else:
            np.add.at(grad, (slice(None), cols), gk)
        return Tensor._wrap(grad.reshape(shape)), None, None, None
