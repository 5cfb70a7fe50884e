"""A tour of the nn.Module API as the docs and "What is torch.nn really?" use it: buffers
(persistent=False), named_modules/children, apply(init_weights), forward/backward hooks (with
kwargs), ModuleList/ModuleDict/ParameterList/ParameterDict, add_module, freezing with
requires_grad_, zero_grad, train/eval, extra_repr, deepcopy and parameters_to_vector."""
import copy
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


class Scale(nn.Module):
    def __init__(self, factor, learnable=False):
        super().__init__()
        self.factor = factor
        self.learnable = learnable
        self.register_buffer("running", torch.zeros(3))
        self.register_buffer("tmp", torch.ones(2), persistent=False)
        self.register_parameter("alpha", nn.Parameter(torch.tensor(1.0)) if learnable else None)

    def forward(self, x, shift=0.0):
        a = self.alpha if self.alpha is not None else 1.0
        return x * self.factor * a + shift

    def extra_repr(self):
        return f"factor={self.factor}, learnable={self.learnable}"


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(d, d) for _ in range(2)])
        self.acts = nn.ModuleDict({"relu": nn.ReLU(), "tanh": nn.Tanh()})
        self.scale = Scale(0.5, learnable=True)
        self.gains = nn.ParameterList([nn.Parameter(torch.ones(d)) for _ in range(2)])
        self.extra = nn.ParameterDict({"bias": nn.Parameter(torch.zeros(d))})

    def forward(self, x, act="relu"):
        for layer, g in zip(self.layers, self.gains):
            x = self.acts[act](layer(x)) * g
        return self.scale(x, shift=0.1) + self.extra["bias"]


torch.manual_seed(0)
model = nn.Sequential()
model.add_module("block", Block(4))
model.add_module("head", nn.Linear(4, 2))
model.register_module("drop", nn.Dropout(0.0))
print(model)
print([n for n, _ in model.named_modules()])
print([n for n, _ in model.named_children()])
print(len(list(model.modules())), len(list(model.children())))
print([(n, tuple(p.shape)) for n, p in model.named_parameters()])
print([(n, tuple(b.shape)) for n, b in model.named_buffers()])
print(list(model.state_dict().keys()))
print(model.get_submodule("block.layers.1"), model.get_parameter("block.scale.alpha"))
print(model.block.scale, model.block.acts["tanh"])


def init_weights(m):
    if isinstance(m, nn.Linear):
        torch.nn.init.xavier_uniform_(m.weight)
        m.bias.data.fill_(0.01)


model.apply(init_weights)
print(model.head.weight, model.head.bias)

calls = []


def pre_hook(module, args):
    calls.append(("pre", type(module).__name__, tuple(args[0].shape)))


def fwd_hook(module, args, output):
    calls.append(("fwd", type(module).__name__, round(output.sum().item(), 4)))
    return output * 2


def kw_pre_hook(module, args, kwargs):
    kwargs = dict(kwargs)
    kwargs["shift"] = 1.0
    return args, kwargs


def kw_fwd_hook(module, args, kwargs, output):
    calls.append(("kwfwd", sorted(kwargs)))


def bwd_hook(module, grad_input, grad_output):
    calls.append(("bwd", type(module).__name__, [None if g is None else tuple(g.shape)
                                                 for g in grad_input],
                  round(grad_output[0].abs().sum().item(), 4)))


def bwd_pre_hook(module, grad_output):
    calls.append(("bwdpre", type(module).__name__))


h1 = model.head.register_forward_pre_hook(pre_hook)
h2 = model.head.register_forward_hook(fwd_hook)
h3 = model.block.scale.register_forward_pre_hook(kw_pre_hook, with_kwargs=True)
h4 = model.block.scale.register_forward_hook(kw_fwd_hook, with_kwargs=True)
h5 = model.head.register_full_backward_hook(bwd_hook)
h6 = model.head.register_full_backward_pre_hook(bwd_pre_hook)
x = torch.randn(3, 4, requires_grad=True)
out = model(x)
out.sum().backward()
print(out)
for c in calls:
    print(c)
for h in (h1, h2, h3, h4, h5, h6):
    h.remove()
calls.clear()
out2 = model(x)
print(calls, torch.allclose(out2 * 2, out) is False)
print(x.grad)

# state-dict hooks and module-level hooks on every call
seen = []
hg = nn.modules.module.register_module_forward_hook(lambda m, i, o: seen.append(type(m).__name__))
model(x)
hg.remove()
print(seen)

# freezing
model.zero_grad()
print(model.head.weight.grad)
model.block.requires_grad_(False)
trainable = [p for p in model.parameters() if p.requires_grad]
print(len(trainable), [tuple(p.shape) for p in trainable])
opt = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.1)
loss = F.mse_loss(model(x), torch.zeros(3, 2))
loss.backward()
print(model.block.layers[0].weight.grad, model.head.bias.grad)
opt.step()
model.zero_grad(set_to_none=False)
print(model.head.bias.grad)
model.zero_grad()
print(model.head.bias.grad)

# train/eval, deepcopy
print(model.training, model.block.training)
model.eval()
print(model.training, model.block.scale.training, model.drop.training)
model.train()
clone = copy.deepcopy(model)
print(clone.head.weight is model.head.weight, torch.equal(clone.head.weight, model.head.weight))
clone.head.weight.data.add_(1.0)
print(torch.equal(clone.head.weight, model.head.weight), clone.block.scale.tmp)
print(clone.block.layers[0].weight.requires_grad)

# parameters <-> vector
vec = nn.utils.parameters_to_vector(model.head.parameters())
print(vec.shape, vec)
nn.utils.vector_to_parameters(torch.arange(10.0), model.head.parameters())
print(model.head.weight, model.head.bias)

# modules, dtype and buffers
m = Scale(2.0)
m.double()
print(m.running.dtype, m.tmp.dtype, m.state_dict().keys())
m.half().float()
print(m.running.dtype)
lst = nn.ModuleList([nn.Linear(2, 2)])
lst.append(nn.ReLU())
lst.extend([nn.Tanh(), nn.Sigmoid()])
lst.insert(1, nn.Identity())
print(lst)
print(lst[1:3], len(lst))
md = nn.ModuleDict()
md["a"] = nn.Linear(1, 1)
md.update({"b": nn.ReLU()})
print(list(md.keys()), "a" in md, md)
pl = nn.ParameterList([nn.Parameter(torch.zeros(2)), nn.Parameter(torch.ones(2, 3))])
print(pl)
pd = nn.ParameterDict({"w": nn.Parameter(torch.zeros(2, 2))})
print(pd)
del model.block.extra
print(hasattr(model.block, "extra"), model.block)
print("RESULT: ok")
