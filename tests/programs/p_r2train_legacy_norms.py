"""The hook-based torch.nn.utils.weight_norm / spectral_norm that many GAN and TTS repos still
use (SN-GAN discriminators, WaveNet/HiFi-GAN generators): weight_g/weight_v and
weight_orig/weight_u/weight_v, their state_dict keys and hooks, a few discriminator steps,
eval mode, remove_weight_norm/remove_spectral_norm, the errors for registering twice, and the
parametrization versions with their state_dict keys for comparison."""
import importlib
import os
import warnings

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
weight_norm = torch.nn.utils.weight_norm
remove_weight_norm = torch.nn.utils.remove_weight_norm
spectral_norm = torch.nn.utils.spectral_norm
remove_spectral_norm = torch.nn.utils.remove_spectral_norm
warnings.simplefilter("ignore", FutureWarning)

torch.manual_seed(0)
m = weight_norm(nn.Linear(20, 40), name="weight")
print(m)
print(m.weight_g.size(), m.weight_v.size(), m.weight.size())
print(sorted(n for n, _ in m.named_parameters()), type(m.weight).__name__)
print(torch.allclose(m.weight_g.squeeze(), m.weight_v.norm(dim=1)))
print(list(m._forward_pre_hooks.values())[0].__class__.__name__, m.weight.grad_fn is not None)
print(type(m.weight.grad_fn).__name__)
conv = weight_norm(nn.Conv1d(3, 4, 3), dim=None)
print(conv.weight_g, conv.weight_v.shape)
conv2 = weight_norm(nn.ConvTranspose1d(4, 2, 3), dim=1)
print(conv2.weight_g.shape, [k for k in conv2.state_dict()])
try:
    weight_norm(m)
except RuntimeError as e:
    print(type(e).__name__, e)
remove_weight_norm(m)
print(sorted(n for n, _ in m.named_parameters()), type(m.weight).__name__, m._forward_pre_hooks)
try:
    remove_weight_norm(m)
except ValueError as e:
    print(type(e).__name__, e)


class ResBlock(nn.Module):
    """HiFi-GAN style: dilated weight-normed convs, leaky relu, residual."""

    def __init__(self, ch, dilations=(1, 3)):
        super().__init__()
        self.convs = nn.ModuleList([weight_norm(nn.Conv1d(ch, ch, 3, dilation=d, padding=d))
                                    for d in dilations])

    def forward(self, x):
        for c in self.convs:
            x = x + c(F.leaky_relu(x, 0.1))
        return x

    def remove_weight_norm(self):
        for c in self.convs:
            remove_weight_norm(c)


torch.manual_seed(1)
block = ResBlock(4)
x = torch.randn(2, 4, 10)
y = block(x)
print(y.shape, f"{y.abs().mean().item():.5f}")
print(list(block.state_dict().keys()))
opt = torch.optim.Adam(block.parameters(), lr=0.01)
for step in range(3):
    opt.zero_grad()
    loss = (block(x) - x.flip(-1)).pow(2).mean()
    loss.backward()
    print(step, f"{loss.item():.5f}", f"{block.convs[0].weight_g.grad.norm().item():.5f}")
    opt.step()
before = block(x)
block.remove_weight_norm()
after = block(x)
print(torch.allclose(before, after, atol=1e-6), list(block.state_dict().keys()))


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            spectral_norm(nn.Conv2d(1, 4, 3, 2, 1)),
            nn.LeakyReLU(0.2),
            spectral_norm(nn.Conv2d(4, 8, 3, 2, 1)),
            nn.LeakyReLU(0.2),
        )
        self.fc = spectral_norm(nn.Linear(8 * 2 * 2, 1), n_power_iterations=2)

    def forward(self, x):
        return self.fc(self.main(x).flatten(1))


torch.manual_seed(2)
D = Discriminator()
print(D)
sn = D.main[0]
print(sorted(n for n, _ in sn.named_parameters()), sorted(n for n, _ in sn.named_buffers()))
print(sn.weight_u.shape, sn.weight_v.shape, sn.weight_orig.shape, sn.weight.requires_grad)
print(list(D.state_dict().keys()))
print(D.fc.weight_u)
opt = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.0, 0.9))
real = torch.randn(4, 1, 8, 8)
fake = torch.randn(4, 1, 8, 8)
for step in range(3):
    opt.zero_grad()
    loss = F.relu(1.0 - D(real)).mean() + F.relu(1.0 + D(fake)).mean()  # hinge loss
    loss.backward()
    opt.step()
    sigma = torch.linalg.matrix_norm(D.fc.weight.detach(), ord=2)
    print(step, f"{loss.item():.5f}", f"{sigma.item():.4f}")
print(D.fc.weight_u[:3])
D.eval()
u_before = D.fc.weight_u.clone()
with torch.no_grad():
    out = D(real)
print(out.squeeze(1), torch.equal(u_before, D.fc.weight_u))
sd = D.state_dict()
print(sd["fc.weight_orig"].shape, "fc.weight" in sd)
D2 = Discriminator()
print(D2.load_state_dict(sd))
with torch.no_grad():
    print(torch.allclose(D2.eval()(real), out))
try:
    spectral_norm(D.fc)
except RuntimeError as e:
    print(type(e).__name__, e)
remove_spectral_norm(D.fc)
print(sorted(n for n, _ in D.fc.named_parameters()), sorted(n for n, _ in D.fc.named_buffers()))
try:
    remove_spectral_norm(D.fc)
except ValueError as e:
    print(type(e).__name__, e)

# the parametrization versions, for comparison of their state_dict layouts
torch.manual_seed(3)
pw = nn.utils.parametrizations.weight_norm(nn.Linear(5, 3))
ps = nn.utils.parametrizations.spectral_norm(nn.Linear(5, 3))
print(list(pw.state_dict().keys()))
print(list(ps.state_dict().keys()))
print(pw.parametrizations.weight.original0.shape, pw.parametrizations.weight.original1.shape)
x = torch.randn(2, 5)
print(pw(x), ps(x))
print("RESULT:", f"{loss.item():.5f}", f"{after.sum().item():.5f}")
