"""Score-based generative modelling (ermongroup/ncsn and the "sliced score matching" code,
shrunk): geometric noise levels, ConditionalInstanceNorm2dPlus with nn.Embedding-gathered
gamma/alpha/beta, a tiny noise-conditional score net (ELU, dilated convs), annealed denoising
score matching, sliced score matching (VR) with torch.autograd.grad(create_graph=True), exact
score matching on 2-D data with the Jacobian trace, and annealed Langevin dynamics sampling."""
import importlib
import os

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
autograd = torch.autograd


class ConditionalInstanceNorm2dPlus(nn.Module):
    def __init__(self, num_features, num_classes, bias=True):
        super().__init__()
        self.num_features = num_features
        self.bias = bias
        self.instance_norm = nn.InstanceNorm2d(num_features, affine=False,
                                               track_running_stats=False)
        if bias:
            self.embed = nn.Embedding(num_classes, num_features * 3)
            self.embed.weight.data[:, :2 * num_features].normal_(1, 0.02)
            self.embed.weight.data[:, 2 * num_features:].zero_()
        else:
            self.embed = nn.Embedding(num_classes, 2 * num_features)
            self.embed.weight.data.normal_(1, 0.02)

    def forward(self, x, y):
        means = torch.mean(x, dim=(2, 3))
        m = torch.mean(means, dim=-1, keepdim=True)
        v = torch.var(means, dim=-1, keepdim=True)
        means = (means - m) / (torch.sqrt(v + 1e-5))
        h = self.instance_norm(x)
        if self.bias:
            gamma, alpha, beta = self.embed(y).chunk(3, dim=-1)
            h = h + means[..., None, None] * alpha[..., None, None]
            out = gamma.view(-1, self.num_features, 1, 1) * h + beta.view(
                -1, self.num_features, 1, 1)
        else:
            gamma, alpha = self.embed(y).chunk(2, dim=-1)
            h = h + means[..., None, None] * alpha[..., None, None]
            out = gamma.view(-1, self.num_features, 1, 1) * h
        return out


class CondResBlock(nn.Module):
    def __init__(self, ch, num_classes, dilation=1):
        super().__init__()
        self.norm1 = ConditionalInstanceNorm2dPlus(ch, num_classes)
        self.conv1 = nn.Conv2d(ch, ch, 3, padding=dilation, dilation=dilation)
        self.norm2 = ConditionalInstanceNorm2dPlus(ch, num_classes)
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=dilation, dilation=dilation)
        self.act = nn.ELU()

    def forward(self, x, y):
        h = self.conv1(self.act(self.norm1(x, y)))
        h = self.conv2(self.act(self.norm2(h, y)))
        return x + h


class CondScoreNet(nn.Module):
    def __init__(self, ch=8, num_classes=5):
        super().__init__()
        self.begin_conv = nn.Conv2d(1, ch, 3, stride=1, padding=1)
        self.res1 = CondResBlock(ch, num_classes)
        self.res2 = CondResBlock(ch, num_classes, dilation=2)
        self.normalizer = ConditionalInstanceNorm2dPlus(ch, num_classes)
        self.end_conv = nn.Conv2d(ch, 1, 3, stride=1, padding=1)

    def forward(self, x, y):
        h = 2 * x - 1.
        h = self.begin_conv(h)
        h = self.res1(h, y)
        h = self.res2(h, y)
        h = F.elu(self.normalizer(h, y))
        return self.end_conv(h)


def anneal_dsm_score_estimation(scorenet, samples, labels, sigmas, anneal_power=2.):
    used_sigmas = sigmas[labels].view(samples.shape[0], *([1] * len(samples.shape[1:])))
    perturbed_samples = samples + torch.randn_like(samples) * used_sigmas
    target = - 1 / (used_sigmas ** 2) * (perturbed_samples - samples)
    scores = scorenet(perturbed_samples, labels)
    target = target.view(target.shape[0], -1)
    scores = scores.view(scores.shape[0], -1)
    loss = 1 / 2. * ((scores - target) ** 2).sum(dim=-1) * used_sigmas.squeeze() ** anneal_power
    return loss.mean(dim=0)


def sliced_score_estimation_vr(score_net, samples, n_particles=1):
    dup_samples = samples.unsqueeze(0).expand(n_particles, *samples.shape).contiguous().view(
        -1, *samples.shape[1:])
    dup_samples.requires_grad_(True)
    vectors = torch.randn_like(dup_samples)
    grad1 = score_net(dup_samples)
    gradv = torch.sum(grad1 * vectors)
    grad2 = autograd.grad(gradv, dup_samples, create_graph=True)[0]
    grad1 = grad1.view(dup_samples.shape[0], -1)
    loss1 = torch.sum(grad1 * grad1, dim=-1) / 2.
    loss2 = torch.sum((vectors * grad2).view(dup_samples.shape[0], -1), dim=-1)
    loss1 = loss1.view(n_particles, -1).mean(dim=0)
    loss2 = loss2.view(n_particles, -1).mean(dim=0)
    loss = loss1 + loss2
    return loss.mean(), loss1.mean(), loss2.mean()


def exact_score_matching(energy_net, samples):
    samples.requires_grad_(True)
    logp = -energy_net(samples).sum()
    grad1 = autograd.grad(logp, samples, create_graph=True)[0]
    loss1 = (torch.norm(grad1, dim=-1) ** 2 / 2.).detach()
    loss2 = torch.zeros(samples.shape[0], device=samples.device)
    for i in range(samples.shape[1]):
        grad = autograd.grad(grad1[:, i].sum(), samples, create_graph=True)[0][:, i]
        loss2 += grad
    loss = loss1 + loss2
    return loss.mean()


def anneal_Langevin_dynamics(x_mod, scorenet, sigmas, n_steps_each=3, step_lr=0.00002):
    images = []
    with torch.no_grad():
        for c, sigma in enumerate(sigmas):
            labels = torch.ones(x_mod.shape[0], device=x_mod.device) * c
            labels = labels.long()
            step_size = step_lr * (sigma / sigmas[-1]) ** 2
            for s in range(n_steps_each):
                images.append(torch.clamp(x_mod, 0.0, 1.0).to('cpu'))
                noise = torch.randn_like(x_mod) * np.sqrt(step_size * 2)
                grad = scorenet(x_mod, labels)
                x_mod = x_mod + step_size * grad + noise
            print("level: {}, step_size: {:.6f}, grad_norm: {:.4f}".format(
                c, step_size, grad.abs().mean().item()))
        return images


torch.manual_seed(0)
sigmas = torch.tensor(np.exp(np.linspace(np.log(1.0), np.log(0.01), 5))).float()
print(sigmas)
sigmas_t = torch.exp(torch.linspace(np.log(1.0), np.log(0.01), 5))
print(torch.allclose(sigmas, sigmas_t), sigmas_t.dtype)
score = CondScoreNet()
print(score.res1)
optimizer = torch.optim.Adam(score.parameters(), lr=1e-3, weight_decay=0.000, betas=(0.9, 0.999),
                             amsgrad=False)
X = torch.rand(12, 1, 8, 8)
for step in range(5):
    X_b = X[(step % 3) * 4:(step % 3) * 4 + 4]
    X_b = X_b / 256. * 255. + torch.rand_like(X_b) / 256.
    labels = torch.randint(0, len(sigmas), (X_b.shape[0],), device=X_b.device)
    loss = anneal_dsm_score_estimation(score, X_b, labels, sigmas, 2.)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("step: {}, loss: {:.5f}".format(step, loss.item()), labels.tolist())

samples = torch.rand(2, 1, 8, 8)
all_samples = anneal_Langevin_dynamics(samples, score, sigmas.numpy(), 2, 0.00002)
print(len(all_samples), all_samples[-1].shape, f"{all_samples[-1].mean().item():.5f}")
sample = all_samples[-1].view(2, 8, 8)
print(sample[0, 0])

# sliced score matching on 2-D toy data with an MLP score net
torch.manual_seed(2)
mlp = nn.Sequential(nn.Linear(2, 16), nn.Softplus(), nn.Linear(16, 16), nn.Tanh(),
                    nn.Linear(16, 2))
opt = torch.optim.SGD(mlp.parameters(), lr=0.05, momentum=0.9)
data = torch.cat([torch.randn(16, 2) * 0.3 + 1, torch.randn(16, 2) * 0.3 - 1])
for it in range(5):
    loss, l1, l2 = sliced_score_estimation_vr(mlp, data, n_particles=2)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"ssm {it}: {loss.item():.5f} {l1.item():.5f} {l2.item():.5f}")
energy = nn.Sequential(nn.Linear(2, 16), nn.Softplus(), nn.Linear(16, 1))
esm = exact_score_matching(energy, data.clone())
esm.backward()
print(f"esm {esm.item():.5f}", esm.grad_fn, f"{energy[0].weight.grad.norm().item():.5f}")
# score of a Gaussian equals -(x - mu) / var, checked through autograd on log_prob
x = data[:3].clone().requires_grad_()
logp = torch.distributions.MultivariateNormal(torch.zeros(2), torch.eye(2) * 0.5).log_prob(x)
s, = autograd.grad(logp.sum(), x)
print(s, torch.allclose(s, -x / 0.5))
print("RESULT:", f"{esm.item():.5f}")
