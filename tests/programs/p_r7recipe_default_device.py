"""The PyTorch recipe "Changing default device" (recipes/recipes/changing_default_device.py),
shrunk and run without CUDA: ``torch.set_default_device`` (here "meta" instead of "cuda"),
``torch.get_default_device``, ``torch.device`` as a context manager (nested, restored after an
exception), which factories follow the default device (``randn``/``tensor``/``arange``/module
parameters) and which do not (``from_numpy``, ``*_like`` of a CPU tensor, explicit
``device=``), modules built under the default and ``to_empty`` back onto the CPU, and the
default-dtype recipe bits (``set_default_dtype``/``get_default_dtype``) next to it."""
import importlib
import os

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn


def show(tag, fn):
    try:
        print(tag, fn())
    except Exception as e:
        print(tag, type(e).__name__, str(e).splitlines()[0][:120])


print(torch.get_default_device())
torch.set_default_device("meta")
print(torch.get_default_device())
mod = torch.nn.Linear(20, 30)
print(mod.weight.device)
print(mod(torch.randn(128, 20)).device, mod(torch.randn(128, 20)).shape)
torch.set_default_device("cpu")

# The recipe's context-manager form: only the block is affected.
with torch.device("meta"):
    mod = torch.nn.Linear(20, 30)
    print(mod.weight.device)
    print(mod(torch.randn(128, 20)).device)
    print(torch.get_default_device())
print(torch.get_default_device(), torch.randn(2).device)

# Which factories follow the default device.
torch.set_default_device("meta")
for name, fn in [
    ("randn", lambda: torch.randn(2, 3).device),
    ("zeros", lambda: torch.zeros(3).device),
    ("tensor", lambda: torch.tensor([1.0, 2.0]).device),
    ("arange", lambda: torch.arange(4).device),
    ("full", lambda: torch.full((2,), 7).device),
    ("eye", lambda: torch.eye(3).device),
    ("empty", lambda: torch.empty(2).device),
    ("linspace", lambda: torch.linspace(0, 1, 3).device),
    ("explicit cpu", lambda: torch.ones(2, device="cpu").device),
    ("from_numpy", lambda: torch.from_numpy(np.ones(3)).device),
    ("as_tensor(np)", lambda: torch.as_tensor(np.ones(3)).device),
    ("like(cpu)", lambda: torch.zeros_like(torch.ones(2, device="cpu")).device),
    ("new_ones(cpu)", lambda: torch.ones(2, device="cpu").new_ones(3).device),
    ("cpu + meta", lambda: (torch.ones(2, device="cpu") + torch.ones(2)).device),
    ("param", lambda: nn.Parameter(torch.empty(3)).device),
    ("buffer", lambda: nn.BatchNorm1d(4).running_mean.device),
    ("conv", lambda: nn.Conv2d(1, 2, 3)(torch.randn(1, 1, 5, 5)).shape),
]:
    show(name, fn)
torch.set_default_device(None)
print("reset", torch.get_default_device(), torch.ones(1).device)

# Nested contexts, and restoring the outer device after an exception.
with torch.device("meta"):
    with torch.device("cpu"):
        print("inner", torch.get_default_device(), torch.zeros(1))
    print("outer", torch.get_default_device(), torch.zeros(1).device)
try:
    with torch.device("meta"):
        raise RuntimeError("boom")
except RuntimeError as e:
    print("caught", e, torch.get_default_device())
dev = torch.device("meta")
with dev as d:
    print(d, type(d).__name__, d.type, d.index, torch.get_default_device())
print(torch.get_default_device())

# Build big on meta, materialize on CPU, initialize deterministically.
torch.manual_seed(0)
with torch.device("meta"):
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 2))
print([p.device.type for p in model.parameters()], sum(p.numel() for p in model.parameters()))
model = model.to_empty(device="cpu")
torch.manual_seed(0)
for m in model:
    if isinstance(m, nn.Linear):
        m.reset_parameters()
torch.manual_seed(0)
ref = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 2))
x = torch.randn(4, 6)
print(torch.equal(model(x), ref(x)), model(x).sum().item())

# Errors keep the default device as it was.
show("bad device", lambda: torch.set_default_device("nope"))
show("bad ctx", lambda: torch.device("nope:0"))
print(torch.get_default_device())

# The companion knob: default dtype.
print(torch.get_default_dtype(), torch.tensor([1.5]).dtype, torch.tensor([1, 2]).dtype)
torch.set_default_dtype(torch.float64)
print(torch.get_default_dtype(), torch.tensor([1.5]).dtype, torch.randn(2).dtype,
      nn.Linear(2, 2).weight.dtype, torch.tensor([1.5j]).dtype, torch.arange(3.0).dtype)
with torch.device("meta"):
    print(torch.ones(2).dtype, torch.ones(2).device)
show("int dtype", lambda: torch.set_default_dtype(torch.int64))
torch.set_default_dtype(torch.float32)
print(torch.get_default_dtype(), torch.tensor([1.5j]).dtype)
