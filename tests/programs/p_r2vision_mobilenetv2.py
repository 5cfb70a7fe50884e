"""torchvision's MobileNetV2 (_make_divisible, Conv2dNormActivation, InvertedResidual with
depthwise groups conv and ReLU6), shrunk; plus fuse-for-inference of conv+bn."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


def _make_divisible(v, divisor, min_value=None):
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class Conv2dNormActivation(nn.Sequential):
    def __init__(self, in_planes, out_planes, kernel_size=3, stride=1, groups=1,
                 norm_layer=None, activation_layer=None, dilation=1):
        padding = (kernel_size - 1) // 2 * dilation
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        if activation_layer is None:
            activation_layer = nn.ReLU6
        super().__init__(
            nn.Conv2d(in_planes, out_planes, kernel_size, stride, padding, dilation=dilation,
                      groups=groups, bias=False),
            norm_layer(out_planes),
            activation_layer(inplace=True),
        )
        self.out_channels = out_planes


class InvertedResidual(nn.Module):
    def __init__(self, inp, oup, stride, expand_ratio, norm_layer=None):
        super().__init__()
        self.stride = stride
        if stride not in [1, 2]:
            raise ValueError(f"stride should be 1 or 2 instead of {stride}")
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = self.stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(Conv2dNormActivation(inp, hidden_dim, kernel_size=1,
                                               norm_layer=norm_layer))
        layers.extend([
            Conv2dNormActivation(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim,
                                 norm_layer=norm_layer),
            nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),
            norm_layer(oup),
        ])
        self.conv = nn.Sequential(*layers)
        self.out_channels = oup
        self._is_cn = stride > 1

    def forward(self, x):
        if self.use_res_connect:
            return x + self.conv(x)
        else:
            return self.conv(x)


class MobileNetV2(nn.Module):
    def __init__(self, num_classes=10, width_mult=0.25, round_nearest=8, dropout=0.2):
        super().__init__()
        block = InvertedResidual
        norm_layer = nn.BatchNorm2d
        input_channel = 32
        last_channel = 128
        inverted_residual_setting = [
            [1, 16, 1, 1],
            [6, 24, 2, 2],
            [6, 32, 2, 2],
        ]
        input_channel = _make_divisible(input_channel * width_mult, round_nearest)
        self.last_channel = _make_divisible(last_channel * max(1.0, width_mult), round_nearest)
        features = [Conv2dNormActivation(3, input_channel, stride=2, norm_layer=norm_layer)]
        for t, c, n, s in inverted_residual_setting:
            output_channel = _make_divisible(c * width_mult, round_nearest)
            for i in range(n):
                stride = s if i == 0 else 1
                features.append(block(input_channel, output_channel, stride, expand_ratio=t,
                                      norm_layer=norm_layer))
                input_channel = output_channel
        features.append(Conv2dNormActivation(input_channel, self.last_channel, kernel_size=1,
                                             norm_layer=norm_layer))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout),
            nn.Linear(self.last_channel, num_classes),
        )
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)

    def _forward_impl(self, x):
        x = self.features(x)
        x = nn.functional.adaptive_avg_pool2d(x, (1, 1))
        x = torch.flatten(x, 1)
        x = self.classifier(x)
        return x

    def forward(self, x):
        return self._forward_impl(x)


print([_make_divisible(v, 8) for v in (3, 12, 16 * 0.35, 32 * 0.75, 100, 1280 * 1.4)])
torch.manual_seed(0)
model = MobileNetV2()
print(model.features[:3])
print(model.features[2].conv[1][0])
dw = model.features[2].conv[1][0]
print(dw.groups, dw.weight.shape, dw.in_channels, dw.out_channels, dw.padding, dw.stride)
print(sum(p.numel() for p in model.parameters()))
try:
    InvertedResidual(8, 8, 3, 6)
except ValueError as e:
    print(type(e).__name__, e)

x = torch.randn(2, 3, 32, 32)
y = torch.tensor([3, 7])
out = model(x)
print(out.shape, out.grad_fn.__class__.__name__)
act = nn.ReLU6()
print(act, act(torch.linspace(-2, 8, 6)))
print(F.relu6(torch.tensor([-1.0, 3.0, 6.5])), F.hardtanh(torch.tensor([-1.5, 0.5]), 0.0, 6.0))
h = torch.tensor([-1.0, 3.0, 6.5], requires_grad=True)
F.relu6(h).sum().backward()
print(h.grad, F.relu6(h).grad_fn)

optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3, alpha=0.9, eps=0.0316,
                                momentum=0.9, weight_decay=4e-5)
criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
for step in range(5):
    torch.manual_seed(100 + step)
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.4f}")
g = model.features[2].conv[1][0].weight.grad
print(g.shape, f"{g.abs().sum().item():.4f}")

# fuse conv + bn for inference (torch.nn.utils.fusion)
model.eval()
cbr = model.features[0]
fused = torch.nn.utils.fusion.fuse_conv_bn_eval(cbr[0], cbr[1])
print(fused)
with torch.no_grad():
    ref = cbr[1](cbr[0](x))
    got = fused(x)
print(f"fused max diff small: {(ref - got).abs().max().item() < 1e-4}")
print(fused.bias is not None, fused.weight.requires_grad)
with torch.no_grad():
    print(model(x).softmax(dim=1)[:, :4])
print("RESULT:", round(loss.item(), 4))
