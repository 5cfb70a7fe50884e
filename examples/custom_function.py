"""Write your own autograd Functions and check them with gradcheck.

The three Functions from the notes this project started from (Chinese notes on how
PyTorch builds its graph), in the modern style (static ``forward(ctx, ...)`` and
``backward(ctx, ...)``, called through ``.apply``):

- ``MyReLU``: save the input, pass the gradient where the input was positive;
- ``LinearFunction`` inside a ``Linear`` module: the Function owns the maths, the Module the
  parameters;
- ``Softplus``: ``log(1 + exp(x))`` overflows at x = 100 in float32, the stable form does not.

Each one is checked against finite differences with ``torch.autograd.gradcheck`` in float64.
The same checks, and more, run from the command line: ``python -m ember check
examples/custom_function.py``.

Run:
    python examples/custom_function.py            # all checks, 5 random trials each
    python examples/custom_function.py --steps 2  # smoke run (CI)
"""
import argparse

import ember as torch
from ember import nn
from ember.autograd import Function, gradcheck

TRIALS = 5  # random inputs per gradcheck
SEED = 0


class MyReLU(Function):
    @staticmethod
    def forward(ctx, input_):
        ctx.save_for_backward(input_)  # kept for backward, checked against in-place changes
        return input_.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input_, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input_ < 0] = 0  # ReLU routes the gradient: zero where the input was < 0
        return grad_input


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:  # skip work nobody asked for
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


class Linear(nn.Module):
    def __init__(self, input_features, output_features, bias=True):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(output_features, input_features))
        if bias:
            self.bias = nn.Parameter(torch.empty(output_features))
        else:
            self.register_parameter("bias", None)
        self.weight.data.uniform_(-0.1, 0.1)
        if self.bias is not None:
            self.bias.data.uniform_(-0.1, 0.1)

    def forward(self, input):
        return LinearFunction.apply(input, self.weight, self.bias)


class NaiveSoftplus(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.log(1 + torch.exp(x))  # exp(100) = inf in float32

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * torch.exp(x) / (1 + torch.exp(x))  # inf / inf = nan


class Softplus(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.log1p(torch.exp(-x.abs())) + x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)  # d softplus / dx = sigmoid(x), stable


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=TRIALS, help="random trials per check")
    args = parser.parse_args()
    torch.manual_seed(SEED)

    x = torch.tensor([-1.0, 1.0, 2.0], requires_grad=True)
    y = MyReLU.apply(x)
    torch.sum(y).backward()
    print("MyReLU:", y, "\n  x.grad =", x.grad)

    layer = Linear(4, 3)
    x = torch.rand(2, 4, requires_grad=True)
    torch.sum(layer(x)).backward()
    print("Linear(4, 3) with LinearFunction: weight.grad =\n", layer.weight.grad)

    x = torch.tensor([-100.0, 0.0, 100.0], requires_grad=True)
    print("naive softplus at [-100, 0, 100]: ", NaiveSoftplus.apply(x).detach())
    print("stable softplus at [-100, 0, 100]:", Softplus.apply(x).detach())
    print("nn.functional.softplus:           ", nn.functional.softplus(x).detach())

    # Gradcheck compares backward() with central finite differences: use float64, and keep
    # away from the ReLU kink at 0 where the two legitimately differ.
    for trial in range(args.steps):
        x = torch.randn(5, dtype=torch.float64)
        x = (x + x.sign() * 0.1).requires_grad_()
        w = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
        b = torch.randn(3, dtype=torch.float64, requires_grad=True)
        inp = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
        s = (torch.randn(6, dtype=torch.float64) * 5).requires_grad_()
        assert gradcheck(MyReLU.apply, (x,))
        assert gradcheck(LinearFunction.apply, (inp, w, b))
        assert gradcheck(LinearFunction.apply, (inp, w))  # bias=None is allowed
        assert gradcheck(Softplus.apply, (s,))
        assert gradcheck(NaiveSoftplus.apply, (s,))  # correct maths, unstable numerics
    print("gradcheck passed for MyReLU, LinearFunction and Softplus (%d trials)" % args.steps)


if __name__ == "__main__":
    main()
