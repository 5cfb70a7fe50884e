"""``ember.cuda``: the CUDA device, backed by CuPy (``pip install "ember[gpu]"``).

``is_available()`` is True only when CuPy imports and sees a GPU. CuPy is looked for on the
first query, never at ``import ember``, and the answer is kept. Without CUDA, device queries
(``current_device``, ``get_device_name``, ...) raise :class:`CudaUnavailableError` saying
whether CuPy or a GPU is missing, as torch raises "Torch not compiled with CUDA enabled";
memory statistics are 0 and ``empty_cache`` does nothing, as in CPU-only torch (whose
``synchronize`` raises, as ember's does).

Memory statistics come from CuPy's default memory pool, which ember's CUDA arrays use.

Example:
    >>> import ember
    >>> isinstance(ember.cuda.is_available(), bool)
    True
"""
import contextlib as _contextlib
import importlib
import sys as _sys
import types as _types

from . import backend as _backend
from . import dtypes as _dt
from . import random as _random
from .backend import CudaUnavailableError
from .tensor import Tensor


class OutOfMemoryError(RuntimeError):
    """Raised when the device runs out of memory (CuPy's allocator on the GPU)."""

__all__ = ["is_available", "device_count", "current_device", "set_device", "device",
           "device_of", "get_device_name", "get_device_capability", "get_device_properties",
           "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "reset_peak_memory_stats", "reset_max_memory_allocated",
           "empty_cache", "synchronize", "manual_seed", "manual_seed_all", "seed", "seed_all",
           "is_initialized", "init", "Stream", "Event", "current_stream", "default_stream",
           "stream", "CudaUnavailableError", "FloatTensor", "DoubleTensor", "HalfTensor",
           "LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor",
           "get_rng_state", "set_rng_state", "get_rng_state_all", "set_rng_state_all",
           "initial_seed", "is_bf16_supported", "is_tf32_supported", "get_arch_list",
           "mem_get_info", "memory_stats", "memory_cached", "max_memory_cached",
           "set_per_process_memory_fraction", "ipc_collect", "StreamContext", "nvtx",
           "random", "memory_summary", "memory_snapshot", "memory_stats_as_nested_dict",
           "host_memory_stats", "host_memory_stats_as_nested_dict", "list_gpu_processes",
           "reset_accumulated_memory_stats", "reset_max_memory_cached", "get_gencode_flags",
           "get_per_process_memory_fraction", "get_sync_debug_mode", "set_sync_debug_mode",
           "can_device_access_peer", "caching_allocator_enable", "caching_allocator_disabled",
           "clock_rate", "device_memory_used", "memory_usage", "power_draw", "temperature",
           "utilization", "set_stream", "OutOfMemoryError", "current_blas_handle"]

_INVALID_ID = "Invalid device id"
_tensor = importlib.import_module(".tensor", __package__)   # (``ember.tensor`` is the function)


def _cp():
    """CuPy (the CUDA backend's array module); raises ``CudaUnavailableError`` without it."""
    return _backend.backend_for("cuda").xp


class _CudaUnavailableAttributeError(CudaUnavailableError, AttributeError):
    """The ``CudaUnavailableError`` of the calls CPU-only torch fails with an AttributeError
    (its missing ``torch._C._cuda_*`` binding): catchable as either."""


def _cp_attr():
    """``_cp()``, raising ``_CudaUnavailableAttributeError`` without CUDA."""
    try:
        return _cp()
    except CudaUnavailableError as e:
        raise _CudaUnavailableAttributeError(str(e)) from None


def _index(dev, optional=True):
    """The CUDA device index that ``dev`` names (None: the current device), as torch's
    ``_get_device_index``."""
    if dev is None:
        return _cp().cuda.runtime.getDevice()
    if isinstance(dev, str):
        dev = _backend.device(dev)
    if isinstance(dev, _backend.device):
        if dev.type != "cuda":
            raise ValueError("Expected a cuda device, but got: %s" % dev)
        if dev.index is None and not optional:
            raise ValueError("Expected a torch.device with a specified index or an integer, "
                             "but got:%s" % dev)
        return _cp().cuda.runtime.getDevice() if dev.index is None else dev.index
    if isinstance(dev, int) and not isinstance(dev, bool):
        return _cp().cuda.runtime.getDevice() if dev < 0 and optional else dev
    raise ValueError("Expected a torch.device with a specified index or an integer, but got:%s"
                     % (dev,))


def _checked_index(dev):
    _cp()       # (CUDA is set up before the index is checked, as torch's ``_lazy_init``)
    i = _index(dev)
    if i < 0 or i >= device_count():
        raise AssertionError(_INVALID_ID)
    return i


def is_available():
    """True when CuPy is installed and sees a GPU."""
    return _backend.cuda_status()[0]


def is_initialized():
    """True once the CUDA device has been set up (by a first CUDA tensor or query)."""
    return "cuda" in _backend._BY_DEVICE


def init():
    """Set up CUDA now (raises ``CudaUnavailableError`` when it cannot be used)."""
    _cp()


def device_count():
    """The number of GPUs CuPy sees (0 without CUDA)."""
    return _cp().cuda.runtime.getDeviceCount() if is_available() else 0


def current_device():
    """The index of the current CUDA device."""
    return _cp().cuda.runtime.getDevice()


def set_device(device):
    """Make ``device`` (an index, ``'cuda:N'`` or a device) the current CUDA device; a
    negative index does nothing, as in torch."""
    i = _index(device, optional=False)
    cp = _cp_attr()
    if i >= 0:
        if i >= cp.cuda.runtime.getDeviceCount():
            raise RuntimeError(_backend_cupy().ORDINAL)
        cp.cuda.runtime.setDevice(i)


def _backend_cupy():
    from .backend import _cupy
    return _cupy


class device:
    """Context manager that makes ``device`` the current CUDA device and restores the previous
    one on exit (``None`` or a negative index: no change), as ``torch.cuda.device``.

    Example:
        >>> import ember
        >>> with ember.cuda.device(-1):
        ...     pass
    """

    def __init__(self, device):
        self.idx = -1 if device is None else _index(device) if not (
            isinstance(device, int) and device < 0) else -1
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev_idx = current_device()
            if self.prev_idx != self.idx:
                set_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx >= 0 and self.prev_idx != self.idx:
            set_device(self.prev_idx)
        return False


class device_of(device):
    """Context manager: the current device becomes ``obj``'s (a CUDA tensor); no change for a
    CPU tensor."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


def get_device_name(device=None):
    """The name of a CUDA device (the current one by default)."""
    return get_device_properties(device).name


def get_device_capability(device=None):
    """The ``(major, minor)`` compute capability of a CUDA device."""
    props = get_device_properties(device)
    return props.major, props.minor


class _CudaDeviceProperties:
    """What ``get_device_properties`` returns: name, compute capability, memory, SM count."""

    def __init__(self, props):
        name = props["name"]
        self.name = name.decode() if isinstance(name, bytes) else str(name)
        self.major = int(props["major"])
        self.minor = int(props["minor"])
        self.total_memory = int(props["totalGlobalMem"])
        self.multi_processor_count = int(props["multiProcessorCount"])
        self.is_integrated = int(props.get("integrated", 0))
        self.is_multi_gpu_board = int(props.get("isMultiGpuBoard", 0))
        self.L2_cache_size = int(props.get("l2CacheSize", 0))

    def __repr__(self):
        return ("_CudaDeviceProperties(name='%s', major=%d, minor=%d, total_memory=%dMB, "
                "multi_processor_count=%d, L2_cache_size=%dMB)"
                % (self.name, self.major, self.minor, self.total_memory // (1 << 20),
                   self.multi_processor_count, self.L2_cache_size // (1 << 20)))


def get_device_properties(device=None):
    """The properties of a CUDA device (``name``, ``major``, ``minor``, ``total_memory``,
    ``multi_processor_count``)."""
    i = _checked_index(device)
    return _CudaDeviceProperties(_cp().cuda.runtime.getDeviceProperties(i))


def _pool():
    return _cp().get_default_memory_pool() if is_available() else None


def memory_allocated(device=None):
    """Bytes held by live CUDA tensors (CuPy's memory pool in use; 0 without CUDA)."""
    p = _pool()
    return 0 if p is None else p.used_bytes()


def memory_reserved(device=None):
    """Bytes CuPy's memory pool holds, in use or cached (0 without CUDA)."""
    p = _pool()
    return 0 if p is None else p.total_bytes()


def max_memory_allocated(device=None):
    """An upper bound of the peak of ``memory_allocated`` since the last
    ``reset_peak_memory_stats`` (0 without CUDA).

    NOTE: CuPy keeps no peak counter. Its pool grows only when live arrays need more than it
    caches, so the bytes it holds bound the peak from above; ``reset_peak_memory_stats``
    returns the cached blocks so that the bound starts again from what is live.
    """
    return memory_reserved(device)


max_memory_reserved = max_memory_allocated


def reset_peak_memory_stats(device=None):
    """Start the peak statistics again from the memory in use now (frees CuPy's cached
    blocks; raises without CUDA, as CPU-only torch)."""
    _cp_attr().get_default_memory_pool().free_all_blocks()


def reset_accumulated_memory_stats(device=None):
    """Reset the accumulated counters (CuPy keeps none: nothing to reset with CUDA)."""
    _cp_attr()


def _reset_warned(old, device):
    import warnings
    warnings.warn("torch.cuda.%s now calls torch.cuda.reset_peak_memory_stats, which resets "
                  "/all/ peak memory stats." % old, FutureWarning, stacklevel=3)
    return reset_peak_memory_stats(device)


def reset_max_memory_allocated(device=None):
    """Deprecated spelling of ``reset_peak_memory_stats`` (FutureWarning, as torch)."""
    return _reset_warned("reset_max_memory_allocated", device)


def reset_max_memory_cached(device=None):
    """Deprecated spelling of ``reset_peak_memory_stats`` (FutureWarning, as torch)."""
    return _reset_warned("reset_max_memory_cached", device)


def empty_cache():
    """Return the cached, unused blocks of CuPy's memory pools to the driver (no-op without
    CUDA, as torch)."""
    if is_available():
        cp = _cp()
        cp.get_default_memory_pool().free_all_blocks()
        cp.get_default_pinned_memory_pool().free_all_blocks()


def synchronize(device=None):
    """Wait for all queued GPU work (raises without CUDA, as torch)."""
    _cp().cuda.runtime.deviceSynchronize()


def manual_seed(seed):
    """Checks ``seed`` as torch does, nothing more: ember draws random numbers from one
    generator for every device (``ember.manual_seed`` seeds it)."""
    int(seed)


def manual_seed_all(seed):
    """As ``manual_seed``."""
    int(seed)


def seed():
    """No-op (see ``manual_seed``)."""


seed_all = seed


class Stream:
    """A CUDA stream (CuPy's ``cupy.cuda.Stream``): ``with ember.cuda.stream(s):`` queues the
    enclosed work on it."""

    def __init__(self, device=None, priority=0, _cupy_stream=None):
        self._s = _cupy_stream if _cupy_stream is not None else _cp().cuda.Stream(
            non_blocking=True)

    def synchronize(self):
        """Wait for the work queued on this stream."""
        self._s.synchronize()

    def query(self):
        """True when all the work queued on this stream has finished."""
        return bool(self._s.done)

    def wait_stream(self, stream):
        """Make future work on this stream wait for the work queued on ``stream`` now."""
        self._s.wait_event(stream._s.record())

    def wait_event(self, event):
        self._s.wait_event(event._e)

    def record_event(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    @property
    def cuda_stream(self):
        return self._s.ptr

    def __eq__(self, other):
        return isinstance(other, Stream) and self.cuda_stream == other.cuda_stream

    def __hash__(self):
        return hash(self.cuda_stream)

    def __repr__(self):
        return "<ember.cuda.Stream cuda_stream=%#x>" % self.cuda_stream


def current_stream(device=None):
    """The stream CUDA work is queued on now."""
    return Stream(_cupy_stream=_cp().cuda.get_current_stream())


def default_stream(device=None):
    """The device's default (null) stream."""
    return Stream(_cupy_stream=_cp().cuda.Stream.null)


class StreamContext:
    """Context manager: queue the enclosed CUDA work on ``stream`` (None: no change)."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            self.stream._s.__enter__()
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            self.stream._s.__exit__(*exc)
        return False


class Event:
    """A CUDA event (CuPy's ``cupy.cuda.Event``), for timing and ordering GPU work.

    Example (on a GPU):
        start, end = ember.cuda.Event(enable_timing=True), ember.cuda.Event(enable_timing=True)
        start.record(); ...; end.record(); end.synchronize(); start.elapsed_time(end)  # ms
    """

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self._e = _cp().cuda.Event(block=blocking, disable_timing=not enable_timing,
                                   interprocess=interprocess)

    def record(self, stream=None):
        """Record the event on ``stream`` (the current stream by default)."""
        self._e.record(None if stream is None else stream._s)

    def wait(self, stream=None):
        (current_stream() if stream is None else stream).wait_event(self)

    def query(self):
        return bool(self._e.done)

    def synchronize(self):
        """Wait until the work recorded before this event has finished."""
        self._e.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds between this event and ``end_event`` (both recorded, with timing)."""
        return float(_cp().cuda.get_elapsed_time(self._e, end_event._e))


class _CudaLegacyType(type):
    """``ember.cuda.FloatTensor`` and co.: torch's legacy CUDA tensor types.

    Calling one builds the CPU legacy tensor and moves it to CUDA; ``isinstance`` is true of
    CUDA tensors of that dtype; ``t.type(ember.cuda.FloatTensor)`` moves ``t`` to CUDA. Without
    CUDA, calling one raises as torch does.
    """

    def __instancecheck__(cls, obj):
        return (isinstance(obj, Tensor) and obj.device.type == "cuda"
                and obj._array.dtype == cls._legacy_dtype.np)

    def __call__(cls, *args):
        ok, why = _backend.cuda_status()
        if not ok:
            raise TypeError("type torch.cuda.%s not available. ember cannot use CUDA: %s"
                            % (cls.__name__, why))
        return getattr(_tensor, cls.__name__)(*args).to("cuda")

    def __repr__(cls):
        return "<class 'torch.cuda.%s'>" % cls.__name__


def _legacy(name, d):
    return _CudaLegacyType(name, (), {"_legacy_dtype": d, "_legacy_device": "cuda", "dtype": d,
                                      "layout": _dt.strided, "is_cuda": True, "is_sparse": False,
                                      "is_sparse_csr": False,
                                      "__module__": "ember.cuda",
                                      "__doc__": "Legacy constructor for CUDA %r tensors." % d})


FloatTensor = _legacy("FloatTensor", _dt.float32)
DoubleTensor = _legacy("DoubleTensor", _dt.float64)
HalfTensor = _legacy("HalfTensor", _dt.float16)
LongTensor = _legacy("LongTensor", _dt.int64)
IntTensor = _legacy("IntTensor", _dt.int32)
ShortTensor = _legacy("ShortTensor", _dt.int16)
CharTensor = _legacy("CharTensor", _dt.int8)
ByteTensor = _legacy("ByteTensor", _dt.uint8)
BoolTensor = _legacy("BoolTensor", _dt.bool)


def get_rng_state(device="cuda"):
    """The state of the generator CUDA tensors draw from: ember's one generator (raises
    without CUDA, as torch)."""
    _cp()
    return _random.get_rng_state()


def set_rng_state(new_state, device="cuda"):
    """Copies ``new_state`` as torch does, nothing more (as ``manual_seed``):
    ``ember.set_rng_state`` sets the one generator."""
    new_state.clone()


def get_rng_state_all():
    """``[get_rng_state(i) for each GPU]`` (``[]`` without CUDA)."""
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states):
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def initial_seed():
    """The seed of the generator CUDA tensors draw from (raises without CUDA)."""
    _cp()
    return _random.initial_seed()


default_generators = ()
has_half = True
has_magma = False


def is_bf16_supported(including_emulation=True):
    """Whether CUDA bfloat16 can be used (False without CUDA)."""
    if not is_available():
        return False
    return including_emulation or get_device_capability()[0] >= 8


def is_tf32_supported():
    """Whether the GPU has TF32 tensor cores (False without CUDA)."""
    return is_available() and get_device_capability()[0] >= 8


def get_arch_list():
    """The CUDA architectures this build targets (ember compiles none: ``[]``)."""
    return []


def mem_get_info(device=None):
    """``(free, total)`` bytes of GPU memory."""
    return tuple(_cp().cuda.runtime.memGetInfo())


def memory_stats(device=None):
    """A dict of memory statistics (empty without CUDA, as torch)."""
    import collections
    if not is_available():
        return collections.OrderedDict()
    return collections.OrderedDict([
        ("allocated_bytes.all.current", memory_allocated(device)),
        ("allocated_bytes.all.peak", max_memory_allocated(device)),
        ("reserved_bytes.all.current", memory_reserved(device)),
        ("reserved_bytes.all.peak", max_memory_reserved(device))])


def memory_cached(device=None):
    import warnings
    warnings.warn("`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`",
                  FutureWarning, stacklevel=2)
    return memory_reserved(device)


def max_memory_cached(device=None):
    import warnings
    warnings.warn("`torch.cuda.max_memory_cached` has been renamed to "
                  "`torch.cuda.max_memory_reserved`", FutureWarning, stacklevel=2)
    return max_memory_reserved(device)


def set_per_process_memory_fraction(fraction, device=None):
    """Cap CuPy's memory pool at ``fraction`` of the GPU's memory."""
    _cp().get_default_memory_pool().set_limit(fraction=fraction)


def ipc_collect():
    _cp()


def memory_stats_as_nested_dict(device=None):
    """``memory_stats`` with its dotted keys nested (``{}`` without CUDA, as torch)."""
    out = {}
    for key, value in memory_stats(device).items():
        d = out
        *parents, last = key.split(".")
        for part in parents:
            d = d.setdefault(part, {})
        d[last] = value
    return out


def memory_summary(device=None, abbreviated=False):
    """A printable table of ``memory_stats`` (a KeyError without CUDA, where the statistics
    are empty, as torch)."""
    stats = memory_stats(device)
    rows = ["%-24s | %14d | %14d" % (title, stats[key + ".all.current"], stats[key + ".all.peak"])
            for title, key in (("Allocated memory", "allocated_bytes"),
                               ("GPU reserved memory", "reserved_bytes"))]
    lines = ["=" * 60, " PyTorch CUDA memory summary, device ID %d" % _checked_index(device),
             "-" * 60, "%-24s | %14s | %14s" % ("Metric", "Cur Usage", "Peak Usage")] + rows
    return "\n".join(lines + ["=" * 60]) + "\n"


def memory_snapshot(mempool_id=None):
    """The allocator's segments (CuPy keeps no such record: ``[]`` with CUDA; raises without
    it, as CPU-only torch)."""
    _cp_attr()
    return []


def host_memory_stats():
    """Statistics of the pinned host memory (empty: ember keeps none, as torch without
    CUDA)."""
    import collections
    return collections.OrderedDict()


def host_memory_stats_as_nested_dict():
    """``host_memory_stats`` nested by its dotted keys (``{}``)."""
    return {}


def list_gpu_processes(device=None):
    """The processes using the GPU, through nvidia-ml-py (a note saying it is missing, as
    torch)."""
    try:
        import pynvml
    except ModuleNotFoundError:
        return "pynvml module not found, please install nvidia-ml-py"
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(_checked_index(device))
    procs = pynvml.nvmlDeviceGetComputeRunningProcesses(handle)
    lines = ["GPU:%d" % _checked_index(device)]
    if not procs:
        lines.append("no processes are running")
    for p in procs:
        lines.append("process %10d uses %12.3f MB GPU memory" % (p.pid, p.usedGpuMemory / 2 ** 20))
    return "\n".join(lines)


def _nvml(query, device):
    """``pynvml.<query>`` of ``device``'s handle (ModuleNotFoundError without nvidia-ml-py,
    as torch)."""
    try:
        import pynvml
    except ModuleNotFoundError:
        raise ModuleNotFoundError("nvidia-ml-py does not seem to be installed or it can't be "
                                  "imported.") from None
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(_checked_index(device))
    return query(pynvml, handle)


def clock_rate(device=None):
    """The SM clock speed in MHz (nvidia-ml-py)."""
    return _nvml(lambda nv, h: nv.nvmlDeviceGetClockInfo(h, 1), device)


def device_memory_used(device=None):
    """The GPU memory in use, in bytes, as the driver counts it (nvidia-ml-py)."""
    return _nvml(lambda nv, h: nv.nvmlDeviceGetMemoryInfo(h).used, device)


def memory_usage(device=None):
    """The percent of time the GPU memory was read or written (nvidia-ml-py)."""
    return _nvml(lambda nv, h: nv.nvmlDeviceGetUtilizationRates(h).memory, device)


def power_draw(device=None):
    """The power drawn, in milliwatts (nvidia-ml-py)."""
    return _nvml(lambda nv, h: nv.nvmlDeviceGetPowerUsage(h), device)


def temperature(device=None):
    """The GPU temperature in degrees Celsius (nvidia-ml-py)."""
    return _nvml(lambda nv, h: nv.nvmlDeviceGetTemperature(h, 0), device)


def utilization(device=None):
    """The percent of time a kernel ran (nvidia-ml-py)."""
    return _nvml(lambda nv, h: nv.nvmlDeviceGetUtilizationRates(h).gpu, device)


def get_gencode_flags():
    """The nvcc gencode flags of this build (ember compiles none: ``''``)."""
    return ""


def get_per_process_memory_fraction(device=None):
    """The cap ``set_per_process_memory_fraction`` put on CuPy's pool, as a fraction of the
    GPU's memory (1.0 when none)."""
    limit = _cp().get_default_memory_pool().get_limit()
    return 1.0 if limit == 0 else limit / mem_get_info(device)[1]


_sync_debug_mode = [0]


def get_sync_debug_mode():
    """The CUDA sync debug mode (kept, not acted on: CuPy has no such check)."""
    _cp()
    return _sync_debug_mode[0]


def set_sync_debug_mode(debug_mode):
    """Set the sync debug mode (0/"default", 1/"warn", 2/"error"; kept, not acted on)."""
    _cp()
    if isinstance(debug_mode, str):
        modes = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in modes:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, "
                               "`warn`, `error`")
        debug_mode = modes[debug_mode]
    _sync_debug_mode[0] = debug_mode


def can_device_access_peer(device, peer_device):
    """Whether ``device`` can read ``peer_device``'s memory directly."""
    i, j = _checked_index(device), _index(peer_device)
    if j < 0 or j >= device_count():
        raise AssertionError("Invalid peer device id")
    return bool(_cp().cuda.runtime.deviceCanAccessPeer(i, j))


def current_blas_handle():
    """The cuBLAS handle CuPy uses on the current device."""
    return _cp().cuda.device.get_cublas_handle()


def caching_allocator_enable(value=True):
    """Turn the caching allocator on or off (CuPy's pool stays on; kept for torch's API)."""


@_contextlib.contextmanager
def caching_allocator_disabled():
    """Context manager that would run the enclosed code without the caching allocator (CuPy's
    pool stays on)."""
    yield


def stream(stream):
    """The context manager (a ``StreamContext``) that queues the enclosed CUDA work on
    ``stream`` (None: no change)."""
    return StreamContext(stream)


def set_stream(stream):
    """Make ``stream`` the current stream (None: no change)."""
    if stream is not None:
        stream._s.use()


class _Nvtx:
    """``torch.cuda.nvtx``: NVTX ranges through CuPy (raises without CUDA, as torch)."""

    def _nvtx(self):
        if not is_available():
            raise RuntimeError("NVTX functions not installed. Are you sure you have a CUDA "
                               "build?")
        return _cp().cuda.nvtx

    def range_push(self, msg):
        self._nvtx().RangePush(msg)
        return 0

    def range_pop(self):
        self._nvtx().RangePop()
        return 0

    def mark(self, msg):
        self._nvtx().Mark(msg)

    def range(self, msg, *args, **kwargs):
        import contextlib

        @contextlib.contextmanager
        def _range():
            self.range_push(msg.format(*args, **kwargs))
            try:
                yield
            finally:
                self.range_pop()
        return _range()


nvtx = _Nvtx()


# ``torch.cuda.random``: the RNG-state functions under their module path
random = _types.ModuleType("ember.cuda.random", "The CUDA generator's state (see "
                           "``get_rng_state``).")
for _name in ("get_rng_state", "set_rng_state", "get_rng_state_all", "set_rng_state_all",
              "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed"):
    setattr(random, _name, globals()[_name])
_sys.modules[random.__name__] = random
