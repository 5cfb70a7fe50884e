"""Descriptive statistics and sorting/searching recipes (torch.quantile / torch.sort /
torch.unique / torch.bucketize / torch.histogram docs examples): reductions over dim tuples
with keepdim, std/var with correction, quantiles with every interpolation, NaN-aware
reductions, mode/median, sort/topk/kthvalue, unique and binning."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))

torch.manual_seed(1)
x = torch.randn(2, 3, 4)
print(x.sum(dim=(0, 2)), x.sum((0, 2), keepdim=True).shape, x.mean((-1, -2)), x.mean(()).shape)
print(x.amax(dim=(1, 2)), x.amin((0, 1), keepdim=True).shape, torch.aminmax(x, dim=1).max.shape)
print(x.std(dim=(0, 2)), x.var(1, correction=0), x.var(dim=None, correction=3), x.std(1, True))
print(torch.var_mean(x, dim=(0, 1), correction=0), torch.std_mean(x, 2, keepdim=True)[0].shape)
print(x.logsumexp(dim=(1, 2)), torch.logsumexp(x, -1, keepdim=True).shape)
print(x.norm(dim=(1, 2)), x.norm(p=1, dim=2), torch.linalg.vector_norm(x, ord=3, dim=(0, 2)))
print(x.prod(1).shape, x.count_nonzero(dim=(0, 2)), (x > 0).sum(dim=-1), (x > 0).all(dim=2))
print((x > 0).any(dim=(0, 1)), (x > 1).float().mean(), x.sum(dtype=torch.float64).dtype)
i = torch.arange(12).view(3, 4)
print(i.sum(), i.sum().dtype, i.prod(0), i.mean(dtype=torch.float32), i.float().mean(1),
      i.cumsum(0).dtype, torch.cumsum(i, 1, dtype=torch.float64))
try:
    i.mean()
except Exception as e:
    print(type(e).__name__, e)
try:
    torch.zeros(2, 3).sum(dim=(0, 0))
except Exception as e:
    print(type(e).__name__, e)

q = torch.tensor([0.1, 0.5, 0.9])
v = torch.tensor([[3.0, 1.0, 4.0, 1.5, 5.0], [9.0, 2.0, 6.0, 5.0, 3.0]])
for mode in ["linear", "lower", "higher", "midpoint", "nearest"]:
    print(mode, torch.quantile(v, q, dim=1, interpolation=mode),
          torch.quantile(v, 0.4, interpolation=mode), v.quantile(0.25, dim=0, keepdim=True))
vn = v.clone()
vn[0, 1] = float("nan")
print(torch.quantile(vn, 0.5, dim=1), torch.nanquantile(vn, 0.5, dim=1),
      torch.nanquantile(vn, q, interpolation="nearest"))
print(torch.nanmean(vn), vn.nanmean(dim=1), torch.nansum(vn, 1), vn.nansum(), vn.sum(1))
print(torch.nan_to_num(vn), vn.nan_to_num(nan=-1.0), torch.nan_to_num(
    torch.tensor([float("inf"), -float("inf"), float("nan")]), posinf=9.0, neginf=-9.0))
print(vn.median(), vn.nanmedian(), vn.median(dim=1), vn.nanmedian(dim=1))
print(vn.max(), vn.argmax(), vn.min(dim=1), vn.amax(1), torch.fmax(vn, v), torch.maximum(vn, v))
print(vn.isnan().sum(), vn.isnan().any(1), torch.isnan(vn).nonzero())
print(torch.median(torch.tensor([1.0, 2.0, 3.0, 4.0])), torch.tensor([4, 1, 3, 2]).median())
m = torch.tensor([[1, 2, 2, 3, 3], [0, 0, 5, 5, 5]])
print(torch.mode(m), m.mode(dim=0), torch.mode(m, 1, keepdim=True).values.shape)

s = torch.tensor([3, 1, 2, 3, 1, 3, 0, 2])
print(s.sort(), s.sort(descending=True, stable=True), torch.sort(s, dim=0, stable=True).indices)
print(s.argsort(stable=True, descending=True), torch.msort(s.view(2, 4)), s.view(2, 4).sort(0))
print(s.topk(3), s.float().topk(3, largest=False, sorted=True), torch.topk(v, 2, dim=0))
print(torch.kthvalue(s, 3), v.kthvalue(2, dim=1, keepdim=True))
print(torch.unique(s), torch.unique(s, sorted=True, return_inverse=True))
print(torch.unique(s, return_counts=True), s.unique(return_inverse=True, return_counts=True))
print(torch.unique(torch.tensor([[1, 2], [3, 4], [1, 2]]), dim=0, return_inverse=True,
                   return_counts=True))
print(torch.unique(torch.tensor([[1, 2, 1], [3, 4, 3]]), dim=1))
print(torch.unique_consecutive(s), torch.unique_consecutive(torch.tensor([1, 1, 2, 2, 3, 1, 1]),
                                                             return_inverse=True,
                                                             return_counts=True))
print(torch.unique_consecutive(torch.tensor([[1, 1], [1, 1], [2, 3]]), dim=0))
vals, counts = torch.unique(s, return_counts=True)
print("most common:", vals[counts.argmax()].item(), counts.max().item())

b = torch.tensor([1, 3, 5, 7, 9])
vv = torch.tensor([[3, 6, 9], [3, 6, 9]])
print(torch.bucketize(vv, b), torch.bucketize(vv, b, right=True), torch.bucketize(3, b))
print(torch.bucketize(vv, b, out_int32=True).dtype, torch.searchsorted(b, vv))
print(torch.searchsorted(b, vv, right=True), torch.searchsorted(b, vv, side="right"))
print(torch.searchsorted(torch.tensor([[1, 3, 5], [2, 4, 6]]), torch.tensor([[2], [5]])))
unsorted = torch.tensor([5, 1, 9, 3, 7])
print(torch.searchsorted(unsorted, torch.tensor([4, 8]), sorter=unsorted.argsort()))
print(torch.searchsorted(b.float(), 4.5), torch.searchsorted(b, torch.tensor(4)))
h = torch.tensor([1.0, 2.0, 1.0, 2.5, 4.0, 0.5])
print(torch.histc(h, bins=4, min=0, max=4), h.histc(bins=3), torch.histc(h, 5, min=1, max=2))
print(torch.histogram(h, bins=4), torch.histogram(h, bins=torch.tensor([0.0, 1.0, 2.0, 5.0])))
print(torch.histogram(h, 3, range=(0.0, 3.0), density=True),
      torch.histogram(h, 2, weight=torch.ones(6) * 2))
print(torch.bincount(torch.tensor([0, 1, 1, 3])), torch.bincount(torch.tensor([0, 1, 1]),
                                                                   minlength=5))
print(torch.bincount(torch.tensor([0, 1, 1]), weights=torch.tensor([0.5, 1.0, 2.0])),
      torch.bincount(torch.tensor([], dtype=torch.int64)))
print(torch.cummax(h, 0), torch.cummin(h, dim=0).indices, torch.logcumsumexp(h, 0))
print(torch.cumprod(h, 0), h.cumsum(-1), torch.diff(h.cumsum(0)), torch.diff(i, dim=1, n=2))
print(torch.cov(v), torch.corrcoef(v), torch.cov(v, correction=0, fweights=torch.tensor([1, 2, 1,
                                                                                          1, 3])))
z = (v - v.mean(dim=1, keepdim=True)) / v.std(dim=1, keepdim=True)
print("zscore:", z, z.mean(1), z.std(1))
mn, mx = v.min(dim=1, keepdim=True).values, v.max(dim=1, keepdim=True).values
print("minmax:", (v - mn) / (mx - mn))
print("RESULT:", z.abs().sum().item())
