"""Debugging autograd, after the torch.autograd docs ("Anomaly detection", "Numerical gradient
checking") and the forum recipes built on them: detect_anomaly / set_detect_anomaly catching a
NaN produced in backward, gradcheck and gradgradcheck on user functions (passing, failing with
raise_exception=False, and the GradcheckError message), and the checks' common misuses."""
import importlib
import os
import warnings

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
autograd = torch.autograd
gradcheck = torch.autograd.gradcheck
gradgradcheck = torch.autograd.gradgradcheck

torch.manual_seed(0)
warnings.simplefilter("ignore")

# --- anomaly detection: the docs' MyFunc that returns NaN in backward


class MyFunc(autograd.Function):
    @staticmethod
    def forward(ctx, inp):
        return inp.clone()

    @staticmethod
    def backward(ctx, gO):
        raise RuntimeError("Some error in backward")
        return gO.clone()


def run_fn(a):
    out = MyFunc.apply(a)
    return out.sum()


inp = torch.rand(10, 10, requires_grad=True)
out = run_fn(inp)
try:
    out.backward()
except RuntimeError as e:
    print(type(e).__name__, e)
print(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
with autograd.detect_anomaly():
    print(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
    inp = torch.rand(10, 10, requires_grad=True)
    out = run_fn(inp)
    try:
        out.backward()
    except RuntimeError as e:
        print(type(e).__name__, e)
print(torch.is_anomaly_enabled())

# NaN created in backward: sqrt at 0 times 0 -> the anomaly mode names the node
x = torch.zeros(3, requires_grad=True)
with autograd.detect_anomaly():
    y = torch.sqrt(x) * 0
    try:
        y.sum().backward()
    except RuntimeError as e:
        print(type(e).__name__, e)
print(x.grad)

x = torch.tensor([0.5, 1.0, 4.0], requires_grad=True)
with autograd.set_detect_anomaly(True):
    z = (x.sqrt() * x.sqrt()).sum()
    z.backward()
print(x.grad)
with autograd.detect_anomaly(check_nan=False):
    x.grad = None
    (torch.sqrt(x) * 0).sum().backward()
print(x.grad)
autograd.set_detect_anomaly(True)
print(torch.is_anomaly_enabled())
autograd.set_detect_anomaly(False)
print(torch.is_anomaly_enabled())

# --- gradcheck / gradgradcheck on user functions


def my_softplus(x, beta):
    return torch.log1p(torch.exp(beta * x)) / beta


def pairwise(a, b):
    return (a.unsqueeze(1) - b.unsqueeze(0)).pow(2).sum(-1).sqrt()


a = torch.randn(4, 3, dtype=torch.double, requires_grad=True)
b = torch.randn(5, 3, dtype=torch.double, requires_grad=True)
print(gradcheck(my_softplus, (a, 2.0)), gradgradcheck(my_softplus, (a, 2.0)))
print(gradcheck(pairwise, (a, b), eps=1e-6, atol=1e-4))
print(gradgradcheck(pairwise, (a, b)))
print(gradcheck(torch.nn.functional.layer_norm, (a, (3,)), fast_mode=True))
lin = torch.nn.Linear(3, 2).double()
print(gradcheck(lambda t: lin(t).tanh(), (a,)))
print(gradcheck(lambda t: torch.linalg.solve(t @ t.mT + torch.eye(3, dtype=t.dtype), t),
                (torch.randn(3, 3, dtype=torch.double, requires_grad=True),)))


class BadExp(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g * y * 1.1      # wrong on purpose


xb = torch.randn(3, dtype=torch.double, requires_grad=True)
print(gradcheck(BadExp.apply, (xb,), raise_exception=False))
try:
    gradcheck(BadExp.apply, (xb,))
except Exception as e:
    print(type(e).__name__, str(e).splitlines()[0])
    print(isinstance(e, RuntimeError), type(e).__mro__[1].__name__)
print(gradcheck(BadExp.apply, (xb,), raise_exception=False, fast_mode=True))

# misuses: float32 inputs warn, inputs without requires_grad
x32 = torch.randn(3, requires_grad=True)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    ok = gradcheck(torch.sin, (x32,), eps=1e-3, atol=1e-2, rtol=1e-2)
    print(ok, [str(m.message).split(".")[0] for m in w][:1])
try:
    gradcheck(torch.sin, (torch.randn(3, dtype=torch.double),))
except ValueError as e:
    print(type(e).__name__, e)
print(gradcheck(torch.sin, (torch.randn(2, dtype=torch.double, requires_grad=True),),
                check_backward_ad=True, check_batched_grad=True))
print(gradcheck(torch.cos, (torch.randn(2, dtype=torch.double, requires_grad=True),),
                check_forward_ad=True))
print("RESULT: ok")
