"""ember.distributed on 2 MPI processes: collectives, DDP, faults and the launcher.

Each test starts ``mpiexec -n 2`` (through a subprocess with a timeout) on a worker script in
this folder; the workers check themselves on every rank and exit non-zero on failure.
"""
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import ember
import ember.distributed as dist
from ember.distributed.run import find_mpiexec

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MPIEXEC = find_mpiexec()
needs_mpi = pytest.mark.skipif(not dist.is_mpi_available() or MPIEXEC is None,
                               reason='needs mpi4py and mpiexec: pip install "ember[distributed]"')


def _env():
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OMP_NUM_THREADS="1")
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        env.pop(k, None)
    return env


def mpirun(script, *args, n=2, timeout=60):
    return subprocess.run([MPIEXEC, "-n", str(n), sys.executable, script, *map(str, args)],
                          env=_env(), capture_output=True, text=True, timeout=timeout)


def _ok(proc):
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]


@needs_mpi
def test_collectives_all_ops_and_dtypes():
    proc = mpirun(os.path.join(HERE, "_collectives_worker.py"))
    _ok(proc)
    assert proc.stdout.count("collectives ok") == 2


@needs_mpi
def test_ddp_equals_one_process_on_the_whole_batch(tmp_path, torch):
    out = tmp_path / "ddp.npz"
    proc = mpirun(os.path.join(HERE, "_ddp_worker.py"), out, timeout=120)
    _ok(proc)
    saved = np.load(out)
    x, y = saved["x"], saved["y"]
    init = {k[5:]: saved[k] for k in saved.files if k.startswith("init/")}
    for lib, rtol in ((ember, 1e-5), (torch, 1e-5)):
        nn = lib.nn
        model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                              nn.Linear(512, 10))
        model.load_state_dict({k: lib.tensor(v) for k, v in init.items()})
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for step in range(3):
            opt.zero_grad()
            nn.functional.cross_entropy(model(lib.tensor(x)), lib.tensor(y)).backward()
            opt.step()
            for k, v in model.state_dict().items():
                np.testing.assert_allclose(saved["step%d/%s" % (step, k)], v.numpy(),
                                           rtol=rtol, atol=1e-7, err_msg="%s %s step %d"
                                           % (lib.__name__, k, step))


def _fault_script(tmp_path, body):
    path = tmp_path / "fault.py"
    path.write_text(textwrap.dedent("""
        import datetime, sys
        import ember, ember.distributed as dist
        dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=3))
        rank = dist.get_rank()
    """) + textwrap.dedent(body))
    return str(path)


@needs_mpi
def test_a_rank_that_raises_ends_the_job_with_its_traceback(tmp_path):
    script = _fault_script(tmp_path, """
        if rank == 1:
            raise ValueError("boom on rank one")
        dist.barrier()          # rank 0 waits here: the abort must end it
    """)
    start = time.monotonic()
    proc = mpirun(script, timeout=30)
    assert proc.returncode != 0
    assert time.monotonic() - start < 15
    assert "ValueError: boom on rank one" in proc.stderr
    assert 'fault.py", line 8, in <module>' in proc.stderr      # the raising line


@needs_mpi
def test_mismatched_collectives_raise_a_clear_error(tmp_path):
    script = _fault_script(tmp_path, """
        t = ember.ones(3 if rank == 0 else 4)
        try:
            dist.all_reduce(t)
        except RuntimeError as e:
            assert "mismatched collectives" in str(e) and "(4,)" in str(e), e
            print("caught", flush=True)
        t = ember.ones(2, dtype=ember.float64 if rank == 0 else ember.float32)
        try:
            dist.broadcast(t, src=0)
        except RuntimeError as e:
            assert "float64" in str(e) and "float32" in str(e), e
            print("caught", flush=True)
        from ember.nn.parallel.distributed import DistributedDataParallel as DDP
        try:
            DDP(ember.nn.Linear(3, 2 + rank))
        except RuntimeError as e:
            assert "appears not to match sizes" in str(e), e
            print("caught", flush=True)
        if rank == 0:           # rank 1 skips this collective: a timeout, not a hang
            try:
                dist.all_reduce(ember.ones(1))
            except RuntimeError as e:
                assert "timed out" in str(e), e
                print("caught", flush=True)
    """)
    proc = mpirun(script, timeout=40)
    _ok(proc)
    assert proc.stdout.count("caught") == 7


@needs_mpi
def test_launcher_sets_torch_variables_and_quiets_other_ranks(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""
        import os, sys
        import ember, ember.distributed as dist
        dist.init_process_group()
        t = ember.ones(1)
        dist.all_reduce(t)
        print("rank=%s local=%s world=%s master=%s sum=%s args=%s" % (
            os.environ["RANK"], os.environ["LOCAL_RANK"], os.environ["WORLD_SIZE"],
            os.environ["MASTER_ADDR"], t.item(), sys.argv[1:]), flush=True)
    """))
    base = [sys.executable, "-m", "ember.distributed.run"]
    proc = subprocess.run(base + ["--nproc-per-node", "2", str(script), "--lr", "1"],
                          env=_env(), capture_output=True, text=True, timeout=60)
    _ok(proc)
    assert "rank=0 local=0 world=2 master=127.0.0.1 sum=2.0 args=['--lr', '1']" in proc.stdout
    assert "rank=1" not in proc.stdout
    proc = subprocess.run(base + ["--nproc_per_node=2", "--all-ranks-print", str(script)],
                          env=_env(), capture_output=True, text=True, timeout=60)
    _ok(proc)
    assert "rank=1 local=1 world=2" in proc.stdout and "rank=0" in proc.stdout


def test_not_initialized_errors_match_torch(torch):
    import torch.distributed as tdist
    for name in ("get_rank", "get_world_size", "get_backend", "barrier"):
        with pytest.raises(ValueError) as want:
            getattr(tdist, name)()
        with pytest.raises(ValueError) as got:
            getattr(dist, name)()
        assert str(got.value) == str(want.value)
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.all_reduce(ember.ones(1))
    assert not dist.is_initialized() and dist.group.WORLD is None
    assert [int(getattr(dist.ReduceOp, n)) for n in ("SUM", "AVG", "PRODUCT", "MIN", "MAX",
                                                       "BAND", "BOR", "BXOR")] == \
        [int(getattr(tdist.ReduceOp, n)) for n in ("SUM", "AVG", "PRODUCT", "MIN", "MAX",
                                                    "BAND", "BOR", "BXOR")]
    assert str(dist.ReduceOp.SUM) == str(tdist.ReduceOp.SUM)
    assert dist.Backend("GLOO") == tdist.Backend("GLOO") == "gloo"


def test_without_mpi4py_init_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    with pytest.raises(RuntimeError, match=r'pip install "ember\[distributed\]"'):
        dist.init_process_group("mpi")
    assert not dist.is_initialized()


def test_bad_backend_is_refused():
    with pytest.raises(ValueError, match="runs every collective on MPI"):
        dist.init_process_group("ucc")
