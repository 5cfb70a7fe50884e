"""'Learning to learn by gradient descent by gradient descent' (Andrychowicz et al.), shrunk
from the PyTorch ports (chenwydj/learning-to-learn-by-gradient-descent-by-gradient-descent,
ikostrikov/pytorch-meta-optimizer): a coordinate-wise LSTM optimizer with gradient
preprocessing (log/sign), unrolled on quadratic functions with create_graph=True, optimizee
parameters as non-leaf tensors with retain_grad, truncated BPTT with detach_()/requires_grad_,
and the LSTM trained by Adam; compared against hand-tuned SGD/Adam on held-out quadratics."""
import importlib
import math
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn


class QuadraticLoss:
    def __init__(self, dim=5):
        self.W = torch.randn(dim, dim)
        self.y = torch.randn(dim)

    def get_loss(self, theta):
        return torch.sum((self.W.matmul(theta) - self.y) ** 2)


def preprocess_gradients(x, p=10.0):
    """The paper's appendix A: (log|g|/p, sign(g)) or (-1, e^p g)."""
    x = x.unsqueeze(-1)
    indicator = (x.abs() >= math.exp(-p)).float()
    x1 = (x.abs() + 1e-8).log() / p * indicator - (1 - indicator)
    x2 = x.sign() * indicator + math.exp(p) * x * (1 - indicator)
    return torch.cat((x1, x2), -1)


class LSTMOptimizer(nn.Module):
    def __init__(self, preproc=True, hidden_sz=20, preproc_factor=10.0):
        super().__init__()
        self.hidden_sz = hidden_sz
        self.preproc = preproc
        self.preproc_factor = preproc_factor
        self.recurs = nn.LSTMCell(2 if preproc else 1, hidden_sz)
        self.recurs2 = nn.LSTMCell(hidden_sz, hidden_sz)
        self.output = nn.Linear(hidden_sz, 1)

    def forward(self, inp, hidden, cell):
        if self.preproc:
            inp = preprocess_gradients(inp, self.preproc_factor)
        else:
            inp = inp.unsqueeze(-1)
        hidden0, cell0 = self.recurs(inp, (hidden[0], cell[0]))
        hidden1, cell1 = self.recurs2(hidden0, (hidden[1], cell[1]))
        return self.output(hidden1).squeeze(-1), (hidden0, hidden1), (cell0, cell1)


def do_fit(opt_net, meta_opt, target, n_epochs, unroll, out_mul, should_train=True, dim=5):
    if should_train:
        opt_net.train()
    else:
        opt_net.eval()
        unroll = 1
    theta = torch.zeros(dim, requires_grad=True)
    hidden_states = [torch.zeros(dim, opt_net.hidden_sz) for _ in range(2)]
    cell_states = [torch.zeros(dim, opt_net.hidden_sz) for _ in range(2)]
    all_losses_ever = []
    if should_train:
        meta_opt.zero_grad()
    all_losses = None
    for iteration in range(1, n_epochs + 1):
        loss = target.get_loss(theta)
        all_losses = loss if all_losses is None else all_losses + loss
        all_losses_ever.append(loss.item())
        loss.backward(retain_graph=should_train)
        grads = theta.grad.detach()
        updates, new_hidden, new_cell = opt_net(grads, hidden_states, cell_states)
        hidden_states, cell_states = list(new_hidden), list(new_cell)
        new_theta = theta + updates * out_mul
        new_theta.retain_grad()
        theta = new_theta
        if iteration % unroll == 0:
            if should_train:
                meta_opt.zero_grad()
                all_losses.backward()
                meta_opt.step()
            all_losses = None
            theta = theta.detach().requires_grad_(True)
            hidden_states = [h.detach() for h in hidden_states]
            cell_states = [c.detach() for c in cell_states]
        elif not should_train:
            theta = theta.detach().requires_grad_(True)
    return all_losses_ever


def fit_normal(target, opt_class, n_epochs, dim=5, **kwargs):
    theta = torch.zeros(dim, requires_grad=True)
    optimizer = opt_class([theta], **kwargs)
    losses = []
    for _ in range(n_epochs):
        loss = target.get_loss(theta)
        losses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return losses


torch.manual_seed(0)
opt_net = LSTMOptimizer()
meta_opt = torch.optim.Adam(opt_net.parameters(), lr=3e-3)
print("lstm params", [(n, tuple(p.shape)) for n, p in opt_net.named_parameters()][:3],
      sum(p.numel() for p in opt_net.parameters()))
print("preproc", preprocess_gradients(torch.tensor([1e-6, -2.0, 0.0, 3e-5])).tolist())
for epoch in range(3):
    torch.manual_seed(100 + epoch)
    losses = do_fit(opt_net, meta_opt, QuadraticLoss(), n_epochs=20, unroll=10, out_mul=0.1)
    print("meta-train", epoch, [round(v, 4) for v in losses[::5]], round(losses[-1], 4))
gn = sum(p.grad.norm() ** 2 for p in opt_net.parameters() if p.grad is not None) ** 0.5
print("meta grad norm", round(gn.item(), 5), opt_net.output.bias.grad is not None)

torch.manual_seed(7)
targets = [QuadraticLoss() for _ in range(2)]
for i, target in enumerate(targets):
    lstm = do_fit(opt_net, None, target, n_epochs=15, unroll=1, out_mul=0.1, should_train=False)
    sgd = fit_normal(target, torch.optim.SGD, 15, lr=0.01)
    adam = fit_normal(target, torch.optim.Adam, 15, lr=0.1)
    print("eval", i, "lstm", round(lstm[-1], 4), "sgd", round(sgd[-1], 4), "adam",
          round(adam[-1], 4))

# the retain_grad'd non-leaf theta and its graph
theta = torch.zeros(5, requires_grad=True)
h = [torch.zeros(5, 20) for _ in range(2)]
c = [torch.zeros(5, 20) for _ in range(2)]
target = targets[0]
loss = target.get_loss(theta)
loss.backward(retain_graph=True)
upd, h, c = opt_net(theta.grad.detach(), h, c)
new_theta = theta + upd * 0.1
new_theta.retain_grad()
loss2 = target.get_loss(new_theta)
loss2.backward()
print("non-leaf", new_theta.is_leaf, new_theta.retains_grad, new_theta.grad is not None,
      type(new_theta.grad_fn).__name__, [round(v, 5) for v in new_theta.grad[:3].tolist()])
print("leaf theta grad accumulates", [round(v, 5) for v in theta.grad[:3].tolist()])
