"""Shape and movement ops: view, reshape, permute, cat, stack, split, flip, roll, diagonal, ...

Views share memory and the version counter with their base, as in torch.
"""
import math
import warnings

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..autograd.graph import _type_name as _tensor_type
from ..autograd.grad_mode import state as _grad_state
from ..backend import backend_of, get_array_module
from ..tensor import Size, Tensor
from ._index import Index, IndexPut, _iter_perm, copy_in_order
from ..backend._meta import MetaArray
from ._numpy_names import numpy_names
from ._util import check_shapes_broadcast, sum_to, warn_once, wrap_dim, xp_of

__all__ = ["view", "reshape", "transpose", "swapaxes", "swapdims", "permute", "t", "squeeze",
           "unsqueeze", "expand", "expand_as", "flatten", "unbind", "view_as", "reshape_as",
           "squeeze_", "unsqueeze_", "t_", "transpose_", "unflatten", "movedim", "moveaxis",
           "cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "row_stack",
           "column_stack", "split", "split_with_sizes", "chunk", "tensor_split", "narrow",
           "select", "flip", "fliplr", "flipud", "roll", "rot90", "tril", "triu", "diag",
           "diagonal", "diag_embed", "repeat", "tile", "broadcast_to",
           "broadcast_tensors", "broadcast_shapes", "meshgrid", "atleast_1d", "atleast_2d",
           "atleast_3d", "ravel", "hsplit", "vsplit", "dsplit", "as_strided", "adjoint"]


def _view_of(a, arr, op=None, *args):
    """``arr``, an array on ``a``'s memory, as a view Tensor of ``a``'s base.

    ``op.apply(x, *args)`` makes the same view of a tensor ``x`` laid out as ``a`` (through a
    Function, so differentiably). When ``a`` requires grad, the view keeps a replay callable
    ``_view_fn``: ``_view_fn(base)`` is a fresh differentiable view of ``base`` (through its
    current graph) at the same positions: the whole chain from the base replayed (``op`` after
    ``a``'s own ``_view_fn``) or, where a step is unknown, a gather of the view's positions in
    the base; None when the view cannot be regenerated. The engine calls it to regenerate the
    view's grad_fn after an in-place change of the base (``refresh_view``)."""
    out = Tensor._wrap(arr)
    out._version_ref = a._version_ref
    if a._inference:
        out._inference = True
    base = a._base
    out._base = a if base is None else base
    if a._requires_grad:
        fn = None
        if op is not None:
            if base is None:
                fn = _replay(op, args)
            else:
                parent = a.__dict__.get("_view_fn")
                if parent is not None:
                    fn = _replay(op, args, parent)
        out.__dict__["_view_fn"] = _replay_strided(
            arr, fn if fn is not None else _replay_positions(arr))
        if _grad_state.enabled is False:     # (the user's no_grad, not an op's own work: a
            out._requires_grad = True        # view then requires grad, as a leaf, and refuses
            out.__dict__["_multi_view"] = _NO_GRAD_VIEW    # in-place changes in grad mode)
    return out


_NO_GRAD_VIEW = ("A view was created in no_grad mode and is being modified inplace with grad "
                 "mode enabled. Given that this use case is ambiguous and error-prone, it is "
                 "forbidden. You can clarify your code by moving both the view and the inplace "
                 "either both inside the no_grad block (if you don't want the inplace to be "
                 "tracked) or both outside (if you want the inplace to be tracked).")


def _replay_strided(arr, fallback):
    """The view's ``_view_fn``: an ``as_strided`` of the base where expressible (torch's
    regeneration, AsStridedBackward0), else ``fallback``."""
    def replay(base):
        geom = _strided_geometry(arr, base._array)
        return fallback(base) if geom is None else AsStrided.apply(base, *geom)
    return replay


def _strided_geometry(arr, base_arr):
    """``(size, stride, storage_offset)`` in elements of ``arr`` within ``base_arr``'s memory, or
    None (another dtype, a misaligned or negative stride)."""
    item = base_arr.itemsize
    if arr.dtype != base_arr.dtype:
        return None
    backend = backend_of(base_arr)
    start = backend.data_ptr(arr) - backend.data_ptr(base_arr)
    if start % item or start < 0 or any(s % item or s < 0 for s in arr.strides):
        return None
    return tuple(arr.shape), tuple(s // item for s in arr.strides), start // item


def _storage_size(arr):
    """The number of elements the memory of ``arr`` spans (its storage, for ``as_strided``)."""
    if arr.size == 0:
        return 0
    item = arr.itemsize
    return 1 + sum((n - 1) * (s // item) for n, s in zip(arr.shape, arr.strides))


def _replay(op, args, parent=None):
    if parent is None:
        return lambda base: op.apply(base, *args)
    return lambda base: _then(parent(base), op, args)


def _then(t, op, args):
    return None if t is None else op.apply(t, *args)


def _replay_positions(arr):
    """A ``_view_fn`` for the view array ``arr``: its elements gathered from the base by their
    positions in the base's memory (None when they are not expressible as such)."""
    def replay(base):
        idx = _positions(arr, base._array)
        return None if idx is None else take_flat(base, idx)
    return replay


def _strided_positions(xp, arr, item, start):
    """The flat memory offset (in elements, from ``start``) of each element of ``arr``."""
    pos = xp.full(arr.shape, start, dtype=np.int64)
    for d, (n, s) in enumerate(zip(arr.shape, arr.strides)):
        shape = [1] * arr.ndim
        shape[d] = n
        pos = pos + (xp.arange(n, dtype=np.int64) * (s // item)).reshape(shape)
    return pos


def _positions(arr, base_arr):
    """For each element of the view ``arr``, its flat index in ``base_arr`` (shared memory), or
    None when an element is not one of ``base_arr``'s."""
    xp = get_array_module(base_arr)
    if arr.size == 0:
        return xp.zeros(arr.shape, dtype=np.int64)
    item = base_arr.itemsize
    backend = backend_of(base_arr)
    start = backend.data_ptr(arr) - backend.data_ptr(base_arr)
    if start % item or base_arr.size == 0:
        return None
    view_pos = _strided_positions(xp, arr, item, start // item).ravel()
    flat = _strided_positions(xp, base_arr, item, 0).ravel()
    order = xp.argsort(flat)
    found = xp.searchsorted(flat[order], view_pos)
    idx = order[xp.clip(found, 0, flat.size - 1)]
    if not bool((flat[idx] == view_pos).all()):
        return None
    return idx.reshape(arr.shape)


def take_flat(t, idx):
    """``t.reshape(-1)[idx]`` (differentiable)."""
    return Index.apply(reshape(t, (-1,)), (idx,))


def zero_flat(t, idx):
    """``t`` with the flat positions ``idx`` set to zero (differentiable)."""
    flat = IndexPut.apply(reshape(t, (-1,)), (idx,), 0.0, False)
    return reshape(flat, t._array.shape)


def _infer_shape(op, shape, numel):
    """``shape`` with its -1 filled in for ``numel`` elements (torch's infer_size errors)."""
    shape = list(shape)
    infer = None
    known = 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError("invalid shape dimension %d at index %d of shape %s"
                               % (s, i, shape))
        else:
            known *= s
    if infer is not None and known == 0 and numel == 0:
        raise RuntimeError("cannot reshape tensor of 0 elements into shape %s because the "
                           "unspecified dimension size -1 can be any value and is ambiguous"
                           % shape)
    if infer is not None and known and numel % known == 0:
        shape[infer] = numel // known
    elif infer is not None or known != numel:
        raise RuntimeError("shape '%s' is invalid for input of size %d" % (shape, numel))
    return tuple(shape)


def _shape_arg(shape, op="view", what="size"):
    """The ints of ``*shape`` (or one sequence of them): ints, NumPy ints or 0-d integral
    tensors, as torch's ``tuple of ints`` (a float or bool is torch's TypeError)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    for k, s in enumerate(shape):
        if s.__class__ is int:
            continue
        if isinstance(s, (bool, np.bool_)) or not (
                isinstance(s, (int, np.integer)) or (isinstance(s, Tensor) and not s._array.ndim
                                                     and s._array.dtype.kind in "iu")):
            raise TypeError("%s(): argument '%s' (position 1) must be tuple of ints, but found "
                            "element of type %s at pos %d" % (op, what, type(s).__name__, k))
    return tuple(int(s) for s in shape)


class AsStrided(Function):
    """A view of the base's memory with the given sizes, element strides and storage offset."""

    node_name = "AsStridedBackward0"

    @staticmethod
    def forward(ctx, a, size, stride, offset):
        storage = a._base._array if a._base is not None else a._array
        xp_arr = backend_of(storage)
        n = _storage_size(storage)
        item = storage.itemsize
        flat = xp_arr.as_strided(storage, (n,), (item,))
        out = xp_arr.as_strided(flat[offset:], size, tuple(s * item for s in stride))
        xp = get_array_module(storage)
        ctx.storage_size = n
        ctx.save_for_backward(
            Tensor._wrap(_strided_positions(xp, a._array, item, (
                xp_arr.data_ptr(a._array) - xp_arr.data_ptr(storage)) // item)),
            Tensor._wrap(_element_positions(xp, size, stride, offset)))
        return _view_of(a, out)

    @staticmethod
    def backward(ctx, grad_output):
        in_pos, out_pos = ctx.saved_tensors
        xp = xp_of(grad_output)
        zeros = Tensor._wrap(xp.zeros((ctx.storage_size,), dtype=grad_output._array.dtype))
        g = IndexPut.apply(zeros, (out_pos._array.reshape(-1),), reshape(grad_output, (-1,)),
                           True)
        return Index.apply(g, (in_pos._array,)), None, None, None


def _element_positions(xp, size, stride, offset):
    pos = xp.full(tuple(size), offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        pos = pos + (xp.arange(n, dtype=np.int64) * s).reshape(shape)
    return pos


def as_strided(input, size, stride, storage_offset=None):
    """A view of ``input``'s memory with the given sizes, strides and storage offset."""
    size = tuple(int(s) for s in size)
    stride = tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got "
                           "strides: %s" % _shape_list(stride))
    for s in size:
        if s < 0:
            raise RuntimeError("Trying to create tensor with negative dimension %d: %s"
                               % (s, _shape_list(size)))
    arr = input._array
    storage = input._base._array if input._base is not None else arr
    if storage_offset is None:
        geom = _strided_geometry(arr, storage)
        storage_offset = geom[2] if geom is not None else 0
    storage_offset = int(storage_offset)
    if storage_offset < 0:
        raise RuntimeError("Tensor: invalid storage offset %d" % storage_offset)
    n = _storage_size(storage)
    need = 0 if 0 in size else storage_offset + 1 + sum((a - 1) * b for a, b in zip(size,
                                                                                   stride))
    if need > n:
        raise RuntimeError("setStorage: sizes %s, strides %s, storage offset %d, and itemsize "
                           "%d requiring a storage size of %d are out of bounds for storage of "
                           "size %d" % (_shape_list(size), _shape_list(stride), storage_offset,
                                        arr.itemsize, need * arr.itemsize, n * arr.itemsize))
    return AsStrided.apply(input, size, stride, storage_offset)


def adjoint(input):
    """The conjugate transpose of the last two dims (a view)."""
    n = input._array.ndim
    if n == 1:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           "matrices. Got 1-D tensor.")
    if n == 0:
        warnings.warn("adjoint() is deprecated on 0-D tensors. Consider using x.conj().",
                      UserWarning, stacklevel=2)
        return input.conj()
    out = transpose(input, -2, -1)
    return out.conj() if input._array.dtype.kind == "c" else out


class View(Function):
    node_name = "ViewBackward0"

    @staticmethod
    def forward(ctx, a, shape):
        v = _reshaped_view(a._array, shape)
        if v is None:
            raise RuntimeError("view size is not compatible with input tensor's size and stride "
                               "(at least one dimension spans across two contiguous subspaces). "
                               "Use .reshape(...) instead.")
        return _view_of(a, v, View, shape)

    @staticmethod
    def backward(ctx, grad_output):
        return reshape(grad_output, ctx._input_meta(0)[0]), None


def _reshaped_view(arr, shape):
    """``arr`` reshaped to ``shape`` without a copy, or None when its layout needs one."""
    if type(arr) is np.ndarray:
        v = arr.view()
        try:
            v.shape = shape
        except AttributeError:
            return None
        return v
    return arr.reshape(shape) if _viewable(arr.shape, arr.strides, shape) else None


def view_strides(shape, strides, new_shape):
    """torch's strides for a view of a ``shape``/``strides`` tensor as ``new_shape`` (its
    computeStride: each run of contiguous dims must map onto whole new dims), or None where no
    view exists."""
    if not shape:
        shape, strides = (1,), (1,)
    new = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    base = strides[-1]
    numel = view_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != numel * base):
            while view_d >= 0 and (view_numel < numel or new_shape[view_d] == 1):
                new[view_d] = view_numel * base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != numel:
                return None
            if d > 0:
                base, numel, view_numel = strides[d - 1], 1, 1
    return new if view_d == -1 else None


def _viewable(shape, strides, new_shape):
    """Whether ``new_shape`` can be a view of memory laid out as ``shape``/``strides``."""
    if 0 in shape or not shape:
        return True
    return view_strides(shape, strides, new_shape) is not None


class Clone(Function):
    node_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, a):
        return Tensor._wrap(a._array.copy())

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


class CloneInOrder(Function):
    """``clone`` laid out with its dims in memory in ``order`` (slowest first)."""

    node_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, a, order):
        return Tensor._wrap(copy_in_order(a._array, order))

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None


class Reshape(Function):
    """``reshape`` when the layout forbids a view: a copy, as torch's ``_unsafe_view``."""

    node_name = "UnsafeViewBackward0"

    @staticmethod
    def forward(ctx, a, shape):
        return Tensor._wrap(a._array.reshape(shape))

    @staticmethod
    def backward(ctx, grad_output):
        return reshape(grad_output, ctx._input_meta(0)[0]), None


class Transpose(Function):
    node_name = "TransposeBackward0"

    @staticmethod
    def forward(ctx, a, d0, d1, name=None):
        if name is not None:
            ctx.set_node_name(name)     # TransposeBackward1 (transpose_)
        ctx.dims = (d0, d1)
        arr = a._array
        return _view_of(a, arr.swapaxes(d0, d1) if arr.ndim else arr.view(), Transpose, d0, d1,
                        name)

    @staticmethod
    def backward(ctx, grad_output):
        return transpose(grad_output, *ctx.dims), None, None, None

    @staticmethod
    def array_backward(ctx, grad_output):
        arr = grad_output._array
        return (Tensor._wrap(arr.swapaxes(*ctx.dims) if arr.ndim else arr), None, None, None)


class T(Function):
    node_name = "TBackward0"

    @staticmethod
    def forward(ctx, a, name=None):
        if name is not None:
            ctx.set_node_name(name)     # TBackward1 (t_)
        return _view_of(a, a._array.T, T, name)

    @staticmethod
    def backward(ctx, grad_output):
        return t(grad_output), None

    @staticmethod
    def array_backward(ctx, grad_output):
        # NOTE: a view of the gradient, no node (W3 in benchmarks/: each Linear's weight.t());
        # the engine may then keep it as the weight's .grad without a copy
        return Tensor._wrap(grad_output._array.T), None


class Permute(Function):
    node_name = "PermuteBackward0"

    @staticmethod
    def forward(ctx, a, dims):
        ctx.dims = dims
        return _view_of(a, a._array.transpose(dims), Permute, dims)

    @staticmethod
    def backward(ctx, grad_output):
        dims = ctx.dims
        return permute(grad_output, tuple(sorted(range(len(dims)), key=dims.__getitem__))), None


class Unsqueeze(Function):
    node_name = "UnsqueezeBackward0"

    @staticmethod
    def forward(ctx, a, dim, name=None):
        if name is not None:
            ctx.set_node_name(name)     # UnsqueezeBackward1 (unsqueeze_)
        ctx.dim = dim
        return _view_of(a, get_array_module(a._array).expand_dims(a._array, dim), Unsqueeze, dim,
                        name)

    @staticmethod
    def backward(ctx, grad_output):
        return squeeze(grad_output, ctx.dim), None, None


class Squeeze(Function):
    node_name = "SqueezeBackward0"

    @staticmethod
    def forward(ctx, a, dims, name=None):
        if name is not None:
            ctx.set_node_name(name)     # SqueezeBackward1 (one dim), SqueezeBackward2 (dims)
        arr = a._array
        ctx.dims = dims
        kept = tuple(d for d in dims if arr.shape[d] == 1)
        return _view_of(a, arr.squeeze(axis=kept) if kept else arr.view(), Squeeze, dims, name)

    @staticmethod
    def backward(ctx, grad_output):
        return reshape(grad_output, ctx._input_meta(0)[0]), None, None


class Expand(Function):
    node_name = "ExpandBackward0"

    @staticmethod
    def forward(ctx, a, shape):
        arr = a._array
        if arr.shape == shape:
            return _view_of(a, arr.view(), Expand, shape)     # (writable: no repeated element)
        if arr.ndim == 0:
            return _view_of(a, _broadcast_scalar(arr, shape), Expand, shape)
        return _view_of(a, get_array_module(arr).broadcast_to(arr, shape), Expand, shape)

    @staticmethod
    def backward(ctx, grad_output):
        return sum_to(grad_output, ctx._input_meta(0)[0]), None


def _broadcast_scalar(arr, shape):
    """``broadcast_to`` of a 0-d array (a read-only view), without NumPy's Python overhead."""
    if type(arr) is not np.ndarray or arr.dtype.kind == "V":    # (bfloat16: no buffer format)
        return get_array_module(arr).broadcast_to(arr, shape)
    # (a read-only buffer: setting ``flags.writeable`` afterwards makes NumPy keep memory)
    return np.ndarray(shape, arr.dtype, memoryview(arr).toreadonly(), 0, (0,) * len(shape))


def _check_dtype_view(input, np_dtype):
    """torch's checks of ``view(dtype)`` between element sizes that differ."""
    arr = input._array
    size, new = arr.itemsize, np.dtype(np_dtype).itemsize
    if size == new:
        return
    what = "to view %s as %s (different element sizes)" % (_dt.scalar_type_name(arr.dtype),
                                                           _dt.scalar_type_name(np_dtype))
    if arr.ndim == 0:
        raise RuntimeError("self.dim() cannot be 0 " + what)
    strides = [st // size for st in arr.strides]
    if strides[-1] != 1 and arr.shape[-1] != 1:
        raise RuntimeError("self.stride(-1) must be 1 %s, but got %d" % (what, strides[-1]))
    if new > size:
        ratio = new // size
        if arr.shape[-1] % ratio:
            raise RuntimeError("self.size(-1) must be divisible by %d %s, but got %d"
                               % (ratio, what, arr.shape[-1]))
        if input.storage_offset() % ratio:
            raise RuntimeError("self.storage_offset() must be divisible by %d %s, but got %d"
                               % (ratio, what, input.storage_offset()))
        for i, st in enumerate(strides[:-1]):
            if st % ratio:
                raise RuntimeError("self.stride(%d) must be divisible by %d %s, but got %d"
                                   % (i, ratio, what, st))


def view(input, *shape):
    """The same data with another shape (no copy; -1 infers one dim).

    ``view(dtype)`` reinterprets the bytes as another dtype.
    """
    if not shape:
        raise TypeError("view() received an invalid combination of arguments - got (), but "
                        "expected one of:\n * (torch.dtype dtype)\n * (tuple of ints size)\n")
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer, tuple, list)):
        d = _dt.to_dtype(shape[0])
        _check_dtype_view(input, d.np)
        out = Tensor._wrap(input._array.view(d.np))   # torch: shares the version, no _base
        out._version_ref = input._version_ref
        return out
    shape = _infer_shape("view", _shape_arg(shape), input._array.size)
    if shape == input._array.shape and not input._requires_grad:
        return _view_of(input, input._array.view(), View, shape)
    return View.apply(input, shape)


class ReshapeAlias(View):
    """``reshape`` of a strided (not contiguous) tensor whose layout allows a view."""

    node_name = "ReshapeAliasBackward0"


def reshape(input, *shape, **kwargs):
    """A view when the memory layout allows (torch's ``ViewBackward0``, or
    ``ReshapeAliasBackward0`` for a strided tensor), otherwise ``_unsafe_view`` of a contiguous
    clone, as torch's graph shows it. ``x.reshape(2, 3)`` or ``reshape(x, (2, 3))``."""
    return _reshape(input, _int_list("reshape", "shape", shape, kwargs, True))


def _reshape(input, shape):
    shape = _infer_shape("reshape", shape, input._array.size)
    arr = input._array
    if _reshaped_view(arr, shape) is None:
        return Reshape.apply(Clone.apply(input), shape)
    if arr.flags.c_contiguous:
        return View.apply(input, shape)
    return ReshapeAlias.apply(input, shape)


def view_as(input, other):
    return view(input, other._array.shape)


def reshape_as(input, other):
    return reshape(input, other._array.shape)


def transpose(input, dim0, dim1):
    """Swap two dims (a view)."""
    n = input._array.ndim
    d0, d1 = wrap_dim(dim0, n, "transpose"), wrap_dim(dim1, n, "transpose")
    if n == 0:
        return view(input, ())
    return Transpose.apply(input, d0, d1)


swapaxes = swapdims = transpose


def t(input):
    """Transpose a tensor of at most 2 dims."""
    n = input._array.ndim
    if n > 2:
        raise RuntimeError("t() expects a tensor with <= 2 dimensions, but self is %dD" % n)
    return T.apply(input)


def permute(input, *dims, **kwargs):
    """Reorder the dims (a view); ``permute(x, (1, 0))``, ``x.permute(1, 0)`` or ``dims=``."""
    return _permute(input, _int_list("permute", "dims", dims, kwargs, True))


def _permute(input, dims):
    n = input._array.ndim
    if len(dims) != n:
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does "
                           "not match the length of the desired ordering of dimensions i.e. "
                           "input.dim() = %d is not equal to len(dims) = %d" % (n, len(dims)))
    dims = tuple(wrap_dim(d, n, "permute") for d in dims)
    if len(set(dims)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return Permute.apply(input, dims)


def unsqueeze(input, dim):
    """Insert a dim of size 1 at ``dim``."""
    return Unsqueeze.apply(input, wrap_dim(dim, input._array.ndim + 1, "unsqueeze"))


def squeeze(input, dim=None):
    """Remove dims of size 1 (all, or those in ``dim``)."""
    n = input._array.ndim
    if dim is None:
        return Squeeze.apply(input, tuple(range(n)))
    if isinstance(dim, (tuple, list)):
        dims = tuple(wrap_dim(d, n, "squeeze") for d in dim)
        for i, d in enumerate(dims):
            if d in dims[:i]:
                raise RuntimeError("dim %d appears multiple times in the list of dims" % d)
        return Squeeze.apply(input, dims if n else (), "SqueezeBackward2")
    d = wrap_dim(dim, n, "squeeze")
    return Squeeze.apply(input, (d,) if n else (), "SqueezeBackward1")


def expand(input, *sizes, **kwargs):
    """Broadcast to ``sizes`` without copying (-1 keeps a dim)."""
    kwargs.pop("implicit", None)
    if not sizes and "size" not in kwargs:
        raise TypeError('expand() missing 1 required positional arguments: "size"')
    _only_kwarg("expand", kwargs, "size")
    if not sizes:
        sizes = (kwargs["size"],)
    sizes = _shape_arg(sizes, "expand")
    shape = input._array.shape
    if len(sizes) < len(shape):
        raise RuntimeError("expand(%s{%s}, size=%s): the number of sizes provided "
                           "(%d) must be greater or equal to the number of dimensions in the "
                           "tensor (%d)" % (_tensor_type(input), list(shape), list(sizes),
                                            len(sizes), len(shape)))
    lead = len(sizes) - len(shape)
    out = list(sizes)
    for i in reversed(range(len(sizes))):     # (as torch: the last dimension is checked first)
        s = sizes[i]
        if i < lead:
            if s < 0:
                raise RuntimeError("The expanded size of the tensor (%d) isn't allowed in a "
                                   "leading, non-existing dimension %d" % (s, i))
            continue
        cur = shape[i - lead]
        if s == -1:
            s = out[i] = cur
        if cur != s and cur != 1:
            raise RuntimeError("The expanded size of the tensor (%d) must match the existing "
                               "size (%d) at non-singleton dimension %d.  Target sizes: %s.  "
                               "Tensor sizes: %s" % (s, cur, i, list(sizes), list(shape)))
    out = tuple(out)
    return Expand.apply(input, out)


def expand_as(input, other):
    """``expand(other.size())``."""
    return expand(input, other._array.shape)


def flatten(input, start_dim=0, end_dim=-1):
    """Merge dims ``start_dim..end_dim`` into one."""
    n = input._array.ndim
    s = wrap_dim(start_dim, n, "flatten")
    e = wrap_dim(end_dim, n, "flatten")
    if n == 0:
        return reshape(input, (1,))
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = input._array.shape
    new = shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:]
    return reshape(input, new)


def unbind(input, dim=0):
    """The slices along ``dim``, as a tuple of views."""
    if input._array.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return _multi_views(Unbind.apply(input, wrap_dim(dim, input._array.ndim, "unbind")),
                        "Unbind")


def squeeze_(input, dim=None):
    out = squeeze(input.detach(), dim)
    _check_leaf(input)
    if _records(input):
        n = input._array.ndim
        if dim is None:
            return _take_layout(input, Squeeze.apply(input, tuple(range(n)), "SqueezeBackward3"))
        name = "SqueezeBackward5" if isinstance(dim, (tuple, list)) else "SqueezeBackward4"
        dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
        dims = tuple(wrap_dim(d, n, "squeeze") for d in dims) if n else ()
        return _take_layout(input, Squeeze.apply(input, dims, name))
    return _reshape_inplace(input, out._array.shape)


def unsqueeze_(input, dim):
    out = unsqueeze(input.detach(), dim)
    _check_leaf(input)
    if _records(input):
        d = wrap_dim(dim, input._array.ndim + 1, "unsqueeze")
        return _take_layout(input, Unsqueeze.apply(input, d, "UnsqueezeBackward1"))
    return _reshape_inplace(input, out._array.shape)


def _check_leaf(input):
    """torch refuses an in-place op on a leaf that requires grad while grad mode is on."""
    if input._requires_grad and input.grad_fn is None and _grad_state.enabled:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")


def _records(input):
    """An in-place layout change of ``input`` is recorded in the graph (a non-leaf)."""
    if not (input._requires_grad and _grad_state.enabled):
        return False
    base = input._base
    if base is not None and base.grad_fn is None and base._requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    return True


def _take_layout(input, out):
    """``input`` becomes ``out`` (its view op applied in place): layout, node, view replay."""
    input._array = out._array
    input.grad_fn = out.grad_fn
    input._output_nr = out._output_nr
    input._version_ref[0] += 1
    if input._base is not None:
        d = input.__dict__
        d.pop("_view_fn", None)
        if "_view_fn" in out.__dict__:
            d["_view_fn"] = out.__dict__["_view_fn"]
        d["_view_version"] = input._version_ref[0]
    return input


def t_(input):
    n = input._array.ndim
    if n > 2:
        raise RuntimeError("t_() expects a tensor with <= 2 dimensions, but self is %dD" % n)
    _check_leaf(input)
    if _records(input):
        return _take_layout(input, T.apply(input, "TBackward1"))
    return transpose_(input, 0, 1) if n == 2 else _bumped(input)


def transpose_(input, dim0, dim1):
    n = input._array.ndim
    dim0, dim1 = wrap_dim(dim0, n, "transpose_"), wrap_dim(dim1, n, "transpose_")
    _check_leaf(input)
    if _records(input):
        return _take_layout(input, Transpose.apply(input, dim0, dim1, "TransposeBackward1"))
    if n == 0 or dim0 == dim1:
        return _bumped(input)
    input._array = input._array.swapaxes(dim0, dim1)
    _replayed_at_positions(input)
    return _bumped(input)


def _bumped(input):
    input._version_ref[0] += 1
    return input


def _reshape_inplace(input, shape):
    input._array = input._array.reshape(shape)
    _replayed_at_positions(input)
    return _bumped(input)


def _replayed_at_positions(view):
    """A view whose layout changed in place regenerates itself from its new positions."""
    if "_view_fn" in view.__dict__:
        view.__dict__["_view_fn"] = _replay_positions(view._array)


def _only_kwarg(op, kwargs, name):
    """torch's TypeError for a keyword argument other than ``name``."""
    for k in kwargs:
        if k != name:
            raise TypeError("%s() got an unexpected keyword argument '%s'" % (op, k))


def _is_int(v):
    """An int as torch's ``int[]`` parsing takes one: int, NumPy int or 0-d integral Tensor."""
    if isinstance(v, Tensor):
        return not v._array.ndim and v._array.dtype.kind in "iu"
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _type_name(v):
    """``type(v)``'s name as CPython's ``tp_name`` spells it (``numpy.int64``, ``float``)."""
    t = type(v)
    if t.__flags__ & 512 or t.__module__ == "builtins":     # (a class defined in Python)
        return t.__name__
    return "%s.%s" % (t.__module__, t.__name__)


def _int_list(op, name, args, kwargs, method):
    """The ints of ``op``'s ``int[]`` argument ``name`` given as ``*args``/``**kwargs``, with
    torch's TypeErrors. The method form (``t.op(...)``) also takes the ints one by one; the
    function form (``torch.op(t, ...)``) takes one sequence only."""
    if not args and name not in kwargs:
        raise TypeError('%s() missing 1 required positional arguments: "%s"' % (op, name))
    _only_kwarg(op, kwargs, name)
    if args and kwargs:
        raise TypeError("%s() got multiple values for argument '%s'" % (op, name))
    if len(args) > 1:
        if not method:
            raise TypeError("%s() takes 2 positional arguments but %d were given"
                            % (op, len(args) + 1))
        if not _is_int(args[0]):
            raise TypeError("%s() takes 1 positional argument but %d were given"
                            % (op, len(args)))
        value = args
    else:
        value, pos = (args[0], " (position %d)" % (1 if method else 2)) if args else (
            kwargs[name], "")
        if method and args and _is_int(value):
            return (int(value),)
        if not isinstance(value, (tuple, list)):
            raise TypeError("%s(): argument '%s'%s must be tuple of ints, not %s"
                            % (op, name, pos, _type_name(value)))
        # (torch's signature match looks at the first element only)
        if value and not _is_int(value[0]):
            if not pos:
                raise TypeError("%s(): argument '%s' must be tuple of ints, not %s"
                                % (op, name, _type_name(value)))
            raise TypeError("%s(): argument '%s'%s must be tuple of ints, but found element of "
                            "type %s at pos 0" % (op, name, pos, _type_name(value[0])))
    for k, v in enumerate(value):
        if not _is_int(v):
            raise TypeError("%s(): argument '%s' failed to unpack the object at pos %d with "
                            "error \"type must be tuple of ints,but got %s\""
                            % (op, name, k + 1, _type_name(v)))
    return tuple(int(v) for v in value)


def _dims_arg(dims):
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        return tuple(dims[0])
    return tuple(dims)


def _shape_list(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


class Unbind(Function):
    node_name = "UnbindBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        arr = a._array
        idx = (slice(None),) * dim
        return tuple(_view_of(a, arr[idx + (i, Ellipsis)], Select, dim, i)
                     for i in range(arr.shape[dim]))

    @staticmethod
    def backward(ctx, *grads):
        return stack(grads, ctx.dim), None


class Split(Function):
    node_name = "SplitBackward0"

    @staticmethod
    def forward(ctx, a, sizes, dim, name=None):
        if name is not None:
            ctx.set_node_name(name)     # SplitWithSizesBackward0
        ctx.dim = dim
        arr = a._array
        outs, start = [], 0
        pre = (slice(None),) * dim
        for n in sizes:
            outs.append(_view_of(a, arr[pre + (slice(start, start + n),)], Narrow, dim, start, n))
            start += n
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        return cat(grads, ctx.dim), None, None, None


_MULTI_VIEW_MSG = ("Output %d of %s is a view and %s. This view is the output of a function "
                   "that returns multiple views. Such functions do not allow the output views "
                   "to be modified inplace. You should replace the inplace operation by an "
                   "out-of-place one.")


def _multi_views(outs, label):
    """Mark the views of a multi-view op recorded in the graph, as torch: writing into one in
    place raises (``_inplace`` raises its ``_multi_view`` message), and so does using one after
    its base was modified in place (its ``_view_fn``, which would regenerate it)."""
    for i, o in enumerate(outs):
        if o._requires_grad:
            d = o.__dict__
            d["_multi_view"] = _MULTI_VIEW_MSG % (i, label, "is being modified inplace")
            d["_view_fn"] = _stale_multi_view(_MULTI_VIEW_MSG % (
                i, label, "its base or another view of its base has been modified inplace"))
    return outs


def _stale_multi_view(msg):
    def replay(base):
        raise RuntimeError(msg)
    return replay


_CHANNELS_LAST = {"channels_last": (4, [0, 2, 3, 1]), "channels_last_3d": (5, [0, 2, 3, 4, 1])}


def restrided(arr, strides):
    """A copy of ``arr`` with element ``strides`` (dense: a permutation of C order's)."""
    b = backend_of(arr)
    out = b.as_strided(b.xp.empty(arr.size, arr.dtype), arr.shape,
                       tuple(s * arr.itemsize for s in strides))
    out[...] = arr
    return out


def _memory_order(arr, memory_format, op):
    """The dims of ``arr`` slowest first in ``memory_format`` (None: C order, or for
    ``preserve_format`` the layout kept as it is)."""
    name = getattr(memory_format, "_name", memory_format)
    if name in _CHANNELS_LAST:
        rank, order = _CHANNELS_LAST[name]
        if arr.ndim != rank:
            raise RuntimeError("required rank %d tensor to use %s format" % (rank, name))
        return order
    return None


def _dense(shape, st):
    """torch's is_non_overlapping_and_dense for element strides ``st``."""
    need = 1
    for d in sorted((d for d in range(len(shape)) if shape[d] != 1), key=st.__getitem__):
        if st[d] != need:
            return False
        need *= shape[d]
    return True


def like_strides(arr, memory_format=None):
    """The element strides of torch's ``empty_like(arr, memory_format=)`` (None: C order)."""
    name = getattr(memory_format, "_name", "preserve_format")
    if name == "preserve_format" and arr.flags.c_contiguous and 1 not in arr.shape or \
            name in ("contiguous_format", "legacy_contiguous_format") or arr.size == 0 or \
            type(arr) is MetaArray:
        return None
    shape, st, perm = arr.shape, [s // arr.itemsize for s in arr.strides], None
    if name == "preserve_format" and not _dense(shape, st):
        perm = _iter_perm(shape, [st])
    elif name != "preserve_format":
        perm = _memory_order(arr, name, "to")[::-1] if name in _CHANNELS_LAST else None
    step = 1
    for d in perm or ():
        st[d], step = step, step * shape[d]
    c = [1] * arr.ndim
    for d in range(arr.ndim - 1, 0, -1):
        c[d - 1] = c[d] * shape[d]
    return None if st == c or name == "contiguous_format" else tuple(st)


def c_order(arr):
    """``arr``, or a copy of it, with torch's contiguous strides (size-1 dims' included)."""
    if arr.flags.c_contiguous and 1 not in arr.shape or not arr.size or arr.strides == tuple(
            arr.itemsize * math.prod(arr.shape[d + 1:]) for d in range(arr.ndim)):
        return arr
    return arr.copy()


def like(out, arr):
    """``out`` (shaped as ``arr``) laid out as torch's ``empty_like(arr)`` lays it out."""
    st = like_strides(arr)
    if st is None or tuple(s // out.itemsize for s in out.strides) == st:
        return c_order(out) if st is None else out
    return restrided(out, st)


def _suggest(arr):
    """torch's ``suggest_memory_format`` (its name) of array ``arr``."""
    for name, (rank, order) in _CHANNELS_LAST.items():
        if arr.ndim == rank and arr.strides[1] and _cl_like(arr.shape, arr.strides, order):
            return name
    return "contiguous_format"


def _cl_like(shape, st, order):
    """torch's is_channels_last_strides_2d/3d (strides in ``order``; ambiguous ones not)."""
    low = 0
    for d in reversed(order):
        if shape[d] == 0 or st[d] < low or (d == 0 and low == st[1]):
            return False
        low = st[d] * shape[d]
    return True


def _cat_layout(xp, out, arrs):
    """``out`` laid out as torch's cat/stack result: channels-last where every input suggests
    the same channels-last format (NumPy keeps their order), else contiguous."""
    if out.flags.c_contiguous and all(a.flags.c_contiguous for a in arrs):
        return out
    fmts = {_suggest(a) for a in arrs}
    if len(fmts) > 1 or "contiguous_format" in fmts:
        return out if out.flags.c_contiguous else xp.ascontiguousarray(out)
    fmt = fmts.pop()
    if _suggest(out) == fmt:
        return out
    st, step = [0] * out.ndim, 1
    for d in reversed(_CHANNELS_LAST[fmt][1]):
        st[d], step = step, step * out.shape[d]
    return restrided(out, st)


class Cat(Function):
    node_name = "CatBackward0"

    @staticmethod
    def forward(ctx, dim, np_dtype, *tensors):
        arrs = [t._array for t in tensors]
        ctx.dim = dim
        ctx.shapes = [a.shape for a in arrs]
        xp = get_array_module(*arrs)
        keep = [a.astype(np_dtype, copy=False) for a in arrs if not (a.ndim == 1 and a.size == 0)]
        if not keep:
            return Tensor._wrap(xp.zeros((0,), dtype=np_dtype))
        return Tensor._wrap(_cat_layout(xp, xp.concatenate(keep, axis=dim), keep))

    @staticmethod
    def backward(ctx, grad_output):
        grads = [None, None]
        start = 0
        for i, shape in enumerate(ctx.shapes):
            skipped = len(shape) == 1 and shape[0] == 0
            if ctx.needs_input_grad[i + 2]:
                if skipped:
                    grads.append(Tensor._wrap(xp_of(grad_output).zeros(
                        shape, ctx._input_meta(i + 2)[1])))
                else:
                    grads.append(narrow(grad_output, ctx.dim, start, shape[ctx.dim]))
            else:
                grads.append(None)
            if not skipped:
                start += shape[ctx.dim]
        return tuple(grads)


class Stack(Function):
    node_name = "StackBackward0"

    @staticmethod
    def forward(ctx, dim, np_dtype, *tensors):
        ctx.dim = dim
        arrs = [t._array.astype(np_dtype, copy=False) for t in tensors]
        xp = get_array_module(*arrs)
        if dim == arrs[0].ndim:     # (torch: a cat of the inputs unsqueezed: contiguous)
            return Tensor._wrap(c_order(xp.stack(arrs, axis=dim)))
        # (torch: a cat along ``dim``, viewed with the new dim split off)
        out = _cat_layout(xp, xp.concatenate(arrs, axis=dim), arrs)
        return Tensor._wrap(out.reshape(out.shape[:dim] + (len(arrs),) + arrs[0].shape[dim:]))

    @staticmethod
    def backward(ctx, grad_output):
        n = len(ctx.needs_input_grad) - 2
        return (None, None) + tuple(select(grad_output, ctx.dim, i)
                                    if ctx.needs_input_grad[i + 2] else None for i in range(n))


def _tensor_list(op, tensors):
    if isinstance(tensors, Tensor):
        raise TypeError("%s(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        "Tensor" % op)
    tensors = list(tensors)
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError("expected Tensor as element %d in argument 0, but got %s"
                            % (tensors.index(t), type(t).__name__))
    return tensors


def _promoted(tensors):
    d = tensors[0].dtype
    for t in tensors[1:]:
        d = _dt.promote_types(d, t.dtype)
    return d.np


def cat(tensors, dim=0, *, out=None):
    """Join tensors along an existing ``dim`` (dtypes promote; legacy empty 1-D are skipped).

    Example:
        >>> import ember
        >>> ember.cat([ember.zeros(2, 1), ember.ones(2, 2)], dim=1)
        tensor([[0., 1., 1.],
                [0., 1., 1.]])
    """
    tensors = _tensor_list("cat", tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    real = [(i, t) for i, t in enumerate(tensors)
            if not (t._array.ndim == 1 and t._array.size == 0)]
    if real:
        i0, ref = real[0]
        nd = ref._array.ndim
        if nd == 0:
            raise RuntimeError("zero-dimensional tensor (at position %d) cannot be concatenated"
                               % i0)
        d = wrap_dim(dim, nd, "cat")
        for i, t in real:
            if t._array.ndim != nd:
                if t._array.ndim == 0:
                    raise RuntimeError("zero-dimensional tensor (at position %d) cannot be "
                                       "concatenated" % i)
                raise RuntimeError("Tensors must have same number of dimensions: got %d and %d"
                                   % (nd, t._array.ndim))
            for k in range(nd):
                if k != d and t._array.shape[k] != ref._array.shape[k]:
                    raise RuntimeError("Sizes of tensors must match except in dimension %d. "
                                       "Expected size %d but got size %d for tensor number %d "
                                       "in the list." % (d, ref._array.shape[k],
                                                         t._array.shape[k], i))
    else:
        d = 0
    return Cat.apply(d, _promoted(tensors), *tensors)


concat = concatenate = cat


def stack(tensors, dim=0, *, out=None):
    """Join equally shaped tensors along a new ``dim``."""
    tensors = _tensor_list("stack", tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0]._array.shape
    for i, t in enumerate(tensors[1:], 1):
        if t._array.shape != shape:
            raise RuntimeError("stack expects each tensor to be equal size, but got %s at entry "
                               "0 and %s at entry %d" % (_shape_list(shape),
                                                         _shape_list(t._array.shape), i))
    d = wrap_dim(dim, len(shape) + 1, "stack")
    return Stack.apply(d, _promoted(tensors), *tensors)


def atleast_1d(*tensors):
    """Each tensor viewed with at least 1 dim."""
    res = [reshape(t, (1,)) if t._array.ndim == 0 else t for t in _dims_arg(tensors)]
    return res[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else tuple(res)


def atleast_2d(*tensors):
    """Each tensor viewed with at least 2 dims (a leading 1 is added)."""
    res = []
    for t in _dims_arg(tensors):
        n = t._array.ndim
        res.append(reshape(t, (1, 1)) if n == 0 else unsqueeze(t, 0) if n == 1 else t)
    return res[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else tuple(res)


def atleast_3d(*tensors):
    """Each tensor viewed with at least 3 dims: ``(n,) -> (1, n, 1)``, ``(m, n) -> (m, n, 1)``."""
    res = []
    for t in _dims_arg(tensors):
        n = t._array.ndim
        if n == 0:
            t = reshape(t, (1, 1, 1))
        elif n == 1:
            t = unsqueeze(unsqueeze(t, 0), 2)
        elif n == 2:
            t = unsqueeze(t, 2)
        res.append(t)
    return res[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else tuple(res)


def hstack(tensors, *, out=None):
    """Concatenate column-wise (along dim 0 for 1-D tensors, dim 1 otherwise)."""
    ts = atleast_1d(*tensors)
    ts = (ts,) if isinstance(ts, Tensor) else ts
    return cat(ts, 0 if ts[0]._array.ndim == 1 else 1)


def vstack(tensors, *, out=None):
    """Concatenate row-wise after ``atleast_2d``."""
    ts = atleast_2d(*tensors)
    return cat((ts,) if isinstance(ts, Tensor) else ts, 0)


row_stack = vstack


def dstack(tensors, *, out=None):
    """Concatenate depth-wise (dim 2) after ``atleast_3d``."""
    ts = atleast_3d(*tensors)
    return cat((ts,) if isinstance(ts, Tensor) else ts, 2)


def column_stack(tensors, *, out=None):
    """Stack 0-d/1-d tensors as columns, concatenate 2-d ones along dim 1."""
    cols = [reshape(t, (-1, 1)) if t._array.ndim <= 1 else t for t in tensors]
    return cat(cols, 1)


def split(tensor, split_size_or_sections, dim=0):
    """Split into chunks of ``split_size`` (the last may be smaller) or of the given sizes."""
    n_dim = tensor._array.ndim
    if n_dim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if not isinstance(split_size_or_sections, (list, tuple)) and split_size_or_sections < 0:
        raise RuntimeError("split expects split_size be non-negative, but got split_size=%d"
                           % split_size_or_sections)
    d = wrap_dim(dim, n_dim, "split")
    n = tensor._array.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        return split_with_sizes(tensor, split_size_or_sections, d)
    size = int(split_size_or_sections)
    if size == 0:
        if n:
            raise RuntimeError("split_size can only be 0 if dimension size is 0, but got "
                               "dimension size of %d" % n)
        return _multi_views(Split.apply(tensor, [0], d), "Split")
    sizes = [size] * (n // size) + ([n % size] if n % size else [])
    return _multi_views(Split.apply(tensor, sizes or [0], d), "Split")


def split_with_sizes(input, split_sizes, dim=0):
    """Split into pieces of exactly ``split_sizes`` along ``dim``."""
    d = wrap_dim(dim, input._array.ndim, "split_with_sizes")
    sizes = [int(s) for s in split_sizes]
    n = input._array.shape[d]
    if sum(sizes) != n or any(s < 0 for s in sizes):
        raise RuntimeError("split_with_sizes expects split_sizes to sum exactly to %d (input "
                           "tensor's size at dimension %d), but got split_sizes=%s"
                           % (n, d, _shape_list(sizes)))
    return _multi_views(Split.apply(input, sizes, d, "SplitWithSizesBackward0"),
                        "SplitWithSizes")


def chunk(input, chunks, dim=0):
    """Split into ``chunks`` pieces of ``ceil(size / chunks)`` (fewer when it divides unevenly)."""
    if chunks.__class__ is not int:
        _shape_arg((chunks,), "chunk", "chunks")
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: %d" % chunks)
    if input._array.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, input._array.ndim, "chunk")
    n = input._array.shape[d]
    size = -(-n // chunks)
    if size == 0:
        return split_with_sizes(input, [0] * chunks, d)
    return split(input, size, d)


def tensor_split(input, indices_or_sections, dim=0):
    """Split into ``sections`` nearly equal parts, or at the given ``indices``."""
    if input._array.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = wrap_dim(dim, input._array.ndim, "tensor_split")
    n = input._array.shape[d]
    if isinstance(indices_or_sections, Tensor):
        if indices_or_sections._array.ndim > 1 or indices_or_sections.dtype != _dt.int64:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to %s" % (
                "be a zero-dimensional or one-dimensional tensor, but got a tensor with %d dims"
                % indices_or_sections._array.ndim if indices_or_sections._array.ndim > 1 else
                "have dtype of long, but got %s" % _dt.scalar_type_name(indices_or_sections.dtype)))
        indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if k <= 0:
            raise RuntimeError("number of sections must be larger than 0, got %d" % k)
        sizes = [n // k + 1] * (n % k) + [n // k] * (k - n % k)
        starts = [sum(sizes[:i]) for i in range(len(sizes))]
        return tuple(Narrow.apply(input, d, s, n) for s, n in zip(starts, sizes))
    # (each piece is the slice between consecutive indices, as Python clamps a slice)
    bounds = [min(max(int(i) if i >= 0 else n + int(i), 0), n) for i in indices_or_sections]
    starts, ends = [0] + bounds, bounds + [n]
    return tuple(Narrow.apply(input, d, s, max(e - s, 0)) for s, e in zip(starts, ends))


def _split_dims(op, input, indices_or_sections, least, dim):
    """hsplit / vsplit / dsplit: torch's checks, then ``tensor_split`` along ``dim``."""
    n = input._array.ndim
    if n < least:
        raise RuntimeError("torch.%s requires a tensor with at least %d dimension, but got a "
                           "tensor with %d dimensions!" % (op, least, n))
    if isinstance(indices_or_sections, (int, np.integer)):
        size = input._array.shape[dim]
        k = int(indices_or_sections)
        if k != 0 and size % k:
            raise RuntimeError("torch.%s attempted to split along dimension %d, but the size of "
                               "the dimension %d is not divisible by the split_size %d!"
                               % (op, dim, size, k))
    return tensor_split(input, indices_or_sections, dim)


def _sections_arg(op, indices_or_sections, more):
    """``x.hsplit(1, 2)``: several ints are indices, as torch's Tensor methods take them."""
    if not more:
        return indices_or_sections
    if isinstance(indices_or_sections, (tuple, list)):
        raise TypeError("%s() received an invalid combination of arguments" % op)
    return (indices_or_sections,) + more


def hsplit(input, indices_or_sections, *more):
    """Split along dim 1 (dim 0 for a 1-D tensor)."""
    return _split_dims("hsplit", input, _sections_arg("hsplit", indices_or_sections, more), 1,
                       1 if input._array.ndim > 1 else 0)


def vsplit(input, indices_or_sections, *more):
    """Split along dim 0 of a tensor of at least 2 dims."""
    return _split_dims("vsplit", input, _sections_arg("vsplit", indices_or_sections, more), 2, 0)


def dsplit(input, indices_or_sections, *more):
    """Split along dim 2 of a tensor of at least 3 dims."""
    return _split_dims("dsplit", input, _sections_arg("dsplit", indices_or_sections, more), 3, 2)


class Narrow(Function):
    node_name = "SliceBackward0"

    @staticmethod
    def forward(ctx, a, dim, start, length):
        ctx.args = (dim, start)
        idx = (slice(None),) * dim + (slice(start, start + length),)
        return _view_of(a, a._array[idx], Narrow, dim, start, length)

    @staticmethod
    def backward(ctx, grad_output):
        shape, dtype = ctx._input_meta(0)
        dim, start = ctx.args
        n = grad_output._array.shape[dim]
        xp = xp_of(grad_output)
        parts = []
        if start:
            parts.append(Tensor._wrap(xp.zeros(shape[:dim] + (start,) + shape[dim + 1:], dtype)))
        parts.append(grad_output)
        rest = shape[dim] - start - n
        if rest:
            parts.append(Tensor._wrap(xp.zeros(shape[:dim] + (rest,) + shape[dim + 1:], dtype)))
        return (cat(parts, dim) if len(parts) > 1 else grad_output), None, None, None


def narrow(input, dim, start, length):
    """The view ``input[..., start:start + length, ...]`` along ``dim``."""
    if input._array.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input._array.ndim, "narrow")
    n = input._array.shape[d]
    if isinstance(start, Tensor):
        if start._array.ndim or start._array.dtype.kind not in "iu":
            raise RuntimeError("start must be an 0-dim integral Tensor.")
    elif not isinstance(start, (int, np.integer)) or isinstance(start, (bool, np.bool_)):
        got = ", ".join(type(v).__name__ for v in (dim, start, length))
        raise TypeError("narrow() received an invalid combination of arguments - got (%s), but "
                        "expected one of:\n * (int dim, Tensor start, int length)\n * (int dim, "
                        "int start, int length)\n" % got)
    start = int(start)
    if start < -n or start > n:
        raise IndexError("start out of range (expected to be in range of [%d, %d], but got %d)"
                         % (-n, n, start))
    if start < 0:
        start += n
    if length < 0 or start > n - length:
        raise RuntimeError("start (%d) + length (%d) exceeds dimension size (%d)."
                           % (start, length, n))
    return Narrow.apply(input, d, start, int(length))


class Select(Function):
    node_name = "SelectBackward0"

    @staticmethod
    def forward(ctx, a, dim, index):
        ctx.args = (dim, index)
        return _view_of(a, a._array[(slice(None),) * dim + (index, Ellipsis)], Select, dim,
                        index)

    @staticmethod
    def backward(ctx, grad_output):
        shape, dtype = ctx._input_meta(0)
        dim, index = ctx.args
        n = shape[dim]
        xp = xp_of(grad_output)
        parts = [Tensor._wrap(xp.zeros(shape[:dim] + (index,) + shape[dim + 1:], dtype))] \
            if index else []
        parts.append(unsqueeze(grad_output, dim))
        if n - index - 1:
            parts.append(Tensor._wrap(xp.zeros(shape[:dim] + (n - index - 1,) + shape[dim + 1:],
                                               dtype)))
        return (cat(parts, dim) if len(parts) > 1 else parts[0]), None, None


def select(input, dim, index):
    """The view ``input[..., index, ...]`` with ``dim`` removed."""
    if input._array.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input._array.ndim, "select")
    n = input._array.shape[d]
    if index.__class__ is not int:
        _shape_arg((index,), "select", "index")     # (torch's TypeError for a float or bool)
    index = int(index)
    if index < -n or index >= n:
        raise IndexError("select(): index %d out of range for tensor of size %s at dimension %d"
                         % (index, _shape_list(input._array.shape), d))
    return Select.apply(input, d, index % n)


class Flip(Function):
    node_name = "FlipBackward0"

    @staticmethod
    def forward(ctx, a, dims):
        ctx.dims = dims
        return Tensor._wrap(like(xp_of(a).flip(a._array, dims), a._array))

    @staticmethod
    def backward(ctx, grad_output):
        return flip(grad_output, ctx.dims), None


def flip(input, *dims, **kwargs):
    """Reverse the order of elements along ``dims`` (a copy); ``flip(x, (0, 1))``,
    ``x.flip(0, 1)`` and ``flip(x, dims=...)`` all work."""
    return _flip(input, _int_list("flip", "dims", dims, kwargs, True))


def _flip(input, dims):
    wd = ()
    for d in dims:
        w = wrap_dim(d, input._array.ndim, "flip")
        if w in wd:
            raise RuntimeError("dim %d appears multiple times in the list of dims" % w)
        wd += (w,)
    return Flip.apply(input, tuple(sorted(wd)) if input._array.ndim else ())


def fliplr(input):
    """Flip dim 1 (left/right)."""
    if input._array.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return _flip(input, (1,))


def flipud(input):
    """Flip dim 0 (up/down)."""
    if input._array.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return _flip(input, (0,))


class Roll(Function):
    node_name = "RollBackward0"

    @staticmethod
    def forward(ctx, a, shifts, dims):
        ctx.args = (shifts, dims)
        if dims is None:
            return Tensor._wrap(xp_of(a).roll(a._array, shifts[0]))
        if not a._array.size:
            return Tensor._wrap(a._array.copy())    # (torch checks no dim of an empty tensor)
        xp = xp_of(a)
        out = xp.roll(a._array, shifts, dims)
        for s, d in zip(shifts, dims):  # (torch: per dim, a cat of two slices, laid out as cat's)
            cut = (slice(None),) * d + (slice(-s % out.shape[d], None),)
            out = _cat_layout(xp, out, [out[cut], out[cut[:-1] + (slice(0, cut[-1].start),)]])
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        shifts, dims = ctx.args
        return Roll.apply(grad_output, tuple(-s for s in shifts), dims), None, None


def _int_tuple(v, op, name, pos):
    """``v`` (an int or a sequence of them) as torch's ``tuple of ints`` argument ``name``,
    with its TypeErrors (torch checks only the first element's kind before unpacking)."""
    if isinstance(v, Tensor) and v._array.size == 1 and v._array.dtype.kind in "iu":
        return (int(v),)
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return (int(v),)
    if not isinstance(v, (tuple, list)):
        raise TypeError("%s(): argument '%s' (position %d) must be tuple of ints, not %s"
                        % (op, name, pos, type(v).__name__))
    out = []
    for k, e in enumerate(v):
        if isinstance(e, Tensor) and e._array.size == 1 and e._array.dtype.kind in "iu":
            out.append(int(e))
        elif isinstance(e, (int, np.integer)) and not (k == 0 and isinstance(e, (bool, np.bool_))):
            out.append(int(e))
        elif k == 0:
            raise TypeError("%s(): argument '%s' (position %d) must be tuple of ints, but found "
                            "element of type %s at pos 0" % (op, name, pos, type(e).__name__))
        else:
            raise TypeError("%s(): argument '%s' failed to unpack the object at pos %d with error "
                            "\"type must be tuple of ints,but got %s\""
                            % (op, name, k + 1, type(e).__name__))
    return tuple(out)


def roll(input, shifts, dims=None):
    """Rotate elements along ``dims`` by ``shifts`` (the flattened tensor when ``dims`` is None)."""
    shifts = _int_tuple(shifts, "roll", "shifts", 2)
    dims = () if dims is None else _int_tuple(dims, "roll", "dims", 3)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) == 1:
        return Roll.apply(input, shifts, None)
    if len(shifts) != len(dims):
        raise RuntimeError("shifts and dimensions must align. shifts: %d, dims:%d"
                           % (len(shifts), len(dims)))
    if input._array.ndim == 0:
        raise IndexError("Dimension specified as %d but tensor has no dimensions" % dims[0])
    if input._array.size:       # (torch rolls an empty tensor without checking the dims)
        dims = tuple(wrap_dim(d, input._array.ndim, "roll") for d in dims)
    return Roll.apply(input, shifts, dims)


class Rot90(Function):
    node_name = "Rot90Backward0"

    @staticmethod
    def forward(ctx, a, k, dims):
        ctx.args = (k, dims)
        if k == 0:
            return Tensor._wrap(a._array.copy())
        # (torch: a flip, laid out as the input, then for odd k a transposed view of it)
        out = like(xp_of(a).flip(a._array, dims[1:] if k == 1 else dims[:1] if k == 3 else dims),
                   a._array)
        return Tensor._wrap(out.swapaxes(*dims) if k % 2 else out)

    @staticmethod
    def backward(ctx, grad_output):
        k, dims = ctx.args
        return Rot90.apply(grad_output, -k % 4, dims), None, None


def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``dims`` (from the first towards the
    second)."""
    if len(dims) != 2:
        raise RuntimeError("expected total rotation dims == 2, but got dims = %d" % len(dims))
    n = input._array.ndim
    if n < 2:
        raise RuntimeError("expected total dims >= 2, but got total dims = %d" % n)
    d = tuple(wrap_dim(x, n, "rot90") for x in dims)
    if d[0] == d[1]:
        raise RuntimeError("expected rotation dims to be different, but got dim0 = %d and dim1 "
                           "= %d" % d)
    return Rot90.apply(input, int(k) % 4, d)


class Tril(Function):
    """``tril`` (``upper`` False) or ``triu`` (``upper`` True, node TriuBackward0)."""

    node_name = "TrilBackward0"

    @staticmethod
    def forward(ctx, a, diagonal, upper):
        if upper:
            ctx.set_node_name("TriuBackward0")
        ctx.args = (diagonal, upper)
        xp = xp_of(a)
        return Tensor._wrap(c_order((xp.triu if upper else xp.tril)(a._array, diagonal)))

    @staticmethod
    def backward(ctx, grad_output):
        diagonal, upper = ctx.args
        return Tril.apply(grad_output, diagonal, upper), None, None


def tril(input, diagonal=0, *, out=None):
    """The lower triangle (elements with ``col - row <= diagonal``); the rest set to zero."""
    if input._array.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return Tril.apply(input, int(diagonal), False)


def triu(input, diagonal=0, *, out=None):
    """The upper triangle (elements with ``col - row >= diagonal``); the rest set to zero."""
    if input._array.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return Tril.apply(input, int(diagonal), True)


def _diag_view(arr, offset, d1, d2):
    """A writable strided view of a diagonal, moved to the last dim (as torch.diagonal)."""
    shape, strides = arr.shape, arr.strides
    if offset >= 0:
        n = max(min(shape[d1], shape[d2] - offset), 0)
        sub = arr[(slice(None),) * d2 + (slice(min(offset, shape[d2]), None),)]
    else:
        n = max(min(shape[d1] + offset, shape[d2]), 0)
        sub = arr[(slice(None),) * d1 + (slice(min(-offset, shape[d1]), None),)]
    rest = [i for i in range(arr.ndim) if i not in (d1, d2)]
    new_shape = tuple(shape[i] for i in rest) + (n,)
    new_strides = tuple(strides[i] for i in rest) + (strides[d1] + strides[d2],)
    if n == 0 or sub.size == 0:
        return get_array_module(arr).zeros(new_shape, arr.dtype)
    # (writable exactly when ``arr`` is)
    return backend_of(arr).as_strided(sub, new_shape, new_strides)


class Diagonal(Function):
    node_name = "DiagonalBackward0"

    @staticmethod
    def forward(ctx, a, offset, d1, d2):
        ctx.args = (offset, d1, d2)
        return _view_of(a, _diag_view(a._array, offset, d1, d2), Diagonal, offset, d1, d2)

    @staticmethod
    def backward(ctx, grad_output):
        shape = ctx._input_meta(0)[0]
        offset, d1, d2 = ctx.args
        return DiagonalScatter.apply(grad_output, shape, offset, d1, d2), None, None, None


class DiagonalScatter(Function):
    """Zeros of ``shape`` with ``src`` written on the given diagonal (backward of diagonal)."""

    node_name = "DiagEmbedBackward0"

    @staticmethod
    def forward(ctx, src, shape, offset, d1, d2):
        ctx.args = (offset, d1, d2)
        out = xp_of(src).zeros(shape, dtype=src._array.dtype)
        _diag_view(out, offset, d1, d2)[...] = src._array
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        offset, d1, d2 = ctx.args
        return Diagonal.apply(grad_output, offset, d1, d2), None, None, None, None


class DiagonalCopy(Function):
    """A copy of a diagonal (``diag`` of a matrix: torch's ``diagonal_copy``)."""

    node_name = "DiagonalBackward0_copy"

    @staticmethod
    def forward(ctx, a, offset, d1, d2):
        ctx.args = (offset, d1, d2)
        return Tensor._wrap(_diag_view(a._array, offset, d1, d2).copy())

    backward = staticmethod(Diagonal.backward)


def diagonal(input, offset=0, dim1=0, dim2=1):
    """A view of the diagonal of the ``dim1``/``dim2`` planes, appended as the last dim."""
    n = input._array.ndim
    d1, d2 = wrap_dim(dim1, n, "diagonal"), wrap_dim(dim2, n, "diagonal")
    if d1 == d2:
        raise RuntimeError("diagonal dimensions cannot be identical %d, %d" % (dim1, dim2))
    return Diagonal.apply(input, int(offset), d1, d2)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Matrices whose ``offset`` diagonals (in dims ``dim1``/``dim2``) are the last dim of
    ``input``."""
    n = input._array.ndim + 1
    d1, d2 = wrap_dim(dim1, n, "diag_embed"), wrap_dim(dim2, n, "diag_embed")
    if d1 == d2:
        raise RuntimeError("diagonal dimensions cannot be identical %d, %d" % (dim1, dim2))
    m = input._array.shape[-1] + abs(int(offset))
    rest = list(input._array.shape[:-1])
    shape = []
    for i in range(n):
        shape.append(m if i in (d1, d2) else rest.pop(0))
    return DiagonalScatter.apply(input, tuple(shape), int(offset), d1, d2)


def diag(input, diagonal=0, *, out=None):
    """A 1-D tensor as a diagonal matrix, or the diagonal of a 2-D tensor (a copy)."""
    n = input._array.ndim
    if n == 1:
        return diag_embed(input, diagonal, 0, 1)
    if n == 2:
        return DiagonalCopy.apply(input, int(diagonal), 0, 1)
    raise RuntimeError("diag(): Supports 1D or 2D tensors. Got %dD" % n)


def movedim(input, source, destination):
    """Move dims ``source`` to positions ``destination`` (a permuted view)."""
    n = input._array.ndim
    src = (source,) if isinstance(source, (int, np.integer)) else tuple(source)
    dst = (destination,) if isinstance(destination, (int, np.integer)) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError("movedim: Invalid source or destination dims: source (%s dims) should "
                           "contain the same number of dims as destination (%s dims)"
                           % (_shape_list(src), _shape_list(dst)))
    src = [wrap_dim(d, n, "movedim") for d in src]
    dst = [wrap_dim(d, n, "movedim") for d in dst]
    if len(set(src)) != len(src):
        raise RuntimeError("movedim: repeated dim in `source` (%s)" % _shape_list(source))
    if len(set(dst)) != len(dst):
        raise RuntimeError("movedim: repeated dim in `destination` (%s)"
                           % _shape_list(destination))
    if n == 0:
        return permute(input, ())
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(n) if d not in src)
    order = [o if o is not None else next(rest) for o in order]
    return permute(input, order)


moveaxis = movedim


def unflatten(input, dim, sizes):
    """Expand ``dim`` into the shape ``sizes`` (one entry may be -1)."""
    n = input._array.ndim
    d = wrap_dim(dim, n, "unflatten")
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    try:
        inner = _infer_shape("unflatten", sizes, input._array.shape[d])
    except RuntimeError as e:
        if "is invalid for input of size" not in str(e):
            raise RuntimeError("unflatten got an unexpected error:\n%s" % e) from None
        inner = ()
    if math.prod(inner) != input._array.shape[d] or not inner:
        raise RuntimeError("unflatten: Provided sizes %s don't multiply up to the size of dim %d "
                           "(%d) in the input tensor" % (_shape_list(sizes), d,
                                                         input._array.shape[d]))
    shape = input._array.shape
    return view(input, shape[:d] + inner + shape[d + 1:])


def ravel(input):
    """The flattened tensor (a view when ``input`` is contiguous, else a contiguous copy)."""
    return reshape(input.contiguous(), (-1,))


class Repeat(Function):
    node_name = "RepeatBackward0"

    @staticmethod
    def forward(ctx, a, repeats):
        ctx.repeats = repeats
        arr = a._array
        arr = arr.reshape((1,) * (len(repeats) - arr.ndim) + arr.shape)
        # (a negative count on an empty dim gives that dim size 0, as in torch)
        return Tensor._wrap(c_order(xp_of(a).tile(arr, tuple(max(r, 0) for r in repeats))))

    @staticmethod
    def backward(ctx, grad_output):
        shape = ctx._input_meta(0)[0]
        reps = ctx.repeats
        if 0 in reps:
            return Tensor._wrap(xp_of(grad_output).zeros(shape, grad_output._array.dtype)), None
        if any(r < 0 for r in reps):
            # NOTE: torch's backward reshapes to [repeat, size, ...] and fails on the negative
            # count (a forward with one passes only on an empty dim)
            lead = len(reps) - len(shape)
            split = []
            for r, s in zip(reps[lead:], shape):
                split += ([r] if r != 1 else []) + [s]
            reshape(grad_output.sum(tuple(range(lead))) if lead else grad_output, tuple(split))
        full = (1,) * (len(reps) - len(shape)) + tuple(shape)
        split, kept = [], []
        for r, s in zip(reps, full):
            split += [r, s]
            kept += [1, s]
        g = sum_to(reshape(grad_output, tuple(split)), tuple(kept))   # sum over the copies
        return reshape(g, shape), None


def repeat(input, *sizes):
    """Tile ``input`` ``sizes[i]`` times along each dim (a copy; may add leading dims)."""
    if not sizes:
        raise TypeError("repeat() missing 1 required positional arguments: \"repeats\"")
    sizes = _shape_arg(sizes, "repeat", "repeats")
    if len(sizes) < input._array.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    shape = (1,) * (len(sizes) - input._array.ndim) + input._array.shape
    target = [n * r for n, r in zip(shape, sizes)]
    for n in target:
        if n < 0:
            raise RuntimeError("Trying to create tensor with negative dimension %d: %s"
                               % (n, _shape_list(target)))
    return Repeat.apply(input, tuple(sizes))


def tile(input, *dims, **kwargs):
    """``repeat`` with ``dims`` left-padded with ones to the tensor's rank; ``x.tile(2, 3)`` or
    ``tile(x, (2, 3))``."""
    return _tile(input, _int_list("tile", "dims", dims, kwargs, True))


def _tile(input, dims):
    dims = (1,) * (input._array.ndim - len(dims)) + dims
    return repeat(input, dims)


def broadcast_to(input, size):
    """``expand(size)``."""
    return expand(input, size)


def _broadcast_to_method(input, *size, **kwargs):
    """``Tensor.broadcast_to``: the sizes may come as separate ints (``t.broadcast_to(2, 3)``)."""
    if len(size) > 1 or (size and isinstance(size[0], (int, np.integer))):
        size = (tuple(size),)
    return broadcast_to(input, *size, **kwargs)


def _squeeze_method(input, *dim, **kwargs):
    """``Tensor.squeeze``/``squeeze_``: several dims may come as separate ints
    (``t.squeeze(0, 1)``)."""
    return squeeze(input, dim if len(dim) > 1 else dim[0], **kwargs) if dim else squeeze(
        input, **kwargs)


def _squeeze__method(input, *dim, **kwargs):
    return squeeze_(input, dim if len(dim) > 1 else dim[0], **kwargs) if dim else squeeze_(
        input, **kwargs)


def _flip_function(input, *dims, **kwargs):
    """``torch.flip``: ``dims`` is one sequence (the method ``Tensor.flip`` also takes ints)."""
    return _flip(input, _int_list("flip", "dims", dims, kwargs, False))


def _permute_function(input, *dims, **kwargs):
    """``torch.permute``: ``dims`` is one sequence (``Tensor.permute`` also takes ints)."""
    return _permute(input, _int_list("permute", "dims", dims, kwargs, False))


def _reshape_function(input, *shape, **kwargs):
    """``torch.reshape``: ``shape`` is one sequence (``Tensor.reshape`` also takes ints)."""
    return _reshape(input, _int_list("reshape", "shape", shape, kwargs, False))


def _tile_function(input, *dims, **kwargs):
    """``torch.tile``: ``dims`` is one sequence (``Tensor.tile`` also takes ints)."""
    return _tile(input, _int_list("tile", "dims", dims, kwargs, False))


# torch's module-level forms of the ops above, where they differ from the Tensor methods
# (the names ``ember.NAME`` should be bound to; ``ember.ops.NAME`` keeps the method's forms).
FUNCTION_FORMS = {"flip": _flip_function, "permute": _permute_function,
                  "reshape": _reshape_function, "tile": _tile_function}


def broadcast_shapes(*shapes):
    """The shape that ``shapes`` broadcast to (torch's error message on mismatch)."""
    shapes = tuple((s,) if isinstance(s, (int, np.integer)) else s
                   for s in shapes if s is not None)
    for s in shapes:
        if not isinstance(s, (tuple, list, Size, str)):
            raise RuntimeError("Input shapes should be of type ints, a tuple of ints, or a list "
                               "of ints, got %s" % (s,))
    common = [1] * max((len(s) for s in shapes), default=0)
    for arg, s in enumerate(shapes):
        for i in range(-1, -1 - len(s), -1):
            if s[i] == common[i]:
                continue
            if common[i] == 1:
                if s[i] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[i] = s[i]
            if s[i] != 1 and common[i] != s[i]:
                raise RuntimeError("Attempting to broadcast a dimension of length %s at %d! "
                                   "Mismatching argument at index %d had %s; but expected shape "
                                   "should be broadcastable to %s" % (s[i], i, arg, s, common))
    return Size(common)


def broadcast_tensors(*tensors):
    """Expand all tensors to their common broadcast shape (views)."""
    tensors = _dims_arg(tensors)
    shape = ()
    for t in tensors:
        shape = check_shapes_broadcast("broadcast_tensors", shape, t._array.shape)
    return tuple(t if t._array.shape == shape else expand(t, shape) for t in tensors)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 1-D tensors (``indexing='ij'`` by default, or ``'xy'``)."""
    tensors = list(_dims_arg(tensors))
    if indexing is None:
        warn_once("meshgrid", "torch.meshgrid: in an upcoming release, it will be required to "
                  "pass the indexing argument.")
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError("torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           "received: %s" % indexing)
    for t in tensors:
        if t._array.ndim > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               "got: %s" % t)
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors[1:]:
        if t._array.dtype != tensors[0]._array.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if type(t._array) is not type(tensors[0]._array):
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors[0], tensors[1] = tensors[1], tensors[0]
    shape = tuple(t._array.size for t in tensors)
    n = len(tensors)
    out = [expand(view(t, tuple(-1 if i == k else 1 for i in range(n))), shape)
           for k, t in enumerate(tensors)]
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


# NumPy keyword names (axis=, keepdims=), as torch accepts them.
numpy_names(globals(), __all__)
