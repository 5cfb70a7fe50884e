"""Optimizers written as torch.optim.Optimizer subclasses, as timm and their authors' repos ship
them (shrunk): lucidrains' lion-pytorch Lion (update_fn with lerp_/sign_), timm's Lamb (trust
ratio with torch.where, global grad-norm clipping), AdaBelief (juntang-zhuang/Adabelief-Optimizer,
rectify=False, weight_decouple), and timm's Adan (no_prox), plus __setstate__, the repr of a
custom optimizer, param_groups defaults, add_param_group and a state_dict round trip."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
Optimizer = torch.optim.Optimizer


def exists(val):
    return val is not None


def update_fn(p, grad, exp_avg, lr, wd, beta1, beta2):
    # stepweight decay
    p.data.mul_(1.0 - lr * wd)
    # weight update
    update = exp_avg.clone().mul_(beta1).add(grad, alpha=1.0 - beta1).sign_()
    p.add_(update, alpha=-lr)
    # decay the momentum running average coefficient
    exp_avg.mul_(beta2).add_(grad, alpha=1.0 - beta2)


class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        assert lr > 0.0
        assert all([0.0 <= beta <= 1.0 for beta in betas])
        defaults = dict(lr=lr, betas=betas, weight_decay=weight_decay)
        super().__init__(params, defaults)
        self.update_fn = update_fn

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if exists(closure):
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in filter(lambda p: exists(p.grad), group["params"]):
                grad, lr, wd, beta1, beta2, state = (p.grad, group["lr"], group["weight_decay"],
                                                     *group["betas"], self.state[p])
                # init state - exponential moving average of gradient values
                if len(state) == 0:
                    state["exp_avg"] = torch.zeros_like(p)
                exp_avg = state["exp_avg"]
                self.update_fn(p, grad, exp_avg, lr, wd, beta1, beta2)
        return loss


class Lamb(Optimizer):
    def __init__(self, params, lr=1e-3, bias_correction=True, betas=(0.9, 0.999), eps=1e-6,
                 weight_decay=0.01, grad_averaging=True, max_grad_norm=1.0, trust_clip=False,
                 always_adapt=False):
        defaults = dict(lr=lr, bias_correction=bias_correction, betas=betas, eps=eps,
                        weight_decay=weight_decay, grad_averaging=grad_averaging,
                        max_grad_norm=max_grad_norm, trust_clip=trust_clip,
                        always_adapt=always_adapt)
        super().__init__(params, defaults)

    def _get_clip_grad_norm(self):
        max_grad_norm = self.defaults["max_grad_norm"]
        if max_grad_norm is None:
            return None
        norms = []
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                if grad.is_sparse:
                    raise RuntimeError("Lamb does not support sparse gradients")
                norms.append(torch.linalg.vector_norm(grad))
        global_norm = torch.linalg.vector_norm(torch.stack(norms))
        clip_global_norm = (global_norm / max_grad_norm).clamp_(min=1.0)
        return clip_global_norm

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        clip_grad_norm = self._get_clip_grad_norm()  # None if disabled
        for group in self.param_groups:
            bias_correction = 1 if group["bias_correction"] else 0
            beta1, beta2 = group["betas"]
            grad_averaging = 1 if group["grad_averaging"] else 0
            beta3 = 1 - beta1 if grad_averaging else 1.0
            # assume same step across group now to simplify things
            if "step" in group:
                group["step"] += 1
            else:
                group["step"] = 1
            if bias_correction:
                bias_correction1 = 1 - beta1 ** group["step"]
                bias_correction2 = 1 - beta2 ** group["step"]
            else:
                bias_correction1, bias_correction2 = 1.0, 1.0
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                if clip_grad_norm is not None:
                    grad.div_(clip_grad_norm)
                state = self.state[p]
                if len(state) == 0:
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg.mul_(beta1).add_(grad, alpha=beta3)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                denom = (exp_avg_sq.sqrt() / math.sqrt(bias_correction2)).add_(group["eps"])
                update = (exp_avg / bias_correction1).div_(denom)
                weight_decay = group["weight_decay"]
                if weight_decay != 0:
                    update.add_(p, alpha=weight_decay)
                if weight_decay != 0 or group["always_adapt"]:
                    w_norm = p.norm(2.0)
                    g_norm = update.norm(2.0)
                    trust_ratio = w_norm / g_norm
                    trust_ratio = torch.where(w_norm > 0, torch.where(g_norm > 0, trust_ratio, 1.0),
                                              1.0)
                    if group["trust_clip"]:
                        trust_ratio = torch.clamp(trust_ratio, max=1.0)
                    update.mul_(trust_ratio)
                p.add_(update, alpha=-group["lr"])
        return loss


class AdaBelief(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-16, weight_decay=0,
                 amsgrad=False, weight_decouple=True, fixed_decay=False, rectify=False):
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError("Invalid beta parameter at index 0: {}".format(betas[0]))
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad)
        super(AdaBelief, self).__init__(params, defaults)
        self.weight_decouple = weight_decouple
        self.rectify = rectify
        self.fixed_decay = fixed_decay

    def __setstate__(self, state):
        super(AdaBelief, self).__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)

    def step(self, closure=None):
        loss = None
        if closure is not None:
            loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad.data
                amsgrad = group["amsgrad"]
                state = self.state[p]
                beta1, beta2 = group["betas"]
                if len(state) == 0:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p.data, memory_format=torch.preserve_format)
                    state["exp_avg_var"] = torch.zeros_like(p.data,
                                                            memory_format=torch.preserve_format)
                    if amsgrad:
                        state["max_exp_avg_var"] = torch.zeros_like(p.data)
                if self.weight_decouple:
                    if not self.fixed_decay:
                        p.data.mul_(1.0 - group["lr"] * group["weight_decay"])
                    else:
                        p.data.mul_(1.0 - group["weight_decay"])
                elif group["weight_decay"] != 0:
                    grad.add_(p.data, alpha=group["weight_decay"])
                exp_avg, exp_avg_var = state["exp_avg"], state["exp_avg_var"]
                state["step"] += 1
                bias_correction1 = 1 - beta1 ** state["step"]
                bias_correction2 = 1 - beta2 ** state["step"]
                exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
                grad_residual = grad - exp_avg
                exp_avg_var.mul_(beta2).addcmul_(grad_residual, grad_residual, value=1 - beta2)
                if amsgrad:
                    max_exp_avg_var = state["max_exp_avg_var"]
                    torch.max(max_exp_avg_var, exp_avg_var.add_(group["eps"]), out=max_exp_avg_var)
                    denom = (max_exp_avg_var.sqrt()
                             / math.sqrt(bias_correction2)).add_(group["eps"])
                else:
                    denom = (exp_avg_var.add_(group["eps"]).sqrt()
                             / math.sqrt(bias_correction2)).add_(group["eps"])
                step_size = group["lr"] / bias_correction1
                p.data.addcdiv_(exp_avg, denom, value=-step_size)
        return loss


class Adan(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.98, 0.92, 0.99), eps=1e-8, weight_decay=0.0,
                 no_prox=False):
        if not 0.0 <= betas[2] < 1.0:
            raise ValueError("Invalid beta parameter at index 2: {}".format(betas[2]))
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, no_prox=no_prox)
        super(Adan, self).__init__(params, defaults)

    @torch.no_grad()
    def restart_opt(self):
        for group in self.param_groups:
            group["step"] = 0
            for p in group["params"]:
                if p.requires_grad:
                    state = self.state[p]
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                    state["exp_avg_diff"] = torch.zeros_like(p)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2, beta3 = group["betas"]
            group["step"] = group.get("step", 0) + 1
            bias_correction1 = 1.0 - beta1 ** group["step"]
            bias_correction2 = 1.0 - beta2 ** group["step"]
            bias_correction3 = 1.0 - beta3 ** group["step"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                    state["exp_avg_diff"] = torch.zeros_like(p)
                    state["pre_grad"] = p.grad.clone()
                grad = p.grad
                diff = grad - state["pre_grad"]
                update = grad + beta2 * diff
                state["exp_avg"].mul_(beta1).add_(grad, alpha=1.0 - beta1)
                state["exp_avg_diff"].mul_(beta2).add_(diff, alpha=1.0 - beta2)
                state["exp_avg_sq"].mul_(beta3).addcmul_(update, update, value=1.0 - beta3)
                denom = (state["exp_avg_sq"].sqrt()
                         / math.sqrt(bias_correction3)).add_(group["eps"])
                upd = (state["exp_avg"] / bias_correction1
                       + beta2 * state["exp_avg_diff"] / bias_correction2).div_(denom)
                if group["no_prox"]:
                    p.data.mul_(1 - group["lr"] * group["weight_decay"])
                    p.add_(upd, alpha=-group["lr"])
                else:
                    p.add_(upd, alpha=-group["lr"])
                    p.data.div_(1 + group["lr"] * group["weight_decay"])
                state["pre_grad"].copy_(grad)
        return loss


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 2))


torch.manual_seed(1)
X = torch.randn(32, 5)
Y = torch.stack([X[:, 0] * X[:, 1], X[:, 2].sin() - X[:, 3]], 1)

for name, ctor in [
    ("Lion", lambda ps: Lion(ps, lr=3e-3, weight_decay=0.1)),
    ("Lamb", lambda ps: Lamb(ps, lr=1e-2, max_grad_norm=0.5)),
    ("Lamb-trustclip", lambda ps: Lamb(ps, lr=1e-2, trust_clip=True, bias_correction=False)),
    ("AdaBelief", lambda ps: AdaBelief(ps, lr=1e-2, weight_decay=1e-2)),
    ("AdaBelief-ams", lambda ps: AdaBelief(ps, lr=1e-2, amsgrad=True, weight_decouple=False,
                                           weight_decay=1e-3)),
    ("Adan", lambda ps: Adan(ps, lr=1e-2, weight_decay=0.02)),
    ("Adan-noprox", lambda ps: Adan(ps, lr=1e-2, weight_decay=0.02, no_prox=True)),
]:
    model = make_model()
    decay = [p for n, p in model.named_parameters() if p.ndim > 1]
    no_decay = [p for n, p in model.named_parameters() if p.ndim <= 1]
    opt = ctor([{"params": decay}, {"params": no_decay, "weight_decay": 0.0}])
    losses = []
    for it in range(12):
        def closure():
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(X), Y)
            loss.backward()
            return loss
        losses.append(opt.step(closure).item())
    print(name, ["%.5f" % v for v in losses[::3]], "%.5f" % losses[-1])
    print("  groups", len(opt.param_groups), sorted(opt.param_groups[1].keys()))
    print("  wd", [g["weight_decay"] for g in opt.param_groups], "step" in opt.param_groups[0])
    st = next(iter(opt.state.values()))
    print("  state", sorted(st.keys()),
          [(k, tuple(v.shape) if torch.is_tensor(v) else v) for k, v in sorted(st.items())][:2])
    print("  w0", model[0].weight[0, :3].tolist())
    sd = opt.state_dict()
    print("  sd", sorted(sd.keys()), [g["params"] for g in sd["param_groups"]], sorted(sd["state"]))

# repr of a custom optimizer and the defaults it was built with
model = make_model()
opt = Lion(model.parameters(), lr=1e-3)
print(opt)
print(opt.defaults)
opt.add_param_group({"params": [nn.Parameter(torch.ones(3))], "lr": 0.5})
print(len(opt.param_groups), opt.param_groups[1]["betas"], opt.param_groups[1]["lr"])
try:
    opt.add_param_group({"params": list(model[0].parameters())})
except Exception as e:
    print(type(e).__name__, e)
try:
    AdaBelief(model.parameters(), lr=-1.0)
except Exception as e:
    print(type(e).__name__, e)
try:
    Lion([], lr=1e-3)
except Exception as e:
    print(type(e).__name__, e)

# state_dict round trip continues identically; __setstate__ fills missing defaults
m1, m2 = make_model(), make_model()
o1 = AdaBelief(m1.parameters(), lr=1e-2)
for _ in range(3):
    o1.zero_grad()
    nn.functional.mse_loss(m1(X), Y).backward()
    o1.step()
m2.load_state_dict(m1.state_dict())
o2 = AdaBelief(m2.parameters(), lr=5.0)
o2.load_state_dict(o1.state_dict())
print("lr after load", o2.param_groups[0]["lr"], o2.state[list(m2.parameters())[0]]["step"])
for o, m in ((o1, m1), (o2, m2)):
    o.zero_grad()
    nn.functional.mse_loss(m(X), Y).backward()
    o.step()
print("same", all(torch.equal(a, b) for a, b in zip(m1.parameters(), m2.parameters())))
state = o1.__getstate__()
print(sorted(state.keys()))
del state["param_groups"][0]["amsgrad"]
o1.__setstate__(state)
print("amsgrad restored", o1.param_groups[0]["amsgrad"])
