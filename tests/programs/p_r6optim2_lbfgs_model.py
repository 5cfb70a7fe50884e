"""Full-batch L-BFGS on a real model, shrunk from hjmshi/PyTorch-LBFGS's examples
(cifar10_lbfgs / the torch.optim.LBFGS baseline: a small conv net trained on a fixed batch
with line_search_fn="strong_wolfe", the closure that zeroes grads and returns the loss,
counting function evaluations) and the pattern of resuming LBFGS from a state_dict; on
synthetic images, in float64 with a small L2 term. Prints losses, the optimizer state (func_evals, n_iter, history lengths,
step t) and reruns it in float32, and in float64 without the line search."""
import copy
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
optim = torch.optim
# compare: rtol=2e-3 atol=1e-4


class ConvNet(nn.Module):
    def __init__(self):
        super(ConvNet, self).__init__()
        self.conv1 = nn.Conv2d(3, 4, 3)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(4, 6, 2)
        self.fc1 = nn.Linear(6 * 3 * 3, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = F.relu(self.conv2(x))
        x = x.view(-1, 6 * 3 * 3)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


torch.manual_seed(2018)
N = 48
X = torch.randn(N, 3, 10, 10, dtype=torch.float64)
y = (X[:, 0, :5].mean((1, 2)) > X[:, 1, 5:].mean((1, 2))).long() + (X[:, 2].mean((1, 2)) > 0.1).long()
print("class counts", torch.bincount(y).tolist())

model = ConvNet().double()  # (float64: L-BFGS amplifies float32 rounding)
init_state = copy.deepcopy(model.state_dict())
opt = optim.LBFGS(model.parameters(), lr=1, max_iter=10, history_size=5,
                  line_search_fn="strong_wolfe")
print(opt.defaults)
evals = [0]


def closure():
    evals[0] += 1
    opt.zero_grad()
    loss = F.cross_entropy(model(X), y) + 1e-3 * sum(p.pow(2).sum() for p in model.parameters())
    loss.backward()
    return loss


for n_iter in range(4):
    loss = opt.step(closure)
    with torch.no_grad():
        out = model(X)
        acc = (out.argmax(1) == y).float().mean().item()
        gnorm = torch.cat([p.grad.flatten() for p in model.parameters()]).norm().item()
    st = opt.state[opt._params[0]]
    print("step %d first loss %.5f now %.5f acc %.3f |g| %.5f" % (
        n_iter, loss.item(), F.cross_entropy(out, y).item(), acc, gnorm))
    print("  evals", evals[0], "func_evals", st["func_evals"], "n_iter", st["n_iter"],
          "hist", len(st["old_dirs"]), len(st["old_stps"]), "t %.5f" % float(st["t"]))

sd = opt.state_dict()
print(sorted(sd["state"][0].keys()), sd["param_groups"][0]["params"])
print("d", tuple(sd["state"][0]["d"].shape), "H_diag %.5f" % float(sd["state"][0]["H_diag"]))

# resume into a fresh copy and continue: both must follow the same path
model2 = copy.deepcopy(model)
opt2 = optim.LBFGS(model2.parameters(), lr=1, max_iter=10, history_size=5,
                   line_search_fn="strong_wolfe")
opt2.load_state_dict(copy.deepcopy(sd))


def closure2():
    opt2.zero_grad()
    loss = F.cross_entropy(model2(X), y) + 1e-3 * sum(p.pow(2).sum() for p in model2.parameters())
    loss.backward()
    return loss


l1 = opt.step(closure)
l2 = opt2.step(closure2)
with torch.no_grad():
    print("resumed same path", torch.allclose(model(X), model2(X), atol=1e-5),
          "%.5f %.5f" % (F.cross_entropy(model(X), y).item(), F.cross_entropy(model2(X), y).item()))

# float64 copy of the same run from the initial weights, and the default (no line search)
for dtype, ls in ((torch.float32, "strong_wolfe"), (torch.float64, None)):
    m = ConvNet().to(dtype)
    m.load_state_dict(init_state)
    o = optim.LBFGS(m.parameters(), lr=0.5 if ls is None else 1, max_iter=8, history_size=5,
                    line_search_fn=ls, tolerance_change=1e-12)
    Xd = X.to(dtype)

    def c():
        o.zero_grad()
        loss = F.cross_entropy(m(Xd), y)
        loss.backward()
        return loss
    for _ in range(2 if ls else 3):
        o.step(c)
    with torch.no_grad():
        print(dtype, ls, "loss %.5f" % F.cross_entropy(m(Xd), y).item(),
              "func_evals", o.state[o._params[0]]["func_evals"], m.fc2.weight.dtype)

try:
    optim.LBFGS(model.parameters(), line_search_fn="armijo").step(closure)
except Exception as e:
    print(type(e).__name__, e)
try:
    optim.LBFGS([{"params": model.fc1.parameters()}, {"params": model.fc2.parameters()}])
except Exception as e:
    print(type(e).__name__, e)
try:
    optim.LBFGS(model.parameters()).step()
except Exception as e:
    print(type(e).__name__, e)
