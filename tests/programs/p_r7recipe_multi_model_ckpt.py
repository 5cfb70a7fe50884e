"""PyTorch recipes on checkpoints, shrunk: "Saving and loading multiple models in one file"
(recipes/recipes/saving_multiple_models_in_one_file.py: netA/netB and their SGD optimizers in one
dict, loaded back into fresh models and resumed), "Saving and loading a general checkpoint"
(epoch/loss next to the state dicts, resuming gives the same next steps), "Saving and loading
models for inference" (state_dict vs the entire model with ``weights_only=False``),
"Saving and loading models across devices" (``map_location`` as str / device / callable), and
"Warmstarting model using parameters from a different model" (``strict=False``, the returned
missing/unexpected keys, loading a renamed sub-dict). Synthetic CIFAR-shaped data, a temp dir."""
import importlib
import os
import tempfile

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
optim = importlib.import_module(LIB + ".optim")


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(-1, 16 * 5 * 5)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


def train_steps(model, optimizer, n, seed):
    g = torch.Generator().manual_seed(seed)
    losses = []
    for _ in range(n):
        x = torch.randn(4, 3, 32, 32, generator=g)
        y = torch.randint(0, 10, (4,), generator=g)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(round(loss.item(), 5))
    return losses


tmp = tempfile.mkdtemp()
torch.manual_seed(0)
netA = Net()
netB = Net()
optimizerA = optim.SGD(netA.parameters(), lr=0.001, momentum=0.9)
optimizerB = optim.SGD(netB.parameters(), lr=0.001, momentum=0.9)
print("A", train_steps(netA, optimizerA, 2, 1))
print("B", train_steps(netB, optimizerB, 2, 2))

# Specify a path to save to
PATH = os.path.join(tmp, "model.pt")
torch.save({
    'modelA_state_dict': netA.state_dict(),
    'modelB_state_dict': netB.state_dict(),
    'optimizerA_state_dict': optimizerA.state_dict(),
    'optimizerB_state_dict': optimizerB.state_dict(),
}, PATH)

modelA = Net()
modelB = Net()
optimModelA = optim.SGD(modelA.parameters(), lr=0.001, momentum=0.9)
optimModelB = optim.SGD(modelB.parameters(), lr=0.001, momentum=0.9)

checkpoint = torch.load(PATH, weights_only=True)
print(sorted(checkpoint), list(checkpoint['modelA_state_dict'])[:4])
print(modelA.load_state_dict(checkpoint['modelA_state_dict']))
print(modelB.load_state_dict(checkpoint['modelB_state_dict']))
optimModelA.load_state_dict(checkpoint['optimizerA_state_dict'])
optimModelB.load_state_dict(checkpoint['optimizerB_state_dict'])
print(optimModelA.state_dict()["param_groups"])
print(len(optimModelA.state), sorted(optimModelA.state_dict()["state"][0]))
print(torch.equal(optimModelA.state_dict()["state"][9]["momentum_buffer"],
                  optimizerA.state_dict()["state"][9]["momentum_buffer"]))

modelA.eval()
modelB.eval()
x = torch.randn(2, 3, 32, 32)
print(torch.equal(modelA(x), netA.eval()(x)), torch.equal(modelB(x), netB.eval()(x)))
# - or -
modelA.train()
modelB.train()
netA.train()
print("resumed A", train_steps(modelA, optimModelA, 2, 3), train_steps(netA, optimizerA, 2, 3))

# A general checkpoint: epoch and loss next to the states.
EPOCH, LOSS = 5, 0.4
torch.save({'epoch': EPOCH, 'model_state_dict': netA.state_dict(),
            'optimizer_state_dict': optimizerA.state_dict(), 'loss': LOSS},
           os.path.join(tmp, "ckpt.pt"))
model = Net()
optimizer = optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
checkpoint = torch.load(os.path.join(tmp, "ckpt.pt"), weights_only=True)
model.load_state_dict(checkpoint['model_state_dict'])
optimizer.load_state_dict(checkpoint['optimizer_state_dict'])
epoch = checkpoint['epoch']
loss = checkpoint['loss']
print(epoch, loss, type(epoch).__name__, type(loss).__name__)
print("general", train_steps(model, optimizer, 1, 4), train_steps(netA, optimizerA, 1, 4))

# For inference: the state_dict, or the entire model (needs weights_only=False).
torch.save(netB.state_dict(), os.path.join(tmp, "sd.pt"))
torch.save(netB, os.path.join(tmp, "whole.pt"))
whole = torch.load(os.path.join(tmp, "whole.pt"), weights_only=False)
print(type(whole).__name__, whole.training, torch.equal(whole.eval()(x), netB.eval()(x)))
try:
    torch.load(os.path.join(tmp, "whole.pt"), weights_only=True)
except Exception as e:
    print(type(e).__name__, "Weights only load failed" in str(e))

# Across devices: map_location forms on CPU.
for loc in ("cpu", torch.device("cpu"), lambda storage, location: storage, {"cpu": "cpu"}):
    sd = torch.load(os.path.join(tmp, "sd.pt"), map_location=loc, weights_only=True)
    print(type(loc).__name__, sd["fc3.bias"].device, torch.equal(sd["fc3.bias"], netB.fc3.bias))


# Warmstarting: a model with a different head and an extra layer.
class NetWide(Net):
    def __init__(self):
        super().__init__()
        self.fc3 = nn.Linear(84, 20)
        self.extra = nn.Linear(20, 5)

    def forward(self, x):
        return self.extra(F.relu(super().forward(x)))


netW = NetWide()
sd = torch.load(os.path.join(tmp, "sd.pt"), weights_only=True)
try:
    netW.load_state_dict(sd)
except RuntimeError as e:
    print(str(e))
sd = {k: v for k, v in sd.items() if not k.startswith("fc3.")}
res = netW.load_state_dict(sd, strict=False)
print(res)
print(res.missing_keys, res.unexpected_keys, type(res).__name__)
print(torch.equal(netW.fc1.weight, netB.fc1.weight), netW(x).shape)
res = netW.load_state_dict({"fc9.weight": torch.zeros(1)}, strict=False)
print(len(res.missing_keys), res.unexpected_keys)


# Loading into a differently named model: rename keys.
class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 6, 5), nn.ReLU(), nn.MaxPool2d(2, 2),
                                      nn.Conv2d(6, 16, 5))


bb = Backbone()
renamed = {"features.0." + k[len("conv1."):]: v for k, v in sd.items() if k.startswith("conv1.")}
renamed.update({"features.3." + k[len("conv2."):]: v for k, v in sd.items()
                if k.startswith("conv2.")})
print(bb.load_state_dict(renamed))
print(torch.equal(bb.features[3].bias, netB.conv2.bias))
try:
    bb.load_state_dict({"features.0.weight": torch.zeros(6, 3, 3, 3)}, strict=False)
except RuntimeError as e:
    print(str(e))
