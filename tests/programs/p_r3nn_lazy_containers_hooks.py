"""Module plumbing as real code uses it: ModuleDict / ModuleList / ParameterList / ParameterDict
(construction, update, printing, iteration order), LazyLinear / LazyConv2d / LazyBatchNorm1d
materialisation (printing before/after, has_uninitialized_params, initialize_parameters),
forward pre-hooks with kwargs that rewrite inputs, forward hooks with kwargs and always_call,
full backward hooks and backward pre-hooks, global register_module_forward_hook, and
state_dict / load_state_dict pre- and post-hooks."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(0)


class MyModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.choices = nn.ModuleDict({"conv": nn.Conv2d(3, 4, 3), "pool": nn.MaxPool2d(2)})
        self.activations = nn.ModuleDict([["lrelu", nn.LeakyReLU()], ["prelu", nn.PReLU()]])
        self.params = nn.ParameterList([nn.Parameter(torch.randn(2, 2)) for i in range(3)])
        self.pdict = nn.ParameterDict({"left": nn.Parameter(torch.randn(2, 3)),
                                       "right": nn.Parameter(torch.randn(2, 3))})

    def forward(self, x, choice, act):
        x = self.choices[choice](x)
        x = self.activations[act](x)
        return x


m = MyModule()
print(m)
print(m(torch.randn(1, 3, 6, 6), "conv", "prelu").shape)
print(list(m.choices.keys()), len(m.activations), "pool" in m.choices)
m.choices.update({"id": nn.Identity()})
m.choices["bn"] = nn.BatchNorm2d(3)
print(m.choices)
print(m.choices.pop("pool"))
print([k for k, v in m.choices.items()])
m.params.append(nn.Parameter(torch.zeros(1)))
m.params.extend([nn.Parameter(torch.ones(3, dtype=torch.float64))])
print(m.params)
print(len(m.params), m.params[-1].dtype, m.params[0].shape)
m.pdict["bias"] = nn.Parameter(torch.zeros(3))
m.pdict.update({"extra": nn.Parameter(torch.ones(2, 2, dtype=torch.float64))})
print(m.pdict)
print(list(m.pdict.keys()), m.pdict.get("missing"), "left" in m.pdict)
print(sorted(n for n, _ in m.named_parameters()))
pd2 = nn.ParameterDict({"a": torch.ones(2), "b": 3})
print(pd2, type(pd2["a"]).__name__, pd2["b"])
ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(2)])
ml.insert(1, nn.Tanh())
ml += [nn.ReLU()]
print(ml, ml[-1], ml[1:3])

lazy = nn.Sequential(nn.LazyConv2d(4, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(5),
                     nn.LazyBatchNorm1d())
print(lazy)
print(lazy[0].has_uninitialized_params(), type(lazy[0].weight).__name__)
try:
    lazy[3].weight.shape
except Exception as e:
    print(type(e).__name__, str(e)[:60])
y = lazy(torch.randn(2, 3, 6, 6))
print(lazy)
print(y.shape, type(lazy[3].weight).__name__, lazy[3].in_features, lazy[3].weight.shape)
print(lazy[4].running_mean, lazy[4].num_batches_tracked)
ll = nn.LazyLinear(3)
ll.initialize_parameters(torch.randn(4, 7))
print(ll, ll.weight.shape)
print(type(nn.LazyLinear(2)).__name__, isinstance(ll, nn.Linear), type(ll).__name__)
sd = nn.LazyLinear(2).state_dict()
print({k: type(v).__name__ for k, v in sd.items()})

log = []
net = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))


def pre_hook(module, args, kwargs):
    log.append(("pre", type(module).__name__, len(args), sorted(kwargs)))
    return (args[0] * 2,), kwargs


def fwd_hook(module, args, kwargs, output):
    log.append(("fwd", type(module).__name__, tuple(output.shape)))
    return output + 1


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)

    def forward(self, x, scale=1.0):
        return self.lin(x) * scale


s = Scaled()
h1 = s.register_forward_pre_hook(pre_hook, with_kwargs=True)
h2 = s.register_forward_hook(fwd_hook, with_kwargs=True, always_call=True)
print(s(torch.ones(1, 2), scale=3.0))
h1.remove()
h2.remove()
print(s(torch.ones(1, 2), scale=3.0))
print(log)
grads = []


def bwd_hook(mod, gin, gout):
    grads.append((type(mod).__name__, [None if g is None else tuple(g.shape) for g in gin],
                  [tuple(g.shape) for g in gout]))


hb = net[0].register_full_backward_hook(bwd_hook)
hp = net[2].register_full_backward_pre_hook(lambda mod, gout: (gout[0] * 10,))
x = torch.randn(5, 4, requires_grad=True)
net(x).sum().backward()
print(grads)
print(net[2].bias.grad)
hb.remove()
hp.remove()
seen = []
g = nn.modules.module.register_module_forward_hook(
    lambda mod, inp, out: seen.append(type(mod).__name__))
gp = nn.modules.module.register_module_forward_pre_hook(lambda mod, inp: None)
net(torch.randn(1, 4))
g.remove()
gp.remove()
net(torch.randn(1, 4))
print(seen)
out_shapes = {}
for name, mod in net.named_modules():
    if name:
        mod.register_forward_hook(
            lambda mo, i, o, name=name: out_shapes.__setitem__(name, tuple(o.shape)))
net(torch.randn(3, 4))
print(out_shapes)


def sd_post(module, state_dict, prefix, local_metadata):
    state_dict[prefix + "extra_step"] = torch.tensor(7)


def sd_pre(module, prefix, keep_vars):
    print("state_dict pre-hook", type(module).__name__, repr(prefix), keep_vars)


def load_pre(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
             error_msgs):
    state_dict.pop(prefix + "extra_step", None)
    print("load pre-hook", repr(prefix), strict)


def load_post(module, incompatible_keys):
    print("load post-hook", incompatible_keys)


lin = nn.Linear(2, 2)
lin.register_state_dict_post_hook(sd_post)
lin.register_state_dict_pre_hook(sd_pre)
lin.register_load_state_dict_pre_hook(load_pre)
lin.register_load_state_dict_post_hook(load_post)
state = lin.state_dict()
print(list(state.keys()))
print(lin.load_state_dict(state))
wrapper = nn.Sequential(lin)
print(list(wrapper.state_dict(keep_vars=True).keys()))
print(wrapper.load_state_dict({"0.weight": torch.zeros(2, 2), "0.bias": torch.zeros(2),
                               "0.extra_step": torch.tensor(1)}))
print("RESULT:", lin.weight.sum().item(), len(log), len(seen))
