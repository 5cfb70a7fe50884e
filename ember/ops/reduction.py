"""Reductions: sum, mean and the gradient-side ``sum_to_size``."""
import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import wrap_dims

__all__ = ["sum", "mean", "sum_to_size"]


def _expand_back(grad, shape, dims, keepdim):
    """Broadcast a reduced gradient back to the input ``shape``."""
    from .shape import expand, reshape
    if not keepdim and dims:
        kept = list(shape)
        for d in dims:
            kept[d] = 1
        grad = reshape(grad, tuple(kept))
    return expand(grad, shape)


class Sum(Function):
    node_name = "SumBackward0"

    @staticmethod
    def forward(ctx, a, dtype):
        arr = a._array
        if dtype is not None:
            arr = arr.astype(dtype.np)
        elif arr.dtype.kind in "biu":
            arr = arr.astype(np.int64)
        return Tensor._wrap(np.asarray(arr.sum()))

    @staticmethod
    def backward(ctx, grad_output):
        from .shape import expand
        return expand(grad_output, ctx._input_meta(0)[0]), None


class SumDim(Function):
    node_name = "SumBackward1"

    @staticmethod
    def forward(ctx, a, dims, keepdim, dtype):
        arr = a._array
        if dtype is not None:
            arr = arr.astype(dtype.np)
        elif arr.dtype.kind in "biu":
            arr = arr.astype(np.int64)
        ctx.dims, ctx.keepdim = dims, keepdim
        return Tensor._wrap(np.asarray(arr.sum(axis=dims, keepdims=keepdim)))

    @staticmethod
    def backward(ctx, grad_output):
        return _expand_back(grad_output, ctx._input_meta(0)[0], ctx.dims, ctx.keepdim), \
            None, None, None


class Mean(Function):
    node_name = "MeanBackward0"

    @staticmethod
    def forward(ctx, a, dtype):
        arr = a._array if dtype is None else a._array.astype(dtype.np)
        if arr.dtype.kind not in "fc":
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either "
                               "a floating point or complex dtype. Got: %s"
                               % _dt.from_numpy_dtype(arr.dtype)._legacy.replace("Tensor", ""))
        with np.errstate(invalid="ignore", divide="ignore"):
            return Tensor._wrap(np.asarray(arr.mean(dtype=arr.dtype)))

    @staticmethod
    def backward(ctx, grad_output):
        from .shape import expand
        shape = ctx._input_meta(0)[0]
        n = int(np.prod(shape))
        return expand(grad_output / n if n else grad_output, shape), None


class MeanDim(Function):
    node_name = "MeanBackward1"

    @staticmethod
    def forward(ctx, a, dims, keepdim, dtype):
        arr = a._array if dtype is None else a._array.astype(dtype.np)
        if arr.dtype.kind not in "fc":
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either "
                               "a floating point or complex dtype. Got: %s"
                               % _dt.from_numpy_dtype(arr.dtype)._legacy.replace("Tensor", ""))
        ctx.dims, ctx.keepdim = dims, keepdim
        with np.errstate(invalid="ignore", divide="ignore"):
            return Tensor._wrap(np.asarray(arr.mean(axis=dims, keepdims=keepdim,
                                                    dtype=arr.dtype)))

    @staticmethod
    def backward(ctx, grad_output):
        shape = ctx._input_meta(0)[0]
        n = 1
        for d in ctx.dims:
            n *= shape[d]
        g = grad_output / n if n else grad_output
        return _expand_back(g, shape, ctx.dims, ctx.keepdim), None, None, None


class SumToSize(Function):
    """Sum a broadcast gradient back to ``shape`` (the backward of broadcasting)."""

    node_name = "SumToSizeBackward0"

    @staticmethod
    def forward(ctx, a, shape):
        arr = a._array
        lead = arr.ndim - len(shape)
        if lead < 0:
            raise RuntimeError("size {%s} is not expandable to size {%s}."
                               % (", ".join(map(str, shape)), ", ".join(map(str, arr.shape))))
        axes = tuple(range(lead)) + tuple(
            lead + i for i, s in enumerate(shape) if s == 1 and arr.shape[lead + i] != 1)
        out = arr.sum(axis=axes, keepdims=True) if axes else arr
        if lead:
            out = out.reshape(shape)
        return Tensor._wrap(np.asarray(out))

    @staticmethod
    def backward(ctx, grad_output):
        from .shape import expand
        return expand(grad_output, ctx._input_meta(0)[0]), None


def sum_to_size(input, *size):
    """Sum ``input`` down to ``size`` (which must broadcast to ``input.shape``)."""
    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    if input._array.shape == shape:
        return input
    return SumToSize.apply(input, shape)


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Sum of all elements, or over ``dim`` (int or tuple); ints sum to int64.

    Example:
        >>> import ember
        >>> ember.tensor([[1., 2.], [3., 4.]]).sum(dim=0)
        tensor([4., 6.])
    """
    d = None if dtype is None else _dt.to_dtype(dtype)
    if dim is None:
        if keepdim:
            dims = tuple(range(input._array.ndim))
            return SumDim.apply(input, dims, True, d)
        return Sum.apply(input, d)
    return SumDim.apply(input, wrap_dims(dim, input._array.ndim, "sum"), keepdim, d)


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mean of all elements, or over ``dim`` (int or tuple); floating inputs only."""
    d = None if dtype is None else _dt.to_dtype(dtype)
    if dim is None:
        if keepdim:
            return MeanDim.apply(input, tuple(range(input._array.ndim)), True, d)
        return Mean.apply(input, d)
    return MeanDim.apply(input, wrap_dims(dim, input._array.ndim, "mean"), keepdim, d)
