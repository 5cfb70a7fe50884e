"""The PyTorch recipe "Reasoning about Shapes in PyTorch"
(recipes/recipes/reasoning_about_shapes.py), shrunk: a Conv2d on meta tensors (and a "large"
one, smaller than the recipe's 2**10 x 3 x 2**16 x 2**16), the CIFAR ``Net`` built
under ``torch.device("meta")`` with a forward hook printing every layer's output shape, then the
same shape walk over more layers (ConvTranspose2d, BatchNorm, AdaptiveAvgPool2d, Upsample, LSTM,
MultiheadAttention, TransformerEncoderLayer, Embedding) and the real-CPU check that the shapes
agree."""
import importlib
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")

t = torch.rand(2, 3, 10, 10, device="meta")
conv = torch.nn.Conv2d(3, 5, 2, device="meta")
out = conv(t)
print(out)
print(out.shape)

t_large = torch.rand(2**4, 3, 2**7, 2**7, device="meta")  # recipe: 2**10, 3, 2**16, 2**16
out = conv(t_large)
print(out.shape, out.numel(), out.dtype, out.requires_grad, out.grad_fn is not None)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)  # flatten all dimensions except batch
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


def fw_hook(module, input, output):
    print(f"Shape of output to {module} is {output.shape}.")


# Any tensor created within this torch.device context manager will be on the meta device.
with torch.device("meta"):
    net = Net()
    inp = torch.randn((1024, 3, 32, 32))

handles = [layer.register_forward_hook(fw_hook) for name, layer in net.named_modules()]
out = net(inp)
print(out.shape)
for h in handles:
    h.remove()


class Walk(nn.Module):
    """More layer kinds, each printing its output shape through a hook."""

    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.AdaptiveAvgPool2d((3, 5))
        self.upsample = nn.Upsample(scale_factor=2, mode="nearest")
        self.conv = nn.Conv2d(4, 8, 3, padding="same", dilation=2, groups=2)
        self.emb = nn.Embedding(50, 8)
        self.lstm = nn.LSTM(8, 6, num_layers=2, batch_first=True, bidirectional=True)
        self.attn = nn.MultiheadAttention(12, 3, batch_first=True)
        self.enc = nn.TransformerEncoderLayer(12, 2, dim_feedforward=16, dropout=0.0,
                                              batch_first=True)
        self.head = nn.Linear(12, 4)

    def forward(self, img, tokens):
        y = self.conv(self.upsample(self.pool(self.bn(self.up(img)))))
        seq = self.emb(tokens) + y.flatten(2).mean(-1).unsqueeze(1)
        h, (hn, cn) = self.lstm(seq)
        a, w = self.attn(h, h, h)
        return self.head(self.enc(a)), hn, w


def shape_hook(module, input, output):
    outs = output if isinstance(output, tuple) else (output,)
    shapes = []
    for o in outs:
        if isinstance(o, tuple):
            shapes.append([tuple(p.shape) for p in o])
        elif o is not None:
            shapes.append(tuple(o.shape))
    print(f"{type(module).__name__:>24}: {shapes}")


for device in ("meta", "cpu"):
    torch.manual_seed(0)
    with torch.device(device):
        walk = Walk().eval()
        img = torch.randn(2, 3, 6, 6)
        tokens = torch.randint(0, 50, (2, 7))
    hooks = [m.register_forward_hook(shape_hook) for m in walk.children()]
    with torch.no_grad():
        out, hn, w = walk(img, tokens)
    print(device, out.shape, hn.shape, w.shape, out.device.type)
    if device == "cpu":
        print(round(out.sum().item(), 4), round(w.sum().item(), 4))
    for h in hooks:
        h.remove()

# Shape arithmetic helpers the recipe hints at, on meta tensors.
x = torch.empty(8, 3, 32, 32, device="meta")
for layer in (nn.Conv2d(3, 4, 3, stride=2), nn.MaxPool2d(3, 2, padding=1, ceil_mode=True),
              nn.AvgPool2d(5, 3), nn.Unfold(4, stride=4), nn.PixelShuffle(1), nn.Flatten(),
              nn.Conv2d(3, 6, (3, 1), padding=(1, 0), stride=(1, 2))):
    layer = layer.to("meta")
    y = layer(x)
    print(type(layer).__name__, tuple(y.shape), y.is_contiguous())
