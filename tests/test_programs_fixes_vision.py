"""Regressions found by running vision programs (STN, antialiased resizing) under ember."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _t(a, **kw):
    return ember.tensor(np.asarray(a), **kw)


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(3, 2, 5, 7), (3, 1, 28, 28), (3, 1, 1, 6), (3, 1, 6, 1)])
def test_affine_grid_bitwise(size, align_corners):
    # torch: linspace and the (n-1)/n shrink in float32, then bmm (small ones summed in order)
    g = torch.Generator().manual_seed(0)
    th = torch.randn(3, 2, 3, generator=g)
    want = torch.nn.functional.affine_grid(th, size, align_corners=align_corners)
    got = ember.nn.functional.affine_grid(_t(th.numpy()), size, align_corners=align_corners)
    assert got.dtype == ember.float32
    if size[0] * size[2] * size[3] * 3 * 2 // size[0] < 400:
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    else:
        # (past torch's small-bmm kernel the products go to BLAS/oneDNN, whose rounding (fused
        # or not) depends on the CPU: bit-equal on one machine, 1 ulp off on another)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=3e-7, atol=3e-7)


def test_affine_grid_3d_and_float64():
    g = torch.Generator().manual_seed(1)
    th = torch.randn(2, 3, 4, generator=g, dtype=torch.float64)
    for ac in (False, True):
        want = torch.nn.functional.affine_grid(th, (2, 1, 3, 4, 5), align_corners=ac)
        got = ember.nn.functional.affine_grid(_t(th.numpy()), (2, 1, 3, 4, 5), align_corners=ac)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-15, atol=1e-15)


def test_affine_grid_node_and_grad_layout():
    g = torch.Generator().manual_seed(2)
    th = torch.randn(2, 2, 3, generator=g)
    go = torch.randn(2, 4, 5, 2, generator=g)
    tt = th.clone().requires_grad_(True)
    y = torch.nn.functional.affine_grid(tt, (2, 1, 4, 5), align_corners=False)
    (gt,) = torch.autograd.grad(y, tt, go)
    et = _t(th.numpy(), requires_grad=True)
    ye = ember.nn.functional.affine_grid(et, (2, 1, 4, 5), align_corners=False)
    assert type(ye.grad_fn).__name__ == type(y.grad_fn).__name__ == "AffineGridGeneratorBackward0"
    (ge,) = ember.autograd.grad(ye, et, _t(go.numpy()))
    assert ge.is_contiguous() == gt.is_contiguous() and ge.stride() == gt.stride()
    np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=1e-5, atol=1e-5)


def test_stn_identity_theta_grad():
    # identity theta: the grid lands on pixel centres, so the theta gradient depends on which
    # side of each centre the float32 grid falls (the STN tutorial's start)
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 3, 28, 28, generator=g)
    th = torch.tensor([[[1., 0, 0], [0, 1, 0]]] * 2, requires_grad=True)
    grid = torch.nn.functional.affine_grid(th, x.size(), align_corners=False)
    y = torch.nn.functional.grid_sample(x, grid, align_corners=False)
    (gt,) = torch.autograd.grad((y * y).sum(), th)
    te = _t(th.detach().numpy(), requires_grad=True)
    grid_e = ember.nn.functional.affine_grid(te, (2, 3, 28, 28), align_corners=False)
    ye = ember.nn.functional.grid_sample(_t(x.numpy()), grid_e, align_corners=False)
    (ge,) = ember.autograd.grad((ye * ye).sum(), te)
    np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=1e-4, atol=1e-2)


def test_affine_grid_strict_device():
    th = ember.tensor([[[0.9, 0.1, 0.05], [-0.2, 1.1, 0.1]]], device="strict",
                      requires_grad=True)
    y = ember.nn.functional.affine_grid(th, (1, 1, 3, 4), align_corners=False)
    y.sum().backward()
    want = torch.nn.functional.affine_grid(
        torch.tensor([[[0.9, 0.1, 0.05], [-0.2, 1.1, 0.1]]]), (1, 1, 3, 4), align_corners=False)
    np.testing.assert_array_equal(y.detach().cpu().numpy(), want.numpy())
    assert th.grad.shape == (1, 2, 3)


_AA_CASES = [((9, 13), dict(scale_factor=0.5)), ((9, 13), dict(size=(4, 5))),
             ((8, 8), dict(scale_factor=0.3)), ((5, 6), dict(size=(11, 7))),
             ((7, 10), dict(scale_factor=(1.7, 0.45))), ((20, 3), dict(size=(3, 3)))]


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_interpolate_antialias(mode, align_corners, dtype):
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == "float32" else dict(rtol=1e-12, atol=1e-12)
    g = torch.Generator().manual_seed(4)
    for (h, w), kw in _AA_CASES:
        x = torch.randn(2, 3, h, w, generator=g, dtype=getattr(torch, dtype), requires_grad=True)
        y = torch.nn.functional.interpolate(x, mode=mode, align_corners=align_corners,
                                            antialias=True, **kw)
        go = torch.randn(y.shape, generator=g, dtype=y.dtype)
        (gx,) = torch.autograd.grad(y, x, go)
        xe = _t(x.detach().numpy(), requires_grad=True)
        ye = ember.nn.functional.interpolate(xe, mode=mode, align_corners=align_corners,
                                             antialias=True, **kw)
        assert type(ye.grad_fn).__name__ == type(y.grad_fn).__name__
        assert ye.shape == tuple(y.shape) and str(ye.dtype) == str(y.dtype)
        np.testing.assert_allclose(ye.detach().numpy(), y.detach().numpy(), **tol)
        (gxe,) = ember.autograd.grad(ye, xe, _t(go.numpy()))
        np.testing.assert_allclose(gxe.numpy(), gx.numpy(), **tol)


def test_interpolate_antialias_upsample_module_and_errors():
    x = torch.linspace(0, 1, 2 * 3 * 6 * 6).view(2, 3, 6, 6)
    want = torch.nn.functional.interpolate(x, size=(3, 4), mode="bilinear", antialias=True)
    got = ember.nn.functional.interpolate(_t(x.numpy()), size=(3, 4), mode="bilinear",
                                          antialias=True)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="Anti-alias option is restricted"):
        ember.nn.functional.interpolate(_t(x.numpy()), scale_factor=0.5, mode="nearest",
                                        antialias=True)


def test_affine_grid_grid_sample_warnings_and_errors():
    import warnings

    def caught(lib):
        out = []
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.nn.functional.affine_grid(lib.zeros(1, 2, 3), (1, 1, 1, 4), align_corners=True)
            lib.nn.functional.affine_grid(lib.zeros(1, 2, 3), (1, 1, 2, 4))
            lib.nn.functional.grid_sample(lib.zeros(1, 1, 2, 2), lib.zeros(1, 2, 2, 2))
        out = [(str(x.message), x.filename) for x in w]
        for size, shape in [((1, 1, 0, 4), (1, 2, 3)), ((1, 1, 2, 4), (2, 3)),
                            ((1, 1, 2, 4), (1, 3, 4))]:
            try:
                lib.nn.functional.affine_grid(lib.zeros(*shape), size, align_corners=False)
            except Exception as e:  # noqa: BLE001 (the class and message are compared)
                out.append((type(e).__name__, str(e)))
        return out

    assert caught(ember) == caught(torch)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample_2d_bitwise(dtype, align_corners, mode):
    # torch's vectorised 2-d kernel: (coord + 1) * size / 2 - 0.5 and the corner sum as FMAs
    g = torch.Generator().manual_seed(5)
    x = torch.randn(2, 3, 9, 11, generator=g, dtype=getattr(torch, dtype))
    grid = torch.rand(2, 5, 7, 2, generator=g, dtype=x.dtype) * 2.2 - 1.1
    for pm in ("zeros", "border", "reflection"):
        want = torch.nn.functional.grid_sample(x, grid, mode=mode, padding_mode=pm,
                                               align_corners=align_corners)
        got = ember.nn.functional.grid_sample(_t(x.numpy()), _t(grid.numpy()), mode=mode,
                                              padding_mode=pm, align_corners=align_corners)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
