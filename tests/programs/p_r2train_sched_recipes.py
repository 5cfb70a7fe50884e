"""Learning-rate schedule recipes from training scripts: HuggingFace's
get_linear/cosine/polynomial_schedule_with_warmup (LambdaLR + functools.partial), warm-up then
cosine with SequentialLR, ChainedScheduler, OneCycleLR with Adam's betas cycled, CyclicLR
exp_range with momentum, CosineAnnealingWarmRestarts stepped with fractional epochs,
ReduceLROnPlateau(mode="max") with cooldown and per-group min_lr, and each state_dict()."""
import functools
import importlib
import math
import os
import warnings

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
lr_scheduler = importlib.import_module(LIB + ".optim.lr_scheduler")
LambdaLR = lr_scheduler.LambdaLR


def _get_linear_schedule_with_warmup_lr_lambda(current_step, *, num_warmup_steps,
                                               num_training_steps):
    if current_step < num_warmup_steps:
        return float(current_step) / float(max(1, num_warmup_steps))
    return max(0.0, float(num_training_steps - current_step)
               / float(max(1, num_training_steps - num_warmup_steps)))


def get_linear_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps,
                                    last_epoch=-1):
    lr_lambda = functools.partial(_get_linear_schedule_with_warmup_lr_lambda,
                                  num_warmup_steps=num_warmup_steps,
                                  num_training_steps=num_training_steps)
    return LambdaLR(optimizer, lr_lambda, last_epoch)


def _get_cosine_schedule_with_warmup_lr_lambda(current_step, *, num_warmup_steps,
                                               num_training_steps, num_cycles):
    if current_step < num_warmup_steps:
        return float(current_step) / float(max(1, num_warmup_steps))
    progress = float(current_step - num_warmup_steps) / float(
        max(1, num_training_steps - num_warmup_steps))
    return max(0.0, 0.5 * (1.0 + math.cos(math.pi * float(num_cycles) * 2.0 * progress)))


def get_cosine_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps,
                                    num_cycles=0.5, last_epoch=-1):
    lr_lambda = functools.partial(_get_cosine_schedule_with_warmup_lr_lambda,
                                  num_warmup_steps=num_warmup_steps,
                                  num_training_steps=num_training_steps, num_cycles=num_cycles)
    return LambdaLR(optimizer, lr_lambda, last_epoch)


def get_polynomial_decay_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps,
                                              lr_end=1e-7, power=1.0, last_epoch=-1):
    lr_init = optimizer.defaults["lr"]

    def lr_lambda(current_step):
        if current_step < num_warmup_steps:
            return float(current_step) / float(max(1, num_warmup_steps))
        elif current_step > num_training_steps:
            return lr_end / lr_init
        lr_range = lr_init - lr_end
        decay_steps = num_training_steps - num_warmup_steps
        pct_remaining = 1 - (current_step - num_warmup_steps) / decay_steps
        return (lr_range * pct_remaining ** power + lr_end) / lr_init

    return LambdaLR(optimizer, lr_lambda, last_epoch)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
X, Y = torch.randn(32, 4), torch.randn(32, 1)


def train_step(opt):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(X), Y)
    loss.backward()
    opt.step()
    return loss


def fmt(xs):
    return "[" + ", ".join(f"{x:.6g}" for x in xs) + "]"


for name, factory in [
        ("linear", lambda o: get_linear_schedule_with_warmup(o, 3, 10)),
        ("cosine", lambda o: get_cosine_schedule_with_warmup(o, 2, 10, num_cycles=1.0)),
        ("poly", lambda o: get_polynomial_decay_schedule_with_warmup(o, 2, 8, power=2.0))]:
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    sched = factory(opt)
    lrs = []
    for step in range(11):
        train_step(opt)
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    print(name, fmt(lrs))
    sd = sched.state_dict()
    print(" ", sorted(sd), sd["last_epoch"], sd["_step_count"], sd["lr_lambdas"], sd["base_lrs"])

# warm-up then cosine decay, the SequentialLR recipe (ViT / DeiT training scripts)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
warmup = lr_scheduler.LinearLR(opt, start_factor=0.1, end_factor=1.0, total_iters=3)
cosine = lr_scheduler.CosineAnnealingLR(opt, T_max=6, eta_min=1e-4)
sched = lr_scheduler.SequentialLR(opt, schedulers=[warmup, cosine], milestones=[3])
lrs = []
for epoch in range(10):
    train_step(opt)
    sched.step()
    lrs.append(opt.param_groups[0]["lr"])
print("sequential", fmt(lrs), sched.get_last_lr() == [lrs[-1]])
sd = sched.state_dict()
print(sorted(sd), sd["_milestones"], sd["last_epoch"])
print([sorted(s) for s in sd["_schedulers"]])

# ChainedScheduler multiplies the factors every step
opt = torch.optim.SGD(model.parameters(), lr=1.0)
chained = lr_scheduler.ChainedScheduler([
    lr_scheduler.ConstantLR(opt, factor=0.1, total_iters=2),
    lr_scheduler.ExponentialLR(opt, gamma=0.9)])
lrs = []
for epoch in range(5):
    train_step(opt)
    chained.step()
    lrs.append(chained.get_last_lr()[0])
print("chained", fmt(lrs))

# OneCycleLR cycles Adam's beta1 in the opposite direction of the lr
opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.99))
sched = lr_scheduler.OneCycleLR(opt, max_lr=0.01, epochs=2, steps_per_epoch=5,
                                anneal_strategy="linear", three_phase=True, div_factor=10.0,
                                final_div_factor=100.0)
rows = []
for epoch in range(2):
    for i in range(5):
        train_step(opt)
        sched.step()
        g = opt.param_groups[0]
        if sched.last_epoch < sched.total_steps:
            rows.append((round(g["lr"], 7), round(g["betas"][0], 5)))
print("onecycle", rows)
print(sorted(k for k in opt.param_groups[0] if k != "params"))
sd = sched.state_dict()
print(sd["_anneal_func_type"], sd["total_steps"], sd["use_beta1"], sd["cycle_momentum"])
print([sorted(p.items()) for p in sd["_schedule_phases"]][0])
try:
    sched.step()
except ValueError as e:
    print(type(e).__name__, e)

# CyclicLR (exp_range) with SGD momentum cycling
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
sched = lr_scheduler.CyclicLR(opt, base_lr=0.001, max_lr=0.01, step_size_up=2,
                              step_size_down=3, mode="exp_range", gamma=0.9,
                              base_momentum=0.8, max_momentum=0.95)
rows = []
for i in range(8):
    train_step(opt)
    sched.step()
    rows.append((round(sched.get_last_lr()[0], 7), round(opt.param_groups[0]["momentum"], 5)))
print("cyclic", rows)
sd = sched.state_dict()
print(sorted(sd))
print(sd["mode"], sd["scale_mode"], sd["total_size"], sd["step_ratio"], sd["max_lrs"])
try:
    lr_scheduler.CyclicLR(torch.optim.Adagrad(model.parameters()), 0.001, 0.01)
except ValueError as e:
    print(type(e).__name__, e)

# CosineAnnealingWarmRestarts stepped with fractional epochs, as its docstring shows
opt = torch.optim.SGD(model.parameters(), lr=0.05)
sched = lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2, eta_min=0.001)
iters = 3
lrs = []
for epoch in range(5):
    for i in range(iters):
        train_step(opt)
        sched.step(epoch + i / iters)
        lrs.append(sched.get_last_lr()[0])
print("warm restarts", fmt(lrs))
print(sched.T_cur, sched.T_i, sched.last_epoch)
sd = sched.state_dict()
print(sorted(sd), sd["T_0"], sd["T_mult"])
try:
    lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=0)
except ValueError as e:
    print(type(e).__name__, e)

# ReduceLROnPlateau on a validation accuracy (mode="max"), two groups with their own min_lr
opt = torch.optim.SGD([{"params": model[0].parameters()},
                       {"params": model[2].parameters(), "lr": 0.05}], lr=0.1)
sched = lr_scheduler.ReduceLROnPlateau(opt, mode="max", factor=0.5, patience=1,
                                       threshold=0.01, threshold_mode="abs", cooldown=1,
                                       min_lr=[0.02, 0.03])
accs = [0.50, 0.60, 0.605, 0.61, 0.60, 0.70, 0.69, 0.69, 0.69, 0.69, 0.69]
for epoch, acc in enumerate(accs):
    sched.step(acc)
    print(epoch, acc, sched.get_last_lr(), sched.num_bad_epochs, sched.cooldown_counter,
          sched.best)
sd = sched.state_dict()
print(sorted(sd))
print(sd["mode"], sd["threshold_mode"], sd["min_lrs"], sd["eps"], sd["last_epoch"])
try:
    lr_scheduler.ReduceLROnPlateau(opt, factor=1.0)
except ValueError as e:
    print(type(e).__name__, e)
try:
    lr_scheduler.ReduceLROnPlateau(opt, mode="avg")
except ValueError as e:
    print(type(e).__name__, e)

# schedulers built before the optimizer steps warn about the call order
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sched = lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    sched.step()
print(len(w), w[0].category.__name__ if w else None)
print(str(w[0].message)[:70] if w else None)
print("RESULT:", fmt(lrs[-3:]))
