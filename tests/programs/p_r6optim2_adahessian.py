"""AdaHessian, shrunk from amirgholami/adahessian (image_classification/optim_adahessian.py:
Hutchinson estimates of the Hessian diagonal with Rademacher vectors from torch.randint_like,
torch.autograd.grad over the .grad tensors left by backward(create_graph=True) with
grad_outputs and only_inputs, spatial averaging of conv kernels, the
``p.data = ...`` update) and its trainer's loop, plus the plain Hutchinson trace estimate
checked against the exact Hessian from torch.autograd.functional.hessian. (randint_like(p, 2)
stands for the repo's randint_like(p, high=2) and grad.detach() for its grad.detach_(), both
logged for ember.)"""
# Training amplifies last-bit differences of float32 matrix products (torch's MKL on an
# Intel CPU rounds skinny GEMMs differently from NumPy's OpenBLAS):
# compare: rtol=1e-3 atol=1e-4
import importlib
import math
import os
import warnings

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
AF = importlib.import_module(LIB + ".autograd.functional")
warnings.simplefilter("ignore")


class Adahessian(torch.optim.Optimizer):
    """Implements Adahessian algorithm."""

    def __init__(self, params, lr=0.15, betas=(0.9, 0.999), eps=1e-4, weight_decay=0, hessian_power=1):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= hessian_power <= 1.0:
            raise ValueError(f"Invalid Hessian power value: {hessian_power}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, hessian_power=hessian_power)
        super(Adahessian, self).__init__(params, defaults)

    def get_trace(self, params, grads):
        # Check backward was called with create_graph set to True
        for i, grad in enumerate(grads):
            if grad.grad_fn is None:
                raise RuntimeError("Gradient tensor {:} does not have grad_fn. When calling\n".format(i) +
                                   "\t\t\t  loss.backward(), make sure the option create_graph is\n" +
                                   "\t\t\t  set to True.")
        v = [2 * torch.randint_like(p, 2) - 1 for p in params]
        hvs = torch.autograd.grad(grads, params, grad_outputs=v, only_inputs=True, retain_graph=True)
        hutchinson_trace = []
        for hv in hvs:
            param_size = hv.size()
            if len(param_size) <= 2:  # for 0/1/2D tensor
                tmp_output = hv.abs()
            elif len(param_size) == 4:  # Conv kernel
                tmp_output = torch.mean(hv.abs(), dim=[2, 3], keepdim=True)
            hutchinson_trace.append(tmp_output)
        return hutchinson_trace

    def step(self, closure=None):
        loss = None
        if closure is not None:
            loss = closure()
        params = []
        groups = []
        grads = []
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    params.append(p)
                    groups.append(group)
                    grads.append(p.grad)
        # get the Hessian diagonal
        hut_traces = self.get_trace(params, grads)
        for (p, group, grad, hut_trace) in zip(params, groups, grads, hut_traces):
            state = self.state[p]
            # State initialization
            if len(state) == 0:
                state["step"] = 0
                state["exp_avg"] = torch.zeros_like(p.data)
                state["exp_hessian_diag_sq"] = torch.zeros_like(p.data)
            exp_avg, exp_hessian_diag_sq = state["exp_avg"], state["exp_hessian_diag_sq"]
            beta1, beta2 = group["betas"]
            state["step"] += 1
            # Decay the first and second moment running average coefficient
            exp_avg.mul_(beta1).add_(grad.detach(), alpha=1 - beta1)
            exp_hessian_diag_sq.mul_(beta2).addcmul_(hut_trace, hut_trace, value=1 - beta2)
            bias_correction1 = 1 - beta1 ** state["step"]
            bias_correction2 = 1 - beta2 ** state["step"]
            # make the square root, and the Hessian power
            k = group["hessian_power"]
            denom = ((exp_hessian_diag_sq.sqrt() ** k) / math.sqrt(bias_correction2) ** k).add_(group["eps"])
            # make update
            p.data = p.data - group["lr"] * (exp_avg / bias_correction1 / denom + group["weight_decay"] * p.data)
        return loss


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 4 * 4, 3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.fc(x.flatten(1))


torch.manual_seed(0)
X = torch.randn(60, 1, 8, 8)
y = (X[:, 0, :4].mean((1, 2)) > 0).long() + (X[:, 0, 4:, 4:].mean((1, 2)) > 0.2).long()
model = Net()
optimizer = Adahessian(model.parameters(), lr=0.05, weight_decay=5e-4, hessian_power=1)
criterion = nn.CrossEntropyLoss()
print("randint_like", torch.randint_like(torch.zeros(2, 3), 2).tolist(), torch.randint_like(torch.zeros(4, dtype=torch.int64), 3, 6).tolist())
for epoch in range(3):
    model.train()
    perm = torch.randperm(60)
    tot = 0.0
    for i in range(0, 60, 20):
        idx = perm[i:i + 20]
        optimizer.zero_grad()
        output = model(X[idx])
        loss = criterion(output, y[idx])
        loss.backward(create_graph=True)
        optimizer.step()
        tot += loss.item()
    model.eval()
    with torch.no_grad():
        acc = (model(X).argmax(1) == y).float().mean().item()
    st = optimizer.state[model.conv.weight]
    print("epoch %d loss %.5f acc %.4f step %d hess conv %.6f fc %.6f" % (
        epoch, tot / 3, acc, st["step"], st["exp_hessian_diag_sq"].sum().item(),
        optimizer.state[model.fc.weight]["exp_hessian_diag_sq"].sum().item()))
print("leaf", model.fc.weight.is_leaf, type(model.fc.weight).__name__, model.fc.weight.requires_grad)
print("bn running", [round(v, 5) for v in model.bn.running_mean.tolist()])

# the Hutchinson trace of a small Hessian, against the exact one
torch.manual_seed(1)
A = torch.randn(5, 5, dtype=torch.float64)
A = A @ A.t()
b = torch.randn(5, dtype=torch.float64)


def f(w):
    return 0.5 * w @ A @ w + torch.sin(w).sum() + b @ w


w0 = torch.randn(5, dtype=torch.float64)
H = AF.hessian(f, w0)
w = w0.clone().requires_grad_()
g, = torch.autograd.grad(f(w), w, create_graph=True)
ests = []
for _ in range(200):
    v = 2 * torch.randint_like(w, 2) - 1
    hv, = torch.autograd.grad(g, w, grad_outputs=v, retain_graph=True)
    ests.append((v * hv).sum())
est = torch.stack(ests)
print("trace exact %.5f hutchinson %.5f std %.5f" % (H.trace().item(), est.mean().item(), est.std().item()))
diag_est = torch.stack([hv for hv in [torch.autograd.grad(g, w, grad_outputs=v, retain_graph=True)[0] * v
                                      for v in [2 * torch.randint_like(w, 2) - 1 for _ in range(100)]]]).mean(0)
print("diag exact", [round(v, 4) for v in H.diagonal().tolist()], "est", [round(v, 4) for v in diag_est.tolist()])

try:
    Adahessian(model.parameters(), hessian_power=2)
except Exception as e:
    print(type(e).__name__, e)
model.zero_grad()
criterion(model(X), y).backward()
try:
    optimizer.step()
except Exception as e:
    print(type(e).__name__, e)
