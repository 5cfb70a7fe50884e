"""Regression tests for session 13's differential-fuzzer fixes (seeds 21-26), against torch."""
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

sys.path.insert(0, str(Path(__file__).resolve().parent))      # tests/: fuzz
from fuzz.ops import check_case  # noqa: E402

INF, NAN = float("inf"), float("nan")


def _run(lib, fn):
    """``fn(lib)`` as nested lists of (possibly complex) numbers, or the exception's class."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(lib)
    except Exception as e:  # noqa: BLE001 (the class is compared)
        return type(e).__name__
    outs = out if isinstance(out, (tuple, list)) else (out,)
    res = []
    for t in outs:
        v = t.detach()
        v = v.float() if str(v.dtype).endswith("bfloat16") else v
        res.append((str(t.dtype).split(".")[-1], np.asarray(v.numpy()).astype(complex)))
    return res


def _same(fn):
    a, b = _run(torch, fn), _run(ember, fn)
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
        return
    assert len(a) == len(b)
    for (da, va), (db, vb) in zip(a, b):
        assert da == db
        np.testing.assert_allclose(vb, va, rtol=1e-5, atol=1e-6, equal_nan=True)
        assert np.array_equal(np.isnan(va), np.isnan(vb))


CASES = [   # the smallest failing case of each class the seeds found
    ("Tensor", "map2_", [("T", (), "complex128", "x", "c", False),
                         ("T", (5,), "complex128", "u", "c", False),
                         ("T", (), "complex128", "x", "c", False), None], {}, 2100075),
    ("opdb", "triangular_solve", [0, "complex128", True, "c"], {}, 2100066),
    ("torch", "pow", [("T", (4,), "bfloat16", "u", "c", True), 0.001], {}, 2200073),
    ("Tensor", "pow_", [("T", (4,), "bfloat16", "u", "c", True), 0.001], {}, 2200073),
    ("Tensor", "byte", [("T", (1, 3), "bfloat16", "u", "s", True)], {}, 2400077),
    ("linalg", "qr", [("T", (1, 2, 2, 2), "complex64", "spd", "c", False)], {}, 2400078),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "%s.%s" % (c[0], c[1]))
def test_fuzz_case(case):
    assert check_case(case) is None


@pytest.mark.parametrize("fn", [
    lambda L: L.ones(()).map_(L.ones(5), lambda a, b: a + b),
    lambda L: L.ones(()).map2_(L.ones(5), L.ones(()), lambda a, b, c: a),
    lambda L: L.ones(2, 3).map2_(L.arange(3.), L.ones(2, 1), lambda a, b, c: a + b * c),
])
def test_map_broadcast(fn):
    _same(fn)


def _tri(upper, left=True, unit=False, n=3, diag=INF, dt="complex128"):
    def fn(L):
        a = L.eye(n, dtype=getattr(L, dt)) + L.tril(L.ones(n, n, dtype=getattr(L, dt)), -1)
        a[n // 2, n // 2] = diag
        a = a if not upper else a.mT.contiguous()
        b = L.ones(n, 2, dtype=a.dtype) if left else L.ones(2, n, dtype=a.dtype)
        return L.linalg.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit)
    return fn


@pytest.mark.parametrize("fn", [
    _tri(False), _tri(True), _tri(False, left=False), _tri(True, left=False),
    _tri(False, unit=True), _tri(True, n=20), _tri(False, n=20, dt="complex64"),
    _tri(False, diag=complex(1, INF)), _tri(True, diag=NAN), _tri(False, dt="float64"),
    lambda L: L.triangular_solve(L.ones(3, 1, dtype=L.complex128),
                                 L.tensor([[1, 1, 1], [0, 2, 1], [0, 0, INF]],
                                          dtype=L.complex128), transpose=True)[0],
    lambda L: L.cholesky_solve(L.ones(3, 1, dtype=L.complex128),
                               L.tensor([[1, 0, 0], [1, 2, 0], [1, 1, INF]], dtype=L.complex128)),
    lambda L: L.linalg.lu_solve(L.tensor([[2, 0, 0], [0.5, 3, 0], [0.5, 1, INF]],
                                         dtype=L.complex128).mT.contiguous(),
                                L.tensor([1, 2, 3], dtype=L.int32),
                                L.ones(3, 1, dtype=L.complex128)),
])
def test_complex_triangular_solve_nonfinite_pivot(fn):
    """torch's complex triangular solves give NaN for an inf pivot (lu_solve gives 0)."""
    _same(fn)


def test_triangular_solve_nonfinite_pivot_grad():
    def fn(L):
        a = L.tensor([[2, 0, 0], [1, 3, 0], [1, 1, INF]], dtype=L.complex128, requires_grad=True)
        b = L.ones(3, 2, dtype=L.complex128, requires_grad=True)
        x = L.linalg.solve_triangular(a, b, upper=False)
        x.backward(L.ones_like(x))
        return x, a.grad, b.grad
    _same(fn)


@pytest.mark.parametrize("e", [0.001, 1.001, 2.0001, 0.5001, -0.5001, 3.001, -1.001, 257, 2.3,
                               0.5, -0.5, 3, 4])
@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
def test_pow_reduced_float_exponent(e, dt):
    """torch rounds a number exponent to the base's dtype (bfloat16: 1.001 is 1)."""
    def fn(L):
        x = L.tensor([-1.234375, 1.21875, 2.0, -0.5, 0.0, 1.0078125, 3.0],
                     dtype=getattr(L, dt), requires_grad=True)
        y = x ** e
        y.backward(L.ones_like(y))
        z = x.detach().clone()
        return y, x.grad, z.pow_(e), L.pow(x.detach(), e)
    _same(fn)


_VALS = [-1.5, -0.5, -200.0, 300.0, 1.7, -255.0, 70000.0, NAN, INF, -1e10]


@pytest.mark.parametrize("dt", ["uint8", "int8", "int16", "int32", "int64", "bool"])
@pytest.mark.parametrize("how", ["to", "strided", "copy_", "fill_"])
def test_bfloat16_to_integer(dt, how):
    def fn(L):
        t = L.tensor(_VALS, dtype=L.bfloat16)
        d = getattr(L, dt)
        if how == "to":
            return t.to(d)
        if how == "strided":
            return t[::2].to(d)
        z = L.zeros(len(_VALS), dtype=d)
        return z.copy_(t) if how == "copy_" else z.fill_(t[2])
    _same(fn)


def test_bfloat16_integer_methods():
    _same(lambda L: [getattr(L.tensor(_VALS, dtype=L.bfloat16), m)()
                     for m in ("byte", "char", "short", "int", "long", "bool")])


@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_complex64_hermitian(mode):
    """complex64 QR in single precision as torch's LAPACK call (R's last diagonal stays real
    positive where the rounded imaginary part is exactly 0)."""
    a = np.array([[9.637302, -3.3416612 - 4.8584504j], [-3.3416612 + 4.8584504j, 13.88728]],
                 dtype=np.complex64)
    rng = np.random.default_rng(0)
    m = (rng.standard_normal((2, 4, 3)) + 1j * rng.standard_normal((2, 4, 3))).astype(np.complex64)
    for arr in (a, m, m.transpose(0, 2, 1).copy()):
        _same(lambda L: L.linalg.qr(L.tensor(arr), mode=mode))


def test_qr_complex64_grad():
    rng = np.random.default_rng(1)
    m = (rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))).astype(np.complex64)

    def fn(L):
        t = L.tensor(m, requires_grad=True)
        q, r = L.linalg.qr(t)
        (q.abs().sum() + r.abs().sum()).backward()
        return q, r, t.grad
    _same(fn)


@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16"])
def test_mean_backward_dense_and_node(dt):
    """mean's gradient is expanded, then divided (dense strides; DivBackward1 under
    create_graph), as torch's ``grad.expand(shape) / n``."""
    def fn(L):
        d = getattr(L, dt)
        seen = []
        x = L.ones(3, 2, dtype=d, requires_grad=True)
        x.register_hook(lambda g: seen.append((g.stride(), g.float().tolist())))
        x.mean().backward()
        x.mean(1).backward(L.ones(3, dtype=d))
        x.mean(0).backward(L.tensor([1.0, 7.0], dtype=d))
        y = L.ones(3, 2, dtype=d, requires_grad=True)
        g, = L.autograd.grad(y.mean(1), y, L.ones(3, dtype=d, requires_grad=True),
                             create_graph=True)
        return seen, g.grad_fn.name(), g.stride()
    assert fn(ember) == fn(torch)


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_reduced_float_scalar_mul_div_layout(dt):
    def fn(L):
        e = L.ones(2, dtype=getattr(L, dt)).expand(3, 2)
        t = L.ones(2, 3, dtype=getattr(L, dt)).T
        return [r.stride() for r in (e / 3, e * 3, t / 3, t * 1.5)]
    assert fn(ember) == fn(torch)


@pytest.mark.parametrize("ord", [NAN, 0, 0.5, -1, 2, 3.3, INF])
@pytest.mark.parametrize("x", [-0.6918, [-0.6918], [[-0.6918], [2.0]], 1e200, [[1e-200]], 0.0])
def test_norm_of_one_element_is_abs(ord, x):
    """torch's norm kernel gives |x| for a reduction over one element, for any ord (nan too)."""
    def fn(L):
        t = L.tensor(x, dtype=L.float64)
        dim = 1 if t.dim() == 2 else None
        outs = [L.linalg.vector_norm(t, ord, dim=dim), L.linalg.vector_norm(t.float(), ord),
                t.norm(p=ord, dim=dim), L.norm(t, ord)]
        return outs
    _same(fn)


def test_norm_fuzz_case():
    nan = float("nan")
    for ns, name in (("Tensor", "norm"), ("linalg", "vector_norm"), ("torch", "norm")):
        assert check_case((ns, name, [("T", (), "float64", "u", "c", True), nan], {},
                           2500085)) is None
