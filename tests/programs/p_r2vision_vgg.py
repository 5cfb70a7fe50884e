"""torchvision's VGG (make_layers over cfgs, batch_norm, _initialize_weights), shrunk."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


class VGG(nn.Module):
    def __init__(self, features, num_classes=1000, init_weights=True, dropout=0.5):
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((2, 2))
        self.classifier = nn.Sequential(
            nn.Linear(32 * 2 * 2, 64),
            nn.ReLU(True),
            nn.Dropout(p=dropout),
            nn.Linear(64, 64),
            nn.ReLU(True),
            nn.Dropout(p=dropout),
            nn.Linear(64, num_classes),
        )
        if init_weights:
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    if m.bias is not None:
                        nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.01)
                    nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = self.features(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        x = self.classifier(x)
        return x


def make_layers(cfg, batch_norm=False):
    layers = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            conv2d = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
            if batch_norm:
                layers += [conv2d, nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
            else:
                layers += [conv2d, nn.ReLU(inplace=True)]
            in_channels = v
    return nn.Sequential(*layers)


cfgs = {
    "A": [8, "M", 16, "M", 32, 32, "M"],
    "B": [8, 8, "M", 16, 16, "M", 32, 32, "M"],
}

torch.manual_seed(0)
for name, bn in [("A", False), ("B", True)]:
    model = VGG(make_layers(cfgs[name], batch_norm=bn), num_classes=10)
    n_params = sum(p.numel() for p in model.parameters())
    n_train = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print(f"vgg_{name}{'_bn' if bn else ''}: {n_params} params, {n_train} trainable")
print(model)
print(model.features[0].weight.std().item() > 0, model.classifier[0].bias.abs().sum().item())
print([k for k in model.state_dict().keys()][:12])
print(model.features[1].running_mean.shape, model.features[1].num_batches_tracked)

x = torch.randn(4, 3, 16, 16)
y = torch.randint(0, 10, (4,))
model.eval()
with torch.no_grad():
    out = model(x)
print(out.shape, out.dtype)
print(out[0, :5])
feat = model.features(x)
print("features:", tuple(feat.shape), "pooled:", tuple(model.avgpool(feat).shape))

model.train()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
criterion = nn.CrossEntropyLoss()
for step in range(5):
    optimizer.zero_grad()
    torch.manual_seed(step)
    output = model(x)
    loss = criterion(output, y)
    loss.backward()
    optimizer.step()
    acc1 = (output.argmax(1) == y).float().mean() * 100
    print(f"step {step} loss {loss.item():.4f} acc@1 {acc1.item():.1f}")
print(model.features[1].running_mean[:4])
print(model.features[1].running_var[:4])
print(model.features[1].num_batches_tracked)

# top-k accuracy as in the imagenet reference script
model.eval()
with torch.no_grad():
    output = model(x)
    maxk = 5
    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(y.view(1, -1).expand_as(pred))
    for k in (1, 5):
        correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
        print(f"acc@{k}", correct_k.mul_(100.0 / x.size(0)))
print(pred.dtype, correct.dtype, correct.shape)
print("RESULT:", round(loss.item(), 4))
