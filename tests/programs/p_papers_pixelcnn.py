"""PixelCNN (the jzbontar/pixelcnn-pytorch MaskedConv2d), shrunk: binarised synthetic 12x12
images, 256-way (here 4-way) pixel softmax, cross entropy, and sampling pixel by pixel."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
optim = torch.optim
Variable = torch.autograd.Variable


class MaskedConv2d(nn.Conv2d):
    def __init__(self, mask_type, *args, **kwargs):
        super(MaskedConv2d, self).__init__(*args, **kwargs)
        assert mask_type in {'A', 'B'}
        self.register_buffer('mask', self.weight.data.clone())
        _, _, kH, kW = self.weight.size()
        self.mask.fill_(1)
        self.mask[:, :, kH // 2, kW // 2 + (mask_type == 'B'):] = 0
        self.mask[:, :, kH // 2 + 1:] = 0

    def forward(self, x):
        self.weight.data *= self.mask
        return super(MaskedConv2d, self).forward(x)


torch.manual_seed(0)
fm = 16
net = nn.Sequential(
    MaskedConv2d('A', 1, fm, 7, 1, 3, bias=False), nn.BatchNorm2d(fm), nn.ReLU(True),
    MaskedConv2d('B', fm, fm, 5, 1, 2, bias=False), nn.BatchNorm2d(fm), nn.ReLU(True),
    MaskedConv2d('B', fm, fm, 3, 1, 1, bias=False), nn.BatchNorm2d(fm), nn.ReLU(True),
    nn.Conv2d(fm, 4, 1))
print(net)
print(net[0].mask[0, 0])
print(net[3].mask[0, 0])
print(list(net.state_dict().keys())[:6])
print(net[0].mask.requires_grad, net[0].mask.dtype, sorted(dict(net.named_buffers()))[:4])

torch.manual_seed(1)
data = (torch.rand(24, 1, 12, 12) * 4).floor() / 3
tr = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(data, torch.zeros(24)),
                                 batch_size=8, shuffle=True, num_workers=0, pin_memory=False)
optimizer = optim.Adam(net.parameters())
for epoch in range(2):
    err_tr = []
    net.train(True)
    for input, _ in tr:
        input = Variable(input)
        target = Variable((input.data[:, 0] * 3).long())
        loss = F.cross_entropy(net(input), target)
        err_tr.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, ' '.join(f"{e:.5f}" for e in err_tr))
print(f"{(net[0].weight.data * (1 - net[0].mask)).abs().sum().item():.1f}")

sample = torch.Tensor(2, 1, 12, 12)
sample.fill_(0)
net.train(False)
with torch.no_grad():
    for i in range(12):
        for j in range(12):
            out = net(Variable(sample))
            probs = F.softmax(out[:, :, i, j], dim=1).data
            sample[:, :, i, j] = torch.multinomial(probs, 1).float() / 3
print(sample[0, 0, :3])
print(out.shape, probs)
print(f"RESULT: {err_tr[-1]:.5f}")
