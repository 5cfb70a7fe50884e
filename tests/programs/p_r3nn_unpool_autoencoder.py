"""SegNet-style pooling with indices: MaxPool2d(return_indices=True) + MaxUnpool2d in a small
convolutional autoencoder, the MaxUnpool docs examples (output_size, 1d/3d), AdaptiveMaxPool
with indices, FractionalMaxPool2d with fixed samples, LPPool1d/2d, AvgPool options and a few
training steps."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(0)
pool = nn.MaxPool2d(2, stride=2, return_indices=True)
unpool = nn.MaxUnpool2d(2, stride=2)
print(pool)
print(unpool)
inp = torch.tensor([[[[1., 2., 3., 4.],
                      [5., 6., 7., 8.],
                      [9., 10., 11., 12.],
                      [13., 14., 15., 16.]]]])
output, indices = pool(inp)
print(output)
print(indices, indices.dtype)
print(unpool(output, indices))
inp5 = torch.tensor([[[[1., 2., 3., 4., 5.],
                       [6., 7., 8., 9., 10.],
                       [11., 12., 13., 14., 15.],
                       [16., 17., 18., 19., 20.]]]])
output, indices = pool(inp5)
print(unpool(output, indices, output_size=inp5.size()))
try:
    unpool(output, indices)
except Exception as e:
    print(type(e).__name__, e)
p1 = nn.MaxPool1d(2, stride=2, return_indices=True)
u1 = nn.MaxUnpool1d(2, stride=2)
x1 = torch.tensor([[[1., 2, 3, 4, 5, 6, 7, 8]]])
o1, i1 = p1(x1)
print(u1(o1, i1))
print(u1(*p1(torch.tensor([[[1., 2, 3, 4, 5, 6, 7, 8, 9]]])), output_size=[1, 1, 9]))
p3 = nn.MaxPool3d(3, stride=2, return_indices=True)
u3 = nn.MaxUnpool3d(3, stride=2)
o3, i3 = p3(torch.randn(2, 2, 7, 7, 7))
print(u3(o3, i3).size())
print(p3, u3)
try:
    unpool(output, indices, output_size=[1, 1, 9, 9])
except Exception as e:
    print(type(e).__name__, str(e).split("\n")[0])
# dilation / padding / ceil_mode with indices
mp = nn.MaxPool2d(3, stride=2, padding=1, dilation=1, ceil_mode=True, return_indices=True)
print(mp)
x = torch.randn(1, 2, 6, 7)
o, i = mp(x)
print(o.shape, i[0, 0])
o, i = F.max_pool2d(x, 2, return_indices=True)
print(i[0, 1])
# adaptive max pooling with indices
amp = nn.AdaptiveMaxPool2d((2, 3), return_indices=True)
print(amp)
o, i = amp(x)
print(o.shape, i)
o, i = nn.AdaptiveMaxPool1d(3, return_indices=True)(torch.randn(1, 2, 8))
print(i)
print(nn.AdaptiveMaxPool2d((None, 2))(x).shape, nn.AdaptiveAvgPool2d((3, None))(x).shape)
# fractional max pooling with fixed samples
fmp = nn.FractionalMaxPool2d(2, output_size=(3, 4), return_indices=True,
                             _random_samples=torch.tensor([[[0.3, 0.6], [0.1, 0.9]]]))
print(fmp)
o, i = fmp(torch.arange(1 * 2 * 7 * 9, dtype=torch.float32).reshape(1, 2, 7, 9))
print(o)
print(i)
fr = nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5))
print(fr)
print(fr(torch.randn(2, 3, 10, 12)).shape)
# power-average pooling
lp = nn.LPPool2d(2, 3, stride=2)
print(lp)
print(lp(torch.arange(2 * 5 * 5, dtype=torch.float32).reshape(1, 2, 5, 5) / 10))
lp1 = nn.LPPool1d(1.5, 2)
print(lp1, lp1(torch.tensor([[[1., 2, 3, 4, 5]]])))
print(F.lp_pool2d(torch.ones(1, 1, 4, 4), float("inf"), 2))
ap = nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False,
                  divisor_override=None)
print(ap, ap(x)[0, 0])
print(nn.AvgPool2d(2, divisor_override=3)(torch.ones(1, 1, 4, 4)))


class SegNetAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc1 = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU())
        self.enc2 = nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.pool = nn.MaxPool2d(2, 2, return_indices=True)
        self.unpool = nn.MaxUnpool2d(2, 2)
        self.dec2 = nn.Sequential(nn.Conv2d(8, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU())
        self.dec1 = nn.Conv2d(4, 1, 3, padding=1)

    def forward(self, x):
        x = self.enc1(x)
        s1 = x.size()
        x, i1 = self.pool(x)
        x = self.enc2(x)
        s2 = x.size()
        x, i2 = self.pool(x)
        x = self.unpool(x, i2, output_size=s2)
        x = self.dec2(x)
        x = self.unpool(x, i1, output_size=s1)
        return torch.sigmoid(self.dec1(x))


model = SegNetAE()
print(model)
data = torch.rand(4, 1, 12, 12)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(6):
    opt.zero_grad()
    recon = model(data)
    loss = F.mse_loss(recon, data)
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.5f}")
print(type(recon.grad_fn).__name__)
print("RESULT:", f"{loss.item():.5f}")
