"""Regression tests (against torch) for session 9's tail fixes of differential-fuzzer classes:
``histc``'s range conversion to the input's type (its overflow error before the kernel's dtype
error), ``native_layer_norm``'s statistics and input gradient with inf/NaN (torch's vectorised
Welford moments and its backward order), ``native_group_norm``'s signed zeros and inf/NaN
weights, ``interpolate``'s equal-size copy and dim order with inf/NaN (and its empty-size error),
``uniform_`` on an empty complex tensor, and the elu family's gradient at a NaN input/result."""
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
    '["Tensor", "histc", [["T", [3, 0], "uint8", "u", "c", false], 2], {}, 700023]',
    '["torch", "histc", [["T", [3, 0], "uint8", "u", "c", false], 2], {}, 700023]',
    '["torch", "native_group_norm", [["T", [1, 4, 3], "float64", "u", "c", true], ["T", [4], '
    '"float64", "x", "c", false], null, 1, 4, 3, 1, 1e-05], {}, 700025]',
    '["torch", "native_layer_norm", [["T", [3, 4], "float64", "u", "c", true], [4], ["T", [4], '
    '"float64", "x", "c", false], null, 0.001], {}, 700025]',
    '["torch", "native_layer_norm", [["T", [3, 4], "float64", "x", "c", true], [4], ["T", [4], '
    '"float64", "x", "c", false], null, 0.001], {}, 700054]',
    '["torch", "native_layer_norm", [["T", [2, 0, 4], "float32", "u", "t", true], [4], '
    '["T", [4], "float32", "u", "c", true], null, 1e-05], {}, 1013]',
    '["torch", "group_norm", [["T", [3, 0], "float32", "u", "t", true], 1], {}, 1007]',
    '["F", "upsample_bilinear", [["T", [2, 1, 3, 3], "float64", "x", "t", true], 3], {}, 800039]',
    '["Tensor", "uniform_", [["T", [0], "complex64", "u", "c", true], 2], {}, 800049]',
    '["torch", "celu_", [["T", [3], "float64", "u", "c", true], Infinity], {}, 800052]',
]


@pytest.mark.parametrize("case", CASES)
def test_fuzzer_case(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert check_case(case_from_json(json.loads(case)), torch, timeout=60) is None


def _outcome(fn):
    try:
        return repr(fn().tolist())
    except Exception as e:  # noqa: BLE001  (compared between the libraries)
        return "%s: %s" % (type(e).__name__, e)


@pytest.mark.parametrize("dt", ["uint8", "int8", "int32", "float16", "float32", "complex64",
                                "bool"])
def test_histc_range_and_dtype_errors(dt):
    ranges = [(0, 0), (0, 255), (0, 256), (-1, 2), (2, 1), (0.5, 300.0), (float("nan"), 1),
              (0, 1e10), (0, 1e39), (-0.5, 1), (0, float("inf"))]
    for data in ([], [0, 0, 0], [5, 5], [0, 1, 2]):
        for lo, hi in ranges:
            got = [_outcome(lambda: L.histc(L.tensor(data, dtype=getattr(L, dt)), 2, lo, hi))
                   for L in (torch, ember)]
            assert got[0] == got[1], (data, lo, hi)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_layer_norm_stats_with_inf_nan(dt):
    rng = np.random.default_rng(0)
    for n in (1, 3, 4, 5, 8, 9, 17, 33, 70, 300):
        a = rng.uniform(-2, 2, (5, n))
        for r in range(5):
            k = rng.integers(0, 3)
            a[r, rng.integers(0, n, k)] = rng.choice([np.inf, -np.inf, np.nan], k)
        a = a.astype(dt)
        t = torch.native_layer_norm(torch.tensor(a), [n], None, None, 1e-3)
        e = ember.native_layer_norm(ember.tensor(a), [n], None, None, 1e-3)
        for x, y in zip(t[1:], e[1:]):
            np.testing.assert_allclose(y.numpy(), x.numpy(), rtol=1e-4, equal_nan=True)


def test_layer_norm_grad_with_inf_weight_and_input():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 5))
    a[1, 2] = np.inf
    w = rng.standard_normal(5)
    w[3] = -np.inf
    g = rng.standard_normal((4, 5))
    for weight_rows in (w, np.abs(w) + 1):
        res = []
        for L in (torch, ember):
            x = L.tensor(a, requires_grad=True)
            y = L.nn.functional.layer_norm(x, (5,), L.tensor(weight_rows))
            res.append(L.autograd.grad(y, x, L.tensor(g))[0].numpy())
        np.testing.assert_allclose(res[1], res[0], rtol=1e-6, atol=1e-8, equal_nan=True)


def test_group_norm_signed_zero_and_inf_weight():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 4, 3))
    w = np.array([-0.0, -1.5, 0.9, -np.inf])
    b = np.array([0.0, -0.0, 1.0, 2.0])
    for bias in (None, b):
        out = []
        for L in (torch, ember):
            o = L.native_group_norm(L.tensor(x), L.tensor(w),
                                    None if bias is None else L.tensor(bias), 2, 4, 3, 2, 1e-5)
            out.append(o[0].numpy())
        np.testing.assert_allclose(out[1], out[0], rtol=1e-6, equal_nan=True)
        assert (np.signbit(out[1]) == np.signbit(out[0]))[~np.isnan(out[0])].all()


@pytest.mark.parametrize("mode,nd", [("linear", 1), ("bilinear", 2), ("bicubic", 2)])
def test_interpolate_with_inf_nan(mode, nd):
    rng = np.random.default_rng(3)
    for trial in range(40):
        shape = (1, 2) + tuple(int(v) for v in rng.integers(1, 5, nd))
        a = rng.uniform(-2, 2, shape)
        m = rng.random(shape) < 0.2
        a[m] = rng.choice([np.nan, np.inf, -np.inf], m.sum())
        ac = bool(rng.integers(2))
        size = tuple(int(v) for v in rng.integers(1, 7, nd))
        if trial % 3 == 0:
            size = shape[2:]
        res = []
        for L in (torch, ember):
            x = L.tensor(a, requires_grad=True)
            y = L.nn.functional.interpolate(x, size=size, mode=mode, align_corners=ac)
            res.append((y.detach().numpy(), L.autograd.grad(y.sum(), x)[0].numpy()))
        for u, v in zip(*res):
            np.testing.assert_allclose(v, u, rtol=1e-6, atol=1e-9, equal_nan=True)


def test_interpolate_empty_size_error():
    for shape, size, mode in [((1, 1, 1, 3), (0, 2), "bilinear"), ((1, 1, 0, 3), (2, 2), "nearest"),
                              ((1, 1, 3), (0,), "linear"), ((1, 1, 2, 2, 1), (1, 1, 0),
                                                            "trilinear")]:
        msgs = [_outcome(lambda: L.nn.functional.interpolate(L.zeros(shape), size=size,
                                                             mode=mode)) for L in (torch, ember)]
        assert msgs[0] == msgs[1]


def test_uniform_bounds_on_empty_complex():
    for shape, dt in [((0,), "complex64"), ((0, 3), "complex128"), ((0,), "float32"),
                      ((2,), "complex64"), ((0,), "int64")]:
        msgs = [_outcome(lambda: L.empty(shape, dtype=getattr(L, dt)).uniform_(2))
                for L in (torch, ember)]
        assert msgs[0] == msgs[1]


@pytest.mark.parametrize("name", ["elu", "elu_", "celu_", "selu_", "selu", "celu"])
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_elu_family_grad_at_nan(name, dt):
    for n in (3, 8, 16, 17, 33, 40):
        rng = np.random.default_rng(n)
        a = rng.uniform(-2, 2, n)
        a[rng.random(n) < 0.3] = np.nan
        res = []
        for L in (torch, ember):
            x = L.tensor(a.astype(dt), requires_grad=True)
            if name.endswith("_"):
                y = x.clone()
                getattr(L.nn.functional, name)(y)
            else:
                y = getattr(L.nn.functional, name)(x)
            res.append(L.autograd.grad(y.sum(), x)[0].numpy())
        np.testing.assert_allclose(res[1], res[0], rtol=1e-5, equal_nan=True)


def test_celu_inplace_grad_with_inf_alpha():
    a = np.array([1.7, -0.9, 0.3, -2.0])
    res = []
    for L in (torch, ember):
        x = L.tensor(a, requires_grad=True)
        y = x.clone()
        L.celu_(y, float("inf"))
        res.append(L.autograd.grad(y.sum(), x)[0].numpy())
    np.testing.assert_allclose(res[1], res[0], equal_nan=True)
