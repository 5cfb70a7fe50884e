"""Extending torch.Tensor (the "Extending PyTorch" notes): subclasses keep their class through
every op, __torch_function__ sees each call, _make_subclass, as_subclass and its alias node."""
import importlib
import os
torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
F = torch.nn.functional
class MyT(torch.Tensor):
    pass
x = torch.tensor([[1., -2.], [3., 4.]]).as_subclass(MyT)
p = torch.nn.Parameter(torch.ones(2))
def n(v):
    if isinstance(v, (tuple, list)):
        return type(v).__name__ + "(" + ", ".join(n(e) for e in v) + ")"
    return type(v).__name__
for name, f in [
    ("x[0]", lambda: x[0]), ("x.T", lambda: x.T),
    ("x.max(0)", lambda: x.max(0)),
    ("cat", lambda: torch.cat([x, torch.ones(2, 2)])), ("relu", lambda: F.relu(x)),
    ("x*p", lambda: x * p), ("p*x", lambda: p * x), ("p*2", lambda: p * 2),
    ("detach", lambda: x.detach()), ("clone", lambda: x.clone()), ("sum", lambda: x.sum()),
    ("item", lambda: x.sum().item()), ("shape", lambda: x.shape),
    ("tolist", lambda: x.tolist()), ("add_", lambda: x.clone().add_(1)),
    ("split", lambda: x.split(1)), ("unbind", lambda: x.unbind()),
    ("mm", lambda: torch.mm(x, x)), ("linear", lambda: F.linear(x, torch.ones(3, 2))),
    ("softmax", lambda: torch.softmax(x, 0)), ("where", lambda: torch.where(x > 0, x, 0.)),
    ("gt", lambda: x > 0), ("eq", lambda: x == x), ("float", lambda: x.float()),
    ("to", lambda: x.to(torch.float64)), ("numpy", lambda: x.numpy()),
    ("view", lambda: x.view(4)), ("reshape", lambda: torch.reshape(x, (4,))),
    ("abs", lambda: abs(x)), ("neg", lambda: -x), ("pow", lambda: x ** 2), ("rpow", lambda: 2 ** x),
    ("len", lambda: len(x)), ("iter", lambda: list(x)), ("bool", lambda: bool(x[0, 0])),
    ("linalg", lambda: torch.linalg.norm(x)), ("fft", lambda: torch.fft.fft(x)),
    ("stack", lambda: torch.stack([x, x])), ("zeros_like", lambda: torch.zeros_like(x)),
    ("new_zeros", lambda: x.new_zeros(2)), ("sort", lambda: torch.sort(x)),
]:
    try:
        r = f()
        print(name, n(r))
    except Exception as e:
        print(name, "ERR", type(e).__name__, str(e)[:100])
y = torch.tensor([1., 2.], requires_grad=True)
z = y.as_subclass(MyT)
print(type(z).__name__, z.requires_grad, z.grad_fn)
w = (z * 3).sum()
print(type(w).__name__, w.grad_fn.name() if hasattr(w.grad_fn, "name") else w.grad_fn)
w.backward()
print(type(y.grad).__name__, y.grad)
print(repr(z * 2))
class Tagged(torch.Tensor):
    @staticmethod
    def __new__(cls, data, tag):
        t = torch.Tensor._make_subclass(cls, data, data.requires_grad)
        t.tag = tag
        return t
    def __init__(self, data, tag):
        pass
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        tags = [a.tag for a in args if isinstance(a, Tagged)]
        out = super().__torch_function__(func, types, args, kwargs)
        if isinstance(out, Tagged):
            out.tag = "+".join(tags) if tags else "?"
        return out
a = Tagged(torch.ones(2), "a")
b = Tagged(torch.ones(2), "b")
c = a + b
print(type(c).__name__, c.tag, (a * 2).tag, torch.add(a, 1).tag)
print(repr(a))
calls = []
class Logged(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        calls.append(func.__name__)
        return super().__torch_function__(func, types, args, kwargs or {})
lg = torch.ones(2, 2).as_subclass(Logged)
_ = torch.nn.functional.relu(lg @ lg + 1).sum(dim=0).mean()
print(calls)
htf = torch.overrides.has_torch_function
print(htf((lg,)), htf((torch.ones(1),)), htf((p,)))
class ScalarTensor:
    def __init__(self, N, value):
        self._N = N
        self._value = value

    def __repr__(self):
        return "ScalarTensor(N={}, value={})".format(self._N, self._value)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        if func is torch.mean:
            return float(args[0]._value) / args[0]._N
        return NotImplemented


d = ScalarTensor(5, 2)
print(torch.mean(d))
try:
    torch.add(d, 1)
except TypeError as e:
    print("TypeError", str(e).splitlines()[0])
print("RESULT: ok")
