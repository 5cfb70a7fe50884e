"""DLRM (facebookresearch/dlrm, dlrm_s_pytorch.py) and Wide & Deep, shrunk: bottom/top MLPs
built from nn.ModuleList, sparse features through nn.EmbeddingBag(mode="sum") with
lS_o offsets and lS_i indices, dot interactions via torch.bmm + tril/triu indices,
sigmoid output with BCELoss, and ROC-AUC computed with sort/cumsum."""
import importlib
import os

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(123)
np.random.seed(123)


class DLRM_Net(nn.Module):
    def create_mlp(self, ln, sigmoid_layer):
        layers = nn.ModuleList()
        for i in range(0, ln.size - 1):
            n = ln[i]
            m = ln[i + 1]
            LL = nn.Linear(int(n), int(m), bias=True)
            mean = 0.0
            std_dev = np.sqrt(2 / (m + n))
            W = np.random.normal(mean, std_dev, size=(m, n)).astype(np.float32)
            std_dev = np.sqrt(1 / m)
            bt = np.random.normal(mean, std_dev, size=m).astype(np.float32)
            LL.weight.data = torch.tensor(W, requires_grad=True)
            LL.bias.data = torch.tensor(bt, requires_grad=True)
            layers.append(LL)
            if i == sigmoid_layer:
                layers.append(nn.Sigmoid())
            else:
                layers.append(nn.ReLU())
        return torch.nn.Sequential(*layers)

    def create_emb(self, m, ln):
        emb_l = nn.ModuleList()
        for i in range(0, ln.size):
            n = ln[i]
            EE = nn.EmbeddingBag(n, m, mode="sum", sparse=False)
            W = np.random.uniform(
                low=-np.sqrt(1 / n), high=np.sqrt(1 / n), size=(n, m)
            ).astype(np.float32)
            EE.weight.data = torch.tensor(W, requires_grad=True)
            emb_l.append(EE)
        return emb_l

    def __init__(self, m_spa, ln_emb, ln_bot, ln_top, arch_interaction_op="dot",
                 arch_interaction_itself=False, sigmoid_bot=-1, sigmoid_top=-1,
                 loss_threshold=0.0):
        super(DLRM_Net, self).__init__()
        self.arch_interaction_op = arch_interaction_op
        self.arch_interaction_itself = arch_interaction_itself
        self.loss_threshold = loss_threshold
        self.emb_l = self.create_emb(m_spa, ln_emb)
        self.bot_l = self.create_mlp(ln_bot, sigmoid_bot)
        self.top_l = self.create_mlp(ln_top, sigmoid_top)
        self.loss_fn = torch.nn.BCELoss(reduction="mean")

    def apply_mlp(self, x, layers):
        return layers(x)

    def apply_emb(self, lS_o, lS_i, emb_l):
        ly = []
        for k, sparse_index_group_batch in enumerate(lS_i):
            sparse_offset_group_batch = lS_o[k]
            E = emb_l[k]
            V = E(sparse_index_group_batch, sparse_offset_group_batch,
                  per_sample_weights=None)
            ly.append(V)
        return ly

    def interact_features(self, x, ly):
        if self.arch_interaction_op == "dot":
            (batch_size, d) = x.shape
            T = torch.cat([x] + ly, dim=1).view((batch_size, -1, d))
            Z = torch.bmm(T, torch.transpose(T, 1, 2))
            _, ni, nj = Z.shape
            offset = 1 if self.arch_interaction_itself else 0
            li = torch.tensor([i for i in range(ni) for j in range(i + offset)])
            lj = torch.tensor([j for i in range(nj) for j in range(i + offset)])
            Zflat = Z[:, li, lj]
            R = torch.cat([x] + [Zflat], dim=1)
        elif self.arch_interaction_op == "cat":
            R = torch.cat([x] + ly, dim=1)
        else:
            raise ValueError("unsupported interaction op " + self.arch_interaction_op)
        return R

    def forward(self, dense_x, lS_o, lS_i):
        x = self.apply_mlp(dense_x, self.bot_l)
        ly = self.apply_emb(lS_o, lS_i, self.emb_l)
        z = self.interact_features(x, ly)
        p = self.apply_mlp(z, self.top_l)
        if 0.0 < self.loss_threshold and self.loss_threshold < 1.0:
            z = torch.clamp(p, min=self.loss_threshold, max=(1.0 - self.loss_threshold))
        else:
            z = p
        return z


m_spa = 4
ln_emb = np.array([10, 7, 12])
ln_bot = np.array([5, 8, 4])
num_fea = ln_emb.size + 1
num_int = (num_fea * (num_fea - 1)) // 2 + m_spa
ln_top = np.array([num_int, 8, 4, 1])
print("num_int", num_int)
dlrm = DLRM_Net(m_spa, ln_emb, ln_bot, ln_top, sigmoid_top=ln_top.size - 2)
print(dlrm)
print([k for k in dlrm.state_dict().keys()][:6])


def random_batch(n):
    Xt = torch.tensor(np.random.rand(n, ln_bot[0]).astype(np.float32))
    lS_emb_offsets, lS_emb_indices = [], []
    for size in ln_emb:
        offsets, indices, off = [], [], 0
        for _ in range(n):
            sparse_group_size = np.int64(max(1, np.round(np.random.random() * 3)))
            offsets.append(off)
            idx = np.unique(np.round(np.random.random(sparse_group_size) * (size - 1)))
            indices += idx.astype(np.int64).tolist()
            off += idx.size
        lS_emb_offsets.append(torch.tensor(offsets))
        lS_emb_indices.append(torch.tensor(indices))
    T = torch.tensor(np.round(np.random.rand(n, 1)).astype(np.float32))
    return Xt, lS_emb_offsets, lS_emb_indices, T


X, lS_o, lS_i, T = random_batch(16)
print(X.shape, [o.tolist() for o in lS_o][0][:5], lS_i[0].dtype)
Z = dlrm(X, lS_o, lS_i)
print(Z.shape, type(Z.grad_fn).__name__)
print(Z[:4].detach())

optimizer = torch.optim.SGD(dlrm.parameters(), lr=0.1)
for it in range(8):
    X, lS_o, lS_i, T = random_batch(16)
    Z = dlrm(X, lS_o, lS_i)
    E = dlrm.loss_fn(Z, T)
    optimizer.zero_grad()
    E.backward()
    optimizer.step()
    S = Z.detach().cpu().numpy()
    A = np.sum((np.round(S, 0) == T.numpy()).astype(np.uint8))
    print(f"it {it} loss {E.item():.6f} acc {A / 16:.4f}")
print(dlrm.emb_l[0].weight.grad.shape, dlrm.emb_l[0].weight.grad.abs().sum() > 0)

# triu_indices / tril_indices view of the same pairwise interactions
T3 = torch.randn(2, 4, 3)
Zb = torch.bmm(T3, T3.transpose(1, 2))
li, lj = torch.tril_indices(4, 4, offset=-1)
print(li, lj)
ui, uj = torch.triu_indices(4, 4, offset=1)
print(torch.allclose(Zb[:, li, lj], Zb[:, lj, li]), torch.triu_indices(3, 5).shape)
print(Zb[:, ui, uj])


# Wide & Deep: linear "wide" part over one-hot crosses + deep part over embeddings
class WideDeep(nn.Module):
    def __init__(self, n_wide, field_dims, emb_dim, hidden):
        super().__init__()
        self.wide = nn.EmbeddingBag(n_wide, 1, mode="sum")
        self.wide_bias = nn.Parameter(torch.zeros((1,)))
        self.embs = nn.ModuleList(nn.Embedding(n, emb_dim) for n in field_dims)
        layers, inp = [], emb_dim * len(field_dims)
        for h in hidden:
            layers += [nn.Linear(inp, h), nn.BatchNorm1d(h), nn.ReLU(), nn.Dropout(0.2)]
            inp = h
        layers.append(nn.Linear(inp, 1))
        self.deep = nn.Sequential(*layers)

    def forward(self, wide_idx, wide_off, x_cat):
        wide = self.wide(wide_idx, wide_off) + self.wide_bias
        emb = torch.cat([e(x_cat[:, k]) for k, e in enumerate(self.embs)], dim=1)
        return torch.sigmoid((wide + self.deep(emb)).squeeze(1))


torch.manual_seed(5)
field_dims = [6, 4, 9]
wd = WideDeep(30, field_dims, 3, [16, 8])
print(wd)
x_cat = torch.stack([torch.randint(0, n, (24,)) for n in field_dims], dim=1)
wide_idx = torch.randint(0, 30, (48,))
wide_off = torch.arange(0, 48, 2)
y = (x_cat[:, 0] % 2 == 0).float()
opt = torch.optim.Adagrad(wd.parameters(), lr=0.05, initial_accumulator_value=0.1)
for it in range(10):
    wd.train()
    p = wd(wide_idx, wide_off, x_cat)
    loss = F.binary_cross_entropy(p, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"wide&deep loss {loss.item():.4f}")
wd.eval()
with torch.no_grad():
    p = wd(wide_idx, wide_off, x_cat)


def roc_auc(scores, labels):
    order = torch.argsort(scores, descending=True)
    labels = labels[order]
    tps = torch.cumsum(labels, dim=0)
    fps = torch.cumsum(1 - labels, dim=0)
    tpr = torch.cat([torch.zeros(1), tps / tps[-1]])
    fpr = torch.cat([torch.zeros(1), fps / fps[-1]])
    return torch.trapz(tpr, fpr)


auc = roc_auc(p, y)
print("AUC:", f"{auc.item():.4f}", auc.dtype)
pos, neg = p[y == 1], p[y == 0]
pair_auc = (pos[:, None] > neg[None, :]).float().mean()
print("pairwise AUC:", f"{pair_auc.item():.4f}")
print("RESULT:", f"{E.item():.4f}", f"{auc.item():.4f}")
