"""``torch.accelerator``: the current accelerator (CUDA through CuPy when present, else
none): ``device = torch.accelerator.current_accelerator() if torch.accelerator.is_available()
else "cpu"``. Without one, device queries raise torch's "Cannot access accelerator device when
none is available." RuntimeError."""
import warnings

from . import cuda as _cuda
from .backend import device as _device

__all__ = ["current_accelerator", "device_count", "is_available", "current_device_index",
           "set_device_index", "synchronize", "empty_cache", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved",
           "reset_peak_memory_stats", "reset_accumulated_memory_stats", "memory_stats",
           "get_memory_info", "current_stream", "set_stream", "device_index",
           "empty_host_cache"]


def is_available():
    """True when an accelerator (a CUDA GPU CuPy sees) is available."""
    return _cuda.is_available()


def current_accelerator(check_available=False):
    """The accelerator as a device type (``device(type='cuda')``), or None."""
    return _device("cuda") if _cuda.is_available() else None


def device_count():
    """The number of accelerator devices (0 without one)."""
    return _cuda.device_count()


def _check():
    if not _cuda.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")


def _index(device, optional=True):
    """The device index ``device`` names (None: the current one), as torch's
    ``torch.accelerator._utils._get_device_index``."""
    if isinstance(device, int):
        _check()
        return device
    if isinstance(device, str):
        device = _device(device)
    index = None
    if isinstance(device, _device):
        acc = current_accelerator()
        if acc is None:
            raise RuntimeError("Accelerator expected")
        if acc.type != device.type:
            raise ValueError("%s doesn't match the current accelerator %s." % (device.type, acc))
        index = device.index
    if index is None:
        if not optional:
            raise ValueError("Expected a torch.device with a specified index or an integer, "
                             "but got:%s" % (device,))
        return current_device_index()
    return index


def current_device_index():
    """The index of the current accelerator device."""
    _check()
    return _cuda.current_device()


def current_device_idx(*args, **kwargs):
    """Deprecated spelling of ``current_device_index`` (FutureWarning, as torch)."""
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index(*args, **kwargs)


def set_device_index(device):
    """Make ``device`` the current accelerator device."""
    _cuda.set_device(_index(device, optional=False))


def set_device_idx(*args, **kwargs):
    """Deprecated spelling of ``set_device_index`` (FutureWarning, as torch)."""
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    return set_device_index(*args, **kwargs)


class device_index:     # noqa: N801 (torch's name)
    """Context manager: ``device`` (an index; None: no change) is the current accelerator
    device inside the block."""

    def __init__(self, device, /):
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            self.prev_idx = current_device_index()
            set_device_index(self.idx)

    def __exit__(self, *exc):
        if self.idx is not None:
            set_device_index(self.prev_idx)
        return False


def current_stream(device=None, /):
    """The stream work is queued on now on ``device``."""
    return _cuda.current_stream(_index(device))


def set_stream(stream):
    """Make ``stream`` the current stream of its device."""
    _check()
    _cuda.set_stream(stream)


def synchronize(device=None, /):
    """Wait for all the work queued on ``device``."""
    _cuda.synchronize(_index(device))


def empty_cache():
    """Return the accelerator's cached, unused memory to the driver."""
    _check()
    _cuda.empty_cache()


def empty_host_cache():
    """Return the cached pinned host memory."""
    _check()
    _cuda.empty_cache()


def memory_stats(device_index=None, /):
    """A dict of the accelerator's memory statistics."""
    _check()
    return _cuda.memory_stats(_index(device_index))


def memory_allocated(device_index=None, /):
    """Bytes held by live tensors on the device."""
    _check()
    return _cuda.memory_allocated(_index(device_index))


def max_memory_allocated(device_index=None, /):
    """The peak of ``memory_allocated`` (see ``ember.cuda.max_memory_allocated``)."""
    _check()
    return _cuda.max_memory_allocated(_index(device_index))


def memory_reserved(device_index=None, /):
    """Bytes the device's caching allocator holds."""
    _check()
    return _cuda.memory_reserved(_index(device_index))


def max_memory_reserved(device_index=None, /):
    """The peak of ``memory_reserved``."""
    _check()
    return _cuda.max_memory_reserved(_index(device_index))


def reset_peak_memory_stats(device_index=None, /):
    """Start the peak statistics again."""
    _check()
    _cuda.reset_peak_memory_stats(_index(device_index))


def reset_accumulated_memory_stats(device_index=None, /):
    """Reset the accumulated memory counters."""
    _check()
    _cuda.reset_accumulated_memory_stats(_index(device_index))


def get_memory_info(device_index=None, /):
    """``(free, total)`` bytes of the device's memory."""
    return _cuda.mem_get_info(_index(device_index))
