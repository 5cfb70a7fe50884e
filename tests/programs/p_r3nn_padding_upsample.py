"""The padding layers and resampling modules as the docs show them: every ReflectionPad /
ReplicationPad / CircularPad / ZeroPad / ConstantPad in 1d/2d/3d with printed outputs,
F.pad modes and negative padding, nn.Upsample vs F.interpolate (nearest, nearest-exact,
linear/bilinear/bicubic/trilinear with align_corners, scale_factor with
recompute_scale_factor, antialias), UpsamplingNearest2d/UpsamplingBilinear2d, PixelShuffle /
PixelUnshuffle and ChannelShuffle, then a tiny upsampling decoder trained a few steps."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(0)
x1 = torch.arange(8, dtype=torch.float).reshape(1, 2, 4)
x2 = torch.arange(9, dtype=torch.float).reshape(1, 1, 3, 3)
x3 = torch.arange(8, dtype=torch.float).reshape(1, 1, 2, 2, 2)
layers1 = [nn.ReflectionPad1d(2), nn.ReflectionPad1d((3, 1)), nn.ReplicationPad1d(2),
           nn.ReplicationPad1d((3, 1)), nn.CircularPad1d(2), nn.CircularPad1d((3, 1)),
           nn.ZeroPad1d(2), nn.ZeroPad1d((3, 1)), nn.ConstantPad1d(2, 3.5),
           nn.ConstantPad1d((3, 1), -1)]
for m in layers1:
    print(m)
    print(m(x1))
layers2 = [nn.ReflectionPad2d(2), nn.ReflectionPad2d((1, 1, 2, 0)), nn.ReplicationPad2d(2),
           nn.ReplicationPad2d((1, 1, 2, 0)), nn.CircularPad2d(1), nn.CircularPad2d((1, 1, 2, 0)),
           nn.ZeroPad2d(2), nn.ZeroPad2d((1, 1, 2, 0)), nn.ConstantPad2d(2, 3.5),
           nn.ConstantPad2d((3, 0, 2, 1), 3.5)]
for m in layers2:
    print(m)
    print(m(x2))
layers3 = [nn.ReflectionPad3d(1), nn.ReplicationPad3d((1, 0, 0, 1, 1, 0)), nn.CircularPad3d(1),
           nn.ZeroPad3d((1, 0, 0, 1, 0, 1)), nn.ConstantPad3d(1, 2.0)]
for m in layers3:
    print(m)
    y = m(x3)
    print(y.shape, y.sum().item(), y[0, 0, 0])
print(nn.ReflectionPad2d(1)(torch.randn(2, 3)[None]).shape)
print(F.pad(x2, (1, 1), "constant", 0).shape, F.pad(x2, (-1, 1, 0, -1)))
print(F.pad(x2, [1, 1, 1, 1], mode="reflect")[0, 0, 0], F.pad(x1, (2, 2), mode="circular"))
try:
    nn.ReflectionPad2d(3)(x2)
except Exception as e:
    print(type(e).__name__, e)
try:
    F.pad(x2, (1, 1, 1), mode="reflect")
except Exception as e:
    print(type(e).__name__, e)
g = torch.randn(1, 1, 3, 3, requires_grad=True)
for mode in ["reflect", "replicate", "circular", "constant"]:
    y = F.pad(g, (2, 1, 1, 2), mode=mode)
    (y * torch.arange(y.numel(), dtype=torch.float).view_as(y)).sum().backward()
    print(mode, type(y.grad_fn).__name__, g.grad.view(-1).tolist())
    g.grad = None
# Upsample vs interpolate
input = torch.arange(1, 5, dtype=torch.float32).view(1, 1, 2, 2)
print(input)
for m in [nn.Upsample(scale_factor=2, mode="nearest"),
          nn.Upsample(scale_factor=2, mode="bilinear"),
          nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True),
          nn.Upsample(size=(3, 5), mode="bicubic", align_corners=False),
          nn.Upsample(scale_factor=(1.5, 2.0), mode="nearest-exact"),
          nn.UpsamplingNearest2d(scale_factor=2), nn.UpsamplingBilinear2d(size=3)]:
    print(m)
    print(m(input))
input_3x3 = torch.zeros(3, 3).view(1, 1, 3, 3)
input_3x3[:, :, :2, :2].copy_(input)
print(nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)(input_3x3))
print(F.interpolate(x1, scale_factor=1.7, mode="linear", recompute_scale_factor=True))
print(F.interpolate(x1, scale_factor=1.7, mode="linear"))
print(F.interpolate(x1, size=6, mode="nearest"), F.interpolate(x1, size=3, mode="area"))
print(F.interpolate(x3, scale_factor=1.5, mode="trilinear", align_corners=False)[0, 0, 1])
big = torch.arange(64, dtype=torch.float32).view(1, 1, 8, 8)
print(F.interpolate(big, size=(3, 3), mode="bilinear", antialias=True))
print(F.interpolate(big, size=(5, 3), mode="bicubic", antialias=False, align_corners=True))
try:
    F.interpolate(x1, scale_factor=2, mode="bilinear")
except Exception as e:
    print(type(e).__name__, e)
try:
    nn.Upsample(size=4, scale_factor=2)(x1)
except Exception as e:
    print(type(e).__name__, e)
# pixel (un)shuffle and channel shuffle
ps, pu = nn.PixelShuffle(2), nn.PixelUnshuffle(2)
print(ps, pu)
t = torch.arange(2 * 8 * 2 * 2, dtype=torch.float).view(2, 8, 2, 2)
print(ps(t).shape, pu(ps(t)).equal(t), pu(torch.arange(16.0).view(1, 1, 4, 4))[0, :, 0])
cs = nn.ChannelShuffle(2)
print(cs)
print(cs(torch.arange(8.0).view(1, 4, 1, 2)))
print(F.pixel_unshuffle(torch.randn(3, 6, 6), 3).shape, F.channel_shuffle(t, 4)[0, :, 0, 0])


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.ReflectionPad2d(1), nn.Conv2d(4, 8, 3), nn.ReLU(),
            nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
            nn.ReplicationPad2d(1), nn.Conv2d(8, 4, 3), nn.ReLU(),
            nn.Conv2d(4, 4 * 4, 1), nn.PixelShuffle(2), nn.CircularPad2d((0, 1, 0, 1)),
            nn.Conv2d(4, 1, 2), nn.Tanh())

    def forward(self, z):
        return self.net(z)


dec = Decoder()
print(dec)
z = torch.randn(3, 4, 3, 3)
target = torch.randn(3, 1, 12, 12).clamp(-1, 1)
opt = torch.optim.Adam(dec.parameters(), lr=3e-3)
for step in range(5):
    opt.zero_grad()
    loss = F.l1_loss(dec(z), target)
    loss.backward()
    opt.step()
    print(f"step {step} l1 {loss.item():.5f}")
print("RESULT:", dec(z).shape, f"{loss.item():.5f}")
