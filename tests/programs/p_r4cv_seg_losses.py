"""segmentation_models_pytorch's losses (DiceLoss / JaccardLoss in multiclass and
multilabel modes with soft_dice_score, soft_jaccard_score, ignore_index masking, one_hot +
permute, focal_loss_with_logits, SoftBCEWithLogitsLoss with smooth_factor) on a U-Net-lite
(ConvTranspose2d up path, torch.cat skips, GroupNorm, Dropout2d, nn.Upsample), the
torchvision reference's criterion over {'out', 'aux'} with ignore_index=255 and class
weights, F.interpolate of logits to the label size, a poly LambdaLR, and per-class IoU from
a bincount confusion matrix."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

BINARY_MODE = "binary"
MULTICLASS_MODE = "multiclass"
MULTILABEL_MODE = "multilabel"


def soft_dice_score(output, target, smooth=0.0, eps=1e-7, dims=None):
    assert output.size() == target.size()
    if dims is not None:
        intersection = torch.sum(output * target, dim=dims)
        cardinality = torch.sum(output + target, dim=dims)
    else:
        intersection = torch.sum(output * target)
        cardinality = torch.sum(output + target)
    dice_score = (2.0 * intersection + smooth) / (cardinality + smooth).clamp_min(eps)
    return dice_score


def soft_jaccard_score(output, target, smooth=0.0, eps=1e-7, dims=None):
    assert output.size() == target.size()
    if dims is not None:
        intersection = torch.sum(output * target, dim=dims)
        cardinality = torch.sum(output + target, dim=dims)
    else:
        intersection = torch.sum(output * target)
        cardinality = torch.sum(output + target)
    union = cardinality - intersection
    jaccard_score = (intersection + smooth) / (union + smooth).clamp_min(eps)
    return jaccard_score


class DiceLoss(nn.Module):
    def __init__(self, mode, classes=None, log_loss=False, from_logits=True, smooth=0.0,
                 ignore_index=None, eps=1e-7):
        assert mode in {BINARY_MODE, MULTILABEL_MODE, MULTICLASS_MODE}
        super(DiceLoss, self).__init__()
        self.mode = mode
        if classes is not None:
            assert mode != BINARY_MODE, "Masking classes is not supported with mode=binary"
            classes = torch.tensor(classes, dtype=torch.long)
        self.classes = classes
        self.from_logits = from_logits
        self.smooth = smooth
        self.eps = eps
        self.log_loss = log_loss
        self.ignore_index = ignore_index

    def forward(self, y_pred, y_true):
        assert y_true.size(0) == y_pred.size(0)
        if self.from_logits:
            if self.mode == MULTICLASS_MODE:
                y_pred = y_pred.log_softmax(dim=1).exp()
            else:
                y_pred = F.logsigmoid(y_pred).exp()
        bs = y_true.size(0)
        num_classes = y_pred.size(1)
        dims = (0, 2)
        if self.mode == BINARY_MODE:
            y_true = y_true.view(bs, 1, -1)
            y_pred = y_pred.view(bs, 1, -1)
            if self.ignore_index is not None:
                mask = y_true != self.ignore_index
                y_pred = y_pred * mask
                y_true = y_true * mask
        if self.mode == MULTICLASS_MODE:
            y_true = y_true.view(bs, -1)
            y_pred = y_pred.view(bs, num_classes, -1)
            if self.ignore_index is not None:
                mask = y_true != self.ignore_index
                y_pred = y_pred * mask.unsqueeze(1)
                y_true = F.one_hot((y_true * mask).to(torch.long), num_classes)
                y_true = y_true.permute(0, 2, 1) * mask.unsqueeze(1)
            else:
                y_true = F.one_hot(y_true, num_classes)
                y_true = y_true.permute(0, 2, 1)
        if self.mode == MULTILABEL_MODE:
            y_true = y_true.view(bs, num_classes, -1)
            y_pred = y_pred.view(bs, num_classes, -1)
            if self.ignore_index is not None:
                mask = y_true != self.ignore_index
                y_pred = y_pred * mask
                y_true = y_true * mask
        scores = self.compute_score(y_pred, y_true.type_as(y_pred), smooth=self.smooth,
                                    eps=self.eps, dims=dims)
        if self.log_loss:
            loss = -torch.log(scores.clamp_min(self.eps))
        else:
            loss = 1.0 - scores
        mask = y_true.sum(dims) > 0
        loss *= mask.to(loss.dtype)
        if self.classes is not None:
            loss = loss[self.classes]
        return self.aggregate_loss(loss)

    def aggregate_loss(self, loss):
        return loss.mean()

    def compute_score(self, output, target, smooth=0.0, eps=1e-7, dims=None):
        return soft_dice_score(output, target, smooth, eps, dims)


class JaccardLoss(DiceLoss):
    def compute_score(self, output, target, smooth=0.0, eps=1e-7, dims=None):
        return soft_jaccard_score(output, target, smooth, eps, dims)


def focal_loss_with_logits(output, target, gamma=2.0, alpha=0.25, reduction="mean",
                           normalized=False, reduced_threshold=None, eps=1e-6):
    target = target.type(output.type())
    logpt = F.binary_cross_entropy_with_logits(output, target, reduction="none")
    pt = torch.exp(-logpt)
    if reduced_threshold is None:
        focal_term = (1.0 - pt).pow(gamma)
    else:
        focal_term = ((1.0 - pt) / reduced_threshold).pow(gamma)
        focal_term[pt < reduced_threshold] = 1
    loss = focal_term * logpt
    if alpha is not None:
        loss *= alpha * target + (1 - alpha) * (1 - target)
    if normalized:
        norm_factor = focal_term.sum().clamp_min(eps)
        loss /= norm_factor
    if reduction == "mean":
        loss = loss.mean()
    if reduction == "sum":
        loss = loss.sum()
    if reduction == "batchwise_mean":
        loss = loss.sum(0)
    return loss


class SoftBCEWithLogitsLoss(nn.Module):
    __constants__ = ["weight", "pos_weight", "reduction", "ignore_index", "smooth_factor"]

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", smooth_factor=None,
                 pos_weight=None):
        super().__init__()
        self.ignore_index = ignore_index
        self.reduction = reduction
        self.smooth_factor = smooth_factor
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, y_pred, y_true):
        if self.smooth_factor is not None:
            soft_targets = (1 - y_true) * self.smooth_factor + y_true * (1 - self.smooth_factor)
        else:
            soft_targets = y_true
        loss = F.binary_cross_entropy_with_logits(y_pred, soft_targets, self.weight,
                                                  pos_weight=self.pos_weight, reduction="none")
        if self.ignore_index is not None:
            not_ignored_mask = y_true != self.ignore_index
            loss *= not_ignored_mask.type_as(loss)
        if self.reduction == "mean":
            loss = loss.mean()
        if self.reduction == "sum":
            loss = loss.sum()
        return loss


class UNetLite(nn.Module):
    def __init__(self, in_ch=3, n_classes=4, base=8):
        super().__init__()

        def block(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1, bias=False), nn.GroupNorm(2, o),
                                 nn.ReLU(inplace=True))
        self.enc1 = block(in_ch, base)
        self.enc2 = block(base, base * 2)
        self.pool = nn.MaxPool2d(2)
        self.bott = nn.Sequential(block(base * 2, base * 2), nn.Dropout2d(0.1))
        self.up2 = nn.ConvTranspose2d(base * 2, base * 2, kernel_size=2, stride=2)
        self.dec2 = block(base * 4, base)
        self.up1 = nn.ConvTranspose2d(base, base, kernel_size=2, stride=2)
        self.dec1 = block(base * 2, base)
        self.head = nn.Conv2d(base, n_classes, 1)
        self.aux = nn.Sequential(nn.Conv2d(base * 2, n_classes, 1),
                                 nn.Upsample(scale_factor=4, mode="bilinear",
                                             align_corners=False))

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        b = self.bott(self.pool(e2))
        d2 = self.dec2(torch.cat([self.up2(b), e2], dim=1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], dim=1))
        return {"out": self.head(d1), "aux": self.aux(b)}


def criterion(inputs, target, weight):
    losses = {}
    for name, x in inputs.items():
        x = F.interpolate(x, size=target.shape[-2:], mode="bilinear", align_corners=False)
        losses[name] = nn.functional.cross_entropy(x, target, weight=weight, ignore_index=255)
    if len(losses) == 1:
        return losses["out"]
    return losses["out"] + 0.5 * losses["aux"]


class ConfusionMatrix:
    def __init__(self, num_classes):
        self.num_classes = num_classes
        self.mat = None

    def update(self, a, b):
        n = self.num_classes
        if self.mat is None:
            self.mat = torch.zeros((n, n), dtype=torch.int64, device=a.device)
        with torch.inference_mode():
            k = (a >= 0) & (a < n)
            inds = n * a[k].to(torch.int64) + b[k]
            self.mat += torch.bincount(inds, minlength=n**2).reshape(n, n)

    def compute(self):
        h = self.mat.float()
        acc_global = torch.diag(h).sum() / h.sum()
        acc = torch.diag(h) / h.sum(1)
        iu = torch.diag(h) / (h.sum(1) + h.sum(0) - torch.diag(h))
        return acc_global, acc, iu

    def __str__(self):
        acc_global, acc, iu = self.compute()
        return ("global correct: {:.1f}\naverage row correct: {}\nIoU: {}\nmean IoU: {:.1f}"
                ).format(acc_global.item() * 100, [f"{i:.1f}" for i in (acc * 100).tolist()],
                         [f"{i:.1f}" for i in (iu * 100).tolist()], iu.mean().item() * 100)


torch.manual_seed(0)
n_classes = 4
logits = torch.randn(2, n_classes, 4, 4, requires_grad=True)
labels = torch.randint(0, n_classes, (2, 4, 4))
labels[0, 0, :2] = 255
for loss_fn in (DiceLoss(MULTICLASS_MODE), DiceLoss(MULTICLASS_MODE, ignore_index=255),
                DiceLoss(MULTICLASS_MODE, classes=[1, 2], log_loss=True, smooth=1.0,
                         ignore_index=255),
                JaccardLoss(MULTICLASS_MODE, ignore_index=255)):
    if loss_fn.ignore_index is None:
        loss = loss_fn(logits, labels.clamp(max=n_classes - 1))
    else:
        loss = loss_fn(logits, labels)
    g, = torch.autograd.grad(loss, logits)
    print(type(loss_fn).__name__, f"{loss.item():.6f}", f"{g.abs().sum().item():.6f}")
ml_true = (torch.rand(2, 3, 4, 4) > 0.5).float()
ml_pred = torch.randn(2, 3, 4, 4)
print(f"{DiceLoss(MULTILABEL_MODE)(ml_pred, ml_true).item():.6f}")
print(f"{DiceLoss(BINARY_MODE, from_logits=False)(ml_pred[:, :1].sigmoid(), ml_true[:, :1]):.6f}")
for kw in ({}, {"reduced_threshold": 0.5}, {"normalized": True, "alpha": None},
           {"reduction": "batchwise_mean"}):
    fl = focal_loss_with_logits(ml_pred, ml_true, **kw)
    print(kw, fl.shape, f"{fl.sum().item():.6f}")
sbce = SoftBCEWithLogitsLoss(smooth_factor=0.1, pos_weight=torch.tensor([2.0, 1.0, 0.5]).view(
    3, 1, 1))
print(sbce, [n for n, _ in sbce.named_buffers()], f"{sbce(ml_pred, ml_true).item():.6f}")

model = UNetLite(n_classes=n_classes)
print(model.up2, model.aux)
images = torch.randn(4, 3, 8, 8)
target = torch.randint(0, n_classes, (4, 8, 8))
target[:, :, -1] = 255
weight = torch.tensor([0.5, 1.0, 1.5, 2.0])
optimizer = torch.optim.SGD(
    [{"params": [p for p in model.parameters() if p.requires_grad]}],
    lr=0.05, momentum=0.9, weight_decay=1e-4)
iters_per_epoch, epochs = 2, 3
lr_scheduler = torch.optim.lr_scheduler.LambdaLR(
    optimizer, lambda x: (1 - x / (iters_per_epoch * epochs)) ** 0.9)
dice = DiceLoss(MULTICLASS_MODE, ignore_index=255)
for epoch in range(epochs):
    model.train()
    for it in range(iters_per_epoch):
        image, tgt = images[it * 2:it * 2 + 2], target[it * 2:it * 2 + 2]
        output = model(image)
        loss = criterion(output, tgt, weight) + dice(output["out"], tgt)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        lr_scheduler.step()
        print(f"epoch {epoch} it {it} loss {loss.item():.5f} "
              f"lr {optimizer.param_groups[0]['lr']:.6f}")
model.eval()
confmat = ConfusionMatrix(n_classes)
with torch.inference_mode():
    for i in range(2):
        output = model(images[i * 2:i * 2 + 2])["out"]
        output = F.interpolate(output, size=(8, 8), mode="bilinear", align_corners=False)
        confmat.update(target[i * 2:i * 2 + 2].flatten(), output.argmax(1).flatten())
print(confmat.mat)
print(confmat)
print(output.requires_grad, output.is_inference())
small = model(images[:1])["aux"]
print(small.shape, F.interpolate(small, size=(5, 7), mode="nearest").shape)
print("RESULT: seg", f"{loss.item():.5f}")
