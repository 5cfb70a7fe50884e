"""Mixture density network (Bishop 1994; hardmaru's "Mixture Density Networks with PyTorch" post
and sagelywizard/pytorch-mdn's mdn.py) on the inverted-sinusoid toy problem."""
import importlib
import math
import os

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
Normal = torch.distributions.Normal
Categorical = torch.distributions.Categorical

ONEOVERSQRT2PI = 1.0 / math.sqrt(2 * math.pi)


class MDN(nn.Module):
    def __init__(self, in_features, out_features, num_gaussians):
        super(MDN, self).__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.num_gaussians = num_gaussians
        self.pi = nn.Sequential(
            nn.Linear(in_features, num_gaussians),
            nn.Softmax(dim=1)
        )
        self.sigma = nn.Linear(in_features, out_features * num_gaussians)
        self.mu = nn.Linear(in_features, out_features * num_gaussians)

    def forward(self, minibatch):
        pi = self.pi(minibatch)
        sigma = torch.exp(self.sigma(minibatch))
        sigma = sigma.view(-1, self.num_gaussians, self.out_features)
        mu = self.mu(minibatch)
        mu = mu.view(-1, self.num_gaussians, self.out_features)
        return pi, sigma, mu


def gaussian_probability(sigma, mu, target):
    target = target.unsqueeze(1).expand_as(sigma)
    ret = ONEOVERSQRT2PI * torch.exp(-0.5 * ((target - mu) / sigma)**2) / sigma
    return torch.prod(ret, 2)


def mdn_loss(pi, sigma, mu, target):
    prob = pi * gaussian_probability(sigma, mu, target)
    nll = -torch.log(torch.sum(prob, dim=1))
    return torch.mean(nll)


def mdn_loss_logsumexp(pi, sigma, mu, target):
    log_prob = Normal(mu, sigma).log_prob(target.unsqueeze(1).expand_as(sigma)).sum(2)
    return -torch.logsumexp(torch.log(pi) + log_prob, dim=1).mean()


def sample(pi, sigma, mu):
    pis = Categorical(pi).sample().view(pi.size(0), 1, 1)
    gaussian_noise = torch.randn(
        (sigma.size(2), sigma.size(0)), requires_grad=False)
    variance_samples = sigma.gather(1, pis).detach().squeeze()
    mean_samples = mu.detach().gather(1, pis).squeeze()
    return (gaussian_noise * variance_samples + mean_samples).transpose(0, 1)


n = 200
rng = np.random.RandomState(1)
y_data = np.float32(rng.uniform(-10.5, 10.5, (1, n))).T
r_data = np.float32(rng.normal(size=(n, 1)))
x_data = np.float32(np.sin(0.75 * y_data) * 7.0 + y_data * 0.5 + r_data * 1.0)
x_tensor = torch.from_numpy(x_data)
y_tensor = torch.from_numpy(y_data)

torch.manual_seed(0)
model = nn.Sequential(
    nn.Linear(1, 20),
    nn.Tanh(),
    MDN(20, 1, 5)
)
print(model)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(20):
    pi, sigma, mu = model(x_tensor)
    loss = mdn_loss(pi, sigma, mu, y_tensor)
    loss2 = mdn_loss_logsumexp(pi, sigma, mu, y_tensor)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if epoch % 4 == 0:
        print(epoch, f"{loss.item():.4f}", f"{loss2.item():.4f}")

torch.manual_seed(1)
x_test = torch.linspace(-15, 15, 8).view(-1, 1)
with torch.no_grad():
    pi, sigma, mu = model(x_test)
    samples = sample(pi, sigma, mu)
print(pi.shape, sigma.shape, mu.shape, samples.shape)
print(pi.argmax(dim=1))
print(samples.squeeze())
mix = torch.distributions.MixtureSameFamily(Categorical(probs=pi),
                                            torch.distributions.Independent(Normal(mu, sigma), 1))
print(mix.log_prob(x_test * 0.3))
nd = Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]))
print(nd.cdf(torch.tensor([0.5, 0.5])), nd.icdf(torch.tensor([0.1, 0.9])), nd.entropy())
print(mix.sample((3,)).shape, mix.mean.squeeze(), mix.variance.squeeze())
print("RESULT:", loss.item())
