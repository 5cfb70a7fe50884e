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
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([env["PYTHONPATH"]]
                                                       if env.get("PYTHONPATH") else []))
    r = subprocess.run([sys.executable, str(program)], cwd=str(ROOT), env=env,
                       capture_output=True, text=True, timeout=300)
    tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-15:])
    assert r.returncode == 0, "%s exited %d:\n%s" % (program.name, r.returncode, tail)
