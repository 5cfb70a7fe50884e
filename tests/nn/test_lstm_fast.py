"""The whole-sequence LSTM Function against PyTorch where its speed tricks could go wrong:
float32 at a realistic size, sequence lengths that are not a multiple of its 8-step blocks,
backward twice (retain_graph), and the reuse of its buffers across calls."""
import numpy as np
import pytest


def r(*shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _pair(torch, make, dtype):
    import ember
    tm = make(torch.nn).to(getattr(torch, dtype))
    em = make(ember.nn).to(getattr(ember, dtype))
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return em, tm


def _run(lib, m, x, ups, state=None):
    """Outputs and every input's and parameter's gradient after one random-upstream backward."""
    xs = [lib.tensor(a.copy(), requires_grad=True) for a in (x,) + (state or ())]
    out, (h, c) = m(xs[0], tuple(xs[1:]) if state else None)
    lib.autograd.backward([out, h, c], [lib.tensor(u) for u in ups])
    grads = [t.grad.numpy() for t in xs] + [p.grad.numpy() for p in m.parameters()]
    return [out.detach().numpy(), h.detach().numpy(), c.detach().numpy()] + grads


def _ups(shapes, dtype):
    return [r(*s, dtype=dtype, seed=10 + i) for i, s in enumerate(shapes)]


@pytest.mark.parametrize("seq, kwargs", [
    (11, dict()), (17, dict(bidirectional=True)), (9, dict(num_layers=2, bias=False)),
    (1, dict(bidirectional=True)),
])
def test_lengths_off_the_block_size(torch, seq, kwargs):
    em, tm = _pair(torch, lambda nn: nn.LSTM(3, 5, **kwargs), "float64")
    dirs = 2 if kwargs.get("bidirectional") else 1
    layers = kwargs.get("num_layers", 1)
    x = r(seq, 2, 3)
    state = (r(layers * dirs, 2, 5, seed=1), r(layers * dirs, 2, 5, seed=2))
    ups = _ups([(seq, 2, 5 * dirs), (layers * dirs, 2, 5), (layers * dirs, 2, 5)], np.float64)
    for a, b in zip(_run(__import__("ember"), em, x, ups, state), _run(torch, tm, x, ups, state)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


def test_float32_realistic_size(torch):
    em, tm = _pair(torch, lambda nn: nn.LSTM(16, 64), "float32")
    x = r(40, 8, 16, dtype=np.float32)
    ups = _ups([(40, 8, 64), (1, 8, 64), (1, 8, 64)], np.float32)
    for a, b in zip(_run(__import__("ember"), em, x, ups), _run(torch, tm, x, ups)):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-5)


def test_backward_twice_with_retain_graph(torch):
    import ember
    grads = []
    for lib, m in zip((ember, torch), _pair(torch, lambda nn: nn.LSTM(3, 4), "float64")):
        x = lib.tensor(r(9, 2, 3), requires_grad=True)
        out, _ = m(x)
        up = lib.tensor(r(9, 2, 4, seed=3))
        out.backward(up, retain_graph=True)
        out.backward(up)
        grads.append([x.grad.numpy()] + [p.grad.numpy() for p in m.parameters()])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


def test_live_graphs_keep_their_buffers(torch):
    """Two forwards before either backward, and a kept output: no call may reuse the other's
    storage."""
    import ember
    results = []
    for lib, m in zip((ember, torch), _pair(torch, lambda nn: nn.LSTM(3, 4), "float64")):
        xs = [lib.tensor(r(6, 2, 3, seed=s), requires_grad=True) for s in (1, 2)]
        outs = [m(x)[0] for x in xs]
        kept = outs[0].detach().numpy().copy()
        outs[1].backward(lib.tensor(r(6, 2, 4, seed=5)))
        m(lib.tensor(r(6, 2, 3, seed=7)))      # a third call while the first graph lives
        outs[0].backward(lib.tensor(r(6, 2, 4, seed=6)))
        assert np.array_equal(outs[0].detach().numpy(), kept)
        results.append([o.detach().numpy() for o in outs] + [x.grad.numpy() for x in xs]
                       + [p.grad.numpy() for p in m.parameters()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


def test_inplace_change_of_output_is_caught():
    import ember
    m = ember.nn.LSTM(3, 4)         # (float32: torch's fused node, which checks its output)
    out, _ = m(ember.tensor(r(5, 2, 3, dtype=np.float32), requires_grad=True))
    with ember.no_grad():
        out.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_no_grad_forward_matches_torch(torch):
    import ember
    em, tm = _pair(torch, lambda nn: nn.LSTM(3, 5, num_layers=2, bidirectional=True), "float64")
    x = r(7, 2, 3)
    outs = []
    for lib, m in ((ember, em), (torch, tm)):
        with lib.no_grad():
            out, (h, c) = m(lib.tensor(x))
        assert not out.requires_grad and out.grad_fn is None
        outs.append([out.numpy(), h.numpy(), c.numpy()])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)
