"""``torch.multiprocessing``: Python's :mod:`multiprocessing`, plus ``spawn``.

Everything :mod:`multiprocessing` offers is here under the same names (``Process``,
``Queue``, ``set_start_method``, ``cpu_count``, ...). ``spawn(fn, args, nprocs)`` runs
``fn(i, *args)`` in ``nprocs`` fresh processes and re-raises a child's exception in the parent
as :class:`ProcessRaisedException`, as torch does.

A CPU tensor sent to another process through it (a ``Queue``, a ``Pipe``, a spawned
``Process``'s arguments) is moved to shared memory and the receiver maps the same memory, as
torch: a child's in-place updates (Hogwild training) are seen by the parent. A forked child
shares what was in shared memory (``share_memory_()``) before the fork.
"""
import multiprocessing
from multiprocessing import *  # noqa: F401,F403

from .reductions import init_reductions
from .spawn import (ProcessContext, ProcessException, ProcessExitedException,  # noqa: F401
                    ProcessRaisedException, SpawnContext, spawn, start_processes)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies"]
__all__ += multiprocessing.__all__

init_reductions()

_all_sharing_strategies = {"file_descriptor", "file_system"}
_sharing_strategy = ["file_descriptor"]


def set_sharing_strategy(new_strategy):
    """Record the strategy for sharing CPU tensors (ember sends memory-file descriptors
    either way)."""
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError("invalid sharing strategy %r, expected one of %s"
                             % (new_strategy, _all_sharing_strategies))
    _sharing_strategy[0] = new_strategy


def get_sharing_strategy():
    """The current strategy for sharing CPU tensors."""
    return _sharing_strategy[0]


def get_all_sharing_strategies():
    """The strategies this system supports."""
    return set(_all_sharing_strategies)
