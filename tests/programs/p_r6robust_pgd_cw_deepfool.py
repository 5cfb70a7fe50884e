"""White-box attacks from Harry24k/adversarial-attacks-pytorch (torchattacks): PGD (L-inf, random
start), PGDL2, CW (tanh space, Adam, f-function with one-hot) and DeepFool (per-class jacobian by
repeated backward), shrunk: a small CNN "pretrained" a few steps on synthetic 1x12x12 images."""

# CW's atanh/tanh round trip amplifies 1-ulp float32 log/tanh differences:
# compare: rtol=1e-3 atol=1e-5
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
optim = torch.optim

torch.manual_seed(0)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(8, 16, 3), nn.ReLU()
        )
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(16 * 3 * 3, 32), nn.ReLU(), nn.Linear(32, 5)
        )

    def forward(self, x):
        return self.classifier(self.features(x))


class Attack:
    def __init__(self, name, model):
        self.attack = name
        self.model = model
        self.device = next(model.parameters()).device
        self.targeted = False

    def get_logits(self, inputs):
        return self.model(inputs)

    def __call__(self, images, labels):
        self.model.eval()
        return self.forward(images, labels)

    def __repr__(self):
        info = {
            k: v
            for k, v in self.__dict__.items()
            if k in ("eps", "alpha", "steps", "c", "kappa", "lr", "overshoot")
        }
        return (
            self.attack
            + "(model_name="
            + self.model.__class__.__name__
            + ", "
            + ", ".join("%s=%s" % (k, v) for k, v in info.items())
            + ")"
        )


class PGD(Attack):
    def __init__(self, model, eps=8 / 255, alpha=2 / 255, steps=10, random_start=True):
        super().__init__("PGD", model)
        self.eps = eps
        self.alpha = alpha
        self.steps = steps
        self.random_start = random_start

    def forward(self, images, labels):
        images = images.clone().detach().to(self.device)
        labels = labels.clone().detach().to(self.device)
        loss = nn.CrossEntropyLoss()
        adv_images = images.clone().detach()
        if self.random_start:
            adv_images = adv_images + torch.empty_like(adv_images).uniform_(-self.eps, self.eps)
            adv_images = torch.clamp(adv_images, min=0, max=1).detach()
        for _ in range(self.steps):
            adv_images.requires_grad = True
            outputs = self.get_logits(adv_images)
            cost = loss(outputs, labels)
            grad = torch.autograd.grad(cost, adv_images, retain_graph=False, create_graph=False)[0]
            adv_images = adv_images.detach() + self.alpha * grad.sign()
            delta = torch.clamp(adv_images - images, min=-self.eps, max=self.eps)
            adv_images = torch.clamp(images + delta, min=0, max=1).detach()
        return adv_images


class PGDL2(Attack):
    def __init__(
        self, model, eps=1.0, alpha=0.2, steps=10, random_start=True, eps_for_division=1e-10
    ):
        super().__init__("PGDL2", model)
        self.eps = eps
        self.alpha = alpha
        self.steps = steps
        self.random_start = random_start
        self.eps_for_division = eps_for_division

    def forward(self, images, labels):
        images = images.clone().detach().to(self.device)
        labels = labels.clone().detach().to(self.device)
        loss = nn.CrossEntropyLoss()
        adv_images = images.clone().detach()
        batch_size = len(images)
        if self.random_start:
            delta = torch.empty_like(adv_images).normal_()
            d_flat = delta.view(adv_images.size(0), -1)
            n = d_flat.norm(p=2, dim=1).view(adv_images.size(0), 1, 1, 1)
            r = torch.zeros_like(n).uniform_(0, 1)
            delta *= r / n * self.eps
            adv_images = torch.clamp(adv_images + delta, min=0, max=1).detach()
        for _ in range(self.steps):
            adv_images.requires_grad = True
            outputs = self.get_logits(adv_images)
            cost = loss(outputs, labels)
            grad = torch.autograd.grad(cost, adv_images, retain_graph=False, create_graph=False)[0]
            grad_norms = torch.norm(grad.view(batch_size, -1), p=2, dim=1) + self.eps_for_division
            grad = grad / grad_norms.view(batch_size, 1, 1, 1)
            adv_images = adv_images.detach() + self.alpha * grad
            delta = adv_images - images
            delta_norms = torch.norm(delta.view(batch_size, -1), p=2, dim=1)
            factor = self.eps / delta_norms
            factor = torch.min(factor, torch.ones_like(delta_norms))
            delta = delta * factor.view(-1, 1, 1, 1)
            adv_images = torch.clamp(images + delta, min=0, max=1).detach()
        return adv_images


class CW(Attack):
    def __init__(self, model, c=1, kappa=0, steps=50, lr=0.01):
        super().__init__("CW", model)
        self.c = c
        self.kappa = kappa
        self.steps = steps
        self.lr = lr

    def forward(self, images, labels):
        images = images.clone().detach().to(self.device)
        labels = labels.clone().detach().to(self.device)
        w = self.inverse_tanh_space(images).detach()
        w.requires_grad = True
        best_adv_images = images.clone().detach()
        best_L2 = 1e10 * torch.ones((len(images))).to(self.device)
        prev_cost = 1e10
        dim = len(images.shape)
        MSELoss = nn.MSELoss(reduction="none")
        Flatten = nn.Flatten()
        optimizer = optim.Adam([w], lr=self.lr)
        for step in range(self.steps):
            adv_images = self.tanh_space(w)
            current_L2 = MSELoss(Flatten(adv_images), Flatten(images)).sum(dim=1)
            L2_loss = current_L2.sum()
            outputs = self.get_logits(adv_images)
            f_loss = self.f(outputs, labels).sum()
            cost = L2_loss + self.c * f_loss
            optimizer.zero_grad()
            cost.backward()
            optimizer.step()
            pre = torch.argmax(outputs.detach(), 1)
            condition = (pre != labels).float()
            mask = condition * (best_L2 > current_L2.detach())
            best_L2 = mask * current_L2.detach() + (1 - mask) * best_L2
            mask = mask.view([-1] + [1] * (dim - 1))
            best_adv_images = mask * adv_images.detach() + (1 - mask) * best_adv_images
            if step % max(self.steps // 10, 1) == 0:
                if cost.item() > prev_cost:
                    print("  CW early stop at", step)
                    return best_adv_images
                prev_cost = cost.item()
        return best_adv_images

    def tanh_space(self, x):
        return 1 / 2 * (torch.tanh(x) + 1)

    def inverse_tanh_space(self, x):
        return self.atanh(torch.clamp(x * 2 - 1, min=-1, max=1))

    def atanh(self, x):
        return 0.5 * torch.log((1 + x) / (1 - x))

    def f(self, outputs, labels):
        one_hot_labels = torch.eye(outputs.shape[1]).to(self.device)[labels]
        other = torch.max((1 - one_hot_labels) * outputs, dim=1)[0]
        real = torch.max(one_hot_labels * outputs, dim=1)[0]
        return torch.clamp((real - other), min=-self.kappa)


class DeepFool(Attack):
    def __init__(self, model, steps=50, overshoot=0.02):
        super().__init__("DeepFool", model)
        self.steps = steps
        self.overshoot = overshoot

    def forward(self, images, labels):
        adv_images, target_labels = self._forward(images, labels)
        return adv_images, target_labels

    def _forward(self, images, labels):
        images = images.clone().detach().to(self.device)
        labels = labels.clone().detach().to(self.device)
        batch_size = len(images)
        correct = torch.tensor([True] * batch_size)
        target_labels = labels.clone().detach().to(self.device)
        curr_steps = 0
        adv_images = []
        for idx in range(batch_size):
            image = images[idx : idx + 1].clone().detach()
            adv_images.append(image)
        while (True in correct) and (curr_steps < self.steps):
            for idx in range(batch_size):
                if not correct[idx]:
                    continue
                early_stop, pre, adv_image = self._forward_indiv(adv_images[idx], labels[idx])
                adv_images[idx] = adv_image
                target_labels[idx] = pre
                if early_stop:
                    correct[idx] = False
            curr_steps += 1
        print("  DeepFool steps", curr_steps, correct)
        adv_images = torch.cat(adv_images).detach()
        return adv_images, target_labels

    def _forward_indiv(self, image, label):
        image.requires_grad = True
        fs = self.get_logits(image)[0]
        _, pre = torch.max(fs, dim=0)
        if pre != label:
            return (True, pre, image)
        ws = self._construct_jacobian(fs, image)
        image = image.detach()
        f_0 = fs[label]
        w_0 = ws[label]
        wrong_classes = [i for i in range(len(fs)) if i != label]
        f_k = fs[wrong_classes]
        w_k = ws[wrong_classes]
        f_prime = f_k - f_0
        w_prime = w_k - w_0
        value = torch.abs(f_prime) / torch.norm(nn.Flatten()(w_prime), p=2, dim=1)
        _, hat_L = torch.min(value, 0)
        delta = torch.abs(f_prime[hat_L]) * w_prime[hat_L] / (torch.norm(w_prime[hat_L], p=2) ** 2)
        target_label = hat_L if hat_L < label else hat_L + 1
        adv_image = image + (1 + self.overshoot) * delta
        adv_image = torch.clamp(adv_image, min=0, max=1).detach()
        return (False, target_label, adv_image)

    def _construct_jacobian(self, y, x):
        x_grads = []
        for idx, y_element in enumerate(y):
            if x.grad is not None:
                x.grad.zero_()
            y_element.backward(retain_graph=True)
            x_grads.append(x.grad.clone().detach())
        return torch.stack(x_grads).reshape(*y.shape, *x.shape)


images = torch.rand(16, 1, 12, 12)
images[:, :, :, :6] *= 0.5
labels = images[:, 0, :10].reshape(16, 5, 24).mean(-1).argmax(1)
model = SmallCNN()
opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for epoch in range(60):
    opt.zero_grad()
    loss = F.cross_entropy(model(images), labels)
    loss.backward()
    opt.step()
print("train loss", round(loss.item(), 5), labels.tolist())
model.eval()


def accuracy(x, y):
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


print("clean acc", accuracy(images, labels))
for atk in [
    PGD(model, eps=8 / 255, alpha=2 / 255, steps=7),
    PGD(model, eps=0.1, alpha=0.02, steps=5, random_start=False),
    PGDL2(model, eps=0.5, alpha=0.1, steps=6),
]:
    adv = atk(images, labels)
    d = adv - images
    print(
        atk,
        "acc",
        accuracy(adv, labels),
        "linf",
        round(d.abs().max().item(), 6),
        "l2",
        d.flatten(1).norm(dim=1)[:4],
    )
cw = CW(model, c=1, kappa=0, steps=30, lr=0.05)
adv = cw(images[:6], labels[:6])
print(cw, "acc", accuracy(adv, labels[:6]), (adv - images[:6]).pow(2).sum(dim=(1, 2, 3)))
df = DeepFool(model, steps=10, overshoot=0.02)
adv, tl = df(images[:5], labels[:5])
print(df, "acc", accuracy(adv, labels[:5]), tl, (adv - images[:5]).flatten(1).norm(dim=1))
