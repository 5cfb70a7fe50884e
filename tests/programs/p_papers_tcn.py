"""locuslab/TCN (tcn.py + the adding problem), shrunk; plus ndrplz's ConvLSTM cell."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
weight_norm = torch.nn.utils.weight_norm
import warnings  # noqa: E402

warnings.filterwarnings("ignore")


class Chomp1d(nn.Module):
    def __init__(self, chomp_size):
        super(Chomp1d, self).__init__()
        self.chomp_size = chomp_size

    def forward(self, x):
        return x[:, :, :-self.chomp_size].contiguous()


class TemporalBlock(nn.Module):
    def __init__(self, n_inputs, n_outputs, kernel_size, stride, dilation, padding, dropout=0.2):
        super(TemporalBlock, self).__init__()
        self.conv1 = weight_norm(nn.Conv1d(n_inputs, n_outputs, kernel_size,
                                           stride=stride, padding=padding, dilation=dilation))
        self.chomp1 = Chomp1d(padding)
        self.relu1 = nn.ReLU()
        self.dropout1 = nn.Dropout(dropout)
        self.conv2 = weight_norm(nn.Conv1d(n_outputs, n_outputs, kernel_size,
                                           stride=stride, padding=padding, dilation=dilation))
        self.chomp2 = Chomp1d(padding)
        self.relu2 = nn.ReLU()
        self.dropout2 = nn.Dropout(dropout)
        self.net = nn.Sequential(self.conv1, self.chomp1, self.relu1, self.dropout1,
                                 self.conv2, self.chomp2, self.relu2, self.dropout2)
        self.downsample = nn.Conv1d(n_inputs, n_outputs, 1) if n_inputs != n_outputs else None
        self.relu = nn.ReLU()
        self.init_weights()

    def init_weights(self):
        self.conv1.weight.data.normal_(0, 0.01)
        self.conv2.weight.data.normal_(0, 0.01)
        if self.downsample is not None:
            self.downsample.weight.data.normal_(0, 0.01)

    def forward(self, x):
        out = self.net(x)
        res = x if self.downsample is None else self.downsample(x)
        return self.relu(out + res)


class TemporalConvNet(nn.Module):
    def __init__(self, num_inputs, num_channels, kernel_size=2, dropout=0.2):
        super(TemporalConvNet, self).__init__()
        layers = []
        num_levels = len(num_channels)
        for i in range(num_levels):
            dilation_size = 2 ** i
            in_channels = num_inputs if i == 0 else num_channels[i - 1]
            out_channels = num_channels[i]
            layers += [TemporalBlock(in_channels, out_channels, kernel_size, stride=1,
                                     dilation=dilation_size,
                                     padding=(kernel_size - 1) * dilation_size,
                                     dropout=dropout)]
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)


class TCN(nn.Module):
    def __init__(self, input_size, output_size, num_channels, kernel_size, dropout):
        super(TCN, self).__init__()
        self.tcn = TemporalConvNet(input_size, num_channels, kernel_size=kernel_size,
                                   dropout=dropout)
        self.linear = nn.Linear(num_channels[-1], output_size)
        self.init_weights()

    def init_weights(self):
        self.linear.weight.data.normal_(0, 0.01)

    def forward(self, x):
        y1 = self.tcn(x)
        return self.linear(y1[:, :, -1])


def data_generator(N, seq_length):
    X_num = torch.rand([N, 1, seq_length])
    X_mask = torch.zeros([N, 1, seq_length])
    Y = torch.zeros([N, 1])
    for i in range(N):
        positions = torch.randperm(seq_length)[:2]
        X_mask[i, 0, positions[0]] = 1
        X_mask[i, 0, positions[1]] = 1
        Y[i, 0] = X_num[i, 0, positions[0]] + X_num[i, 0, positions[1]]
    X = torch.cat((X_num, X_mask), dim=1)
    return torch.autograd.Variable(X), torch.autograd.Variable(Y)


torch.manual_seed(1111)
X_train, Y_train = data_generator(40, 20)
X_test, Y_test = data_generator(10, 20)
print(X_train.shape, Y_train.shape)
channel_sizes = [8] * 3
model = TCN(2, 1, channel_sizes, kernel_size=3, dropout=0.0)
print(model)
print(sorted(model.tcn.network[0].conv1.state_dict().keys()))
print(model.tcn.network[0].conv1.weight_g.shape, model.tcn.network[0].conv1.weight_v.shape)
lr = 2e-3
optimizer = getattr(torch.optim, "Adam")(model.parameters(), lr=lr)
batch_size = 10
for epoch in range(1, 3):
    model.train()
    batch_idx = 1
    total_loss = 0
    for i in range(0, X_train.size(0), batch_size):
        x, y = X_train[i:(i + batch_size)], Y_train[i:(i + batch_size)]
        optimizer.zero_grad()
        output = model(x)
        loss = F.mse_loss(output, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        batch_idx += 1
        total_loss += loss.item()
    print("Train Epoch: {:2d} \tLoss: {:.6f}".format(epoch, total_loss / 4))
    model.eval()
    with torch.no_grad():
        output = model(X_test)
        test_loss = F.mse_loss(output, Y_test)
        print('\nTest set: Average loss: {:.6f}\n'.format(test_loss.item()))
print(output[:3])


class ConvLSTMCell(nn.Module):
    def __init__(self, input_dim, hidden_dim, kernel_size, bias):
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
        combined = torch.cat([input_tensor, h_cur], dim=1)
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
        return (torch.zeros(batch_size, self.hidden_dim, height, width,
                            device=self.conv.weight.device),
                torch.zeros(batch_size, self.hidden_dim, height, width,
                            device=self.conv.weight.device))


cell = ConvLSTMCell(input_dim=2, hidden_dim=4, kernel_size=(3, 3), bias=True)
print(cell)
seq = torch.randn(3, 5, 2, 8, 8)  # b, t, c, h, w
h, c = cell.init_hidden(batch_size=3, image_size=(8, 8))
outputs = []
for t in range(seq.size(1)):
    h, c = cell(input_tensor=seq[:, t, :, :, :], cur_state=[h, c])
    outputs.append(h)
layer_output = torch.stack(outputs, dim=1)
print(layer_output.shape, h.shape, c.shape)
loss = layer_output.pow(2).mean() + c.abs().mean()
loss.backward()
print(f"{loss.item():.6f}", cell.conv.weight.grad.shape, f"{cell.conv.bias.grad.sum().item():.6f}")

# the modern TCN forks: torch.nn.utils.parametrizations.weight_norm, blocks cloned by deepcopy
import copy  # noqa: E402

pwn = torch.nn.utils.parametrizations.weight_norm
conv = pwn(nn.Conv1d(2, 4, 3, padding=2, dilation=1))
print(conv)
print(sorted(conv.state_dict().keys()))
blocks = nn.ModuleList([copy.deepcopy(conv) for _ in range(2)])
y = blocks[1](X_test)[:, :, :-2]
print(y.shape, f"{y.sum().item():.5f}", type(blocks[0]).__name__)
y.pow(2).mean().backward()
print([(n, tuple(p.grad.shape)) for n, p in blocks[1].named_parameters()])
print(blocks[0].parametrizations.weight.original0.grad)
print(f"RESULT: {test_loss.item():.6f}")
