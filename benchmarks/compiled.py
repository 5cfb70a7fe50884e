"""ember.compile against eager ember and eager torch on W1-W4 and W6, ratios from one run.

Run: ``python -m benchmarks.compiled [--quick] [--cpu] [--rounds N] [--torch-compile] [--memory]
[--only W1,W3]``. Each workload is one training step (forward, backward, update). The variants
are timed in interleaved rounds (each round times every variant once, so a slow spell of a
shared machine hits them alike); the figure is the median of the rounds' mean step times.
``--cpu`` times the thread's CPU time instead of wall time (on a machine shared with other
processes it leaves out the time the process waits, and the ratios vary less between runs).
"numpy" is the NumPy floor of W1/W2: the same arithmetic written directly in NumPy with hand-
written gradients. ``--torch-compile`` adds ``torch.compile`` (default inductor backend; it
needs a C++ compiler and compiles for minutes on a small machine, outside the timed rounds) as
one more variant, reported side by side, not a target. Compare the ratios within one run.
"""
import statistics
import sys
import time

import numpy as np

import ember
from ember.compiler import compile as ember_compile


def w1(L, comp):
    x = L.randn(16, requires_grad=True)

    def f(x):
        return ((x * 2 + 1).relu() * x).sum()
    f = comp(f)

    def step():
        f(x).backward()
    return step


def w2(L, comp):
    X = L.randn(100, 13)
    y = L.randn(100, 1)
    w1_ = L.randn(13, 50, requires_grad=True)
    w2_ = L.randn(50, 1, requires_grad=True)

    def loss_fn(X, y):
        return (X.mm(w1_).clamp(min=0).mm(w2_) - y).pow(2).sum()
    loss_fn = comp(loss_fn)

    def step():
        loss_fn(X, y).backward()
        with L.no_grad():
            w1_.sub_(1e-6 * w1_.grad)
            w2_.sub_(1e-6 * w2_.grad)
            w1_.grad.zero_()
            w2_.grad.zero_()
    return step


def w3(L, comp):
    nn = L.nn
    L.manual_seed(0)
    m = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                      nn.Linear(512, 10))
    opt = L.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
    cm = comp(m)
    opt_step = comp(opt.step)
    X = L.randn(128, 784)
    y = L.randint(0, 10, (128,))

    def step():
        opt.zero_grad()
        nn.functional.cross_entropy(cm(X), y).backward()
        opt_step()
    return step


def _classifier(L, comp, model, opt, x, y, flat=None):
    cm = comp(model)
    opt_step = comp(opt.step)
    F = L.nn.functional

    def step():
        opt.zero_grad()
        out = cm(x)
        F.cross_entropy(out if flat is None else out.reshape(-1, flat), y).backward()
        opt_step()
    return step


def w4(L, comp):
    """W4 of benchmarks/workloads.py: a small CNN, batch 64, SGD with momentum."""
    nn = L.nn
    L.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
    opt = L.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
    return _classifier(L, comp, m, opt, L.randn(64, 1, 28, 28), L.randint(0, 10, (64,)))


def w6(L, comp):
    """W6 of benchmarks/workloads.py: a character LSTM (sequence 64, batch 32), Adam."""
    from .workloads import LSTM_SIZES, _CharLSTM
    vocab, emb, hidden, seq, batch = LSTM_SIZES
    L.manual_seed(0)
    m = _CharLSTM.make(L, vocab, emb, hidden)
    opt = L.optim.Adam(m.parameters(), lr=1e-3)
    return _classifier(L, comp, m, opt, L.randint(0, vocab, (seq, batch)),
                       L.randint(0, vocab, (seq * batch,)), flat=vocab)


def peak_memory(make, steps=3):
    """tracemalloc's peak (MiB) over one steady-state step of ember's ``make`` (NumPy reports
    its buffers to tracemalloc; torch's allocator does not, so ember only)."""
    import tracemalloc
    step = make
    for _ in range(steps):
        step()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        step()
        return (tracemalloc.get_traced_memory()[1] - base) / 2 ** 20
    finally:
        tracemalloc.stop()


def w1_numpy():
    x = np.random.default_rng(0).standard_normal(16).astype(np.float32)
    grad = np.zeros_like(x)

    def step():
        a = x * 2
        b = a + 1
        c = np.maximum(b, 0)
        d = c * x
        d.sum()
        g = np.ones_like(d)
        gc = g * x
        gx = g * c
        gb = gc.copy()
        gb[c <= 0] = 0
        gx += gb * 2
        grad[...] += gx
    return step


def w2_numpy():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 13)).astype(np.float32)
    y = rng.standard_normal((100, 1)).astype(np.float32)
    w1_ = rng.standard_normal((13, 50)).astype(np.float32)
    w2_ = rng.standard_normal((50, 1)).astype(np.float32)

    def step():
        h = X @ w1_
        r = np.maximum(h, 0)
        p = r @ w2_
        e = p - y
        (e * e).sum()
        ge = 2 * e
        gw2 = r.T @ ge
        gr = ge @ w2_.T
        gr[h <= 0] = 0
        gw1 = X.T @ gr
        w1_[...] -= 1e-6 * gw1
        w2_[...] -= 1e-6 * gw2
    return step


def _time_rounds(steps, n, rounds=7, clock=time.perf_counter):
    """Median over interleaved rounds of each step's mean time (seconds)."""
    for step in steps.values():
        for _ in range(5):
            step()
    samples = {k: [] for k in steps}
    for _ in range(rounds):
        for k, step in steps.items():
            t0 = clock()
            for _ in range(n):
                step()
            samples[k].append((clock() - t0) / n)
    return {k: statistics.median(v) for k, v in samples.items()}


def main(argv=()):
    argv = list(argv)
    quick = "--quick" in argv
    clock = time.thread_time if "--cpu" in argv else time.perf_counter
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else None
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:
        torch = None
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    except ImportError:
        pass
    only = argv[argv.index("--only") + 1].split(",") if "--only" in argv else None
    rows = []
    tc = {}
    for name, make, n, floor in (("W1", w1, 2000, w1_numpy), ("W2", w2, 500, w2_numpy),
                                 ("W3", w3, 20, None), ("W4", w4, 5, None),
                                 ("W6", w6, 3, None)):
        if only and name not in only:
            continue
        n = max(1, n // 20) if quick else n
        steps = {"compiled": make(ember, ember_compile), "eager": make(ember, lambda f: f)}
        if torch is not None:
            steps["torch"] = make(torch, lambda f: f)
            if "--torch-compile" in argv:
                steps["torch.compile"] = _torch_compiled(torch, make)
        if floor is not None:
            steps["numpy"] = floor()
        steps = {k: v for k, v in steps.items() if v is not None}
        t = _time_rounds(steps, n, rounds or (3 if quick else 7), clock)
        if "torch.compile" in steps:
            tc[name] = t["torch.compile"]
        rows.append((name, t["compiled"], t["eager"], t.get("torch", float("nan")),
                     t.get("numpy", float("nan"))))
    print("%-4s %13s %13s %13s %13s %9s %9s %9s" % (
        "", "compiled(us)", "eager(us)", "torch(us)", "numpy(us)", "c/eager", "c/torch",
        "c/numpy"))
    for name, c, e, t, f in rows:
        print("%-4s %13.1f %13.1f %13.1f %13.1f %9.2f %9.2f %9.2f" % (
            name, c * 1e6, e * 1e6, t * 1e6, f * 1e6, c / e, c / t, c / f))
    if "--memory" in argv:
        print("\npeak traced memory of one step (MiB): eager ember, compiled ember")
        for name, make in (("W3", w3), ("W4", w4)):
            e = peak_memory(make(ember, lambda f: f))
            c = peak_memory(make(ember, ember_compile))
            print("%-4s %8.2f %8.2f" % (name, e, c))
    if tc:
        print("\n%-4s %17s %13s %13s %17s" % ("", "torch.compile(us)", "compiled(us)",
                                              "torch(us)", "torch.compile/torch"))
        for name, c, e, t, f in rows:
            if name in tc:
                print("%-4s %17.1f %13.1f %13.1f %17.2f" % (name, tc[name] * 1e6, c * 1e6,
                                                           t * 1e6, tc[name] / t))
    return rows


def _torch_compiled(torch, make):
    """``make``'s step with ``torch.compile`` (None, with the reason, where it cannot run)."""
    try:
        step = make(torch, torch.compile)
        t0 = time.perf_counter()
        step()
        print("torch.compile: first step (compiling) %.1f s" % (time.perf_counter() - t0),
              file=sys.stderr)
        return step
    except Exception as e:  # noqa: BLE001  (no C++ compiler, an unsupported platform)
        print("torch.compile unavailable: %s: %s" % (type(e).__name__, e), file=sys.stderr)
        return None


if __name__ == "__main__":
    main(sys.argv[1:])
