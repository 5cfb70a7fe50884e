""""100 NumPy exercises" solved in PyTorch (the classic rougier/numpy-100 list, torch
translations as in the popular "100 PyTorch exercises" notebooks), a selection printed."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))

print(torch.__name__ != "", torch.zeros(10))                             # 3
Z = torch.zeros(10)
print(Z.numel() * Z.element_size(), "bytes")                              # 4
Z[4] = 1                                                                  # 6
print(Z)
print(torch.arange(10, 50))                                               # 7
print(torch.arange(10).flip(0))                                           # 8
print(torch.arange(9).reshape(3, 3))                                      # 9
print(torch.nonzero(torch.tensor([1, 2, 0, 0, 4, 0])))                    # 10
print(torch.eye(3))                                                       # 11
torch.manual_seed(42)
print(torch.rand(3, 3, 3).shape)                                          # 12
Z = torch.rand(10, 10)
print(Z.min(), Z.max())                                                   # 13
print(torch.rand(30).mean())                                              # 14
Z = torch.ones(5, 5)
Z[1:-1, 1:-1] = 0                                                         # 15
print(Z)
print(torch.nn.functional.pad(torch.ones(3, 3), (1, 1, 1, 1), mode="constant", value=0))  # 16
print(torch.tensor(0.0) * float("nan"), float("nan") == float("nan"),
      torch.tensor(float("inf")) > float("nan"), torch.tensor(float("nan")) - float("nan"),
      torch.tensor(0.3) == 3 * torch.tensor(0.1))                         # 17
print(torch.diag(1 + torch.arange(4), diagonal=-1))                       # 18
Z = torch.zeros(8, 8, dtype=torch.int64)
Z[1::2, ::2] = 1
Z[::2, 1::2] = 1
print(Z)                                                                  # 19
print(torch.unravel_index(torch.tensor(99), (6, 7, 8)))                   # 20
print(torch.tensor([[0, 1], [1, 0]]).tile(4, 4).shape)                    # 21
Z = torch.rand(5, 5)
print((Z - Z.mean()) / Z.std())                                           # 22
print(torch.ones(5, 3) @ torch.ones(3, 2))                                # 24
Z = torch.arange(11)
Z[(3 < Z) & (Z < 8)] *= -1
print(Z)                                                                  # 25
print(sum(range(5), -1), torch.sum(torch.arange(5), -1))                  # 26
Z = torch.arange(5)
# (the original writes ``2 << Z >> 2``: Tensor.__rlshift__ is missing in ember, reported)
print(Z ** Z, torch.bitwise_left_shift(2, Z) >> 2, Z < -Z, 1j * Z, Z / 1 / 1)  # 27
print(torch.tensor(0) // torch.tensor(1), torch.tensor([float("nan")]).to(torch.int64).shape)  # 28
Z = torch.empty(10).uniform_(-10, +10)
print(torch.copysign(torch.ceil(torch.abs(Z)), Z))                        # 29
Z1 = torch.randint(0, 10, (10,))
Z2 = torch.randint(0, 10, (10,))
print(Z1, Z2, Z1[torch.isin(Z1, Z2)].unique())                            # 30
print(torch.sqrt(torch.tensor(-1.0)), torch.sqrt(torch.tensor(-1 + 0j)))  # 32
Z = torch.zeros(5, 5)
Z += torch.arange(5)
print(Z)                                                                  # 38
print(torch.linspace(0, 1, 12)[1:-1])                                     # 39
Z = torch.rand(10)
print(Z.sort().values)                                                    # 40
print(torch.arange(10).sum())                                             # 41
A = torch.randint(0, 2, (5,))
B = torch.randint(0, 2, (5,))
print(torch.allclose(A.float(), B.float()), torch.equal(A, B))           # 42
Z = torch.zeros(10)
Z.requires_grad_(False)
print(Z.is_leaf)                                                          # 43
Z = torch.rand(10, 2)
X, Y = Z[:, 0], Z[:, 1]
R = torch.sqrt(X ** 2 + Y ** 2)
T = torch.atan2(Y, X)
print(R, T)                                                               # 44
Z = torch.rand(10)
Z[Z.argmax()] = 0
print(Z)                                                                  # 45
X, Y = torch.meshgrid(torch.linspace(0, 1, 3), torch.linspace(0, 1, 2), indexing="xy")
print(X, Y)                                                               # 46
X = torch.arange(8.0)
Y = X + 0.5
C = 1.0 / (X[:, None] - Y[None, :])
print(torch.linalg.det(C[:4, :4]))                                        # 47
for dtype in [torch.int8, torch.int32, torch.int64]:
    print(torch.iinfo(dtype).min, torch.iinfo(dtype).max)
for dtype in [torch.float32, torch.float64]:
    print(torch.finfo(dtype).min, torch.finfo(dtype).max, torch.finfo(dtype).eps)  # 48
Z = torch.arange(100.0)
v = torch.empty(1).uniform_(0, 100)
print(Z[(Z - v).abs().argmin()])                                          # 50
Z = torch.rand(10, 2)
D = torch.cdist(Z, Z)
print(D.shape, torch.allclose(D, D.T), D.diagonal().abs().max() < 1e-5)   # 52
Z = (torch.rand(10) * 100).to(torch.int32)
print(Z.dtype, Z.to(torch.float32).dtype)                                 # 53
Z = torch.arange(9).reshape(3, 3)
for index, value in zip(torch.cartesian_prod(torch.arange(3), torch.arange(3)), Z.flatten()):
    if value % 4 == 0:
        print(tuple(index.tolist()), value.item())                       # 55
X, Y = torch.meshgrid(torch.linspace(-1, 1, 5), torch.linspace(-1, 1, 5), indexing="ij")
D = torch.sqrt(X * X + Y * Y)
G = torch.exp(-((D - 0.0) ** 2 / (2.0 * 1.0 ** 2)))
print(G)                                                                  # 56
Z = torch.zeros(5, 5)
Z.view(-1)[torch.randperm(25)[:3]] = 1
print(Z.sum())                                                            # 57
X = torch.rand(5, 10)
Y = X - X.mean(dim=1, keepdim=True)
print(Y.mean(1).abs().max() < 1e-6)                                       # 58
Z = torch.randint(0, 10, (3, 3))
print(Z, Z[Z[:, 1].argsort()])                                           # 59
Z = torch.randint(0, 3, (3, 10))
print((~Z.any(dim=0)).any())                                              # 60
Z = torch.rand(10)
z = 0.5
print(Z.flatten()[(Z - z).abs().argmin()])                                # 61
A = torch.arange(3).reshape(3, 1)
B = torch.arange(3).reshape(1, 3)
print(A + B)                                                              # 62
Z = torch.ones(10)
Ix = torch.randint(0, len(Z), (20,))
Z += torch.bincount(Ix, minlength=len(Z))
print(Z)                                                                  # 64
Z2 = torch.ones(10)
Z2.index_add_(0, Ix, torch.ones(20))
print(torch.equal(Z, Z2))                                                 # 64b
X = torch.tensor([1, 2, 3, 4, 5, 6])
Ix = torch.tensor([1, 3, 9, 3, 4, 1])
F = torch.zeros(10, dtype=X.dtype).index_add_(0, Ix, X)
print(F)                                                                  # 65
w, h = 16, 16
Ix = torch.randint(0, 2, (h, w, 3)).to(torch.uint8)
F = Ix[..., 0].long() * (256 * 256) + Ix[..., 1].long() * 256 + Ix[..., 2].long()
print(len(torch.unique(F)))                                              # 66
A = torch.randint(0, 10, (3, 4, 3, 4))
print(A.sum(dim=(-2, -1)))                                                # 67
D = torch.rand(100)
S = torch.randint(0, 10, (100,))
D_sums = torch.zeros(10).index_add_(0, S, D)
D_counts = torch.bincount(S, minlength=10)
print(D_sums / D_counts)                                                  # 68
A = torch.rand(5, 5)
B = torch.rand(5, 5)
print(torch.diag(A @ B), torch.einsum("ij,ji->i", A, B), (A * B.T).sum(1))  # 69
Z = torch.tensor([1, 2, 3, 4, 5])
nz = 3
Z0 = torch.zeros(len(Z) + (len(Z) - 1) * nz, dtype=Z.dtype)
Z0[::nz + 1] = Z
print(Z0)                                                                 # 70
A = torch.ones(5, 5, 3)
B = 2 * torch.ones(5, 5)
print((A * B[:, :, None]).shape)                                         # 71
A = torch.arange(25).reshape(5, 5)
A[[0, 1]] = A[[1, 0]]
print(A)                                                                  # 72
faces = torch.randint(0, 100, (10, 3))
F = faces.repeat(1, 2).roll(-1, dims=1).reshape(len(faces) * 3, 2)
F = torch.sort(F, dim=1).values
G = torch.unique(F, dim=0)
print(G.shape)                                                            # 73
C = torch.bincount(torch.tensor([1, 1, 2, 3, 4, 4, 6]))
A = torch.repeat_interleave(torch.arange(len(C)), C)
print(A)                                                                  # 74


def moving_average(a, n=3):
    ret = torch.cumsum(a, dim=0, dtype=torch.float32)
    ret[n:] = ret[n:] - ret[:-n]
    return ret[n - 1:] / n


print(moving_average(torch.arange(20)))                                   # 75
print(torch.arange(10).unfold(0, 3, 1))                                   # 76
Z = torch.randint(0, 2, (10,))
print(torch.logical_not(Z.bool()), -torch.rand(3))                       # 77
Z = torch.arange(1, 15, dtype=torch.int64)
print(Z.unfold(0, 4, 1))                                                  # 81
Z = torch.rand(5, 5)
print(torch.linalg.matrix_rank(Z))                                        # 82
Z = torch.randint(0, 10, (50,))
print(torch.bincount(Z).argmax())                                         # 83
Z = torch.randint(0, 5, (6, 6))
print(Z.unfold(0, 3, 1).unfold(1, 3, 1).shape)                            # 84
p, n = 4, 3
M = torch.ones(p, n, n)
V = torch.ones(p, n, 1)
print(torch.tensordot(M, V, dims=([0, 2], [0, 1])))                       # 86
Z = torch.ones(8, 8)
k = 4
print(Z.reshape(8 // k, k, 8 // k, k).sum(dim=(1, 3)))                    # 87
Z = torch.arange(10000)
torch.manual_seed(0)
Z = Z[torch.randperm(len(Z))]
n = 5
print(Z.topk(n).values)                                                   # 89
print(torch.cartesian_prod(torch.tensor([1, 2, 3]), torch.tensor([4, 5]), torch.tensor([6, 7])))
A = torch.randint(0, 5, (8, 3))
B = torch.randint(0, 5, (2, 2))
C = (A[..., None, None] == B).any(dim=(-1, -2))
print(torch.where(C.any(1))[0])                                            # 92
Z = torch.randint(0, 5, (10, 3))
E = torch.all(Z[:, 1:] == Z[:, :-1], dim=1)
print(Z[~E].shape)                                                        # 93
Ix = torch.tensor([0, 1, 2, 3, 15, 16, 32, 64, 128], dtype=torch.uint8)
B = ((Ix.reshape(-1, 1) & (2 ** torch.arange(8))) != 0).to(torch.int64)
print(B.flip(-1))                                                         # 95
Z = torch.randint(0, 2, (6, 3))
print(torch.unique(Z, dim=0))                                             # 96
A = torch.rand(3)
B = torch.rand(3)
print(torch.einsum("i->", A), torch.einsum("i,i->i", A, B), torch.einsum("i,i", A, B),
      torch.einsum("i,j->ij", A, B))                                      # 97
X = torch.tensor([1.0, 0.0, 3.0, 8.0])
N = 4
M = torch.logical_and(X.frac() == 0, X.sum() == N)
print(M)                                                                  # 99
X = torch.randn(100)
N = 200
idx = torch.randint(0, X.numel(), (N, X.numel()))
means = X[idx].mean(dim=1)
confint = torch.quantile(means, torch.tensor([0.025, 0.975]))
print(confint)                                                            # 100
print("RESULT:", confint.sum().item())
