"""Autograd errors and edge behaviour, after the autograd mechanics note ("In-place operations
with autograd", "Saved tensors"), the torch.autograd.grad docs and the forum answers on "Trying to
backward through the graph a second time", "grad can be implicitly created only for scalar
outputs", "one of the variables needed for gradient computation has been modified by an inplace
operation", "element 0 of tensors does not require grad", allow_unused, retain_graph, .grad of
non-leaf tensors, and the anomaly-mode hint."""

import importlib
import os
import warnings

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn


def show(label, fn):
    try:
        out = fn()
    except Exception as e:
        print(label, "->", type(e).__name__, str(e))
    else:
        print(label, "ok", out)


torch.manual_seed(0)
x = torch.randn(3, requires_grad=True)

print("== backward twice")
y = (x * x).sum()
y.backward()
show("second", lambda: y.backward())
y = x.exp().sum()
y.backward(retain_graph=True)
y.backward()
print("retained", x.grad)
y = (x + 1).sum()
y.backward()
show("no saved", lambda: y.backward())
print(x.grad)
h = x.sigmoid()
loss1, loss2 = h.sum(), (h * 2).sum()
loss1.backward()
show("shared", lambda: loss2.backward())
show("autograd.grad twice", lambda: [torch.autograd.grad(z, x) for z in [x.tanh().sum()] * 2])

print("== non-scalar outputs")
x.grad = None
out = x * 2
show("implicit", lambda: out.backward())
show("implicit grad", lambda: torch.autograd.grad(out, x))
show("grad_outputs", lambda: torch.autograd.grad(out, x, torch.ones(3), retain_graph=True))
show("wrong shape", lambda: out.backward(torch.ones(2)))
show("wrong shape grad", lambda: torch.autograd.grad(out, x, torch.ones(3, 1)))
show("wrong dtype", lambda: out.backward(torch.ones(3, dtype=torch.float64), retain_graph=True))
print(x.grad)
x.grad = None
out.backward(torch.tensor([1.0, 0.1, 0.01]))
print(x.grad)
show("0-d ok", lambda: (x.sum() * 2).backward())

print("== requires_grad")
show("element 0", lambda: torch.ones(3).sum().backward())
show("no_grad out", lambda: torch.no_grad()(lambda: (x * 2).sum())().backward())
show("detached", lambda: (x.detach() * 2).sum().backward())
show("grad of const", lambda: torch.autograd.grad(torch.ones(2).sum(), x))
show("input no grad", lambda: torch.autograd.grad((x * 2).sum(), torch.ones(2)))
show("non-leaf rg", lambda: (x * 2).requires_grad_(False))
show("int rg", lambda: torch.arange(3).requires_grad_())
show("set on non-leaf", lambda: setattr(x * 2, "requires_grad", False))

print("== unused inputs")
a = torch.randn(2, requires_grad=True)
b = torch.randn(2, requires_grad=True)
z = (a * 3).sum()
show("unused", lambda: torch.autograd.grad(z, [a, b], retain_graph=True))
show("allow_unused", lambda: torch.autograd.grad(z, [a, b], allow_unused=True, retain_graph=True))
show("materialize", lambda: torch.autograd.grad(z, [a, b], allow_unused=True,
                                                materialize_grads=True, retain_graph=True))
show("materialize only", lambda: torch.autograd.grad(z, [a, b], materialize_grads=True))
z = (a * b).sum()
g, = torch.autograd.grad(z, a, create_graph=True)
print(g.grad_fn is not None, type(g.grad_fn).__name__)
show("grad of grad", lambda: torch.autograd.grad(g.sum(), b))
show("grad no graph",
     lambda: torch.autograd.grad(torch.autograd.grad((a * b).sum(), a)[0].sum(), b))
show("outputs inputs len", lambda: torch.autograd.grad([(a * 2).sum(), (a * 3).sum()], a,
                                                        grad_outputs=[torch.tensor(1.0)]))

print("== in-place on saved tensors")
w = torch.randn(3, requires_grad=True)
e = w.exp()
s = e.sum() * 0 + (e * e).sum()
e.add_(1)
show("exp saved", lambda: s.backward())
w2 = torch.randn(2, 3, requires_grad=True)
t = w2.tanh()
m = t @ torch.ones(3, 2)
t.mul_(2)
show("tanh mm", lambda: m.sum().backward())
p = torch.randn(4, requires_grad=True) * 1
q = p ** 2
p[0] = 5.0
show("pow setitem", lambda: q.sum().backward())
r = torch.randn(3, requires_grad=True)
r2 = r.clone()
rs = r2.sigmoid()
rs.zero_()
show("sigmoid out", lambda: rs.sum().backward())
print("versions", r2._version, rs._version)
v = torch.randn(3, requires_grad=True)
vv = v * 1
vv2 = vv * vv
vv.relu_()
show("relu_ version", lambda: vv2.sum().backward())
c = torch.randn(3, requires_grad=True)
cc = c + 0
ok = (cc * 2).sum()
cc.add_(1)
ok.backward()
print("no saved input ok", c.grad)

print("== leaf in-place")
lw = torch.randn(3, requires_grad=True)
show("add_", lambda: lw.add_(1))
show("setitem", lambda: lw.__setitem__(0, 1.0))
show("zero_", lambda: lw.zero_())
show("view add_", lambda: lw[:2].mul_(2))
show("detach add_", lambda: lw.detach().add_(1) is not None)
print(lw._version)
with torch.no_grad():
    lw.mul_(0.5)
print(lw.requires_grad, lw.is_leaf, lw.grad_fn, lw._version)
show("data", lambda: lw.data.fill_(1.0).sum().item())
print(lw)
lin = nn.Linear(2, 2)
show("param add_", lambda: lin.weight.add_(1))
show("numpy rg", lambda: lw.numpy())
show("numpy force", lambda: lw.numpy(force=True).tolist())
show("tolist rg", lambda: lw.tolist())
show("float() rg", lambda: float(lw[0]))

print("== views and in-place")
base = torch.randn(4, requires_grad=True)
bv = base.clone()
view = bv[:2]
view.mul_(3)
print(type(bv.grad_fn).__name__, type(view.grad_fn).__name__)
bv.sum().backward()
print(base.grad)
sp = torch.randn(4, requires_grad=True).clone().unbind(0)
show("unbind inplace", lambda: sp[0].mul_(2))
sp2 = torch.randn(4, requires_grad=True).clone().split(2)
show("split inplace", lambda: sp2[0].add_(1))
show("detach view", lambda: torch.randn(3, requires_grad=True).detach()[:2].add_(1).shape)

print("== .grad of non-leaf")
leaf = torch.randn(2, requires_grad=True)
nonleaf = leaf * 2
nonleaf.sum().backward(retain_graph=True)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    print(nonleaf.grad)
for wrn in caught:
    # (torch appends its build path: "(Triggered internally at ...)", machine-dependent)
    print(wrn.category.__name__, str(wrn.message).split(" (Triggered")[0])
nonleaf.retain_grad()
nonleaf.sum().backward()
print(nonleaf.grad, leaf.grad)
show("retain_grad leaf", lambda: leaf.retain_grad())
show("retain_grad no rg", lambda: torch.ones(2).retain_grad())
show("grad assign shape", lambda: setattr(leaf, "grad", torch.ones(3)))
show("grad assign dtype", lambda: setattr(leaf, "grad", torch.ones(2, dtype=torch.float64)))
show("grad assign list", lambda: setattr(leaf, "grad", [1.0, 2.0]))
leaf.grad = None
print(leaf.grad)

print("== anomaly hint")
an = torch.randn(3, requires_grad=True)
with torch.autograd.set_detect_anomaly(True):
    au = an.exp()
    au2 = au * 2
    au.add_(1)
    try:
        au2.sum().backward()
    except RuntimeError as err:
        print(type(err).__name__, str(err))
print(torch.is_anomaly_enabled())
print("RESULT: ok")
