"""torchvision.models.regnet (SimpleStemIN, BottleneckTransform with SqueezeExcitation,
ResBottleneckBlock, AnyStage, BlockParams.from_init_params width quantisation) and
torchvision.models.mnasnet (_InvertedResidual, _stack, _round_to_multiple_of, _get_depths, the
versioned _load_from_state_dict reading local_metadata), shrunk to tiny widths and 32x32 input."""
import importlib
import math
import os
from collections import OrderedDict
from functools import partial

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
    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None, groups=1,
                 norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU, dilation=1, inplace=True,
                 bias=None):
        if padding is None:
            padding = (kernel_size - 1) // 2 * dilation
        if bias is None:
            bias = norm_layer is None
        layers = [nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding,
                            dilation=dilation, groups=groups, bias=bias)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            params = {} if inplace is None else {"inplace": inplace}
            layers.append(activation_layer(**params))
        super().__init__(*layers)
        self.out_channels = out_channels


class SqueezeExcitation(nn.Module):
    def __init__(self, input_channels, squeeze_channels, activation=nn.ReLU,
                 scale_activation=nn.Sigmoid):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = activation()
        self.scale_activation = scale_activation()

    def _scale(self, input):
        scale = self.avgpool(input)
        scale = self.fc1(scale)
        scale = self.activation(scale)
        scale = self.fc2(scale)
        return self.scale_activation(scale)

    def forward(self, input):
        scale = self._scale(input)
        return scale * input


class SimpleStemIN(Conv2dNormActivation):
    def __init__(self, width_in, width_out, norm_layer, activation_layer):
        super().__init__(width_in, width_out, kernel_size=3, stride=2, norm_layer=norm_layer,
                         activation_layer=activation_layer)


class BottleneckTransform(nn.Sequential):
    def __init__(self, width_in, width_out, stride, norm_layer, activation_layer, group_width,
                 bottleneck_multiplier, se_ratio):
        layers = OrderedDict()
        w_b = int(round(width_out * bottleneck_multiplier))
        g = w_b // group_width
        layers["a"] = Conv2dNormActivation(width_in, w_b, kernel_size=1, stride=1,
                                           norm_layer=norm_layer, activation_layer=activation_layer)
        layers["b"] = Conv2dNormActivation(w_b, w_b, kernel_size=3, stride=stride, groups=g,
                                           norm_layer=norm_layer, activation_layer=activation_layer)
        if se_ratio:
            width_se_out = int(round(se_ratio * width_in))
            layers["se"] = SqueezeExcitation(input_channels=w_b, squeeze_channels=width_se_out,
                                             activation=activation_layer)
        layers["c"] = Conv2dNormActivation(w_b, width_out, kernel_size=1, stride=1,
                                           norm_layer=norm_layer, activation_layer=None)
        super().__init__(layers)


class ResBottleneckBlock(nn.Module):
    def __init__(self, width_in, width_out, stride, norm_layer, activation_layer, group_width=1,
                 bottleneck_multiplier=1.0, se_ratio=None):
        super().__init__()
        self.proj = None
        should_proj = (width_in != width_out) or (stride != 1)
        if should_proj:
            self.proj = Conv2dNormActivation(width_in, width_out, kernel_size=1, stride=stride,
                                             norm_layer=norm_layer, activation_layer=None)
        self.f = BottleneckTransform(width_in, width_out, stride, norm_layer, activation_layer,
                                     group_width, bottleneck_multiplier, se_ratio)
        self.activation = activation_layer(inplace=True)

    def forward(self, x):
        if self.proj is not None:
            x = self.proj(x) + self.f(x)
        else:
            x = x + self.f(x)
        return self.activation(x)


class AnyStage(nn.Sequential):
    def __init__(self, width_in, width_out, stride, depth, block_constructor, norm_layer,
                 activation_layer, group_width, bottleneck_multiplier, se_ratio=None,
                 stage_index=0):
        super().__init__()
        for i in range(depth):
            block = block_constructor(width_in if i == 0 else width_out, width_out,
                                      stride if i == 0 else 1, norm_layer, activation_layer,
                                      group_width, bottleneck_multiplier, se_ratio)
            self.add_module(f"block{stage_index}-{i}", block)


class BlockParams:
    def __init__(self, depths, widths, group_widths, bottleneck_multipliers, strides,
                 se_ratio=None):
        self.depths = depths
        self.widths = widths
        self.group_widths = group_widths
        self.bottleneck_multipliers = bottleneck_multipliers
        self.strides = strides
        self.se_ratio = se_ratio

    @classmethod
    def from_init_params(cls, depth, w_0, w_a, w_m, group_width, bottleneck_multiplier=1.0,
                         se_ratio=None):
        QUANT = 8
        STRIDE = 2
        if w_a < 0 or w_0 <= 0 or w_m <= 1 or w_0 % 8 != 0:
            raise ValueError("Invalid RegNet settings")
        widths_cont = torch.arange(depth) * w_a + w_0
        block_capacity = torch.round(torch.log(widths_cont / w_0) / math.log(w_m))
        block_widths = (torch.round(torch.divide(w_0 * torch.pow(w_m, block_capacity), QUANT))
                        * QUANT).int().tolist()
        num_stages = len(set(block_widths))
        split_helper = zip(block_widths + [0], [0] + block_widths, block_widths + [0],
                           [0] + block_widths)
        splits = [w != wp or r != rp for w, wp, r, rp in split_helper]
        stage_widths = [w for w, t in zip(block_widths, splits[:-1]) if t]
        stage_depths = torch.diff(torch.tensor([d for d, t in enumerate(splits) if t])).int().tolist()  # noqa: E501
        strides = [STRIDE] * num_stages
        bottleneck_multipliers = [bottleneck_multiplier] * num_stages
        group_widths = [group_width] * num_stages
        stage_widths, group_widths = cls._adjust_widths_groups_compatibilty(
            stage_widths, bottleneck_multipliers, group_widths)
        return cls(stage_depths, stage_widths, group_widths, bottleneck_multipliers, strides,
                   se_ratio)

    def _get_expanded_params(self):
        return zip(self.widths, self.strides, self.depths, self.group_widths,
                   self.bottleneck_multipliers)

    @staticmethod
    def _adjust_widths_groups_compatibilty(stage_widths, bottleneck_ratios, group_widths):
        widths = [int(w * b) for w, b in zip(stage_widths, bottleneck_ratios)]
        group_widths_min = [min(g, w_bot) for g, w_bot in zip(group_widths, widths)]
        ws_bot = [_make_divisible(w_bot, g) for w_bot, g in zip(widths, group_widths_min)]
        stage_widths = [int(w_bot / b) for w_bot, b in zip(ws_bot, bottleneck_ratios)]
        return stage_widths, group_widths_min


class RegNet(nn.Module):
    def __init__(self, block_params, num_classes=10, stem_width=8, norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        activation = nn.ReLU
        self.stem = SimpleStemIN(3, stem_width, norm_layer, activation)
        current_width = stem_width
        blocks = []
        for i, (width_out, stride, depth, group_width, bottleneck_multiplier) in enumerate(
                block_params._get_expanded_params()):
            blocks.append((f"block{i+1}", AnyStage(current_width, width_out, stride, depth,
                                                    ResBottleneckBlock, norm_layer, activation,
                                                    group_width, bottleneck_multiplier,
                                                    block_params.se_ratio, stage_index=i + 1)))
            current_width = width_out
        self.trunk_output = nn.Sequential(OrderedDict(blocks))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(in_features=current_width, out_features=num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                nn.init.normal_(m.weight, mean=0.0, std=math.sqrt(2.0 / fan_out))
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, mean=0.0, std=0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.stem(x)
        x = self.trunk_output(x)
        x = self.avgpool(x)
        x = x.flatten(start_dim=1)
        return self.fc(x)


_BN_MOMENTUM = 1 - 0.9997


class _InvertedResidual(nn.Module):
    def __init__(self, in_ch, out_ch, kernel_size, stride, expansion_factor, bn_momentum=0.1):
        super().__init__()
        if stride not in [1, 2]:
            raise ValueError(f"stride should be 1 or 2 instead of {stride}")
        if kernel_size not in [3, 5]:
            raise ValueError(f"kernel_size should be 3 or 5 instead of {kernel_size}")
        mid_ch = in_ch * expansion_factor
        self.apply_residual = in_ch == out_ch and stride == 1
        self.layers = nn.Sequential(
            nn.Conv2d(in_ch, mid_ch, 1, bias=False),
            nn.BatchNorm2d(mid_ch, momentum=bn_momentum),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_ch, mid_ch, kernel_size, padding=kernel_size // 2, stride=stride,
                      groups=mid_ch, bias=False),
            nn.BatchNorm2d(mid_ch, momentum=bn_momentum),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_ch, out_ch, 1, bias=False),
            nn.BatchNorm2d(out_ch, momentum=bn_momentum),
        )

    def forward(self, input):
        if self.apply_residual:
            return self.layers(input) + input
        else:
            return self.layers(input)


def _stack(in_ch, out_ch, kernel_size, stride, exp_factor, repeats, bn_momentum):
    if repeats < 1:
        raise ValueError(f"repeats should be >= 1, instead got {repeats}")
    first = _InvertedResidual(in_ch, out_ch, kernel_size, stride, exp_factor,
                              bn_momentum=bn_momentum)
    remaining = []
    for _ in range(1, repeats):
        remaining.append(_InvertedResidual(out_ch, out_ch, kernel_size, 1, exp_factor,
                                           bn_momentum=bn_momentum))
    return nn.Sequential(first, *remaining)


def _round_to_multiple_of(val, divisor, round_up_bias=0.9):
    if not 0.0 < round_up_bias < 1.0:
        raise ValueError(f"round_up_bias should be greater than 0.0 and smaller than 1.0 instead of {round_up_bias}")  # noqa: E501
    new_val = max(divisor, int(val + divisor / 2) // divisor * divisor)
    return new_val if new_val >= round_up_bias * val else new_val + divisor


def _get_depths(alpha):
    depths = [32, 16, 24, 40, 80, 96, 192, 320]
    return [_round_to_multiple_of(depth * alpha, 8) for depth in depths]


class MNASNet(nn.Module):
    _version = 2

    def __init__(self, alpha, num_classes=10, dropout=0.2, last=64):
        super().__init__()
        self.alpha = alpha
        self.num_classes = num_classes
        self.dropout = dropout
        depths = _get_depths(alpha)
        layers = [
            nn.Conv2d(3, depths[0], 3, padding=1, stride=2, bias=False),
            nn.BatchNorm2d(depths[0], momentum=_BN_MOMENTUM),
            nn.ReLU(inplace=True),
            nn.Conv2d(depths[0], depths[0], 3, padding=1, stride=1, groups=depths[0], bias=False),
            nn.BatchNorm2d(depths[0], momentum=_BN_MOMENTUM),
            nn.ReLU(inplace=True),
            nn.Conv2d(depths[0], depths[1], 1, padding=0, stride=1, bias=False),
            nn.BatchNorm2d(depths[1], momentum=_BN_MOMENTUM),
            _stack(depths[1], depths[2], 3, 2, 3, 3, _BN_MOMENTUM),
            _stack(depths[2], depths[3], 5, 2, 3, 2, _BN_MOMENTUM),
            _stack(depths[3], depths[4], 5, 2, 6, 1, _BN_MOMENTUM),
            nn.Conv2d(depths[4], last, 1, padding=0, stride=1, bias=False),
            nn.BatchNorm2d(last, momentum=_BN_MOMENTUM),
            nn.ReLU(inplace=True),
        ]
        self.layers = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True),
                                        nn.Linear(last, num_classes))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.kaiming_uniform_(m.weight, mode="fan_out", nonlinearity="sigmoid")
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.layers(x)
        x = x.mean([2, 3])
        return self.classifier(x)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        version = local_metadata.get("version", None)
        print("MNASNet._load_from_state_dict prefix=%r version=%r" % (prefix, version))
        if version not in [1, 2]:
            raise ValueError(f"version shluld be set to 1 or 2 instead of {version}")
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


torch.manual_seed(0)
params = BlockParams.from_init_params(depth=6, w_0=8, w_a=6.0, w_m=2.0, group_width=4,
                                      se_ratio=0.25)
print("regnet depths", params.depths, "widths", params.widths, "groups", params.group_widths)
try:
    BlockParams.from_init_params(depth=4, w_0=12, w_a=1.0, w_m=2.0, group_width=4)
except ValueError as e:
    print(type(e).__name__, e)
model = RegNet(params, norm_layer=partial(nn.BatchNorm2d, eps=1e-05, momentum=0.1))
print(model.trunk_output.block1)
names = [n for n, _ in model.named_modules()]
print(len(names), names[:6], names[-3:])
print("params", sum(p.numel() for p in model.parameters()))
print(list(model.state_dict().keys())[:8])
x = torch.randn(4, 3, 32, 32)
y = torch.tensor([1, 3, 5, 7])
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-5, nesterov=True)
for step in range(3):
    out = model(x)
    loss = F.cross_entropy(out, y, label_smoothing=0.1)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("regnet step", step, round(loss.item(), 5), out.shape)
se = model.trunk_output.block1[0].f.se
print("se grad", se.fc1.weight.grad.abs().sum().item(), se.fc2.bias.grad.norm().item())
print("bn running", model.stem[1].running_mean[:4], model.stem[1].num_batches_tracked)
model.eval()
with torch.no_grad():
    print("eval logits", model(x[:2])[:, :4])

print([_round_to_multiple_of(v, 8) for v in (3.5, 12.0, 30.0, 77.0)], _get_depths(0.25))
try:
    _round_to_multiple_of(10, 8, round_up_bias=1.5)
except ValueError as e:
    print(type(e).__name__, e)
try:
    _InvertedResidual(8, 8, 7, 1, 3)
except ValueError as e:
    print(type(e).__name__, e)
torch.manual_seed(1)
mnas = MNASNet(0.25)
print(mnas.layers[8])
out = mnas(x)
print("mnas out", out.shape, out[0, :5])
loss = F.cross_entropy(out, y)
loss.backward()
print("mnas loss", loss.item(), mnas.classifier[1].weight.grad.norm().item())
print("bn momentum", mnas.layers[1].momentum, mnas.layers[1].running_var[:3])
sd = mnas.state_dict()
print("metadata", sd._metadata[""], sd._metadata["layers.8.0"], len(sd._metadata))
mnas2 = MNASNet(0.25)
print(mnas2.load_state_dict(sd))
del sd._metadata[""]["version"]
try:
    mnas2.load_state_dict(sd)
except ValueError as e:
    print(type(e).__name__, e)
mnas2.eval()
mnas.eval()
print("same", torch.equal(mnas2(x), mnas(x)))
