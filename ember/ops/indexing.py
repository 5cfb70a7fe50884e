"""Indexing: ``t[...]`` (basic, advanced, boolean masks) and ``t[...] = v``, with gradients."""
import numpy as np

from ..autograd.function import Function
from ..autograd.grad_mode import state as _state
from ..tensor import Tensor
from ._inplace import inplace, write

__all__ = ["nonzero", "index_put", "index_put_"]


def _convert(index, shape):
    """Turn a user index into a NumPy index; checks dtypes and bounds with torch's wording."""
    if not isinstance(index, tuple):
        index = (index,)
    out = []
    advanced = False
    for item in index:
        if isinstance(item, Tensor):
            arr = item._array
            if arr.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors (got %s)" % item.dtype)
            if arr.dtype == np.uint8:
                arr = arr.astype(bool)
            out.append(arr)
            advanced = True
        elif isinstance(item, (list, np.ndarray)):
            arr = np.asarray(item)
            if arr.dtype.kind == "f" or arr.dtype == object:
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors")
            out.append(arr)
            advanced = True
        elif isinstance(item, (bool, np.bool_)):
            out.append(np.asarray(item))
            advanced = True
        elif item is None or item is Ellipsis or isinstance(item, (int, np.integer, slice)):
            out.append(item)
        elif hasattr(item, "__index__"):
            out.append(item.__index__())
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or "
                             "byte Variables are valid indices (got %s)" % type(item).__name__)
    _check_bounds(out, shape)
    return tuple(out), advanced


def _check_bounds(index, shape):
    n_ell = sum(1 for i in index if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 if not isinstance(i, np.ndarray) or i.dtype != bool else max(i.ndim, 1)
                   for i in index if i is not None and i is not Ellipsis)
    if consumed > len(shape):
        raise IndexError("too many indices for tensor of dimension %d" % len(shape))
    dim = 0
    for item in index:
        if item is Ellipsis:
            dim += len(shape) - consumed
            continue
        if item is None:
            continue
        if isinstance(item, (int, np.integer)) and not isinstance(item, bool):
            size = shape[dim]
            if item >= size or item < -size:
                raise IndexError("index %d is out of bounds for dimension %d with size %d"
                                 % (item, dim, size))
            dim += 1
        elif isinstance(item, np.ndarray) and item.dtype == bool:
            if item.ndim == 0:
                continue
            for k in range(item.ndim):
                if dim + k >= len(shape) or item.shape[k] != shape[dim + k]:
                    raise IndexError("The shape of the mask %s at index %d does not match the "
                                     "shape of the indexed tensor %s at index %d"
                                     % (list(item.shape), k, list(shape), dim + k))
            dim += item.ndim
        elif isinstance(item, np.ndarray):
            size = shape[dim]
            if item.size and (item.max() >= size or item.min() < -size):
                bad = item.max() if item.max() >= size else item.min()
                raise IndexError("index %d is out of bounds for dimension %d with size %d"
                                 % (bad, dim, size))
            dim += 1
        else:
            dim += 1


class Index(Function):
    node_name = "IndexBackward0"

    @staticmethod
    def forward(ctx, a, index):
        ctx.index = index
        return Tensor._wrap(np.asarray(a._array[index]))

    @staticmethod
    def backward(ctx, grad_output):
        from .creation import zeros
        shape, dtype = ctx._input_meta(0)
        base = Tensor._wrap(np.zeros(shape, dtype=dtype))
        return IndexPut.apply(base, ctx.index, grad_output, True), None


class Slice(Function):
    """Basic indexing (ints, slices, None, ...): a view of the input."""

    node_name = "SliceBackward0"

    @staticmethod
    def forward(ctx, a, index):
        from .shape import _view_of
        ctx.index = index
        return _view_of(a, a._array[index])

    @staticmethod
    def backward(ctx, grad_output):
        shape, dtype = ctx._input_meta(0)
        base = Tensor._wrap(np.zeros(shape, dtype=dtype))
        return IndexPut.apply(base, ctx.index, grad_output, False), None


class IndexPut(Function):
    """``out = base.clone(); out[index] = values`` (or ``+=`` with ``accumulate``)."""

    node_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, base, index, values, accumulate):
        out = base._array.copy()
        v = values._array if isinstance(values, Tensor) else values
        if isinstance(v, np.ndarray) and v.dtype != out.dtype:
            v = v.astype(out.dtype)
        try:
            if accumulate:
                np.add.at(out, index, v)
            else:
                out[index] = v
        except ValueError as e:
            raise RuntimeError("shape mismatch: value tensor of shape %s cannot be broadcast to "
                               "indexing result of shape %s (%s)"
                               % (list(np.shape(v)), list(out[index].shape), e)) from None
        ctx.index, ctx.accumulate = index, accumulate
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        from ._util import sum_to
        need = ctx.needs_input_grad
        gb = gv = None
        if need[0]:
            gb = grad_output if ctx.accumulate else \
                IndexPut.apply(grad_output, ctx.index, 0.0, False)
        if need[2]:
            gv = sum_to(Index.apply(grad_output, ctx.index), ctx._input_meta(2)[0])
        return gb, None, gv, None


def _getitem(t, index):
    idx, advanced = _convert(index, t._array.shape)
    if advanced:
        return Index.apply(t, idx)
    return Slice.apply(t, idx)


def _setitem(t, index, value):
    idx, _ = _convert(index, t._array.shape)
    if isinstance(value, Tensor) and not (_state.enabled and (value._requires_grad or
                                                              t._requires_grad)):
        value = value._array
    if isinstance(value, (list, tuple)):
        value = np.asarray(value)
    if not isinstance(value, Tensor):
        arr = t._array
        if not arr.flags.writeable:
            raise RuntimeError("unsupported operation: more than one element of the written-to "
                               "tensor refers to a single memory location. Please clone() the "
                               "tensor before performing the operation.")
        if _state.enabled and t._requires_grad:
            inplace(t, _index_put_fn, idx, value)
            return
        v = value
        if isinstance(v, np.ndarray) and v.dtype.kind == "f" and arr.dtype.kind in "iub":
            v = v.astype(arr.dtype)
        try:
            arr[idx] = v
        except ValueError as e:
            raise RuntimeError("shape mismatch: value tensor of shape %s cannot be broadcast to "
                               "indexing result of shape %s"
                               % (list(np.shape(v)), list(arr[idx].shape))) from e
        t._version_ref[0] += 1
        return
    inplace(t, _index_put_fn, idx, value)


def _index_put_fn(old, idx, value):
    return IndexPut.apply(old, idx, value, False)


_index_put_fn.__name__ = "index_put"


def index_put(input, indices, values, accumulate=False):
    """``input`` with ``input[indices] = values`` (``+=`` when ``accumulate``), out of place."""
    idx, _ = _convert(tuple(indices), input._array.shape)
    return IndexPut.apply(input, idx, values, accumulate)


def index_put_(input, indices, values, accumulate=False):
    """In-place ``index_put``."""
    idx, _ = _convert(tuple(indices), input._array.shape)
    return inplace(input, lambda old: IndexPut.apply(old, idx, values, accumulate))


def nonzero(input, *, as_tuple=False):
    """Indices of the non-zero elements: an (n, ndim) int64 tensor, or a tuple of 1-D ones."""
    nz = np.nonzero(input._array)
    if as_tuple:
        if input._array.ndim == 0:
            return (Tensor._wrap(np.zeros(int(bool(input._array)), dtype=np.int64)),)
        return tuple(Tensor._wrap(i.astype(np.int64)) for i in nz)
    return Tensor._wrap(np.stack(nz, axis=1).astype(np.int64) if nz else
                        np.zeros((int(bool(input._array)), 0), dtype=np.int64))


def _take_flat(t, idx):
    """``t.reshape(-1)[idx]`` (differentiable)."""
    from .shape import reshape
    return Index.apply(reshape(t, (-1,)), (idx,))


def _zero_flat(t, idx):
    """``t`` with the flat positions ``idx`` set to zero (differentiable)."""
    from .shape import reshape
    flat = IndexPut.apply(reshape(t, (-1,)), (idx,), 0.0, False)
    return reshape(flat, t._array.shape)


write = write
