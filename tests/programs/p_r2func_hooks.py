"""Autograd hooks, after the "Autograd mechanics" notes ("Backward Hooks execution", "Hooks for
saved tensors") and the "Hooks for autograd saved tensors" tutorial: tensor hooks, retain_grad,
Node hooks/prehooks, Module forward/backward hooks, saved_tensors_hooks, save_on_cpu,
register_multi_grad_hook and the RemovableHandle API."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(0)

# --- tensor hooks: order, modification, retain_grad interplay
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a * 2
log = []
b.register_hook(lambda g: log.append(("hook1", g.clone())))
b.register_hook(lambda g: g * 100)
b.retain_grad()
b.register_hook(lambda g: log.append(("hook3", g.clone())))
(b ** 2).sum().backward()
print(log)
print("b.grad", b.grad, "a.grad", a.grad)

# a hook on a leaf runs before accumulation; returning None leaves the grad unchanged
x = torch.ones(2, requires_grad=True)
handle = x.register_hook(lambda g: print("leaf hook sees", g))
(x * 3).sum().backward()
print(x.grad, type(handle).__name__)
handle.remove()
(x * 3).sum().backward()
print(x.grad)
try:
    torch.ones(2).register_hook(lambda g: g)
except RuntimeError as e:
    print(type(e).__name__, e)

# post-accumulate-grad hook (optimizer-in-backward idiom)
p = torch.randn(3, requires_grad=True)


def post_hook(param):
    print("post accumulate", param.grad)


h = p.register_post_accumulate_grad_hook(post_hook)
(p * p).sum().backward()
h.remove()

# --- Node hooks
x = torch.tensor([0.5, -1.0], requires_grad=True)
y = x.exp()
z = y.sin().sum()
print(type(y.grad_fn).__name__, type(z.grad_fn).__name__, z.grad_fn.next_functions)


def node_hook(grad_inputs, grad_outputs):
    print("node hook", type(grad_inputs).__name__, grad_inputs, grad_outputs)


def node_prehook(grad_outputs):
    print("node prehook", grad_outputs)
    return (grad_outputs[0] * 2,)


h1 = y.grad_fn.register_hook(node_hook)
h2 = y.grad_fn.register_prehook(node_prehook)
z.backward()
print("x.grad", x.grad)
h1.remove()
h2.remove()

# --- Module hooks
model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
activations = {}


def get_activation(name):
    def hook(model, input, output):
        activations[name] = output.detach()
    return hook


def pre_hook(module, args):
    print("forward pre-hook", type(module).__name__, [tuple(t.shape) for t in args])
    return (args[0] * 1.0,)


def backward_hook(module, grad_input, grad_output):
    print("full backward hook", type(module).__name__,
          [None if g is None else tuple(g.shape) for g in grad_input],
          [tuple(g.shape) for g in grad_output])


def backward_pre_hook(module, grad_output):
    print("backward pre-hook", type(module).__name__, grad_output[0])


handles = [model[0].register_forward_hook(get_activation("fc1")),
           model[2].register_forward_hook(get_activation("fc2")),
           model[0].register_forward_pre_hook(pre_hook),
           model[2].register_full_backward_hook(backward_hook),
           model[2].register_full_backward_pre_hook(backward_pre_hook),
           model[1].register_full_backward_hook(backward_hook)]
inp = torch.randn(2, 4, requires_grad=True)
out = model(inp)
out.sum().backward()
print({k: v.shape for k, v in activations.items()}, activations["fc2"])
print(type(out.grad_fn).__name__, inp.grad)
for hd in handles:
    hd.remove()
print(model[0]._forward_hooks, model[2]._backward_hooks)


# forward hook with kwargs and always_call
def kw_hook(module, args, kwargs, output):
    print("kw hook", sorted(kwargs), output.shape)


class Scale(nn.Module):
    def forward(self, x, factor=1.0):
        return x * factor


s = Scale()
hh = s.register_forward_hook(kw_hook, with_kwargs=True)
print(s(torch.ones(2), factor=3.0))
hh.remove()

# --- saved tensors hooks (the tutorial's pack/unpack examples)
def pack_hook(x):
    print("Packing", x)
    return x


def unpack_hook(x):
    print("Unpacking", x)
    return x


a = torch.ones(5, requires_grad=True)
b = torch.ones(5, requires_grad=True) * 2
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    y = a * b
y.sum().backward()
print(a.grad)

saved = []


def pack_to_list(x):
    saved.append(x.clone())
    return len(saved) - 1


def unpack_from_list(idx):
    return saved[idx]


x = torch.randn(5, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack_to_list, unpack_from_list):
    y = x.pow(2).sin()
print(len(saved), [tuple(t.shape) for t in saved])
y.sum().backward()
print(x.grad)
try:
    print(y.grad_fn._saved_self)
except RuntimeError as e:
    print(type(e).__name__, e)

with torch.autograd.graph.save_on_cpu(pin_memory=False):
    w = torch.randn(3, 3, requires_grad=True)
    out = (w @ w).tanh().sum()
out.backward()
print(w.grad)


class SelfDeletingTempFile:
    counter = 0

    def __init__(self):
        SelfDeletingTempFile.counter += 1
        self.name = "tmp%d" % SelfDeletingTempFile.counter


store = {}


def pack_to_store(tensor):
    temp_file = SelfDeletingTempFile()
    store[temp_file.name] = tensor.detach().clone()
    return temp_file


def unpack_from_store(temp_file):
    return store[temp_file.name]


lin = nn.Linear(3, 3)
with torch.autograd.graph.saved_tensors_hooks(pack_to_store, unpack_from_store):
    out = F.gelu(lin(torch.randn(2, 3)))
print(sorted(store))
out.sum().backward()
print(lin.weight.grad)

# --- multi-grad hook
t1 = torch.randn(2, requires_grad=True)
t2 = torch.randn(2, requires_grad=True)


def multi(grads):
    print("multi grad hook", [None if g is None else g.shape for g in grads])


mh = torch.autograd.graph.register_multi_grad_hook((t1, t2), multi)
(t1 * 2 + t2 * 3).sum().backward()
mh.remove()
print(t1.grad, t2.grad)
print("RESULT: ok")
