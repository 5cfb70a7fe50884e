"""Schedule-free AdamW, shrunk from facebookresearch/schedule_free
(schedulefree/adamw_schedulefree.py: AdamWScheduleFree with the y/z/x interpolation, the
foreach path with torch._foreach_mul_/addcmul_/div/sqrt_/add_/div_/lerp_/sub_ and the
per-parameter path, linear warmup, weight_lr_power and the r weighting, optimizer.train() /
optimizer.eval() switching the parameters between y and x, the "not in train mode" error), plus
the README's BatchNorm recipe (recompute running statistics in eval mode of the optimizer with
a few forward passes in model.train()), on a tiny MLP with synthetic regression data."""
# ruff: noqa: E501  (upstream's own line lengths, kept)
import importlib
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")


class AdamWScheduleFree(torch.optim.Optimizer):
    r"""
    Schedule-Free AdamW
    As the name suggests, no scheduler is needed with this optimizer.
    To add warmup, rather than using a learning rate schedule you can just
    set the warmup_steps parameter.

    This optimizer requires that .train() and .eval() be called before the
    beginning of training and evaluation respectively. The optimizer should
    also be placed in eval mode when saving checkpoints.
    """
    def __init__(self,
                 params,
                 lr=0.0025,
                 betas=(0.9, 0.999),
                 eps=1e-8,
                 weight_decay=0,
                 warmup_steps=0,
                 r=0.0,
                 weight_lr_power=2.0,
                 foreach=hasattr(torch, "_foreach_mul_")
                 ):

        defaults = dict(lr=lr,
                        betas=betas,
                        eps=eps,
                        r=r,
                        k=0,
                        warmup_steps=warmup_steps,
                        train_mode=False,
                        weight_sum=0.0,
                        lr_max=-1.0,
                        scheduled_lr=0.0,
                        weight_lr_power=weight_lr_power,
                        weight_decay=weight_decay,
                        foreach=foreach)
        super().__init__(params, defaults)

    @torch.no_grad()
    def eval(self):
        for group in self.param_groups:
            train_mode = group['train_mode']
            beta1, _ = group['betas']
            if train_mode:
                for p in group['params']:
                    state = self.state[p]
                    if 'z' in state:
                        # Set p to x
                        p.lerp_(end=state['z'].to(p.device), weight=1 - 1 / beta1)
                group['train_mode'] = False

    @torch.no_grad()
    def train(self):
        for group in self.param_groups:
            train_mode = group['train_mode']
            beta1, _ = group['betas']
            if not train_mode:
                for p in group['params']:
                    state = self.state[p]
                    if 'z' in state:
                        # Set p to y
                        p.lerp_(end=state['z'].to(p.device), weight=1 - beta1)
                group['train_mode'] = True

    @torch.no_grad()
    def step(self, closure=None):
        """Performs a single optimization step.

        Arguments:
            closure (callable, optional): A closure that reevaluates the model
                and returns the loss.
        """
        if not self.param_groups[0]['train_mode']:
            raise Exception("Optimizer was not in train mode when step is called. "
                            "Please insert .train() and .eval() calls on the "
                            "optimizer. See documentation for details.")

        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()

        for group in self.param_groups:
            eps = group['eps']
            beta1, beta2 = group['betas']
            decay = group['weight_decay']
            k = group['k']
            r = group['r']
            warmup_steps = group['warmup_steps']
            weight_lr_power = group['weight_lr_power']

            if k < warmup_steps:
                sched = (k + 1) / warmup_steps
            else:
                sched = 1.0

            bias_correction2 = 1 - beta2 ** (k + 1)
            lr = group['lr'] * sched
            group['scheduled_lr'] = lr  # For logging purposes

            lr_max = group['lr_max'] = max(lr, group['lr_max'])

            weight = ((k + 1)**r) * (lr_max**weight_lr_power)
            weight_sum = group['weight_sum'] = group['weight_sum'] + weight

            try:
                ckp1 = weight / weight_sum
            except ZeroDivisionError:
                ckp1 = 0

            active_p = [p for p in group['params'] if p.grad is not None]

            for p in active_p:
                if 'z' not in self.state[p]:
                    self.state[p]['z'] = torch.clone(p, memory_format=torch.preserve_format)
                    self.state[p]['exp_avg_sq'] = torch.zeros_like(p, memory_format=torch.preserve_format)

            if group['foreach'] and len(active_p) > 0:
                y, grad, exp_avg_sq, z = zip(*[(p,
                                                p.grad,
                                                self.state[p]['exp_avg_sq'],
                                                self.state[p]['z'])
                                               for p in active_p])

                # Decay the first and second moment running average coefficient
                torch._foreach_mul_(exp_avg_sq, beta2)
                torch._foreach_addcmul_(exp_avg_sq, grad, grad, value=1 - beta2)
                denom = torch._foreach_div(exp_avg_sq, bias_correction2)
                torch._foreach_sqrt_(denom)
                torch._foreach_add_(denom, eps)

                # Normalize grad in-place for memory efficiency
                torch._foreach_div_(grad, denom)

                # Weight decay calculated at y
                if decay != 0:
                    torch._foreach_add_(grad, y, alpha=decay)

                # These operations update y in-place,
                # without computing x explicitly.
                torch._foreach_lerp_(y, z, weight=ckp1)
                torch._foreach_add_(y, grad, alpha=lr * (beta1 * (1 - ckp1) - 1))

                # z step
                torch._foreach_sub_(z, grad, alpha=lr)
            else:
                for p in active_p:
                    y = p.data  # Notation to match theory
                    grad = p.grad.data

                    state = self.state[p]

                    z = state['z']
                    exp_avg_sq = state['exp_avg_sq']

                    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                    denom = exp_avg_sq.div(bias_correction2).sqrt_().add_(eps)

                    # Reuse grad buffer for memory efficiency
                    grad_normalized = grad.div_(denom)

                    # Weight decay calculated at y
                    if decay != 0:
                        grad_normalized.add_(y, alpha=decay)

                    # These operations update y in-place,
                    # without computing x explicitly.
                    y.lerp_(end=z, weight=ckp1)
                    y.add_(grad_normalized, alpha=lr * (beta1 * (1 - ckp1) - 1))

                    # z step
                    z.sub_(grad_normalized, alpha=lr)

            group['k'] = k + 1
        return loss


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 16, bias=False), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 1))


def run(foreach):
    model = make_model()
    g = torch.Generator().manual_seed(7)
    X = torch.randn(64, 5, generator=g)
    Y = (X[:, :1] * 2 - X[:, 1:2] ** 2 + 0.1 * torch.randn(64, 1, generator=g))
    Xv, Yv = X[:16], Y[:16]
    no_decay = [p for n, p in model.named_parameters() if p.ndim < 2]
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2]
    optimizer = AdamWScheduleFree([{"params": decay, "weight_decay": 0.01},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=0.02, warmup_steps=3, r=0.5, foreach=foreach)
    try:
        optimizer.step()
    except Exception as e:
        print(type(e).__name__, e)
    for epoch in range(3):
        model.train()
        optimizer.train()
        for i in range(0, 64, 16):
            loss = F.mse_loss(model(X[i:i + 16]), Y[i:i + 16])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        g0 = optimizer.param_groups[0]
        print("epoch %d train loss %.5f k=%d sched_lr=%.5f lr_max=%.4f weight_sum=%.6f" % (
            epoch, loss.item(), g0["k"], g0["scheduled_lr"], g0["lr_max"], g0["weight_sum"]))
        model.eval()
        optimizer.eval()
        with torch.no_grad():
            print("  eval loss at x %.5f" % F.mse_loss(model(Xv), Yv).item())
    # BatchNorm: recompute the running statistics at x (the README's recipe)
    model.train()
    optimizer.eval()
    with torch.no_grad():
        for i in range(0, 64, 16):
            model(X[i:i + 16])
    model.eval()
    bn = model[1]
    print("bn running_mean %.5f running_var %.5f tracked %d" % (
        bn.running_mean.norm().item(), bn.running_var.norm().item(), bn.num_batches_tracked.item()))
    with torch.no_grad():
        print("eval loss after BN recompute %.5f" % F.mse_loss(model(Xv), Yv).item())
    for n, p in model.named_parameters():
        st = optimizer.state[p]
        print(n, sorted(st), tuple(st["z"].shape), "x=%.5f z=%.5f v=%.7f" % (
            p.norm().item(), st["z"].norm().item(), st["exp_avg_sq"].sum().item()))
    # back to y, train/eval are idempotent
    optimizer.train()
    optimizer.train()
    print("y norm", "%.5f" % model[0].weight.norm().item(),
          [g["train_mode"] for g in optimizer.param_groups])
    sd = optimizer.state_dict()
    print(sorted(sd["param_groups"][0]))


run(foreach=True)
run(foreach=False)
