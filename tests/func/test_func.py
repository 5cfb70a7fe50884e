"""ember.func and ember.autograd.forward_ad against torch.func and torch.autograd.forward_ad."""
import importlib

import numpy as np
import pytest

import ember
from ember.func import (functional_call, grad, grad_and_value, hessian, jacfwd, jacrev, jvp,
                        linearize, stack_module_state, vjp, vmap)

torch = pytest.importorskip("torch")
tf = torch.func
fwAD = importlib.import_module("ember.autograd.forward_ad")
tfwAD = torch.autograd.forward_ad


def _pair(*shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    return ember.tensor(a), torch.tensor(a)


def _close(e, t, tol=1e-10):
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor)
        assert tuple(e.shape) == tuple(t.shape)
        assert e.requires_grad == t.requires_grad
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)
    elif isinstance(t, (tuple, list)):
        assert type(e) is type(t) and len(e) == len(t)
        for a, b in zip(e, t):
            _close(a, b, tol)
    elif isinstance(t, dict):
        assert list(e) == list(t)
        for k in t:
            _close(e[k], t[k], tol)
    else:
        assert e == t


FUNCS = {
    "elementwise": lambda m, x: (m.sin(x) * x).sum(),
    "matmul": lambda m, x: (x @ x.T).tanh().sum(),
    "reduction": lambda m, x: x.exp().mean(dim=0).pow(2).sum(),
    "logsumexp": lambda m, x: m.logsumexp(x, dim=1).sum(),
}


@pytest.mark.parametrize("name", list(FUNCS))
def test_grad_jacrev_jacfwd_hessian(name):
    f = FUNCS[name]
    e, t = _pair(3, 2)
    _close(grad(lambda x: f(ember, x))(e), tf.grad(lambda x: f(torch, x))(t))
    _close(grad_and_value(lambda x: f(ember, x))(e), tf.grad_and_value(lambda x: f(torch, x))(t))
    g = lambda m: (lambda x: m.sin(x) * x.sum())     # noqa: E731  (a vector function)
    _close(jacrev(g(ember))(e), tf.jacrev(g(torch))(t))
    _close(jacfwd(g(ember))(e), tf.jacfwd(g(torch))(t))
    _close(hessian(lambda x: f(ember, x))(e), tf.hessian(lambda x: f(torch, x))(t))


def test_argnums_has_aux_and_pytrees():
    (ea, ta), (eb, tb) = _pair(3), _pair(3, seed=1)

    def f(m, a, b):
        return (a * b.sin()).sum(), {"aux": a * 2}
    _close(grad(lambda a, b: f(ember, a, b), argnums=(0, 1), has_aux=True)(ea, eb),
           tf.grad(lambda a, b: f(torch, a, b), argnums=(0, 1), has_aux=True)(ta, tb))
    _close(grad(lambda d: (d["x"] * d["y"][0]).sum())({"x": ea, "y": [eb]}),
           tf.grad(lambda d: (d["x"] * d["y"][0]).sum())({"x": ta, "y": [tb]}))
    _close(jacrev(lambda a, b: (a * b, a.sum()), argnums=(0, 1))(ea, eb),
           tf.jacrev(lambda a, b: (a * b, a.sum()), argnums=(0, 1))(ta, tb))
    _close(jacfwd(lambda a, b: (a * b, a.sum()), argnums=1)(ea, eb),
           tf.jacfwd(lambda a, b: (a * b, a.sum()), argnums=1)(ta, tb))
    _close(grad(lambda a, b: a.sum(), argnums=-1)(ea, eb),
           tf.grad(lambda a, b: a.sum(), argnums=-1)(ta, tb))


def test_nested_grad_and_outer_autograd():
    e, t = _pair(4)
    f = lambda x: (x ** 3).sin().sum()     # noqa: E731
    _close(grad(lambda x: grad(f)(x).sum())(e), tf.grad(lambda x: tf.grad(f)(x).sum())(t))
    s = ember.tensor(0.7)
    assert float(grad(grad(lambda x: x ** 4))(s)) == pytest.approx(12 * 0.49)
    # inputs that require grad: the result is differentiable outside, as torch's
    er, tr = e.clone().requires_grad_(), t.clone().requires_grad_()
    ge, gt = grad(f)(er), tf.grad(f)(tr)
    assert ge.requires_grad and gt.requires_grad
    _close(ember.autograd.grad(ge.sum(), er)[0], torch.autograd.grad(gt.sum(), tr)[0])
    w_e, w_t = _pair(4, seed=3)
    w_e.requires_grad_()
    w_t.requires_grad_()
    _close(grad(lambda x: (x * w_e).sum())(e), tf.grad(lambda x: (x * w_t).sum())(t))


def test_vjp_jvp_linearize():
    e, t = _pair(2, 3)
    f = lambda m: (lambda x: (m.sin(x) @ x.T, x.exp()))     # noqa: E731
    oe, fe = vjp(f(ember), e)
    ot, ft = tf.vjp(f(torch), t)
    _close(oe, ot)
    (ce1, ct1), (ce2, ct2) = _pair(2, 2, seed=4), _pair(2, 3, seed=5)
    _close(fe((ce1, ce2)), ft((ct1, ct2)))
    _close(fe((ce1, ce2)), ft((ct1, ct2)))          # callable twice
    ve, vt = _pair(2, 3, seed=6)
    _close(jvp(f(ember), (e,), (ve,)), tf.jvp(f(torch), (t,), (vt,)))
    _close(jvp(lambda x: (x.sum(), x), (e,), (ve,), has_aux=True),
           tf.jvp(lambda x: (x.sum(), x), (t,), (vt,), has_aux=True))
    oe, le = linearize(lambda x: x.sin() * x, e)
    ot, lt = tf.linearize(lambda x: x.sin() * x, t)
    _close(oe, ot)
    _close(le(ve), lt(vt))


def test_forward_ad_matches_torch():
    (e, t), (ve, vt) = _pair(3), _pair(3, seed=1)
    with fwAD.dual_level(), tfwAD.dual_level():
        de, dt = fwAD.make_dual(e, ve), tfwAD.make_dual(t, vt)
        for fn in (lambda m, d: m.sin(d) * d, lambda m, d: (d @ d) * d.exp(),
                   lambda m, d: m.cumsum(d, 0).max()):
            ue, ut = fwAD.unpack_dual(fn(ember, de)), tfwAD.unpack_dual(fn(torch, dt))
            assert type(ue).__name__ == "UnpackedDualTensor" and ue._fields == ut._fields
            np.testing.assert_allclose(ue.primal.detach().numpy(), ut.primal.numpy())
            np.testing.assert_allclose(ue.tangent.numpy(), ut.tangent.numpy(), rtol=1e-10)
        np.testing.assert_allclose(fwAD.unpack_dual(de).tangent.numpy(), vt.numpy())
        assert fwAD.unpack_dual(e * 2).tangent is None
    assert fwAD.unpack_dual(de).tangent is None     # outside the level


def test_jacfwd_equals_jacrev_on_mlp():
    ew, tw = _pair(4, 3)
    ex, tx = _pair(5, 3, seed=1)
    f = lambda m: (lambda w, x: m.tanh(x @ w.T).sum(0))    # noqa: E731
    je, jt = jacfwd(f(ember))(ew, ex), tf.jacrev(f(torch))(tw, tx)
    _close(je, jt)
    _close(jacrev(f(ember))(ew, ex), jt)


def _lin_pair():
    tl = torch.nn.Linear(3, 2).double()
    el = ember.nn.Linear(3, 2).double()
    el.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tl.state_dict().items()})
    return el, tl


def test_functional_call_and_per_sample_grads():
    el, tl = _lin_pair()
    (ex, tx), (ey, ty) = _pair(6, 3), _pair(6, 2, seed=2)
    pe = {k: v.detach() for k, v in el.named_parameters()}
    pt = {k: v.detach() for k, v in tl.named_parameters()}

    def loss(mod, m, lin):
        return lambda p, x, y: m.nn.functional.mse_loss(mod(lin, p, (x,)), y)
    _close(grad(loss(functional_call, ember, el))(pe, ex, ey),
           tf.grad(loss(tf.functional_call, torch, tl))(pt, tx, ty))
    ge = vmap(grad(loss(functional_call, ember, el)), in_dims=(None, 0, 0))(pe, ex, ey)
    gt = tf.vmap(tf.grad(loss(tf.functional_call, torch, tl)), in_dims=(None, 0, 0))(pt, tx, ty)
    _close(ge, gt)
    assert type(el.weight).__name__ == "Parameter"      # restored
    with pytest.raises(RuntimeError, match="Missing key"):
        functional_call(el, {"weight": pe["weight"]}, ex, strict=True)
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        functional_call(el, ({"weight": pe["weight"]}, {"weight": pe["weight"]}), (ex,))
    _same_error(lambda: functional_call(el, {"weight": ember.ones(4, 4, dtype=ember.float64)},
                                        (ex,)),
                lambda: tf.functional_call(tl, {"weight": torch.ones(4, 4, dtype=torch.float64)},
                                           (tx,)))
    assert el.weight.shape == (2, 3)                    # restored after the error


def test_stack_module_state_ensemble():
    pairs = [_lin_pair() for _ in range(3)]
    pe, be = stack_module_state([p[0] for p in pairs])
    pt, bt = tf.stack_module_state([p[1] for p in pairs])
    _close(pe, pt)
    assert pe["weight"].is_leaf and be == {} == bt
    ex, tx = _pair(4, 3)
    oe = vmap(lambda p, x: functional_call(pairs[0][0], p, (x,)), in_dims=(0, None))(pe, ex)
    ot = tf.vmap(lambda p, x: tf.functional_call(pairs[0][1], p, (x,)), in_dims=(0, None))(pt, tx)
    _close(oe.detach(), ot.detach())
    with pytest.raises(RuntimeError, match="at least one model"):
        stack_module_state([])


def test_vmap_dims_and_nesting():
    (ea, ta), (eb, tb) = _pair(2, 3, 4), _pair(4, 3, seed=1)
    cases = [
        (lambda m: lambda x, y: x @ y, (1, None), 0),
        (lambda m: lambda x, y: (x @ y).sum(0), (0, None), -1),
        (lambda m: lambda x, y: (x.sum(), y * 2), (2, 0), (0, 1)),
        (lambda m: lambda x, y: {"a": x.T, "b": [y]}, (1, 1), 0),
    ]
    for f, ind, outd in cases:
        _close(vmap(f(ember), in_dims=ind, out_dims=outd)(ea, eb),
               tf.vmap(f(torch), in_dims=ind, out_dims=outd)(ta, tb))
    inner = lambda x, y: (x * y).sum()     # noqa: E731
    _close(vmap(vmap(inner, in_dims=(0, None)), in_dims=(None, 0))(eb, eb[0]),
           tf.vmap(tf.vmap(inner, in_dims=(0, None)), in_dims=(None, 0))(tb, tb[0]))
    _close(vmap(lambda x: x * 2)(ember.zeros(0, 3, dtype=ember.float64)),
           tf.vmap(lambda x: x * 2)(torch.zeros(0, 3, dtype=torch.float64)))


def _same_error(fe, ft):
    with pytest.raises(Exception) as te:
        ft()
    with pytest.raises(type(te.value)) as ee:
        fe()
    assert str(ee.value).replace("torch", "ember") == str(te.value).replace("torch", "ember") \
        or str(te.value).split(".")[0] in str(ee.value)


def test_errors_match_torch():
    e, t = _pair(3)
    for name in ("grad", "jacrev", "jacfwd"):
        fe, ft = globals()[name], getattr(tf, name)
        _same_error(lambda: fe(lambda x: 1)(e), lambda: ft(lambda x: 1)(t))
    _same_error(lambda: grad(lambda x: x)(e), lambda: tf.grad(lambda x: x)(t))
    _same_error(lambda: grad(lambda x: x.sum(), argnums=1)(e),
                lambda: tf.grad(lambda x: x.sum(), argnums=1)(t))
    _same_error(lambda: grad(lambda x: x.sum(), has_aux=True)(e),
                lambda: tf.grad(lambda x: x.sum(), has_aux=True)(t))
    _same_error(lambda: grad(lambda x: x.sum())(ember.arange(3)),
                lambda: tf.grad(lambda x: x.sum())(torch.arange(3)))
    _same_error(lambda: grad(lambda x: x)(3.0), lambda: tf.grad(lambda x: x)(3.0))
    _same_error(lambda: vjp(lambda x: x * 2, e)[1](ember.ones(2)),
                lambda: tf.vjp(lambda x: x * 2, t)[1](torch.ones(2)))
    _same_error(lambda: vjp(lambda x: x * 2, e)[1]((ember.ones(3),)),
                lambda: tf.vjp(lambda x: x * 2, t)[1]((torch.ones(3),)))
    _same_error(lambda: jvp(lambda x: x, e, (e,)), lambda: tf.jvp(lambda x: x, t, (t,)))
    _same_error(lambda: jvp(lambda x: x, (e,), (e, e)), lambda: tf.jvp(lambda x: x, (t,), (t, t)))
    _same_error(lambda: jvp(lambda x: x, (e,), (ember.ones(2),)),
                lambda: tf.jvp(lambda x: x, (t,), (torch.ones(2),)))
    _same_error(lambda: jacfwd(lambda x: x)(ember.arange(3)),
                lambda: tf.jacfwd(lambda x: x)(torch.arange(3)))
    _same_error(lambda: jacrev(lambda x: x, chunk_size=0), lambda: tf.jacrev(lambda x: x,
                                                                             chunk_size=0))
    with fwAD.dual_level(), tfwAD.dual_level():
        _same_error(lambda: fwAD.make_dual(e, ember.ones(2)),
                    lambda: tfwAD.make_dual(t, torch.ones(2)))
        _same_error(lambda: fwAD.make_dual(ember.arange(3), ember.arange(3)),
                    lambda: tfwAD.make_dual(torch.arange(3), torch.arange(3)))
        _same_error(fwAD.enter_dual_level, tfwAD.enter_dual_level)
    _same_error(lambda: fwAD.make_dual(e, e), lambda: tfwAD.make_dual(t, t))


def test_vmap_errors_match_torch():
    (e, t), (e2, t2) = _pair(3), _pair(2, 3)
    e3, t3 = _pair(3, 3)
    cases = [
        (lambda v, m: v(lambda x, y: x + y), (e2, e3), (t2, t3)),
        (lambda v, m: v(lambda x: x, in_dims=2), (e2,), (t2,)),
        (lambda v, m: v(lambda x, y: x, in_dims=(0, 0)), (e2, 3), (t2, 3)),
        (lambda v, m: v(lambda x, y: x, in_dims=(0,)), (e2, e2), (t2, t2)),
        (lambda v, m: v(lambda x: x, in_dims=[0]), (e2,), (t2,)),
        (lambda v, m: v(lambda x: x, in_dims=(None,)), (e2,), (t2,)),
        (lambda v, m: v(lambda x: 3), (e2,), (t2,)),
        (lambda v, m: v(lambda x: x, out_dims=None), (e2,), (t2,)),
        (lambda v, m: v(lambda x: (x, x), out_dims=(0, 1, 2)), (e2,), (t2,)),
        (lambda v, m: v(lambda x: x, out_dims=3), (e2,), (t2,)),
        (lambda v, m: v(lambda x: x.sum().item()), (e2,), (t2,)),
        (lambda v, m: v(lambda x: float(x.sum())), (e2,), (t2,)),
        (lambda v, m: v(lambda x: x + m.rand(3)), (e2,), (t2,)),
        (lambda v, m: v(lambda x: m.nonzero(x > 0)), (ember.tensor([[1.0, -1.0], [1.0, 1.0]]),),
         (torch.tensor([[1.0, -1.0], [1.0, 1.0]]),)),     # (raised when the shapes differ)
        (lambda v, m: v(lambda: None), (), ()),
    ]
    for make, ae, at in cases:
        fe, ft = make(vmap, ember), make(tf.vmap, torch)
        _same_error(lambda: fe(*ae), lambda: ft(*at))
    _same_error(lambda: vmap(lambda x: x, randomness="foo"),
                lambda: tf.vmap(lambda x: x, randomness="foo"))
    r = vmap(lambda x: ember.rand(3), randomness="same")(e2)
    assert ember.equal(r[0], r[1])
    r = vmap(lambda x: ember.rand(3), randomness="different")(e2)
    assert not ember.equal(r[0], r[1])
    assert e.sum().item() == pytest.approx(float(t.sum()))     # the guard is gone after vmap
