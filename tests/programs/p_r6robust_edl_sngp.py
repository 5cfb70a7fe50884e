"""Distance-aware and evidential uncertainty, shrunk: dougbrion/pytorch-classification-uncertainty
(evidential deep learning: relu/exp/softplus evidence, kl_divergence with lgamma/digamma,
edl_mse/log/digamma losses with annealing, uncertainty u = K/S) checked against
torch.distributions.Dirichlet, and an SNGP head as in the public PyTorch ports (spectral-normed
backbone, fixed random Fourier features, momentum precision update, covariance by
cholesky_inverse, mean-field logits), plus a full-network GGN Laplace via torch.func jacrev+vmap."""

import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
tf = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".func")
D = torch.distributions
spectral_norm = torch.nn.utils.spectral_norm


def one_hot_embedding(labels, num_classes=10):
    y = torch.eye(num_classes)
    return y[labels]


def relu_evidence(y):
    return F.relu(y)


def exp_evidence(y):
    return torch.exp(torch.clamp(y, -10, 10))


def softplus_evidence(y):
    return F.softplus(y)


def kl_divergence(alpha, num_classes, device=None):
    ones = torch.ones([1, num_classes], dtype=torch.float32, device=device)
    sum_alpha = torch.sum(alpha, dim=1, keepdim=True)
    first_term = (
        torch.lgamma(sum_alpha)
        - torch.lgamma(alpha).sum(dim=1, keepdim=True)
        + torch.lgamma(ones).sum(dim=1, keepdim=True)
        - torch.lgamma(ones.sum(dim=1, keepdim=True))
    )
    second_term = (
        (alpha - ones).mul(torch.digamma(alpha) - torch.digamma(sum_alpha)).sum(dim=1, keepdim=True)
    )
    kl = first_term + second_term
    return kl


def loglikelihood_loss(y, alpha, device=None):
    S = torch.sum(alpha, dim=1, keepdim=True)
    loglikelihood_err = torch.sum((y - (alpha / S)) ** 2, dim=1, keepdim=True)
    loglikelihood_var = torch.sum(alpha * (S - alpha) / (S * S * (S + 1)), dim=1, keepdim=True)
    loglikelihood = loglikelihood_err + loglikelihood_var
    return loglikelihood


def mse_loss(y, alpha, epoch_num, num_classes, annealing_step, device=None):
    loglikelihood = loglikelihood_loss(y, alpha, device=device)
    annealing_coef = torch.min(
        torch.tensor(1.0, dtype=torch.float32),
        torch.tensor(epoch_num / annealing_step, dtype=torch.float32),
    )
    kl_alpha = (alpha - 1) * (1 - y) + 1
    kl_div = annealing_coef * kl_divergence(kl_alpha, num_classes, device=device)
    return loglikelihood + kl_div


def edl_loss(func, y, alpha, epoch_num, num_classes, annealing_step, device=None):
    S = torch.sum(alpha, dim=1, keepdim=True)
    A = torch.sum(y * (func(S) - func(alpha)), dim=1, keepdim=True)
    annealing_coef = torch.min(
        torch.tensor(1.0, dtype=torch.float32),
        torch.tensor(epoch_num / annealing_step, dtype=torch.float32),
    )
    kl_alpha = (alpha - 1) * (1 - y) + 1
    kl_div = annealing_coef * kl_divergence(kl_alpha, num_classes, device=device)
    return A + kl_div


def edl_mse_loss(output, target, epoch_num, num_classes, annealing_step, device=None):
    evidence = relu_evidence(output)
    alpha = evidence + 1
    return torch.mean(
        mse_loss(target, alpha, epoch_num, num_classes, annealing_step, device=device)
    )


def edl_log_loss(output, target, epoch_num, num_classes, annealing_step, device=None):
    evidence = relu_evidence(output)
    alpha = evidence + 1
    return torch.mean(
        edl_loss(torch.log, target, alpha, epoch_num, num_classes, annealing_step, device)
    )


def edl_digamma_loss(output, target, epoch_num, num_classes, annealing_step, device=None):
    evidence = relu_evidence(output)
    alpha = evidence + 1
    return torch.mean(
        edl_loss(torch.digamma, target, alpha, epoch_num, num_classes, annealing_step, device)
    )


class RandomFeatureGaussianProcess(nn.Module):
    def __init__(
        self, in_features, out_features, backbone, num_inducing=64, momentum=0.9, ridge_penalty=1e-3
    ):
        super().__init__()
        self.backbone = backbone
        self.num_inducing = num_inducing
        self.momentum = momentum
        self.ridge_penalty = ridge_penalty
        self.rff = nn.Linear(in_features, num_inducing)
        nn.init.normal_(self.rff.weight, std=1.0)
        nn.init.uniform_(self.rff.bias, 0, 2 * math.pi)
        self.rff.weight.requires_grad_(False)
        self.rff.bias.requires_grad_(False)
        self.beta = nn.Linear(num_inducing, out_features)
        self.precision = nn.Parameter(torch.eye(num_inducing) * ridge_penalty, requires_grad=False)
        self.covariance = nn.Parameter(torch.eye(num_inducing) / ridge_penalty, requires_grad=False)

    def features(self, x):
        return torch.cos(self.rff(self.backbone(x))) * math.sqrt(2.0 / self.num_inducing)

    def forward(self, x, with_variance=False, update_precision=False):
        phi = self.features(x)
        if update_precision:
            self.update_precision_(phi)
        logits = self.beta(phi)
        if not with_variance:
            return logits
        variances = torch.bmm(phi[:, None, :], (phi @ self.covariance)[:, :, None]).reshape(-1)
        return logits, variances

    def update_precision_(self, phi):
        with torch.no_grad():
            if self.momentum < 0:
                self.precision = self.precision + phi.t() @ phi
            else:
                self.precision.data = (
                    self.momentum * self.precision + (1 - self.momentum) * phi.t() @ phi
                )

    def update_covariance(self):
        L = torch.linalg.cholesky(self.precision)
        self.covariance = nn.Parameter(
            self.ridge_penalty * torch.cholesky_inverse(L), requires_grad=False
        )

    def reset_precision(self):
        self.precision[...] = torch.eye(self.num_inducing) * self.ridge_penalty


def mean_field_logits(logits, variances, mean_field_factor=math.pi / 8):
    logits_scale = torch.sqrt(1.0 + variances * mean_field_factor)
    return logits / logits_scale.unsqueeze(-1)


torch.manual_seed(0)
K = 3
X = torch.randn(90, 2)
centers = torch.tensor([[2.0, 0.0], [-1.0, 1.7], [-1.0, -1.7]])
Y = torch.arange(90) % K
X = X * 0.6 + centers[Y]
# ---- evidential training
for name, crit in [("mse", edl_mse_loss), ("log", edl_log_loss), ("digamma", edl_digamma_loss)]:
    torch.manual_seed(1)
    net = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, K))
    opt = torch.optim.Adam(net.parameters(), lr=1e-2, weight_decay=0.005)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=7, gamma=0.1)
    for epoch in range(10):
        for i in range(0, 90, 30):
            y = one_hot_embedding(Y[i : i + 30], K)
            opt.zero_grad()
            loss = crit(net(X[i : i + 30]), y.float(), epoch, K, 10)
            loss.backward()
            opt.step()
        sched.step()
    with torch.no_grad():
        out = net(torch.tensor([[2.0, 0.0], [0.0, 0.0], [8.0, 8.0]]))
        alpha = relu_evidence(out) + 1
        u = K / torch.sum(alpha, dim=1, keepdim=True)
        prob = alpha / torch.sum(alpha, dim=1, keepdim=True)
    print(name, round(loss.item(), 5), "u", u.squeeze(), "prob", prob[0])
alpha = softplus_evidence(torch.randn(4, K) * 3) + 1
kl_mine = kl_divergence(alpha, K).squeeze(1)
kl_torch = D.kl_divergence(D.Dirichlet(alpha), D.Dirichlet(torch.ones(K)))
print(
    "kl",
    kl_mine,
    torch.allclose(kl_mine, kl_torch, atol=1e-5),
    exp_evidence(torch.tensor([20.0, -20.0])),
)
dir_ = D.Dirichlet(alpha)
print("dirichlet", dir_.mean[0], dir_.variance[0], dir_.entropy(), dir_.log_prob(dir_.mean))
print("rsample", dir_.rsample((2,)).shape, D.Dirichlet(alpha[0]).sample().sum())

# ---- SNGP
torch.manual_seed(2)
backbone = nn.Sequential(
    spectral_norm(nn.Linear(2, 32)), nn.ReLU(), spectral_norm(nn.Linear(32, 32)), nn.ReLU()
)
sngp = RandomFeatureGaussianProcess(
    32, K, backbone, num_inducing=64, momentum=-1, ridge_penalty=1e-3
)
print("trainable", [n for n, p in sngp.named_parameters() if p.requires_grad])
opt = torch.optim.Adam([p for p in sngp.parameters() if p.requires_grad], lr=5e-3)
for epoch in range(15):
    sngp.train()
    for i in range(0, 90, 30):
        opt.zero_grad()
        loss = F.cross_entropy(sngp(X[i : i + 30]), Y[i : i + 30])
        loss.backward()
        opt.step()
print("sngp loss", round(loss.item(), 5), backbone[0].weight_u[:3])
try:
    sngp.update_precision_(sngp.features(X))
except TypeError as e:
    print(type(e).__name__, e)
sngp.momentum = 0.9
sngp.eval()
with torch.no_grad():
    for i in range(0, 90, 30):
        sngp(X[i : i + 30], update_precision=True)
sngp.update_covariance()
print(
    "precision",
    sngp.precision.diagonal()[:4],
    type(sngp.covariance).__name__,
    sngp.covariance.requires_grad,
)
with torch.no_grad():
    test = torch.tensor([[2.0, 0.0], [-1.0, 1.7], [0.0, 0.0], [6.0, -6.0]])
    logits, var = sngp(test, with_variance=True)
    print("var", var, "mf probs", F.softmax(mean_field_logits(logits, var), -1)[:, 0])
sngp.reset_precision()
print("reset", sngp.precision.sum())

# ---- full-network GGN Laplace with torch.func
net = nn.Sequential(nn.Linear(2, 6), nn.Tanh(), nn.Linear(6, K))
opt = torch.optim.Adam(net.parameters(), lr=0.05)
for it in range(50):
    opt.zero_grad()
    F.cross_entropy(net(X), Y).backward()
    opt.step()
params = {k: v.detach() for k, v in net.named_parameters()}


def f(params, x):
    return tf.functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)


Jd = tf.vmap(tf.jacrev(f), in_dims=(None, 0))(params, X)
J = torch.cat([Jd[k].reshape(90, K, -1) for k in params], -1)
Jf = tf.vmap(tf.jacfwd(f), in_dims=(None, 0))(params, X)
print("J", J.shape, all(torch.allclose(Jd[k], Jf[k], atol=1e-5) for k in params))
p = F.softmax(net(X), -1).detach()
Lam = torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)
ggn = torch.einsum("nkp,nkl,nlq->pq", J, Lam, J) + torch.eye(J.shape[-1])
Sigma = torch.linalg.inv(ggn)
xt = torch.tensor([[2.0, 0.0], [5.0, 5.0]])
Jt = torch.cat(
    [v.reshape(2, K, -1) for v in tf.vmap(tf.jacrev(f), in_dims=(None, 0))(params, xt).values()], -1
)
f_var = torch.einsum("nkp,pq,nlq->nkl", Jt, Sigma, Jt)
print("f_var diag", f_var.diagonal(dim1=1, dim2=2))
post = D.MultivariateNormal(net(xt).detach(), covariance_matrix=f_var + 1e-6 * torch.eye(K))
print("laplace mc", F.softmax(post.sample((500,)), -1).mean(0))
