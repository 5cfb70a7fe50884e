"""DDP throughput on W3 (MLP 784-512-512-10, Adam), batch 128 per rank, one BLAS thread each.

Compares 2 processes under ``mpiexec`` (DistributedDataParallel) with 1 process (no DDP):
samples per second, their ratio (2.0 would be perfect scaling) and the fraction of a DDP step
spent waiting for the gradient all-reduce after backward (communication not hidden by
overlap). On a shared machine the figures are noisy: run it more than once.

Run:
    python benchmarks/bench_ddp.py [--steps 30] [--nproc 2]
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
THREADS = {k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}


def worker(steps, warmup=3):
    import ember
    import ember.distributed as dist
    from ember import nn
    distributed = "PMI_RANK" in os.environ or "OMPI_COMM_WORLD_RANK" in os.environ
    if distributed:
        dist.init_process_group("mpi")
    rank = dist.get_rank() if distributed else 0
    world = dist.get_world_size() if distributed else 1
    ember.manual_seed(0)
    net = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                        nn.Linear(512, 10))
    if distributed:
        from ember.nn.parallel.distributed import DistributedDataParallel
        model = DistributedDataParallel(net)
    else:
        model = net
    opt = ember.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(rank)
    x = ember.tensor(rng.standard_normal((128, 784)).astype(np.float32))
    y = ember.tensor(rng.integers(0, 10, 128))
    times = []
    for i in range(warmup + steps):
        if distributed and i == warmup:
            dist.barrier()
            model.reducer.comm_wait_s = 0.0
        t0 = time.perf_counter()
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        times.append(time.perf_counter() - t0)
    step_s = float(np.median(times[warmup:]))
    total = sum(times[warmup:])
    wait = model.reducer.comm_wait_s if distributed else 0.0
    result = {"world": world, "step_ms": 1e3 * step_s,
              "samples_per_s": world * 128 / step_s, "comm_wait_fraction": wait / total}
    if distributed:
        everyone = [None] * world
        dist.all_gather_object(everyone, result)
        result["per_rank_step_ms"] = [r["step_ms"] for r in everyone]
    if rank == 0:
        print("RESULT " + json.dumps(result), flush=True)


def run(cmd):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src") + os.pathsep
               + os.environ.get("PYTHONPATH", ""),
               **THREADS)
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(out.stdout[-2000:] + out.stderr[-2000:])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        return worker(args.steps)
    sys.path.insert(0, os.path.join(ROOT, "src"))
    from ember.distributed.run import find_mpiexec
    me = [sys.executable, os.path.abspath(__file__), "--worker", "--steps", str(args.steps)]
    one = run(me)
    many = run([find_mpiexec(), "-n", str(args.nproc)] + me)
    print("W3 (MLP 784-512-512-10, Adam), batch 128 per rank, 1 BLAS thread per process, "
          "%d timed steps (median step)" % args.steps)
    print("%-12s %10s %12s %18s" % ("processes", "step ms", "samples/s", "comm wait / step"))
    for r in (one, many):
        print("%-12d %10.1f %12.0f %17.1f%%" % (r["world"], r["step_ms"], r["samples_per_s"],
                                                100 * r["comm_wait_fraction"]))
    print("scaling: %.2fx the samples/s of one process (ideal %dx); per-rank step ms: %s"
          % (many["samples_per_s"] / one["samples_per_s"], args.nproc,
             ", ".join("%.1f" % t for t in many["per_rank_step_ms"])))
    print("(os.cpu_count() = %s; on a shared machine these figures are noisy)" % os.cpu_count())


if __name__ == "__main__":
    main()
