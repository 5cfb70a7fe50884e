"""detect_anomaly: remember each node's forward stack; name the node behind a NaN in backward."""
import os
import traceback
import warnings

from .. import dtypes as _dt
from ..backend import get_array_module
from .grad_mode import state as _state


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
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self._prev = (_state.anomaly, _state.anomaly_check_nan)
        _state.anomaly = True
        _state.anomaly_check_nan = self.check_nan
        return self

    def __exit__(self, *exc):
        _state.anomaly, _state.anomaly_check_nan = self._prev
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

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _state.anomaly, _state.anomaly_check_nan = self._prev
        return False


_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_frames():
    frames = traceback.extract_stack()[:-3]
    keep = [f for f in frames if not os.path.abspath(f.filename).startswith(_PKG + os.sep)]
    return "".join(traceback.format_list(keep or frames))


def record_trace(node):
    """Store the forward stack on ``node`` (called by Function.apply under anomaly mode)."""
    node._trace = _user_frames()


def check_nan(node, grads):
    """Raise if a backward produced NaN (torch checks NaN only: an inf gradient passes),
    naming the node."""
    if not _state.anomaly_check_nan:
        return
    for i, g in enumerate(grads):
        if g is None or _dt.kind(g._array.dtype) not in "fc":
            continue
        arr = g._array
        xp = get_array_module(arr)
        if bool(xp.isnan(arr).any()):
            raise RuntimeError("Function '%s' returned nan values in its %dth output."
                               % (node.name(), i))


def warn_stack(node):
    """Warn, as torch's engine does when a node's backward fails under anomaly mode, with the
    stack of the forward call that made the node."""
    trace = getattr(node, "_trace", None)
    if not trace:
        warnings.warn("Error detected in %s. No forward pass information available. Enable "
                      "detect anomaly during forward pass for more information." % node.name(),
                      stacklevel=4)
    else:
        warnings.warn("Error detected in %s. Traceback of forward call that caused the "
                      "error:\n%s" % (node.name(), trace), stacklevel=4)
