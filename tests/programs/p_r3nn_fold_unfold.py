"""im2col with nn.Unfold / nn.Fold as the docs and blog posts use them: convolution as
Unfold + matmul + Fold(1x1), the overlap-add count trick to average overlapping patches
(image denoising / patch reconstruction), ViT-style non-overlapping patchify and back,
Tensor.unfold sliding windows (1-D moving average, 2-D patches), and a local-window
self-attention built from F.unfold, trained a few steps."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(0)
unfold = nn.Unfold(kernel_size=(2, 3))
print(unfold)
inp = torch.randn(2, 5, 3, 4)
output = unfold(inp)
print(output.size())
fold = nn.Fold(output_size=(4, 5), kernel_size=(2, 2))
print(fold)
inp2 = torch.randn(1, 3 * 2 * 2, 12)
print(fold(inp2).size())
# convolution == unfold + matmul + fold
inp = torch.randn(1, 3, 10, 12)
w = torch.randn(2, 3, 4, 5)
inp_unf = F.unfold(inp, (4, 5))
out_unf = inp_unf.transpose(1, 2).matmul(w.view(w.size(0), -1).t()).transpose(1, 2)
out = F.fold(out_unf, (7, 8), (1, 1))
print(out.shape, (F.conv2d(inp, w) - out).abs().max().item() < 1e-4)
print(type(inp_unf.grad_fn), type(out.grad_fn))
# stride / padding / dilation
u = nn.Unfold(kernel_size=3, dilation=2, padding=1, stride=2)
print(u)
x = torch.arange(1 * 2 * 7 * 7, dtype=torch.float32).reshape(1, 2, 7, 7)
print(u(x).shape)
print(u(x)[0, :4])
f = nn.Fold(output_size=7, kernel_size=3, dilation=2, padding=1, stride=2)
print(f)
print(f(u(x))[0, 0])
# overlap-add averaging: fold(unfold(x)) / fold(unfold(ones))
x = torch.randn(1, 1, 6, 6)
patches = F.unfold(x, kernel_size=3, stride=1)
ones = torch.ones_like(x)
divisor = F.fold(F.unfold(ones, kernel_size=3, stride=1), (6, 6), kernel_size=3, stride=1)
print(divisor[0, 0])
recon = F.fold(patches, (6, 6), kernel_size=3, stride=1) / divisor
print(torch.allclose(recon, x, atol=1e-6))
# ViT patchify
img = torch.randn(2, 3, 8, 8)
p = 4
tokens = F.unfold(img, kernel_size=p, stride=p).transpose(1, 2)
print(tokens.shape)
back = F.fold(tokens.transpose(1, 2), (8, 8), kernel_size=p, stride=p)
print(torch.equal(back, img))
# Tensor.unfold windows
sig = torch.arange(10.0)
print(sig.unfold(0, 4, 2))
print(sig.unfold(0, 3, 1).mean(-1))
t = torch.arange(16.0).view(4, 4)
print(t.unfold(0, 2, 2).unfold(1, 2, 2).contiguous().view(-1, 4))
# unbatched input
print(nn.Unfold(2)(torch.randn(3, 4, 4)).shape, nn.Fold(3, 2)(torch.randn(8, 4)).shape)
try:
    nn.Fold(output_size=(4, 5), kernel_size=(2, 2))(torch.randn(1, 7, 12))
except Exception as e:
    print(type(e).__name__, e)
try:
    nn.Fold(output_size=(4, 5), kernel_size=(2, 2))(torch.randn(1, 12, 11))
except Exception as e:
    print(type(e).__name__, e)


class LocalAttention(nn.Module):
    """Stand-alone self-attention over k x k neighbourhoods, via unfold."""

    def __init__(self, channels, k=3):
        super().__init__()
        self.k = k
        self.qkv = nn.Conv2d(channels, 3 * channels, 1, bias=False)
        self.unfold = nn.Unfold(k, padding=k // 2)
        self.proj = nn.Conv2d(channels, channels, 1)

    def forward(self, x):
        b, c, h, w = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=1)
        k = self.unfold(k).view(b, c, self.k * self.k, h * w)
        v = self.unfold(v).view(b, c, self.k * self.k, h * w)
        q = q.view(b, c, 1, h * w)
        attn = (q * k).sum(1, keepdim=True) / c ** 0.5
        attn = attn.softmax(dim=2)
        out = (attn * v).sum(2).view(b, c, h, w)
        return self.proj(out) + x


model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), LocalAttention(4), nn.ReLU(),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 2))
print(model)
xs = torch.randn(6, 1, 6, 6)
ys = torch.randint(0, 2, (6,))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for step in range(6):
    opt.zero_grad()
    loss = F.cross_entropy(model(xs), ys)
    loss.backward()
    opt.step()
    print(f"step {step}: {loss.item():.4f}")
print("RESULT:", f"{loss.item():.4f}")
