"""Advanced-index primitives: ``a[index]`` and ``a[index] = v`` as Functions, shared by
indexing, scatter, shape and in-place ops (the lowest op module of the four)."""
from ..autograd.function import Function
from ..backend import backend_of, is_array
from ..tensor import Tensor
from ._util import cast, sum_to
from ..dtypes import scalar_type_name as dtype_name  # noqa: F401

__all__ = []

_ARRAY = object()    # stands for an index array in the index a node keeps (saved apart)


def save_index(ctx, index, *tensors):
    """Save ``tensors`` and the arrays of ``index`` for backward; keep the rest on ``ctx``."""
    arrays = [Tensor._wrap(i) for i in index if is_array(i)]
    ctx.index = tuple(_ARRAY if is_array(i) else i for i in index) if arrays else index
    ctx.save_for_backward(*tensors, *arrays)


def load_index(ctx, n=0):
    """``(index, tensors)``: the index saved by ``save_index`` and its first ``n`` tensors."""
    saved = ctx.saved_tensors
    arrays = iter(saved[n:])
    index = tuple(next(arrays)._array if i is _ARRAY else i for i in ctx.index)
    return index, saved[:n]


def check_index_broadcast(index, error):
    """Raise torch's IndexError when the index arrays of ``index`` do not broadcast together
    (``error`` is the array library's IndexError)."""
    if not str(error).startswith("shape mismatch"):
        return
    shapes = []
    for i in index if isinstance(index, tuple) else (index,):
        if is_array(i):     # (a mask stands for one index of its true count per dimension)
            shapes += [[int(i.sum())]] * i.ndim if i.dtype == bool else [list(i.shape)]
    raise IndexError("shape mismatch: indexing tensors could not be broadcast together with "
                     "shapes %s" % ", ".join(str(s) for s in shapes)) from None


def _iter_perm(shape, operands):
    """TensorIterator's dimension order (fastest first) for ``shape`` given the operands'
    strides, each a tuple over ``shape`` (torch's reorder_dimensions)."""
    n = len(shape)
    perm = list(range(n - 1, -1, -1))

    def should_swap(d0, d1):
        for strides in operands:
            s0, s1 = strides[d0], strides[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    for i in range(1, n):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            cmp = should_swap(perm[d0], perm[d1])
            if cmp > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif cmp < 0:
                break
    return perm


def _view_strides(shape, strides, new):
    """The strides torch's ``view``/``reshape`` gives ``new`` (a shape with size-1 dimensions
    added to ``shape``) for a tensor of ``shape`` and ``strides`` (c10's computeStride)."""
    out = [0] * len(new)
    view_d = len(new) - 1
    base = strides[-1]
    numel = view_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != numel * base):
            while view_d >= 0 and (view_numel < numel or new[view_d] == 1):
                out[view_d] = view_numel * base
                view_numel *= new[view_d]
                view_d -= 1
            if d > 0:
                base = strides[d - 1]
                numel = view_numel = 1
    return tuple(out)


def _elem_strides(arr):
    return tuple(s // arr.itemsize for s in arr.strides)


def _index_layout(out, arr, index):
    """``out`` (``arr[index]``) laid out in memory as torch's index kernel lays it out, so
    strides and contiguity match (NumPy puts the indexed dimensions first in memory);
    ``index`` holds index arrays, full slices and ``...``."""
    if out.ndim < 2 or out.size == 0:
        return out
    items = []      # per dimension of ``arr``: None, an index array, or a mask's ndim
    # (a C-contiguous input, C-contiguous integer indices on adjacent dims and no size-1
    # dims in the result: torch's result is C-contiguous)
    simple = arr.flags.c_contiguous and 1 not in out.shape
    for i in index:
        if type(i) is slice:
            if i != slice(None):
                return out
            items.append(None)
        elif i is Ellipsis:
            items += [None] * (arr.ndim + 1 - sum(
                j.ndim if is_array(j) and j.dtype == bool else 1 for j in index))
        elif not is_array(i):
            return out
        elif i.dtype == bool:   # (torch: the columns of ``nonzero``)
            items += [i.ndim] * i.ndim
            simple = False
        else:
            items.append(i)
            simple = simple and i.flags.c_contiguous
    items += [None] * (arr.ndim - len(items))
    dims = [d for d, i in enumerate(items) if i is not None]
    if not dims:
        return out
    adjacent = dims == list(range(dims[0], dims[-1] + 1))
    if simple and adjacent:
        return out if out.flags.c_contiguous else backend_of(out).xp.ascontiguousarray(out)
    items = [i if i is None else ((-1,), (i,)) if isinstance(i, int) else
             (i.shape, _elem_strides(i)) for i in items]
    strides = _elem_strides(arr)
    if not adjacent:    # (torch moves the indexed dims first)
        order = dims + [d for d in range(arr.ndim) if d not in dims]
        items = [items[d] for d in order]
        strides = tuple(strides[d] for d in order)
        dims = list(range(len(dims)))
    before, after = dims[0], len(items) - dims[-1] - 1
    nb = out.ndim - before - after
    bshape = out.shape[before:before + nb]
    ops = [strides[:before] + (0,) * nb + strides[len(strides) - after:]]
    for d in dims:
        # each index expanded to the result's index shape, then reshaped with size-1 dims
        # before and after (strides as torch's view gives them), then broadcast (stride 0)
        shape, st = items[d]
        st = (0,) * (nb - len(st)) + tuple(
            0 if n == 1 and b != 1 else v for n, v, b in zip(shape, st, bshape[nb - len(st):]))
        new = (1,) * before + bshape + (1,) * after
        view = _view_strides(bshape, st, new) if nb else (1,) * out.ndim
        ops.append(tuple(0 if n == 1 and m != 1 else v
                         for n, v, m in zip(new, view, out.shape)))
    perm = _iter_perm(out.shape, ops)
    target = [0] * out.ndim
    step = 1
    for d in perm:
        target[d] = step
        step *= out.shape[d]
    if _elem_strides(out) == tuple(target):
        return out
    return copy_in_order(out, perm[::-1])


def copy_in_order(arr, order):
    """A copy of ``arr`` whose dims lie in memory in ``order`` (slowest first)."""
    buf = backend_of(arr).xp.empty(tuple(arr.shape[d] for d in order), dtype=arr.dtype)
    buf[...] = arr.transpose(order)
    return buf.transpose([order.index(d) for d in range(arr.ndim)])


def dense_order(arr):
    """The order (slowest dim first) in which torch lays out a copy of ``arr`` that keeps its
    layout (``preserve_format``); None for C order."""
    if arr.flags.c_contiguous or arr.ndim < 2:
        return None
    order = _iter_perm(arr.shape, [_elem_strides(arr)])[::-1]
    return None if order == list(range(arr.ndim)) else order


def _shape_of(v):
    return tuple(getattr(v, "shape", ()))


class Index(Function):
    """``a[index]`` for an advanced index (a copy)."""

    node_name = "IndexBackward0"

    @staticmethod
    def forward(ctx, a, index):
        arr = a._array
        try:
            out = arr[index]
        except IndexError as e:
            check_index_broadcast(index, e)
            raise
        if type(out) is not type(arr):      # a NumPy scalar: a 0-d array of the device
            out = backend_of(arr).xp.asarray(out)
        elif isinstance(index, tuple):
            out = _index_layout(out, arr, index)
        save_index(ctx, index)
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        index, _ = load_index(ctx)
        shape, dtype = ctx._input_meta(0)
        base = Tensor._wrap(backend_of(grad_output._array).xp.zeros(shape, dtype=dtype))
        return IndexPut.apply(base, index, grad_output, True), None


class IndexPut(Function):
    """``out = base.clone(); out[index] = values`` (or ``+=`` with ``accumulate``)."""

    node_name = "IndexPutBackward0"
    edge_args = (0, 2)     # (torch gives the index/mask/condition no edge)

    @staticmethod
    def forward(ctx, base, index, values, accumulate):
        out = base._array.copy()
        v = values._array if isinstance(values, Tensor) else values
        if is_array(v) and v.dtype != out.dtype:
            v = cast(v, out.dtype)
        try:
            if accumulate:
                backend_of(out).scatter_add(out, index, v)
            else:
                out[index] = v
        except IndexError as e:
            check_index_broadcast(index, e)
            raise
        except ValueError:
            raise RuntimeError("shape mismatch: value tensor of shape %s cannot be broadcast to "
                               "indexing result of shape %s"
                               % (list(_shape_of(v)), list(out[index].shape))) from None
        ctx.accumulate = accumulate
        save_index(ctx, index)
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        index, _ = load_index(ctx)
        need = ctx.needs_input_grad
        gb = gv = None
        if need[0]:
            gb = grad_output if ctx.accumulate else \
                IndexPut.apply(grad_output, index, 0.0, False)
        if need[2]:
            gv = sum_to(Index.apply(grad_output, index), ctx._input_meta(2)[0])
        return gb, None, gv, None
