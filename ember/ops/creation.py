"""Creation ops: tensor, zeros, ones, arange, rand, randn, ... (``device=`` accepted: cpu)."""
import math

import numpy as np

from .. import dtypes as _dt
from ..random import _rng
from ..backend import backend_for, backend_of, is_array
from ..tensor import Tensor, _to_array

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "full", "empty",
           "zeros_like", "ones_like", "full_like", "empty_like", "arange", "range", "linspace",
           "logspace", "eye", "rand", "randn", "randint", "rand_like", "randn_like",
           "randint_like", "randperm", "normal", "bernoulli", "multinomial", "poisson",
           "empty_strided", "scalar_tensor", "from_dlpack", "frombuffer", "set_default_device",
           "get_default_device", "set_num_threads", "get_num_threads", "set_num_interop_threads",
           "get_num_interop_threads"]

_builtin_range = range


def set_default_device(device):
    """Set the device new tensors are created on; only ``'cpu'`` (or None) exists in ember."""
    if device is not None:
        _check_device(device)


def get_default_device():
    """The device new tensors are created on: always ``device(type='cpu')``."""
    from .conversion import device as _device
    return _device("cpu")


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


def _check_device(device):
    """The backend of ``device`` (raises a clear error for a device ember cannot use)."""
    return backend_for(device)


def _finish(arr, requires_grad, device=None):
    """A new tensor around host or device array ``arr``, moved to ``device`` (or the default
    device) when it lives elsewhere."""
    if device is None and type(arr) is not np.ndarray and is_array(arr):
        b = backend_of(arr)     # device data stays where it is
    else:
        b = backend_for(device)
    if type(arr) is not b.array_type:
        arr = b.asarray(arr)
    t = Tensor._wrap(arr)
    if requires_grad:
        t.requires_grad = True
    return t


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = int(s)
        if not isinstance(s, (int, np.integer)):
            raise TypeError("size must be a sequence of ints, but got %s" % type(s).__name__)
        if s < 0:
            raise RuntimeError("Trying to create tensor with negative dimension %d: %s"
                               % (s, list(size)))
        out.append(int(s))
    return tuple(out)


def _float_dtype(dtype):
    return _dt.to_dtype(dtype) if dtype is not None else _dt.get_default_dtype()


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data`` (nested lists, scalars, arrays or tensors).

    Example:
        >>> import ember
        >>> ember.tensor([[1., 2.], [3., 4.]])
        tensor([[1., 2.],
                [3., 4.]])
    """
    d = None if dtype is None else _dt.to_dtype(dtype)
    arr = _to_array(data, d)
    if arr is getattr(data, "_array", None) or arr is data:
        arr = arr.copy()
    return _finish(arr, requires_grad, device)


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with a Tensor or ndarray when the dtype allows."""
    _check_device(device)
    if isinstance(data, Tensor):
        if dtype is None or _dt.to_dtype(dtype) is data.dtype:
            return data
        return data.to(_dt.to_dtype(dtype))
    d = None if dtype is None else _dt.to_dtype(dtype)
    return _finish(_to_array(data, d), False, device)


def asarray(obj, dtype=None, device=None, copy=None, requires_grad=False):
    """``as_tensor`` with torch.asarray's ``copy`` and ``requires_grad`` arguments."""
    t = tensor(obj, dtype=dtype) if copy else as_tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        t.requires_grad_()
    return t


def from_numpy(ndarray):
    """A tensor sharing memory with ``ndarray`` (writes show through both ways)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError("expected np.ndarray (got %s)" % type(ndarray).__name__)
    _dt.from_numpy_dtype(ndarray.dtype)
    return Tensor._wrap(ndarray)


def from_dlpack(ext_tensor):
    """Zero-copy import of any DLPack-capable array (NumPy, CuPy on CPU, PyTorch)."""
    if isinstance(ext_tensor, Tensor):
        return ext_tensor
    return Tensor._wrap(np.from_dlpack(ext_tensor))


def frombuffer(buffer, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor over the bytes of ``buffer`` (shares memory)."""
    arr = np.frombuffer(buffer, dtype=_dt.to_dtype(dtype).np, count=count, offset=offset)
    return _finish(arr, requires_grad)


def scalar_tensor(s, dtype=None, device=None, requires_grad=False):
    """A 0-d tensor holding ``s`` (default float dtype)."""
    return _finish(np.array(s, dtype=_float_dtype(dtype).np), requires_grad, device)


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """A tensor of zeros of the given size (default float dtype)."""
    return _finish(np.zeros(_size(size), dtype=_float_dtype(dtype).np), requires_grad, device)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """A tensor of ones of the given size (default float dtype)."""
    return _finish(np.ones(_size(size), dtype=_float_dtype(dtype).np), requires_grad, device)


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          memory_format=None, pin_memory=False):
    """An uninitialised tensor of the given size (ember fills it with zeros)."""
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def empty_strided(size, stride, dtype=None, device=None, requires_grad=False):
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False):
    """A tensor filled with ``fill_value``; dtype inferred from it as torch does."""
    if dtype is None:
        if isinstance(fill_value, bool):
            dtype = _dt.bool
        elif isinstance(fill_value, (int, np.integer)):
            dtype = _dt.int64
        else:
            dtype = _dt.get_default_dtype()
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _finish(np.full(_size((size,) if isinstance(size, int) else (size,)), fill_value,
                           dtype=_dt.to_dtype(dtype).np), requires_grad, device)


def _like_dtype(t, dtype):
    return (t.dtype if dtype is None else _dt.to_dtype(dtype)).np


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    """Zeros with the shape (and dtype, unless given) of ``input``."""
    return _finish(np.zeros(input._array.shape, _like_dtype(input, dtype)), requires_grad, device)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    """Ones with the shape (and dtype, unless given) of ``input``."""
    return _finish(np.ones(input._array.shape, _like_dtype(input, dtype)), requires_grad, device)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    return zeros_like(input, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    """``fill_value`` with the shape (and dtype, unless given) of ``input``."""
    return _finish(np.full(input._array.shape, fill_value, _like_dtype(input, dtype)),
                   requires_grad, device)


def _num(x):
    return x.item() if isinstance(x, Tensor) else x


def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 for integer arguments."""
    start, end, step = _num(start), _num(end), _num(step)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("arange(): step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is None:
        ints = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        d = _dt.int64 if ints else _dt.get_default_dtype()
    else:
        d = _dt.to_dtype(dtype)
    n = int(math.ceil((end - start) / step))
    arr = (start + np.arange(n, dtype=np.float64 if d.is_floating_point else np.int64) * step)
    return _finish(arr.astype(d.np), requires_grad, device)


def range(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """Deprecated torch.range: like arange but includes ``end``."""
    if end is None:
        start, end = 0, start
    n = int(math.floor((end - start) / step)) + 1
    arr = start + np.arange(n, dtype=np.float64) * step
    return _finish(arr.astype(_float_dtype(dtype).np), requires_grad, device)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    start, end = _num(start), _num(end)
    if not isinstance(steps, (int, np.integer)) or steps < 0:
        raise RuntimeError("linspace(): number of steps must be a non-negative int, got %r"
                           % (steps,))
    d = _float_dtype(dtype)
    arr = np.linspace(start, end, int(steps), dtype=np.float64)
    return _finish(arr.astype(d.np), requires_grad, device)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """``base ** linspace(start, end, steps)``."""
    arr = np.power(base, np.linspace(_num(start), _num(end), int(steps), dtype=np.float64))
    return _finish(arr.astype(_float_dtype(dtype).np), requires_grad, device)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The ``n x m`` identity matrix."""
    return _finish(np.eye(n, n if m is None else m, dtype=_float_dtype(dtype).np),
                   requires_grad, device)


def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    """Uniform samples on [0, 1)."""
    d = _float_dtype(dtype)
    arr = _rng(generator).random(_size(size), dtype=np.float64 if d.np == np.float64
                                 else np.float32)
    return _finish(arr.astype(d.np, copy=False), requires_grad, device)


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    """Standard normal samples."""
    d = _float_dtype(dtype)
    arr = _rng(generator).standard_normal(_size(size), dtype=np.float64 if d.np == np.float64
                                          else np.float32)
    return _finish(arr.astype(d.np, copy=False), requires_grad, device)


def randint(low=0, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None,
            device=None, requires_grad=False):
    """Integers uniform on [low, high); ``randint(high, size)`` and ``randint(low, high, size)``."""
    if size is None:
        if isinstance(high, (tuple, list)):
            low, high, size = 0, low, high
        else:
            raise TypeError("randint() missing required argument 'size'")
    if high is None:
        raise TypeError("randint() missing required argument 'high'")
    if low >= high:
        raise RuntimeError("random_ expects 'from' to be less than 'to', but got from=%d >= "
                           "to=%d" % (low, high))
    d = _dt.int64 if dtype is None else _dt.to_dtype(dtype)
    arr = _rng(generator).integers(low, high, size=_size((size,) if isinstance(size, int)
                                                         else (tuple(size),)))
    return _finish(arr.astype(d.np), requires_grad, device)


def rand_like(input, *, generator=None, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None):
    return rand(*input._array.shape, generator=generator, device=device,
                dtype=dtype or input.dtype, requires_grad=requires_grad)


def randn_like(input, *, generator=None, dtype=None, layout=None, device=None,
               requires_grad=False, memory_format=None):
    return randn(*input._array.shape, generator=generator, device=device,
                 dtype=dtype or input.dtype, requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None,
                 device=None, requires_grad=False, memory_format=None):
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input._array.shape), generator=generator, device=device,
                   dtype=dtype or input.dtype)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """A random permutation of ``0 .. n-1`` (int64)."""
    d = _dt.int64 if dtype is None else _dt.to_dtype(dtype)
    return _finish(_rng(generator).permutation(int(n)).astype(d.np), requires_grad, device)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None,
           layout=None, device=None, requires_grad=False):
    """Normal samples; ``mean``/``std`` may be tensors (broadcast) or numbers with ``size``."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        m = mean._array if isinstance(mean, Tensor) else mean
        s = std._array if isinstance(std, Tensor) else std
        if np.any(np.asarray(s) < 0):
            raise RuntimeError("normal expects all elements of std >= 0.0")
        shape = np.broadcast_shapes(np.shape(m), np.shape(s))
        ref = mean if isinstance(mean, Tensor) else std
        arr = m + s * _rng(generator).standard_normal(shape)
        return _finish(np.asarray(arr).astype(ref._array.dtype), requires_grad)
    if std < 0:
        raise RuntimeError("normal expects std >= 0.0, but found std %g" % std)
    shape = _size((size,) if isinstance(size, int) else (tuple(size or ()),))
    arr = mean + std * _rng(generator).standard_normal(shape)
    return _finish(np.asarray(arr).astype(_float_dtype(dtype).np), requires_grad, device)


def bernoulli(input, p=None, *, generator=None, out=None):
    """0/1 samples with probability ``input`` (or the scalar ``p``), same dtype as ``input``."""
    probs = input._array if p is None else np.full(input._array.shape, p)
    if np.any((probs < 0) | (probs > 1)):
        raise RuntimeError("bernoulli: all elements of input must be in [0, 1]")
    arr = _rng(generator).random(input._array.shape) < probs
    return Tensor._wrap(arr.astype(input._array.dtype))


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Sample category indices from (unnormalised) probabilities in each row of ``input``."""
    probs = np.asarray(input._array, dtype=np.float64)
    if probs.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim, got %d" % probs.ndim)
    if np.any(probs < 0) or not np.all(np.isfinite(probs)):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    rows = probs.reshape(-1, probs.shape[-1])
    if not replacement and num_samples > rows.shape[1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    rng = _rng(generator)
    out = []
    for row in rows:
        total = row.sum()
        if total <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if replacement:
            out.append(rng.choice(row.size, size=num_samples, replace=True, p=row / total))
        else:
            out.append(rng.choice(row.size, size=num_samples, replace=False, p=row / total))
    arr = np.array(out, dtype=np.int64)
    return Tensor._wrap(arr.reshape(probs.shape[:-1] + (num_samples,)))


def poisson(input, generator=None):
    """Poisson samples with rates ``input``."""
    return Tensor._wrap(_rng(generator).poisson(input._array).astype(input._array.dtype))
