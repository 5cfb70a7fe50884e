"""``ember.cuda``: the CUDA device, backed by CuPy (``pip install "ember[gpu]"``).

``is_available()`` is True only when CuPy imports and sees a GPU. CuPy is looked for on the
first query, never at ``import ember``, and the answer is kept. Without CUDA, device queries
(``current_device``, ``get_device_name``, ...) raise :class:`CudaUnavailableError` naming
CuPy, as torch raises "Torch not compiled with CUDA enabled"; memory statistics are 0 and
``empty_cache`` does nothing, as in torch.

Example:
    >>> import ember
    >>> isinstance(ember.cuda.is_available(), bool)
    True
"""
from . import dtypes as _dt
from . import tensor as _tensor
from .tensor import Tensor

__all__ = ["is_available", "device_count", "current_device", "set_device", "get_device_name",
           "get_device_capability", "memory_allocated", "max_memory_allocated",
           "memory_reserved", "empty_cache", "synchronize", "manual_seed", "manual_seed_all",
           "is_initialized", "CudaUnavailableError", "FloatTensor", "DoubleTensor",
           "HalfTensor", "LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor",
           "BoolTensor"]

_NO_CUDA = ("ember cannot use CUDA: CuPy is not installed or sees no GPU "
            "(ember.cuda.is_available() is False). Install CuPy with pip install \"ember[gpu]\" "
            "on a machine with an NVIDIA GPU")


class CudaUnavailableError(AssertionError, RuntimeError):
    """CUDA was asked for but is not available (torch raises AssertionError here; this is
    also a RuntimeError, the type ember's device errors have)."""


_found = {"checked": False, "cupy": None}


def _cupy():
    """The CuPy module when it imports and sees at least one GPU, else None (checked once)."""
    if not _found["checked"]:
        _found["checked"] = True
        try:
            import cupy
            if cupy.cuda.runtime.getDeviceCount() > 0:
                _found["cupy"] = cupy
        except Exception:   # not installed, no driver, no device: all mean "no CUDA"
            _found["cupy"] = None
    return _found["cupy"]


def _require():
    cp = _cupy()
    if cp is None:
        raise CudaUnavailableError(_NO_CUDA)
    return cp


def _index(device):
    """The CUDA device index of ``device`` (None: the current device)."""
    if device is None:
        return _require().cuda.runtime.getDevice()
    if isinstance(device, int):
        return device
    index = getattr(device, "index", None)
    if index is None and isinstance(device, str):
        index = int(device.split(":")[1]) if ":" in device else None
    return _require().cuda.runtime.getDevice() if index is None else index


def is_available():
    """True when CuPy is installed and sees a GPU."""
    return _cupy() is not None


def is_initialized():
    """True once CUDA has been found usable."""
    return _found["checked"] and _found["cupy"] is not None


def device_count():
    """The number of GPUs CuPy sees (0 without CUDA)."""
    cp = _cupy()
    return 0 if cp is None else cp.cuda.runtime.getDeviceCount()


def current_device():
    """The index of the current CUDA device."""
    return _require().cuda.runtime.getDevice()


def set_device(device):
    """Make ``device`` (an index, ``'cuda:N'`` or a device) the current CUDA device."""
    _require().cuda.runtime.setDevice(_index(device))


def get_device_name(device=None):
    """The name of a CUDA device (the current one by default)."""
    name = _require().cuda.runtime.getDeviceProperties(_index(device))["name"]
    return name.decode() if isinstance(name, bytes) else name


def get_device_capability(device=None):
    """The ``(major, minor)`` compute capability of a CUDA device."""
    props = _require().cuda.runtime.getDeviceProperties(_index(device))
    return props["major"], props["minor"]


def memory_allocated(device=None):
    """Bytes held by live arrays in CuPy's memory pool (0 without CUDA, as torch)."""
    cp = _cupy()
    return 0 if cp is None else cp.get_default_memory_pool().used_bytes()


def memory_reserved(device=None):
    """Bytes CuPy's memory pool holds, in use or cached (0 without CUDA)."""
    cp = _cupy()
    return 0 if cp is None else cp.get_default_memory_pool().total_bytes()


def max_memory_allocated(device=None):
    """An upper bound of the peak of ``memory_allocated`` (0 without CUDA).

    CuPy keeps no peak counter; its pool only grows until ``empty_cache``, so the bytes it
    holds bound the peak since the last ``empty_cache`` from above.
    """
    return memory_reserved(device)


def empty_cache():
    """Return the cached, unused blocks of CuPy's memory pools to the driver (no-op without
    CUDA, as torch)."""
    cp = _cupy()
    if cp is not None:
        cp.get_default_memory_pool().free_all_blocks()
        cp.get_default_pinned_memory_pool().free_all_blocks()


def synchronize(device=None):
    """Wait for all queued GPU work (no-op without CUDA)."""
    cp = _cupy()
    if cp is not None:
        cp.cuda.runtime.deviceSynchronize()


def manual_seed(seed):
    """No-op: ember draws random numbers on the host, one generator for every device."""


manual_seed_all = manual_seed


class _CudaLegacyType(type):
    """``ember.cuda.FloatTensor`` and co.: torch's legacy CUDA tensor types.

    Calling one builds the CPU legacy tensor and moves it to CUDA; ``isinstance`` is true of
    CUDA tensors of that dtype. Without CUDA, calling one raises as torch does.
    """

    def __instancecheck__(cls, obj):
        return (isinstance(obj, Tensor) and obj.device.type == "cuda"
                and obj._array.dtype == cls._legacy_dtype.np)

    def __call__(cls, *args):
        if _cupy() is None:
            raise TypeError("type torch.cuda.%s not available. %s" % (cls.__name__, _NO_CUDA))
        return getattr(_tensor, cls.__name__)(*args).to("cuda")


def _legacy(name, d):
    return _CudaLegacyType(name, (), {"_legacy_dtype": d, "_legacy_device": "cuda",
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
