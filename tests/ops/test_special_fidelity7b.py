"""The orthogonal polynomials follow torch's own recurrences (Math.h), and the real/imaginary
parts of a conjugated tensor have torch's graph; compared against torch."""
import math

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

NAMES = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
         "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
         "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
         "laguerre_polynomial_l", "legendre_polynomial_p"]
# (no NaN x: torch returns an uninitialised value there for most of them; ember gives NaN)
XS = [math.inf, -math.inf, 1.0, -1.0, 0.0, 0.5, 0.999, -0.3, 0.25, 0.75, 1.0001, 2.0, -3.0,
      1e30, 300.0]
NS = [0, 1, 2, 3, 5, 6, 7, 9, 50, 1000, -1, -5, 2.7, 7.9, -0.5, math.nan, math.inf, 1e20,
      129, 513]


def _compare(name, x, n, rtol):
    t = getattr(torch.special, name)(x, n)
    e = getattr(ember.special, name)(ember.tensor(x.numpy()), ember.tensor(n.numpy()))
    assert e.dtype == ember.float64 if t.dtype == torch.float64 else e.dtype == ember.float32
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=rtol, atol=rtol, equal_nan=True,
                               err_msg=name)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_polynomial_grid_matches_torch(name, dtype):
    dt = getattr(torch, dtype)
    x = torch.tensor(XS, dtype=dt)[:, None]
    n = torch.tensor(NS, dtype=dt)[None, :]
    _compare(name, x, n, 1e-10 if dtype == "float64" else 1e-4)


@pytest.mark.parametrize("name", ["hermite_polynomial_h", "hermite_polynomial_he",
                                  "laguerre_polynomial_l", "legendre_polynomial_p",
                                  "chebyshev_polynomial_t"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_polynomial_overflow_matches_torch(name, dtype):
    # where a step overflows, torch's fused multiply-add gives -inf/inf rather than NaN
    dt = getattr(torch, dtype)
    x = torch.tensor(np.linspace(-40, 40, 33), dtype=dt)[:, None]
    n = torch.arange(30, 160 if dtype == "float32" else 520, 7, dtype=dt)[None, :]
    _compare(name, x, n, 1e-8 if dtype == "float64" else 1e-3)


def test_polynomial_scalar_and_int_arguments():
    for name in ("chebyshev_polynomial_t", "legendre_polynomial_p"):
        t = getattr(torch.special, name)(0.5, torch.tensor([3, 9]))
        e = getattr(ember.special, name)(0.5, ember.tensor([3, 9]))
        assert e.dtype == ember.float32 and t.dtype == torch.float32
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)
        t = getattr(torch.special, name)(torch.tensor([2, 3]), 4)
        e = getattr(ember.special, name)(ember.tensor([2, 3]), 4)
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)


@pytest.mark.parametrize("args", [(2.0, 3), (True, 2), ("x", "a")])
def test_polynomial_bad_arguments_raise_like_torch(args):
    with pytest.raises(TypeError) as te:
        torch.special.hermite_polynomial_h(*args)
    with pytest.raises(TypeError) as ee:
        ember.special.hermite_polynomial_h(*args)
    assert str(ee.value) == str(te.value)


def test_polynomial_strict_device():
    x = ember.tensor([0.5, 2.0, -1.0], device="strict")
    for name in NAMES:
        e = getattr(ember.special, name)(x, 9)
        t = getattr(torch.special, name)(torch.tensor([0.5, 2.0, -1.0]), 9)
        np.testing.assert_allclose(e.cpu().numpy(), t.numpy(), rtol=1e-5, atol=1e-5)


def _chain(t):
    out, f = [], t.grad_fn
    while f is not None:
        out.append(type(f).__name__)
        nxt = [n for n, _ in f.next_functions if n is not None]
        f = nxt[0] if nxt else None
    return out


def test_conj_real_imag_graph_and_grad():
    z_t = torch.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    z_e = ember.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    for part in ("real", "imag"):
        a, b = getattr(z_t.conj(), part), getattr(z_e.conj(), part)
        assert _chain(b) == _chain(a)
        np.testing.assert_array_equal(b.detach().numpy(), a.detach().resolve_neg().numpy())
    (z_t.conj().imag * 3 + z_t.conj().real * 2).sum().backward()
    (z_e.conj().imag * 3 + z_e.conj().real * 2).sum().backward()
    np.testing.assert_array_equal(z_e.grad.numpy(), z_t.grad.numpy())


def test_view_as_real_of_conj_raises_like_torch():
    with pytest.raises(RuntimeError) as te:
        torch.view_as_real(torch.tensor([1 + 2j]).conj())
    with pytest.raises(RuntimeError) as ee:
        ember.view_as_real(ember.tensor([1 + 2j]).conj())
    assert str(ee.value) == str(te.value)


def test_grad_through_view_as_complex_conj():
    x_t = torch.randn(3, 2, dtype=torch.float64, requires_grad=True)
    x_e = ember.tensor(x_t.detach().numpy(), requires_grad=True)
    w = [1 + 2j, 2, 3j]
    (torch.view_as_complex(x_t).conj() * torch.tensor(w)).real.sum().backward()
    (ember.view_as_complex(x_e).conj() * ember.tensor(w)).real.sum().backward()
    np.testing.assert_allclose(x_e.grad.numpy(), x_t.grad.numpy())
