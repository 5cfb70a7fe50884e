"""Shape ops: view, reshape, transpose, permute, t, squeeze, unsqueeze, expand, flatten, unbind.

Views share memory and the version counter with their base, as in torch.
"""
import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import wrap_dim

__all__ = ["view", "reshape", "transpose", "swapaxes", "swapdims", "permute", "t", "squeeze",
           "unsqueeze", "expand", "expand_as", "flatten", "unbind", "view_as", "reshape_as",
           "squeeze_", "unsqueeze_", "t_", "transpose_"]


def _view_of(a, arr):
    out = Tensor._wrap(arr)
    out._version_ref = a._version_ref
    out._base = a._base if a._base is not None else a
    return out


def _infer_shape(op, shape, numel):
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError("invalid shape dimension %d" % s)
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError("shape '%s' is invalid for input of size %d" % (shape, numel))
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError("shape '%s' is invalid for input of size %d" % (shape, numel))
    return tuple(shape)


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


class View(Function):
    node_name = "ViewBackward0"

    @staticmethod
    def forward(ctx, a, shape):
        arr = a._array
        v = arr.view()
        try:
            v.shape = shape
        except AttributeError:
            raise RuntimeError("view size is not compatible with input tensor's size and stride "
                               "(at least one dimension spans across two contiguous subspaces). "
                               "Use .reshape(...) instead.") from None
        return _view_of(a, v)

    @staticmethod
    def backward(ctx, grad_output):
        return reshape(grad_output, ctx._input_meta(0)[0]), None


class Reshape(Function):
    node_name = "ViewBackward0"

    @staticmethod
    def forward(ctx, a, shape):
        arr = a._array
        v = arr.view()
        try:
            v.shape = shape
            return _view_of(a, v)
        except AttributeError:
            return Tensor._wrap(arr.reshape(shape))

    @staticmethod
    def backward(ctx, grad_output):
        return reshape(grad_output, ctx._input_meta(0)[0]), None


class Transpose(Function):
    node_name = "TransposeBackward0"

    @staticmethod
    def forward(ctx, a, d0, d1):
        ctx.dims = (d0, d1)
        return _view_of(a, np.swapaxes(a._array, d0, d1))

    @staticmethod
    def backward(ctx, grad_output):
        return transpose(grad_output, *ctx.dims), None, None


class T(Function):
    node_name = "TBackward0"

    @staticmethod
    def forward(ctx, a):
        return _view_of(a, a._array.T)

    @staticmethod
    def backward(ctx, grad_output):
        return t(grad_output)


class Permute(Function):
    node_name = "PermuteBackward0"

    @staticmethod
    def forward(ctx, a, dims):
        ctx.dims = dims
        return _view_of(a, np.transpose(a._array, dims))

    @staticmethod
    def backward(ctx, grad_output):
        return permute(grad_output, tuple(np.argsort(ctx.dims).tolist())), None


class Unsqueeze(Function):
    node_name = "UnsqueezeBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        return _view_of(a, np.expand_dims(a._array, dim))

    @staticmethod
    def backward(ctx, grad_output):
        return squeeze(grad_output, ctx.dim), None


class Squeeze(Function):
    node_name = "SqueezeBackward0"

    @staticmethod
    def forward(ctx, a, dims):
        arr = a._array
        dims = tuple(d for d in dims if arr.shape[d] == 1)
        return _view_of(a, arr.squeeze(axis=dims) if dims else arr.view())

    @staticmethod
    def backward(ctx, grad_output):
        return reshape(grad_output, ctx._input_meta(0)[0]), None


class Expand(Function):
    node_name = "ExpandBackward0"

    @staticmethod
    def forward(ctx, a, shape):
        return _view_of(a, np.broadcast_to(a._array, shape))

    @staticmethod
    def backward(ctx, grad_output):
        from ._util import sum_to
        return sum_to(grad_output, ctx._input_meta(0)[0]), None


def view(input, *shape):
    """The same data with another shape (no copy; -1 infers one dim).

    ``view(dtype)`` reinterprets the bytes as another dtype.
    """
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer, tuple, list)):
        from .. import dtypes as _dt
        d = _dt.to_dtype(shape[0])
        return _view_of(input, input._array.view(d.np))
    shape = _infer_shape("view", _shape_arg(shape), input._array.size)
    if shape == input._array.shape and not input._requires_grad:
        return _view_of(input, input._array.view())
    return View.apply(input, shape)


def reshape(input, *shape):
    """``view`` when the memory layout allows, otherwise a copy."""
    shape = _infer_shape("reshape", _shape_arg(shape), input._array.size)
    return Reshape.apply(input, shape)


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


def permute(input, *dims):
    """Reorder the dims (a view)."""
    dims = _shape_arg(dims)
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
        dims = tuple(range(n))
    elif isinstance(dim, (tuple, list)):
        dims = tuple(wrap_dim(d, n, "squeeze") for d in dim)
    else:
        dims = (wrap_dim(dim, n, "squeeze"),) if n else ()
    return Squeeze.apply(input, dims)


def expand(input, *sizes):
    """Broadcast to ``sizes`` without copying (-1 keeps a dim)."""
    sizes = _shape_arg(sizes)
    shape = input._array.shape
    if len(sizes) < len(shape):
        raise RuntimeError("expand(torch.FloatTensor{%s}, size=%s): the number of sizes provided "
                           "(%d) must be greater or equal to the number of dimensions in the "
                           "tensor (%d)" % (list(shape), list(sizes), len(sizes), len(shape)))
    lead = len(sizes) - len(shape)
    out = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError("expand: -1 is not allowed in a leading, non-existing "
                                   "dimension")
            out.append(s)
            continue
        cur = shape[i - lead]
        if s == -1:
            s = cur
        if cur != s and cur != 1:
            raise RuntimeError("The expanded size of the tensor (%d) must match the existing "
                               "size (%d) at non-singleton dimension %d.  Target sizes: %s.  "
                               "Tensor sizes: %s" % (s, cur, i, list(sizes), list(shape)))
        out.append(s)
    out = tuple(out)
    if out == shape:
        return input if not input._requires_grad else Expand.apply(input, out)
    return Expand.apply(input, out)


def expand_as(input, other):
    """``expand(other.size())``."""
    return expand(input, other._array.shape)


def flatten(input, start_dim=0, end_dim=-1):
    """Merge dims ``start_dim..end_dim`` into one."""
    n = input._array.ndim
    if n == 0:
        return reshape(input, (1,))
    s = wrap_dim(start_dim, n, "flatten")
    e = wrap_dim(end_dim, n, "flatten")
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = input._array.shape
    new = shape[:s] + (int(np.prod(shape[s:e + 1])),) + shape[e + 1:]
    return reshape(input, new)


def unbind(input, dim=0):
    """The slices along ``dim``, as a tuple."""
    d = wrap_dim(dim, input._array.ndim, "unbind")
    idx = [slice(None)] * d
    return tuple(input[tuple(idx + [i])] for i in range(input._array.shape[d]))


def squeeze_(input, dim=None):
    from ._inplace import inplace
    out = squeeze(input.detach(), dim)
    return _reshape_inplace(input, out._array.shape)


def unsqueeze_(input, dim):
    out = unsqueeze(input.detach(), dim)
    return _reshape_inplace(input, out._array.shape)


def t_(input):
    return transpose_(input, 0, 1) if input._array.ndim == 2 else input


def transpose_(input, dim0, dim1):
    if input._requires_grad:
        raise RuntimeError("transpose_ on a tensor that requires grad is not supported by ember; "
                           "use transpose()")
    input._array = np.swapaxes(input._array, dim0, dim1)
    return input


def _reshape_inplace(input, shape):
    if input._requires_grad and input.grad_fn is not None:
        raise RuntimeError("in-place shape change of a non-leaf tensor is not supported by ember; "
                           "use the out-of-place op")
    input._array = input._array.reshape(shape)
    return input
