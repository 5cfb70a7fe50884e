"""SimCLR (sthalles/SimCLR): info_nce_loss with F.normalize, eye masks, boolean-mask views,
CrossEntropyLoss over logits/temperature, a tiny ResNet-style encoder with a projection head,
plus the NT-Xent (cosine_similarity + logsumexp) and MoCo-style queue variants, and
the accuracy helper with topk; synthetic augmentations with flips and crops."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


class Args:
    n_views = 2
    batch_size = 6
    temperature = 0.07
    device = torch.device("cpu")
    out_dim = 16


args = Args()


class ResNetSimCLR(nn.Module):
    def __init__(self, out_dim):
        super(ResNetSimCLR, self).__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 8, kernel_size=3, stride=1, padding=1, bias=False),
            nn.BatchNorm2d(8), nn.ReLU(inplace=True), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(16, out_dim))
        dim_mlp = self.backbone[-1].in_features
        self.backbone[-1] = nn.Sequential(nn.Linear(dim_mlp, dim_mlp), nn.ReLU(), self.backbone[-1])

    def forward(self, x):
        return self.backbone(x)


def info_nce_loss(features):
    labels = torch.cat([torch.arange(args.batch_size) for i in range(args.n_views)], dim=0)
    labels = (labels.unsqueeze(0) == labels.unsqueeze(1)).float()
    labels = labels.to(args.device)
    features = F.normalize(features, dim=1)
    similarity_matrix = torch.matmul(features, features.T)
    mask = torch.eye(labels.shape[0], dtype=torch.bool).to(args.device)
    labels = labels[~mask].view(labels.shape[0], -1)
    similarity_matrix = similarity_matrix[~mask].view(similarity_matrix.shape[0], -1)
    positives = similarity_matrix[labels.bool()].view(labels.shape[0], -1)
    negatives = similarity_matrix[~labels.bool()].view(similarity_matrix.shape[0], -1)
    logits = torch.cat([positives, negatives], dim=1)
    labels = torch.zeros(logits.shape[0], dtype=torch.long).to(args.device)
    logits = logits / args.temperature
    return logits, labels


def accuracy(output, target, topk=(1,)):
    with torch.no_grad():
        maxk = max(topk)
        batch_size = target.size(0)
        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))
        res = []
        for k in topk:
            correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
            res.append(correct_k.mul_(100.0 / batch_size))
        return res


def nt_xent(z_i, z_j, temperature=0.5):
    z = torch.cat([z_i, z_j], dim=0)
    n = z.shape[0]
    sim = F.cosine_similarity(z.unsqueeze(1), z.unsqueeze(0), dim=2) / temperature
    sim = sim.masked_fill(torch.eye(n, dtype=torch.bool), float("-inf"))
    pos = torch.cat([torch.diag(sim, n // 2), torch.diag(sim, -n // 2)])
    return (-pos + torch.logsumexp(sim, dim=1)).mean()


def augment(x, g):
    flip = torch.rand(x.shape[0], generator=g) < 0.5
    x = torch.where(flip[:, None, None, None], x.flip(-1), x)
    i, j = torch.randint(0, 3, (2,), generator=g).tolist()
    x = F.pad(x, (1, 1, 1, 1), mode="reflect")[:, :, i:i + 8, j:j + 8]
    jitter = 1 + 0.2 * (torch.rand(x.shape[0], 3, 1, 1, generator=g) - 0.5)
    return (x * jitter).clamp(0, 1)


torch.manual_seed(0)
g = torch.Generator().manual_seed(1)
model = ResNetSimCLR(out_dim=args.out_dim)
print(model)
optimizer = torch.optim.Adam(model.parameters(), 3e-4, weight_decay=1e-4)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=10, eta_min=0,
                                                       last_epoch=-1)
criterion = torch.nn.CrossEntropyLoss().to(args.device)
images_all = torch.rand(12, 3, 8, 8)
n_iter = 0
for epoch_counter in range(2):
    for b in range(2):
        imgs = images_all[b * 6:(b + 1) * 6]
        images = [augment(imgs, g), augment(imgs, g)]
        images = torch.cat(images, dim=0)
        images = images.to(args.device)
        features = model(images)
        logits, labels = info_nce_loss(features)
        loss = criterion(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        top1, top5 = accuracy(logits, labels, topk=(1, 5))
        print(f"iter {n_iter} loss {loss.item():.4f} top1 {top1[0]:.2f} top5 {top5[0].item():.2f}",
              logits.shape, labels.dtype)
        n_iter += 1
    if epoch_counter >= 0:
        scheduler.step()
    print(f"Epoch: {epoch_counter}\tLoss: {loss}\tTop1 accuracy: {top1[0]}",
          scheduler.get_last_lr())

with torch.no_grad():
    z = model(images_all)
z_i, z_j = z[:6], z[6:]
print(f"nt_xent {nt_xent(z_i, z_j).item():.5f}")
print(F.normalize(z_i, dim=1).norm(dim=1))
print(F.cosine_similarity(z_i, z_j).shape, F.cosine_similarity(z_i[0], z_j[0], dim=0))
print(F.cosine_similarity(torch.zeros(2, 3), torch.ones(2, 3)))
print(F.normalize(torch.zeros(2, 3), p=2, dim=1), F.normalize(torch.tensor([3.0, 4.0]), dim=0))

# MoCo-style: queue of negatives, einsum logits, momentum update of a key encoder
K, m, T = 12, 0.99, 0.2
encoder_k = ResNetSimCLR(out_dim=args.out_dim)
for param_q, param_k in zip(model.parameters(), encoder_k.parameters()):
    param_k.data.copy_(param_q.data)
    param_k.requires_grad = False
queue = nn.functional.normalize(torch.randn(args.out_dim, K), dim=0)
queue_ptr = torch.zeros(1, dtype=torch.long)
q = nn.functional.normalize(model(images[:6]), dim=1)
with torch.no_grad():
    for param_q, param_k in zip(model.parameters(), encoder_k.parameters()):
        param_k.data = param_k.data * m + param_q.data * (1.0 - m)
    k = nn.functional.normalize(encoder_k(images[6:]), dim=1)
l_pos = torch.einsum("nc,nc->n", [q, k]).unsqueeze(-1)
l_neg = torch.einsum("nc,ck->nk", [q, queue.clone().detach()])
logits = torch.cat([l_pos, l_neg], dim=1) / T
labels = torch.zeros(logits.shape[0], dtype=torch.long)
loss = nn.CrossEntropyLoss()(logits, labels)
print("moco", logits.shape, f"{loss.item():.4f}", loss.grad_fn)
ptr = int(queue_ptr)
queue[:, ptr:ptr + 6] = k.T
queue_ptr[0] = (ptr + 6) % K
print(queue_ptr, queue[:2, :3].norm())
print("RESULT:", f"{loss.item():.4f}")
