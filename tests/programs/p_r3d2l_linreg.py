"""d2l.ai chapter 3: linear regression from scratch and concise (synthetic data, shrunk)."""
# ruff: noqa: E721, E741  (d2l's own idioms: type(m) == nn.Linear, loss named l)
import importlib
import os
import random

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
data = torch.utils.data

random.seed(0)
torch.manual_seed(0)


def synthetic_data(w, b, num_examples):
    """Generate y = Xw + b + noise."""
    X = torch.normal(0, 1, (num_examples, len(w)))
    y = torch.matmul(X, w) + b
    y += torch.normal(0, 0.01, y.shape)
    return X, y.reshape((-1, 1))


true_w = torch.tensor([2, -3.4])
true_b = 4.2
features, labels = synthetic_data(true_w, true_b, 200)
print('features:', features[0], '\nlabel:', labels[0])
print(features.shape, labels.shape, features.dtype)


def data_iter(batch_size, features, labels):
    num_examples = len(features)
    indices = list(range(num_examples))
    random.shuffle(indices)
    for i in range(0, num_examples, batch_size):
        batch_indices = torch.tensor(indices[i: min(i + batch_size, num_examples)])
        yield features[batch_indices], labels[batch_indices]


batch_size = 10
for X, y in data_iter(batch_size, features, labels):
    print(X, '\n', y)
    break

w = torch.normal(0, 0.01, size=(2, 1), requires_grad=True)
b = torch.zeros(1, requires_grad=True)
print(w, b)


def linreg(X, w, b):
    """The linear regression model."""
    return torch.matmul(X, w) + b


def squared_loss(y_hat, y):
    """Squared loss."""
    return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2


def sgd(params, lr, batch_size):
    """Minibatch stochastic gradient descent."""
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()


lr = 0.03
num_epochs = 3
net = linreg
loss = squared_loss
for epoch in range(num_epochs):
    for X, y in data_iter(batch_size, features, labels):
        l = loss(net(X, w, b), y)  # noqa: E741
        l.sum().backward()
        sgd([w, b], lr, batch_size)
    with torch.no_grad():
        train_l = loss(net(features, w, b), labels)
        print(f'epoch {epoch + 1}, loss {float(train_l.mean()):f}')
print(f'error in estimating w: {true_w - w.reshape(true_w.shape)}')
print(f'error in estimating b: {true_b - b}')
print(w.grad, b.grad, w.is_leaf, l.grad_fn)


def load_array(data_arrays, batch_size, is_train=True):
    """Construct a PyTorch data iterator."""
    dataset = data.TensorDataset(*data_arrays)
    return data.DataLoader(dataset, batch_size, shuffle=is_train)


torch.manual_seed(1)
data_iter2 = load_array((features, labels), batch_size)
print(next(iter(data_iter2)))
print(len(data_iter2), len(data_iter2.dataset))

net = nn.Sequential(nn.Linear(2, 1))
print(net)
net[0].weight.data.normal_(0, 0.01)
net[0].bias.data.fill_(0)
print(net[0].weight.data, net[0].bias.data)
loss = nn.MSELoss()
print(loss, loss.reduction)
trainer = torch.optim.SGD(net.parameters(), lr=0.03)
print(trainer)
for epoch in range(num_epochs):
    for X, y in data_iter2:
        l = loss(net(X), y)  # noqa: E741
        trainer.zero_grad()
        l.backward()
        trainer.step()
    l = loss(net(features), labels)  # noqa: E741
    print(f'epoch {epoch + 1}, loss {l:f}')
w = net[0].weight.data
print('error in estimating w:', true_w - w.reshape(true_w.shape))
b = net[0].bias.data
print('error in estimating b:', true_b - b)
print(net[0].weight.grad)
huber = nn.HuberLoss()
print(huber, huber(net(features), labels))
print(nn.SmoothL1Loss(beta=0.5)(net(features), labels))
print(trainer.state_dict()['param_groups'])
print("RESULT:", f"{float(l):.6f}")
