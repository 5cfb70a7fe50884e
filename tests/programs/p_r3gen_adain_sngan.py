"""AdaIN style transfer (naoto0804/pytorch-AdaIN: calc_mean_std, adaptive_instance_normalization,
style interpolation, content/style losses) and an SNGAN discriminator (spectral_norm, both the
old hook API and the parametrization API) with hinge loss; InstanceNorm1d/2d variants
(affine, track_running_stats, eval), F.instance_norm, LayerNorm over images, GroupNorm(1, C)."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
SN = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.utils.spectral_norm")


def calc_mean_std(feat, eps=1e-5):
    size = feat.size()
    assert (len(size) == 4)
    N, C = size[:2]
    feat_var = feat.view(N, C, -1).var(dim=2) + eps
    feat_std = feat_var.sqrt().view(N, C, 1, 1)
    feat_mean = feat.view(N, C, -1).mean(dim=2).view(N, C, 1, 1)
    return feat_mean, feat_std


def adaptive_instance_normalization(content_feat, style_feat):
    assert (content_feat.size()[:2] == style_feat.size()[:2])
    size = content_feat.size()
    style_mean, style_std = calc_mean_std(style_feat)
    content_mean, content_std = calc_mean_std(content_feat)
    normalized_feat = (content_feat - content_mean.expand(size)) / content_std.expand(size)
    return normalized_feat * style_std.expand(size) + style_mean.expand(size)


torch.manual_seed(0)
decoder = nn.Sequential(
    nn.ReflectionPad2d((1, 1, 1, 1)), nn.Conv2d(16, 8, (3, 3)), nn.ReLU(),
    nn.Upsample(scale_factor=2, mode='nearest'),
    nn.ReflectionPad2d((1, 1, 1, 1)), nn.Conv2d(8, 3, (3, 3)))
vgg = nn.Sequential(
    nn.Conv2d(3, 3, (1, 1)), nn.ReflectionPad2d((1, 1, 1, 1)), nn.Conv2d(3, 8, (3, 3)), nn.ReLU(),
    nn.MaxPool2d((2, 2), (2, 2), (0, 0), ceil_mode=True),
    nn.ReflectionPad2d((1, 1, 1, 1)), nn.Conv2d(8, 16, (3, 3)), nn.ReLU())


class Net(nn.Module):
    def __init__(self, encoder, decoder):
        super(Net, self).__init__()
        enc_layers = list(encoder.children())
        self.enc_1 = nn.Sequential(*enc_layers[:4])
        self.enc_2 = nn.Sequential(*enc_layers[4:])
        self.decoder = decoder
        self.mse_loss = nn.MSELoss()
        for name in ['enc_1', 'enc_2']:
            for param in getattr(self, name).parameters():
                param.requires_grad = False

    def encode_with_intermediate(self, input):
        results = [input]
        for i in range(2):
            func = getattr(self, 'enc_{:d}'.format(i + 1))
            results.append(func(results[-1]))
        return results[1:]

    def encode(self, input):
        for i in range(2):
            input = getattr(self, 'enc_{:d}'.format(i + 1))(input)
        return input

    def calc_content_loss(self, input, target):
        assert (input.size() == target.size())
        assert (target.requires_grad is False)
        return self.mse_loss(input, target)

    def calc_style_loss(self, input, target):
        assert (input.size() == target.size())
        assert (target.requires_grad is False)
        input_mean, input_std = calc_mean_std(input)
        target_mean, target_std = calc_mean_std(target)
        return self.mse_loss(input_mean, target_mean) + self.mse_loss(input_std, target_std)

    def forward(self, content, style, alpha=1.0):
        assert 0 <= alpha <= 1
        style_feats = self.encode_with_intermediate(style)
        content_feat = self.encode(content)
        t = adaptive_instance_normalization(content_feat, style_feats[-1])
        t = alpha * t + (1 - alpha) * content_feat
        g_t = self.decoder(t)
        g_t_feats = self.encode_with_intermediate(g_t)
        loss_c = self.calc_content_loss(g_t_feats[-1], t)
        loss_s = self.calc_style_loss(g_t_feats[0], style_feats[0])
        for i in range(1, 2):
            loss_s += self.calc_style_loss(g_t_feats[i], style_feats[i])
        return loss_c, loss_s


network = Net(vgg, decoder)
network.train()
print(network)
optimizer = torch.optim.Adam(network.decoder.parameters(), lr=1e-4)
content_images = torch.rand(2, 3, 8, 8)
style_images = torch.rand(2, 3, 8, 8)
for i in range(4):
    lr = 1e-4 / (1.0 + 5e-5 * i)
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr
    loss_c, loss_s = network(content_images, style_images)
    loss = 1.0 * loss_c + 10.0 * loss_s
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"iter {i} loss_c {loss_c.item():.5f} loss_s {loss_s.item():.5f}", loss_s.grad_fn)
print(sum(p.requires_grad for p in network.parameters()), len(network.state_dict()))


def style_transfer(vgg, decoder, content, style, alpha=1.0, interpolation_weights=None):
    assert (0.0 <= alpha <= 1.0)
    content_f = vgg(content)
    style_f = vgg(style)
    if interpolation_weights:
        _, C, H, W = content_f.size()
        feat = torch.FloatTensor(1, C, H, W).zero_().to(content.device)
        base_feat = adaptive_instance_normalization(content_f, style_f)
        for i, w in enumerate(interpolation_weights):
            feat = feat + w * base_feat[i:i + 1]
        content_f = content_f[0:1]
    else:
        feat = adaptive_instance_normalization(content_f, style_f)
    feat = feat * alpha + content_f * (1 - alpha)
    return decoder(feat)


with torch.no_grad():
    out = style_transfer(vgg, decoder, content_images, style_images, alpha=0.6)
    out2 = style_transfer(vgg, decoder, content_images[:1].expand_as(style_images), style_images,
                          1.0, [0.25, 0.75])
print(out.shape, f"{out.mean().item():.6f}", out2.shape, f"{out2.std().item():.6f}")
m, s = calc_mean_std(content_images)
print(m.flatten(), s.shape)
inorm = F.instance_norm(content_images, eps=1e-5)
print(torch.allclose(inorm, (content_images - m) / content_images.view(2, 3, -1).var(
    2, unbiased=False).add(1e-5).sqrt().view(2, 3, 1, 1), atol=1e-5))

for norm in [nn.InstanceNorm2d(3), nn.InstanceNorm2d(3, affine=True),
             nn.InstanceNorm2d(3, track_running_stats=True, momentum=0.2), nn.InstanceNorm1d(4),
             nn.LayerNorm([3, 8, 8], elementwise_affine=False), nn.GroupNorm(1, 3)]:
    x = content_images if not isinstance(norm, nn.InstanceNorm1d) else content_images[:, 0, :4]
    y = norm(x)
    print(norm, y.shape, f"{y[0, 0].sum().item():.5f}", [k for k in norm.state_dict()])
    if getattr(norm, "track_running_stats", False):
        print(norm.running_mean, norm.running_var, norm.num_batches_tracked)
        norm.eval()
        print(f"{norm(x).mean().item():.5f}")
print(F.instance_norm(content_images, torch.zeros(3), torch.ones(3),
                      use_input_stats=False)[0, 0, 0])
try:
    nn.InstanceNorm2d(3)(torch.rand(3, 1, 1))
except Exception as e:
    print(type(e).__name__, e)


class SNDiscriminator(nn.Module):
    def __init__(self, ch=8):
        super().__init__()
        self.conv1 = SN.spectral_norm(nn.Conv2d(3, ch, 3, 1, padding=(1, 1)))
        self.conv2 = SN.spectral_norm(nn.Conv2d(ch, ch, 4, 2, padding=(1, 1)))
        self.conv3 = nn.utils.parametrizations.spectral_norm(nn.Conv2d(ch, ch * 2, 3, 1, 1))
        self.fc = nn.utils.spectral_norm(nn.Linear(4 * 4 * ch * 2, 1))

    def forward(self, x):
        m = x
        m = nn.LeakyReLU(0.1)(self.conv1(m))
        m = nn.LeakyReLU(0.1)(self.conv2(m))
        m = nn.LeakyReLU(0.1)(self.conv3(m))
        return self.fc(m.view(-1, 4 * 4 * 8 * 2))


torch.manual_seed(1)
D = SNDiscriminator()
print(D)
print(list(D.state_dict().keys()))
print(D.conv1.weight_u.shape, D.conv1.weight_v.shape, D.conv1.weight_orig.shape,
      type(D.conv1.weight).__name__, D.conv1.weight.grad_fn is None)
optim_disc = torch.optim.Adam(filter(lambda p: p.requires_grad, D.parameters()), lr=2e-4,
                              betas=(0.0, 0.9))
for step in range(3):
    real = content_images
    fake = out.detach()
    optim_disc.zero_grad()
    disc_loss = nn.ReLU()(1.0 - D(real)).mean() + nn.ReLU()(1.0 + D(fake)).mean()
    disc_loss.backward()
    optim_disc.step()
    sig = torch.linalg.matrix_norm(D.conv2.weight.detach().flatten(1), ord=2)
    print(f"step {step} disc loss {disc_loss.item():.5f} sigma {sig.item():.4f}")
    print(D.conv1.weight_u[:3], D.conv3.parametrizations.weight.original.shape)
D.eval()
with torch.no_grad():
    print(D(real).flatten(), f"{D.conv1.weight.abs().sum().item():.5f}")
SN.remove_spectral_norm(D.conv1)
print(list(D.conv1.state_dict().keys()), isinstance(D.conv1.weight, nn.Parameter))
try:
    SN.spectral_norm(D.conv2)
except Exception as e:
    print(type(e).__name__, e)
print("RESULT:", f"{disc_loss.item():.5f}")
