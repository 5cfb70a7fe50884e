"""Padding layers: constant, zero, reflection, replication and circular, in 1-3 dims."""
from .. import functional as F
from .module import Module

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d"]


def _ntuple(padding, n):
    if isinstance(padding, (list, tuple)):
        return tuple(padding)
    return (padding,) * n


class _PadNd(Module):
    _n = 2
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, self._n)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return "{}".format(self.padding)


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return "padding={}, value={}".format(self.padding, self.value)


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with ``value``; ``padding``: int or (left, right)."""

    _n = 2


class ConstantPad2d(_ConstantPadNd):
    """Pad the last 2 dims with ``value``; ``padding``: int or (left, right, top, bottom)."""

    _n = 4


class ConstantPad3d(_ConstantPadNd):
    """Pad the last 3 dims with ``value``."""

    _n = 6


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return "{}".format(self.padding)


class ZeroPad1d(_ZeroPadNd):
    """Pad the last dim with zeros."""

    _n = 2


class ZeroPad2d(_ZeroPadNd):
    """Pad the last 2 dims with zeros."""

    _n = 4


class ZeroPad3d(_ZeroPadNd):
    """Pad the last 3 dims with zeros."""

    _n = 6


class ReflectionPad1d(_PadNd):
    """Pad the last dim with its reflection (edge not repeated)."""

    _n, _mode = 2, "reflect"


class ReflectionPad2d(_PadNd):
    """Pad the last 2 dims with their reflection."""

    _n, _mode = 4, "reflect"


class ReflectionPad3d(_PadNd):
    """Pad the last 3 dims with their reflection."""

    _n, _mode = 6, "reflect"


class ReplicationPad1d(_PadNd):
    """Pad the last dim by repeating its edge."""

    _n, _mode = 2, "replicate"


class ReplicationPad2d(_PadNd):
    """Pad the last 2 dims by repeating their edges."""

    _n, _mode = 4, "replicate"


class ReplicationPad3d(_PadNd):
    """Pad the last 3 dims by repeating their edges."""

    _n, _mode = 6, "replicate"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input):
        self._check_input_dim(input)
        return F.pad(input, self.padding, "circular")

    def _check_input_dim(self, input):
        want = self._n // 2
        if input.dim() not in (want + 1, want + 2):
            raise ValueError("expected %dD or %dD input (got %dD input)"
                             % (want + 1, want + 2, input.dim()))


class CircularPad1d(_CircularPadNd):
    """Pad the last dim by wrapping around."""

    _n = 2


class CircularPad2d(_CircularPadNd):
    """Pad the last 2 dims by wrapping around."""

    _n = 4


class CircularPad3d(_CircularPadNd):
    """Pad the last 3 dims by wrapping around."""

    _n = 6
