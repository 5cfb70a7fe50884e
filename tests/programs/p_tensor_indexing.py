"""An indexing/broadcasting tour: advanced indexing, masks, setitem with broadcast,
index_put_, masked_fill, where, gather/scatter_, nonzero, einsum, topk/sort/unique,
cumsum and the shape functions."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))

torch.manual_seed(0)
x = torch.arange(24).reshape(4, 6)
print(x[1], x[:, 2], x[1:3, ::2], x[-1, -2:], x[..., 0], x[None, 1].shape)
print(x[[0, 2]], x[[0, 2], [1, 3]], x[torch.tensor([3, 1])], x[:, [5, 0]])
print(x[torch.tensor([[0, 1], [2, 3]])].shape, x[[0, 1]][:, [2, 3]])
mask = x % 5 == 0
print(mask)
print(x[mask], x[x > 20], x[mask.any(1)])
y = torch.zeros(3, 4)
y[1] = 5
y[:, 1] = torch.tensor([1.0, 2.0, 3.0])
y[y == 0] = -1
y[[0, 2], [3, 3]] = torch.tensor([7.0, 8.0])
print(y)
y[0:2, 2:] = torch.tensor([9.0, 10.0])
print(y)
z = torch.zeros(5)
z.index_put_((torch.tensor([0, 2, 2]),), torch.tensor([1.0, 2.0, 3.0]), accumulate=True)
print(z)
z.index_put_((torch.tensor([4]),), torch.tensor(6.0))
print(z)
a = torch.randn(3, 4)
print(a.masked_fill(a > 0, 0.0), a.masked_fill_(a < -1, -1.0))
print(torch.where(a > 0, a, torch.zeros_like(a)), torch.where(a > 0, a, 0.0))
print(torch.where(a > 0))
idx = torch.tensor([[0, 0], [1, 0], [2, 3]])
print(torch.gather(a, 1, idx), a.gather(0, torch.tensor([[2, 1, 0, 0]])))
s = torch.zeros(3, 5)
s.scatter_(1, torch.tensor([[0, 1], [2, 3], [4, 4]]), torch.ones(3, 2))
print(s)
s2 = torch.zeros(3, 5).scatter_(1, torch.tensor([[0], [1], [2]]), 2.5)
print(s2, torch.zeros(5).scatter_add_(0, torch.tensor([0, 1, 1, 4]), torch.ones(4)))
print(torch.zeros(2, 4).scatter(1, torch.tensor([[1, 1], [0, 3]]), torch.tensor([[1.0, 2.0],
                                [3.0, 4.0]]), reduce='add'))
print(torch.nonzero(mask), torch.nonzero(mask, as_tuple=True), mask.nonzero().shape)
print(torch.count_nonzero(mask), torch.argwhere(x > 20))

A = torch.randn(2, 3)
B = torch.randn(3, 4)
v = torch.randn(3)
print(torch.einsum('ij,jk->ik', A, B), torch.einsum('ii', torch.randn(3, 3)))
print(torch.einsum('i,i->', v, v), torch.einsum('i,j->ij', v, v))
print(torch.einsum('bij,bjk->bik', torch.randn(2, 2, 3), torch.randn(2, 3, 2)))
print(torch.einsum('ij->ji', A), torch.einsum('ij->j', A), torch.einsum('...j,j', A, v))

u = torch.tensor([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0])
print(torch.topk(u, 3), u.topk(2, largest=False))
vals, inds = torch.sort(u, descending=True)
print(vals, inds)
print(torch.sort(u, stable=True), torch.argsort(u, stable=True), u.argsort(descending=True))
print(torch.unique(u), torch.unique(u, return_counts=True))
print(torch.unique(torch.tensor([2, 1, 2, 3, 1]), return_inverse=True, return_counts=True))
print(torch.unique(torch.tensor([[1, 2], [1, 2], [0, 1]]), dim=0))
print(torch.unique_consecutive(torch.tensor([1, 1, 2, 2, 3, 1])))
print(torch.cumsum(u, 0), u.cumprod(0), torch.cummax(u, 0), torch.cumsum(x, dim=1))
print(torch.kthvalue(u, 2), torch.max(a, 1), a.min(dim=0), a.argmax(), a.argmin(1))
print(torch.msort(torch.tensor([[3, 1], [1, 2]])), torch.searchsorted(torch.tensor([1, 3, 5]),
                                                                      torch.tensor([2, 5])))

p = torch.arange(6).reshape(2, 3)
print(torch.cat([p, p]), torch.cat((p, p), dim=1), torch.stack([p, p]).shape)
print(torch.stack([p, p], dim=2), torch.hstack([p, p]), torch.vstack([p, p]))
print(torch.chunk(torch.arange(7), 3), torch.arange(10).split(4), torch.arange(6).split([1, 5]))
print(p.view(3, 2), p.view(-1), p.reshape(6, 1).shape, p.permute(1, 0), p.t().is_contiguous())
print(p.t().contiguous().is_contiguous(), p.unsqueeze(0).expand(3, 2, 3).shape)
print(torch.tensor([[1], [2]]).expand(2, 3), p.repeat(2, 2), p.repeat_interleave(2, dim=0))
print(torch.flip(p, [0]), p.flip(1), p.fliplr(), torch.roll(p, 1), torch.roll(p, 1, 1))
m = torch.ones(4, 4)
print(torch.tril(m), torch.triu(m, diagonal=1), m.tril(-1))
print(p.transpose(0, 1), p.squeeze(), torch.ones(1, 3, 1).squeeze().shape,
      torch.ones(2, 1, 3).squeeze(1).shape)
print(p.flatten(), torch.ones(2, 3, 4).flatten(1).shape, p.unflatten(1, (3, 1)).shape)
print(p.narrow(1, 1, 2), p.unbind(0), torch.movedim(torch.ones(2, 3, 4), 0, -1).shape)
print(p.diag() if p.dim() == 1 else torch.diag(m), torch.diagonal(x), p.T.shape)
print(torch.broadcast_tensors(torch.ones(3, 1), torch.ones(1, 2))[0].shape,
      torch.broadcast_shapes((3, 1), (2,)))
print((torch.ones(3, 1) + torch.arange(4)).shape, torch.arange(3)[:, None] * torch.arange(2))
print(torch.meshgrid(torch.arange(2), torch.arange(3), indexing='ij'))
print(torch.take(p, torch.tensor([0, 5])), torch.index_select(x, 0, torch.tensor([0, 3])))
print(torch.masked_select(p, p > 2), p.index_fill(1, torch.tensor([0]), -1))
print(torch.zeros(3, 3).index_add_(0, torch.tensor([0, 2]), torch.ones(2, 3)))
print(torch.zeros(2, 2).index_copy_(1, torch.tensor([1, 0]), torch.tensor([[1.0, 2.0],
                                                                            [3.0, 4.0]])))
print("RESULT: ok")
