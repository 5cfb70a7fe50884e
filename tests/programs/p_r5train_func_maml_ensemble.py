"""torch.func beyond the tutorials, shrunk from functorch's examples: maml-omniglot-transforms.py
(functional_call over a params dict, inner loop with grad, vmap over tasks, outer Adam step),
the ensembling notes' stack_module_state with buffers (BatchNorm in train mode under
functional_call updates the stacked running stats in place), functional_call with a tuple of
dicts, strict=True and tie_weights, grad with argnums tuples and has_aux, grad_and_value,
jacrev/jacfwd over dict inputs, hessian of a loss w.r.t. a parameter dict, linearize, and jvp
with has_aux."""
import copy
import importlib
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
func = importlib.import_module(LIB + ".func")
functional_call, vmap, grad = func.functional_call, func.vmap, func.grad

torch.manual_seed(0)


def fmt(t):
    return [round(v, 5) for v in t.detach().reshape(-1)[:4].tolist()]


# --- MAML on sine regression, functorch style (vmap over tasks of an inner loop with grad) ---
net = nn.Sequential(nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 1))
params = {k: v.detach() for k, v in net.named_parameters()}


def sample_tasks(n_tasks, k):
    amp = torch.rand(n_tasks) * 4.9 + 0.1
    phase = torch.rand(n_tasks) * 3.1416
    xs = torch.rand(n_tasks, 2 * k, 1) * 10 - 5
    ys = amp[:, None, None] * torch.sin(xs + phase[:, None, None])
    return xs[:, :k], ys[:, :k], xs[:, k:], ys[:, k:]


def loss_for_task(p, x_spt, y_spt, x_qry, y_qry, inner_steps=2, inner_lr=0.01):
    def compute_loss(new_params, x, y):
        pred = functional_call(net, new_params, (x,))
        return F.mse_loss(pred, y)

    new_params = p
    for _ in range(inner_steps):
        grads = grad(compute_loss)(new_params, x_spt, y_spt)
        new_params = {k: new_params[k] - g * inner_lr for k, g in grads.items()}
    qry_logits = functional_call(net, new_params, (x_qry,))
    qry_loss = F.mse_loss(qry_logits, y_qry)
    return qry_loss


meta_params = {k: v.clone().requires_grad_() for k, v in params.items()}
meta_opt = torch.optim.Adam(meta_params.values(), lr=1e-3)
for it in range(6):
    x_spt, y_spt, x_qry, y_qry = sample_tasks(4, 5)
    meta_opt.zero_grad()
    compute = vmap(loss_for_task, in_dims=(None, 0, 0, 0, 0))
    qry_losses = compute(meta_params, x_spt, y_spt, x_qry, y_qry)
    qry_losses.sum().backward()
    meta_opt.step()
    print("maml", it, fmt(qry_losses), qry_losses.grad_fn is not None)
print("meta grad keys", sorted(k for k, v in meta_params.items() if v.grad is not None))

# --- ensembling with buffers: BatchNorm stats live in the stacked buffers ---
class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.bn = nn.BatchNorm1d(4)

    def forward(self, x):
        return F.relu(self.bn(self.fc(x)))


models = [Small() for _ in range(3)]
sp, sb = func.stack_module_state(models)
print("stacked", sorted(sp), sorted(sb), tuple(sp["fc.weight"].shape),
      sp["fc.weight"].requires_grad, sp["fc.weight"].is_leaf, sb["bn.num_batches_tracked"].tolist())
base = copy.deepcopy(models[0]).to("meta")


def fmodel(p, b, x):
    return functional_call(base, (p, b), (x,))


x = torch.randn(5, 3)
out = vmap(fmodel, in_dims=(0, 0, None))(sp, sb, x)
print("ensemble out", tuple(out.shape), fmt(out[1]))
print("running mean after", fmt(sb["bn.running_mean"][2]), sb["bn.num_batches_tracked"].tolist())
ref = models[2](x)
print("matches model 2", torch.allclose(ref, out[2], atol=1e-6),
      fmt(models[2].bn.running_mean))
loss = out.pow(2).mean()
loss.backward()
print("stacked grad", fmt(sp["fc.weight"].grad[0]), sp["bn.weight"].grad.shape)

# --- functional_call corners ---
m = nn.Linear(2, 2)
a = {"weight": torch.eye(2)}
b = {"bias": torch.ones(2)}
print("two dicts", functional_call(m, (a, b), (torch.tensor([[1.0, 2.0]]),)).tolist())
try:
    functional_call(m, ({"weight": torch.eye(2)}, {"weight": torch.eye(2)}), (torch.ones(1, 2),))
except Exception as e:
    print(type(e).__name__, e)
try:
    functional_call(m, {"weight": torch.eye(2)}, (torch.ones(1, 2),), strict=True)
except Exception as e:
    print(type(e).__name__, e)
try:
    functional_call(m, {"weight": torch.eye(2), "bias": torch.zeros(2), "extra": torch.ones(1)},
                    (torch.ones(1, 2),), strict=True)
except Exception as e:
    print(type(e).__name__, e)


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(5, 3)
        self.out = nn.Linear(3, 5, bias=False)
        self.out.weight = self.emb.weight

    def forward(self, idx):
        return self.out(self.emb(idx))


tied = Tied()
w = torch.arange(15.0).reshape(5, 3) / 10
idx = torch.tensor([1, 3])
print("tied", functional_call(tied, {"emb.weight": w}, (idx,))[0].tolist())
print("untied", functional_call(tied, {"emb.weight": w}, (idx,), tie_weights=False)[0, :3].tolist())
print("kwargs", functional_call(m, dict(m.named_parameters()), args=(),
                               kwargs={"input": torch.ones(1, 2)}).shape)

# --- grad/jac/hessian variants ---
def f(x, y, scale):
    z = (x * y).sin().sum() * scale
    return z, {"norm": x.norm()}


x, y = torch.randn(3), torch.randn(3)
gx, gy = grad(f, argnums=(0, 1), has_aux=True)(x, y, 2.0)[0]
print("argnums", fmt(gx), fmt(gy))
(g, aux) = grad(f, has_aux=True)(x, y, 2.0)
print("aux", round(aux["norm"].item(), 5), fmt(g))
(g, (val, aux)) = func.grad_and_value(f, has_aux=True)(x, y, 0.5)
print("grad_and_value", fmt(g), round(val.item(), 5), sorted(aux))


def g_dict(d):
    return (d["a"] ** 2 * d["b"]).cumsum(0)


d = {"a": torch.randn(3), "b": torch.randn(3)}
jr = func.jacrev(g_dict)(d)
jf = func.jacfwd(g_dict)(d)
print("jac dict", sorted(jr), tuple(jr["a"].shape), torch.allclose(jr["b"], jf["b"]),
      fmt(jr["a"][2]))

lin = nn.Linear(3, 1)
pd = {k: v.detach() for k, v in lin.named_parameters()}
X, Y = torch.randn(6, 3), torch.randn(6, 1)


def loss_fn(p):
    return F.mse_loss(functional_call(lin, p, (X,)), Y)


H = func.hessian(loss_fn)(pd)
print("hessian keys", sorted(H), sorted(H["weight"]), tuple(H["weight"]["weight"].shape),
      fmt(H["weight"]["weight"][0, 0]), fmt(H["bias"]["weight"][0]))
out, jvp_fn = func.linearize(torch.sin, torch.tensor([0.0, 1.0, 2.0]))
print("linearize", fmt(out), fmt(jvp_fn(torch.ones(3))), fmt(jvp_fn(torch.tensor([1.0, 0, 2]))))
res = func.jvp(lambda t: (t.exp(), t.sum()), (torch.tensor([0.0, 1.0]),), (torch.ones(2),),
               has_aux=True)
print("jvp aux", len(res), fmt(res[0]), fmt(res[1]), res[2].item())
try:
    grad(lambda t: t * 2)(torch.randn(3))
except Exception as e:
    print(type(e).__name__, e)
try:
    grad(f, argnums=3)(x, y, 2.0)
except Exception as e:
    print(type(e).__name__, e)
