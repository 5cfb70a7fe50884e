"""dtype and device conversion (``to``), ``clone``, ``contiguous``, ``detach``, ``device``, and
the in-place fills (``copy_``, ``fill_``, the random ``uniform_``, ``normal_``, ...)."""
from .. import dtypes as _dt
from ..autograd.function import Function
from ..backend import backend_for, backend_of, device
from ..random import _rng
from ..tensor import Tensor, _to_array
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
    """A dtype from a dtype, a legacy type (``ember.FloatTensor``, ``ember.cuda.FloatTensor``)
    or a string (``'torch.cuda.FloatTensor'``). A CUDA type needs the CUDA backend: without it
    this raises the backend's message."""
    if isinstance(t, _dt.dtype):
        return t
    legacy = getattr(t, "_legacy_dtype", None)
    if legacy is not None:
        if getattr(t, "_legacy_device", None) is not None:
            backend_for(t._legacy_device)
        return legacy
    if isinstance(t, str):
        parts = t.split(".")
        if "cuda" in parts[:-1]:
            backend_for("cuda")
        if parts[-1] in _dt._BY_LEGACY:
            return _dt._BY_LEGACY[parts[-1]]
        return _dt.to_dtype(t)
    return _dt.to_dtype(t)


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
            device = getattr(a, "_legacy_device", None) or device
        elif isinstance(a, (str, globals()["device"])) or (isinstance(a, int) and
                                                           not isinstance(a, bool)):
            s = str(a)
            if s.startswith("torch.") or s in _dt._BY_NAME:
                dtype = _dt.to_dtype(s)
            else:
                device = a
        elif isinstance(a, bool):
            pass    # non_blocking: every copy here is synchronous
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
    """Copy ``src`` (broadcast, cast, from any device) into ``input``."""
    if not isinstance(src, Tensor):
        src = Tensor._wrap(backend_of(input._array).asarray(_to_array(src)))
    elif type(src._array) is not type(input._array):
        src = to(src, device=input.device)     # across devices, as torch (gradient included)
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


# The random fills draw on the host from the Generator (one stream of numbers whatever the
# device) and write the sample into the tensor's device array.

def _random_fill(input, sample, op):
    """Write ``sample`` (a host array, or one on ``input``'s device) into ``input``."""
    arr = input._array
    sample = backend_of(arr).asarray(sample.astype(arr.dtype, copy=False))
    return overwrite(input, Tensor._wrap(sample), op)


def uniform_(input, a=0.0, b=1.0, *, generator=None):
    """Fill with samples from U[a, b)."""
    return _random_fill(input, _rng(generator).random(input._array.shape) * (b - a) + a,
                        "uniform_")


def normal_(input, mean=0.0, std=1.0, *, generator=None):
    """Fill with samples from N(mean, std^2)."""
    return _random_fill(input, _rng(generator).standard_normal(input._array.shape) * std + mean,
                        "normal_")


def bernoulli_(input, p=0.5, *, generator=None):
    """Fill with 0/1 samples, 1 with probability ``p`` (a number or a tensor of them)."""
    u = _rng(generator).random(input._array.shape)
    if isinstance(p, Tensor):
        u = backend_of(p._array).asarray(u)     # compared on the probabilities' device
        p = p._array
    return _random_fill(input, u < p, "bernoulli_")


def random_(input, from_=0, to=None, *, generator=None):
    """Fill with integers uniform on [from_, to)."""
    if to is None:
        from_, to = 0, (from_ if from_ else 2 ** 24)
    return _random_fill(input, _rng(generator).integers(from_, to, input._array.shape),
                        "random_")


def exponential_(input, lambd=1.0, *, generator=None):
    return _random_fill(input, _rng(generator).exponential(1.0 / lambd, input._array.shape),
                        "exponential_")


def cauchy_(input, median=0.0, sigma=1.0, *, generator=None):
    return _random_fill(input, median + sigma * _rng(generator).standard_cauchy(
        input._array.shape), "cauchy_")


def geometric_(input, p, *, generator=None):
    return _random_fill(input, _rng(generator).geometric(p, input._array.shape), "geometric_")


def log_normal_(input, mean=1.0, std=2.0, *, generator=None):
    return _random_fill(input, _rng(generator).lognormal(mean, std, input._array.shape),
                        "log_normal_")
