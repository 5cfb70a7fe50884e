"""torch parity of special functions, FFTs and complex ops found by the differential fuzzer
(issue 21): dtype errors, values at poles and infinities, graphs and complex gradients."""
import math

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

INF, NAN = math.inf, math.nan


def _both(fn, *arrays, grad=False):
    """``fn(lib, *tensors)`` in ember and torch: (result or exception) for each."""
    out = []
    for lib in (ember, torch):
        ts = [lib.tensor(a, requires_grad=grad) if isinstance(a, np.ndarray) else a
              for a in arrays]
        try:
            out.append((fn(lib, *ts), ts))
        except Exception as e:      # noqa: BLE001 (compared below)
            out.append((e, ts))
    return out


def _same_error(fn, *arrays):
    (e, _), (t, _) = _both(fn, *arrays)
    assert isinstance(t, Exception), "torch returned %r" % (t,)
    assert type(e) is type(t), (e, t)
    assert str(e) == str(t)


def _close(a, b, **kw):
    np.testing.assert_allclose(a.detach().resolve_conj().numpy(),
                               b.detach().resolve_conj().numpy(),
                               equal_nan=True, **kw)


UNARY_HALF = ["airy_ai", "bessel_j0", "bessel_y1", "erfcx", "log_ndtr", "modified_bessel_k0",
              "ndtri", "scaled_modified_bessel_k1", "spherical_bessel_j0"]
UNARY_COMPLEX = UNARY_HALF + ["digamma", "entr", "i0", "i0e", "i1", "i1e", "gammaln", "psi",
                              "ndtr"]


@pytest.mark.parametrize("name", UNARY_COMPLEX)
def test_special_complex_input_raises_torch_error(name):
    _same_error(lambda L, x: getattr(L.special, name)(x), np.ones(3, np.complex128))


@pytest.mark.parametrize("name", UNARY_HALF)
def test_special_half_input_raises_torch_error(name):
    _same_error(lambda L, x: getattr(L.special, name)(x), np.ones(3, np.float16))


@pytest.mark.parametrize("n", [0, 1, 2])
def test_polygamma_complex_kernel_name(n):
    _same_error(lambda L, x: L.polygamma(n, x), np.ones(2, np.complex64))


@pytest.mark.parametrize("name", ["chebyshev_polynomial_t", "hermite_polynomial_he",
                                  "shifted_chebyshev_polynomial_v", "legendre_polynomial_p"])
@pytest.mark.parametrize("dtype", [np.float16, np.complex128])
def test_polynomial_dtype_errors(name, dtype):
    _same_error(lambda L, x: getattr(L.special, name)(x, 2), np.ones(3, dtype))


@pytest.mark.parametrize("name", ["chebyshev_polynomial_t", "chebyshev_polynomial_w",
                                  "hermite_polynomial_h", "laguerre_polynomial_l",
                                  "shifted_chebyshev_polynomial_u", "legendre_polynomial_p"])
@pytest.mark.parametrize("n", [INF, -INF, NAN, 2.7, -0.5, 0.9, 3.0])
def test_polynomial_degree_truncated_and_nonfinite(name, n):
    x = np.array([0.3, 2.0, -1.0, 1.0, -0.7])
    for deg in (n, np.array(n)):
        (e, _), (t, _) = _both(lambda L, a, d: getattr(L.special, name)(a, d), x, deg)
        _close(e, t, rtol=1e-6)


def test_binary_special_dtype_errors():
    c, h, i = np.ones(2, np.complex64), np.ones(2, np.float16), np.ones(2, np.int32)
    _same_error(lambda L, a, b: L.special.xlog1py(a, b), c, c)
    _same_error(lambda L, a, b: L.special.zeta(a, b), h, h)
    _same_error(lambda L, a, b: L.igamma(a, b), i, np.ones(2, bool))
    _same_error(lambda L, a, b: L.igammac(a, b), c, c)
    _same_error(lambda L, a, b: a.igamma_(b), np.ones(2, np.float32), c)


@pytest.mark.parametrize("fn", [
    lambda L, x: L.lgamma(x),
    lambda L, x: L.polygamma(1, x),
    lambda L, x: L.polygamma(2, x),
    lambda L, x: L.polygamma(3, x),
    lambda L, x: L.special.zeta(L.full_like(x, 2.0), x),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_at_poles_and_infinities(fn, dtype):
    x = np.array([-INF, -3, -2.5, -1, -0.0, 0, 0.5, 1, 2, INF, NAN], dtype)
    (e, _), (t, _) = _both(fn, x)
    _close(e, t, rtol=1e-5)


def test_trigamma_gradient_of_digamma_at_minus_inf():
    (e, xe), (t, xt) = _both(lambda L, x: L.polygamma(0, x), np.array([-INF, 0.5, 3.0]),
                             grad=True)
    e.sum().backward()
    t.sum().backward()
    _close(xe[0].grad, xt[0].grad, rtol=1e-9)


@pytest.mark.parametrize("name", ["i1", "i1e"])
def test_i1_gradient_near_zero_and_half(name):
    x = np.array([0.0, 1e-9, -2.0, 3.0, -INF])
    (e, xe), (t, xt) = _both(lambda L, a: getattr(L.special, name)(a), x, grad=True)
    g = np.array([0.3, -1.0, 2.0, 0.5, 1.0])
    e.backward(ember.tensor(g))
    t.backward(torch.tensor(g))
    _close(xe[0].grad, xt[0].grad, rtol=1e-9)

    def half(L, a):
        a = a.detach().half().requires_grad_()
        getattr(L.special, name)(a).sum().backward()
    _same_error(half, np.ones(2))


def test_mvlgamma_function_node_values_and_grad():
    x = np.array([1.5, 2.0, 3.7, -INF, 0.4])
    for fn in (lambda L, a: L.mvlgamma(a, 3), lambda L, a: L.special.multigammaln(a, 3)):
        (e, xe), (t, xt) = _both(fn, x, grad=True)
        assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__ == "MvlgammaBackward0"
        _close(e, t, rtol=1e-10)
        e.sum().backward()
        t.sum().backward()
        _close(xe[0].grad, xt[0].grad, rtol=1e-10)
    (e, _), (t, _) = _both(lambda L, a: L.mvlgamma(a, 2), np.array([2, 3, 4], np.int64))
    assert e.dtype == ember.float32 and t.dtype == torch.float32
    _close(e, t, rtol=1e-6)


def test_mvlgamma_errors():
    _same_error(lambda L, a: L.mvlgamma(a, 2), np.ones(2, bool))
    _same_error(lambda L, a: L.mvlgamma(a, 2), np.ones(2, np.complex64))
    _same_error(lambda L, a: L.mvlgamma(a, 0), np.ones(2))
    (e, _), (t, _) = _both(lambda L, a: L.mvlgamma(a, 2.0), np.ones(2))
    assert isinstance(e, TypeError) and isinstance(t, TypeError)


def test_ndtr_graph_is_torchs_composite():
    (e, xe), (t, xt) = _both(lambda L, a: L.special.ndtr(a), np.array([-1.5, 0.0, 2.0]),
                             grad=True)
    assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__ == "MulBackward1"
    e.sum().backward()
    t.sum().backward()
    _close(xe[0].grad, xt[0].grad, rtol=1e-7)


def test_sinc_complex_gradient():
    z = np.array([0.3 + 0.4j, -1.2 + 0.1j, 0.7 - 0.9j])
    (e, xe), (t, xt) = _both(lambda L, a: L.sinc(a), z, grad=True)
    g = np.array([1 + 1j, 0.5 - 2j, -1 + 0.3j])
    e.backward(ember.tensor(g))
    t.backward(torch.tensor(g))
    _close(xe[0].grad, xt[0].grad, rtol=1e-9)


def test_real_imag_are_select_over_view_as_real():
    z = np.array([1 + 2j, 3 - 1j])
    for part in ("real", "imag"):
        (e, xe), (t, xt) = _both(lambda L, a: getattr(a, part) * 2, z, grad=True)
        ge, gt = e.grad_fn.next_functions[0][0], t.grad_fn.next_functions[0][0]
        assert type(ge).__name__ == type(gt).__name__ == "SelectBackward0"
        assert type(ge.next_functions[0][0]).__name__ == "ViewAsRealBackward0"
        e.sum().backward()
        t.sum().backward()
        _close(xe[0].grad, xt[0].grad)
    w = ember.tensor(z)
    w.real.mul_(10)
    w.imag[0] = 7
    assert w.tolist() == [10 + 7j, 30 - 1j]


def test_conj_bit_and_resolve_conj():
    z = np.array([1 + 2j, 3 - 1j])
    (e, _), (t, _) = _both(lambda L, a: a.conj(), z, grad=True)
    assert e.is_conj() and t.is_conj()
    assert not e.conj().is_conj() and not t.conj().is_conj()
    assert not (e * 1).is_conj()
    re, rt = e.resolve_conj(), t.resolve_conj()
    assert type(re.grad_fn).__name__ == type(rt.grad_fn).__name__ == "CloneBackward0"
    assert not re.is_conj()


def test_polar_gradient_and_half_error():
    r = np.array([-2.0, 0.0, -0.0, INF, 1.0])
    th = np.array([0.3, 0.5, 0.2, 0.1, NAN])
    (e, xe), (t, xt) = _both(lambda L, a, b: L.polar(a, b), r, th, grad=True)
    g = np.array([1 + 2j, 3 - 1j, 1 + 1j, 1 + 0j, 2 + 2j])
    e.backward(ember.tensor(g))
    t.backward(torch.tensor(g))
    _close(xe[0].grad, xt[0].grad, rtol=1e-10)
    _close(xe[1].grad, xt[1].grad, rtol=1e-10)
    h = np.ones(2, np.float16)
    _same_error(lambda L, a, b: L.polar(a, b), h, h)


def _graph(t):
    names, stack = [], [t.grad_fn]
    while stack:
        node = stack.pop(0)
        names.append(type(node).__name__)
        stack += [n for n, _ in node.next_functions if n is not None]
    return names


FFT_CASES = [
    ("fft_n", lambda L, x: L.fft.fft(x, n=7, norm="ortho"), np.float64),
    ("ifft_real", lambda L, x: L.fft.ifft(x, n=3), np.float64),
    ("ifft2_s", lambda L, x: L.fft.ifft2(x, s=(5, 2)), np.complex128),
    ("fftn_real", lambda L, x: L.fft.fftn(x, s=(2, 6)), np.float64),
    ("irfftn_s", lambda L, x: L.fft.irfftn(x, s=(5, 3)), np.complex128),
    ("irfft2_minus1", lambda L, x: L.fft.irfft2(x, s=(2, -1)), np.complex128),
    ("hfft_n", lambda L, x: L.fft.hfft(x, n=3), np.complex128),
    ("hfftn", lambda L, x: L.fft.hfftn(x, norm="forward"), np.complex128),
    ("hfft2_s", lambda L, x: L.fft.hfft2(x, s=(2, 5), norm="ortho"), np.complex128),
    ("ihfft", lambda L, x: L.fft.ihfft(x).resolve_conj(), np.float64),
    ("ihfftn", lambda L, x: L.fft.ihfftn(x, norm="ortho"), np.float64),
    ("ihfft2_s", lambda L, x: L.fft.ihfft2(x, s=(4, 3)), np.float64),
    ("rfft2_s", lambda L, x: L.fft.rfft2(x, s=(5, 2)), np.float64),
]


@pytest.mark.parametrize("name, fn, dtype", FFT_CASES, ids=[c[0] for c in FFT_CASES])
def test_fft_values_gradients_and_graph(name, fn, dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4))
    if dtype == np.complex128:
        x = x + 1j * rng.standard_normal((3, 4))
    (e, xe), (t, xt) = _both(fn, x, grad=True)
    _close(e, t, rtol=1e-9, atol=1e-12)
    assert _graph(e) == _graph(t)
    g = rng.standard_normal(tuple(t.shape))
    if t.is_complex():
        g = g + 1j * rng.standard_normal(tuple(t.shape))
    e.backward(ember.tensor(g))
    t.backward(torch.tensor(g))
    _close(xe[0].grad, xt[0].grad, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("fn, shape, dtype", [
    (lambda L, x: L.fft.fft(x), (0,), np.float32),
    (lambda L, x: L.fft.fft2(x), (3, 0), np.float32),
    (lambda L, x: L.fft.fftn(x, 2), (), np.float32),
    (lambda L, x: L.fft.rfftn(x, -2), (3, 0), np.float64),
    (lambda L, x: L.fft.irfft(x), (1,), np.complex64),
    (lambda L, x: L.fft.irfftn(x, -2), (3, 0), np.float64),
    (lambda L, x: L.fft.hfft2(x), (3,), np.float16),
    (lambda L, x: L.fft.ihfft2(x), (), np.complex128),
    (lambda L, x: L.fft.ihfftn(x), (3,), np.complex64),
    (lambda L, x: L.fft.rfftn(x), (3,), np.complex64),
    (lambda L, x: L.fft.rfftn(x, dim=()), (3,), np.float32),
    (lambda L, x: L.fft.fftshift(x), (), np.complex128),
    (lambda L, x: L.fft.rfftfreq(x), (2,), np.int64),
    (lambda L, x: L.fft.fftfreq(x), (), np.float64),
])
def test_fft_argument_errors(fn, shape, dtype):
    _same_error(fn, np.ones(shape, dtype))


def test_fftfreq_zero_dim_int_tensor_and_small_n():
    for name in ("fftfreq", "rfftfreq"):
        (e, _), (t, _) = _both(lambda L, n: getattr(L.fft, name)(n), np.array(5))
        _close(e, t)
        for n in (-5, -2, -1, 0, 1):
            (e, _), (t, _) = _both(lambda L, m: getattr(L.fft, name)(m), n)
            if isinstance(t, Exception):
                assert type(e) is type(t) and str(e) == str(t)
            else:
                _close(e, t)


def test_fftn_int_s_and_dim():
    x = np.arange(12.0).reshape(3, 4)
    for fn in (lambda L, a: L.fft.fftn(a, 3, 0), lambda L, a: L.fft.rfft2(a, 3, 0)):
        (e, _), (t, _) = _both(fn, x)
        _close(e, t, rtol=1e-12, atol=1e-12)
