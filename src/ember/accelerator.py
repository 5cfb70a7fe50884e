"""``torch.accelerator``: the current accelerator (CUDA through CuPy when present, else
none): ``device = torch.accelerator.current_accelerator() if torch.accelerator.is_available()
else "cpu"``."""
from . import cuda as _cuda
from .backend import device as _device

__all__ = ["current_accelerator", "device_count", "is_available", "current_device_index",
           "set_device_index", "synchronize", "empty_cache", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved",
           "reset_peak_memory_stats"]


def is_available():
    """True when an accelerator (a CUDA GPU CuPy sees) is available."""
    return _cuda.is_available()


def current_accelerator(check_available=False):
    """The accelerator as a device type (``device(type='cuda')``), or None."""
    return _device("cuda") if _cuda.is_available() else None


def device_count():
    return _cuda.device_count()


def _check():
    if not _cuda.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")


def current_device_index():
    _check()
    return _cuda.current_device()


current_device_idx = current_device_index


def set_device_index(device):
    _check()
    _cuda.set_device(device)


set_device_idx = set_device_index


def synchronize(device=None):
    _cuda.synchronize()


def empty_cache():
    _cuda.empty_cache()


def memory_allocated(device_index=None):
    return _cuda.memory_allocated(device_index)


def max_memory_allocated(device_index=None):
    return _cuda.max_memory_allocated(device_index)


def memory_reserved(device_index=None):
    return _cuda.memory_reserved(device_index)


def max_memory_reserved(device_index=None):
    return _cuda.max_memory_reserved(device_index)


def reset_peak_memory_stats(device_index=None):
    _cuda.reset_peak_memory_stats(device_index)
