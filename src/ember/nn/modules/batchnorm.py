"""torch's ``nn.modules.batchnorm`` path: the batch-norm layers (kept in ``normalization``)."""
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, LazyBatchNorm1d,  # noqa: F401
                            LazyBatchNorm2d, LazyBatchNorm3d, SyncBatchNorm, _BatchNorm)
from .normalization import _NormBase  # noqa: F401

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d", "SyncBatchNorm"]
