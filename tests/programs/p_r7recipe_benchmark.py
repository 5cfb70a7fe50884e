"""The PyTorch recipe "PyTorch Benchmark" (recipes/recipes/benchmark.py) and the
torch.utils.benchmark "Timer quick start", shrunk: ``batched_dot_mul_sum`` vs
``batched_dot_bmm`` timed with ``benchmark.Timer`` (``timeit``, ``blocked_autorange``,
``num_threads``), the ``Measurement`` fields, a ``Compare`` table over sizes and thread counts,
measurements pickled and compared across "environments", ``trim_significant_figures`` and
``colorize``. Wall-clock timings are never printed: the timed statements advance a fake clock
passed as ``timer=``, so every Measurement is exact, and real-clock runs print only structure."""
import importlib
import os
import pickle
import re
from itertools import product

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
benchmark = importlib.import_module(LIB + ".utils.benchmark")


def batched_dot_mul_sum(a, b):
    """Computes batched dot by multiplying and summing"""
    return a.mul(b).sum(-1)


def batched_dot_bmm(a, b):
    """Computes batched dot by reducing to ``bmm``"""
    a = a.reshape(-1, 1, a.shape[-1])
    b = b.reshape(-1, b.shape[-1], 1)
    return torch.bmm(a, b).flatten(-3)


class FakeClock:
    """A clock that only moves when a timed statement ticks it (cost: seconds per call)."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def tick(self, cost):
        self.now += cost


def masked(text):
    """The text with numbers and runs of dashes/spaces squeezed (real-clock timings vary)."""
    text = re.sub(r"0x[0-9a-f]+", "ADDR", text)
    text = re.sub(r"\d+\.\d+", "#", text)
    return re.sub(r"-+", "-", re.sub(r"[ \t]+", " ", text))


torch.manual_seed(0)
x = torch.randn(100, 64)
assert batched_dot_mul_sum(x, x).allclose(batched_dot_bmm(x, x))
print("allclose", batched_dot_mul_sum(x, x).allclose(batched_dot_bmm(x, x)),
      round(batched_dot_mul_sum(x, x)[:3].sum().item(), 4))

# Real clock: only what does not depend on the time.
t0 = benchmark.Timer(stmt="batched_dot_mul_sum(x, x)",
                     setup="from __main__ import batched_dot_mul_sum", globals={"x": x})
t1 = benchmark.Timer(stmt="batched_dot_bmm(x, x)",
                     setup="from __main__ import batched_dot_bmm", globals={"x": x})
m0 = t0.timeit(20)
print(type(m0).__name__, m0.number_per_run, len(m0.times), m0.stmt, m0.num_threads)
print(masked(repr(m0)).splitlines()[1:])
m1 = t1.blocked_autorange(min_run_time=0.02)
print(m1.number_per_run >= 1, len(m1.times) >= 1, m1.median > 0, m1.mean > 0, m1.title)
print(m1.task_spec.setup, "|", m1.description, m1.label, m1.sub_label, m1.env)

# Fake clock: every number is determined by the statements.
clock = FakeClock()
g = {"x": x, "clock": clock, "f": batched_dot_mul_sum}
t = benchmark.Timer(stmt="f(x, x); clock.tick(2e-6)", timer=clock, globals=g)
m = t.timeit(100)
print(m.number_per_run, m.raw_times, [round(v, 12) for v in m.times], m.median)
print(masked(repr(m)))
m = t.blocked_autorange(min_run_time=0.01)
print(m.number_per_run, len(m.raw_times), round(m.median, 12), round(m.mean, 12), round(m.iqr, 12))
print(m.significant_figures, m.has_warnings, m.meets_confidence(0.1))

# Measurements built directly: spreads, warnings and reprs are exact.
spec = benchmark.TaskSpec(stmt="batched_dot_bmm(x, x)", setup="pass", label="Batched dot",
                          sub_label="[64, 64]", description="bmm", num_threads=2)
steady = benchmark.Measurement(10, [1e-4, 1.01e-4, 1.02e-4, 0.99e-4, 1e-4, 1.005e-4], spec)
noisy = benchmark.Measurement(10, [1e-4, 2e-4, 1.1e-4, 3e-4, 1.5e-4], spec)
for mm in (steady, noisy):
    print([round(v, 12) for v in mm.times], round(mm.median, 12), round(mm.mean, 12),
          round(mm.iqr, 12), mm.significant_figures, mm.has_warnings)
    print(masked(repr(mm)))
print(steady.title, "|", steady.as_row_name, "|", steady.label, steady.description)
merged = benchmark.Measurement.merge([steady, noisy])
print(len(merged), merged[0].number_per_run, len(merged[0].times))
print(benchmark.select_unit(3.2e-5), benchmark.select_unit(0.5), benchmark.unit_to_english("us"))
print(benchmark.trim_sigfig(123.456, 2), benchmark.trim_sigfig(0.0012345, 3),
      benchmark.ordered_unique([3, 1, 3, 2, 1]))

# Compare: sizes x threads x (mul/sum, bmm), timed on the fake clock (cost ~ b * n).
results = []
sizes = [1, 8, 64]
for b, n in product(sizes, sizes):
    label = "Batched dot"
    sub_label = f"[{b}, {n}]"
    x = torch.ones((b, n))
    for num_threads in [1, 2]:
        for stmt, cost, description in (("batched_dot_mul_sum(x, x)", 1e-7, "mul/sum"),
                                        ("batched_dot_bmm(x, x)", 3e-7, "bmm")):
            g = {"x": x, "clock": clock, "batched_dot_mul_sum": batched_dot_mul_sum,
                 "batched_dot_bmm": batched_dot_bmm, "c": cost * (1 + b * n / 64) / num_threads}
            results.append(benchmark.Timer(
                stmt=stmt + "; clock.tick(c)", timer=clock, globals=g, num_threads=num_threads,
                label=label, sub_label=sub_label, description=description,
            ).blocked_autorange(min_run_time=0.001))
print(len(results), sorted({r.number_per_run for r in results}))
compare = benchmark.Compare(results)
compare.print()
compare.trim_significant_figures()
print(str(compare))

# A/B "environments": Measurements pickle, and Compare shows each env's rows.
ab_test_results = []
for env in ("environment A: mul/sum", "environment B: bmm"):
    for b, n in ((1, 1), (64, 64)):
        x = torch.ones((b, n))
        dot_fn = batched_dot_mul_sum if env == "environment A: mul/sum" else batched_dot_bmm
        g = {"x": x, "clock": clock, "batched_dot": dot_fn, "c": 1e-6 * (b + 1)}
        m = benchmark.Timer(stmt="batched_dot(x, x); clock.tick(c)", timer=clock, globals=g,
                            label="Batched dot", description=f"[{b}, {n}]", env=env,
                            ).blocked_autorange(min_run_time=0.001)
        ab_test_results.append(pickle.dumps(m))
ab_results = [pickle.loads(i) for i in ab_test_results]
print([(r.env, r.description, round(r.median, 12)) for r in ab_results])
compare = benchmark.Compare(ab_results)
compare.trim_significant_figures()
compare.colorize()
compare.print()
compare = benchmark.Compare(results[:4] + [steady, noisy])
compare.highlight_warnings()
compare.colorize(rowwise=True)
compare.print()

for bad in (lambda: benchmark.Compare([1.0]), lambda: benchmark.Timer(stmt=lambda: None),
            lambda: t.repeat(), lambda: t.autorange(), lambda: benchmark.trim_sigfig(1.5, 1.5)):
    try:
        bad()
    except Exception as e:
        print(type(e).__name__, e)
