"""GPyTorch's "Simple GP regression" tutorial rewritten in plain torch (what gpytorch.kernels.
ScaleKernel(RBFKernel), GaussianLikelihood, ExactMarginalLogLikelihood and the predictive
posterior compute), with softplus-constrained raw hyperparameters as gpytorch registers them,
Adam on the negative MLL, then a Matern-5/2 kernel, a batch of independent GPs (batch_shape),
predictive MultivariateNormal with confidence_region, and fantasy-free posterior sampling."""
# compare: rtol=2e-4 atol=1e-5
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
D = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".distributions")

torch.manual_seed(0)
train_x = torch.linspace(0, 1, 25)
train_y = torch.sin(train_x * (2 * math.pi)) + torch.randn(train_x.size()) * math.sqrt(0.04)


class Positive(nn.Module):
    """gpytorch.constraints.Positive: softplus transform with its inverse for initialisation."""

    def transform(self, raw):
        return F.softplus(raw)

    def inverse_transform(self, value):
        return value + torch.log(-torch.expm1(-value))


class RBFKernel(nn.Module):
    def __init__(self, batch_shape=torch.Size([])):
        super().__init__()
        self.register_parameter("raw_lengthscale", nn.Parameter(torch.zeros(*batch_shape, 1, 1)))
        self.raw_lengthscale_constraint = Positive()

    @property
    def lengthscale(self):
        return self.raw_lengthscale_constraint.transform(self.raw_lengthscale)

    def forward(self, x1, x2):
        x1_ = x1.div(self.lengthscale)
        x2_ = x2.div(self.lengthscale)
        d2 = torch.cdist(x1_, x2_, p=2).pow(2)
        return d2.div(-2).exp()


class MaternKernel(RBFKernel):
    def forward(self, x1, x2):
        mean = x1.reshape(-1, x1.size(-1)).mean(0)[(None,) * (x1.dim() - 1)]
        d = torch.cdist((x1 - mean).div(self.lengthscale), (x2 - mean).div(self.lengthscale))
        exp_component = torch.exp(-math.sqrt(5.0) * d)
        return (1 + math.sqrt(5) * d + 5.0 / 3.0 * d ** 2) * exp_component


class ScaleKernel(nn.Module):
    def __init__(self, base, batch_shape=torch.Size([])):
        super().__init__()
        self.base_kernel = base
        self.raw_outputscale = nn.Parameter(torch.zeros(batch_shape))
        self.raw_outputscale_constraint = Positive()

    @property
    def outputscale(self):
        return self.raw_outputscale_constraint.transform(self.raw_outputscale)

    def forward(self, x1, x2):
        os_ = self.outputscale.view(*self.outputscale.shape, 1, 1)
        return os_ * self.base_kernel(x1, x2)


class ExactGPModel(nn.Module):
    def __init__(self, train_x, train_y, kernel, batch_shape=torch.Size([])):
        super().__init__()
        self.train_x, self.train_y = train_x, train_y
        self.mean_constant = nn.Parameter(torch.zeros(*batch_shape, 1))
        self.covar_module = ScaleKernel(kernel, batch_shape)
        self.raw_noise = nn.Parameter(torch.zeros(*batch_shape, 1))
        self.noise_constraint = Positive()

    @property
    def noise(self):
        return self.noise_constraint.transform(self.raw_noise) + 1e-4

    def prior(self, x):
        mean = self.mean_constant.expand(*x.shape[:-1])
        return mean, self.covar_module(x, x)

    def marginal(self, x):
        mean, covar = self.prior(x)
        n = x.shape[-2]
        cov = covar + self.noise.unsqueeze(-1) * torch.eye(n)
        return D.MultivariateNormal(mean, covariance_matrix=cov)

    def posterior(self, test_x):
        K = self.marginal(self.train_x).covariance_matrix
        L = torch.linalg.cholesky(K)
        Ks = self.covar_module(test_x, self.train_x)
        Kss = self.covar_module(test_x, test_x)
        resid = (self.train_y - self.mean_constant).unsqueeze(-1)
        alpha = torch.cholesky_solve(resid, L)
        mean = (Ks @ alpha).squeeze(-1) + self.mean_constant
        v = torch.linalg.solve_triangular(L, Ks.transpose(-1, -2), upper=False)
        cov = Kss - v.transpose(-1, -2) @ v + 1e-5 * torch.eye(test_x.shape[-2])
        return D.MultivariateNormal(mean, cov)


def mll(model):
    out = model.marginal(model.train_x)
    return out.log_prob(model.train_y) / model.train_y.shape[-1]


def confidence_region(mvn):
    std2 = mvn.stddev.mul(2)
    return mvn.mean.sub(std2), mvn.mean.add(std2)


for name, kern in [("rbf", RBFKernel()), ("matern52", MaternKernel())]:
    torch.manual_seed(1)
    model = ExactGPModel(train_x.unsqueeze(-1), train_y, kern)
    print(name, [n for n, _ in model.named_parameters()])
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    for i in range(20):
        optimizer.zero_grad()
        loss = -mll(model)
        loss.backward()
        if i % 10 == 0 or i == 19:
            print("Iter %d/20 - Loss: %.4f   lengthscale: %.4f   noise: %.4f" % (
                i + 1, loss.item(), model.covar_module.base_kernel.lengthscale.item(),
                model.noise.item()))
        optimizer.step()
    with torch.no_grad():
        test_x = torch.linspace(0, 1, 6).unsqueeze(-1)
        pred = model.posterior(test_x)
        lower, upper = confidence_region(pred)
        print("  mean", pred.mean)
        print("  lower", lower, "upper", upper)
        print("  var", pred.variance, "batch", pred.batch_shape, "event", pred.event_shape)
        torch.manual_seed(3)
        print("  samples", pred.sample(torch.Size([2])).shape, pred.rsample((3,)).mean(0))
        print("  entropy", pred.entropy(), "outputscale", model.covar_module.outputscale)

# batch of 2 independent GPs (sin and cos), as the "Batch Independent Multioutput GP" example
torch.manual_seed(2)
ys = torch.stack([train_y, torch.cos(train_x * (2 * math.pi)) + 0.1 * torch.randn(25)])
xs = train_x.unsqueeze(-1).expand(2, 25, 1)
bmodel = ExactGPModel(xs, ys, RBFKernel(torch.Size([2])), batch_shape=torch.Size([2]))
opt = torch.optim.Adam(bmodel.parameters(), lr=0.1)
for i in range(20):
    opt.zero_grad()
    loss = -mll(bmodel).sum()
    loss.backward()
    opt.step()
print("batch loss", loss.item(), bmodel.covar_module.base_kernel.lengthscale.flatten(),
      bmodel.noise.flatten())
with torch.no_grad():
    post = bmodel.posterior(torch.linspace(0, 1, 4).view(1, 4, 1).expand(2, 4, 1))
    print("batch post", post.batch_shape, post.event_shape, post.mean)
    print("batch state", {k: tuple(v.shape) for k, v in bmodel.state_dict().items()})
print("inverse softplus", Positive().inverse_transform(torch.tensor([0.5, 2.0])))
print("RESULT: done")
