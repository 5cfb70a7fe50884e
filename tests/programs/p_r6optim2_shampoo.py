"""Shampoo, shrunk from moskomule/shampoo.pytorch (shampoo.py: per-dimension preconditioners
built from mode-unfolded gradients, inverse p-th roots through torch.svd, torch.eye(out=...),
in-place transpose_ of the gradient view, the deprecated ``add_(Number, Tensor)`` form the
repo uses) and facebookresearch/optimizers' matrix_functions.py (inverse roots by
torch.linalg.eigh with the PSD shift, and the coupled Newton iteration), training a small
conv+linear regressor and comparing the three matrix roots."""
import importlib
import os
import warnings

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
Optimizer = torch.optim.Optimizer
warnings.simplefilter("ignore")


def _matrix_power(matrix, power):
    # use CPU for svd for speed up
    device = matrix.device
    matrix = matrix.cpu()
    u, s, v = torch.svd(matrix)
    return (u @ s.pow_(power).diag() @ v.t()).to(device)


class Shampoo(Optimizer):
    r"""Implements Shampoo Optimizer"""

    def __init__(self, params, lr=1e-1, momentum=0, weight_decay=0, epsilon=1e-4, update_freq=1):
        defaults = dict(lr=lr, momentum=momentum, weight_decay=weight_decay,
                        epsilon=epsilon, update_freq=update_freq)
        super(Shampoo, self).__init__(params, defaults)

    def step(self, closure=None):
        loss = None
        if closure is not None:
            loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad.data
                order = grad.ndimension()
                original_size = grad.size()
                state = self.state[p]
                momentum = group["momentum"]
                weight_decay = group["weight_decay"]
                if len(state) == 0:
                    state["step"] = 0
                    if momentum > 0:
                        state["momentum_buffer"] = grad.clone()
                    for dim_id, dim in enumerate(grad.size()):
                        # precondition matrices
                        state["precond_{}".format(dim_id)] = group["epsilon"] * torch.eye(
                            dim, out=grad.new(dim, dim))
                        state["inv_precond_{dim_id}".format(dim_id=dim_id)] = grad.new(dim, dim).zero_()
                if momentum > 0:
                    grad.mul_(1 - momentum).add_(momentum, state["momentum_buffer"])
                if weight_decay > 0:
                    grad.add_(group["weight_decay"], p.data)
                # See Algorithm 2 for detail
                for dim_id, dim in enumerate(grad.size()):
                    precond = state["precond_{}".format(dim_id)]
                    inv_precond = state["inv_precond_{}".format(dim_id)]
                    # mat_{dim_id}(grad)
                    grad = grad.transpose_(0, dim_id).contiguous()
                    transposed_size = grad.size()
                    grad = grad.view(dim, -1)
                    grad_t = grad.t()
                    precond.add_(grad @ grad_t)
                    if state["step"] % group["update_freq"] == 0:
                        inv_precond.copy_(_matrix_power(precond, -1 / order))
                    if dim_id == order - 1:
                        # finally
                        grad = grad_t @ inv_precond
                        # grad: (-1, last_dim)
                        grad = grad.view(original_size)
                    else:
                        # if not final
                        grad = inv_precond @ grad
                        # grad (dim, -1)
                        grad = grad.view(transposed_size)
                state["step"] += 1
                state["momentum_buffer"] = grad
                p.data.add_(-group["lr"], grad)
        return loss


def _matrix_inverse_root_eigen(A, root, epsilon=0.0, make_positive_semidefinite=True):
    L, Q = torch.linalg.eigh(A)
    if make_positive_semidefinite:
        lambda_min = torch.min(L)
        L = L - torch.minimum(lambda_min, torch.as_tensor(0.0))
    L += epsilon
    alpha = -1.0 / root
    X = Q * L.pow(alpha).unsqueeze(0) @ Q.T
    return X, L, Q


def _matrix_inverse_root_newton(A, root, epsilon=0.0, max_iterations=1000, tolerance=1e-6):
    # initialize iteration, dimension, and alpha
    iteration = 0
    dim = A.shape[0]
    alpha = -1 / root
    identity = torch.eye(dim, dtype=A.dtype, device=A.device)
    # add regularization
    A_ridge = A.add(identity, alpha=epsilon)
    # initialize matrices
    A_nrm = torch.linalg.norm(A_ridge)
    z = (root + 1) / (2 * A_nrm)
    X = z ** (-alpha) * identity
    M = z * A_ridge
    error = torch.dist(M, identity, p=torch.inf)
    # main for loop
    while error > tolerance and iteration < max_iterations:
        iteration += 1
        M_p = M.mul(alpha).add_(identity, alpha=(1 - alpha))
        X = X @ M_p
        M = torch.linalg.matrix_power(M_p, root) @ M
        error = torch.dist(M, identity, p=torch.inf)
    return X, M, iteration, error


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3)
        self.fc = nn.Linear(3 * 4 * 4, 2)

    def forward(self, x):
        return self.fc(torch.tanh(self.conv(x)).flatten(1))


torch.manual_seed(0)
x = torch.randn(40, 2, 6, 6)
w_true = torch.randn(2, 72)
y = torch.sin(x.flatten(1) @ w_true.t() / 4)

for kwargs in [dict(lr=0.1), dict(lr=0.02, momentum=0.5, weight_decay=1e-3, epsilon=0.1, update_freq=2)]:
    torch.manual_seed(1)
    model = Net()
    opt = Shampoo(model.parameters(), **kwargs)
    for it in range(12):
        def closure():
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            return loss
        loss = opt.step(closure)
        if it % 3 == 0 or it == 11:
            print(kwargs, it, "%.6f" % loss.item())
    st = opt.state[model.conv.weight]
    print(sorted(st.keys()), st["step"])
    for k in range(4):
        P = st["precond_%d" % k]
        print("  precond_%d" % k, tuple(P.shape), "%.5f" % P.trace().item(),
              "inv %.5f" % st["inv_precond_%d" % k].sum().item())
    print("  grad shape after step", tuple(model.conv.weight.grad.shape),
          model.conv.weight.grad.is_contiguous(), tuple(model.conv.weight.grad.stride()))

# the three inverse roots agree on a preconditioner
P = opt.state[model.fc.weight]["precond_1"].double()
for root in (2, 4):
    Xs = _matrix_power(P.clone(), -1 / root)
    Xe, L, Q = _matrix_inverse_root_eigen(P, root)
    Xn, M, iters, err = _matrix_inverse_root_newton(P, root, tolerance=1e-10)
    print("root", root, "eig min %.6e max %.5f" % (L.min().item(), L.max().item()))
    print("  svd vs eigh", bool((Xs - Xe).abs().max() < 1e-7), "X sum %.5f" % Xe.sum().item(),
          "newton iters", iters, "err<1e-10", bool(err <= 1e-10),
          "newton vs eigh", bool((Xn - Xe).abs().max() < 1e-6))
    print("  X^root @ P = I:", torch.allclose(torch.linalg.matrix_power(Xe, root) @ P,
                                               torch.eye(P.shape[0], dtype=P.dtype), atol=1e-6))
# an indefinite matrix: the PSD shift
A = torch.tensor([[2.0, 1.0], [1.0, -1.0]], dtype=torch.float64)
X, L, Q = _matrix_inverse_root_eigen(A, 2, epsilon=1e-3)
print("shifted eigs", [round(v, 6) for v in L.tolist()], "X sum %.5f" % X.sum().item())
print("svd of indefinite", [round(v, 6) for v in torch.svd(A)[1].tolist()])
u, s, v = torch.svd(torch.randn(5, 3), some=False)
print("svd some=False", tuple(u.shape), tuple(s.shape), tuple(v.shape))
try:
    print(torch.eye(3, out=torch.empty(2, 2, dtype=torch.int64)).dtype)
    print(torch.eye(2, out=torch.empty(0, dtype=torch.int64)))
except Exception as e:
    print(type(e).__name__, e)
