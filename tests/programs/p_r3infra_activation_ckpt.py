"""Activation checkpointing as the torch.utils.checkpoint docs and memory-saving blog posts use
it: checkpoint(fn, *args, use_reentrant=False) inside a model's forward (with dropout and
preserve_rng_state, kwargs, non-tensor args, several outputs), checkpoint_sequential over an
nn.Sequential, gradients compared with the plain model, the warnings/errors of misuse."""
import importlib
import os
import warnings

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
cp = importlib.import_module(LIB + ".utils.checkpoint")
checkpoint = cp.checkpoint
checkpoint_sequential = cp.checkpoint_sequential


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)
        self.drop = nn.Dropout(0.2)

    def forward(self, x):
        return x + self.drop(self.fc2(F.gelu(self.fc1(self.ln(x)))))


class Model(nn.Module):
    def __init__(self, d=8, n=3, use_ckpt=False):
        super().__init__()
        self.blocks = nn.ModuleList([Block(d) for _ in range(n)])
        self.head = nn.Linear(d, 2)
        self.use_ckpt = use_ckpt

    def forward(self, x):
        for blk in self.blocks:
            if self.use_ckpt and self.training:
                x = checkpoint(blk, x, use_reentrant=False)
            else:
                x = blk(x)
        return self.head(x)


torch.manual_seed(0)
plain = Model()
ck = Model(use_ckpt=True)
ck.load_state_dict(plain.state_dict())
x = torch.randn(4, 8)
target = torch.randint(0, 2, (4,))
for m in (plain, ck):
    torch.manual_seed(1)
    out = m(x)
    loss = F.cross_entropy(out, target)
    loss.backward()
    print(out.grad_fn.name(), f"{loss.item():.6f}")
for (n, p1), p2 in zip(plain.named_parameters(), ck.parameters()):
    print(n, torch.allclose(p1.grad, p2.grad, atol=1e-6), f"{p2.grad.norm():.5f}")

torch.manual_seed(2)
a = torch.randn(3, requires_grad=True)
b = torch.randn(3, requires_grad=True)


def two_out(u, v, scale=1.0, mode="mul"):
    if mode == "mul":
        return u * v * scale, (u + v).sin()
    return u + v, u - v


p, q = checkpoint(two_out, a, b, 2.0, use_reentrant=False, mode="mul")
print(p, q)
(p.sum() + q.pow(2).sum()).backward()
print(a.grad, b.grad)
a.grad = None
p2, q2 = two_out(a, b, 2.0)
(p2.sum() + q2.pow(2).sum()).backward()
print(a.grad)

torch.manual_seed(3)
drop = nn.Dropout(0.5)
z = torch.ones(8, requires_grad=True)
y = checkpoint(lambda t: drop(t) * 3, z, use_reentrant=False)
y.sum().backward()
print(y, z.grad)
print(torch.equal(z.grad, (y != 0).float() * 6))
z.grad = None
y = checkpoint(lambda t: drop(t) * 3, z, use_reentrant=False, preserve_rng_state=False)
print(y.requires_grad, y.shape)

torch.manual_seed(4)
seq = nn.Sequential(nn.Linear(6, 6), nn.ReLU(), nn.Linear(6, 6), nn.Tanh(), nn.Linear(6, 3),
                    nn.Sigmoid())
inp = torch.randn(5, 6, requires_grad=True)
out_ref = seq(inp)
out_ref.sum().backward()
g_ref = inp.grad.clone()
w_ref = seq[0].weight.grad.clone()
seq.zero_grad()
inp.grad = None
out = checkpoint_sequential(seq, 2, inp, use_reentrant=False)
out.sum().backward()
print(out.grad_fn is not None, torch.allclose(out, out_ref))
print(torch.allclose(inp.grad, g_ref), torch.allclose(seq[0].weight.grad, w_ref))
print(checkpoint_sequential(seq, 3, inp, use_reentrant=False)[0])
print(checkpoint_sequential(list(seq.children()), 1, inp, use_reentrant=False).shape)

with torch.no_grad():
    r = checkpoint(seq, inp, use_reentrant=False)
print(r.requires_grad)
leaf = torch.randn(2)
r2 = checkpoint(lambda t: t * 2, leaf, use_reentrant=False)
print(r2.requires_grad, r2)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    r3 = checkpoint(lambda t: t.exp(), a, use_reentrant=True)
    print(r3.grad_fn is not None)
print(len(w))
try:
    checkpoint(lambda t: t, a, use_reentrant=False, bogus=1)
except Exception as e:
    print(type(e).__name__, e)
try:
    checkpoint(lambda t: t, a, use_reentrant=True, bogus=1)
except Exception as e:
    print(type(e).__name__, e)
print("RESULT:", f"{out.sum().item():.5f}")
