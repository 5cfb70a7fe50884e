"""Op-database entries of the linear-algebra family: products, einsum, norms, inverses, solvers,
decompositions (compared through gauge-invariant functions of their factors), matrix functions."""
import numpy as np

from opdb import OpInfo, make

__all__ = ["OPS"]


def _s(*shapes):
    def samples(dt):
        return [tuple(make(s, dt, seed=k) for k, s in enumerate(shapes))]
    return samples


def _well_conditioned(n, batch=()):
    def samples(dt):
        a = make(batch + (n, n), dt)
        return [((a + n * np.eye(n)).astype(dt),)]
    return samples


_tol = dict(rtol=1e-4, atol=1e-4)


def _op(name, fn, samples, **kw):
    return OpInfo(name, fn, samples, **kw)


def _svd_inv(r):
    """The singular values and ``U[:, :k] Vh[:k]`` (independent of the factors' signs)."""
    k = r.S.shape[-1]
    return r.S, r.U[..., :k] @ r.Vh[..., :k, :]


def _svd_inv_v(r):
    return r.S, r.U @ r.V.mT


def _eigh_inv(r):
    return r.eigenvalues, r.eigenvectors * r.eigenvectors


def _spd(L, a):
    return a @ a.mT + 3 * L.eye(a.shape[-1], dtype=a.dtype, device=a.device)


def _wc_and(shape):
    def samples(dt):
        return [(_well_conditioned(3)(dt)[0][0], make(shape, dt, seed=1))]
    return samples


OPS = [
    _op("matmul_2d", lambda L, a, b: a @ b, _s((2, 3), (3, 4))),
    _op("matmul_1d_2d", lambda L, a, b: L.matmul(a, b), _s((3,), (3, 4))),
    _op("matmul_batched_bcast", lambda L, a, b: L.matmul(a, b), _s((2, 1, 2, 3), (3, 3, 2))),
    _op("matmul_batched_vec", lambda L, a, b: L.matmul(a, b), _s((2, 2, 3), (3,))),
    _op("matmul_size0", lambda L, a, b: L.matmul(a, b), _s((2, 0), (0, 3))),
    _op("mm_noncontig", lambda L, a, b: L.mm(a.t(), b), _s((3, 2), (3, 4))),
    _op("bmm", lambda L, a, b: L.bmm(a, b), _s((2, 2, 3), (2, 3, 2))),
    _op("mv", lambda L, a, b: L.mv(a, b), _s((2, 3), (3,))),
    _op("dot", lambda L, a, b: L.dot(a, b), _s((3,), (3,))),
    _op("outer", lambda L, a, b: L.outer(a, b), _s((3,), (2,))),
    _op("addmm", lambda L, i, a, b: L.addmm(i, a, b, beta=0.5, alpha=2.0),
        _s((3,), (2, 4), (4, 3))),
    _op("addmv", lambda L, i, a, b: L.addmv(i, a, b, alpha=-1.0), _s((2,), (2, 3), (3,))),
    _op("baddbmm", lambda L, i, a, b: L.baddbmm(i, a, b, beta=2.0), _s((2, 1, 2), (2, 2, 3),
                                                                       (2, 3, 2))),
    _op("einsum_bmm", lambda L, a, b: L.einsum("bij,bjk->bik", a, b), _s((2, 2, 3), (2, 3, 2))),
    _op("einsum_trace_ellipsis", lambda L, a, b: L.einsum("...ii,...i->...", a, b),
        _s((2, 3, 3), (3,))),
    _op("tensordot", lambda L, a, b: L.tensordot(a, b, ([0, 2], [1, 0])), _s((2, 3, 4),
                                                                          (4, 2, 3))),
    _op("vector_norm", lambda L, a: L.linalg.vector_norm(a, 3, -1, True), _s((3, 4))),
    _op("vector_norm_inf", lambda L, a: L.linalg.vector_norm(a, float("inf")), _s((3, 4))),
    _op("matrix_norm_fro", lambda L, a: L.linalg.matrix_norm(a), _s((2, 3, 4))),
    _op("matrix_norm_nuc", lambda L, a: L.linalg.matrix_norm(a, "nuc"), _s((3, 4)),
        double_backward=False),
    _op("matrix_norm_1", lambda L, a: L.linalg.matrix_norm(a, 1), _s((3, 4))),
    _op("linalg_norm", lambda L, a: L.linalg.norm(a, dim=(0, 1)), _s((3, 4, 2))),
    _op("inv", lambda L, a: L.linalg.inv(a), _well_conditioned(3, (2,)), rtol=1e-4,
        atol=1e-5),
    _op("det", lambda L, a: L.linalg.det(a), _well_conditioned(3), rtol=1e-4, atol=1e-4),
    _op("solve", lambda L, a, b: L.linalg.solve(a, b),
        lambda dt: [(_well_conditioned(3)(dt)[0][0], make((3, 2), dt, seed=1))], rtol=1e-4,
        atol=1e-5),
    *[_op(*e[:3], **(e[3] if len(e) > 3 else {})) for e in (
        ("svd_reduced", lambda L, a: _svd_inv(L.linalg.svd(a, full_matrices=False)),
         _s((2, 4, 3)), _tol),
        ("svd_wide_full", lambda L, a: _svd_inv(L.linalg.svd(a)), _s((3, 4)), _tol),
        ("svd_torch", lambda L, a: _svd_inv_v(L.svd(a)), _s((4, 3)), _tol),
        ("svd_torch_no_uv", lambda L, a: L.svd(a, compute_uv=False), _s((3, 2)),
         dict(differentiable=False)),
        ("svdvals", lambda L, a: L.linalg.svdvals(a), _s((2, 3, 4)), _tol),
        ("eigh", lambda L, a: _eigh_inv(L.linalg.eigh(a + a.mT)), _s((2, 3, 3)), _tol),
        ("eigh_upper", lambda L, a: _eigh_inv(L.linalg.eigh(a + a.mT, UPLO="U")), _s((3, 3)),
         _tol),
        ("eigvalsh", lambda L, a: L.linalg.eigvalsh(a + a.mT), _s((2, 3, 3)), _tol),
        ("qr_tall", lambda L, a: tuple(L.linalg.qr(a)), _s((2, 4, 3)), _tol),
        ("qr_wide", lambda L, a: tuple(L.linalg.qr(a)), _s((3, 4)), _tol),
        ("qr_complete_wide", lambda L, a: tuple(L.linalg.qr(a, mode="complete")), _s((3, 4)),
         _tol),
        ("qr_complete_tall_fwd", lambda L, a: tuple(L.linalg.qr(a, mode="complete")),
         _s((4, 3)), dict(differentiable=False, **_tol)),
        ("qr_r", lambda L, a: L.linalg.qr(a, mode="r")[1], _s((4, 3)),
         dict(differentiable=False, **_tol)),
        ("qr_torch", lambda L, a: tuple(L.qr(a)), _s((4, 3)), _tol),
        ("cholesky", lambda L, a: L.linalg.cholesky(_spd(L, a)), _s((2, 3, 3)), _tol),
        ("cholesky_upper", lambda L, a: L.linalg.cholesky(_spd(L, a), upper=True), _s((3, 3)),
         _tol),
        ("cholesky_ex", lambda L, a: tuple(L.linalg.cholesky_ex(_spd(L, a))), _s((3, 3)), _tol),
        ("cholesky_torch", lambda L, a: L.cholesky(_spd(L, a), True), _s((3, 3)), _tol),
        ("cholesky_solve", lambda L, a, b: L.cholesky_solve(b, L.linalg.cholesky(_spd(L, a))),
         _s((3, 3), (3, 2)), _tol),
        ("cholesky_solve_upper", lambda L, a, b: L.cholesky_solve(
            b, L.linalg.cholesky(_spd(L, a), upper=True), upper=True), _s((3, 3), (3, 2)), _tol),
        ("cholesky_inverse", lambda L, a: L.cholesky_inverse(L.linalg.cholesky(_spd(L, a))),
         _s((3, 3)), _tol),
        ("lu_factor", lambda L, a: tuple(L.linalg.lu_factor(a)), _well_conditioned(3, (2,)),
         _tol),
        ("lu_factor_tall", lambda L, a: tuple(L.linalg.lu_factor(a)), _s((4, 3)), _tol),
        ("lu_factor_wide", lambda L, a: tuple(L.linalg.lu_factor(a)), _s((3, 4)), _tol),
        ("lu_factor_ex", lambda L, a: tuple(L.linalg.lu_factor_ex(a)), _well_conditioned(3),
         _tol),
        ("lu", lambda L, a: tuple(L.linalg.lu(a)), _well_conditioned(3, (2,)), _tol),
        ("lu_tall", lambda L, a: tuple(L.linalg.lu(a)), _s((4, 3)), _tol),
        ("lu_wide", lambda L, a: tuple(L.linalg.lu(a)), _s((3, 4)), _tol),
        ("lu_torch_unpack", lambda L, a: tuple(L.lu_unpack(*L.lu(a))), _s((3, 4)), _tol),
        ("lu_solve", lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b),
         _wc_and((3, 2)), _tol),
        ("lu_solve_adjoint", lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b,
                                                               adjoint=True),
         _wc_and((3, 2)), _tol),
        ("lu_solve_right", lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b,
                                                             left=False), _wc_and((2, 3)), _tol),
        ("lu_solve_right_adjoint", lambda L, a, b: L.linalg.lu_solve(
            *L.linalg.lu_factor(a), b, left=False, adjoint=True), _wc_and((2, 3)), _tol),
        ("lu_solve_torch", lambda L, a, b: L.lu_solve(b, *L.lu(a)), _wc_and((3, 2)), _tol),
        ("solve_triangular_upper", lambda L, a, b: L.linalg.solve_triangular(a, b, upper=True),
         _wc_and((3, 2)), _tol),
        ("solve_triangular_lower_right", lambda L, a, b: L.linalg.solve_triangular(
            a, b, upper=False, left=False), _wc_and((2, 3)), _tol),
        ("solve_triangular_unit_bcast", lambda L, a, b: L.linalg.solve_triangular(
            a, b, upper=False, unitriangular=True), _wc_and((2, 3, 2)), _tol),
        ("triangular_solve", lambda L, a, b: tuple(L.triangular_solve(b, a, transpose=True)),
         _wc_and((3, 2)), _tol),
        ("slogdet", lambda L, a: tuple(L.linalg.slogdet(a)), _s((2, 3, 3)), _tol),
        ("slogdet_torch", lambda L, a: tuple(L.slogdet(a)), _s((3, 3)), _tol),
        ("logdet", lambda L, a: L.logdet(a), _well_conditioned(3, (2,)), _tol),
        ("pinv_wide", lambda L, a: L.linalg.pinv(a), _s((2, 3, 4)), _tol),
        ("pinv_tall", lambda L, a: L.linalg.pinv(a, rtol=1e-3), _s((4, 3)), _tol),
        ("pinv_hermitian", lambda L, a: L.linalg.pinv(a + a.mT, hermitian=True), _s((3, 3)),
         _tol),
        ("pinverse", lambda L, a: L.pinverse(a), _s((3, 2)), _tol),
        ("matrix_rank", lambda L, a: L.linalg.matrix_rank(a), _s((2, 3, 4)),
         dict(differentiable=False)),
        ("matrix_rank_deficient", lambda L, a: L.linalg.matrix_rank(a @ a.mT, hermitian=True),
         _s((4, 2)), dict(differentiable=False)),
        ("matrix_power_5", lambda L, a: L.linalg.matrix_power(a, 5), _s((2, 3, 3)), _tol),
        ("matrix_power_neg", lambda L, a: L.linalg.matrix_power(a, -2), _well_conditioned(3),
         _tol),
        ("matrix_power_0", lambda L, a: L.matrix_power(a, 0), _s((3, 3))),
        ("matrix_exp", lambda L, a: L.linalg.matrix_exp(a), _s((2, 3, 3)), _tol),
        ("matrix_exp_torch", lambda L, a: L.matrix_exp(a), _s((3, 3)), _tol),
        ("linalg_cross", lambda L, a, b: L.linalg.cross(a, b), _s((2, 3), (1, 3))),
        ("cross_dim", lambda L, a, b: L.cross(a, b, dim=0), _s((3, 2), (3, 2))),
        ("vecdot", lambda L, a, b: L.linalg.vecdot(a, b, dim=0), _s((3, 2), (3, 1))),
        ("householder_product", lambda L, a, t: L.linalg.householder_product(a, t),
         _s((4, 3), (2,)), _tol),
        ("orgqr", lambda L, a, t: L.orgqr(a, t), _s((2, 3, 3), (2, 3)), _tol),
        ("ormqr", lambda L, a, t, c: L.ormqr(a, t, c, left=False, transpose=True),
         _s((3, 2), (2,), (2, 3)), _tol),
        ("geqrf", lambda L, a: tuple(L.geqrf(a)), _s((4, 3)),
         dict(differentiable=False, **_tol)),
        ("ldl_factor", lambda L, a: tuple(L.linalg.ldl_factor(a + a.mT)), _s((2, 3, 3)),
         dict(differentiable=False, **_tol)),
        ("ldl_solve", lambda L, a, b: L.linalg.ldl_solve(*L.linalg.ldl_factor(a + a.mT), b),
         _s((3, 3), (3, 2)), dict(differentiable=False, **_tol)),
        ("lstsq_gelsy", lambda L, a, b: L.linalg.lstsq(a, b).solution, _s((4, 3), (4, 2)), _tol),
        ("lstsq_gelsd", lambda L, a, b: tuple(L.linalg.lstsq(a, b, driver="gelsd")),
         _s((2, 4, 3), (2, 4, 2)), _tol),
        ("lstsq_gels", lambda L, a, b: tuple(L.linalg.lstsq(a, b, driver="gels")),
         _s((4, 2), (4, 1)), _tol),
        ("tensorinv", lambda L, a: L.linalg.tensorinv(a, 1), _well_conditioned(4), _tol),
        ("tensorsolve", lambda L, a, b: L.linalg.tensorsolve(a.reshape(2, 2, 4), b),
         lambda dt: [(_well_conditioned(4)(dt)[0][0], make((2, 2), dt, seed=1))], _tol),
        ("linalg_vander", lambda L, x: L.linalg.vander(x, N=4), _s((2, 3))),
        # (torch's own vander and cond(p="fro") backward fail: forward only here)
        ("vander", lambda L, x: L.vander(x, 3), _s((4,)), dict(differentiable=False)),
        ("linalg_diagonal", lambda L, a: L.linalg.diagonal(a, offset=1), _s((2, 3, 4))),
        ("cond", lambda L, a: L.linalg.cond(a), _s((2, 3, 3)), _tol),
        ("cond_fro", lambda L, a: L.linalg.cond(a, "fro"), _well_conditioned(3),
         dict(differentiable=False, **_tol)),
        ("inv_ex", lambda L, a: tuple(L.linalg.inv_ex(a)), _well_conditioned(3), _tol),
        ("solve_ex", lambda L, a, b: tuple(L.linalg.solve_ex(a, b)), _wc_and((3,)), _tol),
        ("solve_left_false", lambda L, a, b: L.linalg.solve(a, b, left=False), _wc_and((2, 3)),
         _tol),
    )],
]

