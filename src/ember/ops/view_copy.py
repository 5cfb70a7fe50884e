"""The functional forms of torch's views: ``*_copy`` (the view, as a new tensor) and
``*_scatter`` (a copy of the input with the view's elements replaced by ``src``).

A ``*_copy`` result has the view's backward under torch's ``..._copy`` node name
(``SelectBackward0_copy``); a ``*_scatter`` result has one node (``SelectScatterBackward0``)
whose gradients are the incoming gradient with the view's elements zeroed (input) and the view
of the incoming gradient (``src``).
"""
from ..autograd.function import Function
from ..backend import get_array_module
from ..tensor import Tensor
from .complex import view_as_complex as _view_as_complex, view_as_real as _view_as_real
from .indexing import nonzero as _nonzero
from .scatter import unfold as _unfold
from . import shape as _shape
from ._util import need_tensors

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


def _copy_op(view_fn, name, node=None):
    def op(input, *args, **kwargs):
        out = view_fn(input, *args, **kwargs)
        if isinstance(out, (tuple, list)):
            return [_copied(o) for o in out]
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
    return input.view(*shape)


alias_copy = _copy_op(_alias, "alias_copy", "AliasBackward0")
as_strided_copy = _copy_op(_shape.as_strided, "as_strided_copy")
diagonal_copy = _copy_op(_shape.diagonal, "diagonal_copy")
expand_copy = _copy_op(_shape.expand, "expand_copy")
permute_copy = _copy_op(_shape.permute, "permute_copy")
select_copy = _copy_op(_shape.select, "select_copy")
slice_copy = _copy_op(_slice, "slice_copy")
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
view_as_complex_copy = _copy_op(_view_as_complex, "view_as_complex_copy")


def narrow_copy(input, dim, start, length):
    """``narrow`` as a new tensor."""
    out = _shape.narrow(input, dim, start, length)
    copy = Tensor._wrap(out._array.copy())
    if out.grad_fn is not None:
        out.grad_fn.set_node_name("NarrowCopyBackward0")
        copy.grad_fn, copy._output_nr, copy._requires_grad = out.grad_fn, 0, True
    return copy


def detach_copy(input):
    """``detach`` as a new tensor."""
    return Tensor._wrap(input._array.copy())


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
        part = view(grad_output)
        zeros = Tensor._wrap(get_array_module(part._array).zeros_like(part._array))
        name = type(ctx).__name__
        return (ViewScatter.apply(grad_output, zeros, view, name), _shape.Clone.apply(part),
                None, None)


def _scatter_into(name, input, src, view):
    need_tensors(name.replace("ScatterBackward0", "_scatter").lower(), input, src)
    if src.dtype != input.dtype:
        src = src.to(input.dtype)
    return ViewScatter.apply(input, src, view, name)


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


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """``input`` with ``input.as_strided(size, stride, storage_offset)`` replaced by ``src``."""
    _shape.as_strided(input.contiguous(), size, stride, storage_offset)
    return _scatter_into("AsStridedScatterBackward0", input.contiguous(), src,
                         lambda t: _shape.as_strided(t, size, stride, storage_offset))


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

