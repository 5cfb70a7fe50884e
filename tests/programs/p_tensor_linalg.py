"""A torch.linalg tutorial: solve/inv/det/eigh/svd/qr/cholesky/lstsq/norm/matrix_rank."""
# compare: rtol=1e-4 atol=1e-4
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))

torch.manual_seed(0)
A = torch.randn(3, 3, dtype=torch.float64)
b = torch.randn(3, dtype=torch.float64)
B = torch.randn(3, 2, dtype=torch.float64)
x = torch.linalg.solve(A, b)
print(x, torch.allclose(A @ x, b))
X = torch.linalg.solve(A, B)
print(X, torch.allclose(A @ X, B))
Ainv = torch.linalg.inv(A)
print(Ainv, torch.dist(A @ Ainv, torch.eye(3, dtype=torch.float64)) < 1e-12)
print(torch.linalg.det(A), torch.det(A), A.det(), torch.linalg.slogdet(A), torch.logdet(A @ A.T))
S = A @ A.T + torch.eye(3, dtype=torch.float64)
L, Q = torch.linalg.eigh(S)
print(L)
print(torch.allclose(Q @ torch.diag(L) @ Q.T, S), torch.linalg.eigvalsh(S))
U, Sv, Vh = torch.linalg.svd(A)
print(Sv, torch.allclose(U @ torch.diag(Sv) @ Vh, A))
print(torch.linalg.svdvals(A), torch.linalg.svd(torch.randn(4, 2, dtype=torch.float64),
                                                   full_matrices=False).U.shape)
Qm, R = torch.linalg.qr(A)
print(torch.allclose(Qm @ R, A), R.abs().triu().shape, torch.linalg.qr(A, mode='r').R.abs())
C = torch.linalg.cholesky(S)
print(C, torch.allclose(C @ C.T, S), torch.cholesky_solve(B, C))
print(torch.cholesky_inverse(C))
Aover = torch.randn(5, 3, dtype=torch.float64)
bover = torch.randn(5, 2, dtype=torch.float64)
sol = torch.linalg.lstsq(Aover, bover)
print(sol.solution, type(sol).__name__)
print(torch.linalg.norm(A), torch.linalg.norm(b), torch.linalg.norm(A, ord=2),
      torch.linalg.norm(A, 'fro'), torch.linalg.norm(A, ord=float('inf')), torch.linalg.norm(A, 1))
print(torch.linalg.vector_norm(b, ord=1), torch.linalg.vector_norm(A, dim=1),
      torch.linalg.matrix_norm(A, ord='nuc'), torch.norm(A), A.norm(dim=0), b.norm(p=3))
R1 = torch.randn(4, 1, dtype=torch.float64) @ torch.randn(1, 4, dtype=torch.float64)
print(torch.linalg.matrix_rank(A), torch.linalg.matrix_rank(R1), torch.linalg.matrix_rank(S,
                                                                                    hermitian=True))
print(torch.linalg.pinv(Aover).shape, torch.allclose(torch.linalg.pinv(A), Ainv))
print(torch.linalg.matrix_power(A, 3), torch.matrix_exp(0.1 * A))
print(torch.linalg.cond(A), torch.linalg.cross(torch.tensor([1.0, 0, 0]),
                                                torch.tensor([0.0, 1, 0])))
print(torch.linalg.multi_dot([A, A, B]), torch.linalg.vecdot(b, b), torch.trace(A))
print(torch.linalg.eigvals(S).real.sort().values, torch.linalg.solve_triangular(
    torch.triu(A) + 3 * torch.eye(3, dtype=torch.float64), B, upper=True))
print(torch.linalg.householder_product(*torch.geqrf(A)).shape if hasattr(torch, 'geqrf')
      else (3, 3))
A32 = torch.randn(2, 3, 3)
print(torch.linalg.inv(A32).shape, torch.linalg.det(A32), torch.linalg.norm(A32, dim=(1, 2)))
Ag = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
torch.linalg.det(Ag).backward()
print(Ag.grad, torch.allclose(Ag.grad, torch.linalg.det(Ag) * torch.linalg.inv(Ag).T))
Sg = S.clone().requires_grad_()
torch.linalg.eigvalsh(Sg).sum().backward()
print(Sg.grad)
try:
    torch.linalg.inv(torch.zeros(2, 2))
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    torch.linalg.cholesky(-torch.eye(2))
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    torch.linalg.solve(torch.randn(2, 3), torch.randn(2))
except RuntimeError as e:
    print(type(e).__name__, e)
print("RESULT: ok")
