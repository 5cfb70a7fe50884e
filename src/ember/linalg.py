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
                         linalg_matrix_rank as matrix_rank, matrix_power as _matrix_power,
                         matrix_exp, _check_svd_driver,
                         linalg_cross as cross, vecdot, householder_product,
                         linalg_ldl_factor as ldl_factor, linalg_ldl_factor_ex as ldl_factor_ex,
                         linalg_ldl_solve as ldl_solve, tensorinv, tensorsolve,
                         linalg_vander as vander, cond, lstsq)
from .ops.matmul import _multi_dot
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
    _check_svd_driver(driver)
    return _svdvals(A)


def matrix_power(A, n, *, out=None):
    """``A`` multiplied by itself ``n`` times (the inverse's power when ``n < 0``)."""
    return _matrix_power(A, n, _name="linalg_matrix_power")


def multi_dot(tensors, *, out=None):
    """``tensors[0] @ tensors[1] @ ...`` (the first may be 1-D, as may the last), multiplied in
    the cheapest order, as torch."""
    return _multi_dot(tensors)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of the matrices in ``A`` (``torch.diagonal`` with matrix defaults)."""
    return _diagonal(A, offset, dim1, dim2)


from .ops.linalg import _add_out  # noqa: E402

_add_out(globals(), __all__, "linalg_")
