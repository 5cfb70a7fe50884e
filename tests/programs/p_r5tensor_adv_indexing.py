"""Advanced indexing as the NumPy indexing rules page and torch's "Tensor Indexing API" docs
describe them, run through PyTorch (the index_put_/Tensor.__setitem__ doc examples and the
"advanced indices separated by a slice" Stack Overflow question): index arrays broadcast
together, transposition of the advanced dims to the front, Ellipsis/None mixes, negative
indices, bool masks over several dims, index_put_ with accumulate and duplicates, setitem
dtype casting and broadcasting, gradients of indexing, and the errors of bad indices."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))


def err(fn):
    try:
        r = fn()
        print("ok", r)
    except Exception as e:
        print(type(e).__name__, e)


x = torch.arange(2 * 3 * 4 * 5).view(2, 3, 4, 5)
i = torch.tensor([0, 2])
j = torch.tensor([[1], [3]])
cases = {
    "x[:, i]": lambda: x[:, i],
    "x[:, i, j]": lambda: x[:, i, j],
    "x[:, i, :, j]": lambda: x[:, i, :, j],
    "x[..., i]": lambda: x[..., i],
    "x[0, ..., j]": lambda: x[0, ..., j],
    "x[None, 1, i]": lambda: x[None, 1, i],
    "x[i, None, ..., None]": lambda: x[:, i, None, ..., None],
    "x[-1, -2, -3, -4]": lambda: x[-1, -2, -3, -4],
    "x[[-1], ::-1 step]": lambda: x[[-1], :, 1:-1:2],
    "x[1, [0, -1], 1:3, [[2], [4]]]": lambda: x[1, [0, -1], 1:3, [[2], [4]]],
    "x[(0, 1)]": lambda: x[(0, 1)],
    "x[[0, 1]]": lambda: x[[0, 1]],
    "x[0, [[0, 1], [1, 2]]]": lambda: x[0, [[0, 1], [1, 2]]],
    "x[tensor(1)]": lambda: x[torch.tensor(1)],
    "x[True]": lambda: x[True],
    "x[None, ..., None]": lambda: x[None, ..., None],
    "x[:, :, i, i]": lambda: x[:, :, i, i],
    "x[i-1, :, :, i]": lambda: x[i - 1, :, :, i],
    "x[:, [], :]": lambda: x[:, []],
    "x[:, 0, i, 1:]": lambda: x[:, 0, i, 1:],
}
for name, fn in cases.items():
    r = fn()
    print(f"{name:32s} {tuple(r.shape)} {r.flatten()[:6].tolist()} contig={r.is_contiguous()}")

# multi-dim bool masks
b = torch.arange(24).view(2, 3, 4)
m2 = b[:, :, 0] % 8 == 0
print(m2, b[m2].shape, b[m2])
print(b[:, b[0, :, 0] > 3].shape, b[..., torch.tensor([True, False, True, False])].shape)
print(b[b > 20], b[torch.tensor(True)].shape, b[torch.tensor(False)].shape)
print(b[1, m2[1]], b[0][m2[0], 1:])

# index_put_ and accumulate with duplicates
z = torch.zeros(5)
idx = torch.tensor([0, 1, 1, 4, -1])
z.index_put_((idx,), torch.ones(5), accumulate=True)
print(z)
z2 = torch.zeros(3, 3)
z2.index_put_((torch.tensor([0, 0, 2]), torch.tensor([1, 1, 0])), torch.tensor([1.0, 2.0, 3.0]),
              accumulate=True)
print(z2)
z3 = torch.zeros(3, 3)
z3.index_put_((torch.tensor([0, 2]),), torch.tensor([7.0, 8.0, 9.0]))
print(z3)
z4 = torch.zeros(2, 3, dtype=torch.int64)
z4.index_put_((torch.tensor([[0], [1]]), torch.tensor([0, 2])), torch.tensor(5), accumulate=True)
print(z4, torch.zeros(4).index_put((torch.tensor([3]),), torch.tensor(2.0)))
z5 = torch.zeros(2, 2)
z5.index_put_((torch.tensor([True, False]),), torch.tensor(3.0))
print(z5)
err(lambda: torch.zeros(3).index_put_((torch.tensor([3]),), torch.tensor(1.0)))
err(lambda: torch.zeros(3).index_put_((torch.tensor([0.0]),), torch.tensor(1.0)))
err(lambda: torch.zeros(3).index_put_((torch.tensor([0, 1]),), torch.tensor([1.0, 2.0, 3.0])))
err(lambda: torch.zeros(3).index_put_((torch.tensor([0]),), torch.tensor([1], dtype=torch.int64)))

# setitem: casting, broadcasting, through views
s = torch.zeros(3, 4)
s[1] = 7
s[:, 0] = torch.tensor([1, 2, 3])
err(lambda: s.__setitem__((0, [1, 2]), torch.tensor(5.5, dtype=torch.float64)))
s[0, 1:3] = torch.tensor(5.5, dtype=torch.float64)
s[..., -1] = torch.arange(3.0)
s[[2, 2], [1, 1]] = torch.tensor([8.0, 9.0])
print(s)
si = torch.zeros(2, 3, dtype=torch.int32)
si[0] = 2.9
si[1, 1:] = torch.tensor([-1.7, 3.2])
si[si == 0] = True
print(si, si.dtype)
sb = torch.zeros(3, dtype=torch.bool)
sb[1] = 5
sb[[0]] = 0.0
print(sb)
t = torch.zeros(2, 2, 3)
t[:, None, 1] = torch.ones(3)
t[0, :, [0, 2]] = torch.tensor([[1.0, 2.0]])
print(t)
err(lambda: torch.zeros(2, 3).__setitem__((slice(None), 0), torch.ones(3)))
err(lambda: torch.zeros(2, 3).__setitem__(torch.tensor([True, False, True]), 1.0))
err(lambda: torch.zeros(2).__setitem__(2, 1.0))
err(lambda: torch.zeros(2)[torch.tensor([1.0])])
err(lambda: torch.zeros(2, 3)[0, 0, 0])
err(lambda: torch.zeros(2, 3)[torch.tensor([[0, 1]]), torch.tensor([0, 1, 2])])
err(lambda: torch.zeros(2, 3)["a"])
err(lambda: torch.zeros(2, 3)[-3])

# gradients through advanced indexing
w = torch.arange(6.0).view(2, 3).requires_grad_()
out = w[[0, 0, 1], [2, 2, -1]] * torch.tensor([1.0, 2.0, 3.0])
out.sum().backward()
print(out.grad_fn.name(), w.grad)
w.grad = None
y = w[w > 2]
(y ** 2).sum().backward()
print(y.grad_fn.name(), w.grad)
v = torch.zeros(4, requires_grad=True)
u = v.clone()
u[torch.tensor([1, 1, 3])] = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
print(u.grad_fn.name(), u)
u.sum().backward()
print(v.grad)
g = torch.ones(3, requires_grad=True)
h = torch.zeros(5).index_put((torch.tensor([0, 0, 2]),), g * 2, accumulate=True)
h.pow(2).sum().backward()
print(h, h.grad_fn.name(), g.grad)
