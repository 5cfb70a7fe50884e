"""ember.distributed: torch.distributed's API on MPI (mpi4py).

Start ranks with ``python -m ember.distributed.run --nproc-per-node N script.py`` (or plain
``mpiexec -n N python script.py``); in the script, ``init_process_group()`` joins them. The
collectives (``all_reduce``, ``broadcast``, ``all_gather``, ...) work in place on the tensors'
arrays. ``ember.nn.parallel.DistributedDataParallel`` averages gradients during backward and
``ember.utils.data.distributed.DistributedSampler`` splits a dataset between ranks.

Example (run under ``mpiexec -n 2``):
    >>> import ember, ember.distributed as dist              # doctest: +SKIP
    >>> dist.init_process_group("mpi")                       # doctest: +SKIP
    >>> t = ember.tensor([float(dist.get_rank())])           # doctest: +SKIP
    >>> dist.all_reduce(t); t                                # doctest: +SKIP
    tensor([1.])
"""
from .distributed_c10d import *  # noqa: F401,F403
from .distributed_c10d import INSTALL_HINT, __all__ as _c10d_all  # noqa: F401

__all__ = list(_c10d_all)
