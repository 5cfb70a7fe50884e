"""Exact Gaussian-process regression (Rasmussen & Williams, Algorithm 2.1) in the style of the
well-known PyTorch GP-from-scratch notebooks: RBF kernel, Cholesky, cholesky_solve,
solve_triangular, log marginal likelihood maximised with Adam; float64 throughout."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn

torch.set_default_dtype(torch.float64)


class GP(nn.Module):
    def __init__(self, length_scale=1.0, amplitude=1.0, noise_scale=0.1):
        super().__init__()
        self.log_length_scale = nn.Parameter(torch.tensor(math.log(length_scale)))
        self.log_amplitude = nn.Parameter(torch.tensor(math.log(amplitude)))
        self.log_noise = nn.Parameter(torch.tensor(math.log(noise_scale)))

    def kernel(self, x1, x2):
        d2 = torch.cdist(x1 / self.log_length_scale.exp(), x2 / self.log_length_scale.exp()) ** 2
        return self.log_amplitude.exp() ** 2 * torch.exp(-0.5 * d2)

    def fit(self, X, y):
        self.X, self.y = X, y
        K = self.kernel(X, X) + self.log_noise.exp() ** 2 * torch.eye(len(X))
        self.L = torch.linalg.cholesky(K)
        self.alpha = torch.cholesky_solve(y.unsqueeze(1), self.L)
        return K

    def neg_log_marginal_likelihood(self, X, y):
        K = self.fit(X, y)
        n = len(X)
        nll = 0.5 * y @ self.alpha.squeeze(1) + torch.log(torch.diagonal(self.L)).sum() \
            + 0.5 * n * math.log(2 * math.pi)
        nll2 = 0.5 * y @ torch.linalg.solve(K, y) + 0.5 * torch.logdet(K) \
            + 0.5 * n * math.log(2 * math.pi)
        return nll, nll2

    def predict(self, Xs):
        Ks = self.kernel(self.X, Xs)
        mean = Ks.t() @ self.alpha.squeeze(1)
        v = torch.linalg.solve_triangular(self.L, Ks, upper=False)
        var = self.kernel(Xs, Xs).diagonal() - (v ** 2).sum(0)
        return mean, var


torch.manual_seed(0)
X = torch.rand(12, 1) * 6
y = torch.sin(X).squeeze(1) + 0.1 * torch.randn(12)
gp = GP()
print(gp)
print([(n, round(p.item(), 4)) for n, p in gp.named_parameters()])
opt = torch.optim.Adam(gp.parameters(), lr=0.05)
for i in range(20):
    opt.zero_grad()
    nll, nll2 = gp.neg_log_marginal_likelihood(X, y)
    nll.backward()
    opt.step()
    if i % 5 == 0:
        print(f"iter {i:2d} nll {nll.item():.6f} {nll2.item():.6f}"
              f" ls {gp.log_length_scale.exp().item():.4f}")

Xs = torch.linspace(0, 6, 7).unsqueeze(1)
with torch.no_grad():
    gp.fit(X, y)
    mean, var = gp.predict(Xs)
print(mean)
print(var.clamp_min(0).sqrt())
L = gp.L.detach()
z = torch.linalg.solve_triangular(L, y.unsqueeze(1), upper=False)
a2 = torch.linalg.solve_triangular(L.T, z, upper=True)
print(torch.allclose(a2, gp.alpha), torch.dist(L @ L.T, gp.kernel(X, X).detach()
                                             + gp.log_noise.exp().detach() ** 2 * torch.eye(12)))
Linv = torch.cholesky_inverse(L)
print(Linv.diagonal()[:4])
sign, logabsdet = torch.linalg.slogdet(L @ L.T)
print(sign, logabsdet, 2 * L.diagonal().log().sum())
mvn = torch.distributions.MultivariateNormal(torch.zeros(12), scale_tril=L)
print(mvn.log_prob(y), torch.triangular_solve(y.unsqueeze(1), L, upper=False).solution[:3].T)
print(y.dtype, L.dtype)
def nll_of(theta):
    ls, amp, noise = theta.exp()
    K = amp ** 2 * torch.exp(-0.5 * ((X - X.T) / ls) ** 2) \
        + noise ** 2 * torch.eye(len(X))
    L = torch.linalg.cholesky(K)
    a = torch.cholesky_solve(y.unsqueeze(1), L)
    return 0.5 * (y.unsqueeze(1) * a).sum() + L.diagonal().log().sum()


theta = torch.stack([p.detach() for p in gp.parameters()])
print(torch.autograd.functional.jacobian(nll_of, theta))
print(torch.autograd.functional.hessian(nll_of, theta))
Lex, info = torch.linalg.cholesky_ex(gp.kernel(X, X).detach() + 1e-6 * torch.eye(12))
print(info, torch.linalg.eigh(Lex @ Lex.T).eigenvalues[-3:])
prior = torch.distributions.MultivariateNormal(torch.zeros(7), covariance_matrix=gp.kernel(
    Xs, Xs).detach() + 1e-6 * torch.eye(7))
torch.manual_seed(3)
print(prior.rsample((2,)).shape, prior.entropy())
print("RESULT:", nll.item())
