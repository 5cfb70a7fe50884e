"""``python -m ember demo``: the seeds' story, told by running it."""
import ember
from ember.autograd import Function


class MyReLU(Function):
    @staticmethod
    def forward(ctx, input_):
        ctx.save_for_backward(input_)
        return input_.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input_, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input_ < 0] = 0
        return grad_input


def run(args):
    print("1. A custom Function: MyReLU.apply(x) on x = [-1, 1, 2]")
    x = ember.tensor([-1.0, 1.0, 2.0], requires_grad=True)
    y = MyReLU.apply(x)
    y.sum().backward()
    print("   y =", y)
    print("   x.grad =", x.grad)
    print("2. The graph: y = x + 2; z = y * y * 4; out = z.mean()")
    x = ember.ones(2, 2, requires_grad=True)
    out = ((x + 2) * (x + 2) * 4).mean()
    print("   out =", out)
    out.backward()
    print("   x.grad =", x.grad)
    return 0
