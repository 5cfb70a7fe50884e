"""Op-database entries of the indexing and sorting families."""
import numpy as np

from opdb import OpInfo, make

__all__ = ["OPS"]


def _m(dt):
    return [(make((3, 4), dt),), (make((4, 3), dt, seed=1).T,)]


def _op(name, fn, samples=_m, **kw):
    return OpInfo(name, fn, samples, **kw)


def _i(L, a):
    return L.tensor(np.asarray(a, dtype=np.int64))


def _distinct(dt):
    """Values without ties (sorting gradients are only defined up to ties)."""
    return [(np.random.default_rng(0).permutation(12).reshape(3, 4).astype(dt) / 4,)]


OPS = [
    _op("getitem_basic", lambda L, x: x[1:, None, ::2]),
    _op("getitem_int_neg", lambda L, x: x[-1, ..., 1:]),
    _op("getitem_adv", lambda L, x: x[_i(L, [0, 2, 0]), 1:]),
    _op("getitem_adv_pair", lambda L, x: x[_i(L, [[0, 1]]), _i(L, [[3], [1]])]),
    _op("getitem_mask", lambda L, x: x[x > 0]),
    _op("gather", lambda L, x: x.gather(1, _i(L, [[0, 3], [1, 1], [2, 0]]))),
    _op("scatter", lambda L, x, s: x.scatter(0, _i(L, [[2, 0, 1, 0]]), s),
        lambda dt: [(make((3, 4), dt), make((1, 4), dt, seed=1))]),
    _op("scatter_add", lambda L, x, s: x.scatter_add(1, _i(L, [[0, 0], [3, 1], [2, 2]]), s),
        lambda dt: [(make((3, 4), dt), make((3, 2), dt, seed=1))]),
    _op("scatter_reduce_amax", lambda L, x, s: x.scatter_reduce(1, _i(L, [[0, 0], [3, 1],
                                                                         [2, 2]]), s, "amax"),
        lambda dt: [(make((3, 4), dt), make((3, 2), dt, seed=1))]),
    _op("scatter_reduce_mean", lambda L, x, s: x.scatter_reduce(
        0, _i(L, [[1, 1, 0, 2]]), s, "mean", include_self=False),
        lambda dt: [(make((3, 4), dt), make((1, 4), dt, seed=1))]),
    _op("index_select", lambda L, x: x.index_select(-1, _i(L, [3, 0, 3]))),
    _op("index_add", lambda L, x, s: x.index_add(0, _i(L, [2, 2]), s, alpha=2),
        lambda dt: [(make((3, 4), dt), make((2, 4), dt, seed=1))]),
    _op("index_copy", lambda L, x, s: x.index_copy(1, _i(L, [3, 0]), s),
        lambda dt: [(make((3, 4), dt), make((3, 2), dt, seed=1))]),
    _op("index_fill", lambda L, x: x.index_fill(1, _i(L, [1]), 2.0)),
    _op("masked_fill", lambda L, x: x.masked_fill(x < 0, 0.5)),
    _op("masked_select", lambda L, x: x.masked_select(x > 0)),
    _op("masked_scatter", lambda L, x, s: x.masked_scatter(x > 0, s),
        lambda dt: [(make((3, 4), dt), make((12,), dt, seed=1))]),
    _op("take", lambda L, x: x.take(_i(L, [[0, 11], [5, 5]]))),
    _op("take_along_dim", lambda L, x: L.take_along_dim(x, _i(L, [[0], [2], [1]]), 1)),
    _op("put", lambda L, x, s: x.put(_i(L, [1, 7]), s),
        lambda dt: [(make((3, 4), dt), make((2,), dt, seed=1))]),
    _op("sort", lambda L, x: x.sort(dim=0, descending=True), _distinct),
    _op("argsort_values", lambda L, x: x.gather(1, x.argsort(1)), _distinct),
    _op("topk", lambda L, x: x.topk(2, 1), _distinct),
    _op("kthvalue", lambda L, x: x.kthvalue(2, 0, keepdim=True), _distinct),
    _op("msort", lambda L, x: L.msort(x), _distinct),
]
