"""What a logging Tensor subclass sees: the func names torch passes to __torch_function__ for
operators, methods and properties."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
calls = []
class L(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        calls.append(func.__name__)
        return super().__torch_function__(func, types, args, kwargs or {})
lg = torch.ones(2).as_subclass(L)
b = torch.ones(2, dtype=torch.bool).as_subclass(L)
i = torch.ones(2, dtype=torch.long).as_subclass(L)
fs = [
    lambda: lg @ lg,
    lambda: 1 + lg,
    lambda: lg + 1,
    lambda: 2 * lg,
    lambda: lg * 2,
    lambda: 1 - lg,
    lambda: lg - 1,
    lambda: 2 / lg,
    lambda: 2 // lg,
    lambda: 2 % lg,
    lambda: 2 ** lg,
    lambda: lg ** 2,
    lambda: -lg,
    lambda: abs(lg),
    lambda: +lg,
    lambda: lg == 1,
    lambda: lg < 1,
    lambda: lg <= 1,
    lambda: lg > 1,
    lambda: lg >= 1,
    lambda: lg != 1,
    lambda: True & b,
    lambda: b & True,
    lambda: b | b,
    lambda: b ^ b,
    lambda: True | b,
    lambda: True ^ b,
    lambda: 1 << i,
    lambda: i << 1,
    lambda: i >> 1,
    lambda: 1 >> i,
    lambda: ~b,
    lambda: lg[0],
    lambda: len(lg),
    lambda: 2 in lg,
    lambda: lg / 2,
    lambda: lg // 2,
    lambda: lg % 2,
    lambda: lg.clone().add_(1),
    lambda: lg.clone().__iadd__(1),
    lambda: lg.clone().__imul__(2),
    lambda: lg.clone().__isub__(1),
    lambda: lg.clone().__itruediv__(2),
    lambda: lg.T,
    lambda: lg.sum(),
    lambda: torch.sum(lg),
    lambda: lg.mean(),
    lambda: lg.view(2),
    lambda: lg.reshape(2),
    lambda: float(lg[0]),
    lambda: lg.tolist(),
    lambda: lg.shape,
    lambda: lg.dtype,
    lambda: lg.detach(),
    lambda: lg.abs(),
    lambda: list(lg),
    lambda: lg.size(),
    lambda: lg.numel(),
    lambda: lg.dim(),
    lambda: lg.float(),
    lambda: lg.to(torch.float64),
]
for f in fs:
    calls.clear()
    f()
    print(calls)
print("RESULT: ok")
