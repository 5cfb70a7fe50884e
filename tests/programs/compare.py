"""Run a program under PyTorch and under ember and compare what they print.

    python tests/programs/compare.py tests/programs/p_word_lm.py [...]

Each program imports the library as ``torch`` through ``TORCH_LIB`` (as the seed programs do)
and must exit 0 under both. Their outputs are compared line by line: the text between numbers
must be identical (runs of spaces count as one), and every number must agree within the
program's tolerance or one unit in its last printed decimal place (``# compare: rtol=1e-4
atol=1e-6`` anywhere in the program sets the tolerance; defaults rtol 1e-4, atol 1e-5).
``nan``/``inf`` must match exactly; object addresses (``0x7f...``) are ignored.

torch's output of a program is kept in a cache keyed by the program's text and the versions of
Python, NumPy and torch (``EMBER_PROGRAMS_CACHE``, default ``~/.cache/ember/torch-programs``;
``EMBER_PROGRAMS_CACHE=off`` runs torch every time): a program that has not changed is not
re-run under torch. Only runs that exit 0 are kept.
"""
import hashlib
import json
import math
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_ADDR = re.compile(r"0x[0-9a-fA-F]+")
_NUM = re.compile(r"[-+]?(?:nan|inf|(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)")


def start(path, lib):
    """Start one program under one library; ``finish`` collects it."""
    env = dict(os.environ, TORCH_LIB=lib, PYTHONHASHSEED="0",
               PYTHONPATH=os.path.join(ROOT, "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, path], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=os.path.dirname(path))


def finish(proc, timeout=300):
    """(returncode, stdout, stderr) of a started program; killed past ``timeout`` seconds."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return "timeout", out, err + "\ntimed out after %ds" % timeout
    return proc.returncode, out, err


def run(path, lib, timeout=300):
    """(returncode, stdout, stderr) of one program under one library."""
    return finish(start(path, lib), timeout)


def _cache_file(path):
    """Where torch's output of ``path`` is kept (None when the cache is off or torch is absent)."""
    default = os.path.join(os.path.expanduser("~"), ".cache", "ember", "torch-programs")
    root = os.environ.get("EMBER_PROGRAMS_CACHE", default)
    if root == "off":
        return None
    try:
        from importlib.metadata import version
        versions = "%s|%s|%s" % (sys.version, version("numpy"), version("torch"))
    except Exception:
        return None
    with open(path, "rb") as f:
        key = hashlib.sha256(f.read() + versions.encode()).hexdigest()[:32]
    return os.path.join(root, "%s-%s.json" % (os.path.basename(path)[:-3], key))


def torch_output(path, timeout=300):
    """(returncode, stdout, stderr) of ``path`` under torch, from the cache when it is there."""
    cached = _cache_file(path)
    if cached is not None and os.path.exists(cached):
        with open(cached) as f:
            return tuple(json.load(f))
    result = run(path, "torch", timeout)
    if cached is not None and result[0] == 0:
        os.makedirs(os.path.dirname(cached), exist_ok=True)
        with open(cached + ".tmp", "w") as f:
            json.dump(result, f)
        os.replace(cached + ".tmp", cached)
    return result


def tolerances(path):
    with open(path) as f:
        src = f.read()
    m = re.search(r"#\s*compare:\s*(.*)", src)
    tol = {"rtol": 1e-4, "atol": 1e-5}
    if m:
        for kv in m.group(1).split():
            k, v = kv.split("=")
            tol[k] = float(v)
    return tol


def _last_place(token):
    """One unit in the last printed decimal place of a number with a point (0 without one)."""
    m = re.match(r"[-+]?\d*\.(\d*)(?:[eE]([-+]?\d+))?$", token)
    if m is None:
        return 0.0
    return 10.0 ** (int(m.group(2) or 0) - len(m.group(1)))


def _close(a, b, rtol, atol):
    x, y = float(a), float(b)
    if math.isnan(x) or math.isnan(y) or math.isinf(x) or math.isinf(y):
        return (math.isnan(x) and math.isnan(y)) or x == y
    # (a value printed rounded may land on either side of a rounding boundary: one unit in the
    # last printed place is allowed too)
    return abs(x - y) <= max(atol + rtol * abs(y), 1.0001 * max(_last_place(a), _last_place(b)))


def diff(expected, got, rtol=1e-4, atol=1e-5):
    """The first difference between two outputs, as a message; None when they agree."""
    el, gl = _ADDR.sub("0x?", expected).splitlines(), _ADDR.sub("0x?", got).splitlines()
    for i, (e, g) in enumerate(zip(el, gl)):
        es, gs = " ".join(_NUM.split(e)).split(), " ".join(_NUM.split(g)).split()
        en, gn = _NUM.findall(e), _NUM.findall(g)
        if es != gs or len(en) != len(gn) or not all(_close(b, a, rtol, atol)
                                                     for a, b in zip(en, gn)):
            return "line %d differs:\n  torch: %s\n  ember: %s" % (i + 1, e, g)
    if len(el) != len(gl):
        return "torch printed %d lines, ember %d" % (len(el), len(gl))
    return None


def compare(path, timeout=300, ember=None):
    """None when the program behaves the same under both libraries, else what differs.

    ``ember``: the program's run under ember already started with ``start`` (else started here,
    beside torch's run when torch's output is not cached).
    """
    pe = ember if ember is not None else start(path, "ember")
    rt, ot, et = torch_output(path, timeout)
    re_, oe, ee = finish(pe, timeout)
    if rt != 0:
        return "the program fails under torch itself (rc=%s):\n%s" % (rt, et[-2000:])
    if re_ != 0:
        return "ember exits %s:\n%s" % (re_, (ee or oe)[-3000:])
    return diff(ot, oe, **tolerances(path))


if __name__ == "__main__":
    bad = 0
    for p in sys.argv[1:]:
        msg = compare(os.path.abspath(p))
        print(("ok   " if msg is None else "FAIL ") + os.path.basename(p)
              + ("" if msg is None else "\n" + msg))
        bad += msg is not None
    sys.exit(1 if bad else 0)
