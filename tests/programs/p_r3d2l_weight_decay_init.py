"""d2l.ai chapter 4-5: polynomial under/overfitting, weight decay from scratch (l2_penalty) and
concise (param groups with weight_decay), numerical stability (sigmoid gradients, products of
random matrices), Xavier initialization, Kaggle-style log-rmse and k-fold split (shrunk)."""
# ruff: noqa: E721, E741  (d2l's own idioms: type(m) == nn.Linear, loss named l)
import importlib
import math
import os

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
data = torch.utils.data
torch.manual_seed(0)

# polynomial regression data (NumPy, as in d2l)
max_degree = 8
n_train, n_test = 20, 20
true_w = np.zeros(max_degree)
true_w[0:4] = np.array([5, 1.2, -3.4, 5.6])
rs = np.random.RandomState(0)
features = rs.normal(size=(n_train + n_test, 1))
rs.shuffle(features)
poly_features = np.power(features, np.arange(max_degree).reshape(1, -1))
for i in range(max_degree):
    poly_features[:, i] /= math.gamma(i + 1)
labels = np.dot(poly_features, true_w)
labels += rs.normal(scale=0.1, size=labels.shape)
true_w, features, poly_features, labels = [torch.tensor(x, dtype=torch.float32)
                                           for x in [true_w, features, poly_features, labels]]
print(features[:2], poly_features[:2, :], labels[:2])


def load_array(data_arrays, batch_size, is_train=True):
    dataset = data.TensorDataset(*data_arrays)
    return data.DataLoader(dataset, batch_size, shuffle=is_train)


def evaluate_loss(net, data_iter, loss):
    total, n = 0.0, 0
    for X, y in data_iter:
        out = net(X)
        y = y.reshape(out.shape)
        l = loss(out, y)  # noqa: E741
        total += float(l.sum())
        n += l.numel()
    return total / n


def train(train_features, test_features, train_labels, test_labels, num_epochs=20):
    loss = nn.MSELoss(reduction='none')
    input_shape = train_features.shape[-1]
    net = nn.Sequential(nn.Linear(input_shape, 1, bias=False))
    batch_size = min(10, train_labels.shape[0])
    train_iter = load_array((train_features, train_labels.reshape(-1, 1)), batch_size)
    test_iter = load_array((test_features, test_labels.reshape(-1, 1)), batch_size,
                           is_train=False)
    trainer = torch.optim.SGD(net.parameters(), lr=0.01)
    for epoch in range(num_epochs):
        for X, y in train_iter:
            trainer.zero_grad()
            l = loss(net(X), y)  # noqa: E741
            l.mean().backward()
            trainer.step()
    print(f'train {evaluate_loss(net, train_iter, loss):.4f}, '
          f'test {evaluate_loss(net, test_iter, loss):.4f}')
    print('weight:', net[0].weight.data.numpy())


torch.manual_seed(1)
train(poly_features[:n_train, :4], poly_features[n_train:, :4], labels[:n_train],
      labels[n_train:])
train(poly_features[:n_train, :2], poly_features[n_train:, :2], labels[:n_train],
      labels[n_train:])
train(poly_features[:n_train, :], poly_features[n_train:, :], labels[:n_train],
      labels[n_train:], num_epochs=30)

# weight decay
n_train, n_test, num_inputs, batch_size = 20, 20, 50, 5
true_w, true_b = torch.ones((num_inputs, 1)) * 0.01, 0.05


def synthetic_data(w, b, num_examples):
    X = torch.normal(0, 1, (num_examples, len(w)))
    y = torch.matmul(X, w) + b
    y += torch.normal(0, 0.01, y.shape)
    return X, y.reshape((-1, 1))


train_data = synthetic_data(true_w, true_b, n_train)
train_iter = load_array(train_data, batch_size)
test_data = synthetic_data(true_w, true_b, n_test)
test_iter = load_array(test_data, batch_size, is_train=False)


def init_params():
    w = torch.normal(0, 1, size=(num_inputs, 1), requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    return [w, b]


def l2_penalty(w):
    return torch.sum(w.pow(2)) / 2


def linreg(X, w, b):
    return torch.matmul(X, w) + b


def squared_loss(y_hat, y):
    return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2


def sgd(params, lr, batch_size):
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()


def train_scratch(lambd):
    w, b = init_params()

    def net(X):
        return linreg(X, w, b)
    loss = squared_loss
    num_epochs, lr = 10, 0.003
    for epoch in range(num_epochs):
        for X, y in train_iter:
            l = loss(net(X), y) + lambd * l2_penalty(w)  # noqa: E741
            l.sum().backward()
            sgd([w, b], lr, batch_size)
    print(f'train {evaluate_loss(net, train_iter, loss):.5f} '
          f'test {evaluate_loss(net, test_iter, loss):.5f}')
    print('L2 norm of w:', torch.norm(w).item())


train_scratch(lambd=0)
train_scratch(lambd=3)


def train_concise(wd):
    net = nn.Sequential(nn.Linear(num_inputs, 1))
    for param in net.parameters():
        param.data.normal_()
    loss = nn.MSELoss(reduction='none')
    num_epochs, lr = 10, 0.003
    trainer = torch.optim.SGD([
        {"params": net[0].weight, 'weight_decay': wd},
        {"params": net[0].bias}], lr=lr)
    for epoch in range(num_epochs):
        for X, y in train_iter:
            trainer.zero_grad()
            l = loss(net(X), y)  # noqa: E741
            l.mean().backward()
            trainer.step()
    print(f'train {evaluate_loss(net, train_iter, loss):.5f} '
          f'test {evaluate_loss(net, test_iter, loss):.5f}')
    print('L2 norm of w:', net[0].weight.norm().item())
    print([(g['weight_decay'], g['lr'], g['momentum'], len(g['params']))
           for g in trainer.param_groups])
    return trainer


train_concise(0)
tr = train_concise(3)
print(sorted(tr.defaults.items()))

# numerical stability
x = torch.arange(-8.0, 8.0, 1.0, requires_grad=True)
y = torch.sigmoid(x)
y.backward(torch.ones_like(x))
print(y.detach()[:4], x.grad)
M = torch.normal(0, 1, size=(4, 4))
print('a single matrix \n', M)
for i in range(100):
    M = torch.mm(M, torch.normal(0, 1, size=(4, 4)))
print('after multiplying 100 matrices\n', M)

# initialization
for fan in [(64, 32), (32, 128)]:
    lin = nn.Linear(*fan)
    print(lin, lin.weight.std().item() < 1 / math.sqrt(fan[0]), lin.bias.abs().max().item()
          <= 1 / math.sqrt(fan[0]))
    nn.init.xavier_uniform_(lin.weight)
    print(round(lin.weight.abs().max().item(), 4) <= math.sqrt(6 / sum(fan)))
    nn.init.xavier_normal_(lin.weight, gain=nn.init.calculate_gain('tanh'))
    print(f"{lin.weight.std().item():.3f}", nn.init.calculate_gain('tanh'),
          nn.init.calculate_gain('leaky_relu', 0.2), nn.init.calculate_gain('relu'))
    nn.init.kaiming_uniform_(lin.weight, a=math.sqrt(5))
    nn.init.kaiming_normal_(lin.weight, mode='fan_out', nonlinearity='relu')
    nn.init.trunc_normal_(lin.bias, std=0.02)
    print(lin.weight[0, :3], lin.bias[:3])

# Kaggle house prices: log rmse, get_k_fold_data
torch.manual_seed(3)
X_all = torch.randn(30, 6)
y_all = torch.exp(X_all @ torch.rand(6, 1) * 0.3 + 12)
loss = nn.MSELoss()


def log_rmse(net, features, labels):
    clipped_preds = torch.clamp(net(features), 1, float('inf'))
    rmse = torch.sqrt(loss(torch.log(clipped_preds), torch.log(labels)))
    return rmse.item()


def get_k_fold_data(k, i, X, y):
    assert k > 1
    fold_size = X.shape[0] // k
    X_train, y_train = None, None
    for j in range(k):
        idx = slice(j * fold_size, (j + 1) * fold_size)
        X_part, y_part = X[idx, :], y[idx]
        if j == i:
            X_valid, y_valid = X_part, y_part
        elif X_train is None:
            X_train, y_train = X_part, y_part
        else:
            X_train = torch.cat([X_train, X_part], 0)
            y_train = torch.cat([y_train, y_part], 0)
    return X_train, y_train, X_valid, y_valid


def train_kaggle(net, train_features, train_labels, test_features, test_labels,
                 num_epochs, learning_rate, weight_decay, batch_size):
    train_ls, test_ls = [], []
    train_iter = load_array((train_features, train_labels), batch_size)
    optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate, weight_decay=weight_decay)
    for epoch in range(num_epochs):
        for X, y in train_iter:
            optimizer.zero_grad()
            l = loss(net(X), y)  # noqa: E741
            l.backward()
            optimizer.step()
        train_ls.append(log_rmse(net, train_features, train_labels))
        if test_labels is not None:
            test_ls.append(log_rmse(net, test_features, test_labels))
    return train_ls, test_ls


k = 3
train_l_sum, valid_l_sum = 0, 0
for i in range(k):
    data_k = get_k_fold_data(k, i, X_all, y_all)
    net = nn.Sequential(nn.Linear(6, 1))
    train_ls, valid_ls = train_kaggle(net, *data_k, 4, 5, 0, 8)
    train_l_sum += train_ls[-1]
    valid_l_sum += valid_ls[-1]
    print(f'fold {i + 1}, train log rmse {float(train_ls[-1]):f}, '
          f'valid log rmse {float(valid_ls[-1]):f}')
print(f'{k}-fold validation: avg train log rmse: {float(train_l_sum / k):f}, '
      f'avg valid log rmse: {float(valid_l_sum / k):f}')
print("RESULT:", f"{train_l_sum / k:.5f}")
