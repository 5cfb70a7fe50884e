"""dtype and device conversion (``to``), ``clone``, ``contiguous``, ``detach``, ``device``."""
import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..backend import backend_for, backend_of, device
from ..tensor import Tensor
from ._inplace import overwrite

__all__ = ["to", "clone", "contiguous", "detach", "device", "is_tensor", "is_floating_point",
           "numel", "is_nonzero", "copy_", "zero_", "fill_", "uniform_", "normal_",
           "bernoulli_", "random_", "exponential_", "cauchy_", "geometric_", "log_normal_",
           "get_device"]


class ToCopy(Function):
    """A copy in another dtype and/or on another device (torch's ``_to_copy``)."""

    node_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, a, np_dtype, target):
        arr = a._array
        ctx.source = backend_of(arr).device
        if target is not None and target is not backend_of(arr):
            arr = target.asarray(arr if np_dtype is None else arr.astype(np_dtype))
        elif np_dtype is not None:
            arr = arr.astype(np_dtype)
        else:
            arr = arr.copy()
        return Tensor._wrap(arr)

    @staticmethod
    def backward(ctx, grad_output):
        d = ctx._input_meta(0)[1]
        return to(grad_output, _dt.from_numpy_dtype(d), ctx.source), None, None


class Clone(Function):
    node_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, a):
        return Tensor._wrap(a._array.copy())

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


def _type_to_dtype(t):
    """A dtype from a dtype, a legacy type (``ember.FloatTensor``) or a string."""
    if isinstance(t, _dt.dtype):
        return t
    legacy = getattr(t, "_legacy_dtype", None)
    if legacy is not None:
        return legacy
    if isinstance(t, str):
        name = t.split(".")[-1]
        if name in _dt._BY_LEGACY:
            return _dt._BY_LEGACY[name]
        if name.startswith("cuda"):
            raise RuntimeError("ember has no CUDA backend in this build: cannot use %r" % t)
        return _dt.to_dtype(t)
    return _dt.to_dtype(t)


def _check_device(d):
    d = device(d)
    if d.type != "cpu":
        raise RuntimeError("ember has no %s backend in this build (torch.cuda.is_available() is "
                           "False); tensors can only live on the cpu" % d.type)


def to(input, *args, dtype=None, device=None, non_blocking=False, copy=False,
       memory_format=None):
    """Convert ``input`` to another dtype and/or device; returns ``input`` itself when nothing
    changes (unless ``copy=True``)."""
    for a in args:
        if isinstance(a, Tensor):
            dtype = a.dtype
            device = a.device
        elif isinstance(a, _dt.dtype) or (isinstance(a, type) and hasattr(a, "_legacy_dtype")):
            dtype = _type_to_dtype(a)
        elif isinstance(a, (str, globals()["device"])) or (isinstance(a, int) and
                                                           not isinstance(a, bool)):
            s = str(a)
            if s.startswith("torch.") or s in _dt._BY_NAME:
                dtype = _dt.to_dtype(s)
            else:
                device = a
        elif isinstance(a, bool):
            non_blocking = a
        else:
            dtype = _dt.to_dtype(a)
    target = None
    if device is not None:
        target = backend_for(device)
        if target is backend_of(input._array):
            target = None
    np_dtype = None
    if dtype is not None:
        np_dtype = _dt.to_dtype(dtype).np
        if np_dtype == input._array.dtype:
            np_dtype = None
    if np_dtype is None and target is None:
        return clone(input) if copy else input
    return ToCopy.apply(input, np_dtype, target)


def clone(input, *, memory_format=None):
    """A copy with its own memory (gradient flows back to ``input``)."""
    return Clone.apply(input)


def contiguous(input, memory_format=None):
    """``input`` if C-contiguous, else a contiguous copy."""
    if input._array.flags.c_contiguous:
        return input
    return Clone.apply(input)


def detach(input):
    """A tensor sharing values with ``input``, outside the graph."""
    return input.detach()


def get_device(input):
    """The device index of ``input``; -1 for CPU tensors."""
    return input.get_device()


def is_tensor(obj):
    """True for ember tensors."""
    return isinstance(obj, Tensor)


def is_floating_point(input):
    return input._array.dtype.kind == "f"


def numel(input):
    return input._array.size


def is_nonzero(input):
    if input._array.size != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input._array.item())


def copy_(input, src, non_blocking=False):
    """Copy ``src`` (broadcast, cast) into ``input``."""
    if not isinstance(src, Tensor):
        from .creation import as_tensor
        src = as_tensor(src)
    return overwrite(input, src, "copy_")


def zero_(input):
    """Fill with zeros in place."""
    return overwrite(input, 0, "zero_")


def fill_(input, value):
    """Fill with ``value`` in place."""
    if isinstance(value, Tensor) and value._array.ndim:
        raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with %d "
                           "dimensions." % value._array.ndim)
    return overwrite(input, value, "fill_")


def _random_fill(input, arr, op):
    return overwrite(input, Tensor._wrap(arr.astype(input._array.dtype, copy=False)), op)


def uniform_(input, a=0.0, b=1.0, *, generator=None):
    """Fill with samples from U[a, b)."""
    from ..random import _rng
    arr = _rng(generator).random(input._array.shape) * (b - a) + a
    return _random_fill(input, arr, "uniform_")


def normal_(input, mean=0.0, std=1.0, *, generator=None):
    """Fill with samples from N(mean, std^2)."""
    from ..random import _rng
    arr = _rng(generator).standard_normal(input._array.shape) * std + mean
    return _random_fill(input, arr, "normal_")


def bernoulli_(input, p=0.5, *, generator=None):
    from ..random import _rng
    probs = p._array if isinstance(p, Tensor) else p
    return _random_fill(input, _rng(generator).random(input._array.shape) < probs, "bernoulli_")


def random_(input, from_=0, to=None, *, generator=None):
    from ..random import _rng
    if to is None:
        from_, to = 0, (from_ if from_ else 2 ** 24)
    return _random_fill(input, _rng(generator).integers(from_, to, input._array.shape),
                        "random_")


def exponential_(input, lambd=1.0, *, generator=None):
    from ..random import _rng
    return _random_fill(input, _rng(generator).exponential(1.0 / lambd, input._array.shape),
                        "exponential_")


def cauchy_(input, median=0.0, sigma=1.0, *, generator=None):
    from ..random import _rng
    return _random_fill(input, median + sigma * _rng(generator).standard_cauchy(
        input._array.shape), "cauchy_")


def geometric_(input, p, *, generator=None):
    from ..random import _rng
    return _random_fill(input, _rng(generator).geometric(p, input._array.shape), "geometric_")


def log_normal_(input, mean=1.0, std=2.0, *, generator=None):
    from ..random import _rng
    return _random_fill(input, _rng(generator).lognormal(mean, std, input._array.shape),
                        "log_normal_")


