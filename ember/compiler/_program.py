"""A recorded program: the forward as straight-line Python over the recorded Functions' forwards
(no graph built per op), and the backward as one node that runs their backwards in reverse."""
import numpy as np

from ..backend import get_array_module
from ..autograd.engine import _check_count, _check_grad
from ..autograd.function import Function, _edge, _next_seq
from ..autograd.grad_mode import state as _state
from ..autograd.graph import _FREED
from ..tensor import Tensor

_DOUBLE = "torch.compile with aot_autograd does not currently support double backward"


class CompiledFunction(Function):
    """The node of a compiled call's outputs (torch's ``CompiledFunctionBackward``)."""

    node_name = "CompiledFunctionBackward"

    @staticmethod
    def forward(ctx, *args):
        raise RuntimeError("CompiledFunction is made by ember.compile, not applied")

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(_DOUBLE)

    @staticmethod
    def array_backward(ctx, *grads):
        return ctx._program.backward(ctx, grads)


_Node = CompiledFunction._backward_cls


def _same_const(a, b):
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and a.dtype == b.dtype and bool((a == b).all())
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same_const(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_const(a[k], b[k]) for k in a)
    try:
        return bool(a == b)
    except Exception:
        return a is b


def _same_spec(a, b):
    if a is None or b is None:
        return a is b
    if a[0] != b[0]:
        return False
    if a[0] == "c":
        return _same_const(a[1], b[1])
    if a[0] == "v":
        return a[1] == b[1]
    if a[0] == "d":
        return a[1].keys() == b[1].keys() and all(_same_spec(a[1][k], b[1][k]) for k in a[1])
    return len(a[1]) == len(b[1]) and all(_same_spec(x, y) for x, y in zip(a[1], b[1]))


def _same_tensor(a, b):
    x, y = a._array, b._array
    return (type(x) is type(y) and x.shape == y.shape and x.dtype == y.dtype
            and a._requires_grad == b._requires_grad and bool((x == y).all()))


def difference(r1, r2):
    """Why two recordings of one signature differ (None when the program may be replayed)."""
    if len(r1.steps) != len(r2.steps) or len(r1.slots) != len(r2.slots):
        return "the two recorded calls ran different ops"
    for s1, s2 in zip(r1.steps, r2.steps):
        if s1[0] is not s2[0] or s1[5:] != s2[5:] or len(s1[2]) != len(s2[2]) or not all(
                _same_spec(x, y) for x, y in zip(s1[2], s2[2])) or s1[3].keys() != s2[3].keys() \
                or not all(_same_spec(s1[3][k], s2[3][k]) for k in s1[3]) \
                or s1[4] != s2[4]:
            return "%s was called differently in the two recorded calls" % s1[0].__name__
    for v, (a, b) in enumerate(zip(r1.slots, r2.slots)):
        if a[0] != b[0] or r1.meta[v] != r2.meta[v]:
            return "a tensor read by the function changes between calls"
        if a[0] == "in" and a[1] != b[1]:
            return "the inputs are used differently"
        if a[0] == "ext" and a[1] is not b[1]:
            return ("a tensor made inside the function by something other than a recorded op "
                    "or a creation function (e.g. a comparison or a raw array computation)")
        if a[0] == "const" and not _same_tensor(a[1], b[1]):
            return "a tensor made inside the function changes between calls"
    return None


def _expr(spec, names):
    kind = spec[0]
    if kind == "v":
        return "v%d" % spec[1]
    if kind == "c":
        name = "C%d" % len(names)
        names[name] = spec[1]
        return name
    items = ", ".join(_expr(s, names) for s in spec[1])
    return "[%s]" % items if kind == "l" else "(%s,)" % items


class Program:
    """One recorded signature of a compiled callable, replayable."""

    def __init__(self, rec, out_spec, out_grad):
        self.steps = rec.steps
        self.meta = rec.meta
        self.out_spec = out_spec
        self.n_ops = len(rec.steps)
        self.ext = []       # (value, tensor, (shape, dtype, requires_grad)) read at call time
        self.inputs = []    # (value, input index)
        self.consts = {}    # value -> tensor
        for v, how in enumerate(rec.slots):
            if how[0] == "in":
                self.inputs.append((v, how[1]))
            elif how[0] == "ext":
                t = how[1]
                self.ext.append((v, t, (t._array.shape, t._array.dtype, t._requires_grad)))
            elif how[0] == "const":
                self.consts[v] = how[1]
        self.sources = [v for v, _ in self.inputs if rec.tensors[v]._requires_grad] + \
            [v for v, t, _ in self.ext if t._requires_grad]
        self.grad_outs = [v for v in _values(out_spec) if rec.slots[v][0] == "op"
                          and out_grad.get(v)]
        self.grad_outs = list(dict.fromkeys(self.grad_outs))
        self.out_values = [v for v in dict.fromkeys(_values(out_spec))]
        self.tape_steps = [k for k, s in enumerate(self.steps) if s[6]]
        self._build(rec)

    def _build(self, rec):
        names = {}
        lines = ["def forward(I):"]
        for v, i in self.inputs:
            lines.append("    v%d = I[%d]" % (v, i))
        for v, t, _ in self.ext:
            names["E%d" % v] = t
            lines.append("    v%d = E%d" % (v, v))
        for v, t in self.consts.items():
            names["E%d" % v] = t
            lines.append("    v%d = E%d" % (v, v))
        for k, (cls, fwd, spec, kspec, ospec, needs, grad) in enumerate(self.steps):
            names["N%d" % k] = cls._backward_cls
            names["F%d" % k] = fwd
            names["K%d" % k] = needs
            args = ["c%d" % k] + [_expr(s, names) for s in spec]
            args += ["%s=%s" % (key, _expr(s, names)) for key, s in kspec.items()]
            lines.append("    c%d = N%d()" % (k, k))
            lines.append("    c%d.needs_input_grad = K%d" % (k, k))
            if grad:
                # (backward formulas read their inputs' shapes through ``_input_meta``)
                names["M%d" % k] = tuple([
                    (_Meta(*rec.meta[s[1]]), 0) if s[0] == "v" and need else None
                    for s, need in zip(spec, needs)])
                lines.append("    c%d._edges = M%d" % (k, k))
            call = "F%d(%s)" % (k, ", ".join(args))
            if isinstance(ospec, tuple):
                lines.append("    o = " + call)
                for i, v in enumerate(ospec):
                    if v is not None:
                        lines.append("    v%d = o[%d]" % (v, i))
            else:
                lines.append("    v%d = %s" % (ospec, call))
        outs = "".join("v%d, " % v for v in self.out_values)
        tape = "".join("c%d, " % k for k in self.tape_steps)
        lines.append("    return (%s), (%s)" % (outs, tape))
        self.source = "\n".join(lines) + "\n"
        exec(compile(self.source, "<ember.compile program>", "exec"), names)
        self._forward = names["forward"]
        # the backward: per tape step, the values of its outputs and of its inputs needing grad
        self.bsteps = []
        for j, k in enumerate(self.tape_steps):
            cls, _, spec, _, ospec, needs, _ = self.steps[k]
            ins = tuple([s[1] if s[0] == "v" and need else None
                         for s, need in zip(spec, needs)])
            single = not isinstance(ospec, tuple)
            self.bsteps.append((j, ospec, single, ins, cls._backward_cls._array_backward))
        self.bsteps.reverse()

    def guards_hold(self):
        for _, t, meta in self.ext:
            arr = t._array
            if arr.shape != meta[0] or arr.dtype != meta[1] or t._requires_grad != meta[2]:
                return False
        return True

    def run(self, inputs):
        prev = _state.enabled
        _state.enabled = False
        try:
            vals, tape = self._forward(inputs)
        finally:
            _state.enabled = prev
        env = dict(zip(self.out_values, vals))
        if self.grad_outs and prev:
            node = _Node()
            node._program = self
            node._saved = tape
            srcs = self._source_tensors(inputs)
            node._edges = tuple([_edge(t) for t in srcs])
            node.needs_input_grad = (True,) * len(srcs)
            node._seq = _next_seq()
            node._n_out = len(self.grad_outs)
            meta = []
            for i, v in enumerate(self.grad_outs):
                t = env[v]
                t.grad_fn = node
                t._output_nr = i
                t._requires_grad = True
                meta.append((t._array.shape, t._array.dtype))
            node._out_meta = tuple(meta)
        for v in self.consts:
            if v in env:
                env[v] = Tensor._wrap(env[v]._array.copy())
        return _build_out(self.out_spec, env)

    def _source_tensors(self, inputs):
        out = []
        ext = {v: t for v, t, _ in self.ext}
        idx = dict(self.inputs)
        for v in self.sources:
            out.append(inputs[idx[v]] if v in idx else ext[v])
        return out

    def backward(self, node, grads):
        tape = node._saved
        if tape is None:
            raise RuntimeError(_FREED % node.name())
        G = {}
        for v, g in zip(self.grad_outs, grads):
            if g is not None:
                G[v] = g
        meta = self.meta
        for j, ospec, single, ins, array_backward in self.bsteps:
            ctx = tape[j]
            if single:
                g = G.pop(ospec, None)
                if g is None:
                    continue
                if array_backward is not None:
                    result = array_backward(ctx, g)
                else:
                    result = ctx._forward_cls.backward(ctx, g)
            else:
                buf = [None if v is None else G.pop(v, None) for v in ospec]
                if all(g is None for g in buf):
                    continue
                if ctx._materialize:
                    for i, g in enumerate(buf):
                        if g is None and ospec[i] is not None:
                            shape, dtype = meta[ospec[i]]
                            xp = _xp_of_ctx(buf)
                            buf[i] = Tensor._wrap(xp.zeros(shape, dtype=dtype))
                result = ctx._call_backward(buf, False)
            if type(result) is not tuple:
                result = (result,)
            if len(result) != len(ins):
                result = _check_count(_Edges(ctx, ins), result)
            for i, (g, v) in enumerate(zip(result, ins)):
                if v is None or g is None:
                    continue
                m = meta[v]
                arr = g._array if type(g) is Tensor else None
                if arr is None or arr.shape != m[0] or arr.dtype != m[1]:
                    g = _check_grad(ctx, i, g, m)
                old = G.get(v)
                G[v] = g if old is None else Tensor._wrap(old._array + g._array)
        out = [G.get(v) for v in self.sources]
        return _unalias(out)


class _Array:
    __slots__ = ("shape", "dtype")


class _Meta:
    """An edge target standing for an input: its shape and dtype (``Node._input_meta``)."""

    __slots__ = ("_array",)

    def __init__(self, shape, dtype):
        self._array = _Array()
        self._array.shape = shape
        self._array.dtype = dtype


class _Edges:
    """A stand-in node for ``_check_count``'s message: the ctx's name, the inputs' count."""

    def __init__(self, ctx, ins):
        self._ctx = ctx
        self._edges = ins

    def name(self):
        return self._ctx.name()


def _xp_of_ctx(buf):
    for g in buf:
        if g is not None:
            return get_array_module(g._array)
    return get_array_module()


def _unalias(grads):
    """Gradients for distinct inputs never share memory (the engine may adopt them)."""
    seen = set()
    out = []
    for g in grads:
        if g is not None:
            arr = g._array
            root = arr.base if arr.base is not None else arr
            if id(root) in seen:
                g = Tensor._wrap(arr.copy())
            else:
                seen.add(id(root))
        out.append(g)
    return tuple(out)


def _values(spec):
    if spec is None:
        return []
    kind = spec[0]
    if kind == "v":
        return [spec[1]]
    if kind == "c":
        return []
    items = spec[1].values() if kind == "d" else spec[1]
    out = []
    for s in items:
        out.extend(_values(s))
    return out


def _build_out(spec, env):
    kind = spec[0]
    if kind == "v":
        return env[spec[1]]
    if kind == "c":
        return spec[1]
    if kind == "d":
        return {k: _build_out(s, env) for k, s in spec[1].items()}
    items = [_build_out(s, env) for s in spec[1]]
    if kind == "l":
        return items
    if kind == "t":
        return tuple(items)
    return spec[2](*items)      # a namedtuple
