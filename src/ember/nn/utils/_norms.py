"""``norm_except_dim`` and ``_weight_norm``: the maths of weight normalisation."""
from ... import ops

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


def _weight_norm(v, g, dim=0):
    """``v * (g / ||v||)`` with the norm over every dim but ``dim``."""
    return v * (g / norm_except_dim(v, 2, dim))
