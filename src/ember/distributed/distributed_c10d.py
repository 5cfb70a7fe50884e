"""torch.distributed's process groups and collectives, on MPI (mpi4py).

Collectives work in place on the tensors' arrays: the MPI buffer is the C-contiguous host array
itself; only a non-contiguous tensor, or one on another device, goes through a host copy that
is written back. Every wait polls nonblocking requests against the group's ``timeout``, so a
rank that never joins a collective gives an error instead of a hang; and, unless
``EMBER_DISTRIBUTED_CHECKS=0``, each collective first compares the operation, root, shape and
dtype across ranks (one small allgather), so mismatched calls raise a clear error.
"""
from __future__ import annotations

import datetime
import enum
import importlib.util
import os
import pickle
import sys
import time
import zlib
from typing import Any, List, Optional

import numpy as np

from ..backend import backend_of
from ..tensor import Tensor

__all__ = [
    "Backend", "ReduceOp", "ProcessGroup", "Work", "group", "GroupMember", "P2POp",
    "default_pg_timeout", "is_available", "is_mpi_available", "is_gloo_available",
    "is_nccl_available", "is_initialized", "is_torchelastic_launched", "init_process_group",
    "destroy_process_group", "get_rank", "get_world_size", "get_backend", "new_group",
    "get_global_rank", "get_group_rank", "get_process_group_ranks", "barrier",
    "monitored_barrier", "all_reduce", "reduce", "broadcast", "all_gather",
    "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor", "gather", "scatter",
    "all_to_all_single", "send", "recv", "isend", "irecv", "batch_isend_irecv",
    "broadcast_object_list", "all_gather_object", "gather_object", "scatter_object_list",
]

INSTALL_HINT = ('ember.distributed needs mpi4py and an MPI library: '
                'pip install "ember[distributed]" (mpi4py and mpich from PyPI)')
default_pg_timeout = datetime.timedelta(minutes=30)
_NOT_INIT = ("Default process group has not been initialized, please make sure to call "
             "init_process_group.")


# --------------------------------------------------------------------------- names


class Backend(str):
    """A backend name (``Backend("mpi") == "mpi"``); every backend runs on MPI in ember."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError("Backend constructor parameter must be string-ish, but got: %s"
                             % type(name))
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            value = name.lower()
        return str.__new__(cls, value)


class ReduceOp:
    """The reduction of ``all_reduce``, ``reduce`` and ``reduce_scatter``."""

    class RedOpType(enum.IntEnum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8

        def __str__(self):
            return "RedOpType." + self.name

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM


def is_available() -> bool:
    """True: the package is always present (``is_mpi_available`` says whether it can run)."""
    return True


def is_mpi_available() -> bool:
    """Whether mpi4py is installed (without starting MPI)."""
    return importlib.util.find_spec("mpi4py") is not None


def is_gloo_available() -> bool:
    return False


def is_nccl_available() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    """Whether the process was started by a torchrun-like launcher (``ember.distributed.run``)."""
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def _mpi():
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError(INSTALL_HINT + " (%s)" % e) from e
    return MPI


# --------------------------------------------------------------------------- groups


class ProcessGroup:
    """A set of ranks with its own MPI communicator."""

    def __init__(self, comm, ranks, timeout, backend):
        self._comm = comm
        self._ranks = list(ranks)        # the global rank of each group rank
        self._timeout = timeout
        self._backend = backend

    def rank(self) -> int:
        return self._comm.Get_rank()

    def size(self) -> int:
        return self._comm.Get_size()

    def name(self) -> str:
        return str(self._backend)

    def __repr__(self):
        return "<ProcessGroup %s ranks=%s>" % (self._backend, self._ranks)


class _State:
    default: Optional[ProcessGroup] = None
    groups: List[ProcessGroup] = []
    prev_hook: Any = None


_state = _State()


class _WorldMeta(type):
    @property
    def WORLD(cls) -> Optional[ProcessGroup]:
        return _state.default


class group(metaclass=_WorldMeta):
    """``group.WORLD``: the default process group (None before ``init_process_group``)."""


class GroupMember(metaclass=_WorldMeta):
    """``GroupMember.WORLD``; ``NON_GROUP_MEMBER``: what ``new_group`` gives ranks outside it."""

    NON_GROUP_MEMBER = -100


def is_initialized() -> bool:
    """Whether the default process group has been initialized."""
    return _state.default is not None


def _backend_name(backend):
    if backend is None:
        return Backend(Backend.MPI)
    if not isinstance(backend, str):
        raise ValueError("Backend constructor parameter must be string-ish, but got: %s"
                         % type(backend))
    name = backend.lower()
    # "cpu:gloo,cuda:nccl" style: every part runs on MPI here
    parts = [p.split(":")[-1] for p in name.split(",")]
    for p in parts:
        if p not in (Backend.MPI, Backend.GLOO, Backend.NCCL):
            raise ValueError("ember.distributed runs every collective on MPI: backend must be "
                             "'mpi' (or 'gloo'/'nccl', which run on MPI too), got %r" % backend)
    return Backend(Backend.MPI)


def _env_int(name):
    v = os.environ.get(name)
    return None if v in (None, "") else int(v)


def init_process_group(backend: Optional[str] = None, init_method: Optional[str] = None,
                       timeout: Optional[datetime.timedelta] = None, world_size: int = -1,
                       rank: int = -1, store: Any = None, group_name: str = "",
                       pg_options: Any = None, device_id: Any = None) -> None:
    """Join the job's default process group (the ranks ``mpiexec`` started).

    ``backend`` may be ``"mpi"`` (default), ``"gloo"`` or ``"nccl"``: all run on MPI.
    ``init_method`` and ``store`` are accepted and unused (MPI does the rendezvous).
    ``world_size``/``rank`` (or the ``WORLD_SIZE``/``RANK`` environment variables) must agree
    with MPI's. ``timeout`` bounds every wait (default 30 minutes, as torch).
    """
    if _state.default is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = _backend_name(backend)
    if timeout is None:
        timeout = default_pg_timeout
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError("Expected timeout argument to be of typedatetime.timedelta")
    MPI = _mpi()
    world = MPI.COMM_WORLD
    size, me = world.Get_size(), world.Get_rank()
    want_size = world_size if world_size != -1 else _env_int("WORLD_SIZE")
    want_rank = rank if rank != -1 else _env_int("RANK")
    hint = ("start the job with `mpiexec -n N python script.py` or `python -m "
            "ember.distributed.run --nproc-per-node N script.py`")
    if want_size is not None and want_size != size:
        raise ValueError("world_size is %d but MPI started %d process(es): %s"
                         % (want_size, size, hint))
    if want_rank is not None and want_rank != me:
        raise ValueError("rank is %d but this process is MPI rank %d: %s"
                         % (want_rank, me, hint))
    comm = world.Dup()
    _state.default = ProcessGroup(comm, range(size), timeout, name)
    _state.groups = [_state.default]
    if size > 1:
        _install_excepthook()


def _install_excepthook():
    """An uncaught exception on one rank prints its traceback and ends the whole job."""
    if _state.prev_hook is not None:
        return
    prev = _state.prev_hook = sys.excepthook

    def abort_job(tp, value, tb):
        try:
            MPI = _mpi()
            sys.stdout.flush()
            if prev is sys.__excepthook__:    # (one write: the report reaches mpiexec whole)
                import traceback
                sys.stderr.write("[rank %d] uncaught %s: aborting the job\n%s"
                                 % (MPI.COMM_WORLD.Get_rank(), tp.__name__,
                                    "".join(traceback.format_exception(tp, value, tb))))
            else:
                sys.stderr.write("[rank %d] uncaught %s: aborting the job\n"
                                 % (MPI.COMM_WORLD.Get_rank(), tp.__name__))
                prev(tp, value, tb)
            sys.stderr.flush()
            time.sleep(0.5)     # (mpiexec forwards the rank's output before the abort ends it)
        finally:
            _mpi().COMM_WORLD.Abort(1)
    sys.excepthook = abort_job


def _default():
    if _state.default is None:
        raise ValueError(_NOT_INIT)
    return _state.default


def _group(g, op_name=None):
    """The group to run on, or None (with torch's warning) when this rank is not in it."""
    if g is None:
        return _default()
    if g is GroupMember.NON_GROUP_MEMBER or (isinstance(g, int) and g == -100):
        if op_name is not None:
            import warnings
            warnings.warn("Running %s on global rank %d which does not belong to the given "
                          "group." % (op_name, _default().rank()), stacklevel=3)
        return None
    _default()
    return g


def destroy_process_group(group: Optional[ProcessGroup] = None) -> None:
    """Free ``group`` (default: every group, ending the default one)."""
    if group is None or group is _state.default:
        if _state.default is None:
            raise AssertionError("Process group cannot be None")
        for pg in _state.groups:
            pg._comm.Free()
        _state.groups = []
        _state.default = None
        if _state.prev_hook is not None:
            sys.excepthook = _state.prev_hook
            _state.prev_hook = None
        return
    if isinstance(group, int):
        return
    if group in _state.groups:
        _state.groups.remove(group)
        group._comm.Free()


def get_rank(group: Optional[ProcessGroup] = None) -> int:
    """This process's rank in ``group`` (default: the world); -1 when not in it."""
    pg = _group(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group: Optional[ProcessGroup] = None) -> int:
    """The number of ranks in ``group`` (default: the world); -1 when not in it."""
    pg = _group(group)
    return -1 if pg is None else pg.size()


def get_backend(group: Optional[ProcessGroup] = None) -> Backend:
    """The backend of ``group``: ``"mpi"``."""
    pg = _group(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return pg._backend


def get_process_group_ranks(group: ProcessGroup) -> List[int]:
    """The global ranks of ``group``'s members, in group-rank order."""
    return list(_group(group)._ranks)


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:
    pg = _group(group)
    if not 0 <= group_rank < len(pg._ranks):
        raise ValueError("Group rank %d is not part of group %s" % (group_rank, pg))
    return pg._ranks[group_rank]


def get_group_rank(group: ProcessGroup, global_rank: int) -> int:
    pg = _group(group)
    if global_rank not in pg._ranks:
        raise ValueError("Global rank %d is not part of group %s" % (global_rank, pg))
    return pg._ranks.index(global_rank)


def _root(pg, global_rank, group_rank):
    if group_rank is not None:
        if global_rank is not None:
            raise ValueError("Can't specify both group_rank and global_rank")
        if not 0 <= group_rank < pg.size():
            raise ValueError("Group rank %d is not part of group %s" % (group_rank, pg))
        return group_rank
    if global_rank is None:
        raise ValueError("Must specify global_rank or group_rank")
    return get_group_rank(pg, global_rank)


def new_group(ranks: Optional[List[int]] = None, timeout: Optional[datetime.timedelta] = None,
              backend: Optional[str] = None, pg_options: Any = None,
              use_local_synchronization: bool = False, group_desc: Optional[str] = None,
              device_id: Any = None, sort_ranks: bool = True):
    """A group of the given global ranks; every rank of the world must call it.

    Ranks outside the group get ``GroupMember.NON_GROUP_MEMBER``.
    """
    world = _default()
    name = _backend_name(backend)
    ranks = list(range(world.size())) if ranks is None else list(ranks)
    if sort_ranks:
        ranks = sorted(ranks)
    for r in ranks:
        if not 0 <= r < world.size():
            raise ValueError("The new group's rank should be within the world_size set by "
                             "init_process_group")
    if len(set(ranks)) != len(ranks):
        raise ValueError("ranks must be unique, got %s" % ranks)
    mpi_group = world._comm.Get_group().Incl(ranks)
    comm = world._comm.Create(mpi_group)
    mpi_group.Free()
    if comm == _mpi().COMM_NULL:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(comm, ranks, timeout or world._timeout, name)
    _state.groups.append(pg)
    return pg


# --------------------------------------------------------------------------- buffers and waits


def _check_tensor(t, name="tensor"):
    if not isinstance(t, Tensor):
        raise TypeError("Invalid function argument. Expected parameter `%s` of type "
                        "torch.Tensor\n             but got %s instead." % (name, type(t)))


def _check_list(ts, name):
    if not isinstance(ts, list):
        raise TypeError("Invalid function argument. Expected parameter `%s` of type "
                        "List[torch.Tensor]\n             but got %s instead." % (name, type(ts)))
    for t in ts:
        _check_tensor(t, name)


class _Buf:
    """A tensor's data as a C-contiguous host array (the array itself when it already is)."""

    __slots__ = ("arr", "host", "copied")

    def __init__(self, t, read=True):
        arr = t._array
        self.arr = arr
        if type(arr) is np.ndarray and arr.flags.c_contiguous:
            self.host, self.copied = arr, False
        else:
            host = backend_of(arr).to_host(arr)
            # host: MPI reads and writes host memory; a strided view goes through a copy
            self.host = np.ascontiguousarray(host) if read else np.empty(arr.shape, arr.dtype)
            if self.host is host and host is not arr:
                self.host = host.copy()
            self.copied = True

    def write_back(self):
        if self.copied:
            self.arr[...] = backend_of(self.arr).asarray(self.host)

    def bytes(self):
        return self.host.reshape(-1).view(np.uint8)


def _bytes(a):
    return a.reshape(-1).view(np.uint8)


def _timeout_s(pg, timeout=None):
    t = pg._timeout if timeout is None else timeout
    return t.total_seconds() if isinstance(t, datetime.timedelta) else float(t)


def _wait(reqs, pg, what, timeout=None, statuses=None):
    """Wait for MPI requests, polling (MPI progresses inside ``Test``) until the deadline."""
    MPI = _mpi()
    if MPI.Request.Testall(reqs, statuses):
        return
    limit = _timeout_s(pg, timeout)
    start = time.monotonic()
    spins = 0
    while not MPI.Request.Testall(reqs, statuses):
        spins += 1
        if spins & 63:
            continue
        now = time.monotonic() - start
        if now > limit:
            raise RuntimeError(
                "ember.distributed: %s timed out after %s on rank %d: another rank never joined "
                "it (it raised, skipped this call or is running a different collective)"
                % (what, datetime.timedelta(seconds=limit), _mpi().COMM_WORLD.Get_rank()))
        if now > 0.02:      # past the first 20 ms: poll gently
            time.sleep(min(1e-3, 1e-6 * (spins >> 6)))


class Work:
    """A running collective or point-to-point operation (``async_op=True``)."""

    def __init__(self, reqs, pg, what, finish=None, result=None):
        self._reqs = reqs
        self._pg = pg
        self._what = what
        self._finish = finish
        self._result = result
        self._done = False
        self._source = None
        self._statuses = None

    def _complete(self):
        self._done = True
        if self._finish is not None:
            fin, self._finish = self._finish, None
            out = fin()
            if out is not None:
                self._source = out

    def wait(self, timeout: Optional[datetime.timedelta] = None) -> bool:
        """Block until the operation is done (or raise after the group's timeout)."""
        if not self._done:
            _wait(self._reqs, self._pg, self._what, timeout, self._statuses)
            self._complete()
        return True

    def is_completed(self) -> bool:
        if not self._done and _mpi().Request.Testall(self._reqs, self._statuses):
            self._complete()
        return self._done

    def is_success(self) -> bool:
        return self.is_completed()

    def exception(self):
        return None

    def result(self) -> List[Tensor]:
        self.wait()
        return list(self._result or [])

    def source_rank(self) -> int:
        self.wait()
        if self._source is None:
            raise RuntimeError("source_rank() is only available for a recv from any source")
        return self._source


def _run(pg, what, reqs, finish, async_op, result=None):
    work = Work(reqs, pg, what, finish, result)
    if async_op:
        return work
    work.wait()
    return None


# --------------------------------------------------------------------------- agreement check

_OPS = {n: i for i, n in enumerate((
    "all_reduce", "reduce", "broadcast", "all_gather", "all_gather_into_tensor",
    "reduce_scatter", "reduce_scatter_tensor", "gather", "scatter", "barrier", "all_to_all_single",
    "object"))}


def _checks_on():
    return os.environ.get("EMBER_DISTRIBUTED_CHECKS", "1") not in ("0", "false", "off")


def _agree(pg, what, shape, dtype, root=-1, extra=0):
    """All ranks of ``pg`` call the same collective with the same root, shape and dtype."""
    if pg.size() == 1 or not _checks_on():
        return
    desc = "%s(shape=%s, dtype=%s%s)" % (what, tuple(shape), dtype,
                                         "" if root < 0 else ", root=%d" % root)
    fp = np.array([_OPS[what], root, extra, zlib.crc32(repr((tuple(shape), str(dtype)))
                                                       .encode())], dtype=np.int64)
    everyone = np.empty((pg.size(), fp.size), dtype=np.int64)
    _wait([pg._comm.Iallgather(fp, everyone)], pg, desc)
    if (everyone == fp).all():
        return
    raw = pickle.dumps(desc)
    sizes = np.empty(pg.size(), dtype=np.int64)
    _wait([pg._comm.Iallgather(np.array([len(raw)], dtype=np.int64), sizes)], pg, desc)
    out = np.empty(int(sizes.sum()), dtype=np.uint8)
    displs = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    _wait([pg._comm.Iallgatherv(np.frombuffer(raw, dtype=np.uint8),
                                [out, (sizes, displs), _mpi().BYTE])], pg, desc)
    descs = [pickle.loads(out[d:d + s].tobytes()) for d, s in zip(displs, sizes)]
    lines = "\n".join("  rank %d: %s" % (pg._ranks[i], d) for i, d in enumerate(descs))
    raise RuntimeError("ember.distributed: mismatched collectives across ranks (every rank "
                       "must call the same collective with the same shape and dtype):\n" + lines)


# --------------------------------------------------------------------------- reductions

_FLOATS = "fc"


def _reduce_spec(MPI, host, op, name):
    """(MPI buffer, MPI op, needs division by the group size) for reducing ``host`` by op."""
    op = ReduceOp.RedOpType(int(op))
    kind = host.dtype.kind
    if kind == "b":
        if op == ReduceOp.AVG:
            raise ValueError("Cannot use ReduceOp.AVG with boolean inputs")
        mop = {ReduceOp.SUM: MPI.MAX, ReduceOp.PRODUCT: MPI.MIN, ReduceOp.MIN: MPI.MIN,
               ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND, ReduceOp.BOR: MPI.BOR,
               ReduceOp.BXOR: MPI.BXOR}.get(op)
        if mop is None:
            raise ValueError("ReduceOp.%s is not supported by %s" % (op.name, name))
        return host.view(np.uint8), mop, False
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and kind not in "iu":
        raise ValueError("Cannot use ReduceOp.%s with %s inputs" % (op.name, host.dtype))
    if op in (ReduceOp.MIN, ReduceOp.MAX) and kind == "c":
        raise ValueError("Cannot use ReduceOp.%s with complex inputs" % op.name)
    if op == ReduceOp.AVG and kind not in _FLOATS:
        raise ValueError("Cannot use ReduceOp.AVG with %s inputs: it needs a floating point "
                         "or complex tensor" % host.dtype)
    if op == ReduceOp.PREMUL_SUM:
        raise ValueError("ReduceOp.PREMUL_SUM is not supported by the MPI backend")
    mop = {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
           ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND,
           ReduceOp.BOR: MPI.BOR, ReduceOp.BXOR: MPI.BXOR}[op]
    return host, mop, op == ReduceOp.AVG


def all_reduce(tensor: Tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce ``tensor`` across the group in place; every rank gets the result."""
    _check_tensor(tensor)
    pg = _group(group, "all_reduce")
    if pg is None:
        return None
    MPI = _mpi()
    buf = _Buf(tensor)
    mbuf, mop, avg = _reduce_spec(MPI, buf.host, op, "all_reduce")
    _agree(pg, "all_reduce", buf.host.shape, buf.host.dtype, extra=int(op))
    req = pg._comm.Iallreduce(MPI.IN_PLACE, mbuf, mop)

    def finish():
        if avg:
            buf.host /= pg.size()
        buf.write_back()
    return _run(pg, "all_reduce", [req], finish, async_op, [tensor])


def reduce(tensor: Tensor, dst: Optional[int] = None, op=ReduceOp.SUM, group=None,
           async_op: bool = False, group_dst: Optional[int] = None):
    """Reduce ``tensor`` across the group into rank ``dst``'s tensor (others are unchanged)."""
    _check_tensor(tensor)
    pg = _group(group, "reduce")
    if pg is None:
        return None
    root = _root(pg, dst, group_dst)
    MPI = _mpi()
    buf = _Buf(tensor)
    mbuf, mop, avg = _reduce_spec(MPI, buf.host, op, "reduce")
    _agree(pg, "reduce", buf.host.shape, buf.host.dtype, root, int(op))
    mine = pg.rank() == root
    if mine:
        req = pg._comm.Ireduce(MPI.IN_PLACE, mbuf, mop, root)
    else:
        req = pg._comm.Ireduce(mbuf, None, mop, root)

    def finish():
        if mine:
            if avg:
                buf.host /= pg.size()
            buf.write_back()
    return _run(pg, "reduce", [req], finish, async_op, [tensor])


def reduce_scatter_tensor(output: Tensor, input: Tensor, op=ReduceOp.SUM, group=None,
                          async_op: bool = False):
    """Reduce ``input`` across ranks and give rank i the i-th equal chunk, in ``output``."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    pg = _group(group, "reduce_scatter_tensor")
    if pg is None:
        return None
    if input.numel() != output.numel() * pg.size():
        raise ValueError("input tensor must be the same size as output size times world size")
    if input.dtype != output.dtype:
        raise ValueError("input tensor must be the same type as the output tensor.")
    MPI = _mpi()
    ib, ob = _Buf(input), _Buf(output, read=False)
    send, mop, avg = _reduce_spec(MPI, ib.host, op, "reduce_scatter_tensor")
    recv = _reduce_spec(MPI, ob.host, op, "reduce_scatter_tensor")[0]
    _agree(pg, "reduce_scatter_tensor", ib.host.shape, ib.host.dtype, extra=int(op))
    req = pg._comm.Ireduce_scatter_block(send, recv, mop)

    def finish():
        if avg:
            ob.host /= pg.size()
        ob.write_back()
    return _run(pg, "reduce_scatter_tensor", [req], finish, async_op, [output])


def reduce_scatter(output: Tensor, input_list: List[Tensor], op=ReduceOp.SUM, group=None,
                   async_op: bool = False):
    """Reduce ``input_list[i]`` across ranks into rank i's ``output``."""
    _check_tensor(output, "output")
    _check_list(input_list, "input_list")
    pg = _group(group, "reduce_scatter")
    if pg is None:
        return None
    if len(input_list) != pg.size():
        raise ValueError("reduce_scatter needs one input tensor per rank (%d), got %d"
                         % (pg.size(), len(input_list)))
    joined = np.concatenate([_Buf(t).host.reshape(-1) for t in input_list])
    counts = [t.numel() for t in input_list]
    if counts[pg.rank()] != output.numel():
        raise ValueError("output must have as many elements as input_list[rank]")
    MPI = _mpi()
    ob = _Buf(output, read=False)
    send, mop, avg = _reduce_spec(MPI, joined, op, "reduce_scatter")
    recv = _reduce_spec(MPI, ob.host, op, "reduce_scatter")[0]
    _agree(pg, "reduce_scatter", (len(joined),) + tuple(counts), joined.dtype, extra=int(op))
    req = pg._comm.Ireduce_scatter(send, recv, counts, mop)

    def finish():
        if avg:
            ob.host /= pg.size()
        ob.write_back()
    return _run(pg, "reduce_scatter", [req], finish, async_op, [output])


# --------------------------------------------------------------------------- data movement


def broadcast(tensor: Tensor, src: Optional[int] = None, group=None, async_op: bool = False,
              group_src: Optional[int] = None):
    """Copy rank ``src``'s tensor into every rank's ``tensor``, in place."""
    _check_tensor(tensor)
    pg = _group(group, "broadcast")
    if pg is None:
        return None
    root = _root(pg, src, group_src)
    buf = _Buf(tensor, read=pg.rank() == root)
    _agree(pg, "broadcast", buf.host.shape, buf.host.dtype, root)
    req = pg._comm.Ibcast([buf.bytes(), _mpi().BYTE], root)
    return _run(pg, "broadcast", [req], buf.write_back, async_op, [tensor])


def _counts(sizes):
    counts = np.asarray(sizes, dtype=np.int64)
    displs = np.zeros_like(counts)
    np.cumsum(counts[:-1], out=displs[1:])
    return counts, displs


def _unpack(flat, tensors, counts, displs):
    for t, n, d in zip(tensors, counts, displs):
        piece = flat[d:d + n].view(t._array.dtype).reshape(t._array.shape)
        t._array[...] = backend_of(t._array).asarray(piece)


def all_gather(tensor_list: List[Tensor], tensor: Tensor, group=None, async_op: bool = False):
    """Every rank's ``tensor`` into ``tensor_list`` (one entry per rank)."""
    _check_list(tensor_list, "tensor_list")
    _check_tensor(tensor)
    pg = _group(group, "all_gather")
    if pg is None:
        return None
    if len(tensor_list) != pg.size():
        raise ValueError("all_gather needs a tensor_list of %d tensors (one per rank), got %d"
                         % (pg.size(), len(tensor_list)))
    for t in tensor_list:
        if t.dtype != tensor.dtype:
            raise ValueError("Invalid usage of tensors with different dtypes Found %s and  %s"
                             % (t.dtype, tensor.dtype))
    buf = _Buf(tensor)
    counts, displs = _counts([t._array.nbytes for t in tensor_list])
    if counts[pg.rank()] != buf.host.nbytes:
        raise ValueError("tensor_list[%d] must have the shape of tensor" % pg.rank())
    _agree(pg, "all_gather", buf.host.shape, buf.host.dtype)
    flat = np.empty(int(counts.sum()), dtype=np.uint8)
    req = pg._comm.Iallgatherv(buf.bytes(), [flat, (counts, displs), _mpi().BYTE])
    return _run(pg, "all_gather", [req], lambda: _unpack(flat, tensor_list, counts, displs),
                async_op, tensor_list)


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group=None,
                           async_op: bool = False):
    """Every rank's ``input_tensor`` concatenated (or stacked) into ``output_tensor``."""
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    pg = _group(group, "all_gather_into_tensor")
    if pg is None:
        return None
    if output_tensor.numel() != input_tensor.numel() * pg.size():
        raise ValueError("output tensor size must be equal to world_size times input tensor "
                         "size")
    if output_tensor.dtype != input_tensor.dtype:
        raise ValueError("output tensor must have the same type as input tensor")
    ib, ob = _Buf(input_tensor), _Buf(output_tensor, read=False)
    _agree(pg, "all_gather_into_tensor", ib.host.shape, ib.host.dtype)
    req = pg._comm.Iallgather(ib.bytes(), [ob.bytes(), _mpi().BYTE])
    return _run(pg, "all_gather_into_tensor", [req], ob.write_back, async_op, [output_tensor])


def gather(tensor: Tensor, gather_list: Optional[List[Tensor]] = None, dst: Optional[int] = None,
           group=None, async_op: bool = False, group_dst: Optional[int] = None):
    """Every rank's ``tensor`` into ``gather_list`` on rank ``dst``."""
    _check_tensor(tensor)
    pg = _group(group, "gather")
    if pg is None:
        return None
    if dst is None and group_dst is None:
        dst = 0
    root = _root(pg, dst, group_dst)
    mine = pg.rank() == root
    if mine:
        if not gather_list:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        _check_list(gather_list, "gather_list")
        if len(gather_list) != pg.size():
            raise ValueError("gather_list must hold one tensor per rank (%d), got %d"
                             % (pg.size(), len(gather_list)))
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination "
                         "ranks.")
    buf = _Buf(tensor)
    _agree(pg, "gather", buf.host.shape, buf.host.dtype, root)
    if mine:
        counts, displs = _counts([t._array.nbytes for t in gather_list])
        flat = np.empty(int(counts.sum()), dtype=np.uint8)
        req = pg._comm.Igatherv(buf.bytes(), [flat, (counts, displs), _mpi().BYTE], root)
        finish = lambda: _unpack(flat, gather_list, counts, displs)     # noqa: E731
    else:
        req = pg._comm.Igatherv(buf.bytes(), None, root)
        finish = None
    return _run(pg, "gather", [req], finish, async_op, gather_list)


def scatter(tensor: Tensor, scatter_list: Optional[List[Tensor]] = None,
            src: Optional[int] = None, group=None, async_op: bool = False,
            group_src: Optional[int] = None):
    """Rank ``src``'s ``scatter_list[i]`` into rank i's ``tensor``."""
    _check_tensor(tensor)
    pg = _group(group, "scatter")
    if pg is None:
        return None
    if src is None and group_src is None:
        src = 0
    root = _root(pg, src, group_src)
    mine = pg.rank() == root
    if mine:
        if not scatter_list:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        _check_list(scatter_list, "scatter_list")
        if len(scatter_list) != pg.size():
            raise ValueError("scatter_list must hold one tensor per rank (%d), got %d"
                             % (pg.size(), len(scatter_list)))
    elif scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    buf = _Buf(tensor, read=False)
    _agree(pg, "scatter", buf.host.shape, buf.host.dtype, root)
    if mine:
        flat = np.concatenate([_bytes(_Buf(t).host) for t in scatter_list])
        counts, displs = _counts([t._array.nbytes for t in scatter_list])
        req = pg._comm.Iscatterv([flat, (counts, displs), _mpi().BYTE], buf.bytes(), root)
    else:
        req = pg._comm.Iscatterv(None, buf.bytes(), root)
    return _run(pg, "scatter", [req], buf.write_back, async_op, [tensor])


def all_to_all_single(output: Tensor, input: Tensor, output_split_sizes=None,
                      input_split_sizes=None, group=None, async_op: bool = False):
    """Split ``input`` along dim 0, send piece i to rank i, concatenate what arrives."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    pg = _group(group, "all_to_all_single")
    if pg is None:
        return None
    n = pg.size()

    def rows_bytes(t, splits):
        row = t._array.nbytes // max(t.shape[0], 1) if t.dim() else t._array.nbytes
        if splits is None:
            if t.shape[0] % n:
                raise ValueError("dim 0 of the tensor must be divisible by the world size")
            splits = [t.shape[0] // n] * n
        return [int(s) * row for s in splits]
    ib, ob = _Buf(input), _Buf(output, read=False)
    sc, sd = _counts(rows_bytes(input, input_split_sizes))
    rc, rd = _counts(rows_bytes(output, output_split_sizes))
    _agree(pg, "all_to_all_single", (), ib.host.dtype)
    req = pg._comm.Ialltoallv([ib.bytes(), (sc, sd), _mpi().BYTE],
                              [ob.bytes(), (rc, rd), _mpi().BYTE])
    return _run(pg, "all_to_all_single", [req], ob.write_back, async_op, [output])


def barrier(group=None, async_op: bool = False, device_ids=None,
            timeout: Optional[datetime.timedelta] = None):
    """Wait until every rank of the group reaches the barrier."""
    pg = _group(group, "barrier")
    if pg is None:
        return None
    req = pg._comm.Ibarrier()
    work = Work([req], pg, "barrier")
    if async_op:
        return work
    work.wait(timeout)
    return None


def monitored_barrier(group=None, timeout: Optional[datetime.timedelta] = None,
                      wait_all_ranks: bool = False):
    """A barrier that raises after ``timeout`` (default: the group's) instead of waiting."""
    return barrier(group, timeout=timeout)


# --------------------------------------------------------------------------- point to point


def _peer(pg, rank, group_rank, self_type):
    peer = _root(pg, rank, group_rank)
    if peer == pg.rank():
        raise ValueError("Invalid %s rank: %s rank should not be the same as the rank of the "
                         "current process." % (self_type, self_type))
    return peer


def isend(tensor: Tensor, dst: Optional[int] = None, group=None, tag: int = 0,
          group_dst: Optional[int] = None):
    """Start sending ``tensor`` to rank ``dst``; returns a Work."""
    _check_tensor(tensor)
    pg = _group(group, "isend")
    if pg is None:
        return None
    peer = _peer(pg, dst, group_dst, "destination")
    buf = _Buf(tensor)
    req = pg._comm.Isend([buf.bytes(), _mpi().BYTE], peer, tag)
    return Work([req], pg, "send to rank %s" % pg._ranks[peer], None, [tensor])


def irecv(tensor: Tensor, src: Optional[int] = None, group=None, tag: int = 0,
          group_src: Optional[int] = None):
    """Start receiving into ``tensor`` from rank ``src`` (None: any rank); returns a Work."""
    _check_tensor(tensor)
    pg = _group(group, "irecv")
    if pg is None:
        return None
    MPI = _mpi()
    peer = MPI.ANY_SOURCE if src is None and group_src is None else \
        _peer(pg, src, group_src, "source")
    buf = _Buf(tensor, read=False)
    status = MPI.Status()
    req = pg._comm.Irecv([buf.bytes(), MPI.BYTE], peer, tag)
    work = Work([req], pg, "recv", None, [tensor])
    work._statuses = [status]

    def finish():
        got = status.Get_count(MPI.BYTE)
        if got != buf.host.nbytes:
            raise RuntimeError("recv: the tensor has %d bytes but rank %d sent %d (shapes or "
                               "dtypes differ between send and recv)"
                               % (buf.host.nbytes, pg._ranks[status.Get_source()], got))
        buf.write_back()
        return pg._ranks[status.Get_source()]
    work._finish = finish
    return work


def send(tensor: Tensor, dst: Optional[int] = None, group=None, tag: int = 0,
         group_dst: Optional[int] = None) -> None:
    """Send ``tensor`` to rank ``dst`` (returns when the buffer may be reused)."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor: Tensor, src: Optional[int] = None, group=None, tag: int = 0,
         group_src: Optional[int] = None) -> int:
    """Receive into ``tensor`` from rank ``src`` (None: any rank); returns the sender's rank."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return work._source


class P2POp:
    """One send or receive for ``batch_isend_irecv``: ``P2POp(dist.isend, tensor, peer)``."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed."
                             "isend`` or ``torch.distributed.irecv``.")
        self.op, self.tensor, self.peer, self.group, self.tag = op, tensor, peer, group, tag
        self.group_peer = group_peer


def batch_isend_irecv(p2p_op_list: List[P2POp]) -> List[Work]:
    """Start every operation of the list; returns their Works."""
    if not p2p_op_list or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    return [p.op(p.tensor, p.peer, p.group, p.tag, p.group_peer) for p in p2p_op_list]


# --------------------------------------------------------------------------- Python objects


def _pickled(obj):
    return np.frombuffer(pickle.dumps(obj), dtype=np.uint8)


def _loads(a):
    return pickle.loads(a.tobytes())


def _gather_bytes(pg, raw, root=None):
    """Every rank's byte string (all ranks, or only ``root``): list of arrays, or None."""
    sizes = np.empty(pg.size(), dtype=np.int64)
    mine = np.array([raw.size], dtype=np.int64)
    what = "object collective"
    _agree(pg, "object", (), "object", -1 if root is None else root)
    if root is None:
        _wait([pg._comm.Iallgather(mine, sizes)], pg, what)
    else:
        _wait([pg._comm.Igather(mine, sizes if pg.rank() == root else None, root)], pg, what)
        if pg.rank() != root:
            _wait([pg._comm.Igatherv(raw, None, root)], pg, what)
            return None
    counts, displs = _counts(sizes)
    flat = np.empty(int(counts.sum()), dtype=np.uint8)
    spec = [flat, (counts, displs), _mpi().BYTE]
    if root is None:
        _wait([pg._comm.Iallgatherv(raw, spec)], pg, what)
    else:
        _wait([pg._comm.Igatherv(raw, spec, root)], pg, what)
    return [flat[d:d + n] for n, d in zip(counts, displs)]


def broadcast_object_list(object_list: List[Any], src: Optional[int] = None, group=None,
                          device=None, group_src: Optional[int] = None) -> None:
    """Replace ``object_list``'s items with rank ``src``'s (picklable objects)."""
    pg = _group(group, "broadcast_object_list")
    if pg is None:
        return
    if src is None and group_src is None:
        src = 0
    root = _root(pg, src, group_src)
    mine = pg.rank() == root
    raws = [_pickled(o) for o in object_list] if mine else []
    sizes = np.array([r.size for r in raws] if mine else [0] * len(object_list), dtype=np.int64)
    _agree(pg, "object", sizes.shape, "object", root)
    _wait([pg._comm.Ibcast(sizes, root)], pg, "broadcast_object_list")
    flat = np.concatenate(raws) if mine and raws else np.empty(int(sizes.sum()), np.uint8)
    _wait([pg._comm.Ibcast([flat, _mpi().BYTE], root)], pg, "broadcast_object_list")
    if not mine:
        off = 0
        for i, n in enumerate(sizes):
            object_list[i] = _loads(flat[off:off + n])
            off += int(n)


def all_gather_object(object_list: List[Any], obj: Any, group=None) -> None:
    """``object_list[i]`` becomes rank i's ``obj`` on every rank."""
    pg = _group(group, "all_gather_object")
    if pg is None:
        return
    if len(object_list) != pg.size():
        raise ValueError("object_list must have one slot per rank (%d), got %d"
                         % (pg.size(), len(object_list)))
    for i, raw in enumerate(_gather_bytes(pg, _pickled(obj))):
        object_list[i] = _loads(raw)


def gather_object(obj: Any, object_gather_list: Optional[List[Any]] = None,
                  dst: Optional[int] = None, group=None, group_dst: Optional[int] = None) -> None:
    """Every rank's ``obj`` into ``object_gather_list`` on rank ``dst``."""
    pg = _group(group, "gather_object")
    if pg is None:
        return
    if dst is None and group_dst is None:
        dst = 0
    root = _root(pg, dst, group_dst)
    if pg.rank() == root:
        if object_gather_list is None:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        if len(object_gather_list) != pg.size():
            raise ValueError("object_gather_list must have one slot per rank (%d), got %d"
                             % (pg.size(), len(object_gather_list)))
    elif object_gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination "
                         "ranks.")
    got = _gather_bytes(pg, _pickled(obj), root)
    if got is not None:
        for i, raw in enumerate(got):
            object_gather_list[i] = _loads(raw)


def scatter_object_list(scatter_object_output_list: List[Any],
                        scatter_object_input_list: Optional[List[Any]] = None,
                        src: Optional[int] = None, group=None,
                        group_src: Optional[int] = None) -> None:
    """Rank ``src``'s ``scatter_object_input_list[i]`` into rank i's output list, slot 0."""
    pg = _group(group, "scatter_object_list")
    if pg is None:
        return
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at "
                         "least 1.")
    if src is None and group_src is None:
        src = 0
    root = _root(pg, src, group_src)
    objs = [None] * pg.size()
    if pg.rank() == root:
        objs = list(scatter_object_input_list)
    box = [objs]
    broadcast_object_list(box, group_src=root, group=pg)
    scatter_object_output_list[0] = box[0][pg.rank()]
