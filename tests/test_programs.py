"""Real PyTorch programs (tutorial and example shapes) print the same under ember as under torch."""
import glob
import os

import pytest

from programs.compare import compare, start

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")
PROGRAMS = sorted(glob.glob(os.path.join(HERE, "p_*.py")))
AHEAD = 2          # ember runs kept in flight: the program under test and the next selected one


@pytest.fixture(scope="module")
def ember_runs(request):
    """Start each selected program under ember one test ahead, so two run at once (two cores)."""
    selected = [item.callspec.params["path"] for item in request.session.items
                if getattr(item, "originalname", None) == "test_program_matches_torch"]
    running = {}

    def take(path):
        at = selected.index(path) if path in selected else len(selected)
        for p in [path] + selected[at + 1:at + AHEAD]:
            if p not in running:
                running[p] = start(p, "ember")
        return running.pop(path)

    yield take
    for proc in running.values():
        proc.kill()
        proc.communicate()


@pytest.mark.parametrize("path", PROGRAMS, ids=[os.path.basename(p)[2:-3] for p in PROGRAMS])
def test_program_matches_torch(path, torch, ember_runs):
    msg = compare(path, ember=ember_runs(path))
    assert msg is None, msg
