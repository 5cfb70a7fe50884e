"""Op-database entries of the shape family: view, permute, cat, stack, split, flip, roll, ..."""
from opdb import OpInfo, make

__all__ = ["OPS"]


def _a(*shape, seed=0):
    def samples(dt):
        return [(make(shape, dt, seed=seed),)]
    return samples


def _two(sa, sb):
    def samples(dt):
        return [(make(sa, dt), make(sb, dt, seed=1))]
    return samples


def _m(dt):
    """A (3, 4) array, a transposed (non-contiguous in the op) one and a size-0 one."""
    return [(make((3, 4), dt),), (make((4, 3), dt, seed=1).T,), (make((0, 4), dt),)]


def _op(name, fn, samples=_m, **kw):
    return OpInfo(name, fn, samples, **kw)


OPS = [
    _op("view", lambda L, x: x.reshape(-1).view(2, -1, 2) if x.numel() else x.view(0, 2, 2)),
    _op("reshape", lambda L, x: x.t().reshape(2, -1)),
    _op("flatten", lambda L, x: L.flatten(x), _a(2, 3, 2)),
    _op("unflatten", lambda L, x: x.unflatten(-1, (2, 2))),
    _op("squeeze_unsqueeze", lambda L, x: x.unsqueeze(1).unsqueeze(-1).squeeze(-1)),
    _op("permute", lambda L, x: x.permute(2, 0, 1), _a(2, 3, 4)),
    _op("transpose_neg", lambda L, x: x.transpose(-1, 0)),
    _op("t", lambda L, x: x.t()),
    _op("mT", lambda L, x: x.mT, _a(2, 3, 4)),
    _op("expand", lambda L, x: x.expand(2, -1, 4), _a(3, 1)),
    _op("broadcast_tensors", lambda L, x, y: L.broadcast_tensors(x, y), _two((3, 1), (2, 1, 4))),
    _op("repeat", lambda L, x: x.repeat(2, 1, 2)),
    _op("tile", lambda L, x: x.tile((2,))),
    _op("repeat_interleave", lambda L, x: x.repeat_interleave(2, dim=-1)),
    _op("cat", lambda L, x, y: L.cat([x, y], -1), _two((2, 3), (2, 1))),
    _op("cat_size0", lambda L, x, y: L.cat([x, y]), _two((0, 3), (2, 3))),
    _op("stack", lambda L, x, y: L.stack([x, y], 1), _two((2, 3), (2, 3))),
    _op("hstack", lambda L, x, y: L.hstack([x, y]), _two((2, 3), (2, 2))),
    _op("vstack", lambda L, x, y: L.vstack([x, y]), _two((3,), (2, 3))),
    _op("dstack", lambda L, x, y: L.dstack([x, y]), _two((2, 3), (2, 3))),
    _op("split", lambda L, x: x.split(3, dim=1)),
    _op("split_sizes", lambda L, x: x.split([1, 2, 1], -1)),
    _op("chunk", lambda L, x: x.chunk(3, 1)),
    _op("unbind", lambda L, x: x.unbind(-1)),
    _op("narrow", lambda L, x: x.narrow(1, 1, 2)),
    _op("select", lambda L, x: x.select(-1, 2)),
    _op("flip", lambda L, x: x.flip(0, -1)),
    _op("fliplr", lambda L, x: L.fliplr(x)),
    _op("roll", lambda L, x: x.roll((1, -1), (0, 1))),
    _op("roll_flat", lambda L, x: x.roll(5)),
    _op("rot90", lambda L, x: x.rot90(1, (1, 0))),
    _op("tril", lambda L, x: x.tril(1)),
    _op("triu", lambda L, x: L.triu(x, -1)),
    _op("movedim", lambda L, x: x.movedim((0, 1), (-1, 0)), _a(2, 3, 4)),
    _op("diag", lambda L, x: L.diag(x, 1)),
    _op("diag_vec", lambda L, x: L.diag(x, -1), _a(3)),
    _op("diagonal", lambda L, x: x.diagonal(-1, 1, 0)),
    _op("diag_embed", lambda L, x: L.diag_embed(x, 1), _a(2, 3)),
    _op("atleast_3d", lambda L, x: L.atleast_3d(x), _a(3)),
    _op("meshgrid", lambda L, x, y: L.meshgrid(x, y, indexing="xy"), _two((2,), (3,))),
    _op("unfold", lambda L, x: x.unfold(1, 2, 2)),
    # conversions (ops/conversion.py): a dtype move, copies
    _op("to_float64", lambda L, x: x.to(L.float64, copy=True) * 2),
    _op("to_same_device", lambda L, x: x.to(x.device, copy=True)),
    _op("clone", lambda L, x: x.t().clone()),
    _op("contiguous", lambda L, x: x.t().contiguous()),
    _op("type_as", lambda L, x: x.type_as(L.ones(1, dtype=L.float64)) + 1),
]
