"""Weight-initialisation recipes: the nn.init docs' examples, calculate_gain for every
nonlinearity, a ResNet-style init_weights (kaiming_normal_ fan_out for convs, constant_ for
norms, zero-init of the last BN gamma), timm's ViT init (trunc_normal_ std .02), orthogonal_
for RNN weights, xavier for a Transformer, sparse_/dirac_/eye_, generator= for reproducible
init, the fan computation and the errors for bad shapes."""
import importlib
import math
import os
import warnings

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
init = importlib.import_module(LIB + ".nn.init")


def stats(t):
    return f"{tuple(t.shape)} mean={t.mean().item():.4f} std={t.std().item():.4f} " \
           f"min={t.min().item():.4f} max={t.max().item():.4f}"


for nl in ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose2d", "sigmoid", "tanh",
           "relu", "leaky_relu", "selu"]:
    print(nl, init.calculate_gain(nl))
print(init.calculate_gain("leaky_relu", 0.2), init.calculate_gain("leaky_relu", 1))
for bad in [("leaky_relu", "a"), ("gelu", None), ("leaky_relu", True)]:
    try:
        init.calculate_gain(*bad)
    except ValueError as e:
        print(type(e).__name__, e)

torch.manual_seed(0)
w = torch.empty(3, 5)
print(init.uniform_(w, a=-0.5, b=0.5))
print(init.normal_(w, mean=1.0, std=0.1))
print(init.trunc_normal_(w, std=2.0, a=-1.0, b=1.0))
print(init.constant_(w, 0.3)[0], init.ones_(w)[1], init.zeros_(w)[2])
print(init.eye_(torch.empty(3, 5)))
d = torch.empty(3, 2, 3)
print(init.dirac_(d))
print(init.dirac_(torch.empty(4, 2, 3, 3), groups=2)[:, :, 1, 1])
print(init.xavier_uniform_(torch.empty(3, 5), gain=init.calculate_gain("relu")))
print(init.xavier_normal_(torch.empty(3, 5)))
print(init.kaiming_uniform_(torch.empty(3, 5), mode="fan_in", nonlinearity="relu"))
print(init.kaiming_normal_(torch.empty(3, 5), mode="fan_out", nonlinearity="relu"))
print(init.kaiming_uniform_(torch.empty(4, 3), a=math.sqrt(5)))
print(init.orthogonal_(torch.empty(3, 5)))
q = init.orthogonal_(torch.empty(6, 3), gain=2.0)
print(q, (q.T @ q).diag())
sp = init.sparse_(torch.empty(5, 4), sparsity=0.4)
print(sp, (sp == 0).sum(dim=0))

# fans, as _calculate_fan_in_and_fan_out computes them
for shape in [(7, 3), (8, 4, 3), (16, 8, 3, 3), (4, 2, 3, 3, 3)]:
    print(shape, init._calculate_fan_in_and_fan_out(torch.empty(shape)),
          init._calculate_correct_fan(torch.empty(shape), "fan_out"))
for fn in [init.xavier_uniform_, init.kaiming_normal_, init.orthogonal_, init.eye_,
           init.dirac_, init.sparse_]:
    try:
        if fn is init.sparse_:
            fn(torch.empty(2, 3, 4), 0.1)
        else:
            fn(torch.empty(5))
    except (ValueError, RuntimeError) as e:
        print(fn.__name__, type(e).__name__, e)
try:
    init.kaiming_normal_(torch.empty(3, 4), mode="fan_avg")
except ValueError as e:
    print(type(e).__name__, e)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    z = init.kaiming_uniform_(torch.empty(0, 3))
print(z.shape, [str(c.message) for c in caught])

# reproducible init with an explicit generator, independent of the global stream
g = torch.Generator().manual_seed(7)
a = init.normal_(torch.empty(2, 3), generator=g)
g.manual_seed(7)
b = init.normal_(torch.empty(2, 3), generator=g)
print(torch.equal(a, b), init.uniform_(torch.empty(4), generator=g))
print(init.trunc_normal_(torch.empty(4), std=0.02, generator=g))
print(init.kaiming_normal_(torch.empty(2, 2), generator=g))
print(init.xavier_uniform_(torch.empty(2, 2), generator=g))
print(init.orthogonal_(torch.empty(2, 2), generator=g))


class BasicBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        return torch.relu(x + self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x))))))


class TinyResNet(nn.Module):
    def __init__(self, zero_init_residual=True):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.GroupNorm(2, 8)
        self.layer1 = BasicBlock(8)
        self.fc = nn.Linear(8, 4)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        if zero_init_residual:
            for m in self.modules():
                if isinstance(m, BasicBlock):
                    nn.init.constant_(m.bn2.weight, 0)

    def forward(self, x):
        x = self.layer1(torch.relu(self.bn1(self.conv1(x))))
        return self.fc(x.mean(dim=(2, 3)))


torch.manual_seed(1)
net = TinyResNet()
for name, p in net.named_parameters():
    print(name, stats(p) if p.numel() > 1 else p.tolist())
x = torch.randn(2, 3, 6, 6)
print(net(x))


def _init_vit_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.trunc_normal_(m.weight, std=0.02)
        if m.bias is not None:
            nn.init.zeros_(m.bias)
    elif isinstance(m, nn.LayerNorm):
        nn.init.ones_(m.weight)
        nn.init.zeros_(m.bias)
    elif isinstance(m, nn.Embedding):
        nn.init.normal_(m.weight, std=0.02)


torch.manual_seed(2)
vit_block = nn.ModuleDict({"emb": nn.Embedding(10, 8), "norm": nn.LayerNorm(8),
                           "qkv": nn.Linear(8, 24), "proj": nn.Linear(8, 8, bias=False)})
pos_embed = nn.Parameter(torch.zeros(1, 5, 8))
nn.init.trunc_normal_(pos_embed, std=0.02)
print(vit_block.apply(_init_vit_weights) is vit_block)
for name, p in vit_block.named_parameters():
    print(name, stats(p))
print(stats(pos_embed), pos_embed.abs().max().item() <= 0.04)

torch.manual_seed(3)
lstm = nn.LSTM(4, 3, num_layers=1)
for name, param in lstm.named_parameters():
    if "weight_ih" in name:
        nn.init.xavier_uniform_(param.data)
    elif "weight_hh" in name:
        for i in range(0, param.shape[0], 3):
            nn.init.orthogonal_(param.data[i:i + 3])
    elif "bias" in name:
        param.data.fill_(0)
        param.data[3:6].fill_(1)  # forget gate bias
gram = lstm.weight_hh_l0[:3] @ lstm.weight_hh_l0[:3].T
print(torch.allclose(gram, torch.eye(3), atol=1e-5), gram.diagonal())
print(lstm.bias_ih_l0)

torch.manual_seed(4)
tr = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0)
for p in tr.parameters():
    if p.dim() > 1:
        nn.init.xavier_uniform_(p)
print([(n, round(p.std().item(), 4)) for n, p in tr.named_parameters() if p.dim() > 1])
with torch.no_grad():
    out = tr(torch.randn(3, 2, 8))
print(out[0])
print("RESULT:", f"{net(x).sum().item():.5f}", f"{out.abs().sum().item():.5f}")
