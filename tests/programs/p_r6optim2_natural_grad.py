"""Natural-gradient steps, shrunk from ikostrikov/pytorch-trpo (trpo.py: conjugate_gradients,
the Fisher-vector product by double backward through the KL, the max-KL step size and the
backtracking linesearch with ``.5**np.arange(...)`` step fractions; utils.py:
get_flat_params_from / set_flat_params_to / normal_log_density; models.py's Gaussian Policy;
main.py's get_loss / get_kl with Variable), on fixed synthetic states, actions and advantages
instead of gym (flat_grad_kl flattened with .contiguous().view(-1), as the repo does for the
second grads); then an empirical-Fisher natural gradient for a classifier (per-sample grads
by a loop and by torch.func.vmap(grad), damped Fisher solve vs CG, parameters_to_vector)."""
import importlib
import math
import os

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
Variable = importlib.import_module(LIB + ".autograd").Variable
func = importlib.import_module(LIB + ".func")
vec = importlib.import_module(LIB + ".nn.utils")


def normal_log_density(x, mean, log_std, std):
    var = std.pow(2)
    log_density = -(x - mean).pow(2) / (2 * var) - 0.5 * math.log(2 * math.pi) - log_std
    return log_density.sum(1, keepdim=True)


def get_flat_params_from(model):
    params = []
    for param in model.parameters():
        params.append(param.data.view(-1))
    flat_params = torch.cat(params)
    return flat_params


def set_flat_params_to(model, flat_params):
    prev_ind = 0
    for param in model.parameters():
        flat_size = int(np.prod(list(param.size())))
        param.data.copy_(flat_params[prev_ind:prev_ind + flat_size].view(param.size()))
        prev_ind += flat_size


def conjugate_gradients(Avp, b, nsteps, residual_tol=1e-10):
    x = torch.zeros(b.size())
    r = b.clone()
    p = b.clone()
    rdotr = torch.dot(r, r)
    for i in range(nsteps):
        _Avp = Avp(p)
        alpha = rdotr / torch.dot(p, _Avp)
        x += alpha * p
        r -= alpha * _Avp
        new_rdotr = torch.dot(r, r)
        betta = new_rdotr / rdotr
        p = r + betta * p
        rdotr = new_rdotr
        if rdotr < residual_tol:
            break
    return x


def linesearch(model, f, x, fullstep, expected_improve_rate, max_backtracks=10, accept_ratio=.1):
    fval = f(True).data
    print("fval before %.6f" % fval.item())
    for (_n_backtracks, stepfrac) in enumerate(.5 ** np.arange(max_backtracks)):
        xnew = x + stepfrac * fullstep
        set_flat_params_to(model, xnew)
        newfval = f(True).data
        actual_improve = fval - newfval
        expected_improve = expected_improve_rate * stepfrac
        ratio = actual_improve / expected_improve
        print("a/e/r %.6f %.6f %.4f" % (actual_improve.item(), expected_improve.item(), ratio.item()),
              xnew.dtype, tuple(ratio.shape))
        if ratio.item() > accept_ratio and actual_improve.item() > 0:
            print("fval after %.6f" % newfval.item())
            return True, xnew
    return False, x


def trpo_step(model, get_loss, get_kl, max_kl, damping):
    loss = get_loss()
    grads = torch.autograd.grad(loss, model.parameters())
    loss_grad = torch.cat([grad.view(-1) for grad in grads]).data

    def Fvp(v):
        kl = get_kl()
        kl = kl.mean()
        grads = torch.autograd.grad(kl, model.parameters(), create_graph=True)
        flat_grad_kl = torch.cat([grad.contiguous().view(-1) for grad in grads])
        kl_v = (flat_grad_kl * Variable(v)).sum()
        grads = torch.autograd.grad(kl_v, model.parameters())
        flat_grad_grad_kl = torch.cat([grad.contiguous().view(-1) for grad in grads]).data
        return flat_grad_grad_kl + v * damping

    stepdir = conjugate_gradients(Fvp, -loss_grad, 10)
    shs = 0.5 * (stepdir * Fvp(stepdir)).sum(0, keepdim=True)
    lm = torch.sqrt(shs / max_kl)
    fullstep = stepdir / lm[0]
    neggdotstepdir = (-loss_grad * stepdir).sum(0, keepdim=True)
    print(("lagrange multiplier:", lm[0], "grad_norm:", loss_grad.norm()))
    prev_params = get_flat_params_from(model)
    success, new_params = linesearch(model, get_loss, prev_params, fullstep,
                                     neggdotstepdir / lm[0])
    set_flat_params_to(model, new_params)
    return loss, success


class Policy(nn.Module):
    def __init__(self, num_inputs, num_outputs):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(num_inputs, 32)
        self.affine2 = nn.Linear(32, 32)
        self.action_mean = nn.Linear(32, num_outputs)
        self.action_mean.weight.data.mul_(0.1)
        self.action_mean.bias.data.mul_(0.0)
        self.action_log_std = nn.Parameter(torch.zeros(1, num_outputs))

    def forward(self, x):
        x = torch.tanh(self.affine1(x))
        x = torch.tanh(self.affine2(x))
        action_mean = self.action_mean(x)
        action_log_std = self.action_log_std.expand_as(action_mean)
        action_std = torch.exp(action_log_std)
        return action_mean, action_log_std, action_std


torch.manual_seed(543)
num_inputs, num_actions = 5, 2
policy_net = Policy(num_inputs, num_actions)
states = torch.randn(64, num_inputs)
with torch.no_grad():
    mean, _, std = policy_net(states)
actions = torch.normal(mean, std)
advantages = (actions * torch.tensor([1.0, -0.5])).sum(1, keepdim=True) + 0.1 * torch.randn(64, 1)
advantages = (advantages - advantages.mean()) / advantages.std()

for it in range(3):
    action_means, action_log_stds, action_stds = policy_net(Variable(states))
    fixed_log_prob = normal_log_density(Variable(actions), action_means, action_log_stds,
                                        action_stds).data.clone()

    def get_loss(volatile=False):
        if volatile:
            with torch.no_grad():
                action_means, action_log_stds, action_stds = policy_net(Variable(states))
        else:
            action_means, action_log_stds, action_stds = policy_net(Variable(states))
        log_prob = normal_log_density(Variable(actions), action_means, action_log_stds, action_stds)
        action_loss = -Variable(advantages) * torch.exp(log_prob - Variable(fixed_log_prob))
        return action_loss.mean()

    def get_kl():
        mean1, log_std1, std1 = policy_net(Variable(states))
        mean0 = Variable(mean1.data)
        log_std0 = Variable(log_std1.data)
        std0 = Variable(std1.data)
        kl = log_std1 - log_std0 + (std0.pow(2) + (mean0 - mean1).pow(2)) / (2.0 * std1.pow(2)) - 0.5
        return kl.sum(1, keepdim=True)

    loss, success = trpo_step(policy_net, get_loss, get_kl, max_kl=1e-2, damping=1e-1)
    with torch.no_grad():
        m1, ls1, s1 = policy_net(states)
        kl = (ls1 - action_log_stds + (action_stds.pow(2) + (action_means - m1).pow(2))
              / (2.0 * s1.pow(2)) - 0.5).sum(1).mean()
    print("iter %d loss %.6f success %s kl %.6f log_std %s" % (
        it, loss.item(), success, kl.item(), [round(v, 5) for v in policy_net.action_log_std.view(-1).tolist()]))

# empirical Fisher natural gradient for a classifier
torch.manual_seed(0)
X = torch.randn(30, 4)
Y = (X[:, 0] + X[:, 1] > 0).long() + (X[:, 2] > 1).long()
net = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3))
params = {k: v.detach() for k, v in net.named_parameters()}


def loss_one(p, x, y):
    out = func.functional_call(net, p, (x.unsqueeze(0),))
    return F.cross_entropy(out, y.unsqueeze(0))


per_sample = func.vmap(func.grad(loss_one), in_dims=(None, 0, 0))(params, X, Y)
G = torch.cat([per_sample[k].reshape(30, -1) for k in params], 1)
rows = []
for i in range(30):
    net.zero_grad()
    F.cross_entropy(net(X[i:i + 1]), Y[i:i + 1]).backward()
    rows.append(vec.parameters_to_vector(p.grad for p in net.parameters()))
G_loop = torch.stack(rows)
print("per-sample grads", tuple(G.shape), torch.allclose(G, G_loop, atol=1e-6))
fisher = G.t() @ G / 30
g = G.mean(0)
lam = 1e-3
nat = torch.linalg.solve(fisher + lam * torch.eye(fisher.shape[0]), g)
nat_cg = conjugate_gradients(lambda v: fisher @ v + lam * v, g, 60)
print("fisher rank", torch.linalg.matrix_rank(fisher).item(), "trace %.5f" % fisher.trace().item())
print("nat grad norm %.4f, cg agrees %s" % (nat.norm().item(), torch.allclose(nat, nat_cg, rtol=1e-2, atol=1e-2)))
lr = 0.05
theta = vec.parameters_to_vector(net.parameters())
for step in range(5):
    G = torch.cat([v.reshape(30, -1) for v in func.vmap(func.grad(loss_one), in_dims=(None, 0, 0))(
        {k: v.detach() for k, v in net.named_parameters()}, X, Y).values()], 1)
    fisher = G.t() @ G / 30
    nat = torch.linalg.solve(fisher + 1e-2 * torch.eye(fisher.shape[0]), G.mean(0))
    theta = theta - lr * nat
    vec.vector_to_parameters(theta, net.parameters())
    with torch.no_grad():
        print("ngd step %d loss %.6f" % (step, F.cross_entropy(net(X), Y).item()))
try:
    vec.vector_to_parameters(theta[:-1], net.parameters())
except Exception as e:
    print(type(e).__name__, e)
try:
    conjugate_gradients(lambda v: v, torch.ones(3, 2), 2)
except Exception as e:
    print(type(e).__name__, e)
