"""``_trilinear``: the bilinear form behind ``nn.functional.bilinear``."""
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import xp_of
from .matmul import einsum

__all__ = []


class Trilinear(Function):
    """``out[b, o] = sum_ij x1[b, i] w[o, i, j] x2[b, j]`` for flat ``(B, I)``, ``(B, J)``."""

    node_name = "TrilinearBackward0"

    @staticmethod
    def forward(ctx, x1, weight, x2):
        ctx.save_for_backward(x1, weight, x2)
        xp = xp_of(x1)
        # NOTE: x1 and the weight first, then x2, as torch's _trilinear (which decides how
        # inf/NaN inputs propagate)
        t = xp.einsum("bi,oij->boj", x1._array, weight._array)
        return Tensor._wrap(xp.einsum("boj,bj->bo", t, x2._array))

    @staticmethod
    def backward(ctx, grad_output):
        x1, weight, x2 = ctx.saved_tensors
        need = ctx.needs_input_grad
        g1 = einsum("bo,oij,bj->bi", grad_output, weight, x2) if need[0] else None
        gw = einsum("bo,bi,bj->oij", grad_output, x1, x2) if need[1] else None
        g2 = einsum("bo,bi,oij->bj", grad_output, x1, weight) if need[2] else None
        return g1, gw, g2
