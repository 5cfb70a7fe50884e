"""dtype errors, after the "expected scalar type Float but found Double" / "Found dtype Long but
expected Float" threads and the type-promotion section of the tensor-attributes note: Long inputs
into Linear and mm, mixed float/double products, float index tensors, in-place ops whose result
type can't be cast, int tensors that require grad, losses with the wrong target dtype, and the
.float()/.long()/.to() fixes, printing the promoted result dtypes as the answers do."""

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
            print(label, "ok", out.dtype, out.shape, out.requires_grad)
        else:
            print(label, "ok", out)


torch.manual_seed(0)
fc = nn.Linear(3, 2)
xl = torch.randint(0, 5, (4, 3))
print(xl.dtype, fc.weight.dtype)

print("== Long / Double into float layers")
show("linear long", lambda: fc(xl))
show("linear double", lambda: fc(xl.double()))
show("linear fix", lambda: fc(xl.float()))
show("mm long float", lambda: torch.mm(xl, torch.randn(3, 2)))
show("mm float long", lambda: torch.mm(torch.randn(2, 4), xl))
show("mm float double", lambda: torch.mm(torch.randn(2, 3), torch.randn(3, 2).double()))
show("mm long long", lambda: torch.mm(xl, xl.t()))
show("matmul int", lambda: xl @ xl.t().int())
show("bmm", lambda: torch.bmm(torch.randn(2, 2, 3), torch.randn(2, 3, 2, dtype=torch.float64)))
show("mv", lambda: torch.mv(torch.randn(2, 3), torch.arange(3)))
show("dot", lambda: torch.dot(torch.randn(3), torch.arange(3.0).double()))
show("conv double", lambda: nn.Conv1d(2, 2, 3)(torch.randn(1, 2, 5, dtype=torch.float64)))
show("conv long", lambda: nn.Conv1d(2, 2, 3)(torch.ones(1, 2, 5, dtype=torch.long)))
show("embedding float", lambda: nn.Embedding(5, 2)(torch.tensor([[1.0, 2.0]])))
show("F.embedding int", lambda: F.embedding(torch.tensor([1, 2], dtype=torch.int32),
                                            torch.randn(5, 2)))
show("lstm double", lambda: nn.LSTM(3, 4)(torch.randn(2, 1, 3).double()))
show("bn half", lambda: nn.BatchNorm1d(3)(torch.randn(4, 3).half()).dtype)
show("model.double()", lambda: nn.Linear(3, 2).double()(xl.double()))

print("== promotion (no error)")
for a, b in [(torch.tensor([1, 2]), torch.tensor([0.5])),
             (torch.tensor([1, 2], dtype=torch.int32), torch.tensor(3)),
             (torch.tensor([1.0]), torch.tensor([2.0], dtype=torch.float64)),
             (torch.tensor([True]), torch.tensor([2], dtype=torch.uint8)),
             (torch.tensor([1], dtype=torch.uint8), torch.tensor([1], dtype=torch.int8)),
             (torch.tensor([1.0], dtype=torch.float16), torch.tensor(2.0, dtype=torch.float64))]:
    print(a.dtype, b.dtype, "->", (a + b).dtype, (a * 2.5).dtype, (b / 2).dtype,
          torch.result_type(a, b), torch.promote_types(a.dtype, b.dtype))
print(torch.can_cast(torch.float64, torch.int32), torch.can_cast(torch.int32, torch.float32))

print("== in-place result type")
il = torch.arange(4)
show("long += float", lambda: il.add_(0.5))
show("long += float t", lambda: il.add_(torch.ones(4)))
show("long *= 1.5", lambda: il.mul_(1.5))
show("long /= 2", lambda: il.div_(2))
show("long //= 2", lambda: il.floor_divide_(2))
show("long div floor", lambda: il.div_(2, rounding_mode="floor"))
show("int += long", lambda: torch.arange(3, dtype=torch.int32).add_(torch.arange(3)))
show("float += double", lambda: torch.ones(3).add_(torch.ones(3, dtype=torch.float64)))
show("bool += int", lambda: torch.tensor([True, False]).add_(1))
show("uint8 sub", lambda: torch.tensor([1], dtype=torch.uint8).sub_(2))
show("float sqrt_", lambda: il.sqrt_())
show("long exp_", lambda: il.exp_())
show("long clamp_", lambda: il.clamp_(0.5, 2.5))
show("copy_", lambda: il.copy_(torch.tensor([1.7, 2.2, 3.9, -1.5])))
print(il)
show("masked_fill_", lambda: il.masked_fill_(il > 1, 2.7))
print(il)
show("index_put", lambda: il.index_put_((torch.tensor([0]),), torch.tensor([9.5])))
show("setitem float", lambda: il.__setitem__(0, 3.9))
print(il)
show("out= dtype", lambda: torch.add(torch.ones(2), 1, out=torch.empty(2, dtype=torch.long)))

print("== indexing dtypes")
x = torch.arange(10.0)
show("float index", lambda: x[torch.tensor([1.0, 2.0])])
show("float scalar idx", lambda: x[torch.tensor(1.0)])
show("int32 index", lambda: x[torch.tensor([1, 2], dtype=torch.int32)])
show("uint8 mask", lambda: x[torch.ones(10, dtype=torch.uint8) > 0])
show("byte index", lambda: x[torch.tensor([0, 1] * 5, dtype=torch.uint8)])
show("python float", lambda: x[1.5])
show("index_select float", lambda: x.index_select(0, torch.tensor([1.0])))
show("index_select int32", lambda: x.index_select(0, torch.tensor([1], dtype=torch.int32)))
show("gather int32", lambda: x.gather(0, torch.tensor([1], dtype=torch.int32)))
show("scatter float", lambda: torch.zeros(3).scatter_(0, torch.tensor([1.0]), 1.0))
show("take float", lambda: x.take(torch.tensor([1.0])))

print("== gradients and dtypes")
show("long requires_grad", lambda: torch.tensor([1, 2], requires_grad=True))
show("arange rg", lambda: torch.arange(3, dtype=torch.float32, requires_grad=True))
show("int param", lambda: nn.Parameter(torch.tensor([1, 2])))
show("int param nograd", lambda: nn.Parameter(torch.tensor([1, 2]), requires_grad=False))
show("half grad", lambda: torch.ones(2, dtype=torch.float16, requires_grad=True) * 2)
w = torch.randn(3, requires_grad=True)
show("to long", lambda: w.long())
show("round", lambda: w.round())
show("argmax", lambda: w.argmax())
show("float mask", lambda: w * (w > 0))
show("sum int", lambda: torch.arange(4, dtype=torch.int32).sum())
show("mean long", lambda: torch.arange(4).mean())
show("mean long dtype", lambda: torch.arange(4).mean(dtype=torch.float64))
show("std int", lambda: torch.arange(4).std())
show("softmax int", lambda: F.softmax(torch.arange(4), dim=0))

print("== losses")
logits = torch.randn(3, 4)
show("ce int target", lambda: F.cross_entropy(logits, torch.tensor([1, 2, 3], dtype=torch.int32)))
show("ce prob target", lambda: F.cross_entropy(logits, torch.softmax(torch.randn(3, 4), 1)))
show("ce prob long", lambda: F.cross_entropy(logits, torch.ones(3, 4, dtype=torch.long)))
show("mse long", lambda: F.mse_loss(torch.randn(3), torch.tensor([1, 2, 3])))
show("mse double", lambda: F.mse_loss(torch.randn(3), torch.randn(3).double()))
show("l1 int", lambda: F.l1_loss(torch.randn(3), torch.tensor([1, 2, 3])))
show("bce double", lambda: F.binary_cross_entropy(torch.rand(3), torch.rand(3).double()))
show("nll double", lambda: F.nll_loss(logits.double(), torch.tensor([1, 2, 3])))
print("RESULT: ok")
