"""torch.utils.checkpoint semantics the docs spell out (and GitHub issues trip over):
non-reentrant checkpoint with torch.autograd.grad, backward(inputs=...) and double backward
(a gradient-penalty loop), the "None of the inputs have requires_grad=True" warning, a
recomputation that diverges raising CheckpointError, determinism_check="none",
set_checkpoint_early_stop, a checkpointed block whose output is then modified in place, and
checkpoint inside torch.no_grad()."""
import importlib
import os
import warnings

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
cp = importlib.import_module(LIB + ".utils.checkpoint")
checkpoint = cp.checkpoint

torch.manual_seed(0)
block = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
x = torch.randn(3, 4, requires_grad=True)

# reentrant checkpoint under autograd.grad / backward(inputs=): torch refuses both
for how in ("grad", "inputs"):
    yr = checkpoint(block, x, use_reentrant=True).sum()
    try:
        torch.autograd.grad(yr, x) if how == "grad" else yr.backward(inputs=[x])
        print(how, "no error")
    except RuntimeError as e:
        print(how, str(e)[:60], block[0].weight.grad is None)
y = checkpoint(block, x, use_reentrant=False)
gx, = torch.autograd.grad(y.pow(2).sum(), x, create_graph=True)
penalty = gx.pow(2).sum()
penalty.backward()
print(round(penalty.item(), 6))
print([round(v, 5) for v in block[0].weight.grad.flatten()[:8].tolist()])
x.grad = None
ref = block(x)
gref, = torch.autograd.grad(ref.pow(2).sum(), x, create_graph=True)
print(torch.allclose(gx, gref), y.grad_fn is not None)

block.zero_grad()
y = checkpoint(block, x, use_reentrant=False)
y.sum().backward(inputs=[x])
print(x.grad.abs().sum().item() > 0, block[0].weight.grad is None)

with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    out = checkpoint(block, torch.randn(2, 4), use_reentrant=True)
    print(out.requires_grad, [str(m.message) for m in w])

calls = [0]


def flaky(t):
    calls[0] += 1
    return t * t if calls[0] == 1 else t[:1] * t[:1]


a = torch.randn(2, 3, requires_grad=True)
try:
    checkpoint(flaky, a, use_reentrant=False).sum().backward()
    print("no error")
except Exception as e:
    print(type(e).__name__, issubclass(type(e), RuntimeError), "\n".join(str(e).splitlines()[:7]))

calls[0] = 0


def flaky_values(t):
    calls[0] += 1
    return (t * calls[0]).exp()


b = torch.randn(2, 3, requires_grad=True)
checkpoint(flaky_values, b, use_reentrant=False, determinism_check="none").sum().backward()
print(calls[0], [round(v, 5) for v in b.grad.flatten().tolist()])

with cp.set_checkpoint_early_stop(False):
    y = checkpoint(block, x, use_reentrant=False)
y.sum().backward()
print(round(x.grad.sum().item(), 6))

x.grad = None
y = checkpoint(block, x, use_reentrant=False)
y.mul_(2)
y.sum().backward()
print(round(x.grad.sum().item(), 6), y.grad_fn.name())

with torch.no_grad():
    y = checkpoint(block, x, use_reentrant=False)
print(y.requires_grad, y.grad_fn)
try:
    checkpoint(block, x, use_reentrant=False, determinism_check="bogus")
except Exception as e:
    print(type(e).__name__, str(e)[:100])
