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


@pytest.mark.parametrize("make, shape", [
    (lambda: nn.Sequential(nn.Linear(5, 4), nn.BatchNorm1d(4)), (6, 5)),
    (lambda: nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3, momentum=0.3), nn.ReLU()),
     (2, 2, 6, 6)),
])
def test_batchnorm_train_compiles(make, shape):
    # running statistics and num_batches_tracked are updated in place by program steps
    cm = _check(make, _randn(*shape), steps=5)
    assert _programs(cm), cm._compiled.records[-1][0].breaks
    assert [m.num_batches_tracked.item() for m in cm.modules()
            if isinstance(m, nn.modules.normalization._BatchNorm)] == [5]


def test_batchnorm_functional_train_and_cumulative():
    # F.batch_norm with running stats compiles; momentum=None reads the counter: eager
    def f(x, rm, rv):
        return nn.functional.batch_norm(x, rm, rv, training=True, momentum=0.2) * 2
    cf = compile(f)
    stats = [ember.zeros(3), ember.ones(3)], [ember.zeros(3), ember.ones(3)]
    for i in range(4):
        x = _randn(4, 3)(i)[0]
        np.testing.assert_array_equal(cf(x, *stats[0]).numpy(), f(x, *stats[1]).numpy())
        for a, b in zip(*stats):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert cf._ember_compiled.cache and all(
        e.program is not None for e in cf._ember_compiled.cache.values())
    _check(lambda: nn.BatchNorm1d(3, momentum=None), _randn(5, 3))


def test_random_functions_replay_generator_stream():
    def f(x):
        noise = ember.randn_like(x) * 0.1 + ember.rand(3)
        keep = ember.empty_like(x).bernoulli_(0.7)
        return (x + noise) * keep + ember.randn(3, generator=g) + x.new_empty(3).uniform_()
    g = ember.Generator().manual_seed(3)
    cf = compile(f, fullgraph=True)
    x = ember.ones(3)
    outs = []
    for fn in (f, cf):
        ember.manual_seed(5)
        g.manual_seed(3)
        outs.append([fn(x).numpy().copy() for _ in range(5)])
    np.testing.assert_array_equal(np.array(outs[0]), np.array(outs[1]))
    assert cf._ember_compiled.cache and all(
        e.program is not None for e in cf._ember_compiled.cache.values())


def test_break_at_the_end_keeps_the_program():
    # torch's split: the ops before ``.item()`` (and ``backward()``) are one program
    ember.manual_seed(0)
    m = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, 1))
    m2 = copy.deepcopy(m)

    def make(mod, log):
        def step(x):
            loss = mod(x).pow(2).mean()
            loss.backward()
            log.append(loss.item())
            return loss
        return step
    logs = [], []
    fns = make(m, logs[0]), compile(make(m2, logs[1]))
    for i in range(5):
        x = _randn(6, 5)(i)[0]
        outs = []
        for fn, mod in zip(fns, (m, m2)):
            mod.zero_grad()
            ember.manual_seed(10 + i)
            outs.append((fn(x).detach().numpy(), _grads(mod.parameters())))
        _same(*outs)
    assert logs[0] == logs[1]
    progs = [e.program for e in fns[1]._ember_compiled.cache.values()]
    assert progs[0] is not None and progs[0].prefix == 10
    ex = explain(make(m2, []), x)
    assert ex.graph_count == 1 and ex.graph_break_count == 1 and ex.op_count == 10


def test_break_in_the_middle_then_eager():
    def f(x, w):
        y = (x * w).tanh()
        scale = float(y.abs().max())          # a Python value: the program ends here
        return (y / scale).sum()
    w = ember.randn(4, requires_grad=True)
    cf = compile(f)
    for i in range(4):
        x = _randn(4)(i)[0]
        out = cf(x, w)
        out.backward()
        g = w.grad.numpy().copy()
        w.grad = None
        ref = f(x, w)
        ref.backward()
        np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
        np.testing.assert_array_equal(g, w.grad.numpy())
        w.grad = None
    prog = [e.program for e in cf._ember_compiled.cache.values()][0]
    assert prog is not None and prog.prefix == 4      # mul, tanh, abs, max


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
    assert ex.graph_count == 1 and ex.graph_break_count == 1     # (the ops before the break)
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


def _program_of(f):
    return [e.program for e in f._ember_compiled.cache.values() if e.program is not None][0]


def test_array_level_steps_bit_for_bit():
    # W2's shape of work and broadcasting binary ops: every step runs as an array expression
    gen = ember.Generator().manual_seed(0)
    w1 = ember.randn(13, 50, generator=gen, requires_grad=True)
    w2 = ember.randn(50, 1, generator=gen, requires_grad=True)
    b = ember.randn(50, generator=gen, requires_grad=True)

    def f(X, y):
        h = (X.mm(w1) + b).clamp(min=0) * 0.5
        e = h.mm(w2) - y
        return e.pow(2).sum() + (h * b).mean() - (y - 1.5 * e).mean()
    cf = compile(f)
    for i in range(4):
        X, y = _randn(100, 13)(i)[0], _randn(100, 1)(i + 9)[0]
        res = []
        for fn in (f, cf):
            for t in (w1, w2, b):
                t.grad = None
            out = fn(X, y)
            out.backward()
            res.append([out.detach().numpy()] + _grads([w1, w2, b]))
        _same(*res)
    prog = _program_of(cf)
    assert len(prog.lowered) == len(prog.steps), prog.source
    assert "c0 = " not in prog.source


def test_lowering_checked_against_the_recorded_step(monkeypatch):
    # a lowering whose numbers differ from the op's is not used (the op runs as recorded)
    from ember.compiler import _lower
    bad = _lower.Lowered("{0} * 1.0000001", {}, lambda g, a, out: (g,), False, False)
    monkeypatch.setitem(_lower._TABLE, "Relu", lambda *a: bad)
    x = ember.randn(8, requires_grad=True)
    cf = compile(lambda x: (x * 3).relu().sum())
    for _ in range(4):
        out = cf(x)
    prog = _program_of(cf)
    assert 1 not in prog.lowered and 0 in prog.lowered
    np.testing.assert_array_equal(out.detach().numpy(), (x * 3).relu().sum().detach().numpy())


def test_two_graphs_alive_at_once():
    x = ember.randn(6, requires_grad=True)
    cf = compile(lambda x, s: ((x * s).relu() * x).sum())
    for _ in range(3):
        cf(x, 2.0)
    a, b = cf(x, 2.0), cf(x, 2.0)
    a_value = a.detach().numpy().copy()
    assert _program_of(cf).n_buffers == 2     # (x * s and the product: reused every call)
    cf(x * 3, 2.0)
    np.testing.assert_array_equal(a.detach().numpy(), a_value)
    b.backward()
    gb = x.grad.numpy().copy()
    x.grad = None
    a.backward()
    np.testing.assert_array_equal(gb, x.grad.numpy())
    x.grad = None
    ((x * 2.0).relu() * x).sum().backward()
    np.testing.assert_array_equal(gb, x.grad.numpy())


@pytest.mark.parametrize("make", [
    lambda p: ember.optim.SGD(p, lr=0.1, momentum=0.9),
    lambda p: ember.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
    lambda p: ember.optim.SGD(p, lr=0.1, maximize=True),
    lambda p: ember.optim.Adam(p, lr=0.01),
    lambda p: ember.optim.Adam(p, lr=0.01, weight_decay=0.1, maximize=True),
    lambda p: ember.optim.AdamW(p, lr=0.01),
    lambda p: ember.optim.Adam(p, lr=0.01, amsgrad=True),      # (eager: not fused)
    lambda p: ember.optim.RMSprop(p, lr=0.01),                  # (eager: not fused)
])
def test_compiled_optimizer_step_bit_for_bit(make):
    ember.manual_seed(0)
    m = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
    m2 = copy.deepcopy(m)
    o1, o2 = make(m.parameters()), make(m2.parameters())
    step = compile(o2.step)
    for i in range(6):
        x = _randn(4, 5)(i)[0]
        if i == 3:      # a learning-rate change is read at each step
            for o in (o1, o2):
                o.param_groups[0]["lr"] *= 0.5
        for mod, fn in ((m, o1.step), (m2, o2.step if i == 4 else step)):
            mod.zero_grad()
            mod(x).pow(2).mean().backward()
            fn()
    _same([p.detach().numpy() for p in m.parameters()],
          [p.detach().numpy() for p in m2.parameters()])
    s1, s2 = o1.state_dict()["state"], o2.state_dict()["state"]
    for k in s1:
        for name in s1[k]:
            np.testing.assert_array_equal(np.asarray(s1[k][name].numpy()),
                                          np.asarray(s2[k][name].numpy()))


def test_compiled_optimizer_after_load_state_dict():
    ember.manual_seed(0)
    m = nn.Linear(3, 2)
    opt = ember.optim.Adam(m.parameters(), lr=0.1)
    step = compile(opt.step)
    x = ember.ones(4, 3)
    for _ in range(3):
        m.zero_grad()
        m(x).sum().backward()
        step()
    sd = copy.deepcopy(opt.state_dict())
    ref = copy.deepcopy(m)
    ref_opt = ember.optim.Adam(ref.parameters(), lr=0.1)
    ref_opt.load_state_dict(sd)
    opt.load_state_dict(sd)       # new state tensors: the flat buffers are made again
    for mod, fn in ((m, step), (ref, ref_opt.step)):
        mod.zero_grad()
        mod(x).sum().backward()
        fn()
    _same([p.detach().numpy() for p in m.parameters()],
          [p.detach().numpy() for p in ref.parameters()])


def test_mlp_program_fully_lowered():
    # W3's model: Linear (t, addmm) and ReLU steps all run as array expressions
    cm = _check(lambda: nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3)),
                _randn(5, 6), steps=4, opt=lambda p: ember.optim.SGD(p, lr=0.1, momentum=0.9))
    prog = _programs(cm)[0].program
    assert len(prog.lowered) == len(prog.steps) == 5, prog.source
