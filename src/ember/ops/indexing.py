"""Indexing: ``t[...]`` reads (basic indexes as views, advanced and boolean-mask indexes as
copies) and ``t[...] = v`` writes, with gradients; index_put and nonzero. The index-based ops
(gather, scatter, index_*, masked_*, take, put) are in ``scatter``."""
import warnings

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..autograd.grad_mode import state as _state
from ..backend import backend_of, is_array
from ..tensor import Tensor
from ._index import Index, IndexPut, check_index_broadcast, dtype_name as _tname
from ._inplace import _expanded_alias, inplace, overwrite
from ._util import SCALAR_TYPES as _SCALARS, cast, checked_scalar, writable, xp_of
from .shape import _view_of, expand, reshape
__all__ = ["nonzero", "argwhere", "index_put", "index_put_"]


_INDEX_DTYPES = frozenset(map(np.dtype, (np.int64, np.int32, np.uint8, np.bool_)))


def _convert(index, data, zero_dim_as_int=False, fill=None):
    """Turn a user index into an index of the array ``data`` (index arrays on its device);
    checks dtypes and bounds with torch's wording.

    With ``zero_dim_as_int`` a 0-d integer tensor is an int (a select, as in ``t[i]``). ``fill``
    is the value of a put that does not accumulate: with one uint8 mask and one element torch
    takes masked_fill_'s path, which rejects the mask."""
    if isinstance(index, list) and len(index) < 32 and any(
            isinstance(i, (Tensor, list, tuple, range, slice)) or i is None or i is Ellipsis or
            is_array(i) for i in index):
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated and "
                      "will be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In "
                      "pytorch 2.9 this will be interpreted as tensor index, x[torch.tensor(seq)], "
                      "which will result either in an error or a different result", UserWarning,
                      stacklevel=4)
        index = tuple(index)     # (torch's, and NumPy's old, reading of such a list)
    if not isinstance(index, tuple):
        if data.ndim == 0 and isinstance(index, (int, np.integer, slice)) and index is not True \
                and index is not False:
            raise IndexError("slice() cannot be applied to a 0-dim tensor." if isinstance(
                index, slice) else "invalid index of a 0-dim tensor. Use `tensor.item()` in "
                "Python or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        index = (index,)
    out = []
    advanced = byte = 0     # (index tensors; uint8 masks: torch warns for each, every call)
    for item in index:
        if isinstance(item, Tensor):
            arr = item._array
            if zero_dim_as_int and arr.ndim == 0 and arr.dtype.kind in "iu" and \
                    arr.dtype != np.uint8:
                out.append(int(arr))
                continue
            if arr.dtype not in _INDEX_DTYPES:
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors")
            if arr.dtype == np.uint8:
                arr = arr.astype(bool)
                byte += arr.ndim > 0 or not zero_dim_as_int
            if type(arr) is not type(data):     # (indices may live on the host, as in torch)
                arr = backend_of(data).asarray(arr)
            out.append(arr)
            advanced += 1
        elif isinstance(item, (list, tuple, range)) or is_array(item):
            arr = backend_of(data).asarray(item)
            if arr.dtype.kind in "fV":  # (torch reads it as a long tensor: floats truncated)
                arr = arr.astype(np.int64)
            if arr.dtype.kind in "fV" or arr.dtype == object:
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors")
            out.append(arr)
            advanced += 1
        elif isinstance(item, (bool, np.bool_)):
            out.append(backend_of(data).xp.asarray(item))
            advanced += 1
        elif isinstance(item, slice):
            if item.step is not None and item.step <= 0:
                if item.step == 0:
                    raise ValueError("slice step cannot be zero")
                raise ValueError("step must be greater than zero")
            out.append(item)
        elif item is None or item is Ellipsis or isinstance(item, (int, np.integer)):
            out.append(item)
        elif hasattr(item, "__index__"):
            out.append(item.__index__())
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or "
                             "byte Variables are valid indices (got %s)" % type(item).__name__)
    _check_bounds(out, data.shape)
    if byte == advanced == 1 and fill is not None and \
            (fill._array.size if isinstance(fill, Tensor) else 1) == 1:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           "unsigned char")
    for _ in range(byte):
        warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                      "torch.bool instead.", UserWarning, stacklevel=4)
    return tuple(out), advanced > 0


def _check_bounds(index, shape):
    n_ell = sum(1 for i in index if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 if not is_array(i) or i.dtype != bool else i.ndim
                   for i in index if i is not None and i is not Ellipsis)
    if consumed > len(shape):
        raise IndexError("too many indices for tensor of dimension %d" % len(shape))
    dim = advanced = 0
    tensors = []        # (index array, its place among the advanced indices, dim size)
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
        elif is_array(item) and item.dtype == bool:
            if item.ndim == 0:
                continue
            for k in range(item.ndim):
                if dim + k >= len(shape) or item.shape[k] != shape[dim + k]:
                    raise IndexError("The shape of the mask %s at index %d does not match the "
                                     "shape of the indexed tensor %s at index %d"
                                     % (list(item.shape), k, list(shape), dim + k))
            dim += item.ndim
        elif is_array(item):
            tensors.append((item, advanced, shape[dim]))
            dim += 1
        else:
            dim += 1
        if is_array(item):
            advanced += max(item.ndim, 1) if item.dtype == bool else 1
    if any(((a >= n) | (a < -n)).any() for a, _, n in tensors):
        _raise_first_bad(tensors)


def _raise_first_bad(tensors):
    """torch's error for the first out-of-range tensor index in its kernel's order: elementwise
    over the broadcast indices, each element's indices in turn; the dimension is the index's
    place among the advanced indices (torch moves those dims to the front)."""
    xp = backend_of(tensors[0][0]).xp
    try:
        shape = np.broadcast_shapes(*(a.shape for a, _, _ in tensors))
    except ValueError:
        return      # (torch's broadcast error comes first: raised by the caller)
    arrs = [xp.broadcast_to(a, shape).reshape(-1) for a, _, _ in tensors]
    flags = xp.stack([(a >= n) | (a < -n) for a, (_, _, n) in zip(arrs, tensors)], axis=-1)
    elem, j = divmod(int(xp.argmax(flags.reshape(-1))), len(tensors))
    raise IndexError("index %d is out of bounds for dimension %d with size %d"
                     % (int(arrs[j][elem]), tensors[j][1], tensors[j][2]))


class Slice(Function):
    """Basic indexing (ints, slices, None, ...): a view of the input.

    ``name`` is torch's node name when it is not SliceBackward0 (that of the index's last
    non-trivial step: SelectBackward0, UnsqueezeBackward0 or AliasBackward0)."""

    node_name = "SliceBackward0"

    @staticmethod
    def forward(ctx, a, index, name=None):
        if name is not None:
            ctx.set_node_name(name)
        ctx.index = index
        for item in index:
            if item is Ellipsis:
                break
        else:
            index = index + (Ellipsis,)     # (all ints: a 0-d view, not a scalar)
        return _view_of(a, a._array[index], Slice, ctx.index, name)

    @staticmethod
    def backward(ctx, grad_output):
        shape, dtype = ctx._input_meta(0)
        base = Tensor._wrap(xp_of(grad_output).zeros(shape, dtype=dtype))
        return IndexPut.apply(base, ctx.index, grad_output, False), None, None


def _view_name(idx):
    """torch's node name for a basic index: that of its last non-trivial step (None for
    SliceBackward0)."""
    for item in reversed(idx):
        if item is None:
            return "UnsqueezeBackward0"
        if isinstance(item, slice):
            if item.start is None and item.stop is None and item.step in (None, 1):
                continue
            return None
        if item is not Ellipsis:
            return "SelectBackward0"
    return "AliasBackward0"


def _trivial(item, size):
    """Whether torch's slicing skips ``item``: a slice ``0:n:1`` with ``n >= size``."""
    return (isinstance(item, slice) and item.start in (None, 0) and item.step in (None, 1) and
            (item.stop is None or item.stop >= size))


def _basic_view(t, idx):
    """``t[idx]`` for a basic index, one view per non-trivial item as torch applies them (a
    SliceBackward0, SelectBackward0 or UnsqueezeBackward0 node each); one AliasBackward0 view
    when every item is trivial."""
    shape = t._array.shape
    n_ell = len(shape) - sum(1 for i in idx if i is not None and i is not Ellipsis)
    steps = []
    dim = 0         # the item's dimension in the result so far
    src = 0         # its dimension in ``t``
    for item in idx:
        if item is Ellipsis:
            dim += n_ell
            src += n_ell
        elif item is None:
            steps.append(((slice(None),) * dim + (None, Ellipsis), "UnsqueezeBackward0"))
            dim += 1
        elif isinstance(item, slice):
            if not _trivial(item, shape[src]):
                steps.append(((slice(None),) * dim + (item, Ellipsis), None))
            dim += 1
            src += 1
        else:
            steps.append(((slice(None),) * dim + (item, Ellipsis), "SelectBackward0"))
            src += 1
    if not steps:
        return Slice.apply(t, idx, "AliasBackward0")
    for step, name in steps:
        t = Slice.apply(t, step, name)
    return t


def _split(idx, shape):
    """Split an index as torch applies it: the basic part (ints, slices, None, ...) first as a
    view, then the advanced part on that view. The basic part is None when it is the identity
    (only full slices and ``...``), which torch skips."""
    basic, rest = [], []
    identity = True
    dim = 0
    n_ell = len(shape) - sum(1 if not is_array(i) or i.dtype != bool else i.ndim
                             for i in idx if i is not None and i is not Ellipsis)
    for item in idx:
        if is_array(item):
            k = item.ndim if item.dtype == bool else 1
            basic.extend([slice(None)] * k)
            rest.append(item)
            dim += k
        elif item is Ellipsis:
            basic.append(item)
            rest.append(item)
            dim += n_ell
        elif isinstance(item, slice):
            basic.append(item)
            rest.append(slice(None))
            # NOTE: torch skips a slice 0:n:1 with n >= the size (not -size:), as here.
            if item.start not in (None, 0) or item.step not in (None, 1) or (
                    item.stop is not None and item.stop < shape[dim]):
                identity = False
            dim += 1
        else:
            basic.append(item)
            identity = False
            if item is None:
                rest.append(slice(None))
            else:
                dim += 1
    return (None if identity else tuple(basic)), tuple(rest)


def _getitem(t, index):
    idx, advanced = _convert(index, t._array, True)
    if advanced:
        basic, rest = _split(idx, t._array.shape)
        if basic is None:
            return Index.apply(t, idx)
        # NOTE: torch selects with the ints first (so ``x[0, :, [0, 1]]`` is 3x2 for 2x3x4
        # ``x``, where NumPy gives 2x3), then indexes the view.
        return Index.apply(_basic_view(t, basic), rest)
    # NOTE: torch names ``t[:]`` SliceBackward0 but ``t[(slice(None),)]`` AliasBackward0.
    if isinstance(index, slice):
        return Slice.apply(t, idx, None)
    return _basic_view(t, idx)


def _copy_to(dst, value):
    """``dst.copy_(value)`` as torch's setitem writes a value: a 0-d value fills, others lose
    leading 1s and expand to ``dst``'s shape."""
    if not isinstance(value, Tensor):
        value = Tensor._wrap(backend_of(dst._array).asarray(value, dtype=dst._array.dtype))
    shape, dst_shape = value._array.shape, dst._array.shape
    if shape == dst_shape:
        return overwrite(dst, value, "copy_")
    if not shape:
        return overwrite(dst, value, "fill_")
    lead = 0
    while lead < len(shape) and shape[lead] == 1:
        lead += 1
    if lead:
        value = reshape(value, shape[lead:])
    return overwrite(dst, expand(value, dst_shape), "copy_")


def _check_put_dtype(t, value):
    if isinstance(value, Tensor) and value._array.dtype != t._array.dtype:
        raise RuntimeError("Index put requires the source and destination dtypes match, got %s "
                           "for the destination and %s for the source."
                           % (_tname(t._array.dtype), _tname(value._array.dtype)))


def _setitem(t, index, value):
    if not isinstance(value, (Tensor, int, float, complex, np.integer)):
        tp = type(value)    # (named as CPython's tp_name: qualified for a C type)
        raise TypeError("can't assign a %s to a %s" % (
            tp.__name__ if tp.__module__ == "builtins" or tp.__flags__ & 512
            else tp.__module__ + "." + tp.__name__, t.type()))
    if isinstance(value, _SCALARS):
        value = checked_scalar(value, _dt._BY_NP[t._array.dtype], reduced=False)
    idx, advanced = _convert(index, t._array, True, value)
    basic, rest = _split(idx, t._array.shape)
    if advanced and not (isinstance(index, Tensor) and index._array.dtype == np.bool_ and
                         isinstance(value, Tensor) and value._array.ndim == 0):
        _check_put_dtype(t, value)      # NOTE: torch masked_fills a 0-d value for a mask
    if _state.enabled and (t._requires_grad or (isinstance(value, Tensor) and
                                                value._requires_grad)):
        if isinstance(value, (list, tuple)) or is_array(value):
            value = backend_of(t._array).asarray(value)
        if advanced and not isinstance(value, Tensor):      # (torch wraps it: an edge of None)
            value = Tensor._wrap(backend_of(t._array).asarray(value, t._array.dtype))
        # NOTE: as torch: the basic part is a view written in place (CopySlices on ``t``); an
        # advanced index on ``t`` itself is an index_put_ (IndexPutBackward0).
        target = t if basic is None else Slice.apply(t, basic, _view_name(basic))
        if advanced:
            inplace(target, _index_put_fn, idx if basic is None else rest, value)
        else:
            _copy_to(target, value)
        return
    if advanced and basic is not None:
        t = Slice.apply(t, basic, _view_name(basic))
        idx = rest
    arr = t._array
    v = value._array if isinstance(value, Tensor) else value
    if isinstance(v, (list, tuple)) or (is_array(v) and type(v) is not type(arr)):
        v = backend_of(arr).asarray(v)
    if not advanced and writable(arr) is None:
        view = arr[idx if Ellipsis in idx else idx + (Ellipsis,)]
        if writable(view) is not None:      # (torch: the view written to has no overlap)
            arr, idx = view, Ellipsis
    if writable(arr) is None:
        arr = _expanded_alias(arr) if advanced else None
        if arr is None:
            raise RuntimeError("unsupported operation: more than one element of the written-to "
                               "tensor refers to a single memory location. Please clone() the "
                               "tensor before performing the operation.")
        fill = isinstance(index, Tensor) and index._array.dtype == np.bool_ and \
            getattr(v, "ndim", 0) == 0
        warnings.warn("Use of %s on expanded tensors is deprecated. Please clone() the tensor "
                      "before performing this operation. This also applies to advanced "
                      "indexing e.g. tensor[%s] = %s"
                      % (("masked_fill_", "mask", "scalar") if fill else
                         ("index_put_", "indices", "tensor")), UserWarning, stacklevel=3)
    if is_array(v) and v.dtype.kind in "fV" and arr.dtype.kind in "iub":
        v = cast(v, arr.dtype)
    try:
        arr[idx] = v
    except IndexError as e:
        check_index_broadcast(idx, e)
        raise
    except ValueError as e:
        if not advanced:    # (torch copies into the view: expand's message)
            expand(Tensor._wrap(backend_of(arr).asarray(v)), arr[idx].shape)
        raise RuntimeError("shape mismatch: value tensor of shape %s cannot be broadcast to "
                           "indexing result of shape %s"
                           % (list(getattr(v, "shape", ())), list(arr[idx].shape))) from e
    t._version_ref[0] += 1


def _index_put_fn(old, idx, value, accumulate=False):
    return IndexPut.apply(old, idx, value, accumulate)


_index_put_fn.__name__ = "index_put"


def index_put(input, indices, values, accumulate=False):
    """``input`` with ``input[indices] = values`` (``+=`` when ``accumulate``), out of place."""
    idx, _ = _convert(tuple(indices), input._array, fill=None if accumulate else values)
    _check_put_dtype(input, values)
    return IndexPut.apply(input, idx, values, accumulate)


def index_put_(input, indices, values, accumulate=False):
    """In-place ``index_put``."""
    idx, _ = _convert(tuple(indices), input._array, fill=None if accumulate else values)
    _check_put_dtype(input, values)
    return inplace(input, _index_put_fn, idx, values, accumulate)


def nonzero(input, *, out=None, as_tuple=False):
    """Indices of the non-zero elements: an (n, ndim) int64 tensor, or a tuple of 1-D ones."""
    arr = input._array
    xp = xp_of(input)
    if arr.ndim == 0:
        n = int(bool(arr))
        return ((Tensor._wrap(xp.zeros(n, dtype=np.int64)),) if as_tuple else
                Tensor._wrap(xp.zeros((n, 0), dtype=np.int64)))
    nz = xp.nonzero(arr)
    if as_tuple:
        return tuple(Tensor._wrap(i.astype(np.int64)) for i in nz)
    return Tensor._wrap(xp.stack(nz, axis=1).astype(np.int64))


def argwhere(input):
    """``nonzero(input)``: an (n, ndim) tensor of the indices of non-zero elements."""
    return nonzero(input)


