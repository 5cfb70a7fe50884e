"""autograd.grad and autograd.functional (jacobian, hessian, vjp, jvp, vhp, hvp) against torch."""
import numpy as np
import pytest

import ember
from ember.autograd import functional as F


def _np(t):
    return np.asarray(t.detach().numpy())


def _assert_same(e, t):
    if isinstance(t, (tuple, list)):
        assert isinstance(e, tuple) and len(e) == len(t)
        for a, b in zip(e, t):
            _assert_same(a, b)
        return
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(_np(e), _np(t), rtol=1e-10, atol=1e-12)


def _f_one(lib):
    return lambda x: (x ** 2).sin() * x.exp()


def _f_two(lib):
    return lambda x, w: ((w @ x).tanh(), (x * 3).sum())


def _scalar(lib):
    return lambda x, w: ((w @ x) ** 2).sum() * x.sin().sum()


RNG = np.random.default_rng(0)
X = RNG.standard_normal(3)
W = RNG.standard_normal((2, 3))
V1 = RNG.standard_normal(3)
V2 = RNG.standard_normal((2, 3))


def _both(torch, *arrays):
    return [ember.tensor(a) for a in arrays], [torch.tensor(a) for a in arrays]


def test_jacobian_single_and_tuple(torch):
    (ex,), (tx,) = _both(torch, X)
    _assert_same(F.jacobian(_f_one(ember), ex),
                 torch.autograd.functional.jacobian(_f_one(torch), tx))
    (ex, ew), (tx, tw) = _both(torch, X, W)
    _assert_same(F.jacobian(_f_two(ember), (ex, ew)),
                 torch.autograd.functional.jacobian(_f_two(torch), (tx, tw)))


def test_hessian_matches_torch(torch):
    (ex, ew), (tx, tw) = _both(torch, X, W)
    _assert_same(F.hessian(_scalar(ember), (ex, ew)),
                 torch.autograd.functional.hessian(_scalar(torch), (tx, tw)))
    _assert_same(F.hessian(lambda x: (x ** 3).sum(), ex),
                 torch.autograd.functional.hessian(lambda x: (x ** 3).sum(), tx))


@pytest.mark.parametrize("name", ["vjp", "jvp"])
def test_vjp_jvp(torch, name):
    (ex, ew, ev), (tx, tw, tv) = _both(torch, X, W, V1)
    fn = getattr(F, name)
    tfn = getattr(torch.autograd.functional, name)
    if name == "vjp":
        (ev2, ev3), (tv2, tv3) = _both(torch, RNG.standard_normal(2), np.array(1.5))
        _assert_same(fn(_f_two(ember), (ex, ew), (ev2, ev3)),
                     tfn(_f_two(torch), (tx, tw), (tv2, tv3)))
    else:
        (ev2,), (tv2,) = _both(torch, V2)
        _assert_same(fn(_f_two(ember), (ex, ew), (ev, ev2)),
                     tfn(_f_two(torch), (tx, tw), (tv, tv2)))
    _assert_same(fn(_f_one(ember), ex, ev), tfn(_f_one(torch), tx, tv))


@pytest.mark.parametrize("name", ["hvp", "vhp"])
def test_hvp_vhp(torch, name):
    (ex, ew, ev, ev2), (tx, tw, tv, tv2) = _both(torch, X, W, V1, V2)
    _assert_same(getattr(F, name)(_scalar(ember), (ex, ew), (ev, ev2)),
                 getattr(torch.autograd.functional, name)(_scalar(torch), (tx, tw), (tv, tv2)))


def test_create_graph_allows_higher_order(torch):
    res = []
    for lib in (ember, torch):
        x = lib.tensor(X, requires_grad=True)
        fn = F if lib is ember else torch.autograd.functional
        _, g = fn.vjp(lambda t: (t ** 3).sum(), x, create_graph=True)
        assert g.requires_grad
        g.sum().backward()
        res.append(_np(x.grad))
        j = fn.jacobian(lambda t: t.sin(), x, create_graph=True)
        assert j.requires_grad
    np.testing.assert_allclose(res[0], res[1])


def test_strict_and_unused_inputs(torch):
    (ex, ew), (tx, tw) = _both(torch, X, W)
    e = F.jacobian(lambda x, w: x * 2, (ex, ew))
    t = torch.autograd.functional.jacobian(lambda x, w: x * 2, (tx, tw))
    _assert_same(e, t)
    with pytest.raises(RuntimeError, match="independent of input 1"):
        F.jacobian(lambda x, w: x * 2, (ex, ew), strict=True)
    with pytest.raises(RuntimeError, match="single Tensor with a single element"):
        F.vjp(lambda x: x * 2, ex)


def test_autograd_grad_options(torch):
    out = {}
    for lib in (ember, torch):
        x = lib.tensor(X, requires_grad=True)
        y = lib.tensor(V1, requires_grad=True)
        unused = lib.tensor(V1, requires_grad=True)
        z = x.sin() * y
        go = lib.tensor(V2[0])
        gx, gy, gu = lib.autograd.grad(z, (x, y, unused), grad_outputs=go, create_graph=True,
                                       allow_unused=True)
        assert gu is None and gx.requires_grad
        (ggx,) = lib.autograd.grad(gx.sum(), x)
        out[lib.__name__] = (_np(gx), _np(gy), _np(ggx))
        with pytest.raises(RuntimeError, match="appears to not have been used"):
            lib.autograd.grad((x * 2).sum(), (x, unused))
    for a, b in zip(out["ember"], out["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_gradgradcheck_catches_a_wrong_double_backward():
    class BadSquare(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return grad_output * 2 * x.detach()     # cut from the graph: d2 is lost

    x = ember.tensor(X, requires_grad=True)
    assert ember.autograd.gradcheck(BadSquare.apply, (x,))
    with pytest.raises(ember.autograd.GradcheckError) as info:
        ember.autograd.gradgradcheck(BadSquare.apply, (x,))
    assert info.value.input_index == 0
    assert ember.autograd.gradgradcheck(lambda t: t * t, (x,))


def test_saved_tensors_hooks_pack_unpack(torch):
    for lib in (ember, torch):
        packed, unpacked = [], []

        def pack(t):
            packed.append(tuple(t.shape))
            return ("box", t)

        def unpack(p):
            unpacked.append(p[0])
            return p[1]

        x = lib.tensor(X, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = (x * x).sum()
        y.backward()
        np.testing.assert_allclose(_np(x.grad), 2 * X)
        assert packed == [(3,), (3,)] and unpacked == ["box", "box"], lib.__name__
