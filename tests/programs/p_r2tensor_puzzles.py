"""Sasha Rush's "Tensor Puzzles": each function rebuilt from arange/where/broadcasting/indexing
only, checked against the torch reference on random inputs (the notebook's spec tests, with
small fixed samples instead of hypothesis)."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))


def arange(i: int):
    return torch.tensor(range(i))


def where(q, a, b):
    return (q * a) + (~q) * b


def ones(i):
    return where(arange(i) >= 0, 1, 0)


def sum(a):
    return ones(a.shape[0]) @ a[:, None]


def outer(a, b):
    return a[:, None] * b[None, :]


def diag(a):
    return a[arange(a.shape[0]), arange(a.shape[0])]


def eye(j):
    return where(arange(j)[:, None] == arange(j), 1, 0)


def triu(j):
    return where(arange(j)[:, None] <= arange(j), 1, 0)


def cumsum(a):
    return a @ triu(a.shape[0])


def diff(a, i):
    return where(arange(i) == 0, a[arange(i)], a[arange(i)] - a[arange(i) - 1])


def vstack(a, b):
    return where(arange(2)[:, None] == 0, a, b)


def roll(a, i):
    return a[(arange(i) + 1) % i]


def flip(a, i):
    return a[i - arange(i) - 1]


def compress(g, v, i):
    return v @ where(g[:, None], arange(i) == (cumsum(1 * g) - 1)[:, None], 0)


def pad_to(a, i, j):
    return a @ (1 * (arange(i)[:, None] == arange(j)))


def sequence_mask(values, length):
    return where(length[:, None] > arange(values.shape[1]), values, 0)


def bincount(a, j):
    return ones(a.shape[0]) @ eye(j)[a]


def scatter_add(values, link, j):
    return values @ eye(j)[link]


def flatten(a, i, j):
    return a[arange(i * j) // j, arange(i * j) % j]


def linspace(i, j, n):
    return i + (j - i) * 1.0 * arange(n) / max(1, n - 1)


def heaviside(a, b):
    return where(a == 0, b, a > 0)


def repeat(a, d):
    return ones(d)[:, None] @ a[None]


def bucketize(v, boundaries):
    return (1 * (v[:, None] >= boundaries)) @ ones(boundaries.shape[0])


torch.manual_seed(0)
a = torch.randint(-5, 6, (6,))
b = torch.randint(-5, 6, (6,))
g = torch.tensor([True, False, True, True, False, True])
print("ones", ones(4), torch.ones(4, dtype=torch.int64))
print("sum", sum(a), a.sum(0, keepdim=True))
print("outer", outer(a[:3], b[:2]), torch.outer(a[:3], b[:2]))
M = torch.randint(0, 9, (4, 4))
print("diag", diag(M), torch.diagonal(M))
print("eye", torch.equal(eye(4), torch.eye(4, dtype=torch.int64)))
print("triu", torch.equal(triu(4), torch.triu(torch.ones(4, 4, dtype=torch.int64))))
print("cumsum", cumsum(a), torch.cumsum(a, 0))
print("diff", diff(a, 6), torch.cat([a[:1], a.diff()]))
print("vstack", vstack(a, b), torch.vstack([a, b]))
print("roll", roll(a, 6), torch.roll(a, -1))
print("flip", flip(a, 6), torch.flip(a, (0,)))
print("compress", compress(g, a, 6),
      torch.cat([a[g], torch.zeros(6 - int(g.sum()), dtype=a.dtype)]))
print("pad_to", pad_to(a, 6, 8), pad_to(a, 6, 3), torch.nn.functional.pad(a, (0, 2)))
V = torch.randint(1, 9, (3, 5))
L = torch.tensor([2, 5, 0])
print("sequence_mask", sequence_mask(V, L), V * (torch.arange(5)[None] < L[:, None]))
c = torch.randint(0, 5, (8,))
print("bincount", bincount(c, 5), torch.bincount(c, minlength=5))
vals = torch.randint(0, 5, (8,))
print("scatter_add", scatter_add(vals, c, 5),
      torch.zeros(5, dtype=torch.int64).scatter_add(0, c, vals))
F2 = torch.arange(12).view(3, 4)
print("flatten", flatten(F2, 3, 4), F2.flatten())
print("linspace", linspace(0.0, 1.0, 5), torch.linspace(0, 1, 5), linspace(2.0, 3.0, 1))
h = torch.tensor([-1.0, 0.0, 2.0])
print("heaviside", heaviside(h, torch.tensor([0.5, 0.5, 0.5])),
      torch.heaviside(h, torch.tensor([0.5])))
print("repeat", repeat(a[:3], 2), a[:3].repeat(2, 1))
bnd = torch.tensor([1, 3, 5, 7])
v = torch.tensor([0, 1, 2, 6, 7, 9])
print("bucketize", bucketize(v, bnd), torch.bucketize(v, bnd, right=True))
checks = [torch.equal(sum(a), a.sum(0, keepdim=True)), torch.equal(cumsum(a), a.cumsum(0)),
          torch.equal(bincount(c, 5), torch.bincount(c, minlength=5)),
          torch.equal(bucketize(v, bnd), torch.bucketize(v, bnd, right=True)),
          torch.allclose(linspace(0.0, 1.0, 5), torch.linspace(0, 1, 5))]
print("RESULT:", checks)
