"""Regression tests (against torch) for session 9's linalg and range fuzzer fixes: the SVD
family on matrices holding an infinity (NaN singular values, no error; torch's error for a
NaN, naming the batch element), linalg.solve's dtype check before the LAPACK dtype error, and
arange/range/linspace/logspace with complex, 0-d tensor and NumPy scalar arguments."""
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).parent))
from fuzz.ops import case_from_json, check_case  # noqa: E402

INF, NAN = float("inf"), float("nan")
DTYPES = ["float32", "float64", "complex64", "complex128"]


def _run(lib, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", fn(lib)
        except Exception as e:  # noqa: BLE001  (compared between the libraries)
            return "raise", (type(e).__name__, str(e))


def _arr(t):
    return np.asarray(t.detach().resolve_conj().numpy() if hasattr(t, "resolve_conj")
                      else t.detach().numpy())


def _same(fn, tol=1e-6):
    """``fn(ember)`` and ``fn(torch)`` agree: the same error, or tensors of the same dtype,
    shape and values (NaN where torch's is)."""
    e, t = _run(ember, fn), _run(torch, fn)
    assert e[0] == t[0], (e, t)
    if e[0] == "raise":
        assert e[1] == t[1]
        return
    eo = e[1] if isinstance(e[1], tuple) else (e[1],)
    to = t[1] if isinstance(t[1], tuple) else (t[1],)
    for a, b in zip(eo, to):
        assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(_arr(a), _arr(b), rtol=tol, atol=tol, equal_nan=True)


def _mat(lib, dtype, kind, shape=(2, 3)):
    a = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape) * np.array(1.0, dtype=dtype)
    if dtype.startswith("complex"):
        a = a + 0.5j * a[..., ::-1, :]
    flat = a.reshape(-1)
    one = min(1, flat.size - 1)
    if kind == "pinf":
        flat[one] = INF
    elif kind == "ninf":
        flat[one] = -INF
    elif kind == "allinf":
        flat[:] = INF
    elif kind == "infnan":
        flat[1], flat[-1] = INF, NAN
    elif kind == "nan":
        flat[-1] = NAN
    return lib.tensor(a, dtype=getattr(lib, dtype))


SVD_OPS = {
    "svdvals": lambda L, a: L.linalg.svdvals(a),
    "svd_S": lambda L, a: L.linalg.svd(a)[1],
    "torch_svd_S": lambda L, a: L.svd(a)[1],
    "svd_no_uv": lambda L, a: L.svd(a, compute_uv=False),
    "nuc": lambda L, a: L.linalg.matrix_norm(a, "nuc"),
    "norm2": lambda L, a: L.linalg.matrix_norm(a, 2),
    "norm-2": lambda L, a: L.linalg.matrix_norm(a, -2),
    "linalg_norm2": lambda L, a: L.linalg.norm(a, 2, dim=(-2, -1)),
    "linalg_norm_nuc": lambda L, a: L.linalg.norm(a, "nuc", dim=(-2, -1)),
    "nuclear_norm": lambda L, a: L.nuclear_norm(a),
    "rank": lambda L, a: L.linalg.matrix_rank(a),
    "rank_atol": lambda L, a: L.linalg.matrix_rank(a, atol=0.5, rtol=0.1),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["pinf", "ninf", "allinf", "infnan", "nan"])
@pytest.mark.parametrize("op", sorted(SVD_OPS))
def test_svd_family_nonfinite(op, kind, dtype):
    _same(lambda L: SVD_OPS[op](L, _mat(L, dtype, kind)))


@pytest.mark.parametrize("op", ["cond", "cond-2", "cond_nuc"])
@pytest.mark.parametrize("kind", ["pinf", "allinf", "nan"])
def test_cond_nonfinite(op, kind):
    p = {"cond": None, "cond-2": -2, "cond_nuc": "nuc"}[op]
    _same(lambda L: L.linalg.cond(_mat(L, "float64", kind, (3, 3)), p))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2, 3), (3, 2), (3, 3), (1, 1), (1, 3)])
def test_svd_inf_vectors_nan(shape, dtype):
    # torch's U and Vh for a matrix holding an infinity are whatever LAPACK leaves (sometimes
    # a permutation, sometimes NaN): ember's are NaN, its singular values torch's NaN.
    for full in (True, False):
        a = _mat(ember, dtype, "pinf", shape)
        U, S, Vh = ember.linalg.svd(a, full_matrices=full)
        assert U.isnan().all() and S.isnan().all() and Vh.isnan().all()
        assert str(S.dtype) == str(torch.linalg.svdvals(_mat(torch, dtype, "pinf", shape)).dtype)
        assert ember.linalg.pinv(a).isnan().all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_svd_batch_mixing(dtype):
    def build(L):
        a = L.stack([_mat(L, dtype, k, (3, 3)) for k in ("none", "pinf", "none", "ninf")])
        a = a + 4 * L.eye(3, dtype=a.dtype)
        return a.reshape(2, 2, 3, 3)

    _same(lambda L: L.linalg.svdvals(build(L)), 1e-5)
    _same(lambda L: L.linalg.matrix_rank(build(L)))
    _same(lambda L: L.linalg.matrix_norm(build(L), 2), 1e-5)
    _same(lambda L: L.linalg.cond(build(L)), 1e-4)
    pe = ember.linalg.pinv(build(ember))
    pt = torch.linalg.pinv(build(torch))
    np.testing.assert_allclose(_arr(pe[0, 0]), _arr(pt[0, 0]), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(_arr(pe[1, 0]), _arr(pt[1, 0]), rtol=1e-4, atol=1e-4)
    assert pe[0, 1].isnan().all() and pe[1, 1].isnan().all()


@pytest.mark.parametrize("op", ["svdvals", "pinv", "rank"])
def test_svd_nan_batch_error(op):
    fn = {"svdvals": lambda L, a: L.linalg.svdvals(a), "pinv": lambda L, a: L.linalg.pinv(a),
          "rank": lambda L, a: L.linalg.matrix_rank(a)}[op]

    def build(L):
        a = L.ones(2, 2, 2, 2, dtype=L.float64)
        a[0, 1, 0, 0] = INF
        a[1, 1, 0, 0] = NAN
        a[1, 0, 1, 1] = NAN
        return a

    _same(lambda L: fn(L, build(L)))
    if op != "pinv":    # (torch's pinv of an infinite matrix is LAPACK's NaN or 0)
        _same(lambda L: fn(L, build(L)[0]))   # (an infinity alone: no error)


@pytest.mark.parametrize("op", ["svdvals", "svd", "nuc", "norm2", "norm-2", "pinv", "cond"])
def test_svd_family_grad_batch(op):
    # A finite matrix's gradient is torch's; one holding an infinity gets NaN (torch's depends
    # on LAPACK's singular vectors).
    fns = {"svdvals": lambda L, x: L.linalg.svdvals(x).sum(),
           "svd": lambda L, x: L.linalg.svd(x, full_matrices=False)[1].sum(),
           "nuc": lambda L, x: L.linalg.matrix_norm(x, "nuc").sum(),
           "norm2": lambda L, x: L.linalg.matrix_norm(x, 2).sum(),
           "norm-2": lambda L, x: L.linalg.matrix_norm(x, -2).sum(),
           "pinv": lambda L, x: L.linalg.pinv(x).sum(),
           "cond": lambda L, x: L.linalg.cond(x).sum()}
    base = np.array([[[2.0, 1.0, 0.5], [0.3, 1.5, -1.0], [1.0, 0.0, 3.0]]] * 2)
    base[1, 0, 1] = INF
    grads = []
    for L in (ember, torch):
        x = L.tensor(base, dtype=L.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fns[op](L, x).backward()
        grads.append(_arr(x.grad))
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-6, atol=1e-8)
    assert np.isnan(grads[0][1]).all()


def test_pinv_hermitian_nan_error():
    # torch's error is linalg.eigh's (ember's was NumPy's LinAlgError); its error code is
    # LAPACK's own.
    def build(L):
        a = L.tensor([[1.0, 0.5, -0.3], [0.5, 2.0, 0.7], [-0.3, 0.7, -1.0]], dtype=L.float64)
        a[1, 1] = NAN
        return a

    e, t = _run(ember, lambda L: L.linalg.pinv(build(L), hermitian=True)), \
        _run(torch, lambda L: L.linalg.pinv(build(L), hermitian=True))
    assert e[0] == t[0] == "raise" and e[1][0] == t[1][0]
    assert e[1][1].startswith("linalg.eigh: The algorithm failed to converge")


SOLVE = [
    lambda L: L.linalg.tensorsolve(L.ones(2, 3, 6, dtype=L.float16), L.ones(2, 3,
                                                                          dtype=L.float64)),
    lambda L: L.linalg.solve(L.eye(3, dtype=L.float16), L.ones(3, dtype=L.float32)),
    lambda L: L.linalg.solve(L.eye(3, dtype=L.float16), L.ones(3, dtype=L.float16)),
    lambda L: L.linalg.solve(L.eye(3, dtype=L.float64), L.ones(3, dtype=L.int32)),
    lambda L: L.linalg.solve(L.eye(3, dtype=L.int32), L.ones(3, dtype=L.float64)),
    lambda L: L.linalg.solve(L.eye(3, dtype=L.complex64), L.ones(3, dtype=L.float64)),
    lambda L: L.linalg.solve(L.eye(3, dtype=L.float64) * 2, L.ones(3, dtype=L.float64)),
]


@pytest.mark.parametrize("i", range(len(SOLVE)))
def test_solve_dtype_order(i):
    _same(SOLVE[i])


def _t(L, v, dtype=None):
    return L.tensor(v, dtype=None if dtype is None else getattr(L, dtype))


RANGES = [
    lambda L: L.arange(1 + 2j),
    lambda L: L.arange(3 + 0j),
    lambda L: L.arange(_t(L, 3 + 0j)),
    lambda L: L.arange(_t(L, 3 + 1j, "complex64")),
    lambda L: L.arange(_t(L, 3 + 0j, "complex128")),
    lambda L: L.arange(0, _t(L, 3 + 0j)),
    lambda L: L.arange(0, 3, _t(L, 1 + 0j)),
    lambda L: L.arange(0, 3, 1 + 0j),
    lambda L: L.arange(3 + 1j, dtype=L.int64),
    lambda L: L.arange(3.5 + 0j, dtype=L.int64),
    lambda L: L.arange(3 + 1j, 5, 0),
    lambda L: L.arange(3, dtype=L.complex64),
    lambda L: L.arange(1 + 1j, dtype=L.complex64),
    lambda L: L.arange(3, dtype=L.bool),
    lambda L: L.arange(_t(L, 3.5)),
    lambda L: L.arange(_t(L, 3)),
    lambda L: L.arange(np.float32(3.5)),
    lambda L: L.arange(np.int32(3)),
    lambda L: L.arange(np.int64(1), np.float64(3.5)),
    lambda L: L.arange(np.complex64(3 + 1j)),
    lambda L: L.arange(np.complex128(3.5 + 0j)),
    lambda L: L.arange(0, 3, 0),
    lambda L: L.arange(0.0, 3.0, 0.0),
    lambda L: L.arange(0, 3, NAN),
    lambda L: L.arange(INF),
    lambda L: L.arange(NAN),
    lambda L: L.arange(0.5, -INF, -1),
    lambda L: L.arange(_t(L, INF)),
    lambda L: L.arange(0, INF, 0.5, dtype=L.int64),
    lambda L: L.arange(0, 3, 0.5, dtype=L.int64),
    lambda L: L.arange(1e300, 1e301),
    lambda L: L.arange(0.1, 1e20, 1.5),
    lambda L: L.range(0, 3 + 0j),
    lambda L: L.range(0, 3 + 1j),
    lambda L: L.range(0, _t(L, 3 + 0j)),
    lambda L: L.range(np.float32(0), np.int32(3)),
    lambda L: L.range(0, 3, dtype=L.complex64),
    lambda L: L.range(0, 3, dtype=L.bool),
    lambda L: L.range(0, INF),
    lambda L: L.range(NAN, 3, 1),
    lambda L: L.range(INF, 3, 0),
    lambda L: L.linspace(0, 3 + 1j, 4),
    lambda L: L.linspace(0, _t(L, 3 + 1j), 4),
    lambda L: L.linspace(_t(L, 1 + 1j, "complex64"), 3, 4),
    lambda L: L.linspace(0, _t(L, 3 + 1j, "complex128"), 5),
    lambda L: L.linspace(0, 3 + 1j, 4, dtype=L.complex128),
    lambda L: L.linspace(0, 3 + 1j, 4, dtype=L.float32),
    lambda L: L.linspace(0, 3 + 1j, 4, dtype=L.int64),
    lambda L: L.linspace(0, 3 + 1j, 4, dtype=L.bool),
    lambda L: L.linspace(0, 1, 3, dtype=L.bool),
    lambda L: L.linspace(1 + 1j, 2, 1),
    lambda L: L.linspace(np.float32(0.1), np.int64(3), 4),
    lambda L: L.linspace(np.complex64(1j), 3, 4),
    lambda L: L.linspace(np.complex128(1 + 1j), 2, 3),
    lambda L: L.linspace(0, 3, _t(L, 4)),
    lambda L: L.linspace(0, 3, np.int64(4)),
    lambda L: L.linspace(0, 3, _t(L, 4.0)),
    lambda L: L.linspace(0, 3, _t(L, [4])),
    lambda L: L.linspace(0, 3, 4.0),
    lambda L: L.linspace(0, 3, 4.0, dtype=L.float64),
    lambda L: L.linspace(0, 3, True),
    lambda L: L.linspace(None, 1, 3),
    lambda L: L.linspace(0, 3, -1),
    lambda L: L.linspace(_t(L, [0.0]), 3, 4),
    lambda L: L.linspace(0, _t(L, [3.0]), 4),
    lambda L: L.linspace(_t(L, [[0.0]]), _t(L, [3.0]), 4),
    lambda L: L.linspace(_t(L, [0.0]), 3, -1),
    lambda L: L.logspace(0, 1 + 1j, 3),
    lambda L: L.logspace(0, _t(L, 1 + 1j), 3),
    lambda L: L.logspace(0, 1 + 1j, 3, base=2),
    lambda L: L.logspace(0, 1 + 1j, 3, dtype=L.complex128),
    lambda L: L.logspace(0, 2, 3, dtype=L.complex64),
    lambda L: L.logspace(0, 1 + 1j, 3, dtype=L.float64),
    lambda L: L.logspace(1 + 1j, 1 + 1j, 1),
    lambda L: L.logspace(0, 2, 3, base=1j),
    lambda L: L.logspace(0, 2, 3, base=_t(L, 2.0)),
    lambda L: L.logspace(0, 2, 3, base=_t(L, 2 + 0j)),
    lambda L: L.logspace(0, 2, 3, base=_t(L, 2 + 1j)),
    lambda L: L.logspace(0, 2, 3, base=_t(L, [2.0])),
    lambda L: L.logspace(0, 2, 3, base=np.float32(2.0)),
    lambda L: L.logspace(0, 2, 3, base=np.complex64(2)),
    lambda L: L.logspace(0, 2, _t(L, 3)),
    lambda L: L.logspace(0, 2, _t(L, 3.0)),
    lambda L: L.logspace(0, 2, 3.0, base=2.0),
    lambda L: L.logspace(0, 2, -1),
    lambda L: L.logspace(0, 1, 3, dtype=L.bool),
    lambda L: L.logspace(_t(L, [0.0]), 2, 3),
    lambda L: L.logspace(_t(L, 0.0), _t(L, 2), 3),
]


@pytest.mark.parametrize("i", range(len(RANGES)))
def test_range_factories(i):
    _same(RANGES[i], 0)


CASES = [
    '["linalg", "tensorsolve", [["T", [2, 3, 6], "float16", "u", "c", false], ["T", [2, 3], '
    '"float64", "u", "t", false]], {}, 600068]',
    '["torch", "arange", [["T", [], "complex64", "u", "c", false]], {}, 600028]',
]


@pytest.mark.parametrize("case", CASES)
def test_fuzzer_case(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert check_case(case_from_json(json.loads(case)), torch, timeout=60) is None
