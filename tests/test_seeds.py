"""Every seed program in ``../shared/seed_programs/`` runs unchanged with ``TORCH_LIB=ember``."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

__all__ = []

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT / ".." / "shared" / "seed_programs"
PROGRAMS = sorted(SEEDS.glob("s0*.py")) if SEEDS.is_dir() else []


@pytest.mark.skipif(not PROGRAMS, reason="no seed programs at %s" % SEEDS)
@pytest.mark.parametrize("program", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_seed_program_passes_with_ember(program):
    env = dict(os.environ)
    env["TORCH_LIB"] = "ember"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src")] + ([env["PYTHONPATH"]]
                                                       if env.get("PYTHONPATH") else []))
    r = subprocess.run([sys.executable, str(program)], cwd=str(ROOT), env=env,
                       capture_output=True, text=True, timeout=300)
    tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-15:])
    assert r.returncode == 0, "%s exited %d:\n%s" % (program.name, r.returncode, tail)


# ``.numpy()`` of a device tensor raises in torch too ("can't convert cuda:0 device type tensor
# to numpy"): this program prints ``y.numpy()`` directly, so on a device it stops there, as it
# would on CUDA.
_HOST_ONLY = {"s002_softplus_stable.py": "can't convert strict device type tensor to numpy"}


@pytest.mark.skipif(not PROGRAMS, reason="no seed programs at %s" % SEEDS)
@pytest.mark.parametrize("program", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_seed_program_on_the_strict_device(program):
    """The seed programs with the strict test device as the default device (what
    ``torch.set_default_device('cuda')`` does for torch): every tensor they make lives on a
    device that refuses host/device mixing as CuPy does."""
    env = dict(os.environ)
    env["TORCH_LIB"] = "ember_on_strict"
    paths = [str(ROOT / "src"), str(ROOT / "tests" / "fixtures" / "strict_lib")]
    env["PYTHONPATH"] = os.pathsep.join(paths + ([env["PYTHONPATH"]] if env.get("PYTHONPATH")
                                                 else []))
    r = subprocess.run([sys.executable, str(program)], cwd=str(ROOT), env=env,
                       capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    tail = "\n".join(out.strip().splitlines()[-15:])
    if program.name in _HOST_ONLY:
        assert r.returncode != 0 and _HOST_ONLY[program.name] in out, tail
    else:
        assert r.returncode == 0, "%s exited %d:\n%s" % (program.name, r.returncode, tail)
