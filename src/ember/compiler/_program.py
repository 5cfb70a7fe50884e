"""A recorded program: the forward as straight-line Python over the recorded Functions' forwards
(no graph built per op), and the backward as one node that runs their backwards in reverse."""
import re

import numpy as np

from ..backend import get_array_module
from ..autograd.engine import _check_count, _check_grad
from ..autograd import function as _function
from ..autograd.function import Function, _edge, _next_seq
from ..autograd.grad_mode import state as _state
from ..autograd.graph import _FREED, _pack_hooks
from ..tensor import Tensor
from . import _effects, _lower, _record

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
        if a[0] == "ext" and a[1] is not b[1] and a[1]._array.size == 0 == b[1]._array.size:
            r1.slots[v] = ("const", a[1])   # (an empty placeholder holds no data)
        elif a[0] == "ext" and a[1] is not b[1]:
            return ("a tensor made inside the function by something other than a recorded op "
                    "or a creation function (e.g. a comparison or a raw array computation)")
        if a[0] == "const" and not _same_tensor(a[1], b[1]):
            return "a tensor made inside the function changes between calls"
    return None


def _expr(spec, names, tensor):
    """Python source for argument ``spec`` (``tensor(v)``: the name of value v's Tensor)."""
    kind = spec[0]
    if kind == "v":
        return tensor(spec[1])
    if kind == "c":
        name = "C%d" % len(names)
        names[name] = spec[1]
        return name
    items = ", ".join(_expr(s, names, tensor) for s in spec[1])
    return "[%s]" % items if kind == "l" else "(%s,)" % items



_LOCAL = re.compile(r"\b[atgc]\d+\b")
_ASSIGNED = re.compile(r"^    ((?:[atgc]\d+, )*[atgc]\d+),? = ")


def _free_dead(lines):
    """``lines`` (a generated function's body) with ``del`` statements after the last
    top-level statement that reads each value, so that an intermediate array is freed as soon
    as the program is done with it (as eager frees a temporary), not when the call returns."""
    stmts = []
    for line in lines:
        if line.startswith("        ") and stmts:
            stmts[-1].append(line)
        else:
            stmts.append([line])
    defined, last = {}, {}
    for i, st in enumerate(stmts):
        m = _ASSIGNED.match(st[0])
        if m:
            for n in m.group(1).split(", "):
                defined.setdefault(n, i)
        for line in st:
            for n in _LOCAL.findall(line):
                last[n] = i
    dead = {}
    end = len(stmts) - 1
    for n, i in last.items():
        if n in defined and defined[n] <= i < end:
            dead.setdefault(i, []).append(n)
    out = []
    for i, st in enumerate(stmts):
        out.extend(st)
        if i in dead:
            out.append("    del " + ", ".join(sorted(dead[i])))
    return out


def _sources_hold(sources):
    """Whether every ``(getter, tensor)`` still finds its tensor."""
    try:
        for get, t in sources:
            if get() is not t:
                return False
    except (LookupError, ValueError, AttributeError):
        return False
    return True


class Program:
    """One recorded signature of a compiled callable, replayable.

    The forward is one generated function (``source``): a step with an array-level form
    (``_lower.py``, checked against the recorded step) is one expression on arrays; any other
    runs its Function's forward with a ctx. The backward (``bsource``) runs the steps'
    backwards in reverse on arrays, summing gradients in eager's order.
    """

    def __init__(self, rec, out_spec, out_grad, prefix=None, check=None):
        # (``prefix``: the program holds the ops before a graph break, served to the function
        # run again eagerly; see ``serve``)
        self.prefix = prefix
        self.steps = rec.steps if prefix is None else rec.steps[:prefix]
        self.meta = rec.meta
        self.out_spec = out_spec
        self.n_ops = len(self.steps)
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
        self.lowered = {}
        if check is not None:
            self._lower(check)
        self._build(rec)
        # (what ``run`` needs, computed once)
        self.pure = len(self.lowered) == len(self.steps)
        self.single = out_spec[0] == "v" and out_spec[1] not in self.consts
        self.grad_pos = [self.out_values.index(v) for v in self.grad_outs]
        idx = dict(self.inputs)
        ext = {v: t for v, t, _ in self.ext}
        self.source_plan = [(idx[v], None) if v in idx else (None, ext[v])
                            for v in self.sources]
        self.needs = (True,) * len(self.sources)

    # -- array-level steps
    def _lower(self, rec):
        outs = set(self.out_values)
        for k, (cls, _, spec, kspec, ospec, needs, _) in enumerate(self.steps):
            if kspec or ospec is None or isinstance(ospec, tuple) or \
                    any(s[0] not in "vc" for s in spec) or (cls.__name__ == "T" and ospec in outs):
                continue
            consts = [s[1] if s[0] == "c" else None for s in spec]
            metas = [self.meta[s[1]] if s[0] == "v" else None for s in spec]
            low = _lower.lower(cls, consts, metas, self.meta[ospec], needs)
            if low is not None and self._verify(k, low, rec):
                self.lowered[k] = low

    @staticmethod
    def _callable(low, n):
        names = dict(low.names)
        src = "lambda %s: %s" % (", ".join("a%d" % i for i in range(n)) or "*_",
                                 low.expr.format(*["a%d" % i for i in range(n)]))
        return eval(src, names)

    def _verify(self, k, low, rec):
        """The lowering gives the recorded step's output and gradients, bit for bit."""
        cls, _, spec, _, ospec, needs, grad = rec.steps[k]
        vargs = [(i, s[1]) for i, s in enumerate(spec) if s[0] == "v"]
        arrays = [rec.tensors[v]._array for _, v in vargs]
        out_t = rec.tensors[ospec]
        prev = _state.enabled
        _state.enabled = 0
        try:
            got = self._callable(low, len(arrays))(*arrays)
            if not _same_bits(got, out_t._array):
                return False
            if low.out_expr is not None:
                buf = get_array_module(got).empty_like(got)
                into = eval("lambda %s, B: %s" % (
                    ", ".join("a%d" % i for i in range(len(arrays))),
                    low.out_expr.format(*["a%d" % i for i in range(len(arrays))], out="B")),
                    dict(low.names))
                if type(got) is not type(buf) or not _same_bits(into(*arrays, buf), got):
                    low.out_expr = None
            if not grad:
                return True
            node = out_t.grad_fn
            if type(node) is not cls._backward_cls:
                return False
            xp = get_array_module(out_t._array)
            shape, dtype = out_t._array.shape, out_t._array.dtype
            g = ((xp.arange(out_t._array.size) % 13 - 6).astype(dtype) * dtype.type(0.25)
                 + dtype.type(0.125)).reshape(shape)
            want = node._call_backward([Tensor._wrap(g)], False)
            want = want if type(want) is tuple else (want,)
            mine = low.backward(g, *arrays, got)
            for (i, _), m in zip(vargs, mine):
                if not needs[i]:
                    continue
                w = want[i]
                if m is None or w is None or not _same_bits(m, w._array):
                    return False
            if low.bw_exprs is not None and not self._verify_bw(low, vargs, needs, want,
                                                                g, arrays, got):
                low.bw_exprs = None     # (the step's backward function serves)
            return True
        except Exception:
            return False
        finally:
            _state.enabled = prev

    @staticmethod
    def _verify_bw(low, vargs, needs, want, g, arrays, out):
        """The inlined gradient expressions give eager's gradients, bit for bit."""
        params = ", ".join(["G"] + ["a%d" % j for j in range(len(arrays))] + ["OUT"])
        fmt = ["a%d" % j for j in range(len(arrays))]
        try:
            for j, (i, _) in enumerate(vargs):
                expr = low.bw_exprs[j] if j < len(low.bw_exprs) else None
                if not needs[i]:
                    continue
                if expr is None or want[i] is None:
                    return False
                fn = eval("lambda %s: %s" % (params, expr.format(*fmt, g="G", out="OUT")),
                          dict(low.names))
                if not _same_bits(fn(g, *arrays, out), want[i]._array):
                    return False
        except Exception:
            return False
        return True

    def _buffers(self, rec):
        """value -> an array its step writes into at every call: the values that die within
        the forward (neither outputs nor kept for the backward nor read by a ctx-run step or
        as a view), made by an element-wise ufunc (computed once from the recording)."""
        live = set(self.out_values)
        for k, (cls, _, spec, kspec, ospec, needs, grad) in enumerate(self.steps):
            low = self.lowered.get(k)
            vs = [x for s in list(spec) + list(kspec.values()) for x in _values(s)]
            if low is None or cls.__name__ == "T":
                live.update(vs)
            elif grad:
                ka = low.keep_args
                live.update(v for j, v in enumerate(vs) if ka is True or (ka and j in ka))
                if low.keep_out:
                    live.add(ospec)
        out = {}
        for k, low in self.lowered.items():
            v = self.steps[k][4]
            shape, dtype = self.meta[v]
            if low.out_expr is not None and v not in live and shape:
                xp = get_array_module(rec.tensors[v]._array)
                out[v] = xp.empty(shape, dtype)
        self.n_buffers = len(out)
        self.buffer_bytes = sum(b.nbytes for b in out.values())
        return out

    # -- code
    def _build(self, rec):
        names = {"W": Tensor._wrap}
        lines = ["def forward(I):"]
        have_t = set()       # values with a Tensor in ``t<v>``
        have_a = set()       # values with an array in ``a<v>``
        steps = self.steps

        def tensor(v):
            if v not in have_t:
                lines.append("    t%d = W(a%d)" % (v, v))
                have_t.add(v)
            return "t%d" % v

        def array(v):
            if v not in have_a:
                lines.append("    a%d = t%d._array" % (v, v))
                have_a.add(v)
            return "a%d" % v

        for v, i in self.inputs:
            lines.append("    t%d = I[%d]" % (v, i))
            have_t.add(v)
        for v, t, _ in self.ext:
            names["E%d" % v] = t
            lines.append("    t%d = E%d" % (v, v))
            have_t.add(v)
        for v, t in self.consts.items():
            names["E%d" % v] = t
            lines.append("    t%d = E%d" % (v, v))
            have_t.add(v)
        # the arrays the backward reads, by step: ("a", value) or ("c", step)
        tape = []
        self.bplan = []
        buffers = self._buffers(rec)
        for k, (cls, fwd, spec, kspec, ospec, needs, grad) in enumerate(steps):
            low = self.lowered.get(k)
            if low is not None:
                vs = [s[1] for s in spec if s[0] == "v"]
                args = [array(v) for v in vs]
                for n, val in low.names.items():
                    names["L%d_%s" % (k, n)] = val
                rename = _renamer(k, low.names)
                if ospec in buffers:
                    names["B%d" % ospec] = buffers[ospec]
                    expr = rename(low.out_expr).format(*args, out="B%d" % ospec)
                else:
                    expr = rename(low.expr).format(*args)
                lines.append("    a%d = %s" % (ospec, expr))
                have_a.add(ospec)
                if grad:
                    ka = low.keep_args
                    keep = [v for j, v in enumerate(vs)
                            if ka is True or (ka and j in ka)]
                    self.bplan.append(("low", k, ospec, vs, needs, keep, low.keep_out))
                    tape.extend(keep)
                    if low.keep_out:
                        tape.append(ospec)
                continue
            names["N%d" % k] = cls._backward_cls
            names["F%d" % k] = fwd
            names["K%d" % k] = needs
            args = ["c%d" % k] + [_expr(s, names, tensor) for s in spec]
            args += ["%s=%s" % (key, _expr(s, names, tensor)) for key, s in kspec.items()]
            lines.append("    c%d = N%d()" % (k, k))
            lines.append("    c%d.needs_input_grad = K%d" % (k, k))
            if grad:
                # (backward formulas read their inputs' shapes through ``_input_meta``)
                names["M%d" % k] = tuple([
                    (_Meta(*rec.meta[s[1]]), 0) if s[0] == "v" and need else None
                    for s, need in zip(spec, needs)])
                lines.append("    c%d._edges = M%d" % (k, k))
                ins = tuple([s[1] if s[0] == "v" and need else None
                             for s, need in zip(spec, needs)])
                self.bplan.append(("ctx", k, ospec, ins, cls._backward_cls._array_backward))
                tape.append("c%d" % k)
            call = "F%d(%s)" % (k, ", ".join(args))
            if ospec is None:
                lines.append("    " + call)      # an update in place
            elif isinstance(ospec, tuple):
                lines.append("    o = " + call)
                for i, v in enumerate(ospec):
                    if v is not None:
                        lines.append("    t%d = o[%d]" % (v, i))
                        have_t.add(v)
            else:
                lines.append("    t%d = %s" % (ospec, call))
                have_t.add(ospec)
        outs = "".join("%s, " % tensor(v) for v in self.out_values)
        tape = list(dict.fromkeys(tape))
        self.tape_names = tape
        saved = "".join("%s, " % (x if isinstance(x, str) else array(x)) for x in tape)
        self._body = (lines[1:], names, saved)
        lines.append("    return (%s), (%s)" % (outs, saved))
        self.source = "\n".join(lines[:1] + _free_dead(lines[1:])) + "\n"
        exec(compile(self.source, "<ember.compile program>", "exec"), names)
        self._forward = names["forward"]
        self._build_backward()

    def _build_backward(self, given_known=True):
        """The backward as one generated function of the tape ``S`` and the output gradients
        ``G``. Gradients are summed in eager's order (first arrival + later ones). Whether a
        gradient variable may be None is tracked while generating: steps whose gradient is
        known run unconditionally, and the array-level steps' gradients are inlined
        expressions (``Lowered.bw_exprs``). ``given_known``: every ``G[i]`` is an array (the
        engine's call for a one-output node); otherwise any may be None."""
        names = {"GB": self._ctx_backward}
        head = ["def backward(S, G):"]
        if self.tape_names:
            head.append("    %s, = S.pop()" % ", ".join(x if isinstance(x, str) else "a%d" % x
                                                 for x in self.tape_names))
        state = {}          # gradient variable -> "known" (an array) or "maybe" (or None)
        for i, v in enumerate(self.grad_outs):
            head.append("    g%d = G[%d]" % (v, i))
            state[v] = "known" if given_known else "maybe"
        lines = []

        def add(u, expr, maybe_r, ind):
            g = "g%d" % u
            st = state.get(u)
            if not maybe_r:
                if st is None:
                    lines.append("%s%s = %s" % (ind, g, expr))
                elif st == "known":
                    lines.append("%s%s = %s + %s" % (ind, g, g, expr))
                else:
                    lines.append("%sr = %s" % (ind, expr))
                    lines.append("%s%s = r if %s is None else %s + r" % (ind, g, g, g))
                state[u] = "known"
                return
            lines.append("%sr = %s" % (ind, expr))
            if st is None:
                lines.append("%s%s = r" % (ind, g))
                state[u] = "maybe"
            elif st == "known":
                lines.append("%sif r is not None:" % ind)
                lines.append("%s    %s = %s + r" % (ind, g, g))
            else:
                lines.append("%sif r is not None:" % ind)
                lines.append("%s    %s = r if %s is None else %s + r" % (ind, g, g, g))

        def block(outs, targets):
            """Open the step's block: the indentation, or None to skip the step (no
            gradient reaches it)."""
            sts = [state.get(v) for v in outs if v is not None]
            if "known" in sts:
                return "    "
            maybe = [v for v in outs if v is not None and state.get(v) == "maybe"]
            if not maybe:
                return None
            for u in targets:
                if state.get(u) is None:
                    lines.append("    g%d = None" % u)
                    state[u] = "maybe"
            lines.append("    if %s:" % " or ".join("g%d is not None" % v for v in maybe))
            return "        "

        for plan in reversed(self.bplan):
            if plan[0] == "low":
                _, k, v, vs, needs, keep, keep_out = plan
                low = self.lowered[k]
                pos = [i for i, s in enumerate(self.steps[k][2]) if s[0] == "v"]
                targets = [u for j, u in enumerate(vs) if needs[pos[j]]]
                ind = block((v,), targets)
                if ind is None:
                    continue
                before = {u: state[u] for u in targets if u in state}
                exprs = self._inline(k, low, vs, keep, keep_out, v, names)
                if exprs is None:
                    names["B%d" % k] = low.backward
                    args = ", ".join(["g%d" % v] + ["a%d" % u if u in keep else "None"
                                                    for u in vs] +
                                     ["a%d" % v if keep_out else "None"])
                    lines.append("%sR = B%d(%s)" % (ind, k, args))
                    exprs = ["R[%d]" % j for j in range(len(vs))]
                for j, u in enumerate(vs):
                    if needs[pos[j]]:
                        add(u, exprs[j], False, ind)
                if ind != "    ":
                    state.update(before)
            else:
                _, k, ospec, ins, _ = plan
                outs = ospec if isinstance(ospec, tuple) else (ospec,)
                targets = [u for u in ins if u is not None]
                ind = block(outs, targets)
                if ind is None:
                    continue
                before = {u: state[u] for u in targets if u in state}
                gs = ", ".join("None" if v is None or v not in state else "g%d" % v
                               for v in outs)
                lines.append("%sR = GB(%d, c%d, (%s,))" % (ind, k, k, gs))
                for i, u in enumerate(ins):
                    if u is not None:
                        add(u, "R[%d]" % i, True, ind)
                if ind != "    ":
                    state.update(before)
        ret = "    return (%s)" % "".join("%s, " % ("g%d" % v if v in state else "None")
                                           for v in self.sources)
        src = "\n".join(head[:1] + _free_dead(head[1:] + lines + [ret])) + "\n"
        exec(compile(src, "<ember.compile backward>", "exec"), names)
        if given_known:
            self.bsource = src
            self._backward = names["backward"]
            self._backward_any = None
        return names["backward"]

    def _inline(self, k, low, vs, keep, keep_out, v, names):
        """Step ``k``'s gradient expressions (one per tensor argument), or None."""
        exprs = low.bw_exprs
        if exprs is None:
            return None
        rename = _renamer(k, low.names)
        fmt = ["a%d" % u if u in keep else None for u in vs]
        out = []
        for j, expr in enumerate(exprs[:len(vs)]):
            if expr is None:
                out.append(None)
                continue
            used = [i for i in range(len(vs)) if "{%d}" % i in expr]
            if any(fmt[i] is None for i in used) or ("{out}" in expr and not keep_out):
                return None
            out.append(rename(expr).format(*fmt, g="g%d" % v, out="a%d" % v))
        for n, val in low.names.items():
            names["L%d_%s" % (k, n)] = val
        return out

    def _ctx_backward(self, k, ctx, grads):
        """Gradient arrays for step ``k``'s inputs from its ctx (the op's own backward)."""
        cls, _, spec, _, ospec, needs, _ = self.steps[k]
        ins = tuple([s[1] if s[0] == "v" and need else None for s, need in zip(spec, needs)])
        buf = [None if g is None else Tensor._wrap(g) for g in grads]
        if not isinstance(ospec, tuple):
            array_backward = cls._backward_cls._array_backward
            result = array_backward(ctx, buf[0]) if array_backward is not None else \
                ctx._forward_cls.backward(ctx, buf[0])
        else:
            if ctx._materialize:
                for i, g in enumerate(buf):
                    if g is None and ospec[i] is not None:
                        shape, dtype = self.meta[ospec[i]]
                        xp = _xp_of_ctx(buf)
                        buf[i] = Tensor._wrap(xp.zeros(shape, dtype=dtype))
            result = ctx._call_backward(buf, False)
        if type(result) is not tuple:
            result = (result,)
        if len(result) != len(ins):
            result = _check_count(_Edges(ctx, ins), result)
        out = []
        for i, (g, v) in enumerate(zip(result, ins)):
            if v is None or g is None:
                out.append(None)
                continue
            m = self.meta[v]
            arr = g._array if type(g) is Tensor else None
            if arr is None or arr.shape != m[0] or arr.dtype != m[1]:
                g = _check_grad(ctx, i, g, m)
            out.append(g._array)
        return out

    def fast_call(self, arg_keys, enabled, miss):
        """One generated function of the call's arguments (a tuple of Tensors) that checks
        this program's guards (what the call's cache key and ``guards_hold`` check) and
        replays it: forward, node and edges in one frame; ``miss`` when a guard fails. None
        where the program needs more (several outputs, ctx-run steps, a graph break)."""
        if not self.pure or not self.single or self.prefix is not None or \
                len(self.grad_outs) > 1:
            return None
        body, names, saved = self._body
        names = dict(names, T=Tensor, MISS=miss, ST=_state, PH=_pack_hooks, NODE=_Node,
                     P=self, EDGE=_edge, SEQ=_next_seq, NEEDS=self.needs)
        cond = ["not ST.autocast",
                ("" if enabled else "not ") + "ST.enabled", "not PH", "not ST.anomaly"]
        pre = []
        for i, (atype, shape, dtype, rg) in enumerate(arg_keys):
            names["AT%d" % i], names["SH%d" % i], names["DT%d" % i] = atype, shape, dtype
            pre.append("    x%d = I[%d]" % (i, i))
            cond.append("type(x%d) is T and type(x%d._array) is AT%d and x%d._array.shape == "
                        "SH%d and x%d._array.dtype == DT%d and %sx%d._requires_grad"
                        % (i, i, i, i, i, i, i, "" if rg else "not ", i))
        for v, t, (shape, dtype, rg) in self.ext:
            names["GS%d" % v], names["GD%d" % v] = shape, dtype
            cond.append("E%d._array.shape == GS%d and E%d._array.dtype == GD%d and "
                        "%sE%d._requires_grad" % (v, v, v, v, "" if rg else "not ", v))
        if self.finders:
            names["SRC"], names["SOURCES"] = _sources_hold, self.finders
            cond.append("SRC(SOURCES)")
        if len(arg_keys) > 1:
            # (distinct tensors: the signature of a call passing one tensor twice differs)
            cond.append("len({%s}) == %d" % (", ".join("id(x%d)" % i
                                                       for i in range(len(arg_keys))),
                                             len(arg_keys)))
        lines = ["def call(I):", "    if len(I) != %d:" % len(arg_keys), "        return MISS"]
        lines += pre
        lines.append("    if not (%s):" % " and\n            ".join(cond))
        lines.append("        return MISS")
        lines.extend(body)
        out = "t%d" % self.out_spec[1]
        if self.grad_outs and enabled:
            edges = []
            for j, (i, t) in enumerate(self.source_plan):
                x = "I[%d]" % i if t is None else "S%d" % j
                if t is not None:
                    names["S%d" % j] = t
                lines.append("    s = %s" % x)
                lines.append("    f = s.grad_fn")
                lines.append("    e%d = EDGE(s) if s._base is not None else (s, 0) if f is None "
                             "else (f, s._output_nr)" % j)
                edges.append("e%d, " % j)
            names["OM"] = (self.meta[self.out_spec[1]],)
            lines += ["    n = NODE()",
                      "    n._program = P",
                      "    n._saved = (%s)" % saved,
                      "    n._edges = (%s)" % "".join(edges),
                      "    n.needs_input_grad = NEEDS",
                      "    n._seq = SEQ()",
                      "    n._out_meta = OM",
                      "    %s._grad_fn = n" % out,
                      "    %s._output_nr = 0" % out,
                      "    %s._requires_grad = True" % out]
        lines.append("    return %s" % out)
        self.fast_source = "\n".join(lines[:1] + _free_dead(lines[1:])) + "\n"
        exec(compile(self.fast_source, "<ember.compile call>", "exec"), names)
        return names["call"]

    finders = ()        # (getter, tensor): where the function finds each external tensor

    def guards_hold(self):
        for _, t, meta in self.ext:
            arr = t._array
            if arr.shape != meta[0] or arr.dtype != meta[1] or t._requires_grad != meta[2]:
                return False
        return not self.finders or _sources_hold(self.finders)

    def run(self, inputs):
        state = _state
        prev = state.enabled
        if self.pure:
            vals, tape = self._forward(inputs)
        else:
            state.enabled = 0
            try:
                vals, tape = self._forward(inputs)
            finally:
                state.enabled = prev
        if prev and self.grad_outs:
            self._connect(vals, tape, inputs)
        if self.single:
            return vals[0]
        env = dict(zip(self.out_values, vals))
        for v in self.consts:
            if v in env:
                env[v] = Tensor._wrap(env[v]._array.copy())
        return _build_out(self.out_spec, env)

    def _connect(self, vals, tape, inputs):
        """One node for the outputs that require grad: its backward is the program's."""
        node = _Node()
        node._program = self
        node._saved = tape
        edges = []
        for i, t in self.source_plan:
            if t is None:
                t = inputs[i]
            fn = t.grad_fn
            edges.append(_edge(t) if t._base is not None else
                         (fn, t._output_nr) if fn is not None else (t, 0))
        node._edges = tuple(edges)
        node.needs_input_grad = self.needs
        node._seq = _next_seq()
        node._n_out = len(self.grad_outs)
        meta = []
        for i, pos in enumerate(self.grad_pos):
            t = vals[pos]
            t._grad_fn = node
            t._output_nr = i
            t._requires_grad = True
            meta.append((t._array.shape, t._array.dtype))
        node._out_meta = tuple(meta)

    def serve(self, fn, args, kwargs, inputs):
        """Run ``fn`` eagerly, its ops before the graph break answered by this program (one
        replay: one node for their backward); after the break it runs as recorded eagerly."""
        outs = self.run(inputs)
        env = dict(zip(self.out_values, outs))
        served = []
        for cls, _, _, _, ospec, _, _ in self.steps:
            if ospec is None:
                served.append((cls, None))
            elif isinstance(ospec, tuple):
                served.append((cls, tuple([None if v is None else env[v] for v in ospec])))
            else:
                served.append((cls, env[ospec]))
        with _Server(served):
            return fn(*args, **kwargs)

    def backward(self, node, grads):
        tape = node._saved
        if tape is None:
            raise RuntimeError(_FREED)
        if not _state.retain:
            # (the engine frees the graph after this call: freed now, the backward drops each
            # saved array after its last use, as eager frees node by node)
            node._release()
        tape = [tape]
        arrays = []
        for g in grads:
            if g is None:
                break
            arrays.append(g._array)
        if len(arrays) == len(grads):
            grads = self._backward(tape, arrays)
        else:
            run = self._backward_any
            if run is None:
                run = self._backward_any = self._build_backward(given_known=False)
            grads = run(tape, [None if g is None else g._array for g in grads])
        if len(grads) == 1:
            g = grads[0]
            return (None if g is None else Tensor._wrap(g),)
        return _unalias([None if g is None else Tensor._wrap(g) for g in grads])


class _Server:
    """While a function runs again eagerly, answers its first Function applications with a
    program's results (``Function.apply``'s hook), then steps aside."""

    depth = 0

    def __init__(self, served):
        self.served = served
        self.pos = 0

    def hook(self, cls, args, kwargs):
        want, out = self.served[self.pos]
        if want is not cls:
            self._exit()
            raise RuntimeError("ember.compile: the function applied %s where its recording "
                               "applied %s (it must do the same before its graph break; "
                               "ember.compiler.reset() forgets the recording)"
                               % (cls.__name__, want.__name__))
        self.pos += 1
        if self.pos == len(self.served):
            self._exit()
        return out

    def _next_is(self, cls):
        return self.pos < len(self.served) and self.served[self.pos][0] is cls

    def may_fill(self, t, args, kwargs):
        return self._next_is(_effects.RandomLike)

    def may_call(self, args, kwargs):
        return self._next_is(_effects.RandomCall)

    def made(self, t):
        pass

    def alias(self, t, r):
        pass

    def __enter__(self):
        self._saved = _effects.install(_record.effect_patches())
        self._prev = _record._current[0]
        _record._current[0] = self
        self._prev_hook = _function._hook
        _function._hook = self.hook
        self.active = True
        return self

    def _exit(self):
        if self.active:
            self.active = False
            _function._hook = self._prev_hook
            _record._current[0] = self._prev
            _effects.uninstall(self._saved)

    def __exit__(self, *exc):
        short = self.active
        self._exit()
        if short and exc[0] is None:
            raise RuntimeError("ember.compile: the function returned before applying the "
                               "ops recorded before its graph break")
        return False


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


def _renamer(k, names):
    """Rename step ``k``'s constants in an expression (``S`` -> ``L3_S``)."""
    if not names:
        return lambda expr: expr
    pattern = re.compile(r"\b(%s)\b" % "|".join(sorted(names, key=len, reverse=True)))
    return lambda expr: pattern.sub(lambda m: "L%d_%s" % (k, m.group(1)), expr)


def _same_bits(a, b):
    """Equal shape, dtype and bytes (NaN payloads and signed zeros included)."""
    xp = get_array_module(b)
    a, b = xp.asarray(a), xp.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def step_values(steps):
    """The values the steps produce, in order."""
    out = []
    for step in steps:
        ospec = step[4]
        if isinstance(ospec, tuple):
            out.extend(v for v in ospec if v is not None)
        elif ospec is not None:
            out.append(ospec)
    return out


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
