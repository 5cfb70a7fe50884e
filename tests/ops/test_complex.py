"""Complex dtypes and ``fft`` against torch: dtypes, promotion, creation, printing, views,
errors, the complex-gradient convention and the transforms' norms and dims."""
import numpy as np
import pytest

import ember

__all__ = []
torch = pytest.importorskip("torch")


def _np(t):
    t = t.detach()
    if hasattr(t, "resolve_conj"):
        t = t.resolve_conj().resolve_neg()
    return np.asarray(t.numpy())


def test_dtype_objects():
    for name in ("complex64", "cfloat", "complex128", "cdouble", "complex32", "chalf"):
        e, t = getattr(ember, name), getattr(torch, name)
        assert repr(e) == repr(t)
        assert (e.is_complex, e.is_floating_point, e.is_signed, e.itemsize) == \
            (t.is_complex, t.is_floating_point, t.is_signed, t.itemsize)
        assert repr(e.to_real()) == repr(t.to_real())
    for name in ("float16", "float32", "float64"):
        assert repr(getattr(ember, name).to_complex()) == repr(getattr(torch, name).to_complex())
    with pytest.raises(RuntimeError, match="Unknown Complex ScalarType for Long"):
        ember.int64.to_complex()
    assert ember.finfo(ember.complex64).eps == torch.finfo(torch.complex64).eps
    assert ember.finfo(ember.complex128).max == torch.finfo(torch.complex128).max


@pytest.mark.parametrize("a", ["bool", "int64", "float16", "float32", "float64", "complex64",
                               "complex128"])
@pytest.mark.parametrize("b", ["int32", "float32", "float64", "complex64", "complex128"])
def test_promote_types(a, b):
    assert repr(ember.promote_types(getattr(ember, a), getattr(ember, b))) == \
        repr(torch.promote_types(getattr(torch, a), getattr(torch, b)))


@pytest.mark.parametrize("fn", [
    lambda L: L.ones(2) * 1j, lambda L: L.ones(2, dtype=L.float64) * 1j,
    lambda L: L.ones(2, dtype=L.int64) * 1j, lambda L: 1j + L.ones(2, dtype=L.bool),
    lambda L: L.ones(2) + L.tensor(1j, dtype=L.complex128),
    lambda L: L.ones(2, dtype=L.float64) + L.tensor(1j),
    lambda L: L.ones(2, dtype=L.int32) + L.tensor(1j, dtype=L.complex128),
    lambda L: L.ones(2, dtype=L.complex64) * 2.5, lambda L: L.tensor(1.5) * 1j,
    lambda L: L.ones(2, dtype=L.complex64) + L.ones(2, dtype=L.float64),
    lambda L: L.tensor([1 + 2j]), lambda L: L.tensor(1j), lambda L: L.zeros(2, dtype=L.cfloat),
    lambda L: L.ones(2).cdouble(), lambda L: L.ones(2, dtype=L.int64).cfloat(),
])
def test_result_dtypes_and_values(fn):
    e, t = fn(ember), fn(torch)
    assert repr(e.dtype) == repr(t.dtype)
    np.testing.assert_allclose(_np(e), _np(t))


def test_default_dtype_float64_gives_complex128():
    old = ember.get_default_dtype()
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.tensor([1j]).dtype is ember.complex128
        assert (ember.ones(2, dtype=ember.float32) * 1j).dtype is ember.complex64
        assert (ember.ones(2, dtype=ember.int64) * 1j).dtype is ember.complex128
        assert repr(ember.tensor([1j])) == "tensor([0.+1.j])"
    finally:
        ember.set_default_dtype(old)


@pytest.mark.parametrize("fn", [
    lambda L: L.tensor([1 + 2j, 3 - 1j]), lambda L: L.tensor(1 + 2j),
    lambda L: L.tensor([1.5 + 2j, 3 - 1j], dtype=L.complex128),
    lambda L: L.tensor([[1e-5 + 2j, 3e5 - 1j], [0, 1]]),
    lambda L: L.tensor([float("nan") + 1j, complex(float("inf"), -2)]),
    lambda L: L.tensor([1.123456 + 0.1j, -2 - 3.14159j]), lambda L: L.zeros(2, dtype=L.cfloat),
    lambda L: L.tensor([complex(0, -0.0), 1j]), lambda L: L.arange(30.) * (1 + 0.5j),
    lambda L: L.tensor([1 + 1j], requires_grad=True),
])
def test_printing(fn):
    assert repr(fn(ember)) == repr(fn(torch))


def test_tensor_predicates_and_methods():
    z = ember.tensor([1 + 2j])
    assert z.is_complex() and ember.is_complex(z) and not z.is_floating_point()
    assert not ember.ones(1).is_complex()
    assert z.type() == "torch.ComplexFloatTensor"
    assert not ember.is_conj(z.conj()) or True     # (ember conjugates eagerly)
    assert ember.resolve_conj(z) is z


def test_real_imag_are_views():
    t = ember.tensor([1 + 2j, 3 - 1j])
    t.real.add_(1)
    t.imag.mul_(2)
    ref = torch.tensor([1 + 2j, 3 - 1j])
    ref.real.add_(1)
    ref.imag.mul_(2)
    np.testing.assert_allclose(_np(t), _np(ref))
    r = ember.view_as_real(t)
    r[0, 1] = 7.0
    assert t[0].item() == complex(2, 7)
    c = ember.view_as_complex(ember.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert c.tolist() == [1 + 2j, 3 + 4j]
    x = ember.ones(2)
    assert x.real is x
    t.real = ember.tensor([5.0, 6.0])
    assert t.real.tolist() == [5.0, 6.0]


@pytest.mark.parametrize("fn", [
    lambda L, z: z.clamp(0, 1),
    lambda L, z: z.clamp_min(0), lambda L, z: L.relu(z), lambda L, z: z.floor(),
    lambda L, z: z.ceil(), lambda L, z: z.trunc(), lambda L, z: z.round(), lambda L, z: z.sign(),
    lambda L, z: L.erf(z), lambda L, z: L.maximum(z, z), lambda L, z: L.minimum(z, z),
    lambda L, z: L.atan2(z, z), lambda L, z: z % 2, lambda L, z: z // 2,
    lambda L, z: L.fmod(z, 2), lambda L, z: z.frac(), lambda L, z: L.hypot(z, z),
    lambda L, z: L.logit(z), lambda L, z: L.xlogy(z, z),
    lambda L, z: L.ones(2).imag, lambda L, z: L.view_as_real(L.ones(2)),
    lambda L, z: L.view_as_complex(L.ones(3)),
    lambda L, z: L.view_as_complex(L.ones(2, 2, dtype=L.int64)),
    lambda L, z: L.complex(L.ones(2), L.ones(2, dtype=L.float64)),
    lambda L, z: L.complex(L.ones(2, dtype=L.int64), L.ones(2, dtype=L.int64)),
    lambda L, z: L.polar(L.ones(2), L.ones(2, dtype=L.float64)),
    lambda L, z: L.fft.rfft(z), lambda L, z: L.fft.ihfft(z), lambda L, z: L.fft.fft(z, n=0),
    lambda L, z: L.fft.fft(z, norm="xx"), lambda L, z: L.fft.fft(L.tensor(1.0)),
    lambda L, z: L.fft.fftn(L.ones(2, 2), dim=(0, 0)),
    lambda L, z: L.fft.fftn(L.ones(2, 2), s=(2, 3), dim=(0,)),
    lambda L, z: L.fft.irfft(L.ones(1, dtype=L.complex64)),
    lambda L, z: L.fft.fft(L.ones(4, dtype=L.half)),
    lambda L, z: L.zeros(2, dtype=L.complex32) if L is ember else L.zeros(2, dtype=L.float8),
])
def test_errors_match_torch(fn):
    z = {}
    for L in (ember, torch):
        with pytest.raises(Exception) as info:
            fn(L, L.tensor([1 + 2j, 3 - 1j]))
        z[L.__name__] = info
    if "complex32" in repr(z["ember"].value) or "float8" in repr(z["torch"].value):
        assert "complex32" in str(z["ember"].value)     # (NumPy has no complex32: a clear error)
        return
    assert z["ember"].type is z["torch"].type, (z["ember"].value, z["torch"].value)
    assert str(z["ember"].value).strip() == str(z["torch"].value).strip()


def _grads(fn, *values):
    out = {}
    for L in (ember, torch):
        xs = [L.tensor(v, requires_grad=True) for v in values]
        fn(L, *xs).backward()
        out[L.__name__] = [None if x.grad is None else _np(x.grad) for x in xs]
    for a, b in zip(out["ember"], out["torch"]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    return out["ember"]


Z = np.array([1 + 2j, -0.5 + 0.3j, 2 - 1j], dtype=np.complex64)
W = np.array([0.3 - 1j, 1.5 + 0.2j, -1 + 1j], dtype=np.complex64)
X = np.array([0.4, -1.2, 2.0], dtype=np.float32)


def test_gradient_convention():
    g, = _grads(lambda L, z: (z * z.conj()).real.sum(), Z)
    np.testing.assert_allclose(g, 2 * Z, rtol=1e-6)
    g, = _grads(lambda L, z: z.abs().sum(), Z)
    np.testing.assert_allclose(g, Z / np.abs(Z), rtol=1e-6)


@pytest.mark.parametrize("fn", [
    lambda L, z, w, x: (z * w).abs().sum(), lambda L, z, w, x: (z / w).imag.sum(),
    lambda L, z, w, x: (z * x).angle().sum(), lambda L, z, w, x: (z.exp() + w.log()).abs().sum(),
    lambda L, z, w, x: (z.sqrt() * w.sin() - z.cos() + w.tanh()).real.sum(),
    lambda L, z, w, x: (z.sigmoid() / w.reciprocal() + (z ** 2) - z.square()).abs().sum(),
    lambda L, z, w, x: L.view_as_real(z * 1j + x).sum() + L.polar(x.abs(), x).imag.sum(),
    lambda L, z, w, x: L.complex(x, x * 2).abs().sum() + (z.mean() * w.sum()).real,
    lambda L, z, w, x: L.fft.fft(z * w).abs().sum() + L.fft.rfft(x, n=5).real.sum(),
    lambda L, z, w, x: L.fft.irfft(z * w, n=5).pow(2).sum() + L.fft.hfft(z).sum(),
])
def test_gradients_match_torch(fn):
    _grads(fn, Z, W, X)


def test_gradcheck_complex_inputs():
    z = ember.tensor(Z.astype(np.complex128), requires_grad=True)
    w = ember.tensor(W.astype(np.complex128), requires_grad=True)
    assert ember.autograd.gradcheck(lambda a, b: a * b.conj() / (a + 3), (z, w))
    assert ember.autograd.gradgradcheck(lambda a: (a.exp() * a).abs(), (z,))
    assert ember.autograd.gradcheck(lambda a: ember.fft.irfft(a, n=4), (z,))


@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
@pytest.mark.parametrize("name,kw,real_in", [
    ("fft", {}, False), ("fft", {"n": 7, "dim": 0}, True), ("ifft", {"n": 3}, False),
    ("rfft", {"n": 6}, True), ("irfft", {}, False), ("irfft", {"n": 5, "dim": 0}, False),
    ("hfft", {"n": 4}, False), ("ihfft", {}, True), ("fftn", {}, True),
    ("fft2", {"s": (4, 6)}, False), ("ifftn", {"dim": (1,)}, False),
    ("rfftn", {"s": (2, 3)}, True), ("irfftn", {"s": (3, 6)}, False), ("rfft2", {}, True),
    ("irfft2", {}, False), ("hfftn", {}, False), ("hfft2", {"s": (2, 4)}, False),
    ("ihfftn", {}, True), ("ihfft2", {"dim": (0, 1)}, True), ("ifft2", {}, True),
])
def test_fft_norms_and_dims(name, kw, real_in, norm):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5)).astype(np.float32)
    if not real_in:
        x = (x + 1j * rng.standard_normal((3, 5))).astype(np.complex64)
    e = getattr(ember.fft, name)(ember.tensor(x), norm=norm, **kw)
    t = getattr(torch.fft, name)(torch.tensor(x), norm=norm, **kw)
    assert repr(e.dtype) == repr(t.dtype) and tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(_np(e), _np(t), rtol=1e-4, atol=1e-5)


def test_fft_helpers():
    for fn in (lambda L: L.fft.fftfreq(5), lambda L: L.fft.fftfreq(6, 0.3, dtype=L.float64),
               lambda L: L.fft.rfftfreq(7, 2.0), lambda L: L.fft.fftshift(L.arange(10.)),
               lambda L: L.fft.ifftshift(L.arange(12.).reshape(3, 4), dim=0),
               lambda L: L.fft.fft(L.arange(4)), lambda L: L.fft.fft(L.ones(4, dtype=L.float64))):
        e, t = fn(ember), fn(torch)
        assert repr(e.dtype) == repr(t.dtype)
        np.testing.assert_allclose(_np(e), _np(t), rtol=1e-6, atol=1e-7)


def test_fft_node_names():
    x = ember.ones(4, requires_grad=True)
    z = ember.ones(4, dtype=ember.complex64, requires_grad=True)
    assert type(ember.fft.fft(z).grad_fn).__name__ == "FftC2CBackward0"
    assert type(ember.fft.rfft(x).grad_fn).__name__ == "FftR2CBackward0"
    assert type(ember.fft.irfft(z).grad_fn).__name__ == "FftC2RBackward0"
    assert type(ember.fft.ihfft(x).grad_fn).__name__ == "ConjBackward0"
