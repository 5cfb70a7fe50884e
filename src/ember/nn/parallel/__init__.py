"""ember.nn.parallel: DistributedDataParallel (data parallelism over ember.distributed)."""
from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
