"""``ember.linalg``: norms, decompositions, inverses, solvers and matrix functions, as
``torch.linalg``."""
from .ops.linalg import (vector_norm, matrix_norm, solve, linalg_norm as norm, inverse as inv,
                         det, matmul, _svdvals, LinAlgError, inv_ex, solve_ex,
                         linalg_cholesky as cholesky, linalg_cholesky_ex as cholesky_ex,
                         linalg_svd as svd, linalg_eigh as eigh, linalg_eigvalsh as eigvalsh,
                         linalg_eig as eig, linalg_eigvals as eigvals, linalg_qr as qr,
                         linalg_lu as lu, linalg_lu_factor as lu_factor,
                         linalg_lu_factor_ex as lu_factor_ex, linalg_lu_solve as lu_solve,
                         solve_triangular, linalg_slogdet as slogdet, linalg_pinv as pinv,
                         linalg_matrix_rank as matrix_rank, matrix_power, matrix_exp,
                         linalg_cross as cross, vecdot, householder_product,
                         linalg_ldl_factor as ldl_factor, linalg_ldl_factor_ex as ldl_factor_ex,
                         linalg_ldl_solve as ldl_solve, tensorinv, tensorsolve,
                         linalg_vander as vander, cond, lstsq)
from .ops.shape import diagonal as _diagonal

__all__ = ["norm", "vector_norm", "matrix_norm", "inv", "det", "solve", "matmul", "svdvals",
           "multi_dot", "inv_ex", "LinAlgError", "solve_ex", "cholesky", "cholesky_ex", "svd",
           "eigh", "eigvalsh", "eig", "eigvals", "qr", "lu", "lu_factor", "lu_factor_ex",
           "lu_solve", "solve_triangular", "slogdet", "pinv", "matrix_rank", "matrix_power",
           "matrix_exp", "cross", "vecdot", "householder_product", "ldl_factor",
           "ldl_factor_ex", "ldl_solve", "tensorinv", "tensorsolve", "vander", "diagonal",
           "cond", "lstsq"]


def svdvals(A, *, driver=None, out=None):
    """The singular values of ``A`` in descending order."""
    return _svdvals(A)


_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>", "int64": "long int", "int32": "int",
              "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
              "bool": "bool"}


def multi_dot(tensors, *, out=None):
    """``tensors[0] @ tensors[1] @ ...`` (the first may be 1-D, as may the last)."""
    n = len(tensors)
    if n < 2:
        raise RuntimeError("multi_dot(): expected at least 2 tensors but got %d" % n)
    dims = [t.dim() for t in tensors]
    if dims[0] not in (1, 2):
        raise RuntimeError("multi_dot(): the first tensor must be 1D or 2D but got %dD" % dims[0])
    if dims[-1] not in (1, 2):
        raise RuntimeError("multi_dot(): the last tensor must be 1D or 2D but got %dD" % dims[-1])
    for i in range(1, n - 1):
        if dims[i] != 2:
            raise RuntimeError("multi_dot(): tensor %d must be 2D but got %dD" % (i, dims[i]))
    for i in range(1, n):
        if tensors[i].dtype != tensors[0].dtype:
            raise RuntimeError("multi_dot(): all tensors must have be the same dtype but tensor 0 "
                               "is %s and tensor %d %s"
                               % (_CPP_NAMES.get(str(tensors[0].dtype)[6:]), i,
                                  _CPP_NAMES.get(str(tensors[i].dtype)[6:])))
    shapes = [tuple(t.shape) for t in tensors]
    for i in range(n - 1):
        left = shapes[i][-1]
        right = shapes[i + 1][0]
        if left != right:
            raise RuntimeError("multi_dot(): tensors %d and %d with shapes [%s] and [%s] cannot be "
                               "multiplied" % (i, i + 1, ", ".join(map(str, shapes[i])),
                                               ", ".join(map(str, shapes[i + 1]))))
    out = tensors[0]
    for t in tensors[1:]:
        out = matmul(out, t)
    return out


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of the matrices in ``A`` (``torch.diagonal`` with matrix defaults)."""
    return _diagonal(A, offset, dim1, dim2)
