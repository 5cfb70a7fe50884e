"""RealNVP on 2-D "moons"-like data (the well-known senya-ashukha/real-nvp-pytorch notebook) and a
planar flow (Rezende & Mohamed 2015) fitted to a target density."""
import importlib
import os

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
distributions = torch.distributions
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


class RealNVP(nn.Module):
    def __init__(self, nets, nett, mask, prior):
        super(RealNVP, self).__init__()
        self.prior = prior
        self.mask = nn.Parameter(mask, requires_grad=False)
        self.t = torch.nn.ModuleList([nett() for _ in range(len(mask))])
        self.s = torch.nn.ModuleList([nets() for _ in range(len(mask))])

    def g(self, z):
        x = z
        for i in range(len(self.t)):
            x_ = x * self.mask[i]
            s = self.s[i](x_) * (1 - self.mask[i])
            t = self.t[i](x_) * (1 - self.mask[i])
            x = x_ + (1 - self.mask[i]) * (x * torch.exp(s) + t)
        return x

    def f(self, x):
        log_det_J, z = x.new_zeros(x.shape[0]), x
        for i in reversed(range(len(self.t))):
            z_ = self.mask[i] * z
            s = self.s[i](z_) * (1 - self.mask[i])
            t = self.t[i](z_) * (1 - self.mask[i])
            z = (1 - self.mask[i]) * (z - t) * torch.exp(-s) + z_
            log_det_J -= s.sum(dim=1)
        return z, log_det_J

    def log_prob(self, x):
        z, logp = self.f(x)
        return self.prior.log_prob(z) + logp

    def sample(self, batchSize):
        z = self.prior.sample((batchSize, 1))
        logp = self.prior.log_prob(z)  # noqa: F841
        x = self.g(z)
        return x


def make_moons(n, rng):
    t = rng.uniform(0, np.pi, n)
    lab = rng.randint(0, 2, n)
    x = np.where(lab, 1 - np.cos(t), np.cos(t))
    y = np.where(lab, 1 - np.sin(t) - 0.5, np.sin(t))
    return np.stack([x, y], 1) + 0.05 * rng.randn(n, 2)


torch.manual_seed(0)
nets = lambda: nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(), nn.Linear(32, 32), nn.LeakyReLU(),  # noqa: E731,E501
                             nn.Linear(32, 2), nn.Tanh())
nett = lambda: nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(), nn.Linear(32, 32), nn.LeakyReLU(),  # noqa: E731,E501
                             nn.Linear(32, 2))
masks = torch.from_numpy(np.array([[0, 1], [1, 0]] * 3).astype(np.float32))
prior = distributions.MultivariateNormal(torch.zeros(2), torch.eye(2))
flow = RealNVP(nets, nett, masks, prior)
print(flow.s[0])
print(prior, prior.event_shape, prior.batch_shape)
optimizer = torch.optim.Adam([p for p in flow.parameters() if p.requires_grad == True], lr=1e-4)  # noqa: E712,E501
rng = np.random.RandomState(0)
for t in range(10):
    noisy_moons = make_moons(100, rng).astype(np.float32)
    loss = -flow.log_prob(torch.from_numpy(noisy_moons)).mean()
    optimizer.zero_grad()
    loss.backward(retain_graph=True)
    optimizer.step()
    if t % 3 == 0:
        print('iter %s:' % t, 'loss = %.3f' % loss)
z, ldj = flow.f(torch.from_numpy(make_moons(5, rng).astype(np.float32)))
print(z.detach(), ldj.detach())
x = flow.sample(4).detach()
print(x.shape)
print(torch.allclose(flow.f(flow.g(z))[0], z, atol=1e-5))


class PlanarFlow(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.w = nn.Parameter(torch.randn(1, dim) * 0.1)
        self.u = nn.Parameter(torch.randn(1, dim) * 0.1)
        self.b = nn.Parameter(torch.zeros(1))

    def forward(self, z):
        wu = (self.w * self.u).sum()
        u_hat = self.u + (F.softplus(wu) - 1 - wu) * self.w / (self.w ** 2).sum()
        lin = F.linear(z, self.w, self.b)
        f = z + u_hat * torch.tanh(lin)
        psi = (1 - torch.tanh(lin) ** 2) * self.w
        log_det = torch.log(torch.abs(1 + psi @ u_hat.t()) + 1e-8).squeeze(-1)
        return f, log_det


def target_log_density(z):
    z1, z2 = z[:, 0], z[:, 1]
    norm = torch.sqrt(z1 ** 2 + z2 ** 2)
    exp1 = torch.exp(-0.5 * ((z1 - 2) / 0.6) ** 2)
    exp2 = torch.exp(-0.5 * ((z1 + 2) / 0.6) ** 2)
    u = 0.5 * ((norm - 2) / 0.4) ** 2 - torch.log(exp1 + exp2 + 1e-8)
    return -u


flows = nn.ModuleList([PlanarFlow(2) for _ in range(4)])
base = distributions.Normal(torch.zeros(2), torch.ones(2))
opt = torch.optim.RMSprop(flows.parameters(), lr=1e-3, momentum=0.9)
for it in range(10):
    z0 = base.sample((64,))
    log_q = base.log_prob(z0).sum(-1)
    z = z0
    for fl in flows:
        z, ld = fl(z)
        log_q = log_q - ld
    kl = (log_q - target_log_density(z)).mean()
    opt.zero_grad()
    kl.backward()
    opt.step()
    if it % 3 == 0:
        print(f"it {it} kl {kl.item():.4f}")
print(distributions.Independent(base, 1).log_prob(torch.ones(3, 2)))
T = torch.distributions.transforms
td = torch.distributions.TransformedDistribution(
    distributions.Normal(torch.zeros(2), torch.ones(2)),
    [T.AffineTransform(loc=1.0, scale=2.0), T.SigmoidTransform()])
xx = td.sample((3,))
print(xx.shape, td.log_prob(xx).shape)
zz = torch.tensor([[0.3, 0.6], [0.9, 0.2]])
print(td.log_prob(zz))
ct = T.ComposeTransform([T.AffineTransform(0.0, 3.0), T.TanhTransform(cache_size=1)])
yy = ct(torch.tensor([0.1, -0.2]))
print(yy, ct.log_abs_det_jacobian(torch.tensor([0.1, -0.2]), yy), ct.inv(yy))
print("RESULT:", kl.item())
