"""Set Transformer and DeepSets, shrunk from juho-lee/set_transformer: modules.py (MAB with the
head split via torch.cat(Q.split(dim_split, 2), 0), SAB, ISAB with inducing points, PMA with
seeds), models.py (DeepSet, SetTransformer) and max_regression_demo.ipynb (learn the max of a
set with L1 loss, Adam). Sets of 10 scalars, dim_hidden 16, 2 heads, 4 inducing points."""
# ruff: noqa: E741  (upstream's own line lengths and names, kept)
import importlib
import math
import os

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")


class MAB(nn.Module):
    def __init__(self, dim_Q, dim_K, dim_V, num_heads, ln=False):
        super(MAB, self).__init__()
        self.dim_V = dim_V
        self.num_heads = num_heads
        self.fc_q = nn.Linear(dim_Q, dim_V)
        self.fc_k = nn.Linear(dim_K, dim_V)
        self.fc_v = nn.Linear(dim_K, dim_V)
        if ln:
            self.ln0 = nn.LayerNorm(dim_V)
            self.ln1 = nn.LayerNorm(dim_V)
        self.fc_o = nn.Linear(dim_V, dim_V)

    def forward(self, Q, K):
        Q = self.fc_q(Q)
        K, V = self.fc_k(K), self.fc_v(K)

        dim_split = self.dim_V // self.num_heads
        Q_ = torch.cat(Q.split(dim_split, 2), 0)
        K_ = torch.cat(K.split(dim_split, 2), 0)
        V_ = torch.cat(V.split(dim_split, 2), 0)

        A = torch.softmax(Q_.bmm(K_.transpose(1, 2)) / math.sqrt(self.dim_V), 2)
        O = torch.cat((Q_ + A.bmm(V_)).split(Q.size(0), 0), 2)
        O = O if getattr(self, 'ln0', None) is None else self.ln0(O)
        O = O + F.relu(self.fc_o(O))
        O = O if getattr(self, 'ln1', None) is None else self.ln1(O)
        return O


class SAB(nn.Module):
    def __init__(self, dim_in, dim_out, num_heads, ln=False):
        super(SAB, self).__init__()
        self.mab = MAB(dim_in, dim_in, dim_out, num_heads, ln=ln)

    def forward(self, X):
        return self.mab(X, X)


class ISAB(nn.Module):
    def __init__(self, dim_in, dim_out, num_heads, num_inds, ln=False):
        super(ISAB, self).__init__()
        self.I = nn.Parameter(torch.Tensor(1, num_inds, dim_out))
        nn.init.xavier_uniform_(self.I)
        self.mab0 = MAB(dim_out, dim_in, dim_out, num_heads, ln=ln)
        self.mab1 = MAB(dim_in, dim_out, dim_out, num_heads, ln=ln)

    def forward(self, X):
        H = self.mab0(self.I.repeat(X.size(0), 1, 1), X)
        return self.mab1(X, H)


class PMA(nn.Module):
    def __init__(self, dim, num_heads, num_seeds, ln=False):
        super(PMA, self).__init__()
        self.S = nn.Parameter(torch.Tensor(1, num_seeds, dim))
        nn.init.xavier_uniform_(self.S)
        self.mab = MAB(dim, dim, dim, num_heads, ln=ln)

    def forward(self, X):
        return self.mab(self.S.repeat(X.size(0), 1, 1), X)


class DeepSet(nn.Module):
    def __init__(self, dim_input, num_outputs, dim_output, dim_hidden=128):
        super(DeepSet, self).__init__()
        self.num_outputs = num_outputs
        self.dim_output = dim_output
        self.enc = nn.Sequential(
            nn.Linear(dim_input, dim_hidden),
            nn.ReLU(),
            nn.Linear(dim_hidden, dim_hidden),
            nn.ReLU(),
            nn.Linear(dim_hidden, dim_hidden),
            nn.ReLU(),
            nn.Linear(dim_hidden, dim_hidden))
        self.dec = nn.Sequential(
            nn.Linear(dim_hidden, dim_hidden),
            nn.ReLU(),
            nn.Linear(dim_hidden, dim_hidden),
            nn.ReLU(),
            nn.Linear(dim_hidden, dim_hidden),
            nn.ReLU(),
            nn.Linear(dim_hidden, num_outputs * dim_output))

    def forward(self, X):
        X = self.enc(X).mean(-2)
        X = self.dec(X).reshape(-1, self.num_outputs, self.dim_output)
        return X


class SetTransformer(nn.Module):
    def __init__(self, dim_input, num_outputs, dim_output,
                 num_inds=32, dim_hidden=128, num_heads=4, ln=False):
        super(SetTransformer, self).__init__()
        self.enc = nn.Sequential(
            ISAB(dim_input, dim_hidden, num_heads, num_inds, ln=ln),
            ISAB(dim_hidden, dim_hidden, num_heads, num_inds, ln=ln))
        self.dec = nn.Sequential(
            PMA(dim_hidden, num_heads, num_outputs, ln=ln),
            SAB(dim_hidden, dim_hidden, num_heads, ln=ln),
            SAB(dim_hidden, dim_hidden, num_heads, ln=ln),
            nn.Linear(dim_hidden, dim_output))

    def forward(self, X):
        return self.dec(self.enc(X))


# max_regression_demo: SmallSetTransformer and DeepSet learn max(set)
class SmallSetTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(
            SAB(dim_in=1, dim_out=16, num_heads=2),
            SAB(dim_in=16, dim_out=16, num_heads=2),
        )
        self.dec = nn.Sequential(
            PMA(dim=16, num_heads=2, num_seeds=1),
            nn.Linear(in_features=16, out_features=1),
        )

    def forward(self, x):
        x = self.enc(x)
        x = self.dec(x)
        return x.squeeze(-1)


def gen_data(batch_size, set_size=10):
    x = np.random.uniform(1, 100, (batch_size, set_size, 1))
    y = np.max(x, axis=1)
    x, y = torch.from_numpy(x).float(), torch.from_numpy(y).float()
    return x, y


def train(model, steps=12):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.L1Loss()
    losses = []
    for _ in range(steps):
        x, y = gen_data(batch_size=2 ** 4)
        loss = criterion(model(x).view(y.shape), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


torch.manual_seed(0)
np.random.seed(0)

for name, model in [("deepset", DeepSet(dim_input=1, num_outputs=1, dim_output=1, dim_hidden=16)),
                    ("settransformer", SmallSetTransformer())]:
    print(name, "params", sum(p.numel() for p in model.parameters() if p.requires_grad))
    print(name, "keys", list(model.state_dict().keys())[:8])
    losses = train(model)
    print(name, "losses", ["%.4f" % v for v in losses])
    x, y = gen_data(batch_size=3)
    out = model(x)
    print(name, "pred", out.reshape(-1), y.reshape(-1), out.grad_fn.name())

# the full SetTransformer (ISAB encoder, PMA + SAB decoder, LayerNorm), a clustering-style output
st = SetTransformer(dim_input=2, num_outputs=3, dim_output=5, num_inds=4, dim_hidden=16,
                    num_heads=4, ln=True)
print(st)
X = torch.randn(4, 7, 2)
out = st(X)
print("out", out.shape, out.grad_fn.name())
print("out[0]", out[0])
loss = out.logsumexp(-1).mean()
loss.backward()
for n, p in st.named_parameters():
    if n.endswith(".I") or n.endswith(".S") or "ln0" in n:
        print(n, tuple(p.shape), "%.5f" % p.grad.norm().item())
# permutation invariance of the pooled output
perm = torch.randperm(7)
print("perm-invariant", torch.allclose(st(X[:, perm]), out, atol=1e-5))
# MAB head split/merge: 4 heads of 4 on a (2, 3, 16) batch
mab = MAB(16, 16, 16, num_heads=4)
q = torch.randn(2, 3, 16)
k = torch.randn(2, 5, 16)
o = mab(q, k)
print("mab", o.shape, o.sum().item())
