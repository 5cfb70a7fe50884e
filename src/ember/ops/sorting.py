"""Sorting and searching: sort, argsort, topk, kthvalue, unique, searchsorted, bucketize.

Values are differentiable: the gradient goes back to the position each value came from.
"""
import numpy as np

from .. import dtypes as _dt
from .. import return_types as _rt
from ..autograd.function import Function
from ..autograd.grad_mode import state as _grad_state
from ..tensor import Tensor
from ._numpy_names import numpy_names
from ._util import get_array_module, not_implemented_for, wrap_dim, xp_of
from .shape import c_order, like, unsqueeze

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


def _along(arr, axis, start, stop):
    """``arr[..., start:stop, ...]`` with the slice on ``axis`` (a view)."""
    return arr[(slice(None),) * axis + (slice(start, stop),)]


def _sort_key(arr):
    """``arr``, bfloat16 as float32 (exact; ml_dtypes' sort does not put NaN last)."""
    return arr.astype(np.float32) if arr.dtype.kind == "V" else arr


def _ranks(rows):
    """Per row of the 2-D ``rows``: int64 ranks of its values (equal values share one; nan is
    the largest, all nans equal), the ranks in sorted order and the stable sorting order."""
    xp = get_array_module(rows)
    rows = _sort_key(rows)
    order = xp.argsort(rows, axis=-1, kind="stable")
    s = xp.take_along_axis(rows, order, axis=-1)
    new = s[:, 1:] != s[:, :-1]
    if s.dtype.kind in "fc":
        new &= ~(xp.isnan(s[:, 1:]) & xp.isnan(s[:, :-1]))
    dense = xp.concatenate((xp.zeros((s.shape[0], 1), dtype=np.int64),
                            xp.cumsum(new, axis=-1, dtype=np.int64)), axis=-1)
    ranks = xp.empty_like(dense)
    xp.put_along_axis(ranks, order, dense, axis=-1)
    return ranks, dense, order


def _keyed_rows(arr, axis, descending):
    """Rows along ``axis`` as int ranks (nan largest, all nans equal), negated if descending,
    and the same keys sorted (ascending) per row."""
    xp = get_array_module(arr)
    rows = xp.moveaxis(arr, axis, -1).reshape(-1, arr.shape[axis])
    keys, sorted_keys, _ = _ranks(rows)
    if descending:
        return -keys, -sorted_keys[:, ::-1]
    return keys, sorted_keys


def _tied(sorted_keys):
    """Per row: whether two neighbours of the sorted keys are equal."""
    xp = get_array_module(sorted_keys)
    if sorted_keys.shape[-1] < 2:
        return xp.zeros(sorted_keys.shape[:-1], dtype=bool)
    return xp.any(sorted_keys[..., 1:] == sorted_keys[..., :-1], axis=-1)


def _torch_order(arr, axis, descending, select=None, k=None, sorted_=True):
    """The indices torch's CPU kernel leaves along ``axis``: ``select`` is None (sort), "topk"
    (the first ``k``) or "kth" (the ``k``-th smallest, 0-based, as a size-1 axis)."""
    xp = get_array_module(arr)
    idx = _argsort(arr, axis, descending)
    n = arr.shape[axis] if arr.ndim else 1
    if select == "topk" and arr.ndim:
        idx = _along(idx, axis, 0, k).copy()
    elif select == "kth" and arr.ndim:
        idx = _along(idx, axis, k, k + 1).copy()
    if arr.ndim == 0 or arr.size == 0 or n < 2 or (select is None and n <= 16):
        return idx
    keys, skeys = _keyed_rows(arr, axis, descending)
    rows = keys.shape[0]
    if select is None:
        todo = _tied(skeys)
    elif select == "topk":
        partial = k * 64 <= n
        todo = _tied(skeys[:, :min(k + 1, n)]) if sorted_ or partial or k <= 1 else \
            xp.ones(rows, dtype=bool)
        if k == 0:
            todo[:] = False
    else:
        todo = xp.zeros(rows, dtype=bool)
        if k > 0:
            todo |= skeys[:, k] == skeys[:, k - 1]
        if k + 1 < n:
            todo |= skeys[:, k] == skeys[:, k + 1]
    if not todo.any():
        return idx
    moved = xp.moveaxis(idx, axis, -1)
    out = moved.reshape(-1, moved.shape[-1]).copy()
    # NOTE: the replay runs in Python on the tied rows only, their keys fetched as lists.
    for r in xp.flatnonzero(todo).tolist():
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
        out[r] = xp.asarray([p[1] for p in v], dtype=out.dtype)
    return xp.moveaxis(out.reshape(moved.shape), -1, axis)


def _argsort(arr, axis, descending):
    """Stable argsort along ``axis``; NaN sorts as the largest value, as in torch."""
    xp = get_array_module(arr)
    if arr.ndim == 0:
        return xp.zeros((), dtype=np.int64)
    arr = _sort_key(arr)
    if not descending:
        return xp.argsort(arr, axis=axis, kind="stable")
    rev = xp.flip(arr, axis)
    n = arr.shape[axis]
    return xp.flip(n - 1 - xp.argsort(rev, axis=axis, kind="stable"), axis)


class _ScatterDim(Function):
    """Zeros of ``shape`` with ``grad`` put at ``indices`` (an int64 Tensor) along ``dim``:
    the backward of picking values along a dim (sort, topk, max, median, ...)."""

    node_name = "ScatterBackward0"

    @staticmethod
    def forward(ctx, grad, indices, dim, shape):
        g = grad._array
        xp = get_array_module(g)
        out = xp.zeros(shape, dtype=g.dtype)
        if out.size:
            xp.put_along_axis(out, indices._array, g, axis=dim)
        ctx.dim = dim
        ctx.save_for_backward(indices)
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        indices, = ctx.saved_tensors
        return _GatherDim.apply(grad_output, indices, ctx.dim), None, None, None


class _GatherDim(Function):
    """The values of ``a`` at ``indices`` (an int64 Tensor) along ``dim``."""

    node_name = "GatherBackward0"

    @staticmethod
    def forward(ctx, a, indices, dim):
        arr = a._array
        ctx.dim = dim
        ctx.save_for_backward(indices)
        return Tensor._wrap(get_array_module(arr).take_along_axis(arr, indices._array, axis=dim))

    @staticmethod
    def backward(ctx, grad_output):
        indices, = ctx.saved_tensors
        shape = ctx._input_meta(0)[0]
        return _ScatterDim.apply(grad_output, indices, ctx.dim, shape), None, None


class _Select(Function):
    """Values picked from ``input`` at ``indices`` (an int64 Tensor in keepdim layout) along
    ``dim``: sort, topk and kthvalue, named apart by ``name`` (torch's node name)."""

    node_name = "SortBackward0"
    edge_args = (0,)        # (the indices are not an input of torch's node)

    @staticmethod
    def forward(ctx, a, dim, indices, keepdim, name):
        ctx.set_node_name(name)
        arr = a._array
        ctx.dim, ctx.keepdim = dim, keepdim
        ctx.save_for_backward(indices)
        if arr.ndim == 0:
            return Tensor._wrap(arr.copy())
        out = get_array_module(arr).take_along_axis(arr, indices._array, axis=dim)
        if not keepdim:
            out = out.squeeze(dim)
        return Tensor._wrap(like(out, indices._array) if keepdim else out)

    @staticmethod
    def backward(ctx, grad_output):
        indices, = ctx.saved_tensors
        shape = ctx._input_meta(0)[0]
        if not shape:
            return grad_output, None, None, None, None
        g = grad_output if ctx.keepdim else unsqueeze(grad_output, ctx.dim)
        return _ScatterDim.apply(g, indices, ctx.dim, shape), None, None, None, None


def _indices(idx):
    """The int64 indices Tensor of an index array."""
    return Tensor._wrap(idx.astype(np.int64, copy=False))


def _no_complex_sort(input, op):
    if input._array.dtype.kind == "c":
        raise RuntimeError(" %s does not support complex dtypes on CPU" % op)


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
    _no_complex_sort(input, "Sort")
    idx = _argsort(arr, d, descending) if stable else _torch_order(arr, d, descending)
    ind = _indices(like(idx, arr))
    return _sort_rt(_Select.apply(input, d, ind, True, "SortBackward0"), ind)


def argsort(input, dim=-1, descending=False, stable=False):
    """The indices that sort ``input`` along ``dim``."""
    d = wrap_dim(dim, input._array.ndim, "argsort")
    _no_complex_sort(input, "Sort")
    arr = input._array
    idx = _argsort(arr, d, descending) if stable else _torch_order(arr, d, descending)
    return _indices(like(idx, arr))


def msort(input, *, out=None):
    """``sort(input, dim=0).values``."""
    return sort(input, 0).values


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    """The ``k`` largest (or smallest) values along ``dim`` and their indices."""
    for name, flag in (("largest", largest), ("sorted", sorted)):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError("topk(): argument '%s' must be bool, not %s"
                            % (name, type(flag).__name__))
    arr = input._array
    d = wrap_dim(dim, arr.ndim, "topk")
    _no_complex_sort(input, "topk")
    n = arr.shape[d] if arr.ndim else 1
    if k < 0 or k > n:
        raise RuntimeError("selected index k out of range")
    if arr.dtype == np.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    ind = _indices(_torch_order(arr, d, largest, "topk", k, sorted))
    return _topk_rt(_Select.apply(input, d, ind, True, "TopkBackward0"), ind)


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """The ``k``-th smallest value along ``dim`` (1-based) and its index."""
    arr = input._array
    d = wrap_dim(dim, arr.ndim, "kthvalue")
    n = arr.shape[d] if arr.ndim else 1
    if n == 0:
        raise IndexError("kthvalue(): Expected reduction dim %d to have non-zero size." % d)
    if k < 1 or k > n:
        raise RuntimeError("kthvalue(): selected number k out of range for dimension %d" % d)
    if arr.ndim:
        not_implemented_for(arr, "kthvalue_cpu", "bc")      # (after the size checks, as torch)
    elif arr.dtype.kind == "c" and input._requires_grad and _grad_state.enabled:
        # (a 0-d tensor runs no kernel)
        raise RuntimeError("kthvalue does not support automatic differentiation for outputs "
                           "with complex dtype.")
    ind = _indices(_torch_order(arr, d, False, "kth", k - 1))
    values = _Select.apply(input, d, ind, keepdim, "KthvalueBackward0")
    if arr.ndim and not keepdim:
        ind = Tensor._wrap(ind._array.squeeze(d))
    return _kthvalue_rt(values, ind)


class _NoDerivative(Function):
    """The values of an op torch gives no derivative (its node raises in backward)."""

    @staticmethod
    def forward(ctx, name, aten, values, input):
        ctx.set_node_name(name)
        ctx.aten = aten
        return Tensor._wrap(values)

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError("the derivative for '%s' is not implemented." % ctx.aten)


def _values(values, input, name, aten):
    if input.requires_grad:
        return _NoDerivative.apply(name, aten, values, input)
    return Tensor._wrap(values)


def _unique_dim(arr, dim):
    """``dim`` wrapped, with torch's checks for unique over a dim (an empty tensor must have
    exactly one size-0 dim, and it must be ``dim``)."""
    if arr.ndim == 0:
        raise IndexError("Dimension specified as %d but tensor has no dimensions" % dim)
    d = wrap_dim(dim, arr.ndim, "unique")
    if arr.size == 0:
        if arr.shape.count(0) != 1:
            raise RuntimeError("Number of zero sized dimensions is more than one, so unique "
                               "cannot be applied ")
        if arr.shape[d] != 0:
            raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so "
                               "unique cannot be applied")
    return d


class _RowKey:
    """A slice compared as torch's unique_dim comparator: lexicographic ``<``, positions
    where neither ``<`` nor ``>`` holds (NaN) passed over."""

    __slots__ = ("row",)

    def __init__(self, row):
        self.row = row

    def __lt__(self, other):
        for x, y in zip(self.row, other.row):
            if x < y:
                return True
            if x > y:
                return False
        return False


def _unique_dim_nan(xp, arr, d):
    """unique over dim ``d`` of slices holding NaN, as torch's kernel: the slices' indices
    ordered by libstdc++'s ``std::sort`` under a lexicographic ``<`` that passes over NaN
    (no strict weak order, so the algorithm's steps decide), then runs of all-``==`` slices
    merged (a slice with NaN equals none)."""
    moved = xp.moveaxis(arr, d, 0)
    flat = moved.reshape(moved.shape[0], -1)
    rows = _sort_key(flat).astype(np.float64).tolist()     # host: a comparison sort

    v = [(_RowKey(r), i) for i, r in enumerate(rows)]
    _std_sort(v, 0, len(v))
    idx = [i for _, i in v]
    inv = [0] * len(rows)
    counts = [1]
    keep = [idx[0]]
    for i in idx[1:]:
        if not all(x == y for x, y in zip(rows[keep[-1]], rows[i])):
            keep.append(i)
            counts.append(0)
        counts[-1] += 1
        inv[i] = len(keep) - 1
    vals = xp.moveaxis(moved[xp.asarray(keep, dtype=np.int64)], 0, d)
    return (xp.ascontiguousarray(vals), xp.asarray(inv, dtype=np.int64),
            xp.asarray(counts, dtype=np.int64))


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values (sorted), optionally with inverse indices and counts."""
    arr = input._array
    not_implemented_for(arr, "unique", "c")
    xp = xp_of(input)
    if dim is None:
        # NOTE: as torch, each NaN is its own value (NumPy merges them by default)
        vals, inv, counts = xp.unique(_sort_key(arr).reshape(-1), return_inverse=True,
                                      return_counts=True, equal_nan=False)
        vals, inv = vals.astype(arr.dtype, copy=False), inv.reshape(arr.shape)
    else:
        d = _unique_dim(arr, dim)
        if arr.size == 0:
            vals, inv, counts = arr.copy(), xp.zeros(0, np.int64), xp.zeros(0, np.int64)
        elif arr.dtype.kind in "fV" and bool(xp.isnan(_sort_key(arr)).any()):
            vals, inv, counts = _unique_dim_nan(xp, arr, d)
        else:
            vals, inv, counts = xp.unique(_sort_key(arr), return_inverse=True,
                                          return_counts=True, axis=d)
            vals, inv = vals.astype(arr.dtype, copy=False), inv.reshape(-1)
    out = [_values(vals, input, *(("Unique2Backward0", "_unique2") if dim is None else
                                  ("UniqueDimBackward0", "unique_dim")))]
    if return_inverse:
        out.append(Tensor._wrap(inv.astype(np.int64)))
    if return_counts:
        out.append(Tensor._wrap(counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse runs of equal consecutive values (or slices along ``dim``)."""
    arr = input._array
    not_implemented_for(arr, "unique", "c")
    xp = xp_of(input)
    if dim is None:
        flat = arr.reshape(-1)
        change = xp.ones(flat.size, dtype=bool)
        change[1:] = flat[1:] != flat[:-1]
        vals = flat[change]
        inv_shape = arr.shape
    elif arr.size == 0:
        _unique_dim(arr, dim)
        vals, change, inv_shape = arr, xp.zeros(0, dtype=bool), (0,)
    else:
        d = _unique_dim(arr, dim)
        moved = xp.moveaxis(arr, d, 0)
        flat = moved.reshape(moved.shape[0], -1)
        change = xp.ones(flat.shape[0], dtype=bool)
        change[1:] = xp.any(flat[1:] != flat[:-1], axis=1)
        vals = xp.moveaxis(moved[change], 0, d)
        inv_shape = (arr.shape[d],)
    out = [_values(c_order(vals), input, "UniqueConsecutiveBackward0",
                   "unique_consecutive")]
    if return_inverse:
        out.append(Tensor._wrap((xp.cumsum(change) - 1).astype(np.int64).reshape(inv_shape)))
    if return_counts:
        bounds = xp.flatnonzero(xp.concatenate((change, xp.ones(1, dtype=bool))))
        out.append(Tensor._wrap(xp.diff(bounds).astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def _torch_search(seq, vals, right, xp):
    """torch's binary search, row by row: the first position whose boundary is ``>= v``
    (``> v`` when ``right``), stepping as its lower/upper bound does (so unsorted rows and nans
    give torch's answers). ``seq`` is (R, n) or (1, n); ``vals`` (R, m)."""
    n = seq.shape[-1]
    start = xp.zeros(vals.shape, dtype=np.int64)
    end = xp.full(vals.shape, n, dtype=np.int64)
    if n == 0 or vals.size == 0:
        return start
    seq = xp.broadcast_to(seq, (vals.shape[0], n))
    while True:
        active = start < end
        if not bool(active.any()):
            return start
        mid = start + ((end - start) >> 1)
        mid_val = xp.take_along_axis(seq, xp.minimum(mid, n - 1), axis=-1)
        with np.errstate(invalid="ignore"):
            up = ~(mid_val > vals) if right else ~(mid_val >= vals)
        start = xp.where(active & up, mid + 1, start)
        end = xp.where(active & ~up, mid, end)


def _common_kind(seq, vals, scalar):
    """The dtype kind torch searches in: that of boundaries and values promoted together."""
    kinds = seq.dtype.kind + (vals.dtype.kind if not scalar else
                              "c" if vals.dtype.kind == "c" else "")
    if "c" in kinds:
        return "c"
    return "b" if set(kinds) == {"b"} else "f"


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None, out=None):
    """Indices where ``input`` values would be inserted to keep ``sorted_sequence`` sorted
    (torch's binary search)."""
    seq = sorted_sequence._array
    xp = xp_of(sorted_sequence)
    scalar = not isinstance(input, Tensor)
    vals = xp.asarray(input) if scalar else input._array
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError("torch.searchsorted(): side can only be 'left' or 'right' but got "
                               "%s" % side)
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    if sorter is not None:
        _check_sorter(seq, sorter._array)
    if not (vals.ndim > 0 or (vals.size == 1 and seq.ndim == 1)):
        raise RuntimeError("torch.searchsorted(): input value can be a scalar only when "
                           "boundaries tensor dimension is 1, but we got boundaries tensor "
                           "dim(%d) and input value's dim(%d) numel(%d)"
                           % (seq.ndim, vals.ndim, vals.size))
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    if seq.ndim != 1 and (seq.ndim != vals.ndim or seq.shape[:-1] != vals.shape[:-1]):
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or "
                           "the first N-1 dimensions of boundaries tensor and input value "
                           "tensor must match, but we got boundaries tensor %s and input "
                           "value tensor %s" % (list(seq.shape), list(vals.shape)))
    out_dtype = np.int32 if out_int32 else np.int64
    if vals.size == 0:
        return Tensor._wrap(xp.zeros(vals.shape, dtype=out_dtype))
    kind = _common_kind(seq, vals, scalar)
    if kind in "bc":
        name = "Bool" if kind == "b" else _dt_name(seq, vals, scalar)
        raise NotImplementedError("\"searchsorted_out_cpu\" not implemented for '%s'" % name)
    if sorter is not None:
        seq = xp.take_along_axis(seq, sorter._array, axis=-1)
    n = seq.shape[-1]
    if n == 0 or seq.size == 0:
        return Tensor._wrap(xp.zeros(vals.shape, dtype=out_dtype))
    s2 = seq.reshape(-1, n) if seq.ndim > 1 else seq.reshape(1, n)
    v2 = vals.reshape(-1, vals.shape[-1]) if seq.ndim > 1 else vals.reshape(1, -1)
    res = _torch_search(s2, v2, right, xp).reshape(vals.shape)
    return Tensor._wrap(res.astype(out_dtype))


def _check_sorter(seq, srt):
    """torch's checks of searchsorted's ``sorter`` (shape, int64 dtype, range)."""
    if srt.shape != seq.shape:
        raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same size, "
                           "but got boundary tensor %sand got sorter tensor %s"
                           % (list(seq.shape), list(srt.shape)))
    if srt.dtype != np.int64:
        raise RuntimeError("torch.searchsorted(): sorter must be a tensor of long dtype but got "
                           "dtype %s" % _dt.scalar_type_name(srt.dtype))
    if srt.size and (int(srt.min()) < 0 or int(srt.max()) >= srt.shape[-1]):
        raise RuntimeError("torch.searchsorted(): sorter index out of range")


def _dt_name(seq, vals, scalar):
    """The name of the complex dtype boundaries and values promote to."""
    d = np.result_type(seq.dtype, vals.dtype)
    if scalar and seq.dtype.kind != "c":    # (a Python complex: the default complex dtype)
        d = np.complex128 if seq.dtype == np.float64 else np.complex64
    return _dt.scalar_type_name(np.dtype(d))


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """The bucket of each value: ``boundaries[i-1] < x <= boundaries[i]`` when ``right=False``."""
    if boundaries._array.ndim != 1:
        raise RuntimeError("boundaries tensor must be 1 dimension, but got dim(%d)"
                           % boundaries._array.ndim)
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


# NumPy keyword names (axis=, keepdims=), as torch accepts them.
numpy_names(globals(), __all__)
