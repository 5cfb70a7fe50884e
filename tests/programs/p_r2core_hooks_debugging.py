"""Debugging a network with hooks, as the forum answers and the "forward and backward hooks"
posts do it: capture intermediate activations with forward hooks (feature extractor), print
per-layer gradient norms with full backward hooks, clip/scale gradients with Tensor hooks,
retain_grad on intermediates, module-wide hooks, dead-ReLU counting, NaN hunting with
detect_anomaly, and clip_grad_norm_ / clip_grad_value_."""

import importlib
import os
import warnings

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(0)
model = nn.Sequential(
    nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 3), nn.LogSoftmax(dim=1)
)
activation = {}


def get_activation(name):
    def hook(model, input, output):
        activation[name] = output.detach()

    return hook


handles = [model[i].register_forward_hook(get_activation(f"layer{i}")) for i in (0, 2, 4)]
x = torch.randn(5, 6)
out = model(x)
for k, v in activation.items():
    print(k, tuple(v.shape), v.requires_grad, f"{v.mean().item():.4f}")
dead = (activation["layer0"] <= 0).float().mean(0)
print("dead relu fraction", dead)
for h in handles:
    h.remove()
print(model[0]._forward_hooks)

grad_norms = []


def bwd_hook(module, grad_input, grad_output):
    grad_norms.append(
        (
            type(module).__name__,
            [None if g is None else round(g.norm().item(), 4) for g in grad_input],
            [round(g.norm().item(), 4) for g in grad_output],
        )
    )


hs = [m.register_full_backward_hook(bwd_hook) for m in model if isinstance(m, nn.Linear)]
loss = F.nll_loss(model(x), torch.tensor([0, 1, 2, 1, 0]))
loss.backward()
for g in grad_norms:
    print(g)
for h in hs:
    h.remove()
for name, p in model.named_parameters():
    print(f"{name:10s} grad_norm={p.grad.norm():.4f} max={p.grad.abs().max():.4f}")

model.zero_grad()
h = model[0].weight.register_hook(lambda g: g.clamp(-0.01, 0.01))
h2 = model[2].bias.register_hook(lambda g: print("bias grad seen", g.shape) or g * 0)
loss = F.nll_loss(model(x), torch.tensor([0, 1, 2, 1, 0]))
loss.backward()
print(model[0].weight.grad.abs().max(), model[2].bias.grad.abs().sum())
h.remove()
h2.remove()

a = torch.randn(3, requires_grad=True)
b = a * 2
b.retain_grad()
c = b.exp()
c.register_hook(lambda g: print("grad of c", g))
c.sum().backward()
print(
    b.grad, a.grad, b.retains_grad, c.retains_grad, b.is_leaf, b.grad_fn, c.grad_fn.next_functions
)

order = []
hg = nn.modules.module.register_module_full_backward_hook(
    lambda m, gi, go: order.append(type(m).__name__)
)
model.zero_grad()
F.nll_loss(model(x), torch.tensor([0, 1, 2, 1, 0])).backward()
hg.remove()
print(order)

total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
print(f"{total.item():.4f}", sum(p.grad.norm() ** 2 for p in model.parameters()).sqrt())
nn.utils.clip_grad_value_(model.parameters(), clip_value=0.01)
print(max(p.grad.abs().max().item() for p in model.parameters()))
print(nn.utils.clip_grad_norm_(model.parameters(), 1.0, norm_type=float("inf")))
print(nn.utils.get_total_norm([p.grad for p in model.parameters()], norm_type=1.0))

y = torch.tensor([1.0, 0.0], requires_grad=True)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    with torch.autograd.detect_anomaly():
        try:
            z = (y / y).sum()
            z.backward()
        except RuntimeError as e:
            print(type(e).__name__, e)
    try:
        with torch.autograd.detect_anomaly():
            w = torch.sqrt(y - 1.0)
            w.sum().backward()
    except RuntimeError as e:
        print(type(e).__name__, e)
print(torch.is_anomaly_enabled(), y.grad)
print("RESULT: ok")
