"""The ``cuda`` fixture: a fake GPU (``fake_cupy``) behind ``device='cuda'`` for one test."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fake_cupy  # noqa: E402

# Library shims for subprocesses (they change ember's state when imported), not test modules.
collect_ignore = ["ember_on_cuda.py", "ember_on_fake_cuda.py"]


@pytest.fixture
def cuda():
    """``device='cuda'`` is the fake GPU (the strict device dressed as CuPy) in this test."""
    state = fake_cupy.install()
    try:
        yield fake_cupy
    finally:
        fake_cupy.uninstall(state)
