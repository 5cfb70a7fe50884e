"""``make_tensor``: a tensor of random values in ``[low, high)``, drawn as torch draws them."""
import math
import warnings

from .. import dtypes as _dt
from ..ops import empty, randint, view_as_real

_INTEGRAL = (_dt.bool, _dt.uint8, _dt.int8, _dt.int16, _dt.int32, _dt.int64, _dt.uint16,
             _dt.uint32, _dt.uint64)
_FLOATING = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64)
_COMPLEX = (_dt.complex64, _dt.complex128)


def _low_high(low, high, lowest, highest, default_low, default_high, dtype):
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError("`low` and `high` cannot be NaN, but got low=%s and high=%s"
                         % (low, high))
    if low == high and dtype in _FLOATING + _COMPLEX:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or "
                      "complex types is deprecated since 2.1 and will be removed in 2.3. Use "
                      "`torch.full(...)` instead.", FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError("`low` must be less than `high`, but got %s >= %s" % (low, high))
    elif high < lowest or low >= highest:
        raise ValueError("The value interval specified by `low` and `high` is [%s, %s), but %s "
                         "only supports [%s, %s)" % (low, high, dtype, lowest, highest))
    low, high = (min(max(v, lowest), highest) for v in (low, high))
    if dtype in _INTEGRAL:
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A ``shape`` tensor of ``dtype`` on ``device`` with values uniform in ``[low, high)``
    (defaults: [-9, 9) for floating and complex, [-9, 10) for integers, {0, 1} for bool)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually "
                         "exclusive, but got noncontiguous=%s and memory_format=%s"
                         % (noncontiguous, memory_format))
    if requires_grad and dtype in _INTEGRAL:
        raise ValueError("`requires_grad=True` is not supported for boolean and integral "
                         "dtypes, but got dtype=%s" % (dtype,))
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:       # (twice the last dim, then every other element of it)
        shape = shape[:-1] + (2 * shape[-1],)
    if dtype is _dt.bool:
        low, high = _low_high(low, high, 0, 2, 0, 2, dtype)
        result = randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _INTEGRAL:
        info = _dt.iinfo(dtype)
        low, high = _low_high(low, high, info.min,
                              info.max + (1 if dtype is not _dt.int64 else 0), -9, 10, dtype)
        result = randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _FLOATING + _COMPLEX:
        info = _dt.finfo(dtype)
        low, high = _low_high(low, high, info.min, info.max, -9, 9, dtype)
        result = empty(shape, device=device, dtype=dtype)
        target = view_as_real(result) if dtype in _COMPLEX else result
        if high - low >= _dt.finfo(target.dtype).max:
            target.uniform_(low / 2, high / 2).mul_(2)
        else:
            target.uniform_(low, high)
    else:
        raise TypeError("The requested dtype '%s' is not supported by "
                        "torch.testing.make_tensor(). To request support, file an issue at: "
                        "https://github.com/pytorch/pytorch/issues" % (dtype,))
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if dtype in _INTEGRAL else _dt.finfo(dtype).tiny
    if dtype in _FLOATING + _COMPLEX:
        result.requires_grad = requires_grad
    return result
