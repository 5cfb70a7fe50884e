"""Descriptive statistics as the torch docs' examples and data-science ports use them: quantile/
nanquantile with every interpolation mode, dim/keepdim and tensor q, histc, histogram with bins
tensor/weight/density, histogramdd, bucketize/searchsorted (right, side, sorter, out_int32),
cov with correction/fweights/aweights, corrcoef, var/std/var_mean/std_mean with correction,
median/nanmedian/mode/kthvalue, aminmax, cummax/logcumsumexp, and their error messages."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))

torch.manual_seed(0)
torch.set_printoptions(precision=5)

a = torch.randn(4, 5)
q = torch.tensor([0.1, 0.5, 0.9])
for mode in ["linear", "lower", "higher", "midpoint", "nearest"]:
    print(mode, torch.quantile(a, q, dim=1, interpolation=mode))
    print("  flat", torch.quantile(a, 0.3, interpolation=mode), a.quantile(0.75, dim=0, keepdim=True))
n = a.clone()
n[0, 1] = float("nan")
n[2, :] = float("nan")
print("nanquantile", torch.nanquantile(n, q, dim=1), torch.quantile(n, 0.5, dim=1))
print("nanquantile keepdim", n.nanquantile(torch.tensor(0.25), dim=0, keepdim=True))
print("quantile double", torch.quantile(a.double(), 0.4))
for bad in [lambda: torch.quantile(a, 1.5), lambda: torch.quantile(a.long(), 0.5),
            lambda: torch.quantile(a, torch.tensor([[0.5]])),
            # interpolation="cubic" kept out: requests13.md "[H1] quantile(interpolation=bad)"
            lambda: torch.quantile(a, q.double())]:
    try:
        bad()
    except Exception as e:
        print(type(e).__name__, e)

x = torch.tensor([1.0, 2.0, 1.0, 4.0, 2.5, 0.0, -1.0, 7.0])
print("histc", torch.histc(x, bins=4, min=0, max=3), torch.histc(x, bins=5))
print("histc const", torch.histc(torch.ones(3), bins=3))
h = torch.histogram(x, bins=4)
print("histogram", h.hist, h.bin_edges, type(h).__name__)
h = torch.histogram(x, bins=torch.tensor([-1.0, 0.5, 2.0, 8.0]), weight=torch.arange(8.0))
print("histogram w", h)
h = torch.histogram(x, bins=3, range=(0.0, 3.0), density=True)
print("histogram density", h.hist, h.bin_edges)
pts = torch.tensor([[0.0, 1.0], [1.0, 1.0], [2.0, 0.0], [2.0, 2.0], [0.5, 1.5]])
hd = torch.histogramdd(pts, bins=[2, 2])
print("histogramdd", hd.hist, hd.bin_edges)
hd = torch.histogramdd(pts, bins=[2, 3], range=[0.0, 2.0, 0.0, 3.0],
                       weight=torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0]), density=True)
print("histogramdd w", hd.hist, hd.bin_edges)
try:
    torch.histc(x.long(), bins=3)
except Exception as e:
    print(type(e).__name__, e)

bnd = torch.tensor([1, 3, 5, 7, 9])
v = torch.tensor([[3, 6, 9], [3, 6, 9]])
print("bucketize", torch.bucketize(v, bnd), torch.bucketize(v, bnd, right=True),
      torch.bucketize(5, bnd), torch.bucketize(v, bnd, out_int32=True).dtype)
ss = torch.tensor([[1, 3, 5, 7, 9], [2, 4, 6, 8, 10]])
print("searchsorted", torch.searchsorted(ss, v), torch.searchsorted(ss, v, side="right"),
      torch.searchsorted(ss, v, right=True, out_int32=True))
uns = torch.tensor([5.0, 1.0, 9.0, 3.0])
print("sorter", torch.searchsorted(uns, torch.tensor([2.0, 6.0]), sorter=torch.argsort(uns)))
print("scalar", torch.searchsorted(torch.tensor([0.0, 1.0, 2.0]), 1.5))
for bad in [lambda: torch.searchsorted(ss, torch.tensor([1, 2])),
            lambda: torch.searchsorted(bnd, v, side="middle"),
            lambda: torch.searchsorted(bnd, v, side="left", right=True)]:
    try:
        bad()
    except Exception as e:
        print(type(e).__name__, e)

obs = torch.tensor([[0.0, 1.0, 2.0, 4.0], [2.0, 1.0, 0.5, 0.0], [1.0, 3.0, 2.0, 5.0]])
print("cov", torch.cov(obs), torch.cov(obs, correction=0))
fw = torch.tensor([1, 2, 1, 3])
aw = torch.tensor([0.5, 1.0, 2.0, 1.0])
print("cov w", torch.cov(obs, fweights=fw), torch.cov(obs, aweights=aw),
      torch.cov(obs, correction=2, fweights=fw, aweights=aw))
print("cov 1d", torch.cov(obs[0]), "corrcoef", torch.corrcoef(obs))
print("corrcoef const", torch.corrcoef(torch.tensor([[1.0, 1.0, 1.0], [1.0, 2.0, 3.0]])))
for bad in [lambda: torch.cov(obs, fweights=torch.tensor([1.0, 2.0, 1.0, 3.0])),
            lambda: torch.cov(obs, fweights=torch.tensor([1, -2, 1, 3])),
            lambda: torch.cov(torch.zeros(2, 2, 2)),
            lambda: torch.cov(obs, aweights=torch.tensor([1.0, 2.0]))]:
    try:
        bad()
    except Exception as e:
        print(type(e).__name__, e)

print("var", a.var(), a.var(1, unbiased=False), torch.var(a, dim=0, correction=2, keepdim=True))
print("std", a.std(dim=(0, 1)), torch.std(a, 1, True, True))
print("var_mean", torch.var_mean(a, 1), torch.std_mean(a, dim=0, correction=0))
print("one elem", torch.var(torch.tensor([3.0])), torch.std(torch.tensor([1.0, 2.0]), correction=3))

m = torch.tensor([[2.0, 1.0, 3.0, 1.0], [float("nan"), 4.0, 0.0, 4.0]])
print("median", torch.median(m), m.median(dim=1), torch.nanmedian(m), m.nanmedian(1))
print("median even", torch.tensor([1.0, 2.0, 3.0, 4.0]).median())
print("mode", torch.tensor([[1, 2, 2, 3, 3], [4, 4, 1, 1, 0]]).mode(1))
print("kthvalue", torch.kthvalue(a, 2, dim=1), torch.kthvalue(a, 1, 0, keepdim=True).indices)
print("aminmax", torch.aminmax(a), torch.aminmax(a, dim=1, keepdim=True))
print("cummax", torch.cummax(x, 0), torch.cummin(x, 0).indices)
print("logcumsumexp", torch.logcumsumexp(a[0], 0))
print("count_nonzero", torch.count_nonzero(obs, dim=1), "nansum", m.nansum(1), "nanmean", m.nanmean(0))
print("RESULT: done")
