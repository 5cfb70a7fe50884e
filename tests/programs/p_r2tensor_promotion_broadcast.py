"""Type promotion and broadcasting, as the "Tensor Attributes: type promotion" docs and the
"Broadcasting semantics" notes explain them: full result_type / promote_types / can_cast tables,
tensor-vs-scalar categories, 0-dim tensors, integer division/remainder semantics, in-place
promotion errors, and broadcast shapes (with the errors of shapes that don't broadcast)."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))

dtypes = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
          torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64,
          torch.complex128]
short = {d: str(d).replace("torch.", "")[:5] for d in dtypes + [torch.complex32]}
print("promote_types".ljust(8), " ".join(short[d].rjust(5) for d in dtypes))
for a in dtypes:
    print(short[a].ljust(8), " ".join(short[torch.promote_types(a, b)].rjust(5) for b in dtypes))
print("can_cast")
for a in dtypes:
    print(short[a].ljust(8), "".join("1" if torch.can_cast(a, b) else "." for b in dtypes))
print("tensor + 0-dim tensor / python scalar")
for a in dtypes:
    t = torch.ones(2, dtype=a)
    row = [torch.result_type(t, torch.tensor(1, dtype=b)) for b in dtypes]
    scal = [torch.result_type(t, s) for s in (True, 2, 2.5, 1 + 1j)]
    print(short[a].ljust(8), " ".join(short[r].rjust(5) for r in row), "|",
          " ".join(short[r] for r in scal))
print(torch.result_type(2, 3.0), torch.result_type(torch.tensor(2), 3),
      torch.result_type(torch.tensor([1, 2], dtype=torch.uint8), -1),
      torch.result_type(torch.tensor(1.0, dtype=torch.float64), torch.ones(2, dtype=torch.half)))
print(torch.get_default_dtype(), torch.tensor(1.5).dtype, torch.tensor([1, 2.0]).dtype,
      torch.tensor(True).dtype, torch.tensor(1 + 2j).dtype, torch.arange(3.0).dtype)

# in-place ops cannot change the dtype of their output
i = torch.tensor([1, 2, 3])
try:
    i += 1.5
except Exception as e:
    print(type(e).__name__, e)
try:
    torch.ones(2, dtype=torch.float32).add_(torch.ones(2, dtype=torch.complex64))
except Exception as e:
    print(type(e).__name__, e)
f = torch.ones(3)
f += torch.tensor([1, 2, 3])
f *= torch.tensor(2.0, dtype=torch.float64)
print(f, f.dtype)
u = torch.tensor([250, 5], dtype=torch.uint8)
print(u + 10, (u + 10).dtype, u - 10, u * 2, u + u)
print(torch.tensor([127], dtype=torch.int8) + 1, torch.tensor([100], dtype=torch.int8) * 3)

# division semantics
a = torch.tensor([7, -7, 7, -7])
b = torch.tensor([2, 2, -2, -2])
print(a / b, a // b, a % b, torch.fmod(a, b), torch.remainder(a, b))
print(torch.div(a, b, rounding_mode="trunc"), torch.div(a, b, rounding_mode="floor"),
      torch.floor_divide(a, b), torch.true_divide(a, b))
af, bf = a.float() + 0.5, b.float()
print(af / bf, af // bf, af % bf, torch.fmod(af, bf), torch.div(af, bf, rounding_mode="trunc"))
print(a // 2.5, (a // 2.5).dtype, a % 2.5, 7 // torch.tensor(-2), -7 % torch.tensor(3))
print(torch.tensor([1.0, -1.0, 0.0]) / 0, torch.tensor([1.0, -0.0]) // 0, torch.fmod(
    torch.tensor([5.0]), 0), torch.remainder(torch.tensor([5.0, -5.0]), float("inf")))
try:
    torch.tensor([1, 2]) // 0
except Exception as e:
    print(type(e).__name__, e)
try:
    torch.tensor([1, 2]) % torch.tensor([0, 1])
except Exception as e:
    print(type(e).__name__, e)
print(torch.tensor([5, -5]) >> 1, torch.tensor([5, -5]) << 2, torch.tensor([6]) & 3,
      torch.tensor([6]) | 1, torch.tensor([6]) ^ 5, ~torch.tensor([0, 5]), ~torch.tensor([True]))
print(torch.tensor([3]) ** 2, torch.tensor([3.0]) ** -1,
      torch.tensor([2]) ** 0.5, torch.pow(2, torch.tensor([1, 2])), torch.tensor([-8.0]) ** (1 / 3))
try:
    torch.tensor([2]) ** -1
except Exception as e:
    print(type(e).__name__, e)

# comparisons across dtypes
print(torch.tensor([1, 2]) == torch.tensor([1.0, 2.5]), torch.tensor([True]) == 1,
      torch.tensor([0.1 + 0.2]) == 0.3, torch.tensor([0.1 + 0.2], dtype=torch.float64) == 0.3,
      torch.tensor([1], dtype=torch.uint8) < -1, torch.eq(torch.tensor([2]), 2.0).dtype)
print(torch.isclose(torch.tensor([0.1 + 0.2], dtype=torch.float64), torch.tensor([0.3],
                                                                                   dtype=torch.float64)),
      torch.allclose(torch.tensor([1e-9]), torch.tensor([0.0])),
      torch.allclose(torch.tensor([1e-9]), torch.tensor([0.0]), atol=0.0),
      torch.isclose(torch.tensor([1, 2]), torch.tensor([1, 3])))
try:
    torch.isclose(torch.tensor([1]), torch.tensor([1.0]))
except Exception as e:
    print(type(e).__name__, e)

# broadcasting
shapes = [((5, 7, 3), (5, 7, 3)), ((5, 3, 4, 1), (3, 1, 1)), ((1,), (3, 1, 7)), ((5, 1, 4, 1),
          (3, 1, 1)), ((), (2, 3)), ((4, 0), (1,)), ((2, 1), (1, 0))]
for s1, s2 in shapes:
    x, y = torch.empty(s1), torch.empty(s2)
    print(s1, s2, "->", (x + y).size(), torch.broadcast_shapes(s1, s2))
for s1, s2 in [((5, 2, 4, 1), (3, 1, 1)), ((2, 3), (3, 2)), ((0,), (2,))]:
    try:
        torch.empty(s1) + torch.empty(s2)
    except Exception as e:
        print(type(e).__name__, e)
    try:
        torch.broadcast_shapes(s1, s2)
    except Exception as e:
        print(type(e).__name__, e)
x = torch.empty(1, 3, 1)
y = torch.empty(3, 1, 7)
try:
    x.add_(y)
except Exception as e:
    print(type(e).__name__, e)
print(torch.empty(5, 3, 4, 1).add_(torch.empty(3, 1, 1)).shape)
print(torch.broadcast_tensors(torch.tensor([1, 2, 3]), torch.tensor([[1], [2]]))[1])
print(torch.tensor([1, 2, 3]).expand(2, -1), torch.tensor([[1], [2]]).expand_as(torch.empty(2, 4)))
# (``t.broadcast_to(1, 3)`` with separate ints needs ember's Tensor method to take them: reported)
print(torch.broadcast_to(torch.arange(3), (2, 3)), torch.arange(3).broadcast_to((1, 3)).shape)
try:
    torch.arange(3).expand(2, 4)
except Exception as e:
    print(type(e).__name__, e)
try:
    torch.ones(2, 3) @ torch.ones(2, 3)
except Exception as e:
    print(type(e).__name__, e)
print((torch.ones(4, 1, 2, 3) @ torch.ones(5, 3, 6)).shape,
      (torch.ones(3) @ torch.ones(2, 3, 4)).shape)
print((torch.ones(2, 3, 4) @ torch.ones(4)).shape, torch.matmul(torch.ones(3), torch.ones(3)))
print("RESULT:", f.sum().item())
