"""Time the workloads in ember and PyTorch, in one process, alternating, and print a table.

    python -m benchmarks.run [--only W3] [--json out.json] [--quick] [--threads N]

For every workload both libraries start from the same weights (copied from torch's model) and
first run a few steps whose losses must agree: a fast wrong answer is a failure (exit status
1). Timing then alternates ember and torch blocks after a warm-up and reports each library's
median; the ratio is the median of the per-round ratios. A second method times single steps,
alternating the libraries step by step (``ember/torch (1-step)``); the two ratios should agree
within the machine's noise (docs/benchmarks.md, "Two timing methods"). Peak memory is measured
in a fresh interpreter per library. Without torch installed, ember runs alone and the runner
says so.
"""
import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import tracemalloc

import numpy as np

from . import workloads as W

__all__ = ["main", "machine_info", "check_case", "run_workload", "probe_memory"]

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_MIB = 1024.0 * 1024.0


class LossMismatch(RuntimeError):
    """ember's and torch's losses differ: the benchmark numbers would be meaningless."""


def _import_torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info(torch=None):
    """CPU, cores, BLAS (via threadpoolctl when installed) and library versions."""
    import ember
    info = {"cpu": _cpu_model(), "logical_cores": os.cpu_count(),
            "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
            else os.cpu_count(),
            "python": platform.python_version(), "numpy": np.__version__,
            "ember": ember.version.ember,
            "torch": torch.__version__ if torch is not None else None,
            "torch_threads": torch.get_num_threads() if torch is not None else None,
            "env": {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
                                               "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                               "MKL_NUM_THREADS") if k in os.environ}}
    try:
        from threadpoolctl import threadpool_info
        info["blas"] = [{"api": p.get("internal_api"), "kernel": p.get("architecture"),
                         "threads": p.get("num_threads"), "version": p.get("version"),
                         "lib": os.path.basename(p.get("filepath", ""))}
                        for p in threadpool_info()]
    except ImportError:
        info["blas"] = "threadpoolctl not installed (pip install threadpoolctl)"
    return info


def _status_kib(field):
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_peak_rss():
    """Reset the kernel's peak-RSS mark (VmHWM); False where Linux does not allow it."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def probe_memory(key, lib_name, steps=0, tiny=False):
    """Memory of one step of workload ``key`` in library ``lib_name``, in this process.

    Returns ``{"peak_rss_mib", "traced_peak_mib", "growth_mib"}``: the peak RSS above the RSS
    before a steady-state step, tracemalloc's peak for that step (NumPy reports its buffers to
    tracemalloc, so it counts every ember array; torch's allocator is invisible to it), and the
    RSS growth over ``steps`` further steps (the graph must be freed each step).
    """
    import importlib
    lib = importlib.import_module(lib_name)
    case = W.by_key(key).build(lib, tiny=tiny)
    for _ in range(3):
        case.step()
    gc.collect()
    out = {"peak_rss_mib": None, "traced_peak_mib": None, "growth_mib": None}
    if _reset_peak_rss():
        before = _status_kib("VmRSS")
        case.step()
        peak = _status_kib("VmHWM")
        if before is not None and peak is not None:
            out["peak_rss_mib"] = max(peak - before, 0) / 1024.0
    if lib_name == "ember":
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        case.step()
        out["traced_peak_mib"] = (tracemalloc.get_traced_memory()[1] - base) / _MIB
        tracemalloc.stop()
    if steps:
        for _ in range(20):
            case.step()
        gc.collect()
        start = _status_kib("VmRSS")
        for _ in range(steps):
            case.step()
        gc.collect()
        end = _status_kib("VmRSS")
        if start is not None and end is not None:
            out["growth_mib"] = (end - start) / 1024.0
    return out


def memory_in_subprocess(key, lib_name, steps=0):
    """:func:`probe_memory` in a fresh interpreter whose malloc returns large blocks to the OS.

    glibc keeps freed blocks of up to 32 MiB resident by default, which would hide a step's
    peak; a fixed mmap threshold makes RSS follow the live arrays in both libraries.
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(_ROOT, "src") + os.pathsep + env.get("PYTHONPATH", "")
    env["MALLOC_MMAP_THRESHOLD_"] = "131072"
    env["MALLOC_TRIM_THRESHOLD_"] = "131072"
    code = ("import json; from benchmarks.run import probe_memory; "
            "print(json.dumps(probe_memory(%r, %r, %d)))" % (key, lib_name, steps))
    res = subprocess.run([sys.executable, "-c", code], env=env, cwd=_ROOT,
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError("memory probe of %s in %s failed:\n%s"
                           % (key, lib_name, res.stderr[-2000:]))
    return json.loads(res.stdout.strip().splitlines()[-1])


def step_memory(key, libs, steps=0):
    """{lib: probe result} for ``key`` in every library, each in a fresh process."""
    return {name: memory_in_subprocess(key, name, steps) for name in libs}


def _mem_cols(mem):
    e, t = mem.get("ember", {}), mem.get("torch", {})
    return {"ember_traced": e.get("traced_peak_mib"), "ember_rss": e.get("peak_rss_mib"),
            "torch_rss": t.get("peak_rss_mib")}


def _loss_value(out):
    return float(out.detach().numpy()) if hasattr(out, "detach") else float(out)


def check_case(w, libs, tiny=False, steps=3, rtol=2e-3, atol=1e-4):
    """Build ``w`` in each library (torch first; ember copies its weights) and compare losses.

    Returns ``{lib_name: Case}``; raises :class:`LossMismatch` when the losses differ.
    """
    cases = {}
    init = None
    for name, lib in reversed(list(libs.items())):
        case = w.build(lib, tiny=tiny, init=init)
        if init is None:
            init = case.init
        cases[name] = case
    losses = {name: [] for name in libs}
    for _ in range(steps):
        for name in libs:
            losses[name].append(_loss_value(cases[name].step()))
    if "torch" in libs:
        for i, (a, b) in enumerate(zip(losses["ember"], losses["torch"])):
            if not (np.isfinite(a) and abs(a - b) <= atol + rtol * abs(b)):
                raise LossMismatch(
                    "%s: ember's loss %.7g differs from torch's %.7g at step %d (rtol %g, "
                    "atol %g); both started from the same weights, so ember computes a "
                    "different function: a fast wrong answer is a failure."
                    % (w.key, a, b, i, rtol, atol))
    return {name: cases[name] for name in libs}


def _time_block(step, n):
    gc.collect()
    t = time.perf_counter()
    for _ in range(n):
        step()
    return (time.perf_counter() - t) / n


def time_alternating(cases, rounds, block_s, warmup_s):
    """Seconds per step of each case in each round, the cases timed in alternating blocks."""
    reps = {}
    for name, case in cases.items():
        n, spent = 1, 0.0
        end = time.perf_counter() + warmup_s
        while time.perf_counter() < end or spent == 0.0:
            spent = _time_block(case.step, n)
            n = max(1, min(n * 2, int(block_s / max(spent, 1e-9))))
        reps[name] = max(1, int(block_s / max(spent, 1e-9)))
    samples = {name: [] for name in cases}
    names = list(cases)
    for r in range(rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            samples[name].append(_time_block(cases[name].step, reps[name]))
    return samples


def time_single_steps(cases, steps, warmup=5):
    """Seconds of single steps, the cases alternating step by step (the order reversed every
    step), after ``warmup`` steps each: the second timing method, no block means and no
    collection between steps (``time_alternating`` is the first)."""
    for case in cases.values():
        for _ in range(warmup):
            case.step()
    samples = {name: [] for name in cases}
    names = list(cases)
    for r in range(steps):
        for name in (names if r % 2 == 0 else names[::-1]):
            step = cases[name].step
            t = time.perf_counter()
            step()
            samples[name].append(time.perf_counter() - t)
    return samples


def _median(samples):
    return {name: statistics.median(s) for name, s in samples.items()}


def paired_ratio(samples, a, b):
    """Median over rounds of ``a``'s time / ``b``'s time in the same round (robust to load
    drift on a shared machine, since both blocks of a round see the same load)."""
    return statistics.median([x / y for x, y in zip(samples[a], samples[b])])


def _fmt(x, digits=3):
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    if x == 0 or abs(x) >= 100:
        return "%.0f" % x
    return ("%%.%dg" % digits) % x


def _row(key, title, unit, ember=None, torch=None, ratio=None, target="", met=None,
         mem=None, note="", ratio_single=None):
    return {"key": key, "workload": title, "unit": unit, "ember": ember, "torch": torch,
            "ratio": ratio, "ratio_single": ratio_single, "target": target, "met": met,
            "ember_tracemalloc_mib": (mem or {}).get("ember_traced"),
            "ember_rss_mib": (mem or {}).get("ember_rss"),
            "torch_rss_mib": (mem or {}).get("torch_rss"), "note": note}


def run_step_workload(w, libs, opts):
    """Check, time and measure one ``kind == "step"`` or ``"gemm"`` workload: table rows."""
    cases = check_case(w, libs)
    _reapply_limits()       # (after the first steps: the libraries' lazy imports are loaded)
    if w.kind == "gemm":
        cases["numpy"] = W.numpy_gemm()   # the machine's limit, timed in the same rounds
    samples = time_alternating(cases, opts["rounds"], opts["block_s"], opts["warmup_s"])
    times = _median(samples)
    single = None
    if w.kind == "step" and "torch" in cases:
        single = time_single_steps(cases, opts["single_steps"])
    flops = cases["ember"].flops
    del cases
    gc.collect()
    mem = _mem_cols(step_memory(w.key, libs))
    if w.kind == "gemm":
        t_np = times.pop("numpy")
        rate = {name: flops / t / 1e9 for name, t in times.items()}
        frac = 1.0 / paired_ratio(samples, "ember", "numpy")
        note = "numpy a@b: %.1f GFLOP/s" % (flops / t_np / 1e9)
        if "torch" in rate:
            note += "; torch/numpy %.2f" % (1.0 / paired_ratio(samples, "torch", "numpy"))
        return [_row(w.key, w.title, w.unit, rate["ember"], rate.get("torch"), frac,
                     ">= %.2f of numpy" % w.target, frac >= w.target, mem, note)]
    ember = times["ember"] * w.scale
    torch = times["torch"] * w.scale if "torch" in times else None
    ratio = paired_ratio(samples, "ember", "torch") if torch else None
    ratio_single = paired_ratio(single, "ember", "torch") if single else None
    note = ""
    if single:
        med = _median(single)
        note = "1-step medians %s / %s %s; pools: %s" % (
            _fmt(med["ember"] * w.scale), _fmt(med["torch"] * w.scale), w.unit.split("/")[0],
            _pools())
    return [_row(w.key, w.title, w.unit, ember, torch, ratio, "<= %.2g" % w.target,
                 None if ratio is None else ratio <= w.target, mem, note, ratio_single)]


def _import_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(_ROOT, "src") + os.pathsep + env.get("PYTHONPATH", "")
    # Both libraries import from cached bytecode, as after a normal install (pip compiles
    # torch's .pyc files; ember's are written by the warm-up import below).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _import_time(module, runs):
    env = _import_env()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import %s" % module], env=env, check=True,
                       cwd=_ROOT)
        times.append(time.perf_counter() - t)
    return times


def _dir_size_mib(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return total / _MIB


def run_import_workload(w, libs, opts):
    """W7: median wall time of ``python -c "import LIB"`` (alternating) and installed size."""
    runs = opts["import_runs"]
    samples = {name: [] for name in libs}
    for name in libs:
        _import_time(name, 1)       # warm-up: writes the bytecode cache
    for _ in range(runs):
        for name in libs:
            samples[name] += _import_time(name, 1)
    t = {name: statistics.median(s) for name, s in samples.items()}
    sizes = {name: _dir_size_mib(os.path.dirname(lib.__file__)) for name, lib in libs.items()}
    note = "installed size: " + ", ".join("%s %.1f MiB" % kv for kv in sizes.items())
    ratio = t["ember"] / t["torch"] if "torch" in t else None
    return [_row(w.key, w.title, w.unit, t["ember"], t.get("torch"), ratio,
                 "ember <= %.2g s" % w.target, t["ember"] <= w.target, note=note)]


def _rss_mib():
    kib = _status_kib("VmRSS")
    return None if kib is None else kib / 1024.0


def run_memory_workload(w, libs, opts):
    """W8: peak memory of one W3 and one W4 step, and RSS growth over many steps."""
    rows = []
    n = opts["memory_steps"]
    for key in ("W3", "W4"):
        sub = W.by_key(key)
        lacking = W.missing(libs["ember"], sub.requires)
        if lacking:
            rows.append(_row(w.key, "%s step peak" % key, w.unit,
                             note="skipped: ember lacks " + ", ".join(lacking)))
            continue
        check_case(sub, libs, steps=2)
        probe = step_memory(key, libs, n)
        mem = _mem_cols(probe)
        ember_peak, torch_peak = mem["ember_rss"], mem["torch_rss"]
        ratio = ember_peak / torch_peak if ember_peak is not None and torch_peak else None
        rows.append(_row(w.key, "%s one step: peak RSS above steady state" % key, w.unit,
                         ember_peak, torch_peak, ratio, "<= torch",
                         None if ratio is None else ember_peak <= torch_peak, mem))
        growth = {name: p["growth_mib"] for name, p in probe.items()}
        eg = growth["ember"]
        rows.append(_row(w.key, "%s RSS growth over %d steps" % (key, n), w.unit, eg,
                         growth.get("torch"), None, "flat (<= 2 MiB)",
                         None if eg is None else eg <= 2.0))
    return rows


def run_workload(w, libs, opts):
    """The table rows of one workload (skipped, failed or measured)."""
    if w.kind in ("step", "gemm"):
        lacking = W.missing(libs["ember"], w.requires)
        if lacking:
            return [_row(w.key, w.title, w.unit, note="skipped: ember lacks " +
                         ", ".join(lacking))]
        return run_step_workload(w, libs, opts)
    if w.kind == "import":
        return run_import_workload(w, libs, opts)
    return run_memory_workload(w, libs, opts)


_COLUMNS = [("key", "W"), ("workload", "workload"), ("unit", "unit"), ("ember", "ember"),
            ("torch", "torch"), ("ratio", "ember/torch"),
            ("ratio_single", "ember/torch (1-step)"), ("target", "target"),
            ("met", "met"), ("ember_tracemalloc_mib", "ember peak MiB (tracemalloc)"),
            ("ember_rss_mib", "ember peak RSS MiB"), ("torch_rss_mib", "torch peak RSS MiB"),
            ("note", "note")]


def format_table(rows):
    """The rows as a Markdown table."""
    def cell(r, k):
        v = r[k]
        if k == "met":
            return "-" if v is None else ("yes" if v else "**no**")
        return _fmt(v)
    lines = ["| " + " | ".join(h for _, h in _COLUMNS) + " |",
             "|" + "|".join("---" for _ in _COLUMNS) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(cell(r, k) for k, _ in _COLUMNS) + " |")
    return "\n".join(lines)


def format_machine(info):
    """One paragraph describing the machine and the library versions."""
    blas = info["blas"]
    if isinstance(blas, list):
        blas = "; ".join("%s %s kernel %s, %s threads" % (b["api"], b["version"], b["kernel"],
                                                          b["threads"]) for b in blas)
    parts = ["CPU: %s, %s logical cores (%s usable)" % (info["cpu"], info["logical_cores"],
                                                        info["usable_cores"]),
             "BLAS: %s" % blas,
             "Python %s, numpy %s, ember %s, torch %s"
             % (info["python"], info["numpy"], info["ember"],
                "%s (%s threads)" % (info["torch"], info["torch_threads"]) if info["torch"]
                else "not installed")]
    if info["env"]:
        parts.append("env: " + " ".join("%s=%s" % kv for kv in info["env"].items()))
    return "\n".join(parts)


_THREADS = [None]     # the --threads limit, re-applied before each workload


def _reapply_limits():
    """Apply --threads again: threadpoolctl limits only the pools loaded when it is called,
    and a BLAS or OpenMP library loaded later (a lazy import inside a library's first step)
    would run with all cores, which on a shared machine makes that library slow and noisy."""
    if _THREADS[0] is None:
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    threadpool_limits(_THREADS[0])


def _pools():
    """The BLAS/OpenMP pools loaded now and their threads (for the table's note)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return ""
    return ", ".join("%s %s" % (p.get("internal_api"), p.get("num_threads"))
                     for p in threadpool_info())


def _limit_threads(n, torch):
    """Use ``n`` threads in NumPy's BLAS and in torch (and in their memory probes)."""
    _THREADS[0] = n
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(n)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        print("threadpoolctl is not installed: numpy's BLAS threads are not limited "
              "(pip install threadpoolctl)", file=sys.stderr)
    else:
        threadpool_limits(n)
    if torch is not None:
        torch.set_num_threads(n)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", action="append", default=[],
                    help="run only this workload (W1..W8; repeatable or comma-separated)")
    ap.add_argument("--json", help="also write the results and machine info to this file")
    ap.add_argument("--quick", action="store_true",
                    help="fewer rounds and shorter blocks (noisier numbers)")
    ap.add_argument("--threads", type=int,
                    help="limit BLAS/OpenMP threads of both libraries to this number (numpy via "
                         "threadpoolctl, torch via set_num_threads); default: leave them")
    ap.add_argument("--memory-steps", type=int,
                    help="W8: steps over which memory must stay flat (default 1000; 100 quick)")
    args = ap.parse_args(argv)

    import ember
    torch = _import_torch()
    if args.threads:
        _limit_threads(args.threads, torch)
    libs = {"ember": ember}
    if torch is None:
        print("torch is not installed: running ember alone (no ratios and no loss check; "
              "pip install torch==2.13.0 to compare)")
    else:
        libs["torch"] = torch
    opts = {"rounds": 7 if args.quick else 15, "block_s": 0.1 if args.quick else 0.2,
            "warmup_s": 0.2 if args.quick else 0.5, "import_runs": 3 if args.quick else 7,
            "memory_steps": args.memory_steps or (100 if args.quick else 1000),
            "single_steps": 10 if args.quick else 30}
    keys = [k.strip() for item in args.only for k in item.split(",") if k.strip()]
    try:
        selected = [W.by_key(k) for k in keys] if keys else W.WORKLOADS
    except KeyError as e:
        ap.error(e.args[0])

    info = machine_info(torch)
    print(format_machine(info))
    rows, failures = [], []
    for w in selected:
        print("running %s: %s ..." % (w.key, w.title), file=sys.stderr, flush=True)
        try:
            rows += run_workload(w, libs, opts)
        except LossMismatch as e:
            failures.append(str(e))
            rows.append(_row(w.key, w.title, w.unit, note="FAILED: losses disagree"))
        except Exception as e:  # a broken workload must not hide the others' numbers
            failures.append("%s raised %s: %s" % (w.key, type(e).__name__, e))
            rows.append(_row(w.key, w.title, w.unit, note="FAILED: %s" % type(e).__name__))
    print()
    print(format_table(rows))
    cmd = "python -m benchmarks.run " + " ".join(argv if argv is not None else sys.argv[1:])
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"command": cmd.strip(), "machine": info, "rows": rows,
                       "failures": failures, "time": time.strftime("%Y-%m-%d %H:%M:%S %Z")},
                      f, indent=2)
    for msg in failures:
        print("\nFAILED " + msg, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
