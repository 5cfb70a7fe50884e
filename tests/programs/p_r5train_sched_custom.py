"""Learning-rate schedulers users write themselves, shrunk from their sources: timm's Scheduler
base class and CosineLRScheduler (warmup_t, cycle_mul/cycle_decay/cycle_limit, k_decay,
noise off) editing param_groups with initial_lr, a torch LRScheduler subclass with get_lr and
_get_closed_form_lr (the pattern of mmcv/detectron2's WarmupMultiStepLR), HF transformers'
get_cosine_with_hard_restarts_schedule_with_warmup / get_inverse_sqrt_schedule /
get_wsd_schedule as LambdaLR, callable-object lambdas kept in state_dict, plus the scheduler
API corners: get_lr() outside step warning, step(epoch) deprecation, PolynomialLR power,
LinearLR end_factor, CyclicLR triangular2 / scale_fn, OneCycleLR three_phase and stepping past
total_steps, SequentialLR/ChainedScheduler errors, ReduceLROnPlateau threshold_mode='abs' and
eps, and state_dict keys."""
import importlib
import math
import os
import warnings
from functools import partial

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
lr_scheduler = importlib.import_module(LIB + ".optim.lr_scheduler")


class Scheduler:
    """timm.scheduler.scheduler.Scheduler, shrunk (noise disabled)."""

    def __init__(self, optimizer, param_group_field, t_in_epochs=True, initialize=True):
        self.optimizer = optimizer
        self.param_group_field = param_group_field
        self._initial_param_group_field = f"initial_{param_group_field}"
        if initialize:
            for i, group in enumerate(self.optimizer.param_groups):
                if param_group_field not in group:
                    raise KeyError(f"{param_group_field} missing from param_groups[{i}]")
                group.setdefault(self._initial_param_group_field, group[param_group_field])
        self.base_values = [group[self._initial_param_group_field]
                            for group in self.optimizer.param_groups]
        self.metric = None
        self.t_in_epochs = t_in_epochs

    def state_dict(self):
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)

    def _get_values(self, t, on_epoch=True):
        proceed = (on_epoch and self.t_in_epochs) or (not on_epoch and not self.t_in_epochs)
        if not proceed:
            return None
        return self._get_lr(t)

    def step(self, epoch, metric=None):
        self.metric = metric
        values = self._get_values(epoch, on_epoch=True)
        if values is not None:
            self.update_groups(values)

    def step_update(self, num_updates, metric=None):
        self.metric = metric
        values = self._get_values(num_updates, on_epoch=False)
        if values is not None:
            self.update_groups(values)

    def update_groups(self, values):
        if not isinstance(values, (list, tuple)):
            values = [values] * len(self.optimizer.param_groups)
        for param_group, value in zip(self.optimizer.param_groups, values):
            if "lr_scale" in param_group:
                param_group[self.param_group_field] = value * param_group["lr_scale"]
            else:
                param_group[self.param_group_field] = value


class CosineLRScheduler(Scheduler):
    """timm.scheduler.cosine_lr.CosineLRScheduler, shrunk."""

    def __init__(self, optimizer, t_initial, lr_min=0.0, cycle_mul=1.0, cycle_decay=1.0,
                 cycle_limit=1, warmup_t=0, warmup_lr_init=0, warmup_prefix=False,
                 t_in_epochs=True, k_decay=1.0, initialize=True):
        super().__init__(optimizer, param_group_field="lr", t_in_epochs=t_in_epochs,
                         initialize=initialize)
        assert t_initial > 0
        assert lr_min >= 0
        self.t_initial = t_initial
        self.lr_min = lr_min
        self.cycle_mul = cycle_mul
        self.cycle_decay = cycle_decay
        self.cycle_limit = cycle_limit
        self.warmup_t = warmup_t
        self.warmup_lr_init = warmup_lr_init
        self.warmup_prefix = warmup_prefix
        self.k_decay = k_decay
        if self.warmup_t:
            self.warmup_steps = [(v - warmup_lr_init) / self.warmup_t for v in self.base_values]
            super().update_groups(self.warmup_lr_init)
        else:
            self.warmup_steps = [1 for _ in self.base_values]

    def _get_lr(self, t):
        if t < self.warmup_t:
            lrs = [self.warmup_lr_init + t * s for s in self.warmup_steps]
        else:
            if self.warmup_prefix:
                t = t - self.warmup_t
            if self.cycle_mul != 1:
                i = math.floor(math.log(1 - t / self.t_initial * (1 - self.cycle_mul),
                                        self.cycle_mul))
                t_i = self.cycle_mul ** i * self.t_initial
                t_curr = t - (1 - self.cycle_mul ** i) / (1 - self.cycle_mul) * self.t_initial
            else:
                i = t // self.t_initial
                t_i = self.t_initial
                t_curr = t - (self.t_initial * i)
            gamma = self.cycle_decay ** i
            lr_max_values = [v * gamma for v in self.base_values]
            k = self.k_decay
            if i < self.cycle_limit:
                lrs = [self.lr_min + 0.5 * (lr_max - self.lr_min)
                       * (1 + math.cos(math.pi * t_curr ** k / t_i ** k))
                       for lr_max in lr_max_values]
            else:
                lrs = [self.lr_min for _ in self.base_values]
        return lrs


class WarmupMultiStepLR(lr_scheduler.LRScheduler):
    """detectron2's WarmupMultiStepLR (solver/lr_scheduler.py), linear warm-up."""

    def __init__(self, optimizer, milestones, gamma=0.1, warmup_factor=0.001, warmup_iters=4,
                 last_epoch=-1):
        if not list(milestones) == sorted(milestones):
            raise ValueError("Milestones should be a list of increasing integers. Got {}",
                             milestones)
        self.milestones = milestones
        self.gamma = gamma
        self.warmup_factor = warmup_factor
        self.warmup_iters = warmup_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        warmup_factor = 1.0
        if self.last_epoch < self.warmup_iters:
            alpha = self.last_epoch / self.warmup_iters
            warmup_factor = self.warmup_factor * (1 - alpha) + alpha
        return [base_lr * warmup_factor * self.gamma ** sum(m <= self.last_epoch
                                                            for m in self.milestones)
                for base_lr in self.base_lrs]

    def _compute_values(self):
        return self.get_lr()


def _cosine_hard_restarts(current_step, *, num_warmup_steps, num_training_steps, num_cycles):
    if current_step < num_warmup_steps:
        return float(current_step) / float(max(1, num_warmup_steps))
    progress = float(current_step - num_warmup_steps) / float(
        max(1, num_training_steps - num_warmup_steps))
    if progress >= 1.0:
        return 0.0
    return max(0.0, 0.5 * (1.0 + math.cos(math.pi * ((float(num_cycles) * progress) % 1.0))))


def _inverse_sqrt(current_step, *, num_warmup_steps, timescale=None):
    if current_step < num_warmup_steps:
        return float(current_step) / float(max(1, num_warmup_steps))
    shift = timescale - num_warmup_steps
    decay = 1.0 / math.sqrt((current_step + shift) / timescale)
    return decay


def _wsd(current_step, *, num_warmup_steps, num_stable_steps, num_decay_steps, min_lr_ratio,
         num_cycles):
    if current_step < num_warmup_steps:
        return float(current_step) / float(max(1, num_warmup_steps))
    if current_step < num_warmup_steps + num_stable_steps:
        return 1.0
    if current_step < num_warmup_steps + num_stable_steps + num_decay_steps:
        progress = float(current_step - num_warmup_steps - num_stable_steps) / float(
            max(1, num_decay_steps))
        value = max(0.0, 0.5 * (1.0 + math.cos(math.pi * float(num_cycles) * 2.0 * progress)))
        return (1.0 - min_lr_ratio) * value + min_lr_ratio
    return min_lr_ratio


class WarmupLambda:
    """A callable object as lr_lambda: LambdaLR.state_dict keeps its __dict__."""

    def __init__(self, warmup):
        self.warmup = warmup

    def __call__(self, epoch):
        return min(1.0, (epoch + 1) / self.warmup)


def fresh(lr=0.1, groups=1, momentum=0.9):
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    params = [{"params": [model.weight]}, {"params": [model.bias], "lr": lr * 10}][:groups]
    if groups == 1:
        params = [{"params": list(model.parameters())}]
    return model, torch.optim.SGD(params, lr=lr, momentum=momentum)


def fmt(v):
    return "%.6g" % v


# timm CosineLRScheduler, per epoch and per update, with lr_scale on a group
model, opt = fresh(groups=2)
opt.param_groups[1]["lr_scale"] = 0.5
sched = CosineLRScheduler(opt, t_initial=4, lr_min=1e-3, cycle_mul=2.0, cycle_decay=0.5,
                          cycle_limit=3, warmup_t=2, warmup_lr_init=1e-4, k_decay=1.5)
print("timm keys", sorted(sched.state_dict().keys()))
print("initial_lr", [g["initial_lr"] for g in opt.param_groups])
trace = []
for epoch in range(14):
    sched.step(epoch)
    trace.append([fmt(g["lr"]) for g in opt.param_groups])
print("timm cosine", trace)
model, opt = fresh()
sched = CosineLRScheduler(opt, t_initial=6, t_in_epochs=False, warmup_t=2, warmup_prefix=True)
trace = []
for upd in range(10):
    sched.step(upd)  # ignored: t_in_epochs=False
    sched.step_update(upd)
    trace.append(fmt(opt.param_groups[0]["lr"]))
print("timm per-update", trace)

# detectron2-style LRScheduler subclass; torch resumes it via last_epoch and initial_lr
model, opt = fresh()
sched = WarmupMultiStepLR(opt, milestones=[6, 9])
lrs = []
for it in range(11):
    opt.step()
    sched.step()
    lrs.append(fmt(sched.get_last_lr()[0]))
print("warmup multistep", lrs)
print("sd keys", sorted(sched.state_dict().keys()), sched.state_dict()["last_epoch"])
model, opt2 = fresh()
try:
    WarmupMultiStepLR(opt2, milestones=[6, 9], last_epoch=4)
except Exception as e:
    print(type(e).__name__, e)
for g in opt2.param_groups:
    g["initial_lr"] = 0.1
resumed = WarmupMultiStepLR(opt2, milestones=[6, 9], last_epoch=4)
print("resumed", resumed.last_epoch, [fmt(v) for v in resumed.get_last_lr()],
      fmt(opt2.param_groups[0]["lr"]))
try:
    WarmupMultiStepLR(opt2, milestones=[9, 6])
except Exception as e:
    print(type(e).__name__, e)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    sched.get_lr()
    print("get_lr warnings", len(w))

# HF-style LambdaLR schedules
for name, fn in [
    ("hard_restarts", partial(_cosine_hard_restarts, num_warmup_steps=2, num_training_steps=12,
                              num_cycles=2)),
    ("inverse_sqrt", partial(_inverse_sqrt, num_warmup_steps=3, timescale=3)),
    ("wsd", partial(_wsd, num_warmup_steps=2, num_stable_steps=3, num_decay_steps=4,
                    min_lr_ratio=0.1, num_cycles=0.5)),
]:
    model, opt = fresh(lr=0.05)
    sched = lr_scheduler.LambdaLR(opt, fn)
    lrs = []
    for step in range(12):
        opt.step()
        sched.step()
        lrs.append(fmt(sched.get_last_lr()[0]))
    print(name, lrs)

# a callable object is kept in LambdaLR's state_dict, a function is not
model, opt = fresh(groups=2)
sched = lr_scheduler.LambdaLR(opt, [WarmupLambda(4), lambda e: 0.9 ** e])
for _ in range(3):
    opt.step()
    sched.step()
sd = sched.state_dict()
print("lambda sd", sorted(sd.keys()), sd["lr_lambdas"], [fmt(v) for v in sd["_last_lr"]])
model, opt = fresh(groups=2)
sched2 = lr_scheduler.LambdaLR(opt, [WarmupLambda(10), lambda e: 1.0])
sched2.load_state_dict(sd)
print("loaded warmup", sched2.lr_lambdas[0].warmup, sched2.last_epoch)
try:
    lr_scheduler.LambdaLR(opt, [WarmupLambda(4)])
except Exception as e:
    print(type(e).__name__, e)

# step(epoch) is deprecated but still sets the epoch
model, opt = fresh()
sched = lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    opt.step()
    sched.step(5)
    print("step(epoch)", sched.last_epoch, fmt(sched.get_last_lr()[0]),
          [type(x.message).__name__ for x in w], str(w[0].message)[:60] if w else None)

# built-in schedules with less common arguments
cases = [
    ("PolynomialLR", lambda o: lr_scheduler.PolynomialLR(o, total_iters=5, power=2.0)),
    ("LinearLR", lambda o: lr_scheduler.LinearLR(o, start_factor=1.0, end_factor=0.2,
                                                 total_iters=4)),
    ("ConstantLR", lambda o: lr_scheduler.ConstantLR(o, factor=0.25, total_iters=3)),
    ("MultiplicativeLR", lambda o: lr_scheduler.MultiplicativeLR(o, lambda e: 0.8)),
    ("CyclicLR-tri2", lambda o: lr_scheduler.CyclicLR(o, base_lr=0.01, max_lr=0.1,
                                                      step_size_up=2, step_size_down=3,
                                                      mode="triangular2")),
    ("CyclicLR-fn", lambda o: lr_scheduler.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2,
                                                    scale_fn=lambda x: 1 / (2.0 ** (x - 1)),
                                                    scale_mode="iterations",
                                                    cycle_momentum=False)),
    ("OneCycle-3phase", lambda o: lr_scheduler.OneCycleLR(o, max_lr=0.2, total_steps=12,
                                                          three_phase=True,
                                                          anneal_strategy="linear",
                                                          div_factor=10,
                                                          final_div_factor=100)),
    ("WarmRestarts-Tmult", lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2,
                                                                              eta_min=0.001)),
]
for name, make in cases:
    model, opt = fresh()
    sched = make(opt)
    lrs, moms = [], []
    for _ in range(12):
        opt.step()
        sched.step()
        lrs.append(fmt(sched.get_last_lr()[0]))
        moms.append(fmt(opt.param_groups[0]["momentum"]))
    print(name, lrs)
    keys = sorted(k for k in sched.state_dict() if not k.startswith("_"))
    print("  momentum", moms[:6], keys[:8])
model, opt = fresh()
sched = lr_scheduler.OneCycleLR(opt, max_lr=0.2, total_steps=3)
try:
    for _ in range(5):
        opt.step()
        sched.step()
except Exception as e:
    print(type(e).__name__, e)
for bad in [dict(max_lr=0.1), dict(max_lr=0.1, total_steps=0), dict(max_lr=0.1, epochs=2),
            dict(max_lr=0.1, total_steps=10, pct_start=1.5),
            dict(max_lr=0.1, total_steps=10, anneal_strategy="sq")]:
    try:
        model, opt = fresh()
        lr_scheduler.OneCycleLR(opt, **bad)
    except Exception as e:
        print(type(e).__name__, e)

# SequentialLR / ChainedScheduler misuse
model, opt = fresh()
s1 = lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
s2 = lr_scheduler.ExponentialLR(opt, gamma=0.9)
for kwargs in [dict(schedulers=[s1, s2], milestones=[2, 3]), dict(schedulers=[], milestones=[])]:
    try:
        lr_scheduler.SequentialLR(opt, **kwargs)
    except Exception as e:
        print(type(e).__name__, e)
model, other = fresh()
try:
    lr_scheduler.SequentialLR(opt, [s1, lr_scheduler.StepLR(other, 2)], milestones=[2])
except Exception as e:
    print(type(e).__name__, e)
seq = lr_scheduler.SequentialLR(opt, [s1, s2], milestones=[3])
chained = None
lrs = []
for _ in range(6):
    opt.step()
    seq.step()
    lrs.append(fmt(seq.get_last_lr()[0]))
print("sequential", lrs, sorted(seq.state_dict().keys()))
model, opt = fresh()
chained = lr_scheduler.ChainedScheduler([lr_scheduler.ConstantLR(opt, factor=0.1, total_iters=2),
                                         lr_scheduler.ExponentialLR(opt, gamma=0.9)],
                                        optimizer=opt)
lrs = []
for _ in range(4):
    opt.step()
    chained.step()
    lrs.append(fmt(chained.get_last_lr()[0]))
print("chained", lrs, sorted(chained.state_dict().keys()))

# ReduceLROnPlateau with an absolute threshold and eps (tiny reductions are skipped)
model, opt = fresh(lr=1e-3, groups=2)
plateau = lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=1,
                                         threshold=0.05, threshold_mode="abs",
                                         min_lr=[1e-4, 0.0], eps=2e-4)
metrics = [1.0, 0.97, 0.96, 0.9, 0.88, 0.87, 0.86, 0.85, 0.849, 0.848, 0.847, 0.846]
trace = []
for m in metrics:
    opt.step()
    plateau.step(m)
    trace.append((plateau.num_bad_epochs, [fmt(g["lr"]) for g in opt.param_groups]))
print("plateau", trace)
print("plateau best", plateau.best, [fmt(v) for v in plateau.get_last_lr()],
      sorted(plateau.state_dict().keys()))
for bad in [dict(mode="mid"), dict(threshold_mode="pct"), dict(factor=1.0),
            dict(min_lr=[0.1])]:
    try:
        lr_scheduler.ReduceLROnPlateau(opt, **bad)
    except Exception as e:
        print(type(e).__name__, e)
