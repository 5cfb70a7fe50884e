"""Type conversions as the "Tensor Attributes" docs and the Stack Overflow questions "how to
cast a tensor to another type", "RuntimeError: expected scalar type Float but found Double",
"float to int conversion truncates?", "uint8 overflow wraps", "what does .type() return" show
them: .to/.type/.float/.long/.bool/.half, casting rules (truncation toward zero, wrap-around,
nan/inf to int, bool of floats), new_* factories inheriting dtype, set_default_dtype,
is_floating_point/is_signed/itemsize, dtype attributes and the mixed-dtype errors."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn


def err(fn):
    try:
        r = fn()
        print("ok", r)
    except Exception as e:
        print(type(e).__name__, e)


f = torch.tensor([-2.7, -0.5, 0.0, 0.5, 1.5, 2.5, 300.0])
print(f.long(), f.int(), f.short(), f.char(), f.to(torch.int8), f.bool(), f.half(), f.bfloat16())
print(torch.tensor([255, 256, -1, 1000]).to(torch.uint8), torch.tensor([127, 128, -129]).to(torch.int8))
print(torch.tensor([0.4, 0.6, 1.5, 2.5, -0.5]).round(), torch.tensor([1.23456789], dtype=torch.float64).float())
print(torch.tensor([70000.0]).half(), torch.tensor([1e-8]).half(), torch.tensor([1.0 + 1 / 512]).bfloat16())
print(torch.tensor([1.0, 0.0, -0.0, float("nan")]).bool(), torch.tensor([2, 0, -1]).bool(), torch.tensor([True, False]).float())
print(torch.tensor([1 + 2j, -3.5j]).real.dtype, torch.tensor([1.5, 2.0]).to(torch.complex64))
err(lambda: torch.tensor([1 + 2j]).float())
print(torch.tensor([3.9, -3.9]).type(torch.int64), torch.tensor([1, 2]).type("torch.DoubleTensor"))
print(torch.tensor([1, 2]).type(), torch.zeros(2, dtype=torch.bool).type(), torch.zeros(1).half().type(),
      torch.zeros(1, dtype=torch.complex64).type(), torch.zeros(1).bfloat16().type())
print(torch.tensor([1, 2]).type(torch.FloatTensor).dtype, isinstance(torch.zeros(2), torch.FloatTensor),
      isinstance(torch.zeros(2, dtype=torch.long), torch.FloatTensor), isinstance(torch.zeros(2).long(), torch.LongTensor))
# (x.type("torch.NoSuchTensor"): requests13 [H1] from H7)
print(torch.tensor([1, 2]).type_as(torch.zeros(1, dtype=torch.float64)), torch.ones(2).to(torch.zeros(1, dtype=torch.int32)))
x = torch.ones(3)
print(x.to(torch.float32) is x, x.float() is x, x.to(torch.float32, copy=True) is x, x.to("cpu") is x,
      x.type(torch.float32) is x, x.double().double().dtype)
print(x.to(dtype=torch.float16, copy=False).dtype, x.to("cpu", torch.int32), x.to(device="cpu", dtype=torch.bool))

# dtype attributes
for dt in [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
           torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128]:
    print(dt, dt.is_floating_point, dt.is_complex, dt.is_signed, dt.itemsize, torch.zeros(1, dtype=dt).element_size(),
          torch.empty(0, dtype=dt).is_floating_point(), torch.zeros(1, dtype=dt).is_signed(),
          dt.to_real() if dt.is_complex else "-", dt.to_complex() if dt.is_floating_point and dt != torch.bfloat16 else "-")
print(torch.float == torch.float32, torch.double is torch.float64, torch.long, torch.cfloat, torch.half, torch.int)
print(torch.finfo(torch.float16).max, torch.finfo(torch.bfloat16).eps, torch.iinfo(torch.int8).min, torch.iinfo(torch.uint8).bits)
print(torch.finfo().dtype, torch.finfo(torch.float32).tiny, torch.finfo(torch.float64).resolution)
err(lambda: torch.finfo(torch.int32))
err(lambda: torch.iinfo(torch.float32))

# factories inheriting dtype
b = torch.tensor([1, 2], dtype=torch.int16)
print(b.new_zeros(2).dtype, b.new_ones((1, 2)).dtype, b.new_full((2,), 3.7), b.new_empty(0).dtype,
      b.new_tensor([1.5, 2.5]), b.new_tensor([1.5], dtype=torch.float64).dtype)
print(torch.zeros_like(b, dtype=torch.float16).dtype, torch.full_like(b, 2.9), torch.ones_like(f).dtype)
print(torch.full((2,), 7).dtype, torch.full((2,), 7.0).dtype, torch.full((2,), True).dtype, torch.arange(3.0).dtype,
      torch.arange(0, 1, 0.25).dtype, torch.linspace(0, 1, 3).dtype, torch.tensor(2 ** 40).dtype)

# default dtype
torch.set_default_dtype(torch.float64)
print(torch.tensor([1.5]).dtype, torch.zeros(1).dtype, torch.tensor(1 + 1j).dtype, torch.arange(2.0).dtype,
      (torch.tensor([1]) * 1.5).dtype, torch.get_default_dtype(), nn.Linear(1, 1).weight.dtype, torch.randn(1).dtype)
torch.set_default_dtype(torch.float32)
err(lambda: torch.set_default_dtype(torch.int64))
print(torch.tensor([1.5]).dtype, torch.tensor(1 + 1j).dtype)

# mixed-dtype errors users hit
lin = nn.Linear(2, 1)
err(lambda: lin(torch.ones(1, 2, dtype=torch.float64)))
err(lambda: torch.ones(2, 2) @ torch.ones(2, 2, dtype=torch.float64))
err(lambda: torch.mm(torch.ones(2, 2, dtype=torch.long), torch.ones(2, 2)))
err(lambda: torch.ones(2, dtype=torch.long).add_(torch.ones(2) * 0.5))
err(lambda: torch.ones(2, dtype=torch.bool).mul_(2))
err(lambda: torch.ones(2, dtype=torch.uint8).sub_(torch.tensor([True, False])))
err(lambda: torch.tensor([True]) - torch.tensor([False]))
err(lambda: -torch.tensor([True]))
err(lambda: torch.nn.functional.cross_entropy(torch.randn(2, 3), torch.tensor([0.0, 1.0])))
err(lambda: torch.nn.functional.nll_loss(torch.randn(2, 3), torch.tensor([0, 1], dtype=torch.int32)))
err(lambda: torch.zeros(3).index_select(0, torch.tensor([0.0])))
err(lambda: torch.zeros(3).gather(0, torch.tensor([0], dtype=torch.int32)))
err(lambda: torch.ones(2, dtype=torch.int32).mean())
err(lambda: torch.ones(2, dtype=torch.long).requires_grad_())
print(torch.ones(2, dtype=torch.int32).sum().dtype, torch.ones(2, dtype=torch.bool).sum().dtype, torch.ones(2, dtype=torch.int8).cumsum(0).dtype,
      torch.ones(2, dtype=torch.uint8).prod().dtype, torch.ones(2, dtype=torch.int16).mean(dtype=torch.float64).dtype,
      torch.ones(2).sum(dtype=torch.float64).dtype, torch.arange(4).float().mean().dtype)
