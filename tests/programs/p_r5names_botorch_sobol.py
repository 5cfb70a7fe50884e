"""BoTorch-style Bayesian optimisation, written in plain torch as BoTorch does internally:
``draw_sobol_samples`` (botorch/utils/sampling.py: a scrambled, seeded ``SobolEngine`` scaled to
the bounds) for the initial design, an exact GP with an RBF kernel fitted by maximising the
marginal likelihood, ``SobolQMCNormalSampler`` base samples (botorch/sampling/normal.py:
``draw_sobol_normal_samples``, Sobol points through the inverse normal CDF), qExpectedImprovement
(botorch/acquisition/monte_carlo.py) and ``gen_batch_initial_conditions`` + gradient ascent on
the acquisition from Sobol raw samples (botorch/optim/initializers.py), on the Branin function."""

import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
SobolEngine = importlib.import_module(
    os.environ.get("TORCH_LIB", "torch") + ".quasirandom"
).SobolEngine

torch.manual_seed(0)
dtype = torch.double


def branin(X):
    x1, x2 = X[..., 0] * 15 - 5, X[..., 1] * 15
    t1 = x2 - 5.1 / (4 * math.pi**2) * x1**2 + 5 / math.pi * x1 - 6
    return -(t1**2 + 10 * (1 - 1 / (8 * math.pi)) * torch.cos(x1) + 10)


def draw_sobol_samples(bounds, n, q, seed=None):
    """botorch.utils.sampling.draw_sobol_samples."""
    lower, upper = bounds
    d = lower.shape[-1]
    engine = SobolEngine(q * d, scramble=True, seed=seed)
    samples_raw = engine.draw(n, dtype=lower.dtype)
    samples_raw = samples_raw.view(n, q, d)
    return lower + (upper - lower) * samples_raw


def draw_sobol_normal_samples(d, n, dtype=None, seed=None):
    """botorch.utils.sampling.draw_sobol_normal_samples."""
    engine = SobolEngine(dimension=d, scramble=True, seed=seed)
    samples = engine.draw(n, dtype=torch.float if dtype is None else dtype)
    v = 0.5 + (1 - torch.finfo(samples.dtype).eps) * (samples - 0.5)
    return torch.erfinv(2 * v - 1) * math.sqrt(2)


class ExactGP(torch.nn.Module):
    def __init__(self, X, Y):
        super().__init__()
        self.X, self.Y = X, Y
        self.raw_ls = torch.nn.Parameter(torch.zeros(X.shape[-1], dtype=dtype))
        self.raw_os = torch.nn.Parameter(torch.zeros((), dtype=dtype))
        self.raw_noise = torch.nn.Parameter(torch.tensor(-4.0, dtype=dtype))
        self.mean = torch.nn.Parameter(torch.zeros((), dtype=dtype))

    def kernel(self, A, B):
        ls = torch.nn.functional.softplus(self.raw_ls)
        d2 = ((A.unsqueeze(-2) - B.unsqueeze(-3)) / ls).pow(2).sum(-1)
        return torch.nn.functional.softplus(self.raw_os) * torch.exp(-0.5 * d2)

    def mll(self):
        n = self.X.shape[0]
        K = self.kernel(self.X, self.X) + (
            torch.nn.functional.softplus(self.raw_noise) + 1e-6
        ) * torch.eye(n, dtype=dtype)
        L = torch.linalg.cholesky(K)
        r = (self.Y - self.mean).unsqueeze(-1)
        alpha = torch.cholesky_solve(r, L)
        return (
            -0.5 * (r * alpha).sum() - L.diagonal().log().sum() - 0.5 * n * math.log(2 * math.pi)
        ) / n

    def posterior(self, Xq):
        n = self.X.shape[0]
        K = self.kernel(self.X, self.X) + (
            torch.nn.functional.softplus(self.raw_noise) + 1e-6
        ) * torch.eye(n, dtype=dtype)
        L = torch.linalg.cholesky(K)
        Ks = self.kernel(Xq, self.X)
        alpha = torch.cholesky_solve((self.Y - self.mean).unsqueeze(-1), L)
        mean = self.mean + (Ks @ alpha).squeeze(-1)
        v = torch.linalg.solve_triangular(L, Ks.transpose(-1, -2), upper=False)
        cov = self.kernel(Xq, Xq) - v.transpose(-1, -2) @ v
        return mean, cov + 1e-8 * torch.eye(Xq.shape[-2], dtype=dtype)


def qei(model, X, best_f, base_samples):
    """qExpectedImprovement with fixed (QMC) base samples: X is b x q x d."""
    mean, cov = model.posterior(X)
    L = torch.linalg.cholesky(cov)
    samples = mean.unsqueeze(0) + (
        L.unsqueeze(0) @ base_samples.unsqueeze(-1).unsqueeze(1)
    ).squeeze(-1)
    obj = (samples - best_f).clamp_min(0).max(dim=-1).values
    return obj.mean(dim=0)


bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=dtype)
eng = SobolEngine(dimension=2, scramble=True, seed=5)
print(repr(eng), eng.draw(3))
print("draw_base2", eng.draw_base2(0).tolist() if False else eng.reset().draw_base2(2))
try:
    eng.draw_base2(1)
except Exception as e:
    print(type(e).__name__, e)
X = draw_sobol_samples(bounds, n=8, q=1, seed=1234).squeeze(1)
Y = branin(X)
print("init X", X)
print("init Y", Y)

q = 2
for it in range(3):
    Ystd = (Y - Y.mean()) / Y.std()
    model = ExactGP(X, Ystd)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    for step in range(30):
        opt.zero_grad()
        loss = -model.mll()
        loss.backward()
        opt.step()
    print(
        "iter",
        it,
        "mll",
        round(-loss.item(), 6),
        "ls",
        torch.nn.functional.softplus(model.raw_ls).detach(),
    )
    base = draw_sobol_normal_samples(d=q, n=64, dtype=dtype, seed=it)
    print("base samples", base[:3], base.mean().item())
    raw = draw_sobol_samples(bounds, n=16, q=q, seed=100 + it)
    with torch.no_grad():
        acq_raw = qei(model, raw, Ystd.max(), base)
    idx = acq_raw.topk(3).indices
    Xc = raw[idx].clone().requires_grad_(True)
    copt = torch.optim.Adam([Xc], lr=0.02)
    for step in range(15):
        copt.zero_grad()
        val = -qei(model, Xc, Ystd.max(), base).sum()
        val.backward()
        copt.step()
        with torch.no_grad():
            Xc.clamp_(0.0, 1.0)
    with torch.no_grad():
        acq = qei(model, Xc, Ystd.max(), base)
    best = acq.argmax()
    new_x = Xc[best].detach()
    print("acq", acq, "new_x", new_x)
    X = torch.cat([X, new_x])
    Y = torch.cat([Y, branin(new_x)])
    print("best so far", Y.max().item())

engine = SobolEngine(3)
engine.fast_forward(5)
print(engine.draw(2), engine.num_generated)
out = torch.empty(0)
print(engine.draw(2, out=out) is out, out.shape)
try:
    SobolEngine(0)
except Exception as e:
    print(type(e).__name__, e)
try:
    engine.draw(2, dtype=torch.long)
except Exception as e:
    print(type(e).__name__, e)
