"""nn.Module and optimizer misuse, after the "Saving and loading models" recipe (strict
load_state_dict errors and their fix), the Module docs (register_buffer, register_parameter,
add_module rules) and the forum answers on "optimizer got an empty parameter list" and
"some parameters appear in more than one parameter group": each mistake caught and printed."""

import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
optim = torch.optim


def show(label, fn):
    try:
        out = fn()
    except Exception as e:
        print(label, "->", type(e).__name__, str(e))
    else:
        print(label, "ok", out)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.bn = nn.BatchNorm1d(8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.bn(self.fc1(x))))


class NoForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)


torch.manual_seed(0)
net = Net()
print(list(net.state_dict().keys()))

print("== forward")
show("missing forward", lambda: NoForward()(torch.ones(1, 2)))
show("call forward args", lambda: net(torch.ones(3, 4), torch.ones(3, 4)))
show("no super init", lambda: type("Bad", (nn.Module,), {"__init__": lambda self: setattr(
    self, "fc", nn.Linear(2, 2))})())

print("== load_state_dict")
sd = net.state_dict()
missing = {k: v for k, v in sd.items() if not k.startswith("fc2")}
show("missing keys", lambda: Net().load_state_dict(missing))
extra = dict(sd, **{"fc3.weight": torch.ones(1), "head.bias": torch.ones(1)})
show("unexpected keys", lambda: Net().load_state_dict(extra))
both = dict(missing, **{"fc3.weight": torch.ones(1)})
show("both", lambda: Net().load_state_dict(both))
shape = dict(sd, **{"fc1.weight": torch.ones(8, 5)})
show("size mismatch", lambda: Net().load_state_dict(shape))
prefixed = {"module." + k: v for k, v in sd.items()}
show("DataParallel prefix", lambda: Net().load_state_dict(prefixed))
result = Net().load_state_dict(missing, strict=False)
print("strict=False", result.missing_keys, result.unexpected_keys)
print(result)
print(Net().load_state_dict(sd))
fixed = {k[len("module."):]: v for k, v in prefixed.items()}
print("prefix fixed", Net().load_state_dict(fixed))
show("not a dict", lambda: Net().load_state_dict([1, 2]))
show("tensor value", lambda: Net().load_state_dict(dict(sd, **{"fc1.bias": [0.0] * 8})))

print("== registration")
m = nn.Module()
m.register_buffer("running", torch.zeros(2))
show("buffer again", lambda: m.register_buffer("running", torch.ones(2)))
m.weight = nn.Parameter(torch.ones(2))
show("buffer over param", lambda: m.register_buffer("weight", torch.ones(2)))
show("buffer dot", lambda: m.register_buffer("a.b", torch.ones(2)))
show("buffer empty", lambda: m.register_buffer("", torch.ones(2)))
show("buffer not tensor", lambda: m.register_buffer("x", [1, 2]))
show("buffer name type", lambda: m.register_buffer(3, torch.ones(2)))
show("param not Parameter", lambda: m.register_parameter("p", torch.ones(2)))
show("param over buffer", lambda: m.register_parameter("running", nn.Parameter(torch.ones(2))))
show("param dot", lambda: m.register_parameter("a.b", nn.Parameter(torch.ones(2))))
show("param non-leaf", lambda: m.register_parameter(
    "q", nn.Parameter(torch.ones(2, requires_grad=True)) * 2))
show("assign tensor to param", lambda: setattr(m, "weight", torch.ones(2)))
show("add_module dot", lambda: m.add_module("a.b", nn.Linear(1, 1)))
show("add_module empty", lambda: m.add_module("", nn.Linear(1, 1)))
show("add_module not module", lambda: m.add_module("lin", torch.ones(2)))
show("add_module attr", lambda: m.add_module("training", nn.Linear(1, 1)))
show("add_module name", lambda: m.add_module(1, nn.Linear(1, 1)))
show("get_submodule", lambda: net.get_submodule("fc3"))
show("get_submodule attr", lambda: net.get_submodule("fc1.weight"))
show("get_parameter", lambda: net.get_parameter("fc1.scale"))
show("getattr", lambda: net.fc3)
print(sorted(n for n, _ in m.named_buffers()), sorted(n for n, _ in m.named_parameters()))

print("== containers")
seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
show("seq index", lambda: seq[5])
show("seq neg", lambda: seq[-3])
show("seq key", lambda: seq["0"])
ml = nn.ModuleList([nn.Linear(1, 1)])
show("modulelist call", lambda: ml(torch.ones(1)))
show("modulelist idx", lambda: ml[3])
show("modulelist append", lambda: ml.append(torch.ones(1)))
md = nn.ModuleDict({"a": nn.Linear(1, 1)})
show("moduledict key", lambda: md["b"])
pl = nn.ParameterList([nn.Parameter(torch.ones(1))])
show("paramlist idx", lambda: pl[2])

print("== optimizers")
show("empty list", lambda: optim.SGD([], lr=0.1))
show("empty generator", lambda: optim.Adam((p for p in []), lr=0.1))
show("tensor params", lambda: optim.SGD(torch.ones(2, requires_grad=True), lr=0.1))
show("set params", lambda: optim.SGD({nn.Parameter(torch.ones(1))}, lr=0.1))
show("negative lr", lambda: optim.Adam(net.parameters(), lr=-0.1))
show("bad betas", lambda: optim.Adam(net.parameters(), betas=(1.0, 0.999)))
show("bad eps", lambda: optim.Adam(net.parameters(), eps=-1.0))
show("bad momentum", lambda: optim.SGD(net.parameters(), lr=0.1, momentum=-0.5))
show("nesterov", lambda: optim.SGD(net.parameters(), lr=0.1, nesterov=True))
show("weight decay", lambda: optim.AdamW(net.parameters(), weight_decay=-1))
show("duplicate groups", lambda: optim.SGD([{"params": net.fc1.parameters()},
                                            {"params": net.parameters()}], lr=0.1))
show("non-leaf param", lambda: optim.SGD([torch.ones(2, requires_grad=True) * 2], lr=0.1))
opt = optim.SGD(net.fc1.parameters(), lr=0.1)
show("add_param_group dup", lambda: opt.add_param_group({"params": net.fc1.weight}))
show("add_param_group ok",
     lambda: opt.add_param_group({"params": net.fc2.parameters(), "lr": 0.01}))
print([g["lr"] for g in opt.param_groups], [len(g["params"]) for g in opt.param_groups])
show("load_state_dict groups", lambda: optim.SGD(net.fc1.parameters(), lr=0.1).load_state_dict(
    opt.state_dict()))
print(opt.state_dict()["param_groups"][1])
x = torch.randn(5, 4)
loss = net(x).pow(2).mean()
show("step before backward", lambda: opt.step())
loss.backward()
opt.step()
opt.zero_grad()
print(net.fc1.weight.grad, net.fc2.weight.grad)
sched = optim.lr_scheduler.StepLR(opt, step_size=1)
show("scheduler bad opt", lambda: optim.lr_scheduler.StepLR(net, step_size=1))
print(sched.get_last_lr())
print("RESULT: ok")
