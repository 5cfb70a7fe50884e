"""Super-resolution building blocks: fastai's icnr_init and PixelShuffle_ICNR (fastai/layers.py, with the
blur of ReplicationPad2d + AvgPool2d), EDSR's MeanShift / ResBlock with res_scale / Upsampler
(sanghyun-son/EDSR-PyTorch src/model/common.py), RCAN's CALayer channel attention, PixelUnshuffle as
in Real-ESRGAN's input packing, shrunk; a few L1 training steps."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


def icnr_init(x, scale=2, init=nn.init.kaiming_normal_):
    ni, nf, h, w = x.shape
    ni2 = int(ni / (scale ** 2))
    k = init(x.new_zeros([ni2, nf, h, w])).transpose(0, 1)
    k = k.contiguous().view(ni2, nf, -1)
    k = k.repeat(1, 1, scale ** 2)
    return k.contiguous().view([nf, ni, h, w]).transpose(0, 1)


class PixelShuffle_ICNR(nn.Sequential):
    def __init__(self, ni, nf=None, scale=2, blur=False):
        super().__init__()
        nf = nf or ni
        conv = nn.Conv2d(ni, nf * (scale ** 2), 1)
        conv.weight.data.copy_(icnr_init(conv.weight.data, scale))
        nn.init.zeros_(conv.bias)
        layers = [conv, nn.ReLU(), nn.PixelShuffle(scale)]
        if blur:
            layers += [nn.ReplicationPad2d((1, 0, 1, 0)), nn.AvgPool2d(2, stride=1)]
        super().__init__(*layers)


class MeanShift(nn.Conv2d):
    def __init__(self, rgb_range, rgb_mean=(0.4488, 0.4371, 0.4040), rgb_std=(1.0, 1.0, 1.0), sign=-1):
        super().__init__(3, 3, kernel_size=1)
        std = torch.Tensor(rgb_std)
        self.weight.data = torch.eye(3).view(3, 3, 1, 1) / std.view(3, 1, 1, 1)
        self.bias.data = sign * rgb_range * torch.Tensor(rgb_mean) / std
        for p in self.parameters():
            p.requires_grad = False


def default_conv(in_channels, out_channels, kernel_size, bias=True):
    return nn.Conv2d(in_channels, out_channels, kernel_size, padding=(kernel_size // 2), bias=bias)


class CALayer(nn.Module):
    def __init__(self, channel, reduction=4):
        super().__init__()
        self.avg_pool = nn.AdaptiveAvgPool2d(1)
        self.conv_du = nn.Sequential(nn.Conv2d(channel, channel // reduction, 1, padding=0, bias=True),
                                     nn.ReLU(inplace=True),
                                     nn.Conv2d(channel // reduction, channel, 1, padding=0, bias=True),
                                     nn.Sigmoid())

    def forward(self, x):
        return x * self.conv_du(self.avg_pool(x))


class ResBlock(nn.Module):
    def __init__(self, conv, n_feats, kernel_size, bias=True, act=nn.ReLU(True), res_scale=1, ca=False):
        super().__init__()
        m = [conv(n_feats, n_feats, kernel_size, bias=bias), act, conv(n_feats, n_feats, kernel_size, bias=bias)]
        if ca:
            m.append(CALayer(n_feats))
        self.body = nn.Sequential(*m)
        self.res_scale = res_scale

    def forward(self, x):
        res = self.body(x).mul(self.res_scale)
        res += x
        return res


class Upsampler(nn.Sequential):
    def __init__(self, conv, scale, n_feats, act=False, bias=True):
        m = []
        if (scale & (scale - 1)) == 0:
            for _ in range(int(math.log(scale, 2))):
                m.append(conv(n_feats, 4 * n_feats, 3, bias))
                m.append(nn.PixelShuffle(2))
                if act == 'relu':
                    m.append(nn.ReLU(True))
                elif act == 'prelu':
                    m.append(nn.PReLU(n_feats))
        elif scale == 3:
            m.append(conv(n_feats, 9 * n_feats, 3, bias))
            m.append(nn.PixelShuffle(3))
        else:
            raise NotImplementedError
        super().__init__(*m)


class EDSR(nn.Module):
    def __init__(self, n_resblocks=2, n_feats=8, scale=2, rgb_range=1, upsampler="edsr"):
        super().__init__()
        self.sub_mean = MeanShift(rgb_range)
        self.add_mean = MeanShift(rgb_range, sign=1)
        self.head = nn.Sequential(default_conv(3, n_feats, 3))
        self.body = nn.Sequential(*[ResBlock(default_conv, n_feats, 3, res_scale=0.1, ca=(i % 2 == 1))
                                    for i in range(n_resblocks)], default_conv(n_feats, n_feats, 3))
        up = Upsampler(default_conv, scale, n_feats, act='prelu') if upsampler == "edsr" else \
            PixelShuffle_ICNR(n_feats, n_feats, scale, blur=True)
        self.tail = nn.Sequential(up, default_conv(n_feats, 3, 3))

    def forward(self, x):
        x = self.sub_mean(x)
        x = self.head(x)
        res = self.body(x)
        res += x
        x = self.tail(res)
        return self.add_mean(x)


torch.manual_seed(0)
w = icnr_init(torch.empty(16, 4, 3, 3), 2)
print(w.shape, w.stride(), torch.equal(w[0], w[1]), torch.equal(w[0], w[4]), "%.5f" % w.std().item())
ps = nn.PixelShuffle(2)
y = ps(torch.arange(32.).view(1, 8, 2, 2))
print(y[0, 0].tolist(), nn.PixelUnshuffle(2)(y).equal(torch.arange(32.).view(1, 8, 2, 2)))
print(ps, nn.PixelUnshuffle(3))
x = torch.rand(2, 3, 6, 6)
for bad in [lambda: F.pixel_shuffle(torch.ones(1, 3, 2, 2), 2), lambda: F.pixel_unshuffle(torch.ones(1, 1, 3, 4), 2),
            lambda: F.pixel_shuffle(torch.ones(4, 2), 2), lambda: F.pixel_shuffle(torch.ones(1, 4, 2, 2), 0)]:
    try:
        print(bad().shape)
    except Exception as e:
        print(type(e).__name__, e)
packed = F.pixel_unshuffle(x, 2)
print("unshuffle", packed.shape, packed.stride(), F.pixel_shuffle(packed.to(memory_format=torch.channels_last), 2).stride())
for kind, scale in (("edsr", 2), ("icnr", 2), ("edsr", 3)):
    torch.manual_seed(0)
    model = EDSR(scale=scale, upsampler=kind)
    hr = F.interpolate(x, scale_factor=scale, mode="bicubic", align_corners=False).clamp(0, 1)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-3, betas=(0.9, 0.999), eps=1e-8)
    for step in range(3):
        sr = model(x)
        loss = F.l1_loss(sr, hr)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(kind, scale, step, sr.shape, "%.6f" % loss.item())
    print(sum(p.numel() for p in model.parameters() if p.requires_grad), model.sub_mean.weight.grad)
    with torch.no_grad():
        sr = model(x).clamp(0, 1)
        mse = F.mse_loss(sr, hr)
        print("psnr %.4f" % (10 * torch.log10(1 / mse)).item())
