"""DP-SGD the way torch.func-based implementations write it (Opacus' functorch path, the
"per-sample gradients" tutorial extended): functional_call with (params, buffers) tuples,
vmap(grad(...), in_dims=(None, None, 0, 0)), per-sample clipping and noise, a CNN with
BatchNorm made vmap-safe by replace_all_batch_norm_modules_, model ensembling with
stack_module_state on different minibatches, and jacrev/vmap over a model's outputs."""
import copy
import importlib
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
func = importlib.import_module(LIB + ".func")
functional_call, vmap, grad = func.functional_call, func.vmap, func.grad


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 2 * 2, 3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.fc(x.flatten(1))


torch.manual_seed(0)
model = SmallCNN()
func.replace_all_batch_norm_modules_(model)
print(model.bn.running_mean, model.bn.track_running_stats)
params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v.detach() for k, v in model.named_buffers()}
print(sorted(params), sorted(buffers))

data = torch.randn(6, 1, 4, 4)
targets = torch.randint(0, 3, (6,))


def compute_loss(params, buffers, sample, target):
    batch = sample.unsqueeze(0)
    tgt = target.unsqueeze(0)
    predictions = functional_call(model, (params, buffers), (batch,))
    return F.cross_entropy(predictions, tgt)


ft_compute_grad = grad(compute_loss)
ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
model.eval()
ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)
for k, g in ft_per_sample_grads.items():
    print(k, tuple(g.shape), f"{g.abs().sum():.5f}")
manual = []
for i in range(6):
    model.zero_grad()
    F.cross_entropy(model(data[i:i + 1]), targets[i:i + 1]).backward()
    manual.append(model.fc.weight.grad.clone())
print(torch.allclose(torch.stack(manual), ft_per_sample_grads["fc.weight"], atol=1e-6))

max_norm, noise_multiplier, lr = 1.0, 0.5, 0.1
norms = torch.stack([g.flatten(1).norm(dim=1) for g in ft_per_sample_grads.values()], dim=1)
per_sample_norm = norms.norm(dim=1)
print(per_sample_norm)
clip_factor = (max_norm / (per_sample_norm + 1e-6)).clamp(max=1.0)
print(clip_factor)
gen = torch.Generator().manual_seed(11)
new_params = {}
for k, g in ft_per_sample_grads.items():
    clipped = torch.einsum("i,i...->...", clip_factor, g)
    noise = torch.normal(0.0, noise_multiplier * max_norm, size=clipped.shape, generator=gen)
    new_params[k] = params[k] - lr * (clipped + noise) / data.shape[0]
    print(k, f"{(new_params[k] - params[k]).norm():.5f}")
print(f"{compute_loss(new_params, buffers, data[0], targets[0]).item():.5f}")


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(5, 16)
        self.fc2 = nn.Linear(16, 2)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


torch.manual_seed(1)
num_models = 4
models = [MLP() for _ in range(num_models)]
minibatches = torch.randn(num_models, 8, 5)
e_params, e_buffers = func.stack_module_state(models)
print({k: tuple(v.shape) for k, v in e_params.items()}, e_buffers)
print(e_params["fc1.weight"].requires_grad, e_params["fc1.weight"].is_leaf)
base_model = copy.deepcopy(models[0]).to("meta")
print(base_model.fc1.weight.device)


def fmodel(params, buffers, x):
    return functional_call(base_model, (params, buffers), (x,))


preds_diff = vmap(fmodel)(e_params, e_buffers, minibatches)
preds_same = vmap(fmodel, in_dims=(0, 0, None))(e_params, e_buffers, minibatches[0])
print(preds_diff.shape, preds_same.shape)
print(torch.allclose(preds_diff, torch.stack([m(minibatches[i]) for i, m in enumerate(models)]),
                     atol=1e-6))
print(torch.allclose(preds_same[2], models[2](minibatches[0]), atol=1e-6))
loss = preds_diff.pow(2).mean()
loss.backward()
print(e_params["fc2.bias"].grad)

x0 = torch.randn(5)
jac = func.jacrev(lambda p, x: functional_call(models[0], p, (x,)))(
    dict(models[0].named_parameters()), x0)
print({k: tuple(v.shape) for k, v in jac.items()})
batched_jac = vmap(func.jacrev(models[1]))(torch.randn(3, 5))
print(batched_jac.shape, f"{batched_jac.abs().sum():.5f}")
print("RESULT:", f"{preds_diff.sum().item():.5f}")
