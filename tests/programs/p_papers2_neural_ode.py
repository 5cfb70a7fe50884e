"""Neural ODE (Chen et al. 2018; torchdiffeq's examples/ode_demo.py) with a hand-written fixed-step
RK4 solver instead of odeint."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
optim = torch.optim


def rk4_step(func, t, dt, y):
    k1 = func(t, y)
    k2 = func(t + dt / 2, y + dt * k1 / 2)
    k3 = func(t + dt / 2, y + dt * k2 / 2)
    k4 = func(t + dt, y + dt * k3)
    return y + dt * (k1 + 2 * k2 + 2 * k3 + k4) / 6


def odeint(func, y0, t):
    solution = [y0]
    y = y0
    for t0, t1 in zip(t[:-1], t[1:]):
        y = rk4_step(func, t0, t1 - t0, y)
        solution.append(y)
    return torch.stack(solution)


class Lambda(nn.Module):
    def forward(self, t, y):
        return torch.mm(y ** 3, true_A)


class ODEFunc(nn.Module):
    def __init__(self):
        super(ODEFunc, self).__init__()
        self.net = nn.Sequential(
            nn.Linear(2, 50),
            nn.Tanh(),
            nn.Linear(50, 2),
        )
        for m in self.net.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, mean=0, std=0.1)
                nn.init.constant_(m.bias, val=0)
        self.nfe = 0

    def forward(self, t, y):
        self.nfe += 1
        return self.net(y ** 3)


class RunningAverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self, momentum=0.99):
        self.momentum = momentum
        self.reset()

    def reset(self):
        self.val = None
        self.avg = 0

    def update(self, val):
        if self.val is None:
            self.avg = val
        else:
            self.avg = self.avg * self.momentum + val * (1 - self.momentum)
        self.val = val


data_size, batch_time, batch_size = 50, 8, 16
true_y0 = torch.tensor([[2., 0.]])
t = torch.linspace(0., 2.5, data_size)
true_A = torch.tensor([[-0.1, 2.0], [-2.0, -0.1]])
with torch.no_grad():
    true_y = odeint(Lambda(), true_y0, t)
print(true_y.shape, true_y[-1])


def get_batch():
    s = torch.from_numpy(np.random.choice(np.arange(data_size - batch_time, dtype=np.int64),
                                          batch_size, replace=False))
    batch_y0 = true_y[s]  # (M, D)
    batch_t = t[:batch_time]  # (T)
    batch_y = torch.stack([true_y[s + i] for i in range(batch_time)], dim=0)  # (T, M, D)
    return batch_y0, batch_t, batch_y


import numpy as np  # noqa: E402

np.random.seed(0)
torch.manual_seed(0)
func = ODEFunc()
optimizer = optim.RMSprop(func.parameters(), lr=1e-3)
time_meter = RunningAverageMeter(0.97)
loss_meter = RunningAverageMeter(0.97)
for itr in range(1, 11):
    optimizer.zero_grad()
    batch_y0, batch_t, batch_y = get_batch()
    pred_y = odeint(func, batch_y0, batch_t)
    loss = torch.mean(torch.abs(pred_y - batch_y))
    loss.backward()
    optimizer.step()
    loss_meter.update(loss.item())
    if itr % 5 == 0:
        with torch.no_grad():
            pred_y = odeint(func, true_y0, t)
            loss = torch.mean(torch.abs(pred_y - true_y))
            print('Iter {:04d} | Total Loss {:.6f} | avg {:.6f}'.format(itr, loss.item(),
                                                                        loss_meter.avg))
print("nfe", func.nfe)
print(pred_y[::12, 0])
print("RESULT:", loss.item())
