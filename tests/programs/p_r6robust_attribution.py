"""Attribution methods, shrunk: Captum's IntegratedGradients (riemann_* and gausslegendre
approximation_parameters, scaled-feature batching, _reshape_and_sum, convergence delta) and
NoiseTunnel (smoothgrad, smoothgrad_sq, vargrad with torch.normal noise),
kazuto1011/grad-cam-pytorch's occlusion_sensitivity, and 1Konny/gradcam_plus_plus-pytorch's
GradCAM/GradCAMpp (forward hook and register_backward_hook on the target layer, F.upsample),
on a small CNN and synthetic images."""

import importlib
import os
import warnings
from enum import Enum

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
warnings.simplefilter("ignore")


class Riemann(Enum):
    left = 1
    right = 2
    middle = 3
    trapezoid = 4


SUPPORTED_RIEMANN_METHODS = ["riemann_left", "riemann_right", "riemann_middle", "riemann_trapezoid"]


def approximation_parameters(method):
    if method in SUPPORTED_RIEMANN_METHODS:
        return riemann_builders(method=Riemann[method.split("_")[-1]])
    if method == "gausslegendre":
        return gauss_legendre_builders()
    raise ValueError("Invalid integral approximation method name: {}".format(method))


def riemann_builders(method=Riemann.trapezoid):
    def step_sizes(n):
        assert n > 1, "The number of steps has to be larger than one"
        deltas = [1 / n] * n
        if method == Riemann.trapezoid:
            deltas[0] /= 2
            deltas[-1] /= 2
        return deltas

    def alphas(n):
        assert n > 1, "The number of steps has to be larger than one"
        if method == Riemann.trapezoid:
            return torch.linspace(0, 1, n).tolist()
        elif method == Riemann.left:
            return torch.linspace(0, 1 - 1 / n, n).tolist()
        elif method == Riemann.middle:
            return torch.linspace(1 / (2 * n), 1 - 1 / (2 * n), n).tolist()
        elif method == Riemann.right:
            return torch.linspace(1 / n, 1, n).tolist()

    return step_sizes, alphas


def gauss_legendre_builders():
    def step_sizes(n):
        return list(0.5 * np.polynomial.legendre.leggauss(n)[1])

    def alphas(n):
        return list(0.5 * (1 + np.polynomial.legendre.leggauss(n)[0]))

    return step_sizes, alphas


def _reshape_and_sum(tensor_input, num_steps, num_examples, layer_size):
    return torch.sum(tensor_input.reshape((num_steps, num_examples) + layer_size), dim=0)


def _select_targets(output, target):
    if target is None:
        return output
    if isinstance(target, int):
        return output[:, target]
    return torch.gather(output, 1, target.reshape(len(output), 1))


def compute_gradients(forward_fn, inputs, target_ind=None):
    with torch.autograd.set_grad_enabled(True):
        outputs = _select_targets(forward_fn(*inputs), target_ind)
        assert outputs[0].numel() == 1, "Target not provided when necessary"
        grads = torch.autograd.grad(torch.unbind(outputs), inputs)
    return grads


class IntegratedGradients:
    def __init__(self, forward_func):
        self.forward_func = forward_func

    def attribute(
        self,
        inputs,
        baselines=None,
        target=None,
        n_steps=50,
        method="gausslegendre",
        return_convergence_delta=False,
    ):
        inputs = (inputs,)
        baselines = (torch.zeros_like(inputs[0]) if baselines is None else baselines,)
        num_examples = inputs[0].shape[0]
        step_sizes_func, alphas_func = approximation_parameters(method)
        step_sizes, alphas = step_sizes_func(n_steps), alphas_func(n_steps)
        scaled_features_tpl = tuple(
            torch.cat(
                [baseline + alpha * (input - baseline) for alpha in alphas], dim=0
            ).requires_grad_()
            for input, baseline in zip(inputs, baselines)
        )
        expanded_target = None
        if target is not None:
            expanded_target = target if isinstance(target, int) else target.repeat(n_steps)
        grads = compute_gradients(self.forward_func, scaled_features_tpl, expanded_target)
        scaled_grads = [
            grad.contiguous().view(n_steps, -1)
            * torch.tensor(step_sizes).float().view(n_steps, 1).to(grad.device)
            for grad in grads
        ]
        total_grads = tuple(
            _reshape_and_sum(scaled_grad, n_steps, grad.shape[0] // n_steps, grad.shape[1:])
            for (scaled_grad, grad) in zip(scaled_grads, grads)
        )
        attributions = tuple(
            total_grad * (input - baseline)
            for total_grad, input, baseline in zip(total_grads, inputs, baselines)
        )[0]
        if not return_convergence_delta:
            return attributions
        with torch.no_grad():
            start = _select_targets(self.forward_func(baselines[0]), target)
            end = _select_targets(self.forward_func(inputs[0]), target)
        row_sums = attributions.view(num_examples, -1).sum(1)
        delta = row_sums - (end - start).view(-1)
        return attributions, delta


class Saliency:
    def __init__(self, forward_func):
        self.forward_func = forward_func

    def attribute(self, inputs, target=None, abs=True):
        inputs = inputs.detach().requires_grad_()
        g = compute_gradients(self.forward_func, (inputs,), target)[0]
        return g.abs() if abs else g


class NoiseTunnel:
    def __init__(self, attribution_method):
        self.attribution_method = attribution_method

    def attribute(self, inputs, nt_type="smoothgrad", nt_samples=5, stdevs=1.0, **kwargs):
        bsz = inputs.shape[0]
        input_expanded_size = (bsz * nt_samples,) + tuple(inputs.shape[1:])
        input_expanded = inputs.repeat(1, nt_samples, *tuple([1] * len(inputs.shape[2:]))).view(
            input_expanded_size
        )
        stdev_expanded = torch.tensor(stdevs, device=inputs.device).repeat(input_expanded.shape)
        noise = torch.normal(0, stdev_expanded)
        noisy = input_expanded + noise
        kw = dict(kwargs)
        if isinstance(kw.get("target"), torch.Tensor):
            kw["target"] = kw["target"].repeat_interleave(nt_samples)
        attr = self.attribution_method.attribute(noisy, **kw)
        attr = attr.view(bsz, nt_samples, *inputs.shape[1:])
        if nt_type == "smoothgrad":
            return attr.mean(1)
        if nt_type == "smoothgrad_sq":
            return (attr**2).mean(1)
        mean = attr.mean(1)
        return (attr**2).mean(1) - mean**2


def occlusion_sensitivity(model, images, ids, mean=None, patch=35, stride=1, n_batches=128):
    torch.set_grad_enabled(False)
    model.eval()
    mean = mean if mean else 0
    patch_H, patch_W = patch if isinstance(patch, (tuple, list)) else (patch, patch)
    pad_H, pad_W = patch_H // 2, patch_W // 2
    images = F.pad(images, (pad_W, pad_W, pad_H, pad_H), value=mean)
    B, _, H, W = images.shape
    new_H = (H - patch_H) // stride + 1
    new_W = (W - patch_W) // stride + 1
    anchors = []
    grid_h = 0
    while grid_h <= H - patch_H:
        grid_w = 0
        while grid_w <= W - patch_W:
            grid_w += stride
            anchors.append((grid_h, grid_w))
        grid_h += stride
    baseline = model(images).detach().gather(1, ids)
    scoremaps = []
    for i in range(0, len(anchors), n_batches):
        batch_images = []
        batch_ids = []
        for grid_h, grid_w in anchors[i : i + n_batches]:
            images_ = images.clone()
            images_[..., grid_h : grid_h + patch_H, grid_w : grid_w + patch_W] = mean
            batch_images.append(images_)
            batch_ids.append(ids)
        batch_images = torch.cat(batch_images, dim=0)
        batch_ids = torch.cat(batch_ids, dim=0)
        scores = model(batch_images).detach().gather(1, batch_ids)
        scoremaps += list(torch.split(scores, B))
    diffmaps = torch.cat(scoremaps, dim=1) - baseline
    diffmaps = diffmaps.view(B, new_H, new_W)
    torch.set_grad_enabled(True)
    return diffmaps


class GradCAM(object):
    def __init__(self, model, target_layer, size=(16, 16)):
        self.model_arch = model
        self.size = size
        self.gradients = dict()
        self.activations = dict()

        def backward_hook(module, grad_input, grad_output):
            self.gradients["value"] = grad_output[0]
            return None

        def forward_hook(module, input, output):
            self.activations["value"] = output
            return None

        target_layer.register_forward_hook(forward_hook)
        target_layer.register_backward_hook(backward_hook)

    def forward(self, input, class_idx=None, retain_graph=False):
        b, c, h, w = input.size()
        logit = self.model_arch(input)
        if class_idx is None:
            score = logit[:, logit.max(1)[-1]].squeeze()
        else:
            score = logit[:, class_idx].squeeze()
        self.model_arch.zero_grad()
        score.backward(retain_graph=retain_graph)
        gradients = self.gradients["value"]
        activations = self.activations["value"]
        b, k, u, v = gradients.size()
        alpha = gradients.view(b, k, -1).mean(2)
        weights = alpha.view(b, k, 1, 1)
        saliency_map = (weights * activations).sum(1, keepdim=True)
        saliency_map = F.relu(saliency_map)
        saliency_map = F.upsample(
            saliency_map, size=self.size, mode="bilinear", align_corners=False
        )
        saliency_map_min, saliency_map_max = saliency_map.min(), saliency_map.max()
        saliency_map = (
            (saliency_map - saliency_map_min).div(saliency_map_max - saliency_map_min).data
        )
        return saliency_map, logit

    def __call__(self, input, class_idx=None, retain_graph=False):
        return self.forward(input, class_idx, retain_graph)


class GradCAMpp(GradCAM):
    def forward(self, input, class_idx=None, retain_graph=False):
        b, c, h, w = input.size()
        logit = self.model_arch(input)
        if class_idx is None:
            score = logit[:, logit.max(1)[-1]].squeeze()
        else:
            score = logit[:, class_idx].squeeze()
        self.model_arch.zero_grad()
        score.backward(retain_graph=retain_graph)
        gradients = self.gradients["value"]
        activations = self.activations["value"]
        b, k, u, v = gradients.size()
        alpha_num = gradients.pow(2)
        alpha_denom = gradients.pow(2).mul(2) + activations.mul(gradients.pow(3)).view(
            b, k, u * v
        ).sum(-1, keepdim=True).view(b, k, 1, 1)
        alpha_denom = torch.where(alpha_denom != 0.0, alpha_denom, torch.ones_like(alpha_denom))
        alpha = alpha_num.div(alpha_denom + 1e-7)
        positive_gradients = F.relu(score.exp() * gradients)
        weights = (alpha * positive_gradients).view(b, k, u * v).sum(-1).view(b, k, 1, 1)
        saliency_map = (weights * activations).sum(1, keepdim=True)
        saliency_map = F.relu(saliency_map)
        saliency_map = F.upsample(
            saliency_map, size=self.size, mode="bilinear", align_corners=False
        )
        saliency_map_min, saliency_map_max = saliency_map.min(), saliency_map.max()
        saliency_map = (
            (saliency_map - saliency_map_min).div(saliency_map_max - saliency_map_min).data
        )
        return saliency_map, logit


torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(3, 6, 3, padding=1),
    nn.ReLU(),
    nn.MaxPool2d(2),
    nn.Conv2d(6, 8, 3, padding=1),
    nn.ReLU(),
    nn.AdaptiveAvgPool2d(1),
    nn.Flatten(),
    nn.Linear(8, 4),
)
model.eval()
x = torch.rand(3, 3, 16, 16)
target = torch.tensor([0, 2, 3])
ig = IntegratedGradients(model)
for method in [
    "gausslegendre",
    "riemann_trapezoid",
    "riemann_left",
    "riemann_middle",
    "riemann_right",
]:
    attr, delta = ig.attribute(
        x, target=target, n_steps=16, method=method, return_convergence_delta=True
    )
    print(method, attr.shape, attr.sum((1, 2, 3)), delta.abs())
attr = ig.attribute(x[:1], baselines=torch.full_like(x[:1], 0.5), target=1, n_steps=8)
print("int target", attr.abs().max(), attr[0, :, 4, 4])
try:
    approximation_parameters("simpson")
except ValueError as e:
    print(type(e).__name__, e)
nt = NoiseTunnel(Saliency(model))
for kind in ["smoothgrad", "smoothgrad_sq", "vargrad"]:
    a = nt.attribute(x, nt_type=kind, nt_samples=4, stdevs=0.2, target=target)
    print(kind, a.shape, a.sum((1, 2, 3)))
nt_ig = NoiseTunnel(ig).attribute(
    x[:2], nt_type="smoothgrad", nt_samples=3, stdevs=0.1, target=target[:2], n_steps=6
)
print("nt ig", nt_ig.sum((1, 2, 3)))
occ = occlusion_sensitivity(model, x, target.view(-1, 1), patch=5, stride=3, n_batches=7)
print("occlusion", occ.shape, occ[0, :3, :3], occ.abs().sum((1, 2)), torch.is_grad_enabled())
for cls in [GradCAM, GradCAMpp]:
    cam = cls(model, model[3])
    for i in range(2):
        mask, logit = cam(x[i : i + 1])
        print(cls.__name__, mask.shape, mask.sum(), mask[0, 0, 8, :5], logit.argmax().item())
    mask, _ = cam(x[2:3], class_idx=1)
    print(
        cls.__name__,
        "class 1",
        mask.mean(),
        model[3].weight.grad.abs().sum() if model[3].weight.grad is not None else None,
    )
