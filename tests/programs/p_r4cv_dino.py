"""DINO (facebookresearch/dino main_dino.py + utils.py + vision_transformer.py), shrunk:
DINOHead with trunc_normal_ init and a weight-normed last layer (weight_g frozen),
MultiCropWrapper with unique_consecutive(return_counts=True) + cumsum over crop sizes,
DINOLoss with a registered center buffer, teacher-temperature schedule from np.linspace,
centering + sharpening, the momentum teacher update with mul_/add_, cosine_scheduler,
clip_gradients and cancel_gradients_last_layer, get_params_groups (no weight decay on
biases/norms)."""
import importlib
import math
import os

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


def trunc_normal_(tensor, mean=0., std=1., a=-2., b=2.):
    return nn.init.trunc_normal_(tensor, mean, std, a, b)


class DINOHead(nn.Module):
    def __init__(self, in_dim, out_dim, use_bn=False, norm_last_layer=True, nlayers=3,
                 hidden_dim=16, bottleneck_dim=8):
        super().__init__()
        nlayers = max(nlayers, 1)
        if nlayers == 1:
            self.mlp = nn.Linear(in_dim, bottleneck_dim)
        else:
            layers = [nn.Linear(in_dim, hidden_dim)]
            if use_bn:
                layers.append(nn.BatchNorm1d(hidden_dim))
            layers.append(nn.GELU())
            for _ in range(nlayers - 2):
                layers.append(nn.Linear(hidden_dim, hidden_dim))
                if use_bn:
                    layers.append(nn.BatchNorm1d(hidden_dim))
                layers.append(nn.GELU())
            layers.append(nn.Linear(hidden_dim, bottleneck_dim))
            self.mlp = nn.Sequential(*layers)
        self.apply(self._init_weights)
        self.last_layer = nn.utils.weight_norm(nn.Linear(bottleneck_dim, out_dim, bias=False))
        self.last_layer.weight_g.data.fill_(1)
        if norm_last_layer:
            self.last_layer.weight_g.requires_grad = False

    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            trunc_normal_(m.weight, std=.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = self.mlp(x)
        x = nn.functional.normalize(x, dim=-1, p=2)
        x = self.last_layer(x)
        return x


class MultiCropWrapper(nn.Module):
    def __init__(self, backbone, head):
        super(MultiCropWrapper, self).__init__()
        backbone.fc, backbone.head = nn.Identity(), nn.Identity()
        self.backbone = backbone
        self.head = head

    def forward(self, x):
        if not isinstance(x, list):
            x = [x]
        idx_crops = torch.cumsum(torch.unique_consecutive(
            torch.tensor([inp.shape[-1] for inp in x]),
            return_counts=True,
        )[1], 0)
        start_idx, output = 0, torch.empty(0).to(x[0].device)
        for end_idx in idx_crops:
            _out = self.backbone(torch.cat(x[start_idx: end_idx]))
            if isinstance(_out, tuple):
                _out = _out[0]
            output = torch.cat((output, _out))
            start_idx = end_idx
        return self.head(output)


class DINOLoss(nn.Module):
    def __init__(self, out_dim, ncrops, warmup_teacher_temp, teacher_temp,
                 warmup_teacher_temp_epochs, nepochs, student_temp=0.1,
                 center_momentum=0.9):
        super().__init__()
        self.student_temp = student_temp
        self.center_momentum = center_momentum
        self.ncrops = ncrops
        self.register_buffer("center", torch.zeros(1, out_dim))
        self.teacher_temp_schedule = np.concatenate((
            np.linspace(warmup_teacher_temp, teacher_temp, warmup_teacher_temp_epochs),
            np.ones(nepochs - warmup_teacher_temp_epochs) * teacher_temp
        ))

    def forward(self, student_output, teacher_output, epoch):
        student_out = student_output / self.student_temp
        student_out = student_out.chunk(self.ncrops)
        temp = self.teacher_temp_schedule[epoch]
        teacher_out = F.softmax((teacher_output - self.center) / temp, dim=-1)
        teacher_out = teacher_out.detach().chunk(2)
        total_loss = 0
        n_loss_terms = 0
        for iq, q in enumerate(teacher_out):
            for v in range(len(student_out)):
                if v == iq:
                    continue
                loss = torch.sum(-q * F.log_softmax(student_out[v], dim=-1), dim=-1)
                total_loss += loss.mean()
                n_loss_terms += 1
        total_loss /= n_loss_terms
        self.update_center(teacher_output)
        return total_loss

    @torch.no_grad()
    def update_center(self, teacher_output):
        batch_center = torch.sum(teacher_output, dim=0, keepdim=True)
        batch_center = batch_center / len(teacher_output)
        self.center = self.center * self.center_momentum + batch_center * (
            1 - self.center_momentum)


def cosine_scheduler(base_value, final_value, epochs, niter_per_ep, warmup_epochs=0,
                     start_warmup_value=0):
    warmup_schedule = np.array([])
    warmup_iters = warmup_epochs * niter_per_ep
    if warmup_epochs > 0:
        warmup_schedule = np.linspace(start_warmup_value, base_value, warmup_iters)
    iters = np.arange(epochs * niter_per_ep - warmup_iters)
    schedule = final_value + 0.5 * (base_value - final_value) * (
        1 + np.cos(np.pi * iters / len(iters)))
    schedule = np.concatenate((warmup_schedule, schedule))
    assert len(schedule) == epochs * niter_per_ep
    return schedule


def clip_gradients(model, clip):
    norms = []
    for name, p in model.named_parameters():
        if p.grad is not None:
            param_norm = p.grad.data.norm(2)
            norms.append(param_norm.item())
            clip_coef = clip / (param_norm + 1e-6)
            if clip_coef < 1:
                p.grad.data.mul_(clip_coef)
    return norms


def cancel_gradients_last_layer(epoch, model, freeze_last_layer):
    if epoch >= freeze_last_layer:
        return
    for n, p in model.named_parameters():
        if "last_layer" in n:
            p.grad = None


def get_params_groups(model):
    regularized = []
    not_regularized = []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        if name.endswith(".bias") or len(param.shape) == 1:
            not_regularized.append(param)
        else:
            regularized.append(param)
    return [{'params': regularized}, {'params': not_regularized, 'weight_decay': 0.}]


def make_backbone():
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.GELU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.LayerNorm(8))


torch.manual_seed(0)
out_dim = 12
student = MultiCropWrapper(make_backbone(), DINOHead(8, out_dim, norm_last_layer=True))
teacher = MultiCropWrapper(make_backbone(), DINOHead(8, out_dim))
teacher.load_state_dict(student.state_dict())
for p in teacher.parameters():
    p.requires_grad = False
print(student.head)
print([k for k in student.state_dict().keys() if "last_layer" in k])
print(student.head.last_layer.weight_g.shape, student.head.last_layer.weight_g.requires_grad)
print(student.head.last_layer.weight_v.requires_grad, hasattr(student.head.last_layer, "weight"))
ncrops = 4
dino_loss = DINOLoss(out_dim, ncrops, 0.04, 0.07, 2, 3)
print(dino_loss.teacher_temp_schedule, dino_loss.center.shape)
print(list(dict(dino_loss.named_buffers()).keys()))
params_groups = get_params_groups(student)
print([len(g['params']) for g in params_groups])
optimizer = torch.optim.AdamW(params_groups)
niter = 2
lr_schedule = cosine_scheduler(0.0005 * 8 / 256, 1e-6, 3, niter, warmup_epochs=1)
wd_schedule = cosine_scheduler(0.04, 0.4, 3, niter)
momentum_schedule = cosine_scheduler(0.996, 1, 3, niter)
print(np.round(lr_schedule, 8), np.round(momentum_schedule, 6))

data = torch.randn(4, 3, 8, 8)
for epoch in range(3):
    for it in range(niter):
        it = niter * epoch + it
        for i, param_group in enumerate(optimizer.param_groups):
            param_group["lr"] = lr_schedule[it]
            if i == 0:
                param_group["weight_decay"] = wd_schedule[it]
        global_crops = [data + 0.1 * torch.randn_like(data) for _ in range(2)]
        local_crops = [F.interpolate(data, size=(4, 4), mode="bilinear", align_corners=False)
                       for _ in range(ncrops - 2)]
        images = global_crops + local_crops
        teacher_output = teacher(images[:2])
        student_output = student(images)
        loss = dino_loss(student_output, teacher_output, epoch)
        if not math.isfinite(loss.item()):
            raise SystemExit(1)
        optimizer.zero_grad()
        loss.backward()
        norms = clip_gradients(student, 3.0)
        cancel_gradients_last_layer(epoch, student, 1)
        optimizer.step()
        with torch.no_grad():
            m = momentum_schedule[it]
            for param_q, param_k in zip(student.parameters(), teacher.parameters()):
                param_k.data.mul_(m).add_((1 - m) * param_q.detach().data)
        print(f"it {it} loss {loss.item():.5f} lr {optimizer.param_groups[0]['lr']:.3e} "
              f"wd {optimizer.param_groups[0]['weight_decay']:.4f} nnorms {len(norms)}")
print(student_output.shape, teacher_output.shape, type(loss).__name__, loss.grad_fn)
print(dino_loss.center)
print(student.head.last_layer.weight_g.grad, student.head.last_layer.weight_v.grad is None)
t = torch.tensor([8, 8, 4, 4, 4])
print(torch.unique_consecutive(t, return_counts=True))
print(torch.cumsum(torch.unique_consecutive(t, return_counts=True)[1], 0))
print("RESULT: dino", f"{loss.item():.5f}")
