"""Recurrent layers against PyTorch: torch's CPU graph node for node (float32 LSTMs one fused
mkldnn node per layer and direction, everything else torch's cells op for op), the values and
gradients of those paths, and torch's errors for empty inputs."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def r(*shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed + len(shape)).standard_normal(shape).astype(dtype)


def graph_signature(outs):
    """``[(node class name, edges)]`` breadth first; an edge is None, "Acc" or a node index."""
    order, seen, sig = [], {}, []

    def visit(node):
        if id(node) not in seen:
            seen[id(node)] = len(order)
            order.append(node)
        return seen[id(node)]

    for o in outs:
        if o.grad_fn is not None:
            visit(o.grad_fn)
    for node in order:
        edges = []
        for nxt, _ in node.next_functions:
            if nxt is None:
                edges.append(None)
            elif type(nxt).__name__ == "AccumulateGrad":
                edges.append("Acc")
            else:
                edges.append(visit(nxt))
        sig.append((type(node).__name__, edges))
    return sig


def _flat(out):
    return [o for item in out for o in (item if isinstance(item, tuple) else (item,))]


# name -> (ctor(nn), input shapes (x, then the state's), state as a tuple (h, c))
CASES = {
    "lstm": (lambda nn: nn.LSTM(3, 4), [(2, 1, 3)], False),
    "lstm_nobias": (lambda nn: nn.LSTM(3, 4, bias=False), [(2, 1, 3)], False),
    "lstm_2layer_hx": (lambda nn: nn.LSTM(3, 4, num_layers=2), [(2, 1, 3), (2, 1, 4),
                                                                (2, 1, 4)], True),
    "lstm_bidir_batch_first_hx": (lambda nn: nn.LSTM(3, 4, batch_first=True,
                                                     bidirectional=True),
                                  [(1, 2, 3), (2, 1, 4), (2, 1, 4)], True),
    "lstm_proj": (lambda nn: nn.LSTM(3, 4, proj_size=2), [(2, 1, 3)], False),
    "lstm_unbatched": (lambda nn: nn.LSTM(3, 4), [(2, 3)], False),
    "gru_2layer_bidir_hx": (lambda nn: nn.GRU(3, 4, num_layers=2, bidirectional=True),
                            [(2, 1, 3), (4, 1, 4)], False),
    "rnn_relu_nobias": (lambda nn: nn.RNN(3, 4, nonlinearity="relu", bias=False),
                        [(2, 1, 3)], False),
    "lstmcell_nobias": (lambda nn: nn.LSTMCell(3, 4, bias=False), [(2, 3)], False),
    "lstmcell_hx": (lambda nn: nn.LSTMCell(3, 4), [(2, 3), (2, 4), (2, 4)], True),
    "lstmcell_1d_hx": (lambda nn: nn.LSTMCell(3, 4), [(3,), (4,), (4,)], True),
    "grucell_hx": (lambda nn: nn.GRUCell(3, 4), [(2, 3), (2, 4)], False),
    "rnncell_relu_hx": (lambda nn: nn.RNNCell(3, 4, nonlinearity="relu"), [(2, 3), (2, 4)],
                        False),
}


def _call(lib, m, name, dtype):
    """The case's inputs (requiring grad) and ``m``'s outputs, flattened."""
    _, shapes, paired = CASES[name]
    xs = [lib.tensor(r(*s, dtype=dtype, seed=i), requires_grad=True)
          for i, s in enumerate(shapes)]
    args = [xs[0]]
    if len(xs) > 1:
        args.append(tuple(xs[1:]) if paired else xs[1])
    return xs, _flat(m(*args))


def _module(lib, name, dtype):
    lib.manual_seed(0)
    return CASES[name][0](lib.nn).to(getattr(lib, dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(CASES))
def test_graph_is_torchs(name, dtype):
    got, want = [graph_signature(_call(lib, _module(lib, name, dtype), name, dtype)[1])
                 for lib in (ember, torch)]
    assert got == want, "\nember: %s\ntorch: %s" % (got, want)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["lstm_nobias", "lstm_2layer_hx", "lstm_bidir_batch_first_hx",
                                  "lstm_proj", "gru_2layer_bidir_hx", "rnn_relu_nobias",
                                  "lstmcell_hx", "grucell_hx", "rnncell_relu_hx"])
def test_values_and_gradients_match_torch(name, dtype):
    tol = dict(rtol=1e-9, atol=1e-10) if dtype == "float64" else dict(rtol=2e-5, atol=2e-6)
    tm = _module(torch, name, dtype)
    em = _module(ember, name, dtype)
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    results = []
    for lib, m in ((ember, em), (torch, tm)):
        xs, outs = _call(lib, m, name, dtype)
        ups = [lib.tensor(r(*o.shape, dtype=dtype, seed=20 + i)) for i, o in enumerate(outs)]
        lib.autograd.backward(outs, ups)
        results.append([o.detach().numpy() for o in outs] + [x.grad.numpy() for x in xs]
                       + [p.grad.numpy() for p in m.parameters()])
    assert len(results[0]) == len(results[1])
    for a, b in zip(*results):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, **tol)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_empty_inputs_as_torch(mode, dtype):
    for shape in [(0, 1, 3), (2, 0, 3)]:
        outcome = []
        for lib in (ember, torch):
            m = getattr(lib.nn, mode)(3, 4).to(getattr(lib, dtype))
            try:
                out = m(lib.zeros(shape, dtype=getattr(lib, dtype)))[0]
                outcome.append(tuple(out.shape))
            except RuntimeError as e:
                outcome.append(str(e))
        assert outcome[0] == outcome[1]


def test_float32_lstm_output_saved_as_torch():
    """torch's fused float32 layer saves its output: changing it in place breaks backward."""
    m = ember.nn.LSTM(3, 4)
    out, _ = m(ember.tensor(r(5, 2, 3, dtype=np.float32), requires_grad=True))
    with ember.no_grad():
        out.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_float32_lstm_batch_of_one_keeps_its_buffers():
    """One batch row: a kept output and the saved states of a lower layer outlive later calls
    (the fused layer's scratch buffers are reused across calls)."""
    tm = torch.nn.LSTM(3, 4, num_layers=2)
    em = ember.nn.LSTM(3, 4, num_layers=2)
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x = r(3, 1, 3, dtype=np.float32)
    results = []
    for lib, m in ((ember, em), (torch, tm)):
        out, _ = m(lib.tensor(x, requires_grad=True))
        kept = out.detach().numpy().copy()
        m(lib.tensor(r(3, 1, 3, dtype=np.float32, seed=5)))
        assert np.array_equal(out.detach().numpy(), kept)
        out.backward(lib.tensor(r(3, 1, 4, dtype=np.float32, seed=6)))
        results.append([p.grad.numpy() for p in m.parameters()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6)


def test_float32_projection_warns_once_as_torch():
    import warnings
    import ember.nn.modules.rnn as rnn_mod
    rnn_mod._proj_warned.clear()
    seen = []
    for _ in range(2):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ember.nn.LSTM(3, 4, proj_size=2)(ember.randn(2, 1, 3))
            ember.nn.LSTM(3, 4, proj_size=2).double()(ember.randn(2, 1, 3).double())
        seen.append([(x.category, str(x.message)) for x in w])
    assert seen == [[(UserWarning, "LSTM with projections is not supported with oneDNN. Using "
                      "default implementation.")], []]
