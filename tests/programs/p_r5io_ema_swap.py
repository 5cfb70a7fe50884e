"""EMA weights saved, swapped in for evaluation and restored, shrunk from two real libraries:
``torch_ema.ExponentialMovingAverage`` (shadow_params updated with ``sub_`` of
``(1 - decay) * (s - p)`` and num_updates warm-up, ``store`` / ``copy_to`` / ``restore``, its
``state_dict`` / ``load_state_dict`` with the checks it makes) and timm's ``ModelEmaV2``
(a deepcopy'd module updated with ``lerp_`` under no_grad, ``set``), checkpointed with
torch.save into a dict holding the model, the EMA and the optimizer, then loaded into fresh
objects; BatchNorm buffers follow the EMA copy."""
import copy
import importlib
import io
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


class ExponentialMovingAverage:
    """torch_ema.ExponentialMovingAverage (use_num_updates=True)."""

    def __init__(self, parameters, decay, use_num_updates=True):
        if decay < 0.0 or decay > 1.0:
            raise ValueError("Decay must be between 0 and 1")
        self.decay = decay
        self.num_updates = 0 if use_num_updates else None
        parameters = list(parameters)
        self.shadow_params = [p.clone().detach() for p in parameters if p.requires_grad]
        self.collected_params = None

    def update(self, parameters):
        decay = self.decay
        if self.num_updates is not None:
            self.num_updates += 1
            decay = min(decay, (1 + self.num_updates) / (10 + self.num_updates))
        one_minus_decay = 1.0 - decay
        with torch.no_grad():
            parameters = [p for p in parameters if p.requires_grad]
            for s_param, param in zip(self.shadow_params, parameters):
                tmp = s_param - param
                tmp.mul_(one_minus_decay)
                s_param.sub_(tmp)

    def copy_to(self, parameters):
        for s_param, param in zip(self.shadow_params, parameters):
            if param.requires_grad:
                param.data.copy_(s_param.data)

    def store(self, parameters):
        self.collected_params = [param.clone() for param in parameters if param.requires_grad]

    def restore(self, parameters):
        if self.collected_params is None:
            raise RuntimeError("This ExponentialMovingAverage has no `store()`ed weights "
                               "to `restore()`")
        for c_param, param in zip(self.collected_params, parameters):
            if param.requires_grad:
                param.data.copy_(c_param.data)

    def state_dict(self):
        return {"decay": self.decay, "num_updates": self.num_updates,
                "shadow_params": self.shadow_params, "collected_params": self.collected_params}

    def load_state_dict(self, state_dict):
        state_dict = copy.deepcopy(state_dict)
        self.decay = state_dict["decay"]
        if self.decay < 0.0 or self.decay > 1.0:
            raise ValueError("Decay must be between 0 and 1")
        self.num_updates = state_dict["num_updates"]
        assert self.num_updates is None or isinstance(self.num_updates, int), \
            "Invalid num_updates"
        self.shadow_params = state_dict["shadow_params"]
        assert isinstance(self.shadow_params, list), "shadow_params must be a list"
        assert all(isinstance(p, torch.Tensor) for p in self.shadow_params), \
            "shadow_params must all be Tensors"
        self.collected_params = state_dict["collected_params"]


class ModelEmaV2(nn.Module):
    """timm.utils.model_ema.ModelEmaV2."""

    def __init__(self, model, decay=0.9999):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.module.eval()
        self.decay = decay

    def _update(self, model, update_fn):
        with torch.no_grad():
            for ema_v, model_v in zip(self.module.state_dict().values(),
                                      model.state_dict().values()):
                ema_v.copy_(update_fn(ema_v, model_v))

    def update(self, model):
        self._update(model, update_fn=lambda e, m: self.decay * e + (1. - self.decay) * m)

    def set(self, model):
        self._update(model, update_fn=lambda e, m: m)


def make_net():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Linear(16, 3))


def evaluate(net, x, y):
    net.eval()
    with torch.no_grad():
        out = net(x)
    net.train()
    return round(float(F.cross_entropy(out, y)), 6), out.argmax(1).tolist()


torch.manual_seed(0)
x = torch.randn(12, 1, 6, 6)
y = torch.randint(0, 3, (12,))
xv = torch.randn(6, 1, 6, 6)
yv = torch.randint(0, 3, (6,))

model = make_net()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
ema = ExponentialMovingAverage(model.parameters(), decay=0.95)
timm_ema = ModelEmaV2(model, decay=0.9)
for step in range(8):
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    ema.update(model.parameters())
    timm_ema.update(model)
    print("step", step, round(float(loss), 6), ema.num_updates)

print("model eval", evaluate(model, xv, yv))
ema.store(model.parameters())
ema.copy_to(model.parameters())
print("ema eval", evaluate(model, xv, yv))
ema.restore(model.parameters())
print("restored eval", evaluate(model, xv, yv))
print("timm ema eval", evaluate(timm_ema.module, xv, yv))
print("timm bn running_mean", [round(v, 5) for v in timm_ema.module[1].running_mean.tolist()])
print("timm bn batches", int(timm_ema.module[1].num_batches_tracked))

buf = io.BytesIO()
torch.save({"model": model.state_dict(), "ema": ema.state_dict(),
            "model_ema": timm_ema.state_dict(), "optimizer": opt.state_dict()}, buf)
buf.seek(0)
ckpt = torch.load(buf, weights_only=True)
print("keys", sorted(ckpt), sorted(ckpt["ema"]), list(ckpt["model_ema"])[:3])
print("shadow", len(ckpt["ema"]["shadow_params"]), [tuple(p.shape) for p in
                                                     ckpt["ema"]["shadow_params"][:2]],
      ckpt["ema"]["num_updates"], ckpt["ema"]["decay"])
print("collected saved", len(ckpt["ema"]["collected_params"]),
      ckpt["ema"]["collected_params"][0].requires_grad)

torch.manual_seed(1)
fresh = make_net()
fresh.load_state_dict(ckpt["model"])
fresh_ema = ExponentialMovingAverage(fresh.parameters(), decay=0.5)
fresh_ema.load_state_dict(ckpt["ema"])
fresh_timm = ModelEmaV2(fresh, decay=0.9)
fresh_timm.load_state_dict(ckpt["model_ema"])
fresh_opt = torch.optim.SGD(fresh.parameters(), lr=0.1, momentum=0.9, nesterov=True)
fresh_opt.load_state_dict(ckpt["optimizer"])
print("fresh eval", evaluate(fresh, xv, yv), "timm", evaluate(fresh_timm.module, xv, yv))
fresh_ema.store(fresh.parameters())
fresh_ema.copy_to(fresh.parameters())
print("fresh ema eval", evaluate(fresh, xv, yv))
fresh_ema.restore(fresh.parameters())

# Both continue for 3 steps from the checkpoint and agree.
for net, o, e in ((model, opt, ema), (fresh, fresh_opt, fresh_ema)):
    for _ in range(3):
        loss = F.cross_entropy(net(x), y)
        o.zero_grad()
        loss.backward()
        o.step()
        e.update(net.parameters())
    print("continued", round(float(loss), 6),
          round(float(sum(s.sum() for s in e.shadow_params)), 5))

bad = dict(ckpt["ema"], decay=1.5)
try:
    fresh_ema.load_state_dict(bad)
except ValueError as err:
    print("ValueError", err)
timm_ema.set(model)
print("set equal", all(torch.equal(a, b) for a, b in zip(timm_ema.module.state_dict().values(),
                                                         model.state_dict().values())))
