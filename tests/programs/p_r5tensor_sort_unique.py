"""The sorting/searching section of the torch API reference, doc examples first and then the
corner cases users ask about ("torch.unique along a dim", "unique_consecutive for run-length
encoding", "stable argsort", "topk of the smallest", "sort with NaN", "searchsorted with a
sorter", "how to print torch.return_types"): sort/argsort/msort, topk/kthvalue/mode/median,
unique/unique_consecutive with every flag and dim, searchsorted/bucketize, their named-tuple
results and the errors of bad arguments."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))


def err(fn):
    try:
        r = fn()
        print("ok", r)
    except Exception as e:
        print(type(e).__name__, e)


torch.manual_seed(3)
# torch.sort docs
x = torch.randn(3, 4)
sorted_, indices = torch.sort(x)
print(sorted_, indices)
print(torch.sort(x, 0))
xs = torch.tensor([0, 1] * 9)
print(xs.sort())
print(xs.sort(stable=True))
r = torch.sort(torch.tensor([3.0, float("nan"), -1.0, float("inf"), float("nan"), -float("inf")]))
print(r, r.values, r[1], type(r).__name__, len(r))
print(torch.sort(torch.tensor([3.0, float("nan"), -1.0]), descending=True))
print(torch.sort(torch.tensor([True, False, True])), torch.sort(torch.tensor([3, 1, 2], dtype=torch.uint8)))
vals, idx = torch.tensor([[2, 1], [1, 1]]).sort(dim=-1, descending=True, stable=True)
print(vals, idx, torch.msort(torch.tensor([[3, 1], [2, 4]])))
out_v, out_i = torch.empty(0), torch.empty(0, dtype=torch.long)
torch.sort(torch.tensor([2.0, 1.0]), out=(out_v, out_i))
print(out_v, out_i)
print(torch.sort(torch.tensor(5.0)), torch.sort(torch.empty(0, 3), dim=0).values.shape)

# argsort
a = torch.tensor([[0.5, 0.1, 0.5], [2.0, -1.0, 2.0]])
print(torch.argsort(a, dim=1), torch.argsort(a, dim=1, descending=True, stable=True),
      a.argsort(0), torch.argsort(a, stable=True, dim=-1))

# topk / kthvalue / mode / median
t = torch.arange(1.0, 6.0)
print(torch.topk(t, 3), torch.topk(t, 3, largest=False), t.topk(2, sorted=True).indices)
print(torch.topk(torch.tensor([[1, 5, 5, 2], [9, 9, 0, 1]]), 2, dim=1))
print(torch.topk(torch.tensor([1.0, float("nan"), 2.0]), 2), torch.topk(t, 0))
err(lambda: torch.topk(t, 6))
err(lambda: torch.topk(t, 2, dim=1))
print(torch.kthvalue(t, 4, 0, True), torch.kthvalue(torch.tensor([[1.0, 9.0], [4.0, 2.0]]), 1))
err(lambda: torch.kthvalue(t, 0))
print(torch.mode(torch.tensor([[2, 2, 1, 1], [3, 1, 3, 1]]), 1))
print(torch.median(torch.tensor([[1.0, 5.0, 3.0, 2.0]]), 1), torch.tensor([4, 1, 3, 2]).median())
print(torch.nanmedian(torch.tensor([1.0, float("nan"), 3.0, 2.0])), torch.median(torch.tensor([1.0, float("nan")])))

# unique
u = torch.tensor([1, 3, 2, 3], dtype=torch.long)
print(torch.unique(u), torch.unique(u, sorted=False).sort().values)
print(torch.unique(torch.tensor([[1, 3], [2, 3]]), return_inverse=True))
print(torch.unique(torch.tensor([[1, 3], [2, 3]]), return_counts=True))
m = torch.tensor([[1, 2, 1], [0, 0, 0], [1, 2, 1], [0, 1, 0]])
print(torch.unique(m, dim=0), torch.unique(m, dim=1, return_inverse=True, return_counts=True))
print(torch.unique(m, dim=0, return_counts=True).__class__.__name__)
print(torch.unique(torch.tensor([0.5, -0.0, 0.0, 0.5, 2.0])), torch.unique(torch.tensor([True, False, True])))
print(torch.unique(torch.tensor([], dtype=torch.long), return_counts=True))
print(torch.unique(torch.tensor([[2.0], [1.0]]), return_inverse=True))

# unique_consecutive (run-length encoding)
rle = torch.tensor([1, 1, 2, 2, 3, 1, 1, 2])
out, counts = torch.unique_consecutive(rle, return_counts=True)
print(out, counts, torch.repeat_interleave(out, counts))
print(torch.unique_consecutive(rle, return_inverse=True))
print(rle.unique_consecutive(return_inverse=True, return_counts=True))
mm = torch.tensor([[1, 1], [1, 1], [2, 0], [1, 1]])
print(torch.unique_consecutive(mm, dim=0), torch.unique_consecutive(mm, dim=0, return_counts=True))
print(torch.unique_consecutive(mm.T, dim=1, return_inverse=True))
print(torch.unique_consecutive(torch.tensor([[1, 1], [2, 2]])))

# searchsorted / bucketize
seq = torch.tensor([[1, 3, 5, 7, 9], [2, 4, 6, 8, 10]])
vals2 = torch.tensor([[3, 6, 9], [3, 6, 9]])
print(torch.searchsorted(seq, vals2), torch.searchsorted(seq, vals2, right=True))
print(torch.searchsorted(seq, vals2, side="right"), torch.searchsorted(seq[0], 5, out_int32=True))
unsorted = torch.tensor([1.0, 6.0, 3.0, 9.0])
sorter = torch.argsort(unsorted)
print(torch.searchsorted(unsorted, torch.tensor([2.0, 7.0]), sorter=sorter))
err(lambda: torch.searchsorted(seq, vals2, side="middle"))
err(lambda: torch.searchsorted(seq, vals2, side="left", right=True))
err(lambda: torch.searchsorted(seq, torch.tensor([[1, 2], [3, 4], [5, 6]])))
bounds = torch.tensor([1, 3, 5, 7, 9])
v = torch.tensor([[3, 6, 9], [3, 6, 9]])
print(torch.bucketize(v, bounds), torch.bucketize(v, bounds, right=True),
      torch.bucketize(2.5, bounds), torch.bucketize(v.float(), bounds.float(), out_int32=True).dtype)

# gradients flow through sort/topk values
g = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)
sv = torch.sort(g, descending=True).values
(sv * torch.tensor([1.0, 10.0, 100.0])).sum().backward()
print(sv.grad_fn.name(), g.grad)
g.grad = None
tv = g.topk(2).values
tv.sum().backward()
print(tv.grad_fn.name(), g.grad)
g.grad = None
kv = g.kthvalue(2).values * 3
kv.backward()
print(g.grad, torch.unique(g).requires_grad)
