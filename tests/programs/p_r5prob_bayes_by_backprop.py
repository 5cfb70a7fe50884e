"""Bayes by Backprop (Blundell et al. 2015), after nitarshan/bayes-by-backprop's notebook:
Gaussian variational posterior with softplus(rho) scales, a scale-mixture prior of two
Normals, BayesianLinear layers sampling weights per forward pass, the ELBO with
sampled log-prior/log-variational terms and a Categorical likelihood, plus MC prediction with
predictive entropy; on a small synthetic 2-class problem instead of MNIST."""
# compare: rtol=2e-4 atol=1e-5
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
D = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".distributions")

torch.manual_seed(0)
PI = 0.5
SIGMA_1 = torch.FloatTensor([math.exp(-0)])
SIGMA_2 = torch.FloatTensor([math.exp(-6)])
BATCH_SIZE, NUM_BATCHES, SAMPLES, CLASSES = 16, 4, 2, 3


class Gaussian(object):
    def __init__(self, mu, rho):
        super().__init__()
        self.mu = mu
        self.rho = rho
        self.normal = torch.distributions.Normal(0, 1)

    @property
    def sigma(self):
        return torch.log1p(torch.exp(self.rho))

    def sample(self):
        epsilon = self.normal.sample(self.rho.size())
        return self.mu + self.sigma * epsilon

    def log_prob(self, input):
        return (-math.log(math.sqrt(2 * math.pi))
                - torch.log(self.sigma)
                - ((input - self.mu) ** 2) / (2 * self.sigma ** 2)).sum()


class ScaleMixtureGaussian(object):
    def __init__(self, pi, sigma1, sigma2):
        super().__init__()
        self.pi = pi
        self.sigma1 = sigma1
        self.sigma2 = sigma2
        self.gaussian1 = torch.distributions.Normal(0, sigma1)
        self.gaussian2 = torch.distributions.Normal(0, sigma2)

    def log_prob(self, input):
        prob1 = torch.exp(self.gaussian1.log_prob(input))
        prob2 = torch.exp(self.gaussian2.log_prob(input))
        return (torch.log(self.pi * prob1 + (1 - self.pi) * prob2)).sum()


class BayesianLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight_mu = nn.Parameter(torch.Tensor(out_features, in_features).uniform_(-0.2, 0.2))
        self.weight_rho = nn.Parameter(torch.Tensor(out_features, in_features).uniform_(-5, -4))
        self.weight = Gaussian(self.weight_mu, self.weight_rho)
        self.bias_mu = nn.Parameter(torch.Tensor(out_features).uniform_(-0.2, 0.2))
        self.bias_rho = nn.Parameter(torch.Tensor(out_features).uniform_(-5, -4))
        self.bias = Gaussian(self.bias_mu, self.bias_rho)
        self.weight_prior = ScaleMixtureGaussian(PI, SIGMA_1, SIGMA_2)
        self.bias_prior = ScaleMixtureGaussian(PI, SIGMA_1, SIGMA_2)
        self.log_prior = 0
        self.log_variational_posterior = 0

    def forward(self, input, sample=False, calculate_log_probs=False):
        if self.training or sample:
            weight = self.weight.sample()
            bias = self.bias.sample()
        else:
            weight = self.weight.mu
            bias = self.bias.mu
        if self.training or calculate_log_probs:
            self.log_prior = self.weight_prior.log_prob(weight) + self.bias_prior.log_prob(bias)
            self.log_variational_posterior = (self.weight.log_prob(weight)
                                              + self.bias.log_prob(bias))
        else:
            self.log_prior, self.log_variational_posterior = 0, 0
        return F.linear(input, weight, bias)


class BayesianNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = BayesianLinear(4, 16)
        self.l2 = BayesianLinear(16, 16)
        self.l3 = BayesianLinear(16, CLASSES)

    def forward(self, x, sample=False):
        x = x.view(-1, 4)
        x = F.relu(self.l1(x, sample))
        x = F.relu(self.l2(x, sample))
        x = F.log_softmax(self.l3(x, sample), dim=1)
        return x

    def log_prior(self):
        return self.l1.log_prior + self.l2.log_prior + self.l3.log_prior

    def log_variational_posterior(self):
        return (self.l1.log_variational_posterior + self.l2.log_variational_posterior
                + self.l3.log_variational_posterior)

    def sample_elbo(self, input, target, samples=SAMPLES):
        outputs = torch.zeros(samples, BATCH_SIZE, CLASSES)
        log_priors = torch.zeros(samples)
        log_variational_posteriors = torch.zeros(samples)
        for i in range(samples):
            outputs[i] = self(input, sample=True)
            log_priors[i] = self.log_prior()
            log_variational_posteriors[i] = self.log_variational_posterior()
        log_prior = log_priors.mean()
        log_variational_posterior = log_variational_posteriors.mean()
        negative_log_likelihood = F.nll_loss(outputs.mean(0), target, size_average=False)
        loss = (log_variational_posterior - log_prior) / NUM_BATCHES + negative_log_likelihood
        return loss, log_prior, log_variational_posterior, negative_log_likelihood


X = torch.randn(BATCH_SIZE * NUM_BATCHES, 4)
Y = (X[:, 0] > 0).long() + (X[:, 1] > 0.5).long()
net = BayesianNetwork()
print([(n, tuple(p.shape)) for n, p in net.named_parameters()])
optimizer = torch.optim.Adam(net.parameters())
for epoch in range(3):
    net.train()
    for b in range(NUM_BATCHES):
        data = X[b * BATCH_SIZE:(b + 1) * BATCH_SIZE]
        target = Y[b * BATCH_SIZE:(b + 1) * BATCH_SIZE]
        net.zero_grad()
        loss, log_prior, log_vp, nll = net.sample_elbo(data, target)
        loss.backward()
        optimizer.step()
    print("epoch %d loss %.3f prior %.3f vp %.3f nll %.4f" % (
        epoch, loss.item(), log_prior.item(), log_vp.item(), nll.item()))
    print("  grad fns", loss.grad_fn.name(), log_prior.grad_fn.name())

net.eval()
with torch.no_grad():
    outputs = torch.zeros(5, 8, CLASSES)
    for i in range(5):
        outputs[i] = net(X[:8], sample=True).exp()
    mean = outputs.mean(0)
    ent = D.Categorical(probs=mean).entropy()
    print("MC mean", mean, "entropy", ent)
    print("ensemble acc", (mean.argmax(1) == Y[:8]).float().mean().item(),
          "posterior-mean acc", (net(X[:8]).argmax(1) == Y[:8]).float().mean().item())
    print("sigma range", net.l1.weight.sigma.min().item(), net.l1.weight.sigma.max().item())
    print("mixture prior", ScaleMixtureGaussian(PI, SIGMA_1, SIGMA_2).log_prob(torch.tensor([0.0, 0.1, 1.0])))
print("RESULT: done")
