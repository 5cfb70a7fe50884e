"""Mixtures and multivariate Gaussians as the torch.distributions docs' examples and the
"GMM / MDN with MixtureSameFamily" recipes use them: MixtureSameFamily over Normal,
Independent(Normal) and MultivariateNormal components (log_prob, sample, mean/variance, cdf,
component/mixture properties, expand, repr), LowRankMultivariateNormal's covariance/precision/
entropy and rsample gradients, MultivariateNormal from precision_matrix / scale_tril with
batch broadcasting, Independent reinterpretation, and a user-defined Distribution subclass with
arg_constraints/support/expand, fitted by gradient ascent on the mixture log-likelihood."""
# compare: rtol=2e-4 atol=1e-5
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
D = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".distributions")
C = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".distributions.constraints")

torch.manual_seed(0)
torch.set_printoptions(precision=5)

# docs examples
mix = D.Categorical(torch.ones(5,))
comp = D.Normal(torch.randn(5,), torch.rand(5,))
gmm = D.MixtureSameFamily(mix, comp)
print(gmm)
x = gmm.sample((4,))
print("1d", x, gmm.log_prob(x), gmm.cdf(x), gmm.mean, gmm.variance, gmm.stddev)
print("  shapes", gmm.batch_shape, gmm.event_shape, gmm.support, gmm.has_rsample)
print("  props", gmm.mixture_distribution.probs, type(gmm.component_distribution).__name__)

mix = D.Categorical(torch.ones(5,))
comp = D.Independent(D.Normal(torch.randn(5, 2), torch.rand(5, 2)), 1)
gmm2 = D.MixtureSameFamily(mix, comp)
x = gmm2.sample((3,))
print("2d", x, gmm2.log_prob(x), gmm2.mean, gmm2.variance, gmm2.event_shape)

mix = D.Categorical(torch.rand(3, 5))
comp = D.Independent(D.Normal(torch.randn(3, 5, 2), torch.rand(3, 5, 2)), 1)
gmm3 = D.MixtureSameFamily(mix, comp)
x = gmm3.sample()
print("batched", x.shape, gmm3.log_prob(x), gmm3.batch_shape, gmm3.expand((4, 3)).batch_shape)

mvn_comp = D.MultivariateNormal(torch.randn(3, 2), scale_tril=torch.tril(torch.rand(3, 2, 2)) + torch.eye(2))
gmm4 = D.MixtureSameFamily(D.Categorical(logits=torch.tensor([0.0, 1.0, -1.0])), mvn_comp)
print("mvn mixture", gmm4.log_prob(torch.zeros(2, 2)), gmm4.mean, gmm4.variance)

for bad in [lambda: D.MixtureSameFamily(D.Categorical(torch.ones(4)), comp),
            lambda: D.MixtureSameFamily(torch.ones(5), comp),
            lambda: D.MixtureSameFamily(D.Categorical(torch.ones(5)), torch.ones(5))]:
    try:
        bad()
    except Exception as e:
        print(type(e).__name__, e)

# gradient ascent on a mixture's log-likelihood (GMM fit)
torch.manual_seed(1)
data = torch.cat([torch.randn(40) * 0.5 - 2, torch.randn(60) * 0.8 + 1.5])
logits = torch.zeros(2, requires_grad=True)
locs = torch.tensor([-0.5, 0.5], requires_grad=True)
log_scales = torch.zeros(2, requires_grad=True)
opt = torch.optim.Adam([logits, locs, log_scales], lr=0.05)
for step in range(60):
    opt.zero_grad()
    m = D.MixtureSameFamily(D.Categorical(logits=logits), D.Normal(locs, log_scales.exp()))
    nll = -m.log_prob(data).mean()
    nll.backward()
    opt.step()
    if step % 20 == 0:
        print("gmm step", step, nll.item(), locs.grad)
print("gmm fit", logits.softmax(0), locs, log_scales.exp())

# LowRankMultivariateNormal
loc = torch.tensor([0.0, 1.0, -1.0], requires_grad=True)
cov_factor = torch.tensor([[1.0, 0.0], [0.5, 0.2], [0.1, 0.9]], requires_grad=True)
cov_diag = torch.tensor([1.0, 0.5, 2.0], requires_grad=True)
lr = D.LowRankMultivariateNormal(loc, cov_factor, cov_diag)
print(lr)
print("lowrank cov", lr.covariance_matrix, lr.precision_matrix, lr.scale_tril)
print("  var", lr.variance, "entropy", lr.entropy(), "mode", lr.mode)
z = lr.rsample((5,))
lp = lr.log_prob(z.detach()).sum() + z.pow(2).sum()
lp.backward()
print("  grads", loc.grad, cov_factor.grad, cov_diag.grad)
dense = D.MultivariateNormal(loc.detach(), lr.covariance_matrix.detach())
print("  vs dense", dense.log_prob(z.detach()), lr.log_prob(z.detach()))
print("  expand", lr.expand((2,)).batch_shape, lr.expand((2,)).loc.shape)

# MultivariateNormal parametrisations and batch broadcasting
P = torch.tensor([[2.0, -0.5], [-0.5, 1.0]])
mp = D.MultivariateNormal(torch.zeros(4, 2), precision_matrix=P)
print("precision", mp.covariance_matrix, mp.scale_tril, mp.batch_shape)
ms = D.MultivariateNormal(torch.tensor([1.0, 2.0]), scale_tril=torch.tensor([[1.0, 0.0], [0.3, 0.5]]))
print("scale_tril", ms.covariance_matrix, ms.precision_matrix, ms.log_prob(torch.zeros(3, 1, 2)).shape)
print("  entropy", ms.entropy(), "mode", ms.mode, "var", ms.variance)
for bad in [lambda: D.MultivariateNormal(torch.zeros(2)),
            lambda: D.MultivariateNormal(torch.zeros(2), torch.eye(2), scale_tril=torch.eye(2)),
            lambda: D.MultivariateNormal(torch.tensor(0.0), torch.eye(2)),
            lambda: D.MultivariateNormal(torch.zeros(2), torch.ones(2))]:
    try:
        bad()
    except Exception as e:
        print(type(e).__name__, e)

# Independent reinterpretation
base = D.Normal(torch.zeros(3, 4), torch.ones(3, 4))
for n in (0, 1, 2):
    ind = D.Independent(base, n)
    print("independent", n, ind.batch_shape, ind.event_shape, ind.log_prob(torch.ones(3, 4)).shape,
          ind.entropy().shape)
print(D.Independent(base, 1))
try:
    D.Independent(base, 3)
except Exception as e:
    print(type(e).__name__, e)


class Triangular(D.Distribution):
    """Symmetric triangular distribution on [low, high] (user subclass)."""

    arg_constraints = {"low": C.real, "high": C.real}
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = D.utils.broadcast_all(low, high)
        super().__init__(self.low.shape, validate_args=validate_args)

    @C.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return C.interval(self.low, self.high)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Triangular, _instance)
        new.low = self.low.expand(batch_shape)
        new.high = self.high.expand(batch_shape)
        super(Triangular, new).__init__(torch.Size(batch_shape), validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return (self.low + self.high) / 2

    def rsample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        u = torch.rand(shape) + torch.rand(shape)
        return self.low + (self.high - self.low) * u / 2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        w = (self.high - self.low) / 2
        return torch.log((w - (value - self.mean).abs()).clamp(min=1e-12)) - 2 * torch.log(w)


tri = Triangular(torch.tensor([0.0, 1.0]), torch.tensor([2.0, 5.0]))
print(tri, tri.support, tri.batch_shape)
s = tri.sample((3,))
print("tri", s, tri.log_prob(s), tri.expand((4, 2)).batch_shape, tri.expand((4, 2)).sample().shape)
try:
    tri.log_prob(torch.tensor([3.0, 3.0]))
except Exception as e:
    print(type(e).__name__, e)
try:
    tri.entropy()
except NotImplementedError as e:
    print("NotImplementedError", repr(e))
print("RESULT: done")
