"""``torch.functional``: the tensor functions torch defines in Python, as ``torch.*``."""
from ._lowrank import pca_lowrank, svd_lowrank
from .ops import (atleast_1d, atleast_2d, atleast_3d, block_diag, broadcast_shapes,
                  broadcast_tensors, cartesian_prod, cdist, chain_matmul, einsum, istft, lu,
                  meshgrid, norm, split, stft, tensordot, unique, unique_consecutive,
                  unravel_index)

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors",
           "cartesian_prod", "block_diag", "cdist", "chain_matmul", "einsum", "istft", "lu",
           "norm", "meshgrid", "split", "stft", "tensordot", "unique", "unique_consecutive",
           "unravel_index", "pca_lowrank", "svd_lowrank"]
