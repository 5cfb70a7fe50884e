"""Influence functions, shrunk: nimarb/pytorch_influence_functions (grad_z, hvp by double grad,
LiSSA s_test recursion, calc_influence_single) next to a torch.func rewrite (functional_call,
grad, vmap per-sample gradients, hvp as jvp-of-grad and vjp-of-grad, exact inverse-Hessian by
torch.func.hessian on a flat vector, conjugate gradient) and TracIn over saved checkpoints, on a
small MLP classifier and synthetic data."""

import copy
import importlib
import os
import warnings

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
tf = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".func")
grad = torch.autograd.grad
warnings.simplefilter("ignore")


def calc_loss(y, t):
    y = torch.nn.functional.log_softmax(y)
    loss = torch.nn.functional.nll_loss(y, t, weight=None, reduction="mean")
    return loss


def grad_z(z, t, model):
    model.eval()
    y = model(z)
    loss = calc_loss(y, t)
    params = [p for p in model.parameters() if p.requires_grad]
    return list(grad(loss, params, create_graph=True))


def hvp(y, w, v):
    if len(w) != len(v):
        raise (ValueError("w and v must have the same length."))
    first_grads = grad(y, w, retain_graph=True, create_graph=True)
    elemwise_products = 0
    for grad_elem, v_elem in zip(first_grads, v):
        elemwise_products += torch.sum(grad_elem * v_elem)
    return_grads = grad(elemwise_products, w, create_graph=True)
    return return_grads


def s_test(z_test, t_test, model, z_loader, damp=0.01, scale=25.0, recursion_depth=5000):
    v = grad_z(z_test, t_test, model)
    h_estimate = v.copy()
    for i in range(recursion_depth):
        for x, t in z_loader:
            y = model(x)
            loss = calc_loss(y, t)
            params = [p for p in model.parameters() if p.requires_grad]
            hv = hvp(loss, params, h_estimate)
            h_estimate = [
                _v + (1 - damp) * _h_e - _hv / scale for _v, _h_e, _hv in zip(v, h_estimate, hv)
            ]
            break
    return h_estimate


def calc_influence_single(model, train_loader, test_loader, test_id_num, recursion_depth, r):
    z_test, t_test = test_loader.dataset[test_id_num]
    z_test = test_loader.collate_fn([z_test])
    t_test = test_loader.collate_fn([t_test])
    s_test_vec = None
    for i in range(r):
        cur = s_test(z_test, t_test, model, train_loader, recursion_depth=recursion_depth)
        s_test_vec = cur if s_test_vec is None else [a + b for a, b in zip(s_test_vec, cur)]
    s_test_vec = [a / r for a in s_test_vec]
    train_dataset_size = len(train_loader.dataset)
    influences = []
    for i in range(train_dataset_size):
        z, t = train_loader.dataset[i]
        z = train_loader.collate_fn([z])
        t = train_loader.collate_fn([t])
        grad_z_vec = grad_z(z, t, model)
        tmp_influence = (
            -sum([torch.sum(k * j).data for k, j in zip(grad_z_vec, s_test_vec)])
            / train_dataset_size
        )
        influences.append(tmp_influence.cpu())
    harmful = sorted(range(len(influences)), key=lambda k: influences[k])
    helpful = harmful[::-1]
    return influences, harmful, helpful


torch.manual_seed(0)
X = torch.randn(40, 4)
Y = (X[:, 0] + 0.5 * X[:, 1] ** 2 > 0.5).long()
Y[3] = 1 - Y[3]
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
opt = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=0.01)
checkpoints = []
for epoch in range(60):
    opt.zero_grad()
    loss = F.cross_entropy(model(X), Y) + 0.005 * sum(p.pow(2).sum() for p in model.parameters())
    loss.backward()
    opt.step()
    if epoch % 20 == 19:
        checkpoints.append((copy.deepcopy(model.state_dict()), opt.param_groups[0]["lr"]))
print("loss", round(loss.item(), 5), len(checkpoints))
train_loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(X[:30], Y[:30]), batch_size=30, shuffle=True
)
test_loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(X[30:], Y[30:]), batch_size=1
)
influences, harmful, helpful = calc_influence_single(
    model, train_loader, test_loader, 2, recursion_depth=4, r=2
)
print("lissa influences", torch.stack(influences)[:6], harmful[:3], helpful[:3])

# ---- torch.func rewrite
params = {k: v.detach() for k, v in model.named_parameters()}
names = list(params)
shapes = [p.shape for p in params.values()]
sizes = [p.numel() for p in params.values()]


def loss_fn(params, x, y):
    out = tf.functional_call(model, params, (x,))
    return F.cross_entropy(out, y)


def loss_single(params, x, y):
    return loss_fn(params, x.unsqueeze(0), y.unsqueeze(0))


def unflat(v):
    return {n: c.view(s) for n, c, s in zip(names, torch.split(v, sizes), shapes)}


def flat(d):
    return torch.cat([d[n].reshape(-1) for n in names])


train_x, train_y = X[:30], Y[:30]
per_sample = tf.vmap(tf.grad(loss_single), in_dims=(None, 0, 0))(params, train_x, train_y)
print("per-sample", {k: tuple(v.shape) for k, v in per_sample.items()})
g_manual = grad_z(train_x[5:6], train_y[5:6], model)
print(
    "vmap==loop",
    all(torch.allclose(per_sample[n][5], g, atol=1e-6) for n, g in zip(names, g_manual)),
)
G = torch.cat([per_sample[n].reshape(30, -1) for n in names], 1)
print("G", G.shape, G.norm(dim=1)[:5])


def train_loss_flat(v):
    return loss_fn(unflat(v), train_x, train_y)


theta = flat(params)
v = torch.randn_like(theta)
hvp_fwd = tf.jvp(tf.grad(train_loss_flat), (theta,), (v,))[1]
_, vjp_fn = tf.vjp(tf.grad(train_loss_flat), theta)
hvp_rev = vjp_fn(v)[0]
Hm = tf.hessian(train_loss_flat)(theta)
print(
    "H",
    Hm.shape,
    torch.allclose(Hm, Hm.t(), atol=1e-5),
    torch.allclose(hvp_fwd, Hm @ v, atol=1e-4),
    torch.allclose(hvp_rev, hvp_fwd, atol=1e-4),
)
ev = torch.linalg.eigvalsh(Hm)
print("eig", ev[-3:], (ev < -1e-4).sum())
damp = round(float(-ev.min().clamp(max=0)) + 0.05, 3)
print("damp", damp)
test_x, test_y = X[32:33], Y[32:33]
g_test = flat(tf.grad(loss_fn)(params, test_x, test_y))
ihvp_exact = torch.linalg.solve(Hm + damp * torch.eye(len(theta)), g_test)


def cg(Av, b, iters=40, tol=1e-10):
    x = torch.zeros_like(b)
    r = b.clone()
    p = r.clone()
    rs = r.dot(r)
    for i in range(iters):
        Ap = Av(p)
        alpha = rs / p.dot(Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = r.dot(r)
        if rs_new < tol:
            break
        p = r + (rs_new / rs) * p
        rs = rs_new
    return x, i


ihvp_cg, n_it = cg(lambda p: tf.jvp(tf.grad(train_loss_flat), (theta,), (p,))[1] + damp * p, g_test)
print("cg vs exact", n_it, torch.nn.functional.cosine_similarity(ihvp_cg, ihvp_exact, dim=0) > 0.99)
infl_exact = -(G @ ihvp_exact) / 30
print("exact influence", infl_exact[:6], infl_exact.argsort()[:3])
print(
    "lissa vs exact corr",
    torch.corrcoef(torch.stack([torch.stack(influences), infl_exact.detach()]))[0, 1] > 0.0,
)
self_infl = torch.einsum(
    "ni,ni->n", G, torch.linalg.solve(Hm + damp * torch.eye(len(theta)), G.t()).t()
)
print("self influence top", self_infl.topk(3))

# ---- TracIn over checkpoints
tracin = torch.zeros(30)
for sd, lr in checkpoints:
    p_ck = {n: sd[n] for n in names}
    Gc = tf.vmap(tf.grad(loss_single), in_dims=(None, 0, 0))(p_ck, train_x, train_y)
    gt = tf.grad(loss_fn)(p_ck, test_x, test_y)
    tracin += lr * sum((Gc[n].reshape(30, -1) @ gt[n].reshape(-1)) for n in names)
print("tracin", tracin[:6], tracin.argsort(descending=True)[:3])
try:
    hvp(loss_fn(params, test_x, test_y), [model[0].weight], [])
except ValueError as e:
    print(type(e).__name__, e)
