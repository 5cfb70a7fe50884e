"""Matrix products: mm, matmul (every shape case), with gradients written as matrix products."""
import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import binary_arrays, sum_to

__all__ = ["mm", "matmul"]


def _shape_str(shape):
    return "x".join(str(d) for d in shape)


class Mm(Function):
    node_name = "MmBackward0"

    @staticmethod
    def forward(ctx, a, b):
        aa, bb = a._array, b._array
        if aa.ndim != 2:
            raise RuntimeError("self must be a matrix (mm got a %d-D tensor of shape %s)"
                               % (aa.ndim, tuple(aa.shape)))
        if bb.ndim != 2:
            raise RuntimeError("mat2 must be a matrix (mm got a %d-D tensor of shape %s)"
                               % (bb.ndim, tuple(bb.shape)))
        if aa.shape[1] != bb.shape[0]:
            raise RuntimeError("mat1 and mat2 shapes cannot be multiplied (%s and %s)"
                               % (_shape_str(aa.shape), _shape_str(bb.shape)))
        if aa.dtype != bb.dtype:
            raise RuntimeError("expected m1 and m2 to have the same dtype, but got: %s != %s"
                               % (a.dtype, b.dtype))
        need = ctx.needs_input_grad
        ctx.save_for_backward(a if need[1] else None, b if need[0] else None)
        return Tensor._wrap(aa @ bb)

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        ga = mm(grad_output, b.t()) if need[0] else None
        gb = mm(a.t(), grad_output) if need[1] else None
        return ga, gb


class Matmul(Function):
    """``matmul`` for the 1-D and batched cases (2-D x 2-D goes through Mm)."""

    node_name = "MatmulBackward0"

    @staticmethod
    def forward(ctx, a, b):
        aa, bb = binary_arrays("matmul", a, b) if a._array.dtype != b._array.dtype else \
            (a._array, b._array)
        if aa.ndim == 0 or bb.ndim == 0:
            raise RuntimeError("both arguments to matmul need to be at least 1D, but they are "
                               "%dD and %dD" % (aa.ndim, bb.ndim))
        k_a = aa.shape[-1]
        k_b = bb.shape[0] if bb.ndim == 1 else bb.shape[-2]
        if k_a != k_b:
            if aa.ndim == 1 and bb.ndim == 1:
                raise RuntimeError("inconsistent tensor size, expected tensor [%d] and src [%d] "
                                   "to have the same number of elements, but got %d and %d "
                                   "elements respectively" % (k_a, k_b, k_a, k_b))
            raise RuntimeError("mat1 and mat2 shapes cannot be multiplied (%s and %s)"
                               % (_shape_str(aa.shape[-2:] if aa.ndim > 1 else (1, k_a)),
                                  _shape_str(bb.shape[-2:] if bb.ndim > 1 else (k_b, 1))))
        try:
            out = np.matmul(aa, bb)
        except ValueError:
            raise RuntimeError("matmul: batch dimensions of %s and %s cannot be broadcast"
                               % (tuple(aa.shape), tuple(bb.shape))) from None
        ctx.save_for_backward(a, b)
        return Tensor._wrap(np.asarray(out))

    @staticmethod
    def backward(ctx, grad_output):
        from .shape import unsqueeze, reshape
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        a2 = unsqueeze(a, 0) if a._array.ndim == 1 else a
        b2 = unsqueeze(b, -1) if b._array.ndim == 1 else b
        g = grad_output
        if a._array.ndim == 1:
            g = unsqueeze(g, -2)
        if b._array.ndim == 1:
            g = unsqueeze(g, -1)
        ga = gb = None
        if need[0]:
            ga = matmul(g, b2.transpose(-1, -2))
            ga = reshape(sum_to(ga, a2._array.shape), a._array.shape)
        if need[1]:
            gb = matmul(a2.transpose(-1, -2), g)
            gb = reshape(sum_to(gb, b2._array.shape), b._array.shape)
        return ga, gb


def mm(input, mat2, *, out=None):
    """Matrix product of two 2-D tensors.

    Raises RuntimeError "mat1 and mat2 shapes cannot be multiplied (AxB and CxD)" on mismatch.
    """
    return Mm.apply(input, mat2)


def matmul(input, other, *, out=None):
    """Matrix product with torch's rules for 1-D, 2-D and batched (broadcast) operands."""
    if input._array.ndim == 2 and other._array.ndim == 2 and \
            input._array.dtype == other._array.dtype:
        return Mm.apply(input, other)
    return Matmul.apply(input, other)
