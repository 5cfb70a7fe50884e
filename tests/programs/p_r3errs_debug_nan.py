"""Debugging NaNs and vanishing gradients, after the "how to find the source of NaN" forum
answers and debugging tutorials: torch.autograd.detect_anomaly naming the backward node that
returned NaN, gradient hooks that print per-layer gradient norms, torch.isfinite / nan_to_num
checks, clip_grad_norm_'s error_if_nonfinite, frozen layers whose parameters never get a .grad,
the "forgot zero_grad" accumulation, and gradcheck's complaints about float32 and failing
Jacobians."""

import importlib
import os
import warnings

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
warnings.simplefilter("ignore")


def show(label, fn):
    try:
        out = fn()
    except Exception as e:
        print(label, "->", type(e).__name__, str(e))
    else:
        print(label, "ok", out)


torch.manual_seed(0)

print("== anomaly mode names the node")
x = torch.tensor([4.0, 0.0, 1.0], requires_grad=True)


def nan_in_backward():
    with torch.autograd.detect_anomaly():
        y = torch.sqrt(x)
        (y * 0).sum().backward()


show("sqrt(0)*0", nan_in_backward)
x.grad = None
with torch.autograd.detect_anomaly():
    z = torch.log(x)
    show("log(0)", lambda: (z * 0).sum().backward())
print(x.grad)
x.grad = None


def div_zero():
    with torch.autograd.set_detect_anomaly(True):
        w = torch.zeros(2, requires_grad=True)
        (w / w).sum().backward()


show("0/0", div_zero)
show("check_nan off", lambda: [torch.autograd.set_detect_anomaly(True, check_nan=False),
                                (torch.sqrt(x) * 0).sum().backward(), x.grad.tolist(),
                                torch.autograd.set_detect_anomaly(False)][2])
print(torch.is_anomaly_enabled())

print("== finding NaN in the forward")
t = torch.tensor([1.0, -1.0, 0.0, float("inf")])
for name, v in [("log", t.log()), ("sqrt", t.sqrt()), ("1/x", 1 / t), ("x*inf", t * float("inf"))]:
    print(name, v, torch.isnan(v).any().item(), torch.isfinite(v).all().item(),
          torch.nan_to_num(v, nan=0.0, posinf=1e4, neginf=-1e4))
logits = torch.tensor([[1000.0, 0.0], [-1000.0, 1000.0]])
print("naive softmax", torch.exp(logits) / torch.exp(logits).sum(1, keepdim=True))
print("stable softmax", F.softmax(logits, dim=1), F.log_softmax(logits, dim=1))
p = torch.tensor([0.0, 1.0, 0.5])
print("bce log(0)", -(torch.log(p) * 1 + torch.log(1 - p) * 0), F.binary_cross_entropy(
    p, torch.ones(3), reduction="none"))

print("== per-layer gradient norms via hooks")
model = nn.Sequential(nn.Linear(6, 16), nn.Sigmoid(), nn.Linear(16, 16), nn.Sigmoid(),
                      nn.Linear(16, 16), nn.Sigmoid(), nn.Linear(16, 1))
norms = {}
for name, param in model.named_parameters():
    if name.endswith("weight"):
        param.register_hook(lambda g, name=name: norms.__setitem__(name, g.norm().item()))
xb = torch.randn(8, 6)
loss = F.mse_loss(model(xb), torch.randn(8, 1))
loss.backward()
for k in sorted(norms):
    print(f"{k}: {norms[k]:.6f}")
print(f"total {nn.utils.clip_grad_norm_(model.parameters(), 1.0):.6f}")
print(f"after clip {nn.utils.clip_grad_norm_(model.parameters(), 1e9):.6f}")
model[0].weight.grad[0, 0] = float("nan")
show("nonfinite", lambda: nn.utils.clip_grad_norm_(model.parameters(), 1.0,
                                                    error_if_nonfinite=True))
print(nn.utils.clip_grad_norm_(model.parameters(), 1.0))

print("== frozen layers and missing grads")
net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
for prm in net[0].parameters():
    prm.requires_grad = False
out = net(torch.randn(5, 3)).sum()
out.backward()
for name, prm in net.named_parameters():
    print(name, prm.requires_grad, None if prm.grad is None else tuple(prm.grad.shape))
print(sum(p.numel() for p in net.parameters() if p.requires_grad))
detached = nn.Linear(3, 1)
yd = detached(torch.randn(2, 3)).detach()
show("detached loss", lambda: yd.sum().backward())
with torch.no_grad():
    yn = detached(torch.randn(2, 3))
show("no_grad loss", lambda: yn.sum().backward())
print(yn.requires_grad, yn.grad_fn)

print("== forgetting zero_grad")
lin = nn.Linear(2, 1, bias=False)
with torch.no_grad():
    lin.weight.fill_(1.0)
inp = torch.tensor([[1.0, 2.0]])
for step in range(3):
    lin(inp).sum().backward()
    print(step, lin.weight.grad)
lin.zero_grad()
print(lin.weight.grad)
lin.zero_grad(set_to_none=False)
print(lin.weight.grad)

print("== gradcheck")
show("float32", lambda: torch.autograd.gradcheck(torch.sin, (torch.randn(3, requires_grad=True),)))
show("float64", lambda: torch.autograd.gradcheck(torch.sin, (torch.randn(3, dtype=torch.float64,
                                                                      requires_grad=True),)))
show("no grad input", lambda: torch.autograd.gradcheck(torch.sin, (torch.randn(
    3, dtype=torch.float64),)))


class BadSquare(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * a      # wrong: should be 2 * a


inp64 = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
print(torch.autograd.gradcheck(BadSquare.apply, (inp64,), raise_exception=False))
show("bad jacobian", lambda: torch.autograd.gradcheck(BadSquare.apply, (inp64,)))
print("RESULT: ok")
