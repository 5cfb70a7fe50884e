"""N-BEATS (Oreshkin et al.; the philipperemy/n-beats PyTorch port), shrunk, plus a
WaveNet-style causal temporal conv forecaster with quantile (pinball) loss and an LR
range test (the fastai / torch-lr-finder recipe: exponential LR sweep with smoothed loss,
state restored afterwards), then ReduceLROnPlateau with early stopping."""
import copy
import importlib
import math
import os

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(7)
BACKCAST, FORECAST = 10, 5


def linear_space(backcast_length, forecast_length, is_forecast=True):
    horizon = forecast_length if is_forecast else backcast_length
    return np.arange(0, horizon) / horizon


def seasonality_model(thetas, t):
    p = thetas.size()[-1]
    assert p <= thetas.shape[1], "thetas_dim is too big."
    p1, p2 = (p // 2, p // 2) if p % 2 == 0 else (p // 2, p // 2 + 1)
    s1 = torch.tensor(np.array([np.cos(2 * np.pi * i * t) for i in range(p1)])).float()
    s2 = torch.tensor(np.array([np.sin(2 * np.pi * i * t) for i in range(p2)])).float()
    S = torch.cat([s1, s2])
    return thetas.mm(S)


def trend_model(thetas, t):
    p = thetas.size()[-1]
    assert p <= 4, "thetas_dim is too big."
    T = torch.tensor(np.array([t ** i for i in range(p)])).float()
    return thetas.mm(T)


class Block(nn.Module):
    def __init__(self, units, thetas_dim, backcast_length=10, forecast_length=5,
                 share_thetas=False):
        super(Block, self).__init__()
        self.units = units
        self.thetas_dim = thetas_dim
        self.backcast_length = backcast_length
        self.forecast_length = forecast_length
        self.share_thetas = share_thetas
        self.fc1 = nn.Linear(backcast_length, units)
        self.fc2 = nn.Linear(units, units)
        self.fc3 = nn.Linear(units, units)
        self.backcast_linspace = linear_space(backcast_length, forecast_length, False)
        self.forecast_linspace = linear_space(backcast_length, forecast_length, True)
        if share_thetas:
            self.theta_f_fc = self.theta_b_fc = nn.Linear(units, thetas_dim, bias=False)
        else:
            self.theta_b_fc = nn.Linear(units, thetas_dim, bias=False)
            self.theta_f_fc = nn.Linear(units, thetas_dim, bias=False)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = F.relu(self.fc3(x))
        return x

    def __str__(self):
        block_type = type(self).__name__
        return (f"{block_type}(units={self.units}, thetas_dim={self.thetas_dim}, "
                f"backcast_length={self.backcast_length}, "
                f"forecast_length={self.forecast_length}, share_thetas={self.share_thetas}) "
                f"at @{id(self)}")


class SeasonalityBlock(Block):
    def __init__(self, units, thetas_dim, backcast_length=10, forecast_length=5):
        super().__init__(units, forecast_length, backcast_length, forecast_length,
                         share_thetas=True)

    def forward(self, x):
        x = super().forward(x)
        backcast = seasonality_model(self.theta_b_fc(x), self.backcast_linspace)
        forecast = seasonality_model(self.theta_f_fc(x), self.forecast_linspace)
        return backcast, forecast


class TrendBlock(Block):
    def __init__(self, units, thetas_dim, backcast_length=10, forecast_length=5):
        super().__init__(units, thetas_dim, backcast_length, forecast_length,
                         share_thetas=True)

    def forward(self, x):
        x = super().forward(x)
        backcast = trend_model(self.theta_b_fc(x), self.backcast_linspace)
        forecast = trend_model(self.theta_f_fc(x), self.forecast_linspace)
        return backcast, forecast


class GenericBlock(Block):
    def __init__(self, units, thetas_dim, backcast_length=10, forecast_length=5):
        super().__init__(units, thetas_dim, backcast_length, forecast_length)
        self.backcast_fc = nn.Linear(thetas_dim, backcast_length)
        self.forecast_fc = nn.Linear(thetas_dim, forecast_length)

    def forward(self, x):
        x = super().forward(x)
        theta_b = self.theta_b_fc(x)
        theta_f = self.theta_f_fc(x)
        return self.backcast_fc(theta_b), self.forecast_fc(theta_f)


class NBeatsNet(nn.Module):
    def __init__(self, stack_types, nb_blocks_per_stack, thetas_dim, hidden_layer_units):
        super().__init__()
        self.stacks = nn.ModuleList()
        for stack_id, kind in enumerate(stack_types):
            blocks = nn.ModuleList()
            for _ in range(nb_blocks_per_stack):
                blocks.append(kind(hidden_layer_units, thetas_dim[stack_id], BACKCAST, FORECAST))
            self.stacks.append(blocks)

    def forward(self, backcast):
        forecast = torch.zeros(size=(backcast.size()[0], FORECAST))
        for stack in self.stacks:
            for block in stack:
                b, f = block(backcast)
                backcast = backcast - b
                forecast = forecast + f
        return backcast, forecast


t = torch.arange(200, dtype=torch.float32)
y = torch.sin(t / 6) + 0.01 * t + 0.1 * torch.randn(200)
win = y.unfold(0, BACKCAST + FORECAST, 2)
x_all, y_all = win[:, :BACKCAST], win[:, BACKCAST:]
x_tr, y_tr, x_va, y_va = x_all[:70], y_all[:70], x_all[70:], y_all[70:]
print(win.shape, x_tr.shape, x_va.shape)

net = NBeatsNet([TrendBlock, SeasonalityBlock, GenericBlock], 2, [2, 8, 3], 16)
print(net.stacks[0][0].theta_b_fc is net.stacks[0][0].theta_f_fc)
print(str(net.stacks[2][0]).split(" at @")[0])
print(len(list(net.parameters())), len(net.state_dict()),
      sum(p.numel() for p in net.parameters()))
print([k for k in net.state_dict() if k.startswith("stacks.1.0")])
opt = torch.optim.Adam(net.parameters(), lr=3e-3)
for step in range(12):
    opt.zero_grad()
    _, fc = net(x_tr)
    loss = F.mse_loss(fc, y_tr)
    loss.backward()
    opt.step()
    if step % 4 == 0:
        print(f"nbeats step {step} loss {loss.item():.5f}")
net.eval()
with torch.no_grad():
    b, f = net(x_va)
print(b.shape, f.shape, f"{F.l1_loss(f, y_va).item():.5f}")


class CausalConv1d(nn.Conv1d):
    def __init__(self, in_channels, out_channels, kernel_size, dilation=1, **kwargs):
        self.__padding = (kernel_size - 1) * dilation
        super().__init__(in_channels, out_channels, kernel_size=kernel_size,
                         padding=self.__padding, dilation=dilation, **kwargs)

    def forward(self, input):
        result = super().forward(input)
        if self.__padding != 0:
            return result[:, :, :-self.__padding]
        return result


class QuantileTCN(nn.Module):
    def __init__(self, channels, quantiles, horizon):
        super().__init__()
        self.quantiles = quantiles
        layers, c_in = [], 1
        for i, c in enumerate(channels):
            layers += [CausalConv1d(c_in, c, 2, dilation=2 ** i), nn.GELU()]
            c_in = c
        self.tcn = nn.Sequential(*layers)
        self.head = nn.Linear(c_in, horizon * len(quantiles))
        self.horizon = horizon

    def forward(self, x):
        h = self.tcn(x.unsqueeze(1))[:, :, -1]
        return self.head(h).view(-1, self.horizon, len(self.quantiles))


def quantile_loss(preds, target, quantiles):
    losses = []
    for i, q in enumerate(quantiles):
        errors = target - preds[..., i]
        losses.append(torch.max((q - 1) * errors, q * errors).unsqueeze(-1))
    return torch.mean(torch.sum(torch.cat(losses, dim=-1), dim=-1))


# causality check: output at time t doesn't depend on inputs after t
cc = CausalConv1d(1, 1, 3, dilation=2)
print(cc)
z = torch.randn(1, 1, 12, requires_grad=True)
cc(z)[0, 0, 5].backward()
print((z.grad[0, 0] != 0).nonzero().flatten().tolist())

QS = [0.1, 0.5, 0.9]
torch.manual_seed(11)
qm = QuantileTCN([8, 8, 8], QS, FORECAST)
init_state = copy.deepcopy(qm.state_dict())
# LR range test
opt = torch.optim.SGD(qm.parameters(), lr=1e-4, momentum=0.9)
start_lr, end_lr, num_iter = 1e-4, 1.0, 12
gamma = (end_lr / start_lr) ** (1 / (num_iter - 1))
sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=gamma)
lrs, losses, avg, best = [], [], 0.0, math.inf
for it in range(num_iter):
    opt.zero_grad()
    loss = quantile_loss(qm(x_tr), y_tr, QS)
    loss.backward()
    opt.step()
    lrs.append(sched.get_last_lr()[0])
    avg = 0.7 * avg + 0.3 * loss.item()
    smooth = avg / (1 - 0.7 ** (it + 1))
    losses.append(smooth)
    best = min(best, smooth)
    sched.step()
    if smooth > 4 * best:
        print("stopping early, loss diverged at iter", it)
        break
print([f"{lr:.2e}" for lr in lrs[::3]])
print([f"{v:.4f}" for v in losses[::3]])
g = np.gradient(np.array(losses))
suggested = lrs[int(np.argmin(g))]
print("suggested lr:", f"{suggested:.2e}")
qm.load_state_dict(init_state)

opt = torch.optim.Adam(qm.parameters(), lr=min(suggested, 1e-2))
plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.2, patience=0, threshold=0.01)
best_val, wait = math.inf, 0
for epoch in range(8):
    qm.train()
    opt.zero_grad()
    loss = quantile_loss(qm(x_tr), y_tr, QS)
    loss.backward()
    opt.step()
    qm.eval()
    with torch.no_grad():
        val = quantile_loss(qm(x_va), y_va, QS).item()
    plateau.step(val)
    print(f"epoch {epoch} train {loss.item():.5f} val {val:.5f} lr {plateau.get_last_lr()}")
    if val < best_val:
        best_val, wait = val, 0
    else:
        wait += 1
        if wait > 2:
            break
with torch.no_grad():
    q = qm(x_va)
coverage = ((y_va >= q[..., 0]) & (y_va <= q[..., 2])).float().mean()
print(q.shape, f"coverage {coverage.item():.3f}", (q[..., 0] <= q[..., 2]).float().mean().item())
print("RESULT:", f"{best_val:.5f}")
