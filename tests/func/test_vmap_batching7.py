"""vmap's batching rules (issue 19) against torch.func.vmap: values, shapes, dtypes, errors,
and that functions whose ops all have rules run ONCE over the whole batch."""
import numpy as np
import pytest

import ember
from ember.func import functional_call, grad, grad_and_value, hessian, jacrev, vmap

torch = pytest.importorskip("torch")
tf = torch.func


def _pair(*shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    return ember.tensor(a), torch.tensor(a)


def _close(e, t, tol=1e-10):
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor)
        assert tuple(e.shape) == tuple(t.shape)
        assert str(e.dtype) == str(t.dtype)
        assert e.requires_grad == t.requires_grad
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)
    elif isinstance(t, (tuple, list)):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            _close(a, b, tol)
    elif isinstance(t, dict):
        assert list(e) == list(t)
        for k in t:
            _close(e[k], t[k], tol)
    else:
        assert e == t


class _Counted:
    """``fn`` that counts its calls (1 for a batched run, more when it ran per sample)."""

    def __init__(self, fn):
        self.fn = fn
        self.calls = 0
        self.__name__ = "f"

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.fn(*args, **kwargs)


def _ops(T):
    F = T.nn.functional
    return {
        "elementwise": lambda x, w: T.sin(x) * 2 + x.exp() / (1 + x ** 2) - T.tanh(x).sigmoid(),
        "broadcast": lambda x, w: x.unsqueeze(-1) * w[0] + w.sum(),
        "matmul_sum": lambda x, w: x @ w + x.sum(),
        "mv_dot": lambda x, w: T.mv(w.T, x) + T.dot(x, w[:, 0]),
        "mm_bmm": lambda x, w: T.mm(x.unsqueeze(0), w) + T.bmm(x.view(1, 1, 3), w.unsqueeze(0)),
        "matmul_nd": lambda x, w: T.matmul(T.stack([w.T, w.T]), x),
        "linear_relu": lambda x, w: F.relu(F.linear(x, w.T, w[0])),
        "addmm": lambda x, w: T.addmm(w[0], x.unsqueeze(0), w, beta=0.5, alpha=2.0),
        "reductions": lambda x, w: x.mean() + x.amax(0) + x.max() + x.sum(0, keepdim=True),
        "max_dim": lambda x, w: T.outer(x, x).max(1).values + T.outer(x, x).min(-1).values,
        "softmax": lambda x, w: F.softmax(x @ w, -1) + F.log_softmax(x @ w, dim=0),
        "shape": lambda x, w: T.outer(x, x).T.reshape(-1)[1:7].view(2, 3).transpose(0, 1)
        .permute(1, 0).unsqueeze(1).squeeze(1).expand(4, 2, 3).flatten(),
        "index": lambda x, w: x[None, 1:] + x[..., 0] + x.select(0, 2) + x.narrow(0, 0, 2).sum(),
        "cat_stack": lambda x, w: T.cat([x, w[:, 0], x * 2], 0) + T.stack([x, w[:, 1], x], 1).sum(1)
        .repeat(3),
        "where_compare": lambda x, w: T.where(x > 0, x, x * 0.5) + (x <= 0.1).to(x.dtype),
        "argmax_any": lambda x, w: x.argmax() + (x > 0).any().long() + (x @ w).argmin(-1),
        "clone_detach": lambda x, w: x.clone().detach() * w[:, 0],
    }


_E_OPS, _T_OPS = _ops(ember), _ops(torch)


@pytest.mark.parametrize("name", sorted(_E_OPS))
def test_rules_match_torch_in_one_call(name):
    xe, xt = _pair(6, 3, seed=1)
    we, wt = _pair(3, 4, seed=2)
    f = _Counted(_E_OPS[name])
    _close(vmap(f, in_dims=(0, None))(xe, we), tf.vmap(_T_OPS[name], in_dims=(0, None))(xt, wt))
    assert f.calls == 1, "%s ran per sample" % name


def test_batched_both_operands_and_in_dims():
    xe, xt = _pair(3, 5, seed=3)
    ye, yt = _pair(5, 3, 2, seed=4)
    f = _Counted(lambda x, y: x @ y)
    _close(vmap(f, in_dims=(1, 0))(xe, ye), tf.vmap(lambda x, y: x @ y, in_dims=(1, 0))(xt, yt))
    assert f.calls == 1
    # negative in_dims and out_dims, an unbatched output expanded, tuple out_dims
    # NOTE: out_dim 0 for the unbatched output: torch inserts the batch size into the shape
    # at out_dim but expands right-aligned, so other out_dims put the batch first anyway (or
    # raise); ember puts it at out_dim, as for batched outputs.
    g = _Counted(lambda x, y: (x.sum(), y * 2, x.unsqueeze(0)))
    _close(vmap(g, in_dims=(-1, None), out_dims=(-1, 0, -1))(xe, ye),
           tf.vmap(lambda x, y: (x.sum(), y * 2, x.unsqueeze(0)), in_dims=(-1, None),
                   out_dims=(-1, 0, -1))(xt, yt))
    assert g.calls == 1


def test_nested_pytree_in_dims():
    ae, at = _pair(4, 3, seed=5)
    be, bt = _pair(3, seed=6)
    ce, ct = _pair(3, 4, seed=7)

    def fn(T):
        return lambda d, pair: d["a"] * d["b"] + pair[0] - pair[1].sum()
    f = _Counted(fn(ember))
    dims = ({"a": 0, "b": None}, (None, 1))
    _close(vmap(f, in_dims=dims)({"a": ae, "b": be}, (be, ce)),
           tf.vmap(fn(torch), in_dims=dims)({"a": at, "b": bt}, (bt, ct)))
    assert f.calls == 1


def test_nested_vmap_runs_batched():
    xe, xt = _pair(4, 3, seed=8)
    ye, yt = _pair(5, 3, seed=9)
    f = _Counted(lambda a, b: (a * b).sum() + a @ b)
    inner = vmap(f, in_dims=(None, 0))
    _close(vmap(inner, in_dims=(0, None))(xe, ye),
           tf.vmap(tf.vmap(lambda a, b: (a * b).sum() + a @ b, in_dims=(None, 0)),
                   in_dims=(0, None))(xt, yt))
    assert f.calls == 1
    ze, zt = _pair(2, 3, 4, seed=10)
    g = _Counted(lambda a: a.softmax(0) * a.max())
    _close(vmap(vmap(g, in_dims=1), in_dims=0, out_dims=1)(ze),
           tf.vmap(tf.vmap(lambda a: a.softmax(0) * a.max(), in_dims=1), out_dims=1)(zt))
    assert g.calls == 1


def _mlp(T):
    F = T.nn.functional

    def loss(params, x, y):
        w1, b1, w2, b2 = params
        h = F.relu(F.linear(x, w1, b1))
        return ((F.linear(h, w2, b2) - y) ** 2).mean()
    return loss


def test_per_sample_grads_of_an_mlp_one_backward():
    params = [_pair(8, 3, seed=11), _pair(8, seed=12), _pair(2, 8, seed=13), _pair(2, seed=14)]
    pe, pt = [p[0] for p in params], [p[1] for p in params]
    xe, xt = _pair(16, 3, seed=15)
    ye, yt = _pair(16, 2, seed=16)
    f = _Counted(_mlp(ember))
    _close(vmap(grad(f), in_dims=(None, 0, 0))(pe, xe, ye),
           tf.vmap(tf.grad(_mlp(torch)), in_dims=(None, 0, 0))(pt, xt, yt))
    assert f.calls == 1
    # grad_and_value, argnums over a batched argument, has_aux
    h = _Counted(lambda p, x, y: (_mlp(ember)(p, x, y), x.sum()))
    _close(vmap(grad_and_value(h, argnums=(0, 1), has_aux=True), in_dims=(None, 0, 0))(
        pe, xe, ye),
        tf.vmap(tf.grad_and_value(lambda p, x, y: (_mlp(torch)(p, x, y), x.sum()),
                                  argnums=(0, 1), has_aux=True), in_dims=(None, 0, 0))(pt, xt, yt))
    assert h.calls == 1


def test_per_sample_grads_with_functional_call():
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(3, 5), ember.nn.Tanh(), ember.nn.Linear(5, 2))
    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2))
    tmodel.load_state_dict({k: torch.tensor(v.detach().numpy())
                            for k, v in model.state_dict().items()})
    xe, xt = _pair(6, 3, seed=17)
    xe, xt = xe.float(), xt.float()
    ye, yt = ember.tensor([0, 1, 1, 0, 1, 0]), torch.tensor([0, 1, 1, 0, 1, 0])

    def loss(T, fc, m):
        return lambda p, x, y: T.nn.functional.cross_entropy(fc(m, p, (x.unsqueeze(0),)),
                                                              y.unsqueeze(0))
    f = _Counted(loss(ember, functional_call, model))
    pe = {k: v.detach() for k, v in model.named_parameters()}
    pt = {k: v.detach() for k, v in tmodel.named_parameters()}
    _close(vmap(grad(f), in_dims=(None, 0, 0))(pe, xe, ye),
           tf.vmap(tf.grad(loss(torch, tf.functional_call, tmodel)), in_dims=(None, 0, 0))(
               pt, xt, yt), tol=1e-6)
    assert f.calls == 1


def test_backward_through_batched_vmap():
    xe, xt = _pair(5, 3, seed=18)
    we, wt = _pair(4, 3, seed=19)
    xe.requires_grad_()
    xt.requires_grad_()
    oe = vmap(lambda x: (x.sin() @ we.T).tanh())(xe)
    ot = tf.vmap(lambda x: (x.sin() @ wt.T).tanh())(xt)
    _close(oe, ot)
    ge, gt = _pair(5, 4, seed=20)
    oe.backward(ge)
    ot.backward(gt)
    _close(xe.grad, xt.grad)


@pytest.mark.parametrize("name", ["jacrev", "hessian", "grad_grad", "cumsum", "sort",
                                  "control_flow", "inplace"])
def test_fallbacks_stay_correct(name):
    xe, xt = _pair(4, 3, seed=21)
    cases = {
        "jacrev": (lambda a: jacrev(lambda v: v.sin() * v.sum())(a),
                   lambda a: tf.jacrev(lambda v: v.sin() * v.sum())(a)),
        "hessian": (lambda a: hessian(lambda v: (v ** 3).sum())(a),
                    lambda a: tf.hessian(lambda v: (v ** 3).sum())(a)),
        "grad_grad": (lambda a: grad(grad(lambda v: (v ** 3).sum()))(a.sum()),
                      lambda a: tf.grad(tf.grad(lambda v: (v ** 3).sum()))(a.sum())),
        "cumsum": (lambda a: a.cumsum(0) * 2, lambda a: a.cumsum(0) * 2),
        "sort": (lambda a: a.sort().values, lambda a: a.sort().values),
        "inplace": (lambda a: a.clone().mul_(2).relu_(), lambda a: a.clone().mul_(2).relu_()),
    }
    if name == "control_flow":
        # a deliberate difference: torch refuses data-dependent control flow
        out = vmap(lambda a: a * 2 if a.sum() > 0 else -a)(xe)
        ref = torch.stack([r * 2 if r.sum() > 0 else -r for r in xt])
        _close(out, ref)
        return
    fe, ft = cases[name]
    _close(vmap(fe)(xe), tf.vmap(ft)(xt))


def test_inplace_on_mapped_input_writes_through():
    xe, xt = _pair(4, 3, seed=22)
    vmap(lambda a: a.add_(1))(xe)
    tf.vmap(lambda a: a.add_(1))(xt)
    _close(xe, xt)


def test_randomness():
    x = ember.zeros(4, 3)
    with pytest.raises(RuntimeError) as e:
        vmap(lambda a: a + ember.rand(3))(x)
    with pytest.raises(RuntimeError) as t:
        tf.vmap(lambda a: a + torch.rand(3))(torch.zeros(4, 3))
    assert str(e.value) == str(t.value)
    same = vmap(lambda a: a + ember.rand(3), randomness="same")(x)
    assert all(bool(same[i].eq(same[0]).all()) for i in range(4))
    diff = vmap(lambda a: a + ember.rand(3), randomness="different")(x)
    assert not bool(diff[1].eq(diff[0]).all())
    drop = vmap(lambda a: ember.nn.functional.dropout(a + 1, 0.5), randomness="same")(
        ember.zeros(4, 40))
    assert all(bool(drop[i].eq(drop[0]).all()) for i in range(4))


def test_chunk_size_gives_the_same_values():
    xe, xt = _pair(7, 3, seed=23)
    _close(vmap(lambda a: a.exp().sum(), chunk_size=3)(xe),
           tf.vmap(lambda a: a.exp().sum(), chunk_size=3)(xt))


def _raises_like(fe, ft):
    with pytest.raises(Exception) as e:
        fe()
    with pytest.raises(Exception) as t:
        ft()
    assert type(e.value) is type(t.value)
    assert str(e.value).replace("ember", "torch") == str(t.value)


def test_errors_match_torch():
    xe, xt = _pair(4, 3, seed=24)
    ye, yt = _pair(5, 3, seed=25)

    def f(a, b):
        return a + b
    _raises_like(lambda: vmap(f)(xe, ye), lambda: tf.vmap(f)(xt, yt))
    _raises_like(lambda: vmap(f, in_dims=(0, 0, 0))(xe, xe),
                 lambda: tf.vmap(f, in_dims=(0, 0, 0))(xt, xt))
    _raises_like(lambda: vmap(f, in_dims=(0, 2))(xe, xe),
                 lambda: tf.vmap(f, in_dims=(0, 2))(xt, xt))

    def g(a):
        return a.sum(), 3
    _raises_like(lambda: vmap(g)(xe), lambda: tf.vmap(g)(xt))
    _raises_like(lambda: vmap(g, out_dims=(0, 0, 0))(xe),
                 lambda: tf.vmap(g, out_dims=(0, 0, 0))(xt))

    def h(a):
        return a * 2
    _raises_like(lambda: vmap(h, out_dims=None)(xe), lambda: tf.vmap(h, out_dims=None)(xt))


def test_shape_errors_inside_are_torchs():
    xe, xt = _pair(4, 3, seed=26)
    we, wt = _pair(4, 2, seed=27)
    _raises_like(lambda: vmap(lambda a: a @ we)(xe), lambda: tf.vmap(lambda a: a @ wt)(xt))
    _raises_like(lambda: vmap(lambda a: a.sum(3))(xe), lambda: tf.vmap(lambda a: a.sum(3))(xt))
    _raises_like(lambda: vmap(lambda a: a[5])(xe), lambda: tf.vmap(lambda a: a[5])(xt))
    # NOTE: ember checks view/expand/cat shapes per sample before batching, so its message
    # names the sample's shapes where torch's names the batched ones; the class is torch's
    with pytest.raises(RuntimeError, match="invalid for input of size 3"):
        vmap(lambda a: a.view(2, 2))(xe)


def _cnn(T):
    F = T.nn.functional

    def loss(p, x, y):
        h = F.relu(F.conv2d(x.unsqueeze(0), p[0], p[1], padding=1))
        h = F.conv1d(h.flatten(2), p[2], None, stride=2)
        return (h.mean() - y) ** 2
    return loss


def test_per_sample_grads_of_a_cnn_one_call():
    params = [_pair(4, 2, 3, 3, seed=30), _pair(4, seed=31), _pair(3, 4, 3, seed=32)]
    pe, pt = [p[0] for p in params], [p[1] for p in params]
    xe, xt = _pair(5, 2, 5, 5, seed=33)
    ye, yt = _pair(5, seed=34)
    f = _Counted(_cnn(ember))
    _close(vmap(grad(f), in_dims=(None, 0, 0))(pe, xe, ye),
           tf.vmap(tf.grad(_cnn(torch)), in_dims=(None, 0, 0))(pt, xt, yt))
    assert f.calls == 1


@pytest.mark.parametrize("in_dims", [(0, None), (0, 0), (None, 0)])
def test_conv_with_batched_input_or_weight(in_dims):
    xe, xt = _pair(3, 2, 2, 4, 4, seed=35)
    we, wt = _pair(3, 4, 1, 3, 3, seed=36)
    xe, xt = (xe[0], xt[0]) if in_dims[0] is None else (xe, xt)
    we, wt = (we[0], wt[0]) if in_dims[1] is None else (we, wt)
    f = _Counted(lambda x, w: ember.nn.functional.conv2d(x, w, groups=2, padding=1))
    _close(vmap(f, in_dims=in_dims)(xe, we),
           tf.vmap(lambda x, w: torch.nn.functional.conv2d(x, w, groups=2, padding=1),
                   in_dims=in_dims)(xt, wt))
    assert f.calls == 1
