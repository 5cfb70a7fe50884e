"""Numerical integration, differentiation and interpolation in torch (trapezoid /
cumulative_trapezoid / torch.gradient / diff, Simpson's rule, Monte Carlo, linear interpolation
with searchsorted+lerp, F.interpolate and grid_sample in 1-D), then the "Fourier Features Let
Networks Learn High Frequency Functions" toy: a random Fourier feature MLP fitting a 1-D signal."""

# compare: rtol=1e-4 atol=1e-5
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

x = torch.linspace(0, math.pi, 101, dtype=torch.float64)
y = torch.sin(x)
print(f"trapezoid {torch.trapezoid(y, x).item():.8f}  trapz {torch.trapz(y, x).item():.8f}")
print(torch.trapezoid(y, dx=x[1] - x[0]), torch.trapezoid(torch.tensor([1.0, 2.0, 3.0])))
ci = torch.cumulative_trapezoid(y, x)
print("cumulative", ci.shape, ci[-1], ci[49], 1 - torch.cos(x[50]))
print(torch.cumulative_trapezoid(torch.arange(6.0).reshape(2, 3), dim=1))
print(
    torch.trapezoid(torch.arange(6.0).reshape(2, 3), dim=0),
    torch.trapezoid(y.float(), dx=0.5).dtype,
)
h = (x[1] - x[0]).item()
simpson = h / 3 * (y[0] + 4 * y[1:-1:2].sum() + 2 * y[2:-1:2].sum() + y[-1])
print(f"simpson {simpson.item():.10f}")
torch.manual_seed(0)
u = torch.rand(10000, dtype=torch.float64) * math.pi
print(f"monte carlo {(math.pi * torch.sin(u).mean()).item():.4f}")

(g,) = torch.gradient(y, spacing=(x,))
print("gradient", g[:3], (g - torch.cos(x)).abs().max() < 1e-3)
(g2,) = torch.gradient(y, spacing=h, edge_order=2)
print((g2 - torch.cos(x)).abs().max() < 1e-3, g2[0])
gx, gy = torch.gradient(torch.arange(12.0).reshape(3, 4) ** 2)
print(gx, gy)
print(torch.gradient(torch.tensor([1.0, 4.0, 9.0]), spacing=[torch.tensor([0.0, 1.0, 3.0])]))
print(
    "diff",
    torch.diff(torch.tensor([1, 3, 6, 10])),
    torch.diff(y, n=2)[:2],
    torch.diff(torch.tensor([1.0, 2.0]), prepend=torch.tensor([0.0]), append=torch.tensor([5.0])),
)

xp = torch.tensor([0.0, 1.0, 2.5, 4.0])
fp = torch.tensor([1.0, 3.0, 2.0, 5.0])
xq = torch.tensor([-0.5, 0.5, 1.0, 2.0, 3.9, 4.5])
idx = torch.searchsorted(xp, xq).clamp(1, len(xp) - 1)
x0, x1 = xp[idx - 1], xp[idx]
w = ((xq - x0) / (x1 - x0)).clamp(0, 1)
interp = torch.lerp(fp[idx - 1], fp[idx], w)
print("interp", idx, interp)
print(
    torch.searchsorted(xp, xq, right=True),
    torch.searchsorted(xp, xq, side="left"),
    torch.bucketize(xq, xp),
    torch.bucketize(xq, xp, right=True, out_int32=True).dtype,
)
sig = torch.sin(torch.linspace(0, 2 * math.pi, 8)).view(1, 1, -1)
for mode in ["nearest", "linear", "area", "nearest-exact"]:
    kw = {"align_corners": False} if mode == "linear" else {}
    print(mode, F.interpolate(sig, size=12, mode=mode, **kw)[0, 0, :5])
print(F.interpolate(sig, scale_factor=1.5, mode="linear", align_corners=True).shape)
grid = torch.stack([torch.linspace(-1, 1, 5), torch.zeros(5)], -1).view(1, 1, 5, 2)
print("grid_sample", F.grid_sample(sig.unsqueeze(2), grid, align_corners=True).view(-1))
print(
    torch.lerp(torch.zeros(3), torch.ones(3), torch.tensor([0.0, 0.25, 1.0])),
    torch.lerp(torch.tensor([1.0]), torch.tensor([3.0]), 0.5),
)


class FourierFeatures(nn.Module):
    def __init__(self, in_features, mapping_size, scale):
        super().__init__()
        self.register_buffer("B", torch.randn(in_features, mapping_size) * scale)

    def forward(self, v):
        proj = 2 * math.pi * v @ self.B
        return torch.cat([torch.sin(proj), torch.cos(proj)], dim=-1)


torch.manual_seed(1)
coords = torch.linspace(0, 1, 64).unsqueeze(1)
target = torch.sin(12 * math.pi * coords) * torch.exp(-2 * coords)
model = nn.Sequential(FourierFeatures(1, 16, 4.0), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 1))
plain = nn.Sequential(nn.Linear(1, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 1))
print(model)
print(list(model.state_dict().keys()), model[0].B.shape, model[0].B.requires_grad)
for name, net in [("fourier", model), ("plain", plain)]:
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    for step in range(12):
        opt.zero_grad()
        loss = F.mse_loss(net(coords), target)
        loss.backward()
        opt.step()
    with torch.no_grad():
        psnr = -10 * torch.log10(F.mse_loss(net(coords), target))
    print(f"{name}: loss {loss.item():.5f} psnr {psnr.item():.3f}")
area_true = torch.trapezoid(target.squeeze(), coords.squeeze())
with torch.no_grad():
    area_fit = torch.trapezoid(model(coords).squeeze(), coords.squeeze())
print(f"area {area_true.item():.5f} fit {area_fit.item():.5f}")
xt = torch.linspace(0, 1, 5, requires_grad=True)
area = torch.trapezoid(xt**2, xt)
area.backward()
print(type(area.grad_fn).__name__, xt.grad)
ct = torch.cumulative_trapezoid(xt**2, dx=0.25)
print(ct, type(ct.grad_fn).__name__)
try:
    torch.trapezoid(y, x[:10])
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    torch.gradient(torch.tensor([1.0]))
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    torch.searchsorted(xp, xq, right=True, side="left")
except RuntimeError as e:
    print(type(e).__name__, e)
print("RESULT: ok")
