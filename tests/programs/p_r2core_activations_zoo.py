"""Every nn activation the docs list ("Non-linear Activations"), printed, applied to the same
input, differentiated, and compared with its functional form; the plot-the-activations
notebook idiom (a dict of modules over a linspace) with grad_fn names."""

import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(0)
x = torch.linspace(-3, 3, 9)
acts = {
    "ELU": nn.ELU(),
    "ELU(alpha=0.5)": nn.ELU(alpha=0.5),
    "Hardshrink": nn.Hardshrink(),
    "Hardshrink(0.8)": nn.Hardshrink(lambd=0.8),
    "Hardsigmoid": nn.Hardsigmoid(),
    "Hardtanh": nn.Hardtanh(),
    "Hardtanh(-2,2)": nn.Hardtanh(-2.0, 2.0),
    "Hardswish": nn.Hardswish(),
    "LeakyReLU": nn.LeakyReLU(),
    "LeakyReLU(0.2)": nn.LeakyReLU(0.2),
    "LogSigmoid": nn.LogSigmoid(),
    "PReLU": nn.PReLU(),
    "ReLU": nn.ReLU(),
    "ReLU6": nn.ReLU6(),
    "RReLU": nn.RReLU(),
    "RReLU(0.1,0.3)": nn.RReLU(0.1, 0.3),
    "SELU": nn.SELU(),
    "CELU": nn.CELU(),
    "CELU(2.0)": nn.CELU(alpha=2.0),
    "GELU": nn.GELU(),
    "GELU(tanh)": nn.GELU(approximate="tanh"),
    "Sigmoid": nn.Sigmoid(),
    "SiLU": nn.SiLU(),
    "Mish": nn.Mish(),
    "Softplus": nn.Softplus(),
    "Softplus(2,1)": nn.Softplus(beta=2, threshold=1),
    "Softshrink": nn.Softshrink(),
    "Softshrink(1.5)": nn.Softshrink(1.5),
    "Softsign": nn.Softsign(),
    "Tanh": nn.Tanh(),
    "Tanhshrink": nn.Tanhshrink(),
    "Threshold": nn.Threshold(0.1, 20),
    "Threshold(-1,-5)": nn.Threshold(-1.0, -5.0),
    "ReLU(inplace)": nn.ReLU(inplace=True),
    "ELU(inplace)": nn.ELU(inplace=True),
}
for name, act in acts.items():
    act.eval()
    xi = x.clone().requires_grad_(True)
    inp = xi.clone() if "inplace" in name else xi
    y = act(inp)
    y.backward(torch.arange(9.0) / 9)
    print(f"{name:18s} {act!r}")
    print("   y =", y)
    print("  dy =", xi.grad, type(y.grad_fn).__name__)

prelu = nn.PReLU(num_parameters=3, init=0.1)
print(prelu, prelu.weight)
xx = torch.randn(2, 3, 4, requires_grad=True)
out = prelu(xx)
out.sum().backward()
print(out[0], prelu.weight.grad, type(out.grad_fn).__name__)

rrelu = nn.RReLU(0.1, 0.3)
rrelu.train()
torch.manual_seed(3)
r = rrelu(torch.full((6,), -1.0))
print(r.shape, bool(((r <= -0.1) & (r >= -0.3)).all()))

z = torch.randn(2, 6)
print(nn.GLU()(z), nn.GLU(dim=0)(torch.randn(4, 2)))
print(nn.Softmax(dim=1)(z), nn.Softmin(dim=1)(z), nn.LogSoftmax(dim=1)(z))
print(nn.Softmax(dim=-1), nn.Softmin(dim=0), nn.LogSoftmax(dim=1), nn.GLU(), nn.Softmax2d())
img = torch.randn(1, 3, 2, 2)
sm2 = nn.Softmax2d()(img)
print(sm2, sm2.sum(1))
print(nn.Softmax2d()(torch.randn(3, 2, 2)).sum(0))

print(F.gelu(x, approximate="tanh"), F.silu(x), F.mish(x), F.hardswish(x), F.hardsigmoid(x))
print(F.softplus(x, beta=0.5, threshold=2), F.elu(x, alpha=2.0), F.selu(x), F.celu(x, 0.5))
print(F.leaky_relu(x, 0.3), F.relu6(x * 3), F.hardtanh(x, -0.5, 0.5), F.logsigmoid(x))
print(F.softsign(x), F.tanhshrink(x), F.softshrink(x, 0.2), F.hardshrink(x, 0.2))
print(F.threshold(x, 0.5, -1.0), F.rrelu(x, training=False), F.glu(torch.arange(8.0)))
print(F.softmin(z, dim=0), F.softmax(z, dim=0, dtype=torch.float64))
print(F.log_softmax(z, 1), F.sigmoid(x), F.tanh(x), torch.sigmoid(x), torch.tanh(x))
print(F.prelu(x, torch.tensor([0.25])))
y = x.clone()
F.relu_(y)
print(y)
y = x.clone()
F.elu_(y)
print(y)
y = x.clone()
F.leaky_relu_(y, 0.1)
print(y)
y = x.clone()
F.hardtanh_(y)
print(y, F.relu(x, inplace=False), F.silu(x.clone(), inplace=True))
print(
    torch.relu(x), torch.selu(x), torch.celu(x), torch.rrelu(x), torch.prelu(x, torch.tensor([0.5]))
)

xd = torch.randn(5, dtype=torch.float64, requires_grad=True)
for act in (
    nn.GELU(approximate="tanh"),
    nn.Mish(),
    nn.Hardswish(),
    nn.SiLU(),
    nn.Softplus(3, 2),
    nn.CELU(1.5),
    nn.LogSigmoid(),
    nn.Tanhshrink(),
    nn.SELU(),
    nn.GELU(),
    nn.ELU(),
    nn.Sigmoid(),
    nn.Tanh(),
    nn.LeakyReLU(0.2),
    nn.ReLU(),
    nn.Softsign(),
    nn.Hardtanh(),
):
    (g,) = torch.autograd.grad(act(xd).sum(), xd, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), xd)
    print(act, g.detach(), gg, type(g.grad_fn).__name__)

inputs = torch.randn(3, 4)
print(nn.ReLU()(inputs) is inputs, nn.ReLU(inplace=True)(inputs) is inputs)
print(nn.Identity(54, unused_argument1=0.1)(inputs) is inputs, nn.Identity())
print(
    nn.Sequential(
        nn.Linear(4, 4),
        nn.Hardswish(inplace=True),
        nn.Mish(inplace=True),
        nn.SiLU(inplace=True),
        nn.Hardsigmoid(inplace=True),
        nn.ReLU6(inplace=True),
        nn.SELU(inplace=True),
        nn.CELU(inplace=True),
        nn.LeakyReLU(0.1, inplace=True),
        nn.Hardtanh(inplace=True),
        nn.Threshold(0.1, 0.0, inplace=True),
        nn.RReLU(inplace=True),
    )
)
print("RESULT: ok")
