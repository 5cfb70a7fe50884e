"""Monte Carlo estimation with torch.distributions and histogram/binning utilities (MC
integration and importance sampling notebooks): Normal/Uniform/Categorical/MultivariateNormal
sampling, log_prob, rsample reparameterised gradients, entropy, kl_divergence, and histc,
histogram, bucketize, searchsorted, quantile, unique(return_counts), bincount."""

import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
D = torch.distributions

torch.manual_seed(0)

# MC estimate of pi and of an integral with Uniform samples
u = D.Uniform(torch.tensor([0.0, 0.0]), torch.tensor([1.0, 1.0]))
print(u, u.batch_shape, u.event_shape)
pts = u.sample((4000,))
print("samples", pts.shape, pts.dtype)
pi_est = 4 * (pts.pow(2).sum(1) <= 1).float().mean()
print(f"pi ~ {pi_est.item():.4f}")
xs = D.Uniform(0.0, math.pi).sample((4000,))
print(f"int sin ~ {(math.pi * torch.sin(xs).mean()).item():.4f}")

# importance sampling for P(X > 3), X ~ N(0,1), proposal N(4,1)
p = D.Normal(0.0, 1.0)
q = D.Normal(4.0, 1.0)
z = q.sample((5000,))
w = torch.exp(p.log_prob(z) - q.log_prob(z))
est = ((z > 3).float() * w).mean()
exact = 1 - p.cdf(torch.tensor(3.0))
print(f"IS estimate {est.item():.6f} exact {exact.item():.6f}")
print("icdf", p.icdf(torch.tensor([0.025, 0.5, 0.975])))

# reparameterised gradient of E[x^2] wrt (mu, sigma) = (2 mu, 2 sigma)
mu = torch.tensor(1.5, requires_grad=True)
log_sigma = torch.tensor(0.2, requires_grad=True)
dist = D.Normal(mu, log_sigma.exp())
x = dist.rsample((20000,))
loss = (x ** 2).mean()
loss.backward()
print(f"grad mu {mu.grad.item():.3f} grad log_sigma {log_sigma.grad.item():.3f}")
print("has_rsample", D.Normal.has_rsample, D.Categorical.has_rsample)
print(f"entropy {dist.entropy().item():.6f} mean {dist.mean.item():.4f} "
      f"stddev {dist.stddev.item():.4f}")

# KL divergences, analytic vs Monte Carlo
p1 = D.Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]))
p2 = D.Normal(torch.tensor([0.5, 0.0]), torch.tensor([1.5, 1.0]))
kl = D.kl_divergence(p1, p2)
s = p1.sample((20000,))
kl_mc = (p1.log_prob(s) - p2.log_prob(s)).mean(0)
print("KL analytic", kl, "mc", kl_mc)
cat_p = D.Categorical(probs=torch.tensor([0.1, 0.2, 0.3, 0.4]))
cat_q = D.Categorical(logits=torch.zeros(4))
print(cat_p, cat_q.probs)
print(f"KL cat {D.kl_divergence(cat_p, cat_q).item():.6f} entropy {cat_p.entropy().item():.6f}")
draws = cat_p.sample((1000,))
print("categorical counts", torch.bincount(draws, minlength=4))
print("log_prob", cat_p.log_prob(torch.tensor([0, 3])))
print("enumerate_support", cat_p.enumerate_support())

# multivariate normal: sampling, log_prob, entropy, KL
loc = torch.tensor([0.0, 1.0])
cov = torch.tensor([[1.0, 0.8], [0.8, 2.0]])
mvn = D.MultivariateNormal(loc, covariance_matrix=cov)
print(mvn, mvn.batch_shape, mvn.event_shape)
print("scale_tril", mvn.scale_tril)
sm = mvn.sample((5000,))
print("sample cov", torch.cov(sm.T))
print("log_prob", mvn.log_prob(torch.tensor([[0.0, 0.0], [1.0, 2.0]])))
print(f"entropy {mvn.entropy().item():.6f}")
iso = D.MultivariateNormal(torch.zeros(2), scale_tril=torch.eye(2))
print(f"KL mvn {D.kl_divergence(mvn, iso).item():.6f}")
ind = D.Independent(D.Normal(torch.zeros(2), torch.ones(2)), 1)
print(ind, f"{ind.log_prob(torch.tensor([0.5, -0.5])).item():.6f}")

# histograms and binning
data = torch.randn(2000)
print("histc", torch.histc(data, bins=8, min=-4, max=4))
hist, edges = torch.histogram(data, bins=6, range=(-3.0, 3.0))
print("histogram", hist, edges)
hist_d, edges_d = torch.histogram(data, bins=torch.tensor([-5.0, -1.0, 0.0, 1.0, 5.0]),
                                  density=True)
print("density", hist_d, f"{(hist_d * edges_d.diff()).sum().item():.4f}")
boundaries = torch.tensor([-1.0, 0.0, 1.0])
v = torch.tensor([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0])
print("bucketize", torch.bucketize(v, boundaries), torch.bucketize(v, boundaries, right=True))
sorted_seq = torch.tensor([[1, 3, 5, 7, 9], [2, 4, 6, 8, 10]])
vals = torch.tensor([[3, 6, 9], [3, 6, 9]])
print("searchsorted", torch.searchsorted(sorted_seq, vals),
      torch.searchsorted(sorted_seq, vals, side="right"))
q = torch.tensor([0.05, 0.25, 0.5, 0.75, 0.95])
print("quantile", torch.quantile(data, q))
print("nanquantile", torch.nanquantile(torch.tensor([1.0, float("nan"), 3.0, 2.0]), 0.5))
for interp in ["linear", "lower", "higher", "midpoint", "nearest"]:
    print(interp, torch.quantile(torch.arange(10.0), 0.33, interpolation=interp).item())
rolls = torch.randint(1, 7, (600,))
vals, counts = torch.unique(rolls, return_counts=True)
print("dice", vals, counts, counts.sum().item())
uq, inv, cnt = torch.unique(torch.tensor([3, 1, 3, 2, 1, 3]), sorted=True, return_inverse=True,
                            return_counts=True)
print(uq, inv, cnt)
print("bincount weights", torch.bincount(torch.tensor([0, 1, 1, 3]),
                                         weights=torch.tensor([0.5, 1.0, 1.5, 2.0])))
# empirical CDF via searchsorted on sorted samples
srt, _ = torch.sort(data)
ecdf = torch.searchsorted(srt, torch.tensor([-1.0, 0.0, 1.0])).float() / len(srt)
print("ecdf", ecdf, "normal cdf", p.cdf(torch.tensor([-1.0, 0.0, 1.0])))
print("RESULT:", f"{pi_est.item():.4f}")
