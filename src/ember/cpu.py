"""``torch.cpu``: the CPU as a device module (one device, synchronous)."""
import sys as _sys

from .amp import _legacy

__all__ = ["is_available", "device_count", "current_device", "set_device", "synchronize",
           "is_initialized", "Stream", "Event", "StreamContext", "stream", "current_stream",
           "get_capabilities", "amp"]


def is_available():
    return True


def is_initialized():
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def set_device(device):
    pass


def synchronize(device=None):
    pass


def get_capabilities():
    return {}


class Stream:
    """The CPU's only stream: work runs at once."""

    def __init__(self, priority=-1):
        pass

    def wait_stream(self, stream):
        pass

    def synchronize(self):
        pass


class Event:
    def __init__(self, enable_timing=False):
        pass

    def record(self, stream=None):
        pass

    def synchronize(self):
        pass

    def query(self):
        return True


_STREAM = Stream()


def current_stream(device=None):
    return _STREAM


class StreamContext:
    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        return self.stream

    def __exit__(self, *exc):
        return False


def stream(stream):
    return StreamContext(stream)


amp = _legacy.cpu    # ``torch.cpu.amp`` (also importable: ``import ember.cpu.amp``)
_sys.modules[amp.__name__] = amp
