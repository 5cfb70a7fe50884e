"""torch parity of the linalg family: dtype errors, complex values and gradients, node names."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _spd(n, dtype=np.float64, seed=0):
    r = np.random.default_rng(seed)
    a = r.standard_normal((n, n))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * r.standard_normal((n, n))
    return (a @ a.conj().T + n * np.eye(n)).astype(dtype)


def _rand(shape, dtype=np.float64, seed=1):
    r = np.random.default_rng(seed)
    a = r.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * r.standard_normal(shape)
    return a.astype(dtype)


def _both(fn, *arrays):
    """``fn(lib, *tensors)`` in ember and torch: ``(result, error)`` per library."""
    out = []
    for lib in (ember, torch):
        try:
            out.append((fn(lib, *[lib.tensor(a) for a in arrays]), None))
        except Exception as e:  # noqa: BLE001
            out.append((None, e))
    return out


DTYPE_CASES = [
    ("det", lambda L, a: L.linalg.det(a), "sq"),
    ("inv", lambda L, a: L.linalg.inv(a), "sq"),
    ("slogdet", lambda L, a: L.linalg.slogdet(a), "sq"),
    ("logdet", lambda L, a: L.logdet(a), "sq"),
    ("solve", lambda L, a: L.linalg.solve(a, a), "sq"),
    ("cholesky", lambda L, a: L.linalg.cholesky(a), "sq"),
    ("cholesky_torch", lambda L, a: L.cholesky(a), "sq"),
    ("cholesky_solve", lambda L, a: L.cholesky_solve(a, a), "sq"),
    ("cholesky_inverse", lambda L, a: L.cholesky_inverse(a), "sq"),
    ("solve_triangular", lambda L, a: L.linalg.solve_triangular(a, a, upper=True), "sq"),
    ("triangular_solve", lambda L, a: L.triangular_solve(a, a), "sq"),
    ("qr", lambda L, a: L.linalg.qr(a), "sq"),
    ("svd", lambda L, a: L.linalg.svd(a), "sq"),
    ("eigh", lambda L, a: L.linalg.eigh(a), "sq"),
    ("eig", lambda L, a: L.linalg.eig(a), "sq"),
    ("lu_factor", lambda L, a: L.linalg.lu_factor(a), "sq"),
    ("lu", lambda L, a: L.linalg.lu(a), "sq"),
    ("pinv", lambda L, a: L.linalg.pinv(a), "sq"),
    ("matrix_rank", lambda L, a: L.linalg.matrix_rank(a), "sq"),
    ("lstsq", lambda L, a: L.linalg.lstsq(a, a), "sq"),
    ("householder_product", lambda L, a: L.linalg.householder_product(a, a[:, 0]), "sq"),
    ("geqrf", lambda L, a: L.geqrf(a), "sq"),
    ("matrix_norm_nuc", lambda L, a: L.linalg.matrix_norm(a, "nuc"), "sq"),
    ("matrix_norm_1", lambda L, a: L.linalg.matrix_norm(a, 1), "sq"),
    ("vector_norm", lambda L, a: L.linalg.vector_norm(a), "sq"),
    ("vecdot", lambda L, a: L.linalg.vecdot(a, a), "sq"),
]


@pytest.mark.parametrize("dtype", ["int32", "bool", "float16"])
@pytest.mark.parametrize("name, fn, kind", DTYPE_CASES, ids=[c[0] for c in DTYPE_CASES])
def test_dtype_errors_match_torch(name, fn, kind, dtype):
    a = _spd(3).astype(dtype)
    (e_out, e_err), (t_out, t_err) = _both(fn, a)
    if t_err is None:
        assert e_err is None, e_err
        return
    assert e_err is not None, "ember returned where torch raised %r" % t_err
    assert type(e_err).__name__ == type(t_err).__name__
    assert str(e_err) == str(t_err)


@pytest.mark.parametrize("fn", [lambda L, a: L.linalg.cholesky(a),
                                lambda L, a: L.linalg.lu_factor(a),
                                lambda L, a: L.linalg.det(a)])
def test_empty_half_reaches_no_kernel(fn):
    (e_out, e_err), (t_out, t_err) = _both(fn, np.zeros((0, 0), np.float16))
    assert e_err is None and t_err is None


def _np(t):
    t = t.detach()
    return (t.resolve_conj() if hasattr(t, "resolve_conj") else t).numpy()


def _grads(fn, arrays, seed=3):
    """Values and gradients of ``fn`` in both libraries, with the same random upstream."""
    res = []
    for lib in (ember, torch):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = fn(lib, *ts)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        outs = [o for o in outs if o.requires_grad]
        r = np.random.default_rng(seed)
        ups = []
        for o in outs:
            g = r.standard_normal(tuple(o.shape))
            if o.dtype in (lib.complex64, lib.complex128):
                g = g + 1j * r.standard_normal(tuple(o.shape))
            ups.append(lib.tensor(g.astype(str(o.dtype).split(".")[-1])))
        lib.autograd.backward(outs, ups)
        res.append(([_np(o) for o in outs], [_np(t.grad) for t in ts]))
    return res


COMPLEX_CASES = [
    ("det", lambda L, a: L.linalg.det(a), 1),
    ("inv", lambda L, a: L.linalg.inv(a), 1),
    ("slogdet", lambda L, a: L.linalg.slogdet(a), 1),
    ("logdet", lambda L, a: L.logdet(a), 1),
    ("solve", lambda L, a, b: L.linalg.solve(a, b), 2),
    ("solve_vec", lambda L, a, b: L.linalg.solve(a, b[:, 0]), 2),
    ("solve_right", lambda L, a, b: L.linalg.solve(a, b.mT, left=False), 2),
    ("vector_norm", lambda L, a: L.linalg.vector_norm(a, 3), 1),
    ("vector_norm_1", lambda L, a: L.linalg.vector_norm(a, 1), 1),
    ("matrix_norm_fro", lambda L, a: L.linalg.matrix_norm(a), 1),
    ("matrix_norm_inf", lambda L, a: L.linalg.matrix_norm(a, float("inf")), 1),
    ("matrix_norm_nuc", lambda L, a: L.linalg.matrix_norm(a, "nuc"), 1),
    ("cholesky", lambda L, a: L.linalg.cholesky(a @ a.mH + 3 * L.eye(3)), 1),
    ("solve_triangular", lambda L, a, b: L.linalg.solve_triangular(a + 3 * L.eye(3), b,
                                                                     upper=False), 2),
    ("cholesky_solve", lambda L, a, b: L.cholesky_solve(b, a.tril() + 3 * L.eye(3)), 2),
    ("cholesky_inverse", lambda L, a: L.cholesky_inverse(L.linalg.cholesky(a @ a.mH)), 1),
    ("lu_solve", lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b), 2),
    ("lu_solve_adjoint", lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b,
                                                           adjoint=True), 2),
    ("lu_solve_right", lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b.mT,
                                                         left=False), 2),
    ("lu", lambda L, a: L.linalg.lu(a)[1:], 1),
    ("qr", lambda L, a: L.linalg.qr(a), 1),
    ("svdvals", lambda L, a: L.linalg.svdvals(a), 1),
    ("eigvalsh", lambda L, a: L.linalg.eigvalsh(a @ a.mH), 1),
    ("vecdot", lambda L, a, b: L.linalg.vecdot(a, b), 2),
    ("householder_product", lambda L, a, b: L.linalg.householder_product(a, b[:, 0] / 4), 2),
]


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("name, fn, nargs", COMPLEX_CASES, ids=[c[0] for c in COMPLEX_CASES])
def test_values_and_grads_match_torch(name, fn, nargs, dtype):
    arrays = [_spd(3, dtype, 0) + _rand((3, 3), dtype, 5), _rand((3, 3), dtype, 7)][:nargs]
    (e_out, e_g), (t_out, t_g) = _grads(fn, arrays)
    for e, t in zip(e_out, t_out):
        assert e.dtype == t.dtype
        np.testing.assert_allclose(e, t, rtol=1e-7, atol=1e-9)
    for e, t in zip(e_g, t_g):
        np.testing.assert_allclose(e, t, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name, fn, nargs", COMPLEX_CASES[:8], ids=[c[0] for c in
                                                                    COMPLEX_CASES[:8]])
def test_complex_gradcheck(name, fn, nargs):
    arrays = [_spd(3, np.complex128, 0) + _rand((3, 3), np.complex128, 5),
              _rand((3, 3), np.complex128, 7)][:nargs]
    ts = [ember.tensor(a, requires_grad=True) for a in arrays]
    assert ember.autograd.gradcheck(lambda *xs: fn(ember, *xs), ts)


def test_slogdet_sign_is_differentiable_with_no_gradient():
    for lib in (ember, torch):
        a = lib.tensor(_spd(3), requires_grad=True)
        sign, _ = lib.linalg.slogdet(a)
        assert sign.requires_grad


def test_lu_permutation_is_not_differentiable():
    for lib in (ember, torch):
        P, L, U = lib.linalg.lu(lib.tensor(_rand((3, 3)), requires_grad=True))
        assert not P.requires_grad and L.requires_grad


def test_nan_pivot_fills_the_solve_with_nan_as_torch():
    a = _spd(3)
    a[0, 0] = np.nan
    b = _rand((3, 2))
    (e, _), (t, _) = _both(lambda L, x, y: L.linalg.solve(x, y), a, b)
    np.testing.assert_array_equal(np.isnan(e.numpy()), np.isnan(t.numpy()))


def test_triangular_inf_diagonal_as_torch():
    a = np.triu(_spd(3))
    a[-1, -1] = np.inf
    b = _rand((3, 2))
    (e, _), (t, _) = _both(lambda L, x, y: L.linalg.solve_triangular(x, y, upper=True), a, b)
    np.testing.assert_allclose(e.numpy(), t.numpy())


@pytest.mark.parametrize("fn, node", [
    (lambda L, a, b: L.cholesky_solve(b, a), "CholeskySolveBackward0"),
    (lambda L, a, b: L.cholesky_inverse(a), "CholeskyInverseBackward0"),
    (lambda L, a, b: L.triangular_solve(b, a)[0], "TriangularSolveBackward0"),
    (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b), "LinalgLuSolveBackward0"),
    (lambda L, a, b: L.lu_unpack(*L.linalg.lu_factor(a))[1], "LuUnpackBackward0"),
    (lambda L, a, b: L.linalg.solve(a, b[:, 0]), "LinalgSolveExBackward0"),
    (lambda L, a, b: L.linalg.solve(a, b, left=False), "LinalgSolveExBackward0"),
    (lambda L, a, b: L.cholesky(a), "CholeskyBackward0"),
    (lambda L, a, b: L.linalg.matrix_norm(a, -1), "AminBackward0"),
])
def test_node_names_match_torch(fn, node):
    names = []
    for lib in (ember, torch):
        a = lib.tensor(np.tril(_spd(3)), requires_grad=True)
        b = lib.tensor(_rand((3, 3)), requires_grad=True)
        names.append(type(fn(lib, a, b).grad_fn).__name__)
    assert names == [node, node]
