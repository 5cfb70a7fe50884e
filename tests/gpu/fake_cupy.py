"""A stand-in for CuPy on machines without a GPU (tests only).

``fake_cupy`` is the strict test device's array module (NumPy behind CuPy's rules) dressed as
CuPy: ``cupy.ndarray`` is ``StrictArray`` and ``cupy.cuda`` answers for one GPU, ``cuda:0``.
``install()`` puts it behind the device type ``"cuda"`` (ember's real ``CupyBackend`` on top),
so ``device='cuda'``, ``.cuda()``, ``ember.cuda.*`` run through ember's real code paths;
``uninstall(state)`` puts the registries back. While installed, the ``strict`` device is off
(its array type stands for CUDA's).
"""
import importlib
import types

import scipy  # noqa: F401

from ember import backend as _B
from ember.backend import _cupy
from ember.backend._strict import StrictArray, strict_module, strict_numpy

__all__ = ["fake_cupy", "FakeCupyBackend", "install", "uninstall", "POOL"]


class _Pool:
    """CuPy's memory pool, as counters the tests can read."""

    def __init__(self):
        self.used = 1024
        self.total = 4096
        self.freed = 0

    def used_bytes(self):
        return self.used

    def total_bytes(self):
        return self.total

    def free_all_blocks(self):
        self.freed += 1
        self.total = self.used


POOL = _Pool()
_PINNED = _Pool()


class _RuntimeError(RuntimeError):
    """``cupy_backends.cuda.api.runtime.CUDARuntimeError``."""


class _Runtime:
    current = 0

    @staticmethod
    def getDeviceCount():
        return 1

    @classmethod
    def getDevice(cls):
        return cls.current

    @classmethod
    def setDevice(cls, i):
        if not 0 <= i < 1:
            raise _RuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
        cls.current = i

    @staticmethod
    def getDeviceProperties(i):
        if i != 0:
            raise _RuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
        return {"name": b"Fake GPU (strict device)", "major": 9, "minor": 0,
                "totalGlobalMem": 16 << 30, "multiProcessorCount": 4, "l2CacheSize": 1 << 20}

    @staticmethod
    def deviceSynchronize():
        _Runtime.syncs += 1

    syncs = 0


class _Stream:
    null = None

    def __init__(self, non_blocking=False, ptr=1):
        self.ptr = ptr
        self.done = True

    def synchronize(self):
        pass

    def record(self, event=None):
        return _Event()

    def wait_event(self, event):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_Stream.null = _Stream(ptr=0)


class _Event:
    def __init__(self, block=False, disable_timing=False, interprocess=False):
        self.done = True
        self.t = None

    def record(self, stream=None):
        import time
        self.t = time.perf_counter()

    def synchronize(self):
        pass


def _elapsed(start, end):
    return (end.t - start.t) * 1e3


fake_cuda = types.SimpleNamespace(runtime=_Runtime, Stream=_Stream, Event=_Event,
                                  get_current_stream=lambda: _Stream.null,
                                  get_elapsed_time=_elapsed)


class _FakeCupy(types.ModuleType):
    """CuPy's namespace: CUDA's pieces here, the array functions from ``strict_numpy``."""

    def __getattr__(self, name):
        return getattr(strict_numpy, name)


fake_cupy = _FakeCupy("fake_cupy")
fake_cupy.__version__ = "0+fake"
fake_cupy.ndarray = StrictArray
fake_cupy.cuda = fake_cuda
fake_cupy.get_default_memory_pool = lambda: POOL
fake_cupy.get_default_pinned_memory_pool = lambda: _PINNED
fake_cupyx = types.SimpleNamespace(scatter_add=lambda a, i, v: strict_numpy.add.at(a, i, v))


class FakeCupyBackend(_cupy.CupyBackend):
    """ember's ``CupyBackend`` over ``fake_cupy``; only what needs real device memory (the
    array's GPU id and address) and ``cupyx.scipy`` are answered here."""

    def __init__(self):
        super().__init__(fake_cupy, fake_cupyx)

    def _device_id(self, arr):
        return 0

    def data_ptr(self, arr):
        return arr._a.__array_interface__["data"][0]

    def _device_scipy(self, name):
        return strict_module(importlib.import_module("scipy." + name))


def install():
    """Make ``"cuda"`` the fake GPU; returns the state ``uninstall`` restores."""
    state = (dict(_B._BY_TYPE), dict(_B._BY_DEVICE), dict(_B._FACTORIES), dict(_B._XP),
             dict(_B._default), dict(_cupy._found))
    _B._BY_TYPE.pop(StrictArray, None)
    _B._XP.pop(StrictArray, None)
    _B._BY_DEVICE.pop("strict", None)
    _B._BY_DEVICE.pop("cuda", None)
    _B._FACTORIES.pop("strict", None)
    _B._FACTORIES["cuda"] = FakeCupyBackend
    _cupy._found.clear()
    _cupy._found.update(cupy=fake_cupy, why="")
    _Runtime.current = 0
    return state


def uninstall(state):
    for live, saved in zip((_B._BY_TYPE, _B._BY_DEVICE, _B._FACTORIES, _B._XP, _B._default,
                            _cupy._found), state):
        live.clear()
        live.update(saved)
