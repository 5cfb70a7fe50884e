"""Writing ODE solvers in torch (numerical-methods course notebooks / torchdiffeq-style fixed-grid
solvers): explicit Euler, midpoint and classic RK4 steppers over batched states, the Lotka-Volterra
and damped oscillator systems, convergence order, comparison to the matrix_exp solution of a
linear system, and gradients of the final state w.r.t. parameters through the solver."""

import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))


def euler_step(f, t, y, h):
    return y + h * f(t, y)


def midpoint_step(f, t, y, h):
    k1 = f(t, y)
    return y + h * f(t + h / 2, y + h / 2 * k1)


def rk4_step(f, t, y, h):
    k1 = f(t, y)
    k2 = f(t + h / 2, y + h / 2 * k1)
    k3 = f(t + h / 2, y + h / 2 * k2)
    k4 = f(t + h, y + h * k3)
    return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def odeint(f, y0, t, step):
    ys = [y0]
    y = y0
    for t0, t1 in zip(t[:-1], t[1:]):
        y = step(f, t0, y, t1 - t0)
        ys.append(y)
    return torch.stack(ys)


def exp_decay(t, y):
    return -y


y0 = torch.tensor([1.0], dtype=torch.float64)
for name, step in [("euler", euler_step), ("midpoint", midpoint_step), ("rk4", rk4_step)]:
    errs = []
    for n in [10, 20, 40]:
        t = torch.linspace(0, 1, n + 1, dtype=torch.float64)
        y = odeint(exp_decay, y0, t, step)
        errs.append(abs(y[-1].item() - math.exp(-1)))
    order = math.log2(errs[0] / errs[1]), math.log2(errs[1] / errs[2])
    print(f"{name:8s} err {errs[-1]:.3e} order {order[0]:.2f} {order[1]:.2f}")


class LotkaVolterra(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.params = torch.nn.Parameter(torch.tensor([1.1, 0.4, 0.4, 0.1]))

    def forward(self, t, y):
        a, b, c, d = self.params
        x, z = y[..., 0], y[..., 1]
        return torch.stack([a * x - b * x * z, d * x * z - c * z], dim=-1)


lv = LotkaVolterra()
print(lv)
y0 = torch.tensor([[10.0, 10.0], [5.0, 2.0], [1.0, 1.0]])
t = torch.linspace(0.0, 2.0, 41)
traj = odeint(lv, y0, t, rk4_step)
print("traj", traj.shape, traj.dtype)
print(traj[::10, 0])
print(traj[-1])
loss = traj[-1].pow(2).mean()
loss.backward()
print("dloss/dparams", lv.params.grad)

# damped oscillator x'' + 2 zeta w x' + w^2 x = 0 as a linear system y' = A y
w, zeta = 2.0, 0.1
A = torch.tensor([[0.0, 1.0], [-w ** 2, -2 * zeta * w]], dtype=torch.float64)
yb = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.5, -0.5]], dtype=torch.float64)
t = torch.linspace(0, 3, 151, dtype=torch.float64)
num = odeint(lambda t, y: y @ A.T, yb, t, rk4_step)
exact = yb @ torch.linalg.matrix_exp(3.0 * A).T
print("rk4 vs expm max err", (num[-1] - exact).abs().max().item() < 1e-6)
print(exact)
ev = torch.linalg.eigvals(A)
print("eigvals", ev)
print("decay rate", f"{-ev.real.max().item():.4f}")

# adaptive step-size control with an embedded Euler/Heun pair
def heun_euler(f, t, y, h):
    k1 = f(t, y)
    k2 = f(t + h, y + h * k1)
    return y + h / 2 * (k1 + k2), y + h * k1


def solve_adaptive(f, y, t0, t1, h=0.1, tol=1e-4):
    t, nsteps, rejects = t0, 0, 0
    while t < t1:
        h = min(h, t1 - t)
        y_high, y_low = heun_euler(f, t, y, h)
        err = (y_high - y_low).abs().max().item()
        if err <= tol:
            t, y, nsteps = t + h, y_high, nsteps + 1
        else:
            rejects += 1
        h = 0.9 * h * min(max((tol / max(err, 1e-16)) ** 0.5, 0.2), 5.0)
    return y, nsteps, rejects


with torch.no_grad():
    yT, nsteps, rejects = solve_adaptive(lambda t, y: y @ A.T, yb, 0.0, 3.0)
print("adaptive steps", nsteps, "rejects", rejects, f"err {(yT - exact).abs().max().item():.2e}")

# stiff problem: implicit (backward) Euler with torch.linalg.solve
K = torch.tensor([[-1000.0, 0.0], [0.0, -1.0]], dtype=torch.float64)
y = torch.tensor([1.0, 1.0], dtype=torch.float64)
eye = torch.eye(2, dtype=torch.float64)
for _ in range(10):
    y = torch.linalg.solve(eye - 0.1 * K, y)
print("implicit euler", y)
print("RESULT:", f"{loss.item():.4f}")
