"""The "Optimizing Model Parameters" tutorial (train_loop/test_loop, SGD, CrossEntropyLoss),
on a small synthetic FashionMNIST-shaped dataset."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
data = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".utils.data")
DataLoader, TensorDataset = data.DataLoader, data.TensorDataset

torch.manual_seed(0)
train_x = torch.rand(96, 1, 8, 8)
train_y = torch.randint(0, 10, (96,))
test_x = torch.rand(32, 1, 8, 8)
test_y = torch.randint(0, 10, (32,))
training_data = TensorDataset(train_x, train_y)
test_data = TensorDataset(test_x, test_y)

train_dataloader = DataLoader(training_data, batch_size=16)
test_dataloader = DataLoader(test_data, batch_size=16)


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(8 * 8, 32),
            nn.ReLU(),
            nn.Linear(32, 32),
            nn.ReLU(),
            nn.Linear(32, 10),
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


model = NeuralNetwork()
print(model)
learning_rate = 1e-1
batch_size = 16
epochs = 3

loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)
print(optimizer)


def train_loop(dataloader, model, loss_fn, optimizer):
    size = len(dataloader.dataset)
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        pred = model(X)
        loss = loss_fn(pred, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if batch % 2 == 0:
            loss, current = loss.item(), batch * batch_size + len(X)
            print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")


def test_loop(dataloader, model, loss_fn):
    model.eval()
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    test_loss, correct = 0, 0
    with torch.no_grad():
        for X, y in dataloader:
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()
    test_loss /= num_batches
    correct /= size
    print(f"Test Error: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")


for t in range(epochs):
    print(f"Epoch {t+1}\n-------------------------------")
    train_loop(train_dataloader, model, loss_fn, optimizer)
    test_loop(test_dataloader, model, loss_fn)
print("Done!")

# the same loop with momentum, weight decay and nesterov, and zero_grad(set_to_none=False)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True,
                            weight_decay=1e-4)
for X, y in train_dataloader:
    loss = loss_fn(model(X), y)
    optimizer.zero_grad(set_to_none=False)
    loss.backward()
    optimizer.step()
print(f"{loss.item():.5f}")
sd = optimizer.state_dict()
print(sd.keys())
print(sd["param_groups"])
print(list(sd["state"].keys()), list(sd["state"][0].keys()))
print(sd["state"][5]["momentum_buffer"])
print(model.linear_relu_stack[0].weight.grad.abs().sum() > 0)
optimizer.zero_grad()
print(model.linear_relu_stack[0].weight.grad)
torch.save(model.state_dict(), "/tmp/_p_optim_model_weights.pth")
model2 = NeuralNetwork()
print(model2.load_state_dict(torch.load("/tmp/_p_optim_model_weights.pth", weights_only=True)))
model2.eval()
print(torch.allclose(model2(test_x), model(test_x)))
print("RESULT: ok")
