"""Saved state of the nn primitives (ember/ops/rnn.py, sparse.py, padding.py) against PyTorch:
an in-place change of what backward reads raises torch's version error exactly where torch's
does, and the gradients (first and second order, on the CPU and the strict device) match."""
import numpy as np
import pytest

import ember

_VERSION_ERROR = "modified by an inplace operation"


def r(*shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _np(t):
    return t.detach().cpu().numpy()


def _load(em, tm):
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return em


def _modify_then_backward(lib, make, which, inputs, call, dtype="float64"):
    """Forward, ``which.mul_(2)`` under no_grad, backward: the error message or None."""
    lib.manual_seed(0)
    m = make(lib.nn).to(getattr(lib, dtype))
    xs = {k: lib.tensor(a.astype(dtype), requires_grad=True) for k, a in inputs.items()}
    outs = call(m, xs)
    target = xs[which] if which in xs else getattr(m, which)
    with lib.no_grad():
        target.mul_(2)
    try:
        sum(o.sum() for o in outs).backward()
    except RuntimeError as e:
        return str(e)
    return None


def _flat(out):
    return [o for item in out for o in (item if isinstance(item, tuple) else (item,))]


@pytest.mark.parametrize("which", ["weight_hh", "weight_ih", "bias_hh", "bias_ih", "h0", "c0",
                                   "x"])
def test_lstm_cell_inplace_raises_as_torch(torch, which):
    inputs = {"x": r(2, 3), "h0": r(2, 4, seed=1), "c0": r(2, 4, seed=2)}
    call = lambda m, xs: _flat(m(xs["x"], (xs["h0"], xs["c0"])))  # noqa: E731
    make = lambda nn: nn.LSTMCell(3, 4)  # noqa: E731
    got = _modify_then_backward(ember, make, which, inputs, call)
    want = _modify_then_backward(torch, make, which, inputs, call)
    assert (got is None) == (want is None), (got, want)
    if want is not None and _VERSION_ERROR in want:
        assert _VERSION_ERROR in got


def test_lstm_cell_weight_hh_modified_in_place_as_torch(torch):
    """The case of the issue: the default state, W_hh doubled between forward and backward.
    torch does not raise (with the default zero state its addmm saves no weight), and nor
    does ember; a state that requires grad makes both raise."""
    for state_grad in (False, True):
        raised = []
        for lib in (ember, torch):
            m = lib.nn.LSTMCell(3, 4)
            hx = None
            if state_grad:
                hx = (lib.zeros(2, 4, requires_grad=True), lib.zeros(2, 4))
            h, c = m(lib.randn(2, 3), hx)
            with lib.no_grad():
                m.weight_hh.mul_(2)
            try:
                (h.sum() + c.sum()).backward()
                raised.append(False)
            except RuntimeError as e:
                assert "modified by an inplace operation" in str(e)
                raised.append(True)
        assert raised[0] == raised[1], (state_grad, raised)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("which", ["weight_hh_l0", "weight_ih_l0", "bias_hh_l0", "bias_ih_l0",
                                   "h0", "c0", "x"])
def test_lstm_inplace_raises_as_torch(torch, which, dtype):
    """(torch's float32 LSTM saves its biases too, its float64 one does not)"""
    inputs = {"x": r(5, 2, 3), "h0": r(1, 2, 4, seed=1), "c0": r(1, 2, 4, seed=2)}
    call = lambda m, xs: _flat(m(xs["x"], (xs["h0"], xs["c0"])))  # noqa: E731
    make = lambda nn: nn.LSTM(3, 4)  # noqa: E731
    got = _modify_then_backward(ember, make, which, inputs, call, dtype)
    want = _modify_then_backward(torch, make, which, inputs, call, dtype)
    assert (got is None) == (want is None), (got, want)
    if want is not None and _VERSION_ERROR in want:
        assert _VERSION_ERROR in got


def test_embedding_indices_modified_in_place_raise_as_torch(torch):
    errors = []
    for lib in (ember, torch):
        w = lib.tensor(r(5, 3), requires_grad=True)
        idx = lib.tensor([1, 2, 1])
        out = lib.nn.functional.embedding(idx, w)
        with lib.no_grad():
            idx.add_(1)
        with pytest.raises(RuntimeError, match=_VERSION_ERROR):
            out.sum().backward()
        errors.append(True)
    assert errors == [True, True]


def _grads(lib, fn, arrays, device, create_graph):
    """Outputs, gradients and (with create_graph) the gradients of the gradients' sum."""
    xs = [lib.tensor(a, requires_grad=a.dtype.kind == "f", **device) for a in arrays]
    out = fn(lib, *xs)
    up = lib.tensor(r(*out.shape, seed=9), **device)
    diff = [x for x in xs if x.requires_grad]
    gs = lib.autograd.grad(out, diff, up, create_graph=create_graph)
    res = [_np(out)] + [_np(g) for g in gs]
    if create_graph:
        total = sum((g * g).sum() for g in gs)
        res += [_np(g) for g in lib.autograd.grad(total, diff, allow_unused=True)
                if g is not None]
    return res


def _embedding(padding_idx):
    return lambda lib, w, idx: lib.nn.functional.embedding(idx, w * w, padding_idx) * 1.5


def _pad(pad, mode):
    return lambda lib, x: lib.nn.functional.pad(x * x, pad, mode=mode)


FUNCS = {
    "embedding": (_embedding(None), [r(6, 3), np.array([[1, 0, 5], [5, 5, 2]])]),
    "embedding_padding_idx": (_embedding(5), [r(6, 3), np.array([[1, 0, 5], [5, 5, 2]])]),
    "pad_constant": (_pad((1, 2, 0, 1), "constant"), [r(2, 3, 4)]),
    "pad_crop": (_pad((-1, 2, 1, -1), "constant"), [r(2, 3, 4)]),
    "pad_reflect": (_pad((2, 1), "reflect"), [r(2, 3, 4)]),
    "pad_replicate": (_pad((2, 1, 1, 2), "replicate"), [r(1, 2, 3, 4)]),
    "pad_circular": (_pad((2, 1, 1, 0), "circular"), [r(1, 2, 3, 4)]),
    "pad_none": (_pad((0, 0), "constant"), [r(2, 3)]),
}


@pytest.mark.parametrize("device", ["cpu", "strict"])
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", list(FUNCS))
def test_embedding_and_pad_gradients_match_torch(torch, name, create_graph, device):
    fn, arrays = FUNCS[name]
    got = _grads(ember, fn, arrays, {"device": device}, create_graph)
    want = _grads(torch, fn, arrays, {}, create_graph)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("device", ["cpu", "strict"])
@pytest.mark.parametrize("make, shapes", [
    (lambda nn: nn.LSTM(3, 4, num_layers=2, bidirectional=True), [(6, 2, 3)]),
    (lambda nn: nn.LSTM(3, 4, bias=False), [(6, 2, 3)]),
    (lambda nn: nn.GRU(3, 4), [(6, 2, 3)]),
    (lambda nn: nn.LSTMCell(3, 4), [(2, 3)]),
])
def test_recurrent_gradients_match_torch(torch, make, shapes, device):
    tm = make(torch.nn).double()
    em = _load(make(ember.nn).double(), tm).to(device)
    results = []
    for lib, m, dev in ((ember, em, {"device": device}), (torch, tm, {})):
        xs = [lib.tensor(r(*s), requires_grad=True, **dev) for s in shapes]
        outs = _flat(m(*xs))
        ups = [lib.tensor(r(*o.shape, seed=3 + i), **dev) for i, o in enumerate(outs)]
        params = list(m.parameters())
        gs = lib.autograd.grad(outs, xs + params, ups)
        results.append([_np(o) for o in outs] + [_np(g) for g in gs])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


def test_lstm_gradients_survive_later_calls(torch):
    """A gradient returned by the whole-sequence LSTM is its own: later calls (which reuse
    scratch arrays) leave it unchanged."""
    m = ember.nn.LSTM(3, 4, bias=False).double()
    x = ember.tensor(r(5, 2, 3), requires_grad=True)
    grads = ember.autograd.grad(m(x)[0].sum(), list(m.parameters()) + [x])
    kept = [g.numpy().copy() for g in grads]
    for seed in (1, 2):
        y = ember.tensor(r(5, 2, 3, seed=seed), requires_grad=True)
        ember.autograd.grad((m(y)[0] * 3).sum(), list(m.parameters()) + [y])
    for g, k in zip(grads, kept):
        np.testing.assert_array_equal(g.numpy(), k)
