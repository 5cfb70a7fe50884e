"""``ember.linalg``: norms, inverse, determinant and linear solves, as ``torch.linalg``."""
from .ops.linalg import (vector_norm, matrix_norm, solve, linalg_norm as norm, inverse as inv,
                         det, matmul, Svdvals as _Svdvals)

__all__ = ["norm", "vector_norm", "matrix_norm", "inv", "det", "solve", "matmul", "svdvals",
           "multi_dot", "inv_ex"]


def svdvals(A, *, driver=None, out=None):
    """The singular values of ``A`` in descending order."""
    return _Svdvals.apply(A)


def multi_dot(tensors, *, out=None):
    """``tensors[0] @ tensors[1] @ ...`` (the first may be 1-D, as may the last)."""
    out = tensors[0]
    for t in tensors[1:]:
        out = matmul(out, t)
    return out


def inv_ex(A, *, check_errors=False, out=None):
    """``(inv(A), info)`` with ``info`` zero (ember raises on singular input)."""
    from .ops.creation import zeros
    from . import int32
    from .return_types import linalg_inv_ex
    return linalg_inv_ex(inv(A), zeros(A.shape[:-2], dtype=int32))
