"""Random programs for differential fuzzing: hypothesis draws 1-8 ops, run in ember and torch.

A program is a list of instructions over a growing list of values (the inputs first). The
same program runs in both libraries through ``run(lib, program, arrays)``; ``check`` compares
what they raise, their outputs and every leaf's gradient under a random upstream gradient.
"""
import numpy as np
from hypothesis import strategies as st

import ember

__all__ = ["programs", "run", "check", "UNARY", "BINARY", "INPLACE", "OPDB_UNARY"]

# Each op takes and returns tensors of either library (the same code runs in both).
UNARY = {
    "neg": lambda L, t: -t,
    "abs": lambda L, t: t.abs(),
    "exp": lambda L, t: t.clamp(-4, 4).exp(),
    "log": lambda L, t: (t * t + 1).log(),
    "log1p": lambda L, t: (t * t).log1p(),
    "sqrt": lambda L, t: (t * t + 0.5).sqrt(),
    "tanh": lambda L, t: t.tanh(),
    "sigmoid": lambda L, t: t.sigmoid(),
    "relu": lambda L, t: t.relu(),
    "sin": lambda L, t: t.sin(),
    "clamp": lambda L, t: t.clamp(-0.5, 0.7),
    "clamp_min": lambda L, t: t.clamp(min=0.1),
    "pow2": lambda L, t: t ** 2,
    "pow3": lambda L, t: t.pow(3),
    "rsub": lambda L, t: 1.5 - t,
    "rdiv": lambda L, t: 1 / (t * t + 1),
    "scale": lambda L, t: t * 0.75 + 0.25,
    "softmax_last": lambda L, t: L.softmax(t, -1) if t.dim() > 0 else t,
    "square_mean_keep": lambda L, t: (t * t).mean(-1, keepdim=True) if t.dim() > 0 else t,
    "clone": lambda L, t: t.clone(),
}
BINARY = {
    "add": lambda L, a, b: a + b,
    "sub": lambda L, a, b: a - b,
    "mul": lambda L, a, b: a * b,
    "div": lambda L, a, b: a / (b * b + 1),
    "maximum": lambda L, a, b: L.maximum(a, b),
    "where": lambda L, a, b: L.where(a > b, a, b * 2),
    "add_alpha": lambda L, a, b: L.add(a, b, alpha=0.5),
}
INPLACE = {
    "mul_": lambda L, t: t.mul_(1.5),
    "add_": lambda L, t: t.add_(0.25),
    "clamp_": lambda L, t: t.clamp_(-1, 1),
    "relu_": lambda L, t: t.relu_(),
    "neg_": lambda L, t: t.neg_(),
    "mask_zero": lambda L, t: t.__setitem__(t < 0, 0.0),
}



def _opdb_unary():
    """Element-wise entries of the op database that take one real array of any shape."""
    try:
        from opdb import all_ops
    except ImportError:
        return {}
    found = {}
    for op in all_ops():
        if not op.fn.__module__.endswith("elementwise") or not op.differentiable:
            continue
        try:
            first = op.samples(np.dtype("float64"))[0]
        except Exception:  # noqa: BLE001  (a broken entry is the op database's test's job)
            continue
        if len(first) == 1 and isinstance(first[0], np.ndarray) and first[0].dtype.kind == "f" \
                and first[0].size and first[0].min() < 0 and op.grad_inputs is None:
            found["opdb:" + op.name] = op.fn
    return found


# Inputs squashed into (-0.9, 0.9) first: inside every entry's domain (asin, atanh ...).
OPDB_UNARY = _opdb_unary()

dims = st.sampled_from([0, 1, 1, 2, 3])


@st.composite
def shapes(draw):
    """A base shape and input shapes that broadcast to it (size-0 and size-1 dims included)."""
    base = draw(st.lists(dims, min_size=0, max_size=3))
    n = draw(st.integers(1, 3))
    out = []
    for _ in range(n):
        drop = draw(st.integers(0, len(base)))
        out.append(tuple(draw(st.sampled_from([d, 1])) for d in base[drop:]))
    return out


@st.composite
def programs(draw):
    """(input shapes, dtype, instructions); an instruction is a tuple naming an op and values."""
    in_shapes = draw(shapes())
    dtype = draw(st.sampled_from(["float32", "float64"]))
    n_ops = draw(st.integers(1, 8))
    shapes_now = list(in_shapes)
    code = []
    for _ in range(n_ops):
        kind = draw(st.sampled_from(["unary", "unary", "binary", "binary", "reduce", "shape",
                                     "inplace", "no_grad", "detach"] +
                                    (["opdb", "opdb"] if OPDB_UNARY else [])))
        i = draw(st.integers(0, len(shapes_now) - 1))
        s = shapes_now[i]
        if kind == "binary":
            j = draw(st.integers(0, len(shapes_now) - 1))
            try:
                new = tuple(np.broadcast_shapes(s, shapes_now[j]))
            except ValueError:
                kind = "unary"
            else:
                code.append(("binary", draw(st.sampled_from(sorted(BINARY))), i, j))
                shapes_now.append(new)
        if kind == "opdb":
            code.append(("opdb", draw(st.sampled_from(sorted(OPDB_UNARY))), i))
            shapes_now.append(s)
        elif kind in ("unary", "no_grad"):
            code.append((kind, draw(st.sampled_from(sorted(UNARY))), i))
            new = s[:-1] + (1,) if code[-1][1] == "square_mean_keep" and s else s
            shapes_now.append(new)
        elif kind == "reduce":
            if not s:
                code.append(("sum_all", i))
                shapes_now.append(())
            else:
                d = draw(st.integers(-len(s), len(s) - 1))
                keep = draw(st.booleans())
                op = draw(st.sampled_from(["sum", "mean"]))
                code.append(("reduce", op, i, d, keep))
                new = list(s)
                if keep:
                    new[d] = 1
                else:
                    del new[d]
                shapes_now.append(tuple(new))
        elif kind == "shape":
            options = ["flatten", "unsqueeze"] + (["transpose"] if len(s) >= 2 else []) + \
                (["expand"] if 1 in s else [])
            op = draw(st.sampled_from(options))
            if op == "flatten":
                code.append(("flatten", i))
                shapes_now.append((int(np.prod(s)),))
            elif op == "unsqueeze":
                d = draw(st.integers(-len(s) - 1, len(s)))
                code.append(("unsqueeze", i, d))
                new = list(s)
                new.insert(d if d >= 0 else len(s) + 1 + d, 1)
                shapes_now.append(tuple(new))
            elif op == "transpose":
                code.append(("transpose", i))
                shapes_now.append(s[:-2] + (s[-1], s[-2]))
            else:
                new = tuple(2 if d == 1 else d for d in s)
                code.append(("expand", i, new))
                shapes_now.append(new)
        elif kind == "inplace":
            # only on values made by an op (a leaf requiring grad would raise in both)
            made = [k for k in range(len(in_shapes), len(shapes_now))]
            if not made:
                code.append(("unary", "scale", i))
                shapes_now.append(s)
                continue
            k = draw(st.sampled_from(made))
            code.append(("inplace", draw(st.sampled_from(sorted(INPLACE))), k))
        elif kind == "detach":
            code.append(("detach", i))
            shapes_now.append(s)
    n_out = draw(st.integers(1, 2))
    outs = [len(shapes_now) - 1 - k for k in range(min(n_out, len(shapes_now)))]
    return in_shapes, dtype, code, outs


def run(L, program, arrays):
    """Run ``program`` in library ``L`` on tensors made from ``arrays``; return outputs, leaves."""
    in_shapes, dtype, code, outs = program
    leaves = [L.tensor(a.copy(), requires_grad=True) for a in arrays]
    vals = list(leaves)
    for ins in code:
        kind = ins[0]
        if kind == "unary":
            vals.append(UNARY[ins[1]](L, vals[ins[2]]))
        elif kind == "no_grad":
            with L.no_grad():
                vals.append(UNARY[ins[1]](L, vals[ins[2]]))
        elif kind == "opdb":
            vals.append(OPDB_UNARY[ins[1]](L, vals[ins[2]].tanh() * 0.9))
        elif kind == "binary":
            vals.append(BINARY[ins[1]](L, vals[ins[2]], vals[ins[3]]))
        elif kind == "reduce":
            _, op, i, d, keep = ins
            vals.append(getattr(vals[i], op)(d, keepdim=keep))
        elif kind == "sum_all":
            vals.append(vals[ins[1]].sum())
        elif kind == "flatten":
            vals.append(vals[ins[1]].reshape(-1))
        elif kind == "unsqueeze":
            vals.append(vals[ins[1]].unsqueeze(ins[2]))
        elif kind == "transpose":
            vals.append(vals[ins[1]].transpose(-1, -2))
        elif kind == "expand":
            vals.append(vals[ins[1]].expand(*ins[2]))
        elif kind == "inplace":
            INPLACE[ins[1]](L, vals[ins[2]])
        elif kind == "detach":
            vals.append(vals[ins[1]].detach())
    return [vals[k] for k in outs], leaves


def _np(t):
    return t.detach().numpy().copy()


def check(torch, program, seed=0):
    """Run ``program`` in both libraries; assert the same error type, or equal results."""
    in_shapes, dtype, code, outs = program
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-2, 2, s).astype(dtype) for s in in_shapes]
    results = {}
    for L in (ember, torch):
        try:
            outputs, leaves = run(L, program, arrays)
            diff = [o for o in outputs if o.requires_grad]
            if diff:
                rng_g = np.random.default_rng(seed + 1)
                grads = [L.tensor(rng_g.standard_normal(tuple(o.shape)).astype(dtype))
                         for o in diff]
                L.autograd.backward(diff, grads)
            results[L.__name__] = ("ok", [_np(o) for o in outputs], [str(o.dtype) for o in
                                                                     outputs],
                                   [None if t.grad is None else _np(t.grad) for t in leaves])
        except Exception as e:  # noqa: BLE001  (compared between the libraries below)
            results[L.__name__] = ("error", type(e).__name__, str(e))
    e, t = results["ember"], results["torch"]
    if t[0] == "error" or e[0] == "error":
        assert e[:2] == t[:2], "ember: %s / torch: %s" % (e, t)
        return "error"
    rtol, atol = (2e-4, 1e-5) if dtype == "float32" else (1e-7, 1e-9)
    for k, (a, b) in enumerate(zip(e[1], t[1])):
        assert a.shape == b.shape, "output %d shape %s vs %s" % (k, a.shape, b.shape)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg="output %d" % k)
    assert e[2] == t[2], "output dtypes %s vs %s" % (e[2], t[2])
    for k, (a, b) in enumerate(zip(e[3], t[3])):
        assert (a is None) == (b is None), "leaf %d grad: ember %s, torch %s" % (k, a, b)
        if a is not None:
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=rtol * 10, atol=atol * 10, equal_nan=True,
                                       err_msg="leaf %d gradient" % k)
    return "ok"
