"""Xception and AlexNet: tstandley/Xception-PyTorch / Cadene pretrainedmodels' xception.py
(SeparableConv2d as depthwise groups=in_channels + pointwise, entry/middle/exit Blocks with
grow_first / start_with_relu and the in-place residual add, the fan-out normal init) and
torchvision's AlexNet (features, AdaptiveAvgPool2d((6, 6)) on a 1x1 map, dropout classifier) plus
the 2012 Caffe AlexNet's LocalResponseNorm and grouped convolutions; widths divided by 8-16,
small inputs, a few SGD steps, eval outputs and a channels_last forward."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
optim = torch.optim


class SeparableConv2d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=1, stride=1, padding=0,
                 dilation=1, bias=False):
        super(SeparableConv2d, self).__init__()
        self.conv1 = nn.Conv2d(in_channels, in_channels, kernel_size, stride, padding, dilation,
                               groups=in_channels, bias=bias)
        self.pointwise = nn.Conv2d(in_channels, out_channels, 1, 1, 0, 1, 1, bias=bias)

    def forward(self, x):
        x = self.conv1(x)
        x = self.pointwise(x)
        return x


class Block(nn.Module):
    def __init__(self, in_filters, out_filters, reps, strides=1, start_with_relu=True,
                 grow_first=True):
        super(Block, self).__init__()
        if out_filters != in_filters or strides != 1:
            self.skip = nn.Conv2d(in_filters, out_filters, 1, stride=strides, bias=False)
            self.skipbn = nn.BatchNorm2d(out_filters)
        else:
            self.skip = None
        rep = []
        filters = in_filters
        if grow_first:
            rep.append(nn.ReLU(inplace=True))
            rep.append(SeparableConv2d(in_filters, out_filters, 3, stride=1, padding=1,
                                       bias=False))
            rep.append(nn.BatchNorm2d(out_filters))
            filters = out_filters
        for i in range(reps - 1):
            rep.append(nn.ReLU(inplace=True))
            rep.append(SeparableConv2d(filters, filters, 3, stride=1, padding=1, bias=False))
            rep.append(nn.BatchNorm2d(filters))
        if not grow_first:
            rep.append(nn.ReLU(inplace=True))
            rep.append(SeparableConv2d(in_filters, out_filters, 3, stride=1, padding=1,
                                       bias=False))
            rep.append(nn.BatchNorm2d(out_filters))
        if not start_with_relu:
            rep = rep[1:]
        else:
            rep[0] = nn.ReLU(inplace=False)
        if strides != 1:
            rep.append(nn.MaxPool2d(3, strides, 1))
        self.rep = nn.Sequential(*rep)

    def forward(self, inp):
        x = self.rep(inp)
        if self.skip is not None:
            skip = self.skip(inp)
            skip = self.skipbn(skip)
        else:
            skip = inp
        x += skip
        return x


class Xception(nn.Module):
    """Xception shrunk: widths /16, one middle-flow block instead of eight."""

    def __init__(self, num_classes=5):
        super(Xception, self).__init__()
        self.num_classes = num_classes
        self.conv1 = nn.Conv2d(3, 4, 3, 2, 0, bias=False)
        self.bn1 = nn.BatchNorm2d(4)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(4, 8, 3, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.relu2 = nn.ReLU(inplace=True)
        self.block1 = Block(8, 8, 2, 2, start_with_relu=False, grow_first=True)
        self.block2 = Block(8, 16, 2, 2, start_with_relu=True, grow_first=True)
        self.block3 = Block(16, 24, 2, 2, start_with_relu=True, grow_first=True)
        self.block4 = Block(24, 24, 3, 1, start_with_relu=True, grow_first=True)
        self.block12 = Block(24, 32, 2, 2, start_with_relu=True, grow_first=False)
        self.conv3 = SeparableConv2d(32, 48, 3, 1, 1)
        self.bn3 = nn.BatchNorm2d(48)
        self.relu3 = nn.ReLU(inplace=True)
        self.conv4 = SeparableConv2d(48, 64, 3, 1, 1)
        self.bn4 = nn.BatchNorm2d(64)
        self.last_linear = nn.Linear(64, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                n = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                m.weight.data.normal_(0, math.sqrt(2. / n))
            elif isinstance(m, nn.BatchNorm2d):
                m.weight.data.fill_(1)
                m.bias.data.zero_()

    def features(self, input):
        x = self.conv1(input)
        x = self.bn1(x)
        x = self.relu1(x)
        x = self.conv2(x)
        x = self.bn2(x)
        x = self.relu2(x)
        x = self.block1(x)
        x = self.block2(x)
        x = self.block3(x)
        x = self.block4(x)
        x = self.block12(x)
        x = self.conv3(x)
        x = self.bn3(x)
        x = self.relu3(x)
        x = self.conv4(x)
        x = self.bn4(x)
        return x

    def logits(self, features):
        x = nn.ReLU(inplace=True)(features)
        x = F.adaptive_avg_pool2d(x, (1, 1))
        x = x.view(x.size(0), -1)
        x = self.last_linear(x)
        return x

    def forward(self, input):
        x = self.features(input)
        x = self.logits(x)
        return x


class AlexNet(nn.Module):
    def __init__(self, num_classes: int = 5, dropout: float = 0.5) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, kernel_size=11, stride=4, padding=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(8, 24, kernel_size=5, padding=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(24, 48, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(48, 32, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(32, 32, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
        )
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout),
            nn.Linear(32 * 6 * 6, 64),
            nn.ReLU(inplace=True),
            nn.Dropout(p=dropout),
            nn.Linear(64, 64),
            nn.ReLU(inplace=True),
            nn.Linear(64, num_classes),
        )

    def forward(self, x):
        x = self.features(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        x = self.classifier(x)
        return x


class AlexNetCaffe(nn.Module):
    """bvlc_alexnet: LRN after the first two convs, two-group conv2/conv4/conv5."""

    def __init__(self, num_classes=5):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 11, 4), nn.ReLU(inplace=True),
            nn.LocalResponseNorm(5, alpha=1e-4, beta=0.75, k=1.0),
            nn.MaxPool2d(3, 2),
            nn.Conv2d(8, 16, 5, padding=2, groups=2), nn.ReLU(inplace=True),
            nn.LocalResponseNorm(5, alpha=1e-4, beta=0.75, k=1.0),
            nn.MaxPool2d(3, 2),
            nn.Conv2d(16, 24, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(24, 24, 3, padding=1, groups=2), nn.ReLU(inplace=True),
            nn.Conv2d(24, 16, 3, padding=1, groups=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(3, 2, ceil_mode=True),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(16 * 1 * 1, 32),
                                        nn.ReLU(inplace=True), nn.Dropout(),
                                        nn.Linear(32, num_classes))

    def forward(self, x):
        return self.classifier(self.features(x))


def train(model, opt, xs, ys, steps, name):
    crit = nn.CrossEntropyLoss()
    model.train()
    for step in range(steps):
        out = model(xs)
        loss = crit(out, ys)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("%s step %d loss %.5f" % (name, step, loss.item()))


def main():
    torch.manual_seed(0)
    xs = torch.randn(6, 3, 67, 67)
    ys = torch.tensor([0, 1, 2, 3, 4, 0])

    x_model = Xception()
    print("xception params", sum(p.numel() for p in x_model.parameters()),
          len(x_model.state_dict()))
    print(x_model.block12.rep)
    feats = x_model.features(xs[:2])
    print("features", tuple(feats.shape))
    opt = optim.SGD(x_model.parameters(), lr=0.05, momentum=0.9, nesterov=True,
                    weight_decay=1e-5)
    train(x_model, opt, xs, ys, 3, "xception")
    dw = x_model.block2.rep[1].conv1
    print("depthwise", tuple(dw.weight.shape), dw.groups, dw.weight.grad.abs().sum().item())
    print("running", x_model.block4.rep[2].running_mean[:3], x_model.bn4.num_batches_tracked)
    x_model.eval()
    with torch.no_grad():
        ref = x_model(xs[:3])
        print("eval", ref)
        cl = x_model.to(memory_format=torch.channels_last)
        out = cl(xs[:3].to(memory_format=torch.channels_last))
        print("channels_last", (out - ref).abs().max().item() < 1e-4,
              cl.conv1.weight.is_contiguous(memory_format=torch.channels_last),
              cl.features(xs[:1].contiguous(memory_format=torch.channels_last))
              .is_contiguous(memory_format=torch.channels_last))

    torch.manual_seed(1)
    alex = AlexNet()
    print(alex.features(xs[:1]).shape, alex.avgpool(alex.features(xs[:1])).shape)
    opt = optim.SGD(alex.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.1)
    crit = nn.CrossEntropyLoss()
    for step in range(4):
        out = alex(xs)
        loss = crit(out, ys)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        print("alexnet step %d loss %.5f lr %.4f" % (step, loss.item(), sched.get_last_lr()[0]))
    alex.eval()
    with torch.no_grad():
        print("alexnet eval", alex(xs[:2]))
        top = alex(xs).topk(2, dim=1)
        print("top2", top.indices.tolist())

    torch.manual_seed(2)
    caffe = AlexNetCaffe()
    opt = optim.SGD(caffe.parameters(), lr=0.01, momentum=0.9)
    train(caffe, opt, xs, ys, 3, "caffe")
    lrn = caffe.features[2]
    print(lrn, caffe.features[4].weight.shape)
    x = torch.randn(1, 8, 3, 3, requires_grad=True) * 30
    y = lrn(x)
    y.sum().backward()
    print("lrn", y.abs().sum().item(), F.local_response_norm(x, 3).abs().sum().item())


if __name__ == "__main__":
    main()
