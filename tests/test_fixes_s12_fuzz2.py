"""Regression tests (session 12, fuzz seeds 19-20 and known classes): torch.triangular_solve's
and linalg.solve_triangular's checks, dtypes, strides and the broadcast clone of A."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _outcome(L, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn(L)
        except Exception as e:  # noqa: BLE001  (compared with torch's)
            return type(e).__name__, str(e)
    rs = r if isinstance(r, tuple) else (r,)
    return [(str(t.dtype), tuple(t.shape), t.stride()) for t in rs]


def _f(L, *shape, dtype="float32"):
    return L.ones(*shape, dtype=getattr(L, dtype))


def _eye(L, n, dtype="float32"):
    return L.eye(n, dtype=getattr(L, dtype))


TS_CASES = {
    "b_1d": lambda L: L.triangular_solve(_f(L, 3), _eye(L, 3)),
    "A_1d": lambda L: L.triangular_solve(_f(L, 3, 2), _f(L, 3)),
    "both_1d": lambda L: L.triangular_solve(_f(L, 3), _f(L, 3, dtype="int64")),
    "dtypes": lambda L: L.triangular_solve(_f(L, 3, 2, dtype="float64"), _eye(L, 3)),
    "dtypes_int": lambda L: L.triangular_solve(_f(L, 3, 2, dtype="int64"), _f(L, 3, 2)),
    "complex_b": lambda L: L.triangular_solve(_f(L, 3, 2, dtype="complex64"), _eye(L, 3)),
    "not_square": lambda L: L.triangular_solve(_f(L, 3, 2), _f(L, 3, 2)),
    "sizes": lambda L: L.triangular_solve(_f(L, 4, 2), _eye(L, 3)),
    "sizes_before_kernel": lambda L: L.triangular_solve(_f(L, 4, 2, dtype="int64"),
                                                        _eye(L, 3, "int64")),
    "batch": lambda L: L.triangular_solve(_f(L, 2, 3, 2), _eye(L, 3).expand(3, 3, 3)),
    "batch_before_kernel": lambda L: L.triangular_solve(
        _f(L, 2, 3, 2, dtype="int64"), _eye(L, 3, "int64").expand(3, 3, 3)),
    "long": lambda L: L.triangular_solve(_f(L, 3, 2, dtype="int64"), _eye(L, 3, "int64")),
    "half": lambda L: L.triangular_solve(_f(L, 3, 2, dtype="float16"), _eye(L, 3, "float16")),
    "empty_long": lambda L: L.triangular_solve(_f(L, 0, 2, dtype="int64"),
                                               _f(L, 0, 0, dtype="int64")),
    "ok": lambda L: L.triangular_solve(_f(L, 3, 2), _eye(L, 3).triu()),
    "ok_transpose": lambda L: L.triangular_solve(_f(L, 3, 2), _eye(L, 3), transpose=True),
    "clone_broadcast": lambda L: L.triangular_solve(_f(L, 4, 3, 2), _eye(L, 3)),
    "clone_broadcast2": lambda L: L.triangular_solve(_f(L, 2, 4, 3, 2),
                                                     _eye(L, 3).expand(4, 1, 3, 3)),
    "b_broadcast": lambda L: L.triangular_solve(_f(L, 3, 2), _eye(L, 3).expand(2, 3, 3)),
    "out_dtype": lambda L: L.triangular_solve(
        _f(L, 3, 2), _eye(L, 3), out=(_f(L, 3, 2, dtype="float64"), _f(L, 3, 3))),
    "out_dtype2": lambda L: L.triangular_solve(
        _f(L, 3, 2), _eye(L, 3), out=(_f(L, 3, 2), _f(L, 3, 3, dtype="complex64"))),
}

ST_CASES = {
    "A_1d": lambda L: L.linalg.solve_triangular(_f(L, 3), _f(L, 3), upper=True),
    "B_1d": lambda L: L.linalg.solve_triangular(_eye(L, 3, "int64"), _f(L, 3), upper=True),
    "square_before_kernel": lambda L: L.linalg.solve_triangular(
        _f(L, 3, 2, dtype="int64"), _f(L, 3, 2), upper=True),
    "batch": lambda L: L.linalg.solve_triangular(_eye(L, 3).expand(3, 3, 3), _f(L, 2, 3, 2),
                                                 upper=True),
    "A_float_B_double": lambda L: L.linalg.solve_triangular(
        _eye(L, 3), _f(L, 3, 2, dtype="float64"), upper=True),
    "A_double_B_float": lambda L: L.linalg.solve_triangular(
        _eye(L, 3, "float64"), _f(L, 3, 2), upper=True),
    "A_float_B_long": lambda L: L.linalg.solve_triangular(
        _eye(L, 3), _f(L, 3, 2, dtype="int64"), upper=True),
    "A_long_B_float": lambda L: L.linalg.solve_triangular(
        _eye(L, 3, "int64"), _f(L, 3, 2), upper=True),
    "A_float_B_complex": lambda L: L.linalg.solve_triangular(
        _eye(L, 3), _f(L, 3, 2, dtype="complex64"), upper=True),
    "A_complex_B_double": lambda L: L.linalg.solve_triangular(
        _eye(L, 3, "complex64"), _f(L, 3, 2, dtype="float64"), upper=True),
    "A_half": lambda L: L.linalg.solve_triangular(
        _eye(L, 3, "float16"), _f(L, 3, 2, dtype="float64"), upper=True),
    "left_false": lambda L: L.linalg.solve_triangular(_eye(L, 3).expand(4, 3, 3),
                                                      _f(L, 4, 2, 3), upper=False, left=False),
    "batched_B_only": lambda L: L.linalg.solve_triangular(_eye(L, 3), _f(L, 4, 3, 2),
                                                          upper=True),
    "cholesky_solve": lambda L: L.cholesky_solve(_f(L, 2, 3, 2), _eye(L, 3)),
    "cholesky_solve_2d": lambda L: L.cholesky_solve(_f(L, 3, 2), _eye(L, 3)),
}


@pytest.mark.parametrize("name", sorted(TS_CASES))
def test_triangular_solve_checks_dtypes_strides(name):
    fn = TS_CASES[name]
    assert _outcome(ember, fn) == _outcome(torch, fn)


@pytest.mark.parametrize("name", sorted(ST_CASES))
def test_solve_triangular_checks_dtypes_strides(name):
    fn = ST_CASES[name]
    assert _outcome(ember, fn) == _outcome(torch, fn)


def test_solve_triangular_complex_b_real_a_values():
    rng = np.random.default_rng(0)
    a = np.triu(rng.standard_normal((3, 3))) + 3 * np.eye(3)
    b = rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))
    res = [L.linalg.solve_triangular(L.tensor(a), L.tensor(b), upper=True).numpy()
           for L in (ember, torch)]
    np.testing.assert_allclose(res[0], res[1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("transpose", [False, True])
def test_triangular_solve_broadcast_clone_grads(transpose):
    """The cloned coefficient has the batch shape; its gradient sums back into A."""
    rng = np.random.default_rng(1)
    a = np.triu(rng.standard_normal((3, 3))) + 3 * np.eye(3)
    b = rng.standard_normal((2, 3, 2))
    gx, gm = rng.standard_normal((2, 3, 2)), rng.standard_normal((2, 3, 3))
    res = []
    for L in (ember, torch):
        A, B = L.tensor(a, requires_grad=True), L.tensor(b, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x, m = L.triangular_solve(B, A, transpose=transpose)
        L.autograd.backward([x, m], [L.tensor(gx), L.tensor(gm)])
        res.append((x.detach().numpy(), m.detach().numpy(), A.grad.numpy(), B.grad.numpy(),
                    type(x.grad_fn).__name__))
    for e, t in zip(res[0][:4], res[1][:4]):
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)
    assert res[0][4] == res[1][4]


def test_triangular_solve_clone_is_a_copy():
    a = ember.eye(3).mT.contiguous().mT   # column-major already: the clone must still copy
    _, m = ember.triangular_solve(ember.ones(3, 1), a)
    m[0, 0] = 5.0
    assert a[0, 0].item() == 1.0
