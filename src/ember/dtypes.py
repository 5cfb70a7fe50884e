"""dtype objects (``ember.float32`` ...), torch's type-promotion rules and the default dtype."""
import builtins as _b

import numpy as np

_py_float, _py_int, _py_bool, _py_complex = _b.float, _b.int, _b.bool, _b.complex

__all__ = ["dtype", "float16", "half", "float32", "float", "float64", "double", "int8", "uint8",
           "int16", "short", "int32", "int", "int64", "long", "bool", "bfloat16", "complex32",
           "chalf", "complex64", "cfloat", "complex128", "cdouble", "uint16", "uint32", "uint64",
           "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
           "float4_e2m1fn_x2", "quint8", "qint8", "qint32", "quint4x2", "quint2x4", "bits8",
           "bits16", "bits1x8", "bits2x4", "bits4x2", "int1", "int2", "int3", "int4", "int5",
           "int6", "int7", "uint1", "uint2", "uint3", "uint4", "uint5", "uint6", "uint7", "bit",
           "set_default_dtype", "get_default_dtype", "promote_types", "result_type", "finfo",
           "iinfo"]


class dtype:
    """A tensor element type; wraps a NumPy dtype and prints as ``torch.float32``."""

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "is_signed", "itemsize",
                 "_rank", "_legacy")

    def __init__(self, name, np_dtype, rank, legacy):
        self.name = name
        self.np = np.dtype(np_dtype)
        k = kind(self.np)
        self.is_floating_point = k == "f"
        self.is_complex = k == "c"
        self.is_signed = k in "fic"
        self.itemsize = self.np.itemsize
        self._rank = rank          # 0 bool, 1 integer, 2 floating, 3 complex
        self._legacy = legacy      # "FloatTensor" ...

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_real(self):
        """The real dtype of a complex one (``complex64 -> float32``); other dtypes unchanged."""
        return _TO_REAL.get(self.name, self)

    def to_complex(self):
        """The complex dtype of a floating one (``float32 -> complex64``)."""
        if self.is_complex:
            return self
        try:
            return _TO_COMPLEX[self.name]
        except KeyError:
            raise RuntimeError("Unknown Complex ScalarType for %s"
                               % self._legacy.replace("Tensor", "")) from None


class _NoArrayDtype(dtype):
    """A torch dtype ember cannot hold (``complex32``, ``float8_*``, ``uint16``, quantized):
    it exists and prints as torch's, but making or converting a tensor of it raises."""

    __slots__ = ()

    def __init__(self, name, itemsize, rank, legacy, is_float=False, is_signed=True):
        self.name = name
        self.is_floating_point = is_float
        self.is_complex = rank == 3
        self.is_signed = is_signed
        self.itemsize = itemsize
        self._rank = rank
        self._legacy = legacy

    @property
    def np(self):
        hint = {"complex32": "complex64", "uint16": "int32", "uint32": "int64",
                "uint64": "int64"}.get(self.name, "float32" if self.is_floating_point else None)
        raise TypeError("ember does not support torch.%s tensors%s" % (
            self.name, "; use torch.%s" % hint if hint else ""))


class _Bfloat16(dtype):
    """bfloat16, whose NumPy dtype comes from ``ml_dtypes``: loaded on first use (it takes
    longer to import than ember itself), then registered for arrays of that dtype."""

    __slots__ = ()

    def __init__(self):
        self.name = "bfloat16"
        self.is_floating_point, self.is_complex, self.is_signed = True, False, True
        self.itemsize = 2
        self._rank = 2
        self._legacy = "BFloat16Tensor"

    @property
    def np(self):
        np_dtype = _LOADED.get("bfloat16")
        if np_dtype is None:
            import ml_dtypes
            np_dtype = _LOADED["bfloat16"] = np.dtype(ml_dtypes.bfloat16)
            _FLOAT_KIND[np_dtype] = "f"
            _BY_NP[np_dtype] = self
        return np_dtype


_LOADED: dict = {}
_FLOAT_KIND: dict = {}     # NumPy dtypes of kind "V" that are floats (bfloat16, once loaded)


def kind(np_dtype):
    """NumPy's ``dtype.kind`` letter, with ``"f"`` for bfloat16 (whose NumPy kind is ``"V"``)."""
    k = np_dtype.kind
    return _FLOAT_KIND.get(np_dtype, k) if k == "V" else k


def _by_name(name):
    return _BY_NAME[name]


bool = dtype("bool", np.bool_, 0, "BoolTensor")
uint8 = dtype("uint8", np.uint8, 1, "ByteTensor")
int8 = dtype("int8", np.int8, 1, "CharTensor")
int16 = short = dtype("int16", np.int16, 1, "ShortTensor")
int32 = int = dtype("int32", np.int32, 1, "IntTensor")
int64 = long = dtype("int64", np.int64, 1, "LongTensor")
float16 = half = dtype("float16", np.float16, 2, "HalfTensor")
float32 = float = dtype("float32", np.float32, 2, "FloatTensor")
float64 = double = dtype("float64", np.float64, 2, "DoubleTensor")
bfloat16 = _Bfloat16()
complex64 = cfloat = dtype("complex64", np.complex64, 3, "ComplexFloatTensor")
complex128 = cdouble = dtype("complex128", np.complex128, 3, "ComplexDoubleTensor")
complex32 = chalf = _NoArrayDtype("complex32", 4, 3, "ComplexHalfTensor")
uint16 = _NoArrayDtype("uint16", 2, 1, "UInt16Tensor", is_signed=False)
uint32 = _NoArrayDtype("uint32", 4, 1, "UInt32Tensor", is_signed=False)
uint64 = _NoArrayDtype("uint64", 8, 1, "UInt64Tensor", is_signed=False)
float8_e4m3fn = _NoArrayDtype("float8_e4m3fn", 1, 2, "Float8_e4m3fnTensor", True)
float8_e4m3fnuz = _NoArrayDtype("float8_e4m3fnuz", 1, 2, "Float8_e4m3fnuzTensor", True)
float8_e5m2 = _NoArrayDtype("float8_e5m2", 1, 2, "Float8_e5m2Tensor", True)
float8_e5m2fnuz = _NoArrayDtype("float8_e5m2fnuz", 1, 2, "Float8_e5m2fnuzTensor", True)
float8_e8m0fnu = _NoArrayDtype("float8_e8m0fnu", 1, 2, "Float8_e8m0fnuTensor", True, False)
float4_e2m1fn_x2 = _NoArrayDtype("float4_e2m1fn_x2", 1, 2, "Float4_e2m1fn_x2Tensor", True)
quint8 = _NoArrayDtype("quint8", 1, 1, "QUInt8Tensor", is_signed=False)
qint8 = _NoArrayDtype("qint8", 1, 1, "QInt8Tensor")
qint32 = _NoArrayDtype("qint32", 4, 1, "QInt32Tensor")
quint4x2 = _NoArrayDtype("quint4x2", 1, 1, "QUInt4x2Tensor", is_signed=False)
quint2x4 = _NoArrayDtype("quint2x4", 1, 1, "QUInt2x4Tensor", is_signed=False)
bits8 = _NoArrayDtype("bits8", 1, 1, "Bits8Tensor", is_signed=False)
bits16 = _NoArrayDtype("bits16", 2, 1, "Bits16Tensor", is_signed=False)
bits1x8 = _NoArrayDtype("bits1x8", 1, 1, "Bits1x8Tensor", is_signed=False)
bits2x4 = _NoArrayDtype("bits2x4", 1, 1, "Bits2x4Tensor", is_signed=False)
bits4x2 = _NoArrayDtype("bits4x2", 1, 1, "Bits4x2Tensor", is_signed=False)
# the sub-byte integers (torch names them for packed kernels; no tensor op runs on them)
int1, int2, int3, int4, int5, int6, int7 = (
    _NoArrayDtype("int%d" % _k, 1, 1, "Int%dTensor" % _k) for _k in range(1, 8))
uint1, uint2, uint3, uint4, uint5, uint6, uint7 = (
    _NoArrayDtype("uint%d" % _k, 1, 1, "UInt%dTensor" % _k, is_signed=False)
    for _k in range(1, 8))
bit = uint1
_NO_ARRAY = (int1, int2, int3, int4, int5, int6, int7, uint1, uint2, uint3, uint4, uint5,
             uint6, uint7, complex32, uint16, uint32, uint64, float8_e4m3fn, float8_e4m3fnuz,
             float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu, float4_e2m1fn_x2, quint8, qint8,
             qint32, quint4x2, quint2x4, bits8, bits16, bits1x8, bits2x4, bits4x2)

_ALL = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64,
        complex128)
_BY_NAME = {d.name: d for d in _ALL + _NO_ARRAY}
_TO_REAL = {"complex32": float16, "complex64": float32, "complex128": float64}
_TO_COMPLEX = {"float16": complex32, "float32": complex64, "float64": complex128}
class _ByNp(dict):
    """NumPy dtype -> ember dtype; bfloat16 joins when ml_dtypes is loaded (an array of it may
    come from outside ember: ``ember.from_numpy(ml_dtypes array)``)."""

    def __missing__(self, key):
        if getattr(key, "kind", None) == "V" and bfloat16.np == key:   # (loads ml_dtypes)
            return bfloat16
        raise KeyError(key)


_BY_NP = _ByNp({d.np: d for d in _ALL if d is not bfloat16})
_BY_LEGACY = {d._legacy: d for d in _ALL}
_default = [float32]


def from_numpy_dtype(np_dtype):
    """The ember dtype of a NumPy dtype; raises TypeError for unsupported kinds."""
    try:
        return _BY_NP[np.dtype(np_dtype)]
    except KeyError:
        name = np.dtype(np_dtype).type.__name__
        if name in ("uint16", "uint32", "uint64"):
            _BY_NAME[name].np    # (raises: ember holds no such tensors)
        raise TypeError("can't convert np.ndarray of type numpy.%s. The only supported types "
                        "are: float64, float32, float16, complex64, complex128, int64, int32, "
                        "int16, int8, uint64, uint32, uint16, uint8, and bool." % name) from None


def to_dtype(d):
    """Accept an ember dtype, a NumPy dtype/type or a name, return the ember dtype."""
    if isinstance(d, dtype):
        return d
    if d is None:
        return _default[0]
    if isinstance(d, str):
        key = d.replace("torch.", "")
        if key in _BY_NAME:
            return _BY_NAME[key]
        aliases = {"float": float32, "double": float64, "half": float16, "long": int64,
                   "int": int32, "short": int16, "cfloat": complex64, "cdouble": complex128,
                   "chalf": complex32}
        if key in aliases:
            return aliases[key]
        raise TypeError("unknown dtype %r" % d)
    if d is _py_float:
        return _default[0]
    if d is _py_int:
        return int64
    if d is _py_bool:
        return bool
    if d is _py_complex:
        return complex128
    return from_numpy_dtype(d)


def set_default_dtype(d):
    """Set the dtype of floating tensors made from Python floats (float32 or float64)."""
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError("%sonly floating-point types are supported as the default type"
                        % ("" if isinstance(d, dtype) else "invalid dtype object: "))
    _default[0] = d


def get_default_dtype():
    """The current default floating dtype (``float32`` unless changed)."""
    return _default[0]


def default_complex_dtype():
    """The complex dtype of Python complex numbers: the default dtype's complex counterpart."""
    return complex128 if _default[0] is float64 else complex64


def promote_types(a, b):
    """torch.promote_types: the smallest dtype both ``a`` and ``b`` can be cast to."""
    a, b = to_dtype(a), to_dtype(b)
    if a is b:
        return a
    if a._rank == 3 or b._rank == 3:
        return _promote_complex(a, b)
    if a._rank != b._rank:
        return a if a._rank > b._rank else b
    if a is bfloat16 or b is bfloat16:
        other = b if a is bfloat16 else a
        if other._rank == 2:     # NOTE: torch: bfloat16 with float16 is float32
            return float32 if other is float16 else other
        return bfloat16
    return _BY_NP[np.promote_types(a.np, b.np)]


def _promote_complex(a, b):
    """Promotion with a complex operand: the complex type of the larger real precision."""
    if a._rank < 2 or b._rank < 2:
        return a if a._rank == 3 else b
    ra, rb = a.to_real(), b.to_real()
    if ra is rb:
        return ra.to_complex()
    return promote_types(ra, rb).to_complex()


def _combine(higher, lower):
    """torch's combine_categories: ``higher`` (a dtype or None) wins unless ``lower`` is of a
    higher category; a complex ``lower`` keeps a floating ``higher``'s precision."""
    if higher is None:
        return lower
    if lower is None or higher._rank == 3:
        return higher
    if lower._rank == 3:
        if higher is bfloat16:
            return complex64
        return higher.to_complex() if higher._rank == 2 else lower
    return lower if lower._rank > higher._rank else higher


def _scalar_rank(x):
    if isinstance(x, _py_bool) or isinstance(x, np.bool_):
        return 0
    if isinstance(x, (_py_int, np.integer)):
        return 1
    if isinstance(x, (_py_complex, np.complexfloating)):
        return 3
    return 2


def result_type(*operands):
    """torch.result_type over tensors and Python scalars (dim > 0-dim > scalar priority)."""
    dim = zero = None
    scalar_rank = -1
    for x in operands:
        arr = getattr(x, "_array", None)    # a Tensor (dtypes sits below tensor.py)
        if arr is not None:
            d = _BY_NP[arr.dtype]
            if arr.ndim:
                dim = d if dim is None else promote_types(dim, d)
            else:
                zero = d if zero is None else promote_types(zero, d)
        elif x is not None:
            scalar_rank = max(scalar_rank, _scalar_rank(x))
    if scalar_rank == 3 or (zero is not None and zero._rank == 3) or \
            (dim is not None and dim._rank == 3):
        scalar = default_complex_dtype() if scalar_rank == 3 else \
            (None if scalar_rank < 0 else (bool, int64, _default[0])[scalar_rank])
        return _combine(dim, _combine(zero, scalar))
    out = dim
    if zero is not None and (out is None or zero._rank > out._rank):
        out = zero if out is None else (zero if zero._rank > out._rank else out)
    if scalar_rank >= 0 and (out is None or scalar_rank > out._rank):
        out = (bool, int64, _default[0])[scalar_rank]
    return out


class finfo:
    """Machine limits of a floating dtype (``eps``, ``max``, ``min``, ``tiny``), as torch."""

    def __init__(self, d=None):
        d = to_dtype(d).to_real()    # (a complex dtype's limits are its real part's)
        if not d.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        if d is bfloat16:
            import ml_dtypes
            fi = ml_dtypes.finfo(d.np)
        else:
            fi = np.finfo(d.np)
        self.dtype, self.bits = d.name, fi.bits
        self.eps, self.max, self.min = _b.float(fi.eps), _b.float(fi.max), _b.float(fi.min)
        self.tiny = self.smallest_normal = _b.float(fi.tiny)
        self.resolution = _b.float(10.0 ** -fi.precision)

    def __repr__(self):
        return ("finfo(resolution=%g, min=%g, max=%g, eps=%g, smallest_normal=%g, tiny=%g, "
                "dtype=%s)" % (self.resolution, self.min, self.max, self.eps,
                               self.smallest_normal, self.tiny, self.dtype))


class iinfo:
    """Machine limits of an integer dtype (``max``, ``min``, ``bits``), as torch."""

    def __init__(self, d):
        d = to_dtype(d)
        if d._rank >= 2:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                            "handle 'torch.iinfo'")
        if d.name == "bool":
            raise TypeError("torch.bool is not supported by torch.iinfo")
        # (the unsigned types ember keeps no tensors of still have limits)
        ii = np.iinfo(d.name if d.name in ("uint16", "uint32", "uint64") else d.np)
        self.dtype, self.bits, self.max, self.min = d.name, ii.bits, _b.int(ii.max), _b.int(ii.min)

    def __repr__(self):
        # torch prints the limits with %g (six significant digits)
        return "iinfo(min=%g, max=%g, dtype=%s)" % (self.min, self.max, self.dtype)


def scalar_type_name(d):
    """torch's ScalarType name of a dtype (ember's or NumPy's) in messages (``Float``, ``Long``,
    ...)."""
    if not isinstance(d, dtype):
        d = from_numpy_dtype(d)
    return d._legacy.replace("Tensor", "")


_C_NAME = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
           "int64": "int64_t", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
           "float32": "float", "float64": "double"}


def scalar_overflows(value, d):
    """Whether torch refuses to convert the Python number ``value`` to dtype ``d`` (its
    ``checked_convert``): integers out of range (negative ones wrap into unsigned types down
    to ``-max``), nan/inf or out-of-range floats to integers, finite floats beyond a floating
    type's max. bool and complex targets take anything."""
    r = d._rank
    if r == 0 or r == 3 or isinstance(value, (_py_bool, np.bool_, _py_complex,
                                              np.complexfloating)):
        return False
    if r == 2:
        if isinstance(value, (_py_int, np.integer)) and abs(value) < 65504:
            return False
        v = _py_float(value)
        if v != v or v in (np.inf, -np.inf):
            return False
        return abs(v) > finfo(d).max
    ii = np.iinfo(d.np)
    if isinstance(value, (_py_int, np.integer)):
        v = _py_int(value)
        if ii.min == 0 and v < 0:
            return -v > ii.max
        return not ii.min <= v <= ii.max
    v = _py_float(value)
    return v != v or not ii.min <= v <= ii.max


def check_scalar(value, d, name=None, reduced=True):
    """Raise torch's RuntimeError when ``value`` cannot be converted to dtype ``d`` without
    overflow (``name``: the type's name in the message, C's by default; ``reduced=False``:
    float16/bfloat16 take any float, as torch's fill kernels)."""
    if (reduced or d.itemsize > 2 or d._rank != 2) and scalar_overflows(value, d):
        raise RuntimeError("value cannot be converted to type %s without overflow"
                           % (name or _C_NAME.get(d.name, d.name)))


class layout:
    """How a tensor's elements are stored (``torch.strided``: ember's only layout; the sparse
    ones are named so that code comparing against them runs)."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "torch." + self._name

    def __reduce__(self):
        return self._name


class memory_format:
    """The order of a tensor's dims in memory (``torch.contiguous_format``,
    ``torch.channels_last``, ...)."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "torch." + self._name

    def __reduce__(self):
        return self._name


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
jagged = layout("jagged")
_mkldnn = layout("_mkldnn")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
legacy_contiguous_format = memory_format("legacy_contiguous_format")
__all__ += ["layout", "memory_format", "strided", "sparse_coo", "sparse_csr", "sparse_csc",
            "sparse_bsr", "sparse_bsc", "jagged", "contiguous_format", "channels_last",
            "channels_last_3d", "preserve_format", "legacy_contiguous_format"]
