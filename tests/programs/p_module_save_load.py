"""The "Save and Load the Model" tutorial and the "saving and loading a general checkpoint"
recipe: state_dict, torch.save/torch.load (weights_only), whole-model checkpoints with the
optimizer state, load_state_dict(strict=False) reporting missing/unexpected keys."""
import collections
import importlib
import io
import os
import tempfile

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
optim = torch.optim


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3)
        self.pool = nn.MaxPool2d(2, 2)
        self.bn = nn.BatchNorm2d(4)
        self.fc1 = nn.Linear(4 * 3 * 3, 12)
        self.fc2 = nn.Linear(12, 5)

    def forward(self, x):
        x = self.pool(F.relu(self.bn(self.conv1(x))))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


torch.manual_seed(0)
net = Net()
optimizer = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
print("Optimizer's state_dict:")
for var_name in optimizer.state_dict():
    print(var_name, "\t", optimizer.state_dict()[var_name])
x = torch.randn(4, 3, 8, 8)
y = torch.randint(0, 5, (4,))
for epoch in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.5f}")
print(sorted(optimizer.state_dict()["state"].keys()), optimizer.state_dict()["param_groups"])

print("Model's state_dict:")
for param_tensor in net.state_dict():
    print(param_tensor, "\t", net.state_dict()[param_tensor].size())
sd = net.state_dict()
print(type(sd).__name__, list(sd.keys())[:3])
print(sd["bn.num_batches_tracked"], sd["bn.running_mean"])
print(sd["fc2.bias"].requires_grad, sd["fc2.bias"].grad_fn)

tmp = tempfile.mkdtemp()
PATH = os.path.join(tmp, "model_weights.pth")
torch.save(net.state_dict(), PATH)
model = Net()
model.load_state_dict(torch.load(PATH, weights_only=True))
model.eval()
net.eval()
with torch.no_grad():
    print(torch.equal(model(x), net(x)), model(x)[0])

# entire model
torch.save(net, os.path.join(tmp, "model.pth"))
whole = torch.load(os.path.join(tmp, "model.pth"), weights_only=False)
print(type(whole).__name__, whole.training, torch.equal(whole.fc1.weight, net.fc1.weight))

# general checkpoint
CKPT = os.path.join(tmp, "ckpt.tar")
torch.save({
    "epoch": 3,
    "model_state_dict": net.state_dict(),
    "optimizer_state_dict": optimizer.state_dict(),
    "loss": loss,
}, CKPT)
model = Net()
opt2 = optim.SGD(model.parameters(), lr=0.5, momentum=0.1)
checkpoint = torch.load(CKPT, weights_only=True)
model.load_state_dict(checkpoint["model_state_dict"])
opt2.load_state_dict(checkpoint["optimizer_state_dict"])
epoch = checkpoint["epoch"]
loss = checkpoint["loss"]
print(epoch, loss, sorted(checkpoint.keys()))
print(opt2.param_groups[0]["lr"], opt2.param_groups[0]["momentum"])
print(opt2.state_dict()["state"][0]["momentum_buffer"][0, 0, 0])
model.train()
opt2.zero_grad()
F.cross_entropy(model(x), y).backward()
opt2.step()
optimizer.zero_grad()
net.train()
F.cross_entropy(net(x), y).backward()
optimizer.step()
print(torch.allclose(model.fc2.weight, net.fc2.weight), model.fc2.bias)

# warmstarting from a different model: strict=False
class NetB(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3)
        self.fc1 = nn.Linear(36, 12)
        self.head = nn.Linear(12, 2)


netB = NetB()
result = netB.load_state_dict(torch.load(PATH, weights_only=True), strict=False)
print(result)
print(result.missing_keys)
print(result.unexpected_keys)
missing, unexpected = result
print(len(missing), len(unexpected))
try:
    netB.load_state_dict(net.state_dict())
except RuntimeError as e:
    print(str(e).splitlines()[0])
bad = collections.OrderedDict(net.state_dict())
bad["fc1.weight"] = torch.zeros(3, 3)
try:
    Net().load_state_dict(bad)
except RuntimeError as e:
    print(e)

# in-memory buffers, mapping tensors, dtypes kept
buf = io.BytesIO()
torch.save({"t": torch.arange(6, dtype=torch.int16).view(2, 3), "h": torch.ones(2).half(),
            "l": [torch.tensor(1.5), (2, "x")], "b": torch.tensor([True, False])}, buf)
buf.seek(0)
loaded = torch.load(buf, map_location="cpu", weights_only=True)
print(loaded["t"], loaded["h"], loaded["l"], loaded["b"])
base = torch.arange(10.0)
buf = io.BytesIO()
torch.save([base, base[2:5]], buf)
buf.seek(0)
a, b = torch.load(buf)
b[0] = 100.0
print(a)
print("RESULT: ok")
