"""pytorch/examples mnist/main.py as of late 2017 (PyTorch 0.2/0.3) plus yunjey/pytorch-tutorial's
2017 logistic_regression/main.py, shrunk and run on modern torch with the old idioms kept:
``Variable(data), Variable(target)``, ``volatile=True`` at test time (warns, no effect),
``F.log_softmax(x)`` without ``dim`` (implicit-dim warning), ``F.dropout(x,
training=self.training)``, ``F.nll_loss(output, target, size_average=False).data``,
``loss.data[0]`` (IndexError on modern torch, so the print falls back to ``.item()``),
``output.data.max(1, keepdim=True)[1]``, ``pred.eq(target.data.view_as(pred)).cpu().sum()``,
``torch.max(outputs.data, 1)``, ``100 * correct / total`` with ``correct`` now a tensor, and
``args.cuda`` guarded by ``torch.cuda.is_available()``. Synthetic 16x16 "digits" instead of
MNIST; conv sizes shrunk."""
import importlib
import os
import warnings

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
optim = importlib.import_module(LIB + ".optim")
Variable = importlib.import_module(LIB + ".autograd").Variable
data_mod = importlib.import_module(LIB + ".utils.data")


class Args:
    batch_size, test_batch_size, epochs, lr, momentum, log_interval = 16, 40, 2, 0.05, 0.5, 4
    no_cuda, seed = False, 1


args = Args()
args.cuda = not args.no_cuda and torch.cuda.is_available()
torch.manual_seed(args.seed)
if args.cuda:
    torch.cuda.manual_seed(args.seed)


def make_digits(n, gen):
    """Ten fixed 16x16 prototypes plus noise; labels 0..9."""
    protos = torch.rand(10, 1, 16, 16, generator=torch.Generator().manual_seed(7)).gt(0.6).float()
    labels = torch.randint(0, 10, (n,), generator=gen)
    images = protos[labels] + 0.3 * torch.randn(n, 1, 16, 16, generator=gen)
    return (images - 0.1307) / 0.3081, labels


gen = torch.Generator().manual_seed(3)
train_x, train_y = make_digits(160, gen)
test_x, test_y = make_digits(80, gen)
kwargs = {"num_workers": 1, "pin_memory": True} if args.cuda else {}
train_loader = data_mod.DataLoader(data_mod.TensorDataset(train_x, train_y),
                                   batch_size=args.batch_size, shuffle=True, **kwargs)
test_loader = data_mod.DataLoader(data_mod.TensorDataset(test_x, test_y),
                                  batch_size=args.test_batch_size, shuffle=False, **kwargs)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 4, kernel_size=3)
        self.conv2 = nn.Conv2d(4, 8, kernel_size=3)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(32, 16)
        self.fc2 = nn.Linear(16, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 32)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x)


model = Net()
if args.cuda:
    model.cuda()
optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
seen = set()


def report(ws):
    for w in ws:
        text = "%s: %s" % (w.category.__name__, str(w.message).split(" (Triggered internally")[0])
        if text not in seen:
            seen.add(text)
            print("  warning:", text)


def train(epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        if args.cuda:
            data, target = data.cuda(), target.cuda()
        data, target = Variable(data), Variable(target)
        optimizer.zero_grad()
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            output = model(data)
        report(ws)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            try:
                value = loss.data[0]
            except IndexError as e:
                if batch_idx == 0 and epoch == 1:
                    print("  loss.data[0]:", type(e).__name__, e)
                value = loss.item()
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader), value))


def test():
    model.eval()
    test_loss = 0
    correct = 0
    for data, target in test_loader:
        if args.cuda:
            data, target = data.cuda(), target.cuda()
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            data, target = Variable(data, volatile=True), Variable(target)
            output = model(data)
            test_loss += F.nll_loss(output, target, size_average=False).data  # sum up batch loss
        report(ws)
        pred = output.data.max(1, keepdim=True)[1]  # get the index of the max log-probability
        correct += pred.eq(target.data.view_as(pred)).cpu().sum()
    print("  output.requires_grad under volatile:", output.requires_grad,
          "test_loss:", type(test_loss).__name__, test_loss.dim(), "correct:", correct)
    test_loss /= len(test_loader.dataset)
    print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        test_loss, correct, len(test_loader.dataset),
        100. * correct / len(test_loader.dataset)))


for epoch in range(1, args.epochs + 1):
    train(epoch)
    test()

# ---- yunjey/pytorch-tutorial (2017) logistic regression ----------------------------------
torch.manual_seed(5)
input_size, num_classes, num_epochs, learning_rate = 256, 10, 3, 0.05


class LogisticRegression(nn.Module):
    def __init__(self, input_size, num_classes):
        super(LogisticRegression, self).__init__()
        self.linear = nn.Linear(input_size, num_classes)

    def forward(self, x):
        return self.linear(x)


model = LogisticRegression(input_size, num_classes)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)
for epoch in range(num_epochs):
    for i, (images, labels) in enumerate(train_loader):
        images = Variable(images.view(-1, 16 * 16))
        labels = Variable(labels)
        optimizer.zero_grad()
        outputs = model(images)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()
        if (i + 1) % 5 == 0:
            print('Epoch: [%d/%d], Step: [%d/%d], Loss: %.4f'
                  % (epoch + 1, num_epochs, i + 1, len(train_x) // 16, loss.item()))
correct = 0
total = 0
for images, labels in test_loader:
    images = Variable(images.view(-1, 16 * 16))
    outputs = model(images)
    _, predicted = torch.max(outputs.data, 1)
    total += labels.size(0)
    correct += (predicted == labels).sum()
print('Accuracy of the model on the test images: %d %%' % (100 * correct / total))
print("100 * correct / total =", 100 * correct / total, "correct is", type(correct).__name__,
      correct.dtype)
torch.save(model.state_dict(), os.path.join(os.environ.get("TMPDIR", "/tmp"), "r7legacy_lr.pkl"))
print("saved keys:", list(model.state_dict().keys()))
