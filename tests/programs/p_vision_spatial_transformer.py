"""The Spatial Transformer Networks tutorial (affine_grid + grid_sample), shrunk, synthetic."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
optim = torch.optim

torch.manual_seed(7)
device = torch.device("cpu")


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)
        self.localization = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=7),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True),
            nn.Conv2d(8, 10, kernel_size=5),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True)
        )
        self.fc_loc = nn.Sequential(
            nn.Linear(10 * 3 * 3, 32),
            nn.ReLU(True),
            nn.Linear(32, 3 * 2)
        )
        self.fc_loc[2].weight.data.zero_()
        self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

    def stn(self, x):
        xs = self.localization(x)
        xs = xs.view(-1, 10 * 3 * 3)
        theta = self.fc_loc(xs)
        theta = theta.view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        x = F.grid_sample(x, grid, align_corners=False)
        return x

    def forward(self, x):
        x = self.stn(x)
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


model = Net().to(device)
print(model)
optimizer = optim.SGD(model.parameters(), lr=0.01)
data_all = torch.randn(32, 1, 28, 28)
target_all = torch.randint(0, 10, (32,))
train_loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(data_all, target_all), batch_size=8, shuffle=True)
test_loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(data_all[:16], target_all[:16]), batch_size=8)


def train(epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
            epoch, batch_idx * len(data), len(train_loader.dataset),
            100. * batch_idx / len(train_loader), loss.item()))


def test():
    with torch.no_grad():
        model.eval()
        test_loss = 0
        correct = 0
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, size_average=False).item()
            pred = output.max(1, keepdim=True)[1]
            correct += pred.eq(target.view_as(pred)).sum().item()
        test_loss /= len(test_loader.dataset)
        print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'
              .format(test_loss, correct, len(test_loader.dataset),
                      100. * correct / len(test_loader.dataset)))


for epoch in range(1, 3):
    train(epoch)
    test()

with torch.no_grad():
    data = next(iter(test_loader))[0].to(device)
    input_tensor = data.cpu()
    transformed_input_tensor = model.stn(data).cpu()
    print(transformed_input_tensor.shape, (transformed_input_tensor - input_tensor).abs().max())

theta = torch.tensor([[[0.8, -0.3, 0.1], [0.25, 0.9, -0.2]]], requires_grad=True)
img = torch.arange(20.).view(1, 1, 4, 5)
for ac in (False, True):
    grid = F.affine_grid(theta, (1, 1, 3, 4), align_corners=ac)
    for mode in ("bilinear", "nearest", "bicubic"):
        for pm in ("zeros", "border", "reflection"):
            out = F.grid_sample(img, grid, mode=mode, padding_mode=pm, align_corners=ac)
            print(ac, mode, pm, out.view(-1)[:6])
out = F.grid_sample(img, F.affine_grid(theta, (1, 1, 3, 4), align_corners=False),
                    align_corners=False)
out.sum().backward()
print(theta.grad, out.grad_fn)
print("RESULT:", model.fc_loc[2].bias.detach())
