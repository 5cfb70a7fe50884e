"""Op-database entries of the view ops added or made views by issue 21: as_strided, adjoint,
unfold (overlapping windows), tensor_split/hsplit (slices), 1-D select/unbind (0-d views)."""
from opdb import OpInfo, make

__all__ = ["OPS"]


def _m(dt):
    return [(make((3, 4), dt),), (make((4, 3), dt, seed=1).T,)]


def _v(dt):
    return [(make((5,), dt),)]


OPS = [
    OpInfo("as_strided", lambda L, x: L.as_strided(x * 1, (2, 2), (1, 2), 1), _m),
    OpInfo("as_strided_overlap", lambda L, x: (x * 1).as_strided((3, 2), (1, 1)), _m),
    OpInfo("adjoint", lambda L, x: x.adjoint(), _m),
    OpInfo("unfold_overlap", lambda L, x: x.unfold(1, 2, 1), _m),
    OpInfo("unfold_dim0", lambda L, x: x.unfold(0, 2, 1), _m),
    OpInfo("tensor_split", lambda L, x: x.tensor_split([1, 3], 1), _m),
    OpInfo("hsplit", lambda L, x: L.hsplit(x, 2), _m),
    OpInfo("split_with_sizes", lambda L, x: x.split_with_sizes([1, 3], 1), _m),
    OpInfo("select_1d", lambda L, x: x.select(0, 2), _v),
    OpInfo("unbind_1d", lambda L, x: L.unbind(x), _v),
]
