"""The PyTorch recipe "Extension points in nn.Module for load_state_dict and tensor subclasses"
(recipes/recipes/swap_tensors.py), shrunk: ``torch.utils.swap_tensors`` on two plain tensors,
``nn.Module.half()``/``.to()`` keeping or replacing the Parameter objects depending on
``torch.__future__.set_swap_module_params_on_conversion``, and ``load_state_dict`` into a module
whose weight is a Tensor subclass: the default copy keeps the subclass, and with swapping on the
subclass's ``module_load`` decides what is swapped in (here: quantize-on-load with a scale).
Object identities are printed as booleans (same object before/after), never as ids."""
import importlib
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
future = importlib.import_module(LIB + ".__future__")

t1 = torch.arange(2)
t2 = torch.arange(3)
print(f"Before swapping, t1: {t1}, t2: {t2}")
torch.utils.swap_tensors(t1, t2)
print(f"After swapping, t1: {t1}, t2: {t2}")
a = torch.ones(2, requires_grad=True)
b = torch.zeros(2, dtype=torch.float64)
torch.utils.swap_tensors(a, b)
print(a, b, a.requires_grad, b.requires_grad)

# nn.Module.to() and related methods.
for swap in (False, True):
    future.set_swap_module_params_on_conversion(swap)
    torch.manual_seed(0)
    m = nn.Linear(3, 5)
    w, bias = m.weight, m.bias
    m.half()
    print(f"swap={swap}: same weight object {w is m.weight}, same bias object {bias is m.bias},"
          f" old reference dtype {w.dtype}, weight dtype {m.weight.dtype},"
          f" type {type(m.weight).__name__}")
    m.to(torch.float32)
    print(round(m(torch.ones(1, 3)).sum().item(), 3), w is m.weight)
future.set_swap_module_params_on_conversion(False)


class QuantizedWeight(torch.Tensor):
    """A weight stored with a scale; loading a float checkpoint quantizes it to that grid.
    (The scale is a class attribute: ``Parameter``'s detach makes a new instance.)"""

    scale = 0.5

    @staticmethod
    def __new__(cls, elem, scale):
        return torch.Tensor._make_subclass(cls, elem.detach(), elem.requires_grad)

    def __init__(self, elem, scale):
        self.scale = scale

    def __repr__(self):
        return f"QuantizedWeight({self.detach().as_subclass(torch.Tensor)}, scale={self.scale})"

    def module_load(self, other, assign=False):
        q = (other.detach() / self.scale).round() * self.scale
        return QuantizedWeight(q, self.scale)


def fn(m):
    if isinstance(m, nn.Linear):
        requires_grad = m.weight.requires_grad
        m.weight = torch.nn.Parameter(QuantizedWeight(m.weight, 0.5), requires_grad=requires_grad)


torch.manual_seed(0)
m = nn.Linear(3, 5)
m.apply(fn)
print(type(m.weight).__name__, isinstance(m.weight, QuantizedWeight), m.weight.scale)
torch.manual_seed(1)
state_dict = {"weight": torch.randn(5, 3), "bias": torch.randn(5)}

for swap in (False, True):
    future.set_swap_module_params_on_conversion(swap)
    torch.manual_seed(0)
    m = nn.Linear(3, 5)
    m.apply(fn)
    w = m.weight
    m.load_state_dict(state_dict)
    print(f"swap={swap}: same object {w is m.weight}, type {type(m.weight).__name__},"
          f" is QuantizedWeight {isinstance(m.weight, QuantizedWeight)},"
          f" requires_grad {m.weight.requires_grad}")
    print([round(v, 4) for v in m.weight.detach().flatten()[:6].tolist()],
          [round(v, 4) for v in m.bias.detach().tolist()])
    out = m(torch.ones(2, 3))
    out.sum().backward()
    print(round(out.sum().item(), 4), m.weight.grad.shape, round(m.bias.grad.sum().item(), 1))
future.set_swap_module_params_on_conversion(False)

# A plain Tensor's module_load: copy (or, with assign, the detached source).
p = nn.Parameter(torch.zeros(3))
src = torch.arange(3.0, requires_grad=True)
try:
    p.module_load(src)
except RuntimeError as e:
    print("RuntimeError", e)
with torch.no_grad():      # (load_state_dict calls it under no_grad)
    r = p.module_load(src)
print(r, r.requires_grad, p.tolist())
r = p.module_load(src * 2, assign=True)
print(r, r.requires_grad, r.grad_fn)

# Swapping fails loudly when something holds a weak reference to a tensor.
import weakref  # noqa: E402

x = torch.ones(2)
ref = weakref.ref(x)
try:
    torch.utils.swap_tensors(x, torch.zeros(2))
except RuntimeError as e:
    print("RuntimeError", str(e).splitlines()[0][:90])
print(ref() is x, x)
