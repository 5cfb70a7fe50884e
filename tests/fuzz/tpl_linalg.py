"""Fuzz templates for the linear-algebra ops the probe cannot reach: the LU and LDL solvers
(whose pivots must be valid LAPACK pivots), Householder products (``orgqr``, ``ormqr``,
``linalg.householder_product``), ``linalg.tensorinv``/``tensorsolve``, ``lu_unpack`` and the
removed ``torch.eig``/``lstsq``/``solve``/``symeig``/``matrix_rank`` (which only raise)."""
from .ops import Gen  # noqa: F401  (the argument drawer the templates receive)

__all__ = ["TEMPLATES", "HAND"]

_N = 3          # pivots are drawn in 1..3 ("pos" integers), valid for 3 x 3 factors only


def _tame(g, shape, fill, dt, layout=None, grad=None):
    """A tensor drawn without inf/NaN sprinkling (pivots must stay in range; how NaN spreads
    through LAPACK is the build's choice)."""
    tame, g.tame = g.tame, True
    try:
        return g.tensor(shape, fill, dtype=dt, layout=layout, grad=grad)
    finally:
        g.tame = tame


def _fdt(g):
    """A float/complex dtype, now and then one LAPACK refuses."""
    if g.chance(0.08):
        return g.pick(["int64", "float16", "bool"])
    return g.pick(["float64", "float32", "float64", "complex128", "complex64"])


def _batch(g):
    return () if g.probe or g.chance(0.6) else g.pick([(2,), (1,), (0,), (2, 1)])


def _pivots(g, batch, n=_N):
    dt = "int32" if not g.chance(0.06) else "int64"
    return _tame(g, batch + (n,), "pos", dt, layout="c", grad=False)


def _lu_args(g):
    """``(LU, pivots, B, batch, dt)`` for an LU solve."""
    dt = _fdt(g)
    batch = _batch(g)
    k = 2 if g.probe else g.pick([1, 2, 3, 0])
    lu = _tame(g, batch + (_N, _N), "spd", dt)
    b_batch = batch if not g.chance(0.2) else g.pick([(), (1,), (3,)])
    b_dt = dt if not g.chance(0.1) else g.pick(["float64", "float32"])
    b = _tame(g, b_batch + (_N, k), "u", b_dt)
    return lu, _pivots(g, batch), b, batch, dt


def _la_lu_solve(g):
    lu, piv, b, batch, dt = _lu_args(g)
    kw = {}
    if g.chance(0.4):
        kw["left"] = bool(g.chance(0.5))
        if not kw["left"]:
            b = (b[0], b[1][:-2] + (b[1][-1], b[1][-2])) + tuple(b[2:])
    if g.chance(0.4):
        kw["adjoint"] = bool(g.chance(0.5))
    return [lu, piv, b], kw


def _lu_solve_legacy(g):
    lu, piv, b, batch, dt = _lu_args(g)
    return [b, lu, piv], {}


def _lu_unpack(g):
    dt = _fdt(g)
    batch = _batch(g)
    m, n = (_N, _N) if g.probe else g.pick([(_N, _N), (_N, 4), (4, _N), (_N, 2)])
    lu = _tame(g, batch + (m, n), "u", dt)
    piv = _pivots(g, batch, min(m, n, _N))
    kw = {}
    if g.chance(0.3):
        kw["unpack_data"] = bool(g.chance(0.5))
    if g.chance(0.3):
        kw["unpack_pivots"] = bool(g.chance(0.5))
    return [lu, piv], kw


def _ldl_solve(g):
    dt = _fdt(g)
    batch = _batch(g)
    ld = _tame(g, batch + (_N, _N), "spd", dt)
    b = _tame(g, batch + (_N, 2 if g.probe else g.pick([1, 2, 0])), "u", dt)
    kw = {"hermitian": bool(g.chance(0.5))} if g.chance(0.4) else {}
    return [ld, _pivots(g, batch), b], kw


def _hh(g):
    """``(A, tau)`` with ``m >= n >= k`` mostly."""
    dt = _fdt(g)
    batch = _batch(g)
    m, n, k = (4, 3, 2) if g.probe else g.pick([(4, 3, 2), (3, 3, 3), (3, 2, 1), (2, 2, 0),
                                                (3, 3, 1), (2, 3, 1), (3, 2, 3)])
    t_dt = dt if not g.chance(0.08) else g.pick(["float64", "float32"])
    t_batch = batch if not g.chance(0.06) else (3,)
    return [_tame(g, batch + (m, n), "u", dt), _tame(g, t_batch + (k,), "u", t_dt)], {}


def _ormqr(g):
    dt = _fdt(g)
    batch = _batch(g)
    left = True if g.probe else bool(g.chance(0.5))
    m, n = (3, 2) if g.probe else g.pick([(3, 2), (2, 3), (3, 3), (4, 1)])
    mn = m if left else n
    k = 2 if g.probe else g.pick([1, 2, min(mn, 2)])
    if mn < k:
        k = mn
    a = _tame(g, batch + (mn, k), "u", dt)
    tau = _tame(g, batch + (min(mn, k) if not g.chance(0.06) else mn + 1,), "u", dt)
    c = _tame(g, batch + (m, n), "u", dt if not g.chance(0.06) else "float64")
    kw = {}
    if not left or g.chance(0.3):
        kw["left"] = left
    if g.chance(0.5):
        kw["transpose"] = bool(g.chance(0.5))
    return [a, tau, c], kw


def _tensorinv(g):
    dt = _fdt(g)
    shape, ind = ((2, 3, 6), 2) if g.probe else g.pick([((2, 3, 6), 2), ((4, 2, 2), 1),
                                                        ((6, 2, 3), 1), ((2, 2, 3), 2),
                                                        ((3, 3), 1), ((2, 3, 6), 0)])
    kw = {"ind": ind} if ind != 2 or g.chance(0.5) else {}
    return [_tame(g, shape, "u", dt)], kw


def _tensorsolve(g):
    dt = _fdt(g)
    a_shape, b_shape, dims = ((2, 3, 6), (2, 3), None) if g.probe else g.pick([
        ((2, 3, 6), (2, 3), None), ((6, 2, 3), (2, 3), (0,)), ((2, 2, 4), (4,), None),
        ((3, 3), (3,), None), ((2, 3, 5), (2, 3), None), ((2, 3, 2, 3), (2, 3), (0, 1))])
    kw = {"dims": dims} if dims is not None else {}
    b_dt = dt if not g.chance(0.1) else "float64"
    return [_tame(g, a_shape, "u", dt), _tame(g, b_shape, "u", b_dt)], kw


def _removed_eig(g):
    return [g.mat("u")], ({"eigenvectors": True} if g.chance(0.3) else {})


def _removed_rank(g):
    kw = {"symmetric": True} if g.chance(0.3) else {}
    return ([g.mat("u"), 0.5] if g.chance(0.3) else [g.mat("u")]), kw


def _removed2(g):
    return [_tame(g, (3, 2), "u", "float64"), g.mat("u")], {}


TEMPLATES = {
    "linalg_lu_solve": _la_lu_solve, "linalg_lu_solve_legacy": _lu_solve_legacy,
    "linalg_lu_unpack": _lu_unpack, "linalg_ldl_solve": _ldl_solve, "linalg_hh": _hh,
    "linalg_ormqr": _ormqr, "linalg_tensorinv": _tensorinv, "linalg_tensorsolve": _tensorsolve,
    "linalg_removed_eig": _removed_eig,
    "linalg_removed_rank": _removed_rank, "linalg_removed2": _removed2,
}

HAND = {
    ("torch", "lu_solve"): ["linalg_lu_solve_legacy"],
    ("Tensor", "lu_solve"): ["linalg_lu_solve_legacy"],
    ("linalg", "lu_solve"): ["linalg_lu_solve"],
    ("torch", "lu_unpack"): ["linalg_lu_unpack"],
    ("linalg", "ldl_solve"): ["linalg_ldl_solve"],
    ("torch", "orgqr"): ["linalg_hh"], ("Tensor", "orgqr"): ["linalg_hh"],
    ("linalg", "householder_product"): ["linalg_hh"],
    ("torch", "ormqr"): ["linalg_ormqr"], ("Tensor", "ormqr"): ["linalg_ormqr"],
    ("linalg", "tensorinv"): ["linalg_tensorinv"],
    ("linalg", "tensorsolve"): ["linalg_tensorsolve"],
    ("torch", "eig"): ["linalg_removed_eig"], ("torch", "symeig"): ["linalg_removed_eig"],
    ("torch", "matrix_rank"): ["linalg_removed_rank"],
    ("torch", "lstsq"): ["linalg_removed2"], ("torch", "solve"): ["linalg_removed2"],
}
