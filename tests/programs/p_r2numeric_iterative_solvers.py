"""Iterative numerical methods in torch (numerical-analysis course notebooks): power iteration and
Rayleigh quotient, inverse iteration, conjugate gradient vs linalg.solve, Jacobi iteration,
Newton's method for root finding and for a system with torch.autograd.functional.jacobian/hessian,
and matrix functions (matrix_exp for an ODE, matrix_power for a Markov chain, det/slogdet/cond/
norms)."""

# compare: rtol=1e-4 atol=1e-5
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))

torch.manual_seed(0)
n = 6
M = torch.randn(n, n, dtype=torch.float64)
A = M @ M.T + n * torch.eye(n, dtype=torch.float64)
b = torch.randn(n, dtype=torch.float64)


def power_iteration(A, iters=100):
    v = torch.ones(A.shape[0], dtype=A.dtype)
    for _ in range(iters):
        v = A @ v
        v = v / torch.linalg.vector_norm(v)
    return torch.dot(v, A @ v), v


lam, v = power_iteration(A)
evals = torch.linalg.eigvalsh(A)
print(f"power iteration {lam.item():.6f} vs eigvalsh max {evals.max().item():.6f}")
print("residual", torch.linalg.norm(A @ v - lam * v) < 1e-6)
shift = torch.linalg.inv(A)
lam_min, _ = power_iteration(shift, 200)
print(f"inverse iteration {1 / lam_min.item():.6f} vs {evals.min().item():.6f}")


def conjugate_gradient(A, b, tol=1e-10, max_iter=50):
    x = torch.zeros_like(b)
    r = b - A @ x
    p = r.clone()
    rs_old = r @ r
    for i in range(max_iter):
        Ap = A @ p
        alpha = rs_old / (p @ Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = r @ r
        if torch.sqrt(rs_new) < tol:
            return x, i + 1
        p = r + (rs_new / rs_old) * p
        rs_old = rs_new
    return x, max_iter


x_cg, iters = conjugate_gradient(A, b)
x_direct = torch.linalg.solve(A, b)
print("cg iters", iters, torch.allclose(x_cg, x_direct), x_cg)

D = torch.diag(A)
R = A - torch.diag_embed(D)
x = torch.zeros(n, dtype=torch.float64)
Dd = A.diagonal() + 2 * A.abs().sum(1)
Adom = A.clone()
Adom.diagonal().copy_(Dd)
R = Adom - torch.diag(Dd)
for k in range(25):
    x = (b - R @ x) / Dd
print("jacobi", torch.linalg.norm(Adom @ x - b).item() < 1e-8, x[:3])


def f(x):
    return x**3 - 2 * x - 5


xk = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
for it in range(5):
    y = f(xk)
    (g,) = torch.autograd.grad(y, xk)
    with torch.no_grad():
        xk -= y / g
    print(f"newton {it}: x={xk.item():.12f} f={y.item():.3e}")


def F(z):
    return torch.stack([z[0] ** 2 + z[1] ** 2 - 4, torch.exp(z[0]) + z[1] - 1])


z = torch.tensor([1.0, -1.7], dtype=torch.float64)
for it in range(6):
    J = torch.autograd.functional.jacobian(F, z)
    z = z - torch.linalg.solve(J, F(z))
print("newton system", z, F(z).abs().max() < 1e-10, J.shape)


def rosen(p):
    return (1 - p[0]) ** 2 + 100 * (p[1] - p[0] ** 2) ** 2


p = torch.tensor([-1.2, 1.0], dtype=torch.float64)
for it in range(8):
    H = torch.autograd.functional.hessian(rosen, p)
    gr = torch.func.grad(rosen)(p) if hasattr(torch, "func") else None
    p = p - torch.linalg.solve(H, gr)
    print(f"newton-opt {it}: f={rosen(p).item():.6e}")
print(H, torch.linalg.eigvalsh(H))

Q = torch.tensor([[0.0, 1.0], [-1.0, 0.0]], dtype=torch.float64)
x0 = torch.tensor([1.0, 0.0], dtype=torch.float64)
for t in [0.5, 1.0, 3.14159265]:
    print("ode", t, torch.linalg.matrix_exp(Q * t) @ x0)
print(torch.matrix_exp(torch.zeros(2, 2)), torch.linalg.matrix_exp(torch.randn(2, 3, 3)).shape)
Pm = torch.tensor([[0.9, 0.1, 0.0], [0.2, 0.7, 0.1], [0.0, 0.3, 0.7]], dtype=torch.float64)
pi0 = torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64)
print("markov", pi0 @ torch.linalg.matrix_power(Pm, 50), torch.matrix_power(Pm, 0)[0])
w, V = torch.linalg.eig(Pm.T)
stat = V[:, torch.argmin((w - 1).abs())].real
print("stationary", stat / stat.sum(), w.dtype, V.dtype)
print(torch.linalg.matrix_power(Pm, -1) @ Pm)
print(torch.linalg.det(A), torch.linalg.slogdet(A), torch.logdet(A), torch.slogdet(-A).sign)
print(
    torch.linalg.cond(A),
    torch.linalg.cond(A, "fro"),
    torch.linalg.cond(A, 1),
    torch.linalg.cond(A, -2),
)
for ord_ in ["fro", "nuc", 1, -1, 2, -2, float("inf"), -float("inf")]:
    print("matrix_norm", ord_, torch.linalg.matrix_norm(A, ord=ord_).item())
for ord_ in [0, 1, 2, 3.5, float("inf"), -float("inf")]:
    print("vector_norm", ord_, torch.linalg.vector_norm(b, ord=ord_).item())
print(torch.linalg.norm(A, dim=(0, 1)), torch.norm(b, p=1), torch.dist(b, 2 * b, 3))
print("nuc", torch.norm(A, p="nuc"), torch.norm(A, p="fro", dim=(0, 1), keepdim=True))
try:
    torch.norm(A, p="bad")
except RuntimeError as e:
    print(type(e).__name__, e)
print(
    torch.linalg.diagonal(A, offset=1),
    torch.linalg.matrix_rank(A[:, :3] @ A[:3]).item(),
    torch.linalg.inv_ex(A).info,
    torch.linalg.tensorinv(torch.eye(4, dtype=torch.float64).reshape(4, 2, 2), ind=1).shape,
)
print(
    torch.linalg.tensorsolve(
        torch.eye(6, dtype=torch.float64).reshape(6, 2, 3), torch.ones(6, dtype=torch.float64)
    )
)
Ag = A.clone().requires_grad_()
torch.linalg.matrix_exp(Ag * 0.1).trace().backward()
print("grad matrix_exp", Ag.grad[0, :3])
Ag.grad = None
torch.linalg.slogdet(Ag).logabsdet.backward()
print(torch.allclose(Ag.grad, torch.linalg.inv(A).T))
try:
    torch.linalg.matrix_power(torch.randn(2, 3), 2)
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    torch.linalg.matrix_norm(b)
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    torch.linalg.vector_norm(torch.tensor([1, 2]))
except RuntimeError as e:
    print(type(e).__name__, e)
print("RESULT: ok")
