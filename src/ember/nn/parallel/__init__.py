"""ember.nn.parallel: DistributedDataParallel (data parallelism over ember.distributed) and
DataParallel."""
from .data_parallel import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel", "DataParallel"]
