"""Casting an op's inputs as ``amp.autocast`` wants: the state is ``grad_mode.state.autocast``
(device type -> dtype while enabled); ``inputs(policy, args)`` casts floating tensors (not
float64) to that dtype ("lower"), to float32 ("fp32"), or to the widest ("promote")."""
from .. import dtypes as _dt
from ..tensor import Tensor
from .grad_mode import state as _state

__all__ = ["inputs", "device_type"]


def device_type(args):
    """"cpu" or "cuda" (every other device) for the first tensor among ``args``."""
    for a in args:
        for t in (a if isinstance(a, (list, tuple)) else (a,)):
            if isinstance(t, Tensor):
                return "cpu" if t.device.type == "cpu" else "cuda"
    return None


def _eligible(t):
    return isinstance(t, Tensor) and t.is_floating_point() and t.dtype is not _dt.float64


def _cast_all(args, dtype):
    out = []
    for a in args:
        if isinstance(a, (list, tuple)) and any(isinstance(b, Tensor) for b in a):
            a = type(a)(b.to(dtype) if _eligible(b) and b.dtype is not dtype else b for b in a)
        elif _eligible(a) and a.dtype is not dtype:
            a = a.to(dtype)
        out.append(a)
    return tuple(out)


def _widest(args):
    widest = None
    for a in args:
        for t in (a if isinstance(a, (list, tuple)) else (a,)):
            if isinstance(t, Tensor) and t.is_floating_point():
                widest = t.dtype if widest is None else _dt.promote_types(widest, t.dtype)
    return widest


def inputs(policy, args):
    """``args`` cast by ``policy`` when autocast is on for their device (else unchanged)."""
    on = _state.autocast
    if not on:
        return args
    dtype = on.get(device_type(args))
    if dtype is None:
        return args
    if policy == "lower":
        return _cast_all(args, dtype)
    if policy == "fp32":
        return _cast_all(args, _dt.float32)
    if policy == "promote":
        widest = _widest(args)
        return args if widest is None else _cast_all(args, widest)
    return args
