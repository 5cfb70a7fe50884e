"""``_trilinear``: the bilinear form behind ``nn.functional.bilinear``."""
import numpy as np

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
        a1, w, a2 = x1._array, weight._array, x2._array
        low = a1.dtype if a1.dtype.kind == "V" else None     # (bfloat16: NumPy's einsum refuses)
        if low is not None:
            a1, w, a2 = a1.astype(np.float32), w.astype(np.float32), a2.astype(np.float32)
        t = xp.einsum("bi,oij->boj", a1, w)
        out = xp.einsum("boj,bj->bo", t, a2)
        return Tensor._wrap(out if low is None else out.astype(low))

    @staticmethod
    def backward(ctx, grad_output):
        x1, weight, x2 = ctx.saved_tensors
        need = ctx.needs_input_grad
        # (torch's _trilinear_backward: each gradient is a _trilinear unrolled over the output
        # features, summed last, which decides how inf/NaN inputs propagate)
        g1 = gw = g2 = None
        if need[0]:
            g1 = einsum("bo,boi->bi", grad_output, einsum("oij,bj->boi", weight, x2))
        if need[1]:
            gw = einsum("boi,bj->oij", einsum("bi,bo->boi", x1, grad_output), x2)
        if need[2]:
            g2 = einsum("bo,boj->bj", grad_output, einsum("bi,oij->boj", x1, weight))
        return g1, gw, g2
