"""``loss.backward()`` runs nodes latest-recorded first, without a dependency pass: every node
must still wait for all of its consumers, whatever order the graph was built in."""
import numpy as np
import pytest

import ember


def _arr(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _grads(lib, build, *arrays):
    xs = [lib.tensor(a, requires_grad=True) for a in arrays]
    build(lib, *xs).backward()
    return [x.grad.numpy() for x in xs]


def _check(torch, build, *arrays):
    for got, want in zip(_grads(ember, build, *arrays), _grads(torch, build, *arrays)):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_diamonds_and_reused_intermediates(torch):
    def build(L, x, w):
        h = x * w
        a, b = h.exp(), h * 3          # two consumers of h, recorded in either order
        c = b.sin() + a                # a consumer of both, made from the later one first
        return (c * h + a.mean() + (w * 2).sum()).sum()
    _check(torch, build, _arr(3, 4), _arr(3, 4, seed=1))


def test_a_consumer_recorded_long_after_its_input(torch):
    def build(L, x):
        h = x.tanh()
        chain = x
        for _ in range(20):
            chain = chain * 1.01 + 0.1
        return (chain * h).sum() + h.sum()    # h's second consumer comes 40 ops later
    _check(torch, build, _arr(5))


def test_a_stale_view_refreshed_after_an_in_place_change(torch):
    # Using v after base.mul_ records a new node for v inside d's apply: d's node must come
    # after it in the order, or that node runs (once e's gradient reaches it) before d's.
    def build(L, x):
        base = x * 1
        v = base[0:2]
        c = v * 3
        base.mul_(2)
        d = v * 5
        e = v * 7
        v.grad_fn.register_hook(lambda gi, go: calls.append(L.__name__))
        return c.sum() + d.sum() + e.sum() + base.sum()
    calls = []
    _check(torch, build, _arr(4))
    assert calls == ["ember", "torch"]    # the view's new node ran once, with both gradients


def test_a_multi_output_root_and_an_input_without_gradient(torch):
    def build(L, x, w):
        values, _ = (x * w).max(0)
        return (values * w[0]).sum() + w.detach().sum()
    _check(torch, build, _arr(3, 4), _arr(3, 4, seed=2))


def test_leaves_summed_once_and_hooks_see_the_total(torch):
    seen = {}
    for lib in (ember, torch):
        x = lib.tensor(_arr(3), requires_grad=True)
        got = seen[lib.__name__] = []
        x.register_hook(lambda g, got=got: got.append(g.numpy().copy()))
        ((x * 2).sum() + (x * x).sum() + x.exp().sum()).backward()
    assert len(seen["ember"]) == len(seen["torch"]) == 1
    np.testing.assert_allclose(seen["ember"][0], seen["torch"][0], rtol=1e-12)


def test_a_second_backward_through_the_freed_graph_raises():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_a_node_reached_only_by_none_still_runs_and_frees_its_saved_tensors(torch):
    # torch runs (and frees) a node whose consumers all returned None for it: a later backward
    # through that node raises the freed-graph error in both libraries.
    outcome = {}
    for lib in (ember, torch):
        class Drop(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return None
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x.exp()                        # saves its result
        w = lib.tensor([1.0, 1.0], requires_grad=True)
        (Drop.apply(h).sum() + (w * 2).sum()).backward()
        try:
            (h * 3).sum().backward()
            outcome[lib.__name__] = ("ran", x.grad)
        except RuntimeError as e:
            outcome[lib.__name__] = ("raised", "a second time" in str(e), x.grad)
    assert outcome["ember"] == outcome["torch"] == ("raised", True, None)


def _hook_order(lib, build):
    seen = []
    build(lib, lambda name: (lambda g: seen.append(name)))
    return seen


def test_leaf_hooks_run_when_the_leaf_is_complete_as_in_torch(torch):
    def late_leaf(L, hook):     # x's branch is recorded last, so it runs (and completes) first
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = L.tensor([3.0, 4.0], requires_grad=True)
        x.register_hook(hook("x"))
        y.register_hook(hook("y"))
        e = y.exp()
        e.register_hook(hook("exp(y)"))
        ((e * 3).sum() + (x * 2).sum()).backward()

    def shared(L, hook):        # two leaves completed by the same node, in its edges' order
        x = L.tensor([1.0, 2.0], requires_grad=True)
        w = L.tensor([3.0, 4.0], requires_grad=True)
        x.register_hook(hook("x"))
        w.register_hook(hook("w"))
        h = x * w
        h.register_hook(hook("h"))
        a = h.exp()
        a.register_hook(hook("a"))
        b = x * 3
        b.register_hook(hook("b"))
        (a.sum() + b.sum() + (w * 2).sum()).backward()

    for build in (late_leaf, shared):
        assert _hook_order(ember, build) == _hook_order(torch, build)
