"""timm's data augmentation and loss pieces (timm/data/mixup.py, random_erasing.py,
timm/loss/cross_entropy.py, timm/utils/model_ema.py ModelEmaV3), shrunk: one_hot with
scatter_, mixup_target, rand_bbox / cutmix_bbox_and_lam, the Mixup class in batch, pair and
elem modes (flip(0), per-sample lam), RandomErasing with per-pixel normal_ fill,
LabelSmoothingCrossEntropy / SoftTargetCrossEntropy, torch.distributions.Beta sampling for
mixup, and ModelEmaV3 with lerp_ and decay warmup."""
import importlib
import math
import os
import random
from copy import deepcopy

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


def one_hot(x, num_classes, on_value=1., off_value=0.):
    x = x.long().view(-1, 1)
    return torch.full((x.size()[0], num_classes), off_value, device=x.device).scatter_(
        1, x, on_value)


def mixup_target(target, num_classes, lam=1., smoothing=0.0):
    off_value = smoothing / num_classes
    on_value = 1. - smoothing + off_value
    y1 = one_hot(target, num_classes, on_value=on_value, off_value=off_value)
    y2 = one_hot(target.flip(0), num_classes, on_value=on_value, off_value=off_value)
    return y1 * lam + y2 * (1. - lam)


def rand_bbox(img_shape, lam, margin=0., count=None):
    ratio = np.sqrt(1 - lam)
    img_h, img_w = img_shape[-2:]
    cut_h, cut_w = int(img_h * ratio), int(img_w * ratio)
    margin_y, margin_x = int(margin * cut_h), int(margin * cut_w)
    cy = np.random.randint(0 + margin_y, img_h - margin_y, size=count)
    cx = np.random.randint(0 + margin_x, img_w - margin_x, size=count)
    yl = np.clip(cy - cut_h // 2, 0, img_h)
    yh = np.clip(cy + cut_h // 2, 0, img_h)
    xl = np.clip(cx - cut_w // 2, 0, img_w)
    xh = np.clip(cx + cut_w // 2, 0, img_w)
    return yl, yh, xl, xh


def cutmix_bbox_and_lam(img_shape, lam, correct_lam=True, count=None):
    yl, yu, xl, xu = rand_bbox(img_shape, lam, count=count)
    if correct_lam:
        bbox_area = (yu - yl) * (xu - xl)
        lam = 1. - bbox_area / float(img_shape[-2] * img_shape[-1])
    return (yl, yu, xl, xu), lam


class Mixup:
    def __init__(self, mixup_alpha=1., cutmix_alpha=0., prob=1.0, switch_prob=0.5,
                 mode='batch', correct_lam=True, label_smoothing=0.1, num_classes=1000):
        self.mixup_alpha = mixup_alpha
        self.cutmix_alpha = cutmix_alpha
        self.mix_prob = prob
        self.switch_prob = switch_prob
        self.label_smoothing = label_smoothing
        self.num_classes = num_classes
        self.mode = mode
        self.correct_lam = correct_lam
        self.mixup_enabled = True

    def _params_per_elem(self, batch_size):
        lam = np.ones(batch_size, dtype=np.float32)
        use_cutmix = np.zeros(batch_size, dtype=bool)
        if self.mixup_enabled:
            if self.mixup_alpha > 0. and self.cutmix_alpha > 0.:
                use_cutmix = np.random.rand(batch_size) < self.switch_prob
                lam_mix = np.where(
                    use_cutmix,
                    np.random.beta(self.cutmix_alpha, self.cutmix_alpha, size=batch_size),
                    np.random.beta(self.mixup_alpha, self.mixup_alpha, size=batch_size))
            elif self.mixup_alpha > 0.:
                lam_mix = np.random.beta(self.mixup_alpha, self.mixup_alpha, size=batch_size)
            else:
                use_cutmix = np.ones(batch_size, dtype=bool)
                lam_mix = np.random.beta(self.cutmix_alpha, self.cutmix_alpha, size=batch_size)
            lam = np.where(np.random.rand(batch_size) < self.mix_prob,
                           lam_mix.astype(np.float32), lam)
        return lam, use_cutmix

    def _params_per_batch(self):
        lam = 1.
        use_cutmix = False
        if self.mixup_enabled and np.random.rand() < self.mix_prob:
            if self.mixup_alpha > 0. and self.cutmix_alpha > 0.:
                use_cutmix = np.random.rand() < self.switch_prob
                lam_mix = np.random.beta(self.cutmix_alpha, self.cutmix_alpha) if use_cutmix \
                    else np.random.beta(self.mixup_alpha, self.mixup_alpha)
            elif self.mixup_alpha > 0.:
                lam_mix = np.random.beta(self.mixup_alpha, self.mixup_alpha)
            else:
                use_cutmix = True
                lam_mix = np.random.beta(self.cutmix_alpha, self.cutmix_alpha)
            lam = float(lam_mix)
        return lam, use_cutmix

    def _mix_elem(self, x):
        batch_size = len(x)
        lam_batch, use_cutmix = self._params_per_elem(batch_size)
        x_orig = x.clone()
        for i in range(batch_size):
            j = batch_size - i - 1
            lam = lam_batch[i]
            if lam != 1.:
                if use_cutmix[i]:
                    (yl, yh, xl, xh), lam = cutmix_bbox_and_lam(
                        x[i].shape, lam, correct_lam=self.correct_lam)
                    x[i][:, yl:yh, xl:xh] = x_orig[j][:, yl:yh, xl:xh]
                    lam_batch[i] = lam
                else:
                    x[i] = x[i] * lam + x_orig[j] * (1 - lam)
        return torch.tensor(lam_batch, device=x.device, dtype=x.dtype).unsqueeze(1)

    def _mix_batch(self, x):
        lam, use_cutmix = self._params_per_batch()
        if lam == 1.:
            return 1.
        if use_cutmix:
            (yl, yh, xl, xh), lam = cutmix_bbox_and_lam(
                x.shape, lam, correct_lam=self.correct_lam)
            x[:, :, yl:yh, xl:xh] = x.flip(0)[:, :, yl:yh, xl:xh]
        else:
            x_flipped = x.flip(0).mul_(1. - lam)
            x.mul_(lam).add_(x_flipped)
        return lam

    def __call__(self, x, target):
        assert len(x) % 2 == 0, 'Batch size should be even when using this'
        if self.mode == 'elem':
            lam = self._mix_elem(x)
        else:
            lam = self._mix_batch(x)
        target = mixup_target(target, self.num_classes, lam, self.label_smoothing)
        return x, target


def _get_pixels(per_pixel, rand_color, patch_size, dtype=torch.float32, device='cpu'):
    if per_pixel:
        return torch.empty(patch_size, dtype=dtype, device=device).normal_()
    elif rand_color:
        return torch.empty((patch_size[0], 1, 1), dtype=dtype, device=device).normal_()
    else:
        return torch.zeros((patch_size[0], 1, 1), dtype=dtype, device=device)


class RandomErasing:
    def __init__(self, probability=0.5, min_area=0.02, max_area=1 / 3, min_aspect=0.3,
                 max_aspect=None, mode='const', min_count=1, max_count=None, num_splits=0,
                 device='cpu'):
        self.probability = probability
        self.min_area = min_area
        self.max_area = max_area
        max_aspect = max_aspect or 1 / min_aspect
        self.log_aspect_ratio = (math.log(min_aspect), math.log(max_aspect))
        self.min_count = min_count
        self.max_count = max_count or min_count
        self.num_splits = num_splits
        self.mode = mode.lower()
        self.rand_color = False
        self.per_pixel = False
        if self.mode == 'rand':
            self.rand_color = True
        elif self.mode == 'pixel':
            self.per_pixel = True
        else:
            assert not self.mode or self.mode == 'const'
        self.device = device

    def _erase(self, img, chan, img_h, img_w, dtype):
        if random.random() > self.probability:
            return
        area = img_h * img_w
        count = self.min_count if self.min_count == self.max_count else \
            random.randint(self.min_count, self.max_count)
        for _ in range(count):
            for attempt in range(10):
                target_area = random.uniform(self.min_area, self.max_area) * area / count
                aspect_ratio = math.exp(random.uniform(*self.log_aspect_ratio))
                h = int(round(math.sqrt(target_area * aspect_ratio)))
                w = int(round(math.sqrt(target_area / aspect_ratio)))
                if w < img_w and h < img_h:
                    top = random.randint(0, img_h - h)
                    left = random.randint(0, img_w - w)
                    img[:, top:top + h, left:left + w] = _get_pixels(
                        self.per_pixel, self.rand_color, (chan, h, w),
                        dtype=dtype, device=self.device)
                    break

    def __call__(self, input):
        if len(input.size()) == 3:
            self._erase(input, *input.size(), input.dtype)
        else:
            batch_size, chan, img_h, img_w = input.size()
            batch_start = batch_size // self.num_splits if self.num_splits > 1 else 0
            for i in range(batch_start, batch_size):
                self._erase(input[i], chan, img_h, img_w, input.dtype)
        return input

    def __repr__(self):
        fs = self.__class__.__name__ + f'(p={self.probability}, mode={self.mode}'
        fs += f', count=({self.min_count}, {self.max_count}))'
        return fs


class LabelSmoothingCrossEntropy(nn.Module):
    def __init__(self, smoothing=0.1):
        super(LabelSmoothingCrossEntropy, self).__init__()
        assert smoothing < 1.0
        self.smoothing = smoothing
        self.confidence = 1. - smoothing

    def forward(self, x, target):
        logprobs = F.log_softmax(x, dim=-1)
        nll_loss = -logprobs.gather(dim=-1, index=target.unsqueeze(1))
        nll_loss = nll_loss.squeeze(1)
        smooth_loss = -logprobs.mean(dim=-1)
        loss = self.confidence * nll_loss + self.smoothing * smooth_loss
        return loss.mean()


class SoftTargetCrossEntropy(nn.Module):
    def __init__(self):
        super(SoftTargetCrossEntropy, self).__init__()

    def forward(self, x, target):
        loss = torch.sum(-target * F.log_softmax(x, dim=-1), dim=-1)
        return loss.mean()


class ModelEmaV3(nn.Module):
    def __init__(self, model, decay=0.9999, min_decay=0.0, update_after_step=0,
                 use_warmup=False, warmup_gamma=1.0, warmup_power=2 / 3, device=None):
        super().__init__()
        self.module = deepcopy(model)
        self.module.eval()
        self.decay = decay
        self.min_decay = min_decay
        self.update_after_step = update_after_step
        self.use_warmup = use_warmup
        self.warmup_gamma = warmup_gamma
        self.warmup_power = warmup_power
        self.device = device

    def get_decay(self, step=None):
        if step is None:
            return self.decay
        step = max(0, step - self.update_after_step - 1)
        if step <= 0:
            return 0.0
        if self.use_warmup:
            decay = 1 - (1 + step / self.warmup_gamma) ** -self.warmup_power
            decay = max(min(decay, self.decay), self.min_decay)
        else:
            decay = self.decay
        return decay

    @torch.no_grad()
    def update(self, model, step=None):
        decay = self.get_decay(step)
        for ema_v, model_v in zip(self.module.state_dict().values(),
                                  model.state_dict().values()):
            if ema_v.is_floating_point():
                ema_v.lerp_(model_v.to(device=ema_v.device), weight=1. - decay)
            else:
                ema_v.copy_(model_v.to(device=ema_v.device))

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)


np.random.seed(0)
random.seed(0)
torch.manual_seed(0)
t = torch.tensor([1, 0, 3, 2])
print(one_hot(t, 4))
print(mixup_target(t, 4, lam=0.7, smoothing=0.1))
print(rand_bbox((3, 8, 8), 0.6), cutmix_bbox_and_lam((3, 8, 8), 0.6))
x = torch.arange(4 * 1 * 4 * 4, dtype=torch.float32).reshape(4, 1, 4, 4)
for mode, kw in (("batch", dict(mixup_alpha=0.8, cutmix_alpha=0.)),
                 ("batch", dict(mixup_alpha=0., cutmix_alpha=1.0)),
                 ("elem", dict(mixup_alpha=0.8, cutmix_alpha=1.0))):
    mixup_fn = Mixup(mode=mode, num_classes=4, **kw)
    xm, ym = mixup_fn(x.clone(), t)
    print(mode, xm[:, 0, 0], ym[0])
re = RandomErasing(probability=1.0, mode='pixel')
print(re)
img = torch.ones(3, 8, 8)
out = re(img)
print(out is img, (out != 1).sum().item(), f"{out.sum().item():.4f}")
batch = torch.zeros(4, 3, 8, 8)
RandomErasing(probability=0.5, mode='rand', max_count=3, num_splits=2)(batch)
print([(b != 0).sum().item() for b in batch])
beta = torch.distributions.Beta(torch.tensor([0.4]), torch.tensor([0.4]))
print(beta, beta.sample(), beta.mean, beta.concentration1)
lam = torch.distributions.beta.Beta(0.2, 0.2).sample((3,))
print(lam, lam.dtype)

model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5))
model_ema = ModelEmaV3(model, decay=0.99, use_warmup=True)
print([round(model_ema.get_decay(s), 6) for s in (0, 1, 2, 5, 50, 5000)])
mixup_fn = Mixup(mixup_alpha=0.8, cutmix_alpha=1.0, label_smoothing=0.1, num_classes=5)
train_loss_fn = SoftTargetCrossEntropy()
validate_loss_fn = nn.CrossEntropyLoss()
ls_ce = LabelSmoothingCrossEntropy(smoothing=0.1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
X = torch.randn(16, 3, 8, 8)
Y = torch.randint(0, 5, (16,))
num_updates = 0
for step in range(6):
    input, target = X[(step % 2) * 8:(step % 2) * 8 + 8].clone(), Y[(step % 2) * 8:][:8]
    input, target = mixup_fn(input, target)
    input = RandomErasing(probability=0.25, mode='pixel')(input)
    output = model(input)
    loss = train_loss_fn(output, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    num_updates += 1
    model_ema.update(model, step=num_updates)
    print(f"step {step} loss {loss.item():.5f} target_sum {target.sum().item():.3f}")
model.eval()
with torch.no_grad():
    out, out_ema = model(X), model_ema(X)
print(f"{validate_loss_fn(out, Y).item():.5f} {validate_loss_fn(out_ema, Y).item():.5f}")
print(f"{ls_ce(out, Y).item():.5f} {F.cross_entropy(out, Y, label_smoothing=0.1).item():.5f}")
print(model_ema.module[1].num_batches_tracked, model_ema.module[1].running_mean[:3])
print(model_ema.module.training, list(model_ema.state_dict().keys())[:3])
print("RESULT: mixup", f"{loss.item():.5f}")
