"""Regression tests (against torch) for session 9's lead fixes of differential-fuzzer classes:
``linalg.lstsq``'s size error for a vector ``other``, integer ``div(rounding_mode='trunc')`` at
INT64_MIN, the in-place result-type check of ``floor_divide_``/``fmod_``/``remainder_``/``pow_``
(made before the kernel's dtype check), and complex ``pow``/``reciprocal`` of a zero base (torch's
``exp(b * log(a))``: ``inf+nanj``), with their gradients."""
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

CASES = [
    '["linalg", "lstsq", [["T", [3, 0], "float64", "u", "c", true], ["T", [0], "float64", "u", '
    '"c", true], -2], {}, 200023]',
    '["opdb", "div_trunc", [1, "int64", true, "c"], {}, 200020]',
    '["Tensor", "floor_divide_", [["T", [2, 3], "float64", "x", "c", true], ["T", [2, 3], '
    '"complex64", "u", "c", false]], {}, 1064]',
    '["Tensor", "fmod_", [["T", [2, 3], "float64", "x", "c", true], ["T", [2, 3], "complex64", '
    '"u", "c", false]], {}, 1064]',
    '["Tensor", "lerp_", [["T", [3], "bool", "x", "s", false], ["T", [3], "bool", "u", "c", '
    'false], -1], {}, 1045]',
    '["Tensor", "pow_", [["T", [3], "complex64", "x", "c", true], -1], {}, 1152]',
    '["torch", "pow", [["T", [4], "float32", "u", "c", true], ["T", [4], "complex128", "x", "c", '
    'true]], {}, 1118]',
    '["torch", "pow", [0, ["T", [2, 3], "complex128", "u", "c", true]], {}, 1041]',
    '["torch", "float_power", [0, ["T", [2, 3], "complex128", "u", "c", true]], {}, 1041]',
]


@pytest.mark.parametrize("case", CASES)
def test_fuzzer_case(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert check_case(case_from_json(json.loads(case)), torch, timeout=60) is None


def test_int_trunc_division_extremes():
    a = np.array([-2**63, -2**63, 7, -7, 7, -7, -2**63, 2**63 - 1], dtype=np.int64)
    b = np.array([-4, 3, 2, 2, -2, -2, 1, -3], dtype=np.int64)
    want = torch.div(torch.tensor(a), torch.tensor(b), rounding_mode="trunc").numpy()
    got = ember.div(ember.tensor(a), ember.tensor(b), rounding_mode="trunc").numpy()
    np.testing.assert_array_equal(got, want)
    for dt in (np.uint8, np.int8, np.int16, np.int32):
        info = np.iinfo(dt)
        x = np.array([info.min, info.max, 5, info.min + 1], dtype=dt)
        y = np.array([3, 7, -2 if info.min < 0 else 2, 2], dtype=dt)
        want = torch.div(torch.tensor(x), torch.tensor(y), rounding_mode="trunc").numpy()
        got = ember.div(ember.tensor(x), ember.tensor(y), rounding_mode="trunc").numpy()
        np.testing.assert_array_equal(got, want)


ZS = [0j, complex(-0.0, 0), complex(0, -0.0), 1 + 2j, -3 + 0.5j]
WS = [-1, -2, -0.5, 0.5, 2, 2.5, 3, 0, -1 + 1j, -1j, 1j, 1 + 1j, 2 - 3j]


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_complex_pow_zero_base(dt):
    z = np.array([a for a in ZS for _ in WS], dt)
    w = np.array([b for _ in ZS for b in WS], dt)
    res = []
    for L in (torch, ember):
        a, b = L.tensor(z), L.tensor(w)
        scalar = [a.pow(float(v.real)).numpy() for v in w[:8]]
        res.append([a.pow(b).numpy(), a.reciprocal().numpy(), (0j ** b).numpy(),
                    L.pow(0, b).numpy()] + scalar)
    for x, y in zip(*res):
        np.testing.assert_allclose(y, x, rtol=2e-6, atol=0, equal_nan=True)


def test_complex_pow_exponent_grad_of_real_base():
    for L in (torch, ember):
        a = L.tensor([-1.5, 2.0, 0.0], requires_grad=True)
        b = L.tensor([0.5 + 1j, 2 - 1j, -1 + 0j], dtype=L.complex128, requires_grad=True)
        L.pow(a, b).sum().abs().backward()
        if L is torch:
            want = (a.grad.numpy(), b.grad.numpy())
        else:
            np.testing.assert_allclose(a.grad.numpy(), want[0], rtol=1e-6, equal_nan=True)
            np.testing.assert_allclose(b.grad.numpy(), want[1], rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("shapes", [((4,), (1,)), ((1,), (4,)), ((3,), (3,)), ((2, 4), (1,)),
                                    ((4,), (2, 4)), ((), ())])
@pytest.mark.parametrize("dim", [-1, 0, 5])
def test_vecdot_one_dim_is_vdot(shapes, dim):
    """Two 1-D tensors take torch's vdot path (no broadcasting, dim unchecked, VdotBackward0)."""
    res = []
    for L in (torch, ember):
        x = L.arange(1.0, 1.0 + np.prod(shapes[0])).reshape(shapes[0]).requires_grad_()
        y = L.ones(shapes[1])
        try:
            r = L.linalg.vecdot(x, y, dim=dim)
            res.append((r.shape, r.detach().numpy().tolist(), type(r.grad_fn).__name__))
        except Exception as e:  # noqa: BLE001
            res.append((type(e).__name__, str(e)))
    assert res[0] == res[1]


def test_fuzzer_accepts_torch_partial_write_before_error():
    """torch's scatter_reduce_ writes its identity into self before raising for complex amin;
    ember raises and changes nothing (the project's rule), and the fuzzer accepts that."""
    case = ('["Tensor", "scatter_reduce_", [["T", [2, 2, 2], "complex64", "u", "c", true], 0, '
            '["T", [3, 2, 2], "int64", ["idx", 2], "c", false], ["T", [3, 2, 2], "complex64", '
            '"u", "c", false], "amin"], {"include_self": false}, 300012]')
    c = case_from_json(json.loads(case))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fuzz.ops import run_case
        assert run_case(ember, c)[5] is True           # ember: raised, inputs unchanged
        assert run_case(torch, c)[5] is False          # torch: raised after writing
        assert check_case(c, torch, timeout=60) is None
