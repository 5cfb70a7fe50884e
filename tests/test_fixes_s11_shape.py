"""Session 11 (wave 2) fixes in shape/linalg/vision ops, each checked against torch.

- torch.flip/permute/reshape/tile: the function form takes one sequence, the method form
  also takes the ints one by one (torch's TypeErrors word for word).
- torch.linalg: out= of the wrong dtype (torch's messages per function), matrix_rank's
  tol-with-atol/rtol TypeError, keyword ``n``/``ord`` messages, vecdot/pinv under autocast.
- F.grid_sample with NaN/inf grid coordinates (float32/float64, every mode).
"""
import numpy as np
import pytest

import ember
from ember.ops.shape import FUNCTION_FORMS

torch = pytest.importorskip("torch")


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:      # noqa: BLE001  (the class and message are compared)
        return type(e).__name__, str(e)
    return "ok", tuple(r.shape), r.tolist()


def _env(L, functions):
    x = L.arange(12.).reshape(3, 4)
    env = {"x": x, "t0": L.tensor(0), "t2": L.tensor(2), "tf": L.tensor(0.5), "np": np}
    env.update(functions)
    return env


_FORMS = [
    "flip(x, (0, 1))", "flip(x, 0, 1)", "flip(x, 0)", "flip(x, dims=0)", "flip(x, (0.5,))",
    "flip(x, [0], 1)", "flip(x, (0, 0.5))", "flip(x, dims=(0.5,))", "flip(x, dims=(0, 0.5))",
    "flip(x)", "flip(x, t0)", "flip(x, (t0,))", "flip(x, (0,), foo=1)", "flip(input=x, dims=(0,))",
    "x.flip(0, 1)", "x.flip(0)", "x.flip(0.5)", "x.flip((0.5,))", "x.flip(0, 0.5)",
    "x.flip(0.5, 0)", "x.flip(t0)", "x.flip(t0, 1)", "x.flip(tf)", "x.flip(True)", "x.flip(None)",
    "x.flip(0, dims=1)", "x.flip(dims=0)", "x.flip(dims=[0.5])", "x.flip(0, foo=1)",
    "x.flip(np.int64(0), 1)", "x.flip()",
    "permute(x, 1, 0)", "permute(x, (1, 0))", "permute(x, 0)", "permute(x, dims=(1, 0))",
    "permute(x, dims=(1, 0.5))", "permute(x, t0)", "x.permute(1, 0)", "x.permute(0.5, 1)",
    "x.permute(1, 0.5)", "x.permute((1, 0))", "x.permute(dims=(1, 0))",
    "reshape(x, 4, 3)", "reshape(x, (4, 3))", "reshape(x, 12)", "reshape(x, shape=12)",
    "reshape(x, shape=(12,))", "reshape(x, (12.0,))", "reshape(x, np.int64(12))",
    "reshape(x, dims=(1,))", "reshape(x, x.shape)", "x.reshape(4, 3)", "x.reshape(12.0)",
    "x.reshape(3, 4.0)", "x.reshape(3.0, 4)", "x.reshape(3, (4,))", "x.reshape(shape=(12,))",
    "x.reshape(12, shape=1)", "x.reshape(12, None)", "x.reshape(x.size())",
    "tile(x, 2, 1)", "tile(x, (2, 1))", "tile(x, 2)", "tile(x, dims=2)", "tile(x, t2)",
    "tile(x, (2.0,))", "tile(x)", "x.tile(2, 1)", "x.tile(2)", "x.tile(t2)", "x.tile(2.0)",
    "x.tile(1, 2.0)", "x.tile(dims=(2,))", "x.tile(())",
]


@pytest.mark.parametrize("call", _FORMS)
def test_function_and_method_forms(call):
    names = ("flip", "permute", "reshape", "tile")
    want = _outcome(lambda: eval(call, _env(torch, {n: getattr(torch, n) for n in names})))
    got = _outcome(lambda: eval(call, _env(ember, FUNCTION_FORMS)))
    assert got == want


@pytest.mark.xfail(ember.flip is not FUNCTION_FORMS["flip"], strict=True,
                   reason="ember/__init__.py does not bind ember.NAME to FUNCTION_FORMS yet")
def test_function_forms_are_ember_names():
    for name, fn in FUNCTION_FORMS.items():
        assert getattr(ember, name) is fn
    x = ember.arange(6.).reshape(2, 3)
    assert x.flip(0, 1).tolist() == x.flip((0, 1)).tolist()


_LINALG_OUT = [
    "L.linalg.inv(A, out=oL)", "L.linalg.inv(A, out=oF)", "L.linalg.inv(A.float(), out=oD)",
    "L.linalg.inv(A, out=oC)", "L.linalg.det(A, out=oF)", "L.linalg.solve(A, A, out=oL)",
    "L.linalg.cholesky(A, out=oF)", "L.linalg.vector_norm(A, out=oF)",
    "L.linalg.vector_norm(A, dtype=L.float64, out=oF)", "L.linalg.svdvals(A, out=oC)",
    "L.linalg.eigvalsh(A, out=oF)", "L.linalg.cross(A, A, out=oF)", "L.linalg.matmul(A, A, out=oF)",
    "L.linalg.vecdot(A, A, out=oL)", "L.linalg.vecdot(A, A, out=oF)", "L.linalg.norm(A, out=oF)",
    "L.linalg.norm(A, dim=1, out=oL)", "L.linalg.matrix_norm(A, out=oC)",
    "L.linalg.multi_dot([A, A], out=oF)", "L.linalg.solve_triangular(A, A, upper=True, out=oF)",
    "L.linalg.matrix_power(A, 2, out=oL)", "L.linalg.matrix_power(A, 2, out=oF)",
    "L.linalg.matrix_power(A, 0, out=oF)", "L.linalg.matrix_power(A, 1, out=oC)",
    "L.linalg.matrix_power(A, -1, out=oF)", "L.linalg.pinv(A, out=oL)", "L.linalg.pinv(A, out=oF)",
    "L.linalg.cond(A, out=oL)", "L.linalg.cond(A, out=oF)", "L.linalg.tensorsolve(A, A[0], out=oL)",
    "L.linalg.householder_product(A, A[0], out=oL)", "L.linalg.eigvals(A, out=oD)",
    "L.linalg.eigvals(A, out=oCf)", "L.linalg.eig(A, out=(oC, oD))",
    "L.linalg.eig(A, out=(oL, oL))",
    "L.linalg.inv_ex(A, out=(oD, oL))", "L.linalg.inv_ex(A, out=(oF, oI))",
    "L.linalg.cholesky_ex(A, out=(oD, oL))", "L.linalg.lu_factor(A, out=(oD, oL))",
    "L.linalg.lu(A, out=(oD, oD, oF))", "L.linalg.slogdet(A, out=(oD, oF))",
    "L.linalg.eigh(A, out=(oF, oD))", "L.linalg.qr(A, out=(oD, oF))",
    "L.linalg.solve_ex(A, A, out=(oF, oI))", "L.linalg.ldl_factor(A, out=(oD, oL))",
    "L.linalg.lu_solve(*L.linalg.lu_factor(A), A, out=oF)", "L.linalg.matrix_rank(A, out=oF)",
    "L.linalg.matrix_rank(A, out=oI)", "L.linalg.inv(A, out=oD)",
    "L.linalg.matrix_rank(A, tol=0.1, atol=0.1)", "L.linalg.matrix_rank(A, 0.1, True, atol=0.1)",
    "L.linalg.matrix_rank(A, None, atol=None, rtol=None)",
    "L.linalg.matrix_rank(A, tol=L.tensor(0.1), rtol=0.1, hermitian=True)",
    "L.linalg.matrix_rank(A, tol=0.1)", "L.linalg.matrix_rank(A, atol=0.1, rtol=0.1)",
    "L.linalg.matrix_power(A, n=1.5)", "L.linalg.matrix_power(A, n=None)",
    "L.linalg.matrix_power(A, 1.5)", "L.linalg.matrix_power(A, n=2)",
    "L.linalg.vector_norm(A, ord='x')", "L.linalg.vector_norm(A, 'x')",
    "L.linalg.vector_norm(A, ord=1)",
]


@pytest.mark.parametrize("call", _LINALG_OUT)
def test_linalg_out_dtype_and_argument_errors(call):
    def run(L):
        env = {"L": L, "A": L.eye(3, dtype=L.float64) + 0.1 * L.arange(9.).double().reshape(3, 3),
               "oL": L.empty(0, dtype=L.long), "oI": L.empty(0, dtype=L.int32),
               "oF": L.empty(0, dtype=L.float32), "oD": L.empty(0, dtype=L.float64),
               "oC": L.empty(0, dtype=L.complex128), "oCf": L.empty(0, dtype=L.complex64)}
        try:
            eval(call, env)
        except Exception as e:      # noqa: BLE001
            return type(e).__name__, str(e)
        return "ok"
    assert run(ember) == run(torch)


@pytest.mark.parametrize("shape,dim", [((3, 40), -1), ((40,), -1), ((5, 4, 30), 1), ((2, 3), 0)])
@pytest.mark.parametrize("dt", ["float32", "float64", "bfloat16"])
def test_vecdot_under_autocast(shape, dim, dt):
    rng = np.random.default_rng(0)
    xa, ya, ga = rng.standard_normal(shape), rng.standard_normal(shape), None
    res = []
    for L in (torch, ember):
        x = L.tensor(xa).to(getattr(L, dt)).requires_grad_()
        y = L.tensor(ya).to(getattr(L, dt)).requires_grad_()
        with L.autocast("cpu", dtype=L.bfloat16):
            r = L.linalg.vecdot(x, y, dim=dim)
        if ga is None:
            ga = rng.standard_normal(tuple(r.shape))
        r.backward(L.tensor(ga).to(r.dtype))
        res.append((str(r.dtype), r.detach().float().numpy(), str(x.grad.dtype),
                    x.grad.float().numpy(), y.grad.float().numpy()))
    (td, tv, tgd, tgx, tgy), (ed, ev, egd, egx, egy) = res
    assert (ed, egd) == (td, tgd)
    np.testing.assert_array_equal(ev, tv)
    np.testing.assert_allclose(egx, tgx, rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(egy, tgy, rtol=1e-2, atol=1e-2)


def test_pinv_under_autocast():
    rng = np.random.default_rng(1)
    aa, ha = rng.standard_normal((4, 3)), rng.standard_normal((3, 3))
    ha = ha @ ha.T
    res = []
    for L in (torch, ember):
        A, H = L.tensor(aa, dtype=L.float32), L.tensor(ha, dtype=L.float32)
        with L.autocast("cpu", dtype=L.bfloat16):
            outs = [L.linalg.pinv(A), L.linalg.pinv(A, atol=0.1), L.linalg.pinv(H, hermitian=True),
                    L.pinverse(A), L.pinverse(A.bfloat16())]
        res.append([(str(o.dtype), o.float().numpy()) for o in outs])
    for (ed, ev), (td, tv) in zip(*res[::-1]):
        assert ed == td
        np.testing.assert_allclose(ev, tv, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("align_corners", [True, False])
def test_grid_sample_nonfinite_grid(dt, mode, align_corners):
    # (bfloat16/float16: torch wraps the corner indices to int16, so a NaN coordinate or one
    # near 65536 samples pixel 0: see the report; padding_mode border/reflection: torch
    # crashes on NaN)
    inp = np.arange(24, dtype=np.float64).reshape(1, 2, 3, 4) / 7
    grid = np.array([[[[np.nan, -0.2], [0.3, np.inf]], [[-np.inf, 0.5], [0.25, -0.4]]]])
    res = []
    for L in (torch, ember):
        x = L.tensor(inp).to(getattr(L, dt)).requires_grad_()
        g = L.tensor(grid).to(getattr(L, dt)).requires_grad_()
        y = L.nn.functional.grid_sample(x, g, mode=mode, padding_mode="zeros",
                                        align_corners=align_corners)
        y.backward(L.ones_like(y))
        res.append([t.detach().numpy() for t in (y, x.grad, g.grad)])
    for e, t in zip(*res[::-1]):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("dt", ["complex64", "float32"])
def test_eig_single_precision_order(dt):
    # (torch runs cgeev/sgeev; NumPy's eig computes in double and may order them otherwise)
    rng = np.random.default_rng(3)
    for n in (3, 4, 5):
        a = rng.standard_normal((2, n, n)) + (1j * rng.standard_normal((2, n, n))
                                              if dt == "complex64" else 0)
        a = (a @ np.swapaxes(a.conj(), -1, -2) + n * np.eye(n)).astype(dt)
        tw = torch.linalg.eigvals(torch.tensor(a)).numpy()
        ew = ember.linalg.eigvals(ember.tensor(a)).numpy()
        assert ew.dtype == tw.dtype
        np.testing.assert_allclose(ew, tw, rtol=1e-4, atol=1e-4)
    case = np.array([[19.0, 1.0 + 2j, 0.5], [1.0 - 2j, 4.0, 1j], [0.5, -1j, 11.0]], np.complex64)
    if dt == "complex64":
        np.testing.assert_allclose(ember.linalg.eigvals(ember.tensor(case)).numpy(),
                                   torch.linalg.eigvals(torch.tensor(case)).numpy(), rtol=1e-5)


@pytest.mark.parametrize("padding_mode", ["border", "reflection"])
def test_grid_sample_bfloat16_padding_backward(padding_mode):
    # (the clipped coordinates' derivative kept bfloat16: the backward's scatter raised)
    rng = np.random.default_rng(1058)
    inp, grid = rng.uniform(-2, 2, (1, 2, 3, 4)), rng.uniform(-2, 2, (1, 2, 3, 2))
    res = []
    for L in (torch, ember):
        x = L.tensor(inp, dtype=L.float32).to(L.bfloat16).requires_grad_()
        g = L.tensor(grid, dtype=L.float32).to(L.bfloat16).requires_grad_()
        y = L.nn.functional.grid_sample(x, g, padding_mode=padding_mode, align_corners=False)
        y.backward(L.ones_like(y))
        res.append([(str(t.dtype), t.detach().float().numpy()) for t in (y, x.grad, g.grad)])
    for (ed, ev), (td, tv) in zip(*res[::-1]):
        assert ed == td
        np.testing.assert_allclose(ev, tv, rtol=0.05, atol=0.05)
