"""ConvLSTM, shrunk from ndrplz/ConvLSTM_pytorch convlstm.py (ConvLSTMCell with one Conv2d over
cat([x, h]) split into i/f/o/g gates, ConvLSTM with batch_first, return_all_layers, the
kernel-size checks and _extend_for_multilayer, stateful hidden_state raising NotImplementedError)
plus the README usage and a small next-frame predictor in the style of holmdk/Video-Prediction-
using-PyTorch (ConvLSTM encoder + 1x1 conv head, BCE-with-logits, Adam) on moving 8x8 squares."""
# ruff: noqa: E501  (upstream's own line lengths and names, kept)
import importlib
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")


class ConvLSTMCell(nn.Module):

    def __init__(self, input_dim, hidden_dim, kernel_size, bias):
        """
        Initialize ConvLSTM cell.
        """

        super(ConvLSTMCell, self).__init__()

        self.input_dim = input_dim
        self.hidden_dim = hidden_dim

        self.kernel_size = kernel_size
        self.padding = kernel_size[0] // 2, kernel_size[1] // 2
        self.bias = bias

        self.conv = nn.Conv2d(in_channels=self.input_dim + self.hidden_dim,
                              out_channels=4 * self.hidden_dim,
                              kernel_size=self.kernel_size,
                              padding=self.padding,
                              bias=self.bias)

    def forward(self, input_tensor, cur_state):
        h_cur, c_cur = cur_state

        combined = torch.cat([input_tensor, h_cur], dim=1)  # concatenate along channel axis

        combined_conv = self.conv(combined)
        cc_i, cc_f, cc_o, cc_g = torch.split(combined_conv, self.hidden_dim, dim=1)
        i = torch.sigmoid(cc_i)
        f = torch.sigmoid(cc_f)
        o = torch.sigmoid(cc_o)
        g = torch.tanh(cc_g)

        c_next = f * c_cur + i * g
        h_next = o * torch.tanh(c_next)

        return h_next, c_next

    def init_hidden(self, batch_size, image_size):
        height, width = image_size
        return (torch.zeros(batch_size, self.hidden_dim, height, width, device=self.conv.weight.device),
                torch.zeros(batch_size, self.hidden_dim, height, width, device=self.conv.weight.device))


class ConvLSTM(nn.Module):

    def __init__(self, input_dim, hidden_dim, kernel_size, num_layers,
                 batch_first=False, bias=True, return_all_layers=False):
        super(ConvLSTM, self).__init__()

        self._check_kernel_size_consistency(kernel_size)

        # Make sure that both `kernel_size` and `hidden_dim` are lists having len == num_layers
        kernel_size = self._extend_for_multilayer(kernel_size, num_layers)
        hidden_dim = self._extend_for_multilayer(hidden_dim, num_layers)
        if not len(kernel_size) == len(hidden_dim) == num_layers:
            raise ValueError('Inconsistent list length.')

        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.kernel_size = kernel_size
        self.num_layers = num_layers
        self.batch_first = batch_first
        self.bias = bias
        self.return_all_layers = return_all_layers

        cell_list = []
        for i in range(0, self.num_layers):
            cur_input_dim = self.input_dim if i == 0 else self.hidden_dim[i - 1]

            cell_list.append(ConvLSTMCell(input_dim=cur_input_dim,
                                          hidden_dim=self.hidden_dim[i],
                                          kernel_size=self.kernel_size[i],
                                          bias=self.bias))

        self.cell_list = nn.ModuleList(cell_list)

    def forward(self, input_tensor, hidden_state=None):
        if not self.batch_first:
            # (t, b, c, h, w) -> (b, t, c, h, w)
            input_tensor = input_tensor.permute(1, 0, 2, 3, 4)

        b, _, _, h, w = input_tensor.size()

        # Implement stateful ConvLSTM
        if hidden_state is not None:
            raise NotImplementedError()
        else:
            # Since the init is done in forward. Can send image size here
            hidden_state = self._init_hidden(batch_size=b,
                                             image_size=(h, w))

        layer_output_list = []
        last_state_list = []

        seq_len = input_tensor.size(1)
        cur_layer_input = input_tensor

        for layer_idx in range(self.num_layers):

            h, c = hidden_state[layer_idx]
            output_inner = []
            for t in range(seq_len):
                h, c = self.cell_list[layer_idx](input_tensor=cur_layer_input[:, t, :, :, :],
                                                 cur_state=[h, c])
                output_inner.append(h)

            layer_output = torch.stack(output_inner, dim=1)
            cur_layer_input = layer_output

            layer_output_list.append(layer_output)
            last_state_list.append([h, c])

        if not self.return_all_layers:
            layer_output_list = layer_output_list[-1:]
            last_state_list = last_state_list[-1:]

        return layer_output_list, last_state_list

    def _init_hidden(self, batch_size, image_size):
        init_states = []
        for i in range(self.num_layers):
            init_states.append(self.cell_list[i].init_hidden(batch_size, image_size))
        return init_states

    @staticmethod
    def _check_kernel_size_consistency(kernel_size):
        if not (isinstance(kernel_size, tuple) or
                (isinstance(kernel_size, list) and all([isinstance(elem, tuple) for elem in kernel_size]))):
            raise ValueError('`kernel_size` must be tuple or list of tuples')

    @staticmethod
    def _extend_for_multilayer(param, num_layers):
        if not isinstance(param, list):
            param = [param] * num_layers
        return param


class NextFrame(nn.Module):
    def __init__(self, nf=6):
        super().__init__()
        self.encoder = ConvLSTM(input_dim=1, hidden_dim=[nf, nf], kernel_size=(3, 3), num_layers=2,
                                batch_first=True, bias=True, return_all_layers=False)
        self.head = nn.Conv2d(nf, 1, kernel_size=1)

    def forward(self, x):
        layer_outputs, last_states = self.encoder(x)
        return self.head(last_states[0][0])


def moving_squares(n, t, size=8, generator=None):
    frames = torch.zeros(n, t + 1, 1, size, size)
    start = torch.randint(0, size - 3, (n, 2), generator=generator)
    vel = torch.randint(-1, 2, (n, 2), generator=generator)
    for b in range(n):
        r, c = start[b].tolist()
        dr, dc = vel[b].tolist()
        for s in range(t + 1):
            rr, cc = (r + dr * s) % (size - 2), (c + dc * s) % (size - 2)
            frames[b, s, 0, rr:rr + 3, cc:cc + 3] = 1.0
    return frames[:, :-1], frames[:, -1]


torch.manual_seed(0)

# README usage
x = torch.rand((4, 5, 3, 6, 6))
convlstm = ConvLSTM(3, 4, (3, 3), 1, True, True, False)
_, last_states = convlstm(x)
h = last_states[0][0]  # 0 for layer index, 0 for h index
print("h", h.shape, h.grad_fn.name())
print("h[0,0]", h[0, 0])

# time-major input, several layers with per-layer widths/kernels, all layers returned
deep = ConvLSTM(3, [4, 5], [(3, 3), (1, 1)], 2, batch_first=False, return_all_layers=True)
outs, states = deep(x.transpose(0, 1))
print("outs", [tuple(o.shape) for o in outs], "states", [tuple(s[1].shape) for s in states])
loss = outs[-1].sum() + states[0][1].pow(2).sum()
loss.backward()
for n, p in deep.named_parameters():
    print(n, tuple(p.shape), "%.5f" % p.grad.norm().item())

for bad in [lambda: ConvLSTM(3, 4, [3, 3], 1), lambda: ConvLSTM(3, [4, 4, 4], (3, 3), 2),
            lambda: convlstm(x, hidden_state=[(h, h)])]:
    try:
        bad()
    except (ValueError, NotImplementedError) as e:
        print(type(e).__name__, e)

# next-frame prediction
g = torch.Generator().manual_seed(3)
model = NextFrame()
print("params", sum(p.numel() for p in model.parameters()))
print("keys", list(model.state_dict()))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(6):
    seq, target = moving_squares(4, 4, generator=g)
    logits = model(seq)
    loss = F.binary_cross_entropy_with_logits(logits, target)
    opt.zero_grad()
    loss.backward()
    gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    print("step %d loss %.5f gnorm %.5f" % (step, loss.item(), gn.item()))
with torch.no_grad():
    seq, target = moving_squares(2, 4, generator=g)
    pred = torch.sigmoid(model(seq))
print("pred", pred.shape, pred[0, 0, :3, :3])
