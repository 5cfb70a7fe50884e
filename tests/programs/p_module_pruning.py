"""The "Pruning Tutorial": LeNet pruned with torch.nn.utils.prune (random_unstructured,
l1_unstructured, ln_structured, iterative pruning, global_unstructured, remove), inspecting
named_parameters / named_buffers / _forward_pre_hooks and the sparsity of each layer."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
prune = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.utils.prune")

device = torch.device("cpu")


class LeNet(nn.Module):
    def __init__(self):
        super(LeNet, self).__init__()
        self.conv1 = nn.Conv2d(1, 3, 3)
        self.conv2 = nn.Conv2d(3, 4, 3)
        self.fc1 = nn.Linear(4 * 2 * 2, 12)
        self.fc2 = nn.Linear(12, 8)
        self.fc3 = nn.Linear(8, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(-1, int(x.nelement() / x.shape[0]))
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


torch.manual_seed(0)
model = LeNet().to(device=device)
module = model.conv1
print(list(module.named_parameters()))
print(list(module.named_buffers()))

prune.random_unstructured(module, name="weight", amount=0.3)
print(list(module.named_parameters()))
print(list(module.named_buffers()))
print(module.weight)
# (the hooks' reprs name their package: torch.nn.utils.prune vs ember's)
print({k: type(h).__name__ for k, h in module._forward_pre_hooks.items()})

prune.l1_unstructured(module, name="bias", amount=1)
print(list(module.named_parameters()))
print(list(module.named_buffers()))
print(module.bias)
# (the hooks' reprs name their package: torch.nn.utils.prune vs ember's)
print({k: type(h).__name__ for k, h in module._forward_pre_hooks.items()})

# iterative pruning
prune.ln_structured(module, name="weight", amount=0.5, n=2, dim=0)
print(module.weight)
for hook in module._forward_pre_hooks.values():
    if hook._tensor_name == "weight":
        break
print(type(hook).__name__, len(hook), [type(m).__name__ for m in hook])

print(model.state_dict().keys())

prune.remove(module, "weight")
print(list(module.named_parameters()))
print(list(module.named_buffers()))
print(module.weight)

# pruning multiple parameters
new_model = LeNet()
for name, module in new_model.named_modules():
    if isinstance(module, torch.nn.Conv2d):
        prune.l1_unstructured(module, name="weight", amount=0.2)
    elif isinstance(module, torch.nn.Linear):
        prune.l1_unstructured(module, name="weight", amount=0.4)
print(dict(new_model.named_buffers()).keys())

# global pruning
model = LeNet()
parameters_to_prune = (
    (model.conv1, "weight"),
    (model.conv2, "weight"),
    (model.fc1, "weight"),
    (model.fc2, "weight"),
    (model.fc3, "weight"),
)
prune.global_unstructured(
    parameters_to_prune,
    pruning_method=prune.L1Unstructured,
    amount=0.2,
)
for name in ("conv1", "conv2", "fc1", "fc2", "fc3"):
    w = getattr(model, name).weight
    print(
        "Sparsity in {}.weight: {:.2f}%".format(
            name, 100. * float(torch.sum(w == 0)) / float(w.nelement())
        )
    )
print(
    "Global sparsity: {:.2f}%".format(
        100. * float(
            torch.sum(model.conv1.weight == 0)
            + torch.sum(model.conv2.weight == 0)
            + torch.sum(model.fc1.weight == 0)
            + torch.sum(model.fc2.weight == 0)
            + torch.sum(model.fc3.weight == 0)
        )
        / float(
            model.conv1.weight.nelement()
            + model.conv2.weight.nelement()
            + model.fc1.weight.nelement()
            + model.fc2.weight.nelement()
            + model.fc3.weight.nelement()
        )
    )
)
print(prune.is_pruned(model), prune.is_pruned(LeNet()))

# training with masks: the masked entries stay zero, the gradient flows to weight_orig
x = torch.randn(4, 1, 14, 14)
y = torch.randint(0, 10, (4,))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    print(f"{loss.item():.5f}", int((model.fc1.weight == 0).sum()))
print(model.fc3.weight_orig.grad)
print(type(model.fc3.weight.grad_fn).__name__, model.fc3.weight.is_leaf)


# extending with a custom method
class FooBarPruningMethod(prune.BasePruningMethod):
    """Prune every other entry in a tensor
    """
    PRUNING_TYPE = 'unstructured'

    def compute_mask(self, t, default_mask):
        mask = default_mask.clone()
        mask.view(-1)[::2] = 0
        return mask


def foobar_unstructured(module, name):
    FooBarPruningMethod.apply(module, name)
    return module


model = LeNet()
foobar_unstructured(model.fc3, name='bias')
print(model.fc3.bias_mask)
prune.random_structured(model.fc2, "weight", amount=3, dim=1)
print(model.fc2.weight_mask)
prune.custom_from_mask(model.fc1, "bias", mask=torch.tensor([1, 0] * 6))
print(model.fc1.bias)
print(prune.Identity().prune(torch.ones(2)), prune.L1Unstructured(0.5).prune(torch.arange(4.)))
for bad in (-1, 1.5, "a"):
    try:
        prune.l1_unstructured(nn.Linear(2, 2), "weight", amount=bad)
    except (TypeError, ValueError) as e:
        print(type(e).__name__, e)
try:
    prune.ln_structured(nn.Linear(2, 2), "bias", amount=1, n=2, dim=0)
except ValueError as e:
    print(e)
try:
    prune.remove(nn.Linear(2, 2), "weight")
except ValueError as e:
    print(str(e).split(" of module")[0])
print("RESULT: ok")
