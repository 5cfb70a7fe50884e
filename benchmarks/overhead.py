"""Per-call overhead: one forward+backward of ``((x*2+1).relu()*x).sum()`` on 16 elements.

Run from the repository root::

    python benchmarks/overhead.py [--repeats 2000] [--rounds 7]

ember and torch (CPU) are timed in one run, alternating rounds after a warm-up, and the
median microseconds per step of each and their ratio are printed. A 16-element tensor makes
the arithmetic negligible, so the figure is the Python cost of building and walking the graph.
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import ember  # noqa: E402

__all__ = ["step", "time_lib", "main"]


def step(x):
    """One forward+backward of the benchmark expression."""
    ((x * 2 + 1).relu() * x).sum().backward()


def time_lib(lib, x, repeats):
    """Median-ready list: microseconds per step of ``repeats`` steps, one sample per step."""
    samples = []
    clock = time.perf_counter
    for _ in range(repeats):
        t0 = clock()
        step(x)
        samples.append((clock() - t0) * 1e6)
        x.grad = None
    return samples


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=2000, help="steps per round")
    ap.add_argument("--rounds", type=int, default=7, help="alternating rounds per library")
    ap.add_argument("--warmup", type=int, default=300, help="untimed steps per library")
    args = ap.parse_args(argv)
    libs = [("ember", ember)]
    try:
        import torch
        torch.set_num_threads(1)
        libs.append(("torch", torch))
    except ImportError:
        print("torch is not installed: timing ember only")
    xs = {name: lib.linspace(-1.0, 1.0, 16).requires_grad_() for name, lib in libs}
    for name, lib in libs:
        time_lib(lib, xs[name], args.warmup)
    samples = {name: [] for name, _ in libs}
    for _ in range(args.rounds):
        for name, lib in libs:
            samples[name].extend(time_lib(lib, xs[name], args.repeats))
    med = {name: statistics.median(s) for name, s in samples.items()}
    print("forward+backward of ((x*2+1).relu()*x).sum(), x: 16 float32 elements")
    print("%-6s %12s" % ("lib", "median us"))
    for name in med:
        print("%-6s %12.1f" % (name, med[name]))
    if "torch" in med:
        print("ratio ember/torch: %.2fx" % (med["ember"] / med["torch"]))
    return med


if __name__ == "__main__":
    main()
