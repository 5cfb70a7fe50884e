"""The common beginner mistakes from forum threads and "debugging PyTorch" posts, each caught
and printed as the posts show them (type(e).__name__ and the message): shape mismatch in Linear,
wrong target dtype for cross_entropy, backward twice, in-place change of a saved tensor,
.numpy() on a tensor that requires grad, item() on many elements, view on a non-contiguous
tensor, index out of range, and the fixes the answers give."""

import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


def attempt(label, fn):
    try:
        out = fn()
        print(f"{label}: ok ->", out)
    except Exception as e:
        print(f"{label}: {type(e).__name__}: {e}")


torch.manual_seed(0)
model = nn.Sequential(nn.Flatten(), nn.Linear(12, 5), nn.ReLU(), nn.Linear(5, 3))
x = torch.randn(4, 3, 5)
attempt("linear shape", lambda: model(x))
attempt("fixed shape", lambda: model(torch.randn(4, 3, 4)).shape)
attempt("matmul", lambda: torch.randn(2, 3) @ torch.randn(2, 3))
attempt("mm", lambda: torch.mm(torch.randn(2, 3), torch.randn(4, 2)))
attempt("bmm", lambda: torch.bmm(torch.randn(2, 3, 4), torch.randn(3, 4, 5)))
attempt("add broadcast", lambda: torch.ones(3, 4) + torch.ones(2, 4))
attempt("cat", lambda: torch.cat([torch.ones(2, 3), torch.ones(2, 4)]))
attempt("stack", lambda: torch.stack([torch.ones(2, 3), torch.ones(3, 2)]))
attempt("conv input", lambda: nn.Conv2d(3, 8, 3)(torch.randn(1, 4, 8, 8)))
attempt("conv 3d input", lambda: nn.Conv2d(3, 8, 3)(torch.randn(3, 8, 8)).shape)
attempt("conv too small", lambda: nn.Conv2d(1, 1, 5)(torch.randn(1, 1, 3, 3)))
attempt("bn channels", lambda: nn.BatchNorm1d(4)(torch.randn(8, 5)))
attempt("bn batch 1", lambda: nn.BatchNorm1d(4)(torch.randn(1, 4)))
attempt("embedding idx", lambda: nn.Embedding(10, 3)(torch.tensor([1, 10])))
attempt("embedding float", lambda: nn.Embedding(10, 3)(torch.tensor([1.0, 2.0])))

logits = torch.randn(4, 3, requires_grad=True)
attempt("ce float target", lambda: F.cross_entropy(logits, torch.tensor([0.0, 1.0, 2.0, 1.0])))
attempt(
    "ce int32 target",
    lambda: F.cross_entropy(logits, torch.tensor([0, 1, 2, 1], dtype=torch.int32)),
)
attempt(
    "ce long target", lambda: round(F.cross_entropy(logits, torch.tensor([0, 1, 2, 1])).item(), 4)
)
attempt("ce out of range", lambda: F.cross_entropy(logits, torch.tensor([0, 1, 3, 1])))
attempt("ce shape", lambda: F.cross_entropy(logits, torch.tensor([0, 1])))
attempt("nll float target", lambda: F.nll_loss(logits, torch.tensor([0.0, 1.0, 2.0, 1.0])))
attempt("mse shapes", lambda: F.mse_loss(torch.randn(4, 1), torch.randn(4, 2)))
attempt(
    "bce range", lambda: F.binary_cross_entropy(torch.tensor([0.5, 1.5]), torch.tensor([0.0, 1.0]))
)
attempt(
    "bce long target",
    lambda: F.binary_cross_entropy_with_logits(torch.randn(3), torch.tensor([0, 1, 1])),
)

w = torch.randn(3, requires_grad=True)
loss = (w * 2).sum()
loss.backward()
attempt("backward twice", lambda: loss.backward())
y = w.exp()
z = y.sum()
y.add_(1)
attempt("inplace saved", lambda: z.backward())
y2 = w.sigmoid()
y2.mul_(2)
attempt("inplace sigmoid", lambda: y2.sum().backward())
attempt("leaf inplace", lambda: w.add_(1))
with torch.no_grad():
    w.add_(1)
print(w.requires_grad, w.is_leaf)
attempt("numpy grad", lambda: w.numpy())
attempt("numpy detach", lambda: w.detach().numpy().shape)
attempt("item many", lambda: torch.randn(3).item())
attempt("item one", lambda: torch.tensor([2.5]).item())
attempt("bool ambiguous", lambda: bool(torch.tensor([1, 0])))
attempt("float many", lambda: float(torch.ones(2)))
attempt("int of one", lambda: int(torch.tensor([[7.9]])))
t = torch.arange(6).reshape(2, 3).t()
attempt("view non-contig", lambda: t.view(6))
attempt("reshape non-contig", lambda: t.reshape(6))
attempt("contiguous view", lambda: t.contiguous().view(-1))
attempt("view bad size", lambda: torch.arange(6).view(4, 2))
attempt("view two -1", lambda: torch.arange(6).view(-1, -1))
attempt("reshape bad", lambda: torch.arange(6).reshape(5, -1))
attempt("index range", lambda: torch.arange(5)[5])
attempt("index dim", lambda: torch.zeros(2, 3)[0, 3])
attempt("too many idx", lambda: torch.zeros(2, 3)[0, 1, 2])
attempt("tensor index", lambda: torch.arange(5)[torch.tensor([0, 7])])
attempt("gather dims", lambda: torch.zeros(2, 3).gather(1, torch.tensor([0, 1])))
attempt("dim range", lambda: torch.zeros(2, 3).sum(dim=2))
attempt("softmax dim", lambda: F.softmax(torch.zeros(2, 3), dim=3))
attempt("transpose dim", lambda: torch.zeros(2, 3).transpose(0, 2))
attempt("permute", lambda: torch.zeros(2, 3).permute(0, 2))
attempt("squeeze dim", lambda: torch.zeros(2, 3).squeeze(3))
attempt("expand", lambda: torch.zeros(2, 3).expand(4, 3))
attempt("grad non-scalar", lambda: (w * 2).backward())
attempt("grad no grad", lambda: torch.ones(2).sum().backward())
attempt("requires_grad int", lambda: torch.tensor([1, 2], requires_grad=True))
attempt("grad of int", lambda: torch.arange(3).requires_grad_())
attempt("dtype mismatch mm", lambda: torch.ones(2, 2) @ torch.ones(2, 2, dtype=torch.float64))
attempt("dtype linear", lambda: nn.Linear(2, 2)(torch.ones(1, 2, dtype=torch.float64)))
attempt("int linear", lambda: nn.Linear(2, 2)(torch.ones(1, 2, dtype=torch.long)))
attempt("device str", lambda: torch.device("gpu"))
attempt("cpu device", lambda: (torch.device("cpu"), torch.device("cuda:1"), torch.device("cpu", 0)))
attempt("to cpu", lambda: torch.ones(2).to("cpu").device)
attempt("param assign", lambda: setattr(nn.Linear(2, 2), "weight", torch.ones(2, 2)))
attempt("zero_grad none", lambda: nn.Linear(2, 2).weight.grad)
attempt("optimizer empty", lambda: torch.optim.SGD([], lr=0.1))
attempt("optimizer lr", lambda: torch.optim.SGD(nn.Linear(1, 1).parameters(), lr=-1))
attempt("no forward", lambda: nn.Module()(torch.ones(1)))
attempt("tensor ragged", lambda: torch.tensor([[1, 2], [3]]))
attempt("tensor str", lambda: torch.tensor(["a"]))
attempt("ones neg", lambda: torch.ones(-1))
attempt("randint", lambda: torch.randint(5, 2, (3,)))
attempt("arange step", lambda: torch.arange(0, 5, 0))
attempt("multinomial", lambda: torch.multinomial(torch.tensor([0.0, 0.0]), 1))
attempt("load_state", lambda: nn.Linear(2, 3).load_state_dict(nn.Linear(3, 2).state_dict()))
attempt("load_state keys", lambda: nn.Linear(2, 2).load_state_dict({"weight": torch.ones(2, 2)}))
print("RESULT: ok")
