"""CPU shared memory for ``Tensor.share_memory_()``: segments other processes can map.

A segment is an anonymous memory file (``memfd``) mapped ``MAP_SHARED``: a forked child
inherits the mapping, and another process maps the same memory from a duplicate of the file
descriptor (``torch.multiprocessing``'s ``file_descriptor`` strategy). The memory is freed when
the last mapping and descriptor are gone, so nothing is left behind in ``/dev/shm``.
"""
import mmap
import os
import weakref

import numpy as np

__all__ = ["share_arrays", "is_shared", "locate", "attach", "view"]

_PROT = mmap.PROT_READ | mmap.PROT_WRITE
_attached: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()   # (dev, ino) -> map


class _Segment(mmap.mmap):
    """A shared mapping of a memory file; ``fd`` stays open so the file can be sent on."""

    def __new__(cls, fd, size):
        self = super().__new__(cls, fd, size, mmap.MAP_SHARED, _PROT)
        self.fd = fd
        self.nbytes = size
        weakref.finalize(self, os.close, fd)
        return self


def _new_segment(nbytes):
    size = max(int(nbytes), 1)
    fd = os.memfd_create("ember_shm", os.MFD_CLOEXEC) if hasattr(os, "memfd_create") \
        else _tmp_fd()
    try:
        os.ftruncate(fd, size)
        seg = _Segment(fd, size)
    except BaseException:
        os.close(fd)
        raise
    st = os.fstat(fd)
    _attached[(st.st_dev, st.st_ino)] = seg
    return seg


def _tmp_fd():
    import tempfile
    fd, path = tempfile.mkstemp(prefix="ember_shm_", dir="/dev/shm" if
                                os.path.isdir("/dev/shm") else None)
    os.unlink(path)
    return fd


def _owner(arr):
    """The object that owns ``arr``'s memory (the end of its ``base`` chain)."""
    while isinstance(arr, np.ndarray) and arr.base is not None:
        arr = arr.base
    return arr


def _bounds(arr):
    lo = hi = arr.__array_interface__["data"][0]
    if arr.size:
        for n, s in zip(arr.shape, arr.strides):
            if s < 0:
                lo += (n - 1) * s
            else:
                hi += (n - 1) * s
        hi += arr.itemsize
    return lo, hi


def same_memory(a, b):
    """Whether ``a`` and ``b`` are views of one allocation."""
    return _owner(a) is _owner(b)


def is_shared(arr):
    """Whether the NumPy array ``arr`` lies in a shared segment."""
    return isinstance(_owner(arr), _Segment)


def share_arrays(arrays):
    """The arrays ``arrays`` (views of one allocation) copied into one new shared segment,
    laid out there as they were relative to each other."""
    bounds = [_bounds(a) for a in arrays]
    lo = min(b[0] for b in bounds)
    hi = max(b[1] for b in bounds)
    seg = _new_segment(hi - lo)
    out = []
    for a, (start, _) in zip(arrays, bounds):
        first = a.__array_interface__["data"][0] - lo
        new = np.ndarray(a.shape, a.dtype, buffer=seg, offset=first, strides=a.strides)
        new[...] = a
        out.append(new)
    return out


def locate(arr):
    """``(fd, segment size, byte offset of arr's first element)`` of a shared array."""
    seg = _owner(arr)
    start = np.ndarray((0,), np.uint8, buffer=seg).__array_interface__["data"][0]
    return seg.fd, seg.nbytes, arr.__array_interface__["data"][0] - start


def attach(fd, size):
    """The segment behind the memory-file descriptor ``fd`` (which this takes over); one
    mapping per file, so tensors sent separately still share their addresses."""
    st = os.fstat(fd)
    key = (st.st_dev, st.st_ino)
    seg = _attached.get(key)
    if seg is not None and seg.nbytes == size:
        os.close(fd)
        return seg
    seg = _Segment(fd, size)
    _attached[key] = seg
    return seg


def view(seg, offset, shape, strides, dtype):
    """The array of ``dtype``, ``shape`` and byte ``strides`` at byte ``offset`` of ``seg``."""
    return np.ndarray(tuple(shape), np.dtype(dtype), buffer=seg, offset=offset,
                      strides=tuple(strides))
