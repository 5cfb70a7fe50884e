"""Normalizing flows with user-defined Transform subclasses, after the torch.distributions
Transform docs and the "Variational Inference with Normalizing Flows" (Rezende & Mohamed 2015)
/ MAF (Papamakarios et al. 2017) PyTorch ports (e.g. karpathy/pytorch-normalizing-flows):
a PlanarTransform and a MADE-based autoregressive Transform written as torch Transform
subclasses (domain/codomain, bijective, _call/_inverse, log_abs_det_jacobian, caching via
cache_size=1), stacked in a TransformedDistribution and fitted by maximum likelihood on a
two-moons-like dataset; then sampling, log_prob and the inverse round trip."""
# compare: rtol=5e-4 atol=1e-5
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
D = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".distributions")
T = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".distributions.transforms")
C = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".distributions.constraints")

torch.manual_seed(0)


def moons(n):
    t = torch.rand(n) * math.pi
    upper = torch.rand(n) > 0.5
    x = torch.where(upper, torch.cos(t), 1 - torch.cos(t))
    y = torch.where(upper, torch.sin(t), 0.5 - torch.sin(t))
    return torch.stack([x, y], 1) + 0.05 * torch.randn(n, 2)


class MaskedLinear(nn.Linear):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__(in_features, out_features, bias)
        self.register_buffer("mask", torch.ones(out_features, in_features))

    def forward(self, input):
        return F.linear(input, self.mask * self.weight, self.bias)


class MADE(nn.Module):
    """Two-output MADE (shift, log_scale) with natural ordering."""

    def __init__(self, nin, hidden):
        super().__init__()
        self.nin = nin
        self.l1 = MaskedLinear(nin, hidden)
        self.l2 = MaskedLinear(hidden, 2 * nin)
        m_in = torch.arange(nin)
        m_h = torch.arange(hidden) % max(nin - 1, 1)
        self.l1.mask.copy_((m_h[:, None] >= m_in[None, :]).float())
        out = torch.cat([m_in, m_in])
        self.l2.mask.copy_((out[:, None] > m_h[None, :]).float())

    def forward(self, x):
        h = self.l2(torch.tanh(self.l1(x)))
        shift, log_scale = h.chunk(2, dim=-1)
        return shift, log_scale.clamp(-5, 3)


class MAFTransform(T.Transform):
    """x -> u with u_i = (x_i - mu_i(x_<i)) * exp(-alpha_i(x_<i)); the inverse is sequential."""

    domain = C.real_vector
    codomain = C.real_vector
    bijective = True

    def __init__(self, made, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.made = made

    def _call(self, x):
        shift, log_scale = self.made(x)
        return (x - shift) * torch.exp(-log_scale)

    def _inverse(self, u):
        x = torch.zeros_like(u)
        for i in range(u.shape[-1]):
            shift, log_scale = self.made(x)
            x = x.clone()
            x[..., i] = u[..., i] * torch.exp(log_scale[..., i]) + shift[..., i]
        return x

    def log_abs_det_jacobian(self, x, y):
        _, log_scale = self.made(x)
        return -log_scale.sum(-1)


class PlanarTransform(T.Transform):
    domain = C.real_vector
    codomain = C.real_vector
    bijective = True

    def __init__(self, dim, cache_size=1):
        super().__init__(cache_size=cache_size)
        self.u = nn.Parameter(torch.randn(dim) * 0.1)
        self.w = nn.Parameter(torch.randn(dim) * 0.1)
        self.b = nn.Parameter(torch.zeros(1))

    def u_hat(self):
        wu = self.w @ self.u
        return self.u + (F.softplus(wu) - 1 - wu) * self.w / (self.w @ self.w)

    def _call(self, z):
        return z + self.u_hat() * torch.tanh(z @ self.w + self.b).unsqueeze(-1)

    def log_abs_det_jacobian(self, z, y):
        psi = (1 - torch.tanh(z @ self.w + self.b) ** 2).unsqueeze(-1) * self.w
        return torch.log((1 + psi @ self.u_hat()).abs() + 1e-8)


data = moons(256)
base = D.Independent(D.Normal(torch.zeros(2), torch.ones(2)), 1)
mades = nn.ModuleList([MADE(2, 16) for _ in range(3)])
print(mades[0])
print("masks", mades[0].l1.mask.sum().item(), mades[0].l2.mask.sum().item())
# density estimation: data -> noise through MAF layers


def to_noise():
    ts = []
    for i, m in enumerate(mades):
        ts.append(MAFTransform(m))
        if i < len(mades) - 1:
            ts.append(T.ReshapeTransform((2,), (2,)))
    return T.ComposeTransform(ts)


opt = torch.optim.Adam(mades.parameters(), lr=1e-2)
for step in range(40):
    f = to_noise()
    u = f(data)
    loss = -(base.log_prob(u) + f.log_abs_det_jacobian(data, u)).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0 or step == 39:
        print("maf step %d nll %.4f" % (step, loss.item()))

with torch.no_grad():
    flow = D.TransformedDistribution(base, [to_noise().inv])
    print("flow", flow.batch_shape, flow.event_shape, flow.support)
    torch.manual_seed(5)
    s = flow.sample((4,))
    print("samples", s)
    print("log_prob", flow.log_prob(s), flow.log_prob(data[:3]))
    f = to_noise()
    print("round trip", (f.inv(f(data[:5])) - data[:5]).abs().max() < 1e-4)

# planar flow as a variational posterior fitted to an unnormalised 2-d density (reverse KL)
torch.manual_seed(1)


def log_target(z):
    z1, z2 = z[..., 0], z[..., 1]
    w1 = torch.sin(2 * math.pi * z1 / 4)
    return -0.5 * ((z2 - w1) / 0.4) ** 2 - 0.1 * z1 ** 2


planars = [PlanarTransform(2) for _ in range(4)]
params = [p for t in planars for p in (t.u, t.w, t.b)]
opt = torch.optim.Adam(params, lr=2e-2)
for step in range(60):
    q = D.TransformedDistribution(base, planars)
    z = q.rsample((64,))
    lq = q.log_prob(z)
    loss = (lq - log_target(z)).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 20 == 0 or step == 59:
        print("planar step %d kl %.4f" % (step, loss.item()))
print("planar params", planars[0].u_hat(), planars[-1].b)
print("event_dim", planars[0].event_dim, "inv", planars[0].inv, "sign", planars[0].bijective)
try:
    planars[0].inv(torch.zeros(2))
except NotImplementedError as e:
    print("NotImplementedError", repr(e))
try:
    MAFTransform(mades[0]).sign
except NotImplementedError as e:
    print("NotImplementedError sign", repr(e))
print("RESULT: done")
