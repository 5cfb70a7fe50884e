"""gradcheck (and gradgradcheck where torch's passes) for every public differentiable op.

For each op of the fuzzer's universe (``tests/fuzz/ops.py``; random ops, in-place ops and ops
without a floating output left out) a float64 case is drawn from the op's fuzz templates:
canonical (probe) arguments first, then a few tame random seeds; every floating tensor
argument requires grad (or only the first one, where torch has no derivative for the others).
The first case that torch runs, with a differentiable output and on which torch's own
``torch.autograd.gradcheck`` passes, is the op's case: ember's ``gradcheck`` must pass on the
same arguments, and ember's ``gradgradcheck`` too where torch's ``gradgradcheck`` passes.

Choosing the cases runs torch's checks for every op, so the choice is cached in
``tests/gradcheck_known.json`` (``python tests/test_gradcheck_all.py --refresh`` rewrites it);
an op whose cached case no longer matches its templates is searched again live.
"""
import json
import signal
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

from fuzz import ops as opfuzz  # noqa: E402

CACHE = Path(__file__).with_name("gradcheck_known.json")
TOL = {"eps": 1e-6, "atol": 1e-5, "rtol": 1e-3}        # torch's gradcheck defaults (float64)
SEEDS = 6                       # random tame seeds tried after the canonical (probe) case
SEARCH_LIMIT = 4.0              # seconds of torch time per op to find a case
CHECK_LIMIT = 2                 # seconds for ember's gradcheck, and again for its gradgradcheck

# Real gradient bugs in ember: op -> why (strict xfails; remove an entry once fixed).
KNOWN: dict = {}


class _Slow(BaseException):
    pass


def _alarm(signum, frame):
    raise _Slow()


class _limit:
    """Raise ``_Slow`` after ``seconds`` (wall clock)."""

    def __init__(self, seconds):
        self.seconds = seconds

    def __enter__(self):
        self.old = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def __exit__(self, *exc):
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self.old)
        return False


def _warm_up():
    """Run torch's checks once so their lazy imports never happen under a time limit."""
    x = torch.ones(2, dtype=torch.float64, requires_grad=True)
    torch.autograd.gradcheck(torch.sin, (x,), **TOL)
    torch.autograd.gradgradcheck(torch.sin, (x,), **TOL)


def _ops():
    out = []
    for ns, name in opfuzz.universe():
        if name in opfuzz.RANDOM or (name.endswith("_") and not name.endswith("__")):
            continue
        out.append((ns, name))
    return out


# ---------------------------------------------------------------- cases

def _tame(obj, fill_u):
    """Specs turned float64 / complex128, finite, contiguous; ``grad(spec)`` sets requires_grad."""
    if isinstance(obj, tuple) and obj and obj[0] == "T":
        _, shape, dt, fill, layout, _g = obj
        if dt in ("float16", "bfloat16", "float32"):
            dt = "float64"
        elif dt == "complex64":
            dt = "complex128"
        if fill == "x":
            fill = "u"
        if fill == "u" and fill_u and opfuzz._is_float(dt):
            fill = fill_u
        return ("T", tuple(shape), dt, fill, "c", False)
    if isinstance(obj, tuple) and obj and obj[0] in ("L", "TUP"):
        return (obj[0], [_tame(x, fill_u) for x in obj[1]])
    if isinstance(obj, list):
        return [_tame(x, fill_u) for x in obj]
    if isinstance(obj, tuple):
        return tuple(_tame(x, fill_u) for x in obj)
    if isinstance(obj, dict):
        return {k: _tame(v, fill_u) for k, v in obj.items()}
    return obj


def _set_grad(obj, state, mode):
    """requires_grad on floating specs: every one (mode "all") or the first ("first")."""
    if isinstance(obj, tuple) and obj and obj[0] == "T":
        floating = opfuzz._is_float(obj[2]) and not (isinstance(obj[3], (list, tuple)))
        want = floating and (mode == "all" or state[0] == 0)
        if floating:
            state[0] += 1
        return obj[:5] + (bool(want),)
    if isinstance(obj, tuple) and obj and obj[0] in ("L", "TUP"):
        return (obj[0], [_set_grad(x, state, mode) for x in obj[1]])
    if isinstance(obj, list):
        return [_set_grad(x, state, mode) for x in obj]
    if isinstance(obj, tuple):
        return tuple(_set_grad(x, state, mode) for x in obj)
    if isinstance(obj, dict):
        return {k: _set_grad(v, state, mode) for k, v in obj.items()}
    return obj


def make_case(op, seed, mode, fill=None):
    """The float64 case for ``op``: seed -1 is the canonical (probe) one; None if no template.

    ``fill`` replaces uniform values in [-2, 2) (``"pos"``: (0.1, 2), ``"prob"``: (0.05, 0.95))
    for ops defined on part of the line only (log, asin, ...)."""
    tpls = opfuzz.signatures().get(op) or []
    if not tpls:
        return None
    g = opfuzz.Gen(max(seed, 0), probe=seed < 0, dtype="float64")
    g.tame = True
    tpl = g.pick(tpls)
    if "@" in tpl:                                          # an integer-only template
        return None
    args, kwargs = opfuzz.TEMPLATES[tpl](g)
    args, kwargs = _tame(list(args), fill), _tame(dict(kwargs), fill)
    state = [0]
    args = _set_grad(args, state, mode)
    kwargs = _set_grad(kwargs, state, mode)
    return (op[0], op[1], args, kwargs, max(seed, 0))


def _place(obj, it):
    if isinstance(obj, tuple) and obj and obj[0] == "T":
        return next(it)
    if isinstance(obj, tuple) and obj and obj[0] == "L":
        return [_place(x, it) for x in obj[1]]
    if isinstance(obj, tuple) and obj and obj[0] == "TUP":
        return tuple(_place(x, it) for x in obj[1])
    if isinstance(obj, list):
        return [_place(x, it) for x in obj]
    if isinstance(obj, tuple):
        return tuple(_place(x, it) for x in obj)
    if isinstance(obj, dict):
        return {k: _place(v, it) for k, v in obj.items()}
    return obj


def _flat_float(out, L):
    if isinstance(out, L.Tensor):
        return [out] if (out.is_floating_point() or out.is_complex()) else []
    if isinstance(out, (list, tuple)):
        return [t for v in out for t in _flat_float(v, L)]
    return []


def build(L, case):
    """``(fn, inputs)`` for gradcheck: ``fn(*inputs)`` runs the op on the case's arguments."""
    ns, name, args, kwargs, seed = case
    specs = []
    opfuzz._collect_specs((args, kwargs), specs)
    rng = np.random.default_rng(seed + 7919)
    arrays = [opfuzz._values(s, rng) for s in specs]
    tensors = [L.tensor(a.copy()) for a in arrays]
    grad_pos = [k for k, s in enumerate(specs) if s[5]]
    inputs = tuple(tensors[k].requires_grad_() for k in grad_pos)

    def fn(*xs):
        # Clones: an op may write into its arguments (``inplace=True``, running statistics).
        ts = [t.clone() for t in tensors]
        for k, x in zip(grad_pos, xs):
            ts[k] = x.clone()
        it = iter(ts)
        a, kw = _place(list(args), it), _place(dict(kwargs), it)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if ns == "Tensor":
                out = getattr(a[0], name)(*a[1:], **kw)
            else:
                out = getattr(opfuzz._NS[ns](L), name)(*a, **kw)
        return tuple(_flat_float(out, L))
    return fn, inputs


def _torch_verdict(case):
    """None if the case is unusable; else (gradcheck ok or a reason, gradgradcheck ok)."""
    try:
        fn, inputs = build(torch, case)
        if not inputs:
            return None
        outs = fn(*inputs)
    except Exception:  # noqa: BLE001  (torch refuses these arguments: try another case)
        return None
    if not any(o.requires_grad for o in outs):
        return "no differentiable output"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ok = torch.autograd.gradcheck(fn, inputs, **TOL)
    except Exception as e:  # noqa: BLE001
        msg = str(e)
        if "not implemented" in msg.lower() or "not supported" in msg.lower():
            return "torch: not implemented: " + msg.splitlines()[0][:120]
        return "torch's gradcheck fails: %s: %s" % (type(e).__name__, msg.splitlines()[0][:100])
    if not ok:
        return "torch's gradcheck fails"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gg = bool(torch.autograd.gradgradcheck(fn, inputs, **TOL))
    except Exception:  # noqa: BLE001  (no second derivative in torch)
        gg = False
    return (True, gg, [bool(o.requires_grad) for o in outs])


def _size(case):
    """A case's cost: its tensors' element counts; None when a grad input is empty."""
    specs = []
    opfuzz._collect_specs((case[2], case[3]), specs)
    if any(s[5] and 0 in s[1] for s in specs):
        return None
    return sum(max(int(np.prod(s[1])), 1) for s in specs)


def search(op):
    """``{"seed", "mode", "case", "gg"}`` for the smallest usable case, or ``{"skip": reason}``."""
    if make_case(op, -1, "all") is None:
        return {"skip": "no float template"}
    cands = []
    for fill in (None, "pos", "prob"):
        more = []
        for seed in [-1] + list(range(SEEDS)):
            case = make_case(op, seed, "all", fill)
            size = None if case is None else _size(case)
            if size is not None and case not in [c[3] for c in cands + more]:
                more.append((size, seed, fill, case))
        cands += sorted(more, key=lambda c: (c[0], c[1]))
    reasons = []
    start = time.perf_counter()
    try:
        with _limit(SEARCH_LIMIT):
            for _, seed, fill, case in cands:
                for mode in ("all", "first"):
                    if mode == "first":
                        case = make_case(op, seed, "first", fill)
                        if case == make_case(op, seed, "all", fill):
                            continue
                    v = _torch_verdict(case)
                    if v is None:
                        continue                # torch refuses: maybe a grad it has not
                    if isinstance(v, str):
                        reasons.append(v)
                        if v.startswith("torch: not implemented") and mode == "all":
                            continue
                        break
                    return {"seed": seed, "mode": mode, "fill": fill, "case": case,
                            "gg": v[1], "diff": v[2]}
    except _Slow:
        return {"skip": "slow: torch search over %.0f s" % (time.perf_counter() - start)}
    if reasons:
        return {"skip": reasons[0]}
    return {"skip": "no case torch runs with a tensor requiring grad"}


def _jsonable(obj):
    return json.loads(json.dumps(obj))


def _key(op):
    return "%s:%s" % op


_CACHE = {}


def _cached():
    if not _CACHE:
        _CACHE["data"] = json.loads(CACHE.read_text()) if CACHE.exists() else {}
    return _CACHE["data"]


def plan(op):
    """The op's case from the cache when its templates still give it, else searched live."""
    entry = _cached().get(_key(op))
    if entry is not None:
        if "skip" in entry:
            return entry
        case = make_case(op, entry["seed"], entry["mode"], entry.get("fill"))
        if case is not None and _jsonable(case) == entry["case"]:
            return dict(entry, case=case)
    return search(op)


OPS = _ops()
_warm_up()


def _param(op):
    key = _key(op)
    marks = [pytest.mark.xfail(strict=True, reason=KNOWN[key])] if key in KNOWN else []
    return pytest.param(op, id=key, marks=marks)


@pytest.mark.parametrize("op", [_param(op) for op in OPS])
def test_gradcheck(op):
    """ember's gradcheck (and gradgradcheck where torch's passes) on torch's checked case."""
    p = plan(op)
    if "skip" in p:
        pytest.skip(p["skip"])
    fn, inputs = build(ember, p["case"])
    # (gradcheck skips outputs that do not require grad: a lost graph must not pass unseen)
    diff = [bool(o.requires_grad) for o in fn(*inputs)]
    assert diff == p["diff"], "outputs requiring grad: ember %s, torch %s" % (diff, p["diff"])
    try:
        with _limit(CHECK_LIMIT):
            assert ember.autograd.gradcheck(fn, inputs, **TOL)
    except _Slow:
        pytest.skip("slow: ember's gradcheck over %g s" % CHECK_LIMIT)
    if p["gg"]:
        try:
            with _limit(CHECK_LIMIT):
                assert ember.autograd.gradgradcheck(fn, inputs, **TOL)
        except _Slow:
            pytest.skip("slow: ember's gradgradcheck over %g s (gradcheck passed)" % CHECK_LIMIT)


def refresh():
    """Search every op's case with torch and rewrite the cache file."""
    global SEARCH_LIMIT
    SEARCH_LIMIT = 20.0
    torch.set_num_threads(1)
    data = {}
    for op in OPS:
        r = search(op)
        data[_key(op)] = dict(r, case=_jsonable(r["case"])) if "case" in r else r
    CACHE.write_text(json.dumps(data, indent=0, sort_keys=True) + "\n")
    return data


if __name__ == "__main__":
    if "--refresh" in sys.argv:
        d = refresh()
        print(len(d), sum("skip" not in v for v in d.values()),
              sum(bool(v.get("gg")) for v in d.values()))
