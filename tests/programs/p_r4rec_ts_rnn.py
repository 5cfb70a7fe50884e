"""Time-series forecasting with recurrent nets (the "LSTM for time series prediction in
PyTorch" posts and the seq2seq forecaster with teacher forcing): min-max scaling and
unscaling, sliding windows via Tensor.unfold, stacked batch_first LSTM/GRU forecasters with
dropout, an encoder-decoder with teacher forcing ratio, and RMSE / MAE / MAPE metrics."""
import importlib
import os
import random

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
data = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".utils.data")

torch.manual_seed(0)
random.seed(0)
t = torch.arange(0, 120, dtype=torch.float32)
series = 10 + torch.sin(t * 0.2) * 3 + 0.05 * t + 0.3 * torch.randn(120)
print(series.shape, series.dtype, f"{series.mean().item():.4f}")

# scaling fitted on the training part only
train_len = 90
smin, smax = series[:train_len].min(), series[:train_len].max()
scaled = (series - smin) / (smax - smin)
print(f"{scaled[:train_len].min().item():.4f} {scaled[:train_len].max().item():.4f}")

LOOKBACK, HORIZON = 12, 4
windows = scaled.unfold(0, LOOKBACK + HORIZON, 1)
print("windows:", windows.shape, windows.stride(), windows.is_contiguous())
X = windows[:, :LOOKBACK].unsqueeze(-1)
Y = windows[:, LOOKBACK:]
print(X.shape, Y.shape)
n_train = train_len - LOOKBACK - HORIZON + 1
X_train, Y_train = X[:n_train], Y[:n_train]
X_test, Y_test = X[n_train:], Y[n_train:]
print(len(X_train), len(X_test))
loader = data.DataLoader(data.TensorDataset(X_train, Y_train), batch_size=16, shuffle=True)


class LSTMForecaster(nn.Module):
    def __init__(self, input_size=1, hidden_size=16, num_layers=2, horizon=4, dropout=0.2,
                 cell=nn.LSTM):
        super().__init__()
        self.rnn = cell(input_size=input_size, hidden_size=hidden_size, num_layers=num_layers,
                        batch_first=True, dropout=dropout)
        self.linear = nn.Linear(hidden_size, horizon)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.linear(out[:, -1, :])


def metrics(pred, target):
    rmse = torch.sqrt(torch.mean((pred - target) ** 2))
    mae = torch.mean(torch.abs(pred - target))
    mape = torch.mean(torch.abs((target - pred) / target)) * 100
    return rmse.item(), mae.item(), mape.item()


def unscale(z):
    return z * (smax - smin) + smin


for cell in (nn.LSTM, nn.GRU):
    torch.manual_seed(1)
    model = LSTMForecaster(cell=cell)
    print(model)
    print([(n, tuple(p.shape)) for n, p in model.rnn.named_parameters()][:4])
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    loss_fn = nn.MSELoss()
    for epoch in range(4):
        model.train()
        for xb, yb in loader:
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            opt.step()
        print(f"{cell.__name__} epoch {epoch} loss {loss.item():.5f}")
    model.eval()
    out_bf = model.rnn(X_test[:2])[0]
    print(out_bf.shape, out_bf.stride(), type(out_bf.grad_fn).__name__)
    with torch.no_grad():
        pred = model(X_test)
        rmse, mae, mape = metrics(unscale(pred), unscale(Y_test))
        print(f"{cell.__name__} test RMSE {rmse:.4f} MAE {mae:.4f} MAPE {mape:.3f}%")
        out, hidden = model.rnn(X_test[:2])
        if isinstance(hidden, tuple):
            print("h/c:", hidden[0].shape, hidden[1].shape)
        else:
            print("h:", hidden.shape)
        print(torch.allclose(out[:, -1], hidden[0][-1] if isinstance(hidden, tuple)
                             else hidden[-1]))


class Encoder(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True)

    def forward(self, x):
        outputs, (hidden, cell) = self.lstm(x)
        return hidden, cell


class Decoder(nn.Module):
    def __init__(self, output_size, hidden_size, num_layers):
        super().__init__()
        self.lstm = nn.LSTM(output_size, hidden_size, num_layers, batch_first=True)
        self.fc = nn.Linear(hidden_size, output_size)

    def forward(self, x, hidden, cell):
        output, (hidden, cell) = self.lstm(x.unsqueeze(1), (hidden, cell))
        prediction = self.fc(output.squeeze(1))
        return prediction, hidden, cell


class Seq2Seq(nn.Module):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder

    def forward(self, src, target_len, trg=None, teacher_forcing_ratio=0.5):
        batch_size = src.shape[0]
        outputs = torch.zeros(batch_size, target_len, 1)
        hidden, cell = self.encoder(src)
        decoder_input = src[:, -1, :]
        for t in range(target_len):
            out, hidden, cell = self.decoder(decoder_input, hidden, cell)
            outputs[:, t, :] = out
            teacher_force = trg is not None and random.random() < teacher_forcing_ratio
            decoder_input = trg[:, t, :] if teacher_force else out
        return outputs


torch.manual_seed(2)
s2s = Seq2Seq(Encoder(1, 12, 2), Decoder(1, 12, 2))
print(s2s)
opt = torch.optim.SGD(s2s.parameters(), lr=0.1, momentum=0.9, nesterov=True)
for step in range(6):
    xb, yb = X_train[step * 8:(step + 1) * 8], Y_train[step * 8:(step + 1) * 8].unsqueeze(-1)
    out = s2s(xb, HORIZON, yb, teacher_forcing_ratio=0.5)
    loss = F.mse_loss(out, yb)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"seq2seq step {step} loss {loss.item():.5f} {type(out.grad_fn).__name__}")
with torch.no_grad():
    pred = s2s(X_test, HORIZON).squeeze(-1)
print(pred.shape, [f"{m:.4f}" for m in metrics(unscale(pred), unscale(Y_test))])
print("RESULT:", f"{loss.item():.5f}")
