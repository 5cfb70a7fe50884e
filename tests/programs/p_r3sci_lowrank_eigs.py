"""Large-scale eigen/low-rank tools in torch (torch.lobpcg / torch.svd_lowrank / torch.pca_lowrank
docs and spectral-clustering notebooks): graph Laplacian spectra with lobpcg (largest and
smallest), randomized SVD and PCA vs the full decompositions, sparse inputs to svd_lowrank,
spectral clustering embedding and a low-rank denoising step."""

import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)

# a ring-of-cliques graph: 3 dense blocks of 8 nodes, weakly connected
n, k = 24, 3
labels = torch.arange(n) // 8
W = (labels[:, None] == labels[None, :]).double() * 0.9 + 0.02
W = W + 0.01 * torch.rand(n, n)
W = (W + W.T) / 2
W.fill_diagonal_(0)
deg = W.sum(1)
Lap = torch.diag(deg) - W
Dm12 = torch.diag(deg.rsqrt())
Lsym = torch.eye(n) - Dm12 @ W @ Dm12
print("laplacian", Lap.shape, f"sym {torch.allclose(Lap, Lap.T)}",
      f"row sums {Lap.sum(1).abs().max().item():.2e}")

ev_full, evec_full = torch.linalg.eigh(Lsym)
print("smallest eigenvalues", ev_full[:4])
print("eigengap", f"{(ev_full[k] - ev_full[k - 1]).item():.5f}")

X0 = torch.randn(n, k)
ev_top, V_top = torch.lobpcg(Lsym, k=k, X=X0, largest=True, niter=60, tol=1e-10)
print("lobpcg largest", ev_top, "full", ev_full.flip(0)[:k])
# (the top eigenvalues are nearly degenerate: after 60 iterations the residual is ~1e-5 and its
# last digits depend on rounding, so only its size is checked)
print("lobpcg residual", (Lsym @ V_top - V_top * ev_top).norm().item() < 1e-3)
shifted = 2 * torch.eye(n) - Lsym
ev_s, V_s = torch.lobpcg(shifted, k=k, X=torch.randn(n, k), largest=True, niter=80, tol=1e-10)
print("lobpcg smallest via shift", 2 - ev_s)

# spectral clustering embedding from the k smallest eigenvectors
emb = evec_full[:, :k]
emb = emb / emb.norm(dim=1, keepdim=True)
centers = emb[[0, 8, 16]]
assign = torch.cdist(emb, centers).argmin(1)
print("clusters", assign.tolist(), "purity", (assign == labels).double().mean().item())

# randomized SVD vs exact SVD on a low-rank + noise matrix
A = torch.randn(60, 5) @ torch.randn(5, 40) + 0.01 * torch.randn(60, 40)
U, S, V = torch.svd_lowrank(A, q=8, niter=4)
S_full = torch.linalg.svdvals(A)
print("svd_lowrank", U.shape, S.shape, V.shape)
print("top singular values", S[:5], S_full[:5])
print("rel err", ((S[:5] - S_full[:5]).abs() / S_full[:5]).max().item() < 1e-8)
recon = U[:, :5] @ torch.diag(S[:5]) @ V[:, :5].T
print(f"rank-5 recon err {(A - recon).norm().item():.5f} vs tail "
      f"{S_full[5:].pow(2).sum().sqrt().item():.5f}")
M = torch.randn(40)
U2, S2, V2 = torch.svd_lowrank(A, q=6, M=M.expand(60, 40))
print("centred svd_lowrank", S2[:3])

# pca_lowrank: centred principal directions, compared with the covariance eigenvectors
data = torch.randn(200, 3) @ torch.tensor([[3.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.2]])
U3, S3, V3 = torch.pca_lowrank(data, q=3, center=True)
explained = S3 ** 2 / (data.shape[0] - 1)
cov_ev = torch.linalg.eigvalsh(torch.cov(data.T)).flip(0)
print("pca explained var", explained, "cov eigvals", cov_ev)
proj = (data - data.mean(0)) @ V3[:, :2]
print("projection", proj.shape, f"var {proj.var(0).sum().item():.4f}")
U4, S4, V4 = torch.pca_lowrank(data, center=False)
print("uncentred", S4)

# sparse input to svd_lowrank
Sp = torch.zeros(30, 20)
idx = torch.randint(0, 30, (60,)), torch.randint(0, 20, (60,))
Sp[idx] = torch.randn(60)
U5, S5, V5 = torch.svd_lowrank(Sp.to_sparse(), q=4, niter=6)
print("sparse svd_lowrank", S5, torch.linalg.svdvals(Sp)[:4])

# low-rank denoising of a smooth field
x = torch.linspace(0, 1, 32)
field = torch.sin(3 * x)[:, None] * torch.cos(2 * x)[None, :] + 0.5 * x[:, None] * x[None, :]
noisy = field + 0.05 * torch.randn(32, 32)
Ud, Sd, Vd = torch.linalg.svd(noisy)
den = Ud[:, :2] @ torch.diag(Sd[:2]) @ Vd[:2]
print(f"noisy err {(noisy - field).norm().item():.4f} "
      f"denoised err {(den - field).norm().item():.4f}")
print("RESULT:", f"{ev_full[k].item():.5f}")
