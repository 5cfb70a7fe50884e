"""DataLoader: batches from a dataset, in the main process or in worker processes."""
import itertools
import multiprocessing
import os
import queue
import warnings

from ...backend import cuda_status
from ...tensor import Tensor
from . import _worker
from ._collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler, _draw_seed

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

get_worker_info = _worker.get_worker_info


class _InfiniteConstantSampler:
    """Stands in for a sampler over an IterableDataset: yields None forever."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Iterate over a dataset in batches. Matches ``torch.utils.data.DataLoader``.

    Args:
        dataset: a map-style ``Dataset`` or an ``IterableDataset``.
        batch_size: samples per batch (default 1); None disables automatic batching.
        shuffle: reshuffle every epoch (default False).
        sampler: the order of indices (excludes ``shuffle``).
        batch_sampler: yields lists of indices (excludes batch_size, shuffle, sampler,
            drop_last).
        num_workers: worker processes loading batches (0: in the main process).
        collate_fn: merges a list of samples into a batch (default ``default_collate``).
        pin_memory: copy batches into pinned host memory (``Tensor.pin_memory``) when CUDA is
            available; without it torch's warning, and batches as they are.
        drop_last: drop the last incomplete batch (default False).
        timeout: seconds to wait for a batch from the workers (0: no limit).
        worker_init_fn: called as ``worker_init_fn(worker_id)`` in each worker.
        multiprocessing_context: a context or a start method name.
        generator: the random generator for ``shuffle`` and the workers' seeds.
        prefetch_factor: batches loaded in advance by each worker (default 2).
        persistent_workers: keep the worker processes (and their RNG streams) alive between
            epochs instead of starting new ones for each.

    Example:
        >>> import ember
        >>> from ember.utils.data import TensorDataset
        >>> loader = DataLoader(TensorDataset(ember.arange(5)), batch_size=2)
        >>> [b[0].tolist() for b in loader]
        [[0, 1], [2, 3], [4]]
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self._is_iterable = isinstance(dataset, IterableDataset)
        if self._is_iterable:
            if shuffle not in (False, None):
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 "option, but got shuffle=%s" % shuffle)
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 "option, but got sampler=%s" % sampler)
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 "batch_sampler option, but got batch_sampler=%s"
                                 % batch_sampler)
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if self._is_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.prefetch_factor = 2 if prefetch_factor is None and num_workers > 0 \
            else prefetch_factor
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self.persistent_workers = persistent_workers
        self.pin_memory_device = pin_memory_device
        self.in_order = in_order
        self._iterator = None
        self._IterableDataset_len_called = None
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._initialized = True

    def __setattr__(self, attr, val):
        if attr in _FROZEN and self.__dict__.get("_initialized"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        if self._is_iterable:
            n = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)

    def __iter__(self):
        if self.num_workers == 0:
            it = _SingleProcessDataLoaderIter(self)
        elif self.persistent_workers:
            # Like torch, the workers (seeded once) and the iterator live as long as the loader
            it = self._iterator
            if it is None or it._shutdown:
                it = self._iterator = _MultiProcessingDataLoaderIter(self)
            else:
                it._reset(self)
        else:
            it = _MultiProcessingDataLoaderIter(self)
        if self.pin_memory:
            if cuda_status()[0]:
                return _pinned(it)
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.")
        return it


_FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


class _SingleProcessDataLoaderIter:
    """One epoch in the main process. Like torch, making it starts the sampler's iterator (or
    the iterable dataset's) and then draws a base seed (the workers' seeds) from the loader's
    generator, so the global random stream advances at ``iter(loader)`` with or without
    workers."""

    def __init__(self, loader):
        self._loader = loader
        self._index_sampler = loader._index_sampler
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = _draw_seed(loader.generator)
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._num_yielded = 0
        self._dataset_iter = iter(loader.dataset) if loader._is_iterable else None

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._index_sampler)

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        n = self._IterableDataset_len_called
        if self._dataset_iter is not None and n is not None and self._num_yielded > n:
            warnings.warn(f"Length of IterableDataset {self._loader.dataset} was reported to be "
                          f"{n}(when accessing len(dataloader)), but {self._num_yielded} samples "
                          "have been fetched. ", stacklevel=2)
        return data

    def _next_data(self):
        loader = self._loader
        indices = next(self._sampler_iter)
        if self._dataset_iter is not None:
            if not loader._auto_collation:
                return loader.collate_fn(next(self._dataset_iter))
            batch = _worker._fetch_iterable(self._dataset_iter, True, loader.batch_size,
                                            loader.drop_last)
            if batch is None:
                raise StopIteration
            return loader.collate_fn(batch)
        if loader._auto_collation:
            getitems = getattr(loader.dataset, "__getitems__", None)
            samples = getitems(indices) if callable(getitems) \
                else [loader.dataset[i] for i in indices]
            return loader.collate_fn(samples)
        return loader.collate_fn(loader.dataset[indices])


def _pinned(batches):
    for batch in batches:
        yield _pin(batch)


def _pin(data):
    """``data`` with every tensor (also inside lists, tuples and dicts) pinned, as torch's
    ``pin_memory``."""
    if isinstance(data, Tensor):
        return data.pin_memory() if data.device.type == "cpu" else data
    if isinstance(data, dict):
        return type(data)((k, _pin(v)) for k, v in data.items())
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(_pin(v) for v in data))
    if isinstance(data, (list, tuple)):
        return type(data)(_pin(v) for v in data)
    return data


class _MultiProcessingDataLoaderIter:
    """One epoch over worker processes: batches are requested round-robin, returned in order."""

    def __init__(self, loader):
        self._loader = loader
        self._timeout = loader.timeout if loader.timeout > 0 else None
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = multiprocessing.get_context()
        elif isinstance(ctx, str):
            ctx = multiprocessing.get_context(ctx)
        n = loader.num_workers
        base_seed = _draw_seed(loader.generator)
        self._result_queue = ctx.Queue()
        self._index_queues = []
        self._workers = []
        self._shutdown = False
        for worker_id in range(n):
            index_queue = ctx.Queue()
            w = ctx.Process(target=_worker._worker_loop, daemon=True, args=(
                loader.dataset, loader._is_iterable, index_queue, self._result_queue,
                loader.collate_fn, loader._auto_collation, loader.batch_size, loader.drop_last,
                worker_id, n, base_seed + worker_id, loader.worker_init_fn, os.getpid()))
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        """Start an epoch: a fresh sampler pass; persistent workers are told to start over."""
        n = len(self._workers)
        self._persistent = loader.persistent_workers
        self._active = [True] * n
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}      # task id -> worker id, and the data once it has arrived
        self._worker_cycle = itertools.cycle(range(n))
        self._outstanding = 0
        try:
            self._sampler_iter = iter(loader._index_sampler)
            if not first_iter:
                for q in self._index_queues:
                    q.put(_worker._ResumeIteration())
                acks = n
                while acks:       # results left from the last epoch come first: dropped
                    task_id, _ = self._get_result()
                    if isinstance(task_id, _worker._ResumeIteration):
                        acks -= 1
            for _ in range(loader.prefetch_factor * n):
                self._try_put_index()
        except BaseException:
            # a sampler that raises here must not leave the workers (and the exit) waiting
            self._shutdown_workers()
            raise

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._loader)

    def _try_put_index(self):
        try:
            indices = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(len(self._workers)):
            worker_id = next(self._worker_cycle)
            if self._active[worker_id]:
                break
        else:
            return
        self._index_queues[worker_id].put((self._send_idx, indices))
        self._task_info[self._send_idx] = [worker_id]
        self._send_idx += 1
        self._outstanding += 1

    def _get_result(self):
        while True:
            try:
                return self._result_queue.get(timeout=self._timeout or _worker._POLL_S)
            except queue.Empty:
                if self._timeout is not None:
                    self._shutdown_workers()
                    raise RuntimeError("DataLoader timed out after %s seconds" % self._timeout)
                dead = [w.pid for w in self._workers if not w.is_alive()
                        and w.exitcode not in (0, None)]
                if dead:
                    self._shutdown_workers()
                    raise RuntimeError("DataLoader worker (pid(s) %s) exited unexpectedly"
                                       % ", ".join(str(p) for p in dead))

    def __next__(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info[self._rcvd_idx]
                if len(info) == 2 or self._active[info[0]]:
                    break
                del self._task_info[self._rcvd_idx]      # its worker ran out (iterable)
                self._rcvd_idx += 1
            else:
                if not any(self._active) or self._outstanding == 0:
                    self._end_epoch()
            if self._rcvd_idx >= self._send_idx:
                self._end_epoch()
            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                data = info[1]
                if isinstance(data, _worker._IterableDatasetStop):
                    continue
                return self._process(data)
            task_id, data = self._get_result()
            self._outstanding -= 1
            if task_id not in self._task_info:   # skipped: its worker had already run out
                continue
            if isinstance(data, _worker._IterableDatasetStop):
                self._active[data.worker_id] = False
                self._task_info[task_id].append(data)
                continue
            if task_id == self._rcvd_idx:
                del self._task_info[task_id]
                self._rcvd_idx += 1
                return self._process(data)
            self._task_info[task_id].append(data)

    def _end_epoch(self):
        if not self._persistent:
            self._shutdown_workers()
        raise StopIteration

    def _process(self, data):
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            self._shutdown_workers()
            data.reraise()
        return data

    def _shutdown_workers(self):
        if self._shutdown:
            return
        self._shutdown = True
        for q in self._index_queues:
            try:
                q.put(None)
            except (OSError, ValueError):
                pass
        for w in self._workers:
            w.join(timeout=2.0)
            if w.is_alive():
                w.terminate()
                w.join(timeout=1.0)
        for q in self._index_queues + [self._result_queue]:
            q.cancel_join_thread()
            q.close()

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:   # interpreter shutdown: the workers are daemons and exit with it
            pass
