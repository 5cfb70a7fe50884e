"""d2l.ai chapter 12: optimization algorithms from scratch (GD on 2D functions, minibatch SGD,
momentum, AdaGrad, RMSProp, Adadelta, Adam, Yogi) next to torch.optim and lr schedulers (shrunk)."""
# ruff: noqa: E721, E741  (d2l's own idioms: type(m) == nn.Linear, loss named l)
import importlib
import math
import os

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
torch.manual_seed(0)


def train_2d(trainer, steps=20, f_grad=None):
    x1, x2, s1, s2 = -5, -2, 0, 0
    results = [(x1, x2)]
    for i in range(steps):
        if f_grad:
            x1, x2, s1, s2 = trainer(x1, x2, s1, s2, f_grad)
        else:
            x1, x2, s1, s2 = trainer(x1, x2, s1, s2)
        results.append((x1, x2))
    print(f'epoch {i + 1}, x1: {float(x1):f}, x2: {float(x2):f}')
    return results


def f_2d(x1, x2):
    return x1 ** 2 + 2 * x2 ** 2


def f_2d_grad(x1, x2):
    return (2 * x1, 4 * x2)


def gd_2d(x1, x2, s1, s2, f_grad):
    g1, g2 = f_grad(x1, x2)
    return (x1 - eta * g1, x2 - eta * g2, 0, 0)


eta = 0.1
train_2d(gd_2d, f_grad=f_2d_grad)


def sgd_2d(x1, x2, s1, s2, f_grad):
    g1, g2 = f_grad(x1, x2)
    g1 += torch.normal(0.0, 1, (1,)).item()
    g2 += torch.normal(0.0, 1, (1,)).item()
    eta_t = eta * lr()
    return (x1 - eta_t * g1, x2 - eta_t * g2, 0, 0)


def constant_lr():
    return 1


lr = constant_lr
train_2d(sgd_2d, steps=50, f_grad=f_2d_grad)


def exponential_lr():
    global t
    t += 1
    return math.exp(-0.1 * t)


t = 1
lr = exponential_lr
train_2d(sgd_2d, steps=100, f_grad=f_2d_grad)

# Newton's method on a nonconvex function
c = torch.tensor(0.15 * np.pi)


def f(x):
    return x * torch.cos(c * x)


def f_grad(x):
    return torch.cos(c * x) - c * x * torch.sin(c * x)


def f_hess(x):
    return - 2 * c * torch.sin(c * x) - x * c**2 * torch.cos(c * x)


def newton(eta=1):
    x = 10.0
    results = [x]
    for i in range(10):
        x -= eta * f_grad(x) / f_hess(x)
        results.append(float(x))
    print('epoch 10, x:', x)
    return results


newton(0.5)

eta, beta = 0.4, 0.5


def momentum_2d(x1, x2, v1, v2):
    v1 = beta * v1 + 0.2 * x1
    v2 = beta * v2 + 4 * x2
    return x1 - eta * v1, x2 - eta * v2, v1, v2


train_2d(momentum_2d)


def adagrad_2d(x1, x2, s1, s2):
    eps = 1e-6
    g1, g2 = 0.2 * x1, 4 * x2
    s1 += g1 ** 2
    s2 += g2 ** 2
    x1 -= eta / math.sqrt(s1 + eps) * g1
    x2 -= eta / math.sqrt(s2 + eps) * g2
    return x1, x2, s1, s2


train_2d(adagrad_2d)


def rmsprop_2d(x1, x2, s1, s2):
    g1, g2, eps = 0.2 * x1, 4 * x2, 1e-6
    s1 = gamma * s1 + (1 - gamma) * g1 ** 2
    s2 = gamma * s2 + (1 - gamma) * g2 ** 2
    x1 -= eta / math.sqrt(s1 + eps) * g1
    x2 -= eta / math.sqrt(s2 + eps) * g2
    return x1, x2, s1, s2


eta, gamma = 0.4, 0.9
train_2d(rmsprop_2d)

# minibatch training with from-scratch optimizers and their torch.optim counterparts
X_data = torch.randn(64, 5)
y_data = X_data @ torch.tensor([1.0, -2.0, 0.5, 3.0, -1.0]) + 0.3 + 0.1 * torch.randn(64)
y_data = y_data.reshape(-1, 1)


def get_data_ch11(batch_size=16):
    ds = torch.utils.data.TensorDataset(X_data, y_data)
    return torch.utils.data.DataLoader(ds, batch_size, shuffle=False), X_data.shape[1]


def linreg(X, w, b):
    return torch.matmul(X, w) + b


def squared_loss(y_hat, y):
    return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2


def evaluate_loss(net, data_iter, loss):
    total, n = 0.0, 0
    for X, y in data_iter:
        out = net(X)
        y = y.reshape(out.shape)
        l = loss(out, y)  # noqa: E741
        total += l.sum()
        n += l.numel()
    return total / n


def train_ch11(trainer_fn, states, hyperparams, data_iter, feature_dim, num_epochs=2):
    w = torch.normal(mean=0.0, std=0.01, size=(feature_dim, 1), requires_grad=True)
    b = torch.zeros((1), requires_grad=True)

    def net(X):
        return linreg(X, w, b)
    loss = squared_loss
    for _ in range(num_epochs):
        for X, y in data_iter:
            l = loss(net(X), y).mean()  # noqa: E741
            l.backward()
            trainer_fn([w, b], states, hyperparams)
        print(f'loss: {float(evaluate_loss(net, data_iter, loss)):.5f}')
    return w, b


def train_concise_ch11(trainer_fn, hyperparams, data_iter, num_epochs=2):
    net = nn.Sequential(nn.Linear(5, 1))

    def init_weights(module):
        if type(module) == nn.Linear:
            torch.nn.init.normal_(module.weight, std=0.01)
    net.apply(init_weights)
    optimizer = trainer_fn(net.parameters(), **hyperparams)
    loss = nn.MSELoss(reduction='none')
    for _ in range(num_epochs):
        for X, y in data_iter:
            optimizer.zero_grad()
            out = net(X)
            y = y.reshape(out.shape)
            l = loss(out, y)  # noqa: E741
            l.mean().backward()
            optimizer.step()
        print(f'loss: {float(evaluate_loss(net, data_iter, loss)) / 2:.5f}')
    print(optimizer)
    return net


def sgd(params, states, hyperparams):
    for p in params:
        p.data.sub_(hyperparams['lr'] * p.grad)
        p.grad.data.zero_()


data_iter, feature_dim = get_data_ch11(16)
train_ch11(sgd, None, {'lr': 0.05}, data_iter, feature_dim)
train_concise_ch11(torch.optim.SGD, {'lr': 0.05}, data_iter)


def init_momentum_states(feature_dim):
    v_w = torch.zeros((feature_dim, 1))
    v_b = torch.zeros(1)
    return (v_w, v_b)


def sgd_momentum(params, states, hyperparams):
    for p, v in zip(params, states):
        with torch.no_grad():
            v[:] = hyperparams['momentum'] * v + p.grad
            p[:] -= hyperparams['lr'] * v
        p.grad.data.zero_()


train_ch11(sgd_momentum, init_momentum_states(feature_dim), {'lr': 0.02, 'momentum': 0.5},
           data_iter, feature_dim)
train_concise_ch11(torch.optim.SGD, {'lr': 0.02, 'momentum': 0.5}, data_iter)


def init_adagrad_states(feature_dim):
    s_w = torch.zeros((feature_dim, 1))
    s_b = torch.zeros(1)
    return (s_w, s_b)


def adagrad(params, states, hyperparams):
    eps = 1e-6
    for p, s in zip(params, states):
        with torch.no_grad():
            s[:] += torch.square(p.grad)
            p[:] -= hyperparams['lr'] * p.grad / torch.sqrt(s + eps)
        p.grad.data.zero_()


train_ch11(adagrad, init_adagrad_states(feature_dim), {'lr': 0.1}, data_iter, feature_dim)
train_concise_ch11(torch.optim.Adagrad, {'lr': 0.1}, data_iter)


def init_rmsprop_states(feature_dim):
    s_w = torch.zeros((feature_dim, 1))
    s_b = torch.zeros(1)
    return (s_w, s_b)


def rmsprop(params, states, hyperparams):
    gamma, eps = hyperparams['gamma'], 1e-6
    for p, s in zip(params, states):
        with torch.no_grad():
            s[:] = gamma * s + (1 - gamma) * torch.square(p.grad)
            p[:] -= hyperparams['lr'] * p.grad / torch.sqrt(s + eps)
        p.grad.data.zero_()


train_ch11(rmsprop, init_rmsprop_states(feature_dim), {'lr': 0.01, 'gamma': 0.9},
           data_iter, feature_dim)
train_concise_ch11(torch.optim.RMSprop, {'lr': 0.01, 'alpha': 0.9}, data_iter)


def init_adadelta_states(feature_dim):
    s_w, s_b = torch.zeros((feature_dim, 1)), torch.zeros(1)
    delta_w, delta_b = torch.zeros((feature_dim, 1)), torch.zeros(1)
    return ((s_w, delta_w), (s_b, delta_b))


def adadelta(params, states, hyperparams):
    rho, eps = hyperparams['rho'], 1e-5
    for p, (s, delta) in zip(params, states):
        with torch.no_grad():
            s[:] = rho * s + (1 - rho) * torch.square(p.grad)
            g = (torch.sqrt(delta + eps) / torch.sqrt(s + eps)) * p.grad
            p[:] -= g
            delta[:] = rho * delta + (1 - rho) * g * g
        p.grad.data.zero_()


train_ch11(adadelta, init_adadelta_states(feature_dim), {'rho': 0.9}, data_iter, feature_dim)
train_concise_ch11(torch.optim.Adadelta, {'rho': 0.9}, data_iter)


def init_adam_states(feature_dim):
    v_w, v_b = torch.zeros((feature_dim, 1)), torch.zeros(1)
    s_w, s_b = torch.zeros((feature_dim, 1)), torch.zeros(1)
    return ((v_w, s_w), (v_b, s_b))


def adam(params, states, hyperparams):
    beta1, beta2, eps = 0.9, 0.999, 1e-6
    for p, (v, s) in zip(params, states):
        with torch.no_grad():
            v[:] = beta1 * v + (1 - beta1) * p.grad
            s[:] = beta2 * s + (1 - beta2) * torch.square(p.grad)
            v_bias_corr = v / (1 - beta1 ** hyperparams['t'])
            s_bias_corr = s / (1 - beta2 ** hyperparams['t'])
            p[:] -= hyperparams['lr'] * v_bias_corr / (torch.sqrt(s_bias_corr) + eps)
        p.grad.data.zero_()
    hyperparams['t'] += 1


train_ch11(adam, init_adam_states(feature_dim), {'lr': 0.01, 't': 1}, data_iter, feature_dim)
net = train_concise_ch11(torch.optim.Adam, {'lr': 0.01}, data_iter)


def yogi(params, states, hyperparams):
    beta1, beta2, eps = 0.9, 0.999, 1e-3
    for p, (v, s) in zip(params, states):
        with torch.no_grad():
            v[:] = beta1 * v + (1 - beta1) * p.grad
            s[:] = s + (1 - beta2) * torch.sign(torch.square(p.grad) - s) * torch.square(p.grad)
            v_bias_corr = v / (1 - beta1 ** hyperparams['t'])
            s_bias_corr = s / (1 - beta2 ** hyperparams['t'])
            p[:] -= hyperparams['lr'] * v_bias_corr / (torch.sqrt(s_bias_corr) + eps)
        p.grad.data.zero_()
    hyperparams['t'] += 1


w, b = train_ch11(yogi, init_adam_states(feature_dim), {'lr': 0.01, 't': 1}, data_iter,
                  feature_dim)
print(w.reshape(-1), b)

# learning rate scheduling
net = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
trainer = torch.optim.SGD(net.parameters(), lr=0.3)
print(trainer.param_groups[0]["lr"])
trainer.param_groups[0]["lr"] = 0.1
print(f'learning rate is now {trainer.param_groups[0]["lr"]:.2f}')


class SquareRootScheduler:
    def __init__(self, lr=0.1):
        self.lr = lr

    def __call__(self, num_update):
        return self.lr * pow(num_update + 1.0, -0.5)


class FactorScheduler:
    def __init__(self, factor=1, stop_factor_lr=1e-7, base_lr=0.1):
        self.factor = factor
        self.stop_factor_lr = stop_factor_lr
        self.base_lr = base_lr

    def __call__(self, num_update):
        self.base_lr = max(self.stop_factor_lr, self.base_lr * self.factor)
        return self.base_lr


scheduler = SquareRootScheduler(lr=0.1)
print([round(scheduler(t), 6) for t in range(5)])
scheduler = FactorScheduler(factor=0.9, stop_factor_lr=1e-2, base_lr=2.0)
print([round(scheduler(t), 6) for t in range(5)])
scheduler = torch.optim.lr_scheduler.MultiStepLR(trainer, milestones=[3, 6], gamma=0.5)


def get_lr(trainer, scheduler):
    lr = scheduler.get_last_lr()[0]
    trainer.step()
    scheduler.step()
    return lr


print([get_lr(trainer, scheduler) for t in range(8)])
trainer = torch.optim.SGD(net.parameters(), lr=0.3)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(trainer, T_max=6, eta_min=0.01)
print([round(get_lr(trainer, scheduler), 6) for t in range(8)])
loss = nn.MSELoss()
for epoch in range(3):
    trainer.zero_grad()
    l = loss(net(X_data), y_data)  # noqa: E741
    l.backward()
    trainer.step()
    scheduler.step()
    print(f'{epoch}: {l.item():.5f} lr {scheduler.get_last_lr()[0]:.6f}')
print(scheduler.state_dict())
print("RESULT:", f"{l.item():.5f}")
