"""How tensors print in the places tutorials print them: state_dict() and optimizer
state dicts, Parameters, lists/dicts/tuples of tensors, grad_fn suffixes of many ops,
set_printoptions (precision, sci_mode, threshold, edgeitems, linewidth, profile) over
int/bool/half/bfloat16/complex/0-d/empty/large tensors, and format specs."""

import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn

torch.manual_seed(0)
lin = nn.Linear(3, 2)
print(lin.state_dict())
print(lin.weight)
print(list(lin.parameters()))
print(dict(lin.named_parameters()))
opt = torch.optim.Adam(lin.parameters(), lr=0.01)
lin(torch.randn(4, 3)).pow(2).mean().backward()
opt.step()
print(opt.state_dict())
print(opt)
bn = nn.BatchNorm1d(2)
print(bn.state_dict())
print([torch.ones(2), torch.zeros(1, dtype=torch.long)], (torch.tensor(1.5),))
print({"loss": torch.tensor(0.25), "acc": torch.tensor([0.5, 0.75])})

w = torch.randn(2, 3, requires_grad=True)
v = torch.randn(3, requires_grad=True)
outs = [
    w + 1,
    w * v,
    w - v,
    w / 2,
    w @ v,
    w.sum(),
    w.mean(),
    w.t(),
    w.view(6),
    w[0],
    w[:, 1:],
    w.exp(),
    w.log_softmax(1),
    w.relu(),
    w.tanh(),
    w.sigmoid(),
    w.pow(2),
    w.abs(),
    w.max(),
    w.max(dim=1)[0],
    w.unsqueeze(0),
    w.squeeze(),
    w.reshape(3, 2),
    w.clone(),
    w.expand(2, 2, 3),
    torch.cat([w, w]),
    torch.stack([w, w]),
    w.norm(),
    w.std(),
    w.permute(1, 0),
    w.flatten(),
    w.transpose(0, 1).contiguous(),
    w.cumsum(1),
    w.prod(),
    w.clamp(-0.5, 0.5),
    torch.where(w > 0, w, v),
    w.softmax(0),
    w.sqrt(),
    w.var(0),
    w.logsumexp(1),
    torch.matmul(w, w.t()),
    w.neg(),
    w.sin(),
    w.repeat(1, 2),
    w.flip(0),
    w.narrow(1, 0, 2),
    w.select(0, 1),
    w.masked_fill(w > 0, 0.0),
    w.gather(1, torch.tensor([[0], [1]])),
]
for o in outs:
    print(type(o.grad_fn).__name__, tuple(o.shape))
print(w * 2)
print(w.sum(0, keepdim=True))
print((w * 0).sum())
print(torch.tensor([1.0, 2.0], requires_grad=True))
print(torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True) * 3)
print(torch.tensor([1.0, 2.0], dtype=torch.float16, requires_grad=True) + 1)
print(torch.zeros(0, 2, requires_grad=True), torch.zeros(0, 2, requires_grad=True) * 2)
print(torch.tensor(3.0, requires_grad=True) ** 2)
print(torch.tensor([1 + 1j], requires_grad=True) * 2)

big = torch.arange(100000)
print(big, big.reshape(100, 1000), big.reshape(10, 10, 1000))
print(torch.arange(2000) > 1000, (torch.arange(2000) * 1.5).half())
print(torch.ones(1001, dtype=torch.bfloat16), torch.linspace(-1, 1, 1500, dtype=torch.float64))
print(torch.randn(3, 2, 400))
print(torch.tensor([1e-3, 1e3, 1e5]), torch.tensor([1e-4, 1.0]), torch.tensor([1e16, 1.0]))
print(torch.tensor([123456.0, 0.001]), torch.tensor([0.5, 100000000.0]), torch.tensor([-1e-8]))
print(torch.tensor([65504.0, -65504.0, 0.0001], dtype=torch.float16))
print(torch.tensor([3.4e38, 1e-38, 1.0], dtype=torch.bfloat16))
print(
    torch.tensor([2**40, -3, 7]), torch.tensor([2**62, 1]), torch.tensor([-128], dtype=torch.int8)
)
print(torch.tensor([1e10 + 1j, 1e-3 - 2j]), torch.tensor([0.5 + 0.25j], dtype=torch.complex128))
print(torch.complex(torch.randn(3, 3), torch.randn(3, 3)))
print(torch.tensor([[float("nan"), 1.5], [float("inf"), -2.0]], dtype=torch.float64))
print(torch.tensor([float("nan")]), torch.tensor([-float("inf")]), torch.tensor([0.0, -0.0]))

torch.set_printoptions(precision=8)
print(torch.randn(2, 3), torch.tensor([1 / 3], dtype=torch.float64), torch.tensor([1 / 3]))
torch.set_printoptions(precision=1)
print(torch.randn(2, 3) * 100, torch.tensor([0.04, 0.06, 1.0]), torch.tensor([0.25 + 0.75j]))
torch.set_printoptions(precision=4, sci_mode=True)
print(torch.randn(2, 2), torch.tensor([1, 2, 3]), torch.tensor([0.0]), torch.tensor(1.0))
torch.set_printoptions(sci_mode=False)
print(torch.tensor([1e-10, 1e10]), torch.tensor([1e20, 1.0], dtype=torch.float64))
torch.set_printoptions(sci_mode=None, threshold=5, edgeitems=1)
print(torch.arange(10), torch.randn(4, 4), torch.ones(2, 3, dtype=torch.bool), torch.arange(5))
torch.set_printoptions(threshold=1000, edgeitems=3, linewidth=30)
print(torch.randn(2, 8), torch.arange(20), torch.tensor([1.5 + 2j, 3 - 1j, 4j, 5, 6 + 7j]))
torch.set_printoptions(profile="short")
print(torch.randn(2, 3), torch.arange(1000))
torch.set_printoptions(profile="full")
print(torch.arange(1100).reshape(2, 550)[:, :12])
torch.set_printoptions(profile="default")
print(torch.randn(2, 3))

s = torch.tensor(3.14159)
print(f"{s:.2f}", f"{s:8.3f}|", f"{s:e}", f"{torch.tensor(5):04d}", f"{torch.tensor(0.5):.1%}")
print(
    "{:.3f}".format(torch.tensor(2.0)),
    "%.2f" % torch.tensor(1.5),
    "%d" % torch.tensor(7),
    str(torch.tensor(2.5)),
    repr(torch.tensor([2])),
    f"{torch.ones(2)}",
)
print(round(torch.tensor(2.567).item(), 2), torch.tensor(2.567).round(decimals=2), float(s), int(s))
print("RESULT: ok")
