"""Checkpoint I/O as training scripts do it: torch.save to a path and to BytesIO, torch.load
with map_location (str, device, dict, callable), weights_only=True with allowlisted classes
(torch.serialization.add_safe_globals / safe_globals) and the error for an unlisted one, mmap
loading, saving views that share storage, keeping best/last checkpoints, and RNG state
save/restore with torch.random.fork_rng and Generator.get_state/set_state."""
import collections
import importlib
import io
import os
import pickle
import tempfile

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
serialization = importlib.import_module(LIB + ".serialization")


class TrainConfig:
    def __init__(self, lr, epochs):
        self.lr = lr
        self.epochs = epochs

    def __repr__(self):
        return f"TrainConfig(lr={self.lr}, epochs={self.epochs})"


Metrics = collections.namedtuple("Metrics", ["loss", "acc"])

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))
for step in range(3):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    sched.step()
print(f"{loss.item():.5f}")

tmp = tempfile.mkdtemp()
ckpt = {"epoch": 3, "model": model.state_dict(), "optimizer": opt.state_dict(),
        "scheduler": sched.state_dict(), "rng": torch.get_rng_state(),
        "metrics": {"loss": loss.item(), "history": [1.0, 0.5]}}
path = os.path.join(tmp, "last.pt")
torch.save(ckpt, path)
print(os.path.getsize(path) > 0)
loaded = torch.load(path, weights_only=True)
print(sorted(loaded), loaded["epoch"], loaded["metrics"])
print(list(loaded["model"].keys()))
print(type(loaded["model"]).__name__, loaded["model"]["1.num_batches_tracked"])
print(loaded["optimizer"]["param_groups"][0]["lr"], loaded["scheduler"]["last_epoch"])
for ml in ["cpu", torch.device("cpu"), {"cpu": "cpu"}, lambda storage, loc: storage]:
    sd = torch.load(path, map_location=ml, weights_only=True)["model"]
    print(sd["0.weight"].device, torch.equal(sd["0.weight"], model[0].weight.detach()))
mm = torch.load(path, mmap=True, weights_only=True)
print(torch.equal(mm["model"]["3.bias"], model[3].bias.detach()))

# objects outside the weights_only allowlist
cfg_ckpt = {"config": TrainConfig(0.1, 3), "metrics": Metrics(0.25, 0.9)}
buf = io.BytesIO()
torch.save(cfg_ckpt, buf)
try:
    buf.seek(0)
    torch.load(buf, weights_only=True)
except pickle.UnpicklingError as e:
    msg = str(e)
    print(type(e).__name__, "Unsupported global" in msg, "TrainConfig" in msg)
buf.seek(0)
print(torch.load(buf, weights_only=False))
with serialization.safe_globals([TrainConfig, Metrics]):
    buf.seek(0)
    print(torch.load(buf, weights_only=True))
print(TrainConfig in serialization.get_safe_globals())
serialization.add_safe_globals([TrainConfig, Metrics])
buf.seek(0)
print(torch.load(buf)["config"], TrainConfig in serialization.get_safe_globals())
serialization.clear_safe_globals()
print(serialization.get_safe_globals())

# views share storage through save/load; a slice saves the whole storage
base = torch.arange(10.0)
views = {"base": base, "even": base[::2], "tail": base[6:]}
buf = io.BytesIO()
torch.save(views, buf)
size_shared = buf.tell()
buf.seek(0)
got = torch.load(buf)
got["base"][6] = 100.0
print(got["tail"], got["even"])
buf2 = io.BytesIO()
torch.save(base[6:].clone(), buf2)
print(size_shared > buf2.tell())

# keep the best checkpoint by validation loss
best = float("inf")
for epoch, val_loss in enumerate([0.9, 0.7, 0.8, 0.6]):
    state = {"epoch": epoch, "val_loss": val_loss, "model": model.state_dict()}
    torch.save(state, os.path.join(tmp, "last.pt"))
    if val_loss < best:
        best = val_loss
        torch.save(state, os.path.join(tmp, "best.pt"))
b = torch.load(os.path.join(tmp, "best.pt"))
print(b["epoch"], b["val_loss"], torch.load(os.path.join(tmp, "last.pt"))["epoch"])

# restore the model and training state, then continue identically
model2 = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 2))
opt2 = torch.optim.SGD(model2.parameters(), lr=0.1, momentum=0.9)
sched2 = torch.optim.lr_scheduler.StepLR(opt2, step_size=2, gamma=0.5)
model2.load_state_dict(loaded["model"])
opt2.load_state_dict(loaded["optimizer"])
sched2.load_state_dict(loaded["scheduler"])
print(opt2.param_groups[0]["lr"], sched2.get_last_lr())
for m, o in ((model, opt), (model2, opt2)):
    o.zero_grad()
    nn.functional.cross_entropy(m(x), y).backward()
    o.step()
print(all(torch.equal(a, b) for a, b in zip(model.state_dict().values(),
                                             model2.state_dict().values())))

# RNG state
torch.manual_seed(42)
state = torch.get_rng_state()
a = torch.rand(3)
torch.set_rng_state(state)
print(torch.equal(a, torch.rand(3)), state.dtype, state.shape, torch.initial_seed())
with torch.random.fork_rng():
    torch.manual_seed(7)
    inside = torch.randn(2)
after = torch.randn(2)
torch.manual_seed(42)
torch.rand(3)
print(inside, torch.equal(after, torch.randn(2)))
g = torch.Generator().manual_seed(5)
gs = g.get_state()
r1 = torch.randint(0, 100, (5,), generator=g)
g.set_state(gs)
print(r1, torch.equal(r1, torch.randint(0, 100, (5,), generator=g)), g.initial_seed())
try:
    torch.set_rng_state(torch.zeros(10))
except (RuntimeError, TypeError) as e:
    print(type(e).__name__, e)
print("RESULT:", f"{loss.item():.5f}", b["epoch"])
