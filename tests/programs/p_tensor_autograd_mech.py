""""Autograd mechanics" and "A Gentle Introduction to torch.autograd" details, with the
error messages of common mistakes printed."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))

torch.manual_seed(0)
x = torch.randn(3)
print(x.requires_grad, x.is_leaf, x.grad_fn)
x.requires_grad_()
print(x.requires_grad, x.is_leaf)
y = x * 2
print(y.requires_grad, y.is_leaf, y.grad_fn)
z = y.detach()
print(z.requires_grad, z.is_leaf, z.grad_fn)
y.retain_grad()
out = (y ** 2).sum()
out.backward()
print(x.grad)
print(y.grad)
print(y.retains_grad, out.retains_grad)

# hooks
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
h = a.register_hook(lambda g: g * 10)
b = (a * a).sum()
b.backward()
print(a.grad)
h.remove()
a.grad.zero_()
(a * a).sum().backward()
print(a.grad)

# walking the graph
w = torch.randn(4, 3, requires_grad=True)
bias = torch.randn(3, requires_grad=True)
inp = torch.randn(2, 4)
loss = torch.nn.functional.relu(inp @ w + bias).mean()
print(loss)
fn = loss.grad_fn
seen = []
stack = [fn]
while stack:
    node = stack.pop()
    if node is None:
        continue
    seen.append(type(node).__name__)
    for nxt, idx in node.next_functions:
        stack.append(nxt)
print(seen)
print(loss.grad_fn.name())

# grad modes
q = torch.ones(2, requires_grad=True)
with torch.no_grad():
    r = q * 2
print(r.requires_grad)
with torch.no_grad():
    with torch.enable_grad():
        r = q * 2
print(r.requires_grad)
with torch.inference_mode():
    r = q * 2
print(r.requires_grad, r.is_inference())
torch.set_grad_enabled(False)
r = q * 2
print(r.requires_grad, torch.is_grad_enabled())
torch.set_grad_enabled(True)
with torch.set_grad_enabled(False):
    r = q * 2
print(r.requires_grad, torch.is_grad_enabled())


@torch.no_grad()
def doubler(t):
    return t * 2


print(doubler(q).requires_grad)

# higher-order
x = torch.tensor(2.0, requires_grad=True)
y = x ** 3
(g,) = torch.autograd.grad(y, x, create_graph=True)
print(g)
(g2,) = torch.autograd.grad(g, x)
print(g2)
xs = torch.linspace(-1, 1, 5, requires_grad=True)
ys = torch.tanh(xs)
gs = torch.autograd.grad(ys.sum(), xs, create_graph=True)[0]
print(gs)
gs.sum().backward()
print(xs.grad)

# retain_graph
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = (x.exp() * x).sum()
y.backward(retain_graph=True)
print(x.grad)
y.backward()
print(x.grad)

# common mistakes
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = (x.exp() * x).sum()
y.backward()
try:
    y.backward()
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    (x * 2).backward()
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    x.add_(1)
except RuntimeError as e:
    print(type(e).__name__, e)
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = a.sigmoid()
c = b * 3
b.mul_(2)
try:
    c.sum().backward()
except RuntimeError as e:
    print(type(e).__name__, e)
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = a.exp()
c = b.sum()
b.add_(1)
try:
    c.backward()
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    a.numpy()
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    torch.tensor([1, 2], requires_grad=True)
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    torch.autograd.grad((a * 2).sum(), torch.ones(2, requires_grad=True))
except RuntimeError as e:
    print(type(e).__name__, e)
nog = torch.ones(2)
try:
    nog.sum().backward()
except RuntimeError as e:
    print(type(e).__name__, e)
print(torch.autograd.grad((a * 2).sum(), [a, torch.ones(2, requires_grad=True)],
                          allow_unused=True))
print(a.detach().numpy(), a.data, a.grad)

# grad accumulation and zeroing
p = torch.ones(3, requires_grad=True)
for i in range(3):
    (p * (i + 1)).sum().backward()
    print(p.grad)
p.grad = None
print(p.grad)
v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
x = torch.randn(3, requires_grad=True)
y = x * 2
while y.data.norm() < 1000:
    y = y * 2
y.backward(v)
print(x.grad)
print("RESULT: ok")
