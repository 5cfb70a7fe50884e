"""torchvision's GoogLeNet/Inception pieces (BasicConv2d with eps=0.001, Inception branches,
ceil_mode pooling, transform_input, namedtuple outputs with aux logits), AlexNet's
LocalResponseNorm, torchvision.ops.FrozenBatchNorm2d (_load_from_state_dict), lazy layers,
BatchNorm momentum=None, and the error messages that misuse of these layers gives."""
import importlib
import os
import warnings
from collections import namedtuple

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

GoogLeNetOutputs = namedtuple("GoogLeNetOutputs", ["logits", "aux_logits2", "aux_logits1"])


class BasicConv2d(nn.Module):
    def __init__(self, in_channels, out_channels, **kwargs):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, bias=False, **kwargs)
        self.bn = nn.BatchNorm2d(out_channels, eps=0.001)

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        return F.relu(x, inplace=True)


class Inception(nn.Module):
    def __init__(self, in_channels, ch1x1, ch3x3red, ch3x3, ch5x5red, ch5x5, pool_proj):
        super().__init__()
        self.branch1 = BasicConv2d(in_channels, ch1x1, kernel_size=1)
        self.branch2 = nn.Sequential(BasicConv2d(in_channels, ch3x3red, kernel_size=1),
                                     BasicConv2d(ch3x3red, ch3x3, kernel_size=3, padding=1))
        self.branch3 = nn.Sequential(BasicConv2d(in_channels, ch5x5red, kernel_size=1),
                                     BasicConv2d(ch5x5red, ch5x5, kernel_size=3, padding=1))
        self.branch4 = nn.Sequential(
            nn.MaxPool2d(kernel_size=3, stride=1, padding=1, ceil_mode=True),
            BasicConv2d(in_channels, pool_proj, kernel_size=1))

    def _forward(self, x):
        return [self.branch1(x), self.branch2(x), self.branch3(x), self.branch4(x)]

    def forward(self, x):
        outputs = self._forward(x)
        return torch.cat(outputs, 1)


class InceptionAux(nn.Module):
    def __init__(self, in_channels, num_classes, dropout=0.7):
        super().__init__()
        self.conv = BasicConv2d(in_channels, 8, kernel_size=1)
        self.fc1 = nn.Linear(8 * 2 * 2, 16)
        self.fc2 = nn.Linear(16, num_classes)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, x):
        x = F.adaptive_avg_pool2d(x, (2, 2))
        x = self.conv(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x), inplace=True)
        x = self.dropout(x)
        x = self.fc2(x)
        return x


class TinyGoogLeNet(nn.Module):
    def __init__(self, num_classes=4, aux_logits=True, transform_input=True):
        super().__init__()
        self.aux_logits = aux_logits
        self.transform_input = transform_input
        self.conv1 = BasicConv2d(3, 8, kernel_size=7, stride=2, padding=3)
        self.maxpool1 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.lrn = nn.LocalResponseNorm(size=5, alpha=0.0001, beta=0.75, k=2.0)
        self.inception3a = Inception(8, 4, 4, 8, 2, 4, 4)
        self.inception3b = Inception(20, 8, 4, 8, 2, 4, 4)
        self.aux1 = InceptionAux(20, num_classes) if aux_logits else None
        self.aux2 = InceptionAux(24, num_classes) if aux_logits else None
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.Dropout(p=0.2)
        self.fc = nn.Linear(24, num_classes)
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.trunc_normal_(m.weight, mean=0.0, std=0.01, a=-2, b=2)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def _transform_input(self, x):
        if self.transform_input:
            x_ch0 = torch.unsqueeze(x[:, 0], 1) * (0.229 / 0.5) + (0.485 - 0.5) / 0.5
            x_ch1 = torch.unsqueeze(x[:, 1], 1) * (0.224 / 0.5) + (0.456 - 0.5) / 0.5
            x_ch2 = torch.unsqueeze(x[:, 2], 1) * (0.225 / 0.5) + (0.406 - 0.5) / 0.5
            x = torch.cat((x_ch0, x_ch1, x_ch2), 1)
        return x

    def forward(self, x):
        x = self._transform_input(x)
        x = self.maxpool1(self.conv1(x))
        x = self.lrn(x)
        x = self.inception3a(x)
        aux1 = self.aux1(x) if self.aux1 is not None and self.training else None
        x = self.inception3b(x)
        aux2 = self.aux2(x) if self.aux2 is not None and self.training else None
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        x = self.dropout(x)
        x = self.fc(x)
        if self.training and self.aux_logits:
            return GoogLeNetOutputs(x, aux2, aux1)
        return x


class FrozenBatchNorm2d(nn.Module):
    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.register_buffer("weight", torch.ones(num_features))
        self.register_buffer("bias", torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        num_batches_tracked_key = prefix + "num_batches_tracked"
        if num_batches_tracked_key in state_dict:
            del state_dict[num_batches_tracked_key]
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def forward(self, x):
        w = self.weight.reshape(1, -1, 1, 1)
        b = self.bias.reshape(1, -1, 1, 1)
        rv = self.running_var.reshape(1, -1, 1, 1)
        rm = self.running_mean.reshape(1, -1, 1, 1)
        scale = w * (rv + self.eps).rsqrt()
        bias = b - rm * scale
        return x * scale + bias

    def __repr__(self):
        return f"{self.__class__.__name__}({self.weight.shape[0]}, eps={self.eps})"


torch.manual_seed(0)
model = TinyGoogLeNet()
print(model.inception3a)
print(model.lrn, model.maxpool1)
x = torch.rand(2, 3, 20, 20)
out = model(x)
print(type(out).__name__, out._fields, [tuple(o.shape) for o in out])
print(out.logits)
loss = F.cross_entropy(out.logits, torch.tensor([0, 3]))
loss = loss + 0.3 * F.cross_entropy(out.aux_logits1, torch.tensor([0, 3]))
loss = loss + 0.3 * F.cross_entropy(out.aux_logits2, torch.tensor([0, 3]))
loss.backward()
print(f"loss {loss.item():.5f}", model.conv1.conv.weight.grad.abs().sum())
model.eval()
print(model(x))
print(model.conv1.bn.running_mean)

bn = model.inception3a.branch1.bn
frozen = FrozenBatchNorm2d(4, eps=0.001)
print(frozen, sorted(bn.state_dict().keys()))
frozen.load_state_dict(bn.state_dict())
feat = torch.randn(2, 4, 3, 3)
print(torch.allclose(frozen(feat), bn(feat), atol=1e-6), list(frozen.parameters()))
res = frozen.load_state_dict({"weight": torch.ones(4), "bias": torch.zeros(4)}, strict=False)
print(res)
print(res.missing_keys, res.unexpected_keys)

lrn = nn.LocalResponseNorm(3)
z = torch.randn(1, 6, 2, 2, requires_grad=True)
lz = lrn(z)
print(lz[0, :, 0, 0], lz.grad_fn.__class__.__name__)
lz.sum().backward()
print(z.grad[0, :, 0, 0])
print(F.local_response_norm(torch.randn(2, 5, 4), 2)[0, :, 0])

print(F.avg_pool2d(torch.ones(1, 1, 5, 5), 3, stride=2, padding=1, ceil_mode=True,
                   count_include_pad=True)[0, 0])
print(F.avg_pool2d(torch.ones(1, 1, 5, 5), 3, stride=2, padding=1, ceil_mode=True,
                   count_include_pad=False, divisor_override=None)[0, 0])
print(F.avg_pool2d(torch.arange(25.0).view(1, 1, 5, 5), 2, divisor_override=3)[0, 0])
print(F.max_pool2d(torch.arange(36.0).view(1, 1, 6, 6), 3, 2, 1, dilation=2)[0, 0])
print(nn.LPPool2d(2, 2)(torch.arange(16.0).view(1, 1, 4, 4))[0, 0])
print(nn.FractionalMaxPool2d(2, output_size=(3, 3), _random_samples=torch.full((1, 1, 2), 0.5))(
    torch.arange(36.0).view(1, 1, 6, 6))[0, 0])

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    lazy = nn.Sequential(nn.LazyConv2d(6, 3), nn.LazyBatchNorm2d(), nn.ReLU(), nn.Flatten(),
                         nn.LazyLinear(2))
print(lazy)
torch.manual_seed(2)
lo = lazy(torch.randn(2, 3, 5, 5))
print(lazy)
print(lo.shape, lazy[0].weight.shape, lazy[4].in_features)

cum = nn.BatchNorm2d(3, momentum=None)
for i in range(3):
    cum(torch.randn(4, 3, 2, 2) + i)
print(cum, cum.running_mean, cum.num_batches_tracked)
nostats = nn.BatchNorm2d(3, affine=False, track_running_stats=False)
print(nostats, nostats.running_mean, list(nostats.state_dict().keys()))
inorm = nn.InstanceNorm2d(3, affine=True, track_running_stats=True)
inorm(torch.randn(2, 3, 4, 4))
print(inorm, inorm.running_mean, inorm.num_batches_tracked)
inorm.eval()
print(inorm(torch.randn(1, 3, 2, 2))[0, 0])
same = nn.Conv2d(3, 4, 3, padding="same", dilation=2, padding_mode="reflect")
print(same, same(torch.randn(1, 3, 7, 7)).shape)
print(nn.Conv1d(2, 4, 4, padding="same")(torch.randn(1, 2, 9)).shape)
print(nn.Conv2d(3, 6, 3, groups=3, padding=1, padding_mode="circular"))

for label, fn in [
    ("bn 2d input", lambda: nn.BatchNorm2d(3)(torch.randn(3, 4))),
    ("bn 1 value", lambda: nn.BatchNorm1d(3)(torch.randn(1, 3))),
    ("conv channels", lambda: nn.Conv2d(3, 4, 3)(torch.randn(1, 5, 8, 8))),
    ("conv small", lambda: nn.Conv2d(3, 4, 5)(torch.randn(1, 3, 3, 3))),
    ("conv bias", lambda: F.conv2d(torch.randn(1, 3, 5, 5), torch.randn(4, 3, 3, 3),
                                   torch.randn(3))),
    ("conv bias 2d", lambda: F.conv2d(torch.randn(1, 3, 5, 5), torch.randn(4, 3, 3, 3),
                                      torch.randn(4, 1))),
    ("convT bias", lambda: nn.ConvTranspose2d(4, 6, 3, groups=2)(torch.randn(1, 4, 3, 3)).shape),
    ("conv weight", lambda: F.conv2d(torch.randn(1, 3, 5, 5), torch.randn(4, 3, 3))),
    ("unpool size", lambda: F.max_unpool2d(*F.max_pool2d(torch.randn(1, 1, 4, 4), 2,
                                                         return_indices=True), 2,
                                           output_size=(1, 9, 9))),
    ("conv groups", lambda: nn.Conv2d(4, 6, 3, groups=4)),
    ("same stride", lambda: nn.Conv2d(4, 6, 3, stride=2, padding="same")),
    ("pool pad", lambda: nn.MaxPool2d(2, padding=2)(torch.randn(1, 1, 6, 6))),
    ("pool out", lambda: F.max_pool2d(torch.randn(1, 1, 2, 2), 3)),
    ("adaptive", lambda: F.adaptive_avg_pool2d(torch.randn(1, 4, 4), (2, 2, 2))),
    ("adaptive 2", lambda: F.adaptive_max_pool2d(torch.randn(1, 1, 4, 4), (2, 2, 2))),
    ("adaptive None", lambda: nn.AdaptiveAvgPool2d((None, 2))(torch.randn(3, 5, 4)).shape),
    ("in dims", lambda: nn.InstanceNorm2d(3)(torch.randn(3, 4))),
    ("lrn dim", lambda: F.local_response_norm(torch.randn(3, 4), 2)),
    ("gn groups", lambda: nn.GroupNorm(3, 4)),
    ("gn no bias", lambda: (nn.GroupNorm(2, 4, bias=False), nn.GroupNorm(2, 4, bias=False).bias)),
    ("gn input", lambda: nn.GroupNorm(2, 4)(torch.randn(2, 6, 3))),
]:
    try:
        fn()
        print(label, "no error")
    except Exception as e:
        print(label, type(e).__name__, e)
print("RESULT:", round(loss.item(), 4))
