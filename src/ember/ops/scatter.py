"""Index-based ops: gather/scatter (and scatter_add, scatter_reduce), index_select,
index_add/copy/fill/reduce, masked_fill/scatter/select, take, take_along_dim, put,
repeat_interleave and unfold, with gradients."""
import math
import warnings

import numpy as np

from .. import dtypes as _dt
from ..autograd import _autocast
from ..autograd.function import Function
from ..autograd.grad_mode import state as _grad_state
from ..backend import backend_of
from ..backend import quiet as _quiet
from ..tensor import Tensor
from ._index import IndexPut, dtype_name as _tname
from ._inplace import inplace
from ._util import (check_shapes_broadcast, not_implemented_for, sum_to,
                    wrap_dim, xp_of)
from .comparison import where
from .conversion import checked_fill_value
from .reduction import sum as _sum
from .shape import Clone, _view_of, c_order, expand, movedim, reshape, unsqueeze, view

__all__ = ["gather", "scatter", "scatter_", "scatter_add", "scatter_add_", "scatter_reduce",
           "scatter_reduce_", "index_select", "index_add", "index_add_", "index_copy",
           "index_copy_", "index_fill", "index_fill_", "index_reduce", "index_reduce_",
           "masked_fill", "masked_fill_", "masked_scatter", "masked_scatter_", "masked_select",
           "take", "take_along_dim", "put", "put_", "repeat_interleave", "unfold"]


def _on_device_of(t, input):
    """``t`` (an index or mask tensor) on ``input``'s device (indices may live on the host,
    as torch allows)."""
    if type(t._array) is type(input._array):
        return t
    return Tensor._wrap(backend_of(input._array).asarray(t._array))


def _dim(op, dim, ndim):
    return wrap_dim(dim, ndim, op)


def _bad_index(idx, size):
    """The first out-of-range value of ``idx`` for a dim of ``size`` (None when all fit)."""
    if not idx.size:
        return None
    hi, lo = int(idx.max()), int(idx.min())
    if hi >= size:
        return hi
    return lo if lo < -size else None


def _index_arg(op, index):
    if not isinstance(index, Tensor):
        raise TypeError("%s(): argument 'index' (position 3) must be Tensor, not %s"
                        % (op, type(index).__name__))


def _check_index_tensor(op, index):
    """torch's index dtype check of gather and the scatter family (int64 or int32)."""
    d = index._array.dtype
    if d != np.int64 and d != np.int32:
        raise RuntimeError("%s(): Expected dtype int32/int64 for index" % op)


def _scatter_index(op, arr_shape, dim, index, src_shape=None):
    """The NumPy index tuple that puts ``index`` (along ``dim``) into an array of ``arr_shape``.
    An empty index is not checked (torch's)."""
    idx = index._array
    xp = xp_of(index)
    if not idx.size:
        return (xp.zeros(0, dtype=np.int64),) * max(len(arr_shape), 1), (0,)
    if idx.ndim != len(arr_shape) and not (idx.ndim <= 1 and len(arr_shape) <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as %s tensor"
                           % ("input" if op == "gather" else "self"))
    idx = idx.reshape(idx.shape if len(arr_shape) and idx.ndim else (idx.size,))
    full = arr_shape if len(arr_shape) else (1,)
    for d in range(idx.ndim):
        if op == "gather" and d != dim and idx.shape[d] > full[d]:
            raise RuntimeError("Size does not match at dimension %d expected index %s to be no "
                               "larger than self %s apart from dimension %d"
                               % (d, list(idx.shape), list(arr_shape), dim))
    if op != "gather" and (
            any(d != dim and idx.shape[d] > full[d] for d in range(idx.ndim))
            or src_shape is not None and any(idx.shape[d] > (src_shape or (1,))[d]
                                             for d in range(idx.ndim))):
        raise RuntimeError("Expected index %s to be no larger than self %s apart from dimension "
                           "%d%s" % (list(idx.shape), list(arr_shape), dim,
                                     "" if src_shape is None else " and to be no larger size "
                                     "than src %s" % list(src_shape)))
    n = full[dim]
    bad = _bad_index(idx, n)
    if bad is None and idx.size and int(idx.min()) < 0:
        bad = int(idx.min())        # (torch takes no negative index here)
    if bad is not None:
        raise RuntimeError("index %d is out of bounds for dimension %d with size %d"
                           % (bad, dim, n))
    out = tuple(idx if d == dim else
                xp.arange(m).reshape((1,) * d + (m,) + (1,) * (idx.ndim - d - 1))
                for d, m in enumerate(idx.shape))
    return out, idx.shape


def _src_part(arr, shape):
    if shape == (0,):       # (an empty index)
        return arr.reshape(-1)[:0]
    return arr[tuple(slice(0, s) for s in shape)] if arr.shape != shape else arr


def _pad_to(g, shape):
    """``g`` written into the leading corner of zeros of ``shape`` (differentiable)."""
    if g._array.shape == tuple(shape):
        return g
    if not g._array.size:
        return Tensor._wrap(xp_of(g).zeros(shape, g._array.dtype))
    base = Tensor._wrap(xp_of(g).zeros(shape, g._array.dtype))
    return IndexPut.apply(base, tuple(slice(0, s) for s in g._array.shape), g, False)


class Gather(Function):
    node_name = "GatherBackward0"
    edge_args = (0,)     # (torch gives the index/mask/condition no edge)

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
        zeros = Tensor._wrap(xp_of(grad_output).zeros(shape, dtype))
        return scatter_add(zeros, ctx.dim, index, grad_output), None, None


def gather(input, dim, index, *, sparse_grad=False, out=None):
    """``out[i][j] = input[index[i][j]][j]`` for ``dim=0`` (and likewise for other dims)."""
    _index_arg("gather", index)
    d = _dim("gather", dim, input._array.ndim)
    _check_index_tensor("gather", index)
    return Gather.apply(input, d, _on_device_of(index, input))


class ScatterAdd(Function):
    node_name = "ScatterAddBackward0"
    edge_args = (0, 3)     # (torch gives the index/mask/condition no edge)

    @staticmethod
    def forward(ctx, a, dim, index, src):
        arr = a._array
        nd_idx, ishape = _scatter_index("scatter_add", arr.shape, dim, index, src._array.shape)
        out = arr.copy() if arr.ndim else arr.reshape(1).copy()
        s = src._array if src._array.ndim else src._array.reshape(1)
        backend_of(out).scatter_add(out, nd_idx,
                                    _src_part(s, ishape).astype(out.dtype, copy=False))
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
    """``scatter`` of a tensor ``src``, or of the number ``value`` (node ScatterBackward1)."""

    node_name = "ScatterBackward0"
    edge_args = (0, 3)     # (torch gives the index/mask/condition no edge)

    @staticmethod
    def forward(ctx, a, dim, index, src, value):
        if src is None:
            ctx.set_node_name("ScatterBackward1")
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


def _check_scatter_dtypes(op, input, src):
    if isinstance(src, Tensor) and src._array.dtype != input._array.dtype:
        raise RuntimeError("%s(): Expected self.dtype to be equal to src.dtype" % op)


def scatter(input, dim, index, src=None, *, value=None, reduce=None, out=None):
    """``input`` with ``out[index[i][j]][j] = src[i][j]`` (dim 0), ``src`` a tensor or a number."""
    _index_arg("scatter", index)
    if src is None:
        src = value
    d = _dim("scatter", dim, input._array.ndim)
    _check_index_tensor("scatter", index)
    index = _on_device_of(index, input)
    if not isinstance(src, Tensor) and index._array.size:
        # (torch converts the number in its kernel, after the index checks)
        _scatter_index("scatter", input._array.shape, d, index)
        src = _checked_value(input, src, True)
    elif not isinstance(src, Tensor):
        src = 0     # (nothing is written: torch never converts the number)
    if reduce is not None:
        red = {"add": "sum", "multiply": "prod"}.get(reduce)
        if red is None:
            raise RuntimeError("reduce argument must be either add or multiply.")
        if isinstance(src, Tensor) and not _WARNED_REDUCE[0]:
            _WARNED_REDUCE[0] = True        # (torch's TORCH_WARN_ONCE)
            warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated "
                          "and will be removed in a future PyTorch release. Use "
                          "torch.scatter_reduce instead for more reduction options.",
                          UserWarning, stacklevel=3)
        if not isinstance(src, Tensor):
            src = full_like_index(index, src, input._array.dtype)
        return _scatter_reduce(input, dim, index, src, red)
    if isinstance(src, Tensor):
        _check_scatter_dtypes("scatter", input, src)
        return Scatter.apply(input, d, index, src, None)
    return Scatter.apply(input, d, index, None, src)


_WARNED_REDUCE = [False]


def full_like_index(index, value, np_dtype):
    return Tensor._wrap(xp_of(index).full(index._array.shape, value, dtype=np_dtype))


def scatter_add(input, dim, index, src):
    """``input`` with ``out[index[i][j]][j] += src[i][j]`` (dim 0); repeated indices add up."""
    _index_arg("scatter_add", index)
    d = _dim("scatter_add", dim, input._array.ndim)
    _check_index_tensor("scatter", index)
    _check_scatter_dtypes("scatter", input, src)
    return ScatterAdd.apply(input, d, _on_device_of(index, input), src)


_REDUCE_INIT = {"sum": 0.0, "prod": 1.0, "amax": -np.inf, "amin": np.inf, "mean": 0.0}
# (torch's forward also takes "max"/"min" for amax/amin; their backward refuses them)
_REDUCE_ALIAS = {"max": "amax", "min": "amin"}


_REDUCE_UFUNC = {"sum": "add", "mean": "add", "prod": "multiply", "amax": "maximum",
                 "amin": "minimum"}


class ScatterReduce(Function):
    """``scatter_reduce``; ``name`` is the node name of a variant (IndexReduceBackward0)."""

    node_name = "ScatterReduceBackward0"
    edge_args = (0, 3)     # (torch gives the index/mask/condition no edge)

    @staticmethod
    def forward(ctx, a, dim, index, src, reduce, include_self, name=None):
        if name is not None:
            ctx.set_node_name(name)
        arr = a._array
        xp = xp_of(a)
        ctx.alias = reduce if reduce in _REDUCE_ALIAS else None
        reduce = _REDUCE_ALIAS.get(reduce, reduce)
        nd_idx, ishape = _scatter_index("scatter_reduce", arr.shape, dim, index,
                                        src._array.shape)
        shape = arr.shape if arr.ndim else (1,)
        out = arr.reshape(shape).copy()
        s = _src_part(src._array.reshape(src._array.shape or (1,)), ishape)
        if not include_self:
            init = _REDUCE_INIT[reduce]
            if out.dtype.kind not in "fV" and math.isinf(init):
                info = np.iinfo(out.dtype) if out.dtype.kind in "iu" else None
                init = (info.min if init < 0 else info.max) if info else init
            out[nd_idx] = init
        # TODO(cupy): CuPy's ufuncs lack ``multiply.at`` (prod); a backend method is needed.
        getattr(xp, _REDUCE_UFUNC[reduce]).at(out, nd_idx, s)
        counts = None
        if reduce == "mean":
            counts = xp.full(shape, 1 if include_self else 0, dtype=np.int64)
            backend_of(counts).scatter_add(counts, nd_idx, 1)
            counts = xp.maximum(counts, 1)
            out = out / counts if out.dtype.kind in "fVc" else out // counts
            out = out.astype(arr.dtype, copy=False)
            counts = Tensor._wrap(counts.reshape(arr.shape))
        ctx.dim, ctx.reduce, ctx.include_self = dim, reduce, include_self
        result = Tensor._wrap(out.reshape(arr.shape))
        ctx.save_for_backward(a, index, src, result, counts)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        a, index, src, result, counts = ctx.saved_tensors
        dim, reduce = ctx.dim, ctx.reduce
        if ctx.alias is not None:
            raise RuntimeError("Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', "
                               "'amin' but got %s." % ctx.alias)
        g = grad_output
        if reduce == "sum":
            ga, gs = g, gather(g, dim, index)
        elif reduce == "mean":
            ga = g / counts.to(g.dtype)
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
        return (ga if ctx.needs_input_grad[0] else None), None, None, gs, None, None, None


def _scatter_prod_grads(g, a, dim, index, src, result, include_self):
    """Scatter-prod gradients, torch's formula: a zero gets the product of the others in its
    group (the exclusive product), so one zero in a group still passes a gradient."""
    # NOTE: self's zeros are masked to 1, so its gradient is the product of everything else.
    masked_self = where(a == 0, 1.0, a)
    ga = g * ScatterReduce.apply(masked_self, dim, index, src, "prod", include_self) \
        / masked_self
    src_zero = src == 0
    zeros = Tensor._wrap(xp_of(g).zeros(a._array.shape, g._array.dtype))
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


def _no_complex_grad(name, out, *inputs):
    """torch's error when an op without a complex derivative returns a complex result for
    inputs that require grad (its out-of-place form only)."""
    if out._array.dtype.kind == "c" and _grad_state.enabled and any(
            isinstance(t, Tensor) and t._requires_grad for t in inputs):
        raise RuntimeError("%s does not support automatic differentiation for outputs with "
                           "complex dtype." % name)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):
    """Reduce ``src`` into ``input`` at ``index`` with ``reduce`` in sum, prod, mean, amax, amin."""
    result = _scatter_reduce(input, dim, index, src, reduce, include_self=include_self)
    _no_complex_grad("scatter_reduce", result, input, src)
    return result


def _scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    _index_arg("scatter_reduce", index)
    d = _dim("scatter_reduce", dim, input._array.ndim)
    _check_index_tensor("scatter", index)
    _check_scatter_dtypes("scatter", input, src)
    if reduce not in _REDUCE_INIT and reduce not in _REDUCE_ALIAS:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got %s"
                           % reduce)
    arr = input._array
    if index._array.size:
        kind = _REDUCE_ALIAS.get(reduce, reduce)
        kinds = {"amax": "c", "amin": "c", "mean": "b"}.get(kind, "")
        not_implemented_for(arr, "scatter_gather_tensor_cpu_reduce_" + kind, kinds)
    elif reduce == "mean":
        not_implemented_for(arr, "div_floor_cpu", "b")   # (the division runs without a scatter)
    return ScatterReduce.apply(input, d, _on_device_of(index, input), src, reduce, include_self)


_DTYPE_MSG = {"index_select": (RuntimeError, "index_select(): Expected dtype int32 or int64 "
                                              "for index"),
              "index_add": (RuntimeError, "index_add_(): Expected dtype int32/int64 for index "
                                          "but got: %s")}

_INT32_OK = (np.int32,)
# op: (the index dtypes torch takes besides int64, its error class and message)
_INDEX_DTYPES = {
    "index_select": (_INT32_OK, RuntimeError, "index_select(): Expected dtype int32 or int64 for "
                                              "index"),
    "index_add": (_INT32_OK, RuntimeError, "index_add_(): Expected dtype int32/int64 for index "
                                           "but got: %s"),
    "index_reduce": (_INT32_OK, RuntimeError, "index_reduce_(): Expected dtype int32/int64 for "
                                              "index but got: %s"),
    "index_fill": ((), IndexError, "index_fill_(): Expected dtype int64 for index."),
    "index_copy": ((), RuntimeError, "index_copy_(): Expected a long tensor for index, but got "
                                     "%s"),
}


def _check_index_dtype(op, dtype):
    """torch's dtype check of a 1-D index (``dtype`` is not int64)."""
    ok, cls, msg = _INDEX_DTYPES[op]
    if dtype not in ok:
        raise cls(msg % _tname(dtype) if "%s" in msg else msg)


def _vector_error(op, idx):
    """torch's error for an index of more than one dimension."""
    if op == "index_fill":
        return RuntimeError("Index has to be a vector/scalar")
    if op == "index_copy":
        return IndexError("index_copy_(): Index should have dimension 1 or 0 (got %d)" % idx.ndim)
    if op in ("index_add", "index_reduce"):
        return IndexError("%s_(): Index is supposed to be a vector, but got dim: %d with type: %s "
                          "and size: %s" % (op, idx.ndim, _tname(idx.dtype), list(idx.shape)))
    return IndexError("%s(): Index is supposed to be a vector" % op)


def _index_1d(op, index, input, size, dim=0):
    """``index`` (a tensor or a sequence) checked as a 1-D int64 index on ``input``'s device
    (index_select and index_add refuse negative indices, as torch)."""
    if not isinstance(index, Tensor):
        index = Tensor._wrap(backend_of(input._array).asarray(index, dtype=np.int64))
    idx = _on_device_of(index, input)._array
    if idx.ndim > 1:
        raise _vector_error(op, idx)
    if idx.dtype != np.int64:
        _check_index_dtype(op, idx.dtype)
    idx = idx.reshape(-1)
    if op in _DTYPE_MSG:
        if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= size):
            empty = input._array.size == 0 and input._array.ndim > 1
            if op == "index_select" and empty:
                if size == 0:
                    raise RuntimeError("index_select(): self indexing axis dim should be "
                                       "positive")
                bad = int(idx.max()) if int(idx.max()) >= size else int(idx.min())
                raise RuntimeError("INDICES element is out of DATA bounds, id=%d axis_dim=%d"
                                   % (bad, size))
            if op == "index_select" and dim == 1 and input._array.ndim > 1:
                wrong = (idx < 0) | (idx >= size)      # (torch's dim-1 kernel: the first one)
                raise RuntimeError("INDICES element is out of DATA bounds, id=%d axis_dim=%d"
                                   % (int(idx[int(wrong.argmax())]), size))
            if not (op == "index_add" and empty):
                raise IndexError("index out of range in self")
        return Tensor._wrap(idx.astype(np.int64, copy=False))
    bad = _bad_index(idx, size)
    if bad is not None:
        if op in ("index_copy", "index_fill"):
            if size == 0:
                raise RuntimeError(_storage_msg(input, dim, idx.size))
            raise IndexError("%sindex %d is out of bounds for dimension %d with size %d"
                             % ("index_copy_(): " if op == "index_copy" else "", bad, dim,
                                size))
        raise IndexError("index out of range in self (%s: index %d is out of bounds for "
                         "dimension with size %d)" % (op, bad, size))
    return Tensor._wrap(idx.astype(np.int64, copy=False))


def _storage_msg(input, dim, n):
    """torch's error for index_copy/index_fill with indices along an empty dim (its kernel
    restrides ``input`` with stride 0 along ``dim`` over an empty storage)."""
    shape = list(input._array.shape)
    strides, acc = [], 1
    for size in reversed(shape):
        strides.insert(0, acc)
        acc *= max(size, 1)
    shape[dim], strides[dim] = n, 0
    need = input._array.itemsize * (1 + sum((sz - 1) * st for sz, st in zip(shape, strides)))
    return ("setStorage: sizes %s, strides %s, storage offset 0, and itemsize %d requiring a "
            "storage size of %d are out of bounds for storage of size 0"
            % (shape, strides, input._array.itemsize, need))


class IndexSelect(Function):
    node_name = "IndexSelectBackward0"
    edge_args = (0,)     # (torch gives the index/mask/condition no edge)

    @staticmethod
    def forward(ctx, a, dim, index, long_index):
        arr = a._array
        ctx.dim, ctx.long_index = dim, long_index
        ctx.save_for_backward(index)
        if arr.ndim == 0:
            if index._array.size != 1:
                raise RuntimeError("index_select(): Index to scalar can have only 1 value, got "
                                   "%d value(s)" % index._array.size)
            return Tensor._wrap(arr.copy())
        return Tensor._wrap(xp_of(a).take(arr, index._array, axis=dim))

    @staticmethod
    def backward(ctx, grad_output):
        index, = ctx.saved_tensors
        shape, dtype = ctx._input_meta(0)
        zeros = Tensor._wrap(xp_of(grad_output).zeros(shape, dtype))
        plain = _plain_index_add(len(shape), ctx.long_index, ctx.dim)
        return IndexAdd.apply(zeros, ctx.dim, index, grad_output, 1, plain), None, None, None


def index_select(input, dim, index, *, out=None):
    """The entries at ``index`` (1-D int tensor) along ``dim``."""
    n = input._array.ndim
    d = _dim("index_select", dim, n)
    idx = _index_1d("index_select", index, input, input._array.shape[d] if n else 1, d)
    return IndexSelect.apply(input, d, idx, _long_index(index))


def _long_index(index):
    """Whether torch sees ``index`` as an int64 tensor (a sequence becomes one)."""
    return not isinstance(index, Tensor) or index._array.dtype == np.int64


def _plain_index_add(ndim, long_index, dim):
    """Whether torch's index_add takes its int64-index path (first or last dim of a tensor
    of 2+ dims), which adds ``source`` as it is when ``alpha`` is 1."""
    return ndim > 1 and long_index and dim in (0, ndim - 1)


def _dim_index(dim, index):
    return (slice(None),) * dim + (index._array,)


def _dim_shape(shape, dim, index):
    """The shape of the slices at ``index`` along ``dim`` of an array of ``shape``."""
    return shape[:dim] + (index._array.size,) + shape[dim + 1:]


def _sliced(shape, dim):
    return shape[:dim] + shape[dim + 1:] if shape else shape


def _index_add_check(input, dim, index, source):
    """torch's index_add checks: the number of indices, then the slice shapes."""
    n, src, shape = index._array.size, source._array.shape, input._array.shape
    if src and dim >= len(src):
        raise RuntimeError("index_add_(): Indexing dim %d is out of bounds of the source tensor "
                           "with dim %d" % (dim, len(src)))
    if n != (src[dim] if src else 1):
        if not src:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        raise RuntimeError("index_add_(): Number of indices (%d) should be equal to "
                           "source.size(dim): (%d), for dim: %d" % (n, src[dim], dim))
    if len(src) != len(shape) or _sliced(src, dim) != _sliced(shape, dim):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                           "specified dimension. Got self.shape = %s source.shape = %s"
                           % (list(shape), list(src)))


def _index_copy_check(input, dim, index, source):
    """torch's index_copy checks, in its order."""
    n, src, shape = index._array.size, source._array.shape, input._array.shape
    if index._array.ndim > 1:
        raise _vector_error("index_copy", index._array)
    if not src and n != 1:
        raise IndexError("index_copy_(): When source is scalar, index should have one element "
                         "(got %d)" % n)
    if len(src) != len(shape) and src and shape:
        raise IndexError("index_copy_(): When source and destination are not scalars, their "
                         "dimensionality must match. Source dimensionality (%d), destination "
                         "dimensionality (%d)" % (len(src), len(shape)))
    if index._array.dtype != np.int64:
        raise RuntimeError("index_copy_(): Expected a long tensor for index, but got %s"
                           % _tname(index._array.dtype))
    if source._array.dtype != input._array.dtype:
        raise RuntimeError("index_copy_(): self and source expected to have the same dtype, "
                           "but got (self) %s and (source) %s"
                           % (_tname(input._array.dtype), _tname(source._array.dtype)))
    a, b = _sliced(shape, dim), _sliced(src, dim)
    if a != b:
        raise RuntimeError("index_copy_(): Source/destination tensor must have same slice "
                           "shapes. Destination slice shape: %s at dimension %d and source slice "
                           "shape: %s at dimension 0." % (" ".join(map(str, a)), dim,
                                                          " ".join(map(str, b))))
    if src and n != src[dim]:
        raise IndexError("index_copy_(): Number of indices (%d) should be equal to "
                         "source.size(dim) (%d)" % (n, src[dim]))


class IndexAdd(Function):
    node_name = "IndexAddBackward0"
    edge_args = (0, 3)     # (torch gives the index/mask/condition no edge)

    @staticmethod
    def forward(ctx, a, dim, index, source, alpha, plain):
        out = a._array.copy()
        src = source._array
        if alpha != 1 or (src.dtype.kind == "c" and not plain):
            # NOTE: torch's kernel adds ``alpha * source`` (1 + 0j times an infinite part makes
            # a NaN) even for alpha 1, except in its int64-index path (``plain``)
            with _quiet():
                src = src * (complex(alpha) if src.dtype.kind == "c" else alpha)
        view = out if out.ndim else out.reshape(1)
        if out.size:
            backend_of(out).scatter_add(view, _dim_index(dim, index), src.reshape(
                _dim_shape(view.shape, dim, index)).astype(out.dtype, copy=False))
        ctx.dim, ctx.alpha = dim, alpha
        ctx.save_for_backward(index)
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        index, = ctx.saved_tensors
        gs = None
        if ctx.needs_input_grad[3]:
            gs = reshape(index_select(grad_output, ctx.dim, index), ctx._input_meta(3)[0])
            if ctx.alpha != 1:
                gs = gs * ctx.alpha
        return grad_output, None, None, gs, None, None


def index_add(input, dim, index, source, *, alpha=1, out=None):
    """``input`` with ``source`` slices added at ``index`` along ``dim`` (repeats accumulate)."""
    d = _dim("index_add", dim, input._array.ndim)
    idx = _index_1d("index_add", index, input, input._array.shape[d] if input._array.ndim else 1)
    if source._array.dtype != input._array.dtype:
        raise RuntimeError("index_add_(): self (%s) and source (%s) must have the same scalar "
                           "type" % (_tname(input._array.dtype), _tname(source._array.dtype)))
    _index_add_check(input, d, idx, source)
    plain = _plain_index_add(input._array.ndim, _long_index(index), d)
    return IndexAdd.apply(input, d, idx, source, alpha, plain)


class IndexCopy(Function):
    node_name = "IndexCopyBackward0"
    edge_args = (0, 3)     # (torch gives the index/mask/condition no edge)

    @staticmethod
    def forward(ctx, a, dim, index, source):
        out = a._array.copy()
        view = out if out.ndim else out.reshape(1)
        view[_dim_index(dim, index)] = source._array.reshape(_dim_shape(view.shape, dim, index))
        ctx.dim = dim
        ctx.save_for_backward(index)
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        index, = ctx.saved_tensors
        ga = gs = None
        if ctx.needs_input_grad[0]:
            ga = IndexFill.apply(grad_output, ctx.dim, index, 0.0)
        if ctx.needs_input_grad[3]:
            gs = reshape(index_select(grad_output, ctx.dim, index), ctx._input_meta(3)[0])
        return ga, None, None, gs


def index_copy(input, dim, index, source):
    """``input`` with the slices at ``index`` along ``dim`` replaced by ``source``."""
    input, source = _autocast.inputs("promote", (input, source))
    d = _dim("index_copy", dim, input._array.ndim)
    if isinstance(index, Tensor) and isinstance(source, Tensor):
        _index_copy_check(input, d, index, source)
    idx = _index_1d("index_copy", index, input,
                    input._array.shape[d] if input._array.ndim else 1, d)
    return IndexCopy.apply(input, d, idx, source)


class IndexFill(Function):
    node_name = "IndexFillBackward0"
    edge_args = (0, 3)     # (torch gives the index/mask/condition no edge)

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
        index, = ctx.saved_tensors
        ga = gv = None
        if ctx.needs_input_grad[0]:
            ga = IndexFill.apply(grad_output, ctx.dim, index, 0.0)
        if ctx.needs_input_grad[3]:
            gv = _sum(index_select(grad_output, ctx.dim, index))
        return ga, None, None, gv


def index_fill(input, dim, index, value):
    """``input`` with the slices at ``index`` along ``dim`` set to ``value``."""
    if isinstance(value, Tensor) and value._array.ndim:
        raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got "
                           "tensor with %d dimension(s)." % value._array.ndim)
    if isinstance(index, Tensor) and index._array.dtype != np.int64:
        _check_index_dtype("index_fill", index._array.dtype)
    if not input.is_complex() and (
            isinstance(value, (complex, np.complexfloating)) or
            isinstance(value, Tensor) and value._array.dtype.kind == "c"):
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not "
                           "supported")
    d = _dim("index_fill", dim, input._array.ndim)
    idx = _index_1d("index_fill", index, input,
                    input._array.shape[d] if input._array.ndim else 1, d)
    value = _checked_value(input, value, True)
    return IndexFill.apply(input, d, idx, value)


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """Reduce ``source`` slices into ``input`` at ``index`` (prod, mean, amax, amin)."""
    result = _index_reduce(input, dim, index, source, reduce, include_self=include_self)
    _no_complex_grad("index_reduce", result, input, source)
    return result


def _index_reduce(input, dim, index, source, reduce, *, include_self=True):
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError("index_reduce(): Expected reduce to be one of prod, mean, amax or amin "
                           "but got %s." % reduce)
    arr, sarr = input._array, source._array
    d = _dim("index_reduce", dim, arr.ndim)
    idx = _index_1d("index_reduce", index, input, arr.shape[d] if arr.ndim else 1)
    _check_index_source("index_reduce", arr, sarr, d, idx._array.size)
    if not include_self:
        not_implemented_for(arr, "index_reduce_func_exclude_input_init", "bc")
    if arr.ndim <= 1:
        not_implemented_for(arr, "index_func_", "bc")     # (torch's kernel for 0-d and 1-D)
    elif reduce == "mean":
        not_implemented_for(arr, "div_floor_cpu", "b")
    elif reduce in ("amax", "amin") and idx._array.size and include_self:
        not_implemented_for(arr, "maximum_cpu" if reduce == "amax" else "minimum_cpu", "c")
    if sarr.ndim == 0:
        full = Tensor._wrap(idx._array.reshape(()))
    else:
        shape = [1] * sarr.ndim
        shape[d] = -1
        full = expand(idx.reshape(shape), sarr.shape)
        full = Tensor._wrap(xp_of(full).ascontiguousarray(full._array))
    return ScatterReduce.apply(input, d, full, source, reduce, include_self,
                               "IndexReduceBackward0")


def _check_index_source(op, arr, sarr, d, n):
    """torch's checks of ``source`` against ``self`` and ``n`` indices along ``d``."""
    if sarr.dtype != arr.dtype:
        raise RuntimeError("%s_(): self (%s) and source (%s) must have the same scalar type"
                           % (op, _tname(arr.dtype), _tname(sarr.dtype)))
    if d != 0 and d >= sarr.ndim:
        raise RuntimeError("%s_(): Indexing dim %d is out of bounds of the source tensor with "
                           "dim %d" % (op, d, sarr.ndim))
    if n != (sarr.shape[d] if sarr.ndim else 1):
        if sarr.ndim == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        raise RuntimeError("%s_(): Number of indices (%d) should be equal to source.size(dim): "
                           "(%d), for dim: %d" % (op, n, sarr.shape[d], d))
    self_sizes, source_sizes = list(arr.shape), list(sarr.shape)
    if arr.ndim and sarr.ndim:
        del self_sizes[d], source_sizes[d]
    if self_sizes != source_sizes:
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                           "specified dimension. Got self.shape = %s source.shape = %s"
                           % (list(arr.shape), list(sarr.shape)))


# torch's C++ type names (masked_fill_'s message)
_C_TYPE = {"Char": "signed char", "Short": "short int", "Int": "int", "Long": "long int",
           "Byte": "unsigned char", "Half": "c10::Half", "BFloat16": "c10::BFloat16",
           "Float": "float", "Double": "double", "ComplexFloat": "c10::complex<float>",
           "ComplexDouble": "c10::complex<double>"}


def _mask(op, mask, input):
    """The bool array of ``mask`` on ``input``'s device (torch's checks and messages)."""
    if not isinstance(mask, Tensor):
        raise TypeError("%s(): argument 'mask' must be Tensor, not %s"
                        % (op, type(mask).__name__))
    if mask._array.dtype != np.bool_:
        if op == "masked_select":
            raise RuntimeError("masked_select: expected BoolTensor for mask")
        name = _tname(mask._array.dtype)
        raise RuntimeError("%s only supports boolean masks, but got mask with dtype %s"
                           % (op, _C_TYPE.get(name, name) if op == "masked_fill_" else name))
    return _on_device_of(mask, input)._array


class MaskedFill(Function):
    node_name = "MaskedFillBackward0"
    edge_args = (0, 2)     # (torch gives the index/mask/condition no edge)

    @staticmethod
    def forward(ctx, a, mask, value):
        arr = a._array
        check_shapes_broadcast("masked_fill", mask.shape, arr.shape)    # (torch's order)
        v = value._array if isinstance(value, Tensor) else value
        xp = xp_of(a)
        out = xp.where(mask, xp.asarray(v, dtype=arr.dtype), arr)
        ctx.save_for_backward(Tensor._wrap(mask))
        return Tensor._wrap(c_order(out))     # (torch fills a contiguous clone)

    @staticmethod
    def backward(ctx, grad_output):
        m, = ctx.saved_tensors
        ga = gv = None
        if ctx.needs_input_grad[0]:
            ga = sum_to(MaskedFill.apply(grad_output, m._array, 0.0), ctx._input_meta(0)[0])
        if ctx.needs_input_grad[2]:
            gv = _sum(grad_output * m.to(grad_output.dtype))
        return ga, None, gv


def masked_fill(input, mask, value):
    """``input`` with ``value`` where ``mask`` (bool, broadcastable) is True."""
    m = _mask("masked_fill_", mask, input)
    if isinstance(value, Tensor) and value._array.ndim:
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                           "tensor with %d dimension(s)." % value._array.ndim)
    value = _checked_value(input, value, True)
    return MaskedFill.apply(input, m, value)


def _checked_value(input, value, reduced):
    """torch's overflow check of a fill value (a number or a 0-d tensor of another dtype)."""
    d = _dt._BY_NP[input._array.dtype]
    if isinstance(value, Tensor):
        if value._array.dtype != input._array.dtype:
            checked_fill_value(value.item(), d, reduced=reduced)
        return value
    return checked_fill_value(value, d, reduced=reduced)


class MaskedScatter(Function):
    node_name = "MaskedScatterBackward0"
    edge_args = (0, 2)     # (torch gives the index/mask/condition no edge)

    @staticmethod
    def forward(ctx, a, mask, source):
        xp = xp_of(a)
        shape = np.broadcast_shapes(a._array.shape, mask.shape)
        out = xp.broadcast_to(a._array, shape).copy()
        m = xp.broadcast_to(mask, shape)
        n = int(m.sum())
        src = source._array.reshape(-1)
        if src.size < n:
            raise RuntimeError("Number of elements of source < number of ones in mask")
        out[m] = src[:n]
        ctx.save_for_backward(Tensor._wrap(m))
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        m, = ctx.saved_tensors
        ga = gs = None
        if ctx.needs_input_grad[0]:
            ga = sum_to(MaskedFill.apply(grad_output, m._array, 0.0), ctx._input_meta(0)[0])
        if ctx.needs_input_grad[2]:
            shape = ctx._input_meta(2)[0]
            sel = masked_select(grad_output, m)
            gs = reshape(_pad_to(sel, (math.prod(shape),)), shape)
        return ga, None, gs


def masked_scatter(input, mask, source):
    """``input`` with the True positions of ``mask`` filled from ``source`` in row-major order."""
    if source.dtype != input.dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but got"
                           "%s and %s" % (_tname(input.dtype), _tname(source.dtype)))
    m = _mask("masked_scatter_", mask, input)
    return MaskedScatter.apply(input, m, source)


class MaskedSelect(Function):
    node_name = "MaskedSelectBackward0"
    edge_args = (0,)     # (torch gives the index/mask/condition no edge)

    @staticmethod
    def forward(ctx, a, mask):
        xp = xp_of(a)
        shape = check_shapes_broadcast("masked_select", mask.shape, a._array.shape)
        m = xp.broadcast_to(mask, shape)
        ctx.save_for_backward(Tensor._wrap(m))
        return Tensor._wrap(xp.broadcast_to(a._array, shape)[m])

    @staticmethod
    def backward(ctx, grad_output):
        m, = ctx.saved_tensors
        shape, dtype = ctx._input_meta(0)
        zeros = Tensor._wrap(xp_of(grad_output).zeros(m._array.shape, dtype))
        return sum_to(MaskedScatter.apply(zeros, m._array, grad_output), shape), None


def masked_select(input, mask, *, out=None):
    """The elements of ``input`` where ``mask`` is True, as a 1-D tensor (both broadcast)."""
    return MaskedSelect.apply(input, _mask("masked_select", mask, input))


class Take(Function):
    node_name = "TakeBackward0"
    edge_args = (0,)     # (torch gives the index/mask/condition no edge)

    @staticmethod
    def forward(ctx, a, index):
        ctx.save_for_backward(index)
        return Tensor._wrap(a._array.reshape(-1)[index._array])

    @staticmethod
    def backward(ctx, grad_output):
        index, = ctx.saved_tensors
        shape, dtype = ctx._input_meta(0)
        flat = Tensor._wrap(xp_of(grad_output).zeros(math.prod(shape), dtype))
        return reshape(IndexPut.apply(flat, (index._array,), grad_output, True), shape), None


def _flat_index(op, input, index):
    if not isinstance(index, Tensor):
        raise TypeError("%s(): argument 'index' (position 2) must be Tensor, not %s"
                        % (op, type(index).__name__))
    if index._array.dtype != np.int64:
        raise RuntimeError("%s_(): Expected a long tensor for index, but got %s"
                           % (op, _tname(index._array.dtype)) if op == "put" else
                           "%s(): Expected a long tensor for index, but got %s"
                           % (op, _tname(index._array.dtype)))
    n = input._array.size
    if n == 0 and index._array.size and op == "take":
        raise IndexError("take(): tried to take from an empty tensor")
    index = _on_device_of(index, input)
    bad = _bad_index(index._array, n)
    if bad is not None:
        raise IndexError("out of range: tried to access index %d on a tensor of %d elements."
                         % (bad, n))
    return index


def take(input, index, *, out=None):
    """``input.flatten()[index]``, shaped like ``index``."""
    return Take.apply(input, _flat_index("take", input, index))


def take_along_dim(input, indices, dim=None, *, out=None):
    """``gather`` with ``input`` and ``indices`` broadcast against each other except at ``dim``."""
    if dim is None:
        return gather(view(input, -1), 0, view(indices, -1))
    n = input._array.ndim
    if indices._array.ndim != n:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same "
                           "number of dimensions, but got %d dimensions for input, and %d "
                           "dimensions for indices" % (n, indices._array.ndim))
    if indices._array.dtype != np.int64:
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got %s"
                           % _tname(indices._array.dtype))
    d = _dim("take_along_dim", dim, n)
    ishape, xshape = list(indices._array.shape), list(input._array.shape)
    bshape = list(np.broadcast_shapes(tuple(ishape[:d] + [1] + ishape[d + 1:]),
                                      tuple(xshape[:d] + [1] + xshape[d + 1:])))
    xs = bshape.copy()
    xs[d] = xshape[d]
    ins = bshape.copy()
    ins[d] = ishape[d]
    indices = _on_device_of(indices, input)
    xp = xp_of(indices)
    arr = indices._array
    if xshape[d] and arr.size and int(arr.min()) < 0:
        arr = xp.remainder(arr, xshape[d])      # NOTE: torch wraps negative indices here
    idx = Tensor._wrap(xp.ascontiguousarray(xp.broadcast_to(arr, tuple(ins))))
    return gather(expand(input, tuple(xs)), d, idx)


class Put(Function):
    """``out = a.clone(); out.flatten()[index] = source`` (``+=`` with ``accumulate``)."""

    node_name = "PutBackward0"
    edge_args = (0, 2)     # (torch gives the index no edge)

    @staticmethod
    def forward(ctx, a, index, source, accumulate):
        out = a._array.copy()
        flat = out.reshape(-1)      # (a view: the copy is contiguous)
        idx = index._array.reshape(-1)
        src = source._array.reshape(-1)
        if accumulate:
            backend_of(out).scatter_add(flat, (idx,), src)
        else:
            flat[idx] = src
        ctx.accumulate = accumulate
        ctx.source = (src.shape, source._array.dtype)
        ctx.save_for_backward(index)
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        index, = ctx.saved_tensors
        ga = gs = None
        if ctx.needs_input_grad[0]:
            if ctx.accumulate:
                ga = grad_output
            else:
                zeros = Tensor._wrap(xp_of(grad_output).zeros(*ctx.source))
                ga = Put.apply(grad_output, index, zeros, False)
        if ctx.needs_input_grad[2]:
            gs = reshape(Take.apply(grad_output, index), ctx._input_meta(2)[0])
        return ga, None, gs, None


def put(input, index, source, accumulate=False):
    """``input`` with ``input.flatten()[index] = source`` (``+=`` when ``accumulate``)."""
    if isinstance(index, Tensor) and index._array.dtype != np.int64:
        raise RuntimeError("put_(): Expected a long tensor for index, but got %s"
                           % _tname(index._array.dtype))
    if source._array.dtype != input._array.dtype:
        raise RuntimeError("put_(): self and source expected to have the same dtype, but got "
                           "self.dtype = %s and source.dtype = %s"
                           % (_tname(input._array.dtype), _tname(source._array.dtype)))
    if source._array.size != index._array.size:
        raise IndexError("put_(): Expected source and index to have the same number of "
                         "elements, but got source.numel() = %d, index.numel() = %d"
                         % (source._array.size, index._array.size))
    index = _flat_index("put", input, index)
    return Put.apply(input, index, source, accumulate)


def _inplace_of(fn, name):
    def op_(input, *args, **kwargs):
        return inplace(input, fn, *args, **kwargs)
    op_.__name__ = name + "_"
    op_.__doc__ = "In-place ``%s``." % name
    return op_


scatter_ = _inplace_of(scatter, "scatter")
scatter_add_ = _inplace_of(scatter_add, "scatter_add")
# (the in-place forms raise no complex-autograd error, as torch; the name is for messages)
_scatter_reduce.__name__, _index_reduce.__name__ = "scatter_reduce", "index_reduce"
_scatter_reduce_ = _inplace_of(_scatter_reduce, "scatter_reduce")


def scatter_reduce_(input, dim, index, src, reduce, *, include_self=True):
    """In-place ``scatter_reduce``."""
    try:
        return _scatter_reduce_(input, dim, index, src, reduce, include_self=include_self)
    except NotImplementedError:
        # NOTE: torch writes the mean's initial value (0) at the indices before its kernel
        # refuses a bool tensor: the input is left changed
        arr = input._array
        if reduce == "mean" and not include_self and arr.dtype.kind == "b" and \
                arr.flags.writeable:
            pos = _scatter_index("scatter_reduce", arr.shape, wrap_dim(dim, max(arr.ndim, 1)),
                                 _on_device_of(index, input), src._array.shape)[0]
            arr.reshape(arr.shape or (1,))[pos] = False
        raise
index_add_ = _inplace_of(index_add, "index_add")
index_copy_ = _inplace_of(index_copy, "index_copy")
index_fill_ = _inplace_of(index_fill, "index_fill")
def masked_fill_(input, mask, value):
    """In-place ``masked_fill``."""
    if isinstance(mask, Tensor):     # (torch's operand order in the in-place message)
        check_shapes_broadcast("masked_fill_", input._array.shape, mask._array.shape)
    return inplace(input, masked_fill, mask, value)
masked_scatter_ = _inplace_of(masked_scatter, "masked_scatter")
put_ = _inplace_of(put, "put")
_index_reduce_ = _inplace_of(_index_reduce, "index_reduce")


def index_reduce_(input, dim, index, source, reduce, *, include_self=True):
    """In-place ``index_reduce``."""
    try:
        return _index_reduce_(input, dim, index, source, reduce, include_self=include_self)
    except NotImplementedError:
        # NOTE: torch's mean adds ``source`` into the input (index_add_) before its division
        # refuses a bool tensor: the input is left changed
        arr = input._array
        if reduce == "mean" and include_self and arr.dtype.kind == "b" and arr.ndim > 1 and \
                arr.flags.writeable:
            arr[...] = index_add(input, dim, index, source)._array
        raise


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element ``repeats`` times (a number or a per-element tensor) along ``dim``."""
    xp = xp_of(input)
    if repeats is None:
        counts = input._array
        if counts.dtype not in (np.int32, np.int64):      # (torch's kernel: Int and Long)
            raise NotImplementedError("\"repeat_interleave_cpu\" not implemented for '%s'"
                                      % _tname(counts.dtype))
        if counts.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if bool((counts < 0).any()):
            raise RuntimeError("repeats can not be negative")
        return Tensor._wrap(xp.repeat(xp.arange(counts.size, dtype=counts.dtype), counts))
    if not isinstance(repeats, Tensor):
        # torch: flatten (when dim is None), unsqueeze(dim + 1), expand, clone, flatten
        d = wrap_dim(0 if dim is None else dim, input._array.ndim, "repeat_interleave")
        if dim is None and input._array.ndim != 1:
            input = reshape(input, (-1,))
        repeats = int(repeats)
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        out = unsqueeze(input, d + 1)
        shape = list(out._array.shape)
        shape[d + 1] = repeats
        if output_size is not None and output_size != shape[d] * repeats:
            raise RuntimeError("repeat_interleave: Invalid output_size, expected %d but got %d"
                               % (shape[d] * repeats, output_size))
        out = Clone.apply(expand(out, tuple(shape)))
        return reshape(out, tuple(shape[:d]) + (shape[d] * repeats,) + tuple(shape[d + 2:]))
    if dim is None:
        input = reshape(input, (-1,))
        d = 0
    else:
        d = wrap_dim(dim, input._array.ndim, "repeat_interleave")
    n = input._array.shape[d] if input._array.ndim else 1
    reps = _on_device_of(repeats, input)._array
    if reps.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if reps.dtype.kind not in "iu":
        raise NotImplementedError("\"repeat_interleave_cpu\" not implemented for '%s'"
                                  % _tname(reps.dtype))
    if reps.ndim and reps.size != n and reps.size != 1:
        raise RuntimeError("repeats must have the same size as input along dim, but got "
                           "repeats.size(0) = %d and input.size(%d) = %d" % (reps.size, d, n))
    if bool((reps < 0).any()):
        raise RuntimeError("repeats can not be negative")
    # TODO(cupy): cupy.repeat takes no array of repeats (a backend method is needed).
    idx = xp.repeat(xp.arange(n, dtype=np.int64), reps.reshape(-1) if reps.ndim else int(reps))
    if output_size is not None and output_size != idx.size:
        raise RuntimeError("allocated size does not match required size")
    return index_select(input, d, Tensor._wrap(idx))


def _repeat_interleave_method(input, repeats=None, dim=None, *, output_size=None):
    """``Tensor.repeat_interleave``: ``repeats`` is required (only the function takes the
    counts alone)."""
    if repeats is None:
        got = ", ".join("%s=%s" % (k, type(v).__name__) for k, v in
                        (("dim", dim), ("output_size", output_size)) if v is not None)
        raise TypeError("repeat_interleave() received an invalid combination of arguments - got "
                        "(%s), but expected one of:\n * (Tensor repeats, int dim = None, *, int "
                        "output_size = None)\n * (int repeats, int dim = None, *, int "
                        "output_size = None)\n" % (got + ", " if got else ""))
    return repeat_interleave(input, repeats, dim, output_size=output_size)


class Unfold(Function):
    """Windows of ``size`` every ``step`` along ``dim`` as a new last dim (a strided view)."""

    node_name = "UnfoldBackward0"

    @staticmethod
    def forward(ctx, a, dim, size, step):
        ctx.args = (dim, size, step)
        arr = a._array
        shape, strides = arr.shape, arr.strides
        count = (shape[dim] - size) // step + 1
        view = backend_of(arr).as_strided(
            arr, shape[:dim] + (count,) + shape[dim + 1:] + (size,),
            strides[:dim] + (strides[dim] * step,) + strides[dim + 1:] + (strides[dim],))
        return _view_of(a, view, Unfold, dim, size, step)

    @staticmethod
    def backward(ctx, grad_output):
        dim, size, step = ctx.args
        shape, dtype = ctx._input_meta(0)
        count = grad_output._array.shape[dim]
        xp = xp_of(grad_output)
        idx = (xp.arange(count, dtype=np.int64)[:, None] * step +
               xp.arange(size, dtype=np.int64)[None, :]).reshape(-1)
        g = movedim(grad_output, -1, dim + 1)
        g = reshape(g, shape[:dim] + (count * size,) + shape[dim + 1:])
        zeros = Tensor._wrap(xp.zeros(shape, dtype=dtype))
        return index_add(zeros, dim, Tensor._wrap(idx), g), None, None, None


def unfold(input, dimension, size, step):
    """Windows of ``size`` taken every ``step`` along ``dimension``, as a new last dim (a
    view)."""
    n = input._array.ndim
    d = wrap_dim(dimension, n, "unfold")
    length = input._array.shape[d] if n else 1
    if size > length:
        raise RuntimeError("maximum size for tensor at dimension %d is %d but size is %d"
                           % (d, length, size))
    if step <= 0:
        raise RuntimeError("step is %d but must be > 0" % step)
    if n == 0:
        # NOTE: torch: a 0-d input gives ``size`` (0 or 1) copies of its element, no window dim
        return reshape(input, (1,))[:size]
    return Unfold.apply(input, d, int(size), int(step))
