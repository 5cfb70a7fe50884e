"""Fitting with L-BFGS in PyTorch (the torch.optim docs' closure pattern, curve-fitting and
Rosenbrock posts): optim.LBFGS with line_search_fn="strong_wolfe", history_size, max_iter,
tolerance_grad; fitting a damped sinusoid, a Gaussian-peak model and logistic regression,
and comparing the LBFGS state dict with torch's."""

import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
optim = torch.optim

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)


def rosenbrock(xy):
    x, y = xy
    return (1 - x) ** 2 + 100 * (y - x ** 2) ** 2


for ls in [None, "strong_wolfe"]:
    p = torch.tensor([-1.5, 2.0], requires_grad=True)
    opt = optim.LBFGS([p], lr=1 if ls else 0.1, max_iter=20, history_size=10,
                      line_search_fn=ls)
    calls = [0]

    def closure():
        opt.zero_grad()
        loss = rosenbrock(p)
        loss.backward()
        calls[0] += 1
        return loss

    for outer in range(3):
        loss = opt.step(closure)
        print(f"ls={ls} outer {outer} loss {loss.item():.6f} p {p.detach().tolist()}")
    st = opt.state[opt._params[0]]
    print("func evals", st["func_evals"], "n_iter", st["n_iter"], "calls", calls[0])

print(sorted(opt.state_dict()["state"][0].keys()))
print(opt.state_dict()["param_groups"])
print(opt)


class DampedSine(nn.Module):
    def __init__(self):
        super().__init__()
        self.amp = nn.Parameter(torch.tensor(1.0))
        self.decay = nn.Parameter(torch.tensor(0.5))
        self.freq = nn.Parameter(torch.tensor(2.5))
        self.phase = nn.Parameter(torch.tensor(0.0))

    def forward(self, t):
        return self.amp * torch.exp(-self.decay * t) * torch.sin(self.freq * t + self.phase)


t = torch.linspace(0, 5, 80)
true = 2.0 * torch.exp(-0.3 * t) * torch.sin(3.0 * t + 0.5)
y = true + 0.02 * torch.randn_like(t)
model = DampedSine()
opt = optim.LBFGS(model.parameters(), lr=1, max_iter=50, line_search_fn="strong_wolfe",
                  tolerance_grad=1e-9, tolerance_change=1e-12)
for i in range(4):
    def closure():
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(t), y)
        loss.backward()
        return loss
    loss = opt.step(closure)
    print(f"fit {i} loss {loss.item():.6f}")
print({k: round(v.item(), 4) for k, v in model.state_dict().items()})

# Gaussian peak fit with bounded params via softplus reparametrisation
xg = torch.linspace(-3, 3, 60)
yg = 1.5 * torch.exp(-0.5 * ((xg - 0.7) / 0.4) ** 2) + 0.01 * torch.randn(60)
raw = torch.tensor([0.0, 0.0, 0.0], requires_grad=True)
opt = optim.LBFGS([raw], max_iter=100, line_search_fn="strong_wolfe")


def gauss(params):
    a, mu, s = nn.functional.softplus(params[0]), params[1], nn.functional.softplus(params[2])
    return a * torch.exp(-0.5 * ((xg - mu) / s) ** 2)


def closure():
    opt.zero_grad()
    loss = ((gauss(raw) - yg) ** 2).sum()
    loss.backward()
    return loss


for _ in range(2):
    loss = opt.step(closure)
a = nn.functional.softplus(raw[0]).item()
s = nn.functional.softplus(raw[2]).item()
print(f"gauss fit a={a:.4f} mu={raw[1].item():.4f} s={s:.4f} loss {loss.item():.6f}")

# logistic regression with LBFGS + weight decay-like L2 term
Xl = torch.randn(100, 3)
wl = torch.tensor([1.5, -2.0, 0.5])
yl = (torch.sigmoid(Xl @ wl) > torch.rand(100)).double()
clf = nn.Linear(3, 1)
opt = optim.LBFGS(clf.parameters(), lr=0.5, max_iter=30, history_size=5,
                  line_search_fn="strong_wolfe")


def closure():
    opt.zero_grad()
    logits = clf(Xl).squeeze(1)
    loss = nn.functional.binary_cross_entropy_with_logits(logits, yl)
    loss = loss + 1e-3 * clf.weight.pow(2).sum()
    loss.backward()
    return loss


for _ in range(3):
    loss = opt.step(closure)
print(f"logreg loss {loss.item():.6f}")
print(clf.weight.detach(), clf.bias.detach())
acc = ((clf(Xl).squeeze(1) > 0).double() == yl).double().mean()
print(f"acc {acc.item():.3f}")
print("RESULT:", f"{loss.item():.5f}")
