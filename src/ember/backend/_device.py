"""``ember.device``: where a tensor's data lives (a device type and an optional index)."""
from __future__ import annotations

from typing import Any, Literal, Optional, Union

__all__ = ["device", "DeviceLike"]

_KNOWN = ("cpu", "cuda", "meta", "mps", "strict")


class device:
    """Where a tensor lives: ``device('cpu')``, ``device('cuda', 0)``, ``device('cuda:1')``.

    ``strict`` is ember's test device: NumPy underneath, but it refuses to mix its arrays with
    host arrays the way CuPy does, so a missed host call fails on a machine without a GPU.

    Example:
        >>> import ember
        >>> ember.device("cpu")
        device(type='cpu')
        >>> ember.device("cuda:1")
        device(type='cuda', index=1)
    """

    __slots__ = ("type", "index", "_prev")
    type: str
    index: Optional[int]
    _prev: "device"

    def __init__(self, type: Union[str, int, "device"] = "cpu",
                 index: Optional[int] = None) -> None:
        if isinstance(type, device):
            index = type.index
            type = type.type
        elif isinstance(type, int) and not isinstance(type, bool):
            index = type
            type = "cuda"
        elif not isinstance(type, str):
            raise TypeError("device() received an invalid combination of arguments - got (%r)"
                            % (type,))
        if ":" in type:
            type, idx = type.split(":", 1)
            if index is not None or not idx.isdigit():
                raise RuntimeError("Invalid device string: '%s:%s'" % (type, idx))
            index = int(idx)
        if type not in _KNOWN:
            raise RuntimeError("Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, "
                               "ideep, hip, ve, fpga, maia, xla, lazy, vulkan, mps, meta, hpu, "
                               "mtia, privateuseone device type at start of device string: %s"
                               % type)
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type = type
        self.index = index

    def __repr__(self) -> str:
        if self.index is None:
            return "device(type='%s')" % self.type
        return "device(type='%s', index=%d)" % (self.type, self.index)

    def __str__(self) -> str:
        return self.type if self.index is None else "%s:%d" % (self.type, self.index)

    def __eq__(self, other: Any) -> bool:
        # (as torch's: a device never equals a string, ``device("cpu") == "cpu"`` is False)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __enter__(self) -> "device":
        from . import set_default_device, get_default_device
        self._prev = get_default_device()
        set_default_device(self)
        return self

    def __exit__(self, *exc: Any) -> Literal[False]:
        from . import set_default_device
        set_default_device(self._prev)
        return False

    def __reduce__(self) -> Any:
        return (device, (self.type, self.index))


DeviceLike = Union[str, int, device]
