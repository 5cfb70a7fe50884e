"""GaLore (gradient low-rank projection), shrunk from jiaweizzhao/GaLore: galore_torch/
galore_projector.py (GaLoreProjector: SVD of the gradient via torch.linalg.svd, left/right/std
projection by the matrix's shape, update_proj_gap, scale, project_back), galore_torch/adamw.py
(the transformers-style AdamW Optimizer subclass whose param groups carry rank /
update_proj_gap / scale / proj_type, moments kept in the low-rank space, correct_bias), and
torchrun_main.py (galore_params = the nn.Linear weights of "attn"/"mlp" modules, regular params
in their own group; the layer-wise variant: one optimizer per parameter stepped from a
register_post_accumulate_grad_hook). A tiny LLaMA-style LM on synthetic tokens; printed values
do not depend on the sign convention of the singular vectors. After a re-projection the stale
Adam moments meet a new basis, which carries torch's float32 LAPACK SVD error (~1e-4 in the
singular vectors of near-degenerate gradients) into the losses, hence the looser tolerance.
# compare: rtol=1e-3 atol=5e-4
"""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
Optimizer = torch.optim.Optimizer


class GaLoreProjector:
    def __init__(self, rank, verbose=False, update_proj_gap=200, scale=1.0, proj_type="std"):
        self.rank = rank
        self.verbose = verbose
        self.update_proj_gap = update_proj_gap
        self.scale = scale
        self.ortho_matrix = None
        self.proj_type = proj_type

    def project(self, full_rank_grad, iter):
        if self.proj_type == "std":
            if full_rank_grad.shape[0] >= full_rank_grad.shape[1]:
                if self.ortho_matrix is None or iter % self.update_proj_gap == 0:
                    self.ortho_matrix = self.get_orthogonal_matrix(full_rank_grad, self.rank,
                                                                   type="right")
                low_rank_grad = torch.matmul(full_rank_grad, self.ortho_matrix.t())
            else:
                if self.ortho_matrix is None or iter % self.update_proj_gap == 0:
                    self.ortho_matrix = self.get_orthogonal_matrix(full_rank_grad, self.rank,
                                                                   type="left")
                low_rank_grad = torch.matmul(self.ortho_matrix.t(), full_rank_grad)
        elif self.proj_type == "right":
            if self.ortho_matrix is None or iter % self.update_proj_gap == 0:
                self.ortho_matrix = self.get_orthogonal_matrix(full_rank_grad, self.rank,
                                                               type="right")
            low_rank_grad = torch.matmul(full_rank_grad, self.ortho_matrix.t())
        elif self.proj_type == "left":
            if self.ortho_matrix is None or iter % self.update_proj_gap == 0:
                self.ortho_matrix = self.get_orthogonal_matrix(full_rank_grad, self.rank,
                                                               type="left")
            low_rank_grad = torch.matmul(self.ortho_matrix.t(), full_rank_grad)
        elif self.proj_type == "full":
            if self.ortho_matrix is None or iter % self.update_proj_gap == 0:
                self.ortho_matrix = self.get_orthogonal_matrix(full_rank_grad, self.rank,
                                                               type="full")
            low_rank_grad = (torch.matmul(self.ortho_matrix[0].t(), full_rank_grad)
                             @ self.ortho_matrix[1].t())
        return low_rank_grad

    def project_back(self, low_rank_grad):
        if self.proj_type == "std":
            if low_rank_grad.shape[0] >= low_rank_grad.shape[1]:
                full_rank_grad = torch.matmul(low_rank_grad, self.ortho_matrix)
            else:
                full_rank_grad = torch.matmul(self.ortho_matrix, low_rank_grad)
        elif self.proj_type == "right":
            full_rank_grad = torch.matmul(low_rank_grad, self.ortho_matrix)
        elif self.proj_type == "left":
            full_rank_grad = torch.matmul(self.ortho_matrix, low_rank_grad)
        elif self.proj_type == "full":
            full_rank_grad = (torch.matmul(self.ortho_matrix[0], low_rank_grad)
                              @ self.ortho_matrix[1])
        return full_rank_grad * self.scale

    # svd decomposition
    def get_orthogonal_matrix(self, weights, rank, type):
        module_params = weights
        if module_params.data.dtype != torch.float:
            float_data = False
            original_type = module_params.data.dtype
            original_device = module_params.data.device
            matrix = module_params.data.float()
        else:
            float_data = True
            matrix = module_params.data
        U, s, Vh = torch.linalg.svd(matrix, full_matrices=False)
        # make the smaller matrix always to be orthogonal matrix
        if type == "right":
            B = Vh[:rank, :]
            if not float_data:
                B = B.to(original_device).type(original_type)
            return B
        elif type == "left":
            A = U[:, :rank]
            if not float_data:
                A = A.to(original_device).type(original_type)
            return A
        elif type == "full":
            A = U[:, :rank]
            B = Vh[:rank, :]
            if not float_data:
                A = A.to(original_device).type(original_type)
                B = B.to(original_device).type(original_type)
            return [A, B]
        else:
            raise ValueError("type should be left, right or full")


class AdamW(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.0,
                 correct_bias=True):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr} - should be >= 0.0")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter: {betas[0]} - should be in [0.0, 1.0)")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "correct_bias": correct_bias}
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                if grad.is_sparse:
                    raise RuntimeError("Adam does not support sparse gradients, please consider "
                                       "SparseAdam instead")
                state = self.state[p]
                if "step" not in state:
                    state["step"] = 0
                # GaLore Projection
                if "rank" in group:
                    if "projector" not in state:
                        state["projector"] = GaLoreProjector(
                            group["rank"], update_proj_gap=group["update_proj_gap"],
                            scale=group["scale"], proj_type=group["proj_type"])
                    grad = state["projector"].project(grad, state["step"])
                # State initialization
                if "exp_avg" not in state:
                    # Exponential moving average of gradient values
                    state["exp_avg"] = torch.zeros_like(grad)
                    # Exponential moving average of squared gradient values
                    state["exp_avg_sq"] = torch.zeros_like(grad)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                beta1, beta2 = group["betas"]
                state["step"] += 1
                exp_avg.mul_(beta1).add_(grad, alpha=(1.0 - beta1))
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1.0 - beta2)
                denom = exp_avg_sq.sqrt().add_(group["eps"])
                step_size = group["lr"]
                if group["correct_bias"]:  # No bias correction for Bert
                    bias_correction1 = 1.0 - beta1 ** state["step"]
                    bias_correction2 = 1.0 - beta2 ** state["step"]
                    step_size = step_size * math.sqrt(bias_correction2) / bias_correction1
                # compute norm gradient
                norm_grad = exp_avg / denom
                # GaLore Projection Back
                if "rank" in group:
                    norm_grad = state["projector"].project_back(norm_grad)
                p.add_(norm_grad, alpha=-step_size)
                if group["weight_decay"] > 0.0:
                    p.add_(p, alpha=(-group["lr"] * group["weight_decay"]))
        return loss


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Block(nn.Module):
    def __init__(self, d, n_head):
        super().__init__()
        self.n_head = n_head
        self.attn = nn.ModuleDict({"q_proj": nn.Linear(d, d, bias=False),
                                   "k_proj": nn.Linear(d, d, bias=False),
                                   "v_proj": nn.Linear(d, d, bias=False),
                                   "o_proj": nn.Linear(d, d, bias=False)})
        self.mlp = nn.ModuleDict({"gate_proj": nn.Linear(d, 3 * d, bias=False),
                                  "up_proj": nn.Linear(d, 3 * d, bias=False),
                                  "down_proj": nn.Linear(3 * d, d, bias=False)})
        self.input_layernorm = RMSNorm(d)
        self.post_attention_layernorm = RMSNorm(d)

    def forward(self, x):
        B, T, C = x.shape
        h = self.input_layernorm(x)
        q, k, v = (self.attn[n](h).view(B, T, self.n_head, -1).transpose(1, 2)
                   for n in ("q_proj", "k_proj", "v_proj"))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.attn["o_proj"](y.transpose(1, 2).reshape(B, T, C))
        h = self.post_attention_layernorm(x)
        return x + self.mlp["down_proj"](F.silu(self.mlp["gate_proj"](h)) * self.mlp["up_proj"](h))


class TinyLlama(nn.Module):
    def __init__(self, vocab=32, d=32, n_layer=2, n_head=4):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(Block(d, n_head) for _ in range(n_layer))
        self.norm = RMSNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx, targets):
        x = self.embed_tokens(idx)
        for layer in self.layers:
            x = layer(x)
        logits = self.lm_head(self.norm(x))
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def galore_param_groups(model, rank, update_proj_gap, scale, proj_type):
    galore_params = []
    target_modules_list = ["attn", "mlp"]
    for module_name, module in model.named_modules():
        if not isinstance(module, nn.Linear):
            continue
        if not any(target_key in module_name for target_key in target_modules_list):
            continue
        galore_params.append(module.weight)
    id_galore_params = [id(p) for p in galore_params]
    # make parameters without "rank" to another group
    regular_params = [p for p in model.parameters() if id(p) not in id_galore_params]
    # then call galore_adamw
    return [{"params": regular_params},
            {"params": galore_params, "rank": rank, "update_proj_gap": update_proj_gap,
             "scale": scale, "proj_type": proj_type}]


def batch(g, B=4, T=12, vocab=32):
    start = torch.randint(0, vocab, (B, 1), generator=g)
    seq = (start + torch.arange(T + 1) * 3) % vocab  # a learnable arithmetic pattern
    return seq[:, :-1], seq[:, 1:].contiguous()


# the projector alone: shapes and sign-independent quantities
torch.manual_seed(0)
for shape, proj_type in (((12, 6), "std"), ((6, 12), "std"), ((12, 6), "left"),
                         ((8, 10), "full")):
    G = torch.randn(*shape)
    proj = GaLoreProjector(rank=3, update_proj_gap=2, scale=0.5, proj_type=proj_type)
    low = proj.project(G, 0)
    back = proj.project_back(low)
    print("projector", shape, proj_type, tuple(low.shape), tuple(back.shape),
          "low norm %.5f back norm %.5f" % (low.norm().item(), back.norm().item()))
U, S, Vh = torch.linalg.svd(G, full_matrices=False)
print("top-3 energy", (S[:3] ** 2).sum() / (S ** 2).sum(), S.shape, U.shape, Vh.shape)
try:
    GaLoreProjector(2).get_orthogonal_matrix(G, 2, "middle")
except ValueError as e:
    print("ValueError", e)
half = GaLoreProjector(2, proj_type="right").project(G.half(), 0)
print("half grads", half.dtype, half.shape)

for proj_type in ("std", "right", "full"):
    torch.manual_seed(0)
    model = TinyLlama()
    groups = galore_param_groups(model, rank=4, update_proj_gap=3, scale=0.25,
                                 proj_type=proj_type)
    print("groups", [len(g["params"]) for g in groups],
          sum(p.numel() for p in groups[1]["params"]))
    optimizer = AdamW(groups, lr=1e-2, weight_decay=0.01)
    g = torch.Generator().manual_seed(1)
    for step in range(6):
        idx, tgt = batch(g)
        logits, loss = model(idx, tgt)
        optimizer.zero_grad()
        loss.backward()
        gn = torch.norm(torch.stack([p.grad.norm() for p in model.parameters()]))
        optimizer.step()
        print(proj_type, step, "loss %.5f grad_norm %.5f" % (loss.item(), gn.item()))
    st = optimizer.state[model.layers[0].mlp["down_proj"].weight]
    print("state", sorted(st), st["step"], tuple(st["exp_avg"].shape),
          "weight norm %.5f" % model.layers[0].mlp["down_proj"].weight.norm().item())
    print("logits", tuple(logits.shape), "%.5f %.5f" % (logits.mean().item(),
                                                        logits.std().item()))

# layer-wise GaLore: one optimizer per parameter, stepped as soon as its grad is accumulated
torch.manual_seed(0)
model = TinyLlama()
galore_ids = {id(p) for p in galore_param_groups(model, 4, 3, 0.25, "std")[1]["params"]}
optimizer_dict = {}
for p in model.parameters():
    if p.requires_grad:
        if id(p) in galore_ids:
            optimizer_dict[p] = AdamW([{"params": [p], "rank": 4, "update_proj_gap": 6,
                                        "scale": 0.25, "proj_type": "std"}], lr=1e-2,
                                      weight_decay=0.01)
        else:
            optimizer_dict[p] = AdamW([p], lr=1e-2, weight_decay=0.01)
calls = []


def optimizer_hook(p):
    if p.grad is None:
        return
    optimizer_dict[p].step()
    optimizer_dict[p].zero_grad()
    calls.append(1)


for p in model.parameters():
    if p.requires_grad:
        p.register_post_accumulate_grad_hook(optimizer_hook)
g = torch.Generator().manual_seed(1)
for step in range(4):
    idx, tgt = batch(g)
    logits, loss = model(idx, tgt)
    loss.backward()
    print("layerwise", step, "loss %.5f" % loss.item(), "hook calls", len(calls),
          "grads left", sum(p.grad is not None for p in model.parameters()))
