"""Primitives behind the recurrent layers: ``UnsafeSplit`` (the gate split of torch's
composite cells) and the fused float32 LSTM layer (``LSTMLayer``, torch's mkldnn node).

``LSTMLayer`` is written on raw arrays of the inputs' device (``xp``) for speed, with a
backward behind ``once_differentiable``; it keeps everything backward reads in
``save_for_backward``, the inputs as their Tensors, so an in-place change of a weight or state
between forward and backward raises torch's version error.
"""
import threading

from ..autograd.function import Function, once_differentiable
from ..tensor import Tensor
from ._util import xp_of
from .shape import cat
from ..backend import quiet as _quiet

__all__ = []


class UnsafeSplit(Function):
    """``unsafe_chunk``: ``chunks`` equal pieces along ``dim``, not tracked as views."""

    node_name = "UnsafeSplitBackward0"

    @staticmethod
    def forward(ctx, a, chunks, dim):
        ctx.dim = dim
        arr = a._array
        size = arr.shape[dim] // chunks
        pre = (slice(None),) * dim
        return tuple(Tensor._wrap(arr[pre + (slice(k * size, (k + 1) * size),)])
                     for k in range(chunks))

    @staticmethod
    def backward(ctx, *grads):
        return cat(grads, ctx.dim), None, None

    @staticmethod
    def array_backward(ctx, *grads):
        xp = xp_of(grads[0])
        return Tensor._wrap(xp.concatenate([g._array for g in grads], axis=ctx.dim)), None, None


# LSTMLayer works on transposed states (H, N) so that each step's gates come out of one GEMM
# gate-major, (4H, N) = (4, H, N), in the order (o, i, f, g): the sigmoid gates (o, i, f) are one
# block for the forward and the cell-state gates (i, f, g) one block for the backward.
_ORDER = (3, 0, 1, 2)    # torch's gate index (i, f, g, o) of each of ours
_HALF = (0.5, 0.5, 0.5, 1.0)
_QUARTER = (0.25, 0.25, 0.25, 1.0)


def _gate_rows(xp, w, hid, scale, out=None):
    """``w`` (4H, ...) with its gate blocks in our order, each times its ``scale``."""
    if out is None:
        out = xp.empty(w.shape, dtype=w.dtype)
    for k, r in enumerate(_ORDER):
        xp.multiply(w[r * hid:(r + 1) * hid], scale[k], out=out[k * hid:(k + 1) * hid])
    return out


class _ScratchPool:
    """Scratch arrays lent to one LSTMLayer call at a time: ``take`` hands an array to its
    caller alone, and the caller ``give``s it back once done with it (never one that a Tensor,
    a view or a graph node still holds).

    Fresh multi-megabyte arrays page-fault on every training step (the allocator hands freed
    memory back to the OS), which costs a long sequence as much as its element-wise work.
    """

    _KEEP = 4    # arrays kept per name (the newest)

    def __init__(self):
        self._free = {}     # name -> arrays given back, newest first
        self._lock = threading.Lock()

    def take(self, name, xp, shape, dtype):
        """An uninitialised array of ``xp`` owned by the caller until it ``give``s it back."""
        with self._lock:
            arrays = self._free.get(name)
            if arrays:
                for k, (mod, arr) in enumerate(arrays):
                    if mod is xp and arr.shape == shape and arr.dtype == dtype:
                        del arrays[k]
                        return arr
        return xp.empty(shape, dtype=dtype)

    def give(self, name, xp, arr):
        """Take back an array of ``xp`` that ``take`` lent under ``name``."""
        with self._lock:
            free = self._free.setdefault(name, [])
            free.insert(0, (xp, arr))
            del free[self._KEEP:]


_pool = _ScratchPool()


class LSTMLayer(Function):
    """One LSTM layer and direction over a whole sequence, input projection included: one graph
    node, not one per step (torch's float32 ``mkldnn_rnn_layer``; its argument order).

    The input projection of all steps (bias included) is one batched GEMM; the time loop holds
    one GEMM (``W_hh @ h``) and in-place element-wise work on contiguous per-gate blocks. While
    a step's gates are still in cache forward stores the factors BPTT needs (gate derivatives
    times their partners), so the backward loop is one GEMM and a few element-wise products
    per step; every weight's gradient is one GEMM per gate over all steps.
    """

    node_name = "MkldnnRnnLayerBackward0"

    @staticmethod
    def forward(ctx, input, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse, recording=True):
        xp = xp_of(input)
        x = input._array
        seq, n, n_in = x.shape
        hid = w_hh.shape[1]
        dt = x.dtype
        grad = recording and any(ctx.needs_input_grad)    # (no BPTT factors under no_grad)
        # NOTE: sigmoid(z) = 0.5 * tanh(z / 2) + 0.5, so one tanh serves all four gates; the
        # halving of the sigmoid gates' inputs is folded into the weights (exact: a power of 2).
        w = _gate_rows(xp, w_hh._array, hid, _HALF, _pool.take("w", xp, (4 * hid, hid), dt))
        x_in = x.reshape(seq * n, n_in)
        w_in = w_ih._array
        biases = [b._array for b in (b_ih, b_hh) if b is not None]
        scratch = [("w", w)]
        if biases:
            # the bias rides in the GEMM as the weight of an extra input fixed at 1 (and its
            # gradient in the weight gradient's GEMM)
            w_in = xp.concatenate([w_in, sum(biases)[:, None]], axis=1)
            x2 = x_in
            # (saved for backward under grad: a fresh array then, not the pool's)
            x_in = _pool.take("x_in", xp, (seq * n, n_in + 1), dt) if not grad else \
                xp.empty((seq * n, n_in + 1), dtype=dt)
            x_in[:, :n_in] = x2
            x_in[:, n_in] = 1
            if not grad:
                scratch.append(("x_in", x_in))
        # per step: (4H, N), our order
        gates = xp.empty((seq, 4 * hid, n), dtype=dt) if grad else \
            _pool.take("gates", xp, (seq, 4 * hid, n), dt)
        if not grad:
            scratch.append(("gates", gates))
        xp.matmul(_gate_rows(xp, w_in, hid, _HALF),
                  x_in.reshape(seq, n, -1).transpose(0, 2, 1), out=gates)
        gates = gates.reshape(seq, 4, hid, n)
        # hbuf holds h0 and every step's h in time order, so h_{t-1} of all steps is a view.
        hbuf_t = _pool.take("hbuf_t", xp, (seq + 1, hid, n), dt)
        scratch.append(("hbuf_t", hbuf_t))
        hs, h_prev = (hbuf_t[:seq], hbuf_t[1:]) if reverse else (hbuf_t[1:], hbuf_t[:seq])
        h_prev[-1 if reverse else 0] = h0._array.T
        act = xp.empty((4, hid, n), dtype=dt)
        sig = act[:3]
        o, i, f, g = act
        ig, tc = xp.empty((2, hid, n), dtype=dt)
        cbuf = xp.empty((2, hid, n), dtype=dt)
        if grad:
            a_f = xp.empty((seq, 2, hid, n), dtype=dt)
        c = c0._array.T
        order = range(seq - 1, -1, -1) if reverse else range(seq)
        with _quiet():
            for k, t in enumerate(order):
                xp.matmul(w, h_prev[t], out=act.reshape(4 * hid, n))
                kt = gates[t]
                act += kt
                xp.tanh(act, out=act)
                if grad:
                    # NOTE: BPTT factors, kept in place of the used gate inputs: K = gate' *
                    # partner (partners tanh(c), g, c_prev, i for o, i, f, g), with 1 - tanh^2
                    # for every gate's derivative: 4x the sigmoid's, a factor backward removes.
                    xp.multiply(act, act, out=kt)
                    xp.subtract(1, kt, out=kt)
                sig *= 0.5
                sig += 0.5
                c_new = cbuf[k & 1]
                xp.multiply(f, c, out=c_new)
                xp.multiply(i, g, out=ig)
                c_new += ig
                xp.tanh(c_new, out=tc)
                xp.multiply(o, tc, out=hs[t])
                if grad:
                    kt[0] *= tc
                    kt[1] *= g
                    kt[2] *= c
                    kt[3] *= i
                    # dc = dh * A + dc_next with A = o(1 - tanh(c)^2); dc_prev = dc * f
                    a = a_f[t, 0]
                    xp.multiply(tc, tc, out=a)
                    xp.subtract(1, a, out=a)
                    a *= o
                    a_f[t, 1] = f
                c = c_new
        # the output's storage: fresh, as the caller keeps it (a copy even where the transpose
        # is already contiguous, as with one batch row: hbuf_t goes back to the pool)
        hbuf = hbuf_t.transpose(0, 2, 1).copy()
        hs, h_prev = (hbuf[:seq], hbuf[1:]) if reverse else (hbuf[1:], hbuf[:seq])
        out = Tensor._wrap(hs)
        if grad:
            ctx.reverse = reverse
            # NOTE: the inputs and the output as Tensors, version-checked as torch's mkldnn
            # layer saves them.
            ctx.save_for_backward(input, out, w_ih, w_hh, b_ih, b_hh, h0, c0, Tensor._wrap(gates),
                                  Tensor._wrap(a_f), Tensor._wrap(x_in), Tensor._wrap(h_prev))
        h_n = hs[order[-1]] if seq else h0._array
        results = out, Tensor._wrap(h_n.copy()), Tensor._wrap(c.T.copy())
        for name, arr in scratch:
            _pool.give(name, xp, arr)
        return results

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out, grad_hn, grad_cn):
        input, _, w_ih, w_hh, _, _, _, _, gates, a_f, x_in, h_prev = ctx.saved_tensors
        gates, a_f, x_in, h_prev = gates._array, a_f._array, x_in._array, h_prev._array
        reverse = ctx.reverse
        xp = xp_of(input)
        seq, _, hid, n = gates.shape
        dt = gates.dtype
        # The loop's gate gradients are 4x too large for the sigmoid gates (see forward):
        # ``_QUARTER`` scales what they multiply.
        w_b = _gate_rows(xp, w_hh._array, hid, _QUARTER, _pool.take("w_b", xp, (4 * hid, hid),
                                                                     dt))
        w_t = w_b.T
        dh_next, dc_next, dh, dc = xp.zeros((4, hid, n), dtype=dt)
        if grad_hn is not None:
            xp.copyto(dh_next, grad_hn._array.T)
        if grad_cn is not None:
            xp.copyto(dc_next, grad_cn._array.T)
        go = None
        scratch = [("w_b", w_b)]
        if grad_out is not None:
            go = _pool.take("go", xp, (seq, hid, n), dt)
            scratch.append(("go", go))
            xp.copyto(go, grad_out._array.transpose(0, 2, 1))
        # every step's gate gradients side by side for the weights' GEMMs: (4H, L, N), copied
        # from a ring of the last 8 steps' while they are in cache
        d2 = _pool.take("dgates", xp, (4 * hid, seq, n), dt)
        ring = _pool.take("ring", xp, (8,) + gates.shape[1:], dt)
        scratch += [("dgates", d2), ("ring", ring)]
        done = 7 if reverse else 0    # the step that completes a block of 8
        order = range(seq) if reverse else range(seq - 1, -1, -1)
        for t in order:
            if go is None:
                xp.copyto(dh, dh_next)
            else:
                xp.add(dh_next, go[t], out=dh)
            xp.multiply(dh, a_f[t, 0], out=dc)
            dc += dc_next
            kt, dgt = gates[t], ring[t % 8]
            xp.multiply(kt[1:], dc, out=dgt[1:])
            xp.multiply(kt[0], dh, out=dgt[0])
            xp.matmul(w_t, dgt.reshape(4 * hid, n), out=dh_next)
            xp.multiply(dc, a_f[t, 1], out=dc_next)
            if t % 8 == done or t == order[-1]:
                block = d2[:, t - t % 8:t - t % 8 + 8]
                xp.copyto(block, ring[:block.shape[1]].reshape(-1, 4 * hid, n).transpose(1, 0, 2))
        d2 = d2.reshape(4 * hid, seq * n)
        needs = ctx.needs_input_grad
        n_in = input.shape[-1]
        grad_x = grad_wih = grad_whh = grad_bih = grad_bhh = None
        if needs[0]:
            w_in = _gate_rows(xp, w_ih._array, hid, _QUARTER)
            grad_x = Tensor._wrap((d2.T @ w_in).reshape(input.shape))
        rows = [slice(r * hid, (r + 1) * hid) for r in _ORDER]
        if needs[1] or needs[3] or needs[4]:
            grad_in = _pool.take("grad_in", xp, (4 * hid, x_in.shape[1]), dt)    # [W_ih | b]
            scratch.append(("grad_in", grad_in))
            for k, r in enumerate(rows):
                xp.matmul(d2[k * hid:(k + 1) * hid], x_in, out=grad_in[r])
                grad_in[r] *= _QUARTER[k]
            if needs[1]:
                # (a copy: grad_in goes back to the pool)
                grad_wih = Tensor._wrap(grad_in[:, :n_in].copy())
            if needs[3]:
                grad_bih = Tensor._wrap(grad_in[:, n_in].copy())
            if needs[4]:
                grad_bhh = Tensor._wrap(grad_in[:, n_in].copy())
        if needs[2]:
            grad_whh = xp.empty(w_hh.shape, dtype=dt)
            hp = h_prev.reshape(seq * n, hid)
            for k, r in enumerate(rows):
                xp.matmul(d2[k * hid:(k + 1) * hid], hp, out=grad_whh[r])
                grad_whh[r] *= _QUARTER[k]
            grad_whh = Tensor._wrap(grad_whh)
        results = (grad_x, grad_wih, grad_whh, grad_bih, grad_bhh,
                   Tensor._wrap(dh_next.T.copy()) if needs[5] else None,
                   Tensor._wrap(dc_next.T.copy()) if needs[6] else None, None, None)
        for name, arr in scratch:
            _pool.give(name, xp, arr)
        return results


class PackPadded(Function):
    """The rows ``idx`` of a padded ``(T * B, *)`` batch: ``pack_padded_sequence``'s data."""

    node_name = "PackPaddedSequenceBackward0"

    @staticmethod
    def forward(ctx, flat, idx):
        ctx.save_for_backward(idx)
        ctx.rows = flat.shape[0]
        return Tensor._wrap(flat._array[idx._array])

    @staticmethod
    def backward(ctx, grad_output):
        (idx,) = ctx.saved_tensors
        xp = xp_of(grad_output)
        zero = xp.zeros((ctx.rows,) + tuple(grad_output.shape[1:]),
                        dtype=grad_output._array.dtype)
        return Tensor._wrap(zero).index_add(0, idx, grad_output), None
