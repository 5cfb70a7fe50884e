"""torch.linalg's errors for bad input: class, message, and nothing changed when raising."""
import numpy as np
import pytest

import ember
import ember.special  # noqa: F401  (binds ember.special to the public module)

torch = pytest.importorskip("torch")


def _both(fn, *arrays):
    """Run ``fn`` on ember and torch tensors; return both exceptions (type name, message)."""
    out = []
    for lib in (ember, torch):
        args = [lib.tensor(a.copy()) if isinstance(a, np.ndarray) else a for a in arrays]
        before = [a.clone() for a in args if hasattr(a, "clone")]
        with pytest.raises(Exception) as info:
            fn(lib, *args)
        after = [a for a in args if hasattr(a, "clone")]
        for b, a in zip(before, after):
            np.testing.assert_array_equal(np.asarray(b.tolist()), np.asarray(a.tolist()))
        out.append((type(info.value).__name__, str(info.value)))
    return out


SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])
NOT_PD = np.array([[1.0, 2.0], [2.0, 1.0]])
NAN = np.array([[np.nan, 1.0], [1.0, 1.0]])


@pytest.mark.parametrize("name, fn, arrays", [
    ("inv_singular", lambda L, a: L.linalg.inv(a), (SINGULAR,)),
    ("inv_batch", lambda L, a: L.linalg.inv(a), (np.stack([np.eye(2), SINGULAR]),)),
    ("inv_ex_check", lambda L, a: L.linalg.inv_ex(a, check_errors=True), (SINGULAR,)),
    ("solve_singular", lambda L, a: L.linalg.solve(a, a), (SINGULAR,)),
    ("cholesky_not_pd", lambda L, a: L.linalg.cholesky(a), (NOT_PD,)),
    ("cholesky_batch", lambda L, a: L.linalg.cholesky(a), (np.stack([np.eye(2), NOT_PD]),)),
    ("cholesky_ex_check", lambda L, a: L.linalg.cholesky_ex(a, check_errors=True), (NOT_PD,)),
    ("cholesky_nan", lambda L, a: L.linalg.cholesky(a), (np.full((2, 2), np.nan),)),
    ("lu_factor_singular", lambda L, a: L.linalg.lu_factor(a), (np.zeros((2, 2)),)),
    ("lu_factor_no_pivot", lambda L, a: L.linalg.lu_factor(a, pivot=False), (np.eye(2),)),
    ("svd_nan", lambda L, a: L.linalg.svd(a), (NAN,)),
    ("svd_int", lambda L, a: L.linalg.svd(a), (np.ones((2, 2), dtype=np.int64),)),
    ("det_int", lambda L, a: L.linalg.det(a), (np.ones((2, 2), dtype=np.int64),)),
    ("qr_1d", lambda L, a: L.linalg.qr(a), (np.ones(2),)),
    ("qr_bad_mode", lambda L, a: L.linalg.qr(a, mode="x"), (np.ones((2, 2)),)),
    ("eigh_non_square", lambda L, a: L.linalg.eigh(a), (np.ones((2, 3)),)),
    ("inv_non_square", lambda L, a: L.linalg.inv(a), (np.ones((2, 3)),)),
    ("matrix_exp_non_square", lambda L, a: L.linalg.matrix_exp(a), (np.ones((2, 3)),)),
    ("cross_len", lambda L, a: L.linalg.cross(a, a), (np.ones((2, 2)),)),
    ("householder_wide", lambda L, a, t: L.linalg.householder_product(a, t),
     (np.ones((2, 3)), np.ones(2))),
    ("householder_tau", lambda L, a, t: L.linalg.householder_product(a, t),
     (np.ones((3, 2)), np.ones(3))),
    ("lstsq_driver", lambda L, a: L.linalg.lstsq(a, a, driver="foo"), (np.ones((2, 2)),)),
    ("matrix_power_singular", lambda L, a: L.linalg.matrix_power(a, -1), (np.zeros((2, 2)),)),
])
def test_errors_match_torch(name, fn, arrays):
    (e_type, e_msg), (t_type, t_msg) = _both(fn, *arrays)
    assert (e_type, e_msg) == (t_type, t_msg)


def test_no_error_where_torch_has_none():
    """Mixed dtypes promote in solve_triangular; multigammaln outside its domain is inf."""
    for lib in (ember, torch):
        x = lib.linalg.solve_triangular(lib.eye(2, dtype=lib.float64), lib.ones(2, 2),
                                        upper=True)
        assert x.dtype == lib.float64
        y = lib.special.multigammaln(lib.tensor([0.5], dtype=lib.float64), 3)
        assert y.tolist() == [float("inf")]


def test_linalg_error_class():
    assert issubclass(ember.linalg.LinAlgError, RuntimeError)
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.inv(ember.zeros(2, 2))


@pytest.mark.parametrize("fn", [
    lambda L, a: L.linalg.cholesky_ex(a),
    lambda L, a: L.linalg.inv_ex(a),
    lambda L, a: L.linalg.lu_factor_ex(a),
    lambda L, a: L.linalg.solve_ex(a, a),
])
def test_ex_info(fn):
    a = np.stack([np.eye(2), SINGULAR, NOT_PD])
    ours = fn(ember, ember.tensor(a))
    theirs = fn(torch, torch.tensor(a))
    assert ours.info.tolist() == theirs.info.tolist()
    assert ours.info.dtype == ember.int32


@pytest.mark.parametrize("fn, message", [
    (lambda L, a: L.linalg.qr(a, mode="r")[1].sum().backward(), "mode='r'"),
    (lambda L, a: L.linalg.qr(a, mode="complete")[0].sum().backward(), "mode='complete'"),
    (lambda L, a: L.linalg.ldl_factor(a @ a.mT).LD.sum().backward(), "ldl_factor"),
])
def test_backward_not_supported(fn, message):
    a = np.random.default_rng(0).standard_normal((3, 2))
    if message == "ldl_factor":
        a = np.random.default_rng(0).standard_normal((3, 3))
    msgs = []
    for lib in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            fn(lib, lib.tensor(a, requires_grad=True))
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1] and message in msgs[0]


@pytest.mark.parametrize("name", ["gammainc", "zeta"])
def test_special_grad_not_implemented(name):
    msgs = []
    for lib in (ember, torch):
        a = lib.tensor([2.0, 3.0], dtype=lib.float64, requires_grad=True)
        y = getattr(lib.special, name)(a, lib.tensor([1.5, 2.0], dtype=lib.float64))
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_eig_forward(dt):
    """Complex eigenvalues (sorted, as LAPACKs may order them differently) and A V = V diag(w)."""
    if not hasattr(ember, "complex64"):
        pytest.skip("ember has no complex dtypes")
    a = np.random.default_rng(0).standard_normal((2, 3, 3)).astype(dt)
    w, v = ember.linalg.eig(ember.tensor(a))
    tw = torch.linalg.eigvals(torch.tensor(a))
    assert str(w.dtype) == str(tw.dtype)
    ours, theirs = np.sort_complex(w.numpy()), np.sort_complex(tw.numpy())
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(a @ v.numpy(), v.numpy() * w.numpy()[..., None, :], atol=1e-4)
    ev = ember.linalg.eigvals(ember.tensor(a)).numpy()
    np.testing.assert_allclose(np.sort_complex(ev), theirs, rtol=1e-4, atol=1e-5)


def test_coverage():
    public = [n for n in dir(torch.linalg) if not n.startswith("_") and n != "common_notes"]
    assert [n for n in public if not hasattr(ember.linalg, n)] == []
    internal = {"Tensor", "torch", "common_args", "multi_dim_common"}
    public = [n for n in dir(torch.special) if not n.startswith("_") and n not in internal]
    assert [n for n in public if not hasattr(ember.special, n)] == []
