"""MLP-Mixer (lucidrains/mlp-mixer-pytorch style with a hand-written Rearrange), shrunk."""
import importlib
import os
from functools import partial

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

pair = lambda x: x if isinstance(x, tuple) else (x, x)  # noqa: E731


class PatchRearrange(nn.Module):
    """'b c (h p1) (w p2) -> b (h w) (p1 p2 c)'."""

    def __init__(self, p1, p2):
        super().__init__()
        self.p1, self.p2 = p1, p2

    def forward(self, x):
        b, c, H, W = x.shape
        h, w = H // self.p1, W // self.p2
        x = x.reshape(b, c, h, self.p1, w, self.p2)
        x = x.permute(0, 2, 4, 3, 5, 1)
        return x.reshape(b, h * w, self.p1 * self.p2 * c)

    def extra_repr(self):
        return f"p1={self.p1}, p2={self.p2}"


class Reduce(nn.Module):
    def forward(self, x):
        return x.mean(dim=1)


class PreNormResidual(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.fn = fn
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return self.fn(self.norm(x)) + x


def FeedForward(dim, expansion_factor=4, dropout=0.0, dense=nn.Linear):
    inner_dim = int(dim * expansion_factor)
    return nn.Sequential(
        dense(dim, inner_dim),
        nn.GELU(),
        nn.Dropout(dropout),
        dense(inner_dim, dim),
        nn.Dropout(dropout),
    )


def MLPMixer(*, image_size, channels, patch_size, dim, depth, num_classes, expansion_factor=4,
             expansion_factor_token=0.5, dropout=0.0):
    image_h, image_w = pair(image_size)
    assert (image_h % patch_size) == 0 and (image_w % patch_size) == 0
    num_patches = (image_h // patch_size) * (image_w // patch_size)
    chan_first, chan_last = partial(nn.Conv1d, kernel_size=1), nn.Linear
    return nn.Sequential(
        PatchRearrange(patch_size, patch_size),
        nn.Linear((patch_size ** 2) * channels, dim),
        *[nn.Sequential(
            PreNormResidual(dim, FeedForward(num_patches, expansion_factor, dropout,
                                             chan_first)),
            PreNormResidual(dim, FeedForward(dim, expansion_factor_token, dropout, chan_last)),
        ) for _ in range(depth)],
        nn.LayerNorm(dim),
        Reduce(),
        nn.Linear(dim, num_classes),
    )


torch.manual_seed(0)
model = MLPMixer(image_size=16, channels=3, patch_size=4, dim=24, depth=2, num_classes=5,
                 dropout=0.1)
print(model)
n_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
print(f"params: {n_params}")
img = torch.randn(6, 3, 16, 16)
pred = model(img)
print(pred.shape)
print(pred)

# the timm Mixer variant: token mixing by transposes, Linear layers
class MixerBlock(nn.Module):
    def __init__(self, dim, seq_len, mlp_ratio=(0.5, 4.0), act_layer=nn.GELU, drop=0.0):
        super().__init__()
        tokens_dim, channels_dim = [int(x * dim) for x in mlp_ratio]
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp_tokens = nn.Sequential(nn.Linear(seq_len, tokens_dim), act_layer(),
                                        nn.Linear(tokens_dim, seq_len))
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp_channels = nn.Sequential(nn.Linear(dim, channels_dim), act_layer(),
                                          nn.Linear(channels_dim, dim))

    def forward(self, x):
        x = x + self.mlp_tokens(self.norm1(x).transpose(1, 2)).transpose(1, 2)
        x = x + self.mlp_channels(self.norm2(x))
        return x


class TimmMixer(nn.Module):
    def __init__(self, num_classes=5, img_size=16, in_chans=3, patch_size=4, num_blocks=2,
                 embed_dim=24):
        super().__init__()
        self.stem = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)
        seq_len = (img_size // patch_size) ** 2
        self.blocks = nn.Sequential(*[MixerBlock(embed_dim, seq_len, act_layer=partial(
            nn.GELU, approximate="tanh")) for _ in range(num_blocks)])
        self.norm = nn.LayerNorm(embed_dim, eps=1e-6)
        self.head = nn.Linear(embed_dim, num_classes)
        for n, m in self.named_modules():
            if isinstance(m, nn.Linear):
                if n.startswith("head"):
                    nn.init.zeros_(m.weight)
                    nn.init.zeros_(m.bias)
                else:
                    nn.init.xavier_uniform_(m.weight)
                    if "mlp" in n:
                        nn.init.normal_(m.bias, std=1e-6)
                    else:
                        nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.stem(x).flatten(2).transpose(1, 2)
        x = self.blocks(x)
        x = self.norm(x)
        x = x.mean(dim=1)
        return self.head(x)


net = TimmMixer()
print(net.blocks[0])
labels = torch.randint(0, 5, (6,))
for name, m in [("lucidrains", model), ("timm", net)]:
    opt = torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9, nesterov=True,
                          weight_decay=1e-4)
    for it in range(5):
        opt.zero_grad()
        loss = F.cross_entropy(m(img), labels)
        loss.backward()
        opt.step()
        print(f"{name} iter {it}: loss {loss.item():.5f}")
m.eval()
print(F.softmax(net(img), dim=-1)[:2])
print(f"RESULT: {loss.item():.5f}")
