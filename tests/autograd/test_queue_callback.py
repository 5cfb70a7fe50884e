"""End-of-backward callbacks (``Variable._execution_engine.queue_callback``) against torch."""
import pytest

import ember


def _run(lib):
    x = lib.ones(3, requires_grad=True)
    w = lib.ones(3, requires_grad=True)
    events = []

    def hook(g):
        lib.autograd.Variable._execution_engine.queue_callback(
            lambda: events.append(("callback", x.grad is not None, w.grad is not None)))
        events.append("hook")
        return g
    y = x * 2
    y.register_hook(hook)
    (y * w).sum().backward()
    events.append("returned")
    return events


def test_callback_runs_once_at_the_end_of_backward():
    torch = pytest.importorskip("torch")
    assert _run(ember) == _run(torch)


def test_callback_outside_backward_raises_as_torch():
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as t:
        torch.autograd.Variable._execution_engine.queue_callback(lambda: None)
    with pytest.raises(RuntimeError) as e:
        ember.autograd.Variable._execution_engine.queue_callback(lambda: None)
    assert str(e.value) == str(t.value)
