"""nn.utils recipes: "Skipping Module Parameter Initialization" (skip_init), Conv/BN fusion for
inference (fuse_conv_bn_eval, fuse_linear_bn_eval), functional_call with swapped parameters,
parameters_to_vector/vector_to_parameters, state_dict pre/post hooks and _version upgrades,
and the module utilities to()/half()/double()/type conversion with buffers."""
import importlib
import os
from collections import OrderedDict

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
fusion = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.utils.fusion")
stateless = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.utils.stateless")

# skip_init
m = torch.nn.utils.skip_init(nn.Linear, 5, 1)
print(m, m.weight.shape, m.bias.shape, m.weight.requires_grad)
torch.manual_seed(0)
m2 = torch.nn.utils.skip_init(nn.Linear, in_features=6, out_features=1, bias=False,
                              dtype=torch.float64)
nn.init.orthogonal_(m2.weight)
print(m2, m2.weight.dtype, torch.allclose(m2.weight.norm(), torch.tensor(1.0, dtype=torch.float64)))

# conv + bn fusion
torch.manual_seed(0)
conv = nn.Conv2d(3, 4, 3, padding=1)
bn = nn.BatchNorm2d(4)
x = torch.randn(2, 3, 5, 5)
bn.train()
for _ in range(3):
    bn(conv(x))
conv.eval()
bn.eval()
fused = fusion.fuse_conv_bn_eval(conv, bn)
print(fused)
ref = bn(conv(x))
out = fused(x)
print(torch.allclose(ref, out, atol=1e-5), f"{(ref - out).abs().max().item():.2e}" != "nan")
print(fused.weight[0, 0], fused.bias)
print(bn.running_mean, bn.running_var, bn.num_batches_tracked)
lin = nn.Linear(4, 3).eval()
bn1 = nn.BatchNorm1d(3).eval()
bn1.running_mean.fill_(0.5)
bn1.running_var.fill_(2.0)
fl = fusion.fuse_linear_bn_eval(lin, bn1)
xi = torch.randn(5, 4)
print(torch.allclose(fl(xi), bn1(lin(xi)), atol=1e-6), fl.bias)
w, b = fusion.fuse_conv_bn_weights(conv.weight, conv.bias, bn.running_mean, bn.running_var,
                                   bn.eps, bn.weight, bn.bias)
print(type(w).__name__, w.shape, b.shape, torch.equal(w, fused.weight))

# functional_call
torch.manual_seed(1)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
params = {k: torch.zeros_like(v) for k, v in model.named_parameters()}
params["2.bias"] = torch.tensor([1.0, -1.0])
inp = torch.randn(2, 3)
print(stateless.functional_call(model, params, (inp,)))
print(torch.func.functional_call(model, dict(model.named_parameters()), inp))
print(model(inp))

# vector conversions
vec = nn.utils.parameters_to_vector(model.parameters())
print(vec.shape, f"{vec.sum().item():.5f}")
nn.utils.vector_to_parameters(vec * 2, model.parameters())
print(model[2].bias)
try:
    nn.utils.vector_to_parameters([1.0], model.parameters())
except TypeError as e:
    print(e)

# state_dict hooks and versioned loading
class Old(nn.Module):
    _version = 2

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.register_buffer("steps", torch.tensor(0))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs):
        version = local_metadata.get("version", None)
        print("loading version", version)
        if version is None or version < 2:
            state_dict[prefix + "steps"] = torch.tensor(7)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)


o = Old()
sd = o.state_dict()
print(sd._metadata[""], sd._metadata["lin"])
legacy = OrderedDict((k, v) for k, v in sd.items() if k != "steps")
o.load_state_dict(legacy)
print(o.steps)
o.load_state_dict(sd)
print(o.steps)


def post_hook(module, state_dict, prefix, local_metadata):
    state_dict[prefix + "note"] = torch.tensor(1.0)


def load_pre_hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
                  unexpected_keys, error_msgs):
    state_dict.pop(prefix + "note", None)


o.register_state_dict_post_hook(post_hook)
o.register_load_state_dict_pre_hook(load_pre_hook)
sd2 = o.state_dict()
print(list(sd2.keys()))
print(o.load_state_dict(sd2))
print(o.state_dict(prefix="model.", keep_vars=True).keys())

# dtype / conversions with buffers
net = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2))
net.half()
print(net[0].weight.dtype, net[1].running_mean.dtype, net[1].num_batches_tracked.dtype)
net.to(torch.float64)
print(net[0].weight.dtype, net[1].running_var.dtype, net[1].num_batches_tracked.dtype)
net.float()
net = nn.utils.convert_conv2d_weight_memory_format(net, torch.channels_last)
print(net[0].weight.is_contiguous(memory_format=torch.channels_last), net[0].weight.shape)
print(net.to(torch.device("cpu"), non_blocking=True) is net)
print(net.type(torch.float64)[0].bias.dtype)
print("RESULT: ok")
