"""repr() of tensors of every dtype and shape, after the torch.set_printoptions docs examples
and the _tensor_str rules users ask about ("why is my tensor printed in scientific notation",
"print the full tensor", "why does repr show dtype=torch.float64", "how to print without
grad_fn"): dtype suffixes, integer widths, sci-mode switching thresholds, complex formatting,
precision/linewidth/edgeitems/threshold, summarised high-dim tensors, empty shapes, views and
grad_fn suffixes, Parameters, named tuples and torch.Size."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn

vals = [0.0, 1.0, -2.5, 3.0]
for dt in [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
           torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128]:
    t = torch.tensor(vals).to(dt)
    print(repr(t))
    print(repr(t[:0]), repr(t[1]), repr(t.view(2, 2)[:, :1]))
print(torch.tensor([], dtype=torch.int64), torch.zeros(0, 3), torch.zeros(2, 0, dtype=torch.float64), torch.zeros(0, 3, dtype=torch.bool))
print(torch.tensor([1, 22, 333, -4444]), torch.tensor([10 ** 12, 1]), torch.tensor([-(2 ** 63)]))
print(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.5, 20.25, 300.125]), torch.tensor([1e-5, 1.0]), torch.tensor([1e8, 1.0]))
print(torch.tensor([123456789.0]), torch.tensor([1e-4, 1e4]), torch.tensor([0.1, 1000.0]), torch.tensor([1e16, 1.0]))
print(torch.tensor([float("nan"), 1.0, float("-inf")]), torch.tensor([float("inf")]), torch.tensor([1e-10, float("nan")]))
print(torch.tensor([-0.0, 0.0]), torch.tensor([1.0, -1.0]) * 1e-40, torch.tensor(3.14159265), torch.tensor(-1e-12))
print(torch.tensor([1 + 2j, -3.25 - 0.5j]), torch.tensor([1e-5 + 1j]), torch.tensor([float("nan") + 1j]), torch.tensor(2j))
print(torch.tensor([1.0, 2.0], dtype=torch.float64) * 1e6, torch.tensor([[1.0, -1.0], [1e-3, 1e3]], dtype=torch.float16))

# set_printoptions
torch.set_printoptions(precision=2)
print(torch.tensor([1.23456, 2.5]), torch.tensor([1e-5, 1.0]), torch.tensor([1.23456 + 2.5j]))
torch.set_printoptions(precision=6, sci_mode=False)
print(torch.tensor([1e-5, 1.0, 12345.678]), torch.tensor([1e10]), torch.tensor([1e-10, 1.0]))
torch.set_printoptions(sci_mode=True)
print(torch.tensor([1.0, 2.0]), torch.tensor([0.5]), torch.tensor([3]), torch.tensor([1.5 + 1j]))
torch.set_printoptions(profile="default")
print(torch.tensor([1e-5, 1.0]))
torch.set_printoptions(threshold=5, edgeitems=2)
print(torch.arange(10), torch.arange(12.0).view(3, 4), torch.arange(3), torch.arange(6).view(6, 1))
print(torch.arange(64).view(4, 4, 4), torch.arange(20).view(2, 10).bool())
torch.set_printoptions(edgeitems=1)
print(torch.arange(100.0).view(10, 10) / 3)
torch.set_printoptions(profile="default")
torch.set_printoptions(linewidth=30)
print(torch.arange(20.0), torch.arange(30).view(2, 15))
torch.set_printoptions(profile="short")
print(torch.tensor([1.23456, 2.0]), torch.arange(1001.0))
torch.set_printoptions(profile="full")
print(torch.arange(1200)[1190:], torch.arange(1200).numel())
torch.set_printoptions(profile="default")
print(torch.arange(1001), torch.arange(2002.0).view(2, 1001) * 1.5)

# suffixes: grad_fn, requires_grad, Parameter, views
w = torch.tensor([1.0, 2.0], requires_grad=True)
print(w, w * 2, w[0], w.view(1, 2), w.sum(), w.detach(), w.double(), (w > 1), w.clone().add_(1))
print(nn.Parameter(torch.ones(2)), nn.Parameter(torch.ones(2, dtype=torch.float64)), nn.Parameter(torch.ones(1), requires_grad=False))
print(nn.Parameter(torch.arange(2, dtype=torch.int64), requires_grad=False), repr(nn.Parameter(torch.empty(0))))
with torch.no_grad():
    print(w * 2)
print(torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True), torch.zeros(2, dtype=torch.float16, requires_grad=True))
print(torch.tensor(1, dtype=torch.int32), torch.tensor(True), torch.tensor(2.5, dtype=torch.float64))

# misc reprs
print(torch.Size([2, 3]), torch.Size([]), torch.zeros(2, 3).shape[1:], repr(torch.Size([4])))
print(torch.max(torch.tensor([[1, 5], [7, 2]]), 1), torch.float32, torch.device("cpu"), repr(torch.device("cpu", 0)))
print(str(torch.tensor([1.5])), format(torch.tensor(2.5), ".3f"), f"{torch.tensor(7)}", "%s" % torch.tensor([1]))
print(torch.tensor([[1.0, 2.0]]).T, torch.arange(4.0).view(2, 2).t().contiguous(), torch.ones(2, 1, 2))
print(str(torch.tensor([1.0])).__len__(), repr(torch.linspace(0, 1, 7)), torch.linspace(-1, 1, 5, dtype=torch.float64))
