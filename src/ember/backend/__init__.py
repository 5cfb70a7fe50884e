"""The array libraries behind ember's devices: the only package that knows which one it talks to.

A tensor's data is one array of its device's library: ``numpy.ndarray`` on ``cpu``, a CuPy
array on ``cuda`` (when CuPy and a GPU exist), and a ``StrictArray`` on ``strict``, the test
device that refuses host/device mixing as CuPy does. Ops take their array module from their
inputs (``get_array_module``); creation functions from a device (``backend_for``). The few
operations whose spelling differs between libraries live on the ``Backend`` objects.

Example:
    >>> import ember
    >>> from ember.backend import get_array_module
    >>> get_array_module(ember.zeros(2)._array).__name__
    'numpy'
    >>> ember.zeros(2, device="strict").device
    device(type='strict')
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple, Type

import numpy as np

from ._device import DeviceLike, device

__all__ = ["device", "Backend", "get_array_module", "backend_of", "backend_for",
           "array_types", "is_array", "same_device", "align_devices", "errstate",
           "set_default_device", "get_default_device", "to_host", "matmul2d", "quiet",
           "CudaUnavailableError", "cuda_status"]

_ndarray = np.ndarray


class CudaUnavailableError(AssertionError, RuntimeError):
    """CUDA was asked for but cannot be used (torch raises AssertionError here; this is also a
    RuntimeError, the type ember's device errors have)."""


class Backend:
    """One device type: its array module ``xp`` and the operations that differ by library."""

    type: str = "cpu"
    xp: Any = np
    array_type: Type[Any] = np.ndarray

    def __init__(self) -> None:
        self.device = device(self.type)

    def asarray(self, data: Any, dtype: Any = None) -> Any:
        """``data`` (host data or an array of any device) as an array of this device."""
        if type(data) is not np.ndarray and type(data) in _BY_TYPE:
            data = to_host(data)
        return np.asarray(data, dtype=dtype)

    def to_host(self, arr: Any) -> np.ndarray:
        """``arr`` as a host ``numpy.ndarray`` (no copy where the library allows)."""
        return arr

    def sliding_window_view(self, arr: Any, window_shape: Any, axis: Any = None) -> Any:
        """Strided windows over ``arr`` (a view), as ``numpy.lib.stride_tricks``'s."""
        return np.lib.stride_tricks.sliding_window_view(arr, window_shape, axis)

    def as_strided(self, arr: Any, shape: Tuple[int, ...], strides: Tuple[int, ...]) -> Any:
        """A view of ``arr``'s memory with the given shape and byte strides."""
        return np.lib.stride_tricks.as_strided(arr, shape, strides)

    def scatter_add(self, arr: Any, index: Any, values: Any) -> None:
        """``arr[index] += values`` with repeated indices summed (``np.add.at``)."""
        np.add.at(arr, index, values)

    def index_add_rows(self, out: Any, index: Any, rows: Any) -> None:
        """``out[index[i]] += rows[i]`` for every i, repeated indices summed (embedding's
        backward).

        NOTE: NumPy: sorting the rows by index and summing each run (``add.reduceat``) is much
        faster than ``np.add.at``.
        """
        order = np.argsort(index, kind="stable")
        keys = index[order]
        starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
        out[keys[starts]] += np.add.reduceat(rows[order], starts, axis=0)

    def data_ptr(self, arr: Any) -> int:
        """The address of ``arr``'s first element."""
        return arr.__array_interface__["data"][0]

    def device_of(self, arr: Any) -> device:
        """The device ``arr`` lives on (with its index where the device type has several)."""
        return self.device

    def check_index(self, index: Optional[int]) -> None:
        """Raise unless new arrays can be placed on device index ``index`` of this type."""

    def scipy(self, name: str) -> Any:
        """SciPy's sub-package ``name`` (``"special"``, ``"linalg"``, ...) for this device's
        arrays: ``scipy.<name>`` on the CPU (``cupyx.scipy.<name>`` on CUDA)."""
        import importlib
        return importlib.import_module("scipy." + name)

    def is_available(self) -> bool:
        return True

    def synchronize(self) -> None:
        """Wait for queued work (nothing to wait for on the CPU)."""


class StrictBackend(Backend):
    """The strict test device (NumPy behind CuPy's rules, see ``_strict``)."""

    type: str = "strict"

    def __init__(self) -> None:
        from ._strict import StrictArray, strict_numpy
        self.xp = strict_numpy
        self.array_type = StrictArray
        super().__init__()

    def asarray(self, data: Any, dtype: Any = None) -> Any:
        if type(data) is self.array_type:
            return data if dtype is None or data.dtype == dtype else data.astype(dtype)
        host = np.array(to_host(data) if type(data) in _BY_TYPE else data, dtype=dtype,
                        copy=True)
        return self.array_type(host)

    def to_host(self, arr: Any) -> np.ndarray:
        return arr._a.copy()

    def sliding_window_view(self, arr: Any, window_shape: Any, axis: Any = None) -> Any:
        return self.array_type(np.lib.stride_tricks.sliding_window_view(arr._a, window_shape,
                                                                        axis))

    def as_strided(self, arr: Any, shape: Tuple[int, ...], strides: Tuple[int, ...]) -> Any:
        return self.array_type(np.lib.stride_tricks.as_strided(arr._a, shape, strides))

    def scatter_add(self, arr: Any, index: Any, values: Any) -> None:
        self.xp.add.at(arr, index, values)

    def index_add_rows(self, out: Any, index: Any, rows: Any) -> None:
        self.scatter_add(out, index, rows)

    def data_ptr(self, arr: Any) -> int:
        return arr._a.__array_interface__["data"][0]

    def scipy(self, name: str) -> Any:
        from ._strict import strict_module
        return strict_module(super().scipy(name))


class MetaBackend(Backend):
    """The meta device: shapes and dtypes without data (see ``_meta``)."""

    type: str = "meta"

    def __init__(self) -> None:
        from ._meta import MetaArray, meta_numpy
        self.xp = meta_numpy
        self.array_type = MetaArray
        super().__init__()

    def asarray(self, data: Any, dtype: Any = None) -> Any:
        from ._meta import empty
        return empty(np.shape(data), dtype if dtype is not None else
                     getattr(data, "dtype", None) or np.asarray(data).dtype)

    def to_host(self, arr: Any) -> np.ndarray:
        from ._meta import NO_DATA
        raise NotImplementedError(NO_DATA)

    def sliding_window_view(self, arr: Any, window_shape: Any, axis: Any = None) -> Any:
        return self.xp.lib.stride_tricks.sliding_window_view(arr, window_shape, axis)

    def as_strided(self, arr: Any, shape: Tuple[int, ...], strides: Tuple[int, ...]) -> Any:
        from ._meta import empty
        return empty(shape, arr.dtype)

    def scatter_add(self, arr: Any, index: Any, values: Any) -> None:
        """Nothing to write."""

    def index_add_rows(self, out: Any, index: Any, rows: Any) -> None:
        """Nothing to write."""

    def data_ptr(self, arr: Any) -> int:
        return 0


cpu = Backend()
_BY_TYPE: Dict[type, Backend] = {np.ndarray: cpu}
_BY_DEVICE: Dict[str, Backend] = {"cpu": cpu}


def _cuda() -> Backend:
    from ._cupy import make_backend      # CuPy is looked for on the first CUDA request only
    return make_backend()


_FACTORIES: Dict[str, Callable[[], Backend]] = {"strict": StrictBackend, "cuda": _cuda,
                                                 "meta": MetaBackend}
_XP: Dict[type, Any] = {np.ndarray: np}
_default: Dict[str, Optional[device]] = {"device": None}


def _register(b: Backend) -> Backend:
    _BY_TYPE[b.array_type] = b
    _BY_DEVICE[b.type] = b
    _XP[b.array_type] = b.xp
    return b


def backend_for(dev: Optional[DeviceLike] = None) -> Backend:
    """The backend of a device (``None``: the default device)."""
    if dev is None:
        dev = _default["device"]
        if dev is None:
            return cpu
    index = None
    if isinstance(dev, str) and ":" not in dev:
        t = dev
    else:
        d = device(dev)
        t, index = d.type, d.index
    b = _BY_DEVICE.get(t)
    if b is None:
        if t not in ("cpu", "cuda", "meta", "mps", "strict"):
            device(t)   # raises torch's message for an unknown type
        factory = _FACTORIES.get(t)
        if factory is None:
            raise RuntimeError(_unavailable(t))
        b = _register(factory())
    if index is not None:
        b.check_index(index)
    return b


def _unavailable(t: str) -> str:
    return "ember has no %s backend; tensors can live on cpu (or the strict test device)" % t


def cuda_status() -> Tuple[bool, str]:
    """``(True, "")`` when the CUDA device can be used, else ``(False, why)`` naming what is
    missing (CuPy, or a GPU/driver) and how to install it. Imports CuPy on the first call."""
    b = _BY_DEVICE.get("cuda")
    if b is not None:
        return True, ""
    from ._cupy import probe
    found, why = probe()
    return found is not None, why


def align_devices(a: Any, b: Any) -> Tuple[Any, Any]:
    """``a`` and ``b`` (arrays of two array types) on one device, as torch's binary ops allow:
    a 0-d CPU array joins the other's device (it acts as a scalar); anything else raises
    torch's mixed-device message."""
    if type(b) is _ndarray and b.ndim == 0 and type(a) in _BY_TYPE:
        return a, _BY_TYPE[type(a)].asarray(b)
    if type(a) is _ndarray and a.ndim == 0 and type(b) in _BY_TYPE:
        return _BY_TYPE[type(b)].asarray(a), b
    same_device(a, b)
    return a, b


def backend_of(arr: Any) -> Backend:
    """The backend whose array type ``arr`` is (cpu for NumPy arrays and scalars)."""
    return _BY_TYPE.get(type(arr), cpu)


def get_array_module(*arrays: Any) -> Any:
    """The array module (``numpy``, ``cupy``, ...) of the given arrays; NumPy for none.

    Mixing arrays of two devices raises torch's message.
    """
    xp = np
    for a in arrays:
        m = _XP.get(type(a))
        if m is not None and m is not xp:
            if xp is not np:
                raise RuntimeError(_mix_message(arrays))
            xp = m
    return xp


def _mix_message(arrays: Any) -> str:
    names = []
    for a in arrays:
        b = _BY_TYPE.get(type(a))
        if b is not None and str(b.device_of(a)) not in names:
            names.append(str(b.device_of(a)))
    if "meta" in names:         # (torch's meta kernels check each operand against the first)
        return "Tensor on device %s is not on the expected device %s!" % (names[1], names[0])
    if names[-1] == "cpu":      # torch's TensorIterator names the non-CPU device first
        names.reverse()
    return ("Expected all tensors to be on the same device, but found at least two devices, "
            "%s and %s!" % (names[-1], names[0]))


def same_device(*arrays: Any) -> None:
    """Raise torch's message unless every array lives on one device."""
    first = type(arrays[0])
    for a in arrays[1:]:
        if type(a) is not first and (type(a) in _BY_TYPE) and (first in _BY_TYPE):
            raise RuntimeError(_mix_message((arrays[0], a)))


def matmul2d(a: Any, b: Any) -> Any:
    """``a @ b`` for 2-D arrays, through ``dot`` for small NumPy products.

    NOTE: measured: ``np.matmul`` takes ~7 us for a (100, 1) @ (1, 50) outer product and is
    slower than ``np.dot`` below ~1M multiply-adds; above, ``np.matmul`` is as fast or faster.
    """
    if type(a) is _ndarray and a.shape[0] * a.shape[1] * b.shape[1] < 1 << 20:
        return np.dot(a, b)
    return a @ b


def array_types() -> Tuple[type, ...]:
    """The array types of the backends in use."""
    return tuple(_BY_TYPE)


def is_array(x: Any) -> bool:
    """True for an array of any backend."""
    return type(x) in _BY_TYPE


def to_host(arr: Any) -> np.ndarray:
    """``arr`` (an array of any backend) as a host ``numpy.ndarray``."""
    if type(arr) is _ndarray:
        return arr
    return _BY_TYPE.get(type(arr), cpu).to_host(arr)


# Floating-point error handling for the enclosed array calls. NumPy's context manager serves
# every backend: CuPy does not signal floating-point errors, so it has nothing to set there.
errstate = np.errstate


def quiet() -> Any:
    """A context in which floating-point overflow, division by zero and invalid operations
    give inf/nan silently, as torch's kernels do."""
    return np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore")


try:    # (NumPy's own switch behind errstate: a tenth of the context manager's cost)
    from numpy._core._ufunc_config import (  # type: ignore[attr-defined]
        _extobj_contextvar, _make_extobj)
    _SILENT = _make_extobj(all="ignore")

    def silence() -> Any:
        """Make floating-point errors silent, as ``quiet()``, until ``unsilence(token)``."""
        return _extobj_contextvar.set(_SILENT)

    def unsilence(token: Any) -> None:
        _extobj_contextvar.reset(token)
except ImportError:     # pragma: no cover  (another NumPy)
    def silence() -> Any:
        return np.seterr(all="ignore")

    def unsilence(token: Any) -> None:
        np.seterr(**token)


def set_default_device(dev: Optional[DeviceLike]) -> None:
    """The device creation functions use when given none (``None``: cpu)."""
    if dev is not None:
        backend_for(dev)    # fails now, not at the first tensor, for a device we cannot use
        dev = device(dev)
        if dev.type == "cpu":
            dev = None
    _default["device"] = dev


def get_default_device() -> device:
    """The device creation functions use when given none."""
    return _default["device"] or cpu.device
