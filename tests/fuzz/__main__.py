"""Long fuzzing profile: ``python -m tests.fuzz --examples 20000 [--seed N] [--minutes M]``.

Two fuzzers, both against torch:

- random op *programs* (``programs.py``): prints every mismatch as a program literal to paste
  into ``REGRESSIONS`` in ``test_fuzz.py``;
- every public *op* on random arguments (``ops.py``): mismatches are grouped by class (op and
  kind, e.g. ``ember_raises_forward``), the smallest case of each class kept; ``--json`` writes
  them (``--report`` also as markdown), ready for ``KNOWN`` in ``test_fuzz.py``.

``--derive`` re-probes torch for each op's argument templates (``signatures.json``).
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))      # tests/: oracle, opdb, fuzz

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402

from fuzz import ops as opfuzz  # noqa: E402
from fuzz.programs import check, programs  # noqa: E402


def run_programs(n, hseed):
    import torch
    counts = {"ok": 0, "error": 0, "mismatch": 0}
    mismatches = []

    @settings(max_examples=n, deadline=None, database=None,
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
    seed(hseed)(explore)()
    print("programs: %d in %.0f s: %d ok, %d raised the same error in both, %d mismatches "
          "(%d distinct)" % (sum(counts.values()), time.time() - t0, counts["ok"],
                             counts["error"], counts["mismatch"], len(mismatches)), flush=True)
    return mismatches


TRACE = open(os.environ["EMBER_FUZZ_TRACE"], "w") if os.environ.get("EMBER_FUZZ_TRACE") else None


def _size(case):
    specs = []
    opfuzz._collect_specs((case[2], case[3]), specs)
    return sum(int(1 + sum(s[1]) + len(s[1])) for s in specs) + len(specs)


def _dump(path, done, secs, classes, op_list, prog_mismatches):
    Path(path).write_text(json.dumps({
        "cases": done, "seconds": secs, "ops": len(op_list),
        "program_mismatches": prog_mismatches,
        "classes": [dict(ns=ns, name=name, kind=kind, **c)
                    for (ns, name, kind), c in sorted(classes.items())]}, default=repr))


def run_ops(n, base_seed, minutes, with_opdb=True, dump=None):
    """Round-robin over every covered op until ``n`` cases or ``minutes`` pass."""
    sigs = opfuzz.signatures()
    op_list = [op for op in opfuzz.universe() if sigs.get(op)]
    if with_opdb:
        op_list += [("opdb", k) for k in sorted(opfuzz.opdb_entries())]
    classes = {}                 # (ns, name, kind) -> {count, case, detail, tags}
    done = 0
    t0 = time.time()
    k = 0
    while done < n and time.time() - t0 < minutes * 60:
        for op in op_list:
            case = opfuzz.gen_case(op, base_seed + k)
            if case is None:
                continue
            if TRACE:
                TRACE.write(repr(case) + "\n")
                TRACE.flush()
            try:
                m = opfuzz.check_case(case, timeout=10)
            except Exception as e:  # noqa: BLE001  (a harness failure is itself reported)
                m = opfuzz.Mismatch("harness", "%s: %s" % (type(e).__name__, e))
            done += 1
            if m is not None:
                key = (op[0], op[1], m.kind)
                c = classes.setdefault(key, {"count": 0, "case": case, "detail": m.detail,
                                             "tags": opfuzz.input_features(case)})
                c["count"] += 1
                if _size(case) < _size(c["case"]):
                    c.update(case=case, detail=m.detail, tags=opfuzz.input_features(case))
            if done >= n or time.time() - t0 >= minutes * 60:
                break
        k += 1
        if dump:                                  # every round: a C-level hang loses nothing
            dump(done, time.time() - t0, classes, op_list)
        print("ops: round %d, %d cases, %d classes, %.0f s" % (k, done, len(classes),
                                                               time.time() - t0), flush=True)
    return done, time.time() - t0, classes, op_list


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--examples", type=int, default=20000, help="random programs to run")
    ap.add_argument("--op-cases", type=int, default=10 ** 9, help="op cases to run at most")
    ap.add_argument("--minutes", type=float, default=10.0, help="time for the op fuzzer")
    ap.add_argument("--seed", type=int, default=0, help="seed of both fuzzers")
    ap.add_argument("--json", help="write the op mismatch classes here")
    ap.add_argument("--derive", action="store_true", help="re-probe op signatures and exit")
    args = ap.parse_args(argv)
    if args.derive:
        found = opfuzz.derive()
        print("%d of %d ops have templates" % (sum(1 for v in found.values() if v), len(found)))
        return 0
    prog_mismatches = run_programs(args.examples, args.seed) if args.examples else []
    dump = None
    if args.json:
        def dump(*a):
            _dump(args.json, *a, prog_mismatches)
    done, secs, classes, op_list = run_ops(args.op_cases, args.seed * 100003, args.minutes,
                                           dump=dump)
    print("ops: %d cases over %d ops in %.0f s: %d mismatch classes" % (
        done, len(op_list), secs, len(classes)))
    for (ns, name, kind), c in sorted(classes.items()):
        print("OP-MISMATCH %s:%s %s x%d %s\n  %r\n  %s" % (ns, name, kind, c["count"],
                                                        c["tags"], c["case"], c["detail"]))
    if args.json:
        _dump(args.json, done, secs, classes, op_list, prog_mismatches)
    return 1 if (classes or prog_mismatches) else 0


if __name__ == "__main__":
    sys.exit(main())
