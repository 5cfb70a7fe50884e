"""Regression tests (against torch) for fuzzer mismatch classes fixed in session 10, part w3."""
import math
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")


def _same(e, t):
    a = np.asarray(e.detach().float().tolist() if e.dtype == ember.bfloat16 else
                   e.detach().tolist())
    b = np.asarray(t.detach().float().tolist() if t.dtype == torch.bfloat16 else
                   t.detach().tolist())
    assert a.shape == b.shape
    assert np.array_equal(a, b, equal_nan=True), (a, b)


def _err(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_harness_compares_complex32_results_without_crashing():
    from tests.fuzz import ops as fz
    for case in (["torch", "inner", [["T", [], "complex64", "u", "c", True],
                                     ["T", [3], "float16", "u", "c", True]], {}, 1300080],
                 ["Tensor", "addcmul", [["T", [3], "float16", "u", "c", True],
                                        ["T", [], "complex64", "u", "c", True],
                                        ["T", [3], "float16", "u", "c", True]], {}, 1300080]):
        assert fz.check_case(fz.case_from_json(case), torch) is None


def test_cumprod_complex_starts_from_one():
    x = [[complex(INF, 0), 2 + 1j], [complex(-0.0, 0), complex(NAN, 0)]]
    for dim in (0, 1):
        for dt in ("complex64", "complex128"):
            _same(ember.cumprod(ember.tensor(x, dtype=getattr(ember, dt)), dim),
                  torch.cumprod(torch.tensor(x, dtype=getattr(torch, dt)), dim))
    _same(ember.tensor(complex(INF, 0)).cumprod(0), torch.tensor(complex(INF, 0)).cumprod(0))


def test_diff_order_zero_and_prepend_checks():
    for L in (torch, ember):
        x = L.arange(3.0, requires_grad=True)
        y = L.diff(x, 0, 2)
        assert type(y.grad_fn).__name__ == "CopyBackwards"
    _same(ember.diff(ember.arange(3.0), 0, 0, prepend=ember.ones(2)),
          torch.diff(torch.arange(3.0), 0, 0, prepend=torch.ones(2)))
    for args, kw in (((0, 0), {"prepend": "ones24"}), ((1, 0), {"prepend": "ones3"}),
                     ((1, -1), {"prepend": "scalar"}), ((1, -1), {"append": "list"}),
                     ((1, 5), {"prepend": "ones12"})):
        res = []
        for L in (torch, ember):
            x = L.ones(2, 3) if kw.get("prepend") != "scalar" else L.ones(3)
            v = {"ones24": L.ones(2, 4), "ones3": L.ones(3), "scalar": L.tensor(1.0),
                 "list": [1.0], "ones12": L.ones(1, 2)}[next(iter(kw.values()))]
            res.append(_err(lambda: L.diff(x, *args, **{next(iter(kw)): v})))
        assert res[0] == res[1]


def test_shape_method_argument_errors():
    for call in (lambda L, x: L.flip(x), lambda L, x: x.flip(), lambda L, x: x.flip(dims=0),
                 lambda L, x: x.flip([0], foo=1), lambda L, x: x.permute(dims=0),
                 lambda L, x: x.permute(0, 1, foo=2), lambda L, x: x.expand(),
                 lambda L, x: x.expand(foo=1),
                 lambda L, x: x.flip(foo=1), lambda L, x: x.permute(foo=1)):
        assert _err(lambda: call(torch, torch.ones(2, 2))) == \
            _err(lambda: call(ember, ember.ones(2, 2)))
    _same(ember.ones(1, 2).expand(size=(3, 2)), torch.ones(1, 2).expand(size=(3, 2)))


def test_ldexp_power_dtype_and_complexhalf():
    fl = ("float16", "bfloat16", "float32", "float64")
    for xs, bs in (((2,), ()), ((), ()), ((2,), (2,)), ((), (2,))):
        for xd in fl + ("complex64", "complex128", "int64"):
            for bd in fl:
                out = []
                for L in (torch, ember):
                    x = L.ones(xs, dtype=getattr(L, xd))
                    b = L.full(bs, 0.3, dtype=getattr(L, bd))
                    out.append(_err(lambda: L.ldexp(x, b)) or L.ldexp(x, b))
                if isinstance(out[0], tuple):
                    assert out[0] == out[1]
                else:
                    assert str(out[0].dtype) == str(out[1].dtype)
                    _same(out[1], out[0])
    e = _err(lambda: ember.tensor(1 + 1j).ldexp_(ember.ones(3, dtype=ember.float16)))
    assert e == _err(lambda: torch.tensor(1 + 1j).ldexp_(torch.ones(3, dtype=torch.float16)))
    assert _err(lambda: ember.ones(2).bfloat16().ldexp_(ember.tensor([1 + 1j, 2]))) == \
        _err(lambda: torch.ones(2).bfloat16().ldexp_(torch.tensor([1 + 1j, 2])))


def test_ldexp_inplace_grads_in_bfloat16():
    xs = [1.5, -2.25, 0.8125, 3.0]
    os_ = [0.3, -1.7, 0.55, 2.2]
    res = []
    for L in (torch, ember):
        x = L.tensor(xs).bfloat16().requires_grad_()
        o = L.tensor(os_, requires_grad=True)
        y = x.clone()
        y.ldexp_(o)
        y.backward(L.tensor([0.7, -1.3, 2.1, 0.45]).bfloat16())
        res.append((y, x.grad, o.grad))
    for e, t in zip(res[1], res[0]):
        assert str(e.dtype) == str(t.dtype)
        _same(e, t)


def test_interpolate_antialias_no_leak_across_channels():
    a = np.random.default_rng(0).standard_normal((1, 2, 5, 6)).astype(np.float32)
    a[0, 0, 0, 0], a[0, 1, -1, -1] = NAN, INF
    g = np.random.default_rng(1).standard_normal((1, 2, 3, 2)).astype(np.float32)
    for mode in ("bilinear", "bicubic"):
        res = []
        for L in (torch, ember):
            x = L.tensor(a, requires_grad=True)
            y = L.nn.functional.interpolate(x, size=(3, 2), mode=mode, antialias=True)
            y.backward(L.tensor(g))
            res.append((y, x.grad))
        for e, t in zip(res[1], res[0]):
            assert np.allclose(np.asarray(e.tolist()), np.asarray(t.tolist()), rtol=1e-5,
                               atol=1e-6, equal_nan=True)


def test_lowrank_of_bfloat16_and_integers():
    for fn in ("svd_lowrank", "pca_lowrank"):
        for dt in ("bfloat16", "int64"):
            assert _err(lambda: getattr(ember, fn)(ember.ones(2, 3).to(getattr(ember, dt)), 1)) \
                == _err(lambda: getattr(torch, fn)(torch.ones(2, 3).to(getattr(torch, dt)), 1))


def test_histc_bins_in_input_dtype():
    vals = [8.75, -2.421875, -1.2265625, -2.421875, 10.0625, 2.921875, -1.2265625, 2.921875,
            4.75]
    for dt in ("bfloat16", "float16", "float32", "float64"):
        _same(ember.histc(ember.tensor(vals).to(getattr(ember, dt))),
              torch.histc(torch.tensor(vals).to(getattr(torch, dt))))
    rng = np.random.default_rng(3)
    for dt in ("bfloat16", "float16", "float32"):
        v = rng.uniform(-3, 7, 200).astype(np.float32)
        for bins in (7, 100):
            _same(ember.histc(ember.tensor(v).to(getattr(ember, dt)), bins, -3, 7),
                  torch.histc(torch.tensor(v).to(getattr(torch, dt)), bins, -3, 7))


@pytest.mark.parametrize("dt", ["bfloat16", "float32", "float16"])
def test_unique_dim_with_nan_orders_as_torch(dt):
    rng = np.random.default_rng(7)
    for t in range(25):
        shape = tuple(int(s) for s in rng.integers(1, 4 if t < 20 else 30,
                                                   size=rng.integers(1, 4)))
        a = rng.choice([NAN, 1.0, -1.0, 0.0, 2.0], size=shape,
                       p=[0.15, 0.3, 0.2, 0.15, 0.2]).astype(np.float32)
        dim = int(rng.integers(-len(shape), len(shape)))
        r_t = torch.unique(torch.tensor(a).to(getattr(torch, dt)), dim=dim,
                           return_inverse=True, return_counts=True)
        r_e = ember.unique(ember.tensor(a).to(getattr(ember, dt)), dim=dim,
                           return_inverse=True, return_counts=True)
        for e, tt in zip(r_e, r_t):
            _same(e, tt)


def test_signbit_of_converted_bfloat16_nan_is_a_torch_quirk():
    from tests.fuzz import ops as fz
    case = ("torch", "signbit", [("T", (4, 2), "bfloat16", "x", "c", True)], {}, 1109)
    assert fz.check_case(case, torch) is None
    assert math.isnan(float(ember.tensor(NAN).bfloat16()))
