"""Random streams of torch's samplers on the parameter ranges that switch algorithm (the PyTorch
docs' examples for torch.poisson/torch.binomial/_standard_gamma/Dirichlet, scaled up): Poisson
rate < 10 vs >= 10 (PTRS), Binomial n*p < 10 vs BTRS, Gamma concentration < 1 (boosting),
Beta/Dirichlet via Gamma, NegativeBinomial via Gamma-Poisson, StudentT/Chi2/FisherSnedecor,
VonMises rejection at small and large kappa, Wishart and LKJCholesky, GeneralizedPareto,
Multinomial with large counts, float64 parameters keeping float64 samples, and edge
parameters (probs 0/1, zero rate) with their log_prob/entropy values."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
D = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".distributions")

torch.set_printoptions(precision=5)
t = torch.tensor


def show(name, d, n=(4,)):
    torch.manual_seed(7)
    s = d.sample(n)
    print(name, s.dtype, tuple(s.shape), s.flatten()[:12])
    try:
        print("  log_prob", d.log_prob(s).flatten()[:6])
    except Exception as e:
        print("  log_prob", type(e).__name__, e)


show("poisson small", D.Poisson(t([0.0, 0.3, 2.5, 9.9])))
show("poisson large", D.Poisson(t([10.0, 37.5, 250.0, 1e4])))
torch.manual_seed(3)
print("torch.poisson", torch.poisson(t([[0.5, 12.0], [100.0, 3.0]])))
show("binomial small", D.Binomial(t([5.0, 20.0, 100.0]), t([0.3, 0.2, 0.05])))
show("binomial btrs", D.Binomial(t([50.0, 200.0, 1000.0]), t([0.4, 0.7, 0.97])))
torch.manual_seed(3)
print("torch.binomial", torch.binomial(t([10.0, 500.0]), t([0.5, 0.1])))
show("gamma small conc", D.Gamma(t([0.05, 0.3, 0.9, 1.0]), t([1.0, 2.0, 0.5, 1.0])))
show("gamma large conc", D.Gamma(t([5.0, 50.0, 500.0]), t([1.0, 0.1, 3.0])))
show("beta", D.Beta(t([0.1, 0.5, 5.0, 50.0]), t([0.1, 2.0, 5.0, 0.5])))
show("dirichlet", D.Dirichlet(t([[0.1, 0.1, 0.1], [10.0, 20.0, 30.0]])), n=(2,))
show("negbin", D.NegativeBinomial(t([1.0, 5.0, 50.0]), logits=t([-1.0, 0.0, 2.0])))
show("studentT", D.StudentT(t([0.5, 1.0, 4.0, 100.0]), t([0.0, 1.0, 0.0, -1.0]), t([1.0, 2.0, 0.5, 1.0])))
show("chi2", D.Chi2(t([0.5, 1.0, 30.0])))
show("fisher", D.FisherSnedecor(t([1.0, 4.0, 30.0]), t([2.0, 10.0, 50.0])))
show("vonmises small", D.VonMises(t([0.0, 1.0, -2.0]), t([1e-3, 0.1, 0.5])))
show("vonmises large", D.VonMises(t([0.0, 3.0, -3.0]), t([5.0, 100.0, 1e4])))
show("wishart", D.Wishart(t(3.5), scale_tril=t([[1.0, 0.0], [0.5, 2.0]])), n=(2,))
show("wishart prec", D.Wishart(t([3.0, 5.0]), precision_matrix=t([[2.0, 0.3], [0.3, 1.0]])), n=(1,))
show("lkj", D.LKJCholesky(4, t([0.5, 2.0])), n=(1,))
show("genpareto", D.GeneralizedPareto(t([0.0, 1.0, 0.0]), t([1.0, 2.0, 0.5]), t([0.0, 0.3, -0.4])))
show("multinomial", D.Multinomial(1000, t([0.1, 0.2, 0.7])), n=(2,))
show("multinomial batch", D.Multinomial(7, logits=t([[0.0, 1.0], [2.0, -1.0]])), n=(3,))
show("geometric", D.Geometric(t([0.01, 0.5, 1.0])))
show("laplace f64", D.Laplace(t([0.0], dtype=torch.float64), t([1.0], dtype=torch.float64)))
show("gamma f64", D.Gamma(t([0.5, 3.0], dtype=torch.float64), t([1.0, 1.0], dtype=torch.float64)))
show("poisson f64", D.Poisson(t([4.0, 40.0], dtype=torch.float64)))
show("mvn f64", D.MultivariateNormal(torch.zeros(2, dtype=torch.float64),
                                     torch.eye(2, dtype=torch.float64)), n=(2,))

# edge parameters
print("bernoulli 0/1", D.Bernoulli(t([0.0, 1.0])).log_prob(t([0.0, 1.0])),
      D.Bernoulli(t([0.0, 1.0])).entropy())
print("categorical zero prob", D.Categorical(t([0.0, 0.5, 0.5])).entropy(),
      D.Categorical(logits=t([float("-inf"), 0.0, 1.0])).entropy(),
      D.Categorical(t([0.0, 0.5, 0.5])).log_prob(t(0)))
print("binomial boundary", D.Binomial(3, t([0.0, 1.0])).log_prob(t([0.0, 3.0])),
      D.Binomial(3, t([0.0, 1.0])).entropy())
print("poisson zero rate", D.Poisson(t([0.0])).log_prob(t([0.0, 1.0])))
print("geometric p=1", D.Geometric(t([1.0])).log_prob(t([0.0])), D.Geometric(t([1.0])).entropy())
print("exp family entropy", D.Gamma(t([2.0]), t([3.0])).entropy(), D.Poisson(t([3.0])).mean)
print("enumerate", D.Binomial(3, t([0.2, 0.6])).enumerate_support().shape,
      D.Bernoulli(t([0.2, 0.6])).enumerate_support(expand=False).shape)
print("utils", D.utils.probs_to_logits(t([0.2, 0.8])), D.utils.probs_to_logits(t([0.2]), is_binary=True),
      D.utils.logits_to_probs(t([0.0, 1.0])), D.utils.logits_to_probs(t([0.0]), is_binary=True),
      D.utils.clamp_probs(t([0.0, 1.0])))
print("RESULT: done")
