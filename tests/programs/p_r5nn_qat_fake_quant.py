"""Quantization-aware training written in plain torch, after zhutmost/lsq-net
(quan/quantizer/lsq.py: grad_scale / round_pass straight-through tricks, LsqQuan with
per-channel init from the weight's mean abs) and torch.ao.quantization's
MovingAverageMinMaxObserver + FakeQuantize maths (scale and zero_point from running min/max,
quant_min/quant_max, affine fake quantisation), with module swapping (QuanConv2d/QuanLinear
built from the float modules, as lsq-net's replace_module_by_names does), fuse_conv_bn_eval,
register_buffer and the state_dict keys."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


def grad_scale(x, scale):
    y = x
    y_grad = x * scale
    return (y - y_grad).detach() + y_grad


def round_pass(x):
    y = x.round()
    y_grad = x
    return (y - y_grad).detach() + y_grad


class LsqQuan(nn.Module):
    def __init__(self, bit, all_positive=False, symmetric=False, per_channel=True):
        super().__init__()
        if all_positive:
            assert not symmetric, "Positive quantization cannot be symmetric"
            self.thd_neg = 0
            self.thd_pos = 2 ** bit - 1
        else:
            if symmetric:
                self.thd_neg = -(2 ** (bit - 1)) + 1
                self.thd_pos = 2 ** (bit - 1) - 1
            else:
                self.thd_neg = -(2 ** (bit - 1))
                self.thd_pos = 2 ** (bit - 1) - 1
        self.per_channel = per_channel
        self.s = nn.Parameter(torch.ones(1))

    def init_from(self, x, *args, **kwargs):
        if self.per_channel:
            self.s = nn.Parameter(
                x.detach().abs().mean(dim=list(range(1, x.dim())), keepdim=True) * 2
                / (self.thd_pos ** 0.5))
        else:
            self.s = nn.Parameter(x.detach().abs().mean() * 2 / (self.thd_pos ** 0.5))

    def forward(self, x):
        if self.per_channel:
            s_grad_scale = 1.0 / ((self.thd_pos * x.numel()) ** 0.5)
        else:
            s_grad_scale = 1.0 / ((self.thd_pos * x.numel()) ** 0.5)
        s_scale = grad_scale(self.s, s_grad_scale)
        x = x / s_scale
        x = torch.clamp(x, self.thd_neg, self.thd_pos)
        x = round_pass(x)
        x = x * s_scale
        return x

    def extra_repr(self):
        return f"thd_neg={self.thd_neg}, thd_pos={self.thd_pos}, per_channel={self.per_channel}"


class MovingAverageFakeQuant(nn.Module):
    """torch.ao.quantization.FakeQuantize(MovingAverageMinMaxObserver, quint8) in torch ops."""

    def __init__(self, averaging_constant=0.01, quant_min=0, quant_max=255):
        super().__init__()
        self.averaging_constant = averaging_constant
        self.quant_min = quant_min
        self.quant_max = quant_max
        self.register_buffer("min_val", torch.tensor(float("inf")))
        self.register_buffer("max_val", torch.tensor(float("-inf")))
        self.register_buffer("scale", torch.tensor([1.0], dtype=torch.float))
        self.register_buffer("zero_point", torch.tensor([0], dtype=torch.int))
        self.register_buffer("fake_quant_enabled", torch.tensor([1], dtype=torch.uint8))
        self.register_buffer("observer_enabled", torch.tensor([1], dtype=torch.uint8))
        self.eps = torch.finfo(torch.float32).eps

    def observe(self, x_orig):
        x = x_orig.detach()
        min_val, max_val = self.min_val, self.max_val
        if min_val == float("inf") and max_val == float("-inf"):
            min_val, max_val = torch.aminmax(x)
        else:
            min_val_cur, max_val_cur = torch.aminmax(x)
            min_val = min_val + self.averaging_constant * (min_val_cur - min_val)
            max_val = max_val + self.averaging_constant * (max_val_cur - max_val)
        self.min_val.copy_(min_val)
        self.max_val.copy_(max_val)

    def calculate_qparams(self):
        min_val_neg = torch.min(self.min_val, torch.zeros_like(self.min_val))
        max_val_pos = torch.max(self.max_val, torch.zeros_like(self.max_val))
        scale = (max_val_pos - min_val_neg) / float(self.quant_max - self.quant_min)
        scale = torch.max(scale, torch.tensor(self.eps))
        zero_point = self.quant_min - torch.round(min_val_neg / scale).to(torch.int)
        zero_point = torch.clamp(zero_point, self.quant_min, self.quant_max)
        return scale.reshape(1), zero_point.reshape(1)

    def forward(self, X):
        if self.observer_enabled[0] == 1:
            self.observe(X)
            _scale, _zero_point = self.calculate_qparams()
            if self.scale.shape != _scale.shape:
                self.scale.resize_(_scale.shape)
                self.zero_point.resize_(_zero_point.shape)
            self.scale.copy_(_scale)
            self.zero_point.copy_(_zero_point)
        if self.fake_quant_enabled[0] == 1:
            q = torch.clamp(round_pass(X / self.scale) + self.zero_point, self.quant_min,
                            self.quant_max)
            X = (q - self.zero_point) * self.scale
        return X

    def extra_repr(self):
        return (f"fake_quant_enabled={self.fake_quant_enabled}, observer_enabled={self.observer_enabled}, "  # noqa: E501
                f"quant_min={self.quant_min}, quant_max={self.quant_max}, scale={self.scale}, "
                f"zero_point={self.zero_point}")


class QuanConv2d(nn.Conv2d):
    def __init__(self, m, quan_w_fn=None, quan_a_fn=None):
        assert type(m) is nn.Conv2d
        super().__init__(m.in_channels, m.out_channels, m.kernel_size, stride=m.stride,
                         padding=m.padding, dilation=m.dilation, groups=m.groups,
                         bias=True if m.bias is not None else False,
                         padding_mode=m.padding_mode)
        self.quan_w_fn = quan_w_fn
        self.quan_a_fn = quan_a_fn
        self.weight = nn.Parameter(m.weight.detach())
        self.quan_w_fn.init_from(m.weight)
        if m.bias is not None:
            self.bias = nn.Parameter(m.bias.detach())

    def forward(self, x):
        quantized_weight = self.quan_w_fn(self.weight)
        quantized_act = self.quan_a_fn(x)
        return self._conv_forward(quantized_act, quantized_weight, self.bias)


class QuanLinear(nn.Linear):
    def __init__(self, m, quan_w_fn=None, quan_a_fn=None):
        assert type(m) is nn.Linear
        super().__init__(m.in_features, m.out_features, bias=True if m.bias is not None else False)
        self.quan_w_fn = quan_w_fn
        self.quan_a_fn = quan_a_fn
        self.weight = nn.Parameter(m.weight.detach())
        self.quan_w_fn.init_from(m.weight)
        if m.bias is not None:
            self.bias = nn.Parameter(m.bias.detach())

    def forward(self, x):
        return F.linear(self.quan_a_fn(x), self.quan_w_fn(self.weight), self.bias)


QuanModuleMapping = {nn.Conv2d: QuanConv2d, nn.Linear: QuanLinear}


def find_modules_to_quantize(model, bits=4):
    replaced_modules = dict()
    for name, module in model.named_modules():
        if type(module) in QuanModuleMapping.keys():
            if name == "fc":
                continue
            replaced_modules[name] = QuanModuleMapping[type(module)](
                module, quan_w_fn=LsqQuan(bits, symmetric=True),
                quan_a_fn=MovingAverageFakeQuant())
    return replaced_modules


def replace_module_by_names(model, modules_to_replace):
    def helper(child):
        for n, c in child.named_children():
            if type(c) in QuanModuleMapping.keys():
                for full_name, m in model.named_modules():
                    if c is m:
                        if full_name in modules_to_replace:
                            child.add_module(n, modules_to_replace.pop(full_name))
                        break
            else:
                helper(c)

    helper(model)
    return model


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4),
                                      nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(4, 8, 3, padding=1), nn.ReLU())
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.hidden = nn.Linear(8, 8)
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        x = self.pool(self.features(x)).flatten(1)
        return self.fc(F.relu(self.hidden(x)))


torch.manual_seed(0)
x = torch.randn(6, 1, 8, 8)
y = torch.tensor([0, 1, 2, 0, 1, 2])
net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.05)
for _ in range(2):
    loss = F.cross_entropy(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
net.eval()
fused = nn.utils.fusion.fuse_conv_bn_eval(net.features[0], net.features[1])
print("fused", fused, torch.allclose(fused(x), net.features[1](net.features[0](x)), atol=1e-5))
net.features[0] = fused
net.features[1] = nn.Identity()
net.train()

t = torch.linspace(-1, 1, 7, requires_grad=True)
rp = round_pass(t * 3)
rp.sum().backward()
print("round_pass", rp, t.grad)
s = torch.tensor(2.0, requires_grad=True)
gs = grad_scale(s, 0.1)
gs.backward()
print("grad_scale", gs.item(), s.grad.item())

mods = find_modules_to_quantize(net)
print("to replace", list(mods.keys()))
net = replace_module_by_names(net, mods)
print(net)
print("state_dict", list(net.state_dict().keys()))
print("s shape", net.features[0].quan_w_fn.s.shape, net.hidden.quan_w_fn.s.view(-1)[:3])
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
for step in range(4):
    loss = F.cross_entropy(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    fq = net.features[4].quan_a_fn
    print("qat step", step, round(loss.item(), 5), fq.scale.item(), fq.zero_point.item(),
          round(fq.min_val.item(), 5), round(fq.max_val.item(), 5))
q = net.features[4].quan_w_fn
print("s grad", q.s.grad.view(-1)[:4])
wq = q(net.features[4].weight)
print("levels per channel", [len(torch.unique(wq[c])) <= 7 for c in range(3)],
      (wq / q.s).round().abs().max().item())
fq = MovingAverageFakeQuant()
print(fq)
fq.observer_enabled[0] = 0
print("observer off", fq(torch.tensor([0.5, 1.5])), fq.scale, fq.zero_point.dtype)
try:
    LsqQuan(4, all_positive=True, symmetric=True)
except AssertionError as e:
    print(type(e).__name__, e)
