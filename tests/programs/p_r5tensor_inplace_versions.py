"""In-place semantics and version counters, after the autograd mechanics notes ("In-place
correctness checks"), the torch.Tensor.data / detach / _version discussions on the PyTorch
forums and Stack Overflow's "a leaf Variable that requires grad is being used in an in-place
operation", "one of the variables needed for gradient computation has been modified by an
inplace operation" and "x += 1 vs x = x + 1": version bumps per op, sharing through
views/detach/.data, which saved tensors trip the check, the errors' exact text and the
in-place ops on views of leaves."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))


def err(fn):
    try:
        r = fn()
        print("ok", r)
    except Exception as e:
        print(type(e).__name__, e)


a = torch.zeros(3)
v0 = a._version
a += 1
a.add_(1)
a[0] = 5
a[1:] *= 2
a.copy_(torch.ones(3))
a.zero_()
torch.add(a, 1, out=a)
print(a._version - v0, a)
b = a.view(3)
d = a.detach()
s = a[1:]
b.add_(1)
d.mul_(3)
s.fill_(7)
print(a._version, b._version, d._version, s._version, a)
c = a.clone()
print(c._version, a.data._version, a.numpy().sum())
y = a
y = y + 1
print(a._version, y._version)
e = torch.ones(2)
e.requires_grad_(False)
e.data = torch.zeros(3)
print(e, e._version)
f = torch.ones(4)
for op in [lambda t: t.clamp_(0, 1), lambda t: t.exp_(), lambda t: t.unsqueeze_(0), lambda t: t.squeeze_(),
           lambda t: t.t_() if t.dim() == 2 else t.resize_(4), lambda t: t.transpose_(0, 0) if t.dim() > 1 else t.abs_(),
           lambda t: t.index_add_(0, torch.tensor([0]), torch.ones(1)), lambda t: t.scatter_(0, torch.tensor([1]), 2.0),
           lambda t: t.masked_fill_(t > 2, 0.0), lambda t: t.requires_grad_(False), lambda t: t.detach_(),
           lambda t: t.set_(torch.ones(4)), lambda t: t.uniform_()]:
    before = f._version
    op(f)
    print(f._version - before, end=" ")
print()

# leaf errors
w = torch.ones(3, requires_grad=True)
err(lambda: w.add_(1))
err(lambda: w.__setitem__(0, 2.0))
err(lambda: w[0].mul_(2))
err(lambda: w.view(3).zero_())
err(lambda: torch.exp(torch.ones(3), out=w))
with torch.no_grad():
    w.add_(1)
    w[0] = 7
print(w, w._version, w.is_leaf, w.grad_fn)
w.data.mul_(2)
print(w, w._version)
w.detach().zero_()
print(w, w._version, w.requires_grad)

# saved tensors modified in place
x = torch.tensor([1.0, 2.0], requires_grad=True)
h = x * 2
out = h.exp()
h.add_(1)
try:
    out.sum().backward()
except RuntimeError as e:
    print(e)
x.grad = None
h = x * 2
out = h.sigmoid() * h
h.mul_(2)
try:
    out.sum().backward()
except RuntimeError as e:
    print(e)
h = x * 2
o2 = h * 3            # (h itself is not saved: the in-place change is harmless)
h.add_(1)
o2.sum().backward()
print(x.grad, h._version)
x.grad = None
h = x + 0
r = h.relu()
r.add_(1)
try:
    r.sum().backward()
except RuntimeError as e:
    print(e)
x.grad = None
h = x + 0
t_ = h.tanh()
t_.mul_(2)
try:
    t_.sum().backward()
except RuntimeError as e:
    print(e)
x.grad = None
q = x.clone()
q.mul_(q)
try:
    q.sum().backward()
except RuntimeError as e:
    print(e)
print(x.grad, q.grad_fn.name())
x.grad = None
z = x.clone()
zv = z[:1]
zv.mul_(10)
print(z, z.grad_fn.name(), zv.grad_fn.name(), z._version, zv._version)
z.sum().backward()
print(x.grad)
x.grad = None
p = x.clone()
p.unsqueeze(0)[0, 1] = 0.0
p.sum().backward()
print(p.grad_fn.name(), x.grad)

# view + in-place with no_grad and detach
base = torch.zeros(2, 2, requires_grad=True).clone()
vv = base[0]
with torch.no_grad():
    vv.fill_(1.0)
print(base, vv.grad_fn)
dd = base.detach()
dd[1, 1] = 9.0
print(base)
# (a requires-grad view leaf modified in place: requests13 [H1] from H7)
err(lambda: torch.ones(2, 2, requires_grad=True).unbind(0)[0].add_(1))
u = torch.ones(2, 2, requires_grad=True).clone()
err(lambda: u.unbind(0)[0].add_(1))
err(lambda: u.split(1)[0].mul_(2))
err(lambda: u.chunk(2)[1].zero_())
print(u.split(1)[0].grad_fn.name(), u.chunk(1)[0].grad_fn.name())
