"""Locally Optimal Block Preconditioned Conjugate Gradient (``torch.lobpcg``): the "basic"
method of Knyazev (2001) and the "ortho" method of Stathopoulos and Wu (2002), with the
backward of the symmetric eigenproblem for ``B = None``."""
from . import linalg
from .autograd.function import Function
from .dtypes import float16, float32, float64
from .random import Generator
from .ops import cholesky_solve, diag_embed, empty, eye, flip, matmul, randn, where, zeros

__all__ = ["lobpcg"]


def _mm(A, B):
    """``A @ B``, or ``B`` when ``A`` is None (the identity)."""
    return B if A is None else matmul(A, B)


def _qform(A, S):
    """``S^T A S``."""
    return matmul(S.mT, _mm(A, S))


def _symeig(A, largest=False):
    """Eigenpairs of the symmetric ``A`` (upper triangle), largest first when ``largest``."""
    E, Z = linalg.eigh(A, UPLO="U")
    if largest:
        E, Z = flip(E, (-1,)), flip(Z, (-1,))
    return E, Z


def _basis(A):
    return linalg.qr(A).Q


def _floating_dtype(A):
    return A.dtype if A.dtype in (float16, float32, float64) else float32


def _symeig_backward_complete(D_grad, U_grad, A, D, U):
    F = D.unsqueeze(-2) - D.unsqueeze(-1)
    F.diagonal(dim1=-2, dim2=-1).fill_(float("inf"))
    F = F.pow(-1)
    Ut = U.mT.contiguous()
    return matmul(U, matmul(diag_embed(D_grad) + matmul(Ut, U_grad) * F, Ut))


def _poly_coeffs(roots):
    """The coefficients ``(a_0, ..., a_n = 1)`` of ``prod(x - r_i)``."""
    order = roots.shape[-1]
    shape = list(roots.shape)
    shape[-1] += 2
    coeffs = roots.new_zeros(shape)
    coeffs[..., 0] = 1
    coeffs[..., -1] = 1
    for i in range(1, order + 1):
        new = coeffs.clone()
        out = new.narrow(-1, order - i, i + 1)
        out -= roots.narrow(-1, i - 1, 1) * coeffs.narrow(-1, order - i + 1, i + 1)
        coeffs = new
    return coeffs.narrow(-1, 1, order + 1)


def _poly_value(poly, x, zero_power, transition):
    res = zero_power.clone()
    for k in range(poly.size(-1) - 2, -1, -1):
        res = transition(res, x, poly[..., k])
    return res


def _matrix_poly(poly, x):
    def transition(val, x, c):
        res = x.matmul(val)
        res.diagonal(dim1=-2, dim2=-1).add_(c.unsqueeze(-1))
        return res
    n = x.size(-1)
    zero_power = eye(n, n, dtype=x.dtype, device=x.device).view(
        *([1] * len(x.shape[:-2])), n, n)
    return _poly_value(poly, x, zero_power, transition)


def _vector_poly(poly, x):
    def transition(val, x, c):
        return c.unsqueeze(-1) + x * val
    return _poly_value(poly, x, x.new_ones(1).expand(x.shape), transition)


def _symeig_backward_partial(D_grad, U_grad, A, D, U, largest):
    Ut = U.mT.contiguous()
    proj = -U.matmul(Ut)
    proj.diagonal(dim1=-2, dim2=-1).add_(1)
    # NOTE: torch draws the orthogonal complement's basis from a fresh default generator.
    gen = Generator(A.device)
    U_ortho = proj.matmul(randn((*A.shape[:-1], A.size(-1) - D.size(-1)), dtype=A.dtype,
                                device=A.device, generator=gen))
    U_ortho_t = U_ortho.mT.contiguous()
    chr_poly = _poly_coeffs(D)
    U_grad_projected = U_grad
    series_acc = U_grad_projected.new_zeros(U_grad_projected.shape)
    for k in range(1, chr_poly.size(-1)):
        poly_D = _vector_poly(chr_poly[..., k:], D)
        series_acc = series_acc + U_grad_projected * poly_D.unsqueeze(-2)
        U_grad_projected = A.matmul(U_grad_projected)
    at_A = _matrix_poly(chr_poly, A)
    at_A_ortho = matmul(U_ortho_t, matmul(at_A, U_ortho))
    sign = -1 if (largest and (k % 2 == 1)) else +1
    L = linalg.cholesky(sign * at_A_ortho)
    res = _symeig_backward_complete(D_grad, U_grad, A, D, U)
    return res - U_ortho.matmul(
        sign * cholesky_solve(U_ortho_t.matmul(series_acc), L)).matmul(Ut)


def _symeig_backward(D_grad, U_grad, A, D, U, largest):
    if U.size(-1) == U.size(-2):
        return _symeig_backward_complete(D_grad, U_grad, A, D, U)
    return _symeig_backward_partial(D_grad, U_grad, A, D, U, largest)


class LOBPCGAutogradFunction(Function):
    node_name = "LOBPCGAutogradFunctionBackward"

    @staticmethod
    def forward(ctx, A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams,
                ortho_fparams, ortho_bparams):
        A = A.contiguous()
        B = None if B is None else B.contiguous()
        D, U = _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams,
                       ortho_fparams, ortho_bparams)
        ctx.save_for_backward(A, B, D, U)
        ctx.largest = largest
        return D, U

    @staticmethod
    def backward(ctx, D_grad, U_grad):
        grads = [None] * 14
        A, B, D, U = ctx.saved_tensors
        if A.is_complex() or (B is not None and B.is_complex()):
            raise ValueError("lobpcg.backward does not support complex input yet. Note that "
                             "lobpcg.forward does though.")
        if B is not None:
            raise ValueError("lobpcg.backward does not support backward with B != I yet.")
        largest = True if ctx.largest is None else ctx.largest
        if D_grad is None:
            D_grad = zeros(D.shape, dtype=D.dtype, device=D.device)
        if U_grad is None:
            U_grad = zeros(U.shape, dtype=U.dtype, device=U.device)
        grads[0] = _symeig_backward(D_grad, U_grad, A, D, U, largest)
        return tuple(grads)


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None,
           method=None, tracker=None, ortho_iparams=None, ortho_fparams=None,
           ortho_bparams=None):
    """The ``k`` largest (or smallest) eigenpairs of the symmetric positive definite generalized
    problem ``A X = B X E`` by LOBPCG (``method`` "ortho", the default, or "basic").

    Args:
        A: ``(*, m, m)`` symmetric matrix.
        k: number of eigenpairs (default: ``X``'s columns, or 1).
        B: ``(*, m, m)`` matrix (the identity when None).
        X: ``(*, m, n)`` initial eigenvector approximation (random normal when None).
        n: columns of the random ``X`` (default ``k``; ignored when ``X`` is given).
        iK: ``(*, m, m)`` preconditioner.
        niter: iteration limit (1000 by default; -1: until convergence).
        tol: residual tolerance (default ``sqrt(eps)``).
        largest: largest eigenvalues when True (default), smallest otherwise.
        method: "ortho" or "basic".
        tracker: called with the worker after each iteration.
        ortho_iparams, ortho_fparams, ortho_bparams: parameters of the "ortho" method.

    Returns:
        ``(E, X)``: eigenvalues ``(*, k)`` and eigenvectors ``(*, m, k)``. With ``A`` requiring
        grad, ``A`` is symmetrized first and gradients flow to it (not for ``B``).
    """
    if A.requires_grad or (B is not None and B.requires_grad):
        A_sym = (A + A.mT) / 2
        B_sym = (B + B.mT) / 2 if B is not None else None
        return LOBPCGAutogradFunction.apply(A_sym, k, B_sym, X, n, iK, niter, tol, largest,
                                            method, tracker, ortho_iparams, ortho_fparams,
                                            ortho_bparams)
    return _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams,
                   ortho_fparams, ortho_bparams)


def _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams,
            ortho_fparams, ortho_bparams):
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    dtype = _floating_dtype(A)
    device = A.device
    if tol is None:
        feps = {float32: 1.2e-07, float64: 2.23e-16}[dtype]
        tol = feps ** 0.5
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m})"
                         f" is smaller than 3 x the number of requested eigenpairs (={n})")
    method = "ortho" if method is None else method
    iparams = {"m": m, "n": n, "k": k, "niter": 1000 if niter is None else niter}
    fparams = {"tol": tol}
    bparams = {"largest": True if largest is None else largest}
    if method == "ortho":
        if ortho_iparams is not None:
            iparams.update(ortho_iparams)
        if ortho_fparams is not None:
            fparams.update(ortho_fparams)
        if ortho_bparams is not None:
            bparams.update(ortho_bparams)
        iparams["ortho_i_max"] = iparams.get("ortho_i_max", 3)
        iparams["ortho_j_max"] = iparams.get("ortho_j_max", 3)
        fparams["ortho_tol"] = fparams.get("ortho_tol", tol)
        fparams["ortho_tol_drop"] = fparams.get("ortho_tol_drop", tol)
        fparams["ortho_tol_replace"] = fparams.get("ortho_tol_replace", tol)
        bparams["ortho_use_drop"] = bparams.get("ortho_use_drop", False)

    if len(A.shape) > 2:
        N = 1
        for s in A.shape[:-2]:
            N *= s
        bA = A.reshape((N,) + tuple(A.shape[-2:]))
        bB = B.reshape((N,) + tuple(A.shape[-2:])) if B is not None else None
        bX = X.reshape((N,) + tuple(X.shape[-2:])) if X is not None else None
        bE = empty((N, k), dtype=dtype, device=device)
        bXret = empty((N, m, k), dtype=dtype, device=device)
        for i in range(N):
            X_ = randn((m, n), dtype=dtype, device=device) if bX is None else bX[i]
            if not (len(X_.shape) == 2 and tuple(X_.shape) == (m, n)):
                raise AssertionError(f"X_ shape mismatch: got {X_.shape}, expected {(m, n)}")
            iparams["batch_index"] = i
            worker = LOBPCG(bA[i], None if bB is None else bB[i], X_, iK, iparams, fparams,
                            bparams, method, tracker)
            worker.run()
            bE[i] = worker.E[:k]
            bXret[i] = worker.X[:, :k]
        return (bE.reshape(tuple(A.shape[:-2]) + (k,)),
                bXret.reshape(tuple(A.shape[:-2]) + (m, k)))

    X = randn((m, n), dtype=dtype, device=device) if X is None else X
    if not (len(X.shape) == 2 and tuple(X.shape) == (m, n)):
        raise AssertionError(f"X shape mismatch: got {X.shape}, expected {(m, n)}")
    worker = LOBPCG(A, B, X, iK, iparams, fparams, bparams, method, tracker)
    worker.run()
    return worker.E[:k], worker.X[:, :k]


class LOBPCG:
    """The iteration state of one LOBPCG run (``iparams``, ``fparams``, ``bparams``; ``ivars``,
    ``fvars``, ``bvars``, ``tvars``; ``A``, ``B``, ``iK``; ``E``, ``X``, ``S``, ``R``), as torch's
    worker class, so that a tracker sees the same attributes."""

    def __init__(self, A, B, X, iK, iparams, fparams, bparams, method, tracker):
        self.A, self.B, self.iK = A, B, iK
        self.iparams, self.fparams, self.bparams = iparams, fparams, bparams
        self.method = method
        self.tracker = tracker
        m, n = iparams["m"], iparams["n"]
        self.X = X
        self.E = zeros((n,), dtype=X.dtype, device=X.device)
        self.R = zeros((m, n), dtype=X.dtype, device=X.device)
        self.S = zeros((m, 3 * n), dtype=X.dtype, device=X.device)
        self.tvars = {}
        self.ivars = {"istep": 0}
        self.fvars = {"_": 0.0}
        self.bvars = {"_": False}

    def __str__(self):
        lines = ["LOBPCG:"]
        for name in ("iparams", "fparams", "bparams", "ivars", "fvars", "bvars", "tvars", "A",
                     "B", "iK", "X", "E"):
            lines.append(f"  {name}={getattr(self, name)}")
        return "".join(line + "\n" for line in lines)

    def update(self):
        """Set and update the iteration variables (one step)."""
        if self.ivars["istep"] == 0:
            X_norm = float(self.X.norm())
            iX_norm = X_norm ** -1
            self.fvars["X_norm"] = X_norm
            self.fvars["A_norm"] = float(_mm(self.A, self.X).norm()) * iX_norm
            self.fvars["B_norm"] = float(_mm(self.B, self.X).norm()) * iX_norm
            self.ivars["iterations_left"] = self.iparams["niter"]
            self.ivars["converged_count"] = 0
            self.ivars["converged_end"] = 0
        if self.method == "ortho":
            self._update_ortho()
        else:
            self._update_basic()
        self.ivars["iterations_left"] = self.ivars["iterations_left"] - 1
        self.ivars["istep"] = self.ivars["istep"] + 1

    def update_residual(self):
        """``R = A X - B X E``."""
        self.R = _mm(self.A, self.X) - _mm(self.B, self.X) * self.E

    def update_converged_count(self):
        """The number of leading eigenpairs meeting the backward-stable criterion."""
        prev_count = self.ivars["converged_count"]
        tol = self.fparams["tol"]
        A_norm, B_norm = self.fvars["A_norm"], self.fvars["B_norm"]
        E, X, R = self.E, self.X, self.R
        rerr = R.norm(2, (0,)) / (X.norm(2, (0,)) * (A_norm + E[:X.shape[-1]].abs() * B_norm))
        count = 0
        for b in (rerr < tol).tolist():
            if not b:
                break
            count += 1
        if count < prev_count:
            raise AssertionError(f"the number of converged eigenpairs (was {prev_count}, got "
                                 f"{count}) cannot decrease")
        self.ivars["converged_count"] = count
        self.tvars["rerr"] = rerr
        return count

    def stop_iteration(self):
        """True when converged, out of iterations, or force-stopped by the tracker."""
        return (self.bvars.get("force_stop", False) or self.ivars["iterations_left"] == 0
                or self.ivars["converged_count"] >= self.iparams["k"])

    def run(self):
        """Iterate until :meth:`stop_iteration`."""
        self.update()
        if self.tracker is not None:
            self.call_tracker()
        while not self.stop_iteration():
            self.update()
            if self.tracker is not None:
                self.call_tracker()

    def call_tracker(self):
        self.tracker(self)

    def _update_basic(self):
        ns = self.ivars["converged_end"]
        nc = self.ivars["converged_count"]
        n = self.iparams["n"]
        largest = self.bparams["largest"]
        if self.ivars["istep"] == 0:
            Ri = self._get_rayleigh_ritz_transform(self.X)
            M = _qform(_qform(self.A, self.X), Ri)
            E, Z = _symeig(M, largest)
            self.X[:] = matmul(self.X, matmul(Ri, Z))
            self.E[:] = E
            np_ = 0
            self.update_residual()
            nc = self.update_converged_count()
            self.S[..., :n] = self.X
            W = _mm(self.iK, self.R)
            self.ivars["converged_end"] = ns = n + np_ + W.shape[-1]
            self.S[:, n + np_:ns] = W
        else:
            S_ = self.S[:, nc:ns]
            Ri = self._get_rayleigh_ritz_transform(S_)
            M = _qform(_qform(self.A, S_), Ri)
            E_, Z = _symeig(M, largest)
            self.X[:, nc:] = matmul(S_, matmul(Ri, Z[:, :n - nc]))
            self.E[nc:] = E_[:n - nc]
            P = matmul(S_, matmul(Ri, Z[:, n:2 * n - nc]))
            np_ = P.shape[-1]
            self.update_residual()
            nc = self.update_converged_count()
            self.S[..., :n] = self.X
            self.S[:, n:n + np_] = P
            W = _mm(self.iK, self.R[:, nc:])
            self.ivars["converged_end"] = ns = n + np_ + W.shape[-1]
            self.S[:, n + np_:ns] = W

    def _update_ortho(self):
        ns = self.ivars["converged_end"]
        nc = self.ivars["converged_count"]
        n = self.iparams["n"]
        largest = self.bparams["largest"]
        if self.ivars["istep"] == 0:
            Ri = self._get_rayleigh_ritz_transform(self.X)
            M = _qform(_qform(self.A, self.X), Ri)
            _E, Z = _symeig(M, largest)
            self.X = matmul(self.X, matmul(Ri, Z))
            self.update_residual()
            np_ = 0
            nc = self.update_converged_count()
            self.S[:, :n] = self.X
            W = self._get_ortho(self.R, self.X)
            ns = self.ivars["converged_end"] = n + np_ + W.shape[-1]
            self.S[:, n + np_:ns] = W
        else:
            S_ = self.S[:, nc:ns]
            E_, Z = _symeig(_qform(self.A, S_), largest)
            self.X[:, nc:] = matmul(S_, Z[:, :n - nc])
            self.E[nc:] = E_[:n - nc]
            P = matmul(S_, matmul(Z[:, n - nc:], _basis(Z[:n - nc, n - nc:].mT)))
            np_ = P.shape[-1]
            self.update_residual()
            nc = self.update_converged_count()
            self.S[:, :n] = self.X
            self.S[:, n:n + np_] = P
            W = self._get_ortho(self.R[:, nc:], self.S[:, :n + np_])
            ns = self.ivars["converged_end"] = n + np_ + W.shape[-1]
            self.S[:, n + np_:ns] = W

    def _get_rayleigh_ritz_transform(self, S):
        """The upper-triangular ``Ri`` reducing ``(S^T A S) C = (S^T B S) C E`` to a standard
        problem for ``Z`` with ``C = Ri Z``."""
        SBS = _qform(self.B, S)
        d_row = SBS.diagonal(0, -2, -1) ** -0.5
        d_col = d_row.reshape(d_row.shape[0], 1)
        R = linalg.cholesky((SBS * d_row) * d_col, upper=True)
        return linalg.solve_triangular(R, d_row.diag_embed(), upper=True, left=False)

    def _get_svqb(self, U, drop, tau):
        """B-orthonormal columns spanning ``U`` (dropping weak ones when ``drop``)."""
        if U.numel() == 0:
            return U
        UBU = _qform(self.B, U)
        d = UBU.diagonal(0, -2, -1)
        nz = where(d.abs() != 0.0)
        if len(nz[0]) < len(d):
            U = U[:, nz[0]]
            if U.numel() == 0:
                return U
            UBU = _qform(self.B, U)
            d = UBU.diagonal(0, -2, -1)
        d_col = (d ** -0.5).reshape(d.shape[0], 1)
        DUBUD = (UBU * d_col) * d_col.mT
        E, Z = _symeig(DUBUD)
        t = tau * E.abs().max()
        if drop:
            keep = where(E > t)
            E = E[keep[0]]
            Z = Z[:, keep[0]]
            d_col = d_col[keep[0]]
        else:
            E = where(E < t, t, E)
        return matmul(U * d_col.mT, Z * E ** -0.5)

    def _get_ortho(self, U, V):
        """B-orthonormal columns from ``U``, B-orthogonal to ``V``."""
        m = self.iparams["m"]
        tau_ortho = self.fparams["ortho_tol"]
        tau_drop = self.fparams["ortho_tol_drop"]
        tau_replace = self.fparams["ortho_tol_replace"]
        i_max, j_max = self.iparams["ortho_i_max"], self.iparams["ortho_j_max"]
        use_drop = self.bparams["ortho_use_drop"]
        for vkey in list(self.fvars.keys()):
            if vkey.startswith("ortho_") and vkey.endswith("_rerr"):
                self.fvars.pop(vkey)
        self.ivars.pop("ortho_i", 0)
        self.ivars.pop("ortho_j", 0)
        BV_norm = _mm(self.B, V).norm()
        BU = _mm(self.B, U)
        VBU = matmul(V.mT, BU)
        i = j = 0
        for i in range(i_max):
            U = U - matmul(V, VBU)
            drop = False
            tau_svqb = tau_drop
            for j in range(j_max):
                if use_drop:
                    U = self._get_svqb(U, drop, tau_svqb)
                    drop = True
                    tau_svqb = tau_replace
                else:
                    U = self._get_svqb(U, False, tau_replace)
                if U.numel() == 0:
                    self.ivars["ortho_i"] = i
                    self.ivars["ortho_j"] = j
                    return U
                BU = _mm(self.B, U)
                UBU = matmul(U.mT, BU)
                U_norm = U.norm()
                BU_norm = BU.norm()
                R = UBU - eye(UBU.shape[-1], device=UBU.device, dtype=UBU.dtype)
                rerr = float(R.norm()) * float(BU_norm * U_norm) ** -1
                self.fvars[f"ortho_UBUmI_rerr[{i}, {j}]"] = rerr
                if rerr < tau_ortho:
                    break
            VBU = matmul(V.mT, BU)
            rerr = float(VBU.norm()) * float(BV_norm * U.norm()) ** -1
            self.fvars[f"ortho_VBU_rerr[{i}]"] = rerr
            if rerr < tau_ortho:
                break
            if m < U.shape[-1] + V.shape[-1]:
                B = self.B
                if B is None:
                    raise AssertionError("B must not be None")
                raise ValueError("Overdetermined shape of U: #B-cols(=%d) >= #U-cols(=%d) + "
                                 "#V-cols(=%d) must hold" % (B.shape[-1], U.shape[-1],
                                                            V.shape[-1]))
        self.ivars["ortho_i"] = i
        self.ivars["ortho_j"] = j
        return U
