"""grid_sample's bicubic (4-D) and 3-D (5-D input) modes, and grid_sampler_2d/3d, against torch."""
import itertools
import warnings

import numpy as np
import pytest

import ember
from ember.ops import vision as V

torch = pytest.importorskip("torch")

MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
PADS = {"zeros": 0, "border": 1, "reflection": 2}


def _pair(shape, gshape, dtype, seed, scale=1.6, special=False):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    g = ((rng.random(gshape) * 2 - 1) * scale).astype(dtype)
    if special:
        g.reshape(-1)[:6] = [np.nan, np.inf, -np.inf, 1e30, 1.0, -1.0]
    return x, g


def _run(lib, fn, x, g, go, create_graph=False):
    xt = lib.tensor(x, requires_grad=True)
    gt = lib.tensor(g, requires_grad=True)
    out = fn(lib, xt, gt)
    gx, gg = lib.autograd.grad(out, [xt, gt], lib.tensor(go), create_graph=create_graph)
    return out, gx, gg, xt, gt


def _np(t):
    return t.detach().numpy()


def _compare(fn, x, g, tol):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out_t = fn(torch, torch.tensor(x), torch.tensor(g))
        go = np.random.default_rng(1).standard_normal(tuple(out_t.shape)).astype(x.dtype)
        ref = _run(torch, fn, x, g, go)
        got = _run(ember, fn, x, g, go)
    assert type(got[0].grad_fn).__name__ == type(ref[0].grad_fn).__name__
    for a, b in zip(ref[:3], got[:3]):
        assert tuple(a.shape) == tuple(b.shape) and a.dtype == getattr(torch, str(b.dtype)[6:])
        np.testing.assert_allclose(_np(b), _np(a), rtol=tol, atol=tol, equal_nan=True)


CASES_4D = [((2, 3, 4, 5), (2, 3, 2, 2)), ((1, 2, 1, 3), (1, 4, 3, 2))]
CASES_5D = [((2, 2, 3, 4, 2), (2, 2, 3, 2, 3)), ((1, 1, 1, 2, 3), (1, 3, 2, 2, 3))]


@pytest.mark.parametrize("pad,align", itertools.product(PADS, [False, True]))
@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-10), (np.float32, 2e-5)])
def test_bicubic_values_and_grads(pad, align, dtype, tol):
    for i, (shape, gshape) in enumerate(CASES_4D):
        x, g = _pair(shape, gshape, dtype, seed=i)
        _compare(lambda L, a, b: L.nn.functional.grid_sample(
            a, b, mode="bicubic", padding_mode=pad, align_corners=align), x, g, tol)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("pad,align", itertools.product(PADS, [False, True]))
@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-10), (np.float32, 2e-5)])
def test_3d_values_and_grads(mode, pad, align, dtype, tol):
    for i, (shape, gshape) in enumerate(CASES_5D):
        x, g = _pair(shape, gshape, dtype, seed=i)
        _compare(lambda L, a, b: L.nn.functional.grid_sample(
            a, b, mode=mode, padding_mode=pad, align_corners=align), x, g, tol)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("pad,align", itertools.product(PADS, [False, True]))
def test_3d_nonfinite_and_huge_coordinates(mode, pad, align):
    x, g = _pair((1, 2, 2, 2, 3), (1, 2, 2, 2, 3), np.float64, seed=3, special=True)
    _compare(lambda L, a, b: L.grid_sampler(a, b, MODES[mode], PADS[pad], align), x, g, 1e-10)


@pytest.mark.parametrize("align", [False, True])
def test_bicubic_nonfinite_zeros_padding(align):
    # (torch reads out of bounds for NaN positions with border/reflection: zeros only)
    x, g = _pair((1, 2, 3, 4), (1, 3, 2, 2), np.float64, seed=4, special=True)
    _compare(lambda L, a, b: L.grid_sampler(a, b, 2, 0, align), x, g, 1e-10)


@pytest.mark.parametrize("mode,shape,gshape", [
    ("bicubic", (1, 1, 3, 4), (1, 2, 2, 2)), ("bilinear", (1, 1, 2, 3, 4), (1, 2, 2, 1, 3))])
def test_double_backward_matches_torch(mode, shape, gshape):
    x, g = _pair(shape, gshape, np.float64, seed=5, scale=0.9)
    go = np.random.default_rng(2).standard_normal(shape[:2] + gshape[1:-1])

    def fn(L, a, b):
        return L.nn.functional.grid_sample(a, b, mode=mode, padding_mode="border",
                                           align_corners=False)
    res = []
    for lib in (torch, ember):
        _, gx, gg, xt, gt = _run(lib, fn, x, g, go, create_graph=True)
        w = lib.tensor(np.linspace(-1, 1, gg.numel()).reshape(tuple(gg.shape)))
        res.append(lib.autograd.grad((gg * w).sum() + (gx * gx).sum(), [xt, gt]))
    for a, b in zip(*res):
        np.testing.assert_allclose(_np(b), _np(a), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("mode,shape,gshape", [
    ("bicubic", (1, 2, 3, 4), (1, 2, 2, 2)), ("bilinear", (1, 2, 2, 3, 4), (1, 2, 2, 1, 3)),
    ("nearest", (1, 2, 2, 3, 3), (1, 2, 1, 2, 3))])
def test_gradcheck(mode, shape, gshape):
    x, g = _pair(shape, gshape, np.float64, seed=6, scale=0.9)
    xt = ember.tensor(x, requires_grad=True)
    gt = ember.tensor(g, requires_grad=mode != "nearest")

    def fn(a, b):
        return ember.nn.functional.grid_sample(a, b, mode=mode, padding_mode="reflection",
                                               align_corners=True)
    assert ember.autograd.gradcheck(fn, (xt, gt))
    assert ember.autograd.gradgradcheck(fn, (xt, gt))


def test_zero_size():
    for shape, gshape, mode in [((0, 1, 2, 2), (0, 1, 1, 2), "bicubic"),
                                ((2, 0, 2, 2, 2), (2, 3, 1, 1, 3), "bilinear"),
                                ((2, 1, 2, 2, 2), (2, 0, 1, 1, 3), "nearest")]:
        res = []
        for lib in (torch, ember):
            x = lib.ones(shape, requires_grad=True)
            g = lib.zeros(gshape, requires_grad=True)
            out = lib.nn.functional.grid_sample(x, g, mode=mode, align_corners=False)
            out.sum().backward()
            res.append((tuple(out.shape), tuple(x.grad.shape), tuple(g.grad.shape)))
        assert res[0] == res[1]


SHAPES_BAD = [((1, 1, 2, 2), (1, 1, 1, 1, 2)), ((1, 1, 2, 2, 2), (1, 1, 1, 3)),
              ((1, 1, 2, 2), (2, 1, 1, 2)), ((1, 1, 2, 2, 2), (1, 1, 1, 1, 2)),
              ((1, 1, 0, 2), (1, 1, 1, 2)), ((1, 1, 2, 2, 2, 2), (1, 1, 1, 1, 1, 4)),
              ((1, 1, 2), (1, 1, 1)), ((1, 1, 2, 2), ()), ((), (1, 1, 1, 2)),
              ((1, 1, 2, 2), (1,)), ((1,), (1, 1, 2, 2)), ((1, 1), (1, 0)),
              ((1, 1, 2, 2), (1, 1, 1, 2)), ((1, 1, 2, 2, 2), (1, 1, 1, 1, 3))]


@pytest.mark.parametrize("name", ["grid_sampler", "grid_sampler_2d", "grid_sampler_3d"])
@pytest.mark.parametrize("mode", [0, 2])
def test_errors_match_torch(name, mode):
    for a, b in SHAPES_BAD:
        res = []
        for lib, fn in ((torch, getattr(torch, name)), (ember, getattr(V, name))):
            try:
                res.append(tuple(fn(lib.ones(a), lib.ones(b), mode, 0, False).shape))
            except Exception as e:     # noqa: BLE001 (class and message compared)
                res.append((type(e).__name__, str(e)))
        assert res[0] == res[1], (a, b)


def test_grid_sampler_nd_values():
    x, g = _pair((1, 2, 3, 4), (1, 2, 2, 2), np.float64, seed=7)
    x3, g3 = _pair((1, 2, 2, 3, 4), (1, 2, 1, 2, 3), np.float64, seed=8)
    for fn_name, a, b, mode in [("grid_sampler_2d", x, g, 2), ("grid_sampler_3d", x3, g3, 0)]:
        ref = getattr(torch, fn_name)(torch.tensor(a), torch.tensor(b), mode, 2, True)
        got = getattr(V, fn_name)(ember.tensor(a), ember.tensor(b), mode, 2, True)
        np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_2d_forward_nonfinite_all_paddings(mode, dtype):
    x, g = _pair((1, 2, 3, 4), (1, 3, 4, 2), dtype, seed=9, scale=3.0)
    g.reshape(-1)[:8] = [np.nan, np.inf, -np.inf, 1e30, -1e30, 5e9, 1e17, -3e7]
    for pad, align in itertools.product(range(3), [False, True]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = torch.grid_sampler(torch.tensor(x), torch.tensor(g), mode, pad, align)
            got = V.grid_sampler(ember.tensor(x), ember.tensor(g), mode, pad, align)
        np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-5, atol=1e-5,
                                   equal_nan=True)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("pad,align", itertools.product(["border", "reflection"], [False, True]))
def test_2d_huge_coordinates_grads(mode, pad, align):
    x, g = _pair((1, 2, 2, 3), (1, 2, 3, 2), np.float64, seed=10)
    g.reshape(-1)[:6] = [1e30, -1e30, 5e9, 1e17, -3e7, 123.4]
    _compare(lambda L, a, b: L.nn.functional.grid_sample(
        a, b, mode=mode, padding_mode=pad, align_corners=align), x, g, 1e-10)


@pytest.mark.parametrize("mode,shape,gshape", [
    ("bilinear", (1, 2, 3, 4), (1, 3, 3, 2)), ("bicubic", (1, 2, 3, 4), (1, 3, 3, 2)),
    ("bilinear", (1, 2, 2, 3, 4), (1, 2, 3, 1, 3))])
@pytest.mark.parametrize("pad,align", itertools.product(PADS, [False, True]))
def test_far_coordinates_grads(mode, shape, gshape, pad, align):
    x, g = _pair(shape, gshape, np.float64, seed=11, scale=3e7)
    _compare(lambda L, a, b: L.nn.functional.grid_sample(
        a, b, mode=mode, padding_mode=pad, align_corners=align), x, g, 1e-9)
