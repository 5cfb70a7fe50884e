"""Long fuzzing profile: ``python -m tests.fuzz --examples 20000 [--seed N]``.

Runs random programs (see ``programs.py``) in ember and torch and prints every mismatch as a
program literal to paste into ``REGRESSIONS`` in ``test_fuzz.py``, then a summary line.
"""
import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))      # tests/: oracle, opdb, fuzz

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402

from fuzz.programs import check, programs  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--examples", type=int, default=20000, help="programs to run")
    ap.add_argument("--seed", type=int, default=0, help="hypothesis seed")
    args = ap.parse_args(argv)
    import torch
    counts = {"ok": 0, "error": 0, "mismatch": 0}
    mismatches = []

    @settings(max_examples=args.examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(program=programs())
    def explore(program):
        try:
            counts[check(torch, program)] += 1
        except AssertionError as e:
            counts["mismatch"] += 1
            key = repr(program)
            if key not in mismatches:
                mismatches.append(key)
                print("MISMATCH %s\n  %s" % (key, str(e).splitlines()[0] if str(e) else ""))

    t0 = time.time()
    seed(args.seed)(explore)()
    print("%d programs in %.0f s: %d ok, %d raised the same error in both, %d mismatches "
          "(%d distinct)" % (sum(counts.values()), time.time() - t0, counts["ok"],
                             counts["error"], counts["mismatch"], len(mismatches)))
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
