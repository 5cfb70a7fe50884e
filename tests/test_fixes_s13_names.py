"""Session 13 (H12): torch names ember lacked: quasirandom.SobolEngine, fake_quantize_*,
the legacy Storage classes. torch is the oracle."""
import warnings

import numpy as np
import pytest

import ember


def _same(a, b):
    a, b = a.detach().numpy(), b.detach().numpy()
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(np.signbit(a), np.signbit(b))


def _err(f, torch):
    out = []
    for lib in (torch, ember):
        with pytest.raises(Exception) as info:
            f(lib)
        out.append((type(info.value).__name__, str(info.value)))
    assert out[0] == out[1]


@pytest.mark.parametrize("dim,scramble,seed", [(3, False, None), (5, True, 7), (40, True, 123),
                                               (1111, False, None), (300, True, 0)])
def test_sobol_engine_matches_torch(torch, dim, scramble, seed):
    t = torch.quasirandom.SobolEngine(dim, scramble=scramble, seed=seed)
    e = ember.quasirandom.SobolEngine(dim, scramble=scramble, seed=seed)
    assert repr(t) == repr(e)
    _same(t.sobolstate, e.sobolstate)
    _same(t.shift, e.shift)
    _same(t.draw(1), e.draw(1))
    _same(t.draw(7), e.draw(7))
    _same(t.draw(9, dtype=torch.float64), e.draw(9, dtype=ember.float64))
    t.fast_forward(13)
    e.fast_forward(13)
    _same(t.draw(100), e.draw(100))
    assert t.num_generated == e.num_generated
    t.reset()
    e.reset()
    _same(t.draw_base2(5, dtype=torch.float64), e.draw_base2(5, dtype=ember.float64))
    t.reset()
    e.reset()
    t.fast_forward(5)
    e.fast_forward(5)
    _same(t.quasi, e.quasi)
    _same(t.draw(3), e.draw(3))


def test_sobol_unseeded_uses_default_generator(torch):
    torch.manual_seed(3)
    ember.manual_seed(3)
    t = torch.quasirandom.SobolEngine(6, scramble=True)
    e = ember.quasirandom.SobolEngine(6, scramble=True)
    _same(t.draw(64, dtype=torch.float64), e.draw(64, dtype=ember.float64))
    _same(torch.rand(3), ember.rand(3))      # (the stream moved on by as much)


def test_sobol_out_and_errors(torch):
    t, e = torch.quasirandom.SobolEngine(3), ember.quasirandom.SobolEngine(3)
    ot, oe = torch.empty(0), ember.empty(0)
    assert t.draw(4, out=ot) is ot and e.draw(4, out=oe) is oe
    _same(ot, oe)
    _same(t.draw(0), e.draw(0))
    _err(lambda L: L.quasirandom.SobolEngine(0), torch)
    _err(lambda L: L.quasirandom.SobolEngine(21202), torch)
    _err(lambda L: L.quasirandom.SobolEngine(2).draw(0), torch)
    _err(lambda L: L.quasirandom.SobolEngine(2).draw(3, dtype=L.long), torch)
    _err(lambda L: L.quasirandom.SobolEngine(2).draw(3, dtype=L.half), torch)
    _err(_raise_base2, torch)


def _raise_base2(L):
    s = L.quasirandom.SobolEngine(2)
    s.draw(3)
    s.draw_base2(2)


_X = np.concatenate([np.random.default_rng(0).standard_normal(120) * 3,
                     np.arange(-20, 20) * 0.25,
                     [np.inf, -np.inf, np.nan, 1e30, -1e30, 3e9, 0.0, -0.0]]).astype(np.float32)


def _fq_both(torch, f, x=_X):
    res = []
    for lib in (torch, ember):
        t = lib.tensor(x.copy())
        t.requires_grad_()
        y = f(lib, t)
        y.backward(lib.linspace(-1, 2, y.numel()).reshape(tuple(y.shape)).to(y.dtype))
        res.append((y, type(y.grad_fn).__name__, t.grad))
    (yt, nt, gt), (ye, ne, ge) = res
    _same(yt.float(), ye.float())
    assert str(yt.dtype) == str(ye.dtype) and nt == ne
    _same(gt, ge)


@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("sc,zp,lo,hi", [(0.5, 3, 0, 255), (0.1, 0, -128, 127),
                                         (1 / 3, 2, 0, 15), (-0.5, 3, 0, 255), (0.0, 3, 0, 255)])
def test_fake_quantize_per_tensor(torch, dt, sc, zp, lo, hi):
    _fq_both(torch, lambda L, t: L.fake_quantize_per_tensor_affine(
        t.to(getattr(L, dt)), sc, zp, lo, hi))
    _fq_both(torch, lambda L, t: L.fake_quantize_per_tensor_affine(
        t.to(getattr(L, dt)), L.tensor([sc]), L.tensor([zp], dtype=L.int32), lo, hi))
    _fq_both(torch, lambda L, t: L.fake_quantize_per_tensor_affine(
        t.to(getattr(L, dt)), L.tensor(sc), L.tensor(zp + 0.7), lo, hi))


@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("zdt", ["int32", "float32", "float16"])
@pytest.mark.parametrize("axis", [0, 1])
def test_fake_quantize_per_channel(torch, dt, zdt, axis):
    rng = np.random.default_rng(1)
    w = _X[:160].reshape(4, 40)
    k = w.shape[axis]
    s = (np.abs(rng.standard_normal(k)) * 0.3 + 0.01).astype(np.float32)
    z = rng.integers(-3, 4, k).astype(zdt)
    if zdt != "int32":
        z = z + rng.random(k).astype(zdt)
    _fq_both(torch, lambda L, t: L.fake_quantize_per_channel_affine(
        t.to(getattr(L, dt)), L.tensor(s), L.tensor(z), axis, -8, 7), w)


def test_fake_quantize_double_backward(torch):
    res = []
    for lib in (torch, ember):
        x = lib.tensor(_X[:40].astype(np.float64), requires_grad=True)
        y = lib.fake_quantize_per_tensor_affine(x, 0.25, 2, 0, 15)
        g, = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        g2, = lib.autograd.grad(g.sum(), x)
        res.append((g, g2))
    _same(res[0][0], res[1][0])
    _same(res[0][1], res[1][1])


def test_fake_quantize_errors(torch):
    x = lambda L: L.tensor(_X[:6].copy())     # noqa: E731
    w = lambda L: L.tensor(_X[:12].reshape(3, 4).copy())    # noqa: E731
    z = lambda L, *a: L.tensor(list(a), dtype=L.int32)     # noqa: E731
    s = lambda L, *a: L.tensor(list(a))     # noqa: E731
    pt = [lambda L: L.fake_quantize_per_tensor_affine(x(L), 0.5, 3, 10, 5),
          lambda L: L.fake_quantize_per_tensor_affine(x(L), 0.5, 300, 0, 255),
          lambda L: L.fake_quantize_per_tensor_affine(x(L), 0.5, 3.0, 0, 255),
          lambda L: L.fake_quantize_per_tensor_affine(x(L), 0.5, True, 0, 255),
          lambda L: L.fake_quantize_per_tensor_affine(x(L), 0.5, 3, 0, 255.0),
          lambda L: L.fake_quantize_per_tensor_affine(x(L).long(), 0.5, 3, 0, 255),
          lambda L: L.fake_quantize_per_tensor_affine(x(L), s(L, 0.5, 1.0), z(L, 3, 3), 0, 255),
          lambda L: L.fake_quantize_per_tensor_affine(
              x(L), s(L, 0.5).requires_grad_(), z(L, 3), 0, 255)]
    pc = [lambda L: L.fake_quantize_per_channel_affine(w(L), s(L, .5, .5, .5), z(L, 0, 1, 2).long(),
                                                       0, -128, 127),
          lambda L: L.fake_quantize_per_channel_affine(w(L), s(L, .5, .5, .5).double(),
                                                       z(L, 0, 1, 2), 0, -128, 127),
          lambda L: L.fake_quantize_per_channel_affine(w(L), s(L, .5, .5, .5), z(L, 0, 1, 2), 1,
                                                       -128, 127),
          lambda L: L.fake_quantize_per_channel_affine(w(L), s(L, .5, .5, .5), z(L, 0, 1, 2), -2,
                                                       -128, 127),
          lambda L: L.fake_quantize_per_channel_affine(w(L), s(L, .5, .5, .5), z(L, 0, 1, 2), 2,
                                                       -128, 127),
          lambda L: L.fake_quantize_per_channel_affine(w(L), s(L, .5, .5), z(L, 0, 1, 2), 0,
                                                       -128, 127),
          lambda L: L.fake_quantize_per_channel_affine(w(L), s(L, .5, .5, .5), z(L, 0, 1, 200), 0,
                                                       -128, 127),
          lambda L: L.fake_quantize_per_channel_affine(w(L), s(L, .5, .5, .5)[None],
                                                       z(L, 0, 1, 2), 0, -128, 127),
          lambda L: L.fake_quantize_per_channel_affine(w(L), s(L, .5, .5, .5), z(L, 0, 1, 2), 0,
                                                       -128.0, 127),
          lambda L: L.fake_quantize_per_channel_affine(w(L), 1.0, z(L, 0, 1, 2), 0, -128, 127),
          lambda L: L.fake_quantize_per_channel_affine(w(L).long(), s(L, .5, .5, .5),
                                                       z(L, 0, 1, 2), 0, -128, 127),
          lambda L: L.fake_quantize_per_channel_affine(w(L), s(L, .5, .5, .5).requires_grad_(),
                                                       z(L, 0, 1, 2), 0, -128, 127)]
    for f in pt + pc:
        _err(f, torch)


def test_legacy_storage_classes(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("Float", "Double", "Half", "Long", "Int", "Short", "Char", "Byte", "Bool",
                     "BFloat16", "ComplexFloat", "ComplexDouble"):
            ct, ce = getattr(torch, name + "Storage"), getattr(ember, name + "Storage")
            assert str(ct.dtype) == str(ce.dtype)
            st, se = ct([1, 0, 1]), ce([1, 0, 1])
            assert st.tolist() == se.tolist() and str(st.dtype) == str(se.dtype)
            assert ct(3).size() == ce(3).size() == 3 and ct().size() == ce().size() == 0
            assert isinstance(st, ct) and isinstance(se, ce)
            assert isinstance(st, torch.TypedStorage) and isinstance(se, ember.TypedStorage)
        assert ember.Storage is ember.FloatStorage
        t, e = torch.ones(2), ember.ones(2)
        for cls in ("TypedStorage", "FloatStorage", "Storage", "LongStorage"):
            assert isinstance(t.storage(), getattr(torch, cls)) == isinstance(
                e.storage(), getattr(ember, cls))
        assert isinstance(e.untyped_storage(), ember.UntypedStorage)
        with pytest.raises(TypeError, match="invalid combination of arguments"):
            ember.FloatStorage(1.5)
