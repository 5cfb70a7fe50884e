"""Quantization-aware training with the fake-quant ops, as torch.ao.quantization's FakeQuantize
(torch/ao/quantization/fake_quantize.py: a MovingAverage(PerChannel)MinMaxObserver computes
scale/zero_point, then ``torch.fake_quantize_per_tensor_affine`` / ``_per_channel_affine`` with
Tensor qparams, int32 zero points) for activations and per-channel weights, and a PACT
activation (Choi et al.; the clipping level alpha learned through the straight-through
estimator, as in the common PACT reimplementations) with ``fake_quantize_per_tensor_affine``
float qparams; a small MLP on synthetic data."""

import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(0)


class MinMaxFakeQuant(nn.Module):
    """FakeQuantize with a moving-average min/max observer (affine, quint8 / per-channel qint8)."""

    def __init__(
        self, quant_min, quant_max, ch_axis=None, symmetric=False, averaging_constant=0.01
    ):
        super().__init__()
        self.quant_min, self.quant_max, self.ch_axis = quant_min, quant_max, ch_axis
        self.symmetric, self.c = symmetric, averaging_constant
        self.register_buffer("scale", torch.tensor([1.0], dtype=torch.float))
        self.register_buffer("zero_point", torch.tensor([0], dtype=torch.int))
        self.register_buffer("min_val", torch.tensor(float("inf")))
        self.register_buffer("max_val", torch.tensor(float("-inf")))

    def _observe(self, x):
        x = x.detach()
        if self.ch_axis is None:
            mn, mx = torch.aminmax(x)
        else:
            y = torch.flatten(x.transpose(0, self.ch_axis), start_dim=1)
            mn, mx = torch.aminmax(y, dim=1)
        if self.min_val.numel() != mn.numel() or torch.isinf(self.min_val).any():
            self.min_val, self.max_val = mn, mx
        else:
            self.min_val = self.min_val + self.c * (mn - self.min_val)
            self.max_val = self.max_val + self.c * (mx - self.max_val)

    def calculate_qparams(self):
        min_neg = torch.min(self.min_val, torch.zeros_like(self.min_val))
        max_pos = torch.max(self.max_val, torch.zeros_like(self.max_val))
        eps = torch.finfo(torch.float32).eps
        if self.symmetric:
            max_pos = torch.max(-min_neg, max_pos)
            scale = max_pos / (float(self.quant_max - self.quant_min) / 2)
            scale = torch.max(scale, torch.tensor(eps))
            zero_point = torch.zeros_like(scale, dtype=torch.int)
        else:
            scale = (max_pos - min_neg) / float(self.quant_max - self.quant_min)
            scale = torch.max(scale, torch.tensor(eps))
            zero_point = self.quant_min - torch.round(min_neg / scale).to(torch.int)
            zero_point = torch.clamp(zero_point, self.quant_min, self.quant_max)
        return scale.reshape(-1), zero_point.reshape(-1).to(torch.int)

    def forward(self, X):
        if self.training:
            self._observe(X)
            self.scale, self.zero_point = self.calculate_qparams()
        if self.ch_axis is None:
            return torch.fake_quantize_per_tensor_affine(
                X, self.scale, self.zero_point, self.quant_min, self.quant_max
            )
        return torch.fake_quantize_per_channel_affine(
            X, self.scale, self.zero_point, self.ch_axis, self.quant_min, self.quant_max
        )


class PACT(nn.Module):
    """y = clip(x, 0, alpha), quantized to k bits; d y / d alpha = 1 where x >= alpha."""

    def __init__(self, bits=4, alpha=6.0):
        super().__init__()
        self.alpha = nn.Parameter(torch.tensor(alpha))
        self.levels = 2**bits - 1

    def forward(self, x):
        y = torch.clamp(x, min=0.0)
        y = torch.where(y < self.alpha, y, self.alpha)
        scale = (self.alpha / self.levels).item()
        return (
            y
            + (
                torch.fake_quantize_per_tensor_affine(y.detach(), scale, 0, 0, self.levels) - y
            ).detach()
        )


class QLinear(nn.Linear):
    def __init__(self, i, o):
        super().__init__(i, o)
        self.wq = MinMaxFakeQuant(-128, 127, ch_axis=0, symmetric=True)

    def forward(self, x):
        return F.linear(x, self.wq(self.weight), self.bias)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inq = MinMaxFakeQuant(0, 255)
        self.fc1 = QLinear(8, 16)
        self.act = PACT(bits=4, alpha=1.0)
        self.fc2 = QLinear(16, 3)
        self.outq = MinMaxFakeQuant(0, 255)

    def forward(self, x):
        return self.outq(self.fc2(self.act(self.fc1(self.inq(x)))))


X = torch.randn(64, 8)
W = torch.randn(8, 3)
yt = (X @ W).argmax(1)
net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
for epoch in range(12):
    for i in range(0, 64, 16):
        opt.zero_grad()
        out = net(X[i : i + 16])
        loss = F.cross_entropy(out, yt[i : i + 16])
        loss.backward()
        opt.step()
    print(epoch, round(loss.item(), 6), "alpha", round(net.act.alpha.item(), 6))
print("fc1 w scale", net.fc1.wq.scale[:4], net.fc1.wq.zero_point[:4])
print("in qparams", net.inq.scale, net.inq.zero_point, "out", net.outq.scale, net.outq.zero_point)
print("grad fc1", net.fc1.weight.grad[0], net.act.alpha.grad)
net.eval()
with torch.no_grad():
    acc = (net(X).argmax(1) == yt).float().mean()
print("acc", acc.item())
out = net(X[:4])
print(out, out.grad_fn)
x = torch.linspace(-2, 2, 17, requires_grad=True)
y = torch.fake_quantize_per_tensor_affine(x, 0.25, 4, 0, 15)
y.backward(torch.arange(17.0))
print(y, x.grad, y.grad_fn)
w = torch.randn(3, 5, requires_grad=True)
yq = torch.fake_quantize_per_channel_affine(
    w, torch.tensor([0.1, 0.2, 0.05]), torch.tensor([0, 1, -2], dtype=torch.int32), 0, -8, 7
)
yq.sum().backward()
print(yq, w.grad)
for args in [(x, 0.25, 40, 0, 15), (x, 0.25, 4, 15, 0), (x, 0.25, 4.0, 0, 15)]:
    try:
        torch.fake_quantize_per_tensor_affine(*args)
    except Exception as e:
        print(type(e).__name__, e)
try:
    torch.fake_quantize_per_channel_affine(
        w, torch.tensor([0.1, 0.2]), torch.tensor([0, 1], dtype=torch.int32), 0, -8, 7
    )
except Exception as e:
    print(type(e).__name__, e)
