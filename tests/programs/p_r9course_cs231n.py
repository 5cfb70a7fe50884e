"""Stanford CS231n assignment 2 "PyTorch.ipynb", shrunk: Part II barebones PyTorch (flatten,
two_layer_fc / three_layer_convnet on raw tensors with F.conv2d, their shape tests,
random_weight (Kaiming) / zero_weight, check_accuracy_part2 and train_part2 updating the
weights by hand under torch.no_grad), Part III nn.Module API (TwoLayerFC, ThreeLayerConvNet
with nn.init.kaiming_normal_ / constant_, check_accuracy_part34, train_part34) and Part IV
nn.Sequential with a Flatten module and SGD with Nesterov momentum. A synthetic 3x8x8
"CIFAR" with SubsetRandomSampler train/val splits stands in for CIFAR-10."""

import importlib
import os

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
optim = torch.optim
data_mod = importlib.import_module(LIB + ".utils.data")
DataLoader, Dataset = data_mod.DataLoader, data_mod.Dataset
sampler = importlib.import_module(LIB + ".utils.data.sampler")

USE_GPU = True
dtype = torch.float32
if USE_GPU and torch.cuda.is_available():
    device = torch.device("cuda")
else:
    device = torch.device("cpu")
print_every = 4
print("using device:", device)

torch.manual_seed(0)
np.random.seed(0)


class TinyCIFAR(Dataset):
    """3x8x8 images of 10 classes: a class-dependent colour and a bright quadrant."""

    def __init__(self, n, train, seed):
        g = torch.Generator().manual_seed(seed)
        self.train = train
        self.labels = torch.arange(n) % 10
        colour = torch.linspace(-1, 1, 30, dtype=torch.float64).float().view(10, 3)
        self.data = torch.randn(n, 3, 8, 8, generator=g) * 0.6 + colour[self.labels].view(
            n, 3, 1, 1
        )
        for i in range(n):
            q = int(self.labels[i]) % 4
            self.data[i, :, (q // 2) * 4 : (q // 2) * 4 + 4, (q % 2) * 4 : (q % 2) * 4 + 4] += 1.0

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.data[i], int(self.labels[i])


NUM_TRAIN = 160
cifar10_train = TinyCIFAR(200, train=True, seed=1)
loader_train = DataLoader(
    cifar10_train, batch_size=32, sampler=sampler.SubsetRandomSampler(range(NUM_TRAIN))
)
cifar10_val = TinyCIFAR(200, train=True, seed=1)
loader_val = DataLoader(
    cifar10_val, batch_size=32, sampler=sampler.SubsetRandomSampler(range(NUM_TRAIN, 200))
)
cifar10_test = TinyCIFAR(60, train=False, seed=2)
loader_test = DataLoader(cifar10_test, batch_size=32)


# ---- Part II. Barebones PyTorch ----
def flatten(x):
    N = x.shape[0]  # read in N, C, H, W
    return x.view(N, -1)  # "flatten" the C * H * W values into a single vector per image


def test_flatten():
    x = torch.arange(12).view(2, 1, 3, 2)
    print("Before flattening: ", x)
    print("After flattening: ", flatten(x))


test_flatten()


def two_layer_fc(x, params):
    x = flatten(x)  # shape: [batch_size, C x H x W]
    w1, w2 = params
    x = F.relu(x.mm(w1))
    x = x.mm(w2)
    return x


def two_layer_fc_test():
    hidden_layer_size = 42
    x = torch.zeros((64, 50), dtype=dtype)  # minibatch size 64, feature dimension 50
    w1 = torch.zeros((50, hidden_layer_size), dtype=dtype)
    w2 = torch.zeros((hidden_layer_size, 10), dtype=dtype)
    scores = two_layer_fc(x, [w1, w2])
    print(scores.size())  # you should see [64, 10]


two_layer_fc_test()


def three_layer_convnet(x, params):
    conv_w1, conv_b1, conv_w2, conv_b2, fc_w, fc_b = params
    x = F.relu(F.conv2d(x, conv_w1, conv_b1, padding=2))
    x = F.relu(F.conv2d(x, conv_w2, conv_b2, padding=1))
    scores = flatten(x).mm(fc_w) + fc_b
    return scores


def three_layer_convnet_test():
    x = torch.zeros((64, 3, 32, 32), dtype=dtype)  # minibatch size 64, image size [3, 32, 32]
    conv_w1 = torch.zeros(
        (6, 3, 5, 5), dtype=dtype
    )  # [out_channel, in_channel, kernel_H, kernel_W]
    conv_b1 = torch.zeros((6,))  # out_channel
    conv_w2 = torch.zeros(
        (9, 6, 3, 3), dtype=dtype
    )  # [out_channel, in_channel, kernel_H, kernel_W]
    conv_b2 = torch.zeros((9,))  # out_channel
    fc_w = torch.zeros((9 * 32 * 32, 10))
    fc_b = torch.zeros(10)
    scores = three_layer_convnet(x, [conv_w1, conv_b1, conv_w2, conv_b2, fc_w, fc_b])
    print(scores.size())  # you should see [64, 10]


three_layer_convnet_test()


def random_weight(shape):
    if len(shape) == 2:  # FC weight
        fan_in = shape[0]
    else:
        fan_in = np.prod(shape[1:])  # conv weight [out_channel, in_channel, kH, kW]
    # randn is standard normal distribution generator.
    w = torch.randn(shape, device=device, dtype=dtype) * np.sqrt(2.0 / fan_in)
    w.requires_grad = True
    return w


def zero_weight(shape):
    return torch.zeros(shape, device=device, dtype=dtype, requires_grad=True)


# create a weight of shape [3 x 5]
w = random_weight((3, 5))
print(w.shape, w.requires_grad, w.dtype, round(w.std().item(), 4))


def check_accuracy_part2(loader, model_fn, params):
    split = "val" if loader.dataset.train else "test"
    print("Checking accuracy on the %s set" % split)
    num_correct, num_samples = 0, 0
    with torch.no_grad():
        for x, y in loader:
            x = x.to(device=device, dtype=dtype)  # move to device, e.g. GPU
            y = y.to(device=device, dtype=torch.int64)
            scores = model_fn(x, params)
            _, preds = scores.max(1)
            num_correct += (preds == y).sum()
            num_samples += preds.size(0)
        acc = float(num_correct) / num_samples
        print("Got %d / %d correct (%.2f%%)" % (num_correct, num_samples, 100 * acc))


def train_part2(model_fn, params, learning_rate):
    for t, (x, y) in enumerate(loader_train):
        # Move the data to the proper device (GPU or CPU)
        x = x.to(device=device, dtype=dtype)
        y = y.to(device=device, dtype=torch.long)

        # Forward pass: compute scores and loss
        scores = model_fn(x, params)
        loss = F.cross_entropy(scores, y)

        # Backward pass: PyTorch figures out which Tensors in the computational
        # graph has requires_grad=True and uses backprop to compute the gradient of
        # the loss with respect to these Tensors, and stores the gradients in the
        # .grad attribute of each Tensor.
        loss.backward()

        # Update parameters. We don't want to backpropagate through the
        # parameter updates, so we scope the updates under a torch.no_grad()
        # context manager to prevent a computational graph from being built.
        with torch.no_grad():
            for w in params:
                w -= learning_rate * w.grad

                # Manually zero the gradients after running the backward pass
                w.grad.zero_()

        if t % print_every == 0:
            print("Iteration %d, loss = %.4f" % (t, loss.item()))
            check_accuracy_part2(loader_val, model_fn, params)
            print()


hidden_layer_size = 64
learning_rate = 1e-2

w1 = random_weight((3 * 8 * 8, hidden_layer_size))
w2 = random_weight((hidden_layer_size, 10))

train_part2(two_layer_fc, [w1, w2], learning_rate)

channel_1 = 8
channel_2 = 6
learning_rate = 3e-3

conv_w1 = random_weight((channel_1, 3, 5, 5))
conv_b1 = zero_weight((channel_1,))
conv_w2 = random_weight((channel_2, channel_1, 3, 3))
conv_b2 = zero_weight((channel_2,))
fc_w = random_weight((channel_2 * 8 * 8, 10))
fc_b = zero_weight((10,))

params = [conv_w1, conv_b1, conv_w2, conv_b2, fc_w, fc_b]
train_part2(three_layer_convnet, params, learning_rate)
print("conv grads zeroed:", all(float(p.grad.abs().sum()) == 0 for p in params))


# ---- Part III. PyTorch Module API ----
class TwoLayerFC(nn.Module):
    def __init__(self, input_size, hidden_size, num_classes):
        super().__init__()
        # assign layer objects to class attributes
        self.fc1 = nn.Linear(input_size, hidden_size)
        # nn.init package contains convenient initialization methods
        # http://pytorch.org/docs/master/nn.html#torch-nn-init
        nn.init.kaiming_normal_(self.fc1.weight)
        self.fc2 = nn.Linear(hidden_size, num_classes)
        nn.init.kaiming_normal_(self.fc2.weight)

    def forward(self, x):
        # forward always defines connectivity
        x = flatten(x)
        scores = self.fc2(F.relu(self.fc1(x)))
        return scores


def test_TwoLayerFC():
    input_size = 50
    x = torch.zeros((64, input_size), dtype=dtype)  # minibatch size 64, feature dimension 50
    model = TwoLayerFC(input_size, 42, 10)
    scores = model(x)
    print(scores.size())  # you should see [64, 10]


test_TwoLayerFC()


class ThreeLayerConvNet(nn.Module):
    def __init__(self, in_channel, channel_1, channel_2, num_classes):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channel, channel_1, 5, padding=2, bias=True)
        nn.init.kaiming_normal_(self.conv1.weight)
        nn.init.constant_(self.conv1.bias, 0)
        self.conv2 = nn.Conv2d(channel_1, channel_2, 3, padding=1, bias=True)
        nn.init.kaiming_normal_(self.conv2.weight)
        nn.init.constant_(self.conv2.bias, 0)
        self.fc = nn.Linear(channel_2 * 8 * 8, num_classes)
        nn.init.kaiming_normal_(self.fc.weight)
        nn.init.constant_(self.fc.bias, 0)

    def forward(self, x):
        scores = None
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        scores = self.fc(flatten(x))
        return scores


def test_ThreeLayerConvNet():
    x = torch.zeros((64, 3, 8, 8), dtype=dtype)  # minibatch size 64, image size [3, 8, 8]
    model = ThreeLayerConvNet(in_channel=3, channel_1=12, channel_2=8, num_classes=10)
    scores = model(x)
    print(scores.size())  # you should see [64, 10]


test_ThreeLayerConvNet()


def check_accuracy_part34(loader, model):
    if loader.dataset.train:
        print("Checking accuracy on validation set")
    else:
        print("Checking accuracy on test set")
    num_correct = 0
    num_samples = 0
    model.eval()  # set model to evaluation mode
    with torch.no_grad():
        for x, y in loader:
            x = x.to(device=device, dtype=dtype)  # move to device, e.g. GPU
            y = y.to(device=device, dtype=torch.long)
            scores = model(x)
            _, preds = scores.max(1)
            num_correct += (preds == y).sum()
            num_samples += preds.size(0)
        acc = float(num_correct) / num_samples
        print("Got %d / %d correct (%.2f)" % (num_correct, num_samples, 100 * acc))
    return acc


def train_part34(model, optimizer, epochs=1):
    model = model.to(device=device)  # move the model parameters to CPU/GPU
    for e in range(epochs):
        for t, (x, y) in enumerate(loader_train):
            model.train()  # put model to training mode
            x = x.to(device=device, dtype=dtype)  # move to device, e.g. GPU
            y = y.to(device=device, dtype=torch.long)

            scores = model(x)
            loss = F.cross_entropy(scores, y)

            # Zero out all of the gradients for the variables which the optimizer
            # will update.
            optimizer.zero_grad()

            # This is the backwards pass: compute the gradient of the loss with
            # respect to each  parameter of the model.
            loss.backward()

            # Actually update the parameters of the model using the gradients
            # computed by the backwards pass.
            optimizer.step()

            if t % print_every == 0:
                print("Epoch %d, Iteration %d, loss = %.4f" % (e, t, loss.item()))
                check_accuracy_part34(loader_val, model)
                print()


hidden_layer_size = 64
learning_rate = 1e-2
model = TwoLayerFC(3 * 8 * 8, hidden_layer_size, 10)
optimizer = optim.SGD(model.parameters(), lr=learning_rate)
train_part34(model, optimizer)

learning_rate = 3e-3
channel_1 = 12
channel_2 = 8
model = ThreeLayerConvNet(in_channel=3, channel_1=channel_1, channel_2=channel_2, num_classes=10)
optimizer = optim.SGD(model.parameters(), lr=learning_rate)
train_part34(model, optimizer)


# ---- Part IV. PyTorch Sequential API ----
class Flatten(nn.Module):
    def forward(self, x):
        return flatten(x)


hidden_layer_size = 64
learning_rate = 1e-2

model = nn.Sequential(
    Flatten(),
    nn.Linear(3 * 8 * 8, hidden_layer_size),
    nn.ReLU(),
    nn.Linear(hidden_layer_size, 10),
)

# you can use Nesterov momentum in optim.SGD
optimizer = optim.SGD(model.parameters(), lr=learning_rate, momentum=0.9, nesterov=True)

train_part34(model, optimizer)

channel_1 = 12
channel_2 = 8
learning_rate = 1e-2
model = nn.Sequential(
    nn.Conv2d(3, channel_1, 5, padding=2),
    nn.ReLU(),
    nn.Conv2d(channel_1, channel_2, 3, padding=1),
    nn.ReLU(),
    Flatten(),
    nn.Linear(channel_2 * 8 * 8, 10),
)
optimizer = optim.SGD(model.parameters(), lr=learning_rate, momentum=0.9, nesterov=True)
train_part34(model, optimizer, epochs=2)
print(model)

# ---- Part V: the best model, checked on the test set ----
best_model = model
check_accuracy_part34(loader_test, best_model)
