"""Randomized low-rank SVD and PCA (Halko, Martinsson and Tropp 2009, algorithms 4.4 and
5.1), drawing the random test matrix from ember's generator as torch draws it."""
from . import linalg
from .dtypes import float16, float32, float64
from .ops import mean, randn

__all__ = ["svd_lowrank", "pca_lowrank"]


def _basis(A, q, niter, M):
    """``Q`` with ``q`` orthonormal columns such that ``Q Q^H (A - M)`` approximates
    ``A - M``, by ``niter`` subspace iterations from a Gaussian start."""
    # (torch's get_floating_dtype: float16/32/64 kept, anything else real draws float32)
    dtype = A.dtype if A.is_complex() or A.dtype in (float16, float32, float64) else float32
    R = randn(A.shape[-1], q, dtype=dtype, device=A.device)
    X = A @ R
    if M is not None:
        X = X - M @ R
    Q = linalg.qr(X).Q
    for _ in range(niter):
        X = A.mH @ Q
        if M is not None:
            X = X - M.mH @ Q
        Q = linalg.qr(X).Q
        X = A @ Q
        if M is not None:
            X = X - M @ Q
        Q = linalg.qr(X).Q
    return Q


def _svd_lowrank(A, q, niter, M):
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    if m < n:               # (the algorithm assumes a tall matrix)
        A = A.mH
        M = None if M is None else M.mH
    Q = _basis(A, q, niter, M)
    B = Q.mH @ A
    if M is not None:
        B = B - Q.mH @ M
    U, S, Vh = linalg.svd(B, full_matrices=False)
    V = Vh.mH
    U = Q @ U
    if m < n:
        U, V = V, U
    return U, S, V


def svd_lowrank(A, q=6, niter=2, M=None):
    """``(U, S, V)`` with ``A - M ~ U diag(S) V^H``, of rank ``q``, computed from ``niter``
    randomized subspace iterations."""
    return _svd_lowrank(A, 6 if q is None else q, 2 if niter is None else niter, M)


def pca_lowrank(A, q=None, center=True, niter=2):
    """Principal components of the rows of ``A`` (centered by column means when ``center``):
    ``(U, S, V)``, ``V``'s columns the principal directions."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError("q(=%s) must be non-negative integer and not greater than "
                         "min(m, n)=%d" % (q, min(m, n)))
    if not niter >= 0:
        raise ValueError("niter(=%s) must be non-negative integer" % niter)
    if not center:
        return _svd_lowrank(A, q, niter, None)
    C = mean(A, dim=(-2,), keepdim=True)
    return _svd_lowrank(A - C, q, niter, None)
