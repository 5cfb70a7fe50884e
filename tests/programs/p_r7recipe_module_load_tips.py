"""The PyTorch recipe "Tips for Loading an nn.Module from a Checkpoint"
(recipes/recipes/module_load_state_dict_tips.py), shrunk (size 64 instead of 1000, no timing):
``SomeModule``'s checkpoint loaded the default way, with ``torch.load(mmap=True)``
(``get_default_mmap_options``/``set_default_mmap_options``, MAP_PRIVATE writes stay in memory,
MAP_SHARED writes reach the file), the module built under ``torch.device('meta')``, the no-op
copy into meta parameters (and its warning) vs ``load_state_dict(assign=True)``, creating the
optimizer after loading, which properties ``assign`` keeps (dtype/values from the checkpoint,
requires_grad and the Parameter class from the module), and ``to_empty`` + init as the
alternative."""
import importlib
import mmap
import os
import tempfile
import warnings

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn


class SomeModule(torch.nn.Module):
    def __init__(self, size):
        super().__init__()
        self.linears = nn.ModuleList([nn.Linear(size, size) for i in range(10)])

    def forward(self, x):
        for lin in self.linears:
            x = lin(x)
        return x


tmp = tempfile.mkdtemp()
CKPT = os.path.join(tmp, "checkpoint.pth")
torch.manual_seed(0)
m = SomeModule(64)
torch.save(m.state_dict(), CKPT)
x = torch.randn(3, 64)
ref = m(x)
print(round(ref.sum().item(), 5))

# The default: read everything into memory, then copy into a freshly initialized module.
state_dict = torch.load(CKPT)
meta_m = SomeModule(64)
print(meta_m.load_state_dict(state_dict), torch.equal(meta_m(x), ref))

# mmap=True: the storages are mapped from the file.
print(torch.serialization.get_default_mmap_options() == mmap.MAP_PRIVATE)
state_dict = torch.load(CKPT, mmap=True)
print(len(state_dict), state_dict["linears.0.weight"].shape, state_dict["linears.9.bias"].dtype)
state_dict["linears.0.bias"].add_(1.0)     # MAP_PRIVATE: the file does not change
print(torch.equal(torch.load(CKPT)["linears.0.bias"], m.linears[0].bias.detach()))
with torch.serialization.set_default_mmap_options(mmap.MAP_SHARED):
    print(torch.serialization.get_default_mmap_options() == mmap.MAP_SHARED)
    shared = torch.load(CKPT, mmap=True)
    shared["linears.1.bias"].zero_()       # MAP_SHARED: the write reaches the file
    del shared
print(torch.serialization.get_default_mmap_options() == mmap.MAP_PRIVATE)
print(torch.load(CKPT)["linears.1.bias"].abs().sum().item())
torch.save(m.state_dict(), CKPT)
try:
    torch.serialization.set_default_mmap_options(12345)
except ValueError as e:
    print("ValueError", e)
try:
    torch.load(open(CKPT, "rb"), mmap=True)
except ValueError as e:
    print("ValueError", e)
legacy = os.path.join(tmp, "legacy.pth")
torch.save(m.state_dict(), legacy, _use_new_zipfile_serialization=False)
try:
    torch.load(legacy, mmap=True)
except RuntimeError as e:
    print("RuntimeError", str(e).replace(legacy, "PATH"))

# torch.device('meta'): no memory, no initialization.
state_dict = torch.load(CKPT, mmap=True)
with torch.device('meta'):
    new_m = SomeModule(64)
print(new_m.linears[0].weight)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    print(new_m.load_state_dict(state_dict))
print(len(w), str(w[0].message) if w else None)
print(new_m.linears[0].weight.device)

# load_state_dict(assign=True): the checkpoint's tensors become the parameters.
new_m.load_state_dict(state_dict, assign=True)
# Ensure that the optimizer is created after the module is loaded
opt = torch.optim.SGD(new_m.parameters(), lr=1e-3)
p = new_m.linears[0].weight
print(p.device, type(p).__name__, p.requires_grad, p.is_leaf, torch.equal(new_m(x), ref))
loss = new_m(x).pow(2).mean()
loss.backward()
opt.step()
print(round(loss.item(), 6), round(new_m.linears[9].bias.sum().item(), 6))

# Which properties assign keeps: dtype from the checkpoint, requires_grad from the module.
small = nn.Linear(3, 2)
small.weight.requires_grad_(False)
sd = {"weight": torch.arange(6.0, dtype=torch.float64).reshape(2, 3), "bias": torch.ones(2)}
copy = nn.Linear(3, 2)
copy.weight.requires_grad_(False)
copy.load_state_dict(sd)
print(copy.weight.dtype, copy.weight.requires_grad, copy.weight.tolist())
small.load_state_dict(sd, assign=True)
print(small.weight.dtype, small.weight.requires_grad, type(small.weight).__name__,
      small.bias.requires_grad, small.weight.data_ptr() == sd["weight"].data_ptr())
bn = nn.BatchNorm1d(2)
print(bn.load_state_dict({"weight": torch.ones(2), "bias": torch.zeros(2),
                          "running_mean": torch.tensor([1.0, 2.0]),
                          "running_var": torch.tensor([4.0, 9.0]),
                          "num_batches_tracked": torch.tensor(7)}, assign=True))
print(bn.running_mean, bn.num_batches_tracked, type(bn.running_var).__name__)
try:
    nn.Linear(3, 2).load_state_dict({"weight": torch.zeros(3, 3), "bias": torch.zeros(2)},
                                    assign=True)
except RuntimeError as e:
    print(str(e))

# The alternative: to_empty and initialize (no checkpoint).
with torch.device("meta"):
    fresh = SomeModule(8)
fresh = fresh.to_empty(device="cpu")
torch.manual_seed(1)
for lin in fresh.linears:
    lin.reset_parameters()
torch.manual_seed(1)
direct = SomeModule(8)
print(all(torch.equal(a, b) for a, b in zip(fresh.parameters(), direct.parameters())))
