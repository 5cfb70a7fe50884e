"""Start a training script on N processes through ``mpiexec``, torchrun style.

Usage:
    python -m ember.distributed.run --nproc-per-node 2 train.py ARGS...
    python -m ember.distributed.run --nproc_per_node=2 -m package.module ARGS...

Each rank runs the script with torch's environment variables set (``RANK``, ``LOCAL_RANK``,
``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``GROUP_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``,
``TORCHELASTIC_RUN_ID``), so ``init_process_group()`` needs no arguments. Only rank 0's
standard output is shown unless ``--all-ranks-print``; standard error always is. A rank that
raises prints its traceback and brings the whole job down (non-zero exit). ``OMP_NUM_THREADS``
defaults to 1 per process, as torchrun's. Plain ``mpiexec -n N python train.py`` works too.
"""
from __future__ import annotations

import argparse
import os
import runpy
import shutil
import subprocess
import sys
import time
import traceback
import uuid
from typing import List, Optional

__all__ = ["main", "find_mpiexec", "parse_args"]

_WORKER = "--_ember-worker"


def find_mpiexec() -> Optional[str]:
    """The ``mpiexec`` to use: ``$EMBER_MPIEXEC``, the one installed next to this Python (the
    mpich wheel puts it there), or the first on ``PATH``; None when there is none."""
    env = os.environ.get("EMBER_MPIEXEC")
    if env:
        return env
    for d in (os.path.dirname(sys.executable), os.path.dirname(os.path.realpath(sys.executable))):
        for name in ("mpiexec", "mpirun"):
            p = os.path.join(d, name)
            if os.path.isfile(p) and os.access(p, os.X_OK):
                return p
    return shutil.which("mpiexec") or shutil.which("mpirun")


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m ember.distributed.run",
                                description="Start a script on N ranks through mpiexec.")
    p.add_argument("--nproc-per-node", "--nproc_per_node", dest="nproc_per_node", default="1",
                   help="processes to start (an integer, or 'auto'/'cpu': one per CPU core)")
    p.add_argument("--nnodes", default="1", help="only 1 (use --mpiexec-args for clusters)")
    p.add_argument("--node-rank", "--node_rank", dest="node_rank", type=int, default=0)
    p.add_argument("--master-addr", "--master_addr", dest="master_addr", default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", dest="master_port", type=int,
                   default=29500)
    p.add_argument("--standalone", action="store_true", help="accepted (single node)")
    p.add_argument("--rdzv-id", "--rdzv_id", "--run-id", "--run_id", dest="run_id",
                   default=None)
    p.add_argument("--all-ranks-print", "--all_ranks_print", dest="all_ranks_print",
                   action="store_true", help="show every rank's standard output")
    p.add_argument("--mpiexec-args", "--mpiexec_args", dest="mpiexec_args", default="",
                   help="extra arguments for mpiexec (e.g. '-hosts a,b')")
    p.add_argument("-m", "--module", action="store_true",
                   help="run the script as a module (python -m)")
    p.add_argument("--no-python", "--no_python", dest="no_python", action="store_true",
                   help="run the script as an executable, not through Python")
    p.add_argument("training_script")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p.parse_args(argv)


def _nproc(value: str) -> int:
    if value in ("auto", "cpu"):
        return os.cpu_count() or 1
    n = int(value)
    if n < 1:
        raise SystemExit("--nproc-per-node must be at least 1, got %d" % n)
    return n


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == _WORKER:
        return _worker(argv[1:])
    args = parse_args(argv)
    if str(args.nnodes) not in ("1", "1:1"):
        raise SystemExit("ember.distributed.run starts one node; for several, use mpiexec "
                         "with a host list (--mpiexec-args '-hosts a,b')")
    n = _nproc(args.nproc_per_node)
    mpiexec = find_mpiexec()
    if mpiexec is None:
        raise SystemExit('no mpiexec found: pip install "ember[distributed]" (mpich provides '
                         "it), or set EMBER_MPIEXEC")
    env = dict(os.environ)
    env.update(WORLD_SIZE=str(n), LOCAL_WORLD_SIZE=str(n), GROUP_RANK="0", ROLE_RANK="0",
               MASTER_ADDR=args.master_addr, MASTER_PORT=str(args.master_port),
               TORCHELASTIC_RUN_ID=args.run_id or uuid.uuid4().hex[:12],
               EMBER_RUN_ALL_PRINT="1" if args.all_ranks_print else "0")
    if n > 1 and "OMP_NUM_THREADS" not in env:
        env["OMP_NUM_THREADS"] = "1"
        sys.stderr.write("ember.distributed.run: setting OMP_NUM_THREADS=1 for each process "
                         "(set it yourself to change this)\n")
    mode = "exe" if args.no_python else ("module" if args.module else "script")
    cmd = [mpiexec, "-n", str(n)] + args.mpiexec_args.split() + \
        [sys.executable, "-m", "ember.distributed.run", _WORKER, mode, args.training_script] + \
        list(args.training_script_args)
    try:
        return subprocess.call(cmd, env=env)
    except KeyboardInterrupt:
        return 130


def _env_first(*names: str) -> Optional[str]:
    for name in names:
        v = os.environ.get(name)
        if v not in (None, ""):
            return v
    return None


def _worker(argv: List[str]) -> int:
    """One rank: set torch's variables from MPI's, quiet stdout off rank 0, run the script."""
    mode, script, rest = argv[0], argv[1], argv[2:]
    rank = _env_first("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK")
    size = _env_first("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE")
    if rank is None:
        from mpi4py import MPI
        rank, size = str(MPI.COMM_WORLD.Get_rank()), str(MPI.COMM_WORLD.Get_size())
    local = _env_first("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_RANK")
    os.environ.update(RANK=rank, LOCAL_RANK=local if local is not None else rank,
                      WORLD_SIZE=size or os.environ.get("WORLD_SIZE", "1"))
    if rank != "0" and os.environ.get("EMBER_RUN_ALL_PRINT") != "1":
        sys.stdout.flush()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    sys.argv = [script] + rest
    try:
        if mode == "exe":
            return subprocess.call([script] + rest)
        if mode == "module":
            sys.path.insert(0, os.getcwd())
            runpy.run_module(script, run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
            runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        code = e.code
        if code is None or code == 0:
            return 0
        if not isinstance(code, int):
            sys.stderr.write("%s\n" % code)
            code = 1
        _abort(int(code))
    except BaseException as e:
        sys.stderr.write("[rank %s] uncaught %s: aborting the job\n" % (rank, type(e).__name__))
        tb = e.__traceback__
        while tb is not None and (tb.tb_frame.f_code.co_filename == __file__ or
                                  "runpy" in tb.tb_frame.f_code.co_filename):
            tb = tb.tb_next     # (start the traceback at the user's script)
        traceback.print_exception(type(e), e, tb)
        _abort(1)
    return 0


def _abort(code: int) -> None:
    """End every rank of the job now (this one's traceback has been printed)."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        from mpi4py import MPI
    except ImportError:
        os._exit(code)
    time.sleep(0.5)     # (mpiexec forwards the rank's output before the abort ends it)
    MPI.COMM_WORLD.Abort(code)


if __name__ == "__main__":
    sys.exit(main())
