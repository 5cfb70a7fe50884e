"""Two PyTorch recipes, shrunk: "Defining a Neural Network in PyTorch"
(recipes/recipes/defining_a_neural_network.py: the MNIST ``Net`` with conv1/conv2/dropout1/
dropout2/fc1/fc2, its repr and a forward pass of ``torch.rand((1, 1, 28, 28))``) and "Zeroing
out gradients in PyTorch" (recipes/recipes/zeroing_out_gradients.py: the CIFAR ``Net`` trained
with ``optimizer.zero_grad()`` each step, on synthetic 3x32x32 images instead of CIFAR10), plus
what the recipe explains: gradients accumulate without zeroing, ``zero_grad()`` sets them to
None by default, ``set_to_none=False`` keeps zero tensors, ``model.zero_grad()`` vs the
optimizer's, and gradient accumulation over micro-batches matching one big batch."""
# compare: rtol=1e-4 atol=1e-5
import importlib
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
optim = importlib.import_module(LIB + ".optim")


class MnistNet(nn.Module):
    def __init__(self):
        super(MnistNet, self).__init__()
        # First 2D convolutional layer, taking in 1 input channel (image),
        # outputting 32 convolutional features, with a square kernel size of 3
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        # Second 2D convolutional layer, taking in the 32 input layers,
        # outputting 64 convolutional features, with a square kernel size of 3
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        # Designed to ensure that adjacent pixels are either all 0s or all active
        # with an input probability
        self.dropout1 = nn.Dropout2d(0.25)
        self.dropout2 = nn.Dropout2d(0.5)
        # First fully connected layer
        self.fc1 = nn.Linear(9216, 128)
        # Second fully connected layer that outputs our 10 labels
        self.fc2 = nn.Linear(128, 10)

    # x represents our data
    def forward(self, x):
        # Pass data through conv1
        x = self.conv1(x)
        # Use the rectified-linear activation function over x
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        # Run max pooling over x
        x = F.max_pool2d(x, 2)
        # Pass data through dropout1
        x = self.dropout1(x)
        # Flatten x with start_dim=1
        x = torch.flatten(x, 1)
        # Pass data through ``fc1``
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        # Apply softmax to x
        output = F.log_softmax(x, dim=1)
        return output


torch.manual_seed(0)
my_nn = MnistNet()
print(my_nn)
random_data = torch.rand((1, 1, 28, 28))
result = my_nn(random_data)
print(result.shape, result.grad_fn.name())
my_nn.eval()
result = my_nn(random_data)
print(result)
print(round(result.exp().sum().item(), 5), sum(p.numel() for p in my_nn.parameters()))


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(-1, 16 * 5 * 5)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


torch.manual_seed(1)
net = Net()
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
images = torch.randn(16, 3, 32, 32)
labels = torch.randint(0, 10, (16,))
trainloader = [(images[i:i + 4], labels[i:i + 4]) for i in range(0, 16, 4)]

for epoch in range(2):  # loop over the dataset multiple times
    running_loss = 0.0
    for i, data in enumerate(trainloader, 0):
        # get the inputs; data is a list of [inputs, labels]
        inputs, labels_ = data
        # zero the parameter gradients
        optimizer.zero_grad()
        # forward + backward + optimize
        outputs = net(inputs)
        loss = criterion(outputs, labels_)
        loss.backward()
        optimizer.step()
        # print statistics
        running_loss += loss.item()
        if i % 2 == 1:
            print('[%d, %5d] loss: %.3f' % (epoch + 1, i + 1, running_loss / 2))
            running_loss = 0.0
print('Finished Training')

# What zeroing is for: without it, gradients accumulate.
net.zero_grad()
print(net.conv1.weight.grad)
x, y = trainloader[0]
criterion(net(x), y).backward()
g1 = net.fc3.bias.grad.clone()
criterion(net(x), y).backward()
print(torch.allclose(net.fc3.bias.grad, 2 * g1), [round(v, 5) for v in g1[:4].tolist()])
optimizer.zero_grad(set_to_none=False)
print(net.fc3.bias.grad, net.fc3.bias.grad is not None)
optimizer.zero_grad()
print(net.fc3.bias.grad)
criterion(net(x), y).backward()
net.zero_grad(set_to_none=False)
print(net.fc3.bias.grad.abs().sum().item(), net.fc3.bias.grad.requires_grad)
for p in net.parameters():
    p.grad = None
print(all(p.grad is None for p in net.parameters()))

# Gradient accumulation: four micro-batches, scaled, equal one batch of 16.
torch.manual_seed(2)
a, b = Net(), Net()
b.load_state_dict(a.state_dict())
opt_a = optim.SGD(a.parameters(), lr=0.01)
opt_b = optim.SGD(b.parameters(), lr=0.01)
opt_a.zero_grad()
for inputs, labels_ in trainloader:
    (criterion(a(inputs), labels_) / len(trainloader)).backward()
opt_a.step()
opt_b.zero_grad()
criterion(b(images), labels).backward()
opt_b.step()
print(max((p - q).abs().max().item() for p, q in zip(a.parameters(), b.parameters())) < 1e-6)
print(round(a.fc3.weight.sum().item(), 5), round(b.conv1.bias.sum().item(), 5))

# A grad set to None skips that parameter in SGD with momentum (no buffer made).
opt = optim.SGD(a.parameters(), lr=0.1, momentum=0.9)
opt.zero_grad()
a.fc3.bias.sum().backward()
opt.step()
print(len(opt.state), [k for k in opt.state_dict()["state"]], a.fc3.bias.grad.tolist()[:3])
