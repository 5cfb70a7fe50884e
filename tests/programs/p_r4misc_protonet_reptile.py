"""Prototypical networks (jakesnell/prototypical-networks' protonet.py and euclidean_dist, the
episodic batch sampler of orobix/Prototypical-Networks-for-Few-shot-Learning with randperm and
prototypical_loss) and Reptile / first-order MAML on sine regression (openai's reptile-sinewaves
demo ported to torch, plus torch.func.functional_call/grad fast weights), on synthetic data
instead of Omniglot."""
# compare: rtol=2e-4 atol=2e-5
import importlib
import os

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
functional_call = torch.func.functional_call


class Flatten(nn.Module):
    def __init__(self):
        super(Flatten, self).__init__()

    def forward(self, x):
        return x.view(x.size(0), -1)


def conv_block(in_channels, out_channels):
    # (bias=False here, unlike the original: a conv bias feeding BatchNorm only gets rounding-noise
    # gradients, which Adam turns into +-lr steps, so the eval-mode running stats would be
    # machine-dependent)
    return nn.Sequential(
        nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False),
        nn.BatchNorm2d(out_channels),
        nn.ReLU(),
        nn.MaxPool2d(2)
    )


def euclidean_dist(x, y):
    # x: N x D
    # y: M x D
    n = x.size(0)
    m = y.size(0)
    d = x.size(1)
    assert d == y.size(1)

    x = x.unsqueeze(1).expand(n, m, d)
    y = y.unsqueeze(0).expand(n, m, d)

    return torch.pow(x - y, 2).sum(2)


class Protonet(nn.Module):
    def __init__(self, encoder):
        super(Protonet, self).__init__()
        self.encoder = encoder

    def loss(self, sample):
        xs = sample['xs']  # support
        xq = sample['xq']  # query

        n_class = xs.size(0)
        assert xq.size(0) == n_class
        n_support = xs.size(1)
        n_query = xq.size(1)

        target_inds = torch.arange(0, n_class).view(n_class, 1, 1).expand(n_class, n_query,
                                                                          1).long()
        target_inds.requires_grad_(False)

        x = torch.cat([xs.view(n_class * n_support, *xs.size()[2:]),
                       xq.view(n_class * n_query, *xq.size()[2:])], 0)

        z = self.encoder.forward(x)
        z_dim = z.size(-1)

        z_proto = z[:n_class * n_support].view(n_class, n_support, z_dim).mean(1)
        zq = z[n_class * n_support:]

        dists = euclidean_dist(zq, z_proto)

        log_p_y = F.log_softmax(-dists, dim=1).view(n_class, n_query, -1)

        loss_val = -log_p_y.gather(2, target_inds).squeeze().view(-1).mean()

        _, y_hat = log_p_y.max(2)
        acc_val = torch.eq(y_hat, target_inds.squeeze()).float().mean()

        return loss_val, {
            'loss': loss_val.item(),
            'acc': acc_val.item()
        }


class PrototypicalBatchSampler(object):
    def __init__(self, labels, classes_per_it, num_samples, iterations):
        super(PrototypicalBatchSampler, self).__init__()
        self.labels = labels
        self.classes_per_it = classes_per_it
        self.sample_per_class = num_samples
        self.iterations = iterations

        self.classes, self.counts = np.unique(self.labels, return_counts=True)
        self.classes = torch.LongTensor(self.classes)

        self.idxs = range(len(self.labels))
        self.indexes = np.empty((len(self.classes), max(self.counts)), dtype=int) * np.nan
        self.indexes = torch.Tensor(self.indexes)
        self.numel_per_class = torch.zeros_like(self.classes)
        for idx, label in enumerate(self.labels):
            label_idx = np.argwhere(self.classes == label).item()
            self.indexes[label_idx, np.where(np.isnan(self.indexes[label_idx]))[0][0]] = idx
            self.numel_per_class[label_idx] += 1

    def __iter__(self):
        spc = self.sample_per_class
        cpi = self.classes_per_it

        for it in range(self.iterations):
            batch_size = spc * cpi
            batch = torch.LongTensor(batch_size)
            c_idxs = torch.randperm(len(self.classes))[:cpi]
            for i, c in enumerate(self.classes[c_idxs]):
                s = slice(i * spc, (i + 1) * spc)
                label_idx = torch.arange(len(self.classes)).long()[self.classes == c].item()
                sample_idxs = torch.randperm(self.numel_per_class[label_idx])[:spc]
                batch[s] = self.indexes[label_idx][sample_idxs]
            batch = batch[torch.randperm(len(batch))]
            yield batch

    def __len__(self):
        return self.iterations


def prototypical_loss(input, target, n_support):
    target_cpu = target.to('cpu')
    input_cpu = input.to('cpu')

    def supp_idxs(c):
        return target_cpu.eq(c).nonzero()[:n_support].squeeze(1)

    classes = torch.unique(target_cpu)
    n_classes = len(classes)
    n_query = target_cpu.eq(classes[0].item()).sum().item() - n_support

    support_idxs = list(map(supp_idxs, classes))

    prototypes = torch.stack([input_cpu[idx_list].mean(0) for idx_list in support_idxs])
    query_idxs = torch.stack(list(map(lambda c: target_cpu.eq(c).nonzero()[n_support:],
                                      classes))).view(-1)

    query_samples = input.to('cpu')[query_idxs]
    dists = torch.cdist(query_samples, prototypes) ** 2

    log_p_y = F.log_softmax(-dists, dim=1).view(n_classes, n_query, -1)

    target_inds = torch.arange(0, n_classes)
    target_inds = target_inds.view(n_classes, 1, 1)
    target_inds = target_inds.expand(n_classes, n_query, 1).long()

    loss_val = -log_p_y.gather(2, target_inds).squeeze().view(-1).mean()
    _, y_hat = log_p_y.max(2)
    acc_val = y_hat.eq(target_inds.squeeze(2)).float().mean()

    return loss_val, acc_val


# synthetic 8x8 "omniglot": 6 classes, 6 images each
torch.manual_seed(7)
n_classes_total, per_class = 6, 6
templates = torch.randn(n_classes_total, 1, 8, 8)
images = templates.repeat_interleave(per_class, 0) + 0.5 * torch.randn(36, 1, 8, 8)
labels = torch.arange(n_classes_total).repeat_interleave(per_class)
print(images.shape, labels[:8].tolist())

encoder = nn.Sequential(conv_block(1, 8), conv_block(8, 8), Flatten())
model = Protonet(encoder)
print(model)
optim = torch.optim.Adam(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.StepLR(optim, 2, gamma=0.5, last_epoch=-1)
n_way, n_support, n_query = 3, 2, 2
for episode in range(4):
    classes = torch.randperm(n_classes_total)[:n_way]
    xs, xq = [], []
    for c in classes:
        idx = torch.randperm(per_class)[:n_support + n_query] + c * per_class
        xs.append(images[idx[:n_support]])
        xq.append(images[idx[n_support:]])
    sample = {'xs': torch.stack(xs), 'xq': torch.stack(xq)}
    model.train()
    optim.zero_grad()
    loss, output = model.loss(sample)
    loss.backward()
    optim.step()
    scheduler.step()
    print(f"episode {episode} classes {classes.tolist()} loss {output['loss']:.4f} "
          f"acc {output['acc']:.4f} lr {scheduler.get_last_lr()[0]:.6f}")

sampler = PrototypicalBatchSampler(labels.numpy(), classes_per_it=3, num_samples=4, iterations=3)
print(sampler.indexes.shape, sampler.numel_per_class.tolist(), len(sampler))
model.eval()
for batch in sampler:
    x, y = images[batch], labels[batch]
    with torch.no_grad():
        emb = model.encoder(x)
    loss, acc = prototypical_loss(emb, y, n_support=2)
    print(batch.tolist(), f"{loss.item():.4f} {acc.item():.4f}")
a = torch.randn(5, 4)
b = torch.randn(3, 4)
print(torch.allclose(torch.cdist(a, b) ** 2, euclidean_dist(a, b), atol=1e-5))
print(torch.cdist(a, b, p=1), torch.cdist(a.unsqueeze(0), b.unsqueeze(0)).shape)


# ---- Reptile on sine waves (openai/supervised-reptile sinewaves demo, torch port) ----
seed = 0
plot = False
innerstepsize = 0.02  # stepsize in inner SGD
innerepochs = 1  # number of epochs of each inner SGD
outerstepsize0 = 0.1  # stepsize of outer optimization, i.e., meta-optimization
niterations = 6  # number of outer updates; each iteration we sample one task and update on it

rng = np.random.RandomState(seed)
torch.manual_seed(seed)

# Define task distribution
x_all = np.linspace(-5, 5, 50)[:, None]  # All of the x points
ntrain = 10  # Size of training minibatches


def gen_task():
    "Generate classification problem"
    phase = rng.uniform(low=0, high=2 * np.pi)
    ampl = rng.uniform(0.1, 5)
    f_randomsine = lambda x: np.sin(x + phase) * ampl  # noqa: E731
    return f_randomsine


# Define model. Reptile paper uses ReLU, but Tanh gives slightly better results
model = nn.Sequential(
    nn.Linear(1, 32),
    nn.Tanh(),
    nn.Linear(32, 32),
    nn.Tanh(),
    nn.Linear(32, 1),
)


def totorch(x):
    return torch.autograd.Variable(torch.Tensor(x))


def train_on_batch(x, y):
    x = totorch(x)
    y = totorch(y)
    model.zero_grad()
    ypred = model(x)
    loss = (ypred - y).pow(2).mean()
    loss.backward()
    for param in model.parameters():
        param.data -= innerstepsize * param.grad.data


def predict(x):
    x = totorch(x)
    return model(x).data.numpy()


# Choose a fixed task and minibatch for visualization
f_plot = gen_task()
xtrain_plot = x_all[rng.choice(len(x_all), size=ntrain)]

# Reptile training loop
for iteration in range(niterations):
    weights_before = {k: v.clone() for k, v in model.state_dict().items()}
    # Generate task
    f = gen_task()
    y_all = f(x_all)
    # Do SGD on this task
    inds = rng.permutation(len(x_all))
    for _ in range(innerepochs):
        for start in range(0, len(x_all), ntrain):
            mbinds = inds[start:start + ntrain]
            train_on_batch(x_all[mbinds], y_all[mbinds])
    # Interpolate between current weights and trained weights from this task
    # I.e. (weights_before - weights_after) is the meta-gradient
    weights_after = model.state_dict()
    outerstepsize = outerstepsize0 * (1 - iteration / niterations)  # linear schedule
    model.load_state_dict({name: weights_before[name] + (weights_after[name] -
                                                         weights_before[name]) * outerstepsize
                           for name in weights_before})

    if iteration == 0 or (iteration + 1) % 3 == 0:
        f = f_plot
        weights_before = {k: v.clone() for k, v in model.state_dict().items()}
        xtest_plot = np.linspace(-5, 5, 8)[:, None]
        for inneriter in range(3):
            train_on_batch(xtrain_plot, f(xtrain_plot))
        pred = predict(xtest_plot)
        model.load_state_dict(weights_before)  # restore from snapshot
        lossval = np.square(predict(x_all) - f(x_all)).mean()
        print("-----------------------------")
        print(f"iteration               {iteration + 1}")
        print(f"loss on plotted curve   {lossval:.3f}")
        print(np.round(pred.ravel(), 3))

# ---- first-order MAML with torch.func.functional_call / torch.func.grad fast weights ----
params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v for k, v in model.named_buffers()}


def loss_fn(p, x, y):
    return F.mse_loss(functional_call(model, (p, buffers), (x,)), y)


meta_opt = torch.optim.SGD(model.parameters(), lr=0.01)
for it in range(3):
    f = gen_task()
    xs_np = x_all[rng.choice(len(x_all), size=ntrain)]
    xq_np = x_all[rng.choice(len(x_all), size=ntrain)]
    xs_t, ys_t = torch.tensor(xs_np, dtype=torch.float32), torch.tensor(f(xs_np)).float()
    xq_t, yq_t = torch.tensor(xq_np, dtype=torch.float32), torch.tensor(f(xq_np)).float()
    fast = dict(model.named_parameters())
    for _ in range(2):
        grads = torch.func.grad(loss_fn)(fast, xs_t, ys_t)
        fast = {k: (v - 0.02 * grads[k]).detach().requires_grad_() for k, v in fast.items()}
    q_loss = loss_fn(fast, xq_t, yq_t)
    fo_grads = torch.autograd.grad(q_loss, list(fast.values()))
    meta_opt.zero_grad()
    for p, g in zip(model.parameters(), fo_grads):
        p.grad = g.clone()
    meta_opt.step()
    print(f"fomaml {it} query loss {q_loss.item():.4f} grad0 {fo_grads[0].norm().item():.4f}",
          type(q_loss.grad_fn).__name__, sorted(grads)[:2])
print("RESULT: protonet_reptile", f"{q_loss.item():.4f}")
