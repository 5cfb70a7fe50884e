"""Shared fixtures: the PyTorch oracle (skipped without torch unless EMBER_REQUIRE_TORCH=1)."""
import os
import sys

import numpy as np
import pytest

import ember

# Test helpers (``from oracle import compare``) live beside this file.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _load_torch():
    try:
        import torch
    except ImportError:
        if os.environ.get("EMBER_REQUIRE_TORCH") == "1":
            raise RuntimeError("EMBER_REQUIRE_TORCH=1 but torch is not installed: "
                               "pip install torch==2.13.0")
        return None
    return torch


_TORCH = _load_torch()


@pytest.fixture
def torch():
    """The real PyTorch module, the correctness oracle."""
    if _TORCH is None:
        pytest.skip("torch not installed (pip install torch==2.13.0)")
    return _TORCH


@pytest.fixture(autouse=True)
def _seed():
    ember.manual_seed(0)
    np.random.seed(0)
    yield
