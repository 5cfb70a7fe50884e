"""Reductions: sum, mean, prod, max/min, var/std, norm, logsumexp, cumsum, median, mode, ..."""
import builtins as _b
import warnings
from math import isinf
from math import prod as _prod

import numpy as np

from .. import dtypes as _dt
from .. import return_types as _rt
from ..autograd.function import Function
from ..autograd.grad_mode import state as _grad_state
from ..backend import errstate
from ..tensor import Tensor
from ._numpy_names import numpy_names
from ._util import get_array_module, not_implemented_for, wrap_dim, wrap_dims, xp_of
from .arithmetic import DivScalar
from .conversion import to
from .shape import (Expand, _broadcast_scalar, c_order, expand, permute, reshape, unsqueeze,
                    view)
from .sorting import _along, _ranks, _ScatterDim, _std_sort

__all__ = ["sum", "mean", "sum_to_size", "prod", "max", "min", "amax", "amin", "argmax",
           "argmin", "aminmax", "var", "std", "var_mean", "std_mean", "logsumexp", "norm",
           "all", "any", "cumsum", "cumprod", "median", "nanmedian", "mode", "count_nonzero",
           "nansum", "nanmean", "cumsum_", "cumprod_"]


def _expand_back(grad, shape, dims, keepdim):
    """Broadcast a reduced gradient back to the input ``shape``."""
    if not keepdim and dims:
        kept = list(shape)
        for d in dims:
            kept[d] = 1
        grad = reshape(grad, tuple(kept))
    return expand(grad, shape)


def _accumulation_array(a, dtype):
    """``a``'s array in the dtype a sum or product accumulates in: ``dtype`` if given, int64
    for integer and bool inputs (as torch), else unchanged."""
    arr = a._array
    if dtype is not None:
        return arr.astype(dtype.np)
    if arr.dtype.kind in "biu":
        return arr.astype(np.int64)
    return arr


def _conj(t):
    """``t.conj()`` for a complex tensor (a complex gradient's conjugate derivative), else
    ``t``."""
    return t.conj() if t._array.dtype.kind == "c" else t


def _low(arr):
    """True for bfloat16 and float16, which torch accumulates in float32 and rounds back."""
    return arr.dtype.itemsize == 2 and arr.dtype.kind in "fV"


class Sum(Function):
    node_name = "SumBackward0"

    @staticmethod
    def forward(ctx, a, dtype):
        arr = a._array
        if dtype is not None or arr.dtype.kind in "biuV":
            arr = _accumulation_array(a, dtype)
            if arr.dtype.kind == "V":   # (bfloat16: accumulated in float32, rounded back)
                xp = xp_of(a)
                return Tensor._wrap(xp.asarray(arr.astype(np.float32).sum()).astype(arr.dtype))
        # (``arr.sum()`` without the Python wrapper around ``add.reduce``)
        return Tensor._wrap(xp_of(a).add.reduce(arr, axis=None, dtype=arr.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        return Expand.apply(grad_output, ctx._input_meta(0)[0]), None

    @staticmethod
    def array_backward(ctx, grad_output):
        shape = ctx._input_meta(0)[0]
        g = grad_output._array
        if _prod(shape) > 4096:     # large: a read-only broadcast view, no memory
            return Tensor._wrap(_broadcast_scalar(g, shape)), None
        out = xp_of(grad_output).empty(shape, g.dtype)   # small: filled (faster; a leaf can
        out.fill(g)                                     # keep it as its .grad)
        return Tensor._wrap(out), None


class SumDim(Function):
    node_name = "SumBackward1"

    @staticmethod
    def forward(ctx, a, dims, keepdim, dtype):
        arr = _accumulation_array(a, dtype)
        ctx.dims, ctx.keepdim = dims, keepdim
        if arr.dtype.kind == "V":   # (bfloat16: accumulated in float32, rounded back)
            out = arr.astype(np.float32).sum(axis=dims, keepdims=keepdim)
            return Tensor._wrap(c_order(xp_of(a).asarray(out).astype(arr.dtype)))
        return Tensor._wrap(c_order(arr.sum(axis=dims, keepdims=keepdim, dtype=arr.dtype)))

    @staticmethod
    def backward(ctx, grad_output):
        return _expand_back(grad_output, ctx._input_meta(0)[0], ctx.dims, ctx.keepdim), \
            None, None, None


class Mean(Function):
    node_name = "MeanBackward0"

    @staticmethod
    def forward(ctx, a, dtype):
        arr = a._array if dtype is None else a._array.astype(dtype.np)
        if arr.dtype.kind not in "fcV":
            raise RuntimeError("mean(): could not infer output dtype. %s dtype must be either "
                               "a floating point or complex dtype. Got: %s"
                               % ("Input" if dtype is None else "Optional",
                                  _dt.scalar_type_name(arr.dtype)))
        with errstate(invalid="ignore", divide="ignore"):
            if _low(arr):    # (the float32 sum divided, then rounded)
                s = arr.astype(np.float32).sum()
                return Tensor._wrap(xp_of(a).asarray(s / np.float32(arr.size)).astype(arr.dtype))
            return Tensor._wrap(arr.sum(dtype=arr.dtype) / arr.dtype.type(arr.size))

    @staticmethod
    def backward(ctx, grad_output):
        shape = ctx._input_meta(0)[0]
        n = _prod(shape)      # (expanded, then divided: a dense gradient, as torch's)
        g = expand(grad_output, shape)
        return DivScalar.apply(g, n) if n else g, None


class MeanDim(Function):
    node_name = "MeanBackward1"

    @staticmethod
    def forward(ctx, a, dims, keepdim, dtype):
        arr = a._array if dtype is None else a._array.astype(dtype.np)
        if arr.dtype.kind not in "fcV":
            raise RuntimeError("mean(): could not infer output dtype. %s dtype must be either "
                               "a floating point or complex dtype. Got: %s"
                               % ("Input" if dtype is None else "Optional",
                                  _dt.scalar_type_name(arr.dtype)))
        ctx.dims, ctx.keepdim = dims, keepdim
        n = 1
        for d in dims:
            n *= arr.shape[d]
        with errstate(invalid="ignore", divide="ignore"):
            if _low(arr):    # (the float32 sum divided, then rounded)
                s = arr.astype(np.float32).sum(axis=dims, keepdims=keepdim) / np.float32(n)
                return Tensor._wrap(c_order(xp_of(a).asarray(s).astype(arr.dtype)))
            return Tensor._wrap(c_order(arr.sum(axis=dims, keepdims=keepdim, dtype=arr.dtype)
                                        / arr.dtype.type(n)))

    @staticmethod
    def backward(ctx, grad_output):
        shape = ctx._input_meta(0)[0]
        n = 1
        for d in ctx.dims:
            n *= shape[d]
        g = _expand_back(grad_output, shape, ctx.dims, ctx.keepdim)
        return DivScalar.apply(g, n) if n else g, None, None, None


def sum_to_size(input, *size):
    """Sum ``input`` down to ``size`` (which must broadcast to ``input.shape``)."""
    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    have = input._array.shape
    lead = len(have) - len(shape)
    if lead < 0 or _b.any(s != h and s != 1 for s, h in zip(shape, have[lead:])):
        raise RuntimeError("size {%s} is not expandable to size {%s}."
                           % (list(shape), list(have)))
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and have[lead + i] != 1)
    out = SumDim.apply(input, dims, True, None) if dims else input
    # (torch's at::sum_to: a sum keeping the dims, then a view dropping the leading ones)
    return view(out, shape) if lead else out


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Sum of all elements, or over ``dim`` (int or tuple); ints sum to int64.

    Example:
        >>> import ember
        >>> ember.tensor([[1., 2.], [3., 4.]]).sum(dim=0)
        tensor([4., 6.])
    """
    d = _grad_dtype(input, dtype)
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):
        if keepdim:
            dims = tuple(range(input._array.ndim))
            return SumDim.apply(input, dims, True, d)
        return Sum.apply(input, d)
    return SumDim.apply(input, _dims_or_all(dim, input._array.ndim, "sum"), keepdim, d)


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mean of all elements, or over ``dim`` (int or tuple); floating inputs only."""
    d = None if dtype is None else _dt.to_dtype(dtype)
    if d is None and input._array.dtype.kind not in "fcV":
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either "
                           "a floating point or complex dtype. Got: %s"
                           % _dt.scalar_type_name(input._array.dtype))
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):
        if keepdim:
            return MeanDim.apply(input, tuple(range(input._array.ndim)), True, d)
        return Mean.apply(input, d)
    return MeanDim.apply(input, _dims_or_all(dim, input._array.ndim, "mean"), keepdim, d)


_max_t = _rt.max
_min_t = _rt.min
_median_t = _rt.median
_nanmedian_t = _rt.nanmedian
_mode_t = _rt.mode
_aminmax_t = _rt.aminmax


def _grad_dtype(input, dtype):
    """``dtype`` as an ember dtype; torch refuses an integral one for an input that requires
    grad (its result could not carry a gradient)."""
    if dtype is None:
        return None
    d = _dt.to_dtype(dtype)
    if _dt.kind(d.np) not in "fc" and input._requires_grad and _grad_state.enabled:
        raise RuntimeError("Autograd not support dtype: %s" % _dt.scalar_type_name(d.np))
    return d


_COMPLEX_KERNELS = {"max": "max_all", "min": "min_all", "median": "median_cpu",
                    "nanmedian": "median_cpu", "mode": "mode_cpu", "amax": "max_values_cpu",
                    "amin": "min_values_cpu"}


def _nonempty(op, arr, dim=None):
    """Raise torch's error for a reduction with no identity over an empty input or dim."""
    if dim is None:
        if arr.size == 0:
            raise RuntimeError("%s(): Expected reduction dim to be specified for input.numel() == "
                               "0. Specify the reduction dim with the 'dim' argument." % op)
    elif arr.ndim and arr.shape[dim] == 0:
        raise IndexError("%s(): Expected reduction dim %d to have non-zero size." % (op, dim))


def _keep_shape(shape, dims):
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def _dims_or_all(dim, ndim, op):
    """``dim`` as a sorted tuple; None or an empty tuple/list means every dim."""
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):
        return tuple(range(ndim))
    dims = wrap_dims(dim, ndim, op)
    return dims if ndim else ()


def _float_only(op, arr):
    if _dt.kind(arr.dtype) not in "fc":
        raise RuntimeError("%s(): input dtype should be either floating point or complex. Got %s "
                           "instead." % (op, _dt.scalar_type_name(arr.dtype)))


def _argmax_kernel(arr, dim):
    return get_array_module(arr).argmax(arr, axis=dim, keepdims=True)


def _argmin_kernel(arr, dim):
    return get_array_module(arr).argmin(arr, axis=dim, keepdims=True)


def _first_nan(arr, dim, idx):
    """Point ``idx`` at the first nan of every slice that holds one (nan wins, as torch)."""
    if _dt.kind(arr.dtype) == "f":
        xp = get_array_module(arr)
        nan = xp.isnan(arr)
        has = nan.any(axis=dim, keepdims=True)
        if has.any():
            idx = xp.where(has, xp.argmax(nan, axis=dim, keepdims=True), idx)
    return idx


def _sortable(arr):
    """``arr`` as NumPy sorts it with NaN last (ml_dtypes' bfloat16 sort does not: float32)."""
    return arr.astype(np.float32) if arr.dtype.kind == "V" else arr


def _median_kernel(arr, dim):
    order = get_array_module(arr).argsort(_sortable(arr), axis=dim, kind="stable")
    k = (arr.shape[dim] - 1) // 2
    return _first_nan(arr, dim, _along(order, dim, k, k + 1))


def _nanmedian_kernel(arr, dim):
    xp = get_array_module(arr)
    order = xp.argsort(_sortable(arr), axis=dim, kind="stable")
    n_valid = (~xp.isnan(arr)).sum(axis=dim, keepdims=True) if _dt.kind(arr.dtype) == "f" else \
        xp.full(_keep_shape(arr.shape, (dim,)), arr.shape[dim])
    k = xp.maximum(n_valid - 1, 0) // 2
    return xp.take_along_axis(order, k, axis=dim)


def _mode_kernel(arr, dim):
    xp = get_array_module(arr)
    moved = xp.moveaxis(arr, dim, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    r, n = rows.shape
    ranks, dense, order = _ranks(rows)
    # how often each rank occurs in its row (the ranks of row i are counted at i * n + rank)
    offsets = (xp.arange(r, dtype=np.int64) * n).reshape(r, 1)
    counts = xp.bincount((dense + offsets).reshape(-1), minlength=r * n).reshape(r, n)
    best = counts.argmax(axis=-1).reshape(r, 1)   # NOTE: the smallest of the most frequent
    # NOTE: torch reports the value's last occurrence: the end of its run in the stable order
    last = xp.take_along_axis(xp.cumsum(counts, axis=-1), best, axis=-1) - 1
    idx = xp.take_along_axis(order, last, axis=-1)
    if n > 16:   # ... in the order std::sort leaves the rows where the value repeats
        value = xp.take_along_axis(rows, idx, axis=-1)
        redo = xp.take_along_axis(counts, best, axis=-1) > 1
        if _dt.kind(value.dtype) in "fc":
            redo &= ~xp.isnan(value)
        todo = xp.flatnonzero(redo).tolist()
        if todo:
            bests = best.reshape(-1).tolist()
            for i in todo:
                idx[i, 0] = _last_after_std_sort(ranks[i].tolist(), bests[i])
    if _dt.kind(rows.dtype) == "f" and r and n:
        # NOTE: a nan breaks std::sort's ordering and never equals its neighbour: those rows
        # are replayed on the values themselves
        for i in xp.flatnonzero(xp.isnan(rows).any(axis=-1)).tolist():
            idx[i, 0] = _mode_with_nan(rows[i].tolist())
    return xp.moveaxis(idx.reshape(moved.shape[:-1] + (1,)), -1, dim)


def _mode_with_nan(values):
    """torch's CPU mode of one row (a list of floats holding a nan): std::sort the
    ``(value, index)`` pairs by value, then keep the first longest run of equal values' last
    index."""
    pairs = list(zip(values, range(len(values))))
    _std_sort(pairs, 0, len(pairs))
    best, best_freq, freq = 0, 0, 0
    for i, (v, j) in enumerate(pairs):
        freq += 1
        if i == len(pairs) - 1 or v != pairs[i + 1][0]:
            if freq > best_freq:
                best, best_freq = j, freq
            freq = 0
    return best


def _last_after_std_sort(keys, key):
    """The index of the last ``key`` in ``keys`` (a row's value ranks, a list) once torch's
    CPU mode has std::sort-ed the row."""
    pairs = list(zip(keys, range(len(keys))))
    _std_sort(pairs, 0, len(pairs))
    return [i for k, i in pairs if k == key][-1]


# the value-picking reductions over one dim: op -> (index kernel, torch's node name)
_SELECT = {"max": (_argmax_kernel, "MaxBackward0"), "min": (_argmin_kernel, "MinBackward0"),
           "median": (_median_kernel, "MedianBackward1"),
           "nanmedian": (_nanmedian_kernel, "NanmedianBackward1"),
           "mode": (_mode_kernel, "ModeBackward0")}


class _SelectDim(Function):
    """A reduction over one dim that picks an element (``op`` of ``_SELECT``): values and their
    int64 indices.

    The gradient flows to the picked element only (torch's value-selecting backward).
    """

    node_name = "MaxBackward0"

    @staticmethod
    def forward(ctx, a, dim, keepdim, op):
        kernel, name = _SELECT[op]
        ctx.set_node_name(name)
        arr = a._array
        if arr.ndim == 0:
            arr = arr.reshape(1)
        idx = c_order(kernel(arr, dim).astype(np.int64))
        values = get_array_module(arr).take_along_axis(arr, idx, axis=dim)
        if not keepdim or a._array.ndim == 0:
            values, idx = values.squeeze(dim), idx.squeeze(dim)
            if a._array.ndim == 0:
                values, idx = values.reshape(()), idx.reshape(())
        indices = Tensor._wrap(idx)
        ctx.dim = dim
        ctx.save_for_backward(indices)
        return Tensor._wrap(values), indices

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        indices, = ctx.saved_tensors
        shape = ctx._input_meta(0)[0]
        kept = _keep_shape(shape, (ctx.dim,)) if shape else (1,)
        out = _ScatterDim.apply(reshape(grad_values, kept), reshape(indices, kept), ctx.dim,
                                tuple(shape) or (1,))
        return (reshape(out, shape) if not shape else out), None, None, None


def _evenly(grad_output, a, out, dims, keepdim, nan_ties=True):
    """Spread the gradient evenly over the elements equal to the result (ties share it).

    With ``nan_ties`` a nan result matches the nan inputs (max, min, median); without it
    (amax, amin) nothing matches and the gradient is nan, as torch's ``scale_grad_by_count``.
    """
    from .comparison import where
    shape = a._array.shape
    res = out._array if keepdim or not dims else out._array.reshape(_keep_shape(shape, dims))
    arr = a._array
    xp = get_array_module(arr)
    mask = arr == res
    if nan_ties and _dt.kind(arr.dtype) == "f":
        mask |= xp.isnan(arr) & xp.isnan(res)
    count = mask.sum(axis=dims, keepdims=True) if dims else mask.astype(np.int64)
    g = _expand_back(grad_output, shape, dims, keepdim)
    if not nan_ties:
        with errstate(divide="ignore", invalid="ignore"):
            inv = Tensor._wrap((1.0 / count).astype(grad_output._array.dtype))
        return g * inv * Tensor._wrap(mask)
    scale = Tensor._wrap((mask / xp.maximum(count, 1)).astype(grad_output._array.dtype))
    return where(Tensor._wrap(mask), g * scale, 0.0)


def _max_all(arr, axis, keepdims):
    return arr.max(axis=axis, keepdims=keepdims)


def _min_all(arr, axis, keepdims):
    return arr.min(axis=axis, keepdims=keepdims)


def _lower_median(arr, axis, keepdims):
    xp = get_array_module(arr)
    flat = arr.reshape(-1)
    if flat.size == 0 or _dt.kind(flat.dtype) == "f" and xp.isnan(flat).any():
        return xp.full((), np.nan, dtype=arr.dtype)
    return flat[xp.argsort(_sortable(flat), kind="stable")[(flat.size - 1) // 2]]


def _lower_nanmedian(arr, axis, keepdims):
    xp = get_array_module(arr)
    flat = arr.reshape(-1)
    if _dt.kind(flat.dtype) == "f":
        flat = flat[~xp.isnan(flat)]
    if flat.size == 0:
        return xp.full((), np.nan, dtype=arr.dtype)
    return flat[xp.argsort(_sortable(flat), kind="stable")[(flat.size - 1) // 2]]


# the reductions over ``dims`` whose ties share the gradient:
# op -> (kernel, torch's node name, whether a nan result matches the nan inputs)
_EXTREME = {"max": (_max_all, "MaxBackward1", True), "min": (_min_all, "MinBackward1", True),
            "amax": (_max_all, "AmaxBackward0", False),
            "amin": (_min_all, "AminBackward0", False),
            "median": (_lower_median, "MedianBackward0", True),
            "nanmedian": (_lower_nanmedian, "NanmedianBackward0", True)}


class _ExtremeAll(Function):
    """max/min/median/amax/amin (``op`` of ``_EXTREME``) over ``dims``: the gradient is shared
    evenly by the ties."""

    node_name = "AmaxBackward0"

    @staticmethod
    def forward(ctx, a, dims, keepdim, op):
        kernel, name, ctx.nan_ties = _EXTREME[op]
        ctx.set_node_name(name)
        arr = a._array
        out = Tensor._wrap(c_order(xp_of(a).asarray(kernel(arr, dims, keepdim), dtype=arr.dtype)))
        ctx.dims, ctx.keepdim = dims, keepdim
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        a, out = ctx.saved_tensors
        return _evenly(grad_output, a, out, ctx.dims, ctx.keepdim, ctx.nan_ties), None, None, \
            None


def _select_reduce(op, rtype, input, dim, keepdim):
    arr = input._array
    if dim is not None:     # (torch checks the reduced size before the dtype)
        _nonempty("median" if op == "nanmedian" else op, arr, wrap_dim(dim, arr.ndim, op))
    empty_all = dim is None and arr.size == 0 and op in ("median", "nanmedian")
    if dim is None and op in ("max", "min"):
        _nonempty(op, arr)
    if arr.dtype == np.bool_ and op in ("median", "nanmedian") and not empty_all:
        raise NotImplementedError("\"median_%s\" not implemented for 'Bool'"
                                  % ("cpu" if dim is None else "out"))
    if arr.dtype.kind == "c" and not empty_all:
        if dim is None or op not in ("max", "min"):
            not_implemented_for(arr, _COMPLEX_KERNELS[op] if dim is None else "median_out", "c")
        raise RuntimeError("%s(): does not support complex input" % op)
    if dim is None:
        if op not in ("median", "nanmedian"):     # (those give nan for an empty tensor)
            _nonempty(op, arr)
        elif empty_all and arr.dtype.kind == "c" and input._requires_grad and _grad_state.enabled:
            raise RuntimeError("%s does not support automatic differentiation for outputs with "
                               "complex dtype." % op)
        return _ExtremeAll.apply(input, tuple(range(arr.ndim)), False, op)
    d = wrap_dim(dim, arr.ndim, op)
    _nonempty(op, arr, d)
    return rtype(*_SelectDim.apply(input, d, keepdim, op))


def max(input, dim=None, keepdim=False, *, out=None):
    """Largest element; with ``dim``, ``(values, indices)``; with a tensor, ``maximum``.

    Example:
        >>> import ember
        >>> ember.tensor([[1., 5.], [7., 2.]]).max(dim=1).indices
        tensor([1, 0])
    """
    if isinstance(dim, Tensor):
        from .arithmetic import maximum
        return maximum(input, dim)
    return _select_reduce("max", _max_t, input, dim, keepdim)


def min(input, dim=None, keepdim=False, *, out=None):
    """Smallest element; with ``dim``, ``(values, indices)``; with a tensor, ``minimum``."""
    if isinstance(dim, Tensor):
        from .arithmetic import minimum
        return minimum(input, dim)
    return _select_reduce("min", _min_t, input, dim, keepdim)


def median(input, dim=None, keepdim=False, *, out=None):
    """The lower median; with ``dim``, ``(values, indices)``. nan propagates."""
    return _select_reduce("median", _median_t, input, dim, keepdim)


def nanmedian(input, dim=None, keepdim=False, *, out=None):
    """The lower median ignoring nan; with ``dim``, ``(values, indices)``."""
    return _select_reduce("nanmedian", _nanmedian_t, input, dim, keepdim)


def mode(input, dim=-1, keepdim=False, *, out=None):
    """The most frequent value along ``dim`` (smallest on ties) and its last index."""
    arr = input._array
    d = wrap_dim(dim, arr.ndim, "mode")
    _nonempty("mode", arr, d)
    if arr.ndim and arr.size:
        not_implemented_for(arr, "mode_cpu", "c")
    elif arr.dtype.kind == "c" and input._requires_grad and _grad_state.enabled:
        # (a 0-d or empty tensor runs no kernel)
        raise RuntimeError("mode does not support automatic differentiation for outputs with "
                           "complex dtype.")
    return _mode_t(*_SelectDim.apply(input, d, keepdim, "mode"))


def _amax_amin(op, input, dim, keepdim):
    arr = input._array
    dims = _dims_or_all(dim, arr.ndim, op)
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):
        _nonempty(op, arr)
    given = (dim,) if isinstance(dim, (int, np.integer)) else dim or ()
    for d in given:     # (torch's message names each dim as given, in the given order)
        if arr.ndim and arr.shape[d] == 0:
            raise IndexError("%s(): Expected reduction dim %d to have non-zero size." % (op, d))
    if arr.size == 0 and not dims:
        _nonempty(op, arr)
    if arr.dtype.kind == "c" and arr.size == 0:     # (an empty result runs no kernel)
        if input._requires_grad and _grad_state.enabled:
            raise RuntimeError("%s does not support automatic differentiation for outputs with "
                               "complex dtype." % op)
    else:
        not_implemented_for(arr, _COMPLEX_KERNELS[op], "c")
    return _ExtremeAll.apply(input, dims, keepdim, op)


def amax(input, dim=(), keepdim=False, *, out=None):
    """Largest values over ``dim`` (int or tuple; all dims by default); ties share the gradient."""
    return _amax_amin("amax", input, dim, keepdim)


def amin(input, dim=(), keepdim=False, *, out=None):
    """Smallest values over ``dim`` (int or tuple; all dims by default); ties share the gradient."""
    return _amax_amin("amin", input, dim, keepdim)


class Aminmax(Function):
    """``(min, max)`` over ``dims`` in one node; ties share each gradient evenly."""

    node_name = "AminmaxBackward0"

    @staticmethod
    def forward(ctx, a, dims, keepdim):
        arr = a._array
        xp = xp_of(a)
        lo = Tensor._wrap(c_order(xp.asarray(_min_all(arr, dims, keepdim), dtype=arr.dtype)))
        hi = Tensor._wrap(c_order(xp.asarray(_max_all(arr, dims, keepdim), dtype=arr.dtype)))
        ctx.dims, ctx.keepdim = dims, keepdim
        ctx.save_for_backward(a, lo, hi)
        return lo, hi

    @staticmethod
    def backward(ctx, grad_min, grad_max):
        a, lo, hi = ctx.saved_tensors
        g = None
        if grad_min is not None:
            g = _evenly(grad_min, a, lo, ctx.dims, ctx.keepdim, nan_ties=False)
        if grad_max is not None:
            gmax = _evenly(grad_max, a, hi, ctx.dims, ctx.keepdim, nan_ties=False)
            g = gmax if g is None else g + gmax
        return g, None, None


def aminmax(input, *, dim=None, keepdim=False, out=None):
    """``(min, max)`` over ``dim`` or the whole tensor, as ``torch.return_types.aminmax``."""
    arr = input._array
    if dim is None:
        if arr.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                               "the operation has no identity.")
        not_implemented_for(arr, "aminmax_cpu", "c")
        dims = tuple(range(arr.ndim))
    else:
        d = wrap_dim(dim, arr.ndim, "aminmax")
        if arr.ndim and arr.shape[d] == 0:
            raise IndexError("aminmax: Expected reduction dim %d to have non-zero size." % d)
        if arr.ndim == 0 and arr.dtype.kind == "c":
            raise RuntimeError("aminmax not implemented for %s" % _dt.scalar_type_name(arr.dtype))
        not_implemented_for(arr, "aminmax_cpu", "c")
        dims = (d,) if arr.ndim else ()
    return _aminmax_t(*Aminmax.apply(input, dims, keepdim))


def _arg(op, kernel, input, dim, keepdim):
    arr = input._array
    if arr.dtype == np.bool_:
        raise RuntimeError("%s(): does not support bool input" % op)
    if arr.dtype.kind == "c":
        raise RuntimeError("%s(): does not support complex input" % op)
    if dim is None:
        if arr.size == 0:
            raise IndexError("%s(): Expected reduction dim to be specified for input.numel() == 0."
                             % op)
        idx = _first_nan(arr.reshape(-1), 0, kernel(arr.reshape(-1), 0))
        out = idx.reshape((1,) * arr.ndim if keepdim else ())
        return Tensor._wrap(out.astype(np.int64))
    d = wrap_dim(dim, arr.ndim, op)
    _nonempty(op, arr, d)
    a = arr.reshape(1) if arr.ndim == 0 else arr
    idx = _first_nan(a, d, kernel(a, d))
    if not keepdim or arr.ndim == 0:
        idx = idx.squeeze(d).reshape(idx.shape[:d] + idx.shape[d + 1:] if arr.ndim else ())
    return Tensor._wrap(idx.astype(np.int64))


def argmax(input, dim=None, keepdim=False):
    """Index of the largest element (flattened when ``dim`` is None; first on ties)."""
    return _arg("argmax", _argmax_kernel, input, dim, keepdim)


def argmin(input, dim=None, keepdim=False):
    """Index of the smallest element (flattened when ``dim`` is None; first on ties)."""
    return _arg("argmin", _argmin_kernel, input, dim, keepdim)


class Prod(Function):
    """The product of all elements (``dim`` None) or along ``dim`` (torch's ProdBackward1)."""

    node_name = "ProdBackward0"

    @staticmethod
    def forward(ctx, a, dim, keepdim, dtype):
        if dim is not None:
            ctx.set_node_name("ProdBackward1")
        arr = _accumulation_array(a, dtype)
        ctx.dim, ctx.keepdim = dim, keepdim
        axis = dim if arr.ndim else None
        with errstate(over="ignore", invalid="ignore"):
            if _low(arr):    # (accumulated in float32, rounded back)
                out = xp_of(a).asarray(arr.astype(np.float32).prod(axis=axis, keepdims=keepdim))
                out = Tensor._wrap(c_order(out.astype(arr.dtype)))
            else:
                out = Tensor._wrap(c_order(arr.prod(axis=axis, keepdims=keepdim)))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        a, out = ctx.saved_tensors
        shape = a._array.shape
        dims = tuple(range(len(shape))) if ctx.dim is None or not shape else (ctx.dim,)
        if not shape:
            return grad_output, None, None, None     # (torch passes a 0-d input's through)
        g = _expand_back(grad_output, shape, dims, ctx.keepdim)
        zeros = a._array == 0
        if not zeros.any():
            return g * _conj(_expand_back(out, shape, dims, ctx.keepdim) / a), None, None, None
        if ctx.dim is None and not _grad_state.enabled and int(zeros.sum()) > 1:
            # NOTE: torch's shortcut: with two zeros every product of the others is zero
            return (Tensor._wrap(xp_of(a).zeros(shape, grad_output._array.dtype)), None, None,
                    None)
        # NOTE: with zeros, the product of the other elements (exclusive products both ways).
        arr = a._array.reshape(-1) if ctx.dim is None else a._array
        d = 0 if ctx.dim is None else ctx.dim
        flip = xp_of(a).flip
        with errstate(over="ignore", invalid="ignore"):
            left = _exclusive_cumprod(arr, d)
            right = flip(_exclusive_cumprod(flip(arr, axis=d), d), axis=d)
            others = (left * right).reshape(shape).astype(grad_output._array.dtype)
        others = Tensor._wrap(others)
        return g * _conj(others), None, None, None


def _exclusive_cumprod(arr, d):
    """The products of the elements before each one along ``d`` (1 for the first)."""
    xp = get_array_module(arr)
    if not arr.shape[d]:
        return arr
    # NOTE: torch's order: a 1 put in front, then the running product; a complex infinity times
    # that 1 already gives a NaN imaginary part (0 * inf), as in torch's gradient
    shifted = xp.concatenate([xp.ones_like(_along(arr, d, 0, 1)), _along(arr, d, 0, -1)], axis=d)
    return xp.cumprod(shifted, axis=d)


def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Product of all elements, or along the single ``dim``; ints multiply as int64."""
    d = _grad_dtype(input, dtype)
    if dim is None:
        return Prod.apply(input, None, False, d)
    if not isinstance(dim, (int, np.integer)):
        raise TypeError("prod(): argument 'dim' must be int, not %s" % type(dim).__name__)
    return Prod.apply(input, wrap_dim(dim, input._array.ndim, "prod"), keepdim, d)


def _correction(op, dim, unbiased, correction):
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError("%s() received an invalid combination of arguments: can't specify "
                        "both unbiased and correction" % op)
    if correction is None:
        correction = 0 if unbiased is False else 1
    return dim, correction


class Var(Function):
    node_name = "VarBackward0"

    @staticmethod
    def forward(ctx, a, dims, correction, keepdim, whole=False):
        arr = a._array
        if arr.dtype.kind not in "fcV":
            raise RuntimeError("std and var only support floating point and complex dtypes")
        ctx.whole = whole or arr.ndim == 0
        low = arr.dtype if _low(arr) else None
        if low is not None:    # (computed in float32, rounded back)
            arr = arr.astype(np.float32)
        n = 1
        for d in dims:
            n *= arr.shape[d]
        ctx.dims, ctx.keepdim, ctx.denom = dims, keepdim, n - correction
        with errstate(invalid="ignore", divide="ignore"):
            dev = arr - arr.sum(axis=dims, keepdims=True) / arr.dtype.type(n)
            denom = arr.dtype.type(_b.max(0, n - correction))
            if arr.dtype.kind == "c":   # (torch: the real and imaginary parts' variances added)
                out = ((dev.real * dev.real).sum(axis=dims, keepdims=keepdim) / denom.real
                       + (dev.imag * dev.imag).sum(axis=dims, keepdims=keepdim) / denom.real)
            else:
                out = (dev * dev).sum(axis=dims, keepdims=keepdim) / denom.real
        ctx.save_for_backward(a)
        return Tensor._wrap(c_order(xp_of(a).asarray(out, dtype=low or out.real.dtype)))

    @staticmethod
    def backward(ctx, grad_output):
        a, = ctx.saved_tensors
        return _var_backward(ctx, grad_output, a), None, None, None, None


def _var_backward(ctx, grad_output, a):
    g = _expand_back(grad_output, a._array.shape, ctx.dims, ctx.keepdim)
    if ctx.whole and ctx.denom <= 0:
        # NOTE: torch's rule for a variance over every element without degrees of freedom:
        # the gradient times inf where the element differs from the mean (nan where equal),
        # a constant in the input.
        arr = a._array
        xp = xp_of(a)
        with errstate(invalid="ignore", over="ignore"):
            if arr.dtype.kind == "c":     # (a complex division: an infinity's NaN part)
                m = arr.sum() / xp.asarray(_b.max(arr.size, 1), dtype=arr.dtype)
            else:
                m = mean(a.detach())._array
            k = xp.where(arr != m, np.inf, np.nan).astype(arr.real.dtype)
        return (g * Tensor._wrap(k)).to(a.dtype)
    scale = 2.0 / ctx.denom if ctx.denom else float("inf")
    return g * scale * (a - mean(a, ctx.dims, keepdim=True))


class Std(Function):
    node_name = "StdBackward0"

    @staticmethod
    def forward(ctx, a, dims, correction, keepdim, whole=False):
        v = Var.forward(ctx, a, dims, correction, keepdim, whole)
        va = v._array
        out = Tensor._wrap(xp_of(v).sqrt(va.astype(np.float32)).astype(va.dtype) if _low(va)
                           else xp_of(v).sqrt(va))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        a, out = ctx.saved_tensors
        return (_var_backward(ctx, _std_to_var_grad(grad_output, out), a), None, None, None,
                None)


def _std_to_var_grad(grad_output, out):
    """The gradient of the variance from that of its square root ``out``."""
    from .comparison import where
    # NOTE: zero where the std is 0 (torch masks the 1 / (2 * std) singularity).
    return where(out == 0, 0.0, grad_output / (out * 2))


def _dof_warning(input, dims, correction, op="var", stacklevel=3):
    n = 1
    for d in dims:
        n *= input._array.shape[d]
    if n - correction <= 0:
        warnings.warn("%s(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the reduction factor (input numel divided by output numel)." % op,
                      UserWarning, stacklevel=stacklevel)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Variance over ``dim`` with ``correction`` (1 by default: Bessel's, as ``unbiased``)."""
    dim, c = _correction("var", dim, unbiased, correction)
    _float_or_complex("std and var", input)
    dims = _dims_or_all(dim, input._array.ndim, "var")
    _dof_warning(input, dims, c)
    return Var.apply(input, dims, c, keepdim, dim is None)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Standard deviation over ``dim`` with ``correction`` (1 by default)."""
    dim, c = _correction("std", dim, unbiased, correction)
    _float_or_complex("std and var", input)
    dims = _dims_or_all(dim, input._array.ndim, "std")
    _dof_warning(input, dims, c, "std")
    return Std.apply(input, dims, c, keepdim, dim is None)


def _float_or_complex(op, input):
    if input._array.dtype.kind not in "fcV":
        raise RuntimeError("%s only support floating point and complex dtypes" % op)


class VarMean(Function):
    """``(var, mean)`` (``std``: ``(std, mean)``) over ``dims`` in one node, as torch's
    VarMeanBackward0 / StdMeanBackward0."""

    node_name = "VarMeanBackward0"

    @staticmethod
    def forward(ctx, a, dims, correction, keepdim, std, whole=False):
        if std:
            ctx.set_node_name("StdMeanBackward0")
        ctx.std = std
        v = (Std if std else Var).forward(ctx, a, dims, correction, keepdim, whole)
        m = MeanDim.forward(ctx, a, dims, keepdim, None)._array
        arr = a._array
        if arr.size and not bool(xp_of(a).isfinite(arr).all()):
            if arr.dtype.kind == "c":     # (torch: the real and imaginary parts separately)
                n = _prod(arr.shape[d] for d in dims)
                m = m.copy()
                for part in ("real", "imag"):
                    comp = getattr(arr, part)
                    with errstate(invalid="ignore"):
                        cm = comp.sum(axis=dims, keepdims=keepdim) / comp.dtype.type(n)
                    setattr(m, part, _welford_mean(comp, cm, dims, keepdim))
            else:
                m = _welford_mean(arr, m, dims, keepdim)
        return v, Tensor._wrap(c_order(m))

    @staticmethod
    def backward(ctx, grad_var, grad_mean):
        saved = ctx.saved_tensors
        a = saved[0]
        g = None
        if grad_var is not None:
            if ctx.std:
                grad_var = _std_to_var_grad(grad_var, saved[1])
            g = _var_backward(ctx, grad_var, a)
        if grad_mean is not None:
            shape = a._array.shape
            n = _prod(shape[d] for d in ctx.dims)
            gm = _expand_back(grad_mean / n if n else grad_mean, shape, ctx.dims, ctx.keepdim)
            g = gm if g is None else g + gm
        return g, None, None, None, None, None


def _welford_mean(arr, mean, dims, keepdim):
    """``mean`` (of the real ``arr`` over ``dims``) as torch's running (Welford) mean leaves it
    when an infinity is met: one stays only as the last element in order; any other is nan."""
    xp = get_array_module(arr)
    infs = xp.isinf(arr).sum(axis=dims, keepdims=keepdim)
    last = arr[tuple(slice(-1, None) if d in dims else slice(None) for d in range(arr.ndim))]
    last = last.reshape(infs.shape)
    fixed = xp.where((infs == 1) & xp.isinf(last), last, np.nan).astype(mean.dtype)
    return xp.where((infs > 0) & ~xp.isnan(mean), fixed, mean)


def _var_mean(op, input, dim, unbiased, keepdim, correction):
    dim, c = _correction(op, dim, unbiased, correction)
    _float_or_complex(op, input)
    dims = _dims_or_all(dim, input._array.ndim, op)
    _dof_warning(input, dims, c, op, 4)
    return VarMean.apply(input, dims, c, keepdim, op == "std_mean", dim is None)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var, mean)`` over ``dim``."""
    return _var_mean("var_mean", input, dim, unbiased, keepdim, correction)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std, mean)`` over ``dim``."""
    return _var_mean("std_mean", input, dim, unbiased, keepdim, correction)


class Logsumexp(Function):
    node_name = "LogsumexpBackward0"

    @staticmethod
    def forward(ctx, a, dims, keepdim):
        arr = a._array
        if arr.dtype.kind not in "fcV":
            arr = arr.astype(_dt.get_default_dtype().np)
        out_dtype = arr.dtype
        if _low(arr):    # (computed in float32, rounded back)
            arr = arr.astype(np.float32)
        xp = xp_of(a)
        with errstate(invalid="ignore", over="ignore", divide="ignore"):
            if arr.size:
                # (a complex input shifts by the largest real part, as torch)
                m = (arr.real if arr.dtype.kind == "c" else arr).max(axis=dims, keepdims=True)
                m = xp.where(xp.isinf(m), 0, m).astype(arr.dtype)
            else:
                m = xp.zeros(_keep_shape(arr.shape, dims), dtype=arr.dtype)
            out = xp.log(xp.exp(arr - m).sum(axis=dims, keepdims=True)) + m
        if not keepdim:
            out = out.reshape(tuple(s for i, s in enumerate(arr.shape) if i not in dims))
        out = Tensor._wrap(c_order(out.astype(out_dtype, copy=False)))
        ctx.dims, ctx.keepdim = dims, keepdim
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        from .unary import exp
        a, out = ctx.saved_tensors
        shape = a._array.shape
        g = _expand_back(grad_output, shape, ctx.dims, ctx.keepdim)
        return g * _conj(exp(a - _expand_back(out, shape, ctx.dims, ctx.keepdim))), None, None


def logsumexp(input, dim, keepdim=False, *, out=None):
    """``log(sum(exp(input), dim))`` computed without overflow."""
    if dim is None:
        raise TypeError("logsumexp(): argument 'dim' must be tuple of ints, not NoneType")
    return Logsumexp.apply(input, _dims_or_all(dim, input._array.ndim, "logsumexp"), keepdim)


class VectorNorm(Function):
    node_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx, a, p, dims, keepdim, dtype=None, given=None):
        arr = a._array
        if arr.dtype.kind not in "fcV":
            raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor "
                               "as input. Got %s" % _dt.scalar_type_name(arr.dtype))
        ctx.cast = None
        if dtype is not None and dtype.np != arr.dtype:     # (computed in ``dtype``, no node)
            ctx.cast = dtype
            arr = arr.astype(dtype.np)
        xp = xp_of(a)
        x = xp.abs(arr)
        out_dtype = x.dtype
        if _low(x):    # (computed in float32, rounded back)
            x = x.astype(np.float32)
        with errstate(over="ignore", invalid="ignore", divide="ignore"):
            if p != 0 and _prod(arr.shape[d] for d in dims) == 1:    # (one element: |x|, as
                out = x.sum(axis=dims, keepdims=keepdim)             # torch's kernel, any p)
            elif p == 2:
                out = xp.sqrt((x * x).sum(axis=dims, keepdims=keepdim))
            elif p == 1:
                out = x.sum(axis=dims, keepdims=keepdim)
            elif p == 0:
                out = (x != 0).sum(axis=dims, keepdims=keepdim)
            elif isinf(p):
                if _b.any(arr.shape[d] == 0 for d in dims):
                    raise RuntimeError("linalg.vector_norm cannot compute the %s norm on an "
                                       "empty tensor because the operation does not have an "
                                       "identity" % p)
                out = (x.max if p > 0 else x.min)(axis=dims, keepdims=keepdim)
            elif _b.any(arr.shape[d] == 0 for d in dims):     # (0, even for a nan p)
                out = xp.zeros(_keep_shape(arr.shape, dims) if keepdim else
                               tuple(s for i, s in enumerate(arr.shape) if i not in dims),
                               x.dtype)
            else:
                out = (x ** p).sum(axis=dims, keepdims=keepdim) ** (1.0 / p)
        out = Tensor._wrap(c_order(xp.asarray(out).astype(out_dtype)))   # (real for complex)
        ctx.p, ctx.dims, ctx.keepdim, ctx.given = p, dims, keepdim, given   # (given: as passed)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        a, out = ctx.saved_tensors
        if ctx.cast is None:
            return VectorNorm._input_grad(ctx, a, out, grad_output), None, None, None, None, None
        gi = VectorNorm._input_grad(ctx, a.to(ctx.cast), out, grad_output)
        return (None if gi is None else gi.to(a.dtype)), None, None, None, None, None

    @staticmethod
    def _input_grad(ctx, a, out, grad_output):
        from .comparison import where
        from .unary import abs
        from .unary import sgn as sign     # (sgn: sign for real tensors, z / |z| for complex)
        p, shape = ctx.p, a._array.shape
        g = _expand_back(grad_output, shape, ctx.dims, ctx.keepdim)
        norm = _expand_back(out, shape, ctx.dims, ctx.keepdim)
        if p == 0:
            return None   # NOTE: torch leaves the input's grad undefined
        if p == 1:
            return g * sign(a)
        if isinf(p):
            return _evenly(grad_output, abs(a), out, ctx.dims, ctx.keepdim) * sign(a)
        if p == 2:     # (torch's grad * (self / norm).masked_fill_(norm == 0, 0))
            return g * where(norm == 0, 0.0, a / norm)
        if p < 1:
            scaled = where(a == 0, 0.0, sign(a) * abs(a) ** (p - 1))
            return scaled * g * norm ** (1 - p)
        elif p < 2:
            gi = sign(a) * abs(a) ** (p - 1) * g / norm ** (p - 1)
        else:
            gi = a * abs(a) ** (p - 2) * g / norm ** (p - 1)
        # NOTE: a zero norm gives a zero gradient, as torch.
        return where(norm == 0, 0.0, gi)


def _check_norm_dtype(dtype, arr_dtype, op):
    """torch's ``check_linalg_norm_dtype``: a float or complex ``dtype`` of the input's kind
    that the input's dtype promotes to."""
    if dtype is None:
        return
    have = _dt.from_numpy_dtype(arr_dtype)
    if _dt.kind(dtype.np) not in "fcV":
        raise RuntimeError("%s: dtype should be floating point or complex, but got %s"
                           % (op, _dt.scalar_type_name(dtype.np)))
    cplx = _dt.kind(arr_dtype) == "c"
    if cplx != (_dt.kind(dtype.np) == "c"):
        kind = "complex" if cplx else "real"
        raise RuntimeError("%s: dtype should be %s for %s inputs, but got %s"
                           % (op, kind, kind, _dt.scalar_type_name(dtype.np)))
    if _dt.promote_types(have, dtype) != dtype:
        raise RuntimeError("%s: the dtype of the input (%s) should be convertible without "
                           "narrowing to the specified dtype (%s)"
                           % (op, _dt.scalar_type_name(arr_dtype), _dt.scalar_type_name(dtype.np)))


def _vector_norm(input, p, dim, keepdim, dtype):
    """``linalg.vector_norm(input, p, dim, keepdim, dtype=dtype)`` with torch's checks."""
    arr = input._array
    if arr.dtype.kind not in "fcV":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           "input. Got %s" % _dt.scalar_type_name(arr.dtype))
    given, p = (p, dim), float(p)
    if arr.size == 0 and (p < 0 or p == np.inf):
        if not dim or arr.ndim == 0:
            raise RuntimeError("linalg.vector_norm cannot compute the %g norm on an empty tensor "
                               "because the operation does not have an identity" % p)
        for d in dim:     # (torch's words, its missing space and the dim as given)
            if arr.shape[wrap_dim(d, arr.ndim)] == 0:
                raise RuntimeError("linalg.vector_norm cannot compute the %g norm on the "
                                   "dimension %dbecause this dimension is empty and the "
                                   "operation does not have an identity" % (p, d))
    _check_norm_dtype(dtype, arr.dtype, "linalg.vector_norm")
    dims = _dims_or_all(dim, arr.ndim, "linalg.vector_norm")
    return VectorNorm.apply(input, p, dims, keepdim, dtype, given)


def _matrix_norm(input, ord, dim, keepdim, dtype):
    """``linalg.matrix_norm(input, ord, dim, keepdim, dtype=dtype)`` for a string ``ord``,
    with torch's checks in torch's order."""
    arr = input._array
    if ord not in ("fro", "nuc"):
        raise RuntimeError("linalg.matrix_norm: Order %s not supported." % ord)
    if arr.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    name = _dt.scalar_type_name(arr.dtype)
    if arr.dtype.kind not in "fcV":
        raise RuntimeError("linalg.matrix_norm: Expected a floating point or complex tensor as "
                           "input. Got %s" % name)
    if ord == "nuc" and arr.dtype.itemsize == 2:
        raise RuntimeError("linalg.matrix_norm: Low precision dtypes not supported. Got %s"
                           % name)
    if len(dim) != 2:
        raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got %s"
                           % " ".join(str(d) for d in dim))
    d0, d1 = (wrap_dim(d, arr.ndim) for d in dim)
    if d0 == d1:
        raise RuntimeError("linalg.matrix_norm: dims must be different. Got (%d, %d)" % (d0, d1))
    _check_norm_dtype(dtype, arr.dtype, "linalg.matrix_norm")
    if ord == "fro":
        return _vector_norm(input, 2, [d0, d1], keepdim, dtype)
    a = input if dtype is None else to(input, dtype)
    # The sum of the singular values, in torch's graph: Permute, LinalgSvd, Sum (and with
    # keepdim Unsqueeze and the inverse Permute).
    perm = [d for d in range(arr.ndim) if d not in (d0, d1)] + [d0, d1]
    res = sum(permute(a, perm).svd(compute_uv=False).S, -1, keepdim)
    if keepdim:
        res = permute(unsqueeze(res, -1), [perm.index(d) for d in range(arr.ndim)])
    return res


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """The ``p``-norm of ``input`` over ``dim`` (torch's dispatch: numbers and ``'fro'`` over at
    most two dims give ``linalg.vector_norm``, other strings ``linalg.matrix_norm``)."""
    if dtype is not None:
        dtype = _dt.to_dtype(dtype)
    dims = None if dim is None else [dim] if isinstance(dim, (int, np.integer)) else list(dim)
    if isinstance(p, str):
        if p == "fro" and (dims is None or len(dims) <= 2):
            return _vector_norm(input, 2, dims, keepdim, dtype)
        if dims is None:
            dims = list(range(input._array.ndim))
        return _matrix_norm(input, p, dims, keepdim, dtype)
    return _vector_norm(input, 2.0 if p is None else p, dims, keepdim, dtype)


def _bool_reduce(op, input, dim, keepdim):
    arr = input._array
    xp = xp_of(input)
    fn = getattr(xp, op)
    dims = _dims_or_all(dim, arr.ndim, op)
    out = fn(arr, axis=dims, keepdims=keepdim) if arr.ndim else fn(arr)
    return Tensor._wrap(c_order(xp.asarray(out, dtype=np.uint8 if arr.dtype == np.uint8 else bool)))


def all(input, dim=None, keepdim=False, *, out=None):
    """True when every element (over ``dim``) is nonzero."""
    return _bool_reduce("all", input, dim, keepdim)


def any(input, dim=None, keepdim=False, *, out=None):
    """True when some element (over ``dim``) is nonzero."""
    return _bool_reduce("any", input, dim, keepdim)


def count_nonzero(input, dim=None):
    """Number of nonzero elements (over ``dim``), as int64."""
    arr = input._array
    xp = xp_of(input)
    dims = _dims_or_all(dim, arr.ndim, "count_nonzero")
    return Tensor._wrap(c_order(xp.asarray(xp.count_nonzero(arr, axis=dims), dtype=np.int64)))


class Nansum(Function):
    """``sum`` over ``dims`` treating nan as zero; nan elements get no gradient."""

    node_name = "NansumBackward0"

    @staticmethod
    def forward(ctx, a, dims, keepdim, dtype):
        arr = a._array
        xp = xp_of(a)
        clean = Tensor._wrap(xp.where(xp.isnan(arr), arr.dtype.type(0), arr))
        ctx.save_for_backward(a)
        return SumDim.forward(ctx, clean, dims, keepdim, dtype)

    @staticmethod
    def backward(ctx, grad_output):
        from .comparison import isnan
        a, = ctx.saved_tensors
        g = _expand_back(grad_output, a._array.shape, ctx.dims, ctx.keepdim)
        return g * isnan(a).logical_not(), None, None, None


def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """``sum`` treating nan as zero."""
    dims = _dims_or_all(dim, input._array.ndim, "nansum")
    if input._array.dtype.kind == "c":
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if input._array.dtype.kind not in "fV":    # (no nan: integers sum as int64)
        return sum(input, dim, keepdim, dtype=dtype)
    return Nansum.apply(input, dims, keepdim, _grad_dtype(input, dtype))


def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """``mean`` over the elements that are not nan."""
    from .comparison import isnan
    if input._array.dtype.kind not in "fcV":
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           "but got %s" % _dt.scalar_type_name(input._array.dtype))
    if dtype is not None and _dt.to_dtype(dtype).np.kind not in "fcV":
        raise RuntimeError("nanmean(): could not infer output dtype. Optional dtype must be "
                           "either a floating point or complex dtype. Got: %s"
                           % _dt.scalar_type_name(_dt.to_dtype(dtype).np))
    count = sum(~isnan(input), dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


def _cum_dtype(arr, dtype):
    if dtype is not None:
        return arr.astype(_dt.to_dtype(dtype).np)
    return arr.astype(np.int64) if arr.dtype.kind in "biu" else arr


class Cumsum(Function):
    node_name = "CumsumBackward0"

    @staticmethod
    def forward(ctx, a, dim, dtype):
        arr = _cum_dtype(a._array, dtype)
        ctx.dim = dim
        if arr.ndim == 0:
            return Tensor._wrap(arr.copy())
        if _low(arr):    # (accumulated in float32, each running sum rounded back)
            return Tensor._wrap(c_order(xp_of(a).cumsum(arr.astype(np.float32), axis=dim)
                                        .astype(arr.dtype)))
        return Tensor._wrap(c_order(xp_of(a).cumsum(arr, axis=dim, dtype=arr.dtype)))

    @staticmethod
    def backward(ctx, grad_output):
        if grad_output._array.ndim == 0:
            return grad_output, None, None
        return _ReverseCumsum.apply(grad_output, ctx.dim), None, None


class _ReverseCumsum(Function):
    """Sums from the end: the backward of ``cumsum``."""

    node_name = "CumsumBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        arr = a._array
        xp = xp_of(a)
        return Tensor._wrap(xp.flip(xp.cumsum(xp.flip(arr, dim), axis=dim, dtype=arr.dtype), dim)
                            .copy())

    @staticmethod
    def backward(ctx, grad_output):
        return Cumsum.apply(grad_output, ctx.dim, None), None


class Cumprod(Function):
    node_name = "CumprodBackward0"

    @staticmethod
    def forward(ctx, a, dim, dtype):
        arr = _cum_dtype(a._array, dtype)
        ctx.dim = dim
        with errstate(over="ignore", invalid="ignore"):
            if arr.ndim == 0:
                out = Tensor._wrap(arr.copy())
            elif _low(arr):    # (accumulated in float32, each running product rounded back)
                out = Tensor._wrap(c_order(xp_of(a).cumprod(arr.astype(np.float32), axis=dim)
                                           .astype(arr.dtype)))
            else:
                if arr.dtype.kind == "c" and arr.shape[dim]:
                    arr = _times_one_first(arr, dim)
                out = Tensor._wrap(c_order(xp_of(a).cumprod(arr, axis=dim, dtype=arr.dtype)))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        a, out = ctx.saved_tensors
        if a._array.ndim == 0 or a._array.size <= 1 or a._array.shape[ctx.dim] == 1:
            return grad_output, None, None      # (torch's shortcut: no division by the input)
        if not (a._array == 0).any():
            return _ReverseCumsum.apply(grad_output * _conj(out), ctx.dim) / _conj(a), None, None
        arr, out_arr = a._array, out._array
        if arr.dtype.kind == "c":
            arr, out_arr = arr.conj(), out_arr.conj()
        return _cumprod_grad_zeros(arr, out_arr, grad_output._array, ctx.dim), None, None


def _times_one_first(arr, dim):
    """``arr`` with its first slice along ``dim`` multiplied by ``1+0j``: torch's running
    product starts from one, so a first element ``inf+0j`` comes out ``inf+nanj``."""
    xp = get_array_module(arr)
    head = (slice(None),) * dim + (slice(0, 1),)
    tail = (slice(None),) * dim + (slice(1, None),)
    return xp.concatenate([arr[head] * xp.ones((), arr.dtype), arr[tail]], axis=dim)


def _cumprod_grad_zeros(arr, out, grad, dim):
    """Cumprod's gradient when the input (``arr``, conjugated as ``out``) holds zeros, as
    torch's O(n) version: before the first zero z1 ``sum_{k<=j<z1} g_j out_j / x_k``; at z1
    ``out_{z1-1} sum_{z1<=j<z2} g_j prod_{z1<i<=j} x_i``; zero after it."""
    xp = get_array_module(arr)
    x = xp.moveaxis(arr, dim, -1)
    g = xp.moveaxis(grad, dim, -1)
    y = xp.moveaxis(out, dim, -1)
    zero = xp.zeros((), g.dtype)
    count = xp.cumsum(x == 0, axis=-1)
    with errstate(over="ignore", invalid="ignore", divide="ignore"):
        before = count == 0
        w = xp.where(before, y * g, zero)
        rev = xp.flip(xp.cumsum(xp.flip(w, axis=-1), axis=-1), axis=-1)
        res = xp.where(before, rev / xp.where(before, x, 1), zero)
        span = count == 1
        first = xp.argmax(span, axis=-1)[..., None]
        at_first = span & (xp.arange(x.shape[-1]) == first)
        prods = xp.cumprod(xp.where(span & ~at_first, x, 1).astype(g.dtype), axis=-1)
        total = (prods * xp.where(span, g, zero)).sum(axis=-1, keepdims=True)
        lead = xp.take_along_axis(y, xp.maximum(first - 1, 0), axis=-1)
        total = total * xp.where(first == 0, 1, lead)
        res = xp.where(at_first, total, res)
    return Tensor._wrap(xp.ascontiguousarray(xp.moveaxis(res, -1, dim)))


def _no_bool_cum(arr, d, kernel):
    """torch has no bool cumulative kernel (a result of dtype bool with more than a copy to
    do: more than zero dims and elements)."""
    if d is not None and d.np == np.bool_ and arr.ndim and arr.size:
        raise NotImplementedError("\"%s\" not implemented for 'Bool'" % kernel)


def cumsum(input, dim, *, dtype=None, out=None):
    """Cumulative sum along ``dim``; ints sum as int64."""
    dim = wrap_dim(dim, input._array.ndim, "cumsum")       # (torch: the dim, then the dtype)
    d = _grad_dtype(input, dtype)
    _no_bool_cum(input._array, d, "cumsum_out_cpu")
    return Cumsum.apply(input, dim, dtype)


def cumprod(input, dim, *, dtype=None, out=None):
    """Cumulative product along ``dim``; ints multiply as int64."""
    dim = wrap_dim(dim, input._array.ndim, "cumprod")       # (torch: the dim, then the dtype)
    d = _grad_dtype(input, dtype)
    _no_bool_cum(input._array, d, "cumprod_out_cpu")
    return Cumprod.apply(input, dim, dtype)


def cumsum_(input, dim, *, dtype=None):
    from ._inplace import inplace
    return inplace(input, cumsum, dim, dtype=input.dtype if dtype is None else dtype)


def cumprod_(input, dim, *, dtype=None):
    from ._inplace import inplace
    return inplace(input, cumprod, dim, dtype=input.dtype if dtype is None else dtype)


# NumPy keyword names (axis=, keepdims=), as torch accepts them.
numpy_names(globals(), __all__)
