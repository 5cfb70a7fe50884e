"""Sorting and searching: sort, argsort, topk, kthvalue, unique, searchsorted, bucketize.

Values are differentiable: the gradient goes back to the position each value came from.
"""
import collections

import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import wrap_dim

__all__ = ["sort", "argsort", "msort", "topk", "kthvalue", "unique", "unique_consecutive",
           "searchsorted", "bucketize"]


def _return_type(name):
    base = collections.namedtuple(name, ["values", "indices"])

    def __repr__(self):
        return "torch.return_types.%s(\nvalues=%r,\nindices=%r)" % (name, self.values,
                                                                    self.indices)
    return type(name, (base,), {"__slots__": (), "__repr__": __repr__,
                                "__module__": "torch.return_types"})


_sort_rt = _return_type("sort")
_topk_rt = _return_type("topk")
_kthvalue_rt = _return_type("kthvalue")


def _argsort(arr, axis, descending):
    """Stable argsort along ``axis``; NaN sorts as the largest value, as in torch."""
    if arr.ndim == 0:
        return np.zeros((), dtype=np.int64)
    if not descending:
        return np.argsort(arr, axis=axis, kind="stable")
    rev = np.flip(arr, axis)
    n = arr.shape[axis]
    return np.flip(n - 1 - np.argsort(rev, axis=axis, kind="stable"), axis)


class _Select(Function):
    """Values picked from ``input`` at ``indices`` along ``dim`` (sort, topk, kthvalue)."""

    node_name = "SortBackward0"

    @staticmethod
    def forward(ctx, a, dim, idx, keepdim):
        arr = a._array
        ctx.dim, ctx.keepdim = dim, keepdim
        ctx.idx = idx
        if arr.ndim == 0:
            return Tensor._wrap(arr.copy())
        out = np.take_along_axis(arr, idx, axis=dim)
        if not keepdim:
            out = out.squeeze(dim)
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        from .indexing import Scatter
        from .shape import unsqueeze
        shape, dtype = ctx._input_meta(0)
        if not shape:
            return grad_output, None, None, None
        g = grad_output if ctx.keepdim else unsqueeze(grad_output, ctx.dim)
        zeros = Tensor._wrap(np.zeros(shape, dtype))
        return Scatter.apply(zeros, ctx.dim, Tensor._wrap(ctx.idx), g, None), None, None, None


class _SortValues(_Select):
    node_name = "SortBackward0"


class _TopkValues(_Select):
    node_name = "TopkBackward0"


class _KthValues(_Select):
    node_name = "KthvalueBackward0"


def _pick(cls, input, dim, idx, keepdim=True):
    return cls.apply(input, dim, idx, keepdim)


def sort(input, dim=-1, descending=False, stable=False, *, out=None):
    """Sorted values and their original indices along ``dim`` (ties keep their order).

    Example:
        >>> import ember
        >>> ember.sort(ember.tensor([3., 1., 2.])).indices
        tensor([1, 2, 0])
    """
    arr = input._array
    d = wrap_dim(dim, arr.ndim, "sort")
    idx = _argsort(arr, d, descending)
    return _sort_rt(_pick(_SortValues, input, d, idx), Tensor._wrap(idx.astype(np.int64)))


def argsort(input, dim=-1, descending=False, stable=False):
    """The indices that sort ``input`` along ``dim``."""
    d = wrap_dim(dim, input._array.ndim, "argsort")
    return Tensor._wrap(_argsort(input._array, d, descending).astype(np.int64))


def msort(input, *, out=None):
    """``sort(input, dim=0).values``."""
    return sort(input, 0).values


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    """The ``k`` largest (or smallest) values along ``dim`` and their indices."""
    arr = input._array
    d = wrap_dim(dim, arr.ndim, "topk")
    n = arr.shape[d] if arr.ndim else 1
    if k < 0 or k > n:
        raise RuntimeError("selected index k out of range")
    idx = _argsort(arr, d, largest)
    if arr.ndim:
        idx = np.take(idx, np.arange(k), axis=d)
    return _topk_rt(_pick(_TopkValues, input, d, idx), Tensor._wrap(idx.astype(np.int64)))


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """The ``k``-th smallest value along ``dim`` (1-based) and its index."""
    arr = input._array
    d = wrap_dim(dim, arr.ndim, "kthvalue")
    n = arr.shape[d] if arr.ndim else 1
    if k < 1 or k > n:
        raise IndexError("kthvalue(): selected number k out of range for dimension %d" % d)
    idx = _argsort(arr, d, False)
    if arr.ndim:
        idx = np.take(idx, [k - 1], axis=d)
    values = _pick(_KthValues, input, d, idx, keepdim)
    if arr.ndim and not keepdim:
        idx = idx.squeeze(d)
    return _kthvalue_rt(values, Tensor._wrap(idx.astype(np.int64)))


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values (sorted), optionally with inverse indices and counts."""
    arr = input._array
    if dim is None:
        vals, inv, counts = np.unique(arr.reshape(-1), return_inverse=True, return_counts=True)
        inv = inv.reshape(arr.shape)
    else:
        d = wrap_dim(dim, arr.ndim, "unique")
        vals, inv, counts = np.unique(arr, return_inverse=True, return_counts=True, axis=d)
        inv = inv.reshape(-1)
    out = [Tensor._wrap(vals)]
    if return_inverse:
        out.append(Tensor._wrap(inv.astype(np.int64)))
    if return_counts:
        out.append(Tensor._wrap(counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse runs of equal consecutive values (or slices along ``dim``)."""
    arr = input._array
    if dim is None:
        flat = arr.reshape(-1)
        change = np.ones(flat.size, dtype=bool)
        change[1:] = flat[1:] != flat[:-1]
        vals = flat[change]
        inv_shape = arr.shape
    else:
        d = wrap_dim(dim, arr.ndim, "unique_consecutive")
        moved = np.moveaxis(arr, d, 0)
        flat = moved.reshape(moved.shape[0], -1)
        change = np.ones(flat.shape[0], dtype=bool)
        change[1:] = np.any(flat[1:] != flat[:-1], axis=1)
        vals = np.moveaxis(moved[change], 0, d)
        inv_shape = (arr.shape[d],)
    out = [Tensor._wrap(np.ascontiguousarray(vals))]
    if return_inverse:
        out.append(Tensor._wrap((np.cumsum(change) - 1).astype(np.int64).reshape(inv_shape)))
    if return_counts:
        starts = np.flatnonzero(change)
        out.append(Tensor._wrap(np.diff(np.append(starts, change.size)).astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None, out=None):
    """Indices where ``input`` values would be inserted to keep ``sorted_sequence`` sorted."""
    seq = sorted_sequence._array
    scalar = not isinstance(input, Tensor)
    vals = np.asarray(input) if scalar else input._array
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError("torch.searchsorted(): side can only be 'left' or 'right' but got "
                               "%s" % side)
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    if sorter is not None:
        seq = np.take_along_axis(seq, sorter._array, axis=-1)
    how = "right" if right else "left"
    if seq.ndim == 1:
        res = np.searchsorted(seq, vals, side=how)
    else:
        if seq.shape[:-1] != vals.shape[:-1]:
            raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or "
                               "the first N-1 dimensions of boundaries tensor and input value "
                               "tensor must match, but we got boundaries tensor %s and input "
                               "value tensor %s" % (list(seq.shape), list(vals.shape)))
        s2 = seq.reshape(-1, seq.shape[-1])
        v2 = vals.reshape(-1, vals.shape[-1])
        res = np.stack([np.searchsorted(a, b, side=how) for a, b in zip(s2, v2)])
        res = res.reshape(vals.shape)
    return Tensor._wrap(np.asarray(res, dtype=np.int32 if out_int32 else np.int64))


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """The bucket of each value: ``boundaries[i-1] < x <= boundaries[i]`` when ``right=False``."""
    if boundaries._array.ndim != 1:
        raise RuntimeError("boundaries tensor must be 1 dimension, but got dim(%d)"
                           % boundaries._array.ndim)
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)
