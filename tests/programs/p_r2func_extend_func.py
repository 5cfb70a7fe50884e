"""The "Extending torch.func with autograd.Function" notes, shrunk: NumpySort/NumpyTake with a
separate setup_context, save_for_forward + jvp, a hand-written vmap staticmethod, and
generate_vmap_rule=True, used under torch.func.grad/vmap/jacrev/jacfwd/jvp."""
import importlib
import os

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
func = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".func")
Function = torch.autograd.Function

torch.manual_seed(0)


def to_numpy(tensor):
    return tensor.cpu().numpy()


class NumpySort(Function):
    @staticmethod
    def forward(x, dim):
        device = x.device
        x = to_numpy(x)
        ind = np.argsort(x, axis=dim)
        ind_inv = np.argsort(ind, axis=dim)
        result = np.take_along_axis(x, ind, axis=dim)
        return (
            torch.tensor(result, device=device),
            torch.tensor(ind, device=device),
            torch.tensor(ind_inv, device=device),
        )

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, dim = inputs
        _, ind, ind_inv = output
        ctx.mark_non_differentiable(ind, ind_inv)
        ctx.save_for_backward(ind, ind_inv)
        ctx.dim = dim

    @staticmethod
    def backward(ctx, grad_output, _0, _1):
        ind, ind_inv = ctx.saved_tensors
        return NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim), None

    @staticmethod
    def vmap(info, in_dims, x, dim):
        x_bdim, _ = in_dims
        x = x.movedim(x_bdim, 0)
        dim = dim if dim >= 0 else dim + x.dim() - 1
        return NumpySort.apply(x, dim + 1), (0, 0, 0)


class NumpyTake(Function):
    @staticmethod
    def forward(x, ind, ind_inv, dim):
        device = x.device
        x = to_numpy(x)
        ind = to_numpy(ind)
        return torch.tensor(np.take_along_axis(x, ind, dim), device=device)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, ind, ind_inv, dim = inputs
        ctx.save_for_backward(ind, ind_inv)
        ctx.dim = dim

    @staticmethod
    def backward(ctx, grad_output):
        ind, ind_inv = ctx.saved_tensors
        result = NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim)
        return result, None, None, None

    @staticmethod
    def vmap(info, in_dims, x, ind, ind_inv, dim):
        x_bdim, ind_bdim, ind_inv_bdim, _ = in_dims
        logical_dim = x.dim() if x_bdim is None else x_bdim - 1
        dim = dim if dim >= 0 else dim + logical_dim

        def maybe_expand_bdim_at_front(x, x_bdim):
            if x_bdim is None:
                return x.expand(info.batch_size, *x.shape)
            return x.movedim(x_bdim, 0)

        x = maybe_expand_bdim_at_front(x, x_bdim)
        ind = maybe_expand_bdim_at_front(ind, ind_bdim)
        ind_inv = maybe_expand_bdim_at_front(ind_inv, ind_inv_bdim)
        return NumpyTake.apply(x, ind, ind_inv, dim + 1), 0


def numpy_sort(x, dim=-1):
    result, _, _ = NumpySort.apply(x, dim)
    return result


x = torch.randn(2, 3)
result = numpy_sort(x)
print(result)
assert torch.allclose(result, x.sort().values)
x = torch.randn(2, 3, requires_grad=True)
y = numpy_sort(x)
print(type(y.grad_fn).__name__, y.grad_fn.name() if hasattr(y.grad_fn, "name") else None)
grad_x = func.grad(lambda x: numpy_sort(x).sum())(x)
print(grad_x)
assert torch.allclose(grad_x, torch.ones_like(x))
x = torch.randn(4, 3)
print(func.vmap(numpy_sort)(x))
print(func.vmap(numpy_sort, in_dims=1)(x.t().contiguous()))
w = torch.randn(3)
print(func.grad(lambda x: (numpy_sort(x) * w).sum())(torch.randn(3)))
print(func.vmap(func.grad(lambda x: (numpy_sort(x) * w).sum()))(torch.randn(2, 3)))
print(func.jacrev(numpy_sort)(torch.randn(3)))


# save_for_forward + jvp (the notes' MyCube), usable with jvp and jacfwd
class MyCube(Function):
    @staticmethod
    def forward(x):
        result = x ** 3
        dx = 3 * x ** 2
        return result, dx

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, = inputs
        result, dx = output
        ctx.save_for_backward(x, dx)
        ctx.save_for_forward(x, dx)

    @staticmethod
    def backward(ctx, grad_output, grad_dx):
        x, dx = ctx.saved_tensors
        result = grad_output * dx + grad_dx * 6 * x
        return result

    @staticmethod
    def jvp(ctx, x_t):
        x, dx = ctx.saved_tensors
        return dx * x_t, 6 * x * x_t

    generate_vmap_rule = True


def my_cube(x):
    result, dx = MyCube.apply(x)
    return result


x = torch.randn(3)
print(func.grad(lambda t: my_cube(t).sum())(x), 3 * x ** 2)
print(func.grad(func.grad(lambda t: my_cube(t)))(torch.tensor(2.0)))
print(func.vmap(my_cube)(torch.randn(2, 3)))
print(func.jvp(my_cube, (x,), (torch.ones(3),)))
print(func.jacfwd(my_cube)(x))
print(func.vmap(func.jacrev(my_cube))(torch.randn(2, 2)))


# generate_vmap_rule with a plain torch forward (the notes' MyExp)
class MyExp(Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result


print(func.vmap(MyExp.apply)(torch.tensor([[0.0, 1.0], [2.0, -1.0]])))
print(func.vmap(func.grad(lambda t: MyExp.apply(t).sum()))(torch.zeros(2, 3)))
print(func.jacrev(MyExp.apply)(torch.tensor([0.5, 1.0])))

# misuse: old-style forward(ctx, ...) Functions refuse torch.func transforms


class OldStyle(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


print(OldStyle.apply(torch.ones(2, requires_grad=True)).sum())
try:
    func.vmap(OldStyle.apply)(torch.ones(2, 2))
except RuntimeError as e:
    print(type(e).__name__, str(e).splitlines()[0][:120])


class NoVmap(Function):
    @staticmethod
    def forward(x):
        return x * 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return g * 2


try:
    func.vmap(NoVmap.apply)(torch.ones(2, 2))
except RuntimeError as e:
    print(type(e).__name__, str(e).splitlines()[0][:120])
print("RESULT: ok")
