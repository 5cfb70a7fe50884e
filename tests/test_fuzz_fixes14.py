"""Regression tests (against torch) for fuzzer mismatch classes of seeds 31-33 (session 14)."""
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import ember

sys.path.insert(0, str(Path(__file__).parent))
from fuzz.ops import case_from_json, check_case  # noqa: E402

INF, NAN = float("inf"), float("nan")

CASES = [
    '["F", "rrelu", [["T", [], "float16", "u", "c", true], -1, 0.0], {}, 3100102]',
    '["torch", "rrelu_", [["T", [], "float64", "u", "c", true]], {}, 3100105]',
    '["F", "rrelu_", [["T", [], "float64", "u", "c", true], -1, -0.5], {}, 3200107]',
    '["opdb", "triangular_solve", [1, "complex128", true, "t"], {}, 3200099]',
]


@pytest.mark.parametrize("case", CASES)
def test_fuzzer_case(case, torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert check_case(case_from_json(json.loads(case)), torch, timeout=60) is None


def _same(fn, torch):
    def run(L):
        try:
            out = fn(L)
        except Exception as e:  # noqa: BLE001
            return type(e).__name__
        return [(tuple(t.shape), np.asarray(t.detach().tolist())) for t in out]
    e, t = run(ember), run(torch)
    assert type(e) is type(t), (e, t)
    if isinstance(t, str):
        assert e == t
        return
    for (se, a), (st, b) in zip(e, t):
        assert se == st
        assert np.allclose(a, b, equal_nan=True), (a, b)


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("dt", ["float64", "float32"])
def test_rrelu_eval_keeps_0d(torch, dt, inplace):
    """Eval-mode rrelu of a 0-d tensor is 0-d (ember's C-order copy made it shape (1,))."""
    def fn(L):
        x = L.tensor(-2.0, dtype=getattr(L, dt), requires_grad=True)
        y = L.nn.functional.rrelu(x.clone(), 0.1, 0.3, inplace=inplace)
        y.backward()
        return y, x.grad
    _same(fn, torch)


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("pivot", [complex(INF, 0), complex(0, -INF), complex(-INF, 1),
                                   complex(INF, INF), complex(NAN, 0)])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("upper", [True, False])
def test_complex128_triangular_solve_infinite_pivot(torch, k, pivot, left, upper):
    """MKL's complex128 trsm gives NaN for a non-finite pivot with one right-hand side only;
    with several it divides (b / inf is 0)."""
    def fn(L):
        a = L.eye(3, dtype=L.complex128) + L.tril(L.ones(3, 3, dtype=L.complex128), -1) * 0.5
        a[1, 1] = pivot
        a = a.mT.contiguous() if upper else a
        b = L.ones((3, k) if left else (k, 3), dtype=L.complex128) * (1 + 0.5j)
        return (L.linalg.solve_triangular(a, b, upper=upper, left=left),)
    _same(fn, torch)


def test_complex128_triangular_solve_infinite_pivot_grad(torch):
    def fn(L):
        a = L.tensor([[NAN, 1.7, -0.9], [0, 4.0, 0.3], [0, 0, INF]], dtype=L.complex128,
                     requires_grad=True)
        b = L.tensor([[0.5, 0.4], [-1.8, 0.4], [0.6, 1.0]], dtype=L.complex128,
                     requires_grad=True)
        x = L.triangular_solve(b, a, upper=True, transpose=True)[0]
        x.backward(L.ones_like(x))
        return x, b.grad
    _same(fn, torch)
