"""Ops that are one graph node as in torch (GeluBackward0 with tanh, MishBackward0, ...):
values, gradients and second-order gradients against torch's, on a random upstream gradient."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _run(lib, fn, arrays, seed):
    xs = [lib.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    out = fn(lib, *xs)
    g = lib.tensor(np.random.default_rng(seed).standard_normal(tuple(out.shape)))
    diff = [x for x in xs if x.requires_grad]
    grads = lib.autograd.grad(out, diff, g, create_graph=True, allow_unused=True)
    used = [gr for gr in grads if gr is not None and gr.requires_grad]
    gg = lib.autograd.grad(sum((gr * gr).sum() for gr in used), diff, allow_unused=True) \
        if used else []
    as_np = [None if t is None else t.detach().numpy() for t in grads]
    return out.detach().numpy(), as_np, [None if t is None else t.numpy() for t in gg]


def r(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


CASES = {
    "gelu_tanh": (lambda L, x: L.nn.functional.gelu(x, approximate="tanh"), [r(3, 4)]),
    "mish": (lambda L, x: L.nn.functional.mish(x), [r(3, 4) * 4]),
    "glu": (lambda L, x: L.nn.functional.glu(x, 0), [r(4, 3)]),
    "prelu_channels": (lambda L, x, w: L.nn.functional.prelu(x, w), [r(2, 3, 4), r(3) * 0.3]),
    "prelu_one": (lambda L, x, w: L.nn.functional.prelu(x, w), [r(5), r(1) * 0.3]),
    "soft_margin_loss": (lambda L, x: L.nn.functional.soft_margin_loss(
        x, L.tensor(np.sign(r(3, 4, seed=3)))), [r(3, 4)]),
    "soft_margin_loss_none": (lambda L, x: L.nn.functional.soft_margin_loss(
        x, L.tensor(r(4, seed=3)), reduction="none"), [r(3, 4)]),
    "rrelu_eval": (lambda L, x: L.nn.functional.rrelu(x, training=False), [r(3, 4)]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_against_torch(name):
    fn, arrays = CASES[name]
    e = _run(ember, fn, arrays, 1)
    t = _run(torch, fn, arrays, 1)
    np.testing.assert_allclose(e[0], t[0], rtol=1e-10, atol=1e-12)
    for a, b in zip(e[1] + e[2], t[1] + t[2]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


def test_rrelu_training_gradient_is_the_noise():
    x = ember.tensor(r(4, 5), requires_grad=True)
    y = ember.nn.functional.rrelu(x, training=True)
    y.backward(ember.ones_like(y))
    slope = (y / x).detach()
    np.testing.assert_allclose(x.grad.numpy(), slope.numpy())
    neg = x.detach().numpy() <= 0
    assert ((slope.numpy()[neg] >= 1 / 8) & (slope.numpy()[neg] <= 1 / 3)).all()
    assert (slope.numpy()[~neg] == 1).all()
