"""``python -m ember check FILE.py``: test every custom autograd Function in a file.

For each Function subclass (new style or legacy) it builds float64 inputs and runs: gradcheck,
gradgradcheck (when the backward is differentiable), needs_input_grad, None gradients under
``set_materialize_grads(False)``, mark_dirty, tensors kept on ctx, and extreme inputs
(+-100 in float32, +-1e4 in float64). It prints one table row per Function, then the details
of what went wrong, and returns 1 when something failed.
"""
import argparse
import importlib.util
import inspect
import os
import sys
import traceback
import warnings

import numpy as np

from .backend import backend_for, backend_of, errstate, get_array_module, is_array, to_host

__all__ = ["main", "check_function", "find_functions", "CheckResult"]

CHECKS = ("forward", "gradcheck", "gradgradcheck", "needs_input_grad", "materialize_grads",
          "mark_dirty", "ctx_attributes", "extreme")
_EXTREMES = (("float32", 100.0), ("float64", 1e4))


class CheckResult:
    """Outcome of every check for one Function: ``status[check]`` is ok/FAIL/warn/skip."""

    def __init__(self, name):
        self.name = name
        self.status = {c: "skip" for c in CHECKS}
        self.details = {c: [] for c in CHECKS}

    def set(self, check, status, detail=None):
        order = {"skip": 0, "ok": 1, "warn": 2, "FAIL": 3}
        if order[status] >= order[self.status[check]]:
            self.status[check] = status
        if detail:
            self.details[check].append(detail)

    @property
    def failed(self):
        return any(s == "FAIL" for s in self.status.values())


def _load(path):
    path = os.path.abspath(path)
    name = "_ember_check_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(path))
    try:
        sys.modules[name] = module
        spec.loader.exec_module(module)
    finally:
        sys.path.pop(0)
    return module


def find_functions(module):
    """Function subclasses defined in ``module`` (new style and legacy), in definition order."""
    from .autograd.function import Function
    found = []
    for name, obj in vars(module).items():
        if (isinstance(obj, type) and issubclass(obj, Function) and obj is not Function
                and obj.__module__ == module.__name__):
            found.append((name, obj))
    return found


def _caller(cls):
    """A plain function running ``cls`` on its arguments (``apply`` or a legacy instance)."""
    if cls._is_legacy:
        def call(*args):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                return cls()(*args)
        return call
    return cls.apply


def _on_copies(call):
    """Run ``call`` on (differentiable) copies of its tensor arguments.

    Functions that modify an input in place (``mark_dirty``) can then be checked with leaf
    inputs, and the finite differences never see a modified input.
    """
    from .tensor import Tensor

    def run(*args):
        return call(*[a.clone() if isinstance(a, Tensor) else a for a in args])
    return run


def _parse_shape(text):
    text = text.strip().strip("()[]")
    return tuple(int(s) for s in text.split(",") if s.strip())


def _forward_params(cls):
    fwd = inspect.getattr_static(cls, "forward")
    fn = fwd.__func__ if isinstance(fwd, (staticmethod, classmethod)) else fwd
    params = list(inspect.signature(fn).parameters.values())[1:]   # drop ctx / self
    return [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _spec_for(cls, shapes, default_shape):
    """Argument specs: ('tensor', shape) or ('value', v), from example_inputs, hints or --shape.

    ``shapes`` maps argument names or positions to shapes (the ``--shape`` option).
    """
    ex = getattr(cls, "example_inputs", None)
    if ex is not None:
        values = ex() if callable(ex) else ex
        if not isinstance(values, (tuple, list)):
            values = (values,)
        return [_spec_of_value(v) for v in values]
    specs = []
    for k, p in enumerate(_forward_params(cls)):
        shape = shapes.get(p.name, shapes.get(k))
        hint = p.annotation
        if shape is None and isinstance(hint, tuple) and all(isinstance(d, int) for d in hint):
            shape = hint
        if shape is None and isinstance(hint, str) and hint.strip()[:1] in "([":
            shape = _parse_shape(hint)
        if shape is not None:
            specs.append(("tensor", tuple(shape)))
        elif p.default is not inspect.Parameter.empty:
            specs.append(("value", p.default))
        else:
            specs.append(("tensor", default_shape))
    return specs


def _spec_of_value(v):
    from .tensor import Tensor
    if isinstance(v, Tensor):
        if v._array.dtype.kind == "f":
            return ("array", v._array)
        return ("value", v)
    if is_array(v) and v.dtype.kind == "f":
        return ("array", v)
    return ("value", v)


def _make_inputs(specs, rng, dtype="float64", fill=None, requires_grad=True):
    """Float tensors from ``specs``, built on the host, then moved to the example array's device
    (or the default device for a shape)."""
    from .tensor import Tensor
    out = []
    for kind, v in specs:
        if kind == "value":
            out.append(v)
            continue
        device = backend_of(v) if kind == "array" else backend_for(None)
        if kind == "array":
            arr = np.array(to_host(v), dtype=dtype)
        else:
            arr = rng.standard_normal(v)
            # keep values away from kinks (relu at 0, abs ...) so finite differences are fair
            arr = np.where(np.abs(arr) < 0.05, arr + np.sign(arr + 1e-12) * 0.1, arr)
        if fill is not None:
            arr = np.full(np.shape(arr), fill)
        t = Tensor._wrap(device.asarray(np.ascontiguousarray(arr, dtype=dtype)))
        t._requires_grad = requires_grad
        out.append(t)
    return out


def _tensor_idx(inputs):
    from .tensor import Tensor
    return [i for i, x in enumerate(inputs) if isinstance(x, Tensor)]


def _outputs(out):
    from .tensor import Tensor
    outs = out if isinstance(out, tuple) else (out,)
    return [o for o in outs if isinstance(o, Tensor)]


def _short(exc):
    text = "%s: %s" % (type(exc).__name__, exc)
    return text.splitlines()[0][:300]


def _clone(inputs, grad_idx=None):
    """Fresh copies of ``inputs``; tensors require grad when their index is in ``grad_idx``."""
    from .tensor import Tensor
    out = []
    for i, x in enumerate(inputs):
        if isinstance(x, Tensor):
            t = Tensor._wrap(x._array.copy())
            t._requires_grad = grad_idx is None or i in grad_idx
            out.append(t)
        else:
            out.append(x)
    return out


def check_function(cls, shapes=None, default_shape=(3, 4), seed=0, fail_on_overflow=True):
    """Run every check on the Function class ``cls``; return a :class:`CheckResult`."""
    res = CheckResult(cls.__name__)
    rng = np.random.default_rng(seed)
    raw = _caller(cls)
    call = _on_copies(raw)
    try:
        specs = _spec_for(cls, shapes or {}, tuple(default_shape))
        inputs = _make_inputs(specs, rng)
    except Exception as e:  # noqa: BLE001 - reported, not raised
        res.set("forward", "FAIL", "could not build inputs: " + _short(e))
        return res
    t_idx = [i for i in _tensor_idx(inputs) if inputs[i]._array.dtype.kind == "f"]
    if not t_idx:
        res.set("forward", "FAIL", "no floating-point tensor argument to differentiate; give "
                                   "example_inputs() or --shape")
        return res
    node = _check_forward(res, raw, inputs, t_idx)
    if node is None:
        return res
    _check_ctx(res, node)
    _check_gradcheck(res, call, inputs)
    _check_gradgrad(res, call, inputs)
    _check_needs_input_grad(res, call, inputs, t_idx)
    _check_materialize(res, cls, call, inputs)
    _check_extreme(res, call, specs, t_idx, fail_on_overflow)
    if res.status["gradgradcheck"] == "FAIL" and res.status["ctx_attributes"] == "warn":
        res.details["ctx_attributes"].append(
            "the double backward is wrong (see gradgradcheck): tensors read from ctx "
            "attributes are not reconnected to the graph under create_graph=True")
        res.set("ctx_attributes", "FAIL")
    return res


def _check_forward(res, call, inputs, t_idx):
    """Run forward once; check mark_dirty against the inputs' values and versions."""
    probe = _clone(inputs)
    # A leaf that requires grad can't be modified in place; check dirtiness on non-leaves.
    from .autograd.grad_mode import enable_grad
    with enable_grad():
        probe_in = [x * 1 if i in t_idx else x for i, x in enumerate(probe)]
        before = {i: (probe_in[i]._array.copy(), probe_in[i]._version_ref[0]) for i in t_idx}
        try:
            out = call(*probe_in)
        except Exception as e:  # noqa: BLE001
            res.set("forward", "FAIL", "forward raised " + _short(e))
            return None
    outs = _outputs(out)
    node = next((o.grad_fn for o in outs if o.grad_fn is not None), None)
    if node is None:
        res.set("forward", "FAIL", "no output has a grad_fn (does forward return a Tensor "
                                   "computed from its inputs?)")
        return None
    res.set("forward", "ok")
    dirty = getattr(node, "_dirty", ())
    res.set("mark_dirty", "ok")
    for i in t_idx:
        arr, version = before[i]
        x = probe_in[i]
        changed = not bool(get_array_module(arr).array_equal(arr, x._array, equal_nan=True))
        bumped = x._version_ref[0] != version
        marked = any(d is x for d in dirty)
        if (changed or bumped) and not marked:
            res.set("mark_dirty", "FAIL", "input %d was modified in place by forward (%s) but "
                    "not passed to ctx.mark_dirty()" % (i, "values changed" if changed else
                                                       "version bumped"))
        elif marked and not changed and not bumped:
            res.set("mark_dirty", "warn", "input %d is marked dirty but forward did not "
                                          "modify it" % i)
    return node


def _check_ctx(res, node):
    from .tensor import Tensor
    found = []
    for k, v in sorted(vars(node).items()):
        if k in ("_saved", "_to_save", "_dirty", "_non_diff", "_edges", "variable"):
            continue
        vals = v if isinstance(v, (list, tuple)) else (v,)
        if any(isinstance(t, Tensor) for t in vals):
            found.append(k)
    if found:
        res.set("ctx_attributes", "warn", "tensor(s) kept as ctx attributes: %s; use "
                "ctx.save_for_backward() (version checks, freeing, correct double backward)"
                % ", ".join("ctx." + k for k in found))
    else:
        res.set("ctx_attributes", "ok")


def _gc_detail(e, what, n_in=None):
    from .autograd.gradcheck import GradcheckError
    if isinstance(e, GradcheckError) and e.input_index is not None:
        which = "input %d" % e.input_index
        if n_in is not None and e.input_index >= n_in:
            which = "grad_output %d" % (e.input_index - n_in)
        return ("%s wrong for %s (output %d): worst element [in %d, out %d]: analytic %.6g vs "
                "numeric %.6g" % (what, which, e.output_index, e.input_element,
                                  e.output_element, e.analytical, e.numerical))
    return "%s raised %s" % (what, _short(e))


def _check_gradcheck(res, call, inputs):
    from .autograd.gradcheck import gradcheck
    try:
        gradcheck(call, tuple(_clone(inputs)), eps=1e-6, atol=1e-5, rtol=1e-3)
        res.set("gradcheck", "ok")
    except Exception as e:  # noqa: BLE001
        res.set("gradcheck", "FAIL", _gc_detail(e, "gradient"))


def _check_gradgrad(res, call, inputs):
    from .autograd.engine import grad as _grad
    from .autograd.gradcheck import gradgradcheck
    from .autograd.grad_mode import enable_grad
    ins = _clone(inputs)
    idx = _tensor_idx(ins)
    try:
        with enable_grad():
            outs = [o for o in _outputs(call(*ins)) if o._requires_grad]
            gos = [o * 0 + 1 for o in outs]
            grads = _grad(outs, [ins[i] for i in idx], gos, create_graph=True, allow_unused=True)
    except Exception as e:  # noqa: BLE001
        res.set("gradgradcheck", "skip", "backward under create_graph raised " + _short(e))
        return
    if not any(g is not None and g._requires_grad for g in grads):
        res.set("gradgradcheck", "skip", "backward is not differentiable (no graph recorded "
                                         "under create_graph=True)")
        return
    try:
        gradgradcheck(call, tuple(_clone(inputs)), eps=1e-6, atol=1e-5, rtol=1e-3)
        res.set("gradgradcheck", "ok")
    except Exception as e:  # noqa: BLE001
        if "once_differentiable" in str(e):
            res.set("gradgradcheck", "skip", "backward is @once_differentiable")
        else:
            res.set("gradgradcheck", "FAIL", _gc_detail(e, "double backward", len(inputs)))


def _call_node(node, outs, rng):
    from .autograd.grad_mode import no_grad
    from .tensor import Tensor
    grads = [Tensor._wrap(backend_of(o._array).asarray(
        rng.standard_normal(o._array.shape).astype(o._array.dtype))) for o in outs]
    with no_grad():
        result = node._call_backward(grads)
    return result if isinstance(result, tuple) else (result,)


def _check_needs_input_grad(res, call, inputs, t_idx):
    from .autograd.grad_mode import enable_grad
    rng = np.random.default_rng(1)
    if len(t_idx) < 2:
        res.set("needs_input_grad", "ok")
        return
    for i in t_idx:
        ins = _clone(inputs, grad_idx={i})
        try:
            with enable_grad():
                outs = _outputs(call(*ins))
            node = next(o.grad_fn for o in outs if o.grad_fn is not None)
            result = _call_node(node, outs, rng)
        except Exception as e:  # noqa: BLE001
            res.set("needs_input_grad", "FAIL", "with only input %d requiring grad, backward "
                                                "raised %s" % (i, _short(e)))
            continue
        for j, g in enumerate(result):
            if j != i and j < len(ins) and g is not None and j in t_idx:
                res.set("needs_input_grad", "FAIL", "backward computed a gradient for input %d "
                        "although needs_input_grad[%d] is False (only input %d required grad)"
                        % (j, j, i))
    res.set("needs_input_grad", "ok")


def _check_materialize(res, cls, call, inputs):
    from .autograd.grad_mode import enable_grad
    rng = np.random.default_rng(2)
    ins = _clone(inputs)
    with enable_grad():
        outs = _outputs(call(*ins))
    if len(outs) < 2:
        res.set("materialize_grads", "ok")
        return
    node = outs[0].grad_fn
    own = not node._materialize
    # Only the first output gets a gradient: the others arrive as None.
    grads = _call_grads_partial(node, outs, rng)
    try:
        node._materialize = False
        from .autograd.grad_mode import no_grad
        with no_grad():
            node._call_backward(grads)
        res.set("materialize_grads", "ok")
    except Exception as e:  # noqa: BLE001
        level = "FAIL" if own else "warn"
        res.set("materialize_grads", level, "backward raised %s when output gradients 1.. are "
                "None (set_materialize_grads(False)%s)"
                % (_short(e), " is set by forward" if own else " not set; fine while it stays "
                   "True"))


def _call_grads_partial(node, outs, rng):
    from .tensor import Tensor
    first = outs[0]
    g = rng.standard_normal(first._array.shape).astype(first._array.dtype)
    return [Tensor._wrap(backend_of(first._array).asarray(g))] + [None] * (len(outs) - 1)


def _check_extreme(res, call, specs, t_idx, fail_on_overflow):
    from .autograd.grad_mode import enable_grad
    from .autograd.engine import grad as _grad
    rng = np.random.default_rng(3)
    level = "FAIL" if fail_on_overflow else "warn"
    res.set("extreme", "ok")
    for dtype, value in _EXTREMES:
        for sign in (1.0, -1.0):
            ins = _make_inputs(specs, rng, dtype=dtype, fill=sign * value)
            where = "x = %+g in %s" % (sign * value, dtype)
            try:
                with enable_grad(), errstate(all="ignore"):
                    outs = [o for o in _outputs(call(*ins))]
                    bad = [k for k, o in enumerate(outs) if o._array.dtype.kind == "f"
                           and not _all_finite(o._array)]
                    if bad:
                        res.set("extreme", level, "output %d is not finite (%s) at %s"
                                % (bad[0], _kind(outs[bad[0]]._array), where))
                        continue
                    diff = [o for o in outs if o._requires_grad]
                    gs = _grad(diff, [ins[i] for i in t_idx], [o * 0 + 1 for o in diff],
                               allow_unused=True)
            except Exception as e:  # noqa: BLE001
                res.set("extreme", level, "raised %s at %s" % (_short(e), where))
                return
            for i, g in zip(t_idx, gs):
                if g is not None and not _all_finite(g._array):
                    res.set("extreme", level, "gradient of input %d is not finite (%s) at %s"
                            % (i, _kind(g._array), where))


def _all_finite(arr):
    return bool(get_array_module(arr).isfinite(arr).all())


def _kind(arr):
    return "nan" if bool(get_array_module(arr).isnan(arr).any()) else "inf"


def format_table(results):
    """The per-Function table, then one line per finding."""
    w = max([8] + [len(r.name) for r in results])
    head = "%-*s " % (w, "Function") + " ".join("%-*s" % (max(len(c), 4), c) for c in CHECKS)
    lines = [head, "-" * len(head)]
    for r in results:
        lines.append("%-*s " % (w, r.name) + " ".join("%-*s" % (max(len(c), 4), r.status[c])
                                                      for c in CHECKS))
    notes = []
    for r in results:
        for c in CHECKS:
            for d in r.details[c]:
                notes.append("%s %s [%s]: %s" % (r.name, c, r.status[c], d))
    if notes:
        lines.append("")
        lines.extend(notes)
    failed = [r.name for r in results if r.failed]
    lines.append("")
    lines.append("%d Function(s) checked, %d failed%s" % (
        len(results), len(failed), (": " + ", ".join(failed)) if failed else ""))
    return "\n".join(line.rstrip() for line in lines)


def main(argv=None):
    """Entry point of ``python -m ember check``; returns the exit status."""
    parser = argparse.ArgumentParser(prog="ember check", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


def add_arguments(parser):
    parser.add_argument("file", help="Python file defining autograd Functions")
    parser.add_argument("--name", action="append", help="check only this Function (repeatable)")
    parser.add_argument("--shape", action="append", default=[],
                        help="input shape, e.g. 2,4 (one per argument, in order) or x=2,4")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--allow-overflow", action="store_true",
                        help="report non-finite results at extreme inputs as warnings")


def run(args):
    """Run the checks described by parsed ``args``; print the table; return the exit status."""
    shapes = {}
    for k, s in enumerate(args.shape):
        if "=" in s:
            name, s = s.split("=", 1)
            shapes[name.strip()] = _parse_shape(s)
        else:
            shapes[k] = _parse_shape(s)
    if not os.path.isfile(args.file):
        print("ember check: no such file: %s" % args.file)
        return 2
    try:
        module = _load(args.file)
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        print("ember check: could not import %s" % args.file)
        return 2
    found = find_functions(module)
    if args.name:
        missing = [n for n in args.name if n not in dict(found)]
        if missing:
            print("ember check: no autograd.Function named %s in %s (found: %s)"
                  % (", ".join(missing), args.file, ", ".join(n for n, _ in found) or "none"))
            return 2
        found = [(n, c) for n, c in found if n in args.name]
    if not found:
        print("ember check: no autograd.Function subclass in %s" % args.file)
        return 2
    results = [check_function(cls, shapes, seed=args.seed,
                              fail_on_overflow=not args.allow_overflow) for _, cls in found]
    print(format_table(results))
    return 1 if any(r.failed for r in results) else 0
