"""The gradient reducer behind DistributedDataParallel: buckets and nonblocking all-reduces.

Parameters are grouped into buckets (flat host buffers, one dtype each) in reverse order of
registration, roughly the order their gradients become ready in backward. When the last
gradient of a bucket has been accumulated, the bucket's ``MPI_Iallreduce`` starts (buckets
start in index order on every rank, as MPI requires), so communication overlaps the rest of
the backward pass. When every bucket has started, the reducer waits for them and writes the
averaged gradients back into ``.grad``.
"""
from __future__ import annotations

import time
from typing import List, Optional

import numpy as np

from ..autograd.engine import queue_callback
from ..backend import backend_of
from ..tensor import Tensor
from . import distributed_c10d as c10d

__all__ = ["Reducer", "compute_bucket_assignment_by_size", "verify_params_across_processes",
           "sync_tensors"]

_UNUSED_HINT = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by \n"
    "making sure all `forward` function outputs participate in calculating loss. \n"
    "If you already have done the above, then the distributed data parallel module wasn't "
    "able to locate the output tensors in the return value of your module's `forward` "
    "function. Please include the loss function and the structure of the return value of "
    "`forward` of your module when reporting this issue (e.g. list, dict, iterable).\n"
    "Parameter indices which did not receive grad for rank %d: %s")


def compute_bucket_assignment_by_size(tensors: List[Tensor], limits: List[int]) -> List[List[int]]:
    """Indices of ``tensors`` grouped into buckets of one dtype, each closed once it holds at
    least the current limit in bytes (``limits[0]`` for the first bucket of a dtype, then the
    next, the last one repeating), as torch's ``_compute_bucket_assignment_by_size``."""
    open_buckets = {}     # dtype -> (indices, bytes, limit index)
    done = []
    for i, t in enumerate(tensors):
        key = t._array.dtype
        idx, size, li = open_buckets.get(key, ([], 0, 0))
        idx.append(i)
        size += t._array.nbytes
        if size >= limits[min(li, len(limits) - 1)]:
            done.append(idx)
            open_buckets[key] = ([], 0, li + 1)
        else:
            open_buckets[key] = (idx, size, li)
    done.extend(idx for idx, _, _ in open_buckets.values() if idx)
    done.sort(key=min)
    return done


def verify_params_across_processes(pg, params: List[Tensor]) -> None:
    """Every rank holds parameters of the same count, shapes and dtypes (else a clear error)."""
    if pg.size() == 1:
        return
    mine = [(tuple(p.shape), str(p._array.dtype)) for p in params]
    everyone = [None] * pg.size()
    c10d.all_gather_object(everyone, mine, group=pg)
    me = pg.rank()
    for r, theirs in enumerate(everyone):
        if len(theirs) != len(mine):
            raise RuntimeError("DDP expects same model across all ranks, but Rank %d has %d "
                               "params, while rank %d has inconsistent %d params."
                               % (me, len(mine), r, len(theirs)))
    for r, theirs in enumerate(everyone):
        for i, (shape, dtype) in enumerate(theirs):
            if (shape, dtype) != everyone[0][i]:
                raise RuntimeError(
                    "[%d]: params[%d] in process %d with sizes %s (dtype %s) appears not to "
                    "match sizes of the same param in process 0 (%s, dtype %s)."
                    % (me, i, r, list(shape), dtype, list(everyone[0][i][0]),
                       everyone[0][i][1]))


def sync_tensors(pg, tensors: List[Tensor], src: int = 0) -> None:
    """Broadcast ``tensors`` from group rank ``src`` in place (parameters, buffers)."""
    if pg.size() == 1 or not tensors:
        return
    MPI = c10d._mpi()
    bufs = [c10d._Buf(t, read=pg.rank() == src) for t in tensors]
    reqs = [pg._comm.Ibcast([b.bytes(), MPI.BYTE], src) for b in bufs]
    c10d._wait(reqs, pg, "DistributedDataParallel: broadcasting parameters/buffers")
    for b in bufs:
        b.write_back()


class _Bucket:
    __slots__ = ("params", "flat", "pending", "used_at", "req")

    def __init__(self, params):
        self.params = params            # parameter indices, in bucket order
        self.flat = None                # gradients, then (find_unused) one used flag each
        self.used_at = None
        self.pending = len(params)
        self.req = None


class Reducer:
    """Averages the gradients of ``params`` across ``pg`` during backward."""

    def __init__(self, params: List[Tensor], pg, bucket_bytes_cap: int,
                 first_bucket_bytes: int, find_unused_parameters: bool):
        self.params = params
        self.pg = pg
        self.find_unused = find_unused_parameters
        order = list(reversed(range(len(params))))      # last registered: ready first
        groups = compute_bucket_assignment_by_size([params[i] for i in order],
                                                   [first_bucket_bytes, bucket_bytes_cap])
        self.buckets: List[_Bucket] = []
        self.where = [None] * len(params)               # param -> (bucket, offset, numel)
        for g in groups:
            idx = [order[j] for j in g]
            b = _Bucket(idx)
            offset = 0
            for k, i in enumerate(idx):
                n = params[i]._array.size
                self.where[i] = (b, offset, n, k)
                offset += n
            b.used_at = offset if find_unused_parameters else None
            # host: the bucket is MPI's buffer (host memory), flat gradients then used flags
            b.flat = np.zeros(offset + (len(idx) if find_unused_parameters else 0),
                              dtype=params[idx[0]]._array.dtype)
            self.buckets.append(b)
        self.ready = [False] * len(params)
        self.used = [True] * len(params)
        self.armed = False          # prepare_for_backward ran: hooks reduce
        self.queued = False         # the end-of-backward wait is queued (see autograd_hook)
        self.next_bucket = 0
        self.comm_wait_s = 0.0      # time spent waiting for all-reduces (statistics)
        self.reductions = 0

    # --------------------------------------------------------------- per iteration

    def prepare_for_backward(self, unused: Optional[List[int]] = None) -> None:
        """Arm the hooks for the coming backward; ``unused`` parameters count as ready now."""
        if any(self.ready):
            missing = [i for i, r in enumerate(self.ready) if not r]
            raise RuntimeError(_UNUSED_HINT % (self.pg.rank(), " ".join(map(str, missing))))
        for b in self.buckets:
            b.pending = len(b.params)
            b.req = None
        self.next_bucket = 0
        self.used = [True] * len(self.params)
        self.armed = True
        for i in unused or ():
            self.used[i] = False
            self.mark_ready(i)

    def autograd_hook(self, i: int) -> None:
        """Parameter ``i``'s gradient has been accumulated (the first one of a backward also
        queues the wait for the all-reduces at its end, as torch's reducer does)."""
        if self.armed:
            if not self.queued:
                self.queued = True
                queue_callback(self._end_of_backward)
            self.mark_ready(i)

    def _end_of_backward(self):
        self.queued = False
        if self.armed and self.next_bucket == len(self.buckets):
            self._finalize()

    def mark_ready(self, i: int) -> None:
        if self.ready[i]:
            raise RuntimeError(
                "Expected to mark a variable ready only once. This error is caused by one of "
                "the following reasons: 1) Use of a module parameter outside the `forward` "
                "function. 2) Reused parameters in multiple reentrant backward passes. "
                "Parameter index %d was marked ready twice on rank %d." % (i, self.pg.rank()))
        self.ready[i] = True
        b, off, n, k = self.where[i]
        slot = b.flat[off:off + n]
        g = self.params[i]._grad
        if g is None:
            slot[...] = 0
        else:
            arr = g._array
            if type(arr) is not np.ndarray:
                arr = backend_of(arr).to_host(arr)
            # NOTE: divided while copied into the bucket, then summed: torch's default reducer
            np.multiply(arr.reshape(-1), 1.0 / self.pg.size(), out=slot)   # host: MPI buffer
        if b.used_at is not None:
            b.flat[b.used_at + k] = 1 if self.used[i] else 0
        b.pending -= 1
        if b.pending == 0:
            self._launch()
        elif self.next_bucket:
            c10d._mpi().Request.Testall([x.req for x in self.buckets[:self.next_bucket]])

    def _launch(self):
        MPI = c10d._mpi()
        while self.next_bucket < len(self.buckets) and \
                self.buckets[self.next_bucket].pending == 0:
            b = self.buckets[self.next_bucket]
            b.req = self.pg._comm.Iallreduce(MPI.IN_PLACE, b.flat, MPI.SUM)
            self.next_bucket += 1
        if self.next_bucket == len(self.buckets) and not self.queued:
            self._finalize()    # (every bucket was ready outside a backward)

    def _finalize(self):
        start = time.perf_counter()
        c10d._wait([b.req for b in self.buckets], self.pg,
                   "DistributedDataParallel's gradient all-reduce")
        self.comm_wait_s += time.perf_counter() - start
        self.reductions += 1
        for b in self.buckets:
            for k, i in enumerate(b.params):
                p = self.params[i]
                _, off, n, _ = self.where[i]
                if b.used_at is not None and b.flat[b.used_at + k] == 0:
                    continue    # unused on every rank: .grad stays as it was
                values = b.flat[off:off + n].reshape(p._array.shape)
                g = p._grad
                if g is None:
                    p._grad = Tensor._wrap(backend_of(p._array).asarray(values).copy())
                else:
                    g._array[...] = backend_of(g._array).asarray(values)
            b.req = None
        self.ready = [False] * len(self.params)
        self.armed = False
