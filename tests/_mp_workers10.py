"""Child-process bodies for tests/test_tensor_fixes10.py (importable by spawned children)."""
import importlib


def make_net(torch):
    """A small Hogwild model: mnist_hogwild's Net shrunk to vectors."""
    nn = torch.nn
    F = importlib.import_module(torch.__name__ + ".nn.functional")

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(8, 16)
            self.bn = nn.BatchNorm1d(16)
            self.fc2 = nn.Linear(16, 4)

        def forward(self, x):
            x = F.relu(self.bn(self.fc1(x)))
            return F.log_softmax(self.fc2(x), dim=1)

    return Net()


def train(rank, lib_name, model, data, target, steps):
    """mnist_hogwild's ``train``: SGD on the shared model for ``steps`` steps."""
    torch = importlib.import_module(lib_name)
    F = importlib.import_module(lib_name + ".nn.functional")
    torch.manual_seed(1 + rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
    model.train()
    for _ in range(steps):
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()


def bump(lib_name, arg, q_in, q_out):
    """Double ``arg`` (a Process argument); receive tensors, change them in place, report what
    was seen and send them back."""
    importlib.import_module(lib_name)
    arg.mul_(2)
    t, view, p = q_in.get(timeout=60)
    t.add_(1)
    view.mul_(10)
    p.data.sub_(5)
    q_out.put((t.is_shared(), view.is_shared(), type(p).__name__, p.requires_grad,
               t.tolist(), t, p))
    q_in.get(timeout=60)        # (stay alive until the parent has read the reply)
