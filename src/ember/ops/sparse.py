"""Sparse lookups: ``Embedding``, the row gather behind ``nn.functional.embedding``.

Its gradient sums the upstream rows of each index into a weight-shaped zero array (rows that
no index picked stay zero; the ``padding_idx`` row always does).
"""

import numpy as np

from ..autograd.function import Function, once_differentiable
from ..tensor import Tensor
from ._util import backend_of, xp_of

__all__ = []


class Embedding(Function):
    """``weight[indices]``; no gradient reaches row ``padding_idx`` (None: every row gets one)."""

    node_name = "EmbeddingBackward0"
    edge_args = (0,)     # (torch gives the index/mask/condition no edge)

    @staticmethod
    def forward(ctx, weight, indices, padding_idx, scale_grad_by_freq=False):
        ctx.padding_idx, ctx.scale = padding_idx, scale_grad_by_freq
        ctx.save_for_backward(indices)
        return Tensor._wrap(weight._array[indices._array])

    @staticmethod
    def _inv_freq(xp, flat, n, dtype):
        """``1 / count`` of each position's index (``scale_grad_by_freq``), as a column."""
        counts = xp.bincount(flat, minlength=n) if flat.size else xp.zeros(n, xp.int64)
        return (1.0 / counts[flat].astype(np.float64)).astype(dtype)[:, None]

    @staticmethod
    def backward(ctx, grad_output):
        indices, = ctx.saved_tensors
        shape, dtype = ctx._input_meta(0)
        xp = xp_of(grad_output)
        rows = grad_output.reshape(-1, shape[1])
        if ctx.scale:
            rows = rows * Tensor._wrap(Embedding._inv_freq(xp, indices._array.reshape(-1),
                                                           shape[0], dtype))
        grad = Tensor._wrap(xp.zeros(shape, dtype)).index_add(0, indices.reshape(-1), rows)
        if ctx.padding_idx is not None:
            keep = xp.ones((shape[0], 1), dtype)
            keep[ctx.padding_idx] = 0
            grad = grad * Tensor._wrap(keep)
        return grad, None, None, None

    @staticmethod
    def array_backward(ctx, grad_output):
        indices, = ctx.saved_tensors
        shape, dtype = ctx._input_meta(0)
        g = grad_output._array.reshape(-1, shape[1]).astype(dtype, copy=False)
        grad = xp_of(grad_output).zeros(shape, dtype=dtype)
        flat = indices._array.reshape(-1)
        if ctx.scale:
            g = g * Embedding._inv_freq(xp_of(grad_output), flat, shape[0], dtype)
        if flat.size:
            backend_of(grad).index_add_rows(grad, flat, g)
        if ctx.padding_idx is not None:
            grad[ctx.padding_idx] = 0
        return Tensor._wrap(grad), None, None, None


class EmbeddingBag(Function):
    """Per-bag sum / mean / max of ``weight`` rows. ``indices`` (L,) and ``bags`` (L,) are raw
    arrays: each position's row and bag (-1: left out, e.g. ``padding_idx``)."""

    node_name = "EmbeddingBagBackward0"
    edge_args = (0, 1)      # weight and per_sample_weights (None when not given)

    @staticmethod
    def forward(ctx, weight, per_sample_weights, indices, bags, n_bags, mode):
        xp = xp_of(weight)
        w = weight._array
        dim = w.shape[1]
        keep = bags >= 0
        idx, bag = indices[keep], bags[keep]
        rows = w[idx]
        counts = xp.bincount(bag, minlength=n_bags)[:n_bags] if bag.size else \
            xp.zeros(n_bags, dtype=xp.int64)
        out = xp.zeros((n_bags, dim), dtype=w.dtype)
        argmax = None
        if mode == "max":
            if bag.size:
                # (``bags`` is non-decreasing: the offsets are)
                first = xp.concatenate([xp.zeros(1, dtype=counts.dtype), xp.cumsum(counts)[:-1]])
                pos = xp.arange(bag.size) - first[bag]
                dense = xp.full((n_bags, int(counts.max()), dim), -xp.inf, dtype=w.dtype)
                dense[bag, pos] = rows
                # NOTE: torch keeps a bag's first row, then takes a row only where it is
                # strictly greater: a NaN wins only as the first row
                nan = xp.isnan(dense)
                first_nan = nan[:, 0]
                nan[:, 0] = False
                dense[nan] = -xp.inf
                slot = xp.where(first_nan, 0, dense.argmax(1))         # (B, D) position
                dense[:, 0][first_nan] = xp.nan
                has = counts[:, None] > 0
                argmax = xp.where(has, idx[xp.minimum(first[:, None] + slot, bag.size - 1)], -1)
                out = xp.where(has, dense.max(1), 0).astype(w.dtype)
            else:
                argmax = xp.full((n_bags, dim), -1, dtype=xp.int64)
        else:
            if per_sample_weights is not None:
                rows = rows * per_sample_weights._array[keep][:, None]
            if bag.size:
                backend_of(out).index_add_rows(out, bag, rows.astype(w.dtype, copy=False))
            if mode == "mean":
                out = out / xp.maximum(counts, 1)[:, None].astype(w.dtype)
        ctx.mode, ctx.n_bags = mode, n_bags
        ctx.save_for_backward(weight, per_sample_weights, Tensor._wrap(indices),
                              Tensor._wrap(bags), Tensor._wrap(counts),
                              None if argmax is None else Tensor._wrap(argmax))
        return Tensor._wrap(out.astype(w.dtype, copy=False))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        weight, psw, indices, bags, counts, argmax = ctx.saved_tensors
        xp = xp_of(grad_output)
        w = weight._array
        g = grad_output._array.astype(w.dtype, copy=False)
        keep = bags._array >= 0
        idx, bag = indices._array[keep], bags._array[keep]
        grad_w = grad_psw = None
        if ctx.needs_input_grad[0]:
            grad_w = xp.zeros(w.shape, dtype=w.dtype)
            if ctx.mode == "max":
                am = argmax._array
                sel = am >= 0
                cols = xp.broadcast_to(xp.arange(w.shape[1]), am.shape)[sel]
                flat = grad_w.reshape(-1, 1)
                if cols.size:
                    backend_of(flat).index_add_rows(flat, am[sel] * w.shape[1] + cols,
                                                    g[sel][:, None])
            elif bag.size:
                rows = g[bag]
                if ctx.mode == "mean":
                    rows = rows / counts._array[bag][:, None].astype(w.dtype)
                elif psw is not None:
                    rows = rows * psw._array[keep][:, None]
                backend_of(grad_w).index_add_rows(grad_w, idx, rows.astype(w.dtype))
            grad_w = Tensor._wrap(grad_w)
        if ctx.needs_input_grad[1]:
            full = xp.zeros(bags.shape, dtype=psw._array.dtype)
            full[keep] = (g[bag] * w[idx]).sum(1)
            grad_psw = Tensor._wrap(full)
        return grad_w, grad_psw, None, None, None, None
