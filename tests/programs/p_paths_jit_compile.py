"""TorchScript and torch.compile as programs use them for speed: @torch.jit.script functions
with type annotations, torch.jit.trace of a model, jit.ignore/unused/export, jit.Final,
is_scripting guards, torch.compile(model) and compiler.disable, with outputs compared to
the eager model (numbers only: the wrapped objects print differently)."""
import importlib
import os
from typing import List, Tuple

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = importlib.import_module(LIB + ".nn")
F = importlib.import_module(LIB + ".nn.functional")
jit = importlib.import_module(LIB + ".jit")
compiler = importlib.import_module(LIB + ".compiler")
Tensor = torch.Tensor


@torch.jit.script
def gelu_fast(x: Tensor) -> Tensor:
    return x * 0.5 * (1.0 + torch.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


@jit.script
def topk_mask(scores: Tensor, k: int) -> Tuple[Tensor, Tensor]:
    values, idx = scores.topk(k, dim=-1)
    mask = torch.zeros_like(scores).scatter(-1, idx, 1.0)
    return values, mask


@torch.jit.script
def lengths_to_list(lengths: Tensor) -> List[int]:
    out: List[int] = []
    for i in range(lengths.size(0)):
        out.append(int(lengths[i]))
    return out


class Net(nn.Module):
    scale: jit.Final[float]

    def __init__(self):
        super().__init__()
        self.scale = 2.0
        self.fc1 = nn.Linear(6, 8)
        self.fc2 = nn.Linear(8, 3)

    @jit.ignore
    def debug_stats(self, x):
        return float(x.abs().mean())

    @jit.export
    def features(self, x):
        return gelu_fast(self.fc1(x))

    def forward(self, x):
        if not torch.jit.is_scripting():
            _ = self.debug_stats(x)
        return self.fc2(self.features(x)) * self.scale


torch.manual_seed(0)
x = torch.randn(4, 6)
model = Net().eval()
with torch.no_grad():
    eager = model(x)
print("eager", eager)
print("gelu", gelu_fast(torch.linspace(-2, 2, 5)))
print("gelu vs F", torch.allclose(gelu_fast(x), F.gelu(x, approximate="tanh"), atol=1e-6))
vals, mask = topk_mask(torch.tensor([[0.1, 0.9, 0.5], [0.3, 0.2, 0.8]]), 2)
print("topk", vals, mask)
print("lengths", lengths_to_list(torch.tensor([3, 1, 2])))

scripted = torch.jit.script(model)
traced = torch.jit.trace(model, (x,))
with torch.no_grad():
    print("scripted same", torch.allclose(scripted(x), eager))
    print("traced same", torch.allclose(traced(x), eager))
    print("features", scripted.features(x).shape)
frozen = torch.jit.freeze(torch.jit.script(Net().eval()))
print("frozen runs", frozen(x).shape)

compiled = torch.compile(model)
with torch.no_grad():
    out = compiled(x)
print("compiled same", torch.allclose(out, eager, atol=1e-6))


@compiler.disable
def host_side(t):
    return t.sum().item()


@torch.compile(fullgraph=False, dynamic=False)
def step(a, b):
    return (a @ b).relu().sum(dim=0)


print("host", round(host_side(eager), 5))
print("step", step(x, x.t()))
print("is_compiling", compiler.is_compiling(), torch.jit.is_tracing())
print("annotate", torch.jit.annotate(List[int], []))
print("RESULT:", out.sum())
