"""Optimizer wrappers from real repos, shrunk: davda54/sam's SAM (and ASAM, adaptive=True)
wrapping a base optimizer class and sharing its param_groups, with first_step/second_step and
the closure form; timm's Lookahead wrapping any optimizer (shared param_groups, slow weights in
state, state_dict/load_state_dict delegated, add_param_group); and gbaydin/hypergradient-descent's
SGDHD (the learning rate learned from the dot product of successive gradients), each trained on
a small classification problem."""
import importlib
import os
from collections import OrderedDict, defaultdict

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
Optimizer = torch.optim.Optimizer


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, adaptive=False, **kwargs):
        assert rho >= 0.0, f"Invalid rho, should be non-negative: {rho}"
        defaults = dict(rho=rho, adaptive=adaptive, **kwargs)
        super(SAM, self).__init__(params, defaults)
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)
        self.param_groups = self.base_optimizer.param_groups
        self.defaults.update(self.base_optimizer.defaults)

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        grad_norm = self._grad_norm()
        for group in self.param_groups:
            scale = group["rho"] / (grad_norm + 1e-12)
            for p in group["params"]:
                if p.grad is None:
                    continue
                self.state[p]["old_p"] = p.data.clone()
                e_w = (torch.pow(p, 2) if group["adaptive"] else 1.0) * p.grad * scale.to(p)
                p.add_(e_w)  # climb to the local maximum "w + e(w)"
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.data = self.state[p]["old_p"]  # get back to "w" from "w + e(w)"
        self.base_optimizer.step()  # do the actual "sharpness-aware" update
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def step(self, closure=None):
        assert closure is not None, \
            "Sharpness Aware Minimization requires closure, but it was not provided"
        closure = torch.enable_grad()(closure)
        self.first_step(zero_grad=True)
        closure()
        self.second_step()

    def _grad_norm(self):
        shared_device = self.param_groups[0]["params"][0].device
        norm = torch.norm(
            torch.stack([
                ((torch.abs(p) if group["adaptive"] else 1.0) * p.grad).norm(p=2).to(shared_device)
                for group in self.param_groups for p in group["params"]
                if p.grad is not None
            ]),
            p=2
        )
        return norm

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        self.base_optimizer.param_groups = self.param_groups


class Lookahead(Optimizer):
    def __init__(self, base_optimizer, alpha=0.5, k=6):
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"Invalid slow update rate: {alpha}")
        if not 1 <= k:
            raise ValueError(f"Invalid lookahead steps: {k}")
        defaults = dict(lookahead_alpha=alpha, lookahead_k=k, lookahead_step=0)
        self._base_optimizer = base_optimizer
        self.param_groups = base_optimizer.param_groups
        self.defaults = base_optimizer.defaults
        self.defaults.update(defaults)
        self.state = defaultdict(dict)
        # manually add our defaults to the param groups
        for name, default in defaults.items():
            for group in self._base_optimizer.param_groups:
                group.setdefault(name, default)
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()

    @torch.no_grad()
    def update_slow(self, group):
        for fast_p in group["params"]:
            if fast_p.grad is None:
                continue
            param_state = self._base_optimizer.state[fast_p]
            if "lookahead_slow_buff" not in param_state:
                param_state["lookahead_slow_buff"] = torch.empty_like(fast_p)
                param_state["lookahead_slow_buff"].copy_(fast_p)
            slow = param_state["lookahead_slow_buff"]
            slow.add_(fast_p - slow, alpha=group["lookahead_alpha"])
            fast_p.copy_(slow)

    def sync_lookahead(self):
        for group in self._base_optimizer.param_groups:
            self.update_slow(group)

    @torch.no_grad()
    def step(self, closure=None):
        loss = self._base_optimizer.step(closure)
        for group in self._base_optimizer.param_groups:
            group["lookahead_step"] += 1
            if group["lookahead_step"] % group["lookahead_k"] == 0:
                self.update_slow(group)
        return loss

    def state_dict(self):
        return self._base_optimizer.state_dict()

    def load_state_dict(self, state_dict):
        self._base_optimizer.load_state_dict(state_dict)
        self.param_groups = self._base_optimizer.param_groups


class SGDHD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 hypergrad_lr=1e-6):
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, hypergrad_lr=hypergrad_lr)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super(SGDHD, self).__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("SGDHD doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._params_numel = sum(p.numel() for p in self._params)

    def _gather_flat_grad_with_weight_decay(self, weight_decay=0):
        views = []
        for p in self._params:
            if p.grad is None:
                view = torch.zeros_like(p.data)
            elif p.grad.data.is_sparse:
                view = p.grad.data.to_dense().view(-1)
            else:
                view = p.grad.data.view(-1)
            if weight_decay != 0:
                view.add_(p.data.view(-1), alpha=weight_decay)
            views.append(view)
        return torch.cat(views, 0)

    def _add_grad(self, step_size, update):
        offset = 0
        for p in self._params:
            numel = p.numel()
            p.data.add_(update[offset:offset + numel].view_as(p.data), alpha=step_size)
            offset += numel
        assert offset == self._params_numel

    def step(self, closure=None):
        assert len(self.param_groups) == 1
        loss = None
        if closure is not None:
            loss = closure()
        group = self.param_groups[0]
        weight_decay = group["weight_decay"]
        momentum = group["momentum"]
        dampening = group["dampening"]
        nesterov = group["nesterov"]
        grad = self._gather_flat_grad_with_weight_decay(weight_decay)
        # NOTE: SGDHD has only global state, but we register it as state for
        # the first param, because this helps with casting in load_state_dict
        state = self.state[self._params[0]]
        # State initialization
        if len(state) == 0:
            state["grad_prev"] = torch.zeros_like(grad)
        grad_prev = state["grad_prev"]
        # Hypergradient for SGD
        h = torch.dot(grad, grad_prev)
        # Hypergradient descent of the learning rate:
        group["lr"] += group["hypergrad_lr"] * h.item()
        if momentum != 0:
            if "momentum_buffer" not in state:
                buf = state["momentum_buffer"] = torch.zeros_like(grad)
                buf.mul_(momentum).add_(grad)
            else:
                buf = state["momentum_buffer"]
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            if nesterov:
                grad.add_(buf, alpha=momentum)
            else:
                grad = buf
        state["grad_prev"] = grad
        self._add_grad(-group["lr"], grad)
        return loss


def fmt(t):
    return [round(v, 5) for v in t.detach().reshape(-1)[:3].tolist()]


torch.manual_seed(0)
X = torch.randn(64, 6)
Y = (X[:, 0] * X[:, 1] > 0).long() + (X[:, 2] > 1).long()


def make():
    torch.manual_seed(1)
    return nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 3))


def smooth_crossentropy(pred, gold, smoothing=0.1):
    n_class = pred.size(1)
    one_hot = torch.full_like(pred, fill_value=smoothing / (n_class - 1))
    one_hot.scatter_(dim=1, index=gold.unsqueeze(1), value=1.0 - smoothing)
    log_prob = F.log_softmax(pred, dim=1)
    return F.kl_div(input=log_prob, target=one_hot, reduction="none").sum(-1)


def disable_running_stats(model):
    def _disable(module):
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.backup_momentum = module.momentum
            module.momentum = 0
    model.apply(_disable)


def enable_running_stats(model):
    def _enable(module):
        if isinstance(module, nn.modules.batchnorm._BatchNorm) and hasattr(module,
                                                                          "backup_momentum"):
            module.momentum = module.backup_momentum
    model.apply(_enable)


for adaptive in (False, True):
    model = make()
    optimizer = SAM(model.parameters(), torch.optim.SGD, rho=2.0 if adaptive else 0.05,
                    adaptive=adaptive, lr=0.1, momentum=0.9, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.5)
    for epoch in range(6):
        for xb, yb in zip(X.split(16), Y.split(16)):
            enable_running_stats(model)
            predictions = model(xb)
            loss = smooth_crossentropy(predictions, yb)
            loss.mean().backward()
            optimizer.first_step(zero_grad=True)
            disable_running_stats(model)
            smooth_crossentropy(model(xb), yb).mean().backward()
            optimizer.second_step(zero_grad=True)
        scheduler.step()
        print("sam", adaptive, epoch, round(loss.mean().item(), 5),
              [round(v, 5) for v in scheduler.get_last_lr()])
    print("  defaults", sorted(optimizer.defaults), optimizer.param_groups is
          optimizer.base_optimizer.param_groups)
    print("  state", sorted(optimizer.state[model[0].weight]),
          sorted(optimizer.base_optimizer.state[model[0].weight]),
          fmt(model[1].running_mean))

# the closure form
model = make()
optimizer = SAM(model.parameters(), torch.optim.Adam, lr=1e-2)


def closure():
    loss = F.cross_entropy(model(X), Y)
    loss.backward()
    return loss


for it in range(4):
    F.cross_entropy(model(X), Y).backward()
    optimizer.step(closure)
    optimizer.zero_grad()
    print("sam closure", it, round(F.cross_entropy(model(X), Y).item(), 5))
try:
    optimizer.step()
except AssertionError as e:
    print("AssertionError", e)

# Lookahead(RAdam) and Lookahead(AdamW)
for base in (torch.optim.RAdam, torch.optim.AdamW):
    model = make()
    opt = Lookahead(base(model.parameters(), lr=1e-2), alpha=0.5, k=3)
    for it in range(7):
        opt.zero_grad()
        loss = F.cross_entropy(model(X), Y)
        loss.backward()
        opt.step()
    print("lookahead", base.__name__, round(loss.item(), 5), fmt(model[3].weight),
          opt.param_groups[0]["lookahead_step"])
    sd = opt.state_dict()
    print("  sd", sorted(sd["param_groups"][0]), sorted(sd["state"][0]))
    model2 = make()
    opt2 = Lookahead(base(model2.parameters(), lr=1.0), alpha=0.5, k=3)
    opt2.load_state_dict(sd)
    print("  loaded", opt2.param_groups[0]["lr"], opt2.param_groups[0]["lookahead_step"],
          opt2.param_groups is opt2._base_optimizer.param_groups)
    opt.sync_lookahead()
    print("  synced", fmt(model[3].weight))
try:
    Lookahead(torch.optim.SGD(make().parameters(), lr=0.1), alpha=1.5)
except ValueError as e:
    print("ValueError", e)

# hypergradient descent
model = make()
opt = SGDHD(model.parameters(), lr=0.05, momentum=0.5, hypergrad_lr=1e-3)
for it in range(8):
    def closure():
        opt.zero_grad()
        loss = F.cross_entropy(model(X), Y)
        loss.backward()
        return loss
    loss = opt.step(closure)
    print("sgdhd", it, round(loss.item(), 5), round(opt.param_groups[0]["lr"], 6))
print("sgdhd state", sorted(opt.state[model[0].weight]),
      opt.state[model[0].weight]["grad_prev"].shape)
try:
    SGDHD([{"params": model[0].parameters()}, {"params": model[3].parameters()}])
except ValueError as e:
    print("ValueError", e)
