"""StyleGAN2 building blocks (rosinality/stylegan2-pytorch, shrunk): EqualLinear/EqualConv2d
(equalized learning rate), PixelNorm, the mapping network, ModulatedConv2d with demodulation as
a grouped conv (groups=batch) and transposed grouped conv for upsampling, blur via upfirdn-like
depthwise conv, NoiseInjection, ToRGB skip with upsampling, minibatch stddev, fused leaky relu,
the non-saturating logistic loss, R1 penalty and path-length regularisation (create_graph)."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


class PixelNorm(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, input):
        return input * torch.rsqrt(torch.mean(input ** 2, dim=1, keepdim=True) + 1e-8)


def make_kernel(k):
    k = torch.tensor(k, dtype=torch.float32)
    if k.ndim == 1:
        k = k[None, :] * k[:, None]
    k /= k.sum()
    return k


def fused_leaky_relu(input, bias, negative_slope=0.2, scale=2 ** 0.5):
    rest_dim = [1] * (input.ndim - bias.ndim - 1)
    return F.leaky_relu(input + bias.view(1, bias.shape[0], *rest_dim),
                        negative_slope=negative_slope) * scale


class Blur(nn.Module):
    def __init__(self, kernel, pad, upsample_factor=1):
        super().__init__()
        kernel = make_kernel(kernel)
        if upsample_factor > 1:
            kernel = kernel * (upsample_factor ** 2)
        self.register_buffer("kernel", kernel)
        self.pad = pad

    def forward(self, input):
        c = input.shape[1]
        k = torch.flip(self.kernel, [0, 1]).view(1, 1, *self.kernel.shape).repeat(c, 1, 1, 1)
        x = F.pad(input, [self.pad[0], self.pad[1], self.pad[0], self.pad[1]])
        return F.conv2d(x, k, groups=c)


class EqualConv2d(nn.Module):
    def __init__(self, in_channel, out_channel, kernel_size, stride=1, padding=0, bias=True):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_channel, in_channel, kernel_size, kernel_size))
        self.scale = 1 / math.sqrt(in_channel * kernel_size ** 2)
        self.stride = stride
        self.padding = padding
        self.bias = nn.Parameter(torch.zeros(out_channel)) if bias else None

    def forward(self, input):
        return F.conv2d(input, self.weight * self.scale, bias=self.bias, stride=self.stride,
                        padding=self.padding)

    def __repr__(self):
        return (f"{self.__class__.__name__}({self.weight.shape[1]}, {self.weight.shape[0]},"
                f" {self.weight.shape[2]}, stride={self.stride}, padding={self.padding})")


class EqualLinear(nn.Module):
    def __init__(self, in_dim, out_dim, bias=True, bias_init=0, lr_mul=1, activation=None):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_dim, in_dim).div_(lr_mul))
        self.bias = nn.Parameter(torch.zeros(out_dim).fill_(bias_init)) if bias else None
        self.activation = activation
        self.scale = (1 / math.sqrt(in_dim)) * lr_mul
        self.lr_mul = lr_mul

    def forward(self, input):
        if self.activation:
            out = F.linear(input, self.weight * self.scale)
            out = fused_leaky_relu(out, self.bias * self.lr_mul)
        else:
            out = F.linear(input, self.weight * self.scale, bias=self.bias * self.lr_mul)
        return out

    def __repr__(self):
        return f"{self.__class__.__name__}({self.weight.shape[1]}, {self.weight.shape[0]})"


class ModulatedConv2d(nn.Module):
    def __init__(self, in_channel, out_channel, kernel_size, style_dim, demodulate=True,
                 upsample=False, blur_kernel=[1, 3, 3, 1]):
        super().__init__()
        self.eps = 1e-8
        self.kernel_size = kernel_size
        self.in_channel = in_channel
        self.out_channel = out_channel
        self.upsample = upsample
        if upsample:
            factor = 2
            p = (len(blur_kernel) - factor) - (kernel_size - 1)
            pad0 = (p + 1) // 2 + factor - 1
            pad1 = p // 2 + 1
            self.blur = Blur(blur_kernel, pad=(pad0, pad1), upsample_factor=factor)
        fan_in = in_channel * kernel_size ** 2
        self.scale = 1 / math.sqrt(fan_in)
        self.padding = kernel_size // 2
        self.weight = nn.Parameter(
            torch.randn(1, out_channel, in_channel, kernel_size, kernel_size))
        self.modulation = EqualLinear(style_dim, in_channel, bias_init=1)
        self.demodulate = demodulate

    def forward(self, input, style):
        batch, in_channel, height, width = input.shape
        style = self.modulation(style).view(batch, 1, in_channel, 1, 1)
        weight = self.scale * self.weight * style
        if self.demodulate:
            demod = torch.rsqrt(weight.pow(2).sum([2, 3, 4]) + 1e-8)
            weight = weight * demod.view(batch, self.out_channel, 1, 1, 1)
        weight = weight.view(batch * self.out_channel, in_channel, self.kernel_size,
                             self.kernel_size)
        if self.upsample:
            input = input.view(1, batch * in_channel, height, width)
            weight = weight.view(batch, self.out_channel, in_channel, self.kernel_size,
                                 self.kernel_size)
            weight = weight.transpose(1, 2).reshape(
                batch * in_channel, self.out_channel, self.kernel_size, self.kernel_size)
            out = F.conv_transpose2d(input, weight, padding=0, stride=2, groups=batch)
            _, _, height, width = out.shape
            out = out.view(batch, self.out_channel, height, width)
            out = self.blur(out)
        else:
            input = input.view(1, batch * in_channel, height, width)
            out = F.conv2d(input, weight, padding=self.padding, groups=batch)
            _, _, height, width = out.shape
            out = out.view(batch, self.out_channel, height, width)
        return out


class NoiseInjection(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(1))

    def forward(self, image, noise=None):
        if noise is None:
            batch, _, height, width = image.shape
            noise = image.new_empty(batch, 1, height, width).normal_()
        return image + self.weight * noise


class StyledConv(nn.Module):
    def __init__(self, in_channel, out_channel, kernel_size, style_dim, upsample=False):
        super().__init__()
        self.conv = ModulatedConv2d(in_channel, out_channel, kernel_size, style_dim,
                                    upsample=upsample)
        self.noise = NoiseInjection()
        self.activate_bias = nn.Parameter(torch.zeros(out_channel))

    def forward(self, input, style, noise=None):
        out = self.conv(input, style)
        out = self.noise(out, noise=noise)
        return fused_leaky_relu(out, self.activate_bias)


class ToRGB(nn.Module):
    def __init__(self, in_channel, style_dim, upsample=True):
        super().__init__()
        self.upsample = upsample
        self.conv = ModulatedConv2d(in_channel, 3, 1, style_dim, demodulate=False)
        self.bias = nn.Parameter(torch.zeros(1, 3, 1, 1))

    def forward(self, input, style, skip=None):
        out = self.conv(input, style)
        out = out + self.bias
        if skip is not None:
            skip = F.interpolate(skip, scale_factor=2, mode="bilinear", align_corners=False)
            out = out + skip
        return out


class Generator(nn.Module):
    def __init__(self, style_dim=16, n_mlp=2, ch=8):
        super().__init__()
        self.style_dim = style_dim
        layers = [PixelNorm()]
        for i in range(n_mlp):
            layers.append(EqualLinear(style_dim, style_dim, lr_mul=0.01, activation="fused_lrelu"))
        self.style = nn.Sequential(*layers)
        self.input = nn.Parameter(torch.randn(1, ch, 4, 4))
        self.conv1 = StyledConv(ch, ch, 3, style_dim)
        self.to_rgb1 = ToRGB(ch, style_dim, upsample=False)
        self.up = StyledConv(ch, ch, 3, style_dim, upsample=True)
        self.conv2 = StyledConv(ch, ch, 3, style_dim)
        self.to_rgb2 = ToRGB(ch, style_dim)

    def mean_latent(self, n_latent):
        latent_in = torch.randn(n_latent, self.style_dim)
        return self.style(latent_in).mean(0, keepdim=True)

    def forward(self, z, truncation=1, truncation_latent=None, noise=None):
        w = self.style(z)
        if truncation < 1:
            w = truncation_latent + truncation * (w - truncation_latent)
        out = self.input.repeat(z.shape[0], 1, 1, 1)
        if noise is None:
            noise = [None] * 3
        out = self.conv1(out, w, noise=noise[0])
        skip = self.to_rgb1(out, w)
        out = self.up(out, w, noise=noise[1])
        out = self.conv2(out, w, noise=noise[2])
        image = self.to_rgb2(out, w, skip)
        return image, w


class Discriminator(nn.Module):
    def __init__(self, ch=8):
        super().__init__()
        self.convs = nn.Sequential(EqualConv2d(3, ch, 1), nn.LeakyReLU(0.2),
                                   EqualConv2d(ch, ch, 3, padding=1), nn.LeakyReLU(0.2),
                                   nn.AvgPool2d(2))
        self.stddev_group = 2
        self.stddev_feat = 1
        self.final_conv = EqualConv2d(ch + 1, ch, 3, padding=1)
        self.final_linear = nn.Sequential(EqualLinear(ch * 4 * 4, ch, activation="fused_lrelu"),
                                          EqualLinear(ch, 1))

    def forward(self, input):
        out = self.convs(input)
        batch, channel, height, width = out.shape
        group = min(batch, self.stddev_group)
        stddev = out.view(group, -1, self.stddev_feat, channel // self.stddev_feat, height, width)
        stddev = torch.sqrt(stddev.var(0, unbiased=False) + 1e-8)
        stddev = stddev.mean([2, 3, 4], keepdims=True).squeeze(2)
        stddev = stddev.repeat(group, 1, height, width)
        out = torch.cat([out, stddev], 1)
        out = F.leaky_relu(self.final_conv(out), 0.2)
        out = out.view(batch, -1)
        return self.final_linear(out)


def d_logistic_loss(real_pred, fake_pred):
    real_loss = F.softplus(-real_pred)
    fake_loss = F.softplus(fake_pred)
    return real_loss.mean() + fake_loss.mean()


def d_r1_loss(real_pred, real_img):
    grad_real, = torch.autograd.grad(outputs=real_pred.sum(), inputs=real_img, create_graph=True)
    return grad_real.pow(2).reshape(grad_real.shape[0], -1).sum(1).mean()


def g_nonsaturating_loss(fake_pred):
    return F.softplus(-fake_pred).mean()


def g_path_regularize(fake_img, latents, mean_path_length, decay=0.01):
    noise = torch.randn_like(fake_img) / math.sqrt(fake_img.shape[2] * fake_img.shape[3])
    grad, = torch.autograd.grad(outputs=(fake_img * noise).sum(), inputs=latents,
                                create_graph=True)
    path_lengths = torch.sqrt(grad.pow(2).sum(1))
    path_mean = mean_path_length + decay * (path_lengths.mean() - mean_path_length)
    path_penalty = (path_lengths - path_mean).pow(2).mean()
    return path_penalty, path_mean.detach(), path_lengths


def requires_grad(model, flag=True):
    for p in model.parameters():
        p.requires_grad = flag


def accumulate(model1, model2, decay=0.999):
    par1 = dict(model1.named_parameters())
    par2 = dict(model2.named_parameters())
    for k in par1.keys():
        par1[k].data.mul_(decay).add_(par2[k].data, alpha=1 - decay)


torch.manual_seed(0)
print(make_kernel([1, 3, 3, 1]))
generator = Generator()
discriminator = Discriminator()
g_ema = Generator()
g_ema.eval()
accumulate(g_ema, generator, 0)
print(generator.style)
print(discriminator)
print(generator.up.conv.blur.kernel.sum(), generator.up.conv.blur.pad)
print([n for n, _ in generator.named_parameters()][:6])
print(list(generator.state_dict().keys())[-3:])
g_reg_ratio, d_reg_ratio = 4 / 5, 16 / 17
g_optim = torch.optim.Adam(generator.parameters(), lr=0.002 * g_reg_ratio,
                           betas=(0 ** g_reg_ratio, 0.99 ** g_reg_ratio))
d_optim = torch.optim.Adam(discriminator.parameters(), lr=0.002 * d_reg_ratio,
                           betas=(0 ** d_reg_ratio, 0.99 ** d_reg_ratio))
real_img = torch.rand(4, 3, 8, 8) * 2 - 1
mean_path_length = 0
for i in range(3):
    requires_grad(generator, False)
    requires_grad(discriminator, True)
    noise = torch.randn(4, 16)
    fake_img, _ = generator(noise)
    fake_pred = discriminator(fake_img)
    real_pred = discriminator(real_img)
    d_loss = d_logistic_loss(real_pred, fake_pred)
    discriminator.zero_grad()
    d_loss.backward()
    d_optim.step()
    real_img.requires_grad = True
    real_pred = discriminator(real_img)
    r1_loss = d_r1_loss(real_pred, real_img)
    discriminator.zero_grad()
    (10 / 2 * r1_loss * 16 + 0 * real_pred[0]).backward()
    d_optim.step()
    real_img.requires_grad = False
    requires_grad(generator, True)
    requires_grad(discriminator, False)
    noise = torch.randn(4, 16)
    fake_img, _ = generator(noise)
    fake_pred = discriminator(fake_img)
    g_loss = g_nonsaturating_loss(fake_pred)
    generator.zero_grad()
    g_loss.backward()
    g_optim.step()
    noise = torch.randn(2, 16)
    fake_img, latents = generator(noise)
    path_loss, mean_path_length, path_lengths = g_path_regularize(fake_img, latents,
                                                                  mean_path_length)
    generator.zero_grad()
    weighted_path_loss = 2 * 4 * path_loss
    weighted_path_loss += 0 * fake_img[0, 0, 0, 0]
    weighted_path_loss.backward()
    g_optim.step()
    accumulate(g_ema, generator, 0.5 ** (32 / (10 * 1000)))
    print(f"d: {d_loss.item():.4f}; g: {g_loss.item():.4f}; r1: {r1_loss.item():.4f}; "
          f"path: {path_loss.item():.5f}; mean path: {mean_path_length.item():.5f}")
with torch.no_grad():
    mean_latent = g_ema.mean_latent(64)
    sample, _ = g_ema(torch.randn(2, 16), truncation=0.7, truncation_latent=mean_latent,
                      noise=[torch.zeros(2, 1, 4, 4), torch.zeros(2, 1, 8, 8),
                             torch.zeros(2, 1, 8, 8)])
print(sample.shape, f"{sample.std().item():.5f}", mean_latent.shape)
print(fake_img.grad_fn, path_lengths.grad_fn)
print("RESULT:", f"{sample.mean().item():.6f}")
