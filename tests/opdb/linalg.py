"""Op-database entries of the linear-algebra family: products, einsum, norms, inv, det, solve."""
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


def _op(name, fn, samples, **kw):
    return OpInfo(name, fn, samples, **kw)


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
]
