"""timm's ModelEmaV3, shrunk from huggingface/pytorch-image-models (timm/utils/model_ema.py):
decay warm-up (``get_decay`` with update_after_step, warmup_gamma/power, min_decay), the foreach
path over state_dict values (``torch._foreach_lerp_`` and the ``_foreach_mul_`` +
``_foreach_add_`` fallback), exclude_buffers (parameters lerped, buffers copied), the per-tensor
path, ``set`` and forward, driven by a train loop in the style of timm's train.py
(``model_ema.update(model, step=num_updates)`` after each optimizer step) on a tiny CNN with
BatchNorm and synthetic data, and the EMA model evaluated."""
# ruff: noqa: E501  (upstream's own line lengths, kept)
import importlib
import os
from copy import deepcopy

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")


class ModelEmaV3(nn.Module):
    """ Model Exponential Moving Average V3

    Keep a moving average of everything in the model state_dict (parameters and buffers).
    V3 of this module leverages for_each and in-place operations for faster performance.
    """
    def __init__(
            self,
            model,
            decay: float = 0.9999,
            min_decay: float = 0.0,
            update_after_step: int = 0,
            use_warmup: bool = False,
            warmup_gamma: float = 1.0,
            warmup_power: float = 2 / 3,
            device=None,
            foreach: bool = True,
            exclude_buffers: bool = False,
            use_lerp: bool = True,
    ):
        super().__init__()
        # make a copy of the model for accumulating moving average of weights
        self.module = deepcopy(model)
        self.module.eval()
        self.decay = decay
        self.min_decay = min_decay
        self.update_after_step = update_after_step
        self.use_warmup = use_warmup
        self.warmup_gamma = warmup_gamma
        self.warmup_power = warmup_power
        self.foreach = foreach
        self.device = device  # perform ema on different device from model if set
        self.exclude_buffers = exclude_buffers
        self.use_lerp = use_lerp and hasattr(torch, '_foreach_lerp_')
        if self.device is not None and device != next(model.parameters()).device:
            self.foreach = False  # cannot use foreach methods with different devices
            self.module.to(device=device)

    def get_decay(self, step=None) -> float:
        """
        Compute the decay factor for the exponential moving average.
        """
        if step is None:
            return self.decay

        step = max(0, step - self.update_after_step - 1)
        if step <= 0:
            return 0.0

        if self.use_warmup:
            decay = 1 - (1 + step / self.warmup_gamma) ** -self.warmup_power
            decay = max(min(decay, self.decay), self.min_decay)
        else:
            decay = self.decay

        return decay

    @torch.no_grad()
    def update(self, model, step=None):
        decay = self.get_decay(step)
        if self.exclude_buffers:
            self.apply_update_no_buffers_(model, decay)
        else:
            self.apply_update_(model, decay)

    def apply_update_(self, model, decay: float):
        # interpolate parameters and buffers
        if self.foreach:
            ema_lerp_values = []
            model_lerp_values = []
            for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
                if ema_v.is_floating_point():
                    ema_lerp_values.append(ema_v)
                    model_lerp_values.append(model_v)
                else:
                    ema_v.copy_(model_v)

            if self.use_lerp:
                torch._foreach_lerp_(ema_lerp_values, model_lerp_values, weight=1. - decay)
            else:
                torch._foreach_mul_(ema_lerp_values, scalar=decay)
                torch._foreach_add_(ema_lerp_values, model_lerp_values, alpha=1. - decay)
        else:
            for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
                if ema_v.is_floating_point():
                    ema_v.lerp_(model_v.to(device=self.device), weight=1. - decay)
                else:
                    ema_v.copy_(model_v.to(device=self.device))

    def apply_update_no_buffers_(self, model, decay: float):
        # interpolate parameters, copy buffers
        ema_params = tuple(self.module.parameters())
        model_params = tuple(model.parameters())
        if self.foreach:
            if self.use_lerp:
                torch._foreach_lerp_(ema_params, model_params, weight=1. - decay)
            else:
                torch._foreach_mul_(ema_params, scalar=decay)
                torch._foreach_add_(ema_params, model_params, alpha=1 - decay)
        else:
            for ema_p, model_p in zip(ema_params, model_params):
                ema_p.lerp_(model_p.to(device=self.device), weight=1. - decay)

        for ema_b, model_b in zip(self.module.buffers(), model.buffers()):
            ema_b.detach().copy_(model_b.to(device=self.device))

    @torch.no_grad()
    def set(self, model):
        for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
            ema_v.copy_(model_v.to(device=self.device))

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)


class TinyCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 4 * 4, 3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.fc(x.flatten(1))


def train(**ema_kwargs):
    torch.manual_seed(0)
    model = TinyCNN()
    model_ema = ModelEmaV3(model, **ema_kwargs)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(24, 1, 8, 8, generator=g)
    y = torch.randint(0, 3, (24,), generator=g)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    num_updates = 0
    for epoch in range(2):
        model.train()
        for i in range(0, 24, 8):
            loss = F.cross_entropy(model(x[i:i + 8]), y[i:i + 8])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            num_updates += 1
            model_ema.update(model, step=num_updates)
        decay = model_ema.get_decay(num_updates)
        with torch.no_grad():
            ema_loss = F.cross_entropy(model_ema(x), y)
            model.eval()
            loss = F.cross_entropy(model(x), y)
        print("epoch %d decay %.6f loss %.5f ema loss %.5f" % (epoch, decay, loss.item(), ema_loss.item()))
    sd = model_ema.module.state_dict()
    print(" ".join("%s=%.5f" % (k, v.float().norm().item()) for k, v in sd.items()))
    print("ema in eval mode:", not model_ema.module.training, "tracked", sd["bn.num_batches_tracked"].item())
    return model, model_ema


print([round(ModelEmaV3(nn.Linear(1, 1), decay=0.999, use_warmup=True, update_after_step=2,
                        min_decay=0.5).get_decay(s), 6) for s in [None, 0, 1, 3, 4, 10, 100, 10 ** 6]])
train(decay=0.9, use_warmup=True, warmup_gamma=1.0, warmup_power=0.75)
train(decay=0.9, use_lerp=False)
train(decay=0.8, foreach=False)
model, ema = train(decay=0.8, exclude_buffers=True)
ema.set(model)
print("after set equal:", all(torch.equal(a, b) for a, b in zip(ema.state_dict().values(),
                                                                 model.state_dict().values())))
print(sorted(ema.state_dict())[:3])
