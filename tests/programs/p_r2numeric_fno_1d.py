"""The Fourier Neural Operator (Li et al., neuraloperator/fourier_1d.py) shrunk: SpectralConv1d with
complex weights (torch.rand(..., dtype=torch.cfloat)), torch.einsum on complex tensors,
rfft/irfft with n=, the FNO1d model on a synthetic Burgers-like dataset, the LpLoss relative error,
and a few training steps with Adam + StepLR; plus the 2-D spectral layer's rfft2/irfft2."""

# compare: rtol=1e-4 atol=1e-5
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


class SpectralConv1d(nn.Module):
    def __init__(self, in_channels, out_channels, modes1):
        super(SpectralConv1d, self).__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.modes1 = modes1
        self.scale = 1 / (in_channels * out_channels)
        self.weights1 = nn.Parameter(
            self.scale * torch.rand(in_channels, out_channels, self.modes1, dtype=torch.cfloat)
        )

    def compl_mul1d(self, input, weights):
        return torch.einsum("bix,iox->box", input, weights)

    def forward(self, x):
        batchsize = x.shape[0]
        x_ft = torch.fft.rfft(x)
        out_ft = torch.zeros(
            batchsize, self.out_channels, x.size(-1) // 2 + 1, device=x.device, dtype=torch.cfloat
        )
        out_ft[:, :, : self.modes1] = self.compl_mul1d(x_ft[:, :, : self.modes1], self.weights1)
        x = torch.fft.irfft(out_ft, n=x.size(-1))
        return x


class FNO1d(nn.Module):
    def __init__(self, modes, width):
        super(FNO1d, self).__init__()
        self.modes1 = modes
        self.width = width
        self.padding = 2
        self.fc0 = nn.Linear(2, self.width)
        self.conv0 = SpectralConv1d(self.width, self.width, self.modes1)
        self.conv1 = SpectralConv1d(self.width, self.width, self.modes1)
        self.w0 = nn.Conv1d(self.width, self.width, 1)
        self.w1 = nn.Conv1d(self.width, self.width, 1)
        self.fc1 = nn.Linear(self.width, 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        grid = self.get_grid(x.shape, x.device)
        x = torch.cat((x, grid), dim=-1)
        x = self.fc0(x)
        x = x.permute(0, 2, 1)
        x = F.pad(x, [0, self.padding])
        x1 = self.conv0(x)
        x2 = self.w0(x)
        x = F.gelu(x1 + x2)
        x1 = self.conv1(x)
        x2 = self.w1(x)
        x = x1 + x2
        x = x[..., : -self.padding]
        x = x.permute(0, 2, 1)
        x = self.fc1(x)
        x = F.gelu(x)
        x = self.fc2(x)
        return x

    def get_grid(self, shape, device):
        batchsize, size_x = shape[0], shape[1]
        gridx = torch.tensor(torch.linspace(0, 1, size_x).numpy(), dtype=torch.float)
        gridx = gridx.reshape(1, size_x, 1).repeat([batchsize, 1, 1])
        return gridx.to(device)


class LpLoss(object):
    def __init__(self, d=2, p=2, size_average=True, reduction=True):
        super(LpLoss, self).__init__()
        self.d, self.p, self.reduction, self.size_average = d, p, reduction, size_average

    def rel(self, x, y):
        num_examples = x.size()[0]
        diff_norms = torch.norm(
            x.reshape(num_examples, -1) - y.reshape(num_examples, -1), self.p, 1
        )
        y_norms = torch.norm(y.reshape(num_examples, -1), self.p, 1)
        if self.reduction:
            if self.size_average:
                return torch.mean(diff_norms / y_norms)
            return torch.sum(diff_norms / y_norms)
        return diff_norms / y_norms

    def __call__(self, x, y):
        return self.rel(x, y)


torch.manual_seed(0)
s, ntrain, batch_size = 32, 8, 4
k = torch.arange(1, 5, dtype=torch.float)
coef = torch.randn(ntrain, 4) / k
xs = torch.linspace(0, 1, s)
a = (coef.unsqueeze(-1) * torch.sin(torch.pi * k.view(1, -1, 1) * xs)).sum(1)
u = torch.fft.irfft(torch.fft.rfft(a) * torch.exp(-0.05 * torch.arange(s // 2 + 1) ** 2), n=s)
x_train, y_train = a.reshape(ntrain, s, 1), u
train_loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(x_train, y_train), batch_size=batch_size, shuffle=True
)

model = FNO1d(modes=6, width=8)
print(model)
print([(n, p.dtype, tuple(p.shape)) for n, p in model.named_parameters()][:4])
c = 0
for p in list(model.parameters()):
    c += p.numel() * (2 if p.is_complex() else 1)
print("params", c)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-4)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
myloss = LpLoss(size_average=False)
for ep in range(4):
    model.train()
    train_mse = 0
    train_l2 = 0
    for x, y in train_loader:
        optimizer.zero_grad()
        out = model(x)
        mse = F.mse_loss(out.view(batch_size, -1), y.view(batch_size, -1), reduction="mean")
        l2 = myloss(out.view(batch_size, -1), y.view(batch_size, -1))
        l2.backward()
        optimizer.step()
        train_mse += mse.item()
        train_l2 += l2.item()
    scheduler.step()
    print(
        ep,
        f"{train_mse / len(train_loader):.6f}",
        f"{train_l2 / ntrain:.6f}",
        scheduler.get_last_lr(),
    )
print(model.conv0.weights1.grad.dtype, model.conv0.weights1.grad.shape)
with torch.no_grad():
    pred = model(x_train[:2])
print(pred.shape, pred[0, :4, 0])

layer = SpectralConv1d(2, 3, 4)
xin = torch.randn(1, 2, 10, requires_grad=True)
yout = layer(xin)
print(type(yout.grad_fn).__name__, yout.shape)
yout.pow(2).sum().backward()
print(xin.grad[0, 0, :4], layer.weights1.grad[0, 0])
x2d = torch.randn(1, 2, 8, 8)
x_ft = torch.fft.rfft2(x2d)
w2 = torch.rand(2, 3, 3, 3, dtype=torch.cfloat)
out_ft = torch.zeros(1, 3, 8, 5, dtype=torch.cfloat)
out_ft[:, :, :3, :3] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, :3, :3], w2)
out_ft[:, :, -3:, :3] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, -3:, :3], w2)
y2d = torch.fft.irfft2(out_ft, s=(x2d.size(-2), x2d.size(-1)))
print("spectral 2d", y2d.shape, y2d[0, 0, 0, :4])
print("RESULT: ok")
