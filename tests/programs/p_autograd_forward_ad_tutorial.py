"""PyTorch's "Forward-mode Automatic Differentiation" tutorial (intermediate/forward_ad_usage),
shrunk: dual tensors, make_dual/unpack_dual, a module's parameters as duals, and a custom
autograd.Function that defines only jvp."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
fwAD = importlib.import_module(torch.__name__ + ".autograd.forward_ad")
nn = torch.nn
Function = torch.autograd.Function

torch.manual_seed(0)
primal = torch.randn(4, 4)
tangent = torch.randn(4, 4)


def fn(x, y):
    return x ** 2 + y ** 2


with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    assert fwAD.unpack_dual(dual_input).tangent is tangent
    dual_input_alt = fwAD.make_dual(primal, tangent.T)
    assert fwAD.unpack_dual(dual_input_alt).tangent is not tangent
    plain_tensor = torch.randn(4, 4)
    dual_output = fn(dual_input, plain_tensor)
    jvp = fwAD.unpack_dual(dual_output).tangent
    print("jvp:", jvp)
    print("expected:", 2 * primal * tangent)

print("tangent after level:", fwAD.unpack_dual(dual_output).tangent)

model = nn.Linear(5, 5)
input = torch.randn(16, 5)
params = {name: p for name, p in model.named_parameters()}
tangents = {name: torch.rand_like(p) for name, p in params.items()}

with fwAD.dual_level():
    for name, p in params.items():
        delattr(model, name)
        setattr(model, name, fwAD.make_dual(p, tangents[name]))
    out = model(input)
    jvp = fwAD.unpack_dual(out).tangent
print("module jvp:", jvp.shape, f"{jvp.sum().item():.4f}")


class Fn(Function):
    @staticmethod
    def forward(foo):
        result = torch.exp(foo)
        return result

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.result = output

    @staticmethod
    def jvp(ctx, gI):
        gO = gI * ctx.result
        # If the tensor stored in ``ctx`` will not also be used in the backward pass,
        # one can manually free it using ``del``
        del ctx.result
        return gO


fn = Fn.apply

primal = torch.randn(5, 5, dtype=torch.double, requires_grad=True)
tangent = torch.randn(5, 5)

with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    dual_output = fn(dual_input)
    jvp = fwAD.unpack_dual(dual_output).tangent
    print("custom jvp:", jvp)
    print("matches exp:", torch.allclose(jvp, tangent * primal.detach().exp()))
    twice = fwAD.unpack_dual(fn(dual_output) * 2).tangent
    print("chained:", f"{twice.sum().item():.6f}")

print("RESULT:", f"{jvp.sum().item():.6f}")
