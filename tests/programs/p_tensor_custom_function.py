""""Extending torch.autograd" and "Double Backward with Custom Functions" tutorials: custom
Functions (LinearFunction, MulConstant, Exp saving its output, MyCube with double backward,
a Function with setup_context, mark_non_differentiable, once_differentiable), gradcheck and
torch.autograd.functional."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
Function = torch.autograd.Function
once_differentiable = torch.autograd.function.once_differentiable


class LinearFunction(Function):
    @staticmethod
    def forward(input, weight, bias):
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def setup_context(ctx, inputs, output):
        input, weight, bias = inputs
        ctx.save_for_backward(input, weight, bias)

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


class MulConstant(Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


class Exp(Function):
    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result


def my_cube_backward(grad_output, x):
    return grad_output * 3 * x ** 2


class MyCube(Function):
    @staticmethod
    def forward(ctx, x):
        result = x ** 3
        dx = 3 * x ** 2
        ctx.save_for_backward(x, dx)
        return result, dx

    @staticmethod
    def backward(ctx, grad_output, grad_dx):
        x, dx = ctx.saved_tensors
        result = grad_output * dx + grad_dx * 6 * x
        return result


class SortWithIndices(Function):
    @staticmethod
    def forward(ctx, x):
        values, indices = x.sort()
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return values, indices

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_values, grad_indices):
        indices, = ctx.saved_tensors
        grad_x = torch.zeros_like(grad_values)
        grad_x.index_add_(0, indices, grad_values)
        return grad_x


class Clamp01(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(x)
        return x.clamp(0, 1)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        if g is None:
            return None
        return g * ((x > 0) & (x < 1)).to(g.dtype)


torch.manual_seed(0)
linear = LinearFunction.apply
inp = (torch.randn(20, 20, dtype=torch.double, requires_grad=True),
       torch.randn(30, 20, dtype=torch.double, requires_grad=True),
       torch.randn(30, dtype=torch.double, requires_grad=True))
print(torch.autograd.gradcheck(linear, inp, eps=1e-6, atol=1e-4))
out = linear(*inp)
print(out.shape, out.grad_fn, type(out.grad_fn).__name__)
out.sum().backward()
print(inp[2].grad[:5], inp[0].grad.norm())

x = torch.randn(4, requires_grad=True)
y = MulConstant.apply(x, 5.5)
y.sum().backward()
print(y, x.grad)
y = Exp.apply(x)
y.backward(torch.ones_like(y))
print(y, x.grad)
print(torch.autograd.gradcheck(Exp.apply, torch.randn(3, dtype=torch.double, requires_grad=True)))

x = torch.tensor(1., requires_grad=True, dtype=torch.double)
out, dx = MyCube.apply(x)
grad_x, = torch.autograd.grad(out, x, create_graph=True)
print(out, dx, grad_x)
print(torch.allclose(grad_x, dx))
grad_x, = torch.autograd.grad(out, x, create_graph=True)
ggx, = torch.autograd.grad(grad_x, x)
print(ggx)
xd = torch.rand(3, 3, requires_grad=True, dtype=torch.double)
print(torch.autograd.gradcheck(MyCube.apply, (xd,)), torch.autograd.gradgradcheck(MyCube.apply,
                                                                                   (xd,)))

s = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)
vals, idx = SortWithIndices.apply(s)
print(vals, idx, idx.requires_grad)
(vals * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
print(s.grad)
vals, idx = SortWithIndices.apply(s)
g, = torch.autograd.grad(vals.sum(), s, create_graph=True)
print(g, g.requires_grad)
try:
    g.sum().backward()
except RuntimeError as e:
    print(type(e).__name__, e)

c = torch.tensor([-0.5, 0.5, 1.5], requires_grad=True)
o = Clamp01.apply(c)
o.backward(torch.ones(3))
print(o, c.grad)

f = torch.autograd.functional
print(f.jacobian(lambda t: t ** 2 + t.sum(), torch.tensor([1.0, 2.0, 3.0])))
print(f.hessian(lambda t: (t ** 3).sum(), torch.tensor([1.0, 2.0])))
print(f.vjp(lambda t: t.exp(), torch.zeros(2), torch.ones(2)))
print(f.jvp(lambda t: t * 3, torch.ones(2), torch.ones(2)))
print(f.hvp(lambda t: (t ** 3).sum(), torch.tensor([1.0, 2.0]), torch.ones(2)))
print("RESULT: ok")
