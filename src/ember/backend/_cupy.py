"""The ``cuda`` device: CuPy arrays on an NVIDIA GPU (``pip install "ember[gpu]"``).

This module is imported the first time a CUDA device is asked for (``device='cuda'``,
``.cuda()``, ``ember.cuda.is_available()``); CuPy itself is imported by ``probe`` then, never at
``import ember``. ``probe`` keeps its answer: the CuPy module, or why CUDA cannot be used (CuPy
not installed, or installed but no GPU/driver).

ember places CUDA tensors on the *current* CUDA device (``ember.cuda.set_device``), as CuPy
does; ``cuda:N`` names that device or fails with a clear message (see ``check_index``).
"""
from __future__ import annotations

import importlib
from typing import Any, Dict, Optional, Tuple

import numpy as np

from . import Backend, CudaUnavailableError, _BY_TYPE, to_host
from ._device import device
from ._device import device as _Device     # (the class: ``device`` is a property below)

__all__ = ["CupyBackend", "probe", "make_backend", "INSTALL", "ORDINAL"]

INSTALL = 'pip install "ember[gpu]" (CuPy for CUDA 12: cupy-cuda12x)'

_found: Dict[str, Any] = {}

ORDINAL = ("CUDA error: invalid device ordinal\nCUDA kernel errors might be asynchronously "
            "reported at some other API call, so the stacktrace below might be incorrect.\n"
            "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\nCompile with "
            "`TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")


def probe() -> Tuple[Optional[Any], str]:
    """``(cupy, "")`` when CuPy imports and sees a GPU, else ``(None, why)``; checked once."""
    if "cupy" not in _found:
        _found["cupy"], _found["why"] = _probe()
    return _found["cupy"], _found["why"]


def _probe() -> Tuple[Optional[Any], str]:
    try:
        import cupy
    except ImportError as e:
        return None, ("CuPy is not installed (%s). Install it with %s on a machine with an "
                      "NVIDIA GPU and driver" % (e, INSTALL))
    except Exception as e:      # a broken CuPy install (wrong CUDA wheel, missing library)
        return None, ("CuPy is installed but failed to import (%s: %s); install the CuPy "
                      "wheel that matches the driver's CUDA version (%s)"
                      % (type(e).__name__, e, INSTALL))
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:      # no driver, or a driver older than the wheel's CUDA
        return None, ("CuPy %s is installed but cannot reach a GPU: %s. Check the NVIDIA driver "
                      "(nvidia-smi) and that the CuPy wheel matches its CUDA version (%s)"
                      % (getattr(cupy, "__version__", "?"), str(e).strip() or type(e).__name__,
                         INSTALL))
    if n < 1:
        return None, ("CuPy %s is installed but sees no GPU (device count 0; check "
                      "CUDA_VISIBLE_DEVICES and nvidia-smi)" % getattr(cupy, "__version__", "?"))
    return cupy, ""


def make_backend() -> "CupyBackend":
    """The CUDA backend (the ``cuda`` factory); raises ``CudaUnavailableError`` saying what is
    missing."""
    cp, why = probe()
    if cp is None:
        raise CudaUnavailableError("ember cannot use device 'cuda': " + why)
    return CupyBackend(cp)


class CupyBackend(Backend):
    """CuPy arrays on the current CUDA device."""

    type: str = "cuda"

    def __init__(self, cupy: Any, cupyx: Any = None) -> None:
        self.xp = cupy
        self.array_type = cupy.ndarray
        if cupyx is None:
            cupyx = importlib.import_module("cupyx")
        self._cupyx = cupyx
        add_at = getattr(cupy.add, "at", None)      # CuPy >= 13; cupyx.scatter_add before
        self._add_at = add_at if add_at is not None else cupyx.scatter_add
        self._devices: Dict[int, _Device] = {}
        self._scipy: Dict[str, Any] = {}
        super().__init__()

    # The device a new array lands on: the current CUDA device.
    @property
    def device(self) -> _Device:
        return self._device(self.current())

    @device.setter
    def device(self, value: _Device) -> None:
        pass

    def _device(self, index: int) -> _Device:
        d = self._devices.get(index)
        if d is None:
            d = self._devices[index] = device("cuda", index)
        return d

    def current(self) -> int:
        """The index of the current CUDA device."""
        return self.xp.cuda.runtime.getDevice()

    def count(self) -> int:
        return self.xp.cuda.runtime.getDeviceCount()

    def _device_id(self, arr: Any) -> int:
        return arr.device.id

    def device_of(self, arr: Any) -> _Device:
        return self._device(self._device_id(arr))

    def check_index(self, index: Optional[int]) -> None:
        """Raise unless ``cuda:index`` can hold new tensors: torch's message for an index past
        the last GPU; a clear one for another GPU than the current (ember uses the current
        device, as CuPy)."""
        if index is None:
            return
        if index >= self.count():
            raise RuntimeError(ORDINAL)
        current = self.current()
        if index != current:
            raise RuntimeError(
                "ember places CUDA tensors on the current CUDA device (cuda:%d); to use cuda:%d, "
                "call ember.cuda.set_device(%d) (or enter `with ember.cuda.device(%d):`) first"
                % (current, index, index, index))

    def asarray(self, data: Any, dtype: Any = None) -> Any:
        if type(data) is self.array_type:
            if self._device_id(data) != self.current():
                data = data.copy()      # CuPy copies onto the current device
            return data if dtype is None or data.dtype == dtype else data.astype(dtype)
        if type(data) is not np.ndarray and type(data) in _BY_TYPE:   # another device
            data = to_host(data)
        return self.xp.asarray(data, dtype=dtype)

    def to_host(self, arr: Any) -> np.ndarray:
        return arr.get()

    def sliding_window_view(self, arr: Any, window_shape: Any, axis: Any = None) -> Any:
        return self.xp.lib.stride_tricks.sliding_window_view(arr, window_shape, axis)

    def as_strided(self, arr: Any, shape: Tuple[int, ...], strides: Tuple[int, ...]) -> Any:
        return self.xp.lib.stride_tricks.as_strided(arr, shape, strides)

    def scatter_add(self, arr: Any, index: Any, values: Any) -> None:
        self._add_at(arr, index, values)

    def index_add_rows(self, out: Any, index: Any, rows: Any) -> None:
        self._add_at(out, index, rows)

    def data_ptr(self, arr: Any) -> int:
        return arr.data.ptr

    def scipy(self, name: str) -> Any:
        """``cupyx.scipy.<name>``; a function CuPy lacks runs in SciPy on host copies."""
        ns = self._scipy.get(name)
        if ns is None:
            try:
                dev = self._device_scipy(name)
            except ImportError:
                dev = None
            ns = self._scipy[name] = _WithHostFallback(self, dev, super().scipy(name))
        return ns

    def _device_scipy(self, name: str) -> Any:
        return importlib.import_module("cupyx.scipy." + name)

    def is_available(self) -> bool:
        return True

    def synchronize(self) -> None:
        self.xp.cuda.runtime.deviceSynchronize()


class _WithHostFallback:
    """A device SciPy sub-package whose missing functions run SciPy's on host copies."""

    def __init__(self, backend: CupyBackend, dev: Any, host: Any) -> None:
        self._backend = backend
        self._dev = dev
        self._host = host

    def __getattr__(self, name: str) -> Any:
        fn = getattr(self._dev, name, None) if self._dev is not None else None
        if fn is None:
            fn = _on_host(self._backend, getattr(self._host, name))
        setattr(self, name, fn)
        return fn


def _on_host(backend: CupyBackend, fn: Any) -> Any:
    if not callable(fn):
        return fn
    kind = backend.array_type

    def down(x: Any) -> Any:
        if type(x) is kind:
            return backend.to_host(x)
        if type(x) in (list, tuple):
            return type(x)(down(v) for v in x)
        return x

    def up(x: Any) -> Any:
        if type(x) is np.ndarray or isinstance(x, np.generic):
            return backend.asarray(x)
        if type(x) in (list, tuple):
            return type(x)(up(v) for v in x)
        return x

    def call(*args: Any, **kwargs: Any) -> Any:
        return up(fn(*down(args), **{k: down(v) for k, v in kwargs.items()}))
    call.__name__ = getattr(fn, "__name__", "fn")
    return call
