"""The package's shape, checked from its source: imports point one way, no cycle among files
(function-level imports included), and no NumPy call on tensor data outside the backend layer
and the host-side modules (printing, serialization, data loading, data sets)."""
import ast
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "src" / "ember"

# Layers, lowest first: a module may import only from its own layer or below.
LAYERS = [
    ("backend",),
    ("dtypes", "_tensor_str", "return_types"),
    ("tensor", "random"),
    ("autograd",),
    ("ops", "linalg", "cuda", "fft", "special", "sparse", "backends", "_lowrank",
     "_lobpcg", "accelerator", "mps", "xpu"),
    ("nn", "optim", "utils", "serialization", "datasets", "distributions", "func", "distributed",
     "compiler", "_dynamo", "testing", "signal", "amp", "multiprocessing", "profiler", "hub",
     "types", "quasirandom", "__future__"),
    ("viz", "_check", "_demo", "__main__", "__init__", "_torch_ns", "_tensor_compat", "jit",
     "version", "cpu", "functional", "_torch_function", "overrides", "_saved_names",
     "_legacy_storage", "fx", "library", "nested", "masked"),
]

# Files whose job is host data: they may call NumPy on arrays. Elsewhere a line (or the first
# line of its statement) marked ``# host: why`` works on host data by design.
HOST_SIDE = ("_tensor_str.py", "serialization.py", "random.py", "utils/data/", "datasets/",
             "backend/", "viz/", "_demo.py", "_check.py", "autograd/gradcheck.py",
             "distributed/", "testing/", "quasirandom.py")     # (Sobol state: CPU, as torch's)

# NumPy names that are about dtypes and constants, not about tensor data.
NP_ALLOWED = {
    "dtype", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
    "uint16", "uint32", "uint64", "bool_", "complex64", "complex128", "integer", "floating",
    "number", "generic", "signedinteger", "unsignedinteger", "complexfloating", "inexact",
    "iinfo", "finfo", "inf", "nan", "pi", "e", "newaxis", "can_cast", "promote_types",
    "result_type", "broadcast_shapes", "ndarray", "euler_gamma", "bool", "half", "double",
    "longlong", "intp", "uintp", "object_", "str_", "bytes_", "void", "errstate",
}


def _modules():
    out = {}
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(name, path, modules):
    """The ember modules ``name`` imports anywhere in its file (with their packages' inits
    when the import crosses into another package)."""
    tree = ast.parse(path.read_text())
    is_pkg = path.name == "__init__.py"
    pkg = name if is_pkg else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[:len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [mod] + [mod + "." + a.name for a in node.names]
        for t in targets:
            # (an ancestor package of ``name`` is already being imported: no edge)
            if t in modules and t != name and not name.startswith(t + "."):
                found.add(t)
    closed = set(found)
    for t in found:     # entering another package runs its __init__
        parts = t.split(".")
        for i in range(2, len(parts)):
            parent = ".".join(parts[:i])
            if parent in modules and not name.startswith(parent + ".") and parent != name:
                closed.add(parent)
    return closed


def _graph():
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _layer(name):
    parts = name.split(".")
    key = parts[1] if len(parts) > 1 else "__init__"
    for i, names in enumerate(LAYERS):
        if key in names:
            return i
    raise AssertionError("module %s is in no layer of tests/test_architecture.py" % name)


def _cycles(graph):
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def test_no_import_cycles():
    """No cycle among ember's files, function-level imports included (tensor.py reaches ops
    only through the table ember/__init__.py binds, which is no import)."""
    cycles = _cycles(_graph())
    assert not cycles, "import cycles: %s" % cycles


def test_imports_point_down():
    """backend -> dtypes -> tensor -> autograd -> ops -> nn/optim/utils -> tools."""
    bad = []
    for name, deps in _graph().items():
        for d in deps:
            if _layer(d) > _layer(name):
                bad.append("%s -> %s" % (name, d))
    assert not bad, "imports pointing up a layer:\n" + "\n".join(sorted(bad))


def _np_calls(path):
    text = path.read_text()
    host_lines = {i + 1 for i, line in enumerate(text.splitlines()) if "# host:" in line}
    tree = ast.parse(text)
    aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases |= {a.asname or a.name for a in node.names if a.name == "numpy"}
        elif isinstance(node, ast.ImportFrom) and node.module == "numpy" and not node.level:
            for a in node.names:
                if a.name not in NP_ALLOWED:
                    yield node.lineno, "from numpy import " + a.name
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id in aliases and node.attr not in NP_ALLOWED:
            up = parents.get(node)
            if node.attr == "linalg" and isinstance(up, ast.Attribute) \
                    and up.attr == "LinAlgError":
                continue    # an exception class, raised by every backend
            first = _statement(node, parents).lineno - 1     # (or on the line above it)
            if any(line in host_lines for line in range(first, node.lineno + 1)):
                continue    # marked ``# host: why``: host data by design (a random draw, ...)
            yield node.lineno, "np." + node.attr


def _statement(node, parents):
    """The statement that contains ``node`` (a ``# host:`` mark may stand on its first line)."""
    while not isinstance(node, ast.stmt) and node in parents:
        node = parents[node]
    return node


def test_no_numpy_on_tensor_data():
    """Outside the backend layer and the host-side modules, array calls go through the array
    module of the data (``xp``), so that every op runs on every device."""
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if any(rel == h or rel.startswith(h) for h in HOST_SIDE):
            continue
        for line, what in _np_calls(path):
            found.append("ember/%s:%d %s" % (rel, line, what))
    assert not found, "%d NumPy calls outside the backend layer:\n%s" % (
        len(found), "\n".join(found))


def test_import_time(tmp_path):
    """``import ember`` stays under 0.15 s (best of three fresh interpreters, with compiled
    bytecode as an installed package has it; NumPy, a dependency whose own import time is not
    ember's, is imported first)."""
    env = dict(os.environ, PYTHONPYCACHEPREFIX=str(tmp_path))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-c", "import ember"], env=env, check=True)   # compile
    code = ("import numpy, time; t = time.perf_counter(); import ember; "
            "print(time.perf_counter() - t)")
    best = min(float(subprocess.run([sys.executable, "-c", code], capture_output=True, env=env,
                                    text=True, check=True).stdout) for _ in range(3))
    if best > 0.15:
        pytest.fail("import ember took %.3f s (budget 0.15 s)" % best)
