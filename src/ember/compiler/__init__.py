"""ember.compile: record a function's (or a model's) step once, replay it without per-op graph
building.

The first two calls with a new signature run eagerly while a recorder notes every Function
application (and checks that both calls did the same thing); later calls whose guards hold
replay the recorded forwards as straight-line Python, and backward runs the recorded backwards
from one ``CompiledFunctionBackward`` node. Anything the recorder cannot replay faithfully (a
Python value of a tensor, random numbers drawn outside an op, in-place updates outside an op,
tensors made from raw arrays) is a graph break: that signature runs eagerly, or with
``fullgraph=True`` raises ``ember._dynamo.exc.Unsupported``. See docs/compile.md.
"""
import functools
import warnings
from collections import namedtuple

from ..autograd.grad_mode import state as _state
from ..autograd.graph import _pack_hooks
from ..nn.modules.module import Module
from ..optim.optimizer import Optimizer
from ..tensor import Tensor
from . import _program
from ._optim import CompiledStep
from ._record import Recorder, user_frame

__all__ = ["compile", "explain", "reset", "OptimizedModule", "config", "ExplainOutput",
           "is_compiling", "disable", "allow_in_graph", "assume_constant_result",
           "is_dynamo_compiling", "is_exporting", "set_stance", "list_backends",
           "substitute_in_graph", "cudagraph_mark_step_begin"]


class _Config:
    """torch._dynamo.config's knobs that ember.compile reads."""

    cache_size_limit = 8
    recompile_limit = 8


config = _Config()

_EAGER = "eager"
_MISS = object()    # a guarded call's answer when a guard fails
_ALL = []       # live compiled callables (for reset)


def _flatten(args, kwargs):
    """The tensors among the arguments (in order) and a hashable key of the rest."""
    tensors = []
    key = []

    def walk(a):
        if isinstance(a, Tensor):
            tensors.append(a)
            arr = a._array
            key.append((type(arr), arr.shape, arr.dtype, a._requires_grad))
        elif isinstance(a, (list, tuple)):
            key.append((type(a), len(a)))
            for x in a:
                walk(x)
        elif isinstance(a, dict):
            key.append((dict, tuple(a.keys())))
            for x in a.values():
                walk(x)
        else:
            try:
                hash(a)
                key.append((type(a), a))
            except TypeError:
                key.append((type(a), id(a)))
    for a in args:
        walk(a)
    for k in sorted(kwargs):
        key.append(k)
        walk(kwargs[k])
    return tensors, tuple(key)


def _module_token(mods):
    """The state of a module tree the program depends on: modes and the identity of every
    parameter, buffer and sub-module."""
    token = []
    for m in mods:
        d = m.__dict__
        token.append(d.get("training"))
        for name in ("_parameters", "_buffers", "_modules"):
            token.extend([id(v) for v in d[name].values()])
    return tuple(token)


def _watched(fn, mods):
    """Tensors the call may update without passing them to an op: the modules' parameters and
    buffers, and tensors (or modules) the function reads from its closure or globals."""
    out = []
    code = getattr(fn, "__code__", None)
    objs = []
    if code is not None:
        objs += [c.cell_contents for c in (getattr(fn, "__closure__", None) or ())
                 if _filled(c)]
        g = getattr(fn, "__globals__", {})
        objs += [g[n] for n in code.co_names if n in g]
    mods = list(mods)
    for o in objs:
        if isinstance(o, Tensor):
            out.append(o)
        elif isinstance(o, Module):
            mods.extend(o.modules())
    for m in mods:
        d = m.__dict__
        out.extend(t for t in d["_parameters"].values() if t is not None)
        out.extend(t for t in d["_buffers"].values() if t is not None)
    return out


def _sources(fn, targets):
    """Where ``fn`` finds each of ``targets`` (tensors its program reads without taking them as
    arguments): ``[(getter, tensor)]``, each getter a path from a closure cell or a global name
    the code reads, through lists, tuples, dicts and modules. A call whose getters no longer
    give the same tensors (a rebound name, a replaced list item or parameter) records again."""
    want = {id(t) for t in targets}
    code = getattr(fn, "__code__", None)
    found, seen = [], set()
    if not want or code is None:
        return found

    def walk(get, obj, depth):
        if id(obj) in want:
            found.append((get, obj))
            return
        if depth == 0 or id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, (list, tuple)):
            items = enumerate(obj)
        elif isinstance(obj, dict):
            items = obj.items()
        elif isinstance(obj, Module):
            d = obj.__dict__
            items = [(("_parameters", k), v) for k, v in d["_parameters"].items()] + \
                [(("_buffers", k), v) for k, v in d["_buffers"].items()] + \
                [(("_modules", k), v) for k, v in d["_modules"].items()]
        else:
            return
        for key, x in list(items)[:256]:
            if isinstance(key, tuple) and isinstance(obj, Module):
                sub = (lambda g, a, k: lambda: g().__dict__[a][k])(get, *key)
            else:
                sub = (lambda g, k: lambda: g()[k])(get, key)
            walk(sub, x, depth - 1)

    for c in getattr(fn, "__closure__", None) or ():
        if _filled(c):
            walk((lambda c: lambda: c.cell_contents)(c), c.cell_contents, 6)
    g = getattr(fn, "__globals__", {})
    for n in code.co_names:
        if n in g:
            walk((lambda n: lambda: g[n])(n), g[n], 6)
    return found


def _filled(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _has_hooks(mods):
    for m in mods:
        d = m.__dict__
        for name in ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks",
                     "_backward_pre_hooks"):
            if d.get(name):
                return True
    return False


class _Entry:
    """What one signature holds: a first recording, a program, or eager (with why)."""

    __slots__ = ("first", "program", "reason")

    def __init__(self):
        self.first = None
        self.program = None
        self.reason = None


class _Compiled:
    """A compiled callable: a cache of programs keyed by the call's signature."""

    def __init__(self, fn, fullgraph, module):
        self.fn = fn
        self.fullgraph = fullgraph
        self.module = module
        self.cache = {}
        self.records = []       # (recorder, key) of every recording (for explain)
        self.warned = False
        self.fast = None        # the last replayed program's guarded call (see ``wrapper``)
        _ALL.append(self)

    def _mods(self):
        return list(self.module.modules()) if self.module is not None else []

    def __call__(self, *args, **kwargs):
        if _state.autocast:         # (autocast casts per op: run eagerly inside it)
            return self.fn(*args, **kwargs)
        if kwargs:
            tensors, key = _flatten(args, kwargs)
        else:
            # (the common call: tensors only, without the general walk)
            key = []
            for a in args:
                if type(a) is not Tensor:
                    tensors, key = _flatten(args, kwargs)
                    break
                arr = a._array
                key.append((type(arr), arr.shape, arr.dtype, a._requires_grad))
            else:
                tensors, key = args, tuple(key)
        if self.module is not None:
            mods, token = self._mods_cached()
        else:
            mods, token = (), ()
        if len(tensors) > 1:
            # (one tensor passed twice is one value of the program: a different signature)
            ids = [id(t) for t in tensors]
            if len(set(ids)) != len(ids):
                key = key + (("alias", tuple([ids.index(i) for i in ids])),)
        key = (_state.enabled, key, token)
        entry = self.cache.get(key)
        if entry is not None:
            prog = entry.program
            if prog is not None and not _pack_hooks and not _state.anomaly and \
                    prog.guards_hold():
                if prog.prefix is not None:
                    return prog.serve(self.fn, args, kwargs, tensors)
                if self.module is None and tensors is args and len(key[1]) == len(args):
                    self.fast = prog.__dict__.get("_fast")
                    if self.fast is None and "_fast" not in prog.__dict__:
                        self.fast = prog._fast = prog.fast_call(key[1], key[0], _MISS)
                return prog.run(tensors)
            if entry.reason is not None:
                return self.fn(*args, **kwargs)
            if prog is not None:
                entry = None        # a tensor it reads changed shape: record again
        self.fast = None
        if entry is None:
            if len(self.cache) >= config.cache_size_limit:
                self._warn_limit()
                return self.fn(*args, **kwargs)
            entry = self.cache[key] = _Entry()
        return self._record(entry, key, tensors, args, kwargs, mods)

    def _mods_cached(self):
        """The module tree and its token (the tree is walked again when the token changes)."""
        mods = getattr(self, "_mods_list", None)
        token = _module_token(mods) if mods is not None else None
        if token is None or token != self._mods_token:
            mods = self._mods_list = self._mods()
            token = self._mods_token = _module_token(mods)
        return mods, token

    def _warn_limit(self):
        if self.warned:
            return
        self.warned = True
        code = getattr(self.fn, "__code__", None)
        where = "%s:%d" % (code.co_filename, code.co_firstlineno) if code else "?"
        warnings.warn("torch._dynamo hit config.recompile_limit (%d)\n   function: %r (%s)\n"
                      "   last reason: guards failed\nTo log all recompilation reasons, use "
                      "TORCH_LOGS=\"recompiles\".\nTo diagnose recompilation issues, see "
                      "https://pytorch.org/docs/main/torch.compiler_troubleshooting.html"
                      % (config.cache_size_limit, getattr(self.fn, "__name__", "?"), where))

    def _record(self, entry, key, tensors, args, kwargs, mods):
        rec = Recorder(self.fullgraph)
        for i, t in enumerate(tensors):
            if id(t) not in rec.ids:
                rec._new(t, ("in", i))
        if mods and _has_hooks(mods):
            rec.graph_break("a module hook")
        for t in _watched(self.fn, mods):
            # (an update of one outside the recorded ops, e.g. running statistics, breaks)
            rec.versions.append((t, t._version_ref[0]))
        with rec:
            out = self.fn(*args, **kwargs)
        out_spec = None
        if not rec.broken:
            out_spec = self._out_spec(rec, out)
        self.records.append((rec, key))
        if rec.broken and not rec.break_at:
            entry.reason = rec.breaks[0][0]
            entry.first = None
            return out
        if rec.broken:
            # (the ops before the break become a program; the rest of the call runs eagerly)
            out_spec = ("t", [("v", v) for v in _program.step_values(rec.steps[:rec.break_at])])
        vals = _program._values(out_spec)
        out_grad = {v: rec.tensors[v]._requires_grad for v in vals}
        if entry.first is None:
            entry.first = (rec, out_spec, out_grad)
            return out
        first, first_spec, first_grad = entry.first
        entry.first = None
        why = _program.difference(first, rec)
        if why is None and (first.break_at != rec.break_at or
                            (rec.broken and first.breaks[0][0] != rec.breaks[0][0])):
            why = "the two recorded calls broke the graph at different places"
        if why is None and (not _program._same_spec(first_spec, out_spec) or
                            first_grad != out_grad):
            why = "the outputs differ between the two recorded calls"
        if why is not None:
            entry.reason = why
            rec.breaks.append((why, user_frame()))
            if self.fullgraph:
                from .._dynamo.exc import Unsupported
                raise Unsupported(why)
            return out
        entry.program = prog = _program.Program(first, first_spec, first_grad,
                                                first.break_at, check=rec)
        if self.module is None:
            prog.finders = _sources(self.fn, [t for _, t, _ in prog.ext])
        return out

    def _out_spec(self, rec, out):
        if isinstance(out, Tensor):
            return rec.ref(out)
        if out is None or isinstance(out, (int, float, bool, str, complex)):
            return ("c", out)
        if isinstance(out, tuple) and hasattr(out, "_fields"):
            return ("n", [self._out_spec(rec, x) for x in out], type(out))
        if isinstance(out, (list, tuple)):
            return ("l" if isinstance(out, list) else "t", [self._out_spec(rec, x) for x in out])
        if isinstance(out, dict):
            return ("d", {k: self._out_spec(rec, v) for k, v in out.items()})
        rec.graph_break("the function returned a %s" % type(out).__name__)
        return None


class OptimizedModule(Module):
    """What ``ember.compile(module)`` returns: ``forward`` compiled, the module as
    ``_orig_mod`` (torch's ``torch._dynamo.eval_frame.OptimizedModule``)."""

    def __init__(self, mod, compiled):
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_compiled"] = compiled
        self.__dict__["forward"] = compiled

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)


def compile(model=None, *, fullgraph=False, dynamic=None, backend=None, mode=None,
            options=None, name=None, disable=False, recompile_limit=None,
            isolate_recompiles=False, shapes_spec=None):
    """Compile ``model`` (a function or a Module): record its step once, replay it.

    Matches ``torch.compile``'s signature: usable as ``ember.compile(fn)``, ``@ember.compile``
    and ``@ember.compile(fullgraph=True)``; on a Module returns an ``OptimizedModule`` whose
    ``forward`` is compiled. ``backend``, ``mode``, ``options`` and ``dynamic`` are accepted
    for compatibility (there is one backend: replaying the recorded array calls).

    Example:
        >>> import ember
        >>> @ember.compile
        ... def f(x):
        ...     return (x * 2).sin()
        >>> x = ember.ones(3)
        >>> bool((f(x) == (x * 2).sin()).all())
        True
    """
    if model is None:
        def decorate(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                           options=options, name=name, disable=disable,
                           recompile_limit=recompile_limit)
        return decorate
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if not callable(model):
        raise RuntimeError("Model must be callable")
    if disable:
        return model
    owner = getattr(model, "__self__", None)
    if isinstance(owner, Optimizer) and getattr(model, "__name__", None) == "step":
        return CompiledStep(owner)
    if isinstance(model, Module):
        compiled = _Compiled(model.forward if type(model).__call__ is Module.__call__
                             else model, fullgraph, model)
        return OptimizedModule(model, compiled)
    compiled = _Compiled(model, fullgraph, None)

    @functools.wraps(model)
    def wrapper(*args, **kwargs):
        if _STANCE[0] == "force_eager":
            return model(*args, **kwargs)
        fast = compiled.fast
        if fast is not None and not kwargs:
            out = fast(args)
            if out is not _MISS:
                return out
        return compiled(*args, **kwargs)
    wrapper._torchdynamo_orig_callable = model
    wrapper._ember_compiled = compiled
    return wrapper


def reset():
    """Forget every recorded program (``torch._dynamo.reset()``/``torch.compiler.reset()``)."""
    for c in _ALL:
        c.cache.clear()
        c.records.clear()
        c.fast = None
        c.warned = False


def is_compiling():
    """False: a compiled function's Python runs only while recording, eagerly."""
    return False


def is_dynamo_compiling():
    """False: ember never traces Python bytecode (``torch.compiler.is_dynamo_compiling``)."""
    return False


def is_exporting():
    """False: ember has no ``torch.export``."""
    return False


def allow_in_graph(fn):
    """Mark ``fn`` (or each of a list of them) to be kept whole in the compiled graph; ember
    records the ops ``fn`` runs either way, so ``fn`` is returned unchanged."""
    if isinstance(fn, (list, tuple)):
        return [allow_in_graph(x) for x in fn]
    if not callable(fn):
        raise AssertionError("allow_in_graph expects a callable")
    return fn


def assume_constant_result(fn):
    """Mark ``fn``'s result as a constant for compilation (it is returned, marked)."""
    fn._dynamo_marked_constant = True
    return fn


def substitute_in_graph(original_fn, *, can_constant_fold_through=False,
                        skip_signature_check=False):
    """Register a Python replacement of ``original_fn`` for tracing; ember runs the original,
    so the decorated function is returned as is."""
    return lambda fn: fn


def cudagraph_mark_step_begin():
    """Nothing to do: ember records no CUDA graphs."""


# (name, tags) of the backends torch registers; ember accepts every name (one backend)
_BACKENDS = {"eager": ("debug",), "eager_noexcept": ("debug",), "pre_dispatch_eager": ("debug",),
             "eager_debug": ("debug",), "ts": ("debug",), "invoke_subgraph": ("debug",),
             "aot_eager": ("debug",), "aot_eager_default_partitioner": ("debug",),
             "aot_eager_decomp_partition": ("debug",),
             "aot_eager_decomp_partition_with_mode": ("debug",),
             "aot_eager_decomp_partition_crossref": ("debug",), "aot_ts": ("debug",),
             "relu_compile_error_TESTING_ONLY": ("debug",),
             "relu_runtime_error_TESTING_ONLY": ("debug",),
             "relu_accuracy_error_TESTING_ONLY": ("debug",),
             "non_leaf_compile_error_TESTING_ONLY": ("debug",), "cudagraphs": (),
             "inductor": (), "openxla_eval": ("experimental",), "openxla": (), "tvm": (),
             "dynamo_minifier_backend": ("debug",),
             "dynamo_accuracy_minifier_backend": ("debug",)}


def list_backends(exclude_tags=("debug", "experimental")):
    """The backend names ``compile(backend=...)`` accepts, as torch lists them."""
    exclude = set(exclude_tags or ())
    return sorted(name for name, tags in _BACKENDS.items() if not exclude.intersection(tags))


_STANCE = ["default"]


class set_stance:
    """Set how compiled functions behave: ``"default"`` (compile), ``"force_eager"`` (run
    every compiled function eagerly), ``"eager_on_recompile"``, ``"fail_on_recompile"``, ...;
    takes effect at once, and is undone when used with ``with`` or as a decorator."""

    def __init__(self, stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
        if force_backend is not None and stance != "default":
            raise RuntimeError("non-default stance cannot have force_backend set")
        self.stance = stance
        self.force_backend = force_backend
        self.prev = _STANCE[0]
        _STANCE[0] = stance

    def __enter__(self):
        _STANCE[0] = self.stance

    def __exit__(self, *exc):
        _STANCE[0] = self.prev
        return False

    def __call__(self, fn):
        _STANCE[0] = self.prev

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        wrapper._dynamo_forbidden = True
        return wrapper

    def clone(self):
        return self.__class__(self.stance, force_backend=self.force_backend)


def disable(fn=None, recursive=True):
    """``torch.compiler.disable``: ``fn`` unchanged (it always runs eagerly)."""
    if fn is None:
        return lambda f: f
    return fn


ExplainOutput = namedtuple("ExplainOutput", ["graphs", "graph_count", "graph_break_count",
                                             "break_reasons", "op_count", "ops_per_graph",
                                             "out_guards", "compile_times"])


class _BreakReason(namedtuple("_BreakReason", ["reason", "user_stack"])):
    def __repr__(self):
        f = self.user_stack[0]
        return "Reason: %s\n    User Stack:\n      <FrameSummary file %s, line %d in %s>" % (
            self.reason, f[0], f[1], f[2])


def _explain_str(self):
    lines = ["Graph Count: %d" % self.graph_count,
             "Graph Break Count: %d" % self.graph_break_count,
             "Op Count: %d" % self.op_count, "Break Reasons:"]
    for i, r in enumerate(self.break_reasons):
        lines.append("  Break Reason %d:\n    %s" % (i + 1, repr(r).replace("\n", "\n  ")))
    lines.append("Ops per Graph:")
    for i, ops in enumerate(self.ops_per_graph):
        lines.append("  Ops %d:" % (i + 1))
        lines.extend("    %s" % o for o in ops)
    return "\n".join(lines) + "\n"


ExplainOutput.__str__ = _explain_str


def explain(fn, *args, **kwargs):
    """What compiling ``fn`` records for these arguments: programs, graph breaks and why, ops
    (``torch._dynamo.explain(fn)(*args)``; ``explain(fn, *args)`` also works)."""
    def run(*a, **k):
        compiled = _Compiled(fn, False, fn if isinstance(fn, Module) else None)
        if isinstance(fn, Module):
            compiled.fn = fn.forward
        try:
            compiled(*a, **k)
            compiled(*a, **k)
        finally:
            _ALL.remove(compiled)
        graphs = [e.program for e in compiled.cache.values() if e.program is not None]
        breaks = []
        for rec, _ in compiled.records:
            for reason, where in rec.breaks:
                r = _BreakReason(reason, [where])
                if r not in breaks:
                    breaks.append(r)
        ops = [[s[0].__name__ for s in g.steps] for g in graphs]
        return ExplainOutput([g.source for g in graphs], len(graphs), len(breaks), breaks,
                             sum(len(o) for o in ops), ops, [], "")
    if args or kwargs:
        return run(*args, **kwargs)
    return run
