"""Array-level forms of common ops for replay: the same array calls as the op's forward and
``array_backward``, without a ctx, a Tensor per value or a node per op.

``lower(cls, consts, metas, out_meta, needs)`` gives a ``Lowered`` or None. ``consts`` are the
step's non-tensor arguments (by position; tensor ones are None), ``metas`` the (shape, dtype)
of its tensor arguments. A program uses a lowering only after checking it, once, against the
recorded eager step: the same output bits and the same gradient bits for a test gradient
(``_program.Program._verify``); otherwise the op's own forward and backward run.
"""
from ..autograd._sum_to import sum_to_array
from ..backend import errstate, get_array_module
from ..ops.matmul import _mat1_grad, _mat2_grad, _transposed, mm2d
from ..ops.reduction import _broadcast_scalar
from ..ops.unary import _clamp_keep, _relu_grad
from ..ops._util import keep_where

_FLOATS = frozenset(["float16", "float32", "float64"])
_XP = get_array_module()
_UFUNCS = {"+": ("ADD", _XP.add), "-": ("SUB", _XP.subtract), "*": ("MUL", _XP.multiply)}
_NUMBERS = (int, float)


class Lowered:
    """An op on arrays. ``expr``: the forward as a Python expression of ``{0}``, ``{1}``...
    (the tensor arguments' arrays) and of ``names`` (constants), ``out_expr`` the same writing into
``{out}`` (for an element-wise ufunc); ``backward(g, *arrays, out)``
    returns one gradient array (or None) per tensor argument. ``bw_exprs`` (optional): the
    same gradients as expressions of ``{g}``, ``{0}``... and ``{out}``, one per tensor argument
    (None where it needs no gradient), which a program inlines into its backward."""

    __slots__ = ("expr", "names", "backward", "keep_args", "keep_out", "out_expr", "bw_exprs")

    def __init__(self, expr, names, backward, keep_args, keep_out, out_expr=None,
                 bw_exprs=None):
        self.expr = expr
        self.bw_exprs = bw_exprs
        # (the same ufunc writing into a given array ``{out}``: a buffer reused across calls)
        self.out_expr = out_expr
        self.names = names
        self.backward = backward
        # (the arguments backward reads, kept from the forward: True, or their positions)
        self.keep_args = keep_args
        self.keep_out = keep_out


def _float(meta):
    return meta[1].name in _FLOATS


def _grad_to(shape):
    """``g`` summed to ``shape`` (eager's ``sum_to`` for a broadcast input)."""
    def to(g):
        return g if g.shape == shape else sum_to_array(g, shape)
    return to


def _number(c):
    return type(c) in _NUMBERS


def _const(c, dtype):
    """Number ``c`` as a 0-d array of ``dtype``: a ufunc takes it faster than a Python number
    and computes the same (NumPy casts a Python number to the array's dtype first)."""
    try:
        with errstate(all="raise"):
            return _XP.asarray(c, dtype=dtype)
    except (FloatingPointError, OverflowError, ValueError, TypeError):
        return c


def _need(needs, exprs):
    """``exprs`` with None where the argument needs no gradient."""
    return tuple([e if n else None for e, n in zip(exprs, needs)])


def _binary(op, consts, metas, needs):
    """Add, Sub, Mul with two float tensors of one dtype, or a float tensor and a number."""
    if len(metas) == 2 and None not in metas:
        (sa, da), (sb, db) = metas
        if da != db or not _float(metas[0]):
            return None
        ta, tb = _grad_to(sa), _grad_to(sb)
        name, uf = _UFUNCS[op]
        ufn = {name: uf}
        out2 = name + "({0}, {1}, {out})"
        same = sa == sb
        if op == "+":
            def bw(g, a, b, out):
                return (ta(g) if needs[0] else None, tb(g) if needs[1] else None)
            return Lowered("{0} + {1}", ufn, bw, False, False, out2,
                           _need(needs, ("{g}", "{g}")) if same else None)
        if op == "-":
            def bw(g, a, b, out):
                return (ta(g) if needs[0] else None, tb(-g) if needs[1] else None)
            ufn["NEG"] = _XP.negative
            return Lowered("{0} - {1}", ufn, bw, False, False, out2,
                           _need(needs, ("{g}", "NEG({g})")) if same else None)

        def bw(g, a, b, out):
            return (ta(g * b) if needs[0] else None, tb(g * a) if needs[1] else None)
        keep = tuple(j for j in (0, 1) if needs[1 - j])     # (as Mul saves)
        return Lowered("{0} * {1}", ufn, bw, keep, False, out2,
                       _need(needs, ("MUL({g}, {1})", "MUL({g}, {0})")) if same else None)
    s = consts[1]
    if metas[1] is not None or not _number(s) or not _float(metas[0]) or \
            metas[0][1].name == "float16":
        return None
    name, uf = _UFUNCS[op]
    c = _const(s, metas[0][1])
    names = {"S": c, name: uf}
    out1 = name + "({0}, S, {out})"
    if op == "*":
        def bw_scaled(g, a, out):
            return (g * s,)
        names["MUL"] = _XP.multiply
        return Lowered("{0} * S", names, bw_scaled, False, False, out1, ("MUL({g}, S)",))

    def bw_same(g, a, out):
        return (g,)
    return Lowered("{0} %s S" % op, names, bw_same, False, False, out1, ("{g}",))


def _add(consts, metas, out_meta, needs):
    return _binary("+", consts, metas, needs)


def _sub(consts, metas, out_meta, needs):
    return _binary("-", consts, metas, needs)


def _mul(consts, metas, out_meta, needs):
    return _binary("*", consts, metas, needs)


def _pow_scalar(consts, metas, out_meta, needs):
    if consts[1] != 2 or type(consts[1]) is bool or not _float(metas[0]):
        return None

    def bw(g, a, out):
        return (g * (a * 2.0),)
    return Lowered("{0} * {0}", {"MUL": _XP.multiply, "TWO": _const(2.0, metas[0][1])}, bw,
                   True, False, "MUL({0}, {0}, {out})", ("MUL({g}, MUL({0}, TWO))",))


def _relu(consts, metas, out_meta, needs):
    if not _float(metas[0]):
        return None

    def bw(g, a, out):
        return (_relu_grad(g, out),)
    return Lowered("MAX({0}, Z)", {"MAX": _XP.maximum, "Z": _const(0, metas[0][1]),
                                   "RELU_GRAD": _relu_grad},
                   bw, False, True, "MAX({0}, Z, out={out})", ("RELU_GRAD({g}, {out})",))


def _sum(consts, metas, out_meta, needs):
    if consts[1] is not None or not _float(metas[0]):
        return None
    shape = metas[0][0]
    n = 1
    for d in shape:
        n *= d

    def spread(g):
        if n > 4096:
            return _broadcast_scalar(g, shape)
        res = get_array_module(g).empty(shape, g.dtype)
        res.fill(g)
        return res

    def bw(g, a, out):
        return (spread(g),)
    return Lowered("ADD_REDUCE({0}, axis=None)", {"ADD_REDUCE": get_array_module().add.reduce,
                                                  "SPREAD": spread},
                   bw, False, False, None, ("SPREAD({g})",))


def _mean(consts, metas, out_meta, needs):
    if consts[1] is not None or not _float(metas[0]):
        return None
    shape, dtype = metas[0]
    n = 1
    for d in shape:
        n *= d
    if not n:
        return None

    def fwd(a):
        with errstate(invalid="ignore", divide="ignore"):
            return a.sum(dtype=a.dtype) / a.dtype.type(a.size)

    def bw(g, a, out):
        return (get_array_module(g).broadcast_to(g / n, shape),)
    return Lowered("MEAN({0})", {"MEAN": fwd}, bw, False, False)


def _mm(consts, metas, out_meta, needs):
    if None in metas[:2]:
        return None
    (sa, da), (sb, db) = metas[:2]
    if len(sa) != 2 or len(sb) != 2 or da != db or not _float(metas[0]):
        return None

    def bw(g, a, b, out):
        return (_mat1_grad(g, b, not a.flags.c_contiguous and _transposed(a))
                if needs[0] else None,
                _mat2_grad(a, g, not b.flags.c_contiguous and _transposed(b))
                if needs[1] else None)

    def g1(g, a, b):
        return _mat1_grad(g, b, not a.flags.c_contiguous and _transposed(a))

    def g2(g, a, b):
        return _mat2_grad(a, g, not b.flags.c_contiguous and _transposed(b))
    return Lowered("MM({0}, {1})", {"MM": mm2d, "G1": g1, "G2": g2}, bw, True, False, None,
                   _need(needs, ("G1({g}, {0}, {1})", "G2({g}, {0}, {1})")))


def _addmm(consts, metas, out_meta, needs):
    if None in metas[:3]:
        return None
    (si, di), (s1, d1), (s2, d2) = metas[:3]
    if consts[3] != 1 or consts[4] != 1 or len(s1) != 2 or len(s2) != 2 or \
            not di == d1 == d2 or not _float(metas[0]):
        return None
    shape_i = si

    def fwd(i, m1, m2):
        out = mm2d(m1, m2)
        out += get_array_module(i).broadcast_to(i, out.shape)
        return out

    def bw(g, i, m1, m2, out):
        gi = None
        if needs[0]:
            gi = sum_to_array(g, shape_i) if g.shape != shape_i else g
        return (gi, _mat1_grad(g, m2, _transposed(m1)) if needs[1] else None,
                _mat2_grad(m1, g, _transposed(m2)) if needs[2] else None)

    def g0(g):
        return sum_to_array(g, shape_i) if g.shape != shape_i else g

    def g1(g, m1, m2):
        return _mat1_grad(g, m2, _transposed(m1))

    def g2(g, m1, m2):
        return _mat2_grad(m1, g, _transposed(m2))
    return Lowered("ADDMM({0}, {1}, {2})", {"ADDMM": fwd, "G0": g0, "G1": g1, "G2": g2}, bw,
                   (1, 2), False, None,
                   _need(needs, ("G0({g})", "G1({g}, {1}, {2})", "G2({g}, {1}, {2})")))


def _t(consts, metas, out_meta, needs):
    if len(metas[0][0]) != 2:
        return None

    def bw(g, a, out):
        return (g.T,)
    return Lowered("{0}.T", {}, bw, False, False, None, ("{g}.T",))


def _clamp(consts, metas, out_meta, needs):
    lo, hi = consts[1], consts[2]
    if not _float(metas[0]) or metas[1:3] != (None, None) or \
            not (lo is None or _number(lo)) or not (hi is None or _number(hi)) or \
            (lo is None and hi is None):
        return None
    xp = get_array_module()
    if hi is None:
        expr, names = "MAX({0}, LO)", {"MAX": xp.maximum, "LO": lo}
    elif lo is None:
        expr, names = "MIN({0}, HI)", {"MIN": xp.minimum, "HI": hi}
    else:
        expr, names = "MIN(MAX({0}, LO), HI)", {"MIN": xp.minimum, "MAX": xp.maximum,
                                                 "LO": lo, "HI": hi}

    def bw(g, a, out):
        return (keep_where(_clamp_keep(a, lo, hi), g), None, None)

    def grad(g, a):
        return keep_where(_clamp_keep(a, lo, hi), g)
    names = dict(names, GRAD=grad)
    for k in ("LO", "HI"):
        if k in names:
            names[k] = _const(names[k], metas[0][1])
    return Lowered(expr, names, bw, True, False, expr[:-1] + ", out={out})",
                   ("GRAD({g}, {0})", None, None))


_TABLE = {"Add": _add, "Sub": _sub, "Mul": _mul, "PowScalar": _pow_scalar, "Relu": _relu,
          "Sum": _sum, "Mean": _mean, "Mm": _mm, "Addmm": _addmm, "T": _t, "Clamp": _clamp}


def lower(cls, consts, metas, out_meta, needs):
    """The array-level form of one recorded step (None: the op runs as recorded)."""
    make = _TABLE.get(cls.__name__)
    if make is None or cls.__module__.split(".")[-2:-1] != ["ops"]:
        return None
    try:
        return make(consts, tuple(metas), out_meta, needs)
    except (TypeError, ValueError, IndexError):
        return None
