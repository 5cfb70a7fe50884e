"""Every torch.optim optimizer on one small regression problem (the usual "compare optimizers"
blog post), printing losses, state keys and the hyper-parameters they were built with."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
optim = torch.optim

torch.manual_seed(0)
X = torch.randn(40, 4)
true_w = torch.tensor([[1.5], [-2.0], [0.5], [3.0]])
Y = X @ true_w + 0.3 + 0.05 * torch.randn(40, 1)
init = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 1))
criterion = nn.MSELoss()

configs = [
    ("SGD", lambda p: optim.SGD(p, lr=0.05)),
    ("SGD momentum", lambda p: optim.SGD(p, lr=0.05, momentum=0.9, dampening=0.1)),
    ("SGD nesterov", lambda p: optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True,
                                         weight_decay=1e-3)),
    ("SGD maximize", lambda p: optim.SGD(p, lr=0.05, maximize=True)),
    ("Adam", lambda p: optim.Adam(p, lr=0.05)),
    ("Adam amsgrad", lambda p: optim.Adam(p, lr=0.05, amsgrad=True, weight_decay=1e-2)),
    ("AdamW", lambda p: optim.AdamW(p, lr=0.05, weight_decay=0.1)),
    ("AdamW amsgrad", lambda p: optim.AdamW(p, lr=0.05, amsgrad=True)),
    ("Adagrad", lambda p: optim.Adagrad(p, lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1)),
    ("Adadelta", lambda p: optim.Adadelta(p, lr=1.0, rho=0.9, weight_decay=1e-3)),
    ("Adamax", lambda p: optim.Adamax(p, lr=0.05)),
    ("NAdam", lambda p: optim.NAdam(p, lr=0.05, momentum_decay=4e-3)),
    ("NAdam decoupled", lambda p: optim.NAdam(p, lr=0.05, weight_decay=0.1,
                                               decoupled_weight_decay=True)),
    ("RAdam", lambda p: optim.RAdam(p, lr=0.05)),
    ("RAdam decoupled", lambda p: optim.RAdam(p, lr=0.05, weight_decay=0.1,
                                               decoupled_weight_decay=True)),
    ("RMSprop", lambda p: optim.RMSprop(p, lr=0.01)),
    ("RMSprop centered", lambda p: optim.RMSprop(p, lr=0.01, alpha=0.9, momentum=0.5,
                                                 centered=True)),
    ("Rprop", lambda p: optim.Rprop(p, lr=0.01, etas=(0.4, 1.3), step_sizes=(1e-5, 1.0))),
    ("ASGD", lambda p: optim.ASGD(p, lr=0.05, t0=3, lambd=1e-3)),
    ("Adam maximize", lambda p: optim.Adam(p, lr=0.05, maximize=True)),
]

for name, make in configs:
    model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 1))
    model.load_state_dict(init.state_dict())
    optimizer = make(model.parameters())
    losses = []
    for step in range(12):
        optimizer.zero_grad()
        loss = criterion(model(X), Y)
        if "maximize" in name and optimizer.param_groups[0]["maximize"]:
            loss = -loss
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    print(f"{name:18s}", " ".join(f"{v:.5f}" for v in losses[::3]), f"{losses[-1]:.6f}")
    state = optimizer.state[model[0].weight]
    print("   ", sorted(state.keys()), type(optimizer).__name__,
          {k: v for k, v in optimizer.defaults.items() if k in ("lr", "betas", "eps")})
    if "step" in state:
        print("   step", state["step"])

# the same problem with LBFGS and strong Wolfe line search
model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 1))
model.load_state_dict(init.state_dict())
optimizer = optim.LBFGS(model.parameters(), lr=1, max_iter=4, history_size=4,
                        line_search_fn="strong_wolfe")


def closure():
    optimizer.zero_grad()
    loss = criterion(model(X), Y)
    loss.backward()
    return loss


for i in range(3):
    loss = optimizer.step(closure)
    print("LBFGS", i, f"{loss.item():.5f}")
print(model[2].bias)

# Adam with a tensor lr and a plain list of tensors as params
w = torch.zeros(4, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
optimizer = optim.Adam([w, b], lr=torch.tensor(0.1))
for i in range(5):
    optimizer.zero_grad()
    loss = ((X @ w + b - Y) ** 2).mean()
    loss.backward()
    optimizer.step()
print(f"{loss.item():.5f}", w.detach().flatten(), b)
print(optimizer.param_groups[0]["lr"])
print("RESULT: ok")
