"""Second-order optimisation written on autograd, shrunk from rfeinman/pytorch-minimize
(Newton-CG with Hessian-vector products by double backward, a dogleg-free trust-region Newton
step with the full Hessian from torch.autograd.functional.hessian), plus the
autograd.functional options such code toggles: vectorize=True, strategy='forward-mode',
outer_jacobian_strategy, create_graph, strict=True errors, hvp/vhp on tuples; forward-mode
directional derivatives with forward_ad (dual_level, make_dual on a module's parameters with
torch.func.functional_call, unpack_dual's fields), and a Gauss-Newton step from jacobian."""
# compare: rtol=1e-4 atol=1e-6
import importlib
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
AF = importlib.import_module(LIB + ".autograd.functional")
fwAD = importlib.import_module(LIB + ".autograd.forward_ad")
func = importlib.import_module(LIB + ".func")

torch.manual_seed(0)


def fmt(t):
    return [round(v, 6) for v in t.detach().reshape(-1)[:4].tolist()]


def rosen(x):
    return torch.sum(100 * (x[..., 1:] - x[..., :-1] ** 2) ** 2 + (1 - x[..., :-1]) ** 2,
                     dim=-1)


def _cg_iters(hvp, g, max_iter=20, tol=1e-10):
    """Truncated conjugate gradient solve of H p = -g (pytorch-minimize's newton-cg core)."""
    p = torch.zeros_like(g)
    r = g.clone()
    d = -r
    rs = r.dot(r)
    for i in range(max_iter):
        Hd = hvp(d)
        curv = d.dot(Hd)
        if curv <= 0:
            if i == 0:
                p = -g
            break
        alpha = rs / curv
        p = p + alpha * d
        r = r + alpha * Hd
        rs_new = r.dot(r)
        if rs_new < tol:
            break
        d = -r + (rs_new / rs) * d
        rs = rs_new
    return p, i + 1


def newton_cg(fun, x0, max_iter=15):
    x = x0.detach().clone()
    for k in range(max_iter):
        x = x.detach().requires_grad_(True)
        f = fun(x)
        (g,) = torch.autograd.grad(f, x, create_graph=True)

        def hvp(v):
            return torch.autograd.grad(g, x, v, retain_graph=True)[0]

        p, ncg = _cg_iters(hvp, g.detach())
        # backtracking line search
        t = 1.0
        with torch.no_grad():
            while fun(x + t * p) > f - 1e-4 * t * g.dot(p) and t > 1e-8:
                t *= 0.5
            x = x + t * p
        if k % 3 == 0:
            print("  ncg", k, round(f.item(), 6), ncg, t)
    return x.detach()


x0 = torch.tensor([-1.2, 1.0, -0.5, 0.8], dtype=torch.float64)
xs = newton_cg(rosen, x0)
print("newton-cg", fmt(xs), round(rosen(xs).item(), 8))


def trust_newton(fun, x0, max_iter=12, radius=0.5):
    x = x0.clone()
    for k in range(max_iter):
        f = fun(x)
        g = AF.jacobian(fun, x)
        H = AF.hessian(fun, x, vectorize=True, outer_jacobian_strategy="forward-mode")
        step = -torch.linalg.solve(H + 1e-6 * torch.eye(len(x), dtype=x.dtype), g)
        if step.norm() > radius:
            step = step * radius / step.norm()
        pred = -(g.dot(step) + 0.5 * step.dot(H @ step))
        actual = f - fun(x + step)
        rho = (actual / pred).item()
        if rho > 0.1:
            x = x + step
        radius = radius * 2 if rho > 0.75 else (radius * 0.25 if rho < 0.25 else radius)
        if k % 4 == 0:
            print("  trust", k, round(f.item(), 6), round(rho, 4), radius)
    return x


xt = trust_newton(rosen, x0)
print("trust-newton", fmt(xt), round(rosen(xt).item(), 8))

# the same Jacobian / Hessian every way
x = torch.randn(3, dtype=torch.float64)


def f2(x):
    return torch.stack([x.prod(), (x ** 2).sum(), x.sin().dot(x)])


J = [AF.jacobian(f2, x), AF.jacobian(f2, x, vectorize=True),
     AF.jacobian(f2, x, vectorize=True, strategy="forward-mode")]
print("jacobians agree", all(torch.allclose(J[0], j) for j in J[1:]), fmt(J[0][0]))
H = [AF.hessian(rosen, x), AF.hessian(rosen, x, vectorize=True),
     AF.hessian(rosen, x, vectorize=True, outer_jacobian_strategy="forward-mode")]
print("hessians agree", all(torch.allclose(H[0], h) for h in H[1:]), fmt(H[0][1]))
try:
    AF.jacobian(f2, x, strategy="forward-mode")
except Exception as e:
    print(type(e).__name__, e)
try:
    AF.jacobian(f2, x, strategy="sideways")
except Exception as e:
    print(type(e).__name__, e)
try:
    AF.jacobian(lambda t: torch.ones(2, dtype=t.dtype), x, strict=True)
except Exception as e:
    print(type(e).__name__, e)
try:
    AF.jacobian(f2, x, strict=True, vectorize=True)
except Exception as e:
    print(type(e).__name__, e)
zero = AF.jacobian(lambda t: torch.ones(2, dtype=t.dtype), x)
print("independent output", fmt(zero), zero.requires_grad)
Jc = AF.jacobian(f2, x.requires_grad_(), create_graph=True)
print("create_graph", Jc.requires_grad, type(Jc.grad_fn).__name__ if Jc.grad_fn else None)
x = x.detach()


def two_in(a, b):
    return (a * b.exp()).sum() + (a ** 3).sum() * b.sum()


a, b = torch.randn(2, dtype=torch.float64), torch.randn(2, dtype=torch.float64)
v = (torch.ones(2, dtype=torch.float64), torch.tensor([1.0, -1.0], dtype=torch.float64))
fv, hv = AF.hvp(two_in, (a, b), v)
fv2, vh = AF.vhp(two_in, (a, b), v)
print("hvp/vhp", round(fv.item(), 6), [fmt(t) for t in hv], [fmt(t) for t in vh])
try:
    AF.hvp(two_in, (a, b), v[0])
except Exception as e:
    print(type(e).__name__, e)
Ht = AF.hessian(two_in, (a, b))
print("hessian tuple", len(Ht), len(Ht[0]), tuple(Ht[0][1].shape), fmt(Ht[0][1]))

# forward-mode directional derivative of a network's loss w.r.t. its parameters
model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1)).double()
X, Y = torch.randn(8, 3, dtype=torch.float64), torch.randn(8, 1, dtype=torch.float64)
params = {k: v.detach() for k, v in model.named_parameters()}
tangents = {k: torch.randn_like(v) for k, v in params.items()}
with fwAD.dual_level():
    duals = {k: fwAD.make_dual(params[k], tangents[k]) for k in params}
    loss = F.mse_loss(func.functional_call(model, duals, (X,)), Y)
    unpacked = fwAD.unpack_dual(loss)
    print("fwd", round(unpacked.primal.item(), 6), round(unpacked.tangent.item(), 6),
          type(unpacked).__name__, unpacked._fields)
    print("outside tangent", fwAD.unpack_dual(X).tangent)
grads = torch.autograd.grad(F.mse_loss(model(X), Y), list(model.parameters()))
dd = sum((g * tangents[k]).sum() for g, k in zip(grads, params))
print("matches reverse", round(dd.item(), 6))
try:
    with fwAD.dual_level():
        fwAD.make_dual(torch.ones(3), torch.ones(2))
except Exception as e:
    print(type(e).__name__, str(e).split("\n")[0])

# Gauss-Newton for a small curve fit with jacobian of the residuals
t = torch.linspace(0, 2, 12, dtype=torch.float64)
obs = 2.0 * torch.exp(-1.3 * t) + 0.01 * torch.randn(12, dtype=torch.float64)
theta = torch.tensor([1.0, -0.5], dtype=torch.float64)
for it in range(6):
    def resid(th):
        return th[0] * torch.exp(th[1] * t) - obs
    r = resid(theta)
    Jr = AF.jacobian(resid, theta)
    theta = theta - torch.linalg.lstsq(Jr, r.unsqueeze(1)).solution.squeeze(1)
    print("gauss-newton", it, round(r.pow(2).sum().item(), 8), fmt(theta))
