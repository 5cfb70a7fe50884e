"""torch.testing.assert_close failures, after the torch.testing docs' examples and the
"testing your custom op against a reference" recipes: mismatched values (the full multi-line
report with the greatest absolute/relative differences), shapes, dtypes, NaNs with and without
equal_nan, rtol/atol overrides, check_dtype=False, msg strings and callables, Python scalars and
nested sequences/mappings, and torch.testing.make_tensor for test inputs."""

import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
testing = torch.testing


def check(label, actual, expected, **kwargs):
    try:
        testing.assert_close(actual, expected, **kwargs)
    except Exception as e:
        print(f"--- {label}: {type(e).__name__}")
        print(str(e))
    else:
        print(f"--- {label}: passed")


torch.manual_seed(0)
expected = torch.tensor([1.0, 2.0, 3.0])
check("equal", expected.clone(), expected)
check("one off", torch.tensor([1.0, 2.0, 3.1]), expected)
check("two off", torch.tensor([1.5, 2.0, 2.5]), expected)
check("tiny", expected + 1e-7, expected)
check("atol", torch.tensor([1.0, 2.0, 3.05]), expected, rtol=0, atol=0.1)
check("atol fail", torch.tensor([1.0, 2.0, 3.5]), expected, rtol=0, atol=0.1)
check("rtol only", expected, expected, rtol=1e-3)
check("2d", torch.arange(12.0).reshape(3, 4) * 1.01, torch.arange(12.0).reshape(3, 4))
check("shape", torch.ones(2, 3), torch.ones(3, 2))
check("numel", torch.ones(2), torch.ones(3))
check("dtype", torch.ones(3, dtype=torch.float64), torch.ones(3))
check("dtype off", torch.ones(3, dtype=torch.float64), torch.ones(3), check_dtype=False)
check("int", torch.tensor([1, 2, 3]), torch.tensor([1, 2, 4]))
check("int many", torch.arange(10), torch.arange(10).flip(0))
check("bool", torch.tensor([True, False]), torch.tensor([True, True]))
check("nan", torch.tensor([1.0, float("nan")]), torch.tensor([1.0, float("nan")]))
check("nan eq", torch.tensor([1.0, float("nan")]), torch.tensor([1.0, float("nan")]),
      equal_nan=True)
check("inf", torch.tensor([float("inf")]), torch.tensor([float("-inf")]))
check("half", torch.tensor([1.0, 2.001], dtype=torch.float16),
      torch.tensor([1.0, 2.0], dtype=torch.float16))
check("double", torch.tensor([1.0, 2.0 + 1e-6], dtype=torch.float64),
      torch.tensor([1.0, 2.0], dtype=torch.float64))
check("complex", torch.tensor([1 + 1j, 2 + 2j]), torch.tensor([1 + 1j, 2 + 2.1j]))
check("scalar", 1.0, 1.1)
check("int scalar", 3, 4)
check("scalar type", 1, 1.0)
check("tensor vs scalar", torch.tensor(1.0), 1.0)
check("tensor vs list", torch.tensor([1.0]), [1.0])
check("list", [torch.ones(2), torch.zeros(2)], [torch.ones(2), torch.ones(2)])
check("list len", [1.0, 2.0], [1.0])
check("dict", {"a": torch.ones(2), "b": torch.zeros(1)}, {"a": torch.ones(2), "b": torch.ones(1)})
check("dict keys", {"a": 1.0}, {"b": 1.0})
check("msg str", torch.ones(2), torch.zeros(2), msg="custom message")
check("msg fn", torch.ones(2), torch.zeros(2), msg=lambda m: "prefix! " + m.splitlines()[0])
check("only rtol", torch.ones(2), torch.ones(2), rtol=1e-3)
check("requires_grad", torch.ones(2, requires_grad=True), torch.ones(2))
check("stride", torch.ones(2, 3).t(), torch.ones(3, 2), check_stride=True)
check("grad ok", torch.ones(2, requires_grad=True) * 1.0, torch.ones(2))
check("big", torch.randn(100), torch.randn(100))
check("mixed", torch.tensor([1e-8, 1e3]), torch.tensor([0.0, 1e3 + 0.05]))

print("--- make_tensor")
t = testing.make_tensor((2, 3), dtype=torch.float32, device="cpu", low=-1, high=1)
print(t.shape, t.dtype, bool((t >= -1).all()), bool((t <= 1).all()))
i = testing.make_tensor((4,), dtype=torch.int64, device="cpu", low=0, high=5)
print(i.dtype, bool((i >= 0).all()), bool((i < 5).all()))
b = testing.make_tensor((3,), dtype=torch.bool, device="cpu")
print(b.dtype, b.shape)
g = testing.make_tensor((2,), dtype=torch.float64, device="cpu", requires_grad=True)
print(g.requires_grad, g.dtype)
try:
    testing.make_tensor((2,), dtype=torch.float32, device="cpu", low=2, high=1)
except Exception as e:
    print(type(e).__name__, e)
print("RESULT: ok")
