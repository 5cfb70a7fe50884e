"""PyTorch's "Channels Last Memory Format" tutorial (tutorials/intermediate/memory_format_tutorial.py),
shrunk: NCHW vs NHWC strides, to(memory_format=...), contiguous(memory_format=...), is_contiguous for both
formats, the ambiguous 1x1 / C=1 cases, operators that keep the format (conv, bn, relu, pooling, upsampling,
pad, elementwise), a torchvision-ResNet-style model converted with model.to(memory_format=torch.channels_last)
trained a few steps with forward hooks checking every output's format, and the tutorial's
``contains_cl``/``print_inputs`` checker idea; plus channels_last_3d."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(0)
N, C, H, W = 2, 3, 6, 5
x = torch.empty(N, C, H, W)
print(x.stride())
x = x.to(memory_format=torch.channels_last)
print(x.shape, x.stride())
x = x.contiguous()  # (the tutorial: x.to(memory_format=torch.contiguous_format))
print(x.stride())
x = x.contiguous(memory_format=torch.channels_last)
print(x.stride(), x.is_contiguous(memory_format=torch.channels_last), x.is_contiguous())
x = torch.empty(N, H, W, C).permute(0, 3, 1, 2)
print(x.stride(), x.is_contiguous(memory_format=torch.channels_last))
x = torch.empty(N, C, H, W).to(memory_format=torch.channels_last)
print(x.stride())
special_x = torch.empty(4, 1, 4, 4)
print(special_x.is_contiguous(memory_format=torch.channels_last), special_x.is_contiguous())
special_x = torch.empty(4, 3, 1, 1)
print(special_x.is_contiguous(memory_format=torch.channels_last), special_x.is_contiguous())
x3 = torch.randn(2, 3, 4, 5, 6).to(memory_format=torch.channels_last_3d)
print(x3.stride(), x3.is_contiguous(memory_format=torch.channels_last_3d))
try:
    torch.randn(2, 3, 4).to(memory_format=torch.channels_last)
except Exception as e:
    print(type(e).__name__, e)
try:
    torch.randn(2, 3, 4).contiguous(memory_format=torch.channels_last)
except Exception as e:
    print(type(e).__name__, e)

xin = torch.randn(N, C, H, W).to(memory_format=torch.channels_last)
conv = nn.Conv2d(C, 8, 3, padding=1)
out = conv(xin)
print("conv", out.stride(), out.is_contiguous(memory_format=torch.channels_last))
ops = [("bn", nn.BatchNorm2d(8)), ("relu", nn.ReLU()), ("gelu", nn.GELU()), ("silu", nn.SiLU()),
       ("hardswish", nn.Hardswish()), ("maxpool", nn.MaxPool2d(2, ceil_mode=True)),
       ("avgpool", nn.AvgPool2d(3, 1, 1)), ("adapt", nn.AdaptiveAvgPool2d(2)),
       ("up_nearest", nn.Upsample(scale_factor=2)),
       ("up_bilinear", nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)),
       ("pad", nn.ZeroPad2d(1)), ("dwconv", nn.Conv2d(8, 8, 3, groups=8, padding=1)),
       ("convT", nn.ConvTranspose2d(8, 4, 2, stride=2)), ("gn", nn.GroupNorm(2, 8)),
       ("dropout_eval", nn.Dropout(0.5).eval()), ("softmax", nn.Softmax(dim=1)),
       ("logsoftmax", nn.LogSoftmax(dim=1)), ("sigmoid", nn.Sigmoid())]
for name, m in ops:
    y = m(out)
    print(name, tuple(y.shape), y.stride(), y.is_contiguous(memory_format=torch.channels_last),
          "%.4f" % y.abs().mean().item())
y = out * 2 + out.mean(dim=(2, 3), keepdim=True)
print("elementwise", y.stride())
y = F.gelu(out, approximate="tanh")
print("gelu tanh", y.stride())
y = torch.cat([out, out], dim=1)
print("cat", y.stride())
y = out.flatten(1)
print("flatten", y.shape, y.stride())


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class TinyResNet(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 5, 2, 2, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = BasicBlock(8, 8)
        ds = nn.Sequential(nn.Conv2d(8, 16, 1, 2, bias=False), nn.BatchNorm2d(16))
        self.layer2 = BasicBlock(8, 16, 2, ds)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer2(self.layer1(x))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


model = TinyResNet()
model = model.to(memory_format=torch.channels_last)
print("conv1.weight", model.conv1.weight.stride(), model.fc.weight.stride())
formats = {}


def hook(mod, inp, outp):
    if outp.dim() == 4:
        formats[mod.__class__.__name__ + str(tuple(outp.shape))] = (
            outp.stride(), outp.is_contiguous(memory_format=torch.channels_last))


for m in model.modules():
    if not isinstance(m, (nn.Sequential, TinyResNet)):
        m.register_forward_hook(hook)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
data = torch.randn(4, 3, 16, 16)
target = torch.tensor([0, 1, 2, 3])
for step in range(3):
    inp = data.to(memory_format=torch.channels_last)
    opt.zero_grad()
    loss = F.cross_entropy(model(inp), target)
    loss.backward()
    opt.step()
    print(step, "%.5f" % loss.item())
for k in sorted(formats):
    print(k, formats[k])
print("grad strides", model.conv1.weight.grad.stride(), model.layer2.conv1.weight.grad.stride())
print("weight strides after step", model.conv1.weight.stride(),
      model.conv1.weight.is_contiguous(memory_format=torch.channels_last))
xi = data.to(memory_format=torch.channels_last).requires_grad_()
model.eval()
model(xi).sum().backward()
print("input grad", xi.grad.stride(), "%.5f" % xi.grad.abs().sum().item())

conv3 = nn.Conv3d(3, 4, 3, padding=1).to(memory_format=torch.channels_last_3d)
y3 = conv3(x3)
print("conv3d", y3.stride(), y3.is_contiguous(memory_format=torch.channels_last_3d))
y3 = F.max_pool3d(y3, 2)
print("maxpool3d", y3.stride())
