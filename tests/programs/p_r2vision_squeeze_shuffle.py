"""torchvision's SqueezeNet 1.1 (Fire modules, ceil_mode pooling) and ShuffleNetV2
(channel_shuffle via view/transpose, chunk, depthwise branches), shrunk."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
init = nn.init


class Fire(nn.Module):
    def __init__(self, inplanes, squeeze_planes, expand1x1_planes, expand3x3_planes):
        super().__init__()
        self.inplanes = inplanes
        self.squeeze = nn.Conv2d(inplanes, squeeze_planes, kernel_size=1)
        self.squeeze_activation = nn.ReLU(inplace=True)
        self.expand1x1 = nn.Conv2d(squeeze_planes, expand1x1_planes, kernel_size=1)
        self.expand1x1_activation = nn.ReLU(inplace=True)
        self.expand3x3 = nn.Conv2d(squeeze_planes, expand3x3_planes, kernel_size=3, padding=1)
        self.expand3x3_activation = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.squeeze_activation(self.squeeze(x))
        return torch.cat(
            [self.expand1x1_activation(self.expand1x1(x)),
             self.expand3x3_activation(self.expand3x3(x))], 1)


class SqueezeNet(nn.Module):
    def __init__(self, num_classes=6, dropout=0.5):
        super().__init__()
        self.num_classes = num_classes
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, kernel_size=3, stride=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
            Fire(16, 4, 8, 8),
            Fire(16, 4, 8, 8),
            nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
            Fire(16, 8, 16, 16),
        )
        final_conv = nn.Conv2d(32, self.num_classes, kernel_size=1)
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout), final_conv, nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d((1, 1))
        )
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                if m is final_conv:
                    init.normal_(m.weight, mean=0.0, std=0.01)
                else:
                    init.kaiming_uniform_(m.weight)
                if m.bias is not None:
                    init.constant_(m.bias, 0)

    def forward(self, x):
        x = self.features(x)
        x = self.classifier(x)
        return torch.flatten(x, 1)


def channel_shuffle(x, groups):
    batchsize, num_channels, height, width = x.size()
    channels_per_group = num_channels // groups
    x = x.view(batchsize, groups, channels_per_group, height, width)
    x = torch.transpose(x, 1, 2).contiguous()
    x = x.view(batchsize, num_channels, height, width)
    return x


class InvertedResidual(nn.Module):
    def __init__(self, inp, oup, stride):
        super().__init__()
        if not (1 <= stride <= 3):
            raise ValueError("illegal stride value")
        self.stride = stride
        branch_features = oup // 2
        if (self.stride == 1) and (inp != branch_features << 1):
            raise ValueError(
                f"Invalid combination of stride {stride}, inp {inp} and oup {oup} values. "
                f"If stride == 1 then inp should be equal to oup // 2 << 1.")
        if self.stride > 1:
            self.branch1 = nn.Sequential(
                self.depthwise_conv(inp, inp, kernel_size=3, stride=self.stride, padding=1),
                nn.BatchNorm2d(inp),
                nn.Conv2d(inp, branch_features, kernel_size=1, stride=1, padding=0, bias=False),
                nn.BatchNorm2d(branch_features),
                nn.ReLU(inplace=True),
            )
        else:
            self.branch1 = nn.Sequential()
        self.branch2 = nn.Sequential(
            nn.Conv2d(inp if (self.stride > 1) else branch_features, branch_features,
                      kernel_size=1, stride=1, padding=0, bias=False),
            nn.BatchNorm2d(branch_features),
            nn.ReLU(inplace=True),
            self.depthwise_conv(branch_features, branch_features, kernel_size=3,
                                stride=self.stride, padding=1),
            nn.BatchNorm2d(branch_features),
            nn.Conv2d(branch_features, branch_features, kernel_size=1, stride=1, padding=0,
                      bias=False),
            nn.BatchNorm2d(branch_features),
            nn.ReLU(inplace=True),
        )

    @staticmethod
    def depthwise_conv(i, o, kernel_size, stride=1, padding=0, bias=False):
        return nn.Conv2d(i, o, kernel_size, stride, padding, bias=bias, groups=i)

    def forward(self, x):
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = torch.cat((x1, self.branch2(x2)), dim=1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), dim=1)
        out = channel_shuffle(out, 2)
        return out


torch.manual_seed(0)
sq = SqueezeNet()
print(sq)
x = torch.randn(2, 3, 33, 33)
for i, layer in enumerate(sq.features):
    x = layer(x)
    print(i, type(layer).__name__, tuple(x.shape))
torch.manual_seed(1)
img = torch.randn(2, 3, 33, 33)
sq.eval()
print(sq(img))

t = torch.arange(2 * 6 * 1 * 2).view(2, 6, 1, 2)
print(channel_shuffle(t, 3)[0, :, 0, 0])
cs = nn.ChannelShuffle(3)
print(cs, cs(t)[0, :, 0, 0], F.channel_shuffle(t, 2)[1, :, 0, 1])
print(torch.equal(cs(t), channel_shuffle(t, 3)))

try:
    InvertedResidual(8, 12, 1)
except ValueError as e:
    print(type(e).__name__, e)
torch.manual_seed(0)
stage = nn.Sequential(InvertedResidual(8, 16, 2), InvertedResidual(16, 16, 1),
                      InvertedResidual(16, 16, 1))
print(stage[1].branch1, len(stage[0].branch1))
inp = torch.randn(2, 8, 10, 10, requires_grad=True)
out = stage(inp)
print(out.shape, out.is_contiguous(), out.grad_fn.__class__.__name__)
w = torch.randn_like(out)
(out * w).sum().backward()
print(inp.grad.abs().sum(), inp.grad[0, 0, :2, :3])
opt = torch.optim.Adam(list(stage.parameters()) + list(sq.parameters()), lr=1e-3)
sq.train()
for step in range(4):
    torch.manual_seed(step)
    opt.zero_grad()
    loss = F.mse_loss(stage(inp.detach()), w) + F.cross_entropy(sq(img), torch.tensor([1, 5]))
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
print("RESULT:", round(loss.item(), 4))
