"""Loading "pretrained" weights without the hub, as fine-tuning scripts do (the "Warmstarting
model using parameters from a different model" recipe, the forum's "remove module. prefix"
answer, timm/torchvision's checkpoint filtering): a DataParallel-style checkpoint with a
"module." prefix stripped by hand and with consume_prefix_in_state_dict_if_present,
strict=False reporting missing/unexpected keys, the strict error text, size mismatches
filtered by shape before loading, a new classifier head, assign=True and freezing the backbone."""
import collections
import importlib
import io
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
mutils = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.modules.utils")


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4, 10)

    def forward(self, x):
        x = F.relu(self.bn(self.conv(x)))
        return self.fc(x.mean((2, 3)))


class FineTune(nn.Module):
    def __init__(self, n_cls):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4, n_cls)
        self.extra = nn.Linear(n_cls, n_cls)

    def forward(self, x):
        x = F.relu(self.bn(self.conv(x)))
        return self.extra(self.fc(x.mean((2, 3))))


torch.manual_seed(0)
pre = Backbone()
pre.train()
pre(torch.randn(4, 3, 5, 5))
buf = io.BytesIO()
torch.save({"epoch": 12, "state_dict": collections.OrderedDict(
    ("module." + k, v) for k, v in pre.state_dict().items())}, buf)
buf.seek(0)
ckpt = torch.load(buf, map_location="cpu", weights_only=True)
print(ckpt["epoch"], list(ckpt["state_dict"])[:3])

sd = ckpt["state_dict"]
stripped = collections.OrderedDict((k[7:] if k.startswith("module.") else k, v)
                                   for k, v in sd.items())
model = Backbone()
res = model.load_state_dict(stripped)
print(res, res.missing_keys, res.unexpected_keys, bool(res))
print(torch.equal(model.bn.running_mean, pre.bn.running_mean), model.bn.num_batches_tracked)

try:
    Backbone().load_state_dict(sd)
except RuntimeError as e:
    print(str(e)[:300])

sd2 = collections.OrderedDict(sd)
sd2._metadata = collections.OrderedDict(("module." + k if k else "module", v)
                                        for k, v in pre.state_dict()._metadata.items())
mutils.consume_prefix_in_state_dict_if_present(sd2, "module.")
print(list(sd2)[:3], sorted(sd2._metadata))

ft = FineTune(3)
try:
    ft.load_state_dict(stripped, strict=False)
except RuntimeError as e:
    print("\n".join(ln.strip() for ln in str(e).splitlines()))

own = ft.state_dict()
filtered = {k: v for k, v in stripped.items() if k in own and v.shape == own[k].shape}
print(sorted(set(stripped) - set(filtered)))
res = ft.load_state_dict(filtered, strict=False)
print("missing", res.missing_keys)
print("unexpected", res.unexpected_keys)
print(repr(res))

for name, p in ft.named_parameters():
    p.requires_grad = not (name.startswith("conv") or name.startswith("bn"))
print([n for n, p in ft.named_parameters() if p.requires_grad])
opt = torch.optim.SGD((p for p in ft.parameters() if p.requires_grad), lr=0.1, momentum=0.9)
x, y = torch.randn(6, 3, 5, 5), torch.tensor([0, 1, 2, 0, 1, 2])
ft.eval()
ft.bn.train(False)
for step in range(3):
    opt.zero_grad()
    loss = F.cross_entropy(ft(x), y)
    loss.backward()
    opt.step()
    print(step, round(loss.item(), 5), ft.conv.weight.grad is None)
print(torch.equal(ft.conv.weight, pre.conv.weight))

fresh = FineTune(10)
res = fresh.load_state_dict({k: v.clone() for k, v in stripped.items()}, strict=False,
                            assign=True)
print(res.missing_keys, type(fresh.fc.weight).__name__, fresh.fc.weight.requires_grad)
print(torch.equal(fresh.fc.bias, pre.fc.bias))

bad = dict(stripped)
bad["fc.weight"] = bad["fc.weight"][:, :2]
bad["bn.running_var"] = [1.0] * 4
try:
    Backbone().load_state_dict(bad)
except Exception as e:
    print(type(e).__name__, "\n".join(ln.strip() for ln in str(e).splitlines()))
