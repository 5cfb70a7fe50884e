"""In-place ops: write the result into the tensor's memory, bump its version, rebase its grad_fn."""
import warnings

import numpy as np

from ..autograd.function import Function
from ..autograd.graph import Node
from ..autograd.grad_mode import state as _state
from ..tensor import Tensor
from ._util import _OVERLAP_MSG, caller_stacklevel, cast, sum_to, writable, xp_of
from ..backend import backend_of, is_array, quiet
from ..backend._meta import MetaArray
from .shape import (AsStrided, _positions, _storage_size, _strided_geometry,
                    _strided_positions, take_flat, zero_flat)
from .. import dtypes as _dt
from ..dtypes import kind as _kind, scalar_type_name as _legacy

# torch's in-place casting rule: a result may not go down a kind (complex -> float -> integer ->
# bool); within a kind any size goes
_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}

_INFERENCE_INPLACE = ("Inplace update to inference tensor outside InferenceMode is not allowed."
                      "You can make a clone to get a normal tensor before doing inplace update."
                      "See https://github.com/pytorch/rfcs/pull/17 for more details.")
_LEAF_MSG = "a leaf Variable that requires grad is being used in an in-place operation."
# The in-place ops torch still runs on an expanded tensor (each written element lands in the
# memory its aliases share; backward through it raises), and the example of its warning
_EXPANDED_OK = {"masked_fill_": "tensor[mask] = scalar", "index_fill_": "tensor[mask] = scalar",
                "index_put_": "tensor[indices] = tensor", "fill_": None, "zero_": None}


def write(t, arr, op):
    """Copy ``arr`` into ``t``'s memory (broadcasting), checking dtype and shape, bump version."""
    dst = t._array
    if t._inference and not _state.inference:
        raise RuntimeError(_INFERENCE_INPLACE)
    if arr.dtype != dst.dtype and _KIND_RANK[_kind(arr.dtype)] > _KIND_RANK[_kind(dst.dtype)]:
        raise RuntimeError("result type %s can't be cast to the desired output type %s"
                           % (_legacy(arr.dtype), _legacy(dst.dtype)))     # (torch's words)
    if arr.shape != dst.shape:
        check_into(dst.shape, arr.shape)
    if dst.size == 0 or type(dst) is MetaArray:   # nothing to write (an expanded size-0
        # view is read-only; a meta tensor has no data)
        t._version_ref[0] += 1
        return
    if writable(dst) is None:
        if _write_expanded(dst, arr, op):
            t._version_ref[0] += 1
            return
        raise RuntimeError(_OVERLAP_MSG)
    if arr.dtype == dst.dtype:
        xp_of(t).copyto(dst, arr)
    else:
        with quiet():      # (an overflow to inf, a nan to an integer: silent, as torch)
            xp_of(t).copyto(dst, arr, casting="unsafe")
    t._version_ref[0] += 1


def _write_expanded(dst, arr, op):
    """Write the elements of ``arr`` that differ from the expanded ``dst``'s into the memory
    they share (the last one wins, as torch's serial kernel), for the ops of ``_EXPANDED_OK``
    (with torch's deprecation warning); False for other ops or memory not ours to write."""
    alias = _expanded_alias(dst) if op in _EXPANDED_OK else None
    if alias is None:
        return False
    if _EXPANDED_OK[op]:
        warnings.warn("Use of %s on expanded tensors is deprecated. Please clone() the tensor "
                      "before performing this operation. This also applies to advanced indexing "
                      "e.g. %s" % (op, _EXPANDED_OK[op]), UserWarning,
                      stacklevel=caller_stacklevel())
    xp = backend_of(dst).xp
    arr = xp.broadcast_to(cast(arr, dst.dtype), dst.shape)
    same = arr == dst
    if dst.dtype.kind == "f":    # (a -0.0 over 0.0 is a change; NaN over NaN is not)
        same = (same & (xp.signbit(arr) == xp.signbit(dst))) | (xp.isnan(arr) & xp.isnan(dst))
    alias[~same] = arr[~same]
    return True


def _expanded_alias(arr):
    """A writable array on the memory of the expanded (read-only, 0-stride) ``arr``, or None.

    NOTE: torch still writes ``t[indices] = v`` into an expanded tensor (deprecated, with a
    warning); each written element lands in the memory its aliases share."""
    if 0 not in arr.strides:
        return None
    owner = arr
    while getattr(owner, "base", None) is not None:
        owner = owner.base
    if not is_array(owner) or not owner.flags.writeable or not owner.flags.c_contiguous:
        return None
    backend = backend_of(owner)
    offset = backend.data_ptr(arr) - backend.data_ptr(owner)
    if offset % arr.itemsize or owner.dtype != arr.dtype:
        return None
    try:
        start = owner.reshape(-1)[offset // arr.itemsize:]
        return backend.as_strided(start, arr.shape, arr.strides)
    except (TypeError, ValueError):
        return None


def castable_into(input, *others, numbers=True):
    """torch's in-place checks, made before the kernel's: each tensor of ``others`` broadcasts to
    ``input``'s shape, then their result dtype (with the numbers among ``others`` unless
    ``numbers`` is False) may not go down a kind (float -> integer, ...) to fit ``input``."""
    for x in others:
        if isinstance(x, Tensor) and x._array.shape != input._array.shape:
            check_into(input._array.shape, x._array.shape)
    res = _dt.result_type(input, *(others if numbers else
                                   [x for x in others if isinstance(x, Tensor)]))
    dst = input._array.dtype
    if _KIND_RANK[_kind(res.np)] > _KIND_RANK[_kind(dst)]:
        raise RuntimeError("result type %s can't be cast to the desired output type %s"
                           % (_legacy(res.np), _legacy(dst)))


def check_into(dst_shape, src_shape):
    """torch's error when values of shape ``src_shape`` cannot be written into ``dst_shape``."""
    dst_shape, src_shape = tuple(dst_shape), tuple(src_shape)
    if not _bcastable(src_shape, dst_shape):
        for i, (a, b) in enumerate(zip(reversed(dst_shape), reversed(src_shape))):
            if a != b and a != 1 and b != 1:
                raise RuntimeError("The size of tensor a (%d) must match the size of tensor b "
                                   "(%d) at non-singleton dimension %d"
                                   % (a, b, max(len(dst_shape), len(src_shape)) - 1 - i))
    full = np.broadcast_shapes(src_shape, dst_shape)
    if full != dst_shape:
        raise RuntimeError("output with shape %s doesn't match the broadcast shape %s"
                           % (list(dst_shape), list(full)))


def _bcastable(a, b):
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


def inplace(t, fn, *args, **kwargs):
    """Apply ``fn(t, *args)`` and store the result in ``t`` itself, as torch's ``op_`` does."""
    if t._inference and not _state.inference:
        raise RuntimeError(_INFERENCE_INPLACE)
    if _state.enabled and (t._requires_grad or any(isinstance(a, Tensor) and a._requires_grad
                                                   for a in args)):
        return _recorded(t, fn, getattr(fn, "__name__", "op") + "_", args, kwargs)
    if len(args) == 1 and _direct(t, fn, args[0], kwargs):
        return t
    op = getattr(fn, "__name__", "op") + "_"
    out = fn(t, *args, **kwargs)
    write(t, out._array, op)
    return t


# The ufunc of each arithmetic op that ``_direct`` runs in place (by module and name: the
# arithmetic module sits above this one).
_DIRECT = {("ember.ops.arithmetic", "add"): "add", ("ember.ops.arithmetic", "sub"): "subtract",
           ("ember.ops.arithmetic", "mul"): "multiply"}
_UFUNCS = {}    # fn -> ufunc name or None, filled on first use of each fn


def _direct(t, fn, other, kwargs):
    """``t op= other`` as one ufunc writing into ``t``'s memory, for the common case (a float
    tensor and a tensor of its dtype that broadcasts to it, or a Python number; add, sub or
    mul, no alpha): the same values as ``fn`` then ``write``, without the temporary."""
    name = _UFUNCS.get(fn, False)
    if name is False:
        name = _UFUNCS[fn] = _DIRECT.get((getattr(fn, "__module__", None),
                                          getattr(fn, "__name__", None)))
    ufunc = None if name is None else getattr(xp_of(t), name)
    dst = t._array
    if ufunc is None or dst.dtype.kind != "f" or not dst.flags.writeable:
        return False
    for v in kwargs.values():
        if v is not None and v != 1:
            return False
    if isinstance(other, Tensor):
        src = other._array
        if type(src) is not type(dst) or src.dtype != dst.dtype or (src.shape != dst.shape and (
                src.ndim > dst.ndim or not _bcastable(src.shape, dst.shape) or
                np.broadcast_shapes(src.shape, dst.shape) != dst.shape)):
            return False
    elif type(other) is float or type(other) is int:
        src = other
    else:
        return False
    ufunc(dst, src, out=dst)
    t._version_ref[0] += 1
    return True


def _recorded(t, fn, op, args, kwargs):
    multi = t.__dict__.get("_multi_view")
    if multi is not None:
        raise RuntimeError(multi)
    if t.grad_fn is None and t._requires_grad:
        raise RuntimeError(_LEAF_MSG if t._base is None else "a view of " + _LEAF_MSG)
    base = t._base
    if base is not None:
        if base.grad_fn is None and base._requires_grad:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        return _recorded_view(t, base, fn, op, args, kwargs)
    old = Tensor._wrap(t._array.copy())
    old._requires_grad = t._requires_grad
    old.grad_fn = t.grad_fn
    old._output_nr = t._output_nr
    out = fn(old, *args, **kwargs)
    write(t, out._array, op)
    _saved_output_is(out, t)
    _output_dtype_is(out, t)
    t.grad_fn = out.grad_fn
    t._output_nr = out._output_nr
    t._requires_grad = out._requires_grad
    return t


def _output_dtype_is(out, t):
    """The node of ``out`` now outputs ``t`` (of ``t``'s dtype, when the op computed in a wider
    one): its gradient arrives in ``t``'s dtype, as in torch, where the node's output is ``t``
    itself (a broadcast input's gradient is then summed in that dtype and cast after)."""
    node = out.grad_fn
    dtype = t._array.dtype
    if node is None or out._array.dtype == dtype:
        return
    meta = list(node._out_meta)
    meta[out._output_nr] = (meta[out._output_nr][0], dtype)
    node._out_meta = tuple(meta)


def _saved_output_is(out, t):
    """A node that saved its output ``out`` now saves ``t`` (which holds those values), as in
    torch: modifying ``t`` in place again makes backward raise the version error."""
    node = out.grad_fn
    saved = getattr(node, "_saved", None)
    if not saved:
        return
    ref = out._version_ref
    entries = []
    for e in saved:
        if e is not None and e[3] is None and e[0]._version_ref is ref:
            s = Tensor._wrap(t._array)      # (the values as written: rounded to t's dtype)
            s._version_ref = t._version_ref
            e = (s, t._version_ref[0], e[2], None)
        entries.append(e)
    node._saved = tuple(entries)


class CopySlices(Function):
    """The base of a view after an in-place op on the view: view region from the new values."""

    node_name = "CopySlices"

    @staticmethod
    def forward(ctx, base, new_view, index, overlap=False):
        ctx.save_for_backward(Tensor._wrap(index))
        ctx.overlap = overlap
        return Tensor._wrap(base._array)

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.overlap:     # (torch copies the view's gradient into the base's: an overlap)
            raise RuntimeError(_OVERLAP_MSG)
        idx = ctx.saved_tensors[0]._array
        g_base = g_view = None
        if ctx.needs_input_grad[0]:
            g_base = zero_flat(grad_output, idx)
        if ctx.needs_input_grad[1]:
            g_view = take_flat(grad_output, idx)
        return g_base, g_view, None, None


def _copy_slices_next(node):
    """torch's CopySlices lists the base's edge, then the in-place op's edges after its first."""
    own = Node.next_functions.fget(node)
    op = own[1][0] if len(own) > 1 else None
    return own[:1] + (op.next_functions[1:] if isinstance(op, Node) else own[1:])


CopySlices._backward_cls.next_functions = property(_copy_slices_next)
CopySlices._backward_cls._namespace = "torch::autograd::"


def _recorded_view(t, base, fn, op, args, kwargs):
    idx = _positions(t._array, base._array)
    if idx is None:
        raise RuntimeError("%s: in-place operation on this view of a tensor that is part of the "
                           "graph is not supported by ember; clone() the view first" % op)
    old_base = Tensor._wrap(base._array.copy())
    old_base._requires_grad = base._requires_grad
    old_base.grad_fn = base.grad_fn
    old_base._output_nr = base._output_nr
    old_view = take_flat(old_base, idx)
    out = fn(old_view, *args, **kwargs)
    write(t, out._array, op)
    _saved_output_is(out, t)
    _output_dtype_is(out, t)
    new_base = CopySlices.apply(old_base, out, idx,
                                t._array.size > 0 and writable(t._array) is None)
    base.grad_fn = new_base.grad_fn
    base._output_nr = 0
    base._requires_grad = new_base._requires_grad
    geom = _strided_geometry(t._array, base._array) if base._requires_grad else None
    if geom is not None:
        out = AsStrided.apply(base, *geom)    # the view regenerated from the new base (torch)
    t.grad_fn = out.grad_fn
    t._output_nr = out._output_nr
    t._requires_grad = out._requires_grad
    t.__dict__["_view_version"] = t._version_ref[0]
    return t


class Overwrite(Function):
    """``t.fill_(v)``, ``t.zero_()``, ``t.copy_(src)`` ...: new values that ignore the old ones.

    ``name`` is torch's node name of the variant (ZeroBackward0, FillBackward2/3)."""

    node_name = "CopyBackwards"

    @staticmethod
    def forward(ctx, old, src_arr, src, name=None):
        if name is not None:
            ctx.set_node_name(name)
        xp = xp_of(old)
        out = xp.empty_like(old._array)
        with quiet():
            xp.copyto(out, src_arr, casting="unsafe")
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        # (zeros, not grad * 0: an inf or NaN upstream gradient still gives 0, as torch)
        g_old = Tensor._wrap(xp_of(grad_output).zeros_like(grad_output._array)) \
            if ctx.needs_input_grad[0] else None
        g_src = None
        if ctx.needs_input_grad[2]:
            shape, dtype = ctx._input_meta(2)
            if grad_output._array.dtype.kind == "c" and dtype.kind != "c":
                grad_output = grad_output.real
            if grad_output._array.dtype != dtype:
                # NOTE: torch's CopyBackwards casts to the source's dtype before the sum
                grad_output = grad_output.to(_dt.from_numpy_dtype(dtype))
            g_src = sum_to(grad_output, shape)
        return g_old, None, g_src, None


def overwrite(t, value, op):
    """Set every element of ``t`` from ``value`` (a scalar or a broadcastable Tensor)."""
    if op == "zero_" and not (_state.enabled and t._requires_grad) and t._array.flags.writeable:
        t._array.fill(0)    # the common case (zeroing gradients), without the general checks
        t._version_ref[0] += 1
        return t
    src = value if isinstance(value, Tensor) else None
    name = None
    if op == "zero_":
        name = "ZeroBackward0"
    elif op == "fill_":
        name = "FillBackward2" if src is None else "FillBackward3"
    xp = xp_of(t)
    arr = src._array if src is not None else xp.asarray(value, dtype=t._array.dtype)
    if arr.dtype != t._array.dtype:
        with quiet():      # (an overflow to inf, a nan to an integer: silent, as torch)
            arr = cast(arr, t._array.dtype)
    if arr.shape != t._array.shape:
        check_into(t._array.shape, arr.shape)
    if _state.enabled and (t._requires_grad or (src is not None and src._requires_grad)):
        def fn(old):
            return Overwrite.apply(old, arr, src, name)
        fn.__name__ = op[:-1]
        return _recorded(t, fn, op, (), {})
    if src is None and t._array.flags.writeable:
        xp.copyto(t._array, arr)     # a scalar (zero_, fill_): write's checks cannot fail
        t._version_ref[0] += 1
        return t
    if src is None and _fill_expanded(t, arr):
        return t
    write(t, arr, op)
    return t


def _fill_expanded(t, value):
    """``fill_``/``zero_`` of an expanded (read-only, repeated-element) view: torch writes the
    value into the memory the elements share. False when ``t`` is not such a view."""
    base = t._base
    if base is None or t._array.size == 0 or not base._array.flags.writeable:
        return False
    idx = _positions(t._array, base._array)
    if idx is None:
        return False
    backend = backend_of(base._array)
    storage = base._array
    flat = backend.as_strided(storage, (_storage_size(storage),), (storage.itemsize,))
    pos = _strided_positions(backend.xp, storage, storage.itemsize, 0).reshape(-1)
    flat[pos[idx.reshape(-1)]] = value
    t._version_ref[0] += 1
    return True
