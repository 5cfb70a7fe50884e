"""The functional "*_scatter" and "*_copy" ops and the gather family as the torch docs
examples show them (torch.select_scatter / slice_scatter / diagonal_scatter /
as_strided_scatter, the view_copy ops, take_along_dim, scatter_reduce with include_self=False,
index_reduce, scatter with reduce=, masked_scatter, put_ with accumulate), used as in
functorch-style code that avoids in-place writes; values, dtypes, gradients and errors."""
import importlib
import os
import warnings

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
warnings.simplefilter("ignore")


def err(fn):
    try:
        r = fn()
        print("ok", r)
    except Exception as e:
        print(type(e).__name__, e)


a = torch.zeros(2, 2)
b = torch.ones(2)
print(torch.select_scatter(a, b, 0, 0), torch.select_scatter(a, b, 1, -1))
a = torch.zeros(8, 8)
print(torch.slice_scatter(a, torch.ones(2, 8), start=6), torch.slice_scatter(a, torch.ones(8, 2), dim=1, start=2, end=6, step=2).sum(0))
print(torch.slice_scatter(torch.zeros(5), torch.arange(5.0)), torch.slice_scatter(torch.zeros(5), torch.ones(2), start=-2))
a = torch.zeros(3, 3)
print(torch.diagonal_scatter(a, torch.ones(3), 0), torch.diagonal_scatter(a, torch.ones(2), 1), torch.diagonal_scatter(a, torch.ones(2), -1))
print(torch.as_strided_scatter(torch.zeros(3, 3), torch.ones(2), (2,), (4,)), torch.as_strided_scatter(torch.zeros(6), torch.arange(3.0), (3,), (2,), 1))
err(lambda: torch.select_scatter(torch.zeros(2, 2), torch.ones(3), 0, 0))
err(lambda: torch.slice_scatter(torch.zeros(4), torch.ones(3), start=2))
err(lambda: torch.diagonal_scatter(torch.zeros(3, 3), torch.ones(3), 1))
err(lambda: torch.select_scatter(torch.zeros(2, 2), torch.ones(2), 0, 2))

# gradients through the scatters
x = torch.arange(4.0).view(2, 2).requires_grad_()
src = torch.tensor([10.0, 20.0], requires_grad=True)
y = torch.select_scatter(x, src, 0, 1) * torch.tensor([[1.0, 2.0], [3.0, 4.0]])
y.sum().backward()
print(y.grad_fn.name(), torch.select_scatter(x, src, 0, 1).grad_fn.name(), x.grad, src.grad)
x.grad = None
z = torch.diagonal_scatter(x, src * 2)
(z ** 2).sum().backward()
print(z.grad_fn.name(), x.grad, src.grad)
x.grad = None
s = torch.slice_scatter(x, src.view(1, 2), dim=0, start=0, end=1)
s.sum().backward()
print(s.grad_fn.name(), x.grad)

# the *_copy ops
t = torch.arange(6.0).view(2, 3)
copies = [torch.t_copy(t), torch.view_copy(t, (3, 2)), torch.permute_copy(t, (1, 0)), torch.select_copy(t, 1, 2),
          torch.slice_copy(t, 1, 0, 2), torch.diagonal_copy(t), torch.expand_copy(t[:1], (2, 3)), torch.unsqueeze_copy(t, 0),
          torch.squeeze_copy(t[:1]), torch.transpose_copy(t, 0, 1), torch.narrow_copy(t, 1, 1, 2), torch.detach_copy(t),
          torch.as_strided_copy(t, (2, 2), (1, 2)), torch.unbind_copy(t, 1)[0], torch.split_copy(t, 2, 1)[1], torch.alias_copy(t)]
for c in copies:
    print(tuple(c.shape), c.is_contiguous(), c._base is None, c.untyped_storage().data_ptr() != t.untyped_storage().data_ptr(), c.flatten().tolist())
tg = t.clone().requires_grad_()
print(torch.t_copy(tg).grad_fn.name(), torch.view_copy(tg, (6,)).grad_fn.name(), torch.permute_copy(tg, (1, 0)).grad_fn.name(),
      torch.diagonal_copy(tg).grad_fn.name(), torch.narrow_copy(tg, 1, 0, 1).grad_fn)

# gather family
g = torch.tensor([[10, 30, 20], [60, 40, 50]])
idx = torch.argsort(g, dim=1)
print(torch.take_along_dim(g, idx, dim=1), torch.take_along_dim(g, torch.argmax(g), dim=None),
      torch.take_along_dim(g, torch.tensor([[0], [2]]), 1), torch.take_along_dim(g, g.argmax(0, keepdim=True), 0))
err(lambda: torch.take_along_dim(g, torch.tensor([[0.0]]), 1))
err(lambda: torch.take_along_dim(g, torch.tensor([0, 1]), 1))

# scatter_reduce with include_self, index_reduce, scatter(reduce=)
src = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
index = torch.tensor([0, 1, 0, 1, 2, 1])
inp = torch.tensor([1.0, 2.0, 3.0, 4.0])
for red in ["sum", "prod", "mean", "amax", "amin"]:
    print(red, inp.scatter_reduce(0, index, src, reduce=red), inp.scatter_reduce(0, index, src, reduce=red, include_self=False))
print(torch.zeros(4, dtype=torch.long).scatter_reduce(0, index, torch.tensor([1, 2, 3, 4, 5, 6]), "mean", include_self=False))
x2 = torch.empty(5, 3).fill_(2)
t2 = torch.tensor([[1.0, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]])
ix = torch.tensor([0, 4, 2, 0])
print(x2.index_reduce_(0, ix, t2, "prod"), torch.full((5, 3), 2.0).index_reduce_(0, ix, t2, "prod", include_self=False))
print(torch.full((5, 3), 2.0).index_reduce(0, ix, t2, "mean"), torch.full((5, 3), 2.0).index_reduce(0, ix, t2, "amax", include_self=False))
err(lambda: torch.zeros(3).index_reduce(0, torch.tensor([0]), torch.ones(1), "sum"))
err(lambda: inp.scatter_reduce(0, index, src, reduce="max"))
print(torch.full((2, 4), 2.0).scatter_(1, torch.tensor([[2], [3]]), 1.23, reduce="multiply"))
print(torch.full((2, 4), 2.0).scatter_(1, torch.tensor([[2], [3]]), 1.23, reduce="add"))
print(torch.zeros(3, 5).scatter(0, torch.tensor([[0, 1, 2, 0]]), torch.arange(1.0, 11.0).view(2, 5), reduce="add"))
err(lambda: torch.zeros(3).scatter_(0, torch.tensor([0]), 1.0, reduce="mean"))
err(lambda: torch.zeros(3).scatter(0, torch.tensor([0]), torch.ones(1), reduce="max"))

# gradients of scatter_reduce
s2 = src.clone().requires_grad_()
i2 = inp.clone().requires_grad_()
for red in ["sum", "prod", "mean", "amax", "amin"]:
    s2.grad = None
    i2.grad = None
    out = i2.scatter_reduce(0, index, s2, reduce=red, include_self=False)
    out.backward(torch.tensor([1.0, 2.0, 3.0, 4.0]))
    print(red, out.grad_fn.name(), s2.grad, i2.grad)
ties = torch.tensor([3.0, 3.0, 1.0], requires_grad=True)
o = torch.zeros(2).scatter_reduce(0, torch.tensor([0, 0, 1]), ties, "amax", include_self=False)
o.sum().backward()
print(o, ties.grad)

# masked_scatter and put_
m = torch.tensor([[True, False, True], [False, True, False]])
print(torch.zeros(2, 3).masked_scatter(m, torch.arange(1.0, 7.0)), torch.zeros(2, 3).masked_scatter(torch.tensor([True, False, True]), torch.arange(1.0, 7.0)))
err(lambda: torch.zeros(2, 3).masked_scatter(m, torch.ones(2)))
pt = torch.zeros(2, 3)
pt.put_(torch.tensor([1, -1, 1]), torch.tensor([5.0, 6.0, 7.0]), accumulate=True)
print(pt, torch.zeros(4).put(torch.tensor([0, 3]), torch.tensor([9.0, 8.0])))
err(lambda: torch.zeros(4).put_(torch.tensor([4]), torch.tensor([1.0])))
