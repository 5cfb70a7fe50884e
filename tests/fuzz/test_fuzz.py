"""Differential fuzzing against torch (issue 8, part 1): the CI profile and the regressions."""
import os

import pytest
from hypothesis import HealthCheck, given, settings

from fuzz.programs import check, programs

__all__ = []

torch = pytest.importorskip("torch")

# CI profile: EMBER_FUZZ_EXAMPLES overrides the count; `python -m tests.fuzz` runs long ones.
EXAMPLES = int(os.environ.get("EMBER_FUZZ_EXAMPLES", "1000"))


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(program=programs())
def test_random_programs_match_torch(program):
    check(torch, program)


# Every mismatch the fuzzer found, kept as a regression test: (shapes, dtype, code, outputs).
REGRESSIONS = [
]


@pytest.mark.parametrize("program", REGRESSIONS or [pytest.param(None, marks=pytest.mark.skip(
    reason="no mismatch found yet"))])
def test_regressions(program):
    check(torch, program)
