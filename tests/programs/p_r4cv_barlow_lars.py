"""Barlow Twins (facebookresearch/barlowtwins main.py), shrunk: the projector built from an
'8192-8192-8192'-style string, BatchNorm1d(affine=False) cross-correlation, off_diagonal via
flatten/view, in-place diagonal().add_(-1).pow_(2), the LARS optimizer with
exclude_bias_and_norm and torch.where trust ratio, the param_weights/param_biases groups,
and adjust_learning_rate's warmup + cosine schedule."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
optim = torch.optim


class Args:
    projector = "16-16-16"
    batch_size = 8
    epochs = 3
    learning_rate_weights = 0.2
    learning_rate_biases = 0.0048
    weight_decay = 1e-6
    lambd = 0.0051


args = Args()


def off_diagonal(x):
    # return a flattened view of the off-diagonal elements of a square matrix
    n, m = x.shape
    assert n == m
    return x.flatten()[:-1].view(n - 1, n + 1)[:, 1:].flatten()


class BarlowTwins(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.backbone.fc = nn.Identity()
        sizes = [8] + list(map(int, args.projector.split('-')))
        layers = []
        for i in range(len(sizes) - 2):
            layers.append(nn.Linear(sizes[i], sizes[i + 1], bias=False))
            layers.append(nn.BatchNorm1d(sizes[i + 1]))
            layers.append(nn.ReLU(inplace=True))
        layers.append(nn.Linear(sizes[-2], sizes[-1], bias=False))
        self.projector = nn.Sequential(*layers)
        self.bn = nn.BatchNorm1d(sizes[-1], affine=False)

    def forward(self, y1, y2):
        z1 = self.projector(self.backbone(y1))
        z2 = self.projector(self.backbone(y2))
        c = self.bn(z1).T @ self.bn(z2)
        c.div_(self.args.batch_size)
        on_diag = torch.diagonal(c).add_(-1).pow_(2).sum()
        off_diag = off_diagonal(c).pow_(2).sum()
        loss = on_diag + self.args.lambd * off_diag
        return loss


class LARS(optim.Optimizer):
    def __init__(self, params, lr, weight_decay=0, momentum=0.9, eta=0.001,
                 weight_decay_filter=False, lars_adaptation_filter=False):
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum,
                        eta=eta, weight_decay_filter=weight_decay_filter,
                        lars_adaptation_filter=lars_adaptation_filter)
        super().__init__(params, defaults)

    def exclude_bias_and_norm(self, p):
        return p.ndim == 1

    @torch.no_grad()
    def step(self):
        for g in self.param_groups:
            for p in g['params']:
                dp = p.grad
                if dp is None:
                    continue
                if not g['weight_decay_filter'] or not self.exclude_bias_and_norm(p):
                    dp = dp.add(p, alpha=g['weight_decay'])
                if not g['lars_adaptation_filter'] or not self.exclude_bias_and_norm(p):
                    param_norm = torch.norm(p)
                    update_norm = torch.norm(dp)
                    one = torch.ones_like(param_norm)
                    q = torch.where(param_norm > 0.,
                                    torch.where(update_norm > 0,
                                                (g['eta'] * param_norm / update_norm), one), one)
                    dp = dp.mul(q)
                param_state = self.state[p]
                if 'mu' not in param_state:
                    param_state['mu'] = torch.zeros_like(p)
                mu = param_state['mu']
                mu.mul_(g['momentum']).add_(dp)
                p.add_(mu, alpha=-g['lr'])


def adjust_learning_rate(args, optimizer, loader_len, step):
    max_steps = args.epochs * loader_len
    warmup_steps = 2 * loader_len
    base_lr = args.batch_size / 256
    if step < warmup_steps:
        lr = base_lr * step / warmup_steps
    else:
        step -= warmup_steps
        max_steps -= warmup_steps
        q = 0.5 * (1 + math.cos(math.pi * step / max_steps))
        end_lr = base_lr * 0.001
        lr = base_lr * q + end_lr * (1 - q)
    optimizer.param_groups[0]['lr'] = lr * args.learning_rate_weights
    optimizer.param_groups[1]['lr'] = lr * args.learning_rate_biases


torch.manual_seed(0)
m = torch.arange(16.).view(4, 4)
print(off_diagonal(m))
print(off_diagonal(m).shape, off_diagonal(m)._base is None)
model = BarlowTwins(args)
print(model)
param_weights = []
param_biases = []
for param in model.parameters():
    if param.ndim == 1:
        param_biases.append(param)
    else:
        param_weights.append(param)
parameters = [{'params': param_weights}, {'params': param_biases}]
optimizer = LARS(parameters, lr=0, weight_decay=args.weight_decay,
                 weight_decay_filter=True, lars_adaptation_filter=True)
print(len(param_weights), len(param_biases), optimizer.defaults)
print(optimizer.state_dict()["param_groups"][1])
data = torch.rand(16, 3, 6, 6)
loader = [(data[i:i + 8], data[i:i + 8].flip(-1) * 0.9 + 0.05) for i in range(0, 16, 8)]
for epoch in range(args.epochs):
    for step, (y1, y2) in enumerate(loader, start=epoch * len(loader)):
        adjust_learning_rate(args, optimizer, len(loader), step)
        optimizer.zero_grad()
        loss = model.forward(y1, y2)
        loss.backward()
        optimizer.step()
        print(f"epoch={epoch} step={step} lr_weights={optimizer.param_groups[0]['lr']:.6f} "
              f"lr_biases={optimizer.param_groups[1]['lr']:.8f} loss={loss.item():.4f}")
state = dict(epoch=epoch + 1, model=model.state_dict(), optimizer=optimizer.state_dict())
print(list(state['model'].keys()))
print(sorted(state['optimizer']['state'].keys()), list(state['optimizer']['state'][0].keys()))
print(model.bn.running_var[:4], model.bn.weight)
c = torch.randn(4, 4, requires_grad=True)
y = c * 1
d = torch.diagonal(y)
print(d.grad_fn, d._base is y)
z = d.add_(-1).pow_(2).sum()
print(y.grad_fn, z.grad_fn)
z.backward()
print(c.grad)
print("RESULT: barlow", f"{loss.item():.4f}")
