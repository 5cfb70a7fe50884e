"""A dtype tour: type promotion between int/float/bool tensors and Python scalars, .to(),
.type(), .double(), integer division, iinfo/finfo."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))

i = torch.tensor([1, 2, 3])
f = torch.tensor([1.0, 2.0, 3.0])
b = torch.tensor([True, False, True])
h = torch.tensor([1.0, 2.0], dtype=torch.float16)
d = torch.tensor([1.0, 2.0], dtype=torch.float64)
i8 = torch.tensor([1, 2, 3], dtype=torch.int8)
u8 = torch.tensor([1, 2, 3], dtype=torch.uint8)
print(i.dtype, f.dtype, b.dtype, (i + f).dtype, (i + b).dtype, (b + b).dtype, (f + b).dtype)
print((i + 1).dtype, (i + 1.5).dtype, (i * True).dtype, (b + 1).dtype, (b + 1.0).dtype)
print((h + 1.0).dtype, (h + i[:2]).dtype, (h + d).dtype, (i8 + u8).dtype, (i8 + 1000).dtype)
print((u8 + 1).dtype, (i8 * 2.5).dtype, (torch.tensor(1.0) + i).dtype, (torch.tensor(1) + f).dtype)
print((torch.tensor(1.0, dtype=torch.float64) + f).dtype, (h + torch.tensor(2.0)).dtype)
print((i + (1 + 2j)).dtype, (f * 1j).dtype, (d + 1j).dtype)
print(torch.result_type(i, 1.0), torch.promote_types(torch.int32, torch.float16),
      torch.can_cast(torch.float32, torch.int32), torch.can_cast(torch.int32, torch.float32))
print(i / 2, (i / 2).dtype, i // 2, (i // 2).dtype, i % 2, -i // 2, torch.tensor([-7, 7]) // 2)
print(torch.div(i, 2, rounding_mode='floor'), torch.div(torch.tensor([-7, 7]), 2,
                                                        rounding_mode='trunc'))
print(torch.tensor([-7.5, 7.5]) // 2, torch.tensor([-7, 7]) % 3,
      torch.fmod(torch.tensor([-7, 7]), 3))
print(torch.remainder(torch.tensor([-7.0, 7.0]), 3), torch.true_divide(i, i))
print(i ** 2, (i ** 2).dtype, i ** 0.5, 2 ** i, (2.0 ** i).dtype, f ** i)
print(i.to(torch.float32), f.to(torch.int64), f.to(dtype=torch.float16), b.to(torch.int32))
print(f.type(), f.type(torch.int32), i.type(torch.DoubleTensor).dtype, f.type('torch.LongTensor'))
print(f.double(), f.half(), f.int(), f.long(), f.bool(), f.float().dtype, f.bfloat16(), i.short())
print(torch.tensor([2.7, -2.7]).int(), torch.tensor([300]).to(torch.uint8),
      torch.tensor([1.5, 0.0]).bool())
print(f.to(torch.float64).dtype, f.to(d).dtype, f.to('cpu', torch.int16).dtype, f.to(f) is f)
print(f.is_floating_point(), i.is_floating_point(), torch.is_floating_point(h),
      torch.is_complex(f * 1j), f.dtype.is_floating_point, i.dtype.is_signed, f.element_size())
print(torch.iinfo(torch.int32), torch.iinfo(torch.int8).max, torch.iinfo(torch.uint8).min)
print(torch.iinfo(torch.int64).bits, torch.iinfo(torch.int16))
print(torch.finfo(torch.float32))
print(torch.finfo(torch.float16))
print(torch.finfo(torch.bfloat16).eps, torch.finfo(torch.float64).max, torch.finfo().tiny)
print(torch.finfo(torch.float32).eps, torch.finfo(torch.float16).resolution)
print(torch.tensor(3).dtype, torch.tensor(3.0).dtype, torch.tensor(True).dtype,
      torch.tensor(3j).dtype, torch.tensor([1, 2.0]).dtype)
torch.set_default_dtype(torch.float64)
print(torch.tensor([1.5]).dtype, torch.ones(2).dtype, torch.tensor(3j).dtype, (i * 1.5).dtype)
torch.set_default_dtype(torch.float32)
print(torch.zeros(2, dtype=torch.int32) + 1.5, torch.arange(5).dtype, torch.arange(5.0).dtype,
      torch.arange(0, 1, 0.25).dtype, torch.linspace(0, 1, 3).dtype, torch.full((2,), 7).dtype)
print(torch.full((2,), True).dtype, torch.zeros_like(i, dtype=torch.float).dtype,
      torch.randint(0, 5, (3,)).dtype, torch.rand(2).dtype)
x = torch.tensor([1, 2, 3])
x += 2
print(x, x.dtype)
try:
    x += 1.5
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    x.add_(f)
except RuntimeError as e:
    print(type(e).__name__, e)
y = torch.tensor([1.0, 2.0])
y += torch.tensor([1, 2])
print(y, y.dtype)
print(torch.tensor([1, 2]).float().mean(), torch.tensor([1, 2]).sum().dtype,
      torch.tensor([True, True]).sum(), torch.tensor([1, 2], dtype=torch.int8).sum().dtype)
print(torch.tensor([1, 2], dtype=torch.int8).prod().dtype, torch.tensor([1.0, 2.0]).sum().dtype,
      torch.tensor([1, 2], dtype=torch.int32).cumsum(0).dtype)
try:
    torch.tensor([1, 2]).mean()
except RuntimeError as e:
    print(type(e).__name__, e)
print(torch.tensor([1, 2]) == torch.tensor([1.0, 2.5]), (i > 1).dtype, i.eq(2))
print(torch.tensor([1, 2]).numpy().dtype, torch.tensor([1.0]).numpy().dtype, f.dtype.itemsize)
print(int(torch.tensor(3.7)), float(torch.tensor(2)), bool(torch.tensor(0.0)), complex(f[0]))
print("RESULT: ok")
