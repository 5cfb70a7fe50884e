"""The nn.RNNCell / GRUCell / LSTMCell docs examples stepped by hand, checked against nn.RNN /
GRU / LSTM sharing their weights (the "unrolling an RNN" blog idiom), relu/bias=False/proj_size
variants, unbatched inputs, all_weights, and the errors for misuse."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(0)

# docs: RNNCell
rnn = nn.RNNCell(10, 20)
input = torch.randn(6, 3, 10)
hx = torch.randn(3, 20)
output = []
for i in range(6):
    hx = rnn(input[i], hx)
    output.append(hx)
print(rnn, len(output), output[-1].shape, output[-1].grad_fn)
print(output[-1][0, :5])

# docs: GRUCell
rnn = nn.GRUCell(10, 20)
hx = torch.randn(3, 20)
output = []
for i in range(6):
    hx = rnn(input[i], hx)
    output.append(hx)
print(rnn, output[-1][1, :5], output[-1].grad_fn)

# docs: LSTMCell
rnn = nn.LSTMCell(10, 20)
hx = torch.randn(3, 20)
cx = torch.randn(3, 20)
output = []
for i in range(input.size()[0]):
    hx, cx = rnn(input[i], (hx, cx))
    output.append(hx)
output = torch.stack(output, dim=0)
print(rnn, output.shape, output[-1, 2, :5], cx.grad_fn)


def unroll(cell, seq, state):
    outs = []
    for x_t in seq.unbind(0):
        state = cell(x_t, state)
        outs.append(state[0] if isinstance(state, tuple) else state)
    return torch.stack(outs), state


# cells sharing the weights of the fused layers
for mode, Layer, Cell, kw in [("RNN", nn.RNN, nn.RNNCell, {"nonlinearity": "relu"}),
                              ("GRU", nn.GRU, nn.GRUCell, {}),
                              ("LSTM", nn.LSTM, nn.LSTMCell, {})]:
    torch.manual_seed(1)
    layer = Layer(4, 5, **kw)
    cell = Cell(4, 5, **kw)
    cell.weight_ih = layer.weight_ih_l0
    cell.weight_hh = layer.weight_hh_l0
    cell.bias_ih = layer.bias_ih_l0
    cell.bias_hh = layer.bias_hh_l0
    x = torch.randn(7, 2, 4)
    if mode == "LSTM":
        h0 = (torch.zeros(1, 2, 5), torch.zeros(1, 2, 5))
        s0 = (h0[0][0], h0[1][0])
    else:
        h0 = torch.zeros(1, 2, 5)
        s0 = h0[0]
    ref, _ = layer(x, h0)
    mine, last = unroll(cell, x, s0)
    print(mode, torch.allclose(ref, mine, atol=1e-6), ref[-1, 0])
    (mine.sum() + ref.pow(2).sum()).backward()
    print(mode, layer.weight_hh_l0.grad.shape, layer.weight_hh_l0.grad[0, :3],
          layer.bias_ih_l0.grad[:3])
    print([n for n, _ in cell.named_parameters()], cell.nonlinearity if mode == "RNN" else "")

# bias=False, tanh, unbatched cells
cell = nn.RNNCell(3, 4, bias=False)
print(cell, [n for n, _ in cell.named_parameters()])
h = cell(torch.randn(3))
print(h.shape, h)
g = nn.GRUCell(3, 4, bias=False)
print(g(torch.randn(3), torch.zeros(4)).shape)
lc = nn.LSTMCell(3, 4)
h, c = lc(torch.randn(3))
print(h.shape, c.shape, h)

# proj_size LSTM, multi-layer, bidirectional: parameter shapes and all_weights
lstm = nn.LSTM(input_size=4, hidden_size=6, num_layers=2, proj_size=3, bidirectional=True,
               batch_first=True)
print(lstm)
print([(n, tuple(p.shape)) for n, p in lstm.named_parameters()])
print(len(lstm.all_weights), [tuple(w.shape) for w in lstm.all_weights[1]])
x = torch.randn(2, 5, 4)
out, (hn, cn) = lstm(x)
print(out.shape, hn.shape, cn.shape)
print(out[1, -1], hn[-1, 1])
out_u, (hn_u, cn_u) = lstm(x[0])
print(out_u.shape, hn_u.shape, torch.allclose(out_u, out[0], atol=1e-6))

# GRU multi-layer dropout in eval, h0 given, manual stacking of two GRUCells
torch.manual_seed(2)
gru = nn.GRU(3, 4, num_layers=2, dropout=0.5)
gru.eval()
c1, c2 = nn.GRUCell(3, 4), nn.GRUCell(4, 4)
with torch.no_grad():
    for c, layer in ((c1, 0), (c2, 1)):
        c.weight_ih.copy_(getattr(gru, f"weight_ih_l{layer}"))
        c.weight_hh.copy_(getattr(gru, f"weight_hh_l{layer}"))
        c.bias_ih.copy_(getattr(gru, f"bias_ih_l{layer}"))
        c.bias_hh.copy_(getattr(gru, f"bias_hh_l{layer}"))
x = torch.randn(5, 2, 3)
h0 = torch.randn(2, 2, 4)
ref, hn = gru(x, h0)
a, b = h0[0], h0[1]
outs = []
for t in range(5):
    a = c1(x[t], a)
    b = c2(a, b)
    outs.append(b)
print(torch.allclose(ref, torch.stack(outs), atol=1e-6), hn[1], ref.grad_fn is None)

# errors people hit
for fn in (lambda: nn.RNNCell(10, 20)(torch.randn(3, 5)),
           lambda: nn.LSTMCell(10, 20)(torch.randn(3, 10), (torch.randn(3, 20),)),
           lambda: nn.GRUCell(10, 20)(torch.randn(3, 10), torch.randn(2, 20)),
           lambda: nn.GRU(10, 20)(torch.randn(5, 3, 7)),
           lambda: nn.GRU(10, 20, num_layers=2)(torch.randn(5, 3, 10), torch.randn(1, 3, 20)),
           lambda: nn.LSTM(10, 20)(torch.randn(5, 3, 10), torch.randn(1, 3, 20)),
           lambda: nn.RNN(10, 20, nonlinearity="gelu"),
           lambda: nn.RNNCell(10, 20, nonlinearity="sigmoid")(torch.randn(2, 10)),
           lambda: nn.LSTM(4, 6, proj_size=6),
           lambda: nn.RNN(4, 6)(torch.randn(2, 3, 4, 5))):
    try:
        fn()
        print("no error")
    except Exception as e:
        print(type(e).__name__, e)
print("RESULT:", f"{out.sum().item():.4f}", f"{hn.sum().item():.4f}")
