"""PCA three ways (svd / eigh of the covariance / torch.pca_lowrank) with explained variance, then
spectral clustering on a kNN graph (the scikit-learn-style tutorial written in torch), plus
torch.cov/corrcoef, svd_lowrank and lobpcg on the graph Laplacian."""

# compare: rtol=1e-4 atol=1e-4
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))

torch.manual_seed(0)
n, d = 60, 5
latent = torch.randn(n, 2, dtype=torch.float64)
mix = torch.tensor([[3.0, 1.0, 0.5, 0.0, 0.2], [0.0, 1.5, -1.0, 0.7, 0.1]], dtype=torch.float64)
X = latent @ mix + 0.1 * torch.randn(n, d, dtype=torch.float64)
mean = X.mean(dim=0, keepdim=True)
Xc = X - mean
print("mean", mean)

U, S, Vh = torch.linalg.svd(Xc, full_matrices=False)
print(U.shape, S.shape, Vh.shape)
explained_variance = S**2 / (n - 1)
ratio = explained_variance / explained_variance.sum()
print("singular values", S)
print("explained variance ratio", ratio, ratio.cumsum(0))
k = int((ratio.cumsum(0) < 0.99).sum().item()) + 1
print("components for 99%:", k)
# fix sign like sklearn's svd_flip so the comparison is deterministic
max_abs = torch.argmax(Vh.abs(), dim=1)
signs = torch.sign(Vh[torch.arange(Vh.shape[0]), max_abs])
Vh = Vh * signs[:, None]
Z = Xc @ Vh[:k].T
print("scores", Z[:3])
X_rec = Z @ Vh[:k] + mean
print(f"reconstruction mse {torch.mean((X - X_rec) ** 2).item():.6e}")

C = torch.cov(X.T)
print("cov", C.shape, torch.allclose(C, Xc.T @ Xc / (n - 1)))
evals, evecs = torch.linalg.eigh(C)
evals, order = evals.sort(descending=True)
print("eigh", evals, torch.allclose(evals, explained_variance))
evecs = evecs[:, order]
print(torch.allclose(evecs.abs(), Vh.T.abs(), atol=1e-6))
print(torch.linalg.eigvalsh(C, UPLO="U").flip(0))
print("corr", torch.corrcoef(X.T)[0])
print(
    torch.cov(X.T, correction=0).diag(),
    torch.cov(X.T, fweights=torch.ones(n, dtype=torch.long)).diag(),
)
print(torch.var(X, dim=0), torch.std_mean(X, dim=0, unbiased=True)[0])

U2, S2, V2 = torch.pca_lowrank(X, q=3, center=True, niter=4)
print("pca_lowrank", U2.shape, S2, V2.shape)
print(torch.allclose(S2[:2], S[:2], rtol=1e-6))
U3, S3, V3 = torch.svd_lowrank(Xc, q=3, niter=4)
print("svd_lowrank", S3)
U4, S4, V4 = torch.svd(Xc, some=True)
print("svd", S4, V4.shape)

# spectral clustering on two blobs
torch.manual_seed(1)
a = torch.randn(15, 2, dtype=torch.float64) * 0.3 + torch.tensor([2.0, 0.0], dtype=torch.float64)
b = torch.randn(15, 2, dtype=torch.float64) * 0.3 - torch.tensor([2.0, 0.0], dtype=torch.float64)
P = torch.cat([a, b])
D2 = torch.cdist(P, P) ** 2
print("cdist", D2.shape, D2[0, :4])
sigma = D2.median()
W = torch.exp(-D2 / sigma)
W.fill_diagonal_(0)
knn = W.topk(5, dim=1).indices
mask = torch.zeros_like(W, dtype=torch.bool)
mask.scatter_(1, knn, True)
print("knn symmetric", (mask | mask.T).sum().item(), knn[0].sort().values)
deg = W.sum(1)
Dm = torch.diag(deg.pow(-0.5))
Lsym = torch.eye(30, dtype=torch.float64) - Dm @ W @ Dm
ev, vec = torch.linalg.eigh(Lsym)
print("laplacian eigenvalues", ev[:4].clamp_min(0))    # (the first is 0 up to LAPACK's noise)
fiedler = vec[:, 1]
labels = (fiedler * fiedler[0].sign() > 0).long()
print("labels", labels)
print("cluster sizes", torch.bincount(labels), labels[:15].unique(), labels[15:].unique())
lv, lvec = torch.lobpcg(
    Lsym + torch.eye(30, dtype=torch.float64),
    k=2,
    largest=False,
    niter=50,
    X=torch.randn(30, 2, dtype=torch.float64),
)
print("lobpcg", lv - 1)
print(
    torch.linalg.matrix_rank(W),
    torch.linalg.matrix_rank(Xc, tol=1.0),
    torch.linalg.matrix_rank(C, hermitian=True, rtol=1e-3),
)
print("RESULT: ok")
