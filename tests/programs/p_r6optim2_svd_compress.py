"""Low-rank compression of a trained model, shrunk from IntelLabs/distiller's truncated-SVD
example (truncated_svd with torch.svd, a TruncatedSVD module replacing a Linear by two with
``weight.data`` assigned the factors, the preserve ratio) and the usual conv variant (weight
reshaped to (out, in*k*k), a k x k conv into r channels followed by a 1x1 conv), choosing the
rank by kept spectral energy, torch.svd_lowrank as the randomized alternative, then a short
fine-tune of the compressed model. Prints only sign-invariant quantities."""
import copy
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


def truncated_svd(W, l):
    """Compress the weight matrix W of an inner product (fully connected) layer
    using truncated SVD."""
    U, s, V = torch.svd(W, some=True)
    Ul = U[:, :l]
    sl = s[:l]
    V = V.t()
    Vl = V[:l, :]
    SV = torch.mm(torch.diag(sl), Vl)
    return Ul, SV


class TruncatedSVD(nn.Module):
    def __init__(self, replaced_gemm, gemm_weights, preserve_ratio):
        super(TruncatedSVD, self).__init__()
        self.replaced_gemm = replaced_gemm
        print("W = {}".format(gemm_weights.shape))
        self.U, self.SV = truncated_svd(gemm_weights.data, int(preserve_ratio * gemm_weights.size(0)))
        print("U = {}".format(self.U.shape))
        self.fc_u = nn.Linear(self.U.size(1), self.U.size(0))
        self.fc_u.weight.data = self.U
        self.fc_u.bias.data = replaced_gemm.bias.data.clone()
        print("SV = {}".format(self.SV.shape))
        self.fc_sv = nn.Linear(self.SV.size(1), self.SV.size(0), bias=False)
        self.fc_sv.weight.data = self.SV

    def forward(self, x):
        x = self.fc_sv.forward(x)
        x = self.fc_u.forward(x)
        return x


def low_rank_conv(conv, rank):
    out_c, in_c, kh, kw = conv.weight.shape
    U, S, Vh = torch.linalg.svd(conv.weight.data.reshape(out_c, -1), full_matrices=False)
    first = nn.Conv2d(in_c, rank, (kh, kw), stride=conv.stride, padding=conv.padding, bias=False)
    first.weight.data.copy_((S[:rank, None] * Vh[:rank]).view(rank, in_c, kh, kw))
    second = nn.Conv2d(rank, out_c, 1)
    second.weight.data.copy_(U[:, :rank, None, None])
    second.bias.data.copy_(conv.bias.data)
    return nn.Sequential(first, second)


def rank_for_energy(s, keep):
    energy = torch.cumsum(s ** 2, 0) / (s ** 2).sum()
    return int(torch.searchsorted(energy, torch.tensor(keep)).item()) + 1


def count(m):
    return sum(p.numel() for p in m.parameters())


torch.manual_seed(0)
X = torch.randn(128, 2, 8, 8)
true = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.Tanh(), nn.Flatten(), nn.Linear(192, 5))
with torch.no_grad():
    y = true(X).argmax(1)
model = nn.Sequential(nn.Conv2d(2, 8, 3, padding=1), nn.ReLU(), nn.Flatten(),
                      nn.Linear(8 * 64, 64), nn.ReLU(), nn.Linear(64, 5))
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
for step in range(40):
    idx = torch.randint(0, 128, (32,))
    loss = F.cross_entropy(model(X[idx]), y[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 9:
        print("train step %d loss %.5f" % (step, loss.item()))


def evaluate(m):
    with torch.no_grad():
        out = m(X)
        return F.cross_entropy(out, y).item(), (out.argmax(1) == y).float().mean().item()


print("dense params", count(model), "loss %.5f acc %.4f" % evaluate(model))
W = model[3].weight
s = torch.linalg.svdvals(W.data)
print("top singular values", [round(v, 4) for v in s[:4].tolist()], "rank 90% energy",
      rank_for_energy(s, 0.9), "99%", rank_for_energy(s, 0.99))
for ratio in (0.5, 0.25, 0.125):
    compressed = copy.deepcopy(model)
    compressed[3] = TruncatedSVD(compressed[3], compressed[3].weight, ratio)
    sv = compressed[3]
    approx = sv.fc_u.weight @ sv.fc_sv.weight
    rel = (approx - W).norm() / W.norm()
    tail = (s[int(ratio * 64):] ** 2).sum().sqrt() / s.norm()
    print("  ratio", ratio, "params", count(compressed), "rel err %.5f (Eckart-Young %.5f)" % (rel.item(), tail.item()),
          "loss %.5f acc %.4f" % evaluate(compressed), sv.fc_u.weight.is_contiguous(),
          tuple(sv.fc_u.weight.stride()))
# the randomized version
torch.manual_seed(5)
U, S, V = torch.svd_lowrank(W.data, q=8, niter=3)
print("svd_lowrank", tuple(U.shape), tuple(S.shape), tuple(V.shape),
      "top S within 5%", bool(((S[:4] - s[:4]).abs() / s[:4]).max() < 0.05),
      "recon err %.4f" % ((U * S) @ V.t() - W).norm().item())
# conv layer and a fine-tune of the compressed model
compressed = copy.deepcopy(model)
r = rank_for_energy(torch.linalg.svdvals(compressed[0].weight.data.reshape(8, -1)), 0.9)
compressed[0] = low_rank_conv(compressed[0], r)
compressed[3] = TruncatedSVD(compressed[3], compressed[3].weight, 0.25)
print(compressed)
print("conv rank", r, "params", count(compressed), "loss %.5f acc %.4f" % evaluate(compressed))
print("conv out rel diff %.5f" % ((compressed[0](X) - model[0](X)).norm() / model[0](X).norm()).item())
opt = torch.optim.SGD(compressed.parameters(), lr=0.02, momentum=0.5)
for step in range(20):
    idx = torch.randint(0, 128, (32,))
    loss = F.cross_entropy(compressed(X[idx]), y[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
print("fine-tuned loss %.5f acc %.4f" % evaluate(compressed))
print(sorted(compressed.state_dict().keys()))
try:
    truncated_svd(torch.randn(3, 4, 5), 2)
except Exception as e:
    print(type(e).__name__, e)
try:
    compressed[3].fc_u.weight.data = torch.randn(64, 3)
    compressed(X[:2])
except Exception as e:
    print(type(e).__name__, e)
