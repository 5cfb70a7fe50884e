"""Saliency maps (Simonyan et al. 2013, as in the cs231n "NetworkVisualization-PyTorch" notebook),
class-model visualisation by gradient ascent and a DeepDream loop (forward hook on a layer,
gradient ascent on the input under no_grad), on a small CNN with random weights."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
    nn.MaxPool2d(2),
    nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(inplace=True),
    nn.AdaptiveAvgPool2d((2, 2)), nn.Flatten(), nn.Linear(64, 5),
)
model.eval()
for param in model.parameters():
    param.requires_grad = False
print(model)


def compute_saliency_maps(X, y, model):
    model.eval()
    X.requires_grad_()
    saliency = None
    scores = model(X)
    scores = scores.gather(1, y.view(-1, 1)).squeeze()
    scores.backward(torch.ones(scores.shape))
    saliency, _ = torch.max(X.grad.data.abs(), dim=1)
    return saliency


def make_fooling_image(X, target_y, model):
    X_fooling = X.clone()
    X_fooling = X_fooling.requires_grad_()
    learning_rate = 1
    for it in range(10):
        scores = model(X_fooling)
        _, index = scores.max(dim=1)
        if index[0] == target_y:
            break
        target_score = scores[0, target_y]
        target_score.backward()
        im_grad = X_fooling.grad.data
        X_fooling.data += learning_rate * (im_grad / im_grad.norm())
        X_fooling.grad.data.zero_()
    return X_fooling, it


def jitter(X, ox, oy):
    if ox != 0:
        left = X[:, :, :, :-ox]
        right = X[:, :, :, -ox:]
        X = torch.cat([right, left], dim=3)
    if oy != 0:
        top = X[:, :, :-oy]
        bottom = X[:, :, -oy:]
        X = torch.cat([bottom, top], dim=2)
    return X


def create_class_visualization(target_y, model, dtype, l2_reg=1e-3, learning_rate=25,
                               num_iterations=8, max_jitter=2):
    model.type(dtype)
    img = torch.randn(1, 3, 16, 16).mul_(1.0).type(dtype).requires_grad_()
    for t in range(num_iterations):
        ox, oy = t % (max_jitter + 1), (2 * t) % (max_jitter + 1)
        img.data.copy_(jitter(img.data, ox, oy))
        scores = model(img)
        target_score = scores[0, target_y] - l2_reg * img.norm() ** 2
        target_score.backward()
        img.data += learning_rate * img.grad.data / img.grad.data.norm()
        img.grad.data.zero_()
        img.data.copy_(jitter(img.data, -ox, -oy))
        for c in range(3):
            lo, hi = float(-0.5 - c * 0.1), float(0.5 + c * 0.1)
            img.data[:, c].clamp_(min=lo, max=hi)
        if t % 3 == 0:
            print(t, round(target_score.item(), 4))
    return img.data


X = torch.randn(4, 3, 16, 16)
y = torch.tensor([0, 1, 2, 3])
saliency = compute_saliency_maps(X, y, model)
print(saliency.shape, saliency.dtype)
print(saliency[0, :3, :6])
print(saliency.sum(dim=(1, 2)))

X_fooling, it = make_fooling_image(X[0:1], 4, model)
print("fooled after", it, model(X_fooling).argmax(1).item(),
      (X_fooling - X[0:1]).abs().max().item())

img = create_class_visualization(2, model, torch.FloatTensor)
print(img.mean().item(), img.std().item())

activations = {}


def hook(module, inp, out):
    activations["feat"] = out


handle = model[4].register_forward_hook(hook)
dream = torch.rand(1, 3, 16, 16, requires_grad=True)
for i in range(6):
    model(dream)
    loss = activations["feat"].norm()
    loss.backward()
    g = dream.grad
    g = g / (g.abs().mean() + 1e-8)
    with torch.no_grad():
        dream += 0.01 * g
        dream.clamp_(0, 1)
    dream.grad.zero_()
    print(f"dream step {i} activation norm {loss.item():.4f}")
handle.remove()
print(len(model[4]._forward_hooks))
print("RESULT:", dream.sum().item())
