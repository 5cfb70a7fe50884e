"""The PyTorch "Pruning Tutorial"'s less travelled parts and torch.nn.utils.prune's API docs:
a custom BasePruningMethod (FooBarPruningMethod, PRUNING_TYPE="unstructured") applied through
its classmethod apply and a foobar_unstructured helper, prune.identity, random_structured,
ln_structured with n=1/2/inf and dim=-1, importance_scores, PruningContainer history, global
pruning over (module, name) pairs with L1Unstructured, is_pruned, remove, the state_dict keys
(weight_orig/weight_mask), the amount errors, and pruning a pruned-then-removed model."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
prune = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.utils.prune")


class FooBarPruningMethod(prune.BasePruningMethod):
    """Prune every other entry in a tensor"""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        mask = default_mask.clone()
        mask.view(-1)[::2] = 0
        return mask


def foobar_unstructured(module, name):
    FooBarPruningMethod.apply(module, name)
    return module


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 3, 3)
        self.conv2 = nn.Conv2d(3, 4, 3)
        self.fc1 = nn.Linear(4 * 2 * 2, 12)
        self.fc2 = nn.Linear(12, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(-1, int(x.nelement() / x.shape[0]))
        x = F.relu(self.fc1(x))
        return self.fc2(x)


def sparsity(t):
    return round(float(torch.sum(t == 0)) / t.nelement(), 4)


torch.manual_seed(0)
model = LeNet()
foobar_unstructured(model.fc2, name="bias")
print("foobar mask", model.fc2.bias_mask)
print(list(model.fc2._forward_pre_hooks.values())[0].__class__.__name__,
      prune.is_pruned(model), prune.is_pruned(model.fc1))
prune.identity(model.fc1, "bias")
print("identity", sparsity(model.fc1.bias), model.fc1.bias_mask.sum().item())
prune.random_structured(model.conv1, name="weight", amount=1, dim=0)
print("random_structured", model.conv1.weight_mask.sum(dim=(1, 2, 3)).tolist())
for n in (1, 2, float("inf"), float("-inf")):
    m = nn.Linear(6, 5)
    prune.ln_structured(m, name="weight", amount=0.4, n=n, dim=-1)
    print("ln", n, m.weight_mask.sum(0).tolist())
scores = torch.arange(model.conv2.weight.numel(), dtype=torch.float32).view_as(model.conv2.weight)
prune.l1_unstructured(model.conv2, "weight", amount=10, importance_scores=scores)
print("importance", model.conv2.weight_mask.flatten()[:12].tolist(), sparsity(model.conv2.weight))
prune.ln_structured(model.conv2, "weight", amount=0.5, n=2, dim=0)
hook = [h for h in model.conv2._forward_pre_hooks.values()][0]
print("container", type(hook).__name__, [type(m).__name__ for m in hook], hook._tensor_name,
      sparsity(model.conv2.weight))
print("state_dict", list(model.state_dict().keys()))
print("named_buffers", [n for n, _ in model.named_buffers()])

params = ((model.conv1, "weight"), (model.fc1, "weight"), (model.fc2, "weight"))
prune.global_unstructured(params, pruning_method=prune.L1Unstructured, amount=0.3)
for mod, name in params:
    print("global", type(mod).__name__, sparsity(getattr(mod, name)))
total = sum(getattr(m, n).numel() for m, n in params)
zeros = sum(int((getattr(m, n) == 0).sum()) for m, n in params)
print("global total", zeros, total)

x = torch.randn(3, 1, 14, 14)
out = model(x)
out.sum().backward()
print("grad orig", model.fc1.weight_orig.grad.abs().sum().item(),
      (model.fc1.weight_orig.grad[model.fc1.weight_mask == 0] == 0).all().item())
for bad in (dict(amount=1.5), dict(amount=-1), dict(amount=500), dict(amount="a")):
    try:
        prune.l1_unstructured(nn.Linear(4, 4), "weight", **bad)
    except Exception as e:
        print(type(e).__name__, e)
try:
    prune.l1_unstructured(nn.Linear(4, 4), "weights", amount=0.1)
except Exception as e:
    print(type(e).__name__, e)
try:
    prune.remove(nn.Linear(2, 2), "weight")
except ValueError as e:
    print(type(e).__name__, e)
try:
    prune.global_unstructured(params, pruning_method=prune.LnStructured, amount=0.1)
except Exception as e:
    print(type(e).__name__, e)

for mod, name in [(model.conv1, "weight"), (model.conv2, "weight"), (model.fc1, "weight"),
                  (model.fc1, "bias"), (model.fc2, "weight"), (model.fc2, "bias")]:
    prune.remove(mod, name)
print("after remove", list(model.state_dict().keys()), prune.is_pruned(model))
print("kept zeros", sparsity(model.conv2.weight), isinstance(model.conv2.weight, nn.Parameter))
prune.l1_unstructured(model.fc1, "weight", amount=0.5)
print("repruned", sparsity(model.fc1.weight))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    loss = F.cross_entropy(model(x), torch.tensor([1, 2, 3]))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("step", step, round(loss.item(), 5), sparsity(model.fc1.weight))
