"""kl_divergence over the registered pairs (torch/distributions/kl.py's table, as the docs'
"KL Divergence" section lists them), register_kl for a user class with its ambiguity warning
free path, NotImplementedError for an unregistered pair, and the validate_args checks a user
meets first (Distribution.set_default_validate_args, bad parameters, out-of-support values in
log_prob, wrong sample shapes) with their messages."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
D = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".distributions")

torch.manual_seed(0)
torch.set_printoptions(precision=5)
t = torch.tensor

pairs = [
    (D.Normal(t([0.0, 1.0]), t([1.0, 2.0])), D.Normal(t([0.5, 0.0]), t([1.5, 1.0]))),
    (D.Bernoulli(t([0.3, 0.9])), D.Bernoulli(t([0.5, 0.2]))),
    (D.Beta(t([2.0, 0.5]), t([3.0, 1.0])), D.Beta(t([1.0, 1.0]), t([1.0, 2.0]))),
    (D.Binomial(5, t([0.3, 0.6])), D.Binomial(5, t([0.5, 0.5]))),
    (D.Categorical(t([[0.2, 0.3, 0.5]])), D.Categorical(t([[0.1, 0.1, 0.8]]))),
    (D.ContinuousBernoulli(t([0.3, 0.7])), D.ContinuousBernoulli(t([0.6, 0.2]))),
    (D.Dirichlet(t([1.0, 2.0, 3.0])), D.Dirichlet(t([2.0, 2.0, 2.0]))),
    (D.Exponential(t([1.0, 3.0])), D.Exponential(t([2.0, 0.5]))),
    (D.Gamma(t([2.0, 3.0]), t([1.0, 2.0])), D.Gamma(t([1.0, 2.0]), t([0.5, 1.0]))),
    (D.Gumbel(t([0.0, 1.0]), t([1.0, 2.0])), D.Gumbel(t([1.0, 0.0]), t([2.0, 1.0]))),
    (D.Geometric(t([0.3, 0.7])), D.Geometric(t([0.5, 0.4]))),
    (D.HalfNormal(t([1.0, 2.0])), D.HalfNormal(t([2.0, 0.5]))),
    (D.Laplace(t([0.0, 1.0]), t([1.0, 2.0])), D.Laplace(t([1.0, 0.0]), t([2.0, 1.0]))),
    (D.LowRankMultivariateNormal(torch.zeros(3), t([[1.0], [0.5], [0.2]]), t([1.0, 2.0, 0.5])),
     D.LowRankMultivariateNormal(torch.ones(3), t([[0.3], [0.1], [1.0]]), t([2.0, 1.0, 1.0]))),
    (D.LowRankMultivariateNormal(torch.zeros(3), t([[1.0], [0.5], [0.2]]), t([1.0, 2.0, 0.5])),
     D.MultivariateNormal(torch.ones(3), torch.eye(3) * 2)),
    (D.MultivariateNormal(torch.zeros(2), t([[2.0, 0.3], [0.3, 1.0]])),
     D.MultivariateNormal(torch.ones(2), scale_tril=t([[1.0, 0.0], [0.4, 0.8]]))),
    (D.MultivariateNormal(torch.zeros(2), t([[2.0, 0.3], [0.3, 1.0]])),
     D.LowRankMultivariateNormal(torch.ones(2), t([[0.5], [0.5]]), t([1.0, 1.0]))),
    (D.OneHotCategorical(t([0.2, 0.8])), D.OneHotCategorical(t([0.6, 0.4]))),
    (D.Pareto(t([1.0, 2.0]), t([3.0, 4.0])), D.Pareto(t([0.5, 1.0]), t([2.0, 2.0]))),
    (D.Poisson(t([1.0, 4.0])), D.Poisson(t([2.0, 3.0]))),
    (D.Uniform(t([0.0, 1.0]), t([1.0, 2.0])), D.Uniform(t([-1.0, 0.0]), t([2.0, 3.0]))),
    (D.Uniform(t([0.0, 1.0]), t([1.0, 2.0])), D.Normal(t([0.0, 1.0]), t([1.0, 2.0]))),
    (D.Uniform(t([0.5, 1.0]), t([1.0, 2.0])), D.Gamma(t([2.0, 3.0]), t([1.0, 2.0]))),
    (D.Uniform(t([0.5, 1.0]), t([1.0, 2.0])), D.Exponential(t([2.0, 3.0]))),
    (D.Uniform(t([0.0, 1.0]), t([1.0, 2.0])), D.Gumbel(t([0.0, 1.0]), t([1.0, 2.0]))),
    (D.Uniform(t([0.2, 0.3]), t([0.6, 0.9])), D.Beta(t([2.0, 3.0]), t([1.0, 2.0]))),
    (D.Uniform(t([0.5, 1.0]), t([1.0, 2.0])), D.Pareto(t([0.5, 1.0]), t([2.0, 2.0]))),
    (D.Exponential(t([1.0, 2.0])), D.Gamma(t([2.0, 3.0]), t([1.0, 2.0]))),
    (D.Exponential(t([1.0, 2.0])), D.Normal(t([0.0, 1.0]), t([1.0, 2.0]))),
    (D.Exponential(t([1.0, 2.0])), D.Gumbel(t([0.0, 1.0]), t([1.0, 2.0]))),
    (D.Gamma(t([2.0, 3.0]), t([1.0, 2.0])), D.Exponential(t([1.0, 2.0]))),
    (D.Gamma(t([2.0, 3.0]), t([1.0, 2.0])), D.Normal(t([0.0, 1.0]), t([1.0, 2.0]))),
    (D.Gamma(t([2.0, 3.0]), t([1.0, 2.0])), D.Gumbel(t([0.0, 1.0]), t([1.0, 2.0]))),
    (D.Beta(t([2.0, 3.0]), t([1.0, 2.0])), D.Normal(t([0.0, 1.0]), t([1.0, 2.0]))),
    (D.Beta(t([2.0, 3.0]), t([1.0, 2.0])), D.Uniform(t([0.0, -1.0]), t([1.0, 2.0]))),
    (D.Beta(t([2.0, 3.0]), t([1.0, 2.0])), D.ContinuousBernoulli(t([0.3, 0.6]))),
    (D.Beta(t([2.0, 3.0]), t([1.0, 2.0])), D.Exponential(t([1.0, 2.0]))),
    (D.Beta(t([2.0, 3.0]), t([1.0, 2.0])), D.Gamma(t([2.0, 3.0]), t([1.0, 2.0]))),
    (D.Normal(t([0.0, 1.0]), t([1.0, 2.0])), D.Gumbel(t([0.0, 1.0]), t([1.0, 2.0]))),
    (D.Normal(t([0.0, 1.0]), t([1.0, 2.0])), D.Laplace(t([0.0, 1.0]), t([1.0, 2.0]))),
    (D.Laplace(t([0.0, 1.0]), t([1.0, 2.0])), D.Normal(t([0.0, 1.0]), t([1.0, 2.0]))),
    (D.Gumbel(t([0.0, 1.0]), t([1.0, 2.0])), D.Normal(t([0.0, 1.0]), t([1.0, 2.0]))),
    (D.Bernoulli(t([0.3, 0.9])), D.Poisson(t([1.0, 2.0]))),
    (D.Binomial(5, t([0.3, 0.6])), D.Poisson(t([1.0, 2.0]))),
    (D.Geometric(t([0.3, 0.6])), D.Poisson(t([1.0, 2.0]))),
    (D.Poisson(t([1.0, 2.0])), D.Bernoulli(t([0.3, 0.6]))),
    (D.Poisson(t([1.0, 2.0])), D.Binomial(5, t([0.3, 0.6]))),
    (D.Pareto(t([1.0, 2.0]), t([3.0, 4.0])), D.Exponential(t([1.0, 2.0]))),
    (D.Pareto(t([1.0, 2.0]), t([3.0, 4.0])), D.Gamma(t([2.0, 3.0]), t([1.0, 2.0]))),
    (D.Pareto(t([1.0, 2.0]), t([3.0, 4.0])), D.Normal(t([0.0, 1.0]), t([1.0, 2.0]))),
    (D.ContinuousBernoulli(t([0.3, 0.6])), D.Exponential(t([1.0, 2.0]))),
    (D.ContinuousBernoulli(t([0.3, 0.6])), D.Normal(t([0.0, 1.0]), t([1.0, 2.0]))),
    (D.ContinuousBernoulli(t([0.3, 0.6])), D.Uniform(t([0.0, -1.0]), t([1.0, 2.0]))),
    (D.Independent(D.Normal(torch.zeros(2, 3), torch.ones(2, 3)), 1),
     D.Independent(D.Normal(torch.ones(2, 3), 2 * torch.ones(2, 3)), 1)),
    (D.TransformedDistribution(D.Normal(t([0.0]), t([1.0])), [D.transforms.ExpTransform()]),
     D.TransformedDistribution(D.Normal(t([1.0]), t([2.0])), [D.transforms.ExpTransform()])),
    (D.Cauchy(t([0.0, 1.0]), t([1.0, 2.0])), D.Cauchy(t([1.0, 0.0]), t([2.0, 1.0]))),
]
for p, q in pairs:
    try:
        kl = D.kl_divergence(p, q)
        print(type(p).__name__, "||", type(q).__name__, tuple(kl.shape), kl)
    except Exception as e:
        print(type(p).__name__, "||", type(q).__name__, type(e).__name__, e)

# gradients through kl (VAE-style prior term)
mu = torch.tensor([0.3, -0.2], requires_grad=True)
rho = torch.tensor([-0.5, 0.1], requires_grad=True)
kl = D.kl_divergence(D.Normal(mu, torch.nn.functional.softplus(rho)), D.Normal(0.0, 1.0)).sum()
kl.backward()
print("kl grad", kl, mu.grad, rho.grad)


class MyNormal(D.Normal):
    pass


@D.register_kl(MyNormal, D.Normal)
def _kl_mine(p, q):
    return torch.zeros_like(p.loc) + 42.0


print("registered", D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0)))
print("parent still", D.kl_divergence(D.Normal(0.0, 1.0), MyNormal(1.0, 1.0)))

# no implementation
for p, q in [(D.VonMises(t(0.0), t(1.0)), D.Normal(0.0, 1.0)),
             (D.StudentT(t(3.0)), D.Normal(0.0, 1.0))]:
    try:
        D.kl_divergence(p, q)
    except NotImplementedError as e:
        print("NotImplementedError", e)

# validate_args paths
print("default validate", D.Distribution._validate_args)
for make in [lambda: D.Normal(t([0.0]), t([-1.0])),
             lambda: D.Bernoulli(t([1.5])),
             lambda: D.Categorical(probs=t([-0.1, 1.1])),
             lambda: D.Beta(t([0.0]), t([1.0])),
             lambda: D.Uniform(t([1.0]), t([0.0])),
             lambda: D.Poisson(t([-1.0])),
             lambda: D.Exponential(t([0.0])),
             lambda: D.Dirichlet(t([[1.0, -2.0]])),
             lambda: D.MultivariateNormal(torch.zeros(2), t([[1.0, 2.0], [2.0, 1.0]])),
             lambda: D.Bernoulli(probs=t([0.5]), logits=t([0.0])),
             lambda: D.Bernoulli(),
             lambda: D.Normal(t([0.0, 1.0]), t([1.0, 1.0, 1.0]))]:
    try:
        d = make()
        print("built", d)
    except Exception as e:
        print(type(e).__name__, e)

n = D.Normal(t([0.0]), t([1.0]), validate_args=False)
print("no validate", D.Normal(t([0.0]), t([-1.0]), validate_args=False).scale, n.log_prob(t([1.0])))
for d, v in [(D.Bernoulli(t([0.3])), t([0.5])),
             (D.Poisson(t([2.0])), t([-1.0])),
             (D.Exponential(t([2.0])), t([-1.0])),
             (D.Categorical(t([0.2, 0.8])), t(2)),
             (D.Dirichlet(t([1.0, 1.0])), t([0.3, 0.3])),
             (D.Beta(t([2.0]), t([2.0])), t([1.5]))]:
    try:
        print("log_prob", d.log_prob(v))
    except Exception as e:
        print(type(e).__name__, e)
try:
    D.Normal(torch.zeros(2), torch.ones(2)).log_prob(torch.zeros(3))
except Exception as e:
    print(type(e).__name__, e)
D.Distribution.set_default_validate_args(False)
print("after disable", D.Bernoulli(t([0.3])).log_prob(t([0.5])), D.Normal(0.0, -1.0).scale)
D.Distribution.set_default_validate_args(True)
try:
    D.Normal(0.0, -1.0)
except ValueError as e:
    print("re-enabled", e)
print("RESULT: done")
