"""Creation ops: tensor, zeros, ones, arange, rand, randn, ... on any device (``device=``).

Deterministic creation builds the array on the target device with that device's array module
(the default device, ``ember.get_default_device()``, when none is given; ``*_like`` functions
use their input's device). Random creation draws on the host from ember's Generator, torch's
CPU generator (mt19937 and torch's transforms), so a seed gives torch's numbers on every
device, and then moves the sample.
"""
import math
import warnings

import numpy as np

from .. import dtypes as _dt
from ..random import _gen, _random_range
from ..backend import (backend_for, backend_of, errstate, get_default_device, is_array,
                       set_default_device, to_host)
from ..autograd.function import Function, mark_inference
from ..autograd.grad_mode import state as _grad_state
from ..tensor import Tensor, _to_array
from ._util import checked_scalar, not_implemented_for
from .conversion import checked_fill_value, like_strides, normal_, random_, uniform_

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "full", "empty",
           "zeros_like", "ones_like", "full_like", "empty_like", "arange", "range", "linspace",
           "logspace", "eye", "rand", "randn", "randint", "rand_like", "randn_like",
           "randint_like", "randperm", "normal", "bernoulli", "multinomial", "poisson",
           "binomial", "empty_strided", "scalar_tensor", "from_dlpack", "frombuffer",
           "set_default_device", "get_default_device", "set_num_threads", "get_num_threads",
           "set_num_interop_threads", "get_num_interop_threads"]

_builtin_range = range


_threads = {"interop": None}


def get_num_threads():
    """The number of threads NumPy's BLAS uses (``os.cpu_count()`` without threadpoolctl)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        import os
        return os.cpu_count() or 1
    counts = [p["num_threads"] for p in threadpool_info() if p.get("user_api") == "blas"]
    if not counts:
        import os
        return os.cpu_count() or 1
    return max(counts)


def set_num_threads(num):
    """Limit NumPy's BLAS thread pool to ``num`` threads (through threadpoolctl)."""
    num = int(num)
    if num <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        import warnings
        warnings.warn("ember.set_num_threads needs the threadpoolctl package; the number of "
                      "threads is unchanged", RuntimeWarning, stacklevel=2)
        return
    # The limiter object keeps the new limit in force for the rest of the process.
    _threads["limiter"] = threadpool_limits(limits=num, user_api="blas")


def get_num_interop_threads():
    """Inter-op parallelism is not used by ember: returns the value last set (default 1)."""
    return _threads["interop"] or 1


def set_num_interop_threads(num):
    """Recorded for ``get_num_interop_threads``; ember runs ops one at a time."""
    if _threads["interop"] is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has "
                           "started or set_num_interop_threads called")
    _threads["interop"] = int(num)


def _dest(arr, device):
    """The backend a new tensor made from array ``arr`` goes to.

    An explicit ``device`` wins; otherwise the default device when one is set (torch fills in
    the default device for every factory), else the device ``arr`` already lives on.
    """
    if device is not None:
        return backend_for(device)
    b = backend_for(None)
    return backend_of(arr) if b.type == "cpu" else b


def _new(arr, requires_grad):
    """A new leaf tensor around the freshly made array ``arr``."""
    t = Tensor._wrap(arr)
    if _grad_state.inference:
        mark_inference(t)
    if requires_grad:
        if arr.dtype.kind not in "fcV":
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")     # (a factory's words; the setter's are lowercase)
        t.requires_grad = True
    return t


def _finish(arr, requires_grad, device=None):
    """A new tensor around host or device array ``arr``, moved to ``device`` (see ``_dest``)
    when it lives elsewhere."""
    b = _dest(arr, device)
    if type(arr) is not b.array_type:
        arr = b.asarray(arr)
    return _new(arr, requires_grad)


_NO_SIZE_SIGS = "%s() received an invalid combination of arguments - got (), but expected " \
    "one of:\n" + "".join(
        " * (tuple of ints size, *, %sTensor out = None, torch.dtype dtype = None, torch.layout "
        "layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad "
        "= False)\n" % gen for gen in ("torch.Generator generator, ", ""))


def _size(size, fn="empty"):
    """The shape from ``*size`` (ints, or one sequence of them) with torch's argument errors."""
    if not size:
        if fn in ("rand", "randn"):
            raise TypeError(_NO_SIZE_SIGS % fn)
        raise TypeError('%s() missing 1 required positional arguments: "size"' % fn)
    varargs = not (len(size) == 1 and isinstance(size[0], (tuple, list)))
    if not varargs:
        size = tuple(size[0])
    out = []
    for i, s in enumerate(size):
        if isinstance(s, Tensor):
            s = int(s)
        lone_bool = isinstance(s, (bool, np.bool_)) and varargs and len(size) == 1
        if not isinstance(s, (int, np.integer)) or lone_bool:
            kind = type(s).__name__
            if varargs and len(size) == 1:
                raise TypeError("%s(): argument 'size' (position 1) must be tuple of ints, not "
                                "%s" % (fn, kind))
            if varargs or i > 0:
                raise TypeError("%s(): argument 'size' failed to unpack the object at pos %d "
                                "with error \"type must be tuple of ints,but got %s\""
                                % (fn, i + 1, kind))
            raise TypeError("%s(): argument 'size' (position 1) must be tuple of ints, but found "
                            "element of type %s at pos %d" % (fn, kind, i))
        out.append(int(s))
    for s in out:
        if s < 0:
            raise RuntimeError("Trying to create tensor with negative dimension %d: %s"
                               % (s, out))
    return tuple(out)


def _number(x, fn, arg, pos):
    """A Python number argument: a 0-d tensor that requires no grad stands in for one, as in
    torch's argument parser; other tensors raise its TypeError."""
    if isinstance(x, Tensor):
        if x._array.ndim or x.requires_grad:
            raise TypeError("%s(): argument '%s' (position %d) must be Number, not Tensor"
                            % (fn, arg, pos))
        return x.item()
    if not isinstance(x, (int, float, complex, np.number, np.bool_)):
        raise TypeError("%s(): argument '%s' (position %d) must be Number, not %s"
                        % (fn, arg, pos, type(x).__name__))
    return x


def _float_dtype(dtype):
    return _dt.to_dtype(dtype) if dtype is not None else _dt.get_default_dtype()


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data`` (nested lists, scalars, arrays or tensors).

    Example:
        >>> import ember
        >>> ember.tensor([[1., 2.], [3., 4.]])
        tensor([[1., 2.],
                [3., 4.]])
        >>> ember.tensor([1, 2], device="strict").device
        device(type='strict')
    """
    d = None if dtype is None else _dt.to_dtype(dtype)
    _check_data(data, d)
    arr = _to_array(data, d)
    b = _dest(arr, device)
    if type(arr) is not b.array_type:
        arr = b.asarray(arr)            # a transfer: a new array
    elif arr is getattr(data, "_array", None) or arr is data:
        arr = arr.copy()
    return _new(arr, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with a Tensor or ndarray when dtype and device allow."""
    if device is not None:
        backend_for(device)     # an unusable device fails before any work
    d = None if dtype is None else _dt.to_dtype(dtype)
    if isinstance(data, Tensor):
        return data.to(device=_dest(data._array, device).device, dtype=d)
    _check_data(data, d)
    return _finish(_to_array(data, d), False, device)


def _check_data(data, d):
    """torch's overflow check of Python numbers (or nested lists of them) made into an integer
    tensor of dtype ``d``."""
    if type(data) is int and not -2 ** 63 <= data < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")
    if d is None or d._rank != 1:
        return
    if isinstance(data, (list, tuple)):
        if not data or any(isinstance(x, Tensor) for x in data):
            return
        arr = _to_array(data)
        if arr.dtype.kind not in "iuf" or arr.size == 0:
            return
        lo, hi = arr.min().item(), arr.max().item()    # (a nan among them is the min)
        values = (lo, hi)
    elif isinstance(data, (int, float, np.integer, np.floating)) and \
            not isinstance(data, (bool, np.bool_)):
        values = (data,)
    else:
        return
    for v in values:
        _dt.check_scalar(v, d, d.name)


def asarray(obj, dtype=None, device=None, copy=None, requires_grad=False):
    """``as_tensor`` with torch.asarray's ``copy`` and ``requires_grad`` arguments."""
    t = (tensor(obj, dtype=dtype, device=device) if copy
         else as_tensor(obj, dtype=dtype, device=device))
    if requires_grad:
        t.requires_grad_()
    return t


def from_numpy(ndarray):
    """A CPU tensor sharing memory with ``ndarray`` (writes show through both ways)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError("expected np.ndarray (got %s)" % type(ndarray).__name__)
    _dt.from_numpy_dtype(ndarray.dtype)
    return Tensor._wrap(ndarray)


def from_dlpack(ext_tensor):
    """Zero-copy import of an array of one of ember's devices, or of any DLPack-capable host
    array (NumPy, PyTorch CPU tensors)."""
    if isinstance(ext_tensor, Tensor):
        return ext_tensor
    if is_array(ext_tensor):
        return Tensor._wrap(ext_tensor)
    return Tensor._wrap(np.from_dlpack(ext_tensor))    # host: a CPU DLPack capsule


def frombuffer(buffer, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D CPU tensor over the bytes of ``buffer`` (shares memory)."""
    # host: the bytes of a host buffer, shared
    arr = np.frombuffer(buffer, dtype=_dt.to_dtype(dtype).np, count=count, offset=offset)
    return _new(arr, requires_grad)


def scalar_tensor(s, dtype=None, device=None, requires_grad=False):
    """A 0-d tensor holding ``s`` (default float dtype)."""
    s = _number(s, "scalar_tensor", "s", 1)
    d = _float_dtype(dtype)
    if isinstance(s, complex) and not d.is_complex:
        if s.imag:
            raise RuntimeError("value cannot be converted to type %s without overflow"
                               % _dt._C_NAME.get(d.name, d.name))
        s = s.real
    s = checked_scalar(s, d, reduced=False)
    return _new(backend_for(device).xp.asarray(s, dtype=d.np), requires_grad)


def _size_kw(args, size, op):
    """The size given positionally (``args``) or as ``size=`` (torch takes either, not both)."""
    if size is None:
        return args
    if args:
        raise TypeError("%s() got multiple values for argument 'size'" % op)
    if not isinstance(size, (tuple, list)):
        raise TypeError("%s(): argument 'size' must be tuple of ints, not %s"
                        % (op, type(size).__name__))
    return (size,)


def zeros(*args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """A tensor of zeros of the given size (default float dtype)."""
    shape = _size(_size_kw(args, size, "zeros"), "zeros")
    return _new(backend_for(device).xp.zeros(shape, dtype=_float_dtype(dtype).np), requires_grad)


def ones(*args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """A tensor of ones of the given size (default float dtype)."""
    shape = _size(_size_kw(args, size, "ones"), "ones")
    return _new(backend_for(device).xp.ones(shape, dtype=_float_dtype(dtype).np), requires_grad)


def empty(*args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          memory_format=None, pin_memory=False):
    """An uninitialised tensor of the given size (ember fills it with zeros)."""
    shape = _size(_size_kw(args, size, "empty"), "empty")
    t = _new(backend_for(device).xp.zeros(shape, dtype=_float_dtype(dtype).np), requires_grad)
    if getattr(memory_format, "_name", None) == "preserve_format":
        raise RuntimeError("unsupported memory format Preserve")
    return t if memory_format is None else empty_like(t, memory_format=memory_format,
                                                      requires_grad=requires_grad)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """An uninitialised tensor of the given size and strides (in elements) over its own memory
    (ember fills it with zeros)."""
    shape = _size((tuple(size),), "empty_strided")
    stride = tuple(int(st) for st in stride)
    if len(stride) != len(shape):
        raise RuntimeError("dimensionality of sizes (%d) must match dimensionality of strides "
                           "(%d)" % (len(shape), len(stride)))
    if any(st < 0 for st in stride):
        if 0 not in shape and any(st < 0 and n > 1 for n, st in zip(shape, stride)):
            raise RuntimeError("Storage size calculation overflowed with sizes=%s and strides=%s"
                               % (list(shape), list(stride)))
        return empty(shape, dtype=dtype, device=device, requires_grad=requires_grad)
    b = backend_for(device)
    d = _float_dtype(dtype).np
    n = 0 if 0 in shape else 1 + sum((n - 1) * st for n, st in zip(shape, stride))
    storage = b.xp.zeros(n, dtype=d)
    item = storage.itemsize
    return _new(b.as_strided(storage, shape, tuple(st * item for st in stride)), requires_grad)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False):
    """A tensor filled with ``fill_value``; dtype inferred from it as torch does."""
    if not isinstance(size, (tuple, list)):
        raise TypeError("full(): argument 'size' (position 1) must be tuple of ints, not %s"
                        % type(size).__name__)
    fill_value = _number(fill_value, "full", "fill_value", 2)
    if dtype is None:
        if isinstance(fill_value, (bool, np.bool_)):
            dtype = _dt.bool
        elif isinstance(fill_value, (int, np.integer)):
            dtype = _dt.int64
        elif isinstance(fill_value, (complex, np.complexfloating)):
            dtype = _dt.default_complex_dtype()
        else:
            dtype = _dt.get_default_dtype()
    shape = _size((size,), "full")
    d = _dt.to_dtype(dtype)
    # NOTE: torch skips the float16/bfloat16 range check when filling a single element.
    value = checked_fill_value(fill_value, d, reduced=math.prod(shape) != 1)
    return _new(backend_for(device).xp.full(shape, value, dtype=d.np),
                requires_grad)


def _like(input, dtype, device):
    """The array module, shape and NumPy dtype of a ``*_like`` result (``input``'s device
    unless ``device`` is given)."""
    arr = input._array
    xp = backend_of(arr).xp if device is None else backend_for(device).xp
    return xp, arr.shape, (arr.dtype if dtype is None else _dt.to_dtype(dtype).np)


def _laid(input, arr, memory_format):
    """``arr`` (a new C-order array of one value, shaped like ``input``) laid out as torch's
    ``empty_like`` lays out a result for ``input`` and ``memory_format``."""
    strides = like_strides(input._array, memory_format)
    if strides is None:
        return arr
    return backend_of(arr).as_strided(arr, arr.shape, tuple(s * arr.itemsize for s in strides))


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    """Zeros with the shape (and dtype and device, unless given) of ``input``, laid out as
    ``input`` (``memory_format``, by default torch's ``preserve_format``)."""
    xp, shape, d = _like(input, dtype, device)
    return _new(_laid(input, xp.zeros(shape, dtype=d), memory_format), requires_grad)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    """Ones with the shape (and dtype and device, unless given) of ``input``, laid out as
    ``input`` (``memory_format``)."""
    xp, shape, d = _like(input, dtype, device)
    return _new(_laid(input, xp.ones(shape, dtype=d), memory_format), requires_grad)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    return zeros_like(input, dtype=dtype, device=device, requires_grad=requires_grad,
                      memory_format=memory_format)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    """``fill_value`` with the shape (and dtype and device, unless given) of ``input``."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    xp, shape, d = _like(input, dtype, device)
    fill_value = checked_fill_value(fill_value, _dt.from_numpy_dtype(d),
                                    reduced=math.prod(shape) != 1)
    return _new(_laid(input, xp.full(shape, fill_value, dtype=d), memory_format), requires_grad)


def _num(x):
    return x.item() if isinstance(x, Tensor) else x


_ARANGE_SIGS = """
 * (Number end, *, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, \
torch.device device = None, bool pin_memory = False, bool requires_grad = False)
 * (Number start, Number end, *, torch.dtype dtype = None, torch.layout layout = None, \
torch.device device = None, bool pin_memory = False, bool requires_grad = False)
 * (Number start, Number end, Number step = 1, *, Tensor out = None, torch.dtype dtype = None, \
torch.layout layout = None, torch.device device = None, bool pin_memory = False, \
bool requires_grad = False)
"""


def _numbers(fn, start, end, step, shown=3):
    """``start, end, step`` as numbers (see ``_number``): range names the first bad argument,
    arange (overloaded) lists its signatures."""
    try:
        return tuple(_number(v, fn, a, i + 1)
                     for i, (a, v) in enumerate(zip(("start", "end", "step"),
                                                    (start, end, step))))
    except TypeError:
        if fn == "range":
            raise
        names = ", ".join(type(v).__name__ for v in (start, end, step)[:shown])
        raise TypeError("arange() received an invalid combination of arguments - got (%s), but "
                        "expected one of:%s" % (names, _ARANGE_SIGS)) from None


def _real(x):
    """A number as torch's range kernels read it (as a double): a complex one must have no
    imaginary part."""
    if isinstance(x, np.complexfloating) and not isinstance(x, complex):
        return float(x)     # (torch reads a complex64 NumPy scalar as a real one, as float())
    if isinstance(x, (complex, np.complexfloating)):
        if x.imag != 0:
            raise RuntimeError("value cannot be converted to type double without overflow")
        return float(x.real)
    return x


def _range_checks(kernel, dtype, start, end, step):
    """torch's checks of arange/range, in its order; returns the dtype (None: not given)."""
    d = None if dtype is None else _dt.to_dtype(dtype)
    if d is not None and d.np.kind in "bc":
        raise NotImplementedError("\"%s\" not implemented for '%s'"
                                  % (kernel, _dt.scalar_type_name(d)))
    start, end, step = (_real(v) for v in (start, end, step))
    if not (step > 0 or step < 0):
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError("unsupported range: %g -> %g" % (start, end))
    return d, start, end, step


def _check_size(size):
    if not 0 <= size <= 2.0 ** 63:
        raise RuntimeError("invalid size, possible overflow?")
    return int(size)


def arange(start=0, end=None, step=None, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 for integer arguments."""
    shown = 2 if step is None else 3
    step = 1 if step is None else step
    if end is None:
        start, end = 0, _number(start, "arange", "end", 1)
    elif not all(isinstance(v, (int, float, complex, np.number, np.bool_))
                 for v in (start, end, step)):
        start, end, step = _numbers("arange", start, end, step, shown)
    elif isinstance(start, Tensor) or isinstance(end, Tensor) or isinstance(step, Tensor):
        start, end, step = _numbers("arange", start, end, step, shown)
    d, start, end, step = _range_checks("arange_cpu", dtype, start, end, step)
    if d is not None and d._rank < 2:
        # NOTE: torch casts the bounds and the step to an integer dtype first.
        start, end, step = int(start), int(end), int(step)
        if step == 0:
            raise ValueError("step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if d is None:
        ints = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        d = _dt.int64 if ints else _dt.get_default_dtype()
    xp = backend_for(device).xp
    n = _check_size(math.ceil((end - start) / step))
    arr = start + xp.arange(n, dtype=np.float64 if d.is_floating_point else np.int64) * step
    return _new(arr.astype(d.np, copy=False), requires_grad)


def range(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """Deprecated torch.range: like arange but includes ``end``."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=3)
    if end is None:
        start, end = 0, start
    start, end, step = _numbers("range", start, end, step)
    d, start, end, step = _range_checks("range_cpu", dtype, start, end, step)
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    xp = backend_for(device).xp
    n = _check_size(math.floor((end - start) / step) + 1)
    arr = start + xp.arange(n, dtype=np.float64) * step
    return _new(arr.astype((d or _dt.get_default_dtype()).np, copy=False), requires_grad)


_SPACE_SIGS = "".join(
    "\n * (%s start, %s end, int steps, %s*, Tensor out = None, torch.dtype dtype = None, "
    "torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
    "bool requires_grad = False)" % (a, b, "%s")
    for a, b in (("Tensor", "Tensor"), ("Number", "Tensor"), ("Tensor", "Number"),
                 ("Number", "Number")))


def _space_args(fn, start, end, steps, dtype, device, requires_grad, base=10.0):
    """torch's argument parsing and checks of linspace/logspace: ``(start, end, steps, base,
    dtype)`` as numbers and the result dtype (complex when a bound is)."""
    def number(v):
        return isinstance(v, (int, float, complex, np.number, np.bool_)) and \
            not isinstance(v, bool)

    def integer(v):
        if isinstance(v, Tensor):
            return v._array.ndim == 0 and v._array.dtype.kind in "iu"
        return isinstance(v, (int, np.integer)) and not isinstance(v, bool)
    ok = all(isinstance(v, Tensor) or number(v) or isinstance(v, bool) for v in (start, end))
    ok = ok and integer(steps)
    if base is not None and not (isinstance(base, (int, float, np.integer, np.floating,
                                                   np.complex64))
                                 or isinstance(base, Tensor) and base._array.ndim == 0):
        ok = False
    if not ok:
        got = [type(v).__name__ for v in (start, end, steps)]
        for name, v, default in (("dtype", dtype, None), ("device", device, None),
                                 ("requires_grad", requires_grad, False), ("base", base, 10.0)):
            if v is not default and (name != "base" or v != 10.0 or type(v) is not float) \
                    and not (name == "base" and v is None):
                got.append("%s=%s" % (name, "torch.dtype" if name == "dtype" else
                                      type(v).__name__))
        extra = "" if base is None else "float base = 10.0, "
        raise TypeError("%s() received an invalid combination of arguments - got (%s), but "
                        "expected one of:%s\n" % (fn, ", ".join(got), _SPACE_SIGS % ((extra,) * 4)))
    dims = [(n, v._array.ndim) for n, v in (("start", start), ("end", end))
            if isinstance(v, Tensor) and v._array.ndim]
    if dims:
        raise RuntimeError("%s only supports 0-dimensional start and end tensors, but got %s."
                           % (fn, " and ".join("%s with %d dimension(s)" % x for x in dims)))
    start, end, steps = _num(start), _num(end), int(_num(steps))
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    start, end = (float(v) if isinstance(v, np.complexfloating) and not isinstance(v, complex)
                  else v for v in (start, end))     # (a complex64 NumPy scalar reads as real)
    cplx = isinstance(start, complex) or isinstance(end, complex)
    inferred = _dt.default_complex_dtype() if cplx else _dt.get_default_dtype()
    d = inferred if dtype is None else _dt.to_dtype(dtype)
    if cplx and d.np.kind != "c":
        raise RuntimeError("torch.%s(): inferred dtype c10::complex<%s> can't be safely cast to "
                           "passed dtype %s" % (fn, "double" if inferred.itemsize == 16 else
                                                "float", _dt.scalar_type_name(d)))
    if d.np.kind == "b":
        raise NotImplementedError("\"%s_cpu\" not implemented for 'Bool'" % fn)
    return start, end, steps, None if base is None else _real(_num(base)), d


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    start, end, steps, _, d = _space_args("linspace", start, end, steps, dtype, device,
                                          requires_grad, None)
    _dt.check_scalar(start, d, reduced=False)
    _dt.check_scalar(end, d, reduced=False)
    xp = backend_for(device).xp
    if d.np.kind == "c":
        return _new(_linspace_complex(xp, start, end, steps, d.np), requires_grad)
    return _new(_linspace(xp, start, end, steps, d.np), requires_grad)


def _linspace_complex(xp, start, end, n, nd):
    """torch's CPU linspace in the complex dtype ``nd``: ``start + step * i`` for the first
    half, ``end - step * (n - 1 - i)`` for the rest."""
    if n <= 1:
        return xp.full(n, start, dtype=nd)
    s, e = (xp.asarray(complex(v), dtype=nd) for v in (start, end))
    step = (e - s) / xp.asarray(n - 1, dtype=nd)
    i = xp.arange(n).astype(nd)
    return xp.where(xp.arange(n) < n // 2, s + step * i, e - step * ((n - 1) - i)).astype(nd)


def _fma(a, b, c):
    """``a * b + c`` rounded once (float64 arrays; Dekker's product and Knuth's sum)."""
    p = a * b

    def split(x):
        t = 134217729.0 * x
        hi = t - (t - x)
        return hi, x - hi
    ah, al = split(a)
    bh, bl = split(b)
    err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    v = s - p
    return s + (((p - (s - v)) + (c - v)) + err)


def _linspace(xp, start, end, n, nd):
    """torch's CPU linspace: ``start + step * i`` for the first half, ``end - step * (n - 1 -
    i)`` for the rest, fused multiply-adds in the dtype (float16/bfloat16: each operation
    rounded to it; integers: in double from the dtype's start and end, truncated)."""
    if n <= 1:
        return xp.full(n, start, dtype=np.float64).astype(nd)
    i = xp.arange(n, dtype=np.float64)
    first = i < n // 2
    if nd.kind in "iub":
        # host: the dtype's start and end (an int wraps into an unsigned dtype, as torch's)
        s, e = (float(np.array(int(v)).astype(np.int64).astype(nd)) for v in (start, end))
        step = (e - s) / (n - 1)
        vals = xp.where(first, _fma(step, i, s), _fma(-step, (n - 1) - i, e))
        return xp.trunc(vals).astype(np.int64).astype(nd)
    if nd.itemsize == 2:        # float16 / bfloat16
        def r(x):
            return xp.asarray(x, dtype=np.float32).astype(nd).astype(np.float32)
        with np.errstate(over="ignore", invalid="ignore"):   # (float16 indices past 65504)
            s, e = r(start), r(end)
            step = r(r(e - s) / r(n - 1))
            lo = r(s + r(step * r(i)))
            hi = r(e - r(step * r((n - 1) - i)))
            return xp.where(first, lo, hi).astype(nd)
    f = nd.type
    s, e = f(start), f(end)
    step = f((e - s) / f(n - 1))
    if nd == np.float32:        # (the product of two float32s is exact in float64)
        lo = float(step) * i + float(s)
        hi = float(e) - float(step) * ((n - 1) - i)
    else:
        lo = _fma(float(step), i, float(s))
        hi = _fma(-float(step), (n - 1) - i, float(e))
    return xp.where(first, lo, hi).astype(nd)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """``base ** linspace(start, end, steps)``."""
    start, end, steps, base, d = _space_args("logspace", start, end, steps, dtype, device,
                                             requires_grad, base)
    xp = backend_for(device).xp
    if d.np.kind == "c":
        # NOTE: torch's complex power is exp(exponent * log(base)), in the dtype.
        # (a single step is std::pow(double, complex): in complex128)
        exps = _linspace_complex(xp, start, end, steps, d.np)
        with errstate(divide="ignore", invalid="ignore"):
            if steps == 1:
                arr = xp.power(float(base), exps.astype(np.complex128))
            else:
                arr = xp.exp(exps * xp.log(xp.asarray(float(base), dtype=d.np)))
        return _new(arr.astype(d.np, copy=False), requires_grad)
    # NOTE: torch's CPU kernel: start and end in the dtype, their difference taken there, then
    # pow(double base, double exponent), each half counted from its own end, rounded once.
    lo, hi = d.np.type(start), d.np.type(end)
    if steps == 1:
        exps = xp.asarray([float(lo)])
    else:
        with errstate(over="ignore", invalid="ignore"):
            step = float(np.asarray(hi - lo, dtype=d.np)) / (steps - 1)  # host: numbers
        i = xp.arange(steps, dtype=np.float64)
        exps = xp.where(i < steps // 2, float(lo) + step * i, float(hi) - step * (steps - 1 - i))
    with errstate(over="ignore", invalid="ignore", divide="ignore"):
        arr = xp.power(float(base), exps)
    return _new(arr.astype(d.np, copy=False), requires_grad)


_EYE_MISMATCH = (
    "eye() received an invalid combination of arguments - got (%s, %s), but expected one of:\n"
    " * (int n, *, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
    "torch.device device = None, bool pin_memory = False, bool requires_grad = False)\n"
    " * (int n, int m, *, Tensor out = None, torch.dtype dtype = None, torch.layout layout = "
    "None, torch.device device = None, bool pin_memory = False, bool requires_grad = False)\n")


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The ``n x m`` identity matrix."""
    bad = [not isinstance(v, (int, np.integer)) or isinstance(v, bool) for v in (n, m)]
    if m is not None and (bad[0] or bad[1]):
        raise TypeError(_EYE_MISMATCH % (type(n).__name__, type(m).__name__))
    if bad[0]:
        raise TypeError("eye(): argument 'n' (position 1) must be int, not %s"
                        % type(n).__name__)
    for name, v in (("n", n), ("m", m)):
        if v is not None and v < 0:
            raise RuntimeError("%s must be greater or equal to 0, got %d" % (name, v))
    return _new(backend_for(device).xp.eye(n, n if m is None else m,
                                           dtype=_float_dtype(dtype).np), requires_grad)


# Random creation draws on the host from the Generator (torch's mt19937 stream and transforms,
# so a seed gives torch's CPU numbers on every device) and moves the sample to the device. The
# device's backend is looked up before drawing, so an unusable device fails without consuming
# random numbers.

def _numel(shape):
    return math.prod(shape)


def _check_float(d, kernel):
    """torch's error for a random kernel that needs a floating (or complex) dtype."""
    if not (d.is_floating_point or d.is_complex):
        raise NotImplementedError("\"%s\" not implemented for '%s'"
                                  % (kernel, _dt.scalar_type_name(d)))


def _real_draw(n, np_dtype, draw):
    """``draw(n, dtype)`` for a real dtype; for a complex one, torch's fill of the interleaved
    real view: ``2 n`` real draws."""
    d = np.dtype(np_dtype)
    if d.kind != "c":
        return draw(n, d)
    real = np.dtype("float32" if d == np.complex64 else "float64")
    return draw(2 * n, real).view(d)


def rand(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    """Uniform samples on [0, 1) (torch's stream for the same seed)."""
    b = backend_for(device)
    shape = _size(_size_kw(args, size, "rand"), "rand")
    d = _float_dtype(dtype)
    _check_float(d, "check_uniform_bounds")
    if b.type == "meta":
        return _new(b.xp.empty(shape, d.np), requires_grad)
    gen = _gen(generator)
    arr = _real_draw(_numel(shape), d.np, gen._uniform).reshape(shape)
    return _new(b.asarray(arr), requires_grad)


def randn(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    """Standard normal samples (torch's stream for the same seed)."""
    b = backend_for(device)
    shape = _size(_size_kw(args, size, "randn"), "randn")
    d = _float_dtype(dtype)
    if _numel(shape):       # (the kernel, with its dtype check, runs on no empty tensor)
        _check_float(d, "normal_kernel_cpu")
    if b.type == "meta":
        return _new(b.xp.empty(shape, d.np), requires_grad)
    gen = _gen(generator)
    # NOTE: torch draws a complex sample's parts with std 1/sqrt(2) (unit variance in all).
    std = 1.0 if d.np.kind != "c" else 1.0 / math.sqrt(2.0)
    arr = _real_draw(_numel(shape), d.np,
                     lambda n, rd: gen._normal(n, rd, 0.0, std)).reshape(shape)
    return _new(b.asarray(arr), requires_grad)


def _random_from_to(gen, shape, d, low, high):
    """``empty(shape, dtype=d).random_(low, high)`` as a host array."""
    span = _random_range(d.np, low, high)
    return gen._random_from_to(_numel(shape), d.np, *span).reshape(shape)


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


_RANDINT_MISMATCH = "randint() received an invalid combination of arguments - got (%s), but " \
    "expected one of:\n" + "".join(
        " * (%s, *, %sTensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
        "torch.device device = None, bool pin_memory = False, bool requires_grad = False)\n"
        % (args, gen) for args in ("int high, tuple of ints size", "int low, int high, tuple of "
                                   "ints size") for gen in ("torch.Generator generator, ", ""))


def randint(low=0, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None,
            device=None, requires_grad=False):
    """Integers uniform on [low, high); ``randint(high, size)`` and ``randint(low, high, size)``."""
    if size is None and isinstance(high, (tuple, list)):
        low, high, size = 0, low, high      # randint(high, size)
        if not _is_int(high):
            raise TypeError("randint(): argument 'high' (position 1) must be int, not %s"
                            % type(high).__name__)
        for i, n in enumerate(size):
            if not _is_int(n):
                raise TypeError("randint(): argument 'size' (position 2) must be tuple of ints, "
                                "but found element of type %s at pos %d" % (type(n).__name__, i))
    elif high is None and size is not None:
        low, high = 0, low                  # randint(high, size=size)
    given = [v for v in (low, high, size) if v is not None]
    if size is None or high is None or not (
            _is_int(low) and _is_int(high) and isinstance(size, (tuple, list)) and
            all(_is_int(n) for n in size)):
        raise TypeError(_RANDINT_MISMATCH % ", ".join(type(v).__name__ for v in given))
    low, high = int(low), int(high)
    b = backend_for(device)
    d = _dt.int64 if dtype is None else _dt.to_dtype(dtype)
    shape = _size((size,) if isinstance(size, int) else (tuple(size),))
    if b.type == "meta":
        _random_range(d.np, low, high)
        return _new(b.xp.empty(shape, d.np), requires_grad)
    arr = _random_from_to(_gen(generator), shape, d, low, high)
    return _new(b.asarray(arr), requires_grad)


def rand_like(input, *, generator=None, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None):
    """Uniform samples with the shape (and dtype and device, unless given) of ``input``, drawn
    in the memory order of its layout (``memory_format``)."""
    if like_strides(input._array, memory_format) is not None:
        return _random_like(input, dtype, device, memory_format, requires_grad,
                            lambda t: uniform_(t, generator=generator))
    return rand(tuple(input._array.shape), generator=generator,
                device=input.device if device is None else device,
                dtype=dtype or input.dtype, requires_grad=requires_grad)


def randn_like(input, *, generator=None, dtype=None, layout=None, device=None,
               requires_grad=False, memory_format=None):
    """Normal samples with the shape (and dtype and device, unless given) of ``input``, drawn
    in the memory order of its layout (``memory_format``)."""
    if like_strides(input._array, memory_format) is not None:
        return _random_like(input, dtype, device, memory_format, requires_grad,
                            lambda t: normal_(t, generator=generator))
    return randn(tuple(input._array.shape), generator=generator,
                 device=input.device if device is None else device,
                 dtype=dtype or input.dtype, requires_grad=requires_grad)


def _random_like(input, dtype, device, memory_format, requires_grad, fill):
    """``fill`` (a random in-place fill) of ``empty_like(input, ...)``, as torch's ``*_like``."""
    t = empty_like(input, dtype=dtype or input.dtype, device=device, memory_format=memory_format)
    return _new(fill(t)._array, requires_grad)


_RANDINT_LIKE_MISMATCH = "randint_like() received an invalid combination of arguments - got " \
    "(%s), but expected one of:\n" + "".join(
        " * (Tensor input, %s, *, %storch.memory_format memory_format = None, torch.dtype dtype = "
        "None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
        "bool requires_grad = False)\n" % (args, gen)
        for args in ("int low, int high", "Tensor high", "int high")
        for gen in ("torch.Generator generator, ", ""))


def randint_like(input, *args, generator=None, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None, **bounds):
    """Integers on [low, high) with the shape (and dtype and device) of ``input``:
    ``randint_like(input, high)`` or ``randint_like(input, low, high)``."""
    given = list(args) + [bounds[k] for k in ("low", "high") if k in bounds]
    if len(args) == 1 and not bounds and isinstance(args[0], Tensor):
        given = [args[0].item()]     # (torch's ``randint_like(input, Tensor high)``)
    if not (0 < len(given) <= 2 and set(bounds) <= {"low", "high"}
            and ("low" not in bounds or "high" in bounds and not args)
            and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in given)):
        raise TypeError(_RANDINT_LIKE_MISMATCH % ", ".join(
            ["Tensor"] + [type(v).__name__ for v in args]
            + ["%s=%s" % (k, type(v).__name__) for k, v in bounds.items()]))
    low, high = ([0] + given)[-2:]
    if like_strides(input._array, memory_format) is not None:
        return _random_like(input, dtype, device, memory_format, requires_grad,
                            lambda t: random_(t, low, high, generator=generator))
    return randint(low, high, tuple(input._array.shape), generator=generator,
                   device=input.device if device is None else device,
                   dtype=dtype or input.dtype, requires_grad=requires_grad)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """A random permutation of ``0 .. n-1`` (int64; torch's permutation for the same seed)."""
    n = int(n)
    if n < 0:
        raise RuntimeError("n must be non-negative, got%d" % n)
    b = backend_for(device)
    d = _dt.int64 if dtype is None else _dt.to_dtype(dtype)
    if b.type == "meta":
        return _new(b.xp.empty((n,), d.np), requires_grad)
    return _new(b.asarray(_gen(generator)._randperm(n).astype(d.np)), requires_grad)


class _Sample(Function):
    """A random sample of distribution parameters (tensors): torch's derivative is zero for
    each (PoissonBackward0, NormalBackward1, ...), or absent (node ``NotImplemented``)."""

    @staticmethod
    def forward(ctx, name, sample, *params):
        name, _, ctx.op = name.partition(":")     # ("NotImplemented:op": torch's op name)
        ctx.set_node_name(name)
        ctx.metas = tuple((p.shape, p._array.dtype) if isinstance(p, Tensor) else None
                          for p in params)
        return Tensor._wrap(sample)

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.name() == "NotImplemented":
            raise RuntimeError("derivative for aten::%s is not implemented" % ctx.op)
        xp = backend_of(grad_output._array).xp
        return (None, None) + tuple(
            None if m is None or not need else Tensor._wrap(xp.zeros(m[0], dtype=m[1]))
            for m, need in zip(ctx.metas, ctx.needs_input_grad[2:]))


def _sampled(name, sample, *params):
    """``sample`` (an array) as a new tensor; the graph node ``name`` when a parameter tensor
    requires grad."""
    if any(isinstance(p, Tensor) and p.requires_grad for p in params):
        return _Sample.apply(name, sample, *params)
    return Tensor._wrap(sample)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None,
           layout=None, device=None, requires_grad=False):
    """Normal samples; ``mean``/``std`` may be tensors (broadcast) or numbers with ``size``."""
    gen = _gen(generator)
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        ref = mean if isinstance(mean, Tensor) else std
        b = backend_of(ref._array)      # the tensors' device, as torch
        d = ref._array.dtype
        m = mean._array if isinstance(mean, Tensor) else mean
        s = std._array if isinstance(std, Tensor) else std
        if isinstance(std, Tensor):
            if not bool((s >= 0).all()):
                raise RuntimeError("normal expects all elements of std >= 0.0")
        elif not std >= 0:
            raise RuntimeError("normal expects std >= 0.0, but found std %g" % std)
        shape = np.broadcast_shapes(getattr(m, "shape", ()), getattr(s, "shape", ()))
        if _numel(shape):
            _check_float(_dt.from_numpy_dtype(d), "normal_kernel_cpu")
        grads = [isinstance(v, Tensor) and v.requires_grad for v in (mean, std)]
        if d.kind == "c" and any(grads):
            raise RuntimeError("normal does not support automatic differentiation for outputs "
                               "with complex dtype.")
        unit = 1.0 if d.kind != "c" else 1.0 / math.sqrt(2.0)
        if isinstance(std, Tensor):
            # torch: output.normal_(0, 1); output.mul_(std).add_(mean)
            z = _real_draw(_numel(shape), d, lambda n, rd: gen._normal(n, rd, 0.0, unit))
            arr = (b.asarray(z.reshape(shape)) * s).astype(d, copy=False) + m
        else:
            # torch: output.normal_(0, std); output.add_(mean)
            z = _real_draw(_numel(shape), d, lambda n, rd: gen._normal(n, rd, 0.0, std * unit))
            arr = b.asarray(z.reshape(shape)) + m
        name = "NormalBackward%d" % (isinstance(mean, Tensor) + 2 * isinstance(std, Tensor))
        out = _sampled(name, arr.astype(d, copy=False), mean, std)
        if requires_grad and not out.requires_grad:
            out.requires_grad = True
        return out
    if not std >= 0:
        raise RuntimeError("normal expects std >= 0.0, but found std %g" % std)
    b = backend_for(device)
    d = _float_dtype(dtype)
    shape = _size((size,) if isinstance(size, int) else (tuple(size or ()),))
    arr = gen._normal(_numel(shape), d.np, mean, std).reshape(shape)
    return _new(b.asarray(arr), requires_grad)


def bernoulli(input, p=None, *, generator=None, out=None):
    """0/1 samples with probability ``input`` (or the scalar ``p``), same dtype as ``input``."""
    arr = input._array
    b = backend_of(arr)
    gen = _gen(generator)
    n = arr.size
    if p is None:
        if n:       # (the kernel, with its dtype checks, runs on no empty tensor)
            not_implemented_for(arr, "bernoulli_tensor_cpu_self_", "c")
            not_implemented_for(arr, "bernoulli_tensor_cpu_p_", "biu")
        elif arr.dtype.kind == "c" and input._requires_grad and _grad_state.enabled:
            raise RuntimeError("bernoulli does not support automatic differentiation for "
                               "outputs with complex dtype.")
        probs = to_host(arr)
        if bool(((probs < 0) | (probs > 1)).any()):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  "
                               "(Could this error message be improved?  If so, please report "
                               "an enhancement request to PyTorch.)")
        # torch: a float64 uniform per element for float64 probabilities, else a float32 one
        u = gen._unit(n, np.float64 if probs.dtype == np.float64 else np.float32)
        sample = u.reshape(arr.shape) < probs
    else:
        p = float(p)
        if not 0 <= p <= 1:
            raise RuntimeError("bernoulli_ expects p to be in [0, 1], but got p=%g" % p)
        if n:
            not_implemented_for(arr, "bernoulli_scalar_cpu_", "c")
        sample = (gen._unit(n, np.float64) < p).reshape(arr.shape)
    name = "BernoulliBackward0" if p is None else "NotImplemented:bernoulli"
    return _sampled(name, b.asarray(sample.astype(arr.dtype)), input)


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Sample category indices from (unnormalised) probabilities in each row of ``input``
    (torch's algorithm and stream: exponential races without replacement, a cumulative search
    with it)."""
    # The sampling runs on the host (where the Generator is) on a copy of the probabilities.
    probs = to_host(input._array)
    if probs.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if probs.dtype.kind not in "fV":
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: %s"
                           % _dt.scalar_type_name(input.dtype))
    num_samples = int(num_samples)
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_cat = probs.shape[-1]
    if not replacement and num_samples > n_cat:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if n_cat > 1 << 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    gen = _gen(generator)
    rows = probs.reshape(probs.shape[0] if probs.ndim == 2 else 1, n_cat)
    if not rows.shape[0]:
        xp = backend_of(input._array).xp
        return Tensor._wrap(xp.zeros(probs.shape[:-1] + (num_samples,), dtype=np.int64))
    if not replacement or num_samples == 1:
        if not rows.size:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                               "the operation has no identity.")
        if not (bool((rows < np.inf).all()) and bool((rows >= 0).all())):   # host: checks
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if bool((rows.sum(-1) == 0).any()):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        # torch: q ~ Exp(1) in the input's dtype; the samples are the top k of p / q
        q = gen._exponential(rows.size, 1.0).astype(rows.dtype).reshape(rows.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            keys = rows / q
        if num_samples == 1:
            idx = keys.argmax(-1)[:, None]
        else:
            idx = (-keys).argsort(-1, kind="stable")[:, :num_samples]
    else:
        _check_rows(rows)
        idx = gen._multinomial_replacement(rows, num_samples)
    arr = idx.astype(np.int64).reshape(probs.shape[:-1] + (num_samples,))
    return Tensor._wrap(backend_of(input._array).asarray(arr))


def _check_rows(rows):
    """torch's checks of multinomial's probabilities with replacement, row by row: each entry
    in order (NaN fails its ``>= 0`` test), then the row's sum."""
    for row in rows:
        bad = ~(row >= 0) | ~np.isfinite(row)   # host: the host copy
        if bool(bad.any()):
            if not row[int(bad.argmax())] >= 0:
                raise RuntimeError("invalid multinomial distribution (encountering probability "
                                   "entry < 0)")
            raise RuntimeError("invalid multinomial distribution (encountering probability "
                               "entry = infinity or NaN)")
        if not (row.size and row.cumsum(dtype=row.dtype)[-1] > 0):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def poisson(input, generator=None):
    """Poisson samples with rates ``input`` (torch's CPU algorithm and stream)."""
    arr = input._array
    not_implemented_for(arr, "poisson_cpu", "biuc")
    rates = to_host(arr).ravel()
    gen = _gen(generator)
    if np.isinf(rates).any():       # host: the host copy
        sample = np.array([_poisson_inf(gen) if r == np.inf else gen._poisson([r])[0]
                           for r in rates.tolist()])
    else:
        sample = gen._poisson(rates)
    sample = backend_of(arr).asarray(sample.reshape(arr.shape).astype(arr.dtype))
    return _sampled("PoissonBackward0", sample, input)


def _broadcast_shape(a, b):
    """The broadcast shape of ``a`` and ``b``, with torch's error."""
    if a == b:
        return a
    for i, (x, y) in enumerate(zip(reversed(a), reversed(b))):
        if x != y and x != 1 and y != 1:
            raise RuntimeError("The size of tensor a (%d) must match the size of tensor b (%d) "
                               "at non-singleton dimension %d"
                               % (x, y, max(len(a), len(b)) - 1 - i))
    return np.broadcast_shapes(a, b)


def binomial(count, prob, generator=None):
    """Binomial samples: successes in ``count`` trials of probability ``prob`` (tensors of one
    floating dtype, ``prob`` broadcast to ``count``'s shape); torch's CPU algorithm and stream.
    Not differentiable (torch's node raises in backward)."""
    for name, t in (("count", count), ("prob", prob)):
        if not isinstance(t, Tensor):
            raise TypeError("binomial(): argument '%s' (position %d) must be Tensor, not %s"
                            % (name, 1 if name == "count" else 2, type(t).__name__))
    if generator is not None and not hasattr(generator, "_binomial"):
        raise TypeError("binomial(): argument 'generator' must be torch.Generator, not %s"
                        % type(generator).__name__)
    ca, pa = count._array, prob._array
    for name, arr in (("count", ca), ("prob", pa)):
        if arr.dtype.kind not in "fV":
            raise ValueError("binomial only supports floating-point dtypes for %s, got: %s"
                             % (name, _dt.scalar_type_name(arr.dtype)))
    shape = _broadcast_shape(ca.shape, pa.shape)
    if ca.dtype != pa.dtype:
        raise RuntimeError("Found dtype %s but expected %s" % (
            _dt.scalar_type_name(pa.dtype), _dt.scalar_type_name(ca.dtype)))
    if ca.dtype not in (np.float32, np.float64):
        raise NotImplementedError("\"binomial_cpu\" not implemented for '%s'"
                                  % _dt.scalar_type_name(ca.dtype))
    if shape != ca.shape and ca.size:
        warnings.warn("An output with one or more elements was resized since it had shape %s, "
                      "which does not match the required output shape %s. This behavior is "
                      "deprecated, and in a future PyTorch release outputs will not be resized "
                      "unless they have zero elements. You can explicitly reuse an out tensor t "
                      "by resizing it, inplace, to zero elements with t.resize_(0)."
                      % (list(ca.shape), list(shape)), UserWarning, stacklevel=2)
    counts = np.broadcast_to(to_host(ca), shape).ravel().tolist()     # host: the host copy
    probs = np.broadcast_to(to_host(pa), shape).ravel().tolist()     # host: the host copy
    values = _gen(generator)._binomial(counts, probs, ca.dtype == np.float32)
    sample = np.array(values, dtype=ca.dtype).reshape(shape)     # host: the host sample
    return _sampled("NotImplemented:binomial", backend_of(ca).asarray(sample), count, prob)


def _poisson_inf(gen):
    """torch's sample for an infinite rate: its rejection loop returns the integer conversion
    of ``inf``, INT64_MIN, at its first quick acceptance (``|u| <= 0.43``, ``v <= 0.9277``)."""
    while True:
        us = 0.5 - abs(gen._unit_scalar() - 0.5)
        v = gen._unit_scalar()
        if us >= 0.07 and v <= 0.9277:
            return float(-2 ** 63)
