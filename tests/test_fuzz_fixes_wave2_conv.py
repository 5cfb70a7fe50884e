"""Regression tests (fuzzer wave 2) for convolutions on empty batches, ``torch.convolution``'s
missing complex kernels, fractional max pooling's checks, ``torch.affine_grid_generator`` and
``torch.native_channel_shuffle``: each compared against torch (values, dtypes, shapes,
gradients, or the exception class and message)."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

R = np.random.RandomState(0)


def _t(L, shape, dtype="float64", grad=False, seed=None):
    rs = R if seed is None else np.random.RandomState(seed)
    a = rs.randn(*shape)
    if dtype.startswith("complex"):
        a = a + 1j * rs.randn(*shape)
    a = a.astype(dtype) if dtype != "bool" else a > 0
    t = L.tensor(a)
    return t.requires_grad_() if grad else t


def _run(L, fn):
    try:
        out = fn(L)
    except Exception as e:  # noqa: BLE001  (compared between the libraries)
        return ("raise", type(e).__name__, str(e))
    return ("ok", out)


def _same(fn, grad=False):
    """``fn(lib)`` (built with the same seeds) agrees in ember and torch: the same exception
    (class and message) or the same outputs; with ``grad``, the same ``requires_grad``."""
    e, t = _run(ember, fn), _run(torch, fn)
    if t[0] == "raise" or e[0] == "raise":
        assert e == t, (e, t)
        return None
    a, b = e[1], t[1]
    if isinstance(a, tuple):
        a, b = a[0], b[0]
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
    assert a.requires_grad == b.requires_grad
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-8)
    return a, b


@pytest.mark.parametrize("op,xs,ws", [
    ("conv1d", (0, 1, 3), (2, 1, 3)), ("conv2d", (0, 3, 3, 4), (1, 3, 1, 1)),
    ("conv3d", (0, 2, 3, 3, 3), (2, 2, 2, 2, 1)), ("conv_transpose1d", (0, 3, 5), (3, 2, 1)),
    ("conv_transpose2d", (0, 3, 5, 6), (3, 2, 1, 1)),
    ("conv_transpose3d", (0, 3, 2, 3, 2), (3, 2, 1, 1, 1))])
@pytest.mark.parametrize("xdt,wdt", [("complex128", "complex128"), ("float64", "complex128")])
@pytest.mark.parametrize("which", [0, 1])
def test_empty_batch_complex_autograd(op, xs, ws, xdt, wdt, which):
    # F.conv* split a complex input into real convolutions (autograd works); a real input
    # with a complex weight reaches at::convolution, which refuses autograd
    def fn(L):
        x = _t(L, xs, xdt, which == 0, seed=1)
        w = _t(L, ws, wdt, which == 1, seed=2)
        return getattr(L.nn.functional, op)(x, w)
    _same(fn, grad=True)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("n,shape", [(0, (3,)), (1, (3,)), (1, (3, 3)), (0, (3, 3, 3)),
                                     (1, (3, 3, 3))])
@pytest.mark.parametrize("grad", [False, True])
def test_convolution_complex(transposed, n, shape, grad):
    nd = len(shape)

    def fn(L):
        x = _t(L, (n, 2) + shape, "complex128", grad, seed=3)
        w = _t(L, (2, 2) + (2,) * nd, "complex128", seed=4)
        return L.convolution(x, w, None, [1] * nd, [0] * nd, [1] * nd, transposed, [0] * nd, 1)
    _same(fn)


def test_convolution_complex_3d_direct_kernel():
    def fn(L):
        x = _t(L, (1, 2, 3, 3, 3), "complex64", seed=3)
        w = _t(L, (2, 2, 1, 1, 1), "complex64", seed=4)
        return L.convolution(x, w, None, [1] * 3, [0] * 3, [1] * 3, False, [0] * 3, 1)
    _same(fn)


@pytest.mark.parametrize("n", [0, 1])
@pytest.mark.parametrize("kw", [
    dict(stride=2, padding=1, output_padding=2), dict(stride=1, output_padding=3, dilation=2),
    dict(padding=-1), dict(output_padding=-1), dict(stride=0), dict(padding=5)])
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_conv_transpose_output_padding_empty_batch(n, kw, nd):
    def fn(L):
        x = _t(L, (n, 1) + (2, 3, 2)[:nd], seed=5)
        w = _t(L, (1, 1) + (2, 2, 1)[:nd], seed=6)
        return getattr(L.nn.functional, "conv_transpose%dd" % nd)(x, w, **kw)
    _same(fn)


@pytest.mark.parametrize("n", [0, 1])
@pytest.mark.parametrize("kw", [dict(padding=-1), dict(stride=0), dict(groups=2)])
def test_conv_geometry_checks(n, kw):
    def fn(L):
        w = _t(L, (1, 1, 1), seed=6)
        return L.nn.functional.conv1d(_t(L, (n, 2, 4), seed=5), w, **kw)
    _same(fn)


@pytest.mark.parametrize("n", [0, 1])
@pytest.mark.parametrize("dt", ["bool", "int32", "float32"])
@pytest.mark.parametrize("cin,cout", [(1, 4), (0, 4), (1, 0)])
def test_conv_tbc_empty(n, dt, cin, cout):
    def fn(L):
        return L.conv_tbc(_t(L, (5, n, cin), dt, seed=7), _t(L, (1, cin, cout), dt, seed=8),
                          _t(L, (cout,), dt, seed=9), 1)
    _same(fn)


@pytest.mark.parametrize("n", [0, 1])
def test_conv_tbc_dtype_mismatch(n):
    def fn(L):
        return L.conv_tbc(_t(L, (5, n, 1), "bool"), _t(L, (1, 1, 4), "float32"),
                          _t(L, (4,), "bool"), 1)
    _same(fn)


@pytest.mark.parametrize("n", [0, 2])
@pytest.mark.parametrize("dt,grad", [("int32", False), ("complex128", False),
                                     ("complex128", True), ("float64", True)])
@pytest.mark.parametrize("with_indices", [False, True])
def test_fractional_max_pool2d_dtypes(n, dt, grad, with_indices):
    def fn(L):
        x = _t(L, (n, 2, 5, 5), dt, grad, seed=10)
        s = L.tensor(np.random.RandomState(11).rand(n, 2, 2)).to(x.dtype)
        f = L.nn.functional
        op = f.fractional_max_pool2d_with_indices if with_indices else f.fractional_max_pool2d
        return op(x, 3, output_size=(2, 3), _random_samples=s)
    _same(fn)


@pytest.mark.parametrize("sshape,sdt", [((2, 2, 2), "float32"), ((1, 2, 2), "float64"),
                                        ((3, 2, 2), "float64"), ((2, 3, 2), "float64"),
                                        ((2, 2, 3), "float64"), ((2, 2), "float64")])
def test_fractional_max_pool2d_sample_checks(sshape, sdt):
    def fn(L):
        s = L.tensor(np.random.RandomState(12).rand(*sshape).astype(sdt))
        return L.nn.functional.fractional_max_pool2d(_t(L, (2, 2, 5, 5), seed=13), 2,
                                                     output_size=(2, 3), _random_samples=s)
    _same(fn)


@pytest.mark.parametrize("shape,out", [((2, 0, 5, 5), (2, 3)), ((2, 2, 5, 5), (0, 3))])
def test_fractional_max_pool2d_empty_dims(shape, out):
    def fn(L):
        s = L.tensor(np.full((2, shape[1], 2), 0.5))
        return L.nn.functional.fractional_max_pool2d(_t(L, shape, seed=14), 2, output_size=out,
                                                     _random_samples=s)
    _same(fn)


@pytest.mark.parametrize("th,size", [
    ((0, 2, 3), [0, 3, 4, 5]), ((0, 2, 3), [0, 3, 4]), ((2, 2, 3), [2, 3, 4, 5]),
    ((2, 2, 3), [2, 3, 1, 5]), ((2, 2, 3), [2, 3, 0, 5]), ((2, 2, 3), [3, 3, 4, 5]),
    ((2, 3, 4), [2, 3, 4, 5]), ((2, 3, 4), [2, 3, 4, 5, 2]), ((2, 2, 3), [2, 3, -4, 5]),
    ((2, 2, 3), [2, 3, 4, 5, 6, 7]), ((2, 2, 3, 1), [2, 3, 4, 5])])
@pytest.mark.parametrize("dt", ["float64", "bool", "int64", "complex128"])
@pytest.mark.parametrize("align", [False, True])
def test_affine_grid_generator(th, size, dt, align):
    def fn(L):
        x = _t(L, th, dt, seed=15)
        if dt == "int64":
            x = L.tensor(np.random.RandomState(15).randint(-3, 4, th))
        return L.affine_grid_generator(x, size, align)
    _same(fn)


@pytest.mark.parametrize("size", [[2, 3, 4, 5], [2, 1, 3, 2, 4], [0, 3, 4, 5]])
def test_affine_grid_generator_grad(size):
    nd = len(size) - 2
    out = {}
    for L in (ember, torch):
        th = _t(L, (size[0], nd, nd + 1), grad=True, seed=16)
        y = L.affine_grid_generator(th, size, False)
        assert type(y.grad_fn).__name__ == "AffineGridGeneratorBackward0"
        y.backward(L.tensor(np.random.RandomState(17).randn(*y.shape)))
        out[L] = th.grad.numpy()
    np.testing.assert_allclose(out[ember], out[torch], rtol=1e-10, atol=1e-12)


def test_affine_grid_generator_complex_grad():
    _same(lambda L: L.affine_grid_generator(_t(L, (2, 2, 3), "complex128", True), [2, 3, 4, 5],
                                            False))


def test_native_channel_shuffle_backward():
    for L in (ember, torch):
        x = _t(L, (0, 4, 3), grad=True)
        y = L.native_channel_shuffle(x, 4)
        with pytest.raises(RuntimeError,
                           match="derivative for aten::native_channel_shuffle is not implemented"):
            y.sum().backward()
    _same(lambda L: L.native_channel_shuffle(_t(L, (2, 4, 3), seed=18), 2))


@pytest.mark.parametrize("n", [0, 1])
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("d", [0, -1, "one_zero"])
@pytest.mark.parametrize("transposed", [False, True])
def test_conv_dilation_checks(n, nd, d, transposed):
    d = [1, 0, 1][:nd] if d == "one_zero" else d

    def fn(L):
        op = getattr(L.nn.functional, ("conv_transpose%dd" if transposed else "conv%dd") % nd)
        return op(_t(L, (n, 2) + (5,) * nd, seed=19), _t(L, (2, 2) + (2,) * nd, seed=20),
                  dilation=d)
    _same(fn)


def test_conv_transpose_empty_batch_negative_size_groups():
    _same(lambda L: L.nn.functional.conv_transpose2d(_t(L, (0, 4, 3, 3)), _t(L, (4, 3, 1, 1)),
                                                     groups=2, padding=3))
