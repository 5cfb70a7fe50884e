"""torch.autograd.functional (jacobian/hessian/vjp/jvp/hvp/vhp, docs examples) and the
"Forward-mode Automatic Differentiation" tutorial (fwAD.dual_level, make_dual, unpack_dual)."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
AF = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".autograd.functional")
fwAD = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".autograd.forward_ad")
func = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".func")

torch.manual_seed(0)


# torch.autograd.functional docs examples
def exp_reducer(x):
    return x.exp().sum(dim=1)


inputs = torch.rand(2, 2)
print(AF.jacobian(exp_reducer, inputs))
print(AF.jacobian(exp_reducer, inputs, create_graph=True))


def exp_adder(x, y):
    return 2 * x.exp() + 3 * y


inputs = (torch.rand(2), torch.rand(2))
print(AF.jacobian(exp_adder, inputs))
print(AF.jacobian(exp_adder, inputs, vectorize=True, strategy="reverse-mode"))
print(AF.jacobian(exp_adder, inputs, vectorize=True, strategy="forward-mode"))


def pow_reducer(x):
    return x.pow(3).sum()


inputs = torch.rand(2, 2)
print(AF.hessian(pow_reducer, inputs))
print(AF.hessian(pow_reducer, inputs, create_graph=True))


def pow_adder_reducer(x, y):
    return (2 * x.pow(2) + 3 * y.pow(2)).sum()


inputs = (torch.rand(2), torch.rand(2))
print(AF.hessian(pow_adder_reducer, inputs))

inputs = torch.rand(4, 4)
v = torch.ones(4)
print(AF.vjp(exp_reducer, inputs, v))
print(AF.vjp(exp_reducer, inputs, v, create_graph=True))


def adder(x, y):
    return 2 * x + 3 * y


inputs = (torch.rand(2), torch.rand(2))
v = torch.ones(2)
print(AF.vjp(adder, inputs, v))

inputs = torch.rand(4, 4)
v = torch.ones(4, 4)
print(AF.jvp(exp_reducer, inputs, v))
print(AF.jvp(adder, (torch.rand(2), torch.rand(2)), (torch.ones(2), torch.ones(2))))

inputs = torch.rand(2, 2)
v = torch.ones(2, 2)
print(AF.vhp(pow_reducer, inputs, v))
print(AF.hvp(pow_reducer, inputs, v))
inputs = (torch.rand(2), torch.rand(2))
v = (torch.zeros(2), torch.ones(2))
print(AF.vhp(pow_adder_reducer, inputs, v))
print(AF.hvp(pow_adder_reducer, inputs, v))

# a network's Jacobian w.r.t. its input
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
x = torch.randn(3)
print(AF.jacobian(model, x))
print(AF.hessian(lambda x: model(x).sum(), x))

# Forward-mode AD tutorial
primal = torch.randn(10, 10)
tangent = torch.randn(10, 10)


def fn(x, y):
    return x ** 2 + y ** 2


with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    assert fwAD.unpack_dual(dual_input).tangent is tangent
    dual_input_alt = fwAD.make_dual(primal, tangent.T)
    assert fwAD.unpack_dual(dual_input_alt).tangent is not tangent
    plain_tensor = torch.randn(10, 10)
    dual_output = fn(dual_input, plain_tensor)
    jvp = fwAD.unpack_dual(dual_output).tangent
    print(type(fwAD.unpack_dual(dual_output)).__name__, jvp[0, :4])
    print(fwAD.unpack_dual(dual_output).primal[0, :4])

assert fwAD.unpack_dual(dual_output).tangent is None

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
    # (detached: torch's tangent here carries a grad_fn from addmm's forward formula, which
    # ember's double-vjp forward AD does not build; see the report)
    print("module jvp", jvp[:2].detach())

functional_call = func.functional_call
model = nn.Linear(5, 5)
dual_params = {}
with fwAD.dual_level():
    for name, p in params.items():
        dual_params[name] = fwAD.make_dual(p, tangents[name])
    out = functional_call(model, dual_params, input)
    jvp = fwAD.unpack_dual(out).tangent
    print("functional_call jvp", jvp[:2].detach())

x = torch.randn(4)
with fwAD.dual_level():
    d = fwAD.make_dual(x, torch.ones(4))
    for f in (torch.sin, torch.exp, torch.sigmoid, F.softplus, F.gelu, torch.tanh,
              lambda t: F.softmax(t, dim=0), lambda t: t.norm(), lambda t: t.cumsum(0)):
        print(fwAD.unpack_dual(f(d)).tangent)


# (the tutorial's custom Function with only a jvp staticmethod is left out: ember's forward
# AD runs through backward formulas; see the report)

primal0 = torch.randn(10, 10)
tangent0 = torch.randn(10, 10)
primal1 = torch.randn(10, 10)
tangent1 = torch.randn(10, 10)


def fn(x, y):
    return x ** 2 + y ** 2


primal_out, tangent_out = func.jvp(fn, (primal0, primal1), (tangent0, tangent1))
print("func.jvp", tangent_out[0, :3])
batch_size = 4
batched_tangent = torch.randn(batch_size, 10, 10)
print("vmapped jvp", func.vmap(lambda t: func.jvp(fn, (primal0, primal1), (t, t))[1])(
    batched_tangent)[:, 0, 0])
print("RESULT: done")
