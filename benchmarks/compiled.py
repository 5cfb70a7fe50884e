"""ember.compile against eager ember and eager torch on W1-W3, ratios from one run.

Run: ``python -m benchmarks.compiled [--quick]``. Each workload is one training step (forward,
backward, update); the figure is the best of 5 rounds' mean step time. Timings on a shared
machine are noisy: compare the ratios within one run.
"""
import sys
import time

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
    X = L.randn(128, 784)
    y = L.randint(0, 10, (128,))

    def step():
        opt.zero_grad()
        nn.functional.cross_entropy(cm(X), y).backward()
        opt.step()
    return step


def _time(step, n):
    for _ in range(5):
        step()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            step()
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def main(argv=()):
    quick = "--quick" in argv
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
    rows = []
    for name, make, n in (("W1", w1, 2000), ("W2", w2, 500), ("W3", w3, 20)):
        n = max(1, n // 20) if quick else n
        eager = _time(make(ember, lambda f: f), n)
        comp = _time(make(ember, ember_compile), n)
        ref = _time(make(torch, lambda f: f), n) if torch is not None else float("nan")
        rows.append((name, comp, eager, ref))
    print("%-4s %14s %14s %14s %10s %10s" % ("", "compiled (us)", "eager (us)", "torch (us)",
                                           "c/eager", "c/torch"))
    for name, c, e, t in rows:
        print("%-4s %14.1f %14.1f %14.1f %10.2f %10.2f" % (name, c * 1e6, e * 1e6, t * 1e6,
                                                          c / e, c / t))
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
