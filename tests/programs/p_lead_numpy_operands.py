"""NumPy arrays and scalars as operator operands: which side computes, which raises (torch defers
an array operand to NumPy)."""
import importlib
import os

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
t = torch.tensor([1., 2.])
b = torch.tensor([True, False])
i = torch.tensor([3, 4])
a = np.array([2., 3.])
ab = np.array([True, True])
ai = np.array([1, 2])
cases = {
    "t+a": lambda: t + a, "t-a": lambda: t - a, "t*a": lambda: t * a,
    "t/a": lambda: t / a,
    "t//a": lambda: t // a, "t%a": lambda: t % a, "t**a": lambda: t ** a, "t@a": lambda: t @ a,
    "b&ab": lambda: b & ab, "b|ab": lambda: b | ab, "b^ab": lambda: b ^ ab,
    "i<<ai": lambda: i << ai, "i>>ai": lambda: i >> ai,
    "t<a": lambda: t < a, "t<=a": lambda: t <= a, "t>a": lambda: t > a, "t>=a": lambda: t >= a,
    "t==a": lambda: t == a, "t!=a": lambda: t != a,
    "a+t": lambda: a + t, "a-t": lambda: a - t, "a*t": lambda: a * t, "a/t": lambda: a / t,
    "a//t": lambda: a // t, "a%t": lambda: a % t, "a**t": lambda: a ** t, "a@t": lambda: a @ t,
    "ab&b": lambda: ab & b, "ab|b": lambda: ab | b, "ab^b": lambda: ab ^ b,
    "ai<<i": lambda: ai << i, "ai>>i": lambda: ai >> i,
    "a<t": lambda: a < t, "a<=t": lambda: a <= t, "a>t": lambda: a > t, "a>=t": lambda: a >= t,
    "a==t": lambda: a == t, "a!=t": lambda: a != t,
    "s*t": lambda: np.float64(2) * t, "s-t": lambda: np.int64(3) - t,
    "t-s": lambda: t - np.float32(1),
    "0d+t": lambda: np.array(3.0) + t, "t<s": lambda: t < np.float64(1.5),
    "s<t": lambda: np.float64(1.5) < t, "s==t": lambda: np.float64(1.) == t,
}
for k, f in cases.items():
    try:
        r = f()
        shown = r.tolist() if hasattr(r, "tolist") else r
        print(k, "->", type(r).__name__, getattr(r, "dtype", ""), shown)
    except Exception as e:
        print(k, type(e).__name__, str(e).splitlines()[0][:90])
print("RESULT: ok")
