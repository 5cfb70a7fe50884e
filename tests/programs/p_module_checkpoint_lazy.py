"""Activation checkpointing (torch.utils.checkpoint.checkpoint / checkpoint_sequential with
use_reentrant=False) as in memory-saving blog posts, and lazy modules (LazyLinear) that infer
in_features on the first call."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
checkpoint_mod = importlib.import_module(os.environ.get("TORCH_LIB", "torch") +
                                         ".utils.checkpoint")
checkpoint = checkpoint_mod.checkpoint
checkpoint_sequential = checkpoint_mod.checkpoint_sequential


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return x + self.drop(self.fc2(F.gelu(self.fc1(self.ln(x)))))


class Net(nn.Module):
    def __init__(self, d, n, use_ckpt):
        super().__init__()
        self.blocks = nn.ModuleList([Block(d) for _ in range(n)])
        self.head = nn.Linear(d, 3)
        self.use_ckpt = use_ckpt

    def forward(self, x):
        for blk in self.blocks:
            if self.use_ckpt:
                x = checkpoint(blk, x, use_reentrant=False)
            else:
                x = blk(x)
        return self.head(x)


torch.manual_seed(0)
plain = Net(8, 3, use_ckpt=False)
ckpt = Net(8, 3, use_ckpt=True)
ckpt.load_state_dict(plain.state_dict())
x = torch.randn(5, 8)
y = torch.randint(0, 3, (5,))
torch.manual_seed(1)
loss_a = F.cross_entropy(plain(x), y)
loss_a.backward()
torch.manual_seed(1)
loss_b = F.cross_entropy(ckpt(x), y)
loss_b.backward()
print(f"{loss_a.item():.6f} {loss_b.item():.6f}")
for (n, p), q in zip(plain.named_parameters(), ckpt.parameters()):
    print(n, torch.allclose(p.grad, q.grad, atol=1e-6), f"{p.grad.norm().item():.5f}")

# checkpoint of a function with several inputs and a non-tensor argument
def attn(q, k, v, scale):
    w = torch.softmax(q @ k.transpose(-1, -2) * scale, dim=-1)
    return w @ v, w


q = torch.randn(2, 4, 6, requires_grad=True)
k = torch.randn(2, 4, 6, requires_grad=True)
v = torch.randn(2, 4, 6, requires_grad=True)
out, w = checkpoint(attn, q, k, v, 0.5, use_reentrant=False)
(out.sum() + w.pow(2).sum()).backward()
# (v.grad sums to 48 up to float32 round-off)
print(out[0, 0], q.grad[0, 0], f"{v.grad.sum().item():.4f}")
print(out.requires_grad, type(out.grad_fn).__name__)

# the reentrant variant (torch's default, as older posts use it)
torch.manual_seed(3)
blk = Block(6)
h = torch.randn(2, 6, requires_grad=True)
out = checkpoint(blk, h, use_reentrant=True)
print(out)
out.pow(2).sum().backward()
print(h.grad, blk.fc1.bias.grad)

# checkpoint_sequential
torch.manual_seed(2)
seq = nn.Sequential(nn.Linear(6, 6), nn.ReLU(), nn.Linear(6, 6), nn.Tanh(), nn.Linear(6, 2))
inp = torch.randn(4, 6, requires_grad=True)
out = checkpoint_sequential(seq, 2, inp, use_reentrant=False)
out.sum().backward()
print(out)
print(inp.grad)
print(seq[0].weight.grad.sum())
with torch.no_grad():
    print(checkpoint(seq, inp, use_reentrant=False).requires_grad)

# lazy modules
torch.manual_seed(0)
lazy = nn.LazyLinear(4)
print(lazy)
print(lazy.weight, lazy.in_features)
print(type(lazy.weight).__name__, lazy.has_uninitialized_params())
out = lazy(torch.randn(3, 7))
print(lazy)
print(type(lazy).__name__, lazy.weight.shape, lazy.in_features, out.shape)
print(lazy.weight[0], lazy.bias)

torch.manual_seed(0)
mlp = nn.Sequential(nn.LazyLinear(16), nn.ReLU(), nn.LazyLinear(8), nn.ReLU(), nn.Linear(8, 2))
print(mlp)
y = mlp(torch.randn(2, 5))
print(mlp)
print(y)
print([tuple(p.shape) for p in mlp.parameters()])
opt = torch.optim.Adam(mlp.parameters(), lr=1e-2)
for _ in range(3):
    opt.zero_grad()
    loss = mlp(torch.ones(2, 5)).pow(2).mean()
    loss.backward()
    opt.step()
    print(f"{loss.item():.6f}")
nb = nn.LazyLinear(3, bias=False)
nb(torch.ones(1, 2))
print(nb, nb.bias)
print("RESULT: ok")
