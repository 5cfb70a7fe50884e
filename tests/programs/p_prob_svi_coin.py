"""Pyro's "SVI Part I" coin-fairness example written with plain torch.distributions
(reparameterised Beta/Gamma/Dirichlet samples, constraints, kl_divergence), as in
"variational inference from scratch" posts."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
D = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".distributions")
constraints = D.constraints
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(101)
data = []
for _ in range(6):
    data.append(torch.tensor(1.0))
for _ in range(4):
    data.append(torch.tensor(0.0))
data = torch.stack(data)

alpha0 = torch.tensor(10.0)
beta0 = torch.tensor(10.0)
prior = D.Beta(alpha0, beta0)

# unconstrained variational parameters, mapped through biject_to(positive)
to_pos = D.biject_to(constraints.positive)
alpha_q_u = to_pos.inv(torch.tensor(15.0)).requires_grad_()
beta_q_u = to_pos.inv(torch.tensor(15.0)).requires_grad_()
optimizer = torch.optim.Adam([alpha_q_u, beta_q_u], lr=0.05, betas=(0.90, 0.999))
print(to_pos, alpha_q_u)

n_steps = 15
for step in range(n_steps):
    optimizer.zero_grad()
    alpha_q, beta_q = to_pos(alpha_q_u), to_pos(beta_q_u)
    guide = D.Beta(alpha_q, beta_q)
    f = guide.rsample((4,))
    log_lik = D.Bernoulli(f.unsqueeze(-1)).log_prob(data).sum(-1)
    elbo = (log_lik + prior.log_prob(f) - guide.log_prob(f)).mean()
    loss = -elbo
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.4f} f {f.detach()} "
          f"grads {alpha_q_u.grad.item():.5f} {beta_q_u.grad.item():.5f}")

alpha_q = to_pos(alpha_q_u).item()
beta_q = to_pos(beta_q_u).item()
inferred_mean = alpha_q / (alpha_q + beta_q)
factor = beta_q / (alpha_q * (1.0 + alpha_q + beta_q))
inferred_std = inferred_mean * math.sqrt(factor)
print("\nbased on the data and our prior belief, the fairness " +
      "of the coin is %.3f +- %.3f" % (inferred_mean, inferred_std))
q = D.Beta(torch.tensor(alpha_q), torch.tensor(beta_q))
print("kl(q||prior)", D.kl_divergence(q, prior), "analytic ELBO-ish", q.entropy())

# Gamma / Dirichlet / Chi2 / StudentT reparameterised gradients
conc = torch.tensor([0.5, 2.0, 7.0], requires_grad=True)
rate = torch.tensor([1.0, 0.5, 3.0], requires_grad=True)
g = D.Gamma(conc, rate).rsample((3,))
g.sum().backward()
print("gamma", g, conc.grad, rate.grad)
alpha = torch.tensor([0.7, 1.5, 4.0], requires_grad=True)
d = D.Dirichlet(alpha).rsample((2,))
(d * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
print("dirichlet", d, alpha.grad)
df = torch.tensor([3.0, 8.0], requires_grad=True)
t = D.StudentT(df).rsample((3,))
t.abs().sum().backward()
print("studentT", t, df.grad)
c2 = D.Chi2(torch.tensor([1.0, 4.0])).sample((2,))
print("chi2", c2)
k = torch.tensor([1.0, 2.0], requires_grad=True)
kk = D.Kumaraswamy(k, torch.tensor([2.0, 0.5])).rsample((2,))
kk.sum().backward()
print("kumaraswamy", kk, k.grad)
b = torch.tensor([0.5, 3.0], requires_grad=True)
bb = D.Beta(b, torch.tensor([2.0, 1.0])).rsample()
bb.sum().backward()
print("beta", bb, b.grad)
fs = D.FisherSnedecor(torch.tensor([4.0]), torch.tensor([6.0])).rsample((3,))
print("fisher", fs)
ig = D.InverseGamma(torch.tensor([3.0]), torch.tensor([2.0])).rsample((3,))
print("inverse gamma", ig)
lkj = D.LKJCholesky(3, torch.tensor(2.0)).sample()
print("lkj", lkj, D.LKJCholesky(3, torch.tensor(2.0)).log_prob(lkj))
w = D.Wishart(torch.tensor(5.0), scale_tril=torch.eye(2)).rsample()
print("wishart", w)

# Poisson regression log-likelihood and a Gamma-Poisson (NegativeBinomial) sample
x = torch.randn(8, 2)
w_ = torch.tensor([0.5, -0.3], requires_grad=True)
counts = D.Poisson(torch.exp(x @ torch.tensor([0.4, 0.1]))).sample()
nll = -D.Poisson(torch.exp(x @ w_)).log_prob(counts).sum()
nll.backward()
print("poisson", counts, f"{nll.item():.4f}", w_.grad)
nb = D.NegativeBinomial(total_count=torch.tensor(4.0), logits=torch.tensor([0.2, -1.0]))
print("negbin", nb.sample((3,)), nb.mean, nb.variance)
print("RESULT:", f"{inferred_mean:.4f}")
