"""Kalman filter and RTS smoother for a constant-velocity linear dynamical system (the textbook
filter as written in the common PyTorch tutorials / pykalman ports), float64, with the
log-likelihood from MultivariateNormal and a gradient-fitted process noise."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
MultivariateNormal = torch.distributions.MultivariateNormal

dtype = torch.float64
dt = 0.1
F_ = torch.tensor([[1, 0, dt, 0], [0, 1, 0, dt], [0, 0, 1, 0], [0, 0, 0, 1]], dtype=dtype)
H = torch.tensor([[1, 0, 0, 0], [0, 1, 0, 0]], dtype=dtype)
q_true, r = 0.05, 0.2


def simulate(T, gen):
    x = torch.zeros(4, dtype=dtype)
    xs, ys = [], []
    Q = q_true * torch.eye(4, dtype=dtype)
    for _ in range(T):
        x = F_ @ x + torch.randn(4, dtype=dtype, generator=gen) @ torch.linalg.cholesky(Q).T
        y = H @ x + r * torch.randn(2, dtype=dtype, generator=gen)
        xs.append(x)
        ys.append(y)
    return torch.stack(xs), torch.stack(ys)


def kalman_filter(ys, log_q):
    Q = log_q.exp() * torch.eye(4, dtype=dtype)
    R = r ** 2 * torch.eye(2, dtype=dtype)
    m = torch.zeros(4, dtype=dtype)
    P = torch.eye(4, dtype=dtype)
    means, covs, preds, loglik = [], [], [], 0.0
    for y in ys:
        # predict
        m_pred = F_ @ m
        P_pred = F_ @ P @ F_.T + Q
        preds.append((m_pred, P_pred))
        # update
        S = H @ P_pred @ H.T + R
        K = P_pred @ H.T @ torch.linalg.inv(S)
        v = y - H @ m_pred
        loglik = loglik + MultivariateNormal(H @ m_pred, covariance_matrix=S).log_prob(y)
        m = m_pred + K @ v
        P = (torch.eye(4, dtype=dtype) - K @ H) @ P_pred
        means.append(m)
        covs.append(P)
    return torch.stack(means), torch.stack(covs), preds, loglik


def rts_smoother(means, covs, preds):
    ms, Ps = [means[-1]], [covs[-1]]
    for t in range(len(means) - 2, -1, -1):
        m_pred, P_pred = preds[t + 1]
        G = covs[t] @ F_.T @ torch.linalg.solve(P_pred, torch.eye(4, dtype=dtype))
        ms.insert(0, means[t] + G @ (ms[0] - m_pred))
        Ps.insert(0, covs[t] + G @ (Ps[0] - P_pred) @ G.T)
    return torch.stack(ms), torch.stack(Ps)


gen = torch.Generator().manual_seed(0)
xs, ys = simulate(15, gen)
print(xs.dtype, xs.shape, ys.shape)
log_q = torch.tensor(-1.0, dtype=dtype, requires_grad=True)
means, covs, preds, loglik = kalman_filter(ys, log_q)
print(f"loglik {loglik.item():.6f}")
print(means[-3:])
print(torch.diagonal(covs[-1]))
sm, sP = rts_smoother(means.detach(), covs.detach(), [(a.detach(), b.detach()) for a, b in preds])
print("filter rmse", torch.sqrt(((means - xs) ** 2).mean()).item())
print("smoother rmse", torch.sqrt(((sm - xs) ** 2).mean()).item())
print(torch.linalg.eigvalsh(sP[0]))

opt = torch.optim.LBFGS([log_q], lr=0.5, max_iter=3)


def closure():
    opt.zero_grad()
    nll = -kalman_filter(ys, log_q)[3]
    nll.backward()
    return nll


for it in range(2):
    loss = opt.step(closure)
    print(it, f"{loss.item():.6f}", f"{log_q.exp().item():.6f}", log_q.grad.dtype)
def step(m):
    return F_ @ m + 0.1 * torch.sin(m)


print(torch.autograd.functional.jacobian(step, torch.ones(4, dtype=dtype)))
print(torch.autograd.functional.vjp(step, torch.ones(4, dtype=dtype),
                                    torch.ones(4, dtype=dtype))[1])
print("RESULT:", log_q.item())
