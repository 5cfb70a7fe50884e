"""The functional forms of torch's views: ``*_copy`` (the view, as a new tensor) and
``*_scatter`` (a copy of the input with the view's elements replaced by ``src``).

A ``*_copy`` result has the view's backward under torch's ``..._copy`` node name
(``SelectBackward0_copy``); a ``*_scatter`` result has one node (``SelectScatterBackward0``)
whose gradients are the incoming gradient with the view's elements zeroed (input) and the view
of the incoming gradient (``src``).
"""
from .. import dtypes as _dt
from ..autograd.function import Function
from ..autograd.grad_mode import state as _grad_state
from ..backend import backend_of, get_array_module
from ..tensor import Tensor
from .complex import view_as_complex as _view_as_complex, view_as_real as _view_as_real
from .indexing import nonzero as _nonzero
from .scatter import unfold as _unfold
from . import shape as _shape
from ._util import check_real_grad, need_tensors

__all__ = ["alias_copy", "as_strided_copy", "detach_copy", "diagonal_copy", "expand_copy",
           "permute_copy", "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy",
           "squeeze_copy", "t_copy", "transpose_copy", "unbind_copy", "unfold_copy",
           "unsqueeze_copy", "view_copy", "view_as_real_copy", "view_as_complex_copy",
           "narrow_copy", "select_scatter", "slice_scatter", "diagonal_scatter",
           "as_strided_scatter", "nonzero_static"]


def _copied(view, name=None):
    """``view`` (an output of a view op) as a new tensor with the view's node renamed
    ``<name>_copy``, as torch's ``*_copy`` ops record."""
    out = Tensor._wrap(view._array.copy())
    node = view.grad_fn
    if node is not None:
        name = name or type(node).__name__
        if not name.endswith("_copy"):
            node.set_node_name(name + "_copy")
        out.grad_fn = node
        out._output_nr = view._output_nr
        out._requires_grad = True
    return out


def _no_complex_grad(name, out, *inputs):
    """torch's error for an op without a complex derivative whose result is complex while an
    input requires grad (raised after the forward, as torch)."""
    if out._array.dtype.kind == "c" and _grad_state.enabled and any(
            isinstance(t, Tensor) and t._requires_grad for t in inputs):
        raise RuntimeError("%s does not support automatic differentiation for outputs with "
                           "complex dtype." % name)


def _copy_op(view_fn, name, node=None, real_grad_only=False):
    def op(input, *args, **kwargs):
        out = view_fn(input, *args, **kwargs)
        if isinstance(out, (tuple, list)):
            return [_copied(o) for o in out]
        if real_grad_only:
            _no_complex_grad(name, out, input)
        return _copied(out, node)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = "``%s`` as a new tensor (no memory shared with ``input``)." % (
        view_fn.__name__,)
    return op


def _alias(input):
    return _shape.view(input, input.shape)


def _slice(input, dim=0, start=None, end=None, step=1):
    n = input._array.ndim
    if n == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    d = dim + n if dim < 0 else dim
    if not 0 <= d < n:
        raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got "
                         "%d)" % (-n, n - 1, dim))
    return input[(slice(None),) * d + (slice(start, end, step),)]


def _view_dtype_or_shape(input, *shape):
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list)):
        return input.view(*shape)
    shape = _shape._infer_shape("view", _shape._shape_arg(shape), input._array.size)
    if _shape._reshaped_view(input._array, shape) is not None:
        return _shape.view(input, shape)
    # NOTE: torch's view_copy copies any layout (no "view size is not compatible" error)
    out = _shape.Reshape.apply(input, shape)
    if out.grad_fn is not None:
        out.grad_fn.set_node_name("ViewBackward0")
    return out


alias_copy = _copy_op(_alias, "alias_copy", "AliasBackward0")
as_strided_copy = _copy_op(_shape.as_strided, "as_strided_copy")
diagonal_copy = _copy_op(_shape.diagonal, "diagonal_copy")
expand_copy = _copy_op(_shape.expand, "expand_copy")
permute_copy = _copy_op(_shape.permute, "permute_copy")
select_copy = _copy_op(_shape.select, "select_copy", real_grad_only=True)
slice_copy = _copy_op(_slice, "slice_copy", real_grad_only=True)
split_copy = _copy_op(_shape.split, "split_copy")
split_with_sizes_copy = _copy_op(_shape.split_with_sizes, "split_with_sizes_copy")
squeeze_copy = _copy_op(_shape.squeeze, "squeeze_copy")
t_copy = _copy_op(_shape.t, "t_copy")
transpose_copy = _copy_op(_shape.transpose, "transpose_copy")
unbind_copy = _copy_op(_shape.unbind, "unbind_copy")
unfold_copy = _copy_op(_unfold, "unfold_copy")
unsqueeze_copy = _copy_op(_shape.unsqueeze, "unsqueeze_copy")
view_copy = _copy_op(_view_dtype_or_shape, "view_copy")
view_as_real_copy = _copy_op(_view_as_real, "view_as_real_copy")
view_as_complex_copy = _copy_op(_view_as_complex, "view_as_complex_copy",
                                real_grad_only=True)


def narrow_copy(input, dim, start, length):
    """``narrow`` as a new tensor."""
    n = input._array.ndim
    if n and isinstance(dim, int) and dim >= n:
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, "
                           "but got false.  (Could this error message be improved?  If so, "
                           "please report an enhancement request to PyTorch.)")
    out = _shape.narrow(input, dim, start, length)
    copy = Tensor._wrap(out._array.copy())
    if out.grad_fn is not None:
        out.grad_fn.set_node_name("NarrowCopyBackward0")
        copy.grad_fn, copy._output_nr, copy._requires_grad = out.grad_fn, 0, True
    return copy


class DetachCopy(Function):
    """``detach_copy``: a copy whose backward raises torch's error (it has no derivative)."""

    node_name = "NotImplemented"

    @staticmethod
    def forward(ctx, a):
        return Tensor._wrap(a._array.copy())

    @staticmethod
    def backward(ctx, grad_output):
        raise RuntimeError("derivative for aten::detach_copy is not implemented")


def detach_copy(input):
    """``detach`` as a new tensor (torch records it: its backward raises)."""
    if not isinstance(input, Tensor):
        raise TypeError("detach_copy(): argument 'input' (position 1) must be Tensor, not %s"
                        % type(input).__name__)
    return DetachCopy.apply(input)


class ViewScatter(Function):
    """A copy of ``input`` with the elements ``view(input)`` selects replaced by ``src``."""

    @staticmethod
    def forward(ctx, input, src, view, name):
        ctx.set_node_name(name)
        ctx.view = view
        out = Tensor._wrap(input._array.copy())
        target = view(out)
        if target._array.shape != src._array.shape:
            raise RuntimeError("expected src to have a size equal to the slice of self. src size "
                               "= %s, slice size = %s" % (list(src._array.shape),
                                                          list(target._array.shape)))
        target._array[...] = src._array
        return out

    @staticmethod
    def backward(ctx, grad_output):
        view = ctx.view
        need = ctx.needs_input_grad
        part = view(grad_output)
        g_input = g_src = None
        if need[0]:
            zeros = Tensor._wrap(get_array_module(part._array).zeros_like(part._array))
            g_input = ViewScatter.apply(grad_output, zeros, view, type(ctx).__name__)
        if need[1]:
            g_src = _shape.Clone.apply(part)
            check_real_grad(g_src, ctx, 1)
        return g_input, g_src, None, None


def _scatter_into(name, input, src, view):
    need_tensors(name.replace("ScatterBackward0", "_scatter").lower(), input, src)
    grad = src.requires_grad
    src = _cast_src(input, src)
    out = ViewScatter.apply(input, src, view, name)
    _differentiable_out(out, grad)
    if name in _REAL_GRAD_ONLY:
        _no_complex_grad(_REAL_GRAD_ONLY[name], out, input, src)
    return out


# the scatters torch has no complex derivative for
_REAL_GRAD_ONLY = {"SelectScatterBackward0": "select_scatter",
                   "SliceScatterBackward0": "slice_scatter"}


def select_scatter(input, src, dim, index):
    """``input`` with ``input.select(dim, index)`` replaced by ``src``."""
    _shape.select(input, dim, index)     # (torch's errors for a bad dim/index)
    return _scatter_into("SelectScatterBackward0", input, src,
                         lambda t: _shape.select(t, dim, index))


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """``input`` with ``input[..., start:end:step, ...]`` (along ``dim``) replaced by ``src``."""
    _slice(input, dim, start, end, step)
    return _scatter_into("SliceScatterBackward0", input, src,
                         lambda t: _slice(t, dim, start, end, step))


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """``input`` with ``input.diagonal(offset, dim1, dim2)`` replaced by ``src``."""
    _shape.diagonal(input, offset, dim1, dim2)
    return _scatter_into("DiagonalScatterBackward0", input, src,
                         lambda t: _shape.diagonal(t, offset, dim1, dim2))


class AsStridedScatter(Function):
    """A copy of ``input`` with ``src`` at ``size``, ``stride`` and ``offset`` of its memory.

    As torch (clone_preserve_strides), the copy is of ``input``'s whole storage, viewed with
    ``input``'s geometry; ``offset`` None is that view's storage offset."""

    node_name = "AsStridedScatterBackward0"

    @staticmethod
    def forward(ctx, input, src, size, stride, offset):
        ctx.geometry = (size, stride, offset)
        arr = input._array
        storage = input._base._array if input._base is not None else arr
        geom = _shape._strided_geometry(arr, storage)
        if geom is None or any(n > 1 and st == 0 for n, st in zip(arr.shape, arr.strides)):
            storage = arr.copy()
            geom = (arr.shape, tuple(st // arr.itemsize for st in storage.strides), 0)
        flat = backend_of(storage).as_strided(storage, (_shape._storage_size(storage),),
                                              (storage.itemsize,)).copy()
        out = _shape.as_strided(Tensor._wrap(flat), *geom)
        target = _shape.as_strided(out, size, stride, offset)
        if target._array.shape != src._array.shape:
            raise RuntimeError("expected src to have a size equal to the slice of self. src size "
                               "= %s, slice size = %s" % (list(src._array.shape),
                                                          list(target._array.shape)))
        if any(n > 1 and st == 0 for n, st in zip(size, stride)):
            raise RuntimeError("unsupported operation: more than one element of the written-to "
                               "tensor refers to a single memory location. Please clone() the "
                               "tensor before performing the operation.")
        target._array[...] = src._array
        return Tensor._wrap(out._array)

    @staticmethod
    def backward(ctx, grad_output):
        # NOTE: torch's formula for ``input`` (as_strided_scatter_backward) keeps the gradient
        # inside the scattered region and zeroes the rest, the reverse of the derivative; the
        # derivative is used here. Both take positions in the gradient's row-major order.
        size, stride, offset = ctx.geometry
        g = grad_output.contiguous()
        part = _shape.as_strided(g, size, stride, offset)
        g_input = g_src = None
        if ctx.needs_input_grad[0]:
            zeros = Tensor._wrap(get_array_module(part._array).zeros_like(part._array))
            g_input = AsStridedScatter.apply(g, zeros, size, stride, offset)
        if ctx.needs_input_grad[1]:
            g_src = _shape.Clone.apply(part)
            check_real_grad(g_src, ctx, 1)
        return g_input, g_src, None, None, None


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """``input`` with ``input.as_strided(size, stride, storage_offset)`` replaced by ``src``
    (positions in the memory of a copy of ``input`` that keeps its layout)."""
    need_tensors("as_strided_scatter", input, src)
    if input._requires_grad and not input.is_contiguous():
        raise RuntimeError("!self.requires_grad() || self.is_contiguous() INTERNAL ASSERT FAILED "
                           "at \"/__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp\":4754, "
                           "please report a bug to PyTorch. as_strided_scatter is currently only "
                           "supported for contiguous inputs")
    size = tuple(int(n) for n in size)
    stride = tuple(int(n) for n in stride)
    grad = src.requires_grad
    src = _cast_src(input, src)
    offset = None if storage_offset is None else int(storage_offset)
    out = AsStridedScatter.apply(input, src, size, stride, offset)
    _differentiable_out(out, grad)
    return out


def _cast_src(input, src):
    """``src`` for a scatter into ``input``: cast inside the op (torch's copy, no node of its
    own; a real ``src``'s complex gradient then meets the engine's check, as in torch), except
    a complex ``src`` for a real ``input``."""
    if src.is_complex() and not input.is_complex():
        return src.to(input.dtype)
    return src


def _differentiable_out(out, grad):
    """torch's error for a scatter into an integer or bool ``input`` of a ``src`` that
    requires grad (the result, of ``input``'s dtype, cannot carry the gradient)."""
    dtype = out._array.dtype
    if grad and _grad_state.enabled and dtype.kind not in "fcV":
        raise RuntimeError("Autograd not support dtype: %s" % _dt.scalar_type_name(dtype))


def nonzero_static(input, *, size, fill_value=-1):
    """The first ``size`` rows of ``nonzero(input)``, padded with ``fill_value`` rows."""
    if not isinstance(size, int) or isinstance(size, bool):
        raise TypeError("nonzero_static(): argument 'size' must be int, not %s"
                        % type(size).__name__)
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    idx = _nonzero(input)
    n, nd = idx.shape[0], idx.shape[1]
    if n >= size:
        return idx[:size].contiguous()
    arr = idx._array
    rest = Tensor._wrap(get_array_module(arr).full((size - n, nd), fill_value, dtype=arr.dtype))
    return _shape.cat([idx, rest], 0)

