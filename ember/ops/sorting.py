"""Sorting and searching: sort, argsort, topk, kthvalue, unique, searchsorted, bucketize.

Values are differentiable: the gradient goes back to the position each value came from.
"""
import numpy as np

from .. import return_types as _rt
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import wrap_dim

__all__ = ["sort", "argsort", "msort", "topk", "kthvalue", "unique", "unique_consecutive",
           "searchsorted", "bucketize"]


_sort_rt = _rt.sort
_topk_rt = _rt.topk
_kthvalue_rt = _rt.kthvalue


# Tie-breaking as torch's CPU kernels: they run libstdc++'s std::sort (introsort),
# std::nth_element (introselect) and std::partial_sort (heap select) on (value, index) pairs,
# comparing values only, so equal values come out in the order those algorithms leave them.
# The functions below replay those algorithms step for step on a list ``v`` of (key, index)
# pairs, where the key is an int rank (nan largest; negated for a descending order). They run
# in Python, only on the rows whose result depends on the tie order.

def _median_to_first(v, result, a, b, c):
    ka, kb, kc = v[a][0], v[b][0], v[c][0]
    if ka < kb:
        m = b if kb < kc else (c if ka < kc else a)
    else:
        m = a if ka < kc else (c if kb < kc else b)
    v[result], v[m] = v[m], v[result]


def _partition_pivot(v, first, last):
    _median_to_first(v, first, first + 1, first + (last - first) // 2, last - 1)
    p = v[first][0]
    lo, hi = first + 1, last
    while True:
        while v[lo][0] < p:
            lo += 1
        hi -= 1
        while p < v[hi][0]:
            hi -= 1
        if not lo < hi:
            return lo
        v[lo], v[hi] = v[hi], v[lo]
        lo += 1


def _linear_insert(v, last):
    val = v[last]
    nxt = last - 1
    while val[0] < v[nxt][0]:
        v[last] = v[nxt]
        last = nxt
        nxt -= 1
    v[last] = val


def _insertion_sort(v, first, last):
    for i in range(first + 1, last):
        val = v[i]
        if val[0] < v[first][0]:
            v[first + 1:i + 1] = v[first:i]
            v[first] = val
        else:
            _linear_insert(v, i)


def _adjust_heap(v, first, hole, length, value):
    top = second = hole
    while second < (length - 1) // 2:
        second = 2 * (second + 1)
        if v[first + second][0] < v[first + second - 1][0]:
            second -= 1
        v[first + hole] = v[first + second]
        hole = second
    if length % 2 == 0 and second == (length - 2) // 2:
        second = 2 * (second + 1)
        v[first + hole] = v[first + second - 1]
        hole = second - 1
    parent = (hole - 1) // 2
    while hole > top and v[first + parent][0] < value[0]:
        v[first + hole] = v[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    v[first + hole] = value


def _heap_select(v, first, middle, last):
    length = middle - first
    if length >= 2:
        for parent in range((length - 2) // 2, -1, -1):
            _adjust_heap(v, first, parent, length, v[first + parent])
    for i in range(middle, last):
        if v[i][0] < v[first][0]:
            value = v[i]
            v[i] = v[first]
            _adjust_heap(v, first, 0, length, value)


def _sort_heap(v, first, last):
    while last - first > 1:
        last -= 1
        value = v[last]
        v[last] = v[first]
        _adjust_heap(v, first, 0, last - first, value)


def _std_sort(v, first, last):
    """libstdc++'s ``std::sort``: introsort, then insertion sort on runs of <= 16."""
    if last - first < 2:
        return
    depth = 2 * ((last - first).bit_length() - 1)
    stack = [(first, last, depth)]
    while stack:
        lo, hi, depth = stack.pop()
        while hi - lo > 16:
            if depth == 0:
                _heap_select(v, lo, hi, hi)
                _sort_heap(v, lo, hi)
                break
            depth -= 1
            cut = _partition_pivot(v, lo, hi)
            stack.append((cut, hi, depth))
            hi = cut
            # NOTE: libstdc++ recurses into the right part first; it touches disjoint ranges,
            # so the order does not change the result.
    if last - first > 16:
        _insertion_sort(v, first, first + 16)
        for i in range(first + 16, last):
            _linear_insert(v, i)
    else:
        _insertion_sort(v, first, last)


def _nth_element(v, nth):
    """libstdc++'s ``std::nth_element`` (introselect)."""
    first, last = 0, len(v)
    if nth == last:
        return
    depth = 2 * (last.bit_length() - 1)
    while last - first > 3:
        if depth == 0:
            _heap_select(v, first, nth + 1, last)
            v[first], v[nth] = v[nth], v[first]
            return
        depth -= 1
        cut = _partition_pivot(v, first, last)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(v, first, last)


def _quick_select(v, k):
    """torch's ``quick_select_template`` (kthvalue) with ``gt_or_nan`` on the keys."""
    lo, hi = 0, len(v) - 1
    while True:
        if hi <= lo:
            return
        if hi == lo + 1:
            if v[lo][0] > v[hi][0]:
                v[lo], v[hi] = v[hi], v[lo]
            return
        p = lo + (hi - lo) // 2
        v[p], v[lo + 1] = v[lo + 1], v[p]
        if v[lo + 1][0] > v[hi][0]:
            v[lo + 1], v[hi] = v[hi], v[lo + 1]
        if v[lo][0] > v[hi][0]:
            v[lo], v[hi] = v[hi], v[lo]
        if v[lo + 1][0] > v[lo][0]:
            v[lo + 1], v[lo] = v[lo], v[lo + 1]
        i, j = lo + 1, hi
        piv = v[lo][0]
        while True:
            i += 1
            while piv > v[i][0]:
                i += 1
            j -= 1
            while v[j][0] > piv:
                j -= 1
            if j < i:
                break
            v[i], v[j] = v[j], v[i]
        v[lo], v[j] = v[j], v[lo]
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1


def _keyed_rows(arr, axis, descending):
    """Rows along ``axis`` as int ranks (nan largest, all nans equal), negated if descending."""
    rows = np.moveaxis(arr, axis, -1).reshape(-1, arr.shape[axis])
    keys = np.empty(rows.shape, dtype=np.int64)
    for r, row in enumerate(rows):
        keys[r] = np.unique(row, return_inverse=True)[1].reshape(-1)
    return -keys if descending else keys


def _tied(sorted_keys):
    """Per row: whether two neighbours of the sorted keys are equal."""
    if sorted_keys.shape[-1] < 2:
        return np.zeros(sorted_keys.shape[:-1], dtype=bool)
    return np.any(sorted_keys[..., 1:] == sorted_keys[..., :-1], axis=-1)


def _torch_order(arr, axis, descending, select=None, k=None, sorted_=True):
    """The indices torch's CPU kernel leaves along ``axis``: ``select`` is None (sort), "topk"
    (the first ``k``) or "kth" (the ``k``-th smallest, 0-based, as a size-1 axis)."""
    idx = _argsort(arr, axis, descending)
    n = arr.shape[axis] if arr.ndim else 1
    if select == "topk":
        idx = np.take(idx, np.arange(k), axis=axis) if arr.ndim else idx
    elif select == "kth":
        idx = np.take(idx, [k], axis=axis) if arr.ndim else idx
    if arr.ndim == 0 or arr.size == 0 or n < 2 or (select is None and n <= 16):
        return idx
    keys = _keyed_rows(arr, axis, descending)
    skeys = np.sort(keys, axis=-1)
    if select is None:
        todo = _tied(skeys)
    elif select == "topk":
        partial = k * 64 <= n
        todo = _tied(skeys[:, :min(k + 1, n)]) if sorted_ or partial or k <= 1 else \
            np.ones(len(keys), dtype=bool)
        if k == 0:
            todo[:] = False
    else:
        todo = np.zeros(len(keys), dtype=bool)
        if k > 0:
            todo |= skeys[:, k] == skeys[:, k - 1]
        if k + 1 < n:
            todo |= skeys[:, k] == skeys[:, k + 1]
    if not todo.any():
        return idx
    moved = np.moveaxis(idx, axis, -1)
    out = moved.reshape(-1, moved.shape[-1]).copy()
    for r in np.flatnonzero(todo):
        v = list(zip(keys[r].tolist(), range(n)))
        if select is None:
            _std_sort(v, 0, n)
        elif select == "topk":
            if k * 64 <= n:
                _heap_select(v, 0, k, n)
                _sort_heap(v, 0, k)
            else:
                _nth_element(v, k - 1)
                if sorted_:
                    _std_sort(v, 0, k - 1)
            v = v[:k]
        else:
            _quick_select(v, k)
            v = v[k:k + 1]
        out[r] = [p[1] for p in v]
    return np.moveaxis(out.reshape(moved.shape), -1, axis)


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
    """Sorted values and their original indices along ``dim``.

    With ``stable=True`` equal values keep their order; otherwise they come out in the order
    torch's CPU sort leaves them (the same indices as torch).

    Example:
        >>> import ember
        >>> ember.sort(ember.tensor([3., 1., 2.])).indices
        tensor([1, 2, 0])
    """
    arr = input._array
    d = wrap_dim(dim, arr.ndim, "sort")
    idx = _argsort(arr, d, descending) if stable else _torch_order(arr, d, descending)
    return _sort_rt(_pick(_SortValues, input, d, idx), Tensor._wrap(idx.astype(np.int64)))


def argsort(input, dim=-1, descending=False, stable=False):
    """The indices that sort ``input`` along ``dim``."""
    d = wrap_dim(dim, input._array.ndim, "argsort")
    arr = input._array
    idx = _argsort(arr, d, descending) if stable else _torch_order(arr, d, descending)
    return Tensor._wrap(idx.astype(np.int64))


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
    if arr.dtype == np.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    idx = _torch_order(arr, d, largest, "topk", k, sorted)
    return _topk_rt(_pick(_TopkValues, input, d, idx), Tensor._wrap(idx.astype(np.int64)))


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """The ``k``-th smallest value along ``dim`` (1-based) and its index."""
    arr = input._array
    d = wrap_dim(dim, arr.ndim, "kthvalue")
    n = arr.shape[d] if arr.ndim else 1
    if k < 1 or k > n:
        raise IndexError("kthvalue(): selected number k out of range for dimension %d" % d)
    idx = _torch_order(arr, d, False, "kth", k - 1)
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
