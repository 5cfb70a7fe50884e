"""pytorch/examples mnist/main.py: conv/dropout/max_pool2d Net, Adadelta + StepLR, synthetic."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
optim = torch.optim
StepLR = torch.optim.lr_scheduler.StepLR


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(576, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def make_loader(n, batch_size, seed):
    g = torch.Generator().manual_seed(seed)
    data = torch.randn(n, 1, 16, 16, generator=g)
    target = torch.randint(0, 10, (n,), generator=g)
    data = (data - 0.1307) / 0.3081
    ds = torch.utils.data.TensorDataset(data, target)
    return torch.utils.data.DataLoader(ds, batch_size=batch_size, shuffle=False)


def train(args, model, device, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % args["log_interval"] == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader), loss.item()))


def test(model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction='sum').item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(test_loader.dataset)
    print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        test_loss, correct, len(test_loader.dataset),
        100. * correct / len(test_loader.dataset)))


args = {"log_interval": 2, "epochs": 2, "lr": 1.0, "gamma": 0.7}
torch.manual_seed(1)
device = torch.device("cpu")
train_loader = make_loader(64, 16, 0)
test_loader = make_loader(32, 16, 1)
model = Net().to(device)
print(model)
optimizer = optim.Adadelta(model.parameters(), lr=args["lr"])
scheduler = StepLR(optimizer, step_size=1, gamma=args["gamma"])
for epoch in range(1, args["epochs"] + 1):
    train(args, model, device, train_loader, optimizer, epoch)
    test(model, device, test_loader)
    scheduler.step()
    print(scheduler.get_last_lr())
print(list(model.state_dict().keys()))
print("RESULT:", model.fc2.bias.detach())
