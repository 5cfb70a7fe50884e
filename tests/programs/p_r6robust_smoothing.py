"""Randomized smoothing, shrunk: locuslab/smoothing (NormalizeLayer, Gaussian-noise training from
train.py, core.py's Smooth with _sample_noise/_count_arr, certify with a Clopper-Pearson bound
and predict with a binomial test, via scipy) and Hadisalman/smoothing-adversarial's PGD_L2 on the
smoothed soft classifier (num_noise_vectors, delta renorm), on a small CNN with 3x8x8 inputs."""

import importlib
import os
from math import ceil

import numpy as np
from scipy.stats import beta, binomtest, norm

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


def proportion_confint_beta(count, nobs, alpha=0.05):
    alpha_2 = 0.5 * alpha
    lower = beta.ppf(alpha_2, count, nobs - count + 1) if count > 0 else 0.0
    upper = beta.isf(alpha_2, count + 1, nobs - count) if count < nobs else 1.0
    return lower, upper


class NormalizeLayer(torch.nn.Module):
    def __init__(self, means, sds):
        super(NormalizeLayer, self).__init__()
        self.means = torch.tensor(means)
        self.sds = torch.tensor(sds)

    def forward(self, input):
        (batch_size, num_channels, height, width) = input.shape
        means = self.means.repeat((batch_size, height, width, 1)).permute(0, 3, 1, 2)
        sds = self.sds.repeat((batch_size, height, width, 1)).permute(0, 3, 1, 2)
        return (input - means) / sds


class Smooth(object):
    ABSTAIN = -1

    def __init__(self, base_classifier, num_classes, sigma):
        self.base_classifier = base_classifier
        self.num_classes = num_classes
        self.sigma = sigma

    def certify(self, x, n0, n, alpha, batch_size):
        self.base_classifier.eval()
        counts_selection = self._sample_noise(x, n0, batch_size)
        cAHat = counts_selection.argmax().item()
        counts_estimation = self._sample_noise(x, n, batch_size)
        nA = counts_estimation[cAHat].item()
        pABar = self._lower_confidence_bound(nA, n, alpha)
        if pABar < 0.5:
            return Smooth.ABSTAIN, 0.0
        else:
            radius = self.sigma * norm.ppf(pABar)
            return cAHat, radius

    def predict(self, x, n, alpha, batch_size):
        self.base_classifier.eval()
        counts = self._sample_noise(x, n, batch_size)
        top2 = counts.argsort()[::-1][:2]
        count1 = counts[top2[0]]
        count2 = counts[top2[1]]
        if binomtest(count1, count1 + count2, p=0.5).pvalue > alpha:
            return Smooth.ABSTAIN
        else:
            return top2[0]

    def _sample_noise(self, x, num, batch_size):
        with torch.no_grad():
            counts = np.zeros(self.num_classes, dtype=int)
            for _ in range(ceil(num / batch_size)):
                this_batch_size = min(batch_size, num)
                num -= this_batch_size
                batch = x.repeat((this_batch_size, 1, 1, 1))
                noise = torch.randn_like(batch, device="cpu") * self.sigma
                predictions = self.base_classifier(batch + noise).argmax(1)
                counts += self._count_arr(predictions.cpu().numpy(), self.num_classes)
            return counts

    def _count_arr(self, arr, length):
        counts = np.zeros(length, dtype=int)
        for idx in arr:
            counts[idx] += 1
        return counts

    def _lower_confidence_bound(self, NA, N, alpha):
        return proportion_confint_beta(NA, N, alpha=2 * alpha)[0]


class PGD_L2(object):
    def __init__(self, steps, max_norm):
        self.steps = steps
        self.max_norm = max_norm

    def attack(
        self, model, inputs, labels, noise=None, num_noise_vectors=1, targeted=False, no_grad=False
    ):
        if num_noise_vectors == 1:
            return self._attack(model, inputs, labels, noise, targeted)
        if no_grad:
            raise NotImplementedError
        return self._attack_mutlinoise(model, inputs, labels, noise, num_noise_vectors, targeted)

    def _attack(self, model, inputs, labels, noise=None, targeted=False):
        batch_size = inputs.shape[0]
        multiplier = 1 if targeted else -1
        delta = torch.zeros_like(inputs, requires_grad=True)
        optimizer = torch.optim.SGD([delta], lr=self.max_norm / self.steps * 2)
        for i in range(self.steps):
            adv = inputs + delta
            if noise is not None:
                adv = adv + noise
            logits = model(adv)
            loss = F.cross_entropy(logits, labels)
            loss = loss * multiplier
            optimizer.zero_grad()
            loss.backward()
            grad_norms = delta.grad.view(batch_size, -1).norm(p=2, dim=1)
            delta.grad.div_(grad_norms.view(-1, 1, 1, 1))
            if (grad_norms == 0).any():
                delta.grad[grad_norms == 0] = torch.randn_like(delta.grad[grad_norms == 0])
            optimizer.step()
            delta.data.add_(inputs)
            delta.data.clamp_(0, 1).sub_(inputs)
            delta.data.renorm_(p=2, dim=0, maxnorm=self.max_norm)
        return inputs + delta

    def _attack_mutlinoise(
        self, model, inputs, labels, noise=None, num_noise_vectors=1, targeted=False
    ):
        batch_size = labels.size(0)
        multiplier = 1 if targeted else -1
        delta = torch.zeros(
            (len(labels), *inputs.shape[1:]), requires_grad=True, device=inputs.device
        )
        optimizer = torch.optim.SGD([delta], lr=self.max_norm / self.steps * 2)
        for i in range(self.steps):
            adv = inputs + delta.repeat(1, num_noise_vectors, 1, 1).view_as(inputs)
            if noise is not None:
                adv = adv + noise
            logits = model(adv)
            softmax = F.softmax(logits, dim=1)
            average_softmax = (
                softmax.reshape(-1, num_noise_vectors, logits.shape[-1])
                .mean(1, keepdim=True)
                .squeeze(1)
            )
            logsoftmax = torch.log(average_softmax.clamp(min=1e-20))
            ce_loss = F.nll_loss(logsoftmax, labels)
            loss = multiplier * ce_loss
            optimizer.zero_grad()
            loss.backward()
            grad_norms = delta.grad.view(batch_size, -1).norm(p=2, dim=1)
            delta.grad.div_(grad_norms.view(-1, 1, 1, 1))
            if (grad_norms == 0).any():
                delta.grad[grad_norms == 0] = torch.randn_like(delta.grad[grad_norms == 0])
            optimizer.step()
            delta.data.add_(inputs[::num_noise_vectors])
            delta.data.clamp_(0, 1).sub_(inputs[::num_noise_vectors])
            delta.data.renorm_(p=2, dim=0, maxnorm=self.max_norm)
        return inputs + delta.repeat(1, num_noise_vectors, 1, 1).view_as(inputs)


torch.manual_seed(0)
np.random.seed(0)
N = 64
X = torch.rand(N, 3, 8, 8)
Y = X.mean(dim=(2, 3)).argmax(1)
print("labels", Y.bincount())
base = nn.Sequential(
    NormalizeLayer([0.5, 0.45, 0.4], [0.25, 0.26, 0.27]),
    nn.Conv2d(3, 12, 3, padding=1),
    nn.ReLU(),
    nn.AvgPool2d(2),
    nn.Flatten(),
    nn.Linear(12 * 16, 3),
)
noise_sd = 0.25
optimizer = torch.optim.SGD(base.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.1)
loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(X, Y), batch_size=16, shuffle=True
)
for epoch in range(20):
    base.train()
    for inputs, targets in loader:
        inputs = inputs + torch.randn_like(inputs, device="cpu") * noise_sd
        outputs = base(inputs)
        loss = F.cross_entropy(outputs, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    scheduler.step()
print("train loss", round(loss.item(), 5), scheduler.get_last_lr())
smoothed = Smooth(base, 3, noise_sd)
for i in range(6):
    pred = smoothed.predict(X[i], n=60, alpha=0.001, batch_size=25)
    cls, radius = smoothed.certify(X[i], n0=20, n=100, alpha=0.001, batch_size=32)
    print(i, int(Y[i]), "predict", int(pred), "certify", cls, round(float(radius), 5))
print(
    "conf",
    proportion_confint_beta(87, 100, 0.002),
    proportion_confint_beta(0, 10),
    proportion_confint_beta(10, 10),
)

attacker = PGD_L2(steps=4, max_norm=0.5)
m = 4
xb, yb = X[:6], Y[:6]
base.eval()
inputs = xb.repeat((1, m, 1, 1)).view(-1, *xb.shape[1:])
noise = torch.randn_like(inputs) * noise_sd
adv = attacker.attack(base, inputs, yb, noise=noise, num_noise_vectors=m)
print("adv multi", adv.shape, (adv - inputs).view(6, m, -1)[:, 0].norm(dim=1))
adv1 = attacker.attack(base, xb, yb)
with torch.no_grad():
    print(
        "adv single",
        (adv1 - xb).flatten(1).norm(dim=1),
        (base(adv1).argmax(1) == yb).sum(),
        (base(xb).argmax(1) == yb).sum(),
    )
try:
    attacker.attack(base, inputs, yb, num_noise_vectors=m, no_grad=True)
except NotImplementedError as e:
    print(type(e).__name__, e)
nl = NormalizeLayer([0.5, 0.45, 0.4], [0.25, 0.26, 0.27])
print(nl(torch.ones(1, 3, 2, 2))[0, :, 0, 0], nl.means.repeat((2, 2, 2, 1)).shape)
