"""Transposed convolutions and pooling at their edges, as the PyTorch docs and forum answers exercise
them: ConvTranspose1d/2d/3d with stride/padding/output_padding/groups/dilation and forward(output_size=...)
(the docs' "exact output size" example: downsample then upsample back), their errors; AvgPool ceil_mode /
count_include_pad / divisor_override edge windows, MaxPool dilation + ceil_mode, LPPool1d/2d,
FractionalMaxPool2d with output_ratio under a seed and with _random_samples, AdaptiveAvg/MaxPool with
sizes that do not divide, and the pooling errors."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


def show(name, t):
    print(name, tuple(t.shape), "%.6f" % t.sum().item(), "%.6f" % t.abs().max().item())


def err(fn):
    try:
        r = fn()
        print("ok", tuple(r.shape))
    except Exception as e:
        print(type(e).__name__, e)


torch.manual_seed(0)
input = torch.randn(2, 4, 6, 7)
downsample = nn.Conv2d(4, 4, 3, stride=2, padding=1)
upsample = nn.ConvTranspose2d(4, 4, 3, stride=2, padding=1)
h = downsample(input)
print(h.size())
output = upsample(h, output_size=input.size())
print(output.size())
print(upsample(h).size(), upsample(h, output_size=[6, 7]).size())
err(lambda: upsample(h, output_size=(9, 9)))
for cfg in [dict(stride=2, output_padding=1), dict(stride=3, padding=2, output_padding=2, dilation=1),
            dict(stride=2, groups=2, dilation=2, output_padding=1), dict(stride=(2, 1), padding=(1, 0), output_padding=(1, 0)),
            dict(groups=4, padding=1)]:
    m = nn.ConvTranspose2d(4, 8, 3, **cfg)
    x = input.clone().requires_grad_()
    y = m(x)
    y.backward(torch.cos(torch.arange(y.numel(), dtype=torch.float32)).view_as(y))
    show("convT2d %s" % sorted(cfg.items()), y)
    print(" grads %.5f %.5f %.5f" % (x.grad.abs().sum().item(), m.weight.grad.abs().sum().item(), m.bias.grad.sum().item()))
m1 = nn.ConvTranspose1d(3, 6, 4, stride=2, padding=1, output_padding=1, groups=3, dilation=2)
show("convT1d", m1(torch.randn(2, 3, 5)))
print(m1)
m3 = nn.ConvTranspose3d(2, 4, (2, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1), output_padding=(0, 1, 1), bias=False)
x3 = torch.randn(1, 2, 3, 4, 4, requires_grad=True)
y3 = m3(x3)
y3.square().sum().backward()
show("convT3d", y3)
print(m3, "%.5f" % x3.grad.abs().sum().item())
err(lambda: nn.ConvTranspose2d(4, 4, 3, stride=2, output_padding=2)(input))
err(lambda: nn.ConvTranspose2d(4, 4, 3, stride=1, output_padding=1, dilation=1)(input))
err(lambda: nn.ConvTranspose2d(4, 4, 3, padding_mode="reflect"))
err(lambda: nn.ConvTranspose2d(4, 6, 3, groups=4))
err(lambda: F.conv_transpose2d(input, torch.randn(3, 4, 3, 3)))
c = nn.Conv2d(4, 4, 3, padding="same", dilation=2, padding_mode="circular")
show("conv same circular", c(input))
err(lambda: nn.Conv2d(4, 4, 3, padding="same", stride=2))
err(lambda: nn.Conv2d(4, 4, 3, padding="valid")(input))

x = torch.arange(1., 1 + 2 * 1 * 5 * 7).view(2, 1, 5, 7)
for cfg in [dict(kernel_size=3, stride=2, ceil_mode=True), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
            dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
            dict(kernel_size=2, stride=3, ceil_mode=True), dict(kernel_size=(2, 4), stride=(2, 3), padding=(1, 2), divisor_override=3),
            dict(kernel_size=3, stride=2, padding=1, ceil_mode=False, count_include_pad=True)]:
    xi = x.clone().requires_grad_()
    y = F.avg_pool2d(xi, **cfg)
    y.backward(torch.ones_like(y))
    print("avg", sorted(cfg.items()), tuple(y.shape), y[0, 0].tolist(), xi.grad[0, 0, 0].tolist())
for cfg in [dict(kernel_size=3, stride=2, dilation=2, ceil_mode=True), dict(kernel_size=2, stride=2, padding=1, ceil_mode=True),
            dict(kernel_size=(3, 2), stride=(2, 3), dilation=(1, 2), padding=(1, 1))]:
    y, idx = F.max_pool2d(x, return_indices=True, **cfg)
    print("max", sorted(cfg.items()), tuple(y.shape), y[0, 0].tolist(), idx[1, 0].tolist())
print("avg1d", F.avg_pool1d(torch.arange(7.).view(1, 1, 7), 3, 2, 1, ceil_mode=True, count_include_pad=False).tolist())
print("avg3d", F.avg_pool3d(torch.arange(27.).view(1, 1, 3, 3, 3), 2, 2, ceil_mode=True).flatten().tolist())
lp = nn.LPPool2d(2, 3, stride=2)
xl = torch.randn(1, 2, 7, 7).abs().requires_grad_()
yl = lp(xl)
yl.sum().backward()
show("lppool2d", yl)
print(lp, "%.5f" % xl.grad.abs().sum().item())
show("lppool1d p=3", nn.LPPool1d(3, 2)(torch.randn(2, 3, 9).abs()))
show("lppool1d ceil", F.lp_pool1d(torch.randn(1, 2, 8).abs(), 1.5, 3, 2, ceil_mode=True))
torch.manual_seed(3)
fmp = nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5), return_indices=True)
xf = torch.randn(2, 2, 10, 9)
yf, idf = fmp(xf)
print("fmp", tuple(yf.shape), idf[0, 0].tolist())
samples = torch.tensor([[[0.1, 0.9], [0.5, 0.5]], [[0.99, 0.0], [0.3, 0.7]]])
yf = F.fractional_max_pool2d(xf, (2, 3), output_size=(4, 3), _random_samples=samples)
show("fmp samples", yf)
torch.manual_seed(4)
show("fmp3d", nn.FractionalMaxPool3d(2, output_size=(2, 3, 2))(torch.randn(1, 2, 5, 6, 4)))
err(lambda: nn.FractionalMaxPool2d(3, output_size=(9, 9))(xf))
err(lambda: nn.FractionalMaxPool2d(2))
err(lambda: nn.FractionalMaxPool2d(2, output_ratio=1.5))
xa = torch.randn(1, 3, 7, 10, requires_grad=True)
for out_size in [(3, 4), (5, None), (1, 1), (8, 11)]:
    ya = F.adaptive_avg_pool2d(xa, out_size)
    ym, im = F.adaptive_max_pool2d(xa, out_size, return_indices=True)
    print("adaptive", out_size, tuple(ya.shape), "%.6f %.6f" % (ya.sum().item(), ym.sum().item()), im[0, 0, 0].tolist())
(F.adaptive_avg_pool2d(xa, (3, 4)).sum() + F.adaptive_max_pool2d(xa, (3, 4)).sum()).backward()
print("adaptive grad %.6f" % xa.grad.abs().sum().item())
show("adaptive1d", F.adaptive_avg_pool1d(torch.arange(10.).view(1, 1, 10), 4))
show("adaptive3d", F.adaptive_max_pool3d(torch.randn(1, 1, 5, 6, 7), (2, 3, 4)))
err(lambda: F.avg_pool2d(x, 3, 2, padding=2))
err(lambda: F.max_pool2d(x, 2, 2, padding=2))
err(lambda: F.avg_pool2d(x, 6))
err(lambda: F.max_pool2d(x, 3, dilation=3))
err(lambda: F.adaptive_avg_pool2d(torch.randn(1, 0, 4, 4), 2))
err(lambda: F.adaptive_max_pool2d(torch.randn(1, 2, 0, 4), 2))
err(lambda: F.lp_pool2d(x, 2, 6))
