"""Helpers shared by the op families: dims, broadcasting undo, scalars and dtypes."""
import functools
import sys
import warnings

import numpy as np

from .. import dtypes as _dt
from ..autograd._sum_to import sum_to_size
from ..backend import (_XP, align_devices, backend_for, backend_of,  # noqa: F401
                       get_array_module, same_device)
from ..backend import matmul2d as mm2d  # noqa: F401
from ..tensor import Tensor, _to_array

_ndarray = np.ndarray
_np_generic = np.generic


_WARNED: set = set()


def warn_once(key, message, stacklevel=3):
    """torch's ``TORCH_WARN_ONCE``: a UserWarning the first time only (per ``key``), per
    process."""
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(message, stacklevel=stacklevel)


def deprecated_overload(msg):
    """torch's warning for a deprecated overload: once per process (one flag for all of them),
    at the line of the caller outside ember."""
    warn_once("deprecated overload", msg, caller_stacklevel() + 1)


def _hidden(f):
    """Whether warnings skips frame ``f`` when it counts a ``stacklevel`` (importlib's
    bootstrap frames, and ember's ``__torch_function__`` dispatchers compiled as such)."""
    return "importlib" in f.f_code.co_filename and "_bootstrap" in f.f_code.co_filename


def _in_ember(f):
    return f.f_globals.get("__name__", "").startswith("ember.")


def called_by_user(up=0):
    """Whether the function calling this one (or the one ``up`` frames above it) was called
    from outside ember."""
    f = sys._getframe(2 + up)
    while f is not None and _hidden(f):
        f = f.f_back
    return f is None or not _in_ember(f)


def caller_stacklevel():
    """The ``stacklevel`` that attributes a warning, issued by the function calling this one,
    to the first caller outside ember (as warnings counts: frames it hides do not count)."""
    f, level = sys._getframe(2), 1
    while f is not None:
        level += not _hidden(f)
        if not _in_ember(f):
            break
        f = f.f_back
    return level


def xp_of(t):
    """The array module of tensor ``t``'s device (NumPy on the CPU)."""
    return _XP.get(type(t._array), np)


_OVERLAP_MSG = ("unsupported operation: more than one element of the written-to tensor refers "
                "to a single memory location. Please clone() the tensor before performing the "
                "operation.")


def writable(arr):
    """``arr`` made ready for a write, or None where torch refuses one: a read-only view (an
    expanded tensor's) takes writes unless two of its elements share memory (a stride 0 over a
    dim of size > 1: torch's internal-overlap check), as ``expand(3, 2)[:, 0]``."""
    if arr.flags.writeable:
        return arr
    if any(n > 1 and st == 0 for n, st in zip(arr.shape, arr.strides)):
        return None
    try:
        arr.flags.writeable = True
    except ValueError:      # (memory NumPy holds read-only: not ours to write)
        return None
    return arr


def cast(arr, np_dtype):
    """``arr.astype(np_dtype)``, a bfloat16 to an integer through float32 as torch's cast
    (ml_dtypes' own cast gives 0 for a negative or out-of-range number)."""
    if arr.dtype.kind == "V" and np.dtype(np_dtype).kind in "iu":
        arr = arr.astype(np.float32)
    return arr.astype(np_dtype)


def not_implemented_for(arr, kernel, kinds):
    """torch's error for a kernel with no version for ``arr``'s dtype kind (letters of
    ``kinds``: ``"b"`` bool, ``"iu"`` integers, ``"c"`` complex): ``"kernel" not implemented for
    'Bool'``."""
    if arr.dtype.kind in kinds:
        raise NotImplementedError("\"%s\" not implemented for '%s'"
                                  % (kernel, _dt.scalar_type_name(arr.dtype)))


def need_tensors(op, a, b, names=("input", "other")):
    """``(a, b)`` when both are Tensors, else torch's TypeError naming the first that is not
    (ops that take no Python number: ``maximum(x, 2)`` raises in torch)."""
    if type(a) is not Tensor or type(b) is not Tensor:
        for i, (name, x) in enumerate(zip(names, (a, b))):
            if not isinstance(x, Tensor):
                raise TypeError("%s(): argument '%s' (position %d) must be Tensor, not %s"
                                % (op, name, i + 1, type(x).__name__))
    return a, b


def wrap_dim(dim, ndim, op="op"):
    """Normalise a possibly negative ``dim`` for a tensor of ``ndim`` dims, as torch checks it."""
    n = max(ndim, 1)
    if not isinstance(dim, (int, np.integer)) or dim.__class__ is bool:
        raise TypeError("%s(): argument 'dim' must be int, not %s" % (op, type(dim).__name__))
    if dim < -n or dim >= n:
        raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got "
                         "%d)" % (-n, n - 1, dim))
    return int(dim) % n


def wrap_dims(dim, ndim, op="op"):
    """``dim`` (None, int, tuple or list) as a sorted tuple of non-negative dims."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (int, np.integer)):
        return (wrap_dim(dim, ndim, op),)
    dims = tuple(wrap_dim(d, ndim, op) for d in dim)
    if len(set(dims)) != len(dims):
        seen = set()
        for d in dims:
            if d in seen:
                raise RuntimeError("dim %d appears multiple times in the list of dims" % d)
            seen.add(d)
    return tuple(sorted(dims))


def sum_to(grad, shape):
    """Sum ``grad`` over broadcast dims so that it has ``shape`` (no-op when equal)."""
    if grad._array.shape == shape:
        return grad
    return sum_to_size(grad, shape)


INT_OF_SIZE = {n: np.dtype("i%d" % n) for n in (1, 2, 4, 8)}   # (a float's bits as an int)


def keep_where(keep, g):
    """``np.where(keep, g, 0)``: ``g`` where the bool array ``keep`` holds, else +0."""
    if g.dtype.kind not in "fV" or keep.shape != g.shape or g.size < 2048:
        return get_array_module(g).where(keep, g, g.dtype.type(0))
    # NOTE: a bit mask instead of np.where, whose branchy loop is ~10x slower on large random
    # masks (and faster on small arrays, which the test above leaves to it).
    it = INT_OF_SIZE[g.itemsize]
    m = keep.astype(it)
    get_array_module(m).negative(m, out=m)
    m &= g.view(it)
    return m.view(g.dtype)


def as_tensor_arg(x, like=None, floating=None):
    """A Tensor from ``x``; Python scalars take ``like``'s dtype category rules. An int out of
    an integer dtype's range keeps its value in the default float dtype for an op that computes
    integer inputs in float (``floating=True``), wraps into the dtype for an integer op
    (``floating=False``: torch's cast of its int64 scalar), else raises OverflowError."""
    if isinstance(x, Tensor):
        return x
    if like is not None and isinstance(x, (int, float, bool, complex, np.number, np.bool_)):
        d = _dt.result_type(like, x)
        if x.__class__ is int and not -(1 << 63) <= x < 1 << 63:
            big_int_check(x, like._array.dtype)
        if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
            x = _int_scalar_for(int(x), d.np, floating)
            if type(x) is float:
                d = _dt.get_default_dtype()
        return Tensor._wrap(xp_of(like).asarray(x, dtype=d.np))
    b = backend_of(like._array) if like is not None else backend_for(None)
    return Tensor._wrap(b.asarray(_to_array(x)))


def big_int_check(x, d):
    """torch's errors for an int number outside int64 taken with an array of NumPy dtype ``d``:
    OverflowError outside uint64, and no promotion of bool to uint64."""
    _int_scalar_for(x, np.dtype(np.float64), True)
    if d.kind == "b" and x >= 1 << 63:
        raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, "
                           "attempted to promote Bool and UInt64")


def _int_scalar_for(x, d, floating):
    """The int ``x`` for an array of NumPy dtype ``d``, as torch takes a number (int64, or
    uint64 above its range); out of an integer ``d``'s range, as ``as_tensor_arg`` says."""
    if x >= 1 << 64:
        raise OverflowError("int too big to convert")
    if x < -(1 << 63):
        raise OverflowError("can't convert negative int to unsigned")
    if d.kind not in "iu":
        return x
    info = np.iinfo(d)
    if info.min <= x <= info.max:
        return x
    if floating:
        return float(x)
    if floating is None:
        raise OverflowError("Python integer %d out of bounds for %s" % (x, d))
    x %= 1 << info.bits
    return x - (1 << info.bits) if x > info.max else x


def scalar_like(x, like, floating=None):
    """A 0-d Tensor for the Python scalar ``x``, with torch's dtype for ``like op x``
    (``floating``: see ``as_tensor_arg``)."""
    return as_tensor_arg(x, like, floating)


SCALAR_TYPES = (int, float, bool, complex, np.number, np.bool_)


def is_scalar(x):
    return isinstance(x, SCALAR_TYPES)


def check_shapes_broadcast(op, a_shape, b_shape):
    """Raise torch's message when two shapes do not broadcast."""
    try:
        return np.broadcast_shapes(a_shape, b_shape)
    except ValueError:
        for i, (x, y) in enumerate(zip(reversed(a_shape), reversed(b_shape))):
            if x != y and x != 1 and y != 1:
                dim = max(len(a_shape), len(b_shape)) - 1 - i
                raise RuntimeError(
                    "The size of tensor a (%d) must match the size of tensor b (%d) at "
                    "non-singleton dimension %d" % (x, y, dim)) from None     # (torch's words)
        raise


def binary_arrays(op, a, b):
    """The raw arrays of ``a`` and ``b`` cast to torch's result dtype (``a`` is a Tensor)."""
    aa = a._array
    if isinstance(b, Tensor):
        ba = b._array
        if type(aa) is not type(ba):
            aa, ba = align_devices(aa, ba)  # (a 0-d CPU tensor joins the other's device)
        if aa.dtype is not ba.dtype and aa.dtype != ba.dtype:
            d = _dt.result_type(a, b).np
            if aa.dtype != d:
                aa = aa.astype(d)
            if ba.dtype != d:
                ba = ba.astype(d)
        if aa.shape != ba.shape:
            check_shapes_broadcast(op, aa.shape, ba.shape)
        return aa, ba
    if isinstance(b, _np_generic):
        b = b.item()     # (a NumPy number acts as the Python number, as in torch)
    elif b.__class__ is int and not -(1 << 63) <= b < 1 << 63:
        big_int_check(b, aa.dtype)
    if aa.dtype.kind == "V" and not isinstance(b, complex):     # (bfloat16: ml_dtypes')
        return aa, aa.dtype.type(b)     # (torch rounds the number to bfloat16 first)
    if isinstance(b, bool) or (aa.dtype.kind in "fV" or (aa.dtype.kind in "iu" and
                                                         isinstance(b, int))):
        if aa.dtype.kind in "iu" and not 0 <= b <= 127:
            info = np.iinfo(aa.dtype)
            if not info.min <= b <= info.max:
                # host: a Python int wrapped to the dtype, as torch's integer scalars
                b = aa.dtype.type(np.array(b).astype(aa.dtype))
        return aa, b
    d = _dt.result_type(a, b).np
    return (aa.astype(d) if aa.dtype != d else aa), b


def opmath_scalar(aa, b):
    """``b`` as torch's float16/bfloat16 kernels take a number or a 0-d tensor for mul/div: in
    float32 (not rounded to the tensor's dtype); None when ``aa`` is neither or ``b`` is not
    such a value."""
    if aa.dtype.kind != "V" and aa.dtype != np.float16:     # (not bfloat16 nor float16)
        return None
    if isinstance(b, Tensor):
        if b._array.ndim or b._array.dtype.kind == "V" or b._array.dtype.kind not in "fiubV":
            return None
        return b._array.astype(np.float32)
    return None if isinstance(b, complex) else np.float32(b)


def checked_scalar(value, d, reduced=False):
    """The Python number ``value`` for an array of dtype ``d`` (an ember dtype), after torch's
    overflow check; a negative int wraps into an unsigned type, as torch's two's complement."""
    _dt.check_scalar(value, d, reduced=reduced)
    if d._rank == 1 and isinstance(value, (int, np.integer)) and value < 0 and \
            not isinstance(value, (bool, np.bool_)) and d.np.kind == "u":
        return int(value) % (1 << (8 * d.itemsize))
    return value


def needs_float(arr):
    """The array as the default float dtype when it is integral or bool (for exp, sqrt, ...)."""
    if arr.dtype.kind in "fcV":
        return arr
    return arr.astype(_dt.get_default_dtype().np)


def to_dtype(d):
    return _dt.to_dtype(d)


R_TO_C_MSG = ("Expected isFloatingType(grad.scalar_type()) || (input_is_complex == "
              "grad_is_complex) to be true, but got false.  (Could this error message be "
              "improved?  If so, please report an enhancement request to PyTorch.)")


def check_real_grad(g, ctx, i):
    """torch's engine error for a complex gradient ``g`` of input ``i`` of ``ctx``'s op when that
    input is real and torch's formula has no complex-to-real step (its ``handle_r_to_c``)."""
    if g is not None and g._array.dtype.kind == "c" and ctx._input_meta(i)[1].kind != "c":
        raise RuntimeError(R_TO_C_MSG)


@functools.lru_cache(maxsize=None)
def _cpuinfo(key):
    """The value of ``key`` for the first CPU in /proc/cpuinfo ("" where there is none)."""
    try:
        with open("/proc/cpuinfo") as f:
            return next((ln.split(":", 1)[1].strip() for ln in f
                         if ln.split(":", 1)[0].strip() == key), "")
    except OSError:
        return ""


def cpu_vendor():
    """The CPU's vendor_id ("GenuineIntel", "AuthenticAMD"): MKL takes other code paths on
    other vendors' CPUs."""
    return _cpuinfo("vendor_id")


@functools.lru_cache(maxsize=None)
def cpu_flags():
    """The CPU's feature flags (empty where /proc/cpuinfo is absent)."""
    return frozenset(_cpuinfo("flags").split())


@functools.lru_cache(maxsize=None)
def cpu_has(kind):
    """Whether torch's oneDNN takes ``kind`` ("fp16" or "bf16") convolutions on this CPU
    (``mkldnn_fp16_device_check``/``mkldnn_bf16_device_check``: AVX512-FP16 or AVX2-VNNI-2 for
    half, AVX512 core or AVX2-VNNI-2 for bfloat16)."""
    flags = cpu_flags()
    vnni2 = {"avx_ne_convert", "avx_vnni_int8", "avx_ifma"} <= flags
    if kind == "fp16":
        return vnni2 or "avx512_fp16" in flags or "amx_fp16" in flags
    return vnni2 or {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags
