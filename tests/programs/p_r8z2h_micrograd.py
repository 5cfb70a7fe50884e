"""Karpathy's micrograd, shrunk: micrograd/engine.py (Value with +, *, **, relu, backward over a
topological sort), micrograd/nn.py (Module/Neuron/Layer/MLP), test/test_engine.py
(test_sanity_check and test_more_ops, which compare micrograd's values and gradients with
torch's on double tensors), the lecture's tanh neuron in both micrograd and torch, and the demo's
max-margin training of an MLP, here mirrored step by step by the same MLP as torch tensors.
Synthetic two-moons-like data instead of sklearn.make_moons."""
# ruff: noqa: E501  (upstream's own line lengths, kept)
import importlib
import math
import os
import random

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))


class Value:
    """ stores a single scalar value and its gradient """

    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = 0
        # internal variables used for autograd graph construction
        self._backward = lambda: None
        self._prev = list(dict.fromkeys(_children))  # set() in micrograd; ordered here for determinism
        self._op = _op  # the op that produced this node, for graphviz / debugging / etc

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward

        return out

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward

        return out

    def __pow__(self, other):
        assert isinstance(other, (int, float)), "only supporting int/float powers for now"
        out = Value(self.data**other, (self,), f'**{other}')

        def _backward():
            self.grad += (other * self.data**(other - 1)) * out.grad
        out._backward = _backward

        return out

    def relu(self):
        out = Value(0 if self.data < 0 else self.data, (self,), 'ReLU')

        def _backward():
            self.grad += (out.data > 0) * out.grad
        out._backward = _backward

        return out

    def tanh(self):  # from the lecture notebook
        x = self.data
        t = (math.exp(2 * x) - 1) / (math.exp(2 * x) + 1)
        out = Value(t, (self,), 'tanh')

        def _backward():
            self.grad += (1 - t**2) * out.grad
        out._backward = _backward
        return out

    def backward(self):

        # topological order all of the children in the graph
        topo = []
        visited = set()

        def build_topo(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build_topo(child)
                topo.append(v)
        build_topo(self)

        # go one variable at a time and apply the chain rule to get its gradient
        self.grad = 1
        for v in reversed(topo):
            v._backward()

    def __neg__(self):  # -self
        return self * -1

    def __radd__(self, other):  # other + self
        return self + other

    def __sub__(self, other):  # self - other
        return self + (-other)

    def __rsub__(self, other):  # other - self
        return other + (-self)

    def __rmul__(self, other):  # other * self
        return self * other

    def __truediv__(self, other):  # self / other
        return self * other**-1

    def __rtruediv__(self, other):  # other / self
        return other * self**-1

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"


class Module:

    def zero_grad(self):
        for p in self.parameters():
            p.grad = 0

    def parameters(self):
        return []


class Neuron(Module):

    def __init__(self, nin, nonlin=True):
        self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(0)
        self.nonlin = nonlin

    def __call__(self, x):
        act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)
        return act.relu() if self.nonlin else act

    def parameters(self):
        return self.w + [self.b]

    def __repr__(self):
        return f"{'ReLU' if self.nonlin else 'Linear'}Neuron({len(self.w)})"


class Layer(Module):

    def __init__(self, nin, nout, **kwargs):
        self.neurons = [Neuron(nin, **kwargs) for _ in range(nout)]

    def __call__(self, x):
        out = [n(x) for n in self.neurons]
        return out[0] if len(out) == 1 else out

    def parameters(self):
        return [p for n in self.neurons for p in n.parameters()]

    def __repr__(self):
        return f"Layer of [{', '.join(str(n) for n in self.neurons)}]"


class MLP(Module):

    def __init__(self, nin, nouts):
        sz = [nin] + nouts
        self.layers = [Layer(sz[i], sz[i + 1], nonlin=i != len(nouts) - 1) for i in range(len(nouts))]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def parameters(self):
        return [p for layer in self.layers for p in layer.parameters()]

    def __repr__(self):
        return f"MLP of [{', '.join(str(layer) for layer in self.layers)}]"


# ---- test/test_engine.py ----
def test_sanity_check():

    x = Value(-4.0)
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    xmg, ymg = x, y

    x = torch.Tensor([-4.0]).double()
    x.requires_grad = True
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    xpt, ypt = x, y

    # forward pass went well
    assert ymg.data == ypt.data.item()
    # backward pass went well
    assert xmg.grad == xpt.grad.item()
    print('sanity', ymg, xmg, ypt, xpt.grad)


def test_more_ops():

    a = Value(-4.0)
    b = Value(2.0)
    c = a + b
    d = a * b + b**3
    c += c + 1
    c += 1 + c + (-a)
    d += d * 2 + (b + a).relu()
    d += 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g += 10.0 / f
    g.backward()
    amg, bmg, gmg = a, b, g

    a = torch.Tensor([-4.0]).double()
    b = torch.Tensor([2.0]).double()
    a.requires_grad = True
    b.requires_grad = True
    c = a + b
    d = a * b + b**3
    c = c + c + 1
    c = c + 1 + c + (-a)
    d = d + d * 2 + (b + a).relu()
    d = d + 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g = g + 10.0 / f
    g.backward()
    apt, bpt, gpt = a, b, g

    tol = 1e-6
    # forward pass went well
    assert abs(gmg.data - gpt.data.item()) < tol
    # backward pass went well
    assert abs(amg.grad - apt.grad.item()) < tol
    assert abs(bmg.grad - bpt.grad.item()) < tol
    print('more ops', f'{gmg.data:.6f} {amg.grad:.6f} {bmg.grad:.6f}', gpt, apt.grad, bpt.grad)


test_sanity_check()
test_more_ops()

# ---- lecture: a neuron with tanh, micrograd vs torch ----
x1 = Value(2.0)
x2 = Value(0.0)
w1 = Value(-3.0)
w2 = Value(1.0)
b = Value(6.8813735870195432)
n = x1 * w1 + x2 * w2 + b
o = n.tanh()
o.backward()
print('micrograd', f'{o.data:.6f}', f'{x1.grad:.6f}', f'{w1.grad:.6f}')

x1 = torch.Tensor([2.0]).double()
x1.requires_grad = True
x2 = torch.Tensor([0.0]).double()
x2.requires_grad = True
w1 = torch.Tensor([-3.0]).double()
w1.requires_grad = True
w2 = torch.Tensor([1.0]).double()
w2.requires_grad = True
b = torch.Tensor([6.8813735870195432]).double()
b.requires_grad = True
n = x1 * w1 + x2 * w2 + b
o = torch.tanh(n)

print(o.data.item())
o.backward()

print('---')
print('x2', x2.grad.item())
print('w2', w2.grad.item())
print('x1', x1.grad.item())
print('w1', w1.grad.item())

# ---- demo.ipynb: max-margin loss on moons, micrograd and the same MLP as torch tensors ----
random.seed(1337)
X = []
y = []
for i in range(24):
    t = math.pi * random.random()
    if i % 2 == 0:
        X.append([math.cos(t) + random.gauss(0, 0.1), math.sin(t) + random.gauss(0, 0.1)])
        y.append(-1)
    else:
        X.append([1 - math.cos(t) + random.gauss(0, 0.1), 0.5 - math.sin(t) + random.gauss(0, 0.1)])
        y.append(1)

model = MLP(2, [8, 8, 1])  # 2-layer neural network
print(model)
print("number of parameters", len(model.parameters()))

# the same network as torch tensors (weights copied from micrograd)
tw = []
for layer in model.layers:
    W = torch.tensor([[p.data for p in nr.w] for nr in layer.neurons], dtype=torch.float64, requires_grad=True)
    bb = torch.tensor([nr.b.data for nr in layer.neurons], dtype=torch.float64, requires_grad=True)
    tw.append((W, bb))
Xt = torch.tensor(X, dtype=torch.float64)
yt = torch.tensor(y, dtype=torch.float64)


def loss(batch_size=None):
    Xb, yb = X, y
    inputs = [list(map(Value, xrow)) for xrow in Xb]

    # forward the model to get scores
    scores = list(map(model, inputs))

    # svm "max-margin" loss
    losses = [(1 + -yi * scorei).relu() for yi, scorei in zip(yb, scores)]
    data_loss = sum(losses) * (1.0 / len(losses))
    # L2 regularization
    alpha = 1e-4
    reg_loss = alpha * sum((p * p for p in model.parameters()))
    total_loss = data_loss + reg_loss

    # also get accuracy
    accuracy = [(yi > 0) == (scorei.data > 0) for yi, scorei in zip(yb, scores)]
    return total_loss, sum(accuracy) / len(accuracy)


def torch_loss():
    h = Xt
    for i, (W, bb) in enumerate(tw):
        h = h @ W.T + bb
        if i != len(tw) - 1:
            h = h.relu()
    scores = h.squeeze(1)
    data_loss = (1 + -yt * scores).relu().mean()
    reg_loss = 1e-4 * sum((p * p).sum() for W, bb in tw for p in (W, bb))
    acc = ((yt > 0) == (scores > 0)).float().mean()
    return data_loss + reg_loss, acc


for k in range(8):

    # forward
    total_loss, acc = loss()
    tl, tacc = torch_loss()

    # backward
    model.zero_grad()
    total_loss.backward()
    for W, bb in tw:
        W.grad = None
        bb.grad = None
    tl.backward()
    g0 = model.layers[0].neurons[0].w[0].grad
    assert abs(g0 - tw[0][0].grad[0, 0].item()) < 1e-9

    # update (sgd)
    learning_rate = 1.0 - 0.9 * k / 100
    for p in model.parameters():
        p.data -= learning_rate * p.grad
    with torch.no_grad():
        for W, bb in tw:
            W -= learning_rate * W.grad
            bb -= learning_rate * bb.grad

    print(f"step {k} loss {total_loss.data:.8f}, accuracy {acc*100}% | torch {tl.item():.8f} {tacc.item()*100:.1f}%")
print(tw[-1][0].detach().numpy().round(6).tolist())
