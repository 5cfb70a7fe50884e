"""Bayesian posteriors around a trained net, shrunk: wjmaddox/swa_gaussian's SWAG
(swag_parameters moving parameters into *_mean/*_sq_mean/*_cov_mat_sqrt buffers, collect_model,
sample_fullrank with flatten/unflatten_like, setattr of sampled weights) on a small regression
MLP, then a last-layer Laplace approximation (as in laplace-redux's tutorials and the
"Laplace with torch.autograd.functional.hessian" recipes): MAP by LBFGS, hessian and GGN via
jacobian, MultivariateNormal posterior samples and the probit predictive."""

import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
AF = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".autograd.functional")
D = torch.distributions


def flatten(lst):
    tmp = [i.contiguous().view(-1, 1) for i in lst]
    return torch.cat(tmp).view(-1)


def unflatten_like(vector, likeTensorList):
    outList = []
    i = 0
    for tensor in likeTensorList:
        n = tensor.numel()
        outList.append(vector[:, i : i + n].view(tensor.shape))
        i += n
    return outList


def swag_parameters(module, params, no_cov_mat=True):
    for name in list(module._parameters.keys()):
        if module._parameters[name] is None:
            continue
        data = module._parameters[name].data
        module._parameters.pop(name)
        module.register_buffer("%s_mean" % name, data.new(data.size()).zero_())
        module.register_buffer("%s_sq_mean" % name, data.new(data.size()).zero_())
        if no_cov_mat is False:
            module.register_buffer(
                "%s_cov_mat_sqrt" % name, data.new_empty((0, data.numel())).zero_()
            )
        params.append((module, name))


class SWAG(torch.nn.Module):
    def __init__(self, base, no_cov_mat=True, max_num_models=0, var_clamp=1e-30, *args, **kwargs):
        super(SWAG, self).__init__()
        self.register_buffer("n_models", torch.zeros([1], dtype=torch.long))
        self.params = list()
        self.no_cov_mat = no_cov_mat
        self.max_num_models = max_num_models
        self.var_clamp = var_clamp
        self.base = base(*args, **kwargs)
        self.base.apply(
            lambda module: swag_parameters(
                module=module, params=self.params, no_cov_mat=self.no_cov_mat
            )
        )

    def forward(self, *args, **kwargs):
        return self.base(*args, **kwargs)

    def sample(self, scale=1.0, cov=False, seed=None):
        if seed is not None:
            torch.manual_seed(seed)
        self.sample_fullrank(scale, cov)

    def sample_fullrank(self, scale, cov):
        scale_sqrt = scale**0.5
        mean_list = []
        sq_mean_list = []
        if cov:
            cov_mat_sqrt_list = []
        for module, name in self.params:
            mean = module.__getattr__("%s_mean" % name)
            sq_mean = module.__getattr__("%s_sq_mean" % name)
            if cov:
                cov_mat_sqrt = module.__getattr__("%s_cov_mat_sqrt" % name)
                cov_mat_sqrt_list.append(cov_mat_sqrt.cpu())
            mean_list.append(mean.cpu())
            sq_mean_list.append(sq_mean.cpu())
        mean = flatten(mean_list)
        sq_mean = flatten(sq_mean_list)
        var = torch.clamp(sq_mean - mean**2, self.var_clamp)
        var_sample = var.sqrt() * torch.randn_like(var, requires_grad=False)
        if cov:
            cov_mat_sqrt = torch.cat(cov_mat_sqrt_list, dim=1)
            cov_sample = cov_mat_sqrt.t().matmul(
                cov_mat_sqrt.new_empty((cov_mat_sqrt.size(0),), requires_grad=False).normal_()
            )
            cov_sample /= (self.max_num_models - 1) ** 0.5
            rand_sample = var_sample + cov_sample
        else:
            rand_sample = var_sample
        sample = mean + scale_sqrt * rand_sample
        sample = sample.unsqueeze(0)
        samples_list = unflatten_like(sample, mean_list)
        for (module, name), sample in zip(self.params, samples_list):
            module.__setattr__(name, sample)

    def collect_model(self, base_model):
        for (module, name), base_param in zip(self.params, base_model.parameters()):
            mean = module.__getattr__("%s_mean" % name)
            sq_mean = module.__getattr__("%s_sq_mean" % name)
            mean = mean * self.n_models.item() / (self.n_models.item() + 1.0) + base_param.data / (
                self.n_models.item() + 1.0
            )
            sq_mean = sq_mean * self.n_models.item() / (
                self.n_models.item() + 1.0
            ) + base_param.data**2 / (self.n_models.item() + 1.0)
            if self.no_cov_mat is False:
                cov_mat_sqrt = module.__getattr__("%s_cov_mat_sqrt" % name)
                dev = (base_param.data - mean).view(-1, 1)
                cov_mat_sqrt = torch.cat((cov_mat_sqrt, dev.view(-1, 1).t()), dim=0)
                if (self.n_models.item() + 1) > self.max_num_models:
                    cov_mat_sqrt = cov_mat_sqrt[1:, :]
                module.__setattr__("%s_cov_mat_sqrt" % name, cov_mat_sqrt)
            module.__setattr__("%s_mean" % name, mean)
            module.__setattr__("%s_sq_mean" % name, sq_mean)
        self.n_models.add_(1)


class RegNet(nn.Sequential):
    def __init__(self, dimensions, input_dim=1, output_dim=1):
        super(RegNet, self).__init__()
        self.dimensions = [input_dim, *dimensions, output_dim]
        for i in range(len(self.dimensions) - 1):
            self.add_module(
                "linear%d" % i, torch.nn.Linear(self.dimensions[i], self.dimensions[i + 1])
            )
            if i < len(self.dimensions) - 2:
                self.add_module("relu%d" % i, torch.nn.ReLU())


torch.manual_seed(0)
x = torch.linspace(-2, 2, 40).unsqueeze(1)
y = torch.sin(2 * x) + 0.1 * torch.randn_like(x)
model = RegNet([16, 16])
swag_model = SWAG(RegNet, no_cov_mat=False, max_num_models=5, dimensions=[16, 16])
print([n for n, _ in swag_model.named_buffers()][:5], len(list(swag_model.parameters())))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for epoch in range(60):
    perm = torch.randperm(40)
    for i in range(0, 40, 10):
        idx = perm[i : i + 10]
        opt.zero_grad()
        loss = F.mse_loss(model(x[idx]), y[idx])
        loss.backward()
        opt.step()
    if epoch >= 50:
        swag_model.collect_model(model)
print("train loss", round(loss.item(), 5), "n_models", swag_model.n_models)
print(
    "cov shape",
    swag_model.base.linear1.weight_cov_mat_sqrt.shape,
    swag_model.base.linear0.bias_mean[:4],
)
preds = []
for s in range(4):
    swag_model.sample(scale=0.5, cov=True, seed=s)
    with torch.no_grad():
        preds.append(swag_model(x[::8]))
print(
    "weight type",
    type(swag_model.base.linear0.weight).__name__,
    "weight" in swag_model.base.linear0._buffers,
)
preds = torch.stack(preds)
print("swag mean", preds.mean(0).squeeze(), "std", preds.std(0).squeeze())
swag_model.sample(scale=0.0)
with torch.no_grad():
    print("swa mean pred", swag_model(x[::8]).squeeze())
sd = swag_model.state_dict()
print(sorted(sd.keys())[:4], sd["n_models"])

# ---- last-layer Laplace for binary logistic regression on fixed features
torch.manual_seed(1)
X = torch.randn(60, 3)
w_true = torch.tensor([1.5, -2.0, 0.5])
yb = torch.bernoulli(torch.sigmoid(X @ w_true + 0.3))
prior_prec = 1.0


def neg_log_posterior(w, b):
    logits = X @ w + b
    nll = F.binary_cross_entropy_with_logits(logits, yb, reduction="sum")
    return nll + 0.5 * prior_prec * (w.pow(2).sum() + b.pow(2).sum())


w = torch.zeros(3, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
opt = torch.optim.LBFGS([w, b], lr=1, max_iter=100, line_search_fn="strong_wolfe")


def closure():
    opt.zero_grad()
    loss = neg_log_posterior(w, b)
    loss.backward()
    return loss


opt.step(closure)
print("MAP", w.detach(), b.detach(), neg_log_posterior(w, b).item())
H = AF.hessian(neg_log_posterior, (w.detach(), b.detach()))
print("H blocks", [[tuple(h.shape) for h in row] for row in H])
Hfull = torch.cat([torch.cat([H[0][0], H[0][1]], 1), torch.cat([H[1][0], H[1][1]], 1)], 0)
print("H", Hfull)
theta = torch.cat([w.detach(), b.detach()])


def logits_fn(t):
    return X @ t[:3] + t[3]


J = AF.jacobian(logits_fn, theta)
p = torch.sigmoid(logits_fn(theta))
ggn = J.t() @ torch.diag(p * (1 - p)) @ J + prior_prec * torch.eye(4)
print("ggn==hessian", torch.allclose(ggn, Hfull, atol=1e-4), (ggn - Hfull).abs().max() < 1e-3)
Hv = AF.hvp(lambda t: neg_log_posterior(t[:3], t[3:]), theta, torch.ones(4))[1]
print("hvp", Hv, Hfull.sum(1))
Hvec = AF.hessian(lambda t: neg_log_posterior(t[:3], t[3:]), theta, vectorize=True)
print("vectorized", torch.allclose(Hvec, Hfull, atol=1e-5))
Sigma = torch.linalg.inv(Hfull)
post = D.MultivariateNormal(theta, precision_matrix=Hfull)
print(
    "post cov", torch.allclose(post.covariance_matrix, Sigma, atol=1e-5), post.scale_tril.diagonal()
)
samples = post.sample((200,))
print("samples", samples.mean(0), samples.std(0), post.log_prob(samples[:3]), post.entropy())
Xt = torch.tensor([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 3.0, -1.0]])
phi = torch.cat([Xt, torch.ones(3, 1)], 1)
f_mu = phi @ theta
f_var = torch.einsum("ni,ij,nj->n", phi, Sigma, phi)
kappa = 1 / torch.sqrt(1 + math.pi / 8 * f_var)
print("probit", torch.sigmoid(kappa * f_mu), "MAP", torch.sigmoid(f_mu))
mc = torch.sigmoid(samples @ phi.t()).mean(0)
print("mc", mc)
lap = D.Normal(f_mu, f_var.sqrt())
print("normal", lap.cdf(torch.zeros(3)), lap.icdf(torch.tensor([0.1, 0.5, 0.9])))
log_marglik = (
    -neg_log_posterior(w, b).detach() + 0.5 * 4 * math.log(prior_prec) - 0.5 * torch.logdet(Hfull)
)
print("log marginal likelihood", log_marglik.item(), torch.linalg.slogdet(Hfull))
