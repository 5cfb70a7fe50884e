"""Indexing: ``t[...]`` (basic, advanced, boolean masks), ``t[...] = v``, gather/scatter,
index_* and masked_* ops, with gradients."""
import warnings

import numpy as np

from ..autograd.function import Function
from ..autograd.grad_mode import state as _state
from ..tensor import Tensor
from ._inplace import inplace, write

__all__ = ["nonzero", "argwhere", "index_put", "index_put_", "gather", "scatter", "scatter_",
           "scatter_add", "scatter_add_", "scatter_reduce", "scatter_reduce_", "index_select",
           "index_add", "index_add_", "index_copy", "index_copy_", "index_fill", "index_fill_",
           "masked_fill", "masked_fill_", "masked_scatter", "masked_scatter_", "masked_select",
           "take", "take_along_dim", "put", "put_", "index_reduce",
           "index_reduce_"]


def _convert(index, shape, zero_dim_as_int=False):
    """Turn a user index into a NumPy index; checks dtypes and bounds with torch's wording.

    With ``zero_dim_as_int`` a 0-d integer tensor is an int (a select, as in ``t[i]``)."""
    if not isinstance(index, tuple):
        index = (index,)
    out = []
    advanced = False
    for item in index:
        if isinstance(item, Tensor):
            arr = item._array
            if zero_dim_as_int and arr.ndim == 0 and arr.dtype.kind in "iu" and \
                    arr.dtype != np.uint8:
                out.append(int(arr))
                continue
            if arr.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors (got %s)" % item.dtype)
            if arr.dtype == np.uint8:
                arr = arr.astype(bool)
            out.append(arr)
            advanced = True
        elif isinstance(item, (list, np.ndarray)):
            arr = np.asarray(item)
            if arr.size == 0 and arr.dtype.kind == "f":
                arr = arr.astype(np.int64)
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
    consumed = sum(1 if not isinstance(i, np.ndarray) or i.dtype != bool else i.ndim
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
        arr = a._array[index]
        if not isinstance(arr, np.ndarray):     # all ints: a 0-d view, not a NumPy scalar
            arr = a._array[index + (Ellipsis,)]
        return _view_of(a, arr)

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


class _SelectView(Slice):
    node_name = "SelectBackward0"


class _UnsqueezeView(Slice):
    node_name = "UnsqueezeBackward0"


class _AliasView(Slice):
    node_name = "AliasBackward0"


def _view_kind(idx):
    """The Function whose name torch gives a basic index: that of its last non-trivial step."""
    for item in reversed(idx):
        if item is None:
            return _UnsqueezeView
        if isinstance(item, slice):
            if item.start is None and item.stop is None and item.step in (None, 1):
                continue
            return Slice
        if item is not Ellipsis:
            return _SelectView
    return _AliasView


def _split(idx, shape):
    """Split an index as torch applies it: the basic part (ints, slices, None, ...) first as a
    view, then the advanced part on that view. The basic part is None when it is the identity
    (only full slices and ``...``), which torch skips."""
    basic, rest = [], []
    identity = True
    dim = 0
    n_ell = len(shape) - sum(1 if not isinstance(i, np.ndarray) or i.dtype != bool else i.ndim
                             for i in idx if i is not None and i is not Ellipsis)
    for item in idx:
        if isinstance(item, np.ndarray):
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
    idx, advanced = _convert(index, t._array.shape, True)
    if advanced:
        basic, rest = _split(idx, t._array.shape)
        if basic is None:
            return Index.apply(t, idx)
        # NOTE: torch selects with the ints first (so ``x[0, :, [0, 1]]`` is 3x2 for 2x3x4
        # ``x``, where NumPy gives 2x3), then indexes the view.
        return Index.apply(_view_kind(basic).apply(t, basic), rest)
    # NOTE: torch names ``t[:]`` SliceBackward0 but ``t[(slice(None),)]`` AliasBackward0.
    return (Slice if isinstance(index, slice) else _view_kind(idx)).apply(t, idx)


def _copy_to(dst, value):
    """``dst.copy_(value)`` as torch's setitem writes a value: a 0-d value fills, others lose
    leading 1s and expand to ``dst``'s shape."""
    from ._inplace import overwrite
    from .shape import expand, reshape
    if not isinstance(value, Tensor):
        value = Tensor._wrap(np.asarray(value, dtype=dst._array.dtype))
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
    idx, advanced = _convert(index, t._array.shape, True)
    basic, rest = _split(idx, t._array.shape)
    if advanced and not (isinstance(index, Tensor) and index._array.dtype == np.bool_ and
                         isinstance(value, Tensor) and value._array.ndim == 0):
        _check_put_dtype(t, value)      # NOTE: torch masked_fills a 0-d value for a mask
    if _state.enabled and (t._requires_grad or (isinstance(value, Tensor) and
                                                value._requires_grad)):
        if isinstance(value, (list, tuple)):
            value = np.asarray(value)
        # NOTE: as torch: the basic part is a view written in place (CopySlices on ``t``); an
        # advanced index on ``t`` itself is an index_put_ (IndexPutBackward0).
        target = t if basic is None else _view_kind(basic).apply(t, basic)
        if advanced:
            inplace(target, _index_put_fn, idx if basic is None else rest, value)
        else:
            _copy_to(target, value)
        return
    if advanced and basic is not None:
        t = _view_kind(basic).apply(t, basic)
        idx = rest
    v = value._array if isinstance(value, Tensor) else value
    if isinstance(v, (list, tuple)):
        v = np.asarray(v)
    arr = t._array
    if not arr.flags.writeable:
        from ..autograd.anomaly_mode import raise_if_saved
        raise_if_saved(arr, "setitem")
        arr = _expanded_alias(arr) if advanced else None
        if arr is None:
            raise RuntimeError("unsupported operation: more than one element of the written-to "
                               "tensor refers to a single memory location. Please clone() the "
                               "tensor before performing the operation.")
        fill = isinstance(index, Tensor) and index._array.dtype == np.bool_ and np.ndim(v) == 0
        warnings.warn("Use of %s on expanded tensors is deprecated. Please clone() the tensor "
                      "before performing this operation. This also applies to advanced "
                      "indexing e.g. tensor[%s] = %s"
                      % (("masked_fill_", "mask", "scalar") if fill else
                         ("index_put_", "indices", "tensor")), UserWarning, stacklevel=3)
    if isinstance(v, np.ndarray) and v.dtype.kind == "f" and arr.dtype.kind in "iub":
        v = v.astype(arr.dtype)
    try:
        arr[idx] = v
    except ValueError as e:
        raise RuntimeError("shape mismatch: value tensor of shape %s cannot be broadcast to "
                           "indexing result of shape %s"
                           % (list(np.shape(v)), list(arr[idx].shape))) from e
    t._version_ref[0] += 1


def _expanded_alias(arr):
    """A writable array on the memory of the expanded (read-only, 0-stride) ``arr``, or None.

    NOTE: torch still writes ``t[indices] = v`` into an expanded tensor (deprecated, with a
    warning); each written element lands in the memory its aliases share."""
    if 0 not in arr.strides:
        return None
    owner = arr
    while getattr(owner, "base", None) is not None:
        owner = owner.base
    if not isinstance(owner, np.ndarray) or not owner.flags.writeable:
        return None
    offset = arr.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
    try:
        return np.ndarray(arr.shape, arr.dtype, buffer=owner, offset=offset,
                          strides=arr.strides)
    except (TypeError, ValueError):
        return None


def _index_put_fn(old, idx, value):
    return IndexPut.apply(old, idx, value, False)


_index_put_fn.__name__ = "index_put"


def index_put(input, indices, values, accumulate=False):
    """``input`` with ``input[indices] = values`` (``+=`` when ``accumulate``), out of place."""
    idx, _ = _convert(tuple(indices), input._array.shape)
    _check_put_dtype(input, values)
    return IndexPut.apply(input, idx, values, accumulate)


def index_put_(input, indices, values, accumulate=False):
    """In-place ``index_put``."""
    idx, _ = _convert(tuple(indices), input._array.shape)
    _check_put_dtype(input, values)
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


def argwhere(input):
    """``nonzero(input)``: an (n, ndim) tensor of the indices of non-zero elements."""
    return nonzero(input)


def _tname(np_dtype):
    from ..dtypes import from_numpy_dtype
    return from_numpy_dtype(np_dtype)._legacy.replace("Tensor", "")


def _dim(op, dim, ndim):
    from ._util import wrap_dim
    return wrap_dim(dim, ndim, op)


def _check_index_tensor(op, index):
    if not isinstance(index, Tensor):
        raise TypeError("%s(): argument 'index' must be Tensor, not %s"
                        % (op, type(index).__name__))
    if index._array.dtype != np.int64:
        raise RuntimeError("%s(): Expected dtype int64 for index" % op)


def _scatter_index(op, arr_shape, dim, index, src_shape=None):
    """The NumPy index tuple that puts ``index`` (along ``dim``) into an array of ``arr_shape``."""
    idx = index._array
    if idx.ndim != len(arr_shape) and not (idx.ndim <= 1 and len(arr_shape) <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as %s tensor"
                           % ("input" if op == "gather" else "self"))
    idx = idx.reshape(idx.shape if len(arr_shape) else (idx.size,))
    full = arr_shape if len(arr_shape) else (1,)
    for d in range(idx.ndim):
        if d != dim and idx.shape[d] > full[d]:
            raise RuntimeError("Size does not match at dimension %d expected index %s to be no "
                               "larger than %s apart from dimension %d"
                               % (d, list(idx.shape), list(arr_shape), dim))
        if src_shape is not None and idx.shape[d] > (src_shape or (1,))[d]:
            raise RuntimeError("Size does not match at dimension %d expected index %s to be no "
                               "larger than src %s" % (d, list(idx.shape), list(src_shape)))
    n = full[dim]
    if idx.size and (idx.max() >= n or idx.min() < -n):
        bad = int(idx.max() if idx.max() >= n else idx.min())
        raise RuntimeError("index %d is out of bounds for dimension %d with size %d"
                           % (bad, dim, n))
    grids = np.indices(idx.shape, sparse=True)
    out = tuple(idx if d == dim else grids[d] for d in range(idx.ndim))
    return out, idx.shape


def _src_part(arr, shape):
    return arr[tuple(slice(0, s) for s in shape)] if arr.shape != shape else arr


def _pad_to(g, shape):
    """``g`` written into the leading corner of zeros of ``shape`` (differentiable)."""
    if g._array.shape == tuple(shape):
        return g
    base = Tensor._wrap(np.zeros(shape, g._array.dtype))
    return IndexPut.apply(base, tuple(slice(0, s) for s in g._array.shape), g, False)


class Gather(Function):
    node_name = "GatherBackward0"

    @staticmethod
    def forward(ctx, a, dim, index):
        arr = a._array
        nd_idx, _ = _scatter_index("gather", arr.shape, dim, index)
        ctx.dim = dim
        ctx.save_for_backward(index)
        src = arr if arr.ndim else arr.reshape(1)
        out = src[nd_idx]
        return Tensor._wrap(out.reshape(index._array.shape))

    @staticmethod
    def backward(ctx, grad_output):
        index, = ctx.saved_tensors
        shape, dtype = ctx._input_meta(0)
        zeros = Tensor._wrap(np.zeros(shape, dtype))
        return scatter_add(zeros, ctx.dim, index, grad_output), None, None


def gather(input, dim, index, *, sparse_grad=False, out=None):
    """``out[i][j] = input[index[i][j]][j]`` for ``dim=0`` (and likewise for other dims)."""
    _check_index_tensor("gather", index)
    return Gather.apply(input, _dim("gather", dim, input._array.ndim), index)


class ScatterAdd(Function):
    node_name = "ScatterAddBackward0"

    @staticmethod
    def forward(ctx, a, dim, index, src):
        arr = a._array
        nd_idx, ishape = _scatter_index("scatter_add", arr.shape, dim, index, src._array.shape)
        out = arr.copy() if arr.ndim else arr.reshape(1).copy()
        s = src._array if src._array.ndim else src._array.reshape(1)
        np.add.at(out, nd_idx, _src_part(s, ishape).astype(out.dtype, copy=False))
        ctx.dim = dim
        ctx.save_for_backward(index)
        return Tensor._wrap(out.reshape(arr.shape))

    @staticmethod
    def backward(ctx, grad_output):
        index, = ctx.saved_tensors
        gs = None
        if ctx.needs_input_grad[3]:
            gs = _pad_to(gather(grad_output, ctx.dim, index), ctx._input_meta(3)[0])
        return grad_output, None, None, gs


class Scatter(Function):
    node_name = "ScatterBackward0"

    @staticmethod
    def forward(ctx, a, dim, index, src, value):
        arr = a._array
        src_shape = src._array.shape if src is not None else None
        nd_idx, ishape = _scatter_index("scatter", arr.shape, dim, index, src_shape)
        out = arr.copy() if arr.ndim else arr.reshape(1).copy()
        if src is not None:
            s = src._array if src._array.ndim else src._array.reshape(1)
            out[nd_idx] = _src_part(s, ishape)
        else:
            out[nd_idx] = value
        ctx.dim = dim
        ctx.save_for_backward(index)
        return Tensor._wrap(out.reshape(arr.shape))

    @staticmethod
    def backward(ctx, grad_output):
        index, = ctx.saved_tensors
        ga = gs = None
        if ctx.needs_input_grad[0]:
            ga = Scatter.apply(grad_output, ctx.dim, index, None, 0)
        if ctx.needs_input_grad[3]:
            gs = _pad_to(gather(grad_output, ctx.dim, index), ctx._input_meta(3)[0])
        return ga, None, None, gs, None


class ScatterValue(Scatter):
    node_name = "ScatterBackward1"

    @staticmethod
    def forward(ctx, a, dim, index, src, value):
        return Scatter.forward(ctx, a, dim, index, src, value)

    @staticmethod
    def backward(ctx, grad_output):
        return Scatter.backward(ctx, grad_output)


def _check_scatter_dtypes(op, input, src):
    if isinstance(src, Tensor) and src._array.dtype != input._array.dtype:
        raise RuntimeError("%s(): Expected self.dtype to be equal to src.dtype" % op)


def scatter(input, dim, index, src=None, *, value=None, reduce=None, out=None):
    """``input`` with ``out[index[i][j]][j] = src[i][j]`` (dim 0), ``src`` a tensor or a number."""
    _check_index_tensor("scatter", index)
    if src is None:
        src = value
    d = _dim("scatter", dim, input._array.ndim)
    if reduce is not None:
        red = {"add": "sum", "multiply": "prod"}[reduce]
        if not isinstance(src, Tensor):
            src = full_like_index(index, src, input._array.dtype)
        return scatter_reduce(input, dim, index, src, red)
    if isinstance(src, Tensor):
        _check_scatter_dtypes("scatter", input, src)
        return Scatter.apply(input, d, index, src, None)
    return ScatterValue.apply(input, d, index, None, src)


def full_like_index(index, value, np_dtype):
    return Tensor._wrap(np.full(index._array.shape, value, dtype=np_dtype))


def scatter_add(input, dim, index, src):
    """``input`` with ``out[index[i][j]][j] += src[i][j]`` (dim 0); repeated indices add up."""
    _check_index_tensor("scatter_add", index)
    _check_scatter_dtypes("scatter_add", input, src)
    return ScatterAdd.apply(input, _dim("scatter_add", dim, input._array.ndim), index, src)


_REDUCE_INIT = {"sum": 0.0, "prod": 1.0, "amax": -np.inf, "amin": np.inf, "mean": 0.0}


class ScatterReduce(Function):
    node_name = "ScatterReduceBackward0"

    @staticmethod
    def forward(ctx, a, dim, index, src, reduce, include_self):
        arr = a._array
        nd_idx, ishape = _scatter_index("scatter_reduce", arr.shape, dim, index,
                                        src._array.shape)
        shape = arr.shape if arr.ndim else (1,)
        out = arr.reshape(shape).copy()
        s = _src_part(src._array.reshape(src._array.shape or (1,)), ishape)
        if not include_self:
            init = _REDUCE_INIT[reduce]
            if out.dtype.kind != "f" and np.isinf(init):
                info = np.iinfo(out.dtype) if out.dtype.kind in "iu" else None
                init = (info.min if init < 0 else info.max) if info else init
            out[nd_idx] = init
        ufunc = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
                 "amin": np.minimum}[reduce]
        ufunc.at(out, nd_idx, s)
        counts = None
        if reduce == "mean":
            counts = np.full(shape, 1 if include_self else 0, dtype=np.int64)
            np.add.at(counts, nd_idx, 1)
            denom = np.maximum(counts, 1)
            out = out / denom if out.dtype.kind == "f" else out // denom
            out = out.astype(arr.dtype, copy=False)
        ctx.dim, ctx.reduce, ctx.include_self = dim, reduce, include_self
        ctx.counts = counts
        result = Tensor._wrap(out.reshape(arr.shape))
        ctx.save_for_backward(a, index, src, result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        from .comparison import where
        a, index, src, result = ctx.saved_tensors
        dim, reduce = ctx.dim, ctx.reduce
        g = grad_output
        if reduce == "sum":
            ga, gs = g, gather(g, dim, index)
        elif reduce == "mean":
            n = Tensor._wrap(np.maximum(ctx.counts, 1).astype(g._array.dtype).reshape(
                g._array.shape))
            ga = g / n
            gs = gather(ga, dim, index)
        elif reduce == "prod":
            ga, gs = _scatter_prod_grads(g, a, dim, index, _src_part_t(src, index), result,
                                         ctx.include_self)
        else:
            value = gather(result, dim, index)
            self_is = (a == result).to(g.dtype)
            src_is = (_src_part_t(src, index) == value).to(g.dtype)
            # NOTE: torch counts ties with self even when include_self=False.
            count = scatter_add(self_is, dim, index, src_is)
            dist = g / count
            ga = self_is * dist
            gs = src_is * gather(dist, dim, index)
        if not ctx.include_self:
            ga = Scatter.apply(ga, dim, index, None, 0)
        gs = _pad_to(gs, ctx._input_meta(3)[0]) if ctx.needs_input_grad[3] else None
        return (ga if ctx.needs_input_grad[0] else None), None, None, gs, None, None


def _scatter_prod_grads(g, a, dim, index, src, result, include_self):
    """Scatter-prod gradients, torch's formula: a zero gets the product of the others in its
    group (the exclusive product), so one zero in a group still passes a gradient."""
    from .comparison import where
    # NOTE: self's zeros are masked to 1, so its gradient is the product of everything else.
    masked_self = where(a == 0, 1.0, a)
    ga = g * ScatterReduce.apply(masked_self, dim, index, src, "prod", include_self) \
        / masked_self
    src_zero = src == 0
    zeros = Tensor._wrap(np.zeros(a._array.shape, g._array.dtype))
    n_zeros = gather(scatter_add(zeros, dim, index, src_zero.to(g.dtype)), dim, index)
    single = src_zero & (n_zeros == 1)
    masked_src_result = ScatterReduce.apply(a, dim, index, where(single, 1.0, src), "prod",
                                            include_self)
    gs = where(single, gather(g * masked_src_result, dim, index),
               gather(g * result, dim, index) / where(src_zero, 1.0, src))
    return ga, gs


def _src_part_t(src, index):
    shape = index._array.shape
    if src._array.shape == shape:
        return src
    return src[tuple(slice(0, s) for s in shape)]


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):
    """Reduce ``src`` into ``input`` at ``index`` with ``reduce`` in sum, prod, mean, amax, amin."""
    _check_index_tensor("scatter_reduce", index)
    if reduce not in _REDUCE_INIT:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got %s"
                           % reduce)
    _check_scatter_dtypes("scatter_reduce", input, src)
    d = _dim("scatter_reduce", dim, input._array.ndim)
    return ScatterReduce.apply(input, d, index, src, reduce, include_self)


def _index_1d(op, index, size):
    if not isinstance(index, Tensor):
        index = Tensor._wrap(np.asarray(index, dtype=np.int64))
    idx = index._array
    if idx.ndim > 1:
        raise IndexError("%s(): Index is supposed to be a vector" % op)
    if idx.dtype.kind not in "iu":
        raise IndexError("%s(): Expected dtype int32/int64 for index but got: %s"
                         % (op, _tname(idx.dtype)))
    idx = idx.reshape(-1)
    if idx.size and (idx.max() >= size or idx.min() < -size):
        bad = int(idx.max() if idx.max() >= size else idx.min())
        raise IndexError("index out of range in self (%s: index %d is out of bounds for "
                         "dimension with size %d)" % (op, bad, size))
    return Tensor._wrap(idx.astype(np.int64, copy=False))


class IndexSelect(Function):
    node_name = "IndexSelectBackward0"

    @staticmethod
    def forward(ctx, a, dim, index):
        arr = a._array
        ctx.dim = dim
        ctx.save_for_backward(index)
        if arr.ndim == 0:
            return Tensor._wrap(arr.reshape(1)[index._array])
        return Tensor._wrap(np.take(arr, index._array, axis=dim))

    @staticmethod
    def backward(ctx, grad_output):
        index, = ctx.saved_tensors
        shape, dtype = ctx._input_meta(0)
        zeros = Tensor._wrap(np.zeros(shape, dtype))
        return IndexAdd.apply(zeros, ctx.dim, index, grad_output, 1), None, None


def index_select(input, dim, index, *, out=None):
    """The entries at ``index`` (1-D int tensor) along ``dim``."""
    n = input._array.ndim
    d = _dim("index_select", dim, n)
    idx = _index_1d("index_select", index, input._array.shape[d] if n else 1)
    return IndexSelect.apply(input, d, idx)


def _dim_index(dim, index):
    return (slice(None),) * dim + (index._array,)


def _source_check(op, input, dim, index, source):
    exp = list(input._array.shape)
    if exp:
        exp[dim] = index._array.size
    if list(source._array.shape) != exp and not (source._array.ndim == 0 and
                                                  index._array.size == 1):
        raise RuntimeError("%s(): Source/destination tensor must have same slice shapes. "
                           "Destination slice shape: %s at dimension %d and source slice shape: "
                           "%s at dimension 0." % (op, list(input._array.shape), dim,
                                                   list(source._array.shape)))


class IndexAdd(Function):
    node_name = "IndexAddBackward0"

    @staticmethod
    def forward(ctx, a, dim, index, source, alpha):
        out = a._array.copy()
        src = source._array
        if alpha != 1:
            src = src * alpha
        view = out if out.ndim else out.reshape(1)
        np.add.at(view, _dim_index(dim, index),
                  src.reshape(np.take(view, index._array, axis=dim).shape).astype(
                      out.dtype, copy=False))
        ctx.dim, ctx.alpha = dim, alpha
        ctx.save_for_backward(index)
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        from .shape import reshape
        index, = ctx.saved_tensors
        gs = None
        if ctx.needs_input_grad[3]:
            gs = reshape(index_select(grad_output, ctx.dim, index), ctx._input_meta(3)[0])
            if ctx.alpha != 1:
                gs = gs * ctx.alpha
        return grad_output, None, None, gs, None


def index_add(input, dim, index, source, *, alpha=1, out=None):
    """``input`` with ``source`` slices added at ``index`` along ``dim`` (repeats accumulate)."""
    d = _dim("index_add", dim, input._array.ndim)
    idx = _index_1d("index_add", index, input._array.shape[d] if input._array.ndim else 1)
    _source_check("index_add", input, d, idx, source)
    if source._array.dtype != input._array.dtype:
        raise RuntimeError("index_add_(): self (%s) and source (%s) must have the same scalar "
                           "type" % (_tname(input._array.dtype), _tname(source._array.dtype)))
    return IndexAdd.apply(input, d, idx, source, alpha)


class IndexCopy(Function):
    node_name = "IndexCopyBackward0"

    @staticmethod
    def forward(ctx, a, dim, index, source):
        out = a._array.copy()
        view = out if out.ndim else out.reshape(1)
        view[_dim_index(dim, index)] = source._array.reshape(
            np.take(view, index._array, axis=dim).shape)
        ctx.dim = dim
        ctx.save_for_backward(index)
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        from .shape import reshape
        index, = ctx.saved_tensors
        ga = gs = None
        if ctx.needs_input_grad[0]:
            ga = IndexFill.apply(grad_output, ctx.dim, index, 0.0)
        if ctx.needs_input_grad[3]:
            gs = reshape(index_select(grad_output, ctx.dim, index), ctx._input_meta(3)[0])
        return ga, None, None, gs


def index_copy(input, dim, index, source):
    """``input`` with the slices at ``index`` along ``dim`` replaced by ``source``."""
    d = _dim("index_copy", dim, input._array.ndim)
    idx = _index_1d("index_copy", index, input._array.shape[d] if input._array.ndim else 1)
    _source_check("index_copy", input, d, idx, source)
    return IndexCopy.apply(input, d, idx, source)


class IndexFill(Function):
    node_name = "IndexFillBackward0"

    @staticmethod
    def forward(ctx, a, dim, index, value):
        out = a._array.copy()
        view = out if out.ndim else out.reshape(1)
        view[_dim_index(dim, index)] = value._array if isinstance(value, Tensor) else value
        ctx.dim = dim
        ctx.save_for_backward(index)
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        from .reduction import sum as _sum
        index, = ctx.saved_tensors
        ga = gv = None
        if ctx.needs_input_grad[0]:
            ga = IndexFill.apply(grad_output, ctx.dim, index, 0.0)
        if ctx.needs_input_grad[3]:
            gv = _sum(index_select(grad_output, ctx.dim, index))
        return ga, None, None, gv


def index_fill(input, dim, index, value):
    """``input`` with the slices at ``index`` along ``dim`` set to ``value``."""
    d = _dim("index_fill", dim, input._array.ndim)
    idx = _index_1d("index_fill", index, input._array.shape[d] if input._array.ndim else 1)
    if isinstance(value, Tensor) and value._array.ndim:
        raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got "
                           "tensor with %d dimension(s)." % value._array.ndim)
    return IndexFill.apply(input, d, idx, value)


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """Reduce ``source`` slices into ``input`` at ``index`` (prod, mean, amax, amin)."""
    from .shape import expand
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError("index_reduce(): Expected reduce to be one of prod, mean, amax or amin "
                           "but got %s." % reduce)
    d = _dim("index_reduce", dim, input._array.ndim)
    idx = _index_1d("index_reduce", index, input._array.shape[d])
    shape = [1] * source._array.ndim
    shape[d] = -1
    full = expand(idx.reshape(shape), source._array.shape)
    _check_scatter_dtypes("index_reduce", input, source)
    return _IndexReduce.apply(input, d, Tensor._wrap(np.ascontiguousarray(full._array)), source,
                              reduce, include_self)


class _IndexReduce(ScatterReduce):
    node_name = "IndexReduceBackward0"


def _mask(op, mask):
    if not isinstance(mask, Tensor):
        raise TypeError("%s(): argument 'mask' must be Tensor, not %s"
                        % (op, type(mask).__name__))
    if mask._array.dtype != np.bool_:
        raise RuntimeError("%s only supports boolean masks, but got mask with dtype %s"
                           % (op, _tname(mask._array.dtype).lower().replace("byte", "unsigned "
                                                                            "char")))
    return mask._array


class MaskedFill(Function):
    node_name = "MaskedFillBackward0"

    @staticmethod
    def forward(ctx, a, mask, value):
        from ._util import check_shapes_broadcast
        arr = a._array
        check_shapes_broadcast("masked_fill", arr.shape, mask.shape)
        v = value._array if isinstance(value, Tensor) else value
        out = np.where(mask, np.asarray(v).astype(arr.dtype), arr)
        ctx.mask = mask
        return Tensor._wrap(np.array(out, copy=True))

    @staticmethod
    def backward(ctx, grad_output):
        from ._util import sum_to
        from .reduction import sum as _sum
        m = Tensor._wrap(ctx.mask)
        ga = gv = None
        if ctx.needs_input_grad[0]:
            ga = sum_to(MaskedFill.apply(grad_output, ctx.mask, 0.0), ctx._input_meta(0)[0])
        if ctx.needs_input_grad[2]:
            gv = _sum(grad_output * m.to(grad_output.dtype))
        return ga, None, gv


def masked_fill(input, mask, value):
    """``input`` with ``value`` where ``mask`` (bool, broadcastable) is True."""
    m = _mask("masked_fill_", mask)
    if isinstance(value, Tensor) and value._array.ndim:
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                           "tensor with %d dimension(s)." % value._array.ndim)
    return MaskedFill.apply(input, m, value)


class MaskedScatter(Function):
    node_name = "MaskedScatterBackward0"

    @staticmethod
    def forward(ctx, a, mask, source):
        shape = np.broadcast_shapes(a._array.shape, mask.shape)
        out = np.broadcast_to(a._array, shape).copy()
        m = np.broadcast_to(mask, shape)
        n = int(m.sum())
        src = source._array.reshape(-1)
        if src.size < n:
            raise RuntimeError("masked_scatter: expected source to have at least %d elements, "
                               "but got %d" % (n, src.size))
        out[m] = src[:n]
        ctx.mask = m
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        from ._util import sum_to
        from .shape import reshape
        ga = gs = None
        if ctx.needs_input_grad[0]:
            ga = sum_to(MaskedFill.apply(grad_output, ctx.mask, 0.0), ctx._input_meta(0)[0])
        if ctx.needs_input_grad[2]:
            shape = ctx._input_meta(2)[0]
            sel = masked_select(grad_output, Tensor._wrap(ctx.mask))
            gs = reshape(_pad_to(sel, (int(np.prod(shape)),)), shape)
        return ga, None, gs


def masked_scatter(input, mask, source):
    """``input`` with the True positions of ``mask`` filled from ``source`` in row-major order."""
    m = _mask("masked_scatter_", mask)
    return MaskedScatter.apply(input, m, source)


class MaskedSelect(Function):
    node_name = "MaskedSelectBackward0"

    @staticmethod
    def forward(ctx, a, mask):
        from ._util import check_shapes_broadcast
        shape = check_shapes_broadcast("masked_select", a._array.shape, mask.shape)
        m = np.broadcast_to(mask, shape)
        ctx.mask = m
        return Tensor._wrap(np.broadcast_to(a._array, shape)[m])

    @staticmethod
    def backward(ctx, grad_output):
        from ._util import sum_to
        shape, dtype = ctx._input_meta(0)
        zeros = Tensor._wrap(np.zeros(ctx.mask.shape, dtype))
        return sum_to(MaskedScatter.apply(zeros, ctx.mask, grad_output), shape), None


def masked_select(input, mask, *, out=None):
    """The elements of ``input`` where ``mask`` is True, as a 1-D tensor (both broadcast)."""
    return MaskedSelect.apply(input, _mask("masked_select", mask))


class Take(Function):
    node_name = "TakeBackward0"

    @staticmethod
    def forward(ctx, a, index):
        ctx.save_for_backward(index)
        return Tensor._wrap(a._array.reshape(-1)[index._array])

    @staticmethod
    def backward(ctx, grad_output):
        from .shape import reshape
        index, = ctx.saved_tensors
        shape, dtype = ctx._input_meta(0)
        flat = Tensor._wrap(np.zeros(int(np.prod(shape)), dtype))
        return reshape(IndexPut.apply(flat, (index._array,), grad_output, True), shape), None


def _flat_index(op, input, index):
    if not isinstance(index, Tensor) or index._array.dtype != np.int64:
        raise RuntimeError("%s(): Expected a long tensor for index, but got %s"
                           % (op, getattr(index, "dtype", type(index).__name__)))
    n = input._array.size
    idx = index._array
    if idx.size and (idx.max() >= n or idx.min() < -n):
        bad = int(idx.max() if idx.max() >= n else idx.min())
        raise IndexError("out of range: tried to access index %d on a tensor of %d elements."
                         % (bad, n))


def take(input, index):
    """``input.flatten()[index]``, shaped like ``index``."""
    _flat_index("take", input, index)
    return Take.apply(input, index)


def take_along_dim(input, indices, dim=None, *, out=None):
    """``gather`` with ``input`` and ``indices`` broadcast against each other except at ``dim``."""
    from .shape import reshape, expand
    if dim is None:
        return take(reshape(input, (-1,)), reshape(indices, (-1,)))
    n = input._array.ndim
    d = _dim("take_along_dim", dim, n)
    if indices._array.ndim != n:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same "
                           "number of dimensions, but got %d dimensions for input, and %d "
                           "dimensions for indices" % (n, indices._array.ndim))
    ishape, xshape = list(indices._array.shape), list(input._array.shape)
    bshape = list(np.broadcast_shapes(tuple(ishape[:d] + [1] + ishape[d + 1:]),
                                      tuple(xshape[:d] + [1] + xshape[d + 1:])))
    xs = bshape.copy()
    xs[d] = xshape[d]
    ins = bshape.copy()
    ins[d] = ishape[d]
    idx = Tensor._wrap(np.ascontiguousarray(np.broadcast_to(indices._array, tuple(ins))))
    return gather(expand(input, tuple(xs)), d, idx)


def put(input, index, source, accumulate=False):
    """``input`` with ``input.flatten()[index] = source`` (``+=`` when ``accumulate``)."""
    from .shape import reshape
    _flat_index("put", input, index)
    flat = IndexPut.apply(reshape(input, (-1,)), (index._array.reshape(-1),),
                          reshape(source, (-1,)), accumulate)
    return reshape(flat, input._array.shape)


def _inplace_of(fn, name):
    def op_(input, *args, **kwargs):
        return inplace(input, fn, *args, **kwargs)
    op_.__name__ = name + "_"
    op_.__doc__ = "In-place ``%s``." % name
    return op_


scatter_ = _inplace_of(scatter, "scatter")
scatter_add_ = _inplace_of(scatter_add, "scatter_add")
scatter_reduce_ = _inplace_of(scatter_reduce, "scatter_reduce")
index_add_ = _inplace_of(index_add, "index_add")
index_copy_ = _inplace_of(index_copy, "index_copy")
index_fill_ = _inplace_of(index_fill, "index_fill")
masked_fill_ = _inplace_of(masked_fill, "masked_fill")
masked_scatter_ = _inplace_of(masked_scatter, "masked_scatter")
put_ = _inplace_of(put, "put")
index_reduce_ = _inplace_of(index_reduce, "index_reduce")
