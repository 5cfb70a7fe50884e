"""MAML on sine-wave regression (Finn et al. 2017; the common PyTorch reimplementations with a
functional forward over explicit weights, torch.autograd.grad(create_graph=True) and
torch.func.functional_call)."""
import importlib
import os
from collections import OrderedDict

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
functional_call = torch.func.functional_call


class SineTask:
    def __init__(self, rng):
        self.amplitude = rng.uniform(0.1, 5.0)
        self.phase = rng.uniform(0, np.pi)

    def sample(self, rng, k):
        x = rng.uniform(-5.0, 5.0, (k, 1)).astype(np.float32)
        y = self.amplitude * np.sin(x - self.phase)
        return torch.from_numpy(x), torch.from_numpy(y.astype(np.float32))


class MAMLModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(OrderedDict([
            ('l1', nn.Linear(1, 40)),
            ('relu1', nn.ReLU()),
            ('l2', nn.Linear(40, 40)),
            ('relu2', nn.ReLU()),
            ('l3', nn.Linear(40, 1)),
        ]))

    def forward(self, x):
        return self.model(x)

    def parameterised(self, x, weights):
        x = F.linear(x, weights[0], weights[1])
        x = F.relu(x)
        x = F.linear(x, weights[2], weights[3])
        x = F.relu(x)
        x = F.linear(x, weights[4], weights[5])
        return x


torch.manual_seed(0)
rng = np.random.RandomState(0)
model = MAMLModel()
print(model)
criterion = nn.MSELoss()
meta_optimiser = torch.optim.Adam(model.parameters(), 1e-3)
inner_lr, K, tasks_per_meta_batch = 0.01, 10, 4
weights = list(model.parameters())

for epoch in range(6):
    meta_loss = 0
    for _ in range(tasks_per_meta_batch):
        task = SineTask(rng)
        temp_weights = [w.clone() for w in weights]
        X, y = task.sample(rng, K)
        loss = criterion(model.parameterised(X, temp_weights), y) / K
        grad = torch.autograd.grad(loss, temp_weights, create_graph=True)
        temp_weights = [w - inner_lr * g for w, g in zip(temp_weights, grad)]
        X, y = task.sample(rng, K)
        meta_loss = meta_loss + criterion(model.parameterised(X, temp_weights), y) / K
    meta_grads = torch.autograd.grad(meta_loss, weights)
    for w, g in zip(weights, meta_grads):
        w.grad = g
    meta_optimiser.step()
    print("{}/{}. loss: {:.6f}".format(epoch + 1, 6, meta_loss.item() / tasks_per_meta_batch))

# the same inner step with torch.func.functional_call over a parameter dict
params = dict(model.named_parameters())
print(list(params.keys()))
task = SineTask(rng)
X, y = task.sample(rng, K)
out = functional_call(model, params, (X,))
loss = F.mse_loss(out, y)
grads = torch.autograd.grad(loss, params.values(), create_graph=True)
fast = {n: p - 0.01 * g for (n, p), g in zip(params.items(), grads)}
Xq, yq = task.sample(rng, K)
qloss = F.mse_loss(functional_call(model, fast, Xq), yq)
qloss.backward()
print(f"{loss.item():.5f} {qloss.item():.5f}")
print(type(grads[0].grad_fn).__name__, model.model.l1.weight.grad.norm().item())
print(torch.func.grad(lambda p, x, t: F.mse_loss(functional_call(model, p, (x,)), t))(
    {k: v.detach() for k, v in params.items()}, X, y)['model.l3.bias'])

# fine-tune curve of the meta-learned init (the paper's K-shot evaluation)
x_axis = torch.linspace(-5, 5, 20).unsqueeze(1)
task = SineTask(rng)
X, y = task.sample(rng, K)
w = [p.detach().clone().requires_grad_() for p in model.parameters()]
opt = torch.optim.SGD(w, lr=0.01)
for step in range(3):
    opt.zero_grad()
    loss = criterion(model.parameterised(X, w), y)
    loss.backward()
    opt.step()
    print(step, round(loss.item(), 4))
with torch.no_grad():
    print(model.parameterised(x_axis, w)[:5].squeeze())

def loss_fn(p, x, t):
    return F.mse_loss(functional_call(model, p, (x,)), t)


detached = {k: v.detach() for k, v in params.items()}
xs = torch.stack([task.sample(rng, K)[0] for _ in range(3)])
ys = torch.sin(xs)
per_task = torch.func.vmap(torch.func.grad(loss_fn), in_dims=(None, 0, 0))(detached, xs, ys)
print({k: tuple(v.shape) for k, v in per_task.items()})
print(per_task['model.l3.bias'].squeeze(-1))
g, v = torch.func.grad_and_value(loss_fn)(detached, X, y)
print(round(v.item(), 5), g['model.l1.bias'][:4])
print("RESULT:", meta_loss.item())
