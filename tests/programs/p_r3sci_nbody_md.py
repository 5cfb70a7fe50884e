"""Molecular dynamics in PyTorch (a Lennard-Jones / gravitational N-body notebook, as in
"differentiable MD with PyTorch" blog posts): positions, torch.cdist pair distances, energies,
forces as -grad of the energy via torch.autograd.grad, velocity-Verlet integration, periodic
boundaries with torch.remainder, kinetic temperature and radial distribution via histc."""

import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)

n_side = 3
box = 4.5
g = torch.arange(n_side) * (box / n_side) + 0.5
pos = torch.stack(torch.meshgrid(g, g, g, indexing="ij"), dim=-1).reshape(-1, 3)
pos = pos + 0.05 * torch.randn_like(pos)
N = pos.shape[0]
vel = 0.1 * torch.randn(N, 3)
vel = vel - vel.mean(0, keepdim=True)
print("N", N, pos.shape, pos.dtype, vel.mean(0).abs().max() < 1e-12)


def minimum_image(dr, L):
    return dr - L * torch.round(dr / L)


def lj_energy(x, eps=1.0, sigma=1.0, rc=2.0):
    dr = x[:, None, :] - x[None, :, :]
    dr = minimum_image(dr, box)
    r2 = (dr ** 2).sum(-1)
    iu = torch.triu_indices(N, N, offset=1)
    r2 = r2[iu[0], iu[1]]
    mask = r2 < rc ** 2
    inv6 = (sigma ** 2 / r2[mask]) ** 3
    return (4 * eps * (inv6 ** 2 - inv6)).sum()


def forces(x):
    x = x.detach().requires_grad_(True)
    e = lj_energy(x)
    (g,) = torch.autograd.grad(e, x)
    return e.detach(), -g


e0, f0 = forces(pos)
print(f"initial energy {e0.item():.6f}")
print("net force ~ 0:", f0.sum(0).abs().max().item() < 1e-10)

# finite-difference check of one force component
h = 1e-6
p_plus = pos.clone()
p_plus[0, 0] += h
p_minus = pos.clone()
p_minus[0, 0] -= h
fd = -(lj_energy(p_plus) - lj_energy(p_minus)) / (2 * h)
print(f"fd force {fd.item():.5f} autograd {f0[0, 0].item():.5f}")

D = torch.cdist(pos, pos)
print("cdist", D.shape, f"{D[0, 1].item():.6f}", f"{D.min().item():.1f}")
D2 = torch.cdist(pos[:4], pos[4:9], p=1)
print("cdist p=1", D2)

dt = 0.002
x, v, f = pos.clone(), vel.clone(), f0
for step in range(40):
    v = v + 0.5 * dt * f
    x = torch.remainder(x + dt * v, box)
    e, f = forces(x)
    v = v + 0.5 * dt * f
    if step % 10 == 0:
        ke = 0.5 * (v ** 2).sum()
        T = 2 * ke / (3 * N)
        print(f"step {step:3d} PE {e.item():.6f} KE {ke.item():.6f} E {(e + ke).item():.6f} "
              f"T {T.item():.5f}")

print("inside box", bool(((x >= 0) & (x < box)).all()))
dr = minimum_image(x[:, None] - x[None], box)
r = dr.norm(dim=-1)[torch.triu_indices(N, N, 1).unbind()]
hist = torch.histc(r, bins=10, min=0.0, max=box / 2)
print("g(r) counts", hist)
print("mean nn dist", f"{r.reshape(-1).topk(N, largest=False).values.mean().item():.5f}")

# gravitational 2-body with autograd forces and leapfrog, checking energy conservation
m = torch.tensor([1.0, 1e-3])
q = torch.tensor([[0.0, 0.0], [1.0, 0.0]])
p = torch.tensor([[0.0, 0.0], [0.0, 1.0]]) * m[:, None]


def hamiltonian(q, p):
    T = (p ** 2 / (2 * m[:, None])).sum()
    r = torch.linalg.norm(q[0] - q[1])
    return T - m[0] * m[1] / r


H0 = hamiltonian(q, p)
for _ in range(100):
    qr = q.clone().requires_grad_()
    dHdq = torch.autograd.grad(hamiltonian(qr, p), qr)[0]
    p = p - 0.005 * dHdq
    pr = p.clone().requires_grad_()
    dHdp = torch.autograd.grad(hamiltonian(q, pr), pr)[0]
    q = q + 0.01 * dHdp
    qr = q.clone().requires_grad_()
    p = p - 0.005 * torch.autograd.grad(hamiltonian(qr, p), qr)[0]
print(f"H0 {H0.item():.8f} H {hamiltonian(q, p).item():.8f}")
print("q", q)
print("RESULT:", f"{(e + 0.5 * (v ** 2).sum()).item():.5f}")
