"""Least squares four ways (d2l / "linear regression from scratch" + numerical-linear-algebra
notebooks): torch.vander design matrix, linalg.lstsq (all drivers), pinv, normal equations with
cholesky/cholesky_solve, QR + solve_triangular, lu_factor/lu_solve, and gradient descent."""

# compare: rtol=1e-4 atol=1e-5
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))

torch.manual_seed(42)
n, deg = 20, 3
x = torch.linspace(-1, 1, n, dtype=torch.float64)
true_w = torch.tensor([0.5, -1.0, 2.0, 0.25], dtype=torch.float64)
V = torch.vander(x, N=deg + 1, increasing=True)
print(V.shape, V.dtype, V[:3])
print(torch.vander(torch.tensor([1, 2, 3])))
y = V @ true_w + 0.05 * torch.randn(n, dtype=torch.float64)

res = torch.linalg.lstsq(V, y.unsqueeze(-1))
print(type(res).__name__, res.solution.squeeze(), res.rank, res.residuals, res.singular_values)
for driver in ["gelsy", "gelsd", "gelss"]:
    r = torch.linalg.lstsq(V, y.unsqueeze(-1), driver=driver)
    print(driver, r.solution.squeeze(), r.rank, r.singular_values.shape)

w_pinv = torch.linalg.pinv(V) @ y
print("pinv", w_pinv)
print(torch.linalg.pinv(V, rcond=1e-3).shape, torch.linalg.pinv(V.T @ V, hermitian=True).shape)

G = V.T @ V
L = torch.linalg.cholesky(G)
w_chol = torch.cholesky_solve((V.T @ y).unsqueeze(-1), L).squeeze()
print("cholesky", w_chol, torch.allclose(L @ L.mT, G))
U = torch.linalg.cholesky(G, upper=True)
print(
    torch.allclose(U, L.mT), torch.cholesky_solve((V.T @ y).unsqueeze(-1), U, upper=True).squeeze()
)
Lex, info = torch.linalg.cholesky_ex(G)
print(info, info.dtype)

Q, R = torch.linalg.qr(V)
print(Q.shape, R.shape, torch.allclose(Q.T @ Q, torch.eye(deg + 1, dtype=torch.float64)))
w_qr = torch.linalg.solve_triangular(R, (Q.T @ y).unsqueeze(-1), upper=True).squeeze()
print("qr", w_qr)
Qc, Rc = torch.linalg.qr(V, mode="complete")
print(Qc.shape, Rc.shape, Rc[deg + 1 :].abs().max())
Lsolve = torch.linalg.solve_triangular(L, torch.eye(deg + 1, dtype=torch.float64), upper=False)
print(torch.allclose(Lsolve, torch.linalg.inv(L)))
print(
    torch.linalg.solve_triangular(
        U, torch.ones(2, deg + 1, dtype=torch.float64), upper=True, left=False
    )
)
print(
    torch.linalg.solve_triangular(
        L, torch.ones(deg + 1, 1, dtype=torch.float64), upper=False, unitriangular=True
    ).squeeze()
)

LU, piv = torch.linalg.lu_factor(G)
print(LU.shape, piv, piv.dtype)
w_lu = torch.linalg.lu_solve(LU, piv, (V.T @ y).unsqueeze(-1)).squeeze()
print("lu", w_lu)
P, Lm, Um = torch.linalg.lu(G)
print(torch.allclose(P @ Lm @ Um, G), Lm.diagonal(), Um.diagonal())
P2, L2, U2 = torch.lu_unpack(LU, piv)
print(torch.allclose(P2, P), torch.allclose(L2, Lm))
print(torch.linalg.lu_solve(LU, piv, torch.ones(1, deg + 1, dtype=torch.float64), left=False))
print(
    torch.linalg.lu_solve(
        LU, piv, torch.ones(deg + 1, 1, dtype=torch.float64), adjoint=True
    ).squeeze()
)
LUx, pivx, infox = torch.linalg.lu_factor_ex(G)
print(infox, torch.equal(pivx, piv))
print(torch.linalg.solve(G, V.T @ y))
print(torch.linalg.solve(G, torch.ones(2, deg + 1, dtype=torch.float64), left=False))
print(torch.linalg.solve_ex(G, V.T @ y))

w = torch.zeros(deg + 1, dtype=torch.float64, requires_grad=True)
opt_lr = 0.3
for step in range(15):
    loss = ((V @ w - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= opt_lr * w.grad
        w.grad.zero_()
    if step % 5 == 0:
        print(f"step {step}: loss {loss.item():.6f}")
print("gd", w.detach())

resid = V @ w_qr - y
print(f"rss {resid.pow(2).sum().item():.6f}  r2 {1 - resid.var() / y.var():.6f}")
A32 = V.float()
r32 = torch.linalg.lstsq(A32, y.float().unsqueeze(-1))
print(r32.solution.dtype, r32.residuals.shape, r32.rank)
Ab = torch.randn(2, 5, 3)
Bb = torch.randn(2, 5, 2)
print(torch.linalg.lstsq(Ab, Bb).solution.shape)
try:
    torch.linalg.lstsq(V, y)
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    torch.linalg.lstsq(V, y.unsqueeze(-1), driver="foo")
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    torch.linalg.solve_triangular(L, y, upper=False)
except RuntimeError as e:
    print(type(e).__name__, e)
print("RESULT: ok")
