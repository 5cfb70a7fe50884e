"""Advanced-index primitives: ``a[index]`` and ``a[index] = v`` as Functions, shared by
indexing, scatter, shape and in-place ops (the lowest op module of the four)."""
from ..autograd.function import Function
from ..backend import backend_of, is_array
from ..tensor import Tensor
from ._util import sum_to
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
            v = v.astype(out.dtype)
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
