"""Op-database entries of ember/ops/extra.py (statistics, cumulative max/min, distances, ...)."""
import numpy as np

from opdb import OpInfo, make, make_positive

__all__ = ["OPS"]


def _x(*shapes, low=-2.0, high=2.0):
    def samples(dt):
        return [tuple(make(s, dt, low, high, seed=k) for k, s in enumerate(shapes))]
    return samples


def _pos(*shapes):
    def samples(dt):
        return [tuple(make_positive(s, dt, seed=k) for k, s in enumerate(shapes))]
    return samples


def _coords(dt):
    return [(make((3, 4), dt), np.array([0.0, 0.5, 1.5, 3.0], dtype=dt))]


_LOOSE = dict(rtol=1e-3, atol=1e-4)

OPS = [
    OpInfo("arcsinh", lambda L, x: L.arcsinh(x), _x((2, 3))),
    OpInfo("arccosh", lambda L, x: L.arccosh(x + 1.5), _pos((4,))),
    OpInfo("arctanh", lambda L, x: x.arctanh(), _x((4,), low=-0.8, high=0.8)),
    OpInfo("deg2rad", lambda L, x: L.deg2rad(x), _x((2, 3))),
    OpInfo("rad2deg", lambda L, x: x.rad2deg(), _x((2, 3))),
    OpInfo("trace", lambda L, x: L.trace(x), _x((3, 4))),
    OpInfo("dist", lambda L, a, b: L.dist(a, b), _x((2, 3), (3,))),
    OpInfo("dist_p1", lambda L, a, b: a.dist(b, 1), _x((2, 3), (2, 3))),
    OpInfo("dist_p3", lambda L, a, b: L.dist(a, b, 3), _x((2, 3), (2, 3))),
    OpInfo("copysign", lambda L, a, b: L.copysign(a, b), _x((2, 3), (3,))),
    OpInfo("ldexp", lambda L, a, b: L.ldexp(a, b), _x((2, 3), (3,))),
    OpInfo("frexp_mantissa", lambda L, x: L.frexp(x * 10)[0], _x((5,)), double_backward=False,
           skip_gradcheck=True),
    OpInfo("diff", lambda L, x: L.diff(x), _x((3, 4))),
    OpInfo("diff_n2_append", lambda L, x, a: x.diff(2, 0, append=a), _x((3, 4), (2, 4))),
    OpInfo("gradient", lambda L, x: L.gradient(x), _x((3, 4))),
    OpInfo("gradient_e2", lambda L, x: L.gradient(x, spacing=0.5, dim=1, edge_order=2),
           _x((3, 4))),
    OpInfo("gradient_coords", lambda L, x, c: L.gradient(x, spacing=(c,), dim=1), _coords,
           grad_inputs=(0,)),
    OpInfo("trapezoid", lambda L, y: L.trapezoid(y), _x((3, 4))),
    OpInfo("trapezoid_x", lambda L, y, x: L.trapezoid(y, x), _coords),
    OpInfo("trapz_dx", lambda L, y: L.trapz(y, dx=0.5, dim=0), _x((3, 4))),
    OpInfo("cumulative_trapezoid", lambda L, y: L.cumulative_trapezoid(y), _x((3, 4))),
    OpInfo("cumulative_trapezoid_x", lambda L, y, x: L.cumulative_trapezoid(y, x), _coords),
    OpInfo("diagflat", lambda L, x: L.diagflat(x, 1), _x((2, 2))),
    OpInfo("renorm", lambda L, x: L.renorm(x, 2, 0, 1.5), _x((3, 4))),
    OpInfo("renorm_p1", lambda L, x: x.renorm(1, 1, 2.0), _x((3, 4))),
    OpInfo("quantile", lambda L, x: L.quantile(x, 0.3), _x((3, 4))),
    OpInfo("quantile_dim", lambda L, x: x.quantile(0.6, 1, keepdim=True), _x((3, 4))),
    OpInfo("nanquantile", lambda L, x: L.nanquantile(x, 0.4, 0), _x((3, 4))),
    OpInfo("cov", lambda L, x: L.cov(x), _x((3, 4))),
    OpInfo("cov_correction", lambda L, x: x.cov(correction=0), _x((2, 5))),
    OpInfo("corrcoef", lambda L, x: L.corrcoef(x), _x((3, 4)), **_LOOSE),
    OpInfo("cummax", lambda L, x: L.cummax(x, 1).values, _x((3, 4))),
    OpInfo("cummin", lambda L, x: x.cummin(0)[0], _x((3, 4))),
    OpInfo("logcumsumexp", lambda L, x: L.logcumsumexp(x, 1), _x((3, 4))),
    OpInfo("addr", lambda L, m, a, b: L.addr(m, a, b, beta=0.5, alpha=2),
           _x((3, 4), (3,), (4,))),
    OpInfo("cdist", lambda L, a, b: L.cdist(a, b), _x((3, 2), (4, 2))),
    OpInfo("cdist_p1", lambda L, a, b: L.cdist(a, b, 1), _x((2, 3, 2), (2, 4, 2))),
    OpInfo("cdist_p3", lambda L, a, b: L.cdist(a, b, 3.0), _x((3, 2), (2, 2))),
    OpInfo("block_diag", lambda L, a, b: L.block_diag(a, b), _x((2, 3), (2,))),
    OpInfo("cartesian_prod", lambda L, a, b: L.cartesian_prod(a, b), _x((2,), (3,))),
    OpInfo("combinations", lambda L, a: L.combinations(a, 2), _x((4,))),
    OpInfo("threshold", lambda L, x: L.threshold(x, 0.1, 2.0), _x((2, 3))),
    OpInfo("fill_diagonal_", lambda L, x: (x * 1).fill_diagonal_(3.0), _x((3, 2))),
    OpInfo("fill", lambda L, x: L.fill(x, 2.0) * x, _x((2, 3))),
]
