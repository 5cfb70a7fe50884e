"""The PyTorch docs note "Modules" (docs/source/notes/modules.rst), shrunk: a custom MyLinear,
composing modules (Sequential, ModuleList, ModuleDict), named_parameters/named_buffers/
named_children/named_modules with prefixes and remove_duplicate, RunningMean with buffers
(persistent=False), state_dict, factory kwargs (device/dtype), skip_init, apply, to(dtype),
train/eval, and the module repr nesting."""

import importlib
import os
from collections import OrderedDict

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


class MyLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features))
        self.bias = nn.Parameter(torch.randn(out_features))

    def forward(self, input):
        return (input @ self.weight) + self.bias


torch.manual_seed(0)
m = MyLinear(4, 3)
sample_input = torch.randn(4)
print(m(sample_input))
for parameter in m.named_parameters():
    print(parameter)
print(m)

net = nn.Sequential(MyLinear(4, 3), nn.ReLU(), MyLinear(3, 1))
sample_input = torch.randn(4)
print(net(sample_input))
print(net)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.l0 = MyLinear(4, 3)
        self.l1 = MyLinear(3, 1)

    def forward(self, x):
        x = self.l0(x)
        x = F.relu(x)
        x = self.l1(x)
        return x


net = Net()
for child in net.named_children():
    print(child)


class BigNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = MyLinear(5, 4)
        self.net = Net()

    def forward(self, x):
        return self.net(self.l1(x))


big_net = BigNet()
for module in big_net.named_modules():
    print(module)
print([n for n, _ in big_net.named_modules(prefix="root")])
print([n for n, _ in big_net.named_parameters(prefix="model", recurse=True)])
print([n for n, _ in big_net.named_parameters(recurse=False)])
print([n for n, _ in big_net.net.named_parameters(prefix="net")])


class DynamicNet(nn.Module):
    def __init__(self, num_layers):
        super().__init__()
        self.linears = nn.ModuleList([MyLinear(4, 4) for _ in range(num_layers)])
        self.activations = nn.ModuleDict({"relu": nn.ReLU(), "lrelu": nn.LeakyReLU()})
        self.final = MyLinear(4, 1)

    def forward(self, x, act):
        for linear in self.linears:
            x = linear(x)
            x = self.activations[act](x)
        x = self.final(x)
        return x


dynamic_net = DynamicNet(3)
sample_input = torch.randn(4)
output = dynamic_net(sample_input, "relu")
print(output)
for parameter in dynamic_net.named_parameters():
    print(parameter[0], parameter[1].shape)
print(dynamic_net)

# shared parameters: remove_duplicate
shared = nn.Linear(2, 2)
tied = nn.Sequential(shared, nn.Tanh(), shared)
print(len(list(tied.parameters())), len(list(tied.named_parameters(remove_duplicate=False))))
print([n for n, _ in tied.named_parameters(remove_duplicate=False)])
print(
    [n for n, _ in tied.named_modules()], [n for n, _ in tied.named_modules(remove_duplicate=False)]
)
print(list(tied.state_dict().keys()))

# train/eval and to()
print(dynamic_net.training)
dynamic_net.eval()
print(dynamic_net.training, dynamic_net.linears[0].training)
dynamic_net.train()


class ModalModule(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if self.training:
            return x + 1.0
        else:
            return x - 1.0


mm = ModalModule()
x = torch.randn(4)
print("training mode output: {}".format(mm(x)))
mm.eval()
print("evaluation mode output: {}".format(mm(x)))

dynamic_net = DynamicNet(2)
dynamic_net.to(dtype=torch.float64)
print(dynamic_net.final.weight.dtype)
print(dynamic_net(torch.randn(4, dtype=torch.float64), "lrelu"))
dynamic_net.float()


class RunningMean(nn.Module):
    def __init__(self, num_features, momentum=0.9):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("mean", torch.zeros(num_features))

    def forward(self, x):
        self.mean = self.momentum * self.mean + (1.0 - self.momentum) * x
        return self.mean


rm = RunningMean(4)
for _ in range(3):
    print(rm(torch.randn(4)))
print(rm.state_dict())
rm.to(torch.float64)
print(rm.mean.dtype, list(rm.named_buffers()))


class RunningMean2(nn.Module):
    def __init__(self, num_features, momentum=0.9):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("mean", torch.zeros(num_features))
        self.register_buffer("unserialized_thing", torch.randn(5), persistent=False)


m2 = RunningMean2(3)
print(m2.state_dict(), [n for n, _ in m2.named_buffers()], len(list(m2.buffers())))

# factory kwargs
m = nn.Linear(5, 3, device="cpu", dtype=torch.float64)
print(m.weight.dtype, m.weight.device, m.bias.shape)
m = nn.BatchNorm2d(3, dtype=torch.float64)
print(m.running_mean.dtype, m.weight.dtype, m.num_batches_tracked.dtype)
m = torch.nn.utils.skip_init(nn.Linear, 5, 1)
print(m, m.weight.shape, m.bias.shape)


@torch.no_grad()
def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.constant_(m.weight, 0.5)
        nn.init.zeros_(m.bias)


torch.manual_seed(1)
seq = nn.Sequential(
    OrderedDict(
        [
            ("fc1", nn.Linear(4, 8)),
            ("act", nn.GELU()),
            ("fc2", nn.Linear(8, 2)),
        ]
    )
)
seq.apply(init_weights)
print(seq, seq.fc1.weight, seq.fc2.bias)
print(seq(torch.ones(1, 4)))
print(seq[0], seq[-1], seq[:2], seq[::2])
print(seq.get_submodule("fc2"), seq.get_parameter("fc1.bias"))
print(type(seq[1:]).__name__, len(seq), list(seq._modules.keys()))


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(3, 3), nn.Sequential(nn.ReLU(), nn.Dropout(0.1)))
        self.heads = nn.ModuleDict({"a": nn.Linear(3, 1), "b": nn.ModuleList([nn.Identity()])})
        self.scale = nn.ParameterList([nn.Parameter(torch.ones(1))])
        self.emb = nn.ParameterDict({"tok": nn.Parameter(torch.zeros(2, 3))})

    def forward(self, x):
        return self.heads["a"](self.features(x)) * self.scale[0]


o = Outer()
print(o)
print([n for n, _ in o.named_parameters()])
print(sum(p.numel() for p in o.parameters()))
print("RESULT: ok")
