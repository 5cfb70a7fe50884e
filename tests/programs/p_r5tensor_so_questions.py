"""Stack Overflow's most-voted PyTorch tensor questions, each answer's code as posted (shrunk):
"How do I get the value of a tensor?", "view() vs reshape()", "convert a list of tensors to a
tensor", "one-hot encode labels", "argmax over rows", "replace values with a mask", "select
per-row indices (gather)", "Can't call numpy() on Tensor that requires grad", "concatenate vs
stack", "how to repeat a tensor along a new dim", "check whether two tensors are equal", "find
the index of a value", "sort and keep indices", "remove a row", "pad a list of variable length
tensors", "count the occurrences of each value"."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
rnn_utils = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.utils.rnn")


def err(fn):
    try:
        r = fn()
        print("ok", r)
    except Exception as e:
        print(type(e).__name__, e)


torch.manual_seed(0)
# How do I get the value of a tensor?
x = torch.tensor([3])
print(x.item(), x.tolist(), int(x), float(torch.tensor(2.5)), x[0].item())
err(lambda: torch.tensor([1, 2]).item())
err(lambda: torch.tensor([]).item())
print(type(torch.tensor(1.5).item()), type(torch.tensor(True).item()), type(x.tolist()[0]))

# view vs reshape
a = torch.arange(6).view(2, 3)
err(lambda: a.t().view(6))
print(a.t().reshape(6), a.t().contiguous().view(-1))
err(lambda: a.view(4, -1))
err(lambda: a.view(-1, -1))
err(lambda: a.reshape(5))

# list of tensors -> tensor
lst = [torch.randn(3) for _ in range(4)]
s = torch.stack(lst)
print(s.shape, torch.cat(lst).shape, torch.tensor([t.tolist() for t in lst]).shape)
err(lambda: torch.tensor(lst))
err(lambda: torch.stack([torch.zeros(2), torch.zeros(3)]))
err(lambda: torch.cat([torch.zeros(2, 3), torch.zeros(2, 4)]))
print(torch.cat([torch.zeros(2, 3), torch.zeros(2, 4)], dim=1).shape)
print(torch.stack(lst, dim=1).shape, torch.vstack(lst).shape, torch.hstack(lst).shape)
err(lambda: torch.stack([]))

# one-hot encode labels
labels = torch.tensor([0, 2, 1, 2])
print(F.one_hot(labels))
print(F.one_hot(labels, num_classes=5).dtype)
oh = torch.zeros(4, 3).scatter_(1, labels.unsqueeze(1), 1.0)
print(oh)
print(torch.eye(3)[labels])
err(lambda: F.one_hot(labels.float()))
err(lambda: F.one_hot(labels, num_classes=2))
err(lambda: F.one_hot(torch.tensor([-1, 0])))

# argmax over rows, max with indices
m = torch.tensor([[1.0, 5.0, 5.0], [7.0, 2.0, 7.0]])
print(m.argmax(1), m.argmax(), m.max(dim=1), m.max(dim=1).indices)
vals, idx = torch.max(m, 0, keepdim=True)
print(vals, idx)
print(m.argmax(dim=1, keepdim=True), torch.argmin(m, dim=0))

# replace values with a mask
t = torch.tensor([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]])
t2 = t.clone()
t2[t2 < 0] = 0
print(t2, torch.where(t < 0, torch.zeros_like(t), t), t.clamp(min=0), t.masked_fill(t < 0, -1))
t3 = t.clone()
t3[t3 < 0] = torch.tensor([10.0, 20.0, 30.0])
print(t3)
err(lambda: t.clone().__setitem__(t < 0, torch.tensor([1.0, 2.0])))
print(torch.where(t > 0))
print((t > 0).nonzero(), (t > 0).nonzero(as_tuple=True))

# select per-row indices
scores = torch.arange(12.0).view(3, 4)
cols = torch.tensor([1, 3, 0])
print(scores.gather(1, cols.unsqueeze(1)).squeeze(1), scores[torch.arange(3), cols])
print(scores[range(3), cols], scores[[0, 2]], scores[:, [True, False, True, False]])

# Can't call numpy() on Tensor that requires grad
w = torch.ones(2, requires_grad=True)
err(lambda: w.numpy())
print(w.detach().numpy(), w.data.numpy(), w.numpy(force=True))
err(lambda: (w * 2).tolist())

# repeat along a new dimension
v = torch.tensor([1, 2, 3])
print(v.unsqueeze(0).repeat(2, 1), v.expand(2, 3), v.repeat(2), v.repeat_interleave(2))
print(v[None, :, None].expand(2, -1, 2).shape, v.unsqueeze(1).repeat(1, 2).view(-1))
err(lambda: v.expand(2, 4))
err(lambda: v.repeat(2, 1).expand(3, 3))

# equal tensors
p = torch.tensor([1.0, 2.0])
q = torch.tensor([1.0, 2.0 + 1e-9])
print(torch.equal(p, q), torch.allclose(p, q), (p == q).all(), p.eq(q), torch.equal(p, p[:1]))
print(torch.equal(torch.tensor([1, 2]), torch.tensor([1.0, 2.0])))
err(lambda: bool(p == q))
print(torch.isclose(p, q, rtol=0, atol=0))

# index of a value
h = torch.tensor([5, 3, 9, 3, 1])
print((h == 3).nonzero(), (h == 3).nonzero().squeeze(), (h == 3).nonzero()[0].item())
print(torch.argwhere(h == 3), (h == 7).nonzero().numel(), h.tolist().index(9))
print(torch.isin(h, torch.tensor([3, 1])), 9 in h, 7 in h)

# sort keeping indices
sv, si = torch.sort(torch.tensor([0.3, -1.0, 2.0, 0.3]), descending=True)
print(sv, si)
print(torch.sort(torch.tensor([2, 1, 2, 1, 0]), stable=True))
print(torch.argsort(torch.tensor([2, 1, 2, 1, 0]), descending=True, stable=True))

# remove a row
r = torch.arange(12).view(4, 3)
print(torch.cat([r[:1], r[2:]]), r[torch.arange(4) != 1], r[[i for i in range(4) if i != 1]])
keep = torch.ones(4, dtype=torch.bool)
keep[[0, 3]] = False
print(r[keep], r.index_select(0, keep.nonzero().squeeze(1)))

# pad variable-length tensors
seqs = [torch.tensor([1, 2, 3]), torch.tensor([4]), torch.tensor([5, 6])]
print(rnn_utils.pad_sequence(seqs, batch_first=True), rnn_utils.pad_sequence(seqs, padding_value=-1))
print(rnn_utils.pad_sequence(seqs, batch_first=True, padding_side="left"))
print(F.pad(torch.tensor([1, 2]), (1, 3), value=9), F.pad(torch.ones(2, 2), (0, 1, 1, 0)))

# count occurrences
c = torch.tensor([1, 3, 3, 0, 1, 3])
print(torch.bincount(c), torch.bincount(c, minlength=6), c.unique(return_counts=True))
print(torch.bincount(c, weights=torch.tensor([0.5, 1.0, 1.0, 2.0, 0.5, 1.0])))
err(lambda: torch.bincount(torch.tensor([-1, 2])))
err(lambda: torch.bincount(torch.tensor([[1, 2]])))
print(torch.unique(c, sorted=True, return_inverse=True))
print(torch.histc(c.float(), bins=4, min=0, max=3))
