"""Python custom operators, shrunk from the PyTorch tutorial "Custom Python Operators"
(pytorch.org/tutorials/advanced/python_custom_ops.html): wrap NumPy code as
``torch.library.custom_op``s (``mylib::numpy_mul``, ``mylib::numpy_sin``), register a fake
impl and an autograd formula (``register_autograd`` with ``setup_context``), a mutating op
declared with ``mutates_args`` (``numpy_sin_out``), ``torch.library.opcheck``, calls through
``torch.ops.mylib``, a lower-level ``Library.define``/``impl`` op, and the op used inside a
small model trained for a few SGD steps."""
import importlib
import os

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
Tensor = torch.Tensor


@torch.library.custom_op("mylib::numpy_mul", mutates_args=())
def numpy_mul(x: Tensor, y: float) -> Tensor:
    x_np = x.numpy(force=True)
    z_np = x_np * y
    return torch.from_numpy(z_np).to(x.device)


@numpy_mul.register_fake
def _(x, y):
    return torch.empty_like(x)


def setup_context(ctx, inputs, output):
    x, y = inputs
    ctx.y = y


def backward(ctx, grad):
    return grad * ctx.y, None


numpy_mul.register_autograd(backward, setup_context=setup_context)


@torch.library.custom_op("mylib::numpy_sin", mutates_args=())
def numpy_sin(x: Tensor) -> Tensor:
    return torch.from_numpy(np.sin(x.numpy(force=True)))


@numpy_sin.register_fake
def _(x):
    return torch.empty_like(x)


def sin_setup(ctx, inputs, output):
    (x,) = inputs
    ctx.save_for_backward(x)


def sin_backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return grad * x.cos()


torch.library.register_autograd("mylib::numpy_sin", sin_backward, setup_context=sin_setup)


@torch.library.custom_op("mylib::numpy_sin_out", mutates_args={"out"})
def numpy_sin_out(x: Tensor, out: Tensor) -> None:
    assert x.device == out.device
    x_np = x.numpy()
    out_np = out.numpy()
    np.sin(x_np, out=out_np)


@torch.library.custom_op("mylib::scale_shift", mutates_args=())
def scale_shift(x: Tensor, w: Tensor, *, shift: float = 0.0) -> tuple[Tensor, Tensor]:
    return x * w + shift, (x * w).sum(dim=-1)


def ss_setup(ctx, inputs, keyword_only_inputs, output):
    x, w = inputs
    ctx.save_for_backward(x, w)


def ss_backward(ctx, g_out, g_sum):
    x, w = ctx.saved_tensors
    g = g_out + g_sum.unsqueeze(-1)
    gx = g * w if ctx.needs_input_grad[0] else None
    gw = (g * x).sum(0) if ctx.needs_input_grad[1] else None
    return gx, gw


scale_shift.register_autograd(ss_backward, setup_context=ss_setup)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.w = nn.Parameter(torch.linspace(0.5, 1.5, 8))
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        h = numpy_sin(self.fc1(x))
        h, s = scale_shift(h, self.w, shift=0.1)
        return self.fc2(numpy_mul(h, 0.5)).squeeze(-1) + 0.01 * s


def main():
    torch.manual_seed(0)
    print(numpy_mul, numpy_mul._opoverload._schema)
    print(numpy_sin_out._opoverload._schema, scale_shift._opoverload._schema)
    x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    y = numpy_mul(x, 3.0)
    print(y.grad_fn.name())
    y.sum().backward()
    print("mul grad", x.grad)
    x.grad = None
    z = torch.ops.mylib.numpy_sin(x)
    z.backward(torch.ones_like(z))
    print("sin grad ok", torch.allclose(x.grad, x.detach().cos()))
    print(torch.library.opcheck(numpy_mul, (torch.randn(3, requires_grad=True), 2.0)))
    print(torch.library.opcheck(torch.ops.mylib.numpy_sin.default, (torch.randn(3),)))
    inp = torch.randn(3)
    out = torch.empty(3)
    v = out._version
    numpy_sin_out(inp, out)
    print("sin_out", torch.allclose(out, inp.sin()), out._version > v)

    lib = torch.library.Library("mylib_low", "DEF")
    lib.define("square(Tensor x) -> Tensor")
    lib.impl("square", lambda t: t * t, "CompositeImplicitAutograd")
    t = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    torch.ops.mylib_low.square(t).sum().backward()
    print("square grad", t.grad)
    try:
        numpy_sin_out.register_autograd(sin_backward)
    except RuntimeError as e:
        print("RuntimeError", str(e)[:60])

    model = Model().double()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    xs = torch.randn(16, 4, dtype=torch.float64)
    ys = xs.sum(-1).sin()
    for step in range(5):
        opt.zero_grad()
        loss = ((model(xs) - ys) ** 2).mean()
        loss.backward()
        opt.step()
        print("step %d loss %.6f gw %.6f" % (step, loss.item(), model.w.grad.abs().sum().item()))


if __name__ == "__main__":
    main()
