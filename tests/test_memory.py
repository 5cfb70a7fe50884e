"""Memory (issue 8, part 4): the engine makes no reference cycles, saved tensors are released
after backward unless retain_graph=True, and training memory stays flat."""
import gc
import tracemalloc
import weakref
from contextlib import contextmanager

import numpy as np
import pytest

import ember

__all__ = []


@contextmanager
def gc_disabled():
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def live_tensors():
    return sum(1 for o in gc.get_objects() if type(o) is ember.Tensor)


def _graph_program(kind):
    x = ember.randn(4, 3, requires_grad=True)
    w = ember.randn(3, 2, requires_grad=True)
    if kind == "mlp":
        y = ((x.mm(w) + 1).relu() * 2).sigmoid().sum()
        y.backward()
    elif kind == "retain_and_twice":
        y = (x.exp() * x).sum()
        y.backward(retain_graph=True)
        y.backward()
    elif kind == "create_graph":
        y = (x ** 3).sum()
        (g,) = ember.autograd.grad(y, x, create_graph=True)
        g.sum().backward()
    elif kind == "hooks":
        h = x * 2
        h.register_hook(lambda g: g * 2)
        h.retain_grad()
        x.register_hook(lambda g: g)
        (h * h).sum().backward()
    elif kind == "inplace":
        h = x * 2
        h.add_(1)
        h[h > 2] = 0
        (h * x).sum().backward()
    elif kind == "custom_function":
        class Sq(ember.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                ctx.extra = a * 1
                return a * a

            @staticmethod
            def backward(ctx, g):
                (a,) = ctx.saved_tensors
                return g * 2 * a
        Sq.apply(x).sum().backward()
    elif kind == "no_backward":
        y = (x.mm(w).tanh() * 3).sum()
        del y
    elif kind == "grad_mode":
        with ember.no_grad():
            y = x * 2
        (y * x).sum().backward()
    elif kind == "module":
        lin = ember.nn.Linear(3, 2)
        lin(x).pow(2).sum().backward()
        lin.zero_grad()


@pytest.mark.parametrize("kind", ["mlp", "retain_and_twice", "create_graph", "hooks", "inplace",
                                  "no_backward", "grad_mode", "module",
                                  "custom_function"])
def test_no_reference_cycles(kind):
    _graph_program(kind)       # warm caches (lazy imports, dtype tables)
    with gc_disabled():
        before = live_tensors()
        _graph_program(kind)
        after = live_tensors()
    assert after == before, "%d Tensors left alive (reference cycle)" % (after - before)


def test_graph_nodes_freed_without_gc():
    with gc_disabled():
        x = ember.randn(3, requires_grad=True)
        y = (x.exp() * 2).sum()
        node = weakref.ref(y.grad_fn)
        inner = weakref.ref(y.grad_fn.next_functions[0][0])
        y.backward()
        del y
        assert node() is None and inner() is None


def test_saved_tensors_released_after_backward():
    x = ember.randn(3, requires_grad=True)
    h = x * 2
    y = h * h                 # MulBackward0 saves h
    ref = weakref.ref(h)
    del h
    assert ref() is not None
    y.sum().backward()
    assert ref() is None


def test_saved_tensors_kept_with_retain_graph():
    x = ember.randn(3, requires_grad=True)
    h = x * 2
    y = (h * h).sum()
    ref = weakref.ref(h)
    del h
    y.backward(retain_graph=True)
    assert ref() is not None
    y.backward()
    assert ref() is None


def test_saved_output_array_released_after_backward():
    x = ember.randn(1000, requires_grad=True, dtype=ember.float64)
    y = x.exp()               # saves its output
    s = y.sum()
    del y
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        s.backward()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    # x.grad (8 kB) is new; the saved 8 kB output of exp must be gone
    assert after - before < 8000 + 6000


def _traced_peaks(step, steps, record_every=100, warmup=0):
    """Run ``step`` ``warmup`` times untraced, then ``steps`` times under tracemalloc with the
    garbage collector off; return the traced peak memory of each ``record_every`` steps and the
    last loss.

    At the end of each window a full ``gc.collect()`` must find no garbage (the engine makes no
    reference cycles); it also empties CPython's free lists of tuples and floats, whose slow
    filling tracemalloc would otherwise report as growth.
    """
    for _ in range(warmup):
        step()
    # allocated up front, as an array: a list of new int objects would itself be growth
    peaks = np.zeros(steps // record_every, dtype=np.int64)
    with gc_disabled():
        tracemalloc.start()
        try:
            for i in range(steps):
                loss = step()
                if (i + 1) % record_every == 0:
                    loss = loss.item()
                    assert gc.collect() == 0, "a training step left reference cycles"
                    peaks[i // record_every] = tracemalloc.get_traced_memory()[1]
                    tracemalloc.reset_peak()
        finally:
            tracemalloc.stop()
    return peaks.tolist(), loss


def _mlp_step():
    """One manual-SGD step of a small MLP, as a closure over its model and data."""
    ember.manual_seed(0)
    l1, l2 = ember.nn.Linear(8, 16), ember.nn.Linear(16, 1)
    params = list(l1.parameters()) + list(l2.parameters())
    rng = np.random.default_rng(0)
    data = ember.tensor(rng.standard_normal((32, 8)).astype(np.float32))
    target = ember.tensor(rng.standard_normal((32, 1)).astype(np.float32))

    def step():
        loss = (l2(l1(data).relu()) - target).pow(2).mean()
        for p in params:
            p.grad = None
        loss.backward()
        with ember.no_grad():
            for p in params:
                p -= 0.01 * p.grad
        return loss
    return step


def _cnn_step():
    """One SGD-with-momentum step of a small CNN with cross-entropy."""
    ember.manual_seed(0)
    nn = ember.nn
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(4 * 4 * 4, 10))
    opt = ember.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    rng = np.random.default_rng(0)
    data = ember.tensor(rng.standard_normal((16, 1, 8, 8)).astype(np.float32))
    target = ember.tensor(rng.integers(0, 10, 16))

    def step():
        loss = nn.functional.cross_entropy(model(data), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    return step


def test_training_memory_is_flat():
    """10,000 MLP steps: 2,000 untraced warm-up, then peaks per 100 steps within 5%."""
    peaks, loss = _traced_peaks(_mlp_step(), 8000, warmup=2000)
    assert max(peaks) <= 1.05 * min(peaks), "peak traced memory per 100 steps: %s" % peaks
    assert np.isfinite(loss)


def test_cnn_training_memory_is_flat():
    """500 CNN steps: 100 untraced warm-up, then peaks per 100 steps within 5%."""
    peaks, loss = _traced_peaks(_cnn_step(), 400, warmup=100)
    assert max(peaks) <= 1.05 * min(peaks), "peak traced memory per 100 steps: %s" % peaks
    assert np.isfinite(loss)


def test_no_grad_inference_allocates_no_graph():
    x = ember.randn(16, 8)
    lin = ember.nn.Linear(8, 4)
    with ember.no_grad():
        y = lin(x)
    assert y.grad_fn is None and not y.requires_grad
