"""Higher-order derivatives with torch.autograd.grad, as in the "double backward" idioms of
blog posts and papers: n-th derivatives of tanh by repeated grad(create_graph=True), Hessians
row by row and with is_grads_batched, Hessian-vector products by double backprop, input-gradient
regularization (double backprop, Drucker & LeCun), a MAML-style inner step through the
optimizer-free update, backward(inputs=...), and torch.autograd.functional on a loss."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
AF = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".autograd.functional")

torch.manual_seed(0)

# n-th derivatives of tanh at a few points
x = torch.linspace(-2, 2, 5, requires_grad=True)
y = torch.tanh(x)
derivs = []
g = y
for n in range(1, 5):
    g = torch.autograd.grad(g.sum(), x, create_graph=True)[0]
    derivs.append(g)
    print(n, type(g.grad_fn).__name__, g.detach())
t = torch.tanh(x.detach())
print(torch.allclose(derivs[0], 1 - t ** 2), torch.allclose(derivs[1], -2 * t * (1 - t ** 2)))

# Hessian of a scalar function, row by row and batched
def f(w):
    return (w[0] ** 2 * w[1] + torch.sin(w[2]) * w[0] + w[1] ** 3).sum()


w = torch.tensor([1.0, 2.0, 0.5], requires_grad=True)
g, = torch.autograd.grad(f(w), w, create_graph=True)
rows = [torch.autograd.grad(g[i], w, retain_graph=True)[0] for i in range(3)]
H = torch.stack(rows)
print(g, H)
H2, = torch.autograd.grad(g, w, torch.eye(3), retain_graph=True, is_grads_batched=True)
print(torch.allclose(H, H2), AF.hessian(f, w.detach()))

# Hessian-vector product by double backprop vs functional hvp
v = torch.tensor([1.0, 0.0, -1.0])
hv, = torch.autograd.grad(g, w, grad_outputs=v, retain_graph=True)
print(hv, H @ v, AF.hvp(f, w.detach(), v)[1])
gv = (g * v).sum()
hv2, = torch.autograd.grad(gv, w)
print(hv2)

# double backprop: penalise the input gradient's norm
model = nn.Sequential(nn.Linear(4, 8), nn.Softplus(), nn.Linear(8, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
inputs = torch.randn(6, 4)
targets = torch.randint(0, 3, (6,))
for step in range(4):
    opt.zero_grad()
    inp = inputs.clone().requires_grad_(True)
    loss = F.cross_entropy(model(inp), targets)
    input_grad, = torch.autograd.grad(loss, inp, create_graph=True)
    penalty = input_grad.pow(2).sum(1).mean()
    total = loss + 10.0 * penalty
    total.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.5f} penalty {penalty.item():.6f} "
          f"grad {model[0].weight.grad.norm().item():.5f}")

# MAML-style: an inner SGD step kept in the graph, the outer loss differentiated through it
net = nn.Linear(2, 1)
params = dict(net.named_parameters())
xs, ys = torch.randn(5, 2), torch.randn(5, 1)
xq, yq = torch.randn(5, 2), torch.randn(5, 1)
inner = F.mse_loss(torch.func.functional_call(net, params, (xs,)), ys)
grads = torch.autograd.grad(inner, list(params.values()), create_graph=True)
fast = {k: p - 0.5 * gr for (k, p), gr in zip(params.items(), grads)}
outer = F.mse_loss(torch.func.functional_call(net, fast, (xq,)), yq)
outer.backward()
print(f"inner {inner.item():.5f} outer {outer.item():.5f}")
print(net.weight.grad, net.bias.grad, type(fast["weight"].grad_fn).__name__)

# backward(inputs=...) accumulates only into the listed leaves
a = torch.randn(3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
out = (a * b).sum()
out.backward(inputs=[a], retain_graph=True)
print(a.grad, b.grad)
out.backward(inputs=b)
print(a.grad, b.grad)
torch.autograd.backward([(a ** 2).sum()], inputs=[a])
print(a.grad)

# second derivative through a graph with a non-differentiable point and a cubic
z = torch.tensor([-1.0, 0.0, 2.0], requires_grad=True)
r = F.relu(z) ** 3 + F.leaky_relu(z, 0.1) * z
d1, = torch.autograd.grad(r.sum(), z, create_graph=True)
d2, = torch.autograd.grad(d1.sum(), z)
print(d1, d2)

# jacobian/hessian of a loss with respect to a weight matrix
W = torch.randn(2, 3)
xin = torch.randn(4, 3)
loss_fn = lambda W: F.softplus(xin @ W.T).sum()  # noqa: E731
print(AF.jacobian(loss_fn, W), AF.hessian(loss_fn, W).shape)
print(AF.vhp(loss_fn, W, torch.ones(2, 3))[1])

# misuse: grad of a non-scalar without grad_outputs; grad through a freed graph
q = torch.ones(2, requires_grad=True)
try:
    torch.autograd.grad(q * 2, q)
except RuntimeError as e:
    print(type(e).__name__, e)
s = (q ** 2).sum()
gq, = torch.autograd.grad(s, q)
print(gq.requires_grad, gq.grad_fn)
try:
    torch.autograd.grad(gq.sum(), q)
except RuntimeError as e:
    print(type(e).__name__, e)
print("RESULT:", f"{outer.item():.5f}")
