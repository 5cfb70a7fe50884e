"""Scatter/gather cookbook (the torch.Tensor.scatter_reduce / index_reduce docs examples and
the "segment sum/mean/max without torch_scatter" GNN idiom): gather, scatter with every reduce,
include_self, index_add/copy/fill/reduce, masked_scatter, put_, take and their gradients."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))

torch.manual_seed(0)
src = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
index = torch.tensor([0, 1, 0, 1, 2, 1])
input = torch.tensor([1.0, 2.0, 3.0, 4.0])
for reduce in ["sum", "prod", "mean", "amax", "amin"]:
    for include_self in [True, False]:
        out = input.scatter_reduce(0, index, src, reduce=reduce, include_self=include_self)
        print(reduce, include_self, out)
print(torch.scatter_reduce(torch.zeros(3, dtype=torch.int64), 0, index[:3], torch.tensor([5, 7, 9]),
                           "sum"))
print(torch.scatter_reduce(input, 0, index, src, "mean", include_self=False).dtype)
z = torch.zeros(2, 4)
z.scatter_reduce_(1, torch.tensor([[0, 0, 3], [1, 2, 2]]), torch.tensor([[1.0, 2.0, 3.0],
                  [4.0, 5.0, 6.0]]), reduce="amax", include_self=False)
print(z)

# scatter / scatter_ with scalar values and reduce= (multiply)
print(torch.full((2, 4), 2.0).scatter_(1, torch.tensor([[2], [3]]), 1.23, reduce="multiply"))
print(torch.full((2, 4), 2.0).scatter_(1, torch.tensor([[2], [3]]), 1.23, reduce="add"))
print(torch.zeros(3, 5, dtype=torch.int64).scatter_(0, torch.tensor([[0, 1, 2, 0]]), 1))
print(torch.scatter(torch.zeros(2, 3), 0, torch.tensor([[1, 0, 1]]), torch.ones(1, 3) * 7))
print(torch.zeros(4).scatter_add(0, torch.tensor([3, 3, 0]), torch.tensor([1.0, 2.0, 3.0])))

# one-hot with scatter, then back with argmax / gather
labels = torch.tensor([2, 0, 1, 2])
onehot = torch.zeros(len(labels), 3).scatter_(1, labels.unsqueeze(1), 1.0)
print(onehot, onehot.argmax(dim=1), torch.nn.functional.one_hot(labels, num_classes=4))
logits = torch.randn(4, 3)
print(logits.gather(1, labels.view(-1, 1)).squeeze(1), logits[torch.arange(4), labels])
print(torch.gather(logits, 0, torch.tensor([[3, 2, 1]])), logits.gather(-1, labels[:, None]))
print(torch.gather(torch.tensor([[1, 2], [3, 4]]), 1, torch.tensor([[0, 0], [1, 0]]),
                   sparse_grad=False))

# segment reductions (message passing: edges -> nodes)
num_nodes = 4
edge_index = torch.tensor([[0, 1, 1, 2, 3, 3, 3], [1, 0, 2, 1, 0, 1, 2]])
x = torch.randn(num_nodes, 2)
msg = x[edge_index[0]]
dst = edge_index[1]
agg_sum = torch.zeros(num_nodes, 2).index_add_(0, dst, msg)
deg = torch.bincount(dst, minlength=num_nodes)
print(agg_sum, deg, deg.dtype)
agg_mean = agg_sum / deg.clamp(min=1).unsqueeze(-1)
print(agg_mean)
agg_max = torch.full((num_nodes, 2), float("-inf")).scatter_reduce(
    0, dst.unsqueeze(-1).expand(-1, 2), msg, reduce="amax", include_self=True)
print(agg_max)
agg_max2 = torch.zeros(num_nodes, 2).index_reduce_(0, dst, msg, "amax", include_self=False)
print(agg_max2)
for r in ["prod", "mean", "amin", "amax"]:
    print(r, torch.ones(3, 2).index_reduce(0, torch.tensor([0, 0, 2]),
                                           torch.tensor([[2.0, 3.0], [4.0, 5.0], [6.0, 7.0]]), r))
    print(r, torch.ones(3, 2).index_reduce(0, torch.tensor([0, 0, 2]),
                                           torch.tensor([[2.0, 3.0], [4.0, 5.0], [6.0, 7.0]]), r,
                                           include_self=False))
print(torch.ones(3).index_add(0, torch.tensor([0, 2]), torch.tensor([1.0, 2.0]), alpha=10))
ic = torch.zeros(3, 4).index_copy(1, torch.tensor([3, 0]), torch.ones(3, 2))
print(ic, torch.zeros(2, 3).index_fill_(1, torch.tensor([0, 2]), 5.0))
print(torch.arange(6.0).view(2, 3).index_fill(0, torch.tensor([1]), torch.tensor(-1.0)))

# masked ops
m = torch.tensor([[True, False, True], [False, True, False]])
print(torch.zeros(2, 3).masked_scatter(m, torch.arange(10.0, 16.0)))
print(torch.zeros(2, 3).masked_scatter_(m[0], torch.tensor([1.0, 2.0, 3.0, 4.0])))
print(torch.arange(6).view(2, 3).masked_select(m), torch.arange(6).view(2, 3)[m])
print(torch.arange(6).view(2, 3).masked_fill(m, -1), torch.arange(3).masked_fill(
    torch.tensor([True, False, True]), torch.tensor(9)))
t = torch.arange(6.0).view(2, 3)
print(t.put(torch.tensor([0, 4]), torch.tensor([-1.0, -2.0])), t.take(torch.tensor([[5, 0]])))
print(t.put_(torch.tensor([1, 1, 2]), torch.tensor([1.0, 1.0, 1.0]), accumulate=True))

# gradients through gather/scatter/index ops
w = torch.randn(3, 4, requires_grad=True)
v = torch.randn(2, 4, requires_grad=True)
o1 = w.gather(1, torch.tensor([[0, 0], [1, 3], [2, 2]]))
o2 = w.index_add(0, torch.tensor([2, 2]), v)
o3 = torch.scatter_reduce(w, 1, torch.tensor([[0, 0], [1, 1], [3, 3]]), v[:, :2].repeat(2, 1)[:3],
                          "amax")
o4 = w.masked_scatter(w > 0, v.repeat(2, 1))
o5 = w.scatter(0, torch.tensor([[1, 0, 2, 0]]), v[:1])
o6 = w.index_copy(0, torch.tensor([1, 0]), v[:, :4]).index_fill(1, torch.tensor([2]), 0.5)
o7 = torch.zeros(3, 4).scatter_add(0, torch.tensor([[0, 1, 2, 0], [2, 2, 2, 2]]), v)
o8 = w.index_reduce(0, torch.tensor([0, 0]), v, "prod")
o9 = w.take(torch.tensor([0, 11, 11]))
for o in (o1, o2, o3, o4, o5, o6, o7, o8, o9):
    print(type(o.grad_fn).__name__, o.shape)
loss = sum((o * torch.randn(o.shape)).sum() for o in (o1, o2, o3, o4, o5, o6, o7, o8, o9))
loss.backward()
print(w.grad)
print(v.grad)

# misuse
for fn in [lambda: torch.zeros(3).scatter_(0, torch.tensor([0.0]), 1.0),
           lambda: torch.zeros(3).scatter_(0, torch.tensor([5]), 1.0),
           lambda: torch.zeros(2, 2).gather(1, torch.tensor([0, 1])),
           lambda: torch.zeros(3).index_add_(0, torch.tensor([0]), torch.ones(2)),
           lambda: torch.zeros(3).scatter_reduce(0, torch.tensor([0]), torch.ones(1), "max"),
           lambda: torch.zeros(3).index_select(0, torch.tensor([3]))]:
    try:
        fn()
    except Exception as e:
        print(type(e).__name__, str(e).split("\n")[0])
print("RESULT:", agg_mean.sum().item())
