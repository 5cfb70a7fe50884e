"""Property-based tests (hypothesis) of the engine: reused inputs, diamonds, accumulation,
broadcasting and no_grad, each checked against torch."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import ember
from oracle import compare

__all__ = []

SETTINGS = settings(max_examples=30, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

UNARY = {
    "exp": lambda t: (t * 0.5).exp(),
    "tanh": lambda t: t.tanh(),
    "sigmoid": lambda t: t.sigmoid(),
    "square": lambda t: t * t,
    "scale": lambda t: t * 1.5 - 0.25,
    "relu": lambda t: t.relu(),
    "neg": lambda t: -t,
    "softplus_like": lambda t: (t.exp() + 1).log(),
    "sum_keep": lambda t: t.sum(-1, keepdim=True) + t,
    "mean0": lambda t: t.mean(0) * t,
}
BINARY = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "sub": lambda a, b: a - b,
    "div": lambda a, b: a / (b * b + 1),
}

unary_names = st.sampled_from(sorted(UNARY))
binary_names = st.sampled_from(sorted(BINARY))


def arrays(shape, seed, dtype=np.float64):
    return np.random.default_rng(seed).uniform(-1.5, 1.5, shape).astype(dtype)


@SETTINGS
@given(uses=st.lists(unary_names, min_size=1, max_size=5), seed=st.integers(0, 2 ** 16),
       dtype=st.sampled_from([np.float32, np.float64]))
def test_reused_input_accumulates_sum_of_uses(torch, uses, seed, dtype):
    x = arrays((2, 3), seed, dtype)

    def fn(L, t):
        total = UNARY[uses[0]](t)
        for name in uses[1:]:
            total = total + UNARY[name](t)
        return total
    compare(torch, fn, x)
    # and the gradient is the sum of the per-use gradients
    parts = []
    for name in uses:
        t = ember.tensor(x, requires_grad=True)
        UNARY[name](t).sum().backward()
        parts.append(t.grad.numpy())
    t = ember.tensor(x, requires_grad=True)
    fn(ember, t).sum().backward()
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(t.grad.numpy(), np.sum(parts, axis=0), rtol=tol, atol=tol)


@SETTINGS
@given(levels=st.lists(st.tuples(unary_names, unary_names, binary_names), min_size=1,
                       max_size=4),
       seed=st.integers(0, 2 ** 16))
def test_diamond_graphs(torch, levels, seed):
    x = arrays((3,), seed)

    def fn(L, t):
        a = t
        for left, right, join in levels:
            a = BINARY[join](UNARY[left](a), UNARY[right](a))
        return a
    compare(torch, fn, x)


@SETTINGS
@given(seed=st.integers(0, 2 ** 16), n=st.integers(2, 4))
def test_backward_n_times_accumulates_n_times(torch, seed, n):
    x = arrays((2, 2), seed)
    res = []
    for lib in (ember, torch):
        t = lib.tensor(x, requires_grad=True)
        y = (t.tanh() * t).sum()
        for _ in range(n):
            y.backward(retain_graph=True)
        res.append(t.grad.numpy().copy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-12)
    single = ember.tensor(x, requires_grad=True)
    (single.tanh() * single).sum().backward()
    np.testing.assert_allclose(res[0], n * single.grad.numpy(), rtol=1e-12)


dims = st.integers(0, 3)


@st.composite
def broadcast_pair(draw):
    """Two shapes that broadcast: each dim of the shorter is equal to, or 1 against, the other."""
    full = draw(st.lists(dims, min_size=0, max_size=3))
    other = []
    for d in full[draw(st.integers(0, len(full))):]:
        other.append(draw(st.sampled_from([d, 1])))
    a = [draw(st.sampled_from([d, 1])) if d != 0 else d for d in full]
    if draw(st.booleans()):
        return tuple(a), tuple(other)
    return tuple(other), tuple(a)


@SETTINGS
@given(shapes=broadcast_pair(), op=binary_names, seed=st.integers(0, 2 ** 16))
def test_broadcast_binary_gradients(torch, shapes, op, seed):
    sa, sb = shapes
    compare(torch, lambda L, a, b: BINARY[op](a, b), arrays(sa, seed), arrays(sb, seed + 1))


@SETTINGS
@given(ops=st.lists(unary_names, min_size=1, max_size=6), seed=st.integers(0, 2 ** 16))
def test_nothing_recorded_under_no_grad(torch, ops, seed):
    x = arrays((2, 3), seed)
    for lib in (ember, torch):
        t = lib.tensor(x, requires_grad=True)
        with lib.no_grad():
            a = t
            for name in ops:
                a = UNARY[name](a)
                assert not a.requires_grad and a.grad_fn is None and a.is_leaf
        assert t.grad is None and t.grad_fn is None and t.requires_grad


@SETTINGS
@given(ops=st.lists(unary_names, min_size=1, max_size=6), cut=st.integers(0, 5),
       seed=st.integers(0, 2 ** 16))
def test_no_grad_region_inside_a_graph(torch, ops, cut, seed):
    cut = min(cut, len(ops))

    def fn(L, t):
        a = t
        with L.no_grad():
            for name in ops[:cut]:
                a = UNARY[name](a)
        for name in ops[cut:]:
            a = UNARY[name](a)
        return a * t
    compare(torch, fn, arrays((2, 3), seed))


@SETTINGS
@given(ops=st.lists(unary_names, min_size=2, max_size=6), where=st.integers(0, 5),
       seed=st.integers(0, 2 ** 16))
def test_detach_cuts_the_graph(torch, ops, where, seed):
    where = min(where, len(ops) - 1)

    def fn(L, t):
        a = t
        for i, name in enumerate(ops):
            a = UNARY[name](a)
            if i == where:
                a = a.detach()
        return a + t
    compare(torch, fn, arrays((3,), seed))


@pytest.mark.parametrize("depth", [1, 10, 1000])
def test_deep_diamond_chain_runs_each_node_once(torch, depth):
    def fn(L, t):
        a = t
        for _ in range(depth):
            a = (a * 0.5 + a * 0.5)
        return a
    compare(torch, fn, arrays((2,), 0))
