"""Matrix factorization recommenders (the classic "MF in PyTorch" blog posts and the
BPR-MF recipe): nn.Embedding user/item factors with biases, explicit-rating MSE training
with per-group weight decay (no decay on biases), implicit-feedback BPR loss with sampled
negatives via logsigmoid, recall@k with topk and scatter masks of seen items."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(42)
N_USERS, N_ITEMS, K = 12, 20, 4

# synthetic ratings in 1..5 from a hidden low-rank model
U0 = torch.randn(N_USERS, 2)
V0 = torch.randn(N_ITEMS, 2)
full = (U0 @ V0.T)
full = 1 + 4 * (full - full.min()) / (full.max() - full.min())
mask = torch.rand(N_USERS, N_ITEMS) < 0.4
users, items = mask.nonzero(as_tuple=True)
ratings = full[users, items]
print("n ratings:", ratings.numel(), ratings.dtype, users.dtype)
print("mean rating:", f"{ratings.mean().item():.4f}")


class MatrixFactorization(nn.Module):
    def __init__(self, n_users, n_items, n_factors=20):
        super().__init__()
        self.user_factors = nn.Embedding(n_users, n_factors, sparse=False)
        self.item_factors = nn.Embedding(n_items, n_factors, sparse=False)
        self.user_biases = nn.Embedding(n_users, 1)
        self.item_biases = nn.Embedding(n_items, 1)
        self.global_bias = nn.Parameter(torch.zeros(1))
        nn.init.normal_(self.user_factors.weight, std=0.1)
        nn.init.normal_(self.item_factors.weight, std=0.1)
        nn.init.zeros_(self.user_biases.weight)
        nn.init.zeros_(self.item_biases.weight)

    def forward(self, user, item):
        pred = (self.user_factors(user) * self.item_factors(item)).sum(dim=1, keepdim=True)
        pred += self.user_biases(user) + self.item_biases(item) + self.global_bias
        return pred.squeeze(-1)


model = MatrixFactorization(N_USERS, N_ITEMS, n_factors=K)
print(model)
print(list(model.state_dict().keys()))
print({k: tuple(v.shape) for k, v in model.named_parameters()})

decay, no_decay = [], []
for name, p in model.named_parameters():
    (no_decay if "bias" in name else decay).append(p)
opt = torch.optim.Adam(
    [{"params": decay, "weight_decay": 1e-4}, {"params": no_decay, "weight_decay": 0.0}],
    lr=0.05,
)
print([g["weight_decay"] for g in opt.param_groups], [len(g["params"]) for g in opt.param_groups])
loss_fn = nn.MSELoss()
for epoch in range(15):
    perm = torch.randperm(ratings.numel())
    total = 0.0
    for i in range(0, len(perm), 32):
        idx = perm[i:i + 32]
        opt.zero_grad()
        pred = model(users[idx], items[idx])
        loss = loss_fn(pred, ratings[idx])
        loss.backward()
        opt.step()
        total += loss.item() * len(idx)
    if epoch % 5 == 4:
        print(f"epoch {epoch + 1} mse {total / len(perm):.4f}")
with torch.no_grad():
    pred = model(users, items)
    rmse = torch.sqrt(F.mse_loss(pred, ratings))
    print("train rmse:", f"{rmse.item():.4f}")
    print("clamped preds:", pred[:6].clamp(1, 5))
print("grad_fn:", type(model(users[:3], items[:3]).grad_fn).__name__)
print("emb grad is sparse:", model.user_factors.weight.grad.is_sparse)


# ---- BPR on implicit feedback ----
class BPR(nn.Module):
    def __init__(self, n_users, n_items, dim):
        super().__init__()
        self.W = nn.Embedding(n_users, dim)
        self.H = nn.Embedding(n_items, dim)
        nn.init.xavier_normal_(self.W.weight)
        nn.init.xavier_normal_(self.H.weight)

    def forward(self, u, i, j):
        u = self.W(u)
        i = self.H(i)
        j = self.H(j)
        x_ui = torch.mul(u, i).sum(dim=1)
        x_uj = torch.mul(u, j).sum(dim=1)
        x_uij = x_ui - x_uj
        log_prob = F.logsigmoid(x_uij).sum()
        return -log_prob

    def recommend(self, u):
        return torch.mm(self.W(u), self.H.weight.t())


torch.manual_seed(1)
bpr = BPR(N_USERS, N_ITEMS, 8)
bopt = torch.optim.SGD(bpr.parameters(), lr=0.05, weight_decay=0.01, momentum=0.9)
pos_u, pos_i = users, items
for step in range(20):
    neg = torch.randint(0, N_ITEMS, (pos_u.numel(),))
    bopt.zero_grad()
    loss = bpr(pos_u, pos_i, neg) / pos_u.numel()
    loss.backward()
    bopt.step()
    if step % 5 == 0:
        print(f"bpr step {step} loss {loss.item():.4f}")
with torch.no_grad():
    scores = bpr.recommend(torch.arange(N_USERS))
    print(scores.shape, scores.dtype)
    heldout = torch.zeros_like(mask)
    heldout[torch.arange(N_USERS), full.argmax(1)] = True
    scores[mask & ~heldout] = -float("inf")
    topv, topi = torch.topk(scores, k=5, dim=1)
    print(topi[:3])
    hits = heldout.gather(1, topi).any(dim=1).float()
    print("recall@5:", f"{hits.mean().item():.4f}")
    print(torch.isinf(topv).sum().item(), topv[:2])
print("RESULT:", f"{rmse.item():.4f}", f"{loss.item():.4f}")
