"""pytorch/examples super_resolution: ESPCN-style Net with PixelShuffle and orthogonal init."""
import importlib
import os
from math import log10

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
init = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.init")
optim = torch.optim


class Net(nn.Module):
    def __init__(self, upscale_factor):
        super(Net, self).__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 16, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(16, 16, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(16, 8, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(8, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
        self._initialize_weights()

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        x = self.pixel_shuffle(self.conv4(x))
        return x

    def _initialize_weights(self):
        init.orthogonal_(self.conv1.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv2.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv3.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv4.weight)


torch.manual_seed(123)
upscale_factor = 3
print(init.calculate_gain('relu'), init.calculate_gain('leaky_relu', 0.2),
      init.calculate_gain('tanh'))
hr = torch.rand(12, 1, 24, 24)
lr_imgs = torch.nn.functional.avg_pool2d(hr, upscale_factor)
train_set = torch.utils.data.TensorDataset(lr_imgs[:8], hr[:8])
test_set = torch.utils.data.TensorDataset(lr_imgs[8:], hr[8:])
training_data_loader = torch.utils.data.DataLoader(dataset=train_set, batch_size=4, shuffle=True)
testing_data_loader = torch.utils.data.DataLoader(dataset=test_set, batch_size=4, shuffle=False)
device = torch.device("cpu")
model = Net(upscale_factor=upscale_factor).to(device)
print(model)
w = model.conv4.weight.view(upscale_factor ** 2, -1)
print(torch.allclose(w @ w.t(), torch.eye(9), atol=1e-5))
criterion = nn.MSELoss()
optimizer = optim.Adam(model.parameters(), lr=0.01)


def train(epoch):
    epoch_loss = 0
    for iteration, batch in enumerate(training_data_loader, 1):
        input, target = batch[0].to(device), batch[1].to(device)
        optimizer.zero_grad()
        loss = criterion(model(input), target)
        epoch_loss += loss.item()
        loss.backward()
        optimizer.step()
        print("===> Epoch[{}]({}/{}): Loss: {:.4f}".format(
            epoch, iteration, len(training_data_loader), loss.item()))
    print("===> Epoch {} Complete: Avg. Loss: {:.4f}".format(
        epoch, epoch_loss / len(training_data_loader)))


def test():
    avg_psnr = 0
    with torch.no_grad():
        for batch in testing_data_loader:
            input, target = batch[0].to(device), batch[1].to(device)
            prediction = model(input)
            mse = criterion(prediction, target)
            psnr = 10 * log10(1 / mse.item())
            avg_psnr += psnr
    print("===> Avg. PSNR: {:.4f} dB".format(avg_psnr / len(testing_data_loader)))


for epoch in range(1, 4):
    train(epoch)
    test()
out = model(lr_imgs[:1])
print(out.shape, out.grad_fn)
ps = nn.PixelUnshuffle(upscale_factor)
print(ps, torch.equal(ps(model.pixel_shuffle(torch.arange(18.).view(1, 18, 1, 1))),
                      torch.arange(18.).view(1, 18, 1, 1)))
print("RESULT:", out[0, 0, 0, :5].detach())
