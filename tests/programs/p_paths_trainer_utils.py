"""Trainer utility code in the style of HuggingFace's Trainer and timm's train.py: RNG-state
checkpointing (random, numpy, torch.random, torch.cuda.random) and exact resumption,
unwrap_model for DataParallel, loading a "module."-prefixed DDP checkpoint with
consume_prefix_in_state_dict_if_present, warm-up LambdaLR, clip_grad_norm_, forward hooks
with torch.utils.hooks.RemovableHandle, and parameter groups without weight decay."""
import importlib
import io
import math
import os
import random

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = importlib.import_module(LIB + ".nn")
hooks = importlib.import_module(LIB + ".utils.hooks")
mutils = importlib.import_module(LIB + ".nn.modules.utils")
trandom = importlib.import_module(LIB + ".random")
cuda_random = importlib.import_module(LIB + ".cuda.random")
LambdaLR = importlib.import_module(LIB + ".optim.lr_scheduler").LambdaLR
parallel = importlib.import_module(LIB + ".nn.parallel")


def get_rng_state():
    states = {"python": random.getstate(), "numpy": np.random.get_state(),
              "cpu": trandom.get_rng_state()}
    if torch.cuda.is_available():
        states["cuda"] = cuda_random.get_rng_state_all()
    return states


def set_rng_state(states):
    random.setstate(states["python"])
    np.random.set_state(states["numpy"])
    trandom.set_rng_state(states["cpu"])
    if torch.cuda.is_available() and "cuda" in states:
        cuda_random.set_rng_state_all(states["cuda"])


def unwrap_model(model):
    if isinstance(model, (parallel.DataParallel, parallel.DistributedDataParallel)):
        return unwrap_model(model.module)
    return model


def get_linear_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps):
    def lr_lambda(current_step):
        if current_step < num_warmup_steps:
            return float(current_step) / float(max(1, num_warmup_steps))
        return max(0.0, float(num_training_steps - current_step) / float(
            max(1, num_training_steps - num_warmup_steps)))
    return LambdaLR(optimizer, lr_lambda)


def decay_groups(model, weight_decay):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.ndim < 2 or "norm" in name else decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(6, 12)
        self.norm = nn.LayerNorm(12)
        self.drop = nn.Dropout(0.2)
        self.head = nn.Linear(12, 3)

    def forward(self, x):
        return self.head(self.drop(torch.relu(self.norm(self.embed(x)))))


def train_steps(model, opt, sched, n, log=True):
    losses = []
    for step in range(n):
        x = torch.randn(8, 6)
        y = torch.randint(0, 3, (8,))
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        opt.step()
        sched.step()
        losses.append(loss.item())
        if log:
            print("step %d loss %.5f grad_norm %.5f lr %.6f" % (step, loss.item(), float(norm),
                                                            sched.get_last_lr()[0]))
    return losses


random.seed(0)
np.random.seed(0)
torch.manual_seed(0)
model = Model()
wrapped = parallel.DataParallel(model)
print("unwrap", unwrap_model(wrapped) is model, type(wrapped).__name__)
opt = torch.optim.AdamW(decay_groups(model, 0.01), lr=1e-2)
print("groups", [len(g["params"]) for g in opt.param_groups],
      [g["weight_decay"] for g in opt.param_groups])
sched = get_linear_schedule_with_warmup(opt, 2, 8)

acts = {}


def save_act(name):
    def hook(module, inp, out):
        acts[name] = out.detach().abs().mean().item()
    return hook


handle = model.norm.register_forward_hook(save_act("norm"))
print("handle", isinstance(handle, hooks.RemovableHandle))
train_steps(model, opt, sched, 3)
print("act %.5f" % acts["norm"])
handle.remove()
acts.clear()

buf = io.BytesIO()
torch.save({"model": {"module." + k: v for k, v in model.state_dict().items()},
            "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
            "rng": get_rng_state(), "step": 3}, buf)
after = train_steps(model, opt, sched, 3, log=False)
print("hook removed", acts == {})

buf.seek(0)
ckpt = torch.load(buf, weights_only=False)
state = ckpt["model"]
mutils.consume_prefix_in_state_dict_if_present(state, "module.")
print("keys", list(state)[:3])
torch.manual_seed(123)
resumed = Model()
print(resumed.load_state_dict(state))
opt2 = torch.optim.AdamW(decay_groups(resumed, 0.01), lr=1e-2)
opt2.load_state_dict(ckpt["optimizer"])
sched2 = get_linear_schedule_with_warmup(opt2, 2, 8)
sched2.load_state_dict(ckpt["scheduler"])
set_rng_state(ckpt["rng"])
again = train_steps(resumed, opt2, sched2, 3, log=False)
print("resumed", ["%.5f" % v for v in again])
print("identical", all(math.isclose(a, b, rel_tol=1e-6) for a, b in zip(after, again)))
print("RESULT:", sched2.get_last_lr())
