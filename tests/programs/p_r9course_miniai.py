"""fast.ai course part 2 "miniai", shrunk: the from-scratch Learner of miniai/learner.py (Callback
with order, run_cbs, the with_cbs decorator turning CancelFit/CancelEpoch/CancelBatchException into
early exits, TrainCB/DeviceCB/MetricsCB/LRFinderCB, MomentumLearner, torch.no_grad()(one_epoch)
for validation), miniai/datasets.py's collate_dict + DataLoaders.from_dd over a list of dict
records, miniai/activations.py's Hook/Hooks/HooksCallback collecting activation means, stds and
histc histograms with register_forward_hook, and miniai/init.py's GeneralRelu, init_weights with
nn.init.kaiming_normal_, LSUV init and a from-scratch LayerNorm. fastcore/torcheval/fastprogress
replaced by the few lines they provide. Synthetic 8x8 "images" instead of Fashion-MNIST."""

import importlib
import math
import os
from copy import copy
from functools import partial
from operator import attrgetter, itemgetter

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
init = importlib.import_module(LIB + ".nn.init")
optim = torch.optim
data_mod = importlib.import_module(LIB + ".utils.data")
DataLoader, default_collate = data_mod.DataLoader, data_mod.default_collate
ExponentialLR = torch.optim.lr_scheduler.ExponentialLR

torch.manual_seed(42)
def_device = "cpu"


# ---- miniai/datasets.py ----
def collate_dict(ds):
    get = itemgetter(*ds.features)

    def _f(b):
        return get(default_collate(b))

    return _f


class DictDataset(list):
    """Stands in for a HF Dataset: a list of {'image': ..., 'label': ...} records."""

    features = ("image", "label")


def get_dls(train_ds, valid_ds, bs, **kwargs):
    return (
        DataLoader(train_ds, batch_size=bs, shuffle=True, **kwargs),
        DataLoader(valid_ds, batch_size=bs * 2, **kwargs),
    )


class DataLoaders:
    def __init__(self, *dls):
        self.train, self.valid = dls[:2]

    @classmethod
    def from_dd(cls, dd, batch_size, as_tuple=True, **kwargs):
        f = collate_dict(dd["train"])
        return cls(*get_dls(*dd.values(), bs=batch_size, collate_fn=f, **kwargs))


def to_device(x, device=def_device):
    if isinstance(x, torch.Tensor):
        return x.to(device)
    if isinstance(x, dict):
        return {k: v.to(device) for k, v in x.items()}
    return type(x)(to_device(o, device) for o in x)


def to_cpu(x):
    if isinstance(x, dict):
        return {k: to_cpu(v) for k, v in x.items()}
    if isinstance(x, list):
        return [to_cpu(o) for o in x]
    if isinstance(x, tuple):
        return tuple(to_cpu(list(x)))
    res = x.detach().cpu()
    return res.float() if res.dtype == torch.float16 else res


# ---- miniai/learner.py ----
class CancelFitException(Exception):
    pass


class CancelBatchException(Exception):
    pass


class CancelEpochException(Exception):
    pass


class Callback:
    order = 0


def run_cbs(cbs, method_nm, learn=None):
    for cb in sorted(cbs, key=attrgetter("order")):
        method = getattr(cb, method_nm, None)
        if method is not None:
            method(learn)


class with_cbs:
    def __init__(self, nm):
        self.nm = nm

    def __call__(self, f):
        def _f(o, *args, **kwargs):
            try:
                o.callback(f"before_{self.nm}")
                f(o, *args, **kwargs)
                o.callback(f"after_{self.nm}")
            except globals()[f"Cancel{self.nm.title()}Exception"]:
                pass
            finally:
                o.callback(f"cleanup_{self.nm}")

        return _f


class Learner:
    def __init__(self, model, dls=(0,), loss_func=F.mse_loss, lr=0.1, cbs=None, opt_func=optim.SGD):
        cbs = list(cbs or [])
        self.model, self.dls, self.loss_func, self.lr, self.cbs, self.opt_func = (
            model,
            dls,
            loss_func,
            lr,
            cbs,
            opt_func,
        )

    @with_cbs("batch")
    def _one_batch(self):
        self.predict()
        self.callback("after_predict")
        self.get_loss()
        self.callback("after_loss")
        if self.training:
            self.backward()
            self.callback("after_backward")
            self.step()
            self.callback("after_step")
            self.zero_grad()

    @with_cbs("epoch")
    def _one_epoch(self):
        for self.iter, self.batch in enumerate(self.dl):
            self._one_batch()

    def one_epoch(self, training):
        self.model.train(training)
        self.dl = self.dls.train if training else self.dls.valid
        self._one_epoch()

    @with_cbs("fit")
    def _fit(self, train, valid):
        for self.epoch in self.epochs:
            if train:
                self.one_epoch(True)
            if valid:
                torch.no_grad()(self.one_epoch)(False)

    def fit(self, n_epochs=1, train=True, valid=True, cbs=None, lr=None):
        cbs = list(cbs or [])
        for cb in cbs:
            self.cbs.append(cb)
        try:
            self.n_epochs = n_epochs
            self.epochs = range(n_epochs)
            if lr is None:
                lr = self.lr
            if self.opt_func:
                self.opt = self.opt_func(self.model.parameters(), lr)
            self._fit(train, valid)
        finally:
            for cb in cbs:
                self.cbs.remove(cb)

    def __getattr__(self, name):
        if name in ("predict", "get_loss", "backward", "step", "zero_grad"):
            return partial(self.callback, name)
        raise AttributeError(name)

    def callback(self, method_nm):
        run_cbs(self.cbs, method_nm, self)

    @property
    def training(self):
        return self.model.training


class TrainLearner(Learner):
    def predict(self):
        self.preds = self.model(self.batch[0])

    def get_loss(self):
        self.loss = self.loss_func(self.preds, self.batch[1])

    def backward(self):
        self.loss.backward()

    def step(self):
        self.opt.step()

    def zero_grad(self):
        self.opt.zero_grad()


class MomentumLearner(TrainLearner):
    def __init__(self, model, dls, loss_func, lr=None, cbs=None, opt_func=optim.SGD, mom=0.85):
        self.mom = mom
        super().__init__(model, dls, loss_func, lr, cbs, opt_func)

    def zero_grad(self):
        with torch.no_grad():
            for p in self.model.parameters():
                p.grad *= self.mom


class TrainCB(Callback):
    def __init__(self, n_inp=1):
        self.n_inp = n_inp

    def predict(self, learn):
        learn.preds = learn.model(*learn.batch[: self.n_inp])

    def get_loss(self, learn):
        learn.loss = learn.loss_func(learn.preds, *learn.batch[self.n_inp :])

    def backward(self, learn):
        learn.loss.backward()

    def step(self, learn):
        learn.opt.step()

    def zero_grad(self, learn):
        learn.opt.zero_grad()


class DeviceCB(Callback):
    def __init__(self, device=def_device):
        self.device = device

    def before_fit(self, learn):
        if hasattr(learn.model, "to"):
            learn.model.to(self.device)

    def before_batch(self, learn):
        learn.batch = to_device(learn.batch, device=self.device)


class Mean:
    """torcheval.metrics.Mean, weighted by batch size."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.total, self.weight = torch.tensor(0.0, dtype=torch.float64), 0.0

    def update(self, x, weight=1.0):
        self.total = self.total + x.double() * weight
        self.weight += weight

    def compute(self):
        return self.total / self.weight


class MulticlassAccuracy:
    def __init__(self):
        self.reset()

    def reset(self):
        self.correct, self.n = torch.tensor(0), 0

    def update(self, preds, targ):
        self.correct = self.correct + (preds.argmax(dim=1) == targ).sum()
        self.n += len(targ)

    def compute(self):
        return self.correct.float() / self.n


class MetricsCB(Callback):
    def __init__(self, *ms, **metrics):
        for o in ms:
            metrics[type(o).__name__] = o
        self.metrics = metrics
        self.all_metrics = copy(metrics)
        self.all_metrics["loss"] = self.loss = Mean()

    def _log(self, d):
        print(d)

    def before_fit(self, learn):
        learn.metrics = self

    def before_epoch(self, learn):
        [o.reset() for o in self.all_metrics.values()]

    def after_epoch(self, learn):
        log = {k: f"{v.compute():.3f}" for k, v in self.all_metrics.items()}
        log["epoch"] = learn.epoch
        log["train"] = "train" if learn.model.training else "eval"
        self._log(log)

    def after_batch(self, learn):
        x, y, *_ = to_cpu(learn.batch)
        for m in self.metrics.values():
            m.update(to_cpu(learn.preds), y)
        self.loss.update(to_cpu(learn.loss), weight=len(x))


class LRFinderCB(Callback):
    def __init__(self, gamma=1.3, max_mult=3):
        self.gamma, self.max_mult = gamma, max_mult

    def before_fit(self, learn):
        self.sched = ExponentialLR(learn.opt, self.gamma)
        self.lrs, self.losses = [], []
        self.min = math.inf

    def after_batch(self, learn):
        if not learn.training:
            raise CancelEpochException()
        self.lrs.append(learn.opt.param_groups[0]["lr"])
        loss = to_cpu(learn.loss)
        self.losses.append(loss)
        if loss < self.min:
            self.min = loss
        if math.isnan(loss) or (loss > self.min * self.max_mult):
            raise CancelFitException()
        self.sched.step()

    def cleanup_fit(self, learn):
        print(
            "lr_find: %d steps, lrs %.4g..%.4g, min loss %.4f"
            % (len(self.lrs), self.lrs[0], self.lrs[-1], float(self.min))
        )


class SingleBatchCB(Callback):
    order = 1

    def after_batch(self, learn):
        raise CancelFitException()


class SkipOddBatchesCB(Callback):
    """A CancelBatchException user: skip the update of every other training batch."""

    order = -1

    def after_loss(self, learn):
        if learn.training and learn.iter % 2 == 1:
            raise CancelBatchException()


class BatchCounterCB(Callback):
    def before_fit(self, learn):
        self.n_after, self.n_cleanup = 0, 0

    def after_batch(self, learn):
        self.n_after += 1

    def cleanup_batch(self, learn):
        self.n_cleanup += 1


# ---- miniai/activations.py ----
class Hook:
    def __init__(self, m, f):
        self.hook = m.register_forward_hook(partial(f, self))

    def remove(self):
        self.hook.remove()

    def __del__(self):
        self.remove()


class Hooks(list):
    def __init__(self, ms, f):
        super().__init__([Hook(m, f) for m in ms])

    def __enter__(self, *args):
        return self

    def __exit__(self, *args):
        self.remove()

    def __del__(self):
        self.remove()

    def __delitem__(self, i):
        self[i].remove()
        super().__delitem__(i)

    def remove(self):
        for h in self:
            h.remove()


def append_stats(hook, mod, inp, outp):
    if not hasattr(hook, "stats"):
        hook.stats = ([], [], [])
    acts = to_cpu(outp)
    hook.stats[0].append(acts.mean())
    hook.stats[1].append(acts.std())
    hook.stats[2].append(acts.abs().histc(40, 0, 10))


def get_hist(h):
    return torch.stack(h.stats[2]).t().float().log1p()


def get_min(h):
    h1 = torch.stack(h.stats[2]).t().float()
    return h1[0] / h1.sum(0)


class HooksCallback(Callback):
    def __init__(self, hookfunc, mod_filter=lambda x: x, on_train=True, on_valid=False, mods=None):
        self.hookfunc, self.mod_filter, self.on_train, self.on_valid, self.mods = (
            hookfunc,
            mod_filter,
            on_train,
            on_valid,
            mods,
        )
        super().__init__()

    def before_fit(self, learn):
        if self.mods:
            mods = self.mods
        else:
            mods = [m for m in learn.model.modules() if self.mod_filter(m)]
        self.hooks = Hooks(mods, partial(self._hookfunc, learn))

    def _hookfunc(self, learn, *args, **kwargs):
        if (self.on_train and learn.training) or (self.on_valid and not learn.training):
            self.hookfunc(*args, **kwargs)

    def after_fit(self, learn):
        self.hooks.remove()

    def __iter__(self):
        return iter(self.hooks)

    def __len__(self):
        return len(self.hooks)


class ActivationStats(HooksCallback):
    def __init__(self, mod_filter=lambda x: x):
        super().__init__(append_stats, mod_filter)

    def dead_chart(self):
        return [get_min(h) for h in self]


# ---- miniai/init.py ----
class GeneralRelu(nn.Module):
    def __init__(self, leak=None, sub=None, maxv=None):
        super().__init__()
        self.leak, self.sub, self.maxv = leak, sub, maxv

    def forward(self, x):
        x = F.leaky_relu(x, self.leak) if self.leak is not None else F.relu(x)
        if self.sub is not None:
            x -= self.sub
        if self.maxv is not None:
            x.clamp_max_(self.maxv)
        return x


def init_weights(m, leaky=0.0):
    if isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
        init.kaiming_normal_(m.weight, a=leaky)


def _lsuv_stats(hook, mod, inp, outp):
    acts = to_cpu(outp)
    hook.mean = acts.mean()
    hook.std = acts.std()


def lsuv_init(model, m, m_in, xb):
    h = Hook(m, _lsuv_stats)
    n = 0
    with torch.no_grad():
        while model(xb) is not None and (abs(h.std - 1) > 1e-3 or abs(h.mean) > 1e-3) and n < 50:
            m_in.bias -= h.mean
            m_in.weight.data /= h.std
            n += 1
    h.remove()
    return n


class LayerNorm(nn.Module):
    def __init__(self, dummy, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.mult = nn.Parameter(torch.tensor(1.0))
        self.add = nn.Parameter(torch.tensor(0.0))

    def forward(self, x):
        m = x.mean((1, 2, 3), keepdim=True)
        v = x.var((1, 2, 3), keepdim=True)
        x = (x - m) / ((v + self.eps).sqrt())
        return x * self.mult + self.add


def conv(ni, nf, ks=3, stride=2, act=nn.ReLU, norm=None, bias=None):
    if bias is None:
        bias = not isinstance(norm, (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d))
    layers = [nn.Conv2d(ni, nf, stride=stride, kernel_size=ks, padding=ks // 2, bias=bias)]
    if norm:
        layers.append(norm(nf))
    if act:
        layers.append(act())
    return nn.Sequential(*layers)


def get_model(act=nn.ReLU, nfs=None, norm=None):
    if nfs is None:
        nfs = [1, 4, 8, 16]
    layers = [conv(nfs[i], nfs[i + 1], act=act, norm=norm) for i in range(len(nfs) - 1)]
    return nn.Sequential(
        *layers, conv(nfs[-1], 4, act=None, norm=False, bias=True), nn.Flatten()
    ).to(def_device)


# ---- synthetic data: 4 classes of 8x8 blobs ----
def make_records(n, g):
    recs = []
    for i in range(n):
        label = i % 4
        img = torch.randn(1, 8, 8, generator=g) * 0.5
        r, c = (label // 2) * 4, (label % 2) * 4
        img[0, r : r + 4, c : c + 4] += 1.5
        recs.append({"image": img, "label": label})
    return recs


g = torch.Generator().manual_seed(0)
dd = {"train": DictDataset(make_records(64, g)), "valid": DictDataset(make_records(32, g))}
dls = DataLoaders.from_dd(dd, batch_size=16)
xb, yb = next(iter(dls.train))
print("batch", tuple(xb.shape), xb.dtype, tuple(yb.shape), yb.dtype, yb.tolist())

# 1. a plain linear model with the callback-based learner and metrics
torch.manual_seed(1)
model = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 4))
metrics = MetricsCB(accuracy=MulticlassAccuracy())
cbs = [TrainCB(), DeviceCB(), metrics]
learn = Learner(model, dls, F.cross_entropy, lr=0.2, cbs=cbs)
learn.fit(2)

# 2. SingleBatchCB: a CancelFitException stops after one batch, cleanup still runs
counter = BatchCounterCB()
learn.fit(1, cbs=[SingleBatchCB(), counter])
print(
    "single batch: after_batch",
    counter.n_after,
    "cleanup_batch",
    counter.n_cleanup,
    "cbs after fit",
    [type(c).__name__ for c in learn.cbs],
)

# 3. CancelBatchException skipping updates
counter = BatchCounterCB()
learn.fit(1, valid=False, cbs=[SkipOddBatchesCB(), counter])
print("skip odd: after_batch", counter.n_after, "cleanup_batch", counter.n_cleanup)

# 4. MomentumLearner + LR finder (CancelEpochException on validation, CancelFitException on blow-up)
torch.manual_seed(2)
model = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 4))
learn = MomentumLearner(model, dls, F.cross_entropy, lr=1e-3, cbs=[DeviceCB()])
learn.fit(6, cbs=[LRFinderCB(gamma=1.6, max_mult=3)])

# 5. conv net with activation stats hooks, kaiming init, GeneralRelu
for name, act_gr, iw in [
    ("relu", nn.ReLU, None),
    ("generalrelu", partial(GeneralRelu, leak=0.1, sub=0.4), 0.1),
]:
    torch.manual_seed(3)
    model = get_model(act_gr)
    if iw is not None:
        model.apply(partial(init_weights, leaky=iw))
    astats = ActivationStats(lambda m: isinstance(m, GeneralRelu) or isinstance(m, nn.ReLU))
    metrics = MetricsCB(accuracy=MulticlassAccuracy())
    learn = MomentumLearner(model, dls, F.cross_entropy, lr=0.1, cbs=[DeviceCB(), metrics, astats])
    learn.fit(2)
    print(name, "hooked", len(astats))
    for i, h in enumerate(astats):
        print(
            "  layer",
            i,
            "means",
            [round(float(m), 4) for m in h.stats[0][:3]],
            "stds",
            [round(float(s), 4) for s in h.stats[1][:3]],
        )
        print(
            "  hist shape",
            tuple(get_hist(h).shape),
            "dead",
            [round(float(d), 4) for d in get_min(h)[:4]],
        )
    print("  hooks left on model", sum(len(m._forward_hooks) for m in model.modules()))

# 6. Hooks as a context manager
torch.manual_seed(4)
model = get_model()
with Hooks([m for m in model if isinstance(m, nn.Sequential)], append_stats) as hooks:
    model(xb)
    model(xb)
    print(
        "ctx hooks",
        len(hooks),
        [len(h.stats[0]) for h in hooks],
        [round(float(h.stats[1][-1]), 4) for h in hooks],
    )
    del hooks[0]
    print("after del", len(hooks), sum(len(m._forward_hooks) for m in model.modules()))
print("after exit", sum(len(m._forward_hooks) for m in model.modules()))

# 7. LSUV init on every conv / GeneralRelu pair
torch.manual_seed(5)
model = get_model(partial(GeneralRelu, leak=0.1, sub=0.4))
relus = [o for o in model.modules() if isinstance(o, GeneralRelu)]
convs = [o for o in model.modules() if isinstance(o, nn.Conv2d)]
for ms in zip(relus, convs):
    n = lsuv_init(model, *ms, xb)
    h = Hook(ms[0], _lsuv_stats)
    with torch.no_grad():
        model(xb)
    h.remove()
    print(
        "lsuv",
        tuple(ms[1].weight.shape),
        "iters",
        n,
        "act mean %.4f std %.4f" % (h.mean, h.std),
        "w std %.4f bias mean %.4f" % (ms[1].weight.std().item(), ms[1].bias.mean().item()),
    )
learn = MomentumLearner(
    model, dls, F.cross_entropy, lr=0.1, cbs=[DeviceCB(), MetricsCB(accuracy=MulticlassAccuracy())]
)
learn.fit(1)

# 8. from-scratch LayerNorm in the conv blocks
torch.manual_seed(6)
model = get_model(partial(GeneralRelu, leak=0.1, sub=0.4), norm=LayerNorm)
model.apply(partial(init_weights, leaky=0.1))
print("layernorm params", [(n, tuple(p.shape)) for n, p in model.named_parameters()][:4])
learn = MomentumLearner(
    model, dls, F.cross_entropy, lr=0.1, cbs=[DeviceCB(), MetricsCB(accuracy=MulticlassAccuracy())]
)
learn.fit(2)
print(
    "ln mult/add",
    [round(p.item(), 4) for n, p in model.named_parameters() if n.endswith(("mult", "add"))],
)
