"""Strides and storage, after Edward Yang's "PyTorch internals" blog post (the stride/offset
pictures), the torch.Tensor.as_strided / untyped_storage / view(dtype) docs and the "sliding
windows with as_strided" Stack Overflow answers: stride arithmetic of views, expand's zero
strides, channels_last strides, storage sharing and resizing, view(dtype) bit casts,
as_strided windows and Toeplitz matrices, unfold, the contiguity rules and the errors."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))


def err(fn):
    try:
        r = fn()
        print("ok", r)
    except Exception as e:
        print(type(e).__name__, e)


def info(name, t):
    print(f"{name:14s} size={tuple(t.shape)} stride={t.stride()} off={t.storage_offset()} "
          f"contig={t.is_contiguous()} cl={t.is_contiguous(memory_format=torch.channels_last)}")


x = torch.arange(24.0).view(2, 3, 4)
info("x", x)
info("x[1]", x[1])
info("x[:, 1]", x[:, 1])
info("x[..., 1:3]", x[..., 1:3])
info("x[:, ::2, ::3]", x[:, ::2, ::3])
info("x.T-ish", x.permute(2, 1, 0))
info("expand", torch.arange(3.0).view(3, 1).expand(3, 4))
info("expand_new", torch.tensor(1.0).expand(2, 2))
info("unsq", x.unsqueeze(-1))
info("sel+unsq", x[:, 0].unsqueeze(1))
info("size1 dims", torch.zeros(1, 3, 1, 2))
info("empty", torch.zeros(0, 3))
print(x.stride(0), x.stride(-1), x.size(1), x.dim(), x.ndimension(), x.nelement(), x.element_size())

img = torch.arange(2 * 3 * 2 * 2.0).view(2, 3, 2, 2)
cl = img.contiguous(memory_format=torch.channels_last)
info("channels_last", cl)
info("cl.permute", cl.permute(0, 2, 3, 1))
print(torch.equal(cl, img), cl.permute(0, 2, 3, 1).is_contiguous(), cl.view(-1)[:4] if cl.is_contiguous() else "nc")
err(lambda: cl.view(-1))
print(cl.reshape(-1)[:6])  # .to(memory_format=contiguous_format) strides: requests13 [H1] from H7
# info("empty_like cl", torch.empty_like(cl)): requests13 [H1] from H7 (*_like preserve_format)
info("cl+1", cl + 1)
info("cl clone", cl.clone())
info("cl1d", torch.zeros(1, 4, 1, 1).contiguous(memory_format=torch.channels_last))

# storage sharing
s = x.untyped_storage()
print(len(s), s.nbytes(), s.element_size() if hasattr(s, "element_size") else 1, x[1].untyped_storage().nbytes())
print(x[1].storage_offset(), x[1].data_ptr() - x.data_ptr(), x.is_set_to(x), x[0].is_set_to(x))
y = x[1, 1]
y.mul_(-1)
print(x[1], x._version, y._version)
z = torch.empty(0)
z.set_(x.untyped_storage(), 4, (2, 2), (1, 2))
print(z)
r = torch.arange(6.0)
r.resize_(2, 2)
print(r)
r.resize_(3, 4)
print(r.shape, r[0], r.untyped_storage().nbytes())
err(lambda: torch.ones(2, requires_grad=True).resize_(3))

# view(dtype) reinterprets bits
f = torch.tensor([1.0, -2.0, 0.5])
print(f.view(torch.int32), f.view(torch.uint8).shape, f.view(torch.int16))
print(torch.tensor([0x3F800000], dtype=torch.int32).view(torch.float32))
print(torch.tensor([1, 2], dtype=torch.int64).view(torch.int32), torch.ones(2, 2).view(torch.float64).shape)
print(torch.tensor([1.0, 2.0]).view(torch.complex64), torch.tensor([1 + 2j]).view(torch.float32))
err(lambda: torch.ones(3).view(torch.float64))
err(lambda: torch.ones(4, 2).t().view(torch.float64))
print(torch.ones(2, 3, dtype=torch.float16).view(torch.int16)[0], torch.tensor([True, False]).view(torch.uint8))

# as_strided tricks
seq = torch.arange(10.0)
win = seq.as_strided((4, 4), (2, 1))
print(win, win.is_contiguous(), win.stride())
print(torch.as_strided(seq, (3, 3), (1, 1), 2))
col = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0])
toe = col.as_strided((3, 3), (1, 1)).flip(1)
print(toe)
print(seq.unfold(0, 3, 2), seq.unfold(0, 3, 2).stride(), torch.zeros(2, 5).unfold(1, 2, 3).shape)
err(lambda: seq.as_strided((4, 4), (3, 1)))
img2 = torch.arange(16.0).view(1, 1, 4, 4)
patches = img2.unfold(2, 2, 2).unfold(3, 2, 2)
print(patches.shape, patches.stride(), patches.reshape(-1, 4))
print(seq.as_strided((2,), (3,), 1).contiguous(), seq.as_strided((5,), (0,)).sum())

# contiguity rules and errors
tt = x.transpose(1, 2)
print(tt.is_contiguous(), tt.contiguous().stride(), tt.reshape(2, 12).stride(), tt.flatten(0, 1).stride())
print(x.view(6, 4).stride(), x.view(2, -1).stride(), x[:, :2].reshape(4, 4).stride())
err(lambda: tt.view(2, 12))
err(lambda: x[:, :2].view(16))
print(x[:, :2].view(2, 2, 2, 2).stride(), x.transpose(0, 1).view(3, 2, 2, 2).stride())
print(torch.zeros(3, 1).expand(3, 4).contiguous().stride(), torch.zeros(1, 3).t().is_contiguous())
print(x.narrow(2, 1, 2).stride(), x.narrow(2, 1, 2).storage_offset(), x.diagonal(1, 1, 2).stride())
print(x.select(2, -1).storage_offset(), x.movedim(0, -1).stride(), x.mT.stride(), x[0].T.stride())
