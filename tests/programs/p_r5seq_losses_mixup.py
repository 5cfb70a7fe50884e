"""Every classification/regression loss of torch.nn with every reduction, as model zoos call
them: timm's Mixup/mixup_target + SoftTargetCrossEntropy vs F.cross_entropy with probability
targets (and label_smoothing), LabelSmoothingCrossEntropy, class-weighted and ignore_index
CE on (N, C, d) segmentation-shaped logits, the nn.*Loss modules with weight/pos_weight/margin
options, their gradients, and the invalid-argument errors; a small MLP trained with mixup."""

import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


def one_hot(x, num_classes, on_value=1.0, off_value=0.0):
    x = x.long().view(-1, 1)
    return torch.full((x.size()[0], num_classes), off_value, device=x.device).scatter_(
        1, x, on_value
    )


def mixup_target(target, num_classes, lam=1.0, smoothing=0.0):
    off_value = smoothing / num_classes
    on_value = 1.0 - smoothing + off_value
    y1 = one_hot(target, num_classes, on_value=on_value, off_value=off_value)
    y2 = one_hot(target.flip(0), num_classes, on_value=on_value, off_value=off_value)
    return y1 * lam + y2 * (1.0 - lam)


class SoftTargetCrossEntropy(nn.Module):
    def forward(self, x, target):
        loss = torch.sum(-target * F.log_softmax(x, dim=-1), dim=-1)
        return loss.mean()


class LabelSmoothingCrossEntropy(nn.Module):
    def __init__(self, smoothing=0.1):
        super().__init__()
        assert smoothing < 1.0
        self.smoothing = smoothing
        self.confidence = 1.0 - smoothing

    def forward(self, x, target):
        logprobs = F.log_softmax(x, dim=-1)
        nll_loss = -logprobs.gather(dim=-1, index=target.unsqueeze(1))
        nll_loss = nll_loss.squeeze(1)
        smooth_loss = -logprobs.mean(dim=-1)
        loss = self.confidence * nll_loss + self.smoothing * smooth_loss
        return loss.mean()


def show(name, fn, *inputs):
    for red in ("none", "mean", "sum"):
        try:
            loss = fn(red)
            grads = torch.autograd.grad(loss.sum(), inputs, allow_unused=True)
            print(
                name,
                red,
                loss.detach().numpy().round(5).tolist() if loss.dim() < 2 else tuple(loss.shape),
                loss.grad_fn.name(),
                [None if g is None else round(g.abs().sum().item(), 5) for g in grads],
            )
        except Exception as e:
            print(name, red, type(e).__name__, e)


torch.manual_seed(0)
N, C = 6, 5
x = torch.randn(N, C, requires_grad=True)
y = torch.randint(0, C, (N,))
w = torch.rand(C) + 0.5
soft = mixup_target(y, C, lam=0.7, smoothing=0.1)
print("soft rows", soft.sum(1).tolist())
print(
    "timm soft %.6f torch prob %.6f"
    % (SoftTargetCrossEntropy()(x, soft).item(), F.cross_entropy(x, soft).item())
)
print(
    "timm ls %.6f torch ls %.6f"
    % (
        LabelSmoothingCrossEntropy(0.1)(x, y).item(),
        F.cross_entropy(x, y, label_smoothing=0.1).item(),
    )
)
show("ce", lambda r: F.cross_entropy(x, y, weight=w, reduction=r, label_smoothing=0.2), x)
show("ce_prob", lambda r: F.cross_entropy(x, soft, weight=w, reduction=r, label_smoothing=0.2), x)
yi = y.clone()
yi[::2] = -1
show(
    "ce_ign",
    lambda r: F.cross_entropy(x, yi, weight=w, ignore_index=-1, reduction=r, label_smoothing=0.1),
    x,
)
seg = torch.randn(2, C, 3, 4, requires_grad=True)
tseg = torch.randint(0, C, (2, 3, 4))
tseg[0, 0] = 255
show("ce_seg", lambda r: F.cross_entropy(seg, tseg, weight=w, ignore_index=255, reduction=r), seg)
show(
    "ce_seg_prob",
    lambda r: F.cross_entropy(seg, torch.softmax(seg.detach() * 2, 1), reduction=r),
    seg,
)
show("nll2d", lambda r: F.nll_loss(F.log_softmax(seg, 1), tseg, ignore_index=255, reduction=r), seg)
p = torch.rand(N, C)
b = (p > 0.5).float()
pw = torch.full((C,), 2.0)
show("bce", lambda r: nn.BCELoss(weight=w, reduction=r)(torch.sigmoid(x), p), x)
show("bcel", lambda r: nn.BCEWithLogitsLoss(pos_weight=pw, reduction=r)(x, b), x)
z = torch.randn(N, C)
show("mse", lambda r: nn.MSELoss(reduction=r)(x, z), x)
show("l1", lambda r: nn.L1Loss(reduction=r)(x, z), x)
show("smoothl1", lambda r: nn.SmoothL1Loss(reduction=r, beta=0.3)(x, z), x)
show("huber", lambda r: nn.HuberLoss(reduction=r, delta=2.0)(x, z), x)
show("kl", lambda r: nn.KLDivLoss(reduction=r, log_target=False)(F.log_softmax(x, 1), soft), x)
show("poisson", lambda r: nn.PoissonNLLLoss(full=True, reduction=r)(x, p * 4), x)
show("gauss", lambda r: nn.GaussianNLLLoss(full=True, eps=1e-3, reduction=r)(x, z, p), x)
show("hinge", lambda r: nn.HingeEmbeddingLoss(margin=0.8, reduction=r)(x, b * 2 - 1), x)
x2 = torch.randn(N, C, requires_grad=True)
sign = torch.tensor([1.0, -1.0, 1.0, 1.0, -1.0, -1.0])
show(
    "rank", lambda r: nn.MarginRankingLoss(margin=0.3, reduction=r)(x[:, 0], x2[:, 0], sign), x, x2
)
show("cosemb", lambda r: nn.CosineEmbeddingLoss(margin=0.2, reduction=r)(x, x2, sign), x, x2)
ml = torch.tensor(
    [
        [0, 2, -1, 1, 1],
        [4, -1, 0, 0, 0],
        [1, 2, 3, 4, 0],
        [3, -1, 3, 3, 3],
        [2, 2, -1, 0, 0],
        [0, 1, -1, 4, 4],
    ]
)
show("multilabel", lambda r: nn.MultiLabelMarginLoss(reduction=r)(x, ml), x)
show("mlsoft", lambda r: nn.MultiLabelSoftMarginLoss(weight=w, reduction=r)(x, b), x)
show("multimargin", lambda r: nn.MultiMarginLoss(p=2, margin=0.5, weight=w, reduction=r)(x, y), x)
show("softmargin", lambda r: nn.SoftMarginLoss(reduction=r)(x, b * 2 - 1), x)
show(
    "triplet",
    lambda r: nn.TripletMarginLoss(margin=0.5, p=1.0, swap=True, reduction=r)(x, x2, z),
    x,
    x2,
)
show(
    "tripletd",
    lambda r: nn.TripletMarginWithDistanceLoss(
        distance_function=nn.PairwiseDistance(p=3.0), margin=0.4, reduction=r
    )(x, x2, z),
    x,
    x2,
)
for bad in (
    lambda: F.cross_entropy(x, soft, ignore_index=1),
    lambda: F.cross_entropy(x, y, label_smoothing=-0.1),
    lambda: F.cross_entropy(x, soft[:, :3]),
    lambda: F.cross_entropy(x, y[:4]),
    lambda: F.nll_loss(x, y, weight=torch.ones(3)),
    lambda: F.binary_cross_entropy_with_logits(x, b[:3]),
    lambda: F.gaussian_nll_loss(x, z, -p),
    lambda: F.multilabel_soft_margin_loss(x, b, reduction="batchmean"),
    lambda: F.kl_div(F.log_softmax(x, 1), soft, reduction="bogus"),
):
    try:
        bad()
        print("no error")
    except Exception as e:
        print(type(e).__name__, e)

torch.manual_seed(1)
model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, C))
opt = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9, nesterov=True)
crit = SoftTargetCrossEntropy()
data = torch.randn(32, 8)
labels = torch.randint(0, C, (32,))
for step in range(5):
    idx = torch.randperm(32)[:8]
    lam = float(torch.distributions.Beta(torch.tensor(0.8), torch.tensor(0.8)).sample())
    xb = data[idx] * lam + data[idx].flip(0) * (1 - lam)
    tb = mixup_target(labels[idx], C, lam=lam, smoothing=0.1)
    out = model(xb)
    loss = crit(out, tb)
    ref = F.cross_entropy(out, tb)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("mixup step %d lam %.5f loss %.5f torch-ce %.5f" % (step, lam, loss.item(), ref.item()))
