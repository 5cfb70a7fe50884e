"""Model surgery as the fine-tuning tutorial and forum answers do it: replace the classifier
head, swap every ReLU for GELU through named_modules + set_submodule, replace BatchNorm by
Identity, freeze a backbone and count trainable parameters per module, tie weights, keep extra
(non-tensor) state in the state_dict with get_extra_state/set_extra_state, meta-device
construction with to_empty, and ParameterDict/ParameterList bookkeeping."""

import importlib
import os
from collections import OrderedDict

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


class TinyBackbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d((1, 1)),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(16, 1000))

    def forward(self, x):
        return self.classifier(self.features(x))


torch.manual_seed(0)
model = TinyBackbone()
print(model)
x = torch.randn(2, 3, 8, 8)
print(model(x).shape)

# freeze and replace the head, as the finetuning tutorial
for param in model.parameters():
    param.requires_grad = False
num_ftrs = model.classifier[2].in_features
model.classifier[2] = nn.Linear(num_ftrs, 2)
params_to_update = [p for p in model.parameters() if p.requires_grad]
print(num_ftrs, len(params_to_update), [n for n, p in model.named_parameters() if p.requires_grad])
for name, module in model.named_children():
    total = sum(p.numel() for p in module.parameters())
    train = sum(p.numel() for p in module.parameters() if p.requires_grad)
    print(f"{name:12s} total={total:5d} trainable={train}")
optimizer = torch.optim.SGD(params_to_update, lr=0.001, momentum=0.9)
model.train()
for step in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), torch.tensor([0, 1]))
    loss.backward()
    optimizer.step()
    print(
        step,
        f"{loss.item():.4f}",
        model.features[0].weight.grad,
        model.classifier[2].bias.grad is None,
    )

# swap every ReLU for GELU
for name, module in list(model.named_modules()):
    if isinstance(module, nn.ReLU):
        model.set_submodule(name, nn.GELU())
print(model.features)
# BatchNorm -> Identity via setattr on the parent
for name, module in list(model.named_modules()):
    if isinstance(module, nn.BatchNorm2d):
        parent_name, _, child = name.rpartition(".")
        setattr(model.get_submodule(parent_name), child, nn.Identity())
print([type(m).__name__ for m in model.features], list(model.state_dict().keys()))
model.eval()
print(model(x))
try:
    model.set_submodule("features.99.x", nn.ReLU())
except AttributeError as e:
    print(type(e).__name__, e)
try:
    model.set_submodule("classifier.2.weight", nn.ReLU())
except AttributeError as e:
    print(type(e).__name__, e)


# weight tying (language-model style)
class TiedLM(nn.Module):
    def __init__(self, ntoken, ninp):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.decoder = nn.Linear(ninp, ntoken)
        self.decoder.weight = self.encoder.weight

    def forward(self, idx):
        return self.decoder(self.encoder(idx))


lm = TiedLM(10, 4)
print(
    lm.decoder.weight is lm.encoder.weight,
    len(list(lm.parameters())),
    [n for n, _ in lm.named_parameters()],
    list(lm.state_dict().keys()),
)
out = lm(torch.tensor([[1, 2, 3]]))
out.sum().backward()
print(out.shape, lm.encoder.weight.grad.abs().sum())


# extra state
class Normalizer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.config = {"eps": 1e-5, "name": "norm", "seen": 0}

    def forward(self, x):
        self.config["seen"] += x.shape[0]
        x = self.proj(x)
        return x / (x.norm(dim=-1, keepdim=True) + self.config["eps"])

    def get_extra_state(self):
        return dict(self.config)

    def set_extra_state(self, state):
        self.config = dict(state)


net = nn.Sequential(OrderedDict(norm=Normalizer(3), head=nn.Linear(3, 1)))
net(torch.randn(5, 3))
sd = net.state_dict()
print(list(sd.keys()), sd["norm._extra_state"])
fresh = nn.Sequential(OrderedDict(norm=Normalizer(3), head=nn.Linear(3, 1)))
print(fresh.load_state_dict(sd), fresh.norm.config)
sd.pop("norm._extra_state")
print(fresh.load_state_dict(sd, strict=False))
try:
    fresh.load_state_dict(sd)
except RuntimeError as e:
    print(type(e).__name__, e)

# meta device then to_empty + init
with torch.device("meta"):
    big = nn.Linear(4, 3)
print(big.weight.device, big.weight.shape, big.weight.is_meta)
big.to_empty(device="cpu")
torch.manual_seed(1)
big.reset_parameters()
print(big.weight.device, big.weight, big.bias)
lazy = nn.Linear(2, 2, device="meta")
print(lazy.weight.device, lazy)


# parameter containers in a model
class Mixture(nn.Module):
    def __init__(self, k, d):
        super().__init__()
        self.means = nn.ParameterList([nn.Parameter(torch.randn(d)) for _ in range(k)])
        self.extra = nn.ParameterDict({"log_scale": torch.zeros(d), "bias": torch.ones(1)})

    def forward(self, x):
        d = torch.stack([((x - m) ** 2).sum(-1) for m in self.means], -1)
        return -d * self.extra["log_scale"].exp().mean() + self.extra["bias"]


mix = Mixture(3, 2)
print(mix, [n for n, _ in mix.named_parameters()])
print(mix(torch.randn(4, 2)))
mix.extra.update([("temp", torch.tensor(2.0))])
mix.extra |= {"b2": torch.ones(2), "a2": torch.zeros(1)}
print(list(mix.extra.keys()), mix.extra.setdefault("temp", None), mix.extra.popitem()[0])
print(list(reversed(mix.extra)), list(mix.extra.copy().keys()), len(mix.extra.fromkeys(["u", "v"])))
mix.extra.clear()
print(len(mix.extra), mix.means[1:], mix.means[-1].shape)
print("RESULT: ok")
