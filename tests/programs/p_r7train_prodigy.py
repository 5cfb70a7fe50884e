"""Prodigy, the learning-rate-free Adam, shrunk from konstmish/prodigy (prodigyopt/prodigy.py):
the D-adaptation estimate d from ``d_numerator`` (dot products with the initial point p0,
``.item()`` sums) over ``d_denom`` (the |s| sums), beta3 defaulting to sqrt(beta2), optional
bias correction, decoupled or coupled weight decay, safeguard_warmup, growth_rate, slice_p
subsampling, groups with lr 0 and the different-lr error, used with the cosine annealing the
README recommends, on a tiny MLP with synthetic regression data."""
# ruff: noqa: E501  (upstream's own line lengths, kept)
import importlib
import math
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")


class Prodigy(torch.optim.Optimizer):
    r"""
    Implements Adam with Prodigy step-sizes.
    Leave LR set to 1 unless you encounter instability.
    """
    def __init__(self, params, lr=1.0,
                 betas=(0.9, 0.999), beta3=None,
                 eps=1e-8, weight_decay=0, decouple=True,
                 use_bias_correction=False, safeguard_warmup=False,
                 d0=1e-6, d_coef=1.0, growth_rate=float('inf'),
                 fsdp_in_use=False,
                 slice_p=1):
        if not 0.0 < d0:
            raise ValueError("Invalid d0 value: {}".format(d0))
        if not 0.0 < lr:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 < eps:
            raise ValueError("Invalid epsilon value: {}".format(eps))
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError("Invalid beta parameter at index 0: {}".format(betas[0]))
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError("Invalid beta parameter at index 1: {}".format(betas[1]))

        if decouple and weight_decay > 0:
            print("Using decoupled weight decay")

        defaults = dict(lr=lr, betas=betas, beta3=beta3,
                        eps=eps, weight_decay=weight_decay,
                        d=d0, d0=d0, d_max=d0,
                        d_numerator=0.0, d_coef=d_coef,
                        k=0, growth_rate=growth_rate,
                        use_bias_correction=use_bias_correction,
                        decouple=decouple, safeguard_warmup=safeguard_warmup,
                        fsdp_in_use=fsdp_in_use,
                        slice_p=slice_p)
        self.d0 = d0
        super().__init__(params, defaults)

    @property
    def supports_memory_efficient_fp16(self):
        return False

    @property
    def supports_flat_params(self):
        return True

    def step(self, closure=None):
        """Performs a single optimization step."""
        loss = None
        if closure is not None:
            loss = closure()

        d_denom = 0.0

        group = self.param_groups[0]
        use_bias_correction = group['use_bias_correction']
        beta1, beta2 = group['betas']
        beta3 = group['beta3']
        if beta3 is None:
            beta3 = math.sqrt(beta2)
        k = group['k']

        d = group['d']
        d_max = group['d_max']
        d_coef = group['d_coef']
        lr = max(group['lr'] for group in self.param_groups)

        if use_bias_correction:
            bias_correction = ((1 - beta2**(k + 1))**0.5) / (1 - beta1**(k + 1))
        else:
            bias_correction = 1

        dlr = d * lr * bias_correction

        growth_rate = group['growth_rate']
        decouple = group['decouple']
        fsdp_in_use = group['fsdp_in_use']

        d_numerator = group['d_numerator']
        d_numerator *= beta3

        for group in self.param_groups:
            decay = group['weight_decay']
            k = group['k']
            eps = group['eps']
            group_lr = group['lr']
            d0 = group['d0']
            safeguard_warmup = group['safeguard_warmup']
            slice_p = group['slice_p']

            if group_lr not in [lr, 0.0]:
                raise RuntimeError("Setting different lr values in different parameter groups is only supported for values of 0")

            for p in group['params']:
                if p.grad is None:
                    continue
                if hasattr(p, "_fsdp_flattened"):
                    fsdp_in_use = True

                grad = p.grad.data

                # Apply weight decay (coupled variant)
                if decay != 0 and not decouple:
                    grad.add_(p.data, alpha=decay)

                state = self.state[p]

                # State initialization
                if 'step' not in state:
                    state['step'] = 0
                    state['s'] = torch.zeros_like(p.data.flatten()[::slice_p]).detach()
                    if p.count_nonzero() > 0:
                        state['p0'] = p.flatten()[::slice_p].detach().clone()
                    else:
                        # All values are zero, so save VRAM with a zero-tensor
                        state['p0'] = torch.tensor(0, device=p.device, dtype=p.dtype)

                    # Exponential moving average of gradient values
                    if beta1 > 0:
                        state['exp_avg'] = torch.zeros_like(p.data).detach()
                    # Exponential moving average of squared gradient values
                    state['exp_avg_sq'] = torch.zeros_like(p.data).detach()

                exp_avg_sq = state['exp_avg_sq']

                s = state['s']
                p0 = state['p0']

                if group_lr > 0.0:
                    # we use d / d0 instead of just d to avoid getting values that are too small
                    sliced_grad = grad.flatten()[::slice_p]
                    d_numerator += (d / d0) * dlr * torch.dot(sliced_grad, p0.data - p.data.flatten()[::slice_p]).item()

                    # Adam EMA updates
                    if beta1 > 0:
                        exp_avg = state['exp_avg']
                        exp_avg.mul_(beta1).add_(grad, alpha=d * (1 - beta1))
                    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=d * d * (1 - beta2))

                    if safeguard_warmup:
                        s.mul_(beta3).add_(sliced_grad, alpha=((d / d0) * d))
                    else:
                        s.mul_(beta3).add_(sliced_grad, alpha=((d / d0) * dlr))
                    d_denom += s.abs().sum().item()

            ######

        d_hat = d

        # if we have not done any progres, return
        # if we have any gradients available, will have d_denom > 0 (unless \|g\|=0)
        if d_denom == 0:
            return loss

        if lr > 0.0:
            if fsdp_in_use:  # upstream all-reduces both sums here (not in this shrunk copy)
                raise RuntimeError("FSDP all_reduce is not part of this shrunk copy")
            global_d_numerator = d_numerator
            global_d_denom = d_denom

            d_hat = d_coef * global_d_numerator / global_d_denom
            if d == group['d0']:
                d = max(d, d_hat)
            d_max = max(d_max, d_hat)
            d = min(d_max, d * growth_rate)

        for group in self.param_groups:
            group['d_numerator'] = global_d_numerator
            group['d_denom'] = global_d_denom
            group['d'] = d
            group['d_max'] = d_max
            group['d_hat'] = d_hat

            decay = group['weight_decay']
            k = group['k']
            eps = group['eps']

            for p in group['params']:
                if p.grad is None:
                    continue
                grad = p.grad.data

                state = self.state[p]

                exp_avg_sq = state['exp_avg_sq']

                state['step'] += 1

                denom = exp_avg_sq.sqrt().add_(d * eps)

                # Apply weight decay (decoupled variant)
                if decay != 0 and decouple:
                    p.data.add_(p.data, alpha=-decay * dlr)

                # Take step
                if beta1 > 0:
                    exp_avg = state['exp_avg']
                    p.data.addcdiv_(exp_avg, denom, value=-dlr)
                else:
                    p.data.addcdiv_(grad, denom, value=-dlr * d)

            group['k'] = k + 1

        return loss


def run(steps=6, sched=True, zero_group=False, **kwargs):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
    nn.init.zeros_(model[2].bias)
    g = torch.Generator().manual_seed(3)
    x = torch.randn(32, 4, generator=g)
    y = torch.sin(x.sum(1, keepdim=True))
    if zero_group:
        params = [{"params": model[0].parameters()}, {"params": model[2].parameters(), "lr": 0.0}]
    else:
        params = model.parameters()
    opt = Prodigy(params, **kwargs)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps) if sched else None
    for step in range(steps):
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if scheduler is not None:
            scheduler.step()
        g0 = opt.param_groups[0]
        print("step %d loss %.6f d=%.6e d_hat=%.6e d_max=%.6e lr=%.5f" % (
            step, loss.item(), g0["d"], g0.get("d_hat", 0.0), g0["d_max"], g0["lr"]))
    st = opt.state[model[0].weight]
    print(sorted(st), st["step"], tuple(st["s"].shape), tuple(st["p0"].shape),
          "s=%.6e" % st["s"].abs().sum().item())
    st = opt.state[model[2].bias]
    print("zero-init bias p0:", st["p0"], tuple(st["exp_avg_sq"].shape))
    print("norms", " ".join("%.6f" % p.norm().item() for p in model.parameters()))


for kw in [dict(d0=0.0), dict(lr=-1.0), dict(eps=0.0), dict(betas=(1.0, 0.9))]:
    try:
        Prodigy([nn.Parameter(torch.ones(1))], **kw)
    except ValueError as e:
        print("ValueError:", e)
run()
run(weight_decay=0.01, use_bias_correction=True, safeguard_warmup=True, slice_p=3)
run(sched=False, weight_decay=0.01, decouple=False, betas=(0.0, 0.99), growth_rate=1.02, d_coef=0.5)
run(sched=False, zero_group=True, steps=3)
try:
    opt = Prodigy([{"params": [nn.Parameter(torch.ones(2))]},
                   {"params": [nn.Parameter(torch.ones(2))], "lr": 0.5}])
    for p in opt.param_groups:
        p["params"][0].grad = torch.ones(2)
    opt.step()
except RuntimeError as e:
    print("RuntimeError:", e)
