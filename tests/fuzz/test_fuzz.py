"""Differential fuzzing against torch (issues 8 and 21): the CI profile and the regressions.

Two fuzzers: random op programs (``programs.py``, hypothesis) and every public op on random
arguments (``ops.py``). The op fuzzer's known mismatch classes live in ``known_mismatches.json``
(written from the long profile, described in tests/fuzz/MISMATCHES.md): each one's
minimal case is an expected failure checked to still fail (xfail strict), and the CI op
cases tolerate a mismatch only when its class (op, kind) is listed there.
"""
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from fuzz import ops as opfuzz
from fuzz.programs import check, programs

__all__ = []

torch = pytest.importorskip("torch")

# The CI profile: 20,000 fixed (derandomized) programs (issue 21's count; about 80 s on 2
# cores) and
# OP_SEEDS fixed cases per public op. EMBER_FUZZ_EXAMPLES / EMBER_FUZZ_OP_SEEDS override the
# counts; `python -m tests.fuzz` runs new random ones (the long profile).
EXAMPLES = int(os.environ.get("EMBER_FUZZ_EXAMPLES", "20000"))
OP_SEEDS = int(os.environ.get("EMBER_FUZZ_OP_SEEDS", "1"))
REPORT = "tests/fuzz/MISMATCHES.md"
_KNOWN_FILE = Path(__file__).with_name("known_mismatches.json")
KNOWN = json.loads(_KNOWN_FILE.read_text()) if _KNOWN_FILE.exists() else []
_KNOWN_KEYS = {(ns, name, kind) for ns, name, kind, _case, _cause in KNOWN}


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(program=programs())
def test_random_programs_match_torch(program):
    check(torch, program)


# Every mismatch the fuzzer found, kept as a regression test: (shapes, dtype, code, outputs).
REGRESSIONS = [
    # relu_ saves its output; a second in-place op on it must fail backward (fixed in _inplace)
    ([(3,), (1, 3, 3)], "float32",
     [("unary", "clamp", 1), ("inplace", "relu_", 2), ("inplace", "relu_", 2)], [2]),
    ([()], "float32", [("binary", "add", 0, 0), ("flatten", 1), ("inplace", "clamp_", 2),
                       ("inplace", "relu_", 2), ("inplace", "add_", 2)], [2, 1]),
    ([(), (), ()], "float32", [("unary", "scale", 1), ("binary", "sub", 3, 1),
                               ("inplace", "relu_", 4), ("inplace", "add_", 4)], [4, 3]),
    # a view made before an in-place op on its base (or on another view of it) gets its
    # grad_fn regenerated through the base (fixed: autograd.function.refresh_view); these
    # gave silently wrong gradients before
    ([(), ()], "float32",
     [("unary", "log1p", 1), ("binary", "mul", 2, 0), ("flatten", 2),
      ("inplace", "mul_", 2), ("sum_all", 0), ("inplace", "mul_", 5)], [5, 4]),
    ([(), ()], "float64",
     [("binary", "sub", 0, 1), ("unary", "clone", 2), ("unary", "clone", 1),
      ("unsqueeze", 2, -1), ("inplace", "mul_", 2)], [5]),
    ([(1, 1)], "float32",
     [("expand", 0, (2, 2)), ("unary", "clamp", 0), ("binary", "add", 0, 0),
      ("flatten", 3), ("inplace", "mul_", 3)], [4, 3]),
    ([(0, 0), (1, 1, 1)], "float32",
     [("transpose", 1), ("transpose", 1), ("reduce", "sum", 3, -3, True),
      ("detach", 3), ("transpose", 4), ("inplace", "neg_", 4)], [6]),
    ([()], "float32",
     [("unary", "clamp", 0), ("unsqueeze", 1, 0), ("inplace", "relu_", 1),
      ("sum_all", 0), ("inplace", "neg_", 1), ("unary", "sin", 1),
      ("reduce", "sum", 2, 0, False), ("inplace", "clamp_", 3)], [5]),
    ([(1, 1, 3), (3,), (3, 1)], "float64",
     [("unary", "sin", 2), ("binary", "sub", 2, 0), ("expand", 3, (3, 2)),
      ("inplace", "mul_", 3)], [5, 4]),
    # masked write into an expanded tensor, as torch (fixed by the same change)
    ([(1,), (), (1,)], "float64",
     [("unary", "pow2", 2), ("inplace", "clamp_", 3), ("unary", "sigmoid", 2),
      ("binary", "add_alpha", 2, 2), ("expand", 5, (2,)), ("inplace", "mask_zero", 5)], [6]),
    # t[mask] = v on an expanded tensor outside the graph writes, with torch's deprecation
    # warning (fixed in ops/indexing)
    ([(1,), (1, 0, 0), (1, 1, 1)], "float64",
     [("unary", "scale", 0), ("unary", "sin", 2), ("detach", 4),
      ("expand", 5, (2, 2, 2)), ("unary", "tanh", 0),
      ("inplace", "mask_zero", 6), ("no_grad", "relu", 7), ("detach", 3)], [9, 8]),
    # in-place on a view of a size-0 tensor (fixed in _inplace._positions and write)
    ([(1, 3, 0), (0,), (3, 0)], "float64",
     [("unary", "clamp_min", 1), ("flatten", 3), ("inplace", "clamp_", 4)], [4]),
    ([(0, 1, 0)], "float64",
     [("binary", "add", 0, 0), ("reduce", "mean", 1, 1, True), ("detach", 1), ("flatten", 2),
      ("inplace", "clamp_", 1), ("transpose", 2), ("inplace", "mask_zero", 4)], [5]),
    ([(0, 1)], "float64", [("binary", "maximum", 0, 0), ("binary", "maximum", 0, 0),
                           ("expand", 2, (0, 2)), ("binary", "maximum", 1, 0),
                           ("inplace", "relu_", 3)], [4, 3]),
    # erfinv saves its input, as torch (fixed in ops/unary)
    ([(), (), ()], "float64", [("unary", "exp", 0), ("opdb", "opdb:erfinv", 3),
                               ("inplace", "mask_zero", 4)], [4]),
]


@pytest.mark.parametrize("program", REGRESSIONS)
def test_regressions(program):
    check(torch, program)


def _ops():
    sigs = opfuzz.signatures()
    found = [op for op in opfuzz.universe() if sigs.get(op)]
    return found + [("opdb", k) for k in sorted(opfuzz.opdb_entries())]


@pytest.mark.parametrize("op", _ops(), ids=lambda op: "%s:%s" % op)
def test_op_matches_torch(op):
    """OP_SEEDS fixed random cases; a mismatch fails unless its class is a known one."""
    for seed in range(OP_SEEDS):
        case = opfuzz.gen_case(op, 1000 + seed)
        if case is None:
            continue
        m = opfuzz.check_case(case, torch)
        if m is not None and (op[0], op[1], m.kind) not in _KNOWN_KEYS:
            pytest.fail("new mismatch class %s:%s %s: %s\n  case: %r" % (
                op[0], op[1], m.kind, m.detail, case))


class _KindChanged(Exception):
    """The pinned case still mismatches, but in another way: update known_mismatches.json."""


@pytest.mark.parametrize("ns,name,kind,case,cause", [
    pytest.param(*k, marks=pytest.mark.xfail(strict=True, raises=AssertionError,
                                             reason="%s: %s" % (REPORT, k[4])))
    for k in KNOWN], ids=["%s:%s:%s" % tuple(k[:3]) for k in KNOWN])
def test_known_mismatch_still_fails(ns, name, kind, case, cause):
    """Each known mismatch class's minimal case: fails (xfail) until the op is fixed; a fixed
    op makes this XPASS, which strict mode reports, so the entry gets removed."""
    m = opfuzz.check_case(opfuzz.case_from_json(case), torch)
    if m is not None and m.kind != kind:
        raise _KindChanged("%s:%s now %s: %s" % (ns, name, m.kind, m.detail))
    assert m is None, "%s (%s)" % (m.detail, cause)
