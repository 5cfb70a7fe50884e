"""Sparse lookups: ``Embedding``, the row gather behind ``nn.functional.embedding``.

Its gradient sums the upstream rows of each index into a weight-shaped zero array (rows that
no index picked stay zero; the ``padding_idx`` row always does).
"""

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import backend_of, xp_of

__all__ = []


class Embedding(Function):
    """``weight[indices]``; no gradient reaches row ``padding_idx`` (None: every row gets one)."""

    node_name = "EmbeddingBackward0"
    edge_args = (0,)     # (torch gives the index/mask/condition no edge)

    @staticmethod
    def forward(ctx, weight, indices, padding_idx):
        ctx.padding_idx = padding_idx
        ctx.save_for_backward(indices)
        return Tensor._wrap(weight._array[indices._array])

    @staticmethod
    def backward(ctx, grad_output):
        indices, = ctx.saved_tensors
        shape, dtype = ctx._input_meta(0)
        xp = xp_of(grad_output)
        rows = grad_output.reshape(-1, shape[1])
        grad = Tensor._wrap(xp.zeros(shape, dtype)).index_add(0, indices.reshape(-1), rows)
        if ctx.padding_idx is not None:
            keep = xp.ones((shape[0], 1), dtype)
            keep[ctx.padding_idx] = 0
            grad = grad * Tensor._wrap(keep)
        return grad, None, None

    @staticmethod
    def array_backward(ctx, grad_output):
        indices, = ctx.saved_tensors
        shape, dtype = ctx._input_meta(0)
        g = grad_output._array.reshape(-1, shape[1]).astype(dtype, copy=False)
        grad = xp_of(grad_output).zeros(shape, dtype=dtype)
        flat = indices._array.reshape(-1)
        if flat.size:
            backend_of(grad).index_add_rows(grad, flat, g)
        if ctx.padding_idx is not None:
            grad[ctx.padding_idx] = 0
        return Tensor._wrap(grad), None, None
