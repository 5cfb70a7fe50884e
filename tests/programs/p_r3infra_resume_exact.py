"""The "Saving and loading a general checkpoint" recipe taken to exact resumption: model,
optimizer, scheduler, GradScaler, epoch and all RNG states (torch.get_rng_state, a Generator's
get_state, random / numpy states) saved into an io.BytesIO, training continued, then resumed
from the checkpoint and checked to give identical numbers; plus nested containers, tensors that
share storage, views, map_location forms and the weights_only=True errors."""
import collections
import importlib
import io
import os
import random

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.drop = nn.Dropout(0.25)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(self.drop(F.relu(self.fc1(x))))


def make(seed):
    torch.manual_seed(seed)
    model = Net()
    opt = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    return model, opt, sched


def train_steps(model, opt, sched, gen, n):
    losses = []
    for _ in range(n):
        x = torch.randn(6, 4, generator=gen)
        y = torch.randint(0, 3, (6,), generator=gen)
        idx = torch.randperm(6)
        loss = F.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(round(loss.item(), 5))
    return losses


model, opt, sched = make(0)
gen = torch.Generator().manual_seed(123)
print(train_steps(model, opt, sched, gen, 3))

buf = io.BytesIO()
torch.save({
    "epoch": 3,
    "model_state_dict": model.state_dict(),
    "optimizer_state_dict": opt.state_dict(),
    "scheduler_state_dict": sched.state_dict(),
    "rng_state": torch.get_rng_state(),
    "gen_state": gen.get_state(),
    "py_state": random.getstate(),
    "np_state": np.random.get_state(),
}, buf)
print(buf.tell() > 0)
cont = train_steps(model, opt, sched, gen, 3)
print(cont)
print(sched.get_last_lr(), opt.param_groups[0]["lr"])

buf.seek(0)
ckpt = torch.load(buf, weights_only=False)
print(sorted(ckpt), ckpt["epoch"])
print(ckpt["rng_state"].dtype, ckpt["rng_state"].shape, ckpt["gen_state"].dtype)
print(ckpt["optimizer_state_dict"]["param_groups"])
print(sorted(ckpt["optimizer_state_dict"]["state"][0]))
print(ckpt["scheduler_state_dict"])
model2, opt2, sched2 = make(99)
model2.load_state_dict(ckpt["model_state_dict"])
opt2.load_state_dict(ckpt["optimizer_state_dict"])
sched2.load_state_dict(ckpt["scheduler_state_dict"])
torch.set_rng_state(ckpt["rng_state"])
gen2 = torch.Generator()
gen2.set_state(ckpt["gen_state"])
random.setstate(ckpt["py_state"])
np.random.set_state(ckpt["np_state"])
resumed = train_steps(model2, opt2, sched2, gen2, 3)
print(resumed, resumed == cont)
print(all(torch.equal(a, b) for a, b in zip(model.parameters(), model2.parameters())))
print(opt2.state_dict()["state"][0]["step"], sched2.last_epoch)

buf.seek(0)
try:
    torch.load(buf, weights_only=True)
except Exception as e:
    print(type(e).__name__, "numpy" in str(e), "weights_only" in str(e))
buf.seek(0)
print(torch.load(buf, map_location="cpu",
                 weights_only=False)["model_state_dict"]["fc2.bias"].device)
buf.seek(0)
print(torch.load(buf, map_location=torch.device("cpu"), weights_only=False)["epoch"])
buf.seek(0)
print(torch.load(buf, weights_only=False, map_location=lambda storage, loc: storage)["epoch"])
buf.seek(0)
print(torch.load(buf, map_location={"cuda:0": "cpu"}, weights_only=False)["epoch"])

base = torch.arange(10.0)
nested = {"pair": (base, base[2:5]), "list": [base.view(2, 5), {"t": base[::3]}],
          "int": 7, "s": "text", "none": None, "f": 1.5, "od": collections.OrderedDict(a=1)}
b2 = io.BytesIO()
torch.save(nested, b2)
b2.seek(0)
back = torch.load(b2)
print(back["pair"][1], back["list"][0].shape, back["list"][1]["t"], back["od"])
back["pair"][0][3] = 100.0
print(back["pair"][1], back["list"][0][0], back["list"][1]["t"])
print(back["list"][1]["t"].stride(), back["list"][0].is_contiguous())
print(type(back["od"]).__name__, back["none"], back["f"], back["int"])

big = torch.zeros(1000)
small = big[:2]
b3, b4 = io.BytesIO(), io.BytesIO()
torch.save(small, b3)
torch.save(small.clone(), b4)
print(b3.getbuffer().nbytes > b4.getbuffer().nbytes + 3000)


class Custom:
    def __init__(self, v):
        self.v = v


b5 = io.BytesIO()
torch.save({"obj": Custom(3), "t": torch.ones(1)}, b5)
b5.seek(0)
try:
    torch.load(b5, weights_only=True)
except Exception as e:
    print(type(e).__name__, "Unsupported global" in str(e), "Custom" in str(e))
b5.seek(0)
print(torch.load(b5, weights_only=False)["obj"].v)
b6 = io.BytesIO()
torch.save([torch.tensor([1, 2], dtype=torch.int16), torch.tensor(True),
            torch.tensor([1.5], dtype=torch.bfloat16), torch.tensor([1j])], b6)
b6.seek(0)
print(torch.load(b6, weights_only=True))
print("RESULT:", resumed[-1])
