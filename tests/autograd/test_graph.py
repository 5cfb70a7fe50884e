"""The graph and the engine against torch: requires_grad, leaves, grad_fn, backward's options,
hooks, retain_grad, deep chains, diamonds and broadcast reduction."""
import sys
import warnings

import numpy as np
import pytest

import ember
from oracle import compare

__all__ = []


def walk(fn):
    """A grad_fn and everything below it as text: ``MulBackward0(AccumulateGrad():0,None:0)``."""
    if fn is None:
        return "None"
    return "%s(%s)" % (type(fn).__name__,
                       ",".join("%s:%d" % (walk(f), n) for f, n in fn.next_functions))


A = np.array([[0.5, -1.5, 2.0], [-0.25, 1.0, 3.0]], dtype=np.float32)


def both(torch, fn):
    """``fn(lib, x, y)`` in ember and torch; ``x`` requires grad and ``y`` does not."""
    out = []
    for lib in (ember, torch):
        x = lib.tensor(A, requires_grad=True)
        y = lib.tensor(A[::-1].copy())
        out.append(fn(lib, x, y))
    return out


GRAPHS = {
    "mul_scalar": lambda L, x, y: x * 2,
    "rmul_scalar": lambda L, x, y: 2 * x,
    "add_scalar": lambda L, x, y: x + 1,
    "radd_scalar": lambda L, x, y: 1 + x,
    "sub": lambda L, x, y: x - y,
    "rsub_scalar": lambda L, x, y: 1 - x,
    "div_scalar": lambda L, x, y: x / 2,
    "rdiv_scalar": lambda L, x, y: 2 / x,
    "pow_scalar": lambda L, x, y: x ** 2,
    "rpow_scalar": lambda L, x, y: 2 ** x,
    "pow_tensor": lambda L, x, y: x ** y,
    "sum": lambda L, x, y: x.sum(),
    "sum_dim": lambda L, x, y: x.sum(0),
    "mean": lambda L, x, y: x.mean(),
    "mean_dim_keepdim": lambda L, x, y: x.mean(1, keepdim=True),
    "clamp_min": lambda L, x, y: x.clamp(min=0),
    "clamp": lambda L, x, y: x.clamp(-1, 1),
    "relu": lambda L, x, y: x.relu(),
    "mm": lambda L, x, y: x.mm(y.t()),
    "matmul": lambda L, x, y: x @ y.t(),
    "neg": lambda L, x, y: -x,
    "exp_log": lambda L, x, y: x.exp().log(),
    "view": lambda L, x, y: x.view(-1),
    "reshape": lambda L, x, y: x.reshape(3, 2),
    "unsqueeze": lambda L, x, y: x.unsqueeze(0),
    "squeeze_dim": lambda L, x, y: x.unsqueeze(0).squeeze(0),
    "expand": lambda L, x, y: x[:1].expand(4, 3),
    "select": lambda L, x, y: x[0],
    "mask": lambda L, x, y: x[x > 0],
    "sigmoid_tanh": lambda L, x, y: x.sigmoid() * y.tanh(),
    "abs_sqrt": lambda L, x, y: x.abs().sqrt(),
    "diamond": lambda L, x, y: (lambda a: a * a + a)(x * y),
    "both_require": lambda L, x, y: (x * x.detach().requires_grad_()).sum(),
    "seed_chain": lambda L, x, y: ((x + 2) * (x + 2) * 3).mean(),
}


@pytest.mark.parametrize("fn", list(GRAPHS.values()), ids=list(GRAPHS))
def test_graph_structure_matches_torch(torch, fn):
    e, t = both(torch, fn)
    assert walk(e.grad_fn) == walk(t.grad_fn)


def test_requires_grad_propagation(torch):
    for lib in (ember, torch):
        a = lib.ones(2, requires_grad=True)
        b = lib.ones(2)
        assert (a + b).requires_grad and not (b + b).requires_grad
        assert (b * 2).grad_fn is None
        assert (a > 0).requires_grad is False
        assert (a * b).sum().requires_grad
        assert not a.detach().requires_grad


def test_is_leaf(torch):
    for lib in (ember, torch):
        a = lib.ones(2, requires_grad=True)
        b = lib.ones(2)
        assert a.is_leaf and b.is_leaf
        assert not (a * 2).is_leaf
        assert (b * 2).is_leaf
        assert (a * 2).detach().is_leaf
        with lib.no_grad():
            assert (a * 2).is_leaf


def test_grad_accumulates_across_backward_calls(torch):
    res = []
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (x * x).sum().backward()
        first = x.grad.tolist()
        g = x.grad
        (x * 3).sum().backward()
        assert x.grad is g                 # accumulated in place
        res.append((first, x.grad.tolist()))
    assert res[0] == res[1] == ([2.0, 4.0, 6.0], [5.0, 7.0, 9.0])


def test_zeroing_grad_between_steps(torch):
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (x * 2).sum().backward()
        x.grad.zero_()
        (x * 5).sum().backward()
        assert x.grad.tolist() == [5.0, 5.0]
        x.grad = None
        (x * 7).sum().backward()
        assert x.grad.tolist() == [7.0, 7.0]


@pytest.mark.parametrize("name, fn", [
    ("AddBackward0", lambda x: x + x),
    ("MulBackward0", lambda x: x * x),
    ("SubBackward0", lambda x: x - x),
    ("DivBackward0", lambda x: x / 3),
    ("MeanBackward0", lambda x: x.mean()),
    ("SumBackward0", lambda x: x.sum()),
    ("SumBackward1", lambda x: x.sum(0)),
    ("MmBackward0", lambda x: x.mm(x.t())),
    ("PowBackward0", lambda x: x ** 2),
    ("NegBackward0", lambda x: -x),
    ("ExpBackward0", lambda x: x.exp()),
    ("ReluBackward0", lambda x: x.relu()),
    ("TBackward0", lambda x: x.t()),
    ("ViewBackward0", lambda x: x.view(4)),
    ("CloneBackward0", lambda x: x.clone()),
])
def test_grad_fn_names(torch, name, fn):
    a = np.ones((2, 2), dtype=np.float32)
    assert type(fn(ember.tensor(a, requires_grad=True)).grad_fn).__name__ == name
    assert type(fn(torch.tensor(a, requires_grad=True)).grad_fn).__name__ == name


def test_creator_is_grad_fn():
    x = ember.ones(2, requires_grad=True)
    y = x * 2
    assert y.creator is y.grad_fn
    assert x.creator is None


def test_next_functions_of_leaf_is_accumulate_grad_holding_the_leaf(torch):
    for lib in (ember, torch):
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        acc, nr = y.grad_fn.next_functions[0]
        assert type(acc).__name__ == "AccumulateGrad" and nr == 0
        assert acc.variable is x
        assert acc.next_functions == ()


def test_next_functions_output_nr_of_multi_output(torch):
    e, t = both(torch, lambda L, x, y: (lambda p: p[0] * p[1])(x.split(2, dim=1)))
    assert walk(e.grad_fn) == walk(t.grad_fn)


def test_backward_with_gradient_argument(torch):
    compare(torch, lambda L, x: x * x, A)
    res = []
    for lib in (ember, torch):
        x = lib.tensor(A, requires_grad=True)
        (x * 3).backward(lib.tensor(A * 2))
        res.append(x.grad.numpy().copy())
    np.testing.assert_allclose(res[0], res[1])


def test_backward_gradient_shape_mismatch(torch):
    for lib in (ember, torch):
        x = lib.ones(2, 3, requires_grad=True)
        with pytest.raises(RuntimeError, match="Mismatch in shape: grad_output\\[0\\] has a "
                                               "shape of torch.Size\\(\\[3\\]\\) and output\\[0\\] "
                                               "has a shape of torch.Size\\(\\[2, 3\\]\\)"):
            (x * 2).backward(lib.ones(3))
        assert x.grad is None


def test_retain_graph_allows_second_backward(torch):
    res = []
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        res.append(x.grad.tolist())
    assert res[0] == res[1] == [4.0, 8.0]


def test_backward_twice_without_retain_graph_raises(torch):
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.backward()
        before = x.grad.tolist()
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second "
                                               "time"):
            y.backward()
        assert x.grad.tolist() == before


def test_backward_twice_through_node_without_saved_tensors(torch):
    # torch: a node that saved nothing can be run again (e.g. AddBackward0)
    res = []
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x + 1).sum()
        y.backward()
        y.backward()
        res.append(x.grad.tolist())
    assert res[0] == res[1]


def test_backward_inputs_argument(torch):
    res = []
    for lib in (ember, torch):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        (a * b).sum().backward(inputs=[b])
        res.append((a.grad, b.grad.tolist()))
    assert res[0][0] is None and res[1][0] is None
    assert res[0][1] == res[1][1] == [1.0, 2.0]


def test_backward_inputs_non_leaf(torch):
    res = []
    for lib in (ember, torch):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        h = a * 3
        (h * h).sum().backward(inputs=[h])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res.append((a.grad, h.grad.tolist()))
    assert res[0][0] is None and res[1][0] is None
    assert res[0][1] == res[1][1]


def test_backward_empty_inputs_raises(torch):
    for lib in (ember, torch):
        x = lib.ones(1, requires_grad=True)
        with pytest.raises(RuntimeError, match="`inputs` argument to `backward\\(\\)` cannot be "
                                               "empty"):
            (x * 2).sum().backward(inputs=[])


def test_create_graph_gives_grad_with_graph(torch):
    res = []
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (x ** 3).sum().backward(create_graph=True)
        g = x.grad
        assert g.requires_grad and g.grad_fn is not None
        x2 = lib.tensor([1.0, 2.0], requires_grad=True)
        (gx,) = lib.autograd.grad((x2 ** 3).sum(), x2, create_graph=True)
        (ggx,) = lib.autograd.grad(gx.sum(), x2)
        res.append((g.tolist(), ggx.tolist()))
    assert res[0] == res[1] == ([3.0, 12.0], [6.0, 12.0])


def test_autograd_grad_does_not_touch_dot_grad(torch):
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (g,) = lib.autograd.grad((x * x).sum(), x)
        assert g.tolist() == [2.0, 4.0] and x.grad is None


def test_autograd_grad_unused_input(torch):
    for lib in (ember, torch):
        x = lib.ones(2, requires_grad=True)
        z = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
            lib.autograd.grad((x * 2).sum(), [x, z])
        gx, gz = lib.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)
        assert gz is None and gx.tolist() == [2.0, 2.0]


def test_autograd_grad_with_respect_to_non_leaf(torch):
    res = []
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x * x
        (g,) = lib.autograd.grad((h * 3).sum(), h)
        res.append(g.tolist())
    assert res[0] == res[1] == [3.0, 3.0]


def test_retain_grad(torch):
    res = []
    for lib in (ember, torch):
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        h = x * 3
        h.retain_grad()
        assert h.retains_grad
        (h * h).sum().backward()
        res.append((h.grad.tolist(), x.grad.tolist()))
    assert res[0] == res[1]


def test_retain_grad_accumulates(torch):
    res = []
    for lib in (ember, torch):
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        h = x * 3
        h.retain_grad()
        y = (h * h).sum()
        y.backward(retain_graph=True)
        y.backward()
        res.append(h.grad.tolist())
    assert res[0] == res[1]


def test_non_leaf_grad_access_warns(torch):
    for lib in (ember, torch):
        h = lib.ones(2, requires_grad=True) * 2
        h.sum().backward()
        with pytest.warns(UserWarning, match="The .grad attribute of a Tensor that is not a "
                                             "leaf Tensor is being accessed"):
            assert h.grad is None


def test_leaf_grad_access_does_not_warn():
    x = ember.ones(2, requires_grad=True)
    h = x * 2
    h.retain_grad()
    h.sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.grad is not None and h.grad is not None


def test_register_hook_sees_gradient(torch):
    res = []
    for lib in (ember, torch):
        seen = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x * x
        h.register_hook(lambda g: seen.append(g.tolist()))
        x.register_hook(lambda g: seen.append(g.tolist()))
        (h * 3).sum().backward()
        res.append(seen)
    assert res[0] == res[1] == [[3.0, 3.0], [6.0, 12.0]]


def test_register_hook_replaces_gradient(torch):
    res = []
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x * x
        h.register_hook(lambda g: g * 10)
        x.register_hook(lambda g: g + 1)
        h.sum().backward()
        res.append(x.grad.tolist())
    assert res[0] == res[1] == [21.0, 41.0]


def test_hook_handle_remove(torch):
    res = []
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        handle = x.register_hook(lambda g: g * 100)
        handle.remove()
        (x * 2).sum().backward()
        res.append(x.grad.tolist())
    assert res[0] == res[1] == [2.0, 2.0]


def test_hooks_run_in_registration_order(torch):
    res = []
    for lib in (ember, torch):
        x = lib.tensor([1.0], requires_grad=True)
        x.register_hook(lambda g: g * 2)
        x.register_hook(lambda g: g + 1)
        (x * 1).sum().backward()
        res.append(x.grad.tolist())
    assert res[0] == res[1] == [3.0]


def test_register_hook_on_tensor_without_grad_raises(torch):
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't "
                                               "require gradient"):
            lib.ones(2).register_hook(lambda g: g)


def test_post_accumulate_grad_hook(torch):
    res = []
    for lib in (ember, torch):
        seen = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
        (x * 2).sum().backward()
        res.append(seen)
    assert res[0] == res[1] == [[2.0, 2.0]]


def test_node_hooks(torch):
    res = []
    for lib in (ember, torch):
        seen = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        y.grad_fn.register_prehook(lambda go: seen.append(("pre", go[0].tolist())))
        y.grad_fn.register_hook(lambda gi, go: seen.append(("post", gi[0].tolist())))
        y.sum().backward()
        res.append(seen)
    assert res[0] == res[1]


def test_long_chain_does_not_recurse():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x
    limit = sys.getrecursionlimit()
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]
    assert sys.getrecursionlimit() == limit


def test_long_chain_with_second_derivative():
    x = ember.tensor([2.0], requires_grad=True, dtype=ember.float64)
    y = x
    for _ in range(2_000):
        y = y + 0.0
    (g,) = ember.autograd.grad((y ** 3).sum(), x, create_graph=True)
    (gg,) = ember.autograd.grad(g.sum(), x)
    assert g.item() == 12.0 and gg.item() == 12.0


class _Count(ember.autograd.Function):
    calls = []

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        _Count.calls.append(grad_output.tolist())
        return grad_output


def test_each_node_runs_once_with_summed_gradient():
    _Count.calls.clear()
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    h = _Count.apply(x)
    y = (h * 2 + h * 3 + h.exp().log()).sum()      # three paths meet at h
    y.backward()
    assert _Count.calls == [[6.0, 6.0]]
    assert x.grad.tolist() == [6.0, 6.0]


def test_diamond_matches_torch(torch):
    def fn(L, x):
        a = x * 2
        b = a.exp()
        c = a.sin() if hasattr(a, "sin") else a * a
        return (b * c + a).sum(0)
    compare(torch, fn, A)
    compare(torch, fn, A.astype(np.float64))


def test_node_not_needed_by_any_leaf_is_skipped():
    _Count.calls.clear()
    x = ember.tensor([1.0], requires_grad=True)
    c = _Count.apply(ember.tensor([5.0], requires_grad=True))
    y = x * 2 + c.detach()
    y.sum().backward()
    assert _Count.calls == []


BCAST = [
    ((2, 3), (3,)),
    ((2, 3), (1, 3)),
    ((2, 1), (1, 3)),
    ((4, 1, 3), (2, 1)),
    ((2, 3), ()),
    ((1,), (2, 2, 2)),
    ((0, 3), (1, 3)),
    ((2, 0), (1,)),
]


@pytest.mark.parametrize("sa, sb", BCAST)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_broadcast_gradients_reduce_to_input_shape(torch, sa, sb, op):
    rng = np.random.default_rng(1)
    a = rng.uniform(0.5, 2, sa).astype(np.float64)
    b = rng.uniform(0.5, 2, sb).astype(np.float64)
    compare(torch, lambda L, x, y: getattr(L, op)(x, y), a, b)
    compare(torch, lambda L, x, y: getattr(L, op)(y, x), a, b)


def test_broadcast_gradient_shapes():
    a = ember.ones(4, 1, 3, requires_grad=True)
    b = ember.ones(2, 1, requires_grad=True)
    (a * b).sum().backward()
    assert tuple(a.grad.shape) == (4, 1, 3) and tuple(b.grad.shape) == (2, 1)
    assert a.grad.tolist() == np.full((4, 1, 3), 2.0).tolist()
    assert b.grad.tolist() == [[12.0], [12.0]]


def test_backward_on_leaf_itself(torch):
    for lib in (ember, torch):
        x = lib.tensor(3.0, requires_grad=True)
        x.backward()
        assert x.grad.item() == 1.0


def test_backward_of_tensor_without_grad_raises(torch):
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and "
                                               "does not have a grad_fn"):
            lib.ones(1).sum().backward()


def test_autograd_backward_several_roots(torch):
    res = []
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a, b = x * 2, x * x
        lib.autograd.backward([a, b], [lib.ones(2), lib.tensor([1.0, -1.0])])
        res.append(x.grad.tolist())
    assert res[0] == res[1]


def test_grad_dtype_follows_leaf(torch):
    for lib in (ember, torch):
        x = lib.ones(2, dtype=lib.float64, requires_grad=True)
        (x.float() * 2).sum().backward()
        assert str(x.grad.dtype).endswith("float64")


def test_grad_wrt_an_intermediate_leaves_the_rest_of_the_graph_intact(torch):
    """grad() runs only what leads to its inputs (as torch): the part of the graph behind an
    intermediate keeps its saved tensors, so a later backward through it works."""
    res = []
    for lib in (ember, torch):
        w = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        h = (w * 2).exp()
        g, = lib.autograd.grad((h * h).sum(), h)
        h.sum().backward()
        a = lib.tensor([0.3, 0.7], requires_grad=True)
        b = lib.tensor([1.5, -0.2], requires_grad=True)
        branch = b.sin()
        z = ((a * b).exp() * a).sum() + branch.sum()
        ga, = lib.autograd.grad(z, a)
        branch.sum().backward()     # the sin branch was not run by grad(): still intact
        res.append([g.numpy(), w.grad.numpy(), ga.numpy(), b.grad.numpy()])
    for x, y in zip(*res):
        np.testing.assert_allclose(x, y, rtol=1e-6)
