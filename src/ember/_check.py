"""``python -m ember check FILE.py``: test every custom autograd Function in a file.

For each Function subclass (new style or legacy) it builds float64 inputs and runs: the forward
against a float64 recomputation (and against a reference function when one is given),
gradcheck, gradgradcheck (when the backward is differentiable), needs_input_grad, None
gradients under ``set_materialize_grads(False)``, mark_dirty, tensors kept on ctx, and extreme
inputs (+-100 in float32, +-1e4 in float64). It prints one table row per Function, then the
details of what went wrong, and returns 1 when something failed.

Arguments of ``forward``: a tensor unless the signature says otherwise. A parameter with a
default gets the default; one annotated ``int``/``float``/``bool`` gets a Python number (1, 0.5,
True); an unannotated one for which ``backward`` always returns ``None`` and that ``forward``
never uses as a tensor (no ``.attr``, no ``[...]``, not saved) is taken for a number too.
``--arg name=value`` sets a value, ``--shape name=2,4`` a tensor's shape; ``example_inputs``
(a static method or tuple on the class) sets them all.

Reference: ``--reference module:function`` (e.g. ``torch.nn.functional:softplus``) or a
``reference`` attribute on the Function class (a function, or the same ``"module:function"``
text). It is called with the Function's arguments (torch tensors when it comes from torch)
and the forward must match it, at ordinary and at extreme inputs.
"""
import argparse
import ast
import importlib
import importlib.util
import inspect
import textwrap
import os
import sys
import traceback
import warnings

import numpy as np

from . import dtypes as _dt
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
        self.counts = {}            # (check, detail) -> how many times it was found
        self.notes = []             # how the arguments were chosen

    def set(self, check, status, detail=None):
        order = {"skip": 0, "ok": 1, "warn": 2, "FAIL": 3}
        if order[status] >= order[self.status[check]]:
            self.status[check] = status
        if detail:
            key = (check, detail)
            if key not in self.counts:
                self.details[check].append(detail)
            self.counts[key] = self.counts.get(key, 0) + 1

    def err(self, exc):
        """``exc`` in one line; an error already reported for this Function is named only."""
        text = _short(exc)
        seen = self.__dict__.setdefault("_errors", set())
        if text in seen:
            return "the same %s as above" % type(exc).__name__
        seen.add(text)
        return text

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


_INT_NAMES = ("dim", "axis", "n", "k", "size", "count", "num", "index", "idx", "groups",
              "stride", "padding", "dilation", "steps", "repeats")
_NUMBER_HINTS = {int: 1, "int": 1, float: 0.5, "float": 0.5, bool: True, "bool": True}


def _func_ast(fn):
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return None
    return next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)), None)


def _used_as_tensor(tree, name):
    """True when ``forward``'s source uses ``name`` as a tensor: ``name.attr``, ``name[...]``
    or passes it to ``ctx.save_for_backward`` / ``mark_dirty`` / ``mark_non_differentiable``."""
    for n in ast.walk(tree):
        if isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.value, ast.Name) \
                and n.value.id == name:
            return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in (
                "save_for_backward", "mark_dirty", "mark_non_differentiable",
                "save_for_forward"):
            if any(isinstance(a, ast.Name) and a.id == name for a in n.args):
                return True
    return False


def _backward_gives_none(cls, position, n_params):
    """True when every ``return`` of ``backward`` is a tuple with the constant None at
    ``position`` (the gradient a Python number argument must get)."""
    bwd = inspect.getattr_static(cls, "backward", None)
    fn = bwd.__func__ if isinstance(bwd, (staticmethod, classmethod)) else bwd
    tree = _func_ast(fn) if fn is not None else None
    if tree is None:
        return False
    rets = [n for n in ast.walk(tree) if isinstance(n, ast.Return)]
    if not rets:
        return False
    for r in rets:
        if not (isinstance(r.value, ast.Tuple) and len(r.value.elts) == n_params):
            return False
        v = r.value.elts[position]
        if not (isinstance(v, ast.Constant) and v.value is None):
            return False
    return True


def _parse_value(text):
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        return text.strip()


def _spec_for(cls, shapes, default_shape, values=None):
    """Argument specs ('tensor', shape) or ('value', v), their names, and notes on guesses.

    ``shapes`` maps argument names or positions to shapes (the ``--shape`` option) and
    ``values`` names or positions to Python values (the ``--arg`` option).
    """
    values = values or {}
    ex = getattr(cls, "example_inputs", None)
    if ex is not None:
        vals = ex() if callable(ex) else ex
        if not isinstance(vals, (tuple, list)):
            vals = (vals,)
        return [_spec_of_value(v) for v in vals], ["input %d" % k for k in range(len(vals))], []
    params = _forward_params(cls)
    fwd = inspect.getattr_static(cls, "forward")
    tree = _func_ast(fwd.__func__ if isinstance(fwd, (staticmethod, classmethod)) else fwd)
    specs, notes = [], []
    for k, p in enumerate(params):
        shape = shapes.get(p.name, shapes.get(k))
        hint = p.annotation
        if p.name in values or k in values:
            specs.append(("value", values.get(p.name, values.get(k))))
            continue
        if shape is None and isinstance(hint, tuple) and all(isinstance(d, int) for d in hint):
            shape = hint
        if shape is None and isinstance(hint, str) and hint.strip()[:1] in "([":
            shape = _parse_shape(hint)
        if shape is not None:
            specs.append(("tensor", tuple(shape)))
        elif p.default is not inspect.Parameter.empty:
            specs.append(("value", p.default))
        elif isinstance(hint, (type, str)) and hint in _NUMBER_HINTS:
            specs.append(("value", _NUMBER_HINTS[hint]))
        elif (k > 0 and (hint is inspect.Parameter.empty or hint is None)
              and tree is not None and not _used_as_tensor(tree, p.name)
              and _backward_gives_none(cls, k, len(params))):
            guess = 1 if p.name.lower() in _INT_NAMES else 0.5
            specs.append(("value", guess))
            notes.append("%s = %r passed as a Python number (backward returns None for it and "
                         "forward uses it as no tensor); set it with --arg %s=VALUE"
                         % (p.name, guess, p.name))
        else:
            specs.append(("tensor", default_shape))
    return specs, [p.name for p in params], notes


def _spec_of_value(v):
    from .tensor import Tensor
    if isinstance(v, Tensor):
        if _dt.kind(v._array.dtype) == "f":
            return ("array", v._array)
        return ("value", v)
    if is_array(v) and _dt.kind(v.dtype) == "f":
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


def check_function(cls, shapes=None, default_shape=(3, 4), seed=0, fail_on_overflow=True,
                   values=None, reference=None):
    """Run every check on the Function class ``cls``; return a :class:`CheckResult`.

    ``shapes``/``values`` map argument names (or positions) to tensor shapes / Python values;
    ``reference`` is a function (or ``"module:function"``) the forward must agree with; by
    default the class's ``reference`` attribute, if any.
    """
    res = CheckResult(cls.__name__)
    rng = np.random.default_rng(seed)
    raw = _caller(cls)
    call = _on_copies(raw)
    try:
        specs, names, notes = _spec_for(cls, shapes or {}, tuple(default_shape), values)
        inputs = _make_inputs(specs, rng)
        if reference is None:
            reference = getattr(cls, "reference", None)
        ref_name = reference if isinstance(reference, str) else None
        if isinstance(reference, str):
            reference = load_reference(reference)
    except Exception as e:  # noqa: BLE001 - reported, not raised
        res.set("forward", "FAIL", "could not build inputs: " + _short(e))
        return res
    res.notes.extend(notes)
    res.names = names
    t_idx = [i for i in _tensor_idx(inputs) if _dt.kind(inputs[i]._array.dtype) == "f"]
    if not t_idx:
        res.set("forward", "FAIL", "no floating-point tensor argument to differentiate; give "
                                   "example_inputs() or --shape")
        return res
    node = _check_forward(res, raw, inputs, t_idx)
    if node is None:
        return res
    level = "FAIL" if fail_on_overflow else "warn"
    _check_precision(res, call, specs, inputs, reference, level, ref_name)
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


def load_reference(text):
    """The function named by ``"module:function"`` (``function`` may be dotted)."""
    if ":" not in text:
        raise ValueError("a reference is given as module:function, e.g. "
                         "torch.nn.functional:softplus (got %r)" % text)
    mod_name, attr = text.split(":", 1)
    obj = importlib.import_module(mod_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def _preview(x, n=6):
    """A short print of a tensor argument: shape, dtype and its first values."""
    from .tensor import Tensor
    if not isinstance(x, Tensor):
        return repr(x)
    arr = np.asarray(to_host(x._array))   # host: a few values for the report
    flat = arr.reshape(-1)
    vals = ", ".join("%.4g" % v for v in flat[:n]) + (", ..." if flat.size > n else "")
    return "tensor of shape %s %s [%s]" % (tuple(arr.shape), arr.dtype, vals)


def _input_desc(res, inputs, i):
    names = getattr(res, "names", None) or []
    name = names[i] if i < len(names) else "input %d" % i
    return "%s = %s" % (name, _preview(inputs[i]))


def _cast(inputs, dtype):
    """Copies of ``inputs`` with floating tensors cast to ``dtype`` (values kept)."""
    from .tensor import Tensor
    out = []
    for x in inputs:
        if isinstance(x, Tensor) and _dt.kind(x._array.dtype) == "f":
            t = Tensor._wrap(x._array.astype(dtype))
            out.append(t)
        else:
            out.append(x)
    return out


def _host_array(v):
    from .tensor import Tensor
    if isinstance(v, Tensor):
        return np.asarray(to_host(v._array))   # host: compared on the host, in the report
    if hasattr(v, "detach") and hasattr(v, "numpy"):
        return v.detach().cpu().numpy()
    return np.asarray(v)


def _float_outputs(out):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    arrs = [_host_array(o) for o in outs if o is not None and not isinstance(o, (int, float))]
    return [a for a in arrs if _dt.kind(a.dtype) == "f"]


def _call_reference(reference, inputs):
    from .tensor import Tensor
    if getattr(reference, "__module__", "") and reference.__module__.split(".")[0] == "torch":
        import torch
        args = [torch.from_numpy(_host_array(x).copy()) if isinstance(x, Tensor) else x
                for x in inputs]
        return reference(*args)
    return reference(*inputs)


def _mismatch(got, want, rtol, atol):
    """Index and values of the worst element of ``got`` that disagrees with ``want``."""
    if got.shape != want.shape:
        return "shape %s" % (tuple(got.shape),), "shape %s" % (tuple(want.shape),), "the shape"
    finite = np.isfinite(want)
    scale = float(np.abs(want[finite]).max()) if finite.any() else 1.0
    tol = atol * max(1.0, scale) + rtol * np.abs(want)
    with np.errstate(invalid="ignore"):
        err = np.abs(got.astype(np.float64) - want.astype(np.float64))
        bad = ~((err <= tol) | ((got == want) | (np.isnan(got) & np.isnan(want))))
    if not bad.any():
        return None
    rel = np.where(bad, np.nan_to_num(err / (np.abs(want) + tol + 1e-300), nan=np.inf,
                                      posinf=np.inf), -1.0)
    k = int(np.argmax(rel))
    idx = np.unravel_index(k, got.shape) if got.ndim else ()
    where = "element %s" % (list(int(i) for i in idx),) if got.ndim else "the scalar output"
    return "%.6g" % got.reshape(-1)[k], "%.6g" % want.reshape(-1)[k], where


def _precision_points(specs, inputs):
    """(description, float64 inputs, extreme?) at which the forward is compared."""
    rng = np.random.default_rng(4)
    points = [("the random inputs", inputs, False)]
    for value in (100.0, -100.0):
        ins = _make_inputs(specs, rng, dtype="float32", fill=value)
        points.append(("x = %+g" % value, _cast(ins, "float64"), True))
    return points


def _run_floats(call, inputs):
    from .autograd.grad_mode import no_grad
    with no_grad(), errstate(all="ignore"):
        return _float_outputs(call(*_clone(inputs)))


def _check_precision(res, call, specs, inputs, reference, level, ref_name=None):
    """Forward in float32 vs the same forward in float64, and both vs ``reference``."""
    res.set("forward", "ok")
    ref_name = ref_name or _ref_name(reference)
    for where, ins64, extreme in _precision_points(specs, inputs):
        lvl = level if extreme else "FAIL"
        ins32 = _cast(ins64, "float32")
        try:
            o64 = _run_floats(call, ins64)
            o32 = _run_floats(call, ins32)
        except Exception:  # noqa: BLE001 - a forward that raises is the other checks' business
            continue
        flagged = set()
        for k, (a32, a64) in enumerate(zip(o32, o64)):
            if a32.dtype != np.float32:
                continue
            with np.errstate(over="ignore"):
                want = a64.astype(np.float32)
            bad = _mismatch(a32, want, rtol=1e-3, atol=1e-5)
            if bad:
                flagged.add(k)
                res.set("forward", lvl, "output %d is %s in float32 where the same forward in "
                        "float64 gives %s (%s, at %s)%s"
                        % (k, bad[0], bad[1], bad[2], where, _ins_text(res, ins64, extreme)))
        if reference is None:
            continue
        for ins, got_all, dname in ((ins64, o64, "float64"), (ins32, o32, "float32")):
            try:
                with errstate(all="ignore"):
                    want_all = _float_outputs(_call_reference(reference, _clone(ins)))
            except Exception as e:  # noqa: BLE001
                res.set("forward", "FAIL", "the reference %s raised %s at %s"
                        % (ref_name, res.err(e), where))
                return
            rtol, atol = (1e-4, 1e-6) if dname == "float32" else (1e-7, 1e-10)
            found = False
            for k, (g, w) in enumerate(zip(got_all, want_all)):
                if dname == "float32" and k in flagged:
                    continue
                bad = _mismatch(g, w.astype(g.dtype) if g.shape == w.shape else w, rtol, atol)
                if bad:
                    found = True
                    res.set("forward", lvl, "output %d is %s in %s where the reference %s "
                            "gives %s (%s, at %s)%s"
                            % (k, bad[0], dname, ref_name, bad[1], bad[2], where,
                               _ins_text(res, ins, extreme)))
            if found:
                break       # the float32 comparison would repeat the float64 one


def _ins_text(res, inputs, extreme):
    if extreme:
        return ""
    from .tensor import Tensor
    return "; inputs: " + "; ".join(_input_desc(res, inputs, i) for i, x in enumerate(inputs)
                                   if isinstance(x, Tensor))


def _ref_name(reference):
    name = getattr(reference, "__qualname__", None) or getattr(reference, "__name__", "?")
    module = getattr(reference, "__module__", None)
    return "%s.%s" % (module, name) if module else name


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
            res.set("forward", "FAIL", "forward raised " + res.err(e))
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


def _gc_detail(res, e, what, inputs):
    from .autograd.gradcheck import GradcheckError
    from .tensor import Tensor
    if isinstance(e, GradcheckError) and e.input_index is not None:
        which = "input %d" % e.input_index
        value = ""
        if e.input_index >= len(inputs):
            which = "grad_output %d" % (e.input_index - len(inputs))
        else:
            pos = e.input_index
            x = inputs[pos]
            if isinstance(x, Tensor) and e.input_element is not None:
                flat = np.asarray(to_host(x._array)).reshape(-1)   # host: the report
                if e.input_element < flat.size:
                    value = "; at that element input %d is %.6g; %s" % (
                        pos, flat[e.input_element], _input_desc(res, inputs, pos))
        return ("%s wrong for %s (output %d): worst element [in %d, out %d]: analytic %.6g vs "
                "numeric %.6g%s" % (what, which, e.output_index, e.input_element,
                                    e.output_element, e.analytical, e.numerical, value))
    return "%s raised %s" % (what, res.err(e))


def _check_gradcheck(res, call, inputs):
    from .autograd.gradcheck import gradcheck
    try:
        gradcheck(call, tuple(_clone(inputs)), eps=1e-6, atol=1e-5, rtol=1e-3)
        res.set("gradcheck", "ok")
    except Exception as e:  # noqa: BLE001
        res.set("gradcheck", "FAIL", _gc_detail(res, e, "gradient", inputs))


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
        res.set("gradgradcheck", "skip", "backward under create_graph raised " + res.err(e))
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
            res.set("gradgradcheck", "FAIL", _gc_detail(res, e, "double backward", inputs))


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
                                                "raised %s" % (i, res.err(e)))
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
                % (res.err(e), " is set by forward" if own else " not set; fine while it stays "
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
                    bad = [k for k, o in enumerate(outs) if _dt.kind(o._array.dtype) == "f"
                           and not _all_finite(o._array)]
                    if bad:
                        res.set("extreme", level, "output %d is not finite (%s) at %s"
                                % (bad[0], _kind(outs[bad[0]]._array), where))
                        continue
                    diff = [o for o in outs if o._requires_grad]
                    gs = _grad(diff, [ins[i] for i in t_idx], [o * 0 + 1 for o in diff],
                               allow_unused=True)
            except Exception as e:  # noqa: BLE001
                res.set("extreme", level, "raised %s at %s" % (res.err(e), where))
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
        for text in r.notes:
            notes.append("%s arguments: %s" % (r.name, text))
        for c in CHECKS:
            for d in r.details[c]:
                n = r.counts.get((c, d), 1)
                notes.append("%s %s [%s]: %s%s" % (r.name, c, r.status[c], d,
                                                  " (%d times)" % n if n > 1 else ""))
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
    parser.description = ("Test every custom autograd Function in a Python file: the forward "
                          "against the same forward in float64 (and against --reference), "
                          "gradcheck, gradgradcheck, needs_input_grad, unmaterialized "
                          "gradients, mark_dirty, tensors kept on ctx, and extreme inputs. "
                          "forward's arguments are tensors (3, 4) unless a default, an "
                          "int/float/bool annotation, --arg or --shape says otherwise.")
    parser.add_argument("file", help="Python file defining autograd Functions")
    parser.add_argument("--name", action="append", help="check only this Function (repeatable)")
    parser.add_argument("--shape", action="append", default=[],
                        help="input shape, e.g. 2,4 (one per argument, in order) or x=2,4")
    parser.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                        help="pass a Python value (not a tensor) for a forward argument, "
                             "e.g. factor=2.5 or dim=1 (repeatable)")
    parser.add_argument("--reference", metavar="MODULE:FUNCTION",
                        help="a function the forward must match, e.g. "
                             "torch.nn.functional:softplus (default: the class's reference "
                             "attribute, if any)")
    parser.add_argument("--seed", type=int, default=0, help="random seed of the test inputs")
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
    values = {}
    for k, s in enumerate(getattr(args, "arg", None) or []):
        if "=" not in s:
            print("ember check: --arg expects NAME=VALUE, got %r" % s)
            return 2
        name, s = s.split("=", 1)
        name = name.strip()
        values[int(name) if name.isdigit() else name] = _parse_value(s)
    reference = getattr(args, "reference", None)
    if reference:
        try:
            load_reference(reference)
        except Exception as e:  # noqa: BLE001
            print("ember check: could not load the reference %s: %s" % (args.reference,
                                                                        _short(e)))
            return 2
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
    results = [check_function(cls, shapes, seed=args.seed, values=values,
                              reference=reference or None,
                              fail_on_overflow=not args.allow_overflow) for _, cls in found]
    print(format_table(results))
    return 1 if any(r.failed for r in results) else 0
