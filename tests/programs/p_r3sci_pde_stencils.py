"""Finite differences with torch (PDE course notebooks, "solving the heat equation with PyTorch
conv2d" posts): a 5-point Laplacian as a fixed conv2d kernel, Jacobi iterations for a Poisson
problem, explicit heat-equation steps with torch.roll stencils (periodic) and F.pad (Dirichlet),
gradients via torch.gradient and torch.diff, and the 1-D wave equation."""

import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(0)
n = 16
h = 1.0 / (n - 1)
lap_kernel = torch.tensor([[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]]).view(1, 1, 3, 3)
print("kernel", lap_kernel.shape, lap_kernel.dtype)

x = torch.linspace(0, 1, n)
X, Y = torch.meshgrid(x, x, indexing="ij")
u = torch.sin(math.pi * X) * torch.sin(math.pi * Y)
lap = F.conv2d(u[None, None], lap_kernel, padding=0)[0, 0] / h ** 2
exact = -2 * math.pi ** 2 * u[1:-1, 1:-1]
print("laplacian shape", lap.shape, f"rel err {((lap - exact).norm() / exact.norm()).item():.5f}")

conv = nn.Conv2d(1, 1, 3, padding=1, bias=False, padding_mode="circular")
with torch.no_grad():
    conv.weight.copy_(lap_kernel)
conv.weight.requires_grad_(False)
print(conv)
lap_periodic = conv(u[None, None])[0, 0]
lap_roll = (torch.roll(u, 1, 0) + torch.roll(u, -1, 0) + torch.roll(u, 1, 1)
            + torch.roll(u, -1, 1) - 4 * u)
print("circular conv == roll stencil", torch.allclose(lap_periodic, lap_roll, atol=1e-6))

# Poisson: -lap(phi) = f on the unit square, phi = 0 on the boundary; Jacobi iterations
f = 2 * math.pi ** 2 * torch.sin(math.pi * X) * torch.sin(math.pi * Y)
phi = torch.zeros(n, n)
avg_kernel = torch.tensor([[0.0, 0.25, 0.0], [0.25, 0.0, 0.25], [0.0, 0.25, 0.0]])[None, None]
for it in range(400):
    interior = F.conv2d(phi[None, None], avg_kernel)[0, 0] + 0.25 * h ** 2 * f[1:-1, 1:-1]
    phi = F.pad(interior, (1, 1, 1, 1), mode="constant", value=0.0)
    if it % 100 == 0:
        res = (F.conv2d(phi[None, None], lap_kernel)[0, 0] / h ** 2 + f[1:-1, 1:-1])
        print(f"jacobi it {it:3d} residual {res.abs().max().item():.5f}")
print(f"poisson error {(phi - u).abs().max().item():.5f}")
print(phi[n // 2, ::4])

# heat equation u_t = alpha lap(u), explicit, periodic with roll; mass conserved
alpha, dt = 1.0, 0.2 * h ** 2
T = torch.zeros(n, n)
T[6:10, 6:10] = 1.0
mass0 = T.sum()
for step in range(50):
    T = T + alpha * dt / h ** 2 * (torch.roll(T, 1, 0) + torch.roll(T, -1, 0)
                                   + torch.roll(T, 1, 1) + torch.roll(T, -1, 1) - 4 * T)
print(f"heat mass {mass0.item():.4f} -> {T.sum().item():.4f} max {T.max().item():.5f}")
print(T[8, 4:12])

# Dirichlet heat with replicate / reflect padding modes on a batch
Tb = torch.rand(2, 1, 8, 8)
for mode in ["replicate", "reflect", "circular"]:
    p = F.pad(Tb, (1, 1, 1, 1), mode=mode)
    out = Tb + 0.1 * F.conv2d(p, lap_kernel)
    print(mode, p.shape, f"{out.mean().item():.6f}")

# torch.gradient / torch.diff on a sampled function
xs = torch.linspace(0, 2 * math.pi, 50)
ys = torch.sin(xs)
(dy,) = torch.gradient(ys, spacing=(xs,))
print(f"gradient err {(dy - torch.cos(xs)).abs().max().item():.5f}")
gx, gy = torch.gradient(u, spacing=h)
print("grad shapes", gx.shape, gy.shape, f"{gx[3, 5].item():.5f}")
gx2 = torch.gradient(u, spacing=h, dim=0, edge_order=2)[0]
print(f"edge_order=2 {gx2[0, 5].item():.5f}")
d1 = torch.diff(ys) / torch.diff(xs)
d2 = torch.diff(ys, n=2)
print("diff shapes", d1.shape, d2.shape, f"{d2.abs().max().item():.6f}")
print(torch.diff(torch.tensor([1, 3, 6, 10]), prepend=torch.tensor([0])))

# 1-D wave equation leapfrog with a conv1d stencil
m = 64
c, dxw = 1.0, 1.0 / m
dtw = 0.5 * dxw
xw = torch.arange(m) * dxw
u_prev = torch.exp(-200 * (xw - 0.5) ** 2)
u_cur = u_prev.clone()
k1 = torch.tensor([[[1.0, -2.0, 1.0]]])
r2 = (c * dtw / dxw) ** 2
for _ in range(40):
    lap1 = F.conv1d(F.pad(u_cur[None, None], (1, 1), mode="circular"), k1)[0, 0]
    u_prev, u_cur = u_cur, 2 * u_cur - u_prev + r2 * lap1
print(f"wave energy {u_cur.pow(2).sum().item():.5f} "
      f"peaks at {u_cur[:m // 2].argmax().item()} {u_cur[m // 2:].argmax().item() + m // 2}")
print("RESULT:", f"{phi.sum().item():.4f}")
