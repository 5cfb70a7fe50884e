"""Shape errors, after the "common PyTorch errors and how to fix them" posts and the Stack Overflow
answers on "mat1 and mat2 shapes cannot be multiplied": every matmul flavour (mm, matmul with 1-D
and batched operands, bmm, mv, dot, addmm, F.linear, nn.Linear on the wrong feature count),
cat/stack of mismatched sizes, view vs reshape on non-contiguous tensors, expand, broadcasting
in arithmetic and in-place ops, split/chunk/narrow/unflatten/repeat/permute misuse, and the fix
each answer suggests printed after the error."""

import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


def show(label, fn):
    try:
        out = fn()
    except Exception as e:
        print(label, "->", type(e).__name__, str(e))
    else:
        if isinstance(out, torch.Tensor):
            print(label, "ok", tuple(out.shape), out.dtype)
        else:
            print(label, "ok", out)


torch.manual_seed(0)
a = torch.randn(2, 3)
b = torch.randn(4, 5)

print("== matrix products")
show("mm", lambda: torch.mm(a, b))
show("mm fix", lambda: torch.mm(a, torch.randn(3, 5)))
show("mm 1d", lambda: torch.mm(a, torch.randn(3)))
show("mm 3d", lambda: torch.mm(torch.randn(2, 2, 3), a))
show("matmul", lambda: torch.matmul(a, b))
show("@", lambda: a @ b)
show("matmul 1d 1d", lambda: torch.matmul(torch.randn(3), torch.randn(4)))
show("matmul 1d 2d", lambda: torch.matmul(torch.randn(3), torch.randn(4, 2)))
show("matmul 2d 1d", lambda: torch.matmul(a, torch.randn(4)))
show("matmul batch", lambda: torch.matmul(torch.randn(2, 3, 4), torch.randn(3, 4, 5)))
show("matmul batch2", lambda: torch.matmul(torch.randn(2, 3, 4), torch.randn(2, 5, 6)))
show("matmul bcast ok", lambda: torch.matmul(torch.randn(2, 1, 3, 4), torch.randn(5, 4, 2)))
show("matmul 0d", lambda: torch.matmul(torch.tensor(2.0), a))
show("bmm", lambda: torch.bmm(torch.randn(2, 3, 4), torch.randn(2, 5, 6)))
show("bmm batch", lambda: torch.bmm(torch.randn(2, 3, 4), torch.randn(3, 4, 6)))
show("bmm 2d", lambda: torch.bmm(a, b))
show("mv", lambda: torch.mv(a, torch.randn(4)))
show("mv 2d", lambda: torch.mv(a, torch.randn(3, 1)))
show("dot", lambda: torch.dot(torch.randn(3), torch.randn(4)))
show("dot 2d", lambda: torch.dot(a, a))
show("addmm", lambda: torch.addmm(torch.randn(2, 5), a, b))
show("addmm bias", lambda: torch.addmm(torch.randn(3, 5), a, torch.randn(3, 5)))
show("outer", lambda: torch.outer(torch.randn(2), torch.randn(3)))

print("== Linear layers")
fc = nn.Linear(10, 4)
show("linear", lambda: fc(torch.randn(8, 12)))
show("linear 3d", lambda: fc(torch.randn(2, 3, 12)))
show("linear 1d", lambda: fc(torch.randn(12)))
show("linear fix", lambda: fc(torch.randn(8, 10)))
show("F.linear", lambda: F.linear(torch.randn(8, 6), torch.randn(4, 5)))
show("F.linear bias", lambda: F.linear(torch.randn(8, 5), torch.randn(4, 5), torch.randn(3)))
flat = nn.Sequential(nn.Conv2d(1, 4, 3), nn.Flatten(), nn.Linear(100, 10))
show("flatten", lambda: flat(torch.randn(2, 1, 8, 8)))
show("flatten fix", lambda: nn.Sequential(nn.Conv2d(1, 4, 3), nn.Flatten(), nn.Linear(144, 10))(
    torch.randn(2, 1, 8, 8)))
bil = nn.Bilinear(3, 4, 2)
show("bilinear", lambda: bil(torch.randn(5, 3), torch.randn(5, 5)))

print("== cat / stack")
show("cat", lambda: torch.cat([torch.ones(2, 3), torch.ones(2, 4)]))
show("cat dim1", lambda: torch.cat([torch.ones(2, 3), torch.ones(2, 4)], dim=1))
show("cat ndim", lambda: torch.cat([torch.ones(2, 3), torch.ones(3)]))
show("cat dim", lambda: torch.cat([torch.ones(2, 3), torch.ones(2, 3)], dim=2))
show("cat empty", lambda: torch.cat([]))
show("cat tensor", lambda: torch.cat(torch.ones(2, 3)))
show("stack", lambda: torch.stack([torch.ones(2, 3), torch.ones(2, 4)]))
show("stack 3", lambda: torch.stack([torch.ones(3), torch.ones(3), torch.ones(2)]))
show("stack empty", lambda: torch.stack([]))
show("stack dim", lambda: torch.stack([torch.ones(3), torch.ones(3)], dim=3))
show("hstack", lambda: torch.hstack([torch.ones(2, 3), torch.ones(3, 3)]))
show("vstack", lambda: torch.vstack([torch.ones(2, 3), torch.ones(2, 2)]))

print("== view / reshape")
x = torch.arange(12.0).reshape(3, 4)
show("view", lambda: x.view(5, -1))
show("view t", lambda: x.t().view(-1))
show("view perm", lambda: torch.randn(2, 3, 4).permute(2, 0, 1).view(4, 6))
show("view perm ok", lambda: torch.randn(2, 3, 4).permute(2, 0, 1).view(4, 2, 3))
show("view two -1", lambda: x.view(-1, -1))
show("view -2", lambda: x.view(-2, 6))
show("view 0", lambda: x.view(0, -1))
show("reshape", lambda: x.reshape(5, 3))
show("reshape t", lambda: x.t().reshape(-1))
show("reshape -1 0", lambda: torch.empty(0, 4).reshape(-1, 0))
show("view dtype", lambda: x.view(torch.int16).shape)
show("view dtype bad", lambda: x[:, :1].view(torch.float64))
show("flatten dims", lambda: x.flatten(1, 0))
show("unflatten", lambda: x.unflatten(1, (3, 2)))
show("unflatten ok", lambda: x.unflatten(1, (2, -1)))

print("== expand / repeat / broadcasting")
show("expand", lambda: torch.ones(2, 3).expand(4, 3))
show("expand fix", lambda: torch.ones(1, 3).expand(4, 3))
show("expand fewer", lambda: torch.ones(2, 3).expand(3))
show("expand -1", lambda: torch.ones(2, 3).expand(-1, -1, 3))
show("expand_as", lambda: torch.ones(2, 3).expand_as(torch.ones(3, 2)))
show("repeat", lambda: torch.ones(2, 3).repeat(2))
show("add", lambda: torch.ones(3, 3) + torch.ones(3, 4))
show("mul 3d", lambda: torch.ones(2, 3, 4) * torch.ones(2, 4))
show("sub dim0", lambda: torch.ones(5, 1) - torch.ones(4))
show("iadd", lambda: torch.ones(3).add_(torch.ones(2, 3)))
show("imul", lambda: torch.ones(3, 1).mul_(torch.ones(3, 4)))
show("broadcast_tensors", lambda: torch.broadcast_tensors(torch.ones(2, 3), torch.ones(3, 2)))
show("broadcast_shapes", lambda: torch.broadcast_shapes((2, 3), (3, 1), (4, 1, 1)))
show("broadcast_shapes bad", lambda: torch.broadcast_shapes((2, 3), (4, 3)))
show("broadcast_to", lambda: torch.ones(3).broadcast_to(2, 4))
show("where", lambda: torch.where(torch.ones(3) > 0, torch.ones(4), 0.0))

print("== split / chunk / narrow / permute")
show("split", lambda: [t.shape for t in x.split([1, 2], dim=0)])
show("split bad", lambda: x.split([1, 1], dim=0))
show("narrow", lambda: x.narrow(1, 2, 3))
show("permute dup", lambda: torch.ones(2, 3, 4).permute(0, 1, 1))
show("permute len", lambda: torch.ones(2, 3, 4).permute(0, 1))
show("transpose", lambda: x.transpose(0, 2))
show("squeeze", lambda: x.squeeze(2))
show("unsqueeze", lambda: x.unsqueeze(3))
show("movedim", lambda: torch.ones(2, 3, 4).movedim((0, 1), (2,)))
show("t 3d", lambda: torch.ones(2, 3, 4).t())
print("RESULT: ok")
