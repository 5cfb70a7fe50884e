"""``norm_except_dim`` and ``_weight_norm``: the maths of weight normalisation."""
from ... import ops
from ...autograd import Function
from ...ops._util import xp_of
from ...tensor import Tensor

__all__ = []


def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of ``v`` over every dim but ``dim`` (all dims for ``dim=-1``), shaped
    to broadcast against ``v``."""
    if dim == -1:
        return ops.norm(v, pow)
    if dim == 0:
        shape = (v.shape[0],) + (1,) * (v.dim() - 1)
        return ops.norm(v.contiguous().reshape(v.shape[0], -1), pow, 1).reshape(shape)
    if dim == v.dim() - 1:
        shape = (1,) * (v.dim() - 1) + (v.shape[-1],)
        return ops.norm(v.contiguous().reshape(-1, v.shape[-1]), pow, 0).reshape(shape)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


class WeightNormInterface(Function):
    """``v * (g / ||v||)`` in one node, the norm over every dim but ``dim`` (0 or the last)."""

    node_name = "WeightNormInterfaceBackward0"

    @staticmethod
    def forward(ctx, v, g, dim):
        xp = xp_of(v)
        va = v._array
        axes = tuple(d for d in range(va.ndim) if d != dim)
        norm = xp.sqrt((va * va).sum(axis=axes, keepdims=True))
        ctx.dim = dim
        ctx.save_for_backward(v, g)
        return Tensor._wrap(va * (g._array.reshape(norm.shape) / norm))

    @staticmethod
    def backward(ctx, grad_output):
        v, g = ctx.saved_tensors
        axes = [d for d in range(v.dim()) if d != ctx.dim]
        # (the norm is recomputed from v with Tensor ops, so double backward sees it)
        norm = (v * v).sum(dim=axes, keepdim=True).sqrt() if axes else v.abs()
        gr = g.reshape(norm.shape)
        dot = (grad_output * v).sum(dim=axes, keepdim=True) if axes else grad_output * v
        gv = gg = None
        if ctx.needs_input_grad[0]:
            gv = (gr / norm) * (grad_output - v * (dot / (norm * norm)))
        if ctx.needs_input_grad[1]:
            gg = (dot / norm).reshape(g.shape)
        return gv, gg, None


def _weight_norm(v, g, dim=0):
    """``v * (g / ||v||)`` with the norm over every dim but ``dim`` (torch's ``_weight_norm``:
    one WeightNormInterfaceBackward0 node for ``dim`` 0 or ``v.dim() - 1``)."""
    if v.dim() and (dim == 0 or dim == v.dim() - 1) and g.numel() == v.shape[dim]:
        return WeightNormInterface.apply(v, g, dim)
    return v * (g / norm_except_dim(v, 2, dim))
