"""``python -m ember demo``: how PyTorch builds its graph, told by running it, then trainings.

The story retells the notes this project started from (Chinese notes on how PyTorch builds its
graph): a custom ``Function`` (MyReLU) and its gradient, the dynamic graph and the version
counter, ``LinearFunction`` inside a ``Linear`` module, and Softplus computed naively and stably.
Then the notes' two-layer network on the diabetes data (manual SGD), an MLP and a small CNN on
the digits with ``optim.Adam``. Files go to ``--out`` (``./ember-demo``): ``loss.png``,
``graph.dot`` / ``graph.svg`` / ``graph.html`` (the MLP's backward graph) and
``model.safetensors`` (the CNN's weights, loadable by PyTorch).
"""
import os
import re
import shutil
import subprocess
import time
import warnings

import ember as torch
from ember import nn
from ember.autograd import Function

__all__ = ["run"]


class MyReLU(Function):
    """The notes' ReLU: save the input, send the gradient only where the input was positive."""

    @staticmethod
    def forward(ctx, input_):
        ctx.save_for_backward(input_)
        return input_.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input_, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input_ < 0] = 0
        return grad_input


class LinearFunction(Function):
    """The notes' ``y = x w^T + b`` with a hand-written backward."""

    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


class MyLinear(nn.Module):
    """A Module owns the parameters; the Function it calls owns the maths."""

    def __init__(self, input_features, output_features, bias=True):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(output_features, input_features))
        self.bias = nn.Parameter(torch.empty(output_features)) if bias else None
        self.weight.data.uniform_(-0.1, 0.1)
        if self.bias is not None:
            self.bias.data.uniform_(-0.1, 0.1)

    def forward(self, input):
        return LinearFunction.apply(input, self.weight, self.bias)


class Softplus(Function):
    """``log(1 + exp(x))`` computed as ``log1p(exp(-|x|)) + relu(x)``: never overflows."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.log1p(torch.exp(-x.abs())) + x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)


def _fmt(t):
    return "[" + ", ".join("%.4g" % v for v in t.tolist()) + "]"


def story():
    """Part 1: the notes' concepts, each shown by running it."""
    print("1. A custom Function: MyReLU.apply(x), x = [-1., 1., 2.]")
    x = torch.tensor([-1.0, 1.0, 2.0], requires_grad=True)
    y = MyReLU.apply(x)
    torch.sum(y).backward()
    print("   y      =", y)
    print("   x.grad =", x.grad, "  <- the ReLU lets the gradient through where x > 0")

    print("2. The graph is built as the code runs: y = x + 2; out = (y * y * 4).mean()")
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    out = (y * y * 4).mean()
    print("   y.grad_fn =", y.grad_fn.name(), "| out.grad_fn =",
          out.grad_fn.name(), "->", [f.name() for f, _ in
                                             out.grad_fn.next_functions if f is not None])
    out.backward()
    print("   x.grad =", x.grad.tolist(), "(d out/dx = 2 (x + 2) = 6)")
    a = torch.ones(3, requires_grad=True)
    b = a * 2
    c = b * b
    b.add_(1)
    try:
        c.sum().backward()
        print("   in-place change of a saved tensor: not detected (unexpected)")
    except RuntimeError as e:
        print("   a saved tensor changed in place, then backward() -> RuntimeError:\n     ",
              str(e).split(":")[0])

    print("3. Function vs Module: LinearFunction inside a Linear module")
    torch.manual_seed(0)
    layer = MyLinear(4, 3)
    x = torch.rand(2, 4, requires_grad=True)
    torch.sum(layer(x)).backward()
    expected = layer.weight.detach().sum(0).expand(2, 4)
    print("   parameters:", [name for name, _ in layer.named_parameters()],
          "| x.grad == column sums of W:", bool(torch.allclose(x.grad, expected)))

    print("4. Softplus at x = [-100, 0, 100] (float32)")
    x = torch.tensor([-100.0, 0.0, 100.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        naive = torch.log(1 + torch.exp(x))
        naive.sum().backward()
    naive_grad = x.grad.clone()
    x.grad = None
    stable = Softplus.apply(x)
    stable.sum().backward()
    print("   naive  log(1 + exp(x))           = %-24s grad %s" % (_fmt(naive), _fmt(naive_grad)))
    print("   stable log1p(exp(-|x|)) + relu(x) = %-24s grad %s" % (_fmt(stable), _fmt(x.grad)))


def two_layer_net(steps):
    """The notes' two-layer network, ``X.mm(w1).clamp(min=0).mm(w2)``, trained with manual SGD."""
    from tqdm import tqdm
    from ember.datasets import DiabetesDataset
    train = DiabetesDataset(train=True, standardize_target=True)
    test = DiabetesDataset(train=False, standardize_target=True)
    scale = 442 ** 0.5  # load_diabetes scales each column to unit norm; make it unit variance
    X, y = train.data * scale, train.targets
    D_in, H, lr = 10, 50, 1e-4
    torch.manual_seed(0)
    w1 = (torch.randn(D_in, H) / D_in ** 0.5).requires_grad_()
    w2 = (torch.randn(H, 1) / H ** 0.5).requires_grad_()
    losses = []
    for _ in tqdm(range(steps), desc="two-layer net", disable=None, leave=False):
        loss = (X.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            w1 -= lr * w1.grad
            w2 -= lr * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()
        losses.append(loss.item() / len(y))
    with torch.no_grad():
        pred = (test.data * scale).mm(w1).clamp(min=0).mm(w2)
        mse = (pred - test.targets).pow(2).mean().item()
        r2 = 1 - mse / float(test.targets.numpy().var())
    return losses, "train MSE %.3f, test MSE %.3f, test R^2 %.2f" % (losses[-1], mse, r2)


def mlp():
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))


def cnn():
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(32 * 2 * 2, 10))


def train_digits(name, model, flatten, epochs, lr):
    """A classifier on the digits: ``optim.Adam``, mini-batches of 64 from a DataLoader."""
    from tqdm import tqdm
    from ember.datasets import DigitsDataset
    from ember.utils.data import DataLoader
    train = DigitsDataset(train=True, flatten=flatten)
    test = DigitsDataset(train=False, flatten=flatten)
    loader = DataLoader(train, batch_size=64, shuffle=True,
                        generator=torch.Generator().manual_seed(0))
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses, epoch_loss = [], 0.0
    bar = tqdm(range(epochs), desc=name, disable=None, leave=False)
    for _ in bar:
        total = 0.0
        for images, labels in loader:
            loss = nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            total += losses[-1] * len(labels)
        epoch_loss = total / len(train)
        bar.set_postfix(loss="%.4f" % epoch_loss)
    with torch.no_grad():
        accuracy = (model(test.data).argmax(1) == test.targets).float().mean().item()
    return losses, accuracy, "train loss %.4f, test accuracy %.1f%% (%d images)" % (
        epoch_loss, 100 * accuracy, len(test))


def plot_losses(curves, path):
    """``loss.png``: the training loss of each run, step by step."""
    try:
        import matplotlib
    except ImportError:
        return "skipped: matplotlib not installed (pip install 'ember[plot]')"
    if not curves:
        return "skipped: nothing was trained"
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(curves), figsize=(4 * len(curves), 3), squeeze=False)
    for ax, (title, values) in zip(axes[0], curves.items()):
        ax.plot(range(1, len(values) + 1), values)
        ax.set_title(title)
        ax.set_xlabel("step")
        ax.set_yscale("log")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def draw_graph(model, out):
    """``graph.dot``, ``graph.html`` and ``graph.svg`` (Graphviz, else ember's own layout)."""
    images, labels = torch.zeros(2, 64), torch.tensor([0, 1])
    loss = nn.functional.cross_entropy(model(images), labels)
    params = dict(model.named_parameters())
    dot_path = os.path.join(out, "graph.dot")
    with open(dot_path, "w", encoding="utf-8") as f:
        f.write(str(torch.viz.make_dot(loss, params=params, show_saved=True)))
    html_path = os.path.join(out, "graph.html")
    torch.viz.to_html(loss, html_path, params=params, title="the MLP's backward graph")
    svg_path = os.path.join(out, "graph.svg")
    if shutil.which("dot"):
        subprocess.run(["dot", "-Tsvg", dot_path, "-o", svg_path], check=True, timeout=30)
    else:
        print("   graph.svg: drawn by ember's own layout (no Graphviz 'dot' program; "
              "apt install graphviz)")
        with open(html_path, encoding="utf-8") as f:
            svg = svg_of_html(f.read())
        with open(svg_path, "w", encoding="utf-8") as f:
            f.write(svg)
    return [dot_path, svg_path, html_path]


def svg_of_html(page):
    """The drawing inside an ``ember.viz.to_html`` page, as a standalone SVG document."""
    start, end = page.index("<svg"), page.index("</svg>") + len("</svg>")
    svg = page[start:end]
    style = ("<style>rect{stroke:#444;stroke-width:1} path.edge{fill:none;stroke:#555;"
             "stroke-width:1.2} text{font-family:monospace}</style>")
    view = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg)
    size = ' width="%s" height="%s"' % view.groups() if view else ""
    head = svg.index(">")
    return svg[:head] + size + ">" + style + svg[head + 1:]


def check_in_pytorch(model, path):
    """Load ``model.safetensors`` into the same network in PyTorch and compare outputs."""
    try:
        import torch as real_torch
        from safetensors.torch import load_file
    except ImportError:
        return "PyTorch check skipped (torch or safetensors not installed)"
    tnn = real_torch.nn
    twin = tnn.Sequential(tnn.Conv2d(1, 16, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2),
                          tnn.Conv2d(16, 32, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2),
                          tnn.Flatten(), tnn.Linear(32 * 2 * 2, 10))
    twin.load_state_dict(load_file(path))
    x = torch.rand(4, 1, 8, 8)
    with torch.no_grad(), real_torch.no_grad():
        diff = (twin(real_torch.tensor(x.numpy())).numpy() - model(x).numpy())
    return "PyTorch loads it: max |output difference| = %.1e" % abs(diff).max()


def _step(title, fn, failures):
    """Run one part; a failure is reported in one line and the demo goes on."""
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - the demo must go on and say what failed
        failures.append(title)
        print("   %s failed: %s: %s" % (title, type(e).__name__, str(e).splitlines()[0][:120]
                                         if str(e) else ""))
        return None


def _write_files(out, curves, models, failures):
    written = []
    path = _step("loss.png", lambda: plot_losses(curves, os.path.join(out, "loss.png")),
                 failures)
    if path and path.endswith(".png"):
        written.append(path)
    elif path:
        print("   loss.png " + path)
    if "MLP" in models:
        written += _step("graph", lambda: draw_graph(models["MLP"], out), failures) or []
    if "CNN" in models:
        path = os.path.join(out, "model.safetensors")
        if _step("model.safetensors", lambda: torch.save(models["CNN"].state_dict(), path) or path,
                 failures):
            written.append(path)
            note = _step("PyTorch check", lambda: check_in_pytorch(models["CNN"], path), failures)
            if note:
                print("   " + note)
    return written


def run(args):
    """Run the demo; returns the process exit status (1 when a part failed)."""
    quick = getattr(args, "quick", False)
    out = getattr(args, "out", "ember-demo")
    os.makedirs(out, exist_ok=True)
    with warnings.catch_warnings():
        # The models are small: one BLAS thread is fastest and never oversubscribes the cores.
        warnings.simplefilter("ignore")
        torch.set_num_threads(getattr(args, "threads", 1))
    start = time.perf_counter()
    failures, curves, report, models = [], {}, [], {}
    print("ember %s demo%s: PyTorch's autograd on NumPy\n" % (torch.version.ember,
                                                             " (quick)" if quick else ""))
    _step("the story", story, failures)
    torch.manual_seed(0)
    parts = [("two-layer net", "diabetes, manual SGD", None,
              lambda m: two_layer_net(60 if quick else 500)),
             ("MLP", "digits, Adam", mlp,
              lambda m: train_digits("MLP", m, True, 1 if quick else 15, 1e-2)),
             ("CNN", "digits, Adam", cnn,
              lambda m: train_digits("CNN", m, False, 1 if quick else 8, 3e-3))]
    for i, (name, what, make, fn) in enumerate(parts, start=5):
        print("\n%d. Training the %s (%s)" % (i, name, what))
        torch.manual_seed(0)
        t0 = time.perf_counter()
        model = _step(name, make, failures) if make is not None else None
        if make is not None and model is None:
            continue
        result = _step(name, lambda: fn(model), failures)
        if result is None:
            continue
        seconds = time.perf_counter() - t0
        if model is not None:
            models[name] = model
        curves[name] = result[0]
        print("   %s, %.1f s" % (result[-1], seconds))
        report.append("%-14s %s, %.1f s" % (name, result[-1], seconds))

    print("\n8. Files in %s/" % out)
    written = _write_files(out, curves, models, failures)
    print("\nSummary: %.1f s" % (time.perf_counter() - start))
    for line in report:
        print("   " + line)
    width = max((len(path) for path in written), default=0)
    for path in written:
        print("   wrote %-*s %8d bytes" % (width, path, os.path.getsize(path)))
    if failures:
        print("   failed parts: " + ", ".join(failures))
    return 1 if failures else 0
