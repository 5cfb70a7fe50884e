"""Sampling every common torch.distributions family after manual_seed (PyTorch docs examples)."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
D = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".distributions")

torch.manual_seed(0)


def show(name, d, n=(3,)):
    s = d.sample(n)
    print(name, d)
    print("  sample", s.dtype, tuple(s.shape), s)
    print("  log_prob", d.log_prob(s))
    for attr in ("mean", "variance", "stddev", "mode"):
        try:
            print("  " + attr, getattr(d, attr))
        except NotImplementedError:
            print("  " + attr, "NotImplementedError")
    try:
        print("  entropy", d.entropy())
    except NotImplementedError:
        print("  entropy NotImplementedError")
    print("  batch", d.batch_shape, "event", d.event_shape, "support", d.support)
    print("  has_rsample", d.has_rsample, "has_enumerate_support", d.has_enumerate_support)


loc = torch.tensor([0.0, 1.0])
scale = torch.tensor([1.0, 2.0])
show("Normal", D.Normal(loc, scale))
show("Uniform", D.Uniform(torch.tensor([0.0, 1.0]), torch.tensor([2.0, 5.0])))
show("Bernoulli", D.Bernoulli(torch.tensor([0.3, 0.8])))
show("Bernoulli(logits)", D.Bernoulli(logits=torch.tensor([-1.0, 2.0])))
show("Categorical", D.Categorical(torch.tensor([0.25, 0.25, 0.25, 0.25])))
show("Categorical(logits)", D.Categorical(logits=torch.tensor([[0.1, 2.0, -1.0], [0.5, 0.5, 0.0]])))
show("OneHotCategorical", D.OneHotCategorical(torch.tensor([0.2, 0.3, 0.5])))
show("Multinomial", D.Multinomial(10, torch.tensor([1.0, 1.0, 2.0])))
show("Binomial", D.Binomial(10, torch.tensor([0.2, 0.7])))
show("Poisson", D.Poisson(torch.tensor([1.0, 4.0])))
show("Geometric", D.Geometric(torch.tensor([0.3, 0.6])))
show("Exponential", D.Exponential(torch.tensor([1.0, 0.5])))
show("Gamma", D.Gamma(torch.tensor([1.0, 3.0]), torch.tensor([1.0, 2.0])))
show("Beta", D.Beta(torch.tensor([0.5, 2.0]), torch.tensor([0.5, 3.0])))
show("Dirichlet", D.Dirichlet(torch.tensor([0.5, 1.0, 2.0])))
show("Laplace", D.Laplace(loc, scale))
show("Cauchy", D.Cauchy(loc, scale))
show("Gumbel", D.Gumbel(loc, scale))
show("LogNormal", D.LogNormal(loc, scale))
show("HalfNormal", D.HalfNormal(scale))
show("HalfCauchy", D.HalfCauchy(scale))
show("StudentT", D.StudentT(torch.tensor([3.0, 10.0])))
show("Chi2", D.Chi2(torch.tensor([2.0, 5.0])))
show("Weibull", D.Weibull(torch.tensor([1.0, 2.0]), torch.tensor([1.5, 0.5])))
show("Pareto", D.Pareto(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])))
show("VonMises", D.VonMises(loc, torch.tensor([1.0, 4.0])))
show("NegativeBinomial", D.NegativeBinomial(torch.tensor([3.0, 5.0]), torch.tensor([0.3, 0.6])))
show("MultivariateNormal",
     D.MultivariateNormal(torch.zeros(2), torch.tensor([[2.0, 0.5], [0.5, 1.0]])))
show("LowRankMultivariateNormal",
     D.LowRankMultivariateNormal(torch.zeros(2), torch.tensor([[1.0], [0.5]]), torch.ones(2)))
show("RelaxedBernoulli",
     D.RelaxedBernoulli(torch.tensor([2.2]), torch.tensor([0.1, 0.2, 0.3, 0.99])))
show("RelaxedOneHotCategorical",
     D.RelaxedOneHotCategorical(torch.tensor([2.2]), torch.tensor([0.1, 0.2, 0.3, 0.4])))
show("ContinuousBernoulli", D.ContinuousBernoulli(torch.tensor([0.3, 0.5])))
show("Kumaraswamy", D.Kumaraswamy(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 3.0])))
show("FisherSnedecor", D.FisherSnedecor(torch.tensor([3.0, 5.0]), torch.tensor([7.0, 9.0])))
show("LKJCholesky", D.LKJCholesky(3, 0.5), n=(2,))
show("Wishart", D.Wishart(torch.tensor(4.0), covariance_matrix=torch.eye(2)), n=(2,))
show("InverseGamma", D.InverseGamma(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 2.0])))

# rsample with gradients, as in the docs' reparameterisation example
mu = torch.tensor([0.5, -0.5], requires_grad=True)
sigma = torch.tensor([1.0, 0.3], requires_grad=True)
z = D.Normal(mu, sigma).rsample((4,))
(z ** 2).sum().backward()
print("rsample", z, mu.grad, sigma.grad)
print("cdf", D.Normal(0.0, 1.0).cdf(torch.tensor([-1.0, 0.0, 1.96])))
print("icdf", D.Normal(0.0, 1.0).icdf(torch.tensor([0.025, 0.5, 0.975])))
print("enumerate", D.Categorical(torch.ones(3)).enumerate_support())
print("expand", D.Normal(0.0, 1.0).expand([2, 3]).sample())
print("perplexity", D.Categorical(logits=torch.tensor([0.0, 1.0])).perplexity())
print("RESULT: done")
