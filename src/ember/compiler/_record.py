"""Recording one eager call: the Functions it applied, on which tensors, and what broke it.

While a call records, ``Function.apply`` hands each application to ``Recorder.hook`` (one
module-level global in ``ember/autograd/function.py``, None otherwise), and the Tensor methods
that need a Python value of a tensor (``item``, ``bool``, printing...) note a graph break.
"""
import linecache
import os
import sys

from .. import ops as _ops
from ..backend import is_array as _is_array
from ..autograd import engine as _engine, function as _function
from ..autograd.grad_mode import state as _state
from ..random import default_generator as _generator
from ..tensor import Tensor
from .._dynamo.exc import Unsupported
from . import _effects

# Tensor methods that need a Python value of the tensor: a graph break (torch's reasons)
_BREAKING = {
    "item": "Tensor.item",
    "tolist": "Tensor.tolist",
    "numpy": "Tensor.numpy",
    "__bool__": "generic_jump TensorVariable()",
    "__int__": "Tensor.__int__",
    "__float__": "Tensor.__float__",
    "__index__": "Tensor.__index__",
    "__repr__": "builtin print / repr of a Tensor",
    "__str__": "builtin print / str of a Tensor",
    "__format__": "format of a Tensor",
    "register_hook": "Tensor.register_hook",
    "retain_grad": "Tensor.retain_grad",
    "backward": "Tensor.backward inside a compiled function",
}

# Creation functions whose results may be recorded as constants of the program (a tensor made
# any other way inside the call may depend on the data, and is not replayed)
_CREATION = ("tensor", "as_tensor", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
             "full_like", "empty_like", "arange", "linspace", "logspace", "eye", "scalar_tensor")

# Functions whose output shape depends on the data (torch breaks the graph there)
_DATA_DEPENDENT = frozenset(["MaskedSelect", "Nonzero", "Unique"])

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# the recorder (or server) of the call in progress, for the patched random functions
_current = [None]
_PATCHES: list = []


def _active():
    return _current[0]


def effect_patches():
    """The patches routing random draws and running statistics through replayable steps."""
    if not _PATCHES:
        _PATCHES.extend(_effects.patches(_active))
    return _PATCHES


def user_frame():
    """(filename, line number, function name, source line) of the innermost frame outside
    ember (the user's line that caused a break or an error)."""
    f = sys._getframe(1)
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_HERE):
        f = f.f_back
    if f is None:
        return ("<unknown>", 0, "<unknown>", "")
    line = linecache.getline(f.f_code.co_filename, f.f_lineno).strip()
    return (f.f_code.co_filename, f.f_lineno, f.f_code.co_name, line)


def _has_mask(args):
    """A boolean tensor among ``args`` (nested in tuples and lists too)."""
    for a in args:
        if isinstance(a, Tensor) and a._array.dtype.kind == "b":
            return True
        if isinstance(a, (tuple, list)) and _has_mask(a):
            return True
    return False


def _needs(args, kwargs):
    """A tensor requiring grad among the arguments."""
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, Tensor) and a._requires_grad:
            return True
    return False


class Recorder:
    """The record of one eager call: steps, the tensors they read, graph breaks."""

    def __init__(self, fullgraph):
        self.fullgraph = fullgraph
        self.steps = []        # (cls, forward, arg spec, kwargs spec, out spec, needs, grad_on)
        self.slots = []        # per value: ("in", i) | ("ext", tensor) | ("const", tensor)
        #                        | ("op", step index)
        self.meta = []         # per value: (shape, dtype)
        self.ids = {}          # id(tensor) -> value
        self.arrays = {}       # id(array) -> value (a detached alias reads the same array)
        self.versions = []     # (tensor, version) of every tensor seen: nothing else writes
        self.tensors = []      # per value: the tensor seen while recording
        self.keep = []         # every tensor made, alive while recording (ids stay unique)
        self.created = set()   # ids of tensors made by creation functions during the call
        self.breaks = []       # (reason, user frame)
        self.depth = 0
        self.rng = None
        self.broken = False
        self.break_at = None   # the number of steps recorded before the first graph break

    # -- the hook
    def hook(self, cls, args, kwargs):
        if self.broken or self.depth:
            return self._call(cls, args, kwargs)
        self._check_rng()
        self._check_versions()
        spec = tuple([self.ref(a) for a in args])
        kspec = {k: self.ref(v) for k, v in kwargs.items()}
        needs = tuple([isinstance(a, Tensor) and a._requires_grad for a in args])
        grad_on = _state.enabled
        out = self._call(cls, args, kwargs)
        if self.broken:
            return out
        if cls.__name__ in _DATA_DEPENDENT or (cls.__name__ == "Index" and _has_mask(args)):
            self.graph_break("dynamic shape operator: %s" % cls.__name__)
            return out
        k = len(self.steps)
        if out is None and getattr(cls, "_effect", False):
            # (an update in place: the tensors it wrote are at their new versions)
            for a in args:
                if isinstance(a, Tensor):
                    self._resync(a)
            self.steps.append((cls, cls.forward, spec, kspec, None, needs, False))
            self.rng = self._rng_state()
            return out
        outs = out if isinstance(out, tuple) else (out,)
        for o in outs:
            if o is not None and not isinstance(o, Tensor):
                self.graph_break("%s returned a %s" % (cls.__name__, type(o).__name__))
                return out
            for a in args:
                if o is a:
                    self.graph_break("in-place op %s" % cls.__name__)
                    return out
        ospec = tuple([None if o is None else self._new(o, ("op", k)) for o in outs])
        self.steps.append((cls, cls._forward_fn or cls.forward, spec, kspec,
                           ospec if isinstance(out, tuple) else ospec[0], needs,
                           grad_on and True in needs))
        self.rng = self._rng_state()
        return out

    def _call(self, cls, args, kwargs):
        self.depth += 1
        _function._hook = None
        try:
            return cls.apply(*args, **kwargs)
        finally:
            _function._hook = self.hook
            self.depth -= 1

    # -- the random functions' and running statistics' patches (see _effects.py)
    def may_fill(self, t, args, kwargs):
        return not self.broken and id(t) in self.created and not t._requires_grad and \
            not _needs(args, kwargs)

    def may_call(self, args, kwargs):
        return not self.broken and not _needs(args, kwargs)

    def made(self, t):
        self.created.add(id(t))
        self.keep.append(t)

    def alias(self, t, r):
        """``t`` now holds ``r``'s values (a random fill in place of a fresh tensor)."""
        v = self.ids.get(id(t))
        if v is not None and self.slots[v][0] == "const":
            # (an op read its earlier contents: keep them)
            self.slots[v] = ("const", Tensor._wrap(t._array.copy()))
        w = self.ids[id(r)]
        self.ids[id(t)] = w
        self.arrays[id(t._array)] = w
        if not self._resync(t):
            # (a later write into ``t`` outside a recorded op, e.g. an in-place ``div_`` that
            # writes its result into ``t``'s memory, is then seen)
            self.versions.append((t, t._version_ref[0]))

    def _resync(self, t):
        found = False
        for i, (u, _) in enumerate(self.versions):
            if u is t:
                self.versions[i] = (u, u._version_ref[0])
                found = True
        return found

    # -- values
    def _new(self, t, how):
        v = len(self.slots)
        self.slots.append(how)
        self.meta.append((t._array.shape, t._array.dtype))
        self.ids[id(t)] = v
        self.arrays.setdefault(id(t._array), v)
        self.versions.append((t, t._version_ref[0]))
        self.tensors.append(t)
        return v

    def ref(self, a):
        """The spec of argument ``a``: ("v", value) for a tensor, ("l"/"t", [specs]) for a
        list or tuple holding tensors, ("c", a) for anything else."""
        if isinstance(a, Tensor):
            v = self.ids.get(id(a))
            if v is None:
                v = self.arrays.get(id(a._array))
                if v is not None and self.tensors[v]._requires_grad != a._requires_grad:
                    v = None
            if v is None:
                kind = "const" if id(a) in self.created else "ext"
                v = self._new(a, (kind, a))
            return ("v", v)
        if _is_array(a):
            # (an array computed outside the ops, maybe from the data: not replayable)
            self.graph_break("an op called on a raw array made outside the recorded ops")
            return ("c", a)
        if isinstance(a, (list, tuple)) and any(isinstance(x, (Tensor, list, tuple)) or
                                                _is_array(x) for x in a):
            return ("l" if isinstance(a, list) else "t", [self.ref(x) for x in a])
        return ("c", a)

    # -- what the recorder cannot see
    def _rng_state(self):
        st = _generator._bits.state["state"]
        return (int(st["pos"]), st["key"][:4].tobytes(), _generator._next_double,
                _generator._next_float)

    def _check_rng(self):
        if self.rng is not None and self._rng_state() != self.rng:
            self.graph_break("random numbers drawn outside a recorded op")

    def _check_versions(self):
        for t, version in self.versions:
            if t._version_ref[0] != version:
                if t._version_ref[0] == version + 1 and self._written_by_last_step(t):
                    continue
                self.graph_break("in-place update of a tensor outside a recorded op")
                return

    def _written_by_last_step(self, t):
        """``t``, a tensor made inside the call, now holds the result of the step just
        recorded, which read it (an in-place op on a temporary, ``noise.div_(q)``, that
        computes out of place and writes the result into ``t``): later reads of ``t`` read
        that step's value, and nothing outside the call can see ``t``'s memory."""
        if id(t) not in self.created or not self.steps:
            return False
        v = self.ids.get(id(t))
        step = self.steps[-1]
        o = step[4]
        if v is None or type(o) is not int or ("v", v) not in step[2]:
            return False
        a, b = t._array, self.tensors[o]._array
        if type(a) is not type(b) or a.shape != b.shape or a.dtype != b.dtype or \
                a.tobytes() != b.tobytes():
            return False
        self.ids[id(t)] = o
        self.arrays[id(a)] = o
        self._resync(t)
        return True

    def graph_break(self, reason):
        if self.broken:
            return
        self.break_at = len(self.steps)
        where = user_frame()
        self.breaks.append((reason, where))
        self.broken = True
        if self.fullgraph:
            raise Unsupported("%s\n\nfrom user code:\n   File \"%s\", line %d, in %s\n    %s"
                              % (reason, where[0], where[1], where[2], where[3]))

    # -- installing and removing
    def __enter__(self):
        self.rng = self._rng_state()
        self._saved = []
        rec = self

        def breaking(name, reason):
            orig = getattr(Tensor, name)

            def method(*args, **kwargs):
                if not rec.depth:
                    rec.graph_break(reason)
                return orig(*args, **kwargs)
            method.__name__ = name
            return orig, method

        for name, reason in _BREAKING.items():
            orig, method = breaking(name, reason)
            self._saved.append((Tensor, name, orig))
            setattr(Tensor, name, method)

        def creating(name):
            orig = getattr(_ops, name)

            def fn(*args, **kwargs):
                out = orig(*args, **kwargs)
                if isinstance(out, Tensor):
                    rec.created.add(id(out))
                    rec.keep.append(out)
                return out
            return orig, fn

        root = sys.modules[__package__.rsplit(".", 1)[0]]
        for name in _CREATION:
            orig, fn = creating(name)
            for owner in (_ops, root):
                if owner.__dict__.get(name) is orig:
                    self._saved.append((owner, name, orig))
                    setattr(owner, name, fn)
        self._effects = _effects.install(effect_patches())
        self._prev = _current[0]
        _current[0] = self
        orig_execute = _engine._execute

        def execute(*args, **kwargs):
            if not rec.depth:
                rec.graph_break("backward() inside a compiled function")
            return orig_execute(*args, **kwargs)
        self._saved.append((_engine, "_execute", orig_execute))
        _engine._execute = execute
        _function._hook = self.hook
        return self

    def __exit__(self, *exc):
        _function._hook = None
        _current[0] = self._prev
        _effects.uninstall(self._effects)
        for owner, name, orig in reversed(self._saved):
            setattr(owner, name, orig)
        if exc[0] is None and not self.broken:
            self._check_rng()
            self._check_versions()
        return False
