"""Fuzz templates for the creation, sampling and legacy Tensor ops the probe cannot reach:
``empty_permuted``/``empty_strided``/``new_empty_strided`` (a size with a permutation or
strides), ``multinomial`` (probability rows and a sample count), ``randint`` (bounds and a size),
``new_full``, ``resize`` and ``map2_`` (whose callable a literal argument cannot be: ``None``,
so only its checks before the first call are compared)."""
from .ops import Gen  # noqa: F401  (the argument drawer the templates receive)

__all__ = ["TEMPLATES", "HAND"]


def _size(g):
    return g.pick([(2, 3, 4), (0, 3), (), (3,), (1, 2, 2), (2, -1)])


def _empty_permuted(g):
    size = _size(g)
    perm = list(range(len(size)))[::-1] if not g.probe else list(range(len(size)))
    if g.chance(0.5):
        g.r.shuffle(perm)
    if g.chance(0.1):
        perm = perm + [0]                        # too long
    elif g.chance(0.08) and perm:
        perm[0] = perm[-1]                       # not a permutation
    return [list(size), perm], {}


def _strides(g, size):
    contiguous = []
    n = 1
    for d in reversed(size):
        contiguous.insert(0, n)
        n *= max(d, 1)
    pick = g.pick(["c", "c", "t", "zero", "odd", "short", "neg"])
    if pick == "t":
        return contiguous[::-1]
    if pick == "zero":
        return [0] * len(size)
    if pick == "odd":
        return [s * 2 + 1 for s in contiguous]
    if pick == "short" and size:
        return contiguous[1:]
    if pick == "neg" and size:
        return [-1] + contiguous[1:]
    return contiguous


def _empty_strided(g):
    size = _size(g)
    return [list(size), _strides(g, size)], {}


def _new_empty_strided(g):
    size = _size(g)
    return [g.ew(), list(size), _strides(g, size)], {}


def _probs(g):
    shape = (2, 4) if g.probe else g.pick([(4,), (2, 4), (3, 1), (1, 5), (0, 3), (2, 2, 2),
                                          (), (3, 0)])
    dt = g.pick(["float64", "float32"]) if not g.chance(0.1) else g.pick(["int64", "float16"])
    fill = "prob" if not g.chance(0.1) else "u"  # ("u": negative probabilities)
    return g.tensor(shape, fill, dtype=dt, grad=False)


def _multinomial(g):
    p = _probs(g)
    k = 2 if g.probe else g.pick([1, 2, 3, 4, 0, 6, -1])
    kw = {}
    if g.chance(0.5):
        kw["replacement"] = bool(g.chance(0.5))
    return [p, k], kw


def _randint(g):
    size = list(g.pick([(2, 3), (0,), (), (4,), (2, -1)]))
    if g.chance(0.4):
        return [g.pick([5, 1, 0, -3, 2.5]), size], {}
    low = g.pick([0, -2, 3, 5])
    return [low, g.pick([5, 3, 10, 0, 1.5]), size], {}


def _new_full(g):
    return [g.ew(), list(_size(g)), g.scalar()], {}


def _resize(g):
    t = g.ew()
    n = 1
    for d in t[1]:
        n *= d
    options = [[n], [1, n], [n, 1], [n + 1], [], [2, 3], [-1, n]]
    sizes = options[0] if g.probe else options[g.r.integers(len(options))]
    if g.chance(0.3):
        return [t, tuple(sizes)], {}           # one tuple (torch: its own odd arithmetic)
    return [t] + sizes, {}


def _map2(g):
    t = g.ew()
    shape = t[1]
    x = g.tensor(g.broadcast_like(shape) if not g.chance(0.1) else (5,), dtype=t[2],
                 grad=False)
    y = g.tensor(g.broadcast_like(shape), dtype=t[2] if not g.chance(0.1) else "float64",
                 grad=False)
    return [t, x, y, None], {}


TEMPLATES = {
    "arith_empty_permuted": _empty_permuted, "arith_empty_strided": _empty_strided,
    "arith_new_empty_strided": _new_empty_strided, "arith_multinomial": _multinomial,
    "arith_randint": _randint, "arith_new_full": _new_full, "arith_resize": _resize,
    "arith_map2": _map2,
}

HAND = {
    ("torch", "empty_permuted"): ["arith_empty_permuted"],
    ("torch", "empty_strided"): ["arith_empty_strided"],
    ("torch", "multinomial"): ["arith_multinomial"],
    ("Tensor", "multinomial"): ["arith_multinomial"],
    ("torch", "randint"): ["arith_randint"],
    ("Tensor", "new_empty_strided"): ["arith_new_empty_strided"],
    ("Tensor", "new_full"): ["arith_new_full"],
    ("Tensor", "map2_"): ["arith_map2"],
    ("Tensor", "resize"): ["arith_resize"],
}
