"""The "Build the Neural Network" tutorial: a NeuralNetwork module with nn.Flatten and
nn.Sequential, print(model), logits -> softmax -> argmax, a layer-by-layer walk through and
named_parameters with sizes."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn

device = "cpu"
print(f"Using {device} device")


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


torch.manual_seed(0)
model = NeuralNetwork().to(device)
print(model)

X = torch.rand(1, 8, 8, device=device)
logits = model(X)
pred_probab = nn.Softmax(dim=1)(logits)
y_pred = pred_probab.argmax(1)
print(f"Predicted class: {y_pred}")
print(logits)
print(pred_probab)

input_image = torch.rand(3, 8, 8)
print(input_image.size())
flatten = nn.Flatten()
flat_image = flatten(input_image)
print(flat_image.size())
layer1 = nn.Linear(in_features=8 * 8, out_features=20)
hidden1 = layer1(flat_image)
print(hidden1.size())
print(f"Before ReLU: {hidden1}\n\n")
hidden1 = nn.ReLU()(hidden1)
print(f"After ReLU: {hidden1}")
seq_modules = nn.Sequential(
    flatten,
    layer1,
    nn.ReLU(),
    nn.Linear(20, 10)
)
input_image = torch.rand(3, 8, 8)
logits = seq_modules(input_image)
softmax = nn.Softmax(dim=1)
pred_probab = softmax(logits)
print(pred_probab)
print(pred_probab.sum(dim=1))

print(f"Model structure: {model}\n\n")
for name, param in model.named_parameters():
    print(f"Layer: {name} | Size: {param.size()} | Values : {param[:2]} \n")

print(sum(p.numel() for p in model.parameters()))
print(sum(p.numel() for p in model.parameters() if p.requires_grad))
print(model.linear_relu_stack[0])
print(model.linear_relu_stack[-1].weight.shape, model.linear_relu_stack[2].bias.dtype)
print(model.linear_relu_stack[1:3])
print(len(model.linear_relu_stack))
print(nn.Flatten(0, 1)(torch.ones(2, 3, 4)).shape, nn.Unflatten(1, (2, 2))(torch.ones(3, 4)).shape)
print(nn.Unflatten(1, (2, 2)), nn.Flatten(start_dim=2, end_dim=-1), nn.Identity())
print(nn.Softmax(dim=-1), nn.LogSoftmax(dim=1), nn.Softmax())
print(type(logits.grad_fn).__name__, type(pred_probab.grad_fn).__name__)

# one small optimisation step, as in the next tutorial
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
Xb = torch.rand(16, 8, 8)
yb = torch.randint(0, 10, (16,))
model.train()
for step in range(5):
    pred = model(Xb)
    loss = loss_fn(pred, yb)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print(f"loss: {loss.item():>7f}  [{(step + 1) * len(Xb):>5d}/{5 * len(Xb):>5d}]")
model.eval()
with torch.no_grad():
    pred = model(Xb)
    correct = (pred.argmax(1) == yb).type(torch.float).sum().item()
print(f"Accuracy: {(100 * correct / len(Xb)):>0.1f}%")
print("RESULT: ok")
