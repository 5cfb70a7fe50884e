"""ember.compile's replay fast paths (guarded call, inlined backward, 0-d constants): results
bit for bit equal to eager ember, guards that fall back to recording when they fail."""
import numpy as np
import pytest

import ember
from ember.compiler import compile


def _bits(a):
    a = np.asarray(a)
    return a.dtype, a.shape, a.tobytes()


def _step(fn, inputs, grads=True):
    """Output(s) of ``fn`` and the inputs' gradients, as bytes."""
    for t in inputs:
        t.grad = None
    out = fn(*inputs)
    outs = out if isinstance(out, tuple) else (out,)
    res = [_bits(o.detach().numpy()) for o in outs]
    if grads:
        outs[0].sum().backward() if outs[0].dim() else outs[0].backward()
        res += [None if t.grad is None else _bits(t.grad.numpy()) for t in inputs]
    return res


def _same_as_eager(fn, make_inputs, calls=5, grads=True):
    cf = compile(fn)
    for i in range(calls):
        inputs = make_inputs(i)
        copies = [ember.tensor(t.detach().numpy().copy(), requires_grad=t.requires_grad)
                  for t in inputs]
        assert _step(cf, inputs, grads) == _step(fn, copies, grads), "call %d" % i
    return cf


def _rand(shape, dtype=np.float32, seed=0, requires_grad=True):
    arr = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    arr[..., 0] = 0.0      # (relu/clamp boundaries)
    return ember.tensor(arr, requires_grad=requires_grad)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_w1_chain_bits(dtype):
    def f(x):
        return ((x * 2 + 1).relu() * x).sum()
    cf = _same_as_eager(f, lambda i: (_rand(16, dtype, i),))
    assert cf._ember_compiled.fast is not None     # (the guarded call serves the replays)


def test_elementwise_family_bits():
    def f(x, y):
        a = (x - y) * 0.1 + x * y
        b = a.pow(2) - y
        return (b.clamp(min=-0.5, max=0.7) + x).mean()
    _same_as_eager(f, lambda i: (_rand((4, 5), seed=i), _rand((4, 5), seed=10 + i)))


def test_two_layer_bits():
    X = _rand((10, 4), requires_grad=False)
    y = _rand((10, 1), seed=3, requires_grad=False)

    def f(w1, w2):
        return (X.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
    _same_as_eager(f, lambda i: (_rand((4, 6), seed=i), _rand((6, 1), seed=5 + i)))


def test_value_used_twice_sums_in_eager_order():
    def f(x):
        a = x * 3.0
        return (a * x + a * 0.3 + x).sum()
    _same_as_eager(f, lambda i: (_rand(33, seed=i),))


def test_unlowered_step_between_lowered_ones():
    def f(x):
        return ((x * 2).sin() * x + 1).sum()
    _same_as_eager(f, lambda i: (_rand(8, seed=i),))


def test_second_output_without_gradient():
    def f(x):
        a = x * 2
        return a + 1, a * 3
    _same_as_eager(f, lambda i: (_rand(6, seed=i),))


def test_input_without_grad():
    def f(x, y):
        return (x * y + y).sum()
    _same_as_eager(f, lambda i: (_rand(5, seed=i), _rand(5, seed=i + 1, requires_grad=False)))


def test_guards_shape_dtype_requires_grad_and_grad_mode():
    def f(x):
        return ((x * 2 + 1).relu() * x).sum()
    cf = compile(f)
    x = _rand(16)
    for _ in range(3):
        cf(x)
    assert cf._ember_compiled.fast is not None
    for t in (_rand(7), _rand(16, np.float64), _rand(16, requires_grad=False), x.detach()):
        for _ in range(3):
            got = cf(t)
            want = f(t)
            assert _bits(got.detach().numpy()) == _bits(want.detach().numpy())
            assert got.requires_grad == want.requires_grad
    with ember.no_grad():
        got = cf(x)
    assert got.grad_fn is None and not got.requires_grad
    got = cf(x)
    assert type(got.grad_fn).__name__ == "CompiledFunctionBackward"
    x.grad = None
    got.backward()
    g = x.grad.numpy().copy()
    x.grad = None
    f(x).backward()
    assert _bits(g) == _bits(x.grad.numpy())


def test_closure_tensor_changing_shape_records_again():
    w = _rand(4, requires_grad=False)

    def f(x):
        return (x * w).sum()
    cf = compile(f)
    x = _rand(4, seed=1)
    for _ in range(3):
        cf(x)
    w.data = _rand(1, seed=2, requires_grad=False) + 0.5
    for _ in range(3):
        assert _bits(cf(x).detach().numpy()) == _bits(f(x).detach().numpy())


def test_node_reached_without_gradient_runs():
    def f(x):
        return x * 2, x * 3
    cf = compile(f)
    x = _rand(3)
    for _ in range(3):
        a, b = cf(x)
    x.grad = None
    a, b = cf(x)
    ember.autograd.backward([b], [ember.ones(3)])
    g = x.grad.numpy().copy()
    x.grad = None
    a, b = f(x)
    ember.autograd.backward([b], [ember.ones(3)])
    assert _bits(g) == _bits(x.grad.numpy())


def test_many_calls_before_backward_keep_their_own_tape():
    def f(x):
        return ((x * 2 + 1).relu() * x).sum()
    cf = compile(f)
    xs = [_rand(16, seed=i) for i in range(4)]
    outs = [cf(x) for x in xs]
    for x, o in zip(xs, outs):
        o.backward()
        g = x.grad.numpy().copy()
        x.grad = None
        f(x).backward()
        assert _bits(g) == _bits(x.grad.numpy())


def test_backward_given_a_missing_output_gradient():
    # (a node that does not materialise missing gradients hands the program a None)
    def f(x):
        a = x * 2
        return a + 1, (a * 3).sin()
    cf = compile(f)
    x = _rand(6)
    for _ in range(3):
        cf(x)
    x.grad = None
    a, b = cf(x)
    a.grad_fn._materialize = False
    a.sum().backward()
    g = x.grad.numpy().copy()
    x.grad = None
    f(x)[0].sum().backward()
    assert _bits(g) == _bits(x.grad.numpy())
    prog = next(iter(cf._ember_compiled.cache.values())).program
    assert prog._backward_any is not None


@pytest.mark.parametrize("kw", [dict(momentum=0.9), dict(momentum=0.9, dampening=0.3),
                                dict(momentum=0.9, nesterov=True),
                                dict(momentum=0.5, weight_decay=0.01)])
def test_compiled_sgd_on_large_parameters_bit_for_bit(kw):
    # (parameters above the flat-buffer size run one at a time, into a kept work array)
    import copy
    ember.manual_seed(0)
    m = ember.nn.Linear(200, 200)
    m2 = copy.deepcopy(m)
    o1 = ember.optim.SGD(m.parameters(), lr=0.1, **kw)
    o2 = ember.optim.SGD(m2.parameters(), lr=0.1, **kw)
    step = compile(o2.step)
    for i in range(5):
        x = _rand((3, 200), seed=i, requires_grad=False)
        if i == 3:
            for o in (o1, o2):
                o.param_groups[0]["lr"] *= 0.5
        for mod, fn in ((m, o1.step), (m2, step)):
            mod.zero_grad()
            mod(x).pow(2).mean().backward()
            fn()
    for p1, p2 in zip(m.parameters(), m2.parameters()):
        assert _bits(p1.detach().numpy()) == _bits(p2.detach().numpy())
    for p1, p2 in zip(m.parameters(), m2.parameters()):
        b1 = o1.state[p1]["momentum_buffer"].numpy()
        b2 = o2.state[p2]["momentum_buffer"].numpy()
        assert _bits(b1) == _bits(b2)


def test_one_tensor_passed_twice_is_another_signature():
    def f(a, b):
        return a * 2 + b
    cf = compile(f)
    x = _rand(3)
    y = _rand(3, seed=1)
    for args in [(x, x)] * 3 + [(x, y)] * 3 + [(x, x)] * 2 + [(y, x)]:
        got = cf(*args)
        want = f(*args)
        assert _bits(got.detach().numpy()) == _bits(want.detach().numpy())


@pytest.mark.parametrize("inplace", ["div_", "mul_", "add_"])
def test_in_place_update_of_a_random_temporary(inplace):
    # (dropout's ``noise = empty(...).bernoulli_(q); noise.div_(q); x * noise``)
    def f(x):
        noise = ember.empty(x.shape, dtype=x.dtype).bernoulli_(0.6)
        getattr(noise, inplace)(0.6)
        return (x * noise).sum()
    cf = compile(f)
    for i in range(5):
        x = _rand((3, 4), seed=i)
        x2 = ember.tensor(x.detach().numpy().copy(), requires_grad=True)
        ember.manual_seed(100 + i)
        a = cf(x)
        a.backward()
        ember.manual_seed(100 + i)
        b = f(x2)
        b.backward()
        assert _bits(a.detach().numpy()) == _bits(b.detach().numpy())
        assert _bits(x.grad.numpy()) == _bits(x2.grad.numpy())


def test_in_place_update_of_an_input_is_not_replayed_away():
    def f(x, y):
        y.div_(2.0)
        return (x * y).sum()
    cf = compile(f)
    for i in range(4):
        x = _rand(4, seed=i)
        y1, y2 = (_rand(4, seed=9 + i, requires_grad=False) for _ in range(2))
        assert _bits(cf(x, y1).detach().numpy()) == _bits(f(x, y2).detach().numpy())
        assert _bits(y1.numpy()) == _bits(y2.numpy())


_G = [None]


def test_replaced_closure_global_and_container_tensors_record_again():
    # A program reads the tensors it found while recording; rebinding the name, replacing a
    # list/dict item or a closure module's parameter must not leave it reading the old one.
    w = [_rand(3, requires_grad=True)]
    d = {"v": _rand(3, seed=3)}
    m = ember.nn.Linear(3, 1)
    _G[0] = _rand(3, seed=4)

    def f(x):
        return (m(x * w[0] * d["v"] * _G[0]) ** 2).sum()
    cf = compile(f)
    x = _rand(3, seed=1)
    for change in (lambda: None, lambda: w.__setitem__(0, _rand(3, seed=5)),
                   lambda: d.__setitem__("v", _rand(3, seed=6)),
                   lambda: _G.__setitem__(0, _rand(3, seed=7)),
                   lambda: setattr(m, "weight", ember.nn.Parameter(_rand((1, 3), seed=8))),
                   lambda: setattr(m, "bias", None)):
        change()
        for _ in range(3):
            assert _bits(cf(x).detach().numpy()) == _bits(f(x).detach().numpy())


def test_rebound_closure_variable_records_again():
    v = _rand(3, seed=2)

    def f(x):
        return (x * v).sum()
    cf = compile(f)
    x = _rand(3, seed=1)
    for _ in range(3):
        cf(x)
    v = _rand(3, seed=9)   # noqa: F841  (read through f's closure cell)
    assert _bits(cf(x).detach().numpy()) == _bits(f(x).detach().numpy())


def test_backward_twice_with_and_without_retain_graph():
    # The program frees its saved arrays during a backward that does not retain the graph
    # (as eager frees node by node): a second backward then raises torch's error; with
    # retain_graph=True both backwards give eager's gradients.
    m = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.Tanh(), ember.nn.Linear(8, 1))
    cm = compile(m)
    x = _rand((5, 4), seed=3)
    for _ in range(3):
        cm(x).sum()
    out = cm(x).sum()
    out.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    out.backward()
    assert _bits(x.grad.numpy()) == _bits(first * 2)
    with pytest.raises(RuntimeError, match="second time"):
        out.backward()
    x.grad = None
    m(x).sum().backward()
    assert _bits(x.grad.numpy()) == _bits(first)
