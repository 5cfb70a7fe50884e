"""Keller Jordan's Muon optimizer, shrunk from KellerJordan/Muon (muon.py): the quintic
Newton-Schulz orthogonalisation ``zeropower_via_newtonschulz5`` run in bfloat16 (transposing tall
matrices, spectral-norm bound by the Frobenius norm), ``muon_update`` (momentum ``lerp_``,
Nesterov via ``grad.lerp_``, conv filters flattened, the sqrt(rows/cols) scale),
``adam_update``, ``SingleDeviceMuon`` and ``SingleDeviceMuonWithAuxAdam`` (Muon for the hidden
matrices, Adam for embeddings/gains/biases/head, as the README's param-group recipe splits them),
trained on a tiny synthetic classification task, plus torch.optim.Muon on the same hidden
matrices for comparison."""
# ruff: noqa: E501  (upstream's own line lengths, kept)
import importlib
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
# bfloat16 matmuls may round differently from torch:
# compare: rtol=1e-3 atol=1e-4


def zeropower_via_newtonschulz5(G, steps: int):
    """
    Newton-Schulz iteration to compute the zeroth power / orthogonalization of G. We opt to use a
    quintic iteration whose coefficients are selected to maximize the slope at zero.
    """
    assert G.ndim >= 2  # batched Muon implementation by @scottjmaddox, and put into practice in the record by @YouJiacheng
    a, b, c = (3.4445, -4.7750, 2.0315)
    X = G.bfloat16()
    if G.size(-2) > G.size(-1):
        X = X.mT

    # Ensure spectral norm is at most 1
    X = X / (X.norm(dim=(-2, -1), keepdim=True) + 1e-7)
    # Perform the NS iterations
    for _ in range(steps):
        A = X @ X.mT
        B = b * A + c * A @ A  # quintic computation strategy adapted from suggestion by @jxbz, @leloykun, and @YouJiacheng
        X = a * X + B @ X

    if G.size(-2) > G.size(-1):
        X = X.mT
    return X


def muon_update(grad, momentum, beta=0.95, ns_steps=5, nesterov=True):
    momentum.lerp_(grad, 1 - beta)
    update = grad.lerp_(momentum, beta) if nesterov else momentum
    if update.ndim == 4:  # for the case of conv filters
        update = update.view(len(update), -1)
    update = zeropower_via_newtonschulz5(update, steps=ns_steps)
    update *= max(1, grad.size(-2) / grad.size(-1))**0.5
    return update


class SingleDeviceMuon(torch.optim.Optimizer):
    """
    Muon variant for usage in non-distributed settings.
    """
    def __init__(self, params, lr=0.02, weight_decay=0, momentum=0.95):
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum)
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):

        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()

        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    # continue
                    p.grad = torch.zeros_like(p)  # Force synchronization
                state = self.state[p]
                if len(state) == 0:
                    state["momentum_buffer"] = torch.zeros_like(p)
                update = muon_update(p.grad, state["momentum_buffer"], beta=group["momentum"])
                p.mul_(1 - group["lr"] * group["weight_decay"])
                p.add_(update.reshape(p.shape), alpha=-group["lr"])

        return loss


def adam_update(grad, buf1, buf2, step, betas, eps):
    buf1.lerp_(grad, 1 - betas[0])
    buf2.lerp_(grad.square(), 1 - betas[1])
    buf1c = buf1 / (1 - betas[0]**step)
    buf2c = buf2 / (1 - betas[1]**step)
    return buf1c / (buf2c.sqrt() + eps)


class SingleDeviceMuonWithAuxAdam(torch.optim.Optimizer):
    """
    Non-distributed variant of MuonWithAuxAdam.
    """
    def __init__(self, param_groups):
        for group in param_groups:
            assert "use_muon" in group
            if group["use_muon"]:
                # defaults
                group["lr"] = group.get("lr", 0.02)
                group["momentum"] = group.get("momentum", 0.95)
                group["weight_decay"] = group.get("weight_decay", 0)
                assert set(group.keys()) == set(["params", "lr", "momentum", "weight_decay", "use_muon"])
            else:
                # defaults
                group["lr"] = group.get("lr", 3e-4)
                group["betas"] = group.get("betas", (0.9, 0.95))
                group["eps"] = group.get("eps", 1e-10)
                group["weight_decay"] = group.get("weight_decay", 0)
                assert set(group.keys()) == set(["params", "lr", "betas", "eps", "weight_decay", "use_muon"])
        super().__init__(param_groups, dict())

    @torch.no_grad()
    def step(self, closure=None):

        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()

        for group in self.param_groups:
            if group["use_muon"]:
                for p in group["params"]:
                    if p.grad is None:
                        # continue
                        p.grad = torch.zeros_like(p)  # Force synchronization
                    state = self.state[p]
                    if len(state) == 0:
                        state["momentum_buffer"] = torch.zeros_like(p)
                    update = muon_update(p.grad, state["momentum_buffer"], beta=group["momentum"])
                    p.mul_(1 - group["lr"] * group["weight_decay"])
                    p.add_(update.reshape(p.shape), alpha=-group["lr"])
            else:
                for p in group["params"]:
                    if p.grad is None:
                        # continue
                        p.grad = torch.zeros_like(p)  # Force synchronization
                    state = self.state[p]
                    if len(state) == 0:
                        state["exp_avg"] = torch.zeros_like(p)
                        state["exp_avg_sq"] = torch.zeros_like(p)
                        state["step"] = 0
                    state["step"] += 1
                    update = adam_update(p.grad, state["exp_avg"], state["exp_avg_sq"],
                                         state["step"], group["betas"], group["eps"])
                    p.mul_(1 - group["lr"] * group["weight_decay"])
                    p.add_(update, alpha=-group["lr"])

        return loss


class TinyNet(nn.Module):
    """embed -> conv (4-d filter for the conv path) -> two hidden linears -> head."""

    def __init__(self, vocab=11, dim=12, classes=5):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.conv = nn.Conv1d(dim, dim, 3, padding=1)
        self.conv2d = nn.Conv2d(1, 4, (3, 3), padding=1)
        self.hidden = nn.Sequential(nn.Linear(dim, 20), nn.GELU(), nn.Linear(20, dim))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, idx):
        x = self.embed(idx)                                  # B, T, D
        x = x + self.conv(x.transpose(1, 2)).transpose(1, 2)
        x = x + self.conv2d(x.unsqueeze(1)).mean(1)
        x = x + self.hidden(self.norm(x))
        return self.head(x.mean(1))


def data(n=16, t=6):
    g = torch.Generator().manual_seed(3)
    idx = torch.randint(0, 11, (n, t), generator=g)
    y = (idx.sum(1) % 5)
    return idx, y


def norms(model):
    return " ".join("%s=%.5f" % (n, p.norm().item()) for n, p in model.named_parameters())


def run_aux_adam():
    torch.manual_seed(0)
    model = TinyNet()
    # the README's split: Muon for >=2-d hidden weights, Adam for embeddings, head, gains, biases
    hidden_weights = [p for n, p in model.named_parameters()
                      if p.ndim >= 2 and "embed" not in n and "head" not in n]
    hidden_gains_biases = [p for n, p in model.named_parameters()
                           if p.ndim < 2 and "embed" not in n and "head" not in n]
    nonhidden_params = [*model.head.parameters(), *model.embed.parameters()]
    param_groups = [
        dict(params=hidden_weights, use_muon=True, lr=0.02, weight_decay=0.01),
        dict(params=hidden_gains_biases + nonhidden_params, use_muon=False,
             lr=3e-3, betas=(0.9, 0.95), weight_decay=0.01),
    ]
    optimizer = SingleDeviceMuonWithAuxAdam(param_groups)
    print("groups", [sorted(g.keys()) for g in optimizer.param_groups])
    print("defaults", optimizer.defaults)
    idx, y = data()
    for step in range(5):
        loss = F.cross_entropy(model(idx), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        print("aux step %d loss %.5f" % (step, loss.item()))
    for p in hidden_weights[:3]:
        st = optimizer.state[p]
        print("muon state", sorted(st), tuple(st["momentum_buffer"].shape),
              "%.5f" % st["momentum_buffer"].norm().item())
    st = optimizer.state[model.head.weight]
    print("adam state", sorted(st), st["step"], "%.6f %.8f" % (st["exp_avg"].norm().item(),
                                                              st["exp_avg_sq"].sum().item()))
    print("norms", norms(model))


def run_single_muon():
    torch.manual_seed(1)
    model = TinyNet()
    muon_params = [p for p in model.hidden.parameters() if p.ndim == 2]
    opt = SingleDeviceMuon(muon_params, lr=0.05, weight_decay=0.1)
    adam = torch.optim.AdamW([p for p in model.parameters() if all(p is not q for q in muon_params)],
                             lr=1e-3)
    idx, y = data()

    def closure():
        opt.zero_grad()
        adam.zero_grad()
        out = F.cross_entropy(model(idx), y)
        out.backward()
        return out

    for step in range(4):
        loss = opt.step(closure)
        adam.step()
        print("single step %d loss %.5f" % (step, loss.item()))
    print("norms", norms(model))
    print("state_dict keys", sorted(opt.state_dict()["state"]), opt.state_dict()["param_groups"])


def ns_checks():
    torch.manual_seed(2)
    for shape in [(6, 4), (4, 6), (2, 3, 5)]:
        G = torch.randn(*shape)
        X = zeropower_via_newtonschulz5(G, steps=5)
        print("ns", shape, X.dtype, tuple(X.shape), "%.4f" % X.float().norm().item())
        sv = torch.linalg.svdvals(X.float())
        print("  singular values", [round(v, 2) for v in sv.flatten().tolist()])
    w = torch.randn(3, 2, 2, 2)
    mom = torch.zeros_like(w)
    upd = muon_update(w.clone(), mom)
    print("conv update", tuple(upd.shape), upd.dtype, "%.4f" % upd.float().norm().item())


def torch_muon():
    torch.manual_seed(4)
    model = nn.Sequential(nn.Linear(6, 8, bias=False), nn.Tanh(), nn.Linear(8, 3, bias=False))
    opt = torch.optim.Muon(model.parameters(), lr=0.02, weight_decay=0.1, momentum=0.95)
    x = torch.randn(10, 6)
    y = torch.randint(0, 3, (10,))
    for step in range(3):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("torch.optim.Muon step %d loss %.5f" % (step, loss.item()))
    print("norms", " ".join("%.5f" % p.norm().item() for p in model.parameters()))
    print(sorted(opt.state_dict()["param_groups"][0]))


ns_checks()
run_aux_adam()
run_single_muon()
torch_muon()
