"""Bayesian linear regression two ways (the conjugate posterior written with
MultivariateNormal, as in Bishop ch. 3 notebooks; and mean-field variational inference with
rsample + kl_divergence, as in the "Bayes by Backprop"/VI tutorials): posterior predictive,
ELBO training with Adam, a Bayesian linear layer with the local reparameterization trick, and
a VAE-style Gaussian ELBO."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
dist = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".distributions")
Normal, MultivariateNormal = dist.Normal, dist.MultivariateNormal

torch.manual_seed(42)
N, D = 30, 3
true_w = torch.tensor([1.5, -2.0, 0.5])
X = torch.randn(N, D, dtype=torch.float64)
noise_std = 0.3
y = X @ true_w.double() + noise_std * torch.randn(N, dtype=torch.float64)

# --- conjugate posterior: prior N(0, alpha^-1 I), likelihood N(Xw, beta^-1)
alpha, beta = 1.0, 1.0 / noise_std ** 2
S_inv = alpha * torch.eye(D, dtype=torch.float64) + beta * X.T @ X
S = torch.linalg.inv(S_inv)
m = beta * S @ X.T @ y
posterior = MultivariateNormal(m, covariance_matrix=S)
print(posterior.loc, posterior.covariance_matrix.diagonal())
print(posterior.scale_tril)
L = torch.linalg.cholesky(S)
print(torch.allclose(L, posterior.scale_tril), posterior.loc.dtype)
x_new = torch.tensor([[0.5, 0.5, 0.5], [1.0, -1.0, 0.0]], dtype=torch.float64)
pred_mean = x_new @ m
pred_var = 1.0 / beta + ((x_new @ S) * x_new).sum(-1)
print(pred_mean, pred_var.sqrt())
predictive = Normal(pred_mean, pred_var.sqrt())
print(predictive.cdf(torch.zeros(2, dtype=torch.float64)), predictive.icdf(
    torch.tensor([0.05, 0.95], dtype=torch.float64)))
w_samples = posterior.sample((1000,))
print(w_samples.shape, w_samples.mean(0), w_samples.std(0))
log_evidence = MultivariateNormal(torch.zeros(N, dtype=torch.float64),
                                  covariance_matrix=X @ X.T / alpha + torch.eye(
                                      N, dtype=torch.float64) / beta).log_prob(y)
print(f"log evidence {log_evidence.item():.6f}")

# --- mean-field VI for the same model (float32, as the tutorials)
Xf, yf = X.float(), y.float()
q_mu = torch.zeros(D, requires_grad=True)
q_rho = torch.full((D,), -3.0, requires_grad=True)
prior = Normal(torch.zeros(D), torch.ones(D) / math.sqrt(alpha))
opt = torch.optim.Adam([q_mu, q_rho], lr=0.05)
for step in range(25):
    opt.zero_grad()
    q = Normal(q_mu, F.softplus(q_rho))
    w = q.rsample((8,))
    log_lik = Normal(w @ Xf.T, noise_std).log_prob(yf).sum(-1).mean()
    kl = dist.kl_divergence(q, prior).sum()
    elbo = log_lik - kl
    (-elbo).backward()
    opt.step()
    if step % 6 == 0:
        print(f"step {step:2d} elbo {elbo.item():.4f} kl {kl.item():.4f}")
print(q_mu.detach(), F.softplus(q_rho).detach())
print(type(w.grad_fn).__name__, w.shape, q.has_rsample, q.batch_shape)


# --- Bayesian linear layer with the local reparameterization trick
class BayesLinear(nn.Module):
    def __init__(self, in_features, out_features, prior_sigma=1.0):
        super().__init__()
        self.w_mu = nn.Parameter(torch.empty(out_features, in_features).uniform_(-0.2, 0.2))
        self.w_rho = nn.Parameter(torch.full((out_features, in_features), -5.0))
        self.b_mu = nn.Parameter(torch.zeros(out_features))
        self.b_rho = nn.Parameter(torch.full((out_features,), -5.0))
        self.prior = Normal(0.0, prior_sigma)

    def forward(self, x):
        w_sigma = torch.log1p(torch.exp(self.w_rho))
        b_sigma = torch.log1p(torch.exp(self.b_rho))
        act_mu = F.linear(x, self.w_mu, self.b_mu)
        act_var = F.linear(x ** 2, w_sigma ** 2, b_sigma ** 2)
        eps = torch.randn_like(act_mu)
        return act_mu + act_var.sqrt() * eps

    def kl(self):
        qw = Normal(self.w_mu, torch.log1p(torch.exp(self.w_rho)))
        qb = Normal(self.b_mu, torch.log1p(torch.exp(self.b_rho)))
        return dist.kl_divergence(qw, self.prior).sum() + dist.kl_divergence(qb, self.prior).sum()


net = nn.Sequential(BayesLinear(D, 8), nn.ReLU(), BayesLinear(8, 1))
print(net)
print([n for n, _ in net.named_parameters()])
opt = torch.optim.Adam(net.parameters(), lr=0.01)
for step in range(10):
    opt.zero_grad()
    out = net(Xf).squeeze(-1)
    nll = F.gaussian_nll_loss(out, yf, torch.full_like(yf, noise_std ** 2), full=True,
                              reduction="sum")
    kl = sum(mod.kl() for mod in net if isinstance(mod, BayesLinear))
    loss = nll + kl / N
    loss.backward()
    opt.step()
print(f"bayes net loss {loss.item():.4f} nll {nll.item():.4f} kl {kl.item():.4f}")
with torch.no_grad():
    preds = torch.stack([net(x_new.float()).squeeze(-1) for _ in range(20)])
print(preds.mean(0), preds.std(0))

# --- VAE-style ELBO with a diagonal Gaussian encoder and Bernoulli decoder
enc = nn.Linear(6, 4)
dec = nn.Linear(2, 6)
xb = torch.bernoulli(torch.full((5, 6), 0.3))
h = enc(xb)
mu, logvar = h.chunk(2, dim=-1)
qz = Normal(mu, torch.exp(0.5 * logvar))
z = qz.rsample()
px = dist.Bernoulli(logits=dec(z))
rec = px.log_prob(xb).sum(-1)
kl = dist.kl_divergence(qz, Normal(torch.zeros_like(mu), torch.ones_like(mu))).sum(-1)
kl_closed = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp(), dim=-1)
print(torch.allclose(kl, kl_closed, atol=1e-6), rec.shape, (rec - kl).mean())
(-(rec - kl).mean()).backward()
print(enc.weight.grad.norm(), dec.bias.grad)
print("RESULT:", f"{elbo.item():.4f}")
