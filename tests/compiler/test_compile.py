"""ember.compile: replays give bit-for-bit eager results; guards, graph breaks, torch's API."""
import copy
import warnings

import numpy as np
import pytest

import ember
from ember import nn
from ember._dynamo.exc import Unsupported
from ember.compiler import OptimizedModule, compile, explain


def _grads(params):
    return [None if p.grad is None else p.grad.numpy().copy() for p in params]


def _run(model, make_inputs, loss_fn, steps=4, opt=None, grad=True):
    """Outputs, losses and gradients of ``steps`` calls (new inputs each call)."""
    ember.manual_seed(1)
    params = list(model.parameters())
    res = []
    for i in range(steps):
        args = make_inputs(i)
        for p in params:
            p.grad = None
        if grad:
            out = model(*args)
            loss = loss_fn(out, i)
            loss.backward()
            o = out[0] if isinstance(out, tuple) else out
            res.append((o.detach().numpy().copy(), loss.detach().numpy().copy(),
                        _grads(params), [b.numpy().copy() for b in model.buffers()]))
            if opt is not None:
                opt.step()
        else:
            with ember.no_grad():
                out = model(*args)
            res.append((out.numpy().copy(),))
    return res


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if isinstance(x, (list, tuple)):
            _same(x, y)
        elif x is None:
            assert y is None
        else:
            assert x.dtype == y.dtype and x.shape == y.shape
            np.testing.assert_array_equal(x, y)


def _check(make_model, make_inputs, loss_fn=lambda out, i: out.float().pow(2).mean(),
           steps=4, opt=None, grad=True, train=True):
    ember.manual_seed(0)
    eager = make_model()
    compiled_src = copy.deepcopy(eager)
    eager.train(train)
    compiled_src.train(train)
    cm = compile(compiled_src)
    eo = opt(eager.parameters()) if opt else None
    co = opt(compiled_src.parameters()) if opt else None
    _same(_run(eager, make_inputs, loss_fn, steps, eo, grad),
          _run(cm, make_inputs, loss_fn, steps, co, grad))
    return cm


def _randn(*shape):
    def make(i):
        g = ember.Generator().manual_seed(100 + i)
        return (ember.randn(*shape, generator=g),)
    return make


def _programs(cm):
    return [e for e in cm._compiled.cache.values() if e.program is not None]


@pytest.mark.parametrize("make", [
    lambda: nn.Linear(5, 3),
    lambda: nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3), nn.Tanh()),
    lambda: nn.Sequential(nn.Linear(5, 8), nn.GELU(), nn.LayerNorm(8)),
])
def test_layers_replay_bit_for_bit(make):
    cm = _check(make, _randn(4, 5))
    assert _programs(cm), cm._compiled.records[-1][0].breaks


def test_conv_batchnorm_eval():
    cm = _check(lambda: nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU()),
                _randn(2, 2, 6, 6), train=False)
    assert _programs(cm)


def test_batchnorm_train_same_numbers():
    # running statistics are updated outside a recorded op: it runs eagerly, identically
    cm = _check(lambda: nn.Sequential(nn.Linear(5, 4), nn.BatchNorm1d(4)), _randn(6, 5))
    assert not _programs(cm)
    assert "in-place update" in cm._compiled.records[0][0].breaks[0][0]


@pytest.mark.parametrize("make, inputs", [
    (lambda: nn.MultiheadAttention(8, 2), lambda i: _randn(3, 2, 8)(i) * 3),
    (lambda: nn.LSTM(4, 5), _randn(3, 2, 4)),
])
def test_attention_and_lstm(make, inputs):
    _check(make, inputs, loss_fn=lambda out, i: out[0].pow(2).mean(), steps=3)


def test_dropout_fresh_random_numbers():
    _check(lambda: nn.Sequential(nn.Linear(5, 8), nn.Dropout(0.5)), _randn(4, 5))


def test_embedding_and_losses():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 4)
            self.fc = nn.Linear(4, 3)

        def forward(self, idx, target):
            h = self.fc(self.emb(idx))
            return nn.functional.cross_entropy(h, target) + \
                nn.functional.mse_loss(h, ember.zeros_like(h))

    def inputs(i):
        g = ember.Generator().manual_seed(i)
        return ember.randint(0, 10, (6,), generator=g), ember.randint(0, 3, (6,), generator=g)
    _check(M, inputs, loss_fn=lambda out, i: out)


@pytest.mark.parametrize("opt", [lambda p: ember.optim.SGD(p, lr=0.1, momentum=0.9),
                                 lambda p: ember.optim.Adam(p, lr=0.01)])
def test_training_with_optimizer(opt):
    cm = _check(lambda: nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1)),
                _randn(4, 5), steps=6, opt=opt)
    assert _programs(cm)


def test_no_grad_replay():
    cm = _check(lambda: nn.Sequential(nn.Linear(5, 8), nn.Tanh()), _randn(4, 5), grad=False)
    assert _programs(cm)


def test_shape_change_recompiles():
    ember.manual_seed(0)
    m = nn.Linear(5, 3)
    cm = compile(m)
    for n in (4, 4, 4, 7, 7, 7, 4):
        x = ember.randn(n, 5)
        np.testing.assert_array_equal(cm(x).detach().numpy(), m(x).detach().numpy())
    assert len(_programs(cm)) == 2


def test_module_mutation_detected():
    ember.manual_seed(0)
    m = nn.Sequential(nn.Linear(5, 3), nn.ReLU())
    cm = compile(m)
    x = ember.randn(2, 5)
    for _ in range(3):
        cm(x)
    m[0] = nn.Linear(5, 3)          # a replaced submodule
    np.testing.assert_array_equal(cm(x).detach().numpy(), m(x).detach().numpy())
    m[0].weight = nn.Parameter(ember.randn(3, 5))     # a new parameter
    np.testing.assert_array_equal(cm(x).detach().numpy(), m(x).detach().numpy())
    m.eval()
    np.testing.assert_array_equal(cm(x).detach().numpy(), m(x).detach().numpy())
    with ember.no_grad():
        m[0].weight.mul_(2)          # in place: the program reads the parameter at call time
    np.testing.assert_array_equal(cm(x).detach().numpy(), m(x).detach().numpy())


def test_compiled_function_node_and_replay():
    x = ember.randn(16, requires_grad=True)

    @compile
    def f(x):
        return ((x * 2 + 1).relu() * x).sum()
    for _ in range(3):
        out = f(x)
    assert type(out.grad_fn).__name__ == "CompiledFunctionBackward"
    out.backward()
    g = x.grad.numpy().copy()
    x.grad = None
    ((x * 2 + 1).relu() * x).sum().backward()
    np.testing.assert_array_equal(g, x.grad.numpy())
    with pytest.raises(RuntimeError, match="second time"):
        out.backward()


def test_graph_break_runs_eagerly_and_fullgraph_raises():
    def f(x):
        y = x * 2
        if y.sum() > 0:
            return y + 1
        return y - 1
    cf = compile(f)
    for s in (1.0, -1.0, 1.0, -1.0):
        x = ember.full((3,), s)
        np.testing.assert_array_equal(cf(x).numpy(), f(x).numpy())
    ex = explain(f, ember.ones(3))
    assert ex.graph_count == 0 and ex.graph_break_count == 1
    assert "generic_jump" in ex.break_reasons[0].reason
    with pytest.raises(Unsupported, match="if y.sum"):
        compile(f, fullgraph=True)(ember.ones(3))


@pytest.mark.parametrize("body", [lambda x: x.sum().item(), lambda x: x.tolist(),
                                  lambda x: print(x), lambda x: x[x > 0]])
def test_breaks(body, capsys):
    def f(x):
        y = x * 2
        body(y)
        return y
    cf = compile(f, fullgraph=True)
    with pytest.raises(Unsupported):
        for _ in range(2):      # (a tensor made outside ops shows on the second recording)
            cf(ember.ones(3))


def test_data_made_outside_ops_is_not_replayed():
    def f(x):
        mask = x > 0              # a comparison: no recorded op
        return x * mask
    cf = compile(f)
    for i in range(5):
        x = ember.randn(4, generator=ember.Generator().manual_seed(i % 2))
        np.testing.assert_array_equal(cf(x).numpy(), f(x).numpy())


def test_closure_parameters_read_at_call_time():
    w = ember.randn(3, requires_grad=True)

    @compile
    def f(x):
        return (x * w).sum()
    x = ember.ones(3)
    for _ in range(4):
        f(x).backward()
        with ember.no_grad():
            w.sub_(0.1 * w.grad)
        w.grad = None
    np.testing.assert_array_equal(f(x).detach().numpy(), (x * w).sum().detach().numpy())


def test_recompile_limit_warns():
    @compile
    def f(x):
        return x * 2
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for n in range(1, 12):
            assert f(ember.ones(n)).shape == (n,)
    assert any("recompile_limit" in str(m.message) for m in w)


def test_optimized_module_like_torch():
    torch = pytest.importorskip("torch")
    m = nn.Linear(2, 3)
    cm = compile(m)
    tm = torch.compile(torch.nn.Linear(2, 3), backend="eager")
    assert isinstance(cm, OptimizedModule) and cm._orig_mod is m
    assert list(cm.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in cm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert cm.in_features == 2
    assert compile(m, disable=True) is m

    @compile(fullgraph=True)
    def g(x):
        return x + 1
    assert g(ember.ones(1)).item() == 2.0


def test_double_backward_refused_as_torch():
    x = ember.randn(3, requires_grad=True)
    f = compile(lambda x: (x * 2).sin() * x)
    for _ in range(3):
        y = f(x)
    with pytest.raises(RuntimeError, match="double backward"):
        ember.autograd.grad(y.sum(), x, create_graph=True)
