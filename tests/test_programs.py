"""Real PyTorch programs (tutorial and example shapes) print the same under ember as under torch."""
import glob
import os

import pytest

from programs.compare import compare

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")
PROGRAMS = sorted(glob.glob(os.path.join(HERE, "p_*.py")))


@pytest.mark.parametrize("path", PROGRAMS, ids=[os.path.basename(p)[2:-3] for p in PROGRAMS])
def test_program_matches_torch(path, torch):
    msg = compare(path)
    assert msg is None, msg
