"""torch.distributions beyond sampling: fitting a Gaussian mixture with MixtureSameFamily
(the docs' GMM construction, trained by maximum likelihood), MultivariateNormal with
scale_tril, Independent reinterpreting batch dims, TransformedDistribution with
Affine/Exp/Sigmoid/ComposeTransform (LogNormal and Logit-Normal by hand), kl_divergence pairs,
constraints with biject_to/transform_to for an unconstrained parametrization."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
D = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".distributions")
T = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".distributions.transforms")
constraints = importlib.import_module(os.environ.get("TORCH_LIB", "torch")
                                      + ".distributions.constraints")

torch.manual_seed(0)

# --- the docs' mixture constructions
mix = D.Categorical(torch.ones(5,))
comp = D.Normal(torch.randn(5,), torch.rand(5,))
gmm = D.MixtureSameFamily(mix, comp)
print(gmm.batch_shape, gmm.event_shape, gmm.mean, gmm.variance)
mix = D.Categorical(torch.ones(5,))
comp = D.Independent(D.Normal(torch.randn(5, 2), torch.rand(5, 2)), 1)
gmm = D.MixtureSameFamily(mix, comp)
print(gmm.batch_shape, gmm.event_shape, gmm.sample((3,)).shape)
print(gmm.log_prob(torch.zeros(4, 2)))
mix = D.Categorical(torch.rand(3, 5))
comp = D.Independent(D.Normal(torch.randn(3, 5, 2), torch.rand(3, 5, 2)), 1)
gmm = D.MixtureSameFamily(mix, comp)
print(gmm.batch_shape, gmm.event_shape, gmm.cdf if False else None)

# --- fitting a 1-D GMM by maximum likelihood
data = torch.cat([torch.randn(60) * 0.5 - 2.0, torch.randn(40) * 0.8 + 1.5])
logits = torch.zeros(2, requires_grad=True)
locs = torch.tensor([-1.0, 1.0], requires_grad=True)
raw_scales = torch.zeros(2, requires_grad=True)
opt = torch.optim.Adam([logits, locs, raw_scales], lr=0.1)
for step in range(15):
    opt.zero_grad()
    model = D.MixtureSameFamily(D.Categorical(logits=logits),
                                D.Normal(locs, torch.nn.functional.softplus(raw_scales)))
    nll = -model.log_prob(data).mean()
    nll.backward()
    opt.step()
    if step % 5 == 0:
        print(f"step {step} nll {nll.item():.5f}")
print(locs.detach(), torch.softmax(logits, 0).detach())
print(model.mixture_distribution.probs.detach(), model.component_distribution)

# --- MultivariateNormal with scale_tril, Independent
L = torch.tensor([[1.0, 0.0], [0.5, 0.8]])
mvn = D.MultivariateNormal(torch.zeros(2), scale_tril=L)
print(mvn, mvn.covariance_matrix, mvn.precision_matrix)
x = mvn.sample((4,))
print(x, mvn.log_prob(x), mvn.entropy())
diag = D.Independent(D.Normal(torch.zeros(3, 2), torch.ones(3, 2)), 1)
print(diag, diag.batch_shape, diag.event_shape, diag.log_prob(torch.zeros(3, 2)))
mvn_diag = D.MultivariateNormal(torch.zeros(2), torch.eye(2))
print(D.kl_divergence(mvn, mvn_diag), mvn.rsample((2,)).shape)

# --- transformed distributions
base = D.Normal(0.0, 1.0)
lognormal = D.TransformedDistribution(base, [T.ExpTransform()])
ref = D.LogNormal(0.0, 1.0)
v = torch.tensor([0.5, 1.0, 2.0])
print(lognormal.log_prob(v), ref.log_prob(v))
logit_normal = D.TransformedDistribution(D.Normal(torch.zeros(3), torch.ones(3)),
                                         T.SigmoidTransform())
s = logit_normal.sample((2,))
print(s, logit_normal.log_prob(s), logit_normal.support)
affine = D.TransformedDistribution(D.Uniform(0.0, 1.0),
                                   [T.AffineTransform(loc=2.0, scale=3.0), T.ExpTransform()])
print(affine.sample((3,)), affine.log_prob(torch.tensor(20.0)))
chain = T.ComposeTransform([T.AffineTransform(0.0, 2.0), T.SigmoidTransform()])
y = chain(torch.tensor([-1.0, 0.0, 1.0]))
print(chain, y, chain.inv(y), chain.log_abs_det_jacobian(torch.tensor([-1.0, 0.0, 1.0]), y))
print(T.ExpTransform().inv, T.ExpTransform().sign, T.AffineTransform(1.0, -2.0).sign)
print(T.StickBreakingTransform()(torch.zeros(3)), T.SoftmaxTransform()(torch.zeros(3)))
print(T.TanhTransform()(torch.tensor([0.5])), T.PowerTransform(2.0)(torch.tensor([3.0])))

# --- kl_divergence pairs
p = D.Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]))
q = D.Normal(torch.tensor([0.5, 0.0]), torch.tensor([1.5, 1.0]))
print(D.kl_divergence(p, q), D.kl.kl_divergence(q, p))
print(D.kl_divergence(D.Bernoulli(0.3), D.Bernoulli(0.6)),
      D.kl_divergence(D.Categorical(torch.tensor([0.2, 0.8])),
                      D.Categorical(torch.tensor([0.5, 0.5]))))
print(D.kl_divergence(D.Beta(2.0, 3.0), D.Beta(1.0, 1.0)),
      D.kl_divergence(D.Gamma(2.0, 1.0), D.Gamma(3.0, 2.0)),
      D.kl_divergence(D.Dirichlet(torch.tensor([1.0, 2.0])), D.Dirichlet(torch.ones(2))))
print(D.kl_divergence(D.Independent(p, 1), D.Independent(q, 1)))
try:
    D.kl_divergence(D.Normal(0.0, 1.0), D.Uniform(0.0, 1.0))
except NotImplementedError as e:
    print(type(e).__name__, e)

# --- constraints, biject_to / transform_to
for c in (constraints.positive, constraints.unit_interval, constraints.simplex,
          constraints.real, constraints.interval(-1.0, 3.0), constraints.lower_cholesky):
    t = D.transform_to(c)
    print(c, type(t).__name__, t, c.is_discrete, c.event_dim)
    try:
        print(type(D.biject_to(c)).__name__, t.bijective, t.domain, t.codomain)
    except NotImplementedError as e:
        print(type(e).__name__, e)
unc = torch.tensor([-1.0, 0.0, 2.0], requires_grad=True)
pos = D.transform_to(constraints.positive)(unc)
simp = D.transform_to(constraints.simplex)(unc)
print(pos, simp, constraints.simplex.check(simp), constraints.positive.check(unc))
(pos.sum() + simp[0]).backward()
print(unc.grad)
print(D.biject_to(constraints.interval(-1.0, 3.0))(torch.tensor([0.0, 10.0])))
print(constraints.greater_than(2.0).check(torch.tensor([1.0, 3.0])),
      constraints.integer_interval(0, 4).check(torch.tensor([2.0, 5.0])))
try:
    D.Normal(torch.tensor([0.0]), torch.tensor([-1.0]))
except ValueError as e:
    print(type(e).__name__, e)
D.Distribution.set_default_validate_args(False)
print(D.Normal(torch.tensor([0.0]), torch.tensor([-1.0])).scale)
D.Distribution.set_default_validate_args(True)
print("RESULT:", f"{nll.item():.5f}")
