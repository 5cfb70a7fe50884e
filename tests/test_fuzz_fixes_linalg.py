"""Regression tests (against torch) for the linear-algebra mismatches found by the differential
fuzzer, tensor tolerances of pinv/matrix_rank, the LU/LDL solvers' checks, and lobpcg."""
import warnings

import numpy as np
import pytest

import ember
from ember._lobpcg import lobpcg as _ember_lobpcg

torch = pytest.importorskip("torch")


def _run(L, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", fn(L)
        except Exception as e:  # noqa: BLE001
            return "raise", (type(e).__name__, str(e))


def _arr(x):
    if isinstance(x, (tuple, list)):
        return [_arr(v) for v in x]
    if not hasattr(x, "detach"):
        return x
    x = x.detach()
    return x.float().numpy() if str(x.dtype).endswith("bfloat16") else x.numpy()


def same(fn, rtol=1e-5, atol=1e-6):
    """``fn(torch)`` and ``fn(ember)`` agree: the same error (class and message), or outputs of
    the same shapes, dtypes and values."""
    kt, rt = _run(torch, fn)
    ke, re_ = _run(ember, fn)
    assert kt == ke, (rt, re_)
    if kt == "raise":
        assert rt == re_
        return rt
    ta, ea = _arr(rt), _arr(re_)
    ts = ta if isinstance(ta, list) else [ta]
    es = ea if isinstance(ea, list) else [ea]
    for t, e in zip(ts, es):
        t, e = np.asarray(t), np.asarray(e)
        assert t.shape == e.shape and t.dtype == e.dtype, (t.shape, e.shape, t.dtype, e.dtype)
        np.testing.assert_allclose(e, t, rtol=rtol, atol=atol, equal_nan=True)
    return rt


R = np.random.default_rng(0)
A34 = R.standard_normal((2, 3, 4))
AC = A34 + 1j * R.standard_normal((2, 3, 4))
SYM = R.standard_normal((2, 3, 3))
SYM = SYM + np.swapaxes(SYM, -1, -2)


# ---- fuzzer classes ----------------------------------------------------------------------

def test_geqrf_complex_requires_grad_raises_in_forward():
    same(lambda L: L.geqrf(L.zeros(0, 1, 1, dtype=L.complex128, requires_grad=True)))
    same(lambda L: L.geqrf(L.ones(2, 2, dtype=L.complex64, requires_grad=True)))


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (2, 2)])
@pytest.mark.parametrize("dt", ["float16", "bfloat16", "int32"])
def test_ldl_factor_low_precision(shape, dt):
    same(lambda L: L.linalg.ldl_factor(L.eye(shape[-1]).expand(*shape).to(getattr(L, dt))))
    same(lambda L: L.linalg.ldl_factor_ex(L.eye(shape[-1]).expand(*shape).to(getattr(L, dt))))


def test_ldl_factor_empty_half_backward_raises():
    def fn(L):
        LD, _ = L.linalg.ldl_factor(L.zeros(0, 0, dtype=L.float16, requires_grad=True))
        LD.sum().backward()
    same(fn)


@pytest.mark.parametrize("N,inc", [(None, False), (3, True), (2, False), (1, True), (0, False)])
def test_vander_forward_and_backward_as_torch(N, inc):
    x = R.standard_normal(4)
    same(lambda L: L.vander(L.tensor(x), N, increasing=inc))
    same(lambda L: L.vander(L.tensor([1, 2, 3]), N, increasing=inc))

    def bw(L):
        t = L.tensor(x, requires_grad=True)
        y = L.vander(t, N, increasing=inc)
        if y.grad_fn is None:
            return None
        y.sum().backward()
        return t.grad
    kt, _ = _run(torch, bw)
    ke, _ = _run(ember, bw)
    assert kt == ke


@pytest.mark.parametrize("p", ["fro", 1, float("inf"), "nuc", None])
def test_cond_backward_raises_where_torch_does(p):
    def fn(L):
        a = L.tensor([[2.0, 1.0], [0.5, 3.0]], requires_grad=True)
        L.linalg.cond(a, p).backward()
        return a.grad
    kt, _ = _run(torch, fn)
    ke, _ = _run(ember, fn)
    assert kt == ke


def test_eigh_failure_is_torchs_linalg_error():
    a = np.array([[np.nan, 1.0, 0.5], [1.0, 2.0, np.inf], [0.5, np.inf, 1.0]])
    for fn in (lambda L: L.linalg.eigvalsh(L.tensor(a)),
               lambda L: L.linalg.matrix_rank(L.tensor(a), hermitian=True),
               lambda L: L.linalg.eigh(L.tensor(a))):
        kt, rt = _run(torch, fn)
        ke, re_ = _run(ember, fn)
        assert kt == ke
        if kt == "raise":
            # (the LAPACK error code itself differs between torch's MKL and SciPy's OpenBLAS)
            assert rt[0] == re_[0] and rt[1].split("(error")[0] == re_[1].split("(error")[0]
    assert ember.linalg.LinAlgError.__name__ == torch.linalg.LinAlgError.__name__


@pytest.mark.parametrize("dt", ["float32", "complex128"])
def test_orgqr_non_finite_tau_propagates_as_lapack(dt):
    a = R.standard_normal((2, 3, 3)).astype(dt)
    tau = R.standard_normal((2, 3)).astype(dt)
    tau[0, 0], tau[1, 2] = np.nan, np.inf
    same(lambda L: L.orgqr(L.tensor(a), L.tensor(tau)))


@pytest.mark.parametrize("sa,st,sc", [((0, 3, 2), (0, 1), None), ((2, 2), (0,), None),
                                      ((0, 2, 1), (0, 1), (0, 2, 3))])
def test_householder_empty_grads_undefined(sa, st, sc):
    def fn(L):
        a = L.ones(*sa, requires_grad=True)
        t = L.ones(*st, requires_grad=True)
        if sc is None:
            y = L.linalg.householder_product(a, t)
            ins = [a, t]
        else:
            c = L.ones(*sc, requires_grad=True)
            y = L.ormqr(a, t, c)
            ins = [a, t, c]
        y.sum().backward()
        return [x.grad is None for x in ins]
    assert _run(torch, fn) == _run(ember, fn)


# ---- pinv / matrix_rank tolerances ------------------------------------------------------

TOLS = [{}, {"atol": 0.5}, {"rtol": 0.3}, {"atol": ("T", [0.1, 2.0])},
        {"atol": ("T", [[0.1], [2.0], [1.0]])}, {"rtol": ("T", [0.1, 0.9])},
        {"atol": ("Ti", [1, 2])}, {"atol": ("T", [0.1, 2.0, 3.0])},
        {"atol": ("T", [[0.1, 2.0]]), "rtol": ("T", [[[0.5]]])}, {"atol": ("Tc", [0.1])},
        {"rtol": ("Tc", [0.1])}]


def _tols(L, kw):
    out = {}
    for k, v in kw.items():
        if isinstance(v, tuple):
            dtype = {"T": L.float64, "Ti": L.int32, "Tc": L.complex64}[v[0]]
            out[k] = L.tensor(v[1], dtype=dtype)
        else:
            out[k] = v
    return out


@pytest.mark.parametrize("kw", TOLS)
@pytest.mark.parametrize("which", ["real", "complex", "single", "f32"])
@pytest.mark.parametrize("hermitian", [False, True])
def test_pinv_matrix_rank_tolerances(kw, which, hermitian):
    a = {"real": A34, "complex": AC, "single": A34[0], "f32": A34.astype(np.float32)}[which]
    if hermitian:
        a = a[..., :3, :3] + np.swapaxes(a[..., :3, :3], -1, -2).conj()
    same(lambda L: L.linalg.pinv(L.tensor(a), hermitian=hermitian, **_tols(L, kw)), atol=1e-4)
    same(lambda L: L.linalg.matrix_rank(L.tensor(a), hermitian=hermitian, **_tols(L, kw)))


@pytest.mark.parametrize("rcond", [0.2, ("T", [0.2, 0.5]), ("Tc", [0.2])])
def test_pinv_rcond_and_matrix_rank_tol(rcond):
    def rc(L):
        return _tols(L, {"r": rcond})["r"]
    same(lambda L: L.linalg.pinv(L.tensor(A34), rc(L)))
    same(lambda L: L.linalg.matrix_rank(L.tensor(A34), rc(L)))
    same(lambda L: L.linalg.matrix_rank(L.tensor(SYM), rc(L), True))


@pytest.mark.parametrize("dt", ["int32", "float16", "bool"])
@pytest.mark.parametrize("shape", [(3, 0), (3, 2)])
def test_matrix_rank_dtype_errors(dt, shape):
    same(lambda L: L.linalg.matrix_rank(L.zeros(*shape, dtype=getattr(L, dt))))
    same(lambda L: L.linalg.matrix_rank(L.zeros(*shape, dtype=getattr(L, dt)), rtol=0.1))
    same(lambda L: L.linalg.pinv(L.zeros(*shape, dtype=getattr(L, dt))))


def test_matrix_rank_broadcast_warns_like_torch():
    with pytest.warns(UserWarning, match="was resized since it had shape"):
        r = ember.linalg.matrix_rank(ember.tensor(A34[0]), atol=ember.tensor([0.1, 9.0]))
    assert r.shape == (2,)


@pytest.mark.parametrize("shape,atol,herm", [((3, 4), [0.1, 0.2], False),
                                              ((2, 3, 3), [[0.1], [0.2], [0.3]], True),
                                              ((2, 4, 3), [0.01, 0.02], False)])
def test_pinv_tensor_atol_gradient(shape, atol, herm):
    a = R.standard_normal(shape)
    if herm:
        a = a + np.swapaxes(a, -1, -2)
    out = []
    g = None
    for L in (torch, ember):
        A = L.tensor(a, requires_grad=True)
        y = L.linalg.pinv(A, atol=L.tensor(atol, dtype=L.float64), hermitian=herm)
        if g is None:
            g = R.standard_normal(tuple(y.shape))
        y.backward(L.tensor(g))
        out.append((y.detach().numpy(), A.grad.numpy(), type(y.grad_fn).__name__))
    np.testing.assert_allclose(out[1][0], out[0][0], atol=1e-8)
    np.testing.assert_allclose(out[1][1], out[0][1], atol=1e-8)
    assert out[0][2] == out[1][2]


def test_pinv_tolerance_requires_grad_raises():
    same(lambda L: L.linalg.pinv(L.ones(2, 2), atol=L.ones(1, requires_grad=True)))
    same(lambda L: L.linalg.pinv(L.ones(2, 2), L.ones(1, requires_grad=True)))
    same(lambda L: L.linalg.pinv(L.ones(5, 2, 3), atol=L.ones(4)))


# ---- LU / LDL solvers, lu_unpack ---------------------------------------------------------

def _piv(L, batch=()):
    return L.tensor([1, 2, 3], dtype=L.int32).expand(*batch, 3).contiguous()


SOLVE_CASES = [
    ("lu", "float16", (3, 2), {}), ("lu", "float16", (3, 0), {}),
    ("lu", "float16", (0, 3), {"left": False}), ("lu", "float16", (3, 0), {"left": False}),
    ("lu", "bool", (3, 2), {}), ("lu", "int64", (0, 3), {}), ("lu", "float64", (3, 2), {}),
    ("lu", "float64", (2, 3), {"left": False, "adjoint": True}),
    ("ldl", "float16", (3, 2), {}), ("ldl", "float16", (3, 0), {}),
    ("ldl", "float32", (0, 3), {}), ("ldl", "int64", (3, 2), {}),
    ("ldl", "float64", (3, 2), {}), ("ldl", "float64", (3, 2), {"hermitian": True}),
]


@pytest.mark.parametrize("op,dt,bs,kw", SOLVE_CASES)
def test_lu_ldl_solve_checks(op, dt, bs, kw):
    lu = R.standard_normal((3, 3)) + 3 * np.eye(3)
    b = R.standard_normal(bs)

    def fn(L):
        LU, B = L.tensor(lu).to(getattr(L, dt)), L.tensor(b).to(getattr(L, dt))
        if op == "lu":
            return L.linalg.lu_solve(LU, _piv(L), B, **kw)
        return L.linalg.ldl_solve(LU, _piv(L), B, **kw)
    same(fn, atol=1e-6)


@pytest.mark.parametrize("case", range(9))
def test_solver_shape_and_dtype_errors(case):
    fns = [
        lambda L: L.linalg.lu_solve(L.randn(3, 3), _piv(L), L.randn(3, 2).double()),
        lambda L: L.linalg.lu_solve(L.randn(2, 3, 3), _piv(L), L.randn(3, 2)),
        lambda L: L.linalg.lu_solve(L.randn(3, 3), _piv(L), L.randn(3)),
        lambda L: L.linalg.lu_solve(L.randn(3, 3), _piv(L).long(), L.randn(3, 2)),
        lambda L: L.linalg.ldl_solve(L.randn(3, 3), _piv(L), L.randn(3, 2).double()),
        lambda L: L.linalg.ldl_solve(L.randn(2, 3, 3), _piv(L), L.randn(2, 3, 2)),
        lambda L: L.linalg.ldl_solve(L.randn(3, 3), _piv(L), L.randn(3)),
        lambda L: L.linalg.ldl_solve(L.randn(3, 3), _piv(L), L.randn(2, 2)),
        lambda L: L.lu_unpack(L.randn(3, 3), _piv(L).long()),
    ]
    same(fns[case])


def test_lu_solve_batched_broadcast_values_and_grads():
    lu = R.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    b = R.standard_normal((4, 1, 3, 2))
    res = []
    for L in (torch, ember):
        LU, B = L.tensor(lu, requires_grad=True), L.tensor(b, requires_grad=True)
        x = L.linalg.lu_solve(LU, _piv(L, (2,)), B)
        x.backward(L.tensor(np.ones(x.shape)))
        res.append([x.detach().numpy(), LU.grad.numpy(), B.grad.numpy()])
    for t, e in zip(*res):
        np.testing.assert_allclose(e, t, atol=1e-10)


def test_lu_unpack_without_data_backward_fails_as_torch():
    def fn(L):
        a = L.randn(3, 3, requires_grad=True)
        P, Lo, U = L.lu_unpack(a, _piv(L), unpack_data=False)
        (Lo.sum() + U.sum()).backward()
    same(fn)


# ---- lobpcg -------------------------------------------------------------------------------

def _spd(m, batch=()):
    a = R.standard_normal(batch + (m, m))
    return a @ np.swapaxes(a, -1, -2) + np.eye(m)


def _lobpcg(L):
    return L.lobpcg if L is torch else _ember_lobpcg


def _match_vectors(Vt, Ve, atol):
    sign = np.sign((Vt * Ve).sum(-2, keepdims=True))
    np.testing.assert_allclose(Ve * sign, Vt, atol=atol)


@pytest.mark.parametrize("m,k,method,largest,batch,use_b", [
    (9, 2, "ortho", None, (), False), (12, 3, "basic", True, (), False),
    (10, 2, "ortho", False, (), False), (12, 2, "ortho", True, (2,), False),
    (9, 2, "basic", False, (), True), (9, 2, "ortho", True, (), True)])
def test_lobpcg_with_given_x(m, k, method, largest, batch, use_b):
    a, x = _spd(m, batch), R.standard_normal(batch + (m, k))
    b = _spd(m, batch) if use_b else None
    out = []
    for L in (torch, ember):
        E, V = _lobpcg(L)(L.tensor(a), k=k, X=L.tensor(x.copy()), method=method, largest=largest,
                          B=None if b is None else L.tensor(b))
        out.append((E.numpy(), V.numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-8, atol=1e-10)
    _match_vectors(out[0][1], out[1][1], 1e-8)


def test_lobpcg_random_start_follows_the_seed():
    a = _spd(12)
    out = []
    for L in (torch, ember):
        L.manual_seed(3)
        E, V = _lobpcg(L)(L.tensor(a), k=2, n=3, niter=2)
        out.append((E.numpy(), V.numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-8)
    _match_vectors(out[0][1], out[1][1], 1e-8)


@pytest.mark.parametrize("m,k,largest,method", [(9, 2, True, "ortho"), (10, 3, False, "ortho"),
                                                (9, 2, None, "basic")])
def test_lobpcg_gradient(m, k, largest, method):
    a = _spd(m) + 0.01 * R.standard_normal((m, m))
    x = R.standard_normal((m, k))
    gE, gV = R.standard_normal(k), R.standard_normal((m, k))
    res = []
    for L in (torch, ember):
        A = L.tensor(a, requires_grad=True)
        E, V = _lobpcg(L)(A, k=k, X=L.tensor(x), largest=largest, method=method)
        s = L.tensor(np.sign(V.detach().numpy()[0:1]))
        ((E * L.tensor(gE)).sum() + (V * s * L.tensor(gV)).sum()).backward()
        res.append((A.grad.numpy(), type(E.grad_fn).__name__))
    np.testing.assert_allclose(res[1][0], res[0][0], atol=1e-6)
    assert res[0][1] == res[1][1]


def test_lobpcg_errors():
    for fn in (lambda L: _lobpcg(L)(L.eye(5, dtype=L.float64), k=2),
               lambda L: _lobpcg(L)(L.eye(6, dtype=L.float64), B=L.eye(5, dtype=L.float64)),
               lambda L: _lobpcg(L)(L.ones(6, 5, dtype=L.float64))):
        kt, rt = _run(torch, fn)
        ke, re_ = _run(ember, fn)
        assert (kt, rt[0]) == (ke, re_[0])
        assert rt[1] == re_[1] or rt[0] == "AssertionError"
