"""Worker processes of the DataLoader: the loop each runs, and how errors travel back."""
import os
import queue
import random
import sys
import traceback

import numpy as np

__all__ = ["WorkerInfo", "get_worker_info"]

_worker_info = None
_POLL_S = 0.5


class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: ``id``, ``num_workers``, ``seed``,
    ``dataset`` (this worker's copy)."""

    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)

    def __repr__(self):
        return "WorkerInfo(id=%d, num_workers=%d, seed=%d)" % (self.id, self.num_workers,
                                                              self.seed)


def get_worker_info():
    """Inside a DataLoader worker process, its ``WorkerInfo``; in the main process, None."""
    return _worker_info


class KeyErrorMessage(str):
    """A str whose repr is itself, so a re-raised KeyError prints its traceback readably."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception caught in a worker, carried to the main process as its traceback text."""

    def __init__(self, exc_info, where):
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = "Caught %s %s.\nOriginal %s" % (self.exc_type.__name__, self.where, self.exc_msg)
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)   # KeyError's str() is the repr of its argument
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


class _ResumeIteration:
    """Sent to a persistent worker at the start of a new epoch; echoed back once received."""


class _IterableDatasetStop:
    """Sent by a worker whose IterableDataset iterator is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


def _generate_state(base_seed, worker_id):
    """torch's per-worker NumPy seed: numpy's SeedSequence over (worker id, the two 32-bit
    halves of the base seed, 0), four uint32 words (torch spells the same hash out by hand)."""
    entropy = [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32, 0]
    return np.random.SeedSequence(entropy).generate_state(4).tolist()


def _worker_loop(dataset, is_iterable, index_queue, result_queue, collate_fn, auto_collation,
                 batch_size, drop_last, worker_id, num_workers, seed, worker_init_fn,
                 parent_pid):
    """Fetch the batches asked for on ``index_queue`` until told to stop (None)."""
    global _worker_info
    from ...random import manual_seed
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
    manual_seed(seed)
    random.seed(seed)
    np.random.seed(_generate_state(seed - worker_id, worker_id))
    init_error = None
    try:
        if worker_init_fn is not None:
            worker_init_fn(worker_id)
        iterator = iter(dataset) if is_iterable else None
    except Exception:
        init_error = ExceptionWrapper(sys.exc_info(), "in DataLoader worker process %d"
                                      % worker_id)
    exhausted = False
    while True:
        try:
            task = index_queue.get(timeout=_POLL_S)
        except queue.Empty:
            if os.getppid() != parent_pid:   # the main process died: don't linger
                return
            continue
        if task is None:
            return
        if isinstance(task, _ResumeIteration):   # persistent workers: a new epoch begins
            result_queue.put((task, None))
            exhausted = False
            if is_iterable and init_error is None:
                try:
                    iterator = iter(dataset)
                except Exception:
                    init_error = ExceptionWrapper(sys.exc_info(),
                                                  "in DataLoader worker process %d" % worker_id)
            continue
        task_id, indices = task
        if init_error is not None:
            result_queue.put((task_id, init_error))
            init_error = None
            exhausted = True
            continue
        if exhausted:
            result_queue.put((task_id, _IterableDatasetStop(worker_id)))
            continue
        try:
            if is_iterable:
                data = _fetch_iterable(iterator, auto_collation, batch_size, drop_last)
                if data is None:
                    exhausted = True
                    data = _IterableDatasetStop(worker_id)
                else:
                    data = collate_fn(data if auto_collation else data[0])
            elif auto_collation:
                data = collate_fn([dataset[i] for i in indices])
            else:
                data = collate_fn(dataset[indices])
        except Exception:
            data = ExceptionWrapper(sys.exc_info(), "in DataLoader worker process %d"
                                    % worker_id)
        result_queue.put((task_id, data))


def _fetch_iterable(iterator, auto_collation, batch_size, drop_last):
    """The next batch (a list) or sample from ``iterator``; None when it is exhausted."""
    if not auto_collation:
        try:
            return [next(iterator)]
        except StopIteration:
            return None
    batch = []
    for _ in range(batch_size):
        try:
            batch.append(next(iterator))
        except StopIteration:
            break
    if not batch or (drop_last and len(batch) < batch_size):
        return None
    return batch
