"""``Module.register_backward_hook`` (torch's deprecated non-full hook): the hook sees the
gradients of the grad_fn of the module's output (its last autograd node), one grad_input per
``next_functions`` edge, and torch's FutureWarnings say when that misses gradients."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _seen(lib, ctor, shape, pre=None, modify=None):
    """What the legacy hook saw (shapes, None kept), the warnings and the input's gradient."""
    lib.manual_seed(0)
    m = ctor(lib.nn).double()
    seen = []

    def hook(module, grad_input, grad_output):
        assert module is m
        seen.append(([None if g is None else tuple(g.shape) for g in grad_input],
                     [None if g is None else tuple(g.shape) for g in grad_output],
                     [None if g is None else g.detach().numpy().copy() for g in grad_input]))
        if modify is not None:
            return tuple(None if g is None else g * modify for g in grad_input)
        return None

    m.register_backward_hook(hook)
    x = lib.tensor(np.random.default_rng(0).standard_normal(shape), requires_grad=True)
    inp = pre(x) if pre is not None else x
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = m(inp)
    msgs = [(c.category, str(c.message)) for c in w if issubclass(c.category, FutureWarning)]
    out.backward(lib.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape))))
    return seen, msgs, x.grad.numpy()


CASES = {
    "conv2d": (lambda nn: nn.Conv2d(2, 3, 3), (2, 2, 5, 5), None),
    "linear": (lambda nn: nn.Linear(4, 3), (5, 4), None),
    "linear_nobias": (lambda nn: nn.Linear(4, 3, bias=False), (5, 4), None),
    "relu_nonleaf": (lambda nn: nn.ReLU(), (3, 4), lambda x: x * 2),
    "tanh_leaf": (lambda nn: nn.Tanh(), (3, 4), None),
    "sequential": (lambda nn: nn.Sequential(nn.Linear(4, 3), nn.Tanh()), (5, 4), None),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("modify", [None, 3.0])
def test_legacy_hook_matches_torch(name, modify):
    ctor, shape, pre = CASES[name]
    e_seen, e_msgs, e_grad = _seen(ember, ctor, shape, pre, modify)
    t_seen, t_msgs, t_grad = _seen(torch, ctor, shape, pre, modify)
    assert len(e_seen) == len(t_seen) == 1
    assert e_seen[0][:2] == t_seen[0][:2]
    for a, b in zip(e_seen[0][2], t_seen[0][2]):
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert e_msgs == t_msgs
    np.testing.assert_allclose(e_grad, t_grad, rtol=1e-10, atol=1e-12)


def test_cannot_mix_with_full_hooks():
    for lib in (ember, torch):
        m = lib.nn.Linear(2, 2)
        m.register_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full"):
            m.register_full_backward_hook(lambda *a: None)
        m = lib.nn.Linear(2, 2)
        m.register_full_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full"):
            m.register_backward_hook(lambda *a: None)


def test_removed_hook_is_not_called():
    m = ember.nn.Linear(3, 2)
    calls = []
    h = m.register_backward_hook(lambda *a: calls.append(1))
    h.remove()
    m(ember.randn(2, 3, requires_grad=True)).sum().backward()
    assert calls == []
