"""detect_anomaly: remember each node's forward stack; name the node behind a NaN in backward."""
import os
import traceback
import weakref

import numpy as np

from ..backend import get_array_module
from .grad_mode import state as _state

_ndarray = np.ndarray

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]


def is_anomaly_enabled():
    """True while anomaly detection is on in this thread."""
    return _state.anomaly


def is_anomaly_check_nan_enabled():
    return _state.anomaly_check_nan


class detect_anomaly:
    """Context manager and decorator that turns on anomaly detection.

    Every node records the stack of the forward call that made it; a backward that produces
    NaN or Inf raises an error naming the node and printing that stack.
    """

    def __init__(self, check_nan=True):
        self.check_nan = check_nan

    def __enter__(self):
        self._prev = (_state.anomaly, _state.anomaly_check_nan)
        _state.anomaly = True
        _state.anomaly_check_nan = self.check_nan
        return self

    def __exit__(self, *exc):
        _state.anomaly, _state.anomaly_check_nan = self._prev
        if not _state.anomaly:
            _unprotect_all()
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """Turn anomaly detection on or off (also usable as a context manager)."""

    def __init__(self, mode, check_nan=True):
        self._prev = (_state.anomaly, _state.anomaly_check_nan)
        _state.anomaly = bool(mode)
        _state.anomaly_check_nan = check_nan
        if not mode:
            _unprotect_all()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _state.anomaly, _state.anomaly_check_nan = self._prev
        if not _state.anomaly:
            _unprotect_all()
        return False


_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_frames():
    frames = traceback.extract_stack()[:-3]
    keep = [f for f in frames if not os.path.abspath(f.filename).startswith(_PKG + os.sep)]
    return "".join(traceback.format_list(keep or frames))


# id(array) -> [weakref to the array, count of nodes protecting it, weakref to the last node]
_protected = {}


def protect_saved(node):
    """Mark the arrays ``node`` saved read-only, so an in-place change raises at once.

    Called when tensors are saved under anomaly mode; :func:`unprotect_saved` undoes it when
    the node's buffers are freed (or the node is garbage collected). Only host NumPy arrays
    have a writeable flag (CuPy's have none): on other devices the version check at backward
    reports the change instead.
    """
    arrays = []
    for entry in node._saved or ():
        arr = None if entry is None else entry[0]._array
        if not isinstance(arr, _ndarray):
            continue
        rec = _protected.get(id(arr))
        if rec is not None and rec[0]() is arr:
            rec[1] += 1
            rec[2] = weakref.ref(node)
        elif arr.flags.writeable:
            arr.flags.writeable = False
            _protected[id(arr)] = [weakref.ref(arr), 1, weakref.ref(node)]
        else:
            continue
        arrays.append(arr)
    if arrays:
        node._protected = arrays
        weakref.finalize(node, _unprotect, arrays)


def unprotect_saved(node):
    """Make ``node``'s saved arrays writable again (its buffers are being freed)."""
    arrays = getattr(node, "_protected", None)
    if arrays:
        node._protected = None
        _unprotect(arrays)


def _unprotect(arrays):
    for arr in arrays:
        rec = _protected.get(id(arr))
        if rec is None or rec[0]() is not arr:
            continue
        rec[1] -= 1
        if rec[1] <= 0:
            del _protected[id(arr)]
            try:
                arr.flags.writeable = True
            except ValueError:
                pass
    arrays[:] = []


def _unprotect_all():
    """Leaving anomaly mode: saved arrays become writable (the version check still applies)."""
    for rec in list(_protected.values()):
        arr = rec[0]()
        if arr is not None:
            rec[1] = 1
            _unprotect([arr])
    _protected.clear()


def raise_if_saved(arr, op):
    """Raise the anomaly-mode error if ``arr`` (or an array it views) is protected as saved.

    Only host arrays are ever protected (see :func:`protect_saved`), so the walk up the
    ``base`` chain of views stops at the first array that is not a NumPy one.
    """
    a = arr
    while isinstance(a, _ndarray):
        rec = _protected.get(id(a))
        if rec is not None and rec[0]() is a:
            node = rec[2]()
            name = node.name() if node is not None else "a backward node"
            trace = getattr(node, "_trace", None)
            where = ("\nThe forward call that saved it:\n" + trace) if trace else ""
            raise RuntimeError(
                "%s: one of the variables needed for gradient computation is being modified by "
                "an inplace operation: it was saved for backward by %s (anomaly mode marks saved "
                "tensors read-only, so the error is raised at the in-place change). Clone it "
                "before modifying it, or modify it after backward().%s" % (op, name, where))
        a = a.base


def record_trace(node):
    """Store the forward stack on ``node`` (called by Function.apply under anomaly mode)."""
    node._trace = _user_frames()


def check_nan(node, grads):
    """Raise if a backward produced NaN/Inf, naming the node and its forward stack."""
    if not _state.anomaly_check_nan:
        return
    for i, g in enumerate(grads):
        if g is None or g._array.dtype.kind != "f":
            continue
        arr = g._array
        xp = get_array_module(arr)
        if not bool(xp.isfinite(arr).all()):
            bad = "nan" if bool(xp.isnan(arr).any()) else "inf"
            trace = node._trace or "(no forward trace recorded: the node was created outside " \
                                   "detect_anomaly)\n"
            raise RuntimeError("Function '%s' returned %s values in its %dth output.\n"
                               "Traceback of forward call that caused the error:\n%s"
                               % (node.name(), bad, i, trace))
