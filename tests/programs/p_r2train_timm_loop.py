"""timm's train.py loop written out: param_groups_weight_decay (no decay for biases and norm
weights), gradient accumulation with loss scaling, dispatch_clip_grad in its three modes
("norm", "value", "agc" adaptive gradient clipping with unitwise_norm), ModelEmaV2 (deepcopy,
decay warm-up) evaluated next to the model, AverageMeter, and get_total_norm /
clip_grads_with_norm_ / error_if_nonfinite from torch.nn.utils."""
import importlib
import os
from copy import deepcopy

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")


def param_groups_weight_decay(model, weight_decay=1e-5, no_weight_decay_list=()):
    no_weight_decay_list = set(no_weight_decay_list)
    decay = []
    no_decay = []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        if param.ndim <= 1 or name.endswith(".bias") or name in no_weight_decay_list:
            no_decay.append(param)
        else:
            decay.append(param)
    return [
        {"params": no_decay, "weight_decay": 0.},
        {"params": decay, "weight_decay": weight_decay}]


def unitwise_norm(x, norm_type=2.0):
    if x.ndim <= 1:
        return x.norm(norm_type)
    else:
        return x.norm(norm_type, dim=tuple(range(1, x.ndim)), keepdim=True)


def adaptive_clip_grad(parameters, clip_factor=0.01, eps=1e-3, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    for p in parameters:
        if p.grad is None:
            continue
        p_data = p.detach()
        g_data = p.grad.detach()
        max_norm = unitwise_norm(p_data, norm_type=norm_type).clamp_(min=eps).mul_(clip_factor)
        grad_norm = unitwise_norm(g_data, norm_type=norm_type)
        clipped_grad = g_data * (max_norm / grad_norm.clamp(min=1e-6))
        new_grads = torch.where(grad_norm < max_norm, g_data, clipped_grad)
        p.grad.detach().copy_(new_grads)


def dispatch_clip_grad(parameters, value, mode="norm", norm_type=2.0):
    if mode == "norm":
        return torch.nn.utils.clip_grad_norm_(parameters, value, norm_type=norm_type)
    elif mode == "value":
        torch.nn.utils.clip_grad_value_(parameters, value)
    elif mode == "agc":
        adaptive_clip_grad(parameters, value, norm_type=norm_type)
    else:
        assert False, f"Unknown clip mode ({mode})."


class ModelEmaV2(nn.Module):
    def __init__(self, model, decay=0.9999, device=None):
        super().__init__()
        self.module = deepcopy(model)
        self.module.eval()
        self.decay = decay
        self.device = device
        if self.device is not None:
            self.module.to(device=device)

    def _update(self, model, update_fn):
        with torch.no_grad():
            for ema_v, model_v in zip(self.module.state_dict().values(),
                                      model.state_dict().values()):
                if self.device is not None:
                    model_v = model_v.to(device=self.device)
                ema_v.copy_(update_fn(ema_v, model_v))

    def update(self, model, step=None):
        decay = self.decay if step is None else min(self.decay, (1 + step) / (10 + step))
        self._update(model, update_fn=lambda e, m: decay * e + (1. - decay) * m)
        return decay

    def set(self, model):
        self._update(model, update_fn=lambda e, m: m)


class AverageMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def make_model():
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8),
                         nn.SiLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.0),
                         nn.Linear(8, 5))


torch.manual_seed(0)
X = torch.randn(48, 3, 6, 6)
Y = torch.randint(0, 5, (48,))
loader = [(X[i:i + 8], Y[i:i + 8]) for i in range(0, 48, 8)]

for clip_mode, clip_value in [("norm", 0.5), ("value", 0.05), ("agc", 0.02)]:
    torch.manual_seed(1)
    model = make_model()
    groups = param_groups_weight_decay(model, weight_decay=0.05)
    print(clip_mode, [len(g["params"]) for g in groups], [g["weight_decay"] for g in groups])
    optimizer = torch.optim.AdamW(groups, lr=0.01, betas=(0.9, 0.999))
    model_ema = ModelEmaV2(model, decay=0.99)
    losses_m = AverageMeter()
    accum_steps = 2
    num_updates = 0
    optimizer.zero_grad()
    for batch_idx, (input, target) in enumerate(loader):
        need_update = (batch_idx + 1) % accum_steps == 0
        output = model(input)
        loss = F.cross_entropy(output, target, label_smoothing=0.1)
        losses_m.update(loss.item(), input.size(0))
        (loss / accum_steps).backward()
        if not need_update:
            continue
        total = torch.nn.utils.get_total_norm([p.grad for p in model.parameters()])
        ret = dispatch_clip_grad(model.parameters(), value=clip_value, mode=clip_mode)
        after = torch.nn.utils.get_total_norm([p.grad for p in model.parameters()])
        optimizer.step()
        optimizer.zero_grad()
        num_updates += 1
        decay = model_ema.update(model, step=num_updates)
        print(f"  update {num_updates} loss {losses_m.val:.4f} ({losses_m.avg:.4f}) "
              f"grad {total.item():.4f} -> {after.item():.4f} ret "
              f"{'None' if ret is None else format(ret.item(), '.4f')} ema_decay {decay:.4f}")
    model.eval()
    with torch.no_grad():
        acc = (model(X).argmax(1) == Y).float().mean().item()
        ema_logits = model_ema.module(X)
        ema_acc = (ema_logits.argmax(1) == Y).float().mean().item()
    print(f"  acc {acc:.4f} ema_acc {ema_acc:.4f}",
          f"{model_ema.module[1].running_mean[:3].tolist()}",
          model_ema.module[1].num_batches_tracked.item(), model_ema.module.training)
    print(" ", sorted(optimizer.state_dict()["state"][0].keys()),
          optimizer.param_groups[1]["weight_decay"])

# the clip_grad_norm_ details: returned norm, norm types, non-finite gradients
torch.manual_seed(2)
p1 = nn.Parameter(torch.randn(3, 4))
p2 = nn.Parameter(torch.randn(5))
p3 = nn.Parameter(torch.randn(2))      # no gradient: ignored
(p1.pow(3).sum() + (p2 * 4).sum()).backward()
g1, g2 = p1.grad.clone(), p2.grad.clone()
for norm_type in [2.0, 1, "inf", float("inf"), 3.5]:
    p1.grad.copy_(g1)
    p2.grad.copy_(g2)
    n = torch.nn.utils.clip_grad_norm_([p1, p2, p3], max_norm=1.0, norm_type=norm_type)
    print(norm_type, f"{n.item():.4f}", n.dtype, n.shape,
          f"{torch.nn.utils.get_total_norm([p1.grad, p2.grad], norm_type).item():.4f}")
p1.grad.copy_(g1)
total = torch.nn.utils.get_total_norm([p1.grad, p2.grad])
torch.nn.utils.clip_grads_with_norm_([p1, p2], max_norm=2.0, total_norm=total)
print(f"{total.item():.4f}", f"{torch.cat([p1.grad.flatten(), p2.grad]).norm().item():.4f}")
print(torch.nn.utils.clip_grad_value_(p1, clip_value=0.5), p1.grad.abs().max().item())
print(torch.nn.utils.clip_grad_norm_([p3], 1.0), torch.nn.utils.get_total_norm([]))
p2.grad[0] = float("nan")
try:
    torch.nn.utils.clip_grad_norm_([p1, p2], 1.0, error_if_nonfinite=True)
except RuntimeError as e:
    print(type(e).__name__, e)
print(torch.nn.utils.clip_grad_norm_([p1, p2], 1.0), p1.grad.isnan().all().item())
p2.grad[0] = float("inf")
print(torch.nn.utils.clip_grad_norm_(p2, 1.0, norm_type="inf"))
print("RESULT:", f"{losses_m.avg:.4f}", f"{ema_acc:.4f}")
