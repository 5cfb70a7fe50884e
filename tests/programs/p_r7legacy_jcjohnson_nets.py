"""jcjohnson/pytorch-examples as written for PyTorch 0.2/0.3 (2017), shrunk and run on modern
torch: two_layer_net_tensor.py (``dtype = torch.FloatTensor`` / ``torch.cuda.FloatTensor``,
``torch.randn(N, D_in).type(dtype)``, ``.mm``, ``.clamp``, manual backprop),
two_layer_net_variable.py (``Variable(..., requires_grad=False)``, ``w1.data -= lr *
w1.grad.data``, ``w1.grad.data.zero_()``, ``loss.data[0]``), two_layer_net_custom_function.py
(``MyReLU`` in its static form),
two_layer_net_nn.py (``torch.nn.MSELoss(size_average=False)``, ``param.data -= lr *
param.grad.data``), two_layer_net_optim.py and dynamic_net.py. Sizes shrunk; the dynamic net's
``random.randint`` is seeded."""
import importlib
import os
import random
import warnings

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
Variable = importlib.import_module(LIB + ".autograd").Variable


def show_warnings(ws):
    for w in ws:
        print("  warning:", w.category.__name__, str(w.message).split(" (Triggered internally")[0])


torch.manual_seed(0)
dtype = torch.FloatTensor
# dtype = torch.cuda.FloatTensor # Uncomment this to run on GPU
if torch.cuda.is_available():
    dtype = torch.cuda.FloatTensor
print("dtype:", dtype.__name__, "cuda:", torch.cuda.is_available())

N, D_in, H, D_out = 16, 20, 12, 5

# ---- two_layer_net_tensor.py -------------------------------------------------------------
x = torch.randn(N, D_in).type(dtype)
y = torch.randn(N, D_out).type(dtype)
w1 = torch.randn(D_in, H).type(dtype)
w2 = torch.randn(H, D_out).type(dtype)
print("x.type():", x.type(), "w1 is FloatTensor:", isinstance(w1, torch.FloatTensor))
learning_rate = 1e-4
for t in range(40):
    h = x.mm(w1)
    h_relu = h.clamp(min=0)
    y_pred = h_relu.mm(w2)
    loss = (y_pred - y).pow(2).sum()
    if t % 10 == 0:
        print("tensor", t, "%.4f" % loss)
    grad_y_pred = 2.0 * (y_pred - y)
    grad_w2 = h_relu.t().mm(grad_y_pred)
    grad_h_relu = grad_y_pred.mm(w2.t())
    grad_h = grad_h_relu.clone()
    grad_h[h < 0] = 0
    grad_w1 = x.t().mm(grad_h)
    w1 -= learning_rate * grad_w1
    w2 -= learning_rate * grad_w2

# ---- two_layer_net_variable.py -----------------------------------------------------------
torch.manual_seed(1)
x = Variable(torch.randn(N, D_in).type(dtype), requires_grad=False)
y = Variable(torch.randn(N, D_out).type(dtype), requires_grad=False)
w1 = Variable(torch.randn(D_in, H).type(dtype), requires_grad=True)
w2 = Variable(torch.randn(H, D_out).type(dtype), requires_grad=True)
print("Variable is a Tensor:", type(w1).__name__, isinstance(w1, Variable), w1.is_leaf)
for t in range(40):
    y_pred = x.mm(w1).clamp(min=0).mm(w2)
    loss = (y_pred - y).pow(2).sum()
    if t % 10 == 0:
        try:
            print("variable", t, loss.data[0])
        except IndexError as e:
            print("variable", t, "loss.data[0] ->", type(e).__name__, e)
            print("variable", t, "%.4f" % loss.item())
    loss.backward()
    w1.data -= learning_rate * w1.grad.data
    w2.data -= learning_rate * w2.grad.data
    w1.grad.data.zero_()
    w2.grad.data.zero_()
print("w1.grad after zero_:", float(w1.grad.abs().sum()), "loss.data:", type(loss.data).__name__,
      loss.data.requires_grad, loss.data.dim())


# ---- two_layer_net_custom_function.py (the static form; the 2017 non-static one is refused)
class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input


for t in range(30):
    relu = MyReLU.apply
    y_pred = relu(x.mm(w1)).mm(w2)
    loss = (y_pred - y).pow(2).sum()
    if t % 10 == 0:
        print("custom", t, "%.4f" % loss.item(), type(y_pred.grad_fn.next_functions[0][0]).__name__)
    loss.backward()
    w1.data -= learning_rate * w1.grad.data
    w2.data -= learning_rate * w2.grad.data
    w1.grad.data.zero_()
    w2.grad.data.zero_()

# ---- two_layer_net_nn.py: size_average=False ---------------------------------------------
torch.manual_seed(2)
model = torch.nn.Sequential(
    torch.nn.Linear(D_in, H),
    torch.nn.ReLU(),
    torch.nn.Linear(H, D_out),
)
with warnings.catch_warnings(record=True) as ws:
    warnings.simplefilter("always")
    loss_fn = torch.nn.MSELoss(size_average=False)
show_warnings(ws)
print("loss_fn.reduction:", loss_fn.reduction)
for t in range(40):
    y_pred = model(x)
    loss = loss_fn(y_pred, y)
    if t % 10 == 0:
        print("nn", t, "%.4f" % loss.item())
    model.zero_grad()
    loss.backward()
    for param in model.parameters():
        param.data -= learning_rate * 10 * param.grad.data
for name, combo in (("reduce=False", dict(reduce=False)),
                    ("size_average=True", dict(size_average=True)),
                    ("sa=False,reduce=False", dict(size_average=False, reduce=False))):
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        fn = torch.nn.MSELoss(**combo)
    print(name, "->", fn.reduction, tuple(fn(model(x), y).shape))
    show_warnings(ws)

# ---- two_layer_net_optim.py --------------------------------------------------------------
torch.manual_seed(3)
model = torch.nn.Sequential(torch.nn.Linear(D_in, H), torch.nn.ReLU(), torch.nn.Linear(H, D_out))
loss_fn = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for t in range(40):
    loss = loss_fn(model(x), y)
    if t % 10 == 0:
        print("optim", t, "%.4f" % loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


# ---- dynamic_net.py ----------------------------------------------------------------------
class DynamicNet(torch.nn.Module):
    def __init__(self, D_in, H, D_out):
        super(DynamicNet, self).__init__()
        self.input_linear = torch.nn.Linear(D_in, H)
        self.middle_linear = torch.nn.Linear(H, H)
        self.output_linear = torch.nn.Linear(H, D_out)

    def forward(self, x):
        h_relu = self.input_linear(x).clamp(min=0)
        for _ in range(random.randint(0, 3)):
            h_relu = self.middle_linear(h_relu).clamp(min=0)
        return self.output_linear(h_relu)


random.seed(0)
torch.manual_seed(4)
model = DynamicNet(D_in, H, D_out)
criterion = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.9)
for t in range(30):
    y_pred = model(x)
    loss = criterion(y_pred, y)
    if t % 10 == 0:
        print("dynamic", t, "%.4f" % loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
