"""The PyTorch recipes "What is a state_dict", "Warmstarting a model using parameters from a
different model" and "Saving and loading models" shrunk, plus the nn.Module API edges they touch:
load_state_dict(strict=False) results, prefixes, get_submodule/get_parameter/get_buffer errors,
register_buffer/register_parameter errors, container editing (Sequential/ModuleList/ModuleDict/
ParameterList/ParameterDict), state-dict and load hooks, module-wide forward hooks."""

import importlib
import io
import os
from collections import OrderedDict

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(-1, 16 * 5 * 5)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


torch.manual_seed(0)
net = Net()
print(net)
optimizer = torch.optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
print("Model's state_dict:")
for param_tensor in net.state_dict():
    print(param_tensor, "\t", net.state_dict()[param_tensor].size())
out = net(torch.randn(2, 3, 32, 32))
F.cross_entropy(out, torch.tensor([1, 7])).backward()
optimizer.step()
print("Optimizer's state_dict:")
for var_name in optimizer.state_dict():
    print(
        var_name,
        "\t",
        optimizer.state_dict()[var_name]
        if var_name == "param_groups"
        else sorted(optimizer.state_dict()[var_name].keys()),
    )


class NetB(nn.Module):
    def __init__(self):
        super(NetB, self).__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.head = nn.Linear(84, 5)
        self.register_buffer("steps", torch.tensor(0))


netA = Net()
netB = NetB()
buf = io.BytesIO()
torch.save(netA.state_dict(), buf)
buf.seek(0)
result = netB.load_state_dict(torch.load(buf, weights_only=True), strict=False)
print(result)
print(result.missing_keys, result.unexpected_keys, type(result).__name__)
print(torch.equal(netB.fc2.weight, netA.fc2.weight), torch.equal(netB.conv1.bias, netA.conv1.bias))
try:
    netB.load_state_dict(netA.state_dict())
except RuntimeError as e:
    print(type(e).__name__, e)
sd = netA.state_dict()
sd["fc3.weight"] = torch.zeros(3, 84)
try:
    netA.load_state_dict(sd)
except RuntimeError as e:
    print(type(e).__name__, e)
print(
    netA.load_state_dict(netA.state_dict()),
    nn.Linear(2, 2).load_state_dict(nn.Linear(2, 2).state_dict()),
)
print(
    list(netB.state_dict(prefix="model.").keys())[:3],
    list(netB.state_dict(keep_vars=True).values())[0].requires_grad,
)
print(
    type(netA.state_dict()).__name__,
    netA.state_dict()._metadata[""],
    netA.state_dict()._metadata["fc1"],
)

# get_* and their errors
print(netB.get_submodule("fc1"), netB.get_parameter("fc1.bias").shape, netB.get_buffer("steps"))
for call in (
    lambda: netB.get_submodule("fc9"),
    lambda: netB.get_submodule("fc1.weight"),
    lambda: netB.get_parameter("fc1.nothing"),
    lambda: netB.get_parameter("steps"),
    lambda: netB.get_buffer("fc1.weight"),
    lambda: netB.get_buffer("nope"),
):
    try:
        call()
    except AttributeError as e:
        print(type(e).__name__, e)
m = nn.Linear(2, 2)
for call in (
    lambda: m.register_buffer("weight", torch.ones(1)),
    lambda: m.register_buffer("a.b", torch.ones(1)),
    lambda: m.register_buffer("", torch.ones(1)),
    lambda: m.register_buffer("x", [1, 2]),
    lambda: m.register_parameter("bias", nn.Parameter(torch.ones(1))),
    lambda: m.register_parameter("p", torch.ones(1)),
    lambda: m.add_module("a.b", nn.ReLU()),
    lambda: m.add_module("weight", nn.ReLU()),
    lambda: m.add_module("x", "not a module"),
    lambda: setattr(m, "weight", torch.ones(2, 2)),
    lambda: m.nothing,
):
    try:
        call()
        print("ok")
    except (KeyError, TypeError, AttributeError) as e:
        print(type(e).__name__, e)
m.weight = nn.Parameter(torch.ones(2, 2))
m.bias = None
print(m, m.bias, list(m.state_dict().keys()), [n for n, _ in m.named_parameters()])
m.register_buffer("mask", None)
print(list(m.state_dict().keys()), [n for n, _ in m.named_buffers()], m.mask)
del m.weight
print(hasattr(m, "weight"), list(m._parameters.keys()))

# containers
seq = nn.Sequential(OrderedDict([("a", nn.Linear(2, 3)), ("b", nn.ReLU()), ("c", nn.Linear(3, 1))]))
print(seq[1:], seq[-1], len(seq), seq.a)
seq.append(nn.Sigmoid())
try:
    seq.insert(1, nn.Dropout(0.1))
except KeyError as e:
    print("KeyError", e)
seq = nn.Sequential(*seq)
seq.insert(1, nn.Dropout(0.1))
seq.insert(-1, nn.Tanh())
seq.extend([nn.Identity()])
print(seq)
print(seq.pop(1), len(seq))
del seq[0]
print(seq)
s2 = nn.Sequential(nn.ReLU(), nn.Tanh()) + nn.Sequential(nn.Sigmoid())
print(s2, nn.Sequential(nn.ReLU()) * 2)
ml = nn.ModuleList([nn.Linear(1, 1), nn.ReLU()])
ml += nn.ModuleList([nn.Tanh()])
ml[1] = nn.GELU()
print(ml, ml[-1], ml[:2], ml.index(ml[1]) if hasattr(ml, "index") else None)
del ml[0]
print(ml, len(ml), ml.pop(0), len(ml))
md = nn.ModuleDict([("x", nn.Linear(1, 2)), ("y", nn.ReLU())])
md.update([("z", nn.Tanh())])
print(list(md.keys()), [type(v).__name__ for v in md.values()], [k for k, _ in md.items()])
print(md.pop("y"), "y" in md, len(md))
md.clear()
print(md, len(md))
pl = nn.ParameterList([torch.ones(2), nn.Parameter(torch.zeros(3))])
pl.append(torch.full((1,), 5.0))
pl.extend([torch.ones(1, 1)])
print(pl, [type(p).__name__ for p in pl], [p.requires_grad for p in pl])
pd = nn.ParameterDict({"a": torch.ones(2), "b": nn.Parameter(torch.zeros(1))})
pd.update({"c": torch.ones(3)})
print(
    pd,
    list(pd.keys()),
    type(pd["a"]).__name__,
    pd.get("zz"),
    pd.setdefault("d", nn.Parameter(torch.ones(1))),
)
print(pd.pop("a"), len(pd), list(pd.keys()))

# state_dict / load hooks
seen = []
lin = nn.Linear(2, 2)


def post_load(module, incompatible_keys):
    seen.append(("post", type(module).__name__, list(incompatible_keys.missing_keys)))


def pre_load(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs):
    seen.append(("pre", prefix, sorted(state_dict.keys())))


h1 = lin.register_load_state_dict_post_hook(post_load)
h2 = lin._register_load_state_dict_pre_hook(pre_load)
lin.load_state_dict({"weight": torch.ones(2, 2)}, strict=False)
print(seen)
h1.remove()
h2.remove()
print(lin.weight, lin.bias.shape)

# module-global hooks
order = []
g1 = nn.modules.module.register_module_forward_pre_hook(
    lambda m, i: order.append("pre:" + type(m).__name__)
)
g2 = nn.modules.module.register_module_forward_hook(
    lambda m, i, o: order.append("post:" + type(m).__name__)
)
nn.Sequential(nn.Linear(2, 2), nn.ReLU())(torch.ones(1, 2))
g1.remove()
g2.remove()
print(order)


class WithKw(nn.Module):
    def forward(self, x, scale=1.0, *, bias=0.0):
        return x * scale + bias


wk = WithKw()
wk.register_forward_pre_hook(
    lambda m, args, kwargs: (args, {**kwargs, "bias": 10.0}), with_kwargs=True
)
wk.register_forward_hook(lambda m, args, kwargs, out: out + kwargs["bias"], with_kwargs=True)
wk.register_forward_pre_hook(lambda m, args: (args[0] * 2,), prepend=True)
print(wk(torch.ones(2), 3.0, bias=1.0))

# dtype conversions and requires_grad
conv = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
print(
    conv.half()[1].running_mean.dtype,
    conv[1].num_batches_tracked.dtype,
    conv.double()[0].weight.dtype,
)
print(
    conv.bfloat16()[0].bias.dtype,
    conv.float()[1].weight.dtype,
    conv.to(torch.float16)[0].weight.dtype,
)
conv.float()
print(
    conv.requires_grad_(False)[0].weight.requires_grad, conv.requires_grad_()[1].bias.requires_grad
)
conv(torch.randn(3, 2)).sum().backward()
conv.zero_grad(set_to_none=False)
print(conv[0].weight.grad, conv[1].bias.grad)
conv.zero_grad()
print(conv[0].weight.grad)
print(conv.train(False).training, conv[1].training, conv.train().training, conv.eval() is conv)
print("RESULT: ok")
