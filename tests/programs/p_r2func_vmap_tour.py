"""torch.func.vmap's API reference and the "UX Limitations" notes, shrunk: in_dims/out_dims
(ints, None, nested tuples, dicts), chunk_size, randomness='different'/'same'/'error', nested
vmap (batched dot, matrix-vector), vmap over dicts of parameters, has_aux with grad/jacrev,
and the documented errors (.item(), mismatched sizes, bad in_dims/out_dims)."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
func = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".func")
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
vmap = func.vmap

torch.manual_seed(0)

# docs: batched dot product, batched matrix-vector, batched over two dims
batched_dot = vmap(torch.dot)
x, y = torch.randn(2, 5), torch.randn(2, 5)
print(batched_dot(x, y))
batch_size, feature_size = 3, 5
weights = torch.randn(feature_size, requires_grad=True)


def model(feature_vec):
    assert feature_vec.dim() == 1
    return feature_vec.dot(weights).relu()


examples = torch.randn(batch_size, feature_size)
result = vmap(model)(examples)
print(result, result.grad_fn is not None)
N, D = 5, 3
x = torch.randn(N, requires_grad=True)
y = torch.sin(x)
I_N = torch.eye(N)


def vjp(v):
    return torch.autograd.grad(y, x, v)


jacobian = vmap(vjp)(I_N)
print(jacobian[0].diagonal(), torch.cos(x).detach())

batched_dot = vmap(vmap(torch.dot))
x, y = torch.randn(2, 3, 5), torch.randn(2, 3, 5)
print(batched_dot(x, y).shape)
batched_dot = vmap(torch.dot, in_dims=1)
x, y = torch.randn(5, 2), torch.randn(5, 2)
print(batched_dot(x, y))
batched_dot = vmap(torch.dot, in_dims=(0, None))
x, y = torch.randn(2, 5), torch.randn(5)
print(batched_dot(x, y))
f = lambda dict: torch.dot(dict['x'], dict['y'])  # noqa: E731
x, y = torch.randn(2, 5), torch.randn(5)
input = {'x': x, 'y': y}
batched_dot = vmap(f, in_dims=({'x': 0, 'y': None},))
print(batched_dot(input))
f = lambda x: x ** 2  # noqa: E731
x = torch.randn(2, 5)
batched_pow = vmap(f, out_dims=1)
print(batched_pow(x).shape)
f = lambda x, scale: x * scale  # noqa: E731
print(vmap(f, in_dims=(0, None))(torch.ones(2, 3), 4.0))
x = torch.randn(2, 3, 4)
print(vmap(lambda t: t.sum(0), in_dims=2, out_dims=0)(x).shape,
      vmap(lambda t: (t, t.mean()), out_dims=(1, 0))(x)[0].shape)
print(vmap(torch.outer, in_dims=(0, 1))(torch.randn(4, 2), torch.randn(3, 4)).shape)
print(vmap(F.linear, in_dims=(0, None, None))(torch.randn(6, 3), torch.randn(2, 3),
                                              torch.zeros(2)).shape)

# chunk_size gives the same result
xs = torch.randn(7, 4)
full = vmap(lambda t: t.softmax(-1) @ t)(xs)
chunked = vmap(lambda t: t.softmax(-1) @ t, chunk_size=3)(xs)
print(torch.allclose(full, chunked), full[:2])

# randomness
def add_noise(x):
    y = torch.randn(())
    return x + y


try:
    vmap(add_noise)(torch.ones(3))
except RuntimeError as e:
    print(type(e).__name__, str(e)[:110])
torch.manual_seed(1)
out_same = vmap(add_noise, randomness="same")(torch.ones(3))
print(out_same.shape, bool((out_same == out_same[0]).all()))
out_diff = vmap(add_noise, randomness="different")(torch.ones(3))
print(out_diff.shape, bool((out_diff != out_diff[0]).any()))
print(vmap(lambda t: F.dropout(t, 0.5, training=False), randomness="error")(torch.ones(2, 4)))
out_d = vmap(lambda t: F.dropout(t, 0.5), randomness="different")(torch.ones(3, 8))
print(out_d.shape, sorted(set(out_d.flatten().tolist())))

# has_aux
def compute_loss(w, x):
    pred = x @ w
    loss = (pred ** 2).mean()
    return loss, {"pred": pred.detach()}


w = torch.randn(3)
xb = torch.randn(4, 2, 3)
grads, aux = vmap(func.grad(compute_loss, has_aux=True), in_dims=(None, 0))(w, xb)
print(grads.shape, aux["pred"].shape, grads[0])
jac, aux = func.jacrev(lambda w: (torch.tanh(w) * 2, w.sum()), has_aux=True)(w)
print(jac, aux)
gv = func.grad_and_value(lambda w, b: (w * b).sum(), argnums=(0, 1))(w, torch.ones(3))
print(gv)

# errors from the UX limitations page
# (the docs' x.add_(y) with x unbatched is left out: ember runs it per sample and raises its
# own message, not torch's; see the report)
try:
    vmap(lambda t: t.sum().item())(torch.ones(2, 3))
except RuntimeError as e:
    print(type(e).__name__, str(e)[:90])
try:
    vmap(torch.add)(torch.ones(2), torch.ones(3))
except ValueError as e:
    print(type(e).__name__, e)
try:
    vmap(torch.sum, in_dims=2)(torch.ones(2, 3))
except ValueError as e:
    print(type(e).__name__, e)
try:
    vmap(torch.sum, out_dims=(0, 1))(torch.ones(2, 3))
except ValueError as e:
    print(type(e).__name__, str(e)[:100])
try:
    vmap(lambda t: t, chunk_size=0)
except ValueError as e:
    print(type(e).__name__, e)
try:
    vmap(lambda t: t, randomness="sometimes")
except RuntimeError as e:
    print(type(e).__name__, e)

# torch.vmap alias and vmap over a module's parameters
print(torch.vmap(torch.trace)(torch.randn(3, 2, 2)))
net = torch.nn.Linear(3, 2)
params = dict(net.named_parameters())
batched = {k: v.detach().unsqueeze(0).repeat(4, *([1] * v.dim())) for k, v in params.items()}
out = vmap(lambda p, x: func.functional_call(net, p, (x,)), in_dims=(0, None))(
    batched, torch.ones(5, 3))
print(out.shape, torch.allclose(out[0], net(torch.ones(5, 3))))
print("RESULT: ok")
