"""The workloads, each written once against the torch API and run on both libraries.

``build(lib, tiny=False, init=None)`` returns a :class:`Case`: ``case.step()`` runs one
training step and returns the loss (a 0-d tensor); ``case.init`` holds the initial weights as
NumPy arrays, which the runner copies into the other library so that both start equal.
"""
import numpy as np

__all__ = ["LSTM_SIZES", "MLP_SIZES", "Case", "Workload", "WORKLOADS", "by_key", "missing"]


class Case:
    """One built workload: ``step()`` -> loss; ``init`` -> {name: ndarray} initial weights."""

    def __init__(self, step, init, flops=0.0):
        self.step = step
        self.init = init
        self.flops = flops


def missing(lib, names):
    """The dotted attribute names (``"nn.Conv2d"``) that ``lib`` lacks, as a list."""
    out = []
    for name in names:
        obj = lib
        for part in name.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                out.append(name)
                break
    return out


def _data(shape, seed, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def _labels(n, classes, seed):
    return np.random.default_rng(seed).integers(0, classes, size=n).astype(np.int64)


def _state_of(model):
    return {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}


def _load(lib, model, init):
    """Copy ``init`` into ``model`` (``None``: keep the library's own initialisation)."""
    if init is not None:
        model.load_state_dict({k: lib.tensor(v) for k, v in init.items()})
    return _state_of(model)


def w1_overhead(lib, tiny=False, init=None):
    """``((x*2+1).relu()*x).sum().backward()`` on 16 elements: the Python cost of 5 small ops."""
    x = lib.tensor(_data(16, 1), requires_grad=True)

    def step():
        loss = ((x * 2 + 1).relu() * x).sum()
        loss.backward()
        return loss
    return Case(step, {})


def w2_two_layer(lib, tiny=False, init=None):
    """The the notes' two-layer net: mm, clamp, mm, squared error, manual SGD under no_grad."""
    n, d_in, d_h = (10, 4, 6) if tiny else (100, 13, 50)
    X = lib.tensor(_data((n, d_in), 2))
    y = lib.tensor(_data((n, 1), 3))
    w1 = lib.tensor(_data((d_in, d_h), 4), requires_grad=True)
    w2 = lib.tensor(_data((d_h, 1), 5), requires_grad=True)
    lr = 1e-5

    def step():
        loss = (X.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
        loss.backward()
        with lib.no_grad():
            w1.sub_(lr * w1.grad)
            w2.sub_(lr * w2.grad)
            w1.grad.zero_()
            w2.grad.zero_()
        return loss
    return Case(step, {})


def _classifier_step(lib, model, opt, x, target):
    F = lib.nn.functional

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), target)
        loss.backward()
        opt.step()
        return loss
    return step


MLP_SIZES = (784, 512, 10, 128)        # W3: input, hidden, classes, batch
LSTM_SIZES = (65, 64, 256, 64, 32)      # W6: vocabulary, embedding, hidden, steps, batch


def w3_mlp(lib, tiny=False, init=None):
    """MLP 784-512-512-10 on a batch of 128, cross_entropy, Adam."""
    nn = lib.nn
    d_in, h, classes, batch = (20, 16, 10, 8) if tiny else MLP_SIZES
    model = nn.Sequential(nn.Linear(d_in, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(),
                          nn.Linear(h, classes))
    init = _load(lib, model, init)
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    x = lib.tensor(_data((batch, d_in), 6))
    target = lib.tensor(_labels(batch, classes, 7))
    return Case(_classifier_step(lib, model, opt, x, target), init)


def w4_cnn(lib, tiny=False, init=None):
    """Conv-ReLU-MaxPool x2 then Linear on 64 28x28 images, cross_entropy, SGD momentum."""
    nn = lib.nn
    side, batch = (8, 4) if tiny else (28, 64)
    flat = 32 * (side // 4) ** 2
    model = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(flat, 10))
    init = _load(lib, model, init)
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = lib.tensor(_data((batch, 1, side, side), 8))
    target = lib.tensor(_labels(batch, 10, 9))
    return Case(_classifier_step(lib, model, opt, x, target), init)


def w5_gemm(lib, tiny=False, init=None):
    """Linear(n, n, bias=False) on an n x n batch, forward + backward (two n^3 GEMMs)."""
    n = 64 if tiny else 2048
    layer = lib.nn.Linear(n, n, bias=False)
    init = _load(lib, layer, init)
    x = lib.tensor(_data((n, n), 10))
    g = lib.tensor(_data((n, n), 11))

    def step():
        layer.weight.grad = None
        out = layer(x)
        out.backward(g)
        return layer.weight.grad.sum()
    return Case(step, init, flops=4.0 * n ** 3)


def numpy_gemm(tiny=False):
    """The same two GEMMs in raw NumPy: the machine's limit for W5."""
    n = 64 if tiny else 2048
    x = _data((n, n), 10)
    g = _data((n, n), 11)
    w = _data((n, n), 12)

    def step():
        x @ w.T
        g.T @ x
    return Case(step, {}, flops=4.0 * n ** 3)


class _CharLSTM:
    """Embedding -> LSTM -> Linear, built from ``lib.nn`` (a factory, not a subclass)."""

    @staticmethod
    def make(lib, vocab, emb, hidden):
        nn = lib.nn

        class CharLSTM(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(vocab, emb)
                self.lstm = nn.LSTM(emb, hidden)
                self.head = nn.Linear(hidden, vocab)

            def forward(self, idx):
                out, _ = self.lstm(self.embed(idx))
                return self.head(out)
        return CharLSTM()


def w6_lstm(lib, tiny=False, init=None):
    """Char-level LSTM: embedding 64, hidden 256, sequence 64, batch 32, Adam."""
    vocab, emb, hidden, seq, batch = (11, 8, 16, 5, 3) if tiny else LSTM_SIZES
    model = _CharLSTM.make(lib, vocab, emb, hidden)
    init = _load(lib, model, init)
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    idx = lib.tensor(_labels(seq * batch, vocab, 13).reshape(seq, batch))
    target = lib.tensor(_labels(seq * batch, vocab, 14))
    F = lib.nn.functional

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(idx).reshape(-1, vocab), target)
        loss.backward()
        opt.step()
        return loss
    return Case(step, init)


class Workload:
    """A named workload: how to build it, its unit, its target and what it needs."""

    def __init__(self, key, title, kind, build=None, unit="", scale=1.0, target=None,
                 requires=()):
        self.key = key
        self.title = title
        self.kind = kind          # "step" (timed ratio), "gemm", "import", "memory"
        self.build = build
        self.unit = unit
        self.scale = scale        # seconds -> unit
        self.target = target      # the ratio (or GEMM fraction, or seconds) to meet
        self.requires = requires


_NN = ("nn.Sequential", "nn.Linear", "nn.ReLU", "nn.functional.cross_entropy")
WORKLOADS = [
    Workload("W1", "op overhead ((x*2+1).relu()*x).sum().backward(), 16 elems", "step",
             w1_overhead, "us/iter", 1e6, 0.8, ("relu",)),
    Workload("W2", "the notes' two-layer net 100x13-50-1, manual SGD", "step", w2_two_layer,
             "us/step", 1e6, 0.8, ("mm", "clamp", "no_grad")),
    Workload("W3", "MLP 784-512-512-10, batch 128, cross_entropy, Adam", "step", w3_mlp,
             "ms/step", 1e3, 0.8, _NN + ("optim.Adam",)),
    Workload("W4", "CNN conv16-pool-conv32-pool-linear, batch 64, SGD momentum", "step",
             w4_cnn, "ms/step", 1e3, 1.5,
             _NN + ("nn.Conv2d", "nn.MaxPool2d", "nn.Flatten", "optim.SGD")),
    Workload("W5", "Linear(2048,2048,bias=False) fwd+bwd, 2048 batch", "gemm", w5_gemm,
             "GFLOP/s", 1.0, 0.9, ("nn.Linear",)),
    Workload("W6", "char LSTM emb 64, hidden 256, seq 64, batch 32, Adam", "step", w6_lstm,
             "ms/step", 1e3, 1.0,
             ("nn.Embedding", "nn.LSTM", "nn.Linear", "nn.functional.cross_entropy",
              "optim.Adam")),
    Workload("W7", "start-up: python -c 'import LIB'", "import", None, "s", 1.0, 0.25),
    Workload("W8", "memory: peak of one W3 / W4 step; growth over many steps", "memory",
             None, "MiB", 1.0, None),
]


def by_key(key):
    """The workload named ``key`` (``"W3"``), case-insensitive."""
    for w in WORKLOADS:
        if w.key.lower() == key.lower():
            return w
    raise KeyError("unknown workload %r (known: %s)"
                   % (key, ", ".join(w.key for w in WORKLOADS)))
