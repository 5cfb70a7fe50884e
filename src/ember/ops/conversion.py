"""dtype and device conversion (``to``), ``clone``, ``contiguous``, ``detach``, ``device``, and
the in-place fills (``copy_``, ``fill_``, the random ``uniform_``, ``normal_``, ...)."""

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..backend import backend_for, backend_of, device, quiet, to_host
from ..random import _gen, _random_range, _sample_like
from ..tensor import Tensor, _to_array
from ._inplace import overwrite
from .shape import _CHANNELS_LAST, Clone, CloneInOrder, _cl_like, _suggest, restrided  # noqa: F401
from .shape import _dense, _memory_order, like_strides  # noqa: F401
from ._util import cast, checked_scalar, not_implemented_for

__all__ = ["to", "clone", "contiguous", "detach", "device", "is_tensor", "is_floating_point",
           "numel", "is_nonzero", "copy_", "zero_", "fill_", "uniform_", "normal_",
           "bernoulli_", "random_", "exponential_", "cauchy_", "geometric_", "log_normal_",
           "get_device"]


class ToCopy(Function):
    """A copy in another dtype and/or on another device (torch's ``_to_copy``)."""

    node_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, a, np_dtype, target, strides=None):
        arr = a._array
        ctx.source = backend_of(arr).device
        if target is not None and target is not backend_of(arr):
            if np_dtype is not None:
                with quiet():      # (an overflow to inf, a nan to an integer: silent, as torch)
                    arr = cast(arr, np_dtype)
            arr = target.asarray(arr)
        elif np_dtype is not None:
            with quiet():
                arr = cast(arr, np_dtype)
        if strides is not None:
            arr = restrided(arr, strides)
        elif arr is a._array or not arr.flags.c_contiguous:
            arr = arr.copy()
        return Tensor._wrap(arr)

    @staticmethod
    def backward(ctx, grad_output):
        d = ctx._input_meta(0)[1]
        if d.kind != "c" and grad_output._array.dtype.kind == "c":
            grad_output = grad_output.real      # torch: the real part for a real source
        return to(grad_output, _dt.from_numpy_dtype(d), ctx.source), None, None, None


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
    name = getattr(memory_format, "_name", "preserve_format")
    if np_dtype is None and target is None and not copy and (
            name == "preserve_format" or _suggest(input._array) == name):
        return input
    return ToCopy.apply(input, np_dtype, target, like_strides(input._array, memory_format))


class CloneStrided(CloneInOrder):
    """``clone`` with the given element strides."""

    node_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, a, strides):
        return Tensor._wrap(restrided(a._array, strides))


def _in_order(arr, order):
    """Whether ``arr`` is dense with its dims in memory in ``order`` (slowest first)."""
    step = arr.itemsize
    for d in reversed(order):
        if arr.shape[d] != 1 and arr.strides[d] != step:
            return False
        step *= arr.shape[d]
    return True


def _is_contiguous_in(arr, memory_format):
    """``Tensor.is_contiguous(memory_format)`` of the array ``arr``."""
    name = getattr(memory_format, "_name", None)
    if name in _CHANNELS_LAST:
        rank, order = _CHANNELS_LAST[name]
        return arr.ndim == rank and _in_order(arr, order)
    return bool(arr.flags.c_contiguous)


def clone(input, *, memory_format=None):
    """A copy with its own memory (gradient flows back to ``input``); laid out as ``input``
    unless ``memory_format`` says otherwise."""
    strides = like_strides(input._array, memory_format)
    return Clone.apply(input) if strides is None else CloneStrided.apply(input, strides)


def contiguous(input, memory_format=None):
    """``input`` if contiguous in ``memory_format`` (C order by default), else a copy."""
    order = _memory_order(input._array, memory_format, "contiguous")
    if memory_format is _dt.preserve_format and not input._array.flags.c_contiguous:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    if order is None:
        return input if input._array.flags.c_contiguous else Clone.apply(input)
    return input if _in_order(input._array, order) else CloneInOrder.apply(input, order)


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
    return input._array.dtype.kind in "fV"


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
    if not isinstance(value, Tensor):
        value = checked_fill_value(value, _dt._BY_NP[input._array.dtype],
                                   reduced=input._array.size != 1)
    return overwrite(input, value, "fill_")


def checked_fill_value(value, d, reduced=True):
    """The Python number ``value`` for a tensor of ember dtype ``d`` after torch's checked
    conversion (its overflow error). A complex number: for a real type its imaginary part must
    be 0 (the real part is used, checked as a double); for complex64 both parts must fit."""
    if not isinstance(value, (complex, np.complexfloating)):
        return checked_scalar(value, d, reduced=reduced)
    r = d._rank
    if r == 0:
        return value
    name = _CPP_NAMES[d.name] if r == 3 else _dt._C_NAME.get(d.name, d.name)
    if r == 3:
        bad = d.itemsize == 8 and (_dt.scalar_overflows(float(value.real), _dt.float32) or
                                   _dt.scalar_overflows(float(value.imag), _dt.float32))
    elif r == 2 and d.itemsize == 2 and not reduced:
        # (torch's one-element fill of a 16-bit float: a checked conversion to double, then an
        # unchecked cast)
        bad, name = bool(value.imag), "double"
    else:
        bad = bool(value.imag) or _dt.scalar_overflows(float(value.real), d)
    if bad:
        raise RuntimeError("value cannot be converted to type %s without overflow" % name)
    return value if r == 3 else float(value.real)


# The random fills draw on the host from the Generator (torch's mt19937 stream and transforms,
# in the order torch's kernels visit memory) and write the sample into the tensor's array.

def _require_float(input, kernel, complex_ok=False):
    """torch's NotImplementedError for a random kernel without a version for ``input``'s dtype
    (integers and bool; complex too unless ``complex_ok``). The kernel (and its check) does not
    run on an empty tensor."""
    if input._array.size:
        not_implemented_for(input._array, kernel, "biu" if complex_ok else "biuc")


# the C++ type names torch's cauchy_ check prints
_CPP_NAMES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>"}


def _continuous(input, dist, names):
    d = input._array.dtype
    if d.kind not in "fV":     # (V: bfloat16)
        name = names.get(d.name, d.name) if names else _dt.scalar_type_name(d)
        raise RuntimeError("%s distribution is a continuous probability distribution. dtype "
                           "must be a floating point but you specified %s" % (dist, name))


def _real_view(input, draw, scale=1.0):
    """``draw(n, contiguous, dtype)`` for a real tensor; for a complex one, torch's fill of
    its interleaved real view (``2 n`` real draws, the parameters' scale times ``scale``)."""
    d = input._array.dtype
    if d.kind != "c":
        return lambda n, c: draw(n, c, d, 1.0)
    real = np.dtype("float32" if d == "complex64" else "float64")
    return lambda n, c: draw(2 * n, c, real, scale).view(d)


def _random_fill(input, sample, op):
    """Write ``sample`` (a host array shaped like ``input``) into ``input``."""
    arr = input._array
    sample = backend_of(arr).asarray(sample.astype(arr.dtype, copy=False))
    return overwrite(input, Tensor._wrap(sample), op)


def _fill(input, draw, op):
    return _random_fill(input, _sample_like(input._array, draw), op)


# real dtype name -> (largest finite value, C++ name, torch's scalar type name)
_FLOAT_LIMITS = {"float16": (65504.0, "c10::Half", "Half"),
                 "bfloat16": (3.3895313892515355e38, "c10::BFloat16", "BFloat16"),
                 "float32": (3.4028234663852886e38, "float", "Float"),
                 "float64": (1.7976931348623157e308, "double", "Double")}
_REAL_OF = {"complex64": "float32", "complex128": "float64"}


def _check_uniform_bounds(d, a, b):
    """torch's ``check_uniform_bounds``: finite bounds the dtype holds, ``a <= b`` and a
    representable ``b - a`` (NaN fails the first check)."""
    name = _REAL_OF.get(np.dtype(d).name, np.dtype(d).name)
    if name not in _FLOAT_LIMITS:
        if a > b:
            raise RuntimeError("uniform_ expects to return a [from, to) range, but found "
                               "from=%g > to=%g" % (a, b))
        return
    hi, cname, tname = _FLOAT_LIMITS[name]
    if not -hi <= a <= hi:
        raise RuntimeError("from is out of bounds for %s" % cname)
    if not -hi <= b <= hi:
        raise RuntimeError("to is out of bounds for %s" % cname)
    if a > b:
        raise RuntimeError("uniform_ expects to return a [from, to) range, but found from=%g > "
                           "to=%g" % (a, b))
    if b - a > hi:
        raise RuntimeError("uniform_ expects to-from <= std::numeric_limits<%s>::max(), but "
                           "found to=%g and from=%g which result in to-from to exceed the limit"
                           % (tname, b, a))


def uniform_(input, a=0.0, b=1.0, *, generator=None):
    """Fill with samples from U[a, b) (torch's stream for the same seed)."""
    not_implemented_for(input._array, "check_uniform_bounds", "biu")   # (before the kernel)
    a, b = float(a), float(b)
    if input._array.dtype.kind != "c" or input._array.size:
        # (torch's complex path views an empty tensor as real: nothing to check)
        _check_uniform_bounds(input._array.dtype, a, b)
    gen = _gen(generator)
    return _fill(input, _real_view(input, lambda n, c, d, k: gen._uniform(n, d, a, b)),
                 "uniform_")


def normal_(input, mean=0.0, std=1.0, *, generator=None):
    """Fill with samples from N(mean, std^2) (torch's stream for the same seed)."""
    mean, std = float(mean), float(std)
    if not std >= 0:
        raise RuntimeError("normal expects std >= 0.0, but found std %g" % std)
    _require_float(input, "normal_kernel_cpu", complex_ok=True)
    gen = _gen(generator)
    # NOTE: torch draws a complex tensor's parts with std / sqrt(2)
    draw = _real_view(input, lambda n, c, d, k: gen._normal(n, d, mean, std * k, c),
                      2 ** -0.5)
    return _fill(input, draw, "normal_")


def bernoulli_(input, p=0.5, *, generator=None):
    """Fill with 0/1 samples, 1 with probability ``p`` (a number or a tensor of them)."""
    gen = _gen(generator)
    if isinstance(p, Tensor):
        if input._array.size:
            not_implemented_for(input._array, "bernoulli_tensor_cpu_self_", "c")
        probs = to_host(p._array)
        if bool(((probs < 0) | (probs > 1)).any()):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  "
                               "(Could this error message be improved?  If so, please report "
                               "an enhancement request to PyTorch.)")
        probs = probs.astype(probs.dtype if probs.dtype.kind in "fV" else "float32")
        unit = probs.dtype if probs.dtype == "float64" else "float32"
        u = _sample_like(input._array, lambda n, c: gen._unit(n, unit))
        return _random_fill(input, u < probs, "bernoulli_")
    p = float(p)
    if not 0 <= p <= 1:
        raise RuntimeError("bernoulli_ expects p to be in [0, 1], but got p=%g" % p)
    if input._array.size:
        not_implemented_for(input._array, "bernoulli_scalar_cpu_", "c")
    return _fill(input, lambda n, c: gen._unit(n, "float64") < p, "bernoulli_")


_MISSING = object()


def random_(input, from_=_MISSING, to=_MISSING, *, generator=None):
    """Fill with integers: ``random_()`` on [0, 2**mantissa] (floats) or [0, max] (integers),
    ``random_(to)`` on [0, to), ``random_(from, to)`` on [from, to), ``random_(from, None)``
    on [from, max] (torch's stream for the same seed)."""
    gen, d = _gen(generator), input._array.dtype
    if from_ is _MISSING and to is _MISSING:
        if d.kind == "c":
            if not input._array.size:
                return input
            not_implemented_for(input._array, "random_kernel_cpu", "c")
        return _fill(input, lambda n, c: gen._random_default(n, d), "random_")
    if to is _MISSING:
        from_, to = 0, from_
    span = _random_range(d, int(from_), None if to is None else int(to))
    if span is None:
        return _fill(input, lambda n, c: gen._random_full64(n, d), "random_")
    return _fill(input, lambda n, c: gen._random_from_to(n, d, *span), "random_")


def exponential_(input, lambd=1.0, *, generator=None):
    """Fill with Exp(lambd) samples (torch's stream for the same seed)."""
    lambd = float(lambd)
    if not lambd > 0:
        raise RuntimeError("exponential_ expects lambda > 0.0, but found lambda=%g" % lambd)
    if input._array.size:
        _continuous(input, "Exponential", None)
    gen = _gen(generator)
    return _fill(input, lambda n, c: gen._exponential(n, lambd), "exponential_")


def cauchy_(input, median=0.0, sigma=1.0, *, generator=None):
    """Fill with Cauchy(median, sigma) samples (torch's stream for the same seed)."""
    median, sigma = float(median), float(sigma)
    if not sigma > 0:
        raise RuntimeError("cauchy_ expects sigma > 0.0, but found sigma=%g" % sigma)
    _continuous(input, "Cauchy", _CPP_NAMES)
    gen = _gen(generator)
    return _fill(input, lambda n, c: gen._cauchy(n, median, sigma), "cauchy_")


def geometric_(input, p, *, generator=None):
    """Fill with Geometric(p) samples on {1, 2, ...} (torch's stream for the same seed)."""
    p = float(p)
    if not 0 < p < 1:
        raise RuntimeError("geometric_ expects p to be in (0, 1), but got p=%g" % p)
    if input._array.size:
        not_implemented_for(input._array, "geometric_cpu", "bc")
    gen = _gen(generator)
    return _fill(input, lambda n, c: gen._geometric(n, p), "geometric_")


def log_normal_(input, mean=1.0, std=2.0, *, generator=None):
    """Fill with exp(N(mean, std^2)) samples (torch's stream for the same seed)."""
    mean, std = float(mean), float(std)
    if not std > 0:
        raise RuntimeError("log_normal_ expects std > 0.0, but found std=%g" % std)
    _require_float(input, "log_normal_cpu")
    gen = _gen(generator)
    return _fill(input, lambda n, c: gen._log_normal(n, mean, std), "log_normal_")
