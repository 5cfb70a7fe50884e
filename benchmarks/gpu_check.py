"""One prepared check for a GPU machine: ``python -m benchmarks.gpu_check`` (or
``benchmarks/gpu_check.sh``, which first finds the CuPy wheel the driver needs).

Runs, in this order, within ``--budget`` seconds (default 270):
1. timings against torch CUDA (when torch has CUDA): W5 (Linear 2048x2048, no bias, forward +
   backward: GFLOP/s), the widened W3 (MLP 4096-4096-4096-10, batch 4096, Adam: step time) and
   W3 itself (784-512-512-10, batch 128: launch-bound). Float32 matmuls at full precision on
   both sides (no TF32: torch's default ``allow_tf32=False``, CuPy's default ``CUPY_TF32=0``);
2. ``tests/gpu/test_cuda_real.py``: the seed programs with CUDA as default device, the notes'
   ``torch.cuda.FloatTensor`` program, layer parity, then the op database on CUDA (against
   torch CPU on host copies, the CPU tolerances) with the time left.
Prints a compact report; exits 0 when every check ran and passed.
"""
import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _timeit(fn, sync, min_time=0.5, warmup=3):
    for _ in range(warmup):
        fn()
    sync()
    n, t0 = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        if n >= 3 and time.perf_counter() - t0 > min_time / 2:
            sync()
            if time.perf_counter() - t0 > min_time:
                break
    return (time.perf_counter() - t0) / n


def _mlp(lib, dev, sizes, batch):
    nn = lib.nn
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    model = nn.Sequential(*layers[:-1]).to(dev)
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    x = lib.randn(batch, sizes[0], device=dev)
    y = lib.randint(0, sizes[-1], (batch,), device=dev)

    def step():
        opt.zero_grad()
        lib.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return step


def _gemm(lib, dev, n=2048):
    layer = lib.nn.Linear(n, n, bias=False).to(dev)
    x = lib.randn(n, n, device=dev)
    g = lib.randn(n, n, device=dev)

    def step():
        layer.weight.grad = None
        layer(x).backward(g)
    return step


def timings(report):
    import ember
    libs = [("ember", ember, ember.cuda.synchronize)]
    try:
        import torch
        if torch.cuda.is_available():
            torch.backends.cuda.matmul.allow_tf32 = False
            libs.append(("torch", torch, torch.cuda.synchronize))
        else:
            report.append("torch has no CUDA here: timings for ember only")
    except ImportError:
        report.append("torch not installed: timings for ember only")
    res = {}
    for key, make in (("W5", lambda lib: _gemm(lib, "cuda")),
                      ("W3wide", lambda lib: _mlp(lib, "cuda", (4096, 4096, 4096, 10), 4096)),
                      ("W3", lambda lib: _mlp(lib, "cuda", (784, 512, 512, 10), 128))):
        for name, lib, sync in libs:
            lib.manual_seed(0)
            res[key, name] = _timeit(make(lib), sync)
    gf = 4.0 * 2048 ** 3 / 1e9
    line = "W5 Linear 2048 fwd+bwd (fp32, no TF32): ember %.0f GFLOP/s" % (gf / res["W5", "ember"])
    if ("W5", "torch") in res:
        line += ", torch %.0f GFLOP/s, ratio %.2f (target >= 0.80)" % (
            gf / res["W5", "torch"], res["W5", "torch"] / res["W5", "ember"])
    report.append(line)
    for key, label, target in (("W3wide", "MLP 4096x3 batch 4096 Adam step", "<= 1.20"),
                               ("W3", "W3 MLP 784-512-512-10 batch 128 step", "report")):
        line = "%s: ember %.3f ms" % (label, res[key, "ember"] * 1e3)
        if (key, "torch") in res:
            line += ", torch %.3f ms, ember/torch %.2fx (target %s)" % (
                res[key, "torch"] * 1e3, res[key, "ember"] / res[key, "torch"], target)
        report.append(line)


def tests(report, seconds, k=None):
    cmd = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
           os.path.join("tests", "gpu", "test_cuda_real.py")]
    if k:
        cmd += ["-k", k]
    try:
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=seconds)
        lines = r.stdout.strip().splitlines()
        fails = [ln for ln in lines if ln.startswith(("FAILED", "ERROR"))]
        report.append("tests %s: %s" % (k or "all", lines[-1] if lines else r.stderr[-300:]))
        report.extend("  " + ln[:160] for ln in fails[:25])
        return r.returncode == 0
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) \
            else (e.stdout or "")
        done = out.count(".") + out.count("F")
        report.append("tests %s: stopped at the time budget (%d s) after ~%d tests (%d failed)"
                      % (k or "all", seconds, done, out.count("F")))
        return False


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget", type=float, default=270.0, help="seconds for everything")
    ap.add_argument("--skip-timings", action="store_true")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    import ember
    ok, why = ember.backend.cuda_status()
    report = ["ember GPU check"]
    if not ok:
        print("ember cannot use CUDA here: %s" % why)
        return 2
    report.append("device: %s (%s), CuPy %s" % (
        ember.cuda.get_device_name(), ember.cuda.get_device_properties(None).total_memory >> 30,
        ember.backend.backend_for("cuda").xp.__version__) + " GiB")
    good = True
    if not args.skip_timings:
        try:
            timings(report)
        except Exception as e:   # report and go on to the tests
            report.append("timings failed: %s: %s" % (type(e).__name__, e))
            good = False
    left = lambda: max(10, int(args.budget - (time.perf_counter() - t0)))  # noqa: E731
    good &= tests(report, min(120, left()), "seed or notes or layer or is_real")
    good &= tests(report, left(), "opdb")
    report.append("total %.0f s" % (time.perf_counter() - t0))
    print("\n".join(report))
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
