"""Regression tests (against torch) for the second wave of loss / normalization / embedding /
bilinear fuzz fixes."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

INF, NAN = np.inf, np.nan


def _run(fn, L):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ("ok", fn(L))
    except Exception as e:  # noqa: BLE001  (compared between the libraries)
        return ("raise", type(e).__name__, str(e))


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def _same(fn, rtol=1e-6, atol=0.0):
    """``fn(lib)`` raises the same (class and message) or returns matching arrays (NaN where
    torch has NaN, same signed infinities)."""
    e, t = _run(fn, ember), _run(fn, torch)
    assert e[0] == t[0], (e, t)
    if e[0] == "raise":
        assert e[1:] == t[1:], (e, t)
        return
    er, tr = e[1], t[1]
    if not isinstance(tr, (tuple, list)):
        er, tr = [er], [tr]
    assert len(er) == len(tr)
    for a, b in zip(er, tr):
        if b is None:
            assert a is None
            continue
        a, b = _np(a), _np(b)
        assert a.shape == b.shape and a.dtype == b.dtype, (a, b)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


def _grads(L, f, *arrays):
    ts = [L.tensor(a).requires_grad_() for a in arrays]
    out = f(L, *ts)
    g = np.random.default_rng(0).standard_normal(tuple(out.shape)).astype(arrays[0].dtype)
    out.backward(L.tensor(g))
    return [out] + [t.grad for t in ts]


# --- bilinear --------------------------------------------------------------------------------

def test_bilinear_inf_gradient_order():
    x1 = np.array([[-0.96705], [1.63916], [1.53926]])
    x2 = np.array([[0.0, -INF], [0.0, 0.89869], [-1.11241, -INF]])
    w = np.array([[[-1.52525, -0.27098]], [[-1.86767, -1.17364]]])
    for ns in ("F", "torch"):
        def f(L, a, b, c, ns=ns):
            return (L.nn.functional.bilinear if ns == "F" else L.bilinear)(a, b, c)
        _same(lambda L: _grads(L, f, x1, x2, w))


def test_bilinear_finite_gradients():
    rng = np.random.default_rng(1)
    a, b, w = rng.standard_normal((4, 3)), rng.standard_normal((4, 2)), \
        rng.standard_normal((5, 3, 2))
    _same(lambda L: _grads(L, lambda L, *t: L.nn.functional.bilinear(*t), a, b, w), rtol=1e-10)


@pytest.mark.parametrize("batch", [3, 0])
def test_bilinear_bool(batch):
    def f(L, ns):
        x1 = L.zeros(batch, 1, dtype=L.bool)
        x2 = L.ones(batch, 2, dtype=L.bool)
        w = L.ones(2, 1, 2, dtype=L.bool)
        return (L.nn.functional.bilinear if ns == "F" else L.bilinear)(x1, x2, w)
    _same(lambda L: f(L, "F"))
    _same(lambda L: f(L, "torch"))


@pytest.mark.parametrize("batch", [3, 0])
def test_bilinear_complex_autograd(batch):
    def f(L):
        x1 = L.zeros(batch, 1, dtype=L.complex128)
        x2 = L.zeros(batch, 4, dtype=L.complex128).requires_grad_()
        w = L.zeros(2, 1, 4, dtype=L.complex128)
        return L.nn.functional.bilinear(x1, x2, w)
    _same(f)


# --- smooth_l1 / huber -----------------------------------------------------------------------

@pytest.mark.parametrize("fn", ["smooth_l1_loss", "huber_loss"])
def test_smooth_l1_nan_target_gradient(fn):
    x = np.array([[-1.8367, 1.51217, 0.75528], [0.241, 1.45414, 0.07571]], np.float32)
    t = np.array([-1.64651, NAN, 1.0], np.float32)
    _same(lambda L: _grads(L, lambda L, a, b: getattr(L.nn.functional, fn)(a, b), x, t))


def test_smooth_l1_boundary_gradient():
    x = np.array([0.0, 1.0, -1.0, 2.0, 0.5])
    t = np.array([1.0, 0.0, 0.0, 0.0, 0.0])
    _same(lambda L: _grads(L, lambda L, a, b: L.nn.functional.smooth_l1_loss(a, b, beta=1.0),
                           x, t))


# --- embedding ------------------------------------------------------------------------------

@pytest.mark.parametrize("padding_idx", [None, 1])
def test_embedding_scale_grad_by_freq(padding_idx):
    w = np.random.default_rng(2).standard_normal((5, 6))
    idx = np.array([[1, 3], [1, 3], [0, 3]])

    def f(L, strided):
        base = L.tensor(w).requires_grad_()
        weight = base[:, ::2] if strided else base
        out = L.nn.functional.embedding(L.tensor(idx), weight, padding_idx,
                                        scale_grad_by_freq=True)
        out.backward(L.ones_like(out))
        return out, base.grad
    _same(lambda L: f(L, False))
    _same(lambda L: f(L, True))

    def g(L):
        weight = L.tensor(w).requires_grad_()
        out = L.embedding(weight, L.tensor(idx), -1 if padding_idx is None else padding_idx,
                          True)
        out.backward(L.ones_like(out))
        return out, weight.grad
    _same(g)


@pytest.mark.parametrize("norm_type", [1.0, 2.0, INF])
def test_embedding_max_norm_nonfinite_rows(norm_type):
    w = np.array([[0.0, 1e-30, 1e30], [-INF, -0.72, -1.0], [-INF, 1e-30, NAN],
                  [NAN, 0.0, 1e30], [1.0, 2.0, 3.0]], np.float32)

    def f(L):
        weight = L.tensor(w.copy())
        L.nn.functional.embedding(L.tensor([0, 1, 3, 4, 4]), weight, max_norm=2.0,
                                  norm_type=norm_type)
        return weight
    _same(f)


# --- normalization --------------------------------------------------------------------------

def test_instance_norm_single_value_fma():
    x = np.array([-0.52124, -1.59973, 1.24858, 0.05376, 1.22292, 0.33043],
                 np.float32).reshape(2, 3, 1)
    w = np.array([0.81523, -1.87457, 0.68483], np.float32)
    b = np.array([1.52804, -0.0, -0.96806], np.float32)

    def f(L):
        return L.instance_norm(L.tensor(x), L.tensor(w), L.tensor(b), None, None, True, 0.1,
                               1e-5, False)
    _same(f, rtol=1e-6, atol=1e-9)


def test_batch_norm_training_float32():
    x = np.random.default_rng(3).standard_normal((4, 3, 5)).astype(np.float32) * 100 + 7
    w = np.array([0.5, -2.0, 3.0], np.float32)
    b = np.array([1.0, 0.0, -1.0], np.float32)

    def f(L):
        return L.nn.functional.batch_norm(L.tensor(x), None, None, L.tensor(w), L.tensor(b),
                                          training=True)
    _same(f, rtol=1e-6, atol=1e-6)


def test_layer_norm_empty_weight_gradient():
    def f(L):
        x = L.zeros(2, 0, 4, dtype=L.float64).requires_grad_()
        base = L.zeros(0, 8, dtype=L.float64).requires_grad_()
        b = L.zeros(0, 4, dtype=L.float64).requires_grad_()
        out = L.nn.functional.layer_norm(x, [0, 4], base[:, ::2], b)
        out.sum().backward()
        return x.grad, base.grad, b.grad
    _same(f)
