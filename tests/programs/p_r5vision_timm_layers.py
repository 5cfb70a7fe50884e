"""timm's layers (timm/layers/drop.py drop_path/DropPath, layer_scale.py LayerScale/LayerScale2d,
squeeze_excite.py SEModule/EffectiveSEModule, norm.py LayerNorm2d, grn.py GlobalResponseNorm, mlp.py
Mlp/ConvMlp, models/convnext.py ConvNeXtBlock with use_conv_mlp and channels_last input), shrunk: a tiny
ConvNeXt(V2) stage trained a few steps, strides of outputs printed."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


def drop_path(x, drop_prob: float = 0., training: bool = False, scale_by_keep: bool = True):
    if drop_prob == 0. or not training:
        return x
    keep_prob = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    random_tensor = x.new_empty(shape).bernoulli_(keep_prob)
    if keep_prob > 0.0 and scale_by_keep:
        random_tensor.div_(keep_prob)
    return x * random_tensor


class DropPath(nn.Module):
    def __init__(self, drop_prob=0., scale_by_keep=True):
        super().__init__()
        self.drop_prob = drop_prob
        self.scale_by_keep = scale_by_keep

    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)

    def extra_repr(self):
        return f'drop_prob={round(self.drop_prob, 3):0.3f}'


class LayerScale(nn.Module):
    def __init__(self, dim, init_values=1e-5, inplace=False):
        super().__init__()
        self.inplace = inplace
        self.gamma = nn.Parameter(init_values * torch.ones(dim))

    def forward(self, x):
        return x.mul_(self.gamma) if self.inplace else x * self.gamma


class LayerScale2d(nn.Module):
    def __init__(self, dim, init_values=1e-5, inplace=False):
        super().__init__()
        self.inplace = inplace
        self.gamma = nn.Parameter(init_values * torch.ones(dim))

    def forward(self, x):
        gamma = self.gamma.view(1, -1, 1, 1)
        return x.mul_(gamma) if self.inplace else x * gamma


class LayerNorm2d(nn.LayerNorm):
    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class GlobalResponseNorm(nn.Module):
    def __init__(self, dim, eps=1e-6, channels_last=True):
        super().__init__()
        self.eps = eps
        if channels_last:
            self.spatial_dim, self.channel_dim, self.wb_shape = (1, 2), -1, (1, 1, 1, -1)
        else:
            self.spatial_dim, self.channel_dim, self.wb_shape = (2, 3), 1, (1, -1, 1, 1)
        self.weight = nn.Parameter(torch.zeros(dim))
        self.bias = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        x_g = x.norm(p=2, dim=self.spatial_dim, keepdim=True)
        x_n = x_g / (x_g.mean(dim=self.channel_dim, keepdim=True) + self.eps)
        return x + torch.addcmul(self.bias.view(self.wb_shape), self.weight.view(self.wb_shape), x * x_n)


def make_divisible(v, divisor=8, min_value=None, round_limit=.9):
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < round_limit * v:
        new_v += divisor
    return new_v


class SEModule(nn.Module):
    def __init__(self, channels, rd_ratio=1. / 16, rd_divisor=8, add_maxpool=False, gate=nn.Sigmoid):
        super().__init__()
        self.add_maxpool = add_maxpool
        rd_channels = make_divisible(channels * rd_ratio, rd_divisor, round_limit=0.)
        self.fc1 = nn.Conv2d(channels, rd_channels, kernel_size=1, bias=True)
        self.act = nn.ReLU(inplace=True)
        self.fc2 = nn.Conv2d(rd_channels, channels, kernel_size=1, bias=True)
        self.gate = gate()

    def forward(self, x):
        x_se = x.mean((2, 3), keepdim=True)
        if self.add_maxpool:
            x_se = 0.5 * x_se + 0.5 * x.amax((2, 3), keepdim=True)
        x_se = self.fc2(self.act(self.fc1(x_se)))
        return x * self.gate(x_se)


class EffectiveSEModule(nn.Module):
    def __init__(self, channels, add_maxpool=False):
        super().__init__()
        self.add_maxpool = add_maxpool
        self.fc = nn.Conv2d(channels, channels, kernel_size=1, padding=0)
        self.gate = nn.Hardsigmoid()

    def forward(self, x):
        x_se = x.mean((2, 3), keepdim=True)
        if self.add_maxpool:
            x_se = 0.5 * x_se + 0.5 * x.amax((2, 3), keepdim=True)
        x_se = self.fc(x_se)
        return x * self.gate(x_se)


class Mlp(nn.Module):
    def __init__(self, in_features, hidden_features, act_layer=nn.GELU, drop=0., use_conv=False):
        super().__init__()
        linear = nn.Conv2d if use_conv else nn.Linear
        kw = dict(kernel_size=1) if use_conv else {}
        self.fc1 = linear(in_features, hidden_features, **kw)
        self.act = act_layer()
        self.drop1 = nn.Dropout(drop)
        self.fc2 = linear(hidden_features, in_features, **kw)

    def forward(self, x):
        return self.fc2(self.drop1(self.act(self.fc1(x))))


class ConvNeXtBlock(nn.Module):
    def __init__(self, in_chs, mlp_ratio=4, conv_mlp=False, ls_init_value=1e-6, drop_path=0.,
                 use_grn=False):
        super().__init__()
        self.use_conv_mlp = conv_mlp
        self.conv_dw = nn.Conv2d(in_chs, in_chs, 7, padding=3, groups=in_chs, bias=True)
        self.norm = LayerNorm2d(in_chs, eps=1e-6) if conv_mlp else nn.LayerNorm(in_chs, eps=1e-6)
        self.mlp = Mlp(in_chs, int(mlp_ratio * in_chs), use_conv=conv_mlp)
        self.grn = GlobalResponseNorm(int(mlp_ratio * in_chs), channels_last=not conv_mlp) if use_grn else None
        self.gamma = nn.Parameter(ls_init_value * torch.ones(in_chs)) if ls_init_value is not None else None
        self.drop_path = DropPath(drop_path) if drop_path > 0. else nn.Identity()

    def forward(self, x):
        shortcut = x
        x = self.conv_dw(x)
        if self.use_conv_mlp:
            x = self.norm(x)
            x = self.mlp(x)
        else:
            x = x.permute(0, 2, 3, 1)
            x = self.norm(x)
            x = self.mlp.act(self.mlp.fc1(x))
            if self.grn is not None:
                x = self.grn(x)
            x = self.mlp.fc2(x)
            x = x.permute(0, 3, 1, 2)
        if self.gamma is not None:
            x = x.mul(self.gamma.reshape(1, -1, 1, 1))
        return self.drop_path(x) + shortcut


torch.manual_seed(0)
x = torch.randn(4, 8, 6, 6)
dp = DropPath(0.25)
print(dp)
torch.manual_seed(1)
y = dp(x)
print([round(v, 4) for v in y.flatten(1).sum(1).tolist()], dp.eval()(x).equal(x))
torch.manual_seed(1)
print(drop_path(x, 0.25, True, scale_by_keep=False).flatten(1).abs().sum(1))
ls, ls2 = LayerScale(6, 0.1), LayerScale2d(8, 0.1)
print(ls(x).shape, ls2(x).stride(), ls2(x.to(memory_format=torch.channels_last)).stride())
z = x.clone()
LayerScale2d(8, 0.5, inplace=True)(z)
print(torch.allclose(z, x * 0.5))
for se in (SEModule(8, rd_ratio=0.25), SEModule(8, add_maxpool=True), EffectiveSEModule(8, add_maxpool=True)):
    out = se(x.to(memory_format=torch.channels_last))
    print(type(se).__name__, out.stride(), "%.5f" % out.sum().item())
print(make_divisible(8 * 0.25, 8, round_limit=0.), make_divisible(37), make_divisible(12, 8))
grn = GlobalResponseNorm(8, channels_last=False)
nn.init.normal_(grn.weight)
print("grn", "%.5f" % grn(x).std().item())

torch.manual_seed(0)
blocks = nn.Sequential(ConvNeXtBlock(8, drop_path=0.1), ConvNeXtBlock(8, conv_mlp=True, ls_init_value=0.5),
                       ConvNeXtBlock(8, use_grn=True, ls_init_value=None, drop_path=0.2))
for m in blocks.modules():
    if isinstance(m, (nn.Conv2d, nn.Linear)):
        nn.init.trunc_normal_(m.weight, std=.02)
        nn.init.zeros_(m.bias)
head = nn.Linear(8, 3)
blocks = blocks.to(memory_format=torch.channels_last)
opt = torch.optim.AdamW(list(blocks.parameters()) + list(head.parameters()), lr=1e-2, weight_decay=0.05)
target = torch.tensor([0, 1, 2, 1])
for step in range(4):
    inp = x.contiguous(memory_format=torch.channels_last)
    feats = blocks(inp)
    logits = head(feats.mean((2, 3)))
    loss = F.cross_entropy(logits, target, label_smoothing=0.1)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, "%.6f" % loss.item(), feats.stride(), feats.is_contiguous(memory_format=torch.channels_last))
print([p.grad.is_contiguous(memory_format=torch.channels_last) for n, p in blocks.named_parameters() if p.dim() == 4])
blocks.eval()
with torch.no_grad():
    print("%.6f" % blocks(inp).abs().mean().item())
