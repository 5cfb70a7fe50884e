"""Replicating and splitting tensors, the torch docs examples of expand/expand_as/
broadcast_to/repeat/tile/repeat_interleave and chunk/split/tensor_split/hsplit/vsplit/dsplit/
unbind/unflatten, then the Stack Overflow questions around them ("repeat vs expand memory",
"repeat_interleave with a tensor of counts", "split a tensor into unequal chunks", "why does
chunk return fewer chunks"): shapes, strides, values, gradients and the errors."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))


def err(fn):
    try:
        r = fn()
        print("ok", r)
    except Exception as e:
        print(type(e).__name__, e)


def shapes(ts):
    return [tuple(t.shape) for t in ts]


x = torch.tensor([[1], [2], [3]])
print(x.size(), x.expand(3, 4), x.expand(-1, 4), x.expand(2, 3, 2).shape, x.expand(3, 4).stride())
print(x.expand_as(torch.empty(3, 5)).shape, torch.broadcast_to(torch.tensor([1, 2, 3]), (3, 3)))
print(torch.broadcast_shapes((2,), (3, 1)), torch.broadcast_shapes((1, 4), (5, 1, 1)))
a, b = torch.broadcast_tensors(torch.arange(3).view(1, 3), torch.arange(2).view(2, 1))
print(a, b, a.stride(), b.stride())
err(lambda: x.expand(2, 4))
err(lambda: x.expand(4))
err(lambda: x.expand(-1, -1, 2))
err(lambda: torch.broadcast_shapes((2, 3), (3, 2)))
err(lambda: torch.broadcast_tensors(torch.zeros(2), torch.zeros(3)))
e = x.expand(3, 2)
err(lambda: e.add_(1))
err(lambda: e.__setitem__((0, 0), 5))

y = torch.tensor([1, 2, 3])
print(y.repeat(4, 2), y.repeat(4, 2, 1).size(), y.repeat(1), torch.tensor(7).repeat(3))
err(lambda: y.repeat())
err(lambda: torch.zeros(2, 3).repeat(2))
print(torch.tile(y, (2,)), torch.tile(torch.tensor([[1, 2], [3, 4]]), (2, 2)))
print(torch.tile(torch.tensor([[1, 2], [3, 4]]), (2,)).shape, torch.tile(y, (2, 1, 2)).shape)
print(y.repeat_interleave(2), torch.repeat_interleave(torch.tensor([[1, 2], [3, 4]]), 2))
z = torch.tensor([[1, 2], [3, 4]])
print(torch.repeat_interleave(z, 3, dim=1), torch.repeat_interleave(z, torch.tensor([1, 2]), dim=0))
print(torch.repeat_interleave(z, torch.tensor([1, 2]), dim=0, output_size=3))
print(torch.repeat_interleave(torch.tensor([2, 0, 3])), y.repeat_interleave(torch.tensor([0, 1, 2])))
print(torch.repeat_interleave(z, torch.tensor([2]), dim=1), z.repeat_interleave(2, dim=-1).shape)
err(lambda: torch.repeat_interleave(z, torch.tensor([1, 2, 3]), dim=0))
err(lambda: torch.repeat_interleave(z, torch.tensor([-1, 2]), dim=0))
err(lambda: torch.repeat_interleave(torch.tensor([[1, 2]])))
err(lambda: y.repeat_interleave(-1))

# gradients: expand sums, repeat sums, repeat_interleave sums
w = torch.tensor([1.0, 2.0], requires_grad=True)
up = torch.arange(12.0).view(3, 4)
out = w.repeat(3, 2) * up
out.sum().backward()
print(out.grad_fn.name(), w.grad)
w.grad = None
out = w.expand(3, 2) * up[:, :2]
out.sum().backward()
print(out.grad_fn.name(), w.grad)
w.grad = None
out = w.repeat_interleave(torch.tensor([3, 1])) * torch.tensor([1.0, 2.0, 3.0, 4.0])
out.sum().backward()
print(out.grad_fn.name(), w.grad)
w.grad = None
out = torch.tile(w, (2,)) * torch.tensor([1.0, 2.0, 3.0, 4.0])
out.sum().backward()
print(w.grad)

# splitting
t = torch.arange(11)
print(shapes(t.chunk(6)), shapes(torch.arange(12).chunk(6)), shapes(torch.arange(13).chunk(6)))
print(shapes(torch.arange(5).chunk(4)), shapes(torch.arange(0).chunk(3)), len(torch.arange(6).chunk(4)))
print(t.split(4), t.split([2, 5, 4]), shapes(torch.arange(10).view(5, 2).split(2)))
print(shapes(torch.arange(12).view(3, 4).split([1, 3], dim=1)), t.split(20))
err(lambda: t.split([2, 5]))
err(lambda: t.split(0))
err(lambda: t.chunk(0))
print(torch.tensor_split(torch.arange(8), 3), torch.tensor_split(torch.arange(7), 3))
print(torch.tensor_split(torch.arange(7), (1, 6)), torch.tensor_split(torch.arange(7), [1, 1, 9]))
tm = torch.arange(14).reshape(2, 7)
print(torch.tensor_split(tm, 3, dim=1), torch.tensor_split(tm, torch.tensor([1, 6]), dim=1))
print(shapes(torch.tensor_split(tm, torch.tensor(3), dim=1)), shapes(tm.tensor_split(5, dim=0)))
err(lambda: torch.tensor_split(tm, 0, dim=1))
err(lambda: torch.tensor_split(tm, torch.tensor([[1]]), dim=1))
err(lambda: torch.tensor_split(tm, torch.tensor([1.0]), dim=1))
c = torch.arange(16.0).reshape(4, 4)
print(shapes(torch.hsplit(c, 2)), torch.hsplit(c, [3, 6])[0].shape, shapes(torch.vsplit(c, [1])))
print(shapes(torch.dsplit(torch.arange(16.0).reshape(2, 2, 4), [3, 6])), shapes(torch.hsplit(torch.arange(6), 3)))
err(lambda: torch.hsplit(c, 3))
err(lambda: torch.dsplit(c, 2))
err(lambda: torch.vsplit(torch.arange(4), 2))
print(c.unbind(1)[2], len(torch.unbind(torch.zeros(3, 0))), c.unflatten(1, (2, 2)).shape)
print(c.unflatten(0, (-1, 2)).shape, torch.arange(6).unflatten(0, (3, 2)), c.flatten(0, -1).shape)
err(lambda: c.unflatten(1, (3, -1)))
try:
    c.unflatten(1, (-1, -1))
except RuntimeError as e:     # (torch appends the C++ frames)
    print(str(e).splitlines()[:2])
print(c.split(3, dim=-1)[1].is_contiguous(), c.chunk(2, 1)[1].stride(), c.split(1)[3].storage_offset())

# gradients through split pieces (unused pieces get zeros)
p = torch.arange(6.0, requires_grad=True)
s1, s2, s3 = p.split([1, 2, 3])
(s2 * 10).sum().backward()
print(s2.grad_fn.name(), p.grad)
p.grad = None
q1, q2 = p.tensor_split(2)
(q1 * q2).sum().backward()
print(q1.grad_fn.name(), p.grad)
p.grad = None
u = p.view(2, 3).unbind(0)
(u[0] - u[1] * 2).pow(2).sum().backward()
print(u[0].grad_fn.name(), p.grad)
