"""nn.utils as training code uses it: parametrize.register_parametrization with a custom
Symmetric / PositiveDiag parametrization (right_inverse, cached, unsafe), orthogonal (matrix_exp,
cayley, householder), the new parametrizations.weight_norm / spectral_norm next to the old
nn.utils.weight_norm / spectral_norm (their state_dict keys and reprs), remove_weight_norm,
clip_grad_norm_ (inf norm, error_if_nonfinite, foreach), clip_grad_value_, get_total_norm /
clip_grads_with_norm_, parameters_to_vector / vector_to_parameters, fuse_conv_bn_eval and
torch.func.functional_call, trained a few steps."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
P = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.utils.parametrize")
parametrizations = importlib.import_module(os.environ.get("TORCH_LIB", "torch")
                                           + ".nn.utils.parametrizations")
fusion = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.utils.fusion")

torch.manual_seed(0)


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)

    def right_inverse(self, A):
        return A.triu()


class PositiveDiag(nn.Module):
    def forward(self, X):
        return X - torch.diag(X.diagonal()) + torch.diag(X.diagonal().exp())


layer = nn.Linear(3, 3)
P.register_parametrization(layer, "weight", Symmetric())
print(layer)
print(P.is_parametrized(layer), P.is_parametrized(layer, "bias"),
      P.is_parametrized(layer, "weight"))
print(torch.allclose(layer.weight, layer.weight.T))
print(type(layer).__name__, type(layer).__bases__[0].__name__)
print(sorted(layer.state_dict().keys()))
print(layer.parametrizations.weight.original.shape)
print([n for n, _ in layer.named_parameters()])
X = torch.rand(3, 3)
X = X + X.T
layer.weight = X
print(torch.allclose(layer.weight, X), layer.parametrizations.weight.original)
P.register_parametrization(layer, "weight", PositiveDiag())
print(layer.parametrizations.weight)
with P.cached():
    w1 = layer.weight
    w2 = layer.weight
    print(w1 is w2)
print(layer.weight is layer.weight)
P.remove_parametrizations(layer, "weight", leave_parametrized=True)
print(layer, type(layer.weight).__name__, P.is_parametrized(layer))
try:
    P.remove_parametrizations(layer, "weight")
except Exception as e:
    print(type(e).__name__, e)
try:
    P.register_parametrization(nn.Linear(3, 4), "weight", Symmetric())
except Exception as e:
    print(type(e).__name__, str(e).split("\n")[0])

for kind in ["matrix_exp", "cayley", "householder"]:
    q = parametrizations.orthogonal(nn.Linear(4, 3), orthogonal_map=kind)
    w = q.weight
    print(kind, w.shape, torch.dist(w @ w.T, torch.eye(3)).item() < 1e-5)
orth = parametrizations.orthogonal(nn.Linear(5, 5))
print(orth)
print(orth.parametrizations.weight[0].__class__.__name__)

wn = parametrizations.weight_norm(nn.Linear(4, 2), dim=0)
print(wn)
print(sorted(wn.state_dict().keys()))
print(wn.parametrizations.weight.original0.shape, wn.parametrizations.weight.original1.shape)
old = nn.utils.weight_norm(nn.Linear(4, 2), name="weight")
print(old, sorted(old.state_dict().keys()), old.weight_g.shape, old.weight_v.shape)
print(type(old.weight).__name__, old.weight.grad_fn is not None)
nn.utils.remove_weight_norm(old)
print(sorted(old.state_dict().keys()))
try:
    nn.utils.remove_weight_norm(old)
except Exception as e:
    print(type(e).__name__, e)
sn = parametrizations.spectral_norm(nn.Linear(6, 4), n_power_iterations=3)
print(sn)
print(sorted(sn.state_dict().keys()))
sn.eval()
print(torch.linalg.matrix_norm(sn.weight, 2).item() <= 1.0001)
sno = nn.utils.spectral_norm(nn.Conv2d(2, 3, 3))
print(sorted(sno.state_dict().keys()))
print(sno.weight_u.shape, sno.weight_v.shape)

model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
x, y = torch.randn(16, 4), torch.randn(16, 1)
loss = nn.functional.mse_loss(model(x), y)
loss.backward()
total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
print(f"{total.item():.5f}", total.dtype, total.shape)
print(f"{nn.utils.clip_grad_norm_(model.parameters(), 0.1, norm_type='inf').item():.5f}")
tn1 = nn.utils.clip_grad_norm_(model.parameters(), 1.0, norm_type=1.0, foreach=False)
print(f"{tn1.item():.5f}")
nn.utils.clip_grad_value_(model.parameters(), clip_value=0.01)
print(model[0].bias.grad)
grads = [p.grad for p in model.parameters()]
tn = nn.utils.get_total_norm(grads, norm_type=2.0)
print(f"{tn.item():.6f}")
nn.utils.clip_grads_with_norm_(model.parameters(), 0.005, tn)
print(f"{nn.utils.get_total_norm([p.grad for p in model.parameters()]).item():.6f}")
model[0].weight.grad[0, 0] = float("nan")
try:
    nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)
except Exception as e:
    print(type(e).__name__, str(e)[:70])
print(nn.utils.clip_grad_norm_([], 1.0))
vec = nn.utils.parameters_to_vector(model.parameters())
print(vec.shape, vec.grad_fn is not None)
nn.utils.vector_to_parameters(torch.zeros_like(vec), model.parameters())
print(model[2].weight, model[2].bias.is_leaf)
try:
    nn.utils.vector_to_parameters(vec.tolist(), model.parameters())
except Exception as e:
    print(type(e).__name__, e)

conv = nn.Conv2d(3, 4, 3, bias=False).eval()
bn = nn.BatchNorm2d(4).eval()
bn.running_mean.uniform_(-1, 1)
bn.running_var.uniform_(0.5, 2)
fused = fusion.fuse_conv_bn_eval(conv, bn)
print(fused, fused.bias is not None)
img = torch.randn(1, 3, 6, 6)
print(torch.allclose(fused(img), bn(conv(img)), atol=1e-5))

net = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), parametrizations.weight_norm(nn.Linear(5, 1)))
params = {k: v.detach().clone() for k, v in net.named_parameters()}
print(sorted(params))
xin = torch.randn(4, 3)
print(torch.allclose(torch.func.functional_call(net, params, (xin,)), net(xin)))
zeroed = dict(params, **{"0.bias": torch.zeros(5)})
print(torch.func.functional_call(net, zeroed, xin).shape)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
target = torch.randn(4, 1)
for step in range(6):
    opt.zero_grad()
    loss = nn.functional.mse_loss(net(xin), target)
    loss.backward()
    gn = nn.utils.clip_grad_norm_(net.parameters(), 1.0)
    opt.step()
    print(f"step {step} loss {loss.item():.5f} gnorm {gn.item():.5f}")
print("RESULT:", f"{loss.item():.5f}")
