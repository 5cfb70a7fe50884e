"""torchvision's DeepLabV3 / FCN heads (ASPP with dilated convs, ASPPPooling, interpolate
bilinear), IntermediateLayerGetter over a tiny backbone, the segmentation reference's
criterion with ignore_index=255, ConfusionMatrix (bincount) metrics, and a dice loss."""
import importlib
import os
from collections import OrderedDict

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


class IntermediateLayerGetter(nn.ModuleDict):
    def __init__(self, model, return_layers):
        if not set(return_layers).issubset([name for name, _ in model.named_children()]):
            raise ValueError("return_layers are not present in model")
        orig_return_layers = return_layers
        return_layers = {str(k): str(v) for k, v in return_layers.items()}
        layers = OrderedDict()
        for name, module in model.named_children():
            layers[name] = module
            if name in return_layers:
                del return_layers[name]
            if not return_layers:
                break
        super().__init__(layers)
        self.return_layers = orig_return_layers

    def forward(self, x):
        out = OrderedDict()
        for name, module in self.items():
            x = module(x)
            if name in self.return_layers:
                out_name = self.return_layers[name]
                out[out_name] = x
        return out


class ASPPConv(nn.Sequential):
    def __init__(self, in_channels, out_channels, dilation):
        modules = [
            nn.Conv2d(in_channels, out_channels, 3, padding=dilation, dilation=dilation,
                      bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
        ]
        super().__init__(*modules)


class ASPPPooling(nn.Sequential):
    def __init__(self, in_channels, out_channels):
        super().__init__(
            nn.AdaptiveAvgPool2d(1),
            nn.Conv2d(in_channels, out_channels, 1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
        )

    def forward(self, x):
        size = x.shape[-2:]
        for mod in self:
            x = mod(x)
        return F.interpolate(x, size=size, mode="bilinear", align_corners=False)


class ASPP(nn.Module):
    def __init__(self, in_channels, atrous_rates, out_channels=16):
        super().__init__()
        modules = []
        modules.append(nn.Sequential(nn.Conv2d(in_channels, out_channels, 1, bias=False),
                                     nn.BatchNorm2d(out_channels), nn.ReLU()))
        rates = tuple(atrous_rates)
        for rate in rates:
            modules.append(ASPPConv(in_channels, out_channels, rate))
        modules.append(ASPPPooling(in_channels, out_channels))
        self.convs = nn.ModuleList(modules)
        self.project = nn.Sequential(
            nn.Conv2d(len(self.convs) * out_channels, out_channels, 1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
            nn.Dropout(0.5),
        )

    def forward(self, x):
        _res = []
        for conv in self.convs:
            _res.append(conv(x))
        res = torch.cat(_res, dim=1)
        return self.project(res)


class DeepLabHead(nn.Sequential):
    def __init__(self, in_channels, num_classes, atrous_rates=(2, 4, 6)):
        super().__init__(
            ASPP(in_channels, atrous_rates),
            nn.Conv2d(16, 16, 3, padding=1, bias=False),
            nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.Conv2d(16, num_classes, 1),
        )


class FCNHead(nn.Sequential):
    def __init__(self, in_channels, channels):
        inter_channels = in_channels // 4
        layers = [
            nn.Conv2d(in_channels, inter_channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(inter_channels),
            nn.ReLU(),
            nn.Dropout(0.1),
            nn.Conv2d(inter_channels, channels, 1),
        ]
        super().__init__(*layers)


class SegModel(nn.Module):
    def __init__(self, backbone, classifier, aux_classifier=None):
        super().__init__()
        self.backbone = backbone
        self.classifier = classifier
        self.aux_classifier = aux_classifier

    def forward(self, x):
        input_shape = x.shape[-2:]
        features = self.backbone(x)
        result = OrderedDict()
        x = features["out"]
        x = self.classifier(x)
        x = F.interpolate(x, size=input_shape, mode="bilinear", align_corners=False)
        result["out"] = x
        if self.aux_classifier is not None:
            x = features["aux"]
            x = self.aux_classifier(x)
            x = F.interpolate(x, size=input_shape, mode="bilinear", align_corners=False)
            result["aux"] = x
        return result


def criterion(inputs, target):
    losses = {}
    for name, x in inputs.items():
        losses[name] = nn.functional.cross_entropy(x, target, ignore_index=255)
    if len(losses) == 1:
        return losses["out"]
    return losses["out"] + 0.5 * losses["aux"]


class ConfusionMatrix:
    def __init__(self, num_classes):
        self.num_classes = num_classes
        self.mat = None

    def update(self, a, b):
        n = self.num_classes
        if self.mat is None:
            self.mat = torch.zeros((n, n), dtype=torch.int64, device=a.device)
        with torch.inference_mode():
            k = (a >= 0) & (a < n)
            inds = n * a[k].to(torch.int64) + b[k]
            self.mat += torch.bincount(inds, minlength=n**2).reshape(n, n)

    def compute(self):
        h = self.mat.float()
        acc_global = torch.diag(h).sum() / h.sum()
        acc = torch.diag(h) / h.sum(1)
        iu = torch.diag(h) / (h.sum(1) + h.sum(0) - torch.diag(h))
        return acc_global, acc, iu

    def __str__(self):
        acc_global, acc, iu = self.compute()
        return ("global correct: {:.1f}\naverage row correct: {}\nIoU: {}\n"
                "mean IoU: {:.1f}").format(
            acc_global.item() * 100,
            [f"{i:.1f}" for i in (acc * 100).tolist()],
            [f"{i:.1f}" for i in (iu * 100).tolist()],
            iu.mean().item() * 100,
        )


def dice_loss(logits, target, num_classes, eps=1e-6):
    probs = logits.softmax(dim=1)
    valid = (target != 255).unsqueeze(1)
    onehot = F.one_hot(target.clamp(max=num_classes - 1), num_classes).permute(0, 3, 1, 2)
    onehot = onehot.float() * valid
    probs = probs * valid
    inter = (probs * onehot).sum(dim=(0, 2, 3))
    card = probs.sum(dim=(0, 2, 3)) + onehot.sum(dim=(0, 2, 3))
    return 1 - ((2 * inter + eps) / (card + eps)).mean()


torch.manual_seed(0)
backbone = nn.Sequential(OrderedDict([
    ("stem", nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False),
                           nn.BatchNorm2d(8), nn.ReLU(inplace=True))),
    ("layer1", nn.Sequential(nn.Conv2d(8, 12, 3, padding=1, bias=False), nn.BatchNorm2d(12),
                             nn.ReLU(inplace=True))),
    ("layer2", nn.Sequential(nn.Conv2d(12, 16, 3, padding=2, dilation=2, bias=False),
                             nn.BatchNorm2d(16), nn.ReLU(inplace=True))),
    ("head", nn.Linear(4, 4)),
]))
try:
    IntermediateLayerGetter(backbone, {"layer9": "out"})
except ValueError as e:
    print(type(e).__name__, e)
getter = IntermediateLayerGetter(backbone, return_layers={"layer2": "out", "layer1": "aux"})
print(list(getter.keys()), getter.return_layers)
num_classes = 4
model = SegModel(getter, DeepLabHead(16, num_classes), FCNHead(12, num_classes))
print(model.classifier[0])
print(model.aux_classifier)
print(len(list(model.named_parameters())), sum(p.numel() for p in model.parameters()))

image = torch.randn(2, 3, 15, 17)
target = torch.randint(0, num_classes, (2, 15, 17))
target[:, :2, :] = 255
feats = getter(image)
print({k: tuple(v.shape) for k, v in feats.items()})
params_to_optimize = [
    {"params": [p for p in model.backbone.parameters() if p.requires_grad]},
    {"params": [p for p in model.classifier.parameters() if p.requires_grad]},
    {"params": [p for p in model.aux_classifier.parameters() if p.requires_grad], "lr": 0.02},
]
optimizer = torch.optim.SGD(params_to_optimize, lr=0.01, momentum=0.9, weight_decay=1e-4)
iters = 6
lr_scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer,
                                                 lambda x: (1 - x / iters) ** 0.9)
model.train()
for it in range(iters):
    torch.manual_seed(it)
    output = model(image)
    loss = criterion(output, target)
    d = dice_loss(output["out"], target, num_classes)
    optimizer.zero_grad()
    (loss + d).backward()
    optimizer.step()
    lr_scheduler.step()
    print(f"it {it} loss {loss.item():.4f} dice {d.item():.4f} "
          f"lr {optimizer.param_groups[0]['lr']:.5f} {optimizer.param_groups[2]['lr']:.5f}")

model.eval()
confmat = ConfusionMatrix(num_classes)
with torch.inference_mode():
    output = model(image)["out"]
    print(output.shape, output.requires_grad, torch.is_inference(output))
    confmat.update(target.flatten(), output.argmax(1).flatten())
print(confmat.mat)
print(confmat)
x = torch.arange(12.0).view(1, 1, 3, 4)
print(F.interpolate(x, size=(5, 6), mode="bilinear", align_corners=True)[0, 0, 1])
print(F.interpolate(x, size=(5, 6), mode="bilinear", align_corners=False)[0, 0, 1])
print(F.interpolate(x, scale_factor=(2, 0.5), mode="bilinear", recompute_scale_factor=True)[0, 0])
print(F.upsample(x, scale_factor=2, mode="nearest").shape)
print("RESULT:", round(loss.item(), 4))
