"""Op-database entries of the nn primitives: pad (ember/ops/padding.py), embedding
(ember/ops/sparse.py) and linear (addmm with a transposed weight)."""
import numpy as np

from opdb import OpInfo, make

__all__ = ["OPS"]


def _a(*shape):
    def samples(dt):
        return [(make(shape, dt),)]
    return samples


def _pad(name, pad, mode, shape):
    return OpInfo(name, lambda L, x: L.nn.functional.pad(x, pad, mode=mode), _a(*shape))


def _embedding(dt):
    idx = np.array([[1, 0, 4], [4, 4, 2]], dtype=np.int64)
    return [(make((5, 3), dt), idx)]


def _linear(dt):
    return [(make((4, 3), dt), make((2, 3), dt, seed=1), make((2,), dt, seed=2)),
            (make((2, 4, 3), dt), make((2, 3), dt, seed=1), make((2,), dt, seed=2))]


OPS = [
    _pad("pad_constant", (1, 2, 0, 1), "constant", (2, 3, 4)),
    _pad("pad_constant_crop", (-1, 2, 1, -1), "constant", (2, 3, 4)),
    _pad("pad_reflect", (2, 1), "reflect", (2, 3, 4)),
    _pad("pad_replicate", (2, 1, 1, 2), "replicate", (1, 2, 3, 4)),
    _pad("pad_circular", (2, 1, 1, 0), "circular", (1, 2, 3, 4)),
    OpInfo("embedding", lambda L, w, idx: L.nn.functional.embedding(idx, w), _embedding),
    # (no finite differences: by design the padding row gets no gradient, as torch's)
    OpInfo("embedding_padding_idx",
           lambda L, w, idx: L.nn.functional.embedding(idx, w, padding_idx=4), _embedding,
           skip_gradcheck=True),
    OpInfo("linear", lambda L, x, w, b: L.nn.functional.linear(x, w, b), _linear),
]
