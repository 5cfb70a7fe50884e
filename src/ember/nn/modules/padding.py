"""Padding layers: constant, zero, reflection, replication and circular, in 1-3 dims (torch's
class hierarchy: ``ZeroPad2d`` is a ``ConstantPad2d``)."""
from collections.abc import Iterable

from .. import functional as F
from .module import Module

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d"]


def _ntuple(padding, n):
    if isinstance(padding, Iterable):
        return tuple(padding)
    return (padding,) * n


class _CircularPadNd(Module):
    __constants__ = ["padding"]

    def _check_input_dim(self, input):
        raise NotImplementedError

    def forward(self, input):
        self._check_input_dim(input)
        return F.pad(input, self.padding, "circular")

    def extra_repr(self):
        return f"{self.padding}"


def _check_circular(input, want):
    if input.dim() not in (want, want + 1):
        raise ValueError("expected %dD or %dD input (got %dD input)"
                         % (want, want + 1, input.dim()))


class CircularPad1d(_CircularPadNd):
    """Pad the last dim by wrapping around; ``padding``: int or (left, right)."""

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 2)

    def _check_input_dim(self, input):
        _check_circular(input, 2)


class CircularPad2d(_CircularPadNd):
    """Pad the last 2 dims by wrapping around; ``padding``: int or (left, right, top, bottom)."""

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 4)

    def _check_input_dim(self, input):
        _check_circular(input, 3)


class CircularPad3d(_CircularPadNd):
    """Pad the last 3 dims by wrapping around."""

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 6)

    def _check_input_dim(self, input):
        _check_circular(input, 4)


class _ConstantPadNd(Module):
    __constants__ = ["padding", "value"]

    def __init__(self, value):
        super().__init__()
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with ``value``; ``padding``: int or (left, right)."""

    def __init__(self, padding, value):
        super().__init__(value)
        self.padding = _ntuple(padding, 2)


class ConstantPad2d(_ConstantPadNd):
    """Pad the last 2 dims with ``value``; ``padding``: int or (left, right, top, bottom)."""

    __constants__ = ["padding", "value"]

    def __init__(self, padding, value):
        super().__init__(value)
        self.padding = _ntuple(padding, 4)


class ConstantPad3d(_ConstantPadNd):
    """Pad the last 3 dims with ``value``."""

    def __init__(self, padding, value):
        super().__init__(value)
        self.padding = _ntuple(padding, 6)


class _ReflectionPadNd(Module):
    __constants__ = ["padding"]

    def forward(self, input):
        return F.pad(input, self.padding, "reflect")

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_ReflectionPadNd):
    """Pad the last dim with its reflection (edge not repeated)."""

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 2)


class ReflectionPad2d(_ReflectionPadNd):
    """Pad the last 2 dims with their reflection."""

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 4)


class ReflectionPad3d(_ReflectionPadNd):
    """Pad the last 3 dims with their reflection."""

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 6)


class _ReplicationPadNd(Module):
    __constants__ = ["padding"]

    def forward(self, input):
        return F.pad(input, self.padding, "replicate")

    def extra_repr(self):
        return f"{self.padding}"


class ReplicationPad1d(_ReplicationPadNd):
    """Pad the last dim by repeating its edge."""

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 2)


class ReplicationPad2d(_ReplicationPadNd):
    """Pad the last 2 dims by repeating their edges."""

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 4)


class ReplicationPad3d(_ReplicationPadNd):
    """Pad the last 3 dims by repeating their edges."""

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 6)


class ZeroPad1d(ConstantPad1d):
    """Pad the last dim with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pad the last 2 dims with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pad the last 3 dims with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"
