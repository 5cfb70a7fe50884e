"""Regression tests (against torch) for session 9's special-function fuzzer classes: a Python
int out of an integer tensor's range (xlogy, xlog1py, zeta, the orthogonal polynomials: the
number keeps its value when the op computes in float), logit's gradient at 0 and 1, angle of
real tensors (0 at -0.0), zeta/xlog1py's number overloads (node names, gradients, a bool
``self``), xlog1py's gradient formula and airy_ai's Cephes branches."""
import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).parent))
from fuzz.ops import case_from_json, check_case  # noqa: E402

_POLYS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
          "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
          "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
          "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
          "laguerre_polynomial_l", "legendre_polynomial_p"]
_U8 = '[["T", [3, 0], "uint8", "u", "c", false], -2], {}, 300038]'
CASES = (
    ['["%s", "%s", %s' % (ns, op, _U8) for ns, op in
     [("torch", "xlogy"), ("Tensor", "xlogy"), ("torch", "xlogy_"), ("Tensor", "xlogy_"),
      ("special", "xlogy"), ("special", "xlog1py"), ("special", "zeta")]
     + [("special", p) for p in _POLYS]]
    + ['["%s", "%s", [["T", [2, 3], "float64", "x", "t", true]], {}, 300048]' % (ns, op)
       for ns in ("torch", "Tensor") for op in ("angle", "logit", "logit_")]
    + ['["%s", "%s", [["T", [2, 2, 2], "float64", "x", "c", true]], {}, 400021]' % (ns, op)
       for ns in ("torch", "Tensor") for op in ("angle", "logit", "logit_")]
    + [
        '["special", "logit", [["T", [2, 3], "float64", "x", "t", true]], {}, 300048]',
        '["special", "logit", [["T", [2, 2, 2], "float64", "x", "c", true]], {}, 400021]',
        '["torch", "xlogy_", [["T", [1, 3], "uint8", "u", "t", false], -1], {}, 400028]',
        '["Tensor", "xlogy", [["T", [1, 3], "uint8", "u", "t", false], -1], {}, 400028]',
        '["opdb", "special_airy_ai", [0, "int64", true, "c"], {}, 300016]',
        '["special", "airy_ai", [["T", [3, 3], "float64", "spd", "t", true]], {}, 300059]',
        '["special", "xlog1py", [["T", [2, 3], "float32", "x", "s", true], ["T", [1], '
        '"float32", "x", "s", false]], {}, 300040]',
        '["special", "xlog1py", [["T", [2, 2, 2], "float64", "x", "c", true], 2], {}, 400021]',
        '["special", "zeta", [true, ["T", [2, 2, 2], "float32", "u", "c", true]], {}, 300020]',
        '["special", "zeta", [true, ["T", [4], "float32", "u", "c", true]], {}, 400023]',
        '["torch", "xlogy_", [["T", [2, 3], "float64", "x", "c", true], ["T", [2, 3], '
        '"complex64", "u", "c", false]], {}, 1064]',
    ])


@pytest.mark.parametrize("case", CASES)
def test_fuzzer_case(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert check_case(case_from_json(json.loads(case)), torch, timeout=60) is None


def _both(fn):
    """``fn(lib)`` for torch and ember: (kind, value) with kind "raise" for an exception."""
    out = []
    for lib in (torch, ember):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = fn(lib)
            out.append(("ok", r))
        except Exception as e:      # noqa: BLE001 (compared below)
            out.append(("raise", (type(e).__name__, str(e))))
    return out


def _same(fn):
    (tk, tv), (ek, ev) = _both(fn)
    assert tk == ek, (tv, ev)
    if tk == "raise":
        assert tv == ev
        return
    assert str(tv.dtype).split(".")[-1] == str(ev.dtype).split(".")[-1]
    np.testing.assert_allclose(ev.detach().numpy(), tv.detach().numpy(), rtol=1e-6, atol=1e-9)


def _u8(L, zero_d=False):
    return L.tensor(5 if zero_d else [0, 1, 5, 3], dtype=L.uint8)


@pytest.mark.parametrize("num", [-2, -200, 300, 2 ** 63, 2 ** 64 - 1, 2 ** 64, -2 ** 63 - 1])
@pytest.mark.parametrize("zero_d", [False, True])
@pytest.mark.parametrize("op", ["xlogy", "special.xlogy", "special.xlog1py", "special.zeta",
                                "special.chebyshev_polynomial_t", "special.legendre_polynomial_p",
                                "special.hermite_polynomial_h"])
def test_float_ops_keep_out_of_range_int(op, zero_d, num):
    def f(L):
        return eval("L." + op)     # noqa: S307 (a fixed attribute path)
    _same(lambda L: f(L)(_u8(L, zero_d), num))
    _same(lambda L: f(L)(num, _u8(L, zero_d)))
    _same(lambda L: f(L)(L.tensor([1, -3, 7], dtype=L.int8), num))


@pytest.mark.parametrize("num", [-2, -200, 2 ** 63, 2 ** 64 - 1, 2 ** 64, -2 ** 63 - 1, 1j])
def test_xlogy_inplace_result_type(num):
    _same(lambda L: _u8(L).xlogy_(num))
    _same(lambda L: L.zeros(2, 3).xlogy_(num))
    _same(lambda L: L.zeros(2, 3).xlogy_(L.ones(2, 3, dtype=L.complex64)))


@pytest.mark.parametrize("num", [-2, 300, 2 ** 63, 2 ** 64 - 1])
def test_integer_op_scalar_wraps(num):
    """``scalar_like(..., floating=False)``: an out-of-range int wraps as torch's int64 cast."""
    from ember.ops._util import scalar_like
    t = ember.tensor([1, 2, 7], dtype=ember.uint8)
    want = torch.floor_divide(num, torch.tensor([1, 2, 7], dtype=torch.uint8))
    got = ember.floor_divide(scalar_like(num, t, floating=False), t)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    with pytest.raises(OverflowError, match="int too big to convert"):
        scalar_like(2 ** 64, t, floating=False)
    with pytest.raises(OverflowError):      # (an op that did not say: refused, as before)
        scalar_like(-2, t)


_X = [0.0, -0.0, 1.0, 0.5, -1.0, 2.0, 0.1, 0.9, 0.3, 0.7, math.nan]
_G = [1.0, -1.0, -1.0, 2.0, 1.0, 1.0, 0.0, 3.0, -2.0, 1.0, 1.0]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("eps", [None, 0.0, 0.1, -1.0, 0.6, 1e-8, math.nan])
@pytest.mark.parametrize("fn", ["logit", "special_logit", "logit_"])
def test_logit_gradient(fn, eps, dtype):
    def run(L):
        x = L.tensor(_X + [0.0, 1.0], dtype=getattr(L, dtype), requires_grad=True)
        g = L.tensor(_G + [0.0, -3.0], dtype=getattr(L, dtype))
        if fn == "logit_":
            y = x.clone().logit_(eps)
        else:
            y = (L.special.logit if fn == "special_logit" else L.logit)(x, eps)
        y.backward(g)
        return x.grad
    (_, t), (_, e) = _both(run)
    np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16", "int64", "int8",
                                   "uint8", "bool", "complex64"])
def test_angle_real(dtype):
    vals = {"bool": [True, False], "uint8": [0, 3], "int64": [0, -1, 2], "int8": [0, -1, 2]}
    v = vals.get(dtype, [0.0, -0.0, -1.0, 2.0, math.nan, -math.inf, math.inf, -math.nan])

    def run(L):
        return L.angle(L.tensor(v, dtype=getattr(L, dtype))).float()
    (_, t), (_, e) = _both(run)
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    if dtype[0] in "fbc" and dtype != "bool":
        def grad(L):
            x = L.tensor(v, dtype=getattr(L, dtype), requires_grad=True)
            y = L.angle(x)
            y.backward(L.full_like(y, math.nan))
            return x.grad.to(L.complex128)
        (_, t), (_, e) = _both(grad)
        np.testing.assert_array_equal(e.numpy(), t.numpy())


_XS = [0.0, -0.0, 1.5, -2.0, math.nan, math.inf, 0.0]
_YS = [-1.0, -2.0, 0.0, 0.5, math.nan, math.inf, -1.0]
_GS = [1.0, 0.0, -1.0, 2.0, 1.0, math.nan, math.inf]


@pytest.mark.parametrize("num", [None, 0, -1, 2, 0.5, -2.5, math.nan, math.inf, True, False])
@pytest.mark.parametrize("side", [1, 2])
@pytest.mark.parametrize("op", ["xlogy", "special.xlogy", "special.xlog1py", "special.zeta"])
def test_binary_gradients(op, side, num):
    if num is None and side == 2:
        pytest.skip("one tensor-tensor run is enough")

    def run(L):
        f = eval("L." + op)     # noqa: S307 (a fixed attribute path)
        x = L.tensor(_XS, dtype=L.float64, requires_grad=True)
        y = L.tensor(_YS, dtype=L.float64, requires_grad=True)
        out = f(x, y) if num is None else (f(num, y) if side == 1 else f(x, num))
        name = type(out.grad_fn).__name__
        out.backward(L.tensor(_GS, dtype=L.float64))
        return name, out, x.grad, y.grad
    (tk, t), (ek, e) = _both(run)
    assert tk == ek, (t, e)
    if tk == "raise":
        assert t == e
        return
    assert t[0] == e[0]
    for a, b in zip(t[1:], e[1:]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("a", [(1, 2), ([1.0], 2), ("T", [2.0]), ("T", "a"), ("a", "T")])
@pytest.mark.parametrize("op", ["xlogy", "special.xlogy", "special.xlog1py", "special.zeta"])
def test_binary_argument_errors(op, a):
    def run(L):
        args = [L.tensor([1.0]) if v == "T" else v for v in a]
        return eval("L." + op)(*args)     # noqa: S307 (a fixed attribute path)
    (tk, t), (ek, e) = _both(run)
    assert tk == ek == "raise"
    assert t == e


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_airy_ai_values(dtype):
    x = np.concatenate([np.linspace(-30, 30, 2001), -np.logspace(0, 38, 60),
                        np.logspace(0, 3, 40), [0.0, -0.0, np.nan, np.inf, -np.inf, 103.892,
                                                103.9, 2.09, -2.09, 8.3203353]]).astype(dtype)
    want = torch.special.airy_ai(torch.tensor(x)).numpy()
    got = ember.special.airy_ai(ember.tensor(x)).numpy()
    assert got.dtype == want.dtype
    tol = dict(rtol=1e-6, atol=1e-9) if dtype == "float64" else dict(rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got, want, **tol)
    ints = [-3, 0, 2, 5]
    np.testing.assert_allclose(ember.special.airy_ai(ember.tensor(ints)).numpy(),
                               torch.special.airy_ai(torch.tensor(ints)).numpy(), rtol=1e-6)
