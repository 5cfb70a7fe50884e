"""Fuzz templates for strided views, view scatters, splits and scatter/index reductions (merged
into ``ops.TEMPLATES``/``ops.HAND`` at import)."""
import numpy as np

from .ops import Gen  # noqa: F401  (the argument drawer the templates receive)

# (input shape, size, stride, storage_offset): mostly inside the storage, some overlapping
# (stride 0), some past its end (both libraries must raise)
_STRIDED = [((3, 4), (2, 2), (1, 2), None), ((3, 4), (2, 3), (4, 1), 1),
            ((3, 4), (4,), (3,), 0), ((3, 4), (), (), 5), ((2, 3), (3, 2), (1, 3), None),
            ((6,), (2, 2), (0, 1), 2), ((6,), (3,), (2,), None), ((2, 3), (2, 2), (3, 1), 4),
            ((2, 3), (3, 3), (3, 1), None), ((2, 0), (0, 2), (1, 1), None),
            ((3,), (2,), (-1,), None), ((2, 3), (2, 2), (1, 1), 0)]
_REDUCES = ["sum", "prod", "mean", "amax", "amin"]


def _strided_geom(g):
    shape, size, stride, offset = _STRIDED[0] if g.probe else g.pick(_STRIDED)
    return shape, size, stride, offset


def _views_as_strided(g):
    shape, size, stride, offset = _strided_geom(g)
    args = [g.tensor(shape), size, stride]
    if offset is not None:
        args.append(offset)
    return args, {}


def _overlaps(size, stride):
    """Whether distinct elements of the geometry share memory without a zero stride (which
    element torch's copy writes last then depends on its iteration order: not compared)."""
    pos = {0}
    for n, st in zip(size, stride):
        pos = {p + i * st for p in pos for i in range(n)}
    return 0 not in stride and len(pos) < int(np.prod(size))


def _views_as_strided_scatter(g):
    shape, size, stride, offset = _strided_geom(g)
    while _overlaps(size, stride):
        shape, size, stride, offset = g.pick(_STRIDED)
    # NOTE: no gradient for ``input``: torch 2.13's (as_strided_scatter_backward) is the
    # complement of the derivative, which ember does not copy
    a = g.tensor(shape, grad=False)
    src_shape = size if not g.chance(0.1) else (size + (1,))
    args = [a, g.tensor(src_shape, dtype=a[2] if not g.chance(0.1) else None), size, stride]
    if offset is not None:
        args.append(offset)
    return args, {}


def _views_dsplit(g):
    shapes = [(2, 3, 4), (1, 2, 6), (2, 2, 0), (2, 4), (1, 1, 3, 2)]
    shape = shapes[0] if g.probe else g.pick(shapes)
    sections = g.pick([2, [1, 3], 4, 3, [0, 2, 2], (1,), [], 0])
    return [g.tensor(shape), sections], {}


def _views_select_scatter(g):
    shape = (3, 4) if g.probe else g.pick([(3, 4), (2, 3, 2), (3,), (2, 0)])
    nd = len(shape)
    d = g.dim(nd)
    index = g.pick([1, 0, -1, 2, 5])
    src_shape = tuple(s for i, s in enumerate(shape) if i != (d % nd if nd else 0))
    if g.chance(0.1):
        src_shape = src_shape + (1,)
    a = g.tensor(shape)
    return [a, g.tensor(src_shape, dtype=a[2]), d, index], {}


def _views_scatter_reduce(g):
    shape = (3, 4) if g.probe else g.pick([(3, 4), (2, 3), (4,), (2, 2, 2), ()])
    nd = len(shape)
    d = g.dim(nd)
    size = shape[d] if nd and -nd <= d < nd else 1
    ishape = list(shape) if nd else []
    if nd and -nd <= d < nd:
        ishape[d] = g.pick([2, 1, 0, 3])
    index = g.idx(tuple(ishape), size)
    a = g.tensor(shape)
    src = g.tensor(tuple(ishape), dtype=a[2] if not g.chance(0.05) else None)
    kw = {}
    if g.chance(0.5):
        kw["include_self"] = bool(g.chance(0.5))
    return [a, d, index, src, g.pick(_REDUCES[1:] if g.probe else _REDUCES)], kw


def _views_index_reduce(g):
    shape = (3, 4) if g.probe else g.pick([(3, 4), (2, 3), (4,), (2, 2, 2), ()])
    nd = len(shape)
    d = g.dim(nd)
    size = shape[d] if nd and -nd <= d < nd else 1
    n = g.pick([2, 0, 3, 1])
    sshape = list(shape)
    if nd and -nd <= d < nd:
        sshape[d] = n
    index = g.idx((n,), size)
    a = g.tensor(shape)
    src = g.tensor(tuple(sshape), dtype=a[2] if not g.chance(0.05) else None)
    kw = {}
    if g.chance(0.5):
        kw["include_self"] = bool(g.chance(0.5))
    reduce = "prod" if g.probe else g.pick(["prod", "mean", "amax", "amin", "prod", "sum"])
    return [a, d, index, src, reduce], kw


def _views_nonzero_static(g):
    a = g.tensor((3, 4) if g.probe else g.pick([(3, 4), (5,), (), (2, 0), (2, 2, 2)]),
                 fill=g.pick(["u", "x"]), grad=False)
    kw = {"size": g.pick([4, 0, 1, 20, -1])}
    if g.chance(0.5):
        kw["fill_value"] = g.pick([-1, 7, 0])
    return [a], kw


TEMPLATES = {"views_as_strided": _views_as_strided,
             "views_as_strided_scatter": _views_as_strided_scatter,
             "views_dsplit": _views_dsplit, "views_select_scatter": _views_select_scatter,
             "views_scatter_reduce": _views_scatter_reduce,
             "views_index_reduce": _views_index_reduce,
             "views_nonzero_static": _views_nonzero_static}

HAND = {}
for _ns in ("torch", "Tensor"):
    HAND[(_ns, "as_strided")] = ["views_as_strided"]
    HAND[(_ns, "as_strided_")] = ["views_as_strided"]
    HAND[(_ns, "as_strided_scatter")] = ["views_as_strided_scatter"]
    HAND[(_ns, "dsplit")] = ["views_dsplit"]
    HAND[(_ns, "index_reduce")] = ["views_index_reduce"]
    HAND[(_ns, "nonzero_static")] = ["views_nonzero_static"]
    HAND[(_ns, "scatter_reduce")] = ["views_scatter_reduce"]
    HAND[(_ns, "select_scatter")] = ["views_select_scatter"]
HAND[("torch", "as_strided_copy")] = ["views_as_strided"]
HAND[("Tensor", "index_reduce_")] = ["views_index_reduce"]
HAND[("Tensor", "scatter_reduce_")] = ["views_scatter_reduce"]
