"""vmap with batching rules against the per-sample loop it replaced, batch 256 (issue 19).

Times, as medians of ``timeit`` repeats (milliseconds per call):
  * ``f(x) = x @ W + x.sum()`` with x of 256 x 64 and W of 64 x 32;
  * per-sample gradients of an MLP 64-32-10 (``vmap(grad(loss), in_dims=(None, 0, 0))``).
"before" forces the per-sample loop (the whole of vmap before the batching rules); torch's
``torch.func.vmap`` is shown for reference when torch is installed. On a shared machine the
figures are noisy: run it more than once.

Run:
    python benchmarks/bench_vmap.py
"""
import statistics
import timeit

import ember
from ember.func import _vmap, grad, vmap


def _median_ms(fn, number, repeat=7):
    times = timeit.repeat(fn, number=number, repeat=repeat)
    return statistics.median(times) / number * 1e3


def _loop(fn, number, repeat=5):
    batched = _vmap._run_batched
    _vmap._run_batched = lambda *args: (False, None)
    try:
        return _median_ms(fn, number, repeat)
    finally:
        _vmap._run_batched = batched


def main():
    ember.manual_seed(0)
    F = ember.nn.functional
    x, w = ember.randn(256, 64), ember.randn(64, 32)
    f = vmap(lambda x: x @ w + x.sum())
    rows = [("x @ W + sum, after", _median_ms(lambda: f(x), 50)),
            ("x @ W + sum, before (loop)", _loop(lambda: f(x), 5))]
    params = [ember.randn(32, 64) * 0.1, ember.zeros(32), ember.randn(10, 32) * 0.1,
              ember.zeros(10)]
    y = ember.randn(256, 10)

    def loss(p, x, y):
        h = F.relu(F.linear(x, p[0], p[1]))
        return ((F.linear(h, p[2], p[3]) - y) ** 2).mean()
    g = vmap(grad(loss), in_dims=(None, 0, 0))
    rows += [("MLP per-sample grads, after", _median_ms(lambda: g(params, x, y), 10)),
             ("MLP per-sample grads, before", _loop(lambda: g(params, x, y), 2))]
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        tx, tw = torch.tensor(x.numpy()), torch.tensor(w.numpy())
        tf = torch.func.vmap(lambda x: x @ tw + x.sum())
        rows.append(("x @ W + sum, torch.func.vmap", _median_ms(lambda: tf(tx), 50)))
    for name, ms in rows:
        print("%-32s %9.3f ms" % (name, ms))


if __name__ == "__main__":
    main()
