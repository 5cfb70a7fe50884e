"""torch.linalg in physics (quantum-mechanics / numerical linear algebra notebooks): a
tight-binding and a spin-chain Hamiltonian diagonalised with eigh, time evolution with
matrix_exp, expectation values, a particle in a box by finite differences, Cholesky/QR/solve,
truncated SVD low-rank approximation, and lstsq polynomial fits."""

import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
LA = torch.linalg

torch.manual_seed(0)

# tight-binding chain: H = -t sum |i><i+1| + h.c. (open boundary)
L, hop = 8, 1.0
H = -hop * (torch.diag(torch.ones(L - 1), 1) + torch.diag(torch.ones(L - 1), -1))
evals, evecs = LA.eigh(H)
print("tight binding levels", evals)
print("orthonormal", torch.allclose(evecs.T @ evecs, torch.eye(L), atol=1e-5))
print("ground state |psi|^2", evecs[:, 0].pow(2))
print("eigvalsh UPLO=U", LA.eigvalsh(H, UPLO="U")[:3])

# two-site Heisenberg model with Pauli matrices (complex)
sx = torch.tensor([[0, 1], [1, 0]], dtype=torch.complex128)
sy = torch.tensor([[0, -1j], [1j, 0]], dtype=torch.complex128)
sz = torch.tensor([[1, 0], [0, -1]], dtype=torch.complex128)
Hh = sum(torch.kron(s, s) for s in (sx, sy, sz))
print("H heisenberg", Hh.real)
w, v = LA.eigh(Hh)
print("heisenberg spectrum", w)
print("singlet", v[:, 0].abs() ** 2)

# time evolution psi(t) = exp(-i H t) psi0
psi0 = torch.tensor([0, 1, 0, 0], dtype=torch.complex128)
for tt in [0.0, 0.25, 0.5]:
    U = LA.matrix_exp(-1j * tt * Hh)
    psi = U @ psi0
    pop = psi.abs() ** 2
    unitary = torch.allclose(U.conj().T @ U, torch.eye(4, dtype=torch.complex128))
    print(f"t={tt:.2f} populations {pop.real.tolist()} unitary {unitary}")
    ez = (psi.conj() @ torch.kron(sz, torch.eye(2, dtype=torch.complex128)) @ psi).real
    print(f"  <sz1> = {ez.item():.6f}")

# particle in a box: -1/2 psi'' = E psi
n = 60
dx = 1.0 / (n + 1)
T = (torch.diag(torch.full((n,), 2.0, dtype=torch.float64))
     - torch.diag(torch.ones(n - 1, dtype=torch.float64), 1)
     - torch.diag(torch.ones(n - 1, dtype=torch.float64), -1)) / (2 * dx ** 2)
E = LA.eigvalsh(T)[:4]
exact = torch.tensor([(k * torch.pi) ** 2 / 2 for k in range(1, 5)], dtype=torch.float64)
print("box levels", E, "rel err", ((E - exact) / exact).abs().max().item() < 2e-3)

# Cholesky / solve / QR on an SPD "stiffness" matrix
M = torch.randn(5, 5, dtype=torch.float64)
K = M @ M.T + 5 * torch.eye(5, dtype=torch.float64)
Lc = LA.cholesky(K)
print("cholesky lower", torch.allclose(Lc, Lc.tril()), torch.allclose(Lc @ Lc.T, K))
b = torch.randn(5, 2, dtype=torch.float64)
x1 = LA.solve(K, b)
x2 = torch.cholesky_solve(b, Lc)
y = LA.solve_triangular(Lc, b, upper=False)
x3 = LA.solve_triangular(Lc.T, y, upper=True)
print("solve agree", torch.allclose(x1, x2), torch.allclose(x1, x3))
Lu, info = LA.cholesky_ex(K)
print("cholesky_ex info", info)
try:
    LA.cholesky(-K)
except Exception as e:
    print(type(e).__name__, e)
Q, R = LA.qr(M)
print("qr", Q.shape, R.shape, torch.allclose(Q @ R, M), torch.allclose(R, R.triu()))
Qr, Rr = LA.qr(M[:, :3], mode="reduced")
Qc, Rc = LA.qr(M[:, :3], mode="complete")
print("qr modes", Qr.shape, Rr.shape, Qc.shape, Rc.shape)
print("det/slogdet", f"{LA.det(K).item():.5f}", LA.slogdet(K))
print("cond", f"{LA.cond(K).item():.6f}", "rank", LA.matrix_rank(M[:, :3] @ M[:3]).item())

# low-rank approximation with a truncated SVD (Eckart-Young)
A = torch.randn(20, 4) @ torch.randn(4, 15) + 0.01 * torch.randn(20, 15)
U, S, Vh = LA.svd(A, full_matrices=False)
print("singular values", S[:6])
for k in [1, 2, 4]:
    Ak = U[:, :k] @ torch.diag(S[:k]) @ Vh[:k]
    err = LA.matrix_norm(A - Ak, ord="fro")
    print(f"rank {k} err {err.item():.4f} tail {S[k:].pow(2).sum().sqrt().item():.4f}")
print("svdvals", torch.allclose(LA.svdvals(A), S),
      "spectral norm", f"{LA.matrix_norm(A, 2).item():.4f}")
print("pinv", torch.allclose(LA.pinv(A) @ A @ LA.pinv(A), LA.pinv(A), atol=1e-4))

# least squares polynomial fit with a Vandermonde matrix
xs = torch.linspace(-1, 1, 30, dtype=torch.float64)
ys = 1.0 - 2.0 * xs + 0.5 * xs ** 3 + 0.01 * torch.randn(30, dtype=torch.float64)
V = torch.vander(xs, N=4, increasing=True)
sol = LA.lstsq(V, ys.unsqueeze(1))
print("lstsq coeffs", sol.solution.squeeze(1))
print("lstsq fields", sol.rank, sol.residuals.shape, sol.singular_values.shape)
sol2 = LA.lstsq(V, ys.unsqueeze(1), driver="gelsd")
print("gelsd rank", sol2.rank.item(), sol2.singular_values)
print("RESULT:", f"{evals[0].item():.5f}")
