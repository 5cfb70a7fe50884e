"""The torch.linalg migration notes (deprecated torch.* linear algebra -> torch.linalg), run as a
script: torch.svd vs linalg.svd, torch.qr, torch.lu/lu_unpack/lu_solve, triangular_solve,
cholesky/cholesky_inverse, geqrf/householder_product/ormqr, ldl_factor/ldl_solve, eig with complex
output and its gradient, chain_matmul/ger/outer, the removed functions' errors, and batched
broadcasting rules."""

# compare: rtol=1e-4 atol=1e-5
import importlib
import os
import warnings

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
warnings.simplefilter("ignore")

torch.manual_seed(0)
A = torch.randn(4, 4, dtype=torch.float64)
B = torch.randn(4, 2, dtype=torch.float64)

U, S, V = torch.svd(A)
U2, S2, Vh = torch.linalg.svd(A, full_matrices=False)
print(
    "svd", torch.allclose(S, S2), torch.allclose(V.mH.abs(), Vh.abs()), type(torch.svd(A)).__name__
)
print(
    torch.svd(torch.randn(5, 3, dtype=torch.float64), some=False).U.shape,
    torch.svd(A, compute_uv=False).U.abs().sum(),
)
Q, R = torch.qr(A)
Q2, R2 = torch.linalg.qr(A)
print("qr", torch.allclose(Q, Q2), torch.qr(torch.randn(5, 3), some=False).Q.shape)
Acopy = A.clone()
LU, piv = torch.linalg.lu_factor(Acopy)
LU_, piv_ = torch.lu(A)
print("lu", torch.equal(piv, piv_), piv)
LU3, piv3, infos = torch.lu(A, get_infos=True)
print(infos, type(torch.linalg.lu_factor(A)).__name__)
print("lu_solve", torch.lu_solve(B, LU, piv).sub(torch.linalg.solve(A, B)).abs().max() < 1e-12)
P, L, Uu = torch.lu_unpack(LU, piv)
print(P, torch.lu_unpack(LU, piv, unpack_data=False).L.numel())
T = torch.triu(A) + 4 * torch.eye(4, dtype=torch.float64)
sol = torch.triangular_solve(B, T)
print("triangular_solve", type(sol).__name__, sol.solution[:, 0], sol.cloned_coefficient.shape)
print(torch.allclose(sol.solution, torch.linalg.solve_triangular(T, B, upper=True)))
print(torch.triangular_solve(B, T.mT, upper=False, transpose=True).solution[:, 1])
SPD = A @ A.mT + torch.eye(4, dtype=torch.float64)
Lc = torch.cholesky(SPD)
print(
    "cholesky", torch.allclose(Lc, torch.linalg.cholesky(SPD)), torch.cholesky(SPD, upper=True)[0]
)
print(
    torch.allclose(torch.cholesky_inverse(Lc), torch.linalg.inv(SPD)),
    torch.cholesky_inverse(Lc.mT, upper=True)[0],
)

a, tau = torch.geqrf(A)
print("geqrf", a.shape, tau)
Qh = torch.linalg.householder_product(a, tau)
print(torch.allclose(Qh.abs(), Q.abs()), torch.orgqr(a, tau).shape)
print(
    "ormqr",
    torch.ormqr(a, tau, B)[:, 0],
    torch.allclose(torch.ormqr(a, tau, B, transpose=True), Qh.mT @ B),
)
LD, pivots = torch.linalg.ldl_factor(SPD)
print("ldl", LD.diagonal(), pivots)
print(torch.allclose(torch.linalg.ldl_solve(LD, pivots, B), torch.linalg.solve(SPD, B)))
print(torch.linalg.ldl_factor_ex(SPD).info)

w, V = torch.linalg.eig(A)
print("eig", w.dtype, V.dtype, torch.allclose(A.to(V.dtype) @ V, V * w))
print(torch.linalg.eigvals(A).abs().sort().values)
Ar = A.clone().requires_grad_()
torch.linalg.eigvals(Ar).abs().sum().backward()
print("eig grad", Ar.grad[0])
print(torch.chain_matmul(A, B, B.mT).shape, torch.linalg.multi_dot([A, B]).shape)
print(torch.ger(B[:, 0], B[:, 1]).shape, torch.outer(B[:, 0], B[:, 1])[0])
print(torch.linalg.vander(torch.tensor([1.0, 2.0, 3.0])), torch.linalg.vecdot(B.mT, B.mT))
print(
    torch.linalg.cross(torch.randn(2, 3), torch.randn(1, 3)).shape,
    torch.cross(B[:3].mT, B[:3].mT, dim=1),
)

batch = torch.randn(3, 4, 4, dtype=torch.float64)
rhs = torch.randn(4, 1, dtype=torch.float64)
print(
    "batched solve",
    torch.linalg.solve(batch, rhs).shape,
    torch.linalg.inv(batch).shape,
    torch.linalg.det(batch),
)
print(torch.linalg.solve(batch, torch.randn(3, 4, dtype=torch.float64)).shape)
print(
    torch.linalg.cholesky(batch @ batch.mT + torch.eye(4, dtype=torch.float64)).shape,
    torch.linalg.svdvals(batch)[:, 0],
    torch.linalg.matrix_rank(batch),
)
print(torch.linalg.pinv(batch[:, :, :2]).shape, torch.linalg.qr(batch[:, :, :2]).Q.shape)

for name, call in [
    ("symeig", lambda: torch.symeig(SPD)),
    ("eig", lambda: torch.eig(A)),
    ("matrix_rank", lambda: torch.matrix_rank(A)),
    ("lstsq", lambda: torch.lstsq(B, A)),
    ("solve", lambda: torch.solve(B, A)),
]:
    try:
        call()
        print(name, "ok")
    except (RuntimeError, AttributeError) as e:
        print(name, type(e).__name__, e)
try:
    torch.linalg.eigh(A.float(), UPLO="X")
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    torch.linalg.cholesky(A)
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    torch.linalg.householder_product(a, torch.randn(5, dtype=torch.float64))
except RuntimeError as e:
    print(type(e).__name__, e)
print("RESULT: ok")
