"""torch.special in statistics code (Gaussian CDF/quantiles, log-gamma likelihoods, entropy,
logsumexp mixtures, Bessel-based von Mises), after the torch.special docs examples and the
"probabilistic modelling from scratch" notebooks: hand-written Normal/Gamma/Beta/Poisson
log-densities checked against torch.distributions, and a Gamma MLE fitted by Newton steps."""

# compare: rtol=1e-4 atol=1e-5
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
special = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".special")

torch.manual_seed(0)
x = torch.linspace(-3, 3, 7)
print("erf", torch.special.erf(x))
print("erfc", torch.special.erfc(x), torch.erfc(x[:2]))
print("erfcx", special.erfcx(x))
print(
    "erfinv",
    torch.special.erfinv(torch.tensor([-0.9, 0.0, 0.5, 0.99])),
    torch.erfinv(torch.tensor(1.0)),
)
print("ndtr", special.ndtr(x))
print("log_ndtr", special.log_ndtr(torch.tensor([-10.0, -1.0, 0.0, 5.0])))
p = torch.tensor([0.025, 0.5, 0.975])
print("ndtri", special.ndtri(p), torch.allclose(special.ndtr(special.ndtri(p)), p))
print(
    "expit/logit",
    special.expit(x),
    special.logit(torch.tensor([0.1, 0.5, 0.9])),
    special.logit(torch.tensor([0.0, 1.0]), eps=1e-6),
)
print(
    "gammaln", special.gammaln(torch.tensor([0.5, 1.0, 5.0, 10.5])), torch.lgamma(torch.tensor(4.0))
)
print(
    "digamma", special.digamma(torch.tensor([0.5, 1.0, 2.0, 10.0])), special.psi(torch.tensor(1.0))
)
print(
    "polygamma",
    special.polygamma(1, torch.tensor([1.0, 2.0])),
    torch.polygamma(2, torch.tensor(3.0)),
)
print(
    "multigammaln",
    special.multigammaln(torch.tensor([2.5, 3.0]), 2),
    torch.mvlgamma(torch.tensor(4.0), p=3),
)
print(
    "gammainc",
    special.gammainc(torch.tensor([1.0, 2.0]), torch.tensor([0.5, 3.0])),
    special.gammaincc(torch.tensor([1.0, 2.0]), torch.tensor([0.5, 3.0])),
)
print(
    "xlogy",
    special.xlogy(torch.tensor([0.0, 1.0, 2.0]), torch.tensor([0.0, 3.0, 0.5])),
    torch.xlogy(2.0, torch.tensor([4.0])),
    special.xlog1py(torch.tensor([0.0, 2.0]), torch.tensor([-1.0, 1.0])),
)
print("entr", special.entr(torch.tensor([-1.0, 0.0, 0.25, 1.0])))
print(
    "i0",
    special.i0(x),
    torch.i0(torch.tensor(1.0)),
    special.i0e(x),
    special.i1(x[4:]),
    special.i1e(x[4:]),
)
print("sinc", special.sinc(torch.tensor([0.0, 0.5, 1.0])), special.round(torch.tensor([1.5, 2.5])))
print(
    "exp2/expm1/log1p",
    special.exp2(torch.tensor([3.0])),
    special.expm1(torch.tensor([1e-8])),
    special.log1p(torch.tensor([1e-8])),
)
print(
    "bessel",
    special.bessel_j0(torch.tensor([0.0, 1.0, 5.0])),
    special.bessel_j1(torch.tensor([1.0])),
    special.modified_bessel_i0(torch.tensor([1.0])),
    special.scaled_modified_bessel_k0(torch.tensor([2.0])),
)
print(
    "zeta",
    special.zeta(torch.tensor([2.0, 3.0]), torch.tensor(1.0)),
    special.spherical_bessel_j0(torch.tensor([0.5, 2.0])),
)
print(
    "hermite",
    special.hermite_polynomial_h(torch.tensor([0.5]), 3),
    special.chebyshev_polynomial_t(torch.tensor([0.3]), 4),
    special.legendre_polynomial_p(torch.tensor([0.3]), 2),
)

logits = torch.randn(4, 5)
print(
    "logsumexp",
    special.logsumexp(logits, dim=1),
    torch.logsumexp(logits, dim=-1, keepdim=True).shape,
)
print("softmax", special.softmax(logits, dim=1).sum(1), special.log_softmax(logits, 1)[0])
print(
    torch.logsumexp(torch.tensor([-float("inf"), -float("inf")]), 0),
    torch.logsumexp(torch.tensor([float("inf"), 1.0]), 0),
)
print(
    torch.logaddexp(torch.tensor([1.0, -100.0]), torch.tensor([2.0, -100.0])),
    torch.logaddexp2(torch.tensor([1.0]), torch.tensor([1.0])),
)

data = torch.randn(200) * 2.0 + 1.0
mu, sigma = data.mean(), data.std()
ll = (-0.5 * ((data - mu) / sigma) ** 2 - torch.log(sigma) - 0.5 * math.log(2 * math.pi)).sum()
print(
    f"normal ll {ll.item():.4f} vs dist "
    f"{torch.distributions.Normal(mu, sigma).log_prob(data).sum().item():.4f}"
)
ci = mu + sigma / math.sqrt(200) * special.ndtri(torch.tensor([0.025, 0.975]))
print("95% CI", ci)
z = (data - mu) / sigma
print("p-values", (2 * special.ndtr(-z.abs()))[:4])

counts = torch.poisson(torch.full((50,), 3.0))
lam = counts.mean()
pois_ll = (special.xlogy(counts, lam) - lam - special.gammaln(counts + 1)).sum()
print(
    f"poisson ll {pois_ll.item():.4f} "
    f"{torch.distributions.Poisson(lam).log_prob(counts).sum().item():.4f}"
)

g = torch.distributions.Gamma(torch.tensor(2.5), torch.tensor(1.5)).sample((300,))
s = torch.log(g.mean()) - torch.log(g).mean()
alpha = (3 - s + torch.sqrt((s - 3) ** 2 + 24 * s)) / (12 * s)
for it in range(4):
    f = torch.log(alpha) - special.digamma(alpha) - s
    fp = 1 / alpha - special.polygamma(1, alpha)
    alpha = alpha - f / fp
    print(f"newton {it}: alpha {alpha.item():.5f} f {f.item():.3e}")
beta = alpha / g.mean()
gamma_ll = (
    alpha * torch.log(beta) - special.gammaln(alpha) + (alpha - 1) * torch.log(g) - beta * g
).sum()
print(
    f"gamma ll {gamma_ll.item():.4f} "
    f"{torch.distributions.Gamma(alpha, beta).log_prob(g).sum().item():.4f}"
)

a_, b_ = torch.tensor(2.0), torch.tensor(3.0)
u = torch.tensor([0.1, 0.5, 0.9])
log_beta_fn = special.gammaln(a_) + special.gammaln(b_) - special.gammaln(a_ + b_)
beta_lp = special.xlogy(a_ - 1, u) + special.xlog1py(b_ - 1, -u) - log_beta_fn
print("beta lp", beta_lp, torch.distributions.Beta(a_, b_).log_prob(u))

kappa, loc = torch.tensor(2.0), torch.tensor(0.5)
theta = torch.tensor([0.0, 0.5, 3.0])
vm = kappa * torch.cos(theta - loc) - math.log(2 * math.pi) - torch.log(special.i0(kappa))
print("von mises", vm, torch.distributions.VonMises(loc, kappa).log_prob(theta))

probs = torch.softmax(torch.randn(3, 4), -1)
print("entropy", special.entr(probs).sum(-1), torch.distributions.Categorical(probs).entropy())

t = torch.tensor([0.3, 1.7], requires_grad=True)
y = (
    special.gammaln(t).sum()
    + special.erf(t).sum()
    + special.ndtri(t / 2).sum()
    + special.i0(t).sum()
)
y.backward()
print("grad", t.grad, type(y.grad_fn).__name__)
q = torch.tensor([0.2, 0.8], dtype=torch.float64, requires_grad=True)
print(torch.autograd.gradcheck(lambda v: special.erfinv(v) * special.digamma(v + 1), (q,)))
print(special.erf(torch.tensor([1, 2])).dtype, special.gammaln(torch.tensor([3])).dtype)
try:
    special.polygamma(-1, torch.tensor([1.0]))
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    special.zeta(torch.tensor([2.0 + 1j]), torch.tensor(1.0))
except (RuntimeError, NotImplementedError) as e:
    print(type(e).__name__, e)
print("RESULT: ok")
