"""dtype objects (``ember.float32`` ...), torch's type-promotion rules and the default dtype."""
import builtins as _b

import numpy as np

_py_float, _py_int, _py_bool, _py_complex = _b.float, _b.int, _b.bool, _b.complex

__all__ = ["dtype", "float16", "half", "float32", "float", "float64", "double", "int8", "uint8",
           "int16", "short", "int32", "int", "int64", "long", "bool", "bfloat16", "complex32",
           "chalf", "complex64", "cfloat", "complex128", "cdouble",
           "set_default_dtype", "get_default_dtype", "promote_types", "result_type", "finfo",
           "iinfo"]


class dtype:
    """A tensor element type; wraps a NumPy dtype and prints as ``torch.float32``."""

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "is_signed", "itemsize",
                 "_rank", "_legacy")

    def __init__(self, name, np_dtype, rank, legacy):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = self.np.kind == "f"
        self.is_complex = self.np.kind == "c"
        self.is_signed = self.np.kind in "fic"
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
    """A torch dtype NumPy cannot hold (``complex32``): it exists and promotes, but making a
    tensor of it raises."""

    __slots__ = ()

    def __init__(self, name, itemsize, rank, legacy):
        self.name = name
        self.is_floating_point = False
        self.is_complex = True
        self.is_signed = True
        self.itemsize = itemsize
        self._rank = rank
        self._legacy = legacy

    @property
    def np(self):
        raise TypeError("ember does not support torch.%s (chalf): NumPy has no %d-byte complex "
                        "type; use torch.complex64" % (self.name, self.itemsize))


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
bfloat16 = float32   # NOTE: NumPy has no bfloat16; ember stores it as float32.
complex64 = cfloat = dtype("complex64", np.complex64, 3, "ComplexFloatTensor")
complex128 = cdouble = dtype("complex128", np.complex128, 3, "ComplexDoubleTensor")
complex32 = chalf = _NoArrayDtype("complex32", 4, 3, "ComplexHalfTensor")

_ALL = (bool, uint8, int8, int16, int32, int64, float16, float32, float64, complex64,
        complex128)
_BY_NAME = {d.name: d for d in _ALL}
_BY_NAME["complex32"] = complex32
_TO_REAL = {"complex32": float16, "complex64": float32, "complex128": float64}
_TO_COMPLEX = {"float16": complex32, "float32": complex64, "float64": complex128}
_BY_NP = {d.np: d for d in _ALL}
_BY_LEGACY = {d._legacy: d for d in _ALL}
_default = [float32]


def from_numpy_dtype(np_dtype):
    """The ember dtype of a NumPy dtype; raises TypeError for unsupported kinds."""
    try:
        return _BY_NP[np.dtype(np_dtype)]
    except KeyError:
        raise TypeError("can't convert np.ndarray of type %s. The only supported types are: "
                        "float64, float32, float16, complex64, complex128, int64, int32, int16, "
                        "int8, uint8, and bool." % np.dtype(np_dtype)) from None


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
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type, got %r" % d)
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
    return _BY_NP[np.promote_types(a.np, b.np)]


def _promote_complex(a, b):
    """Promotion with a complex operand: the complex type of the larger real precision."""
    if a._rank < 2 or b._rank < 2:
        return a if a._rank == 3 else b
    ra, rb = a.to_real(), b.to_real()
    if ra is rb:
        return ra.to_complex()
    return _BY_NP[np.promote_types(ra.np, rb.np)].to_complex()


def _combine(higher, lower):
    """torch's combine_categories: ``higher`` (a dtype or None) wins unless ``lower`` is of a
    higher category; a complex ``lower`` keeps a floating ``higher``'s precision."""
    if higher is None:
        return lower
    if lower is None or higher._rank == 3:
        return higher
    if lower._rank == 3:
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
    """Machine limits of a floating dtype (``eps``, ``max``, ``min``, ``tiny``)."""

    def __init__(self, d=None):
        d = to_dtype(d).to_real()    # (a complex dtype's limits are its real part's)
        fi = np.finfo(d.np)
        self.dtype, self.bits = d, fi.bits
        self.eps, self.max, self.min = _b.float(fi.eps), _b.float(fi.max), _b.float(fi.min)
        self.tiny = self.smallest_normal = _b.float(fi.tiny)
        self.resolution = _b.float(fi.resolution)


class iinfo:
    """Machine limits of an integer dtype (``max``, ``min``, ``bits``)."""

    def __init__(self, d):
        d = to_dtype(d)
        ii = np.iinfo(d.np)
        self.dtype, self.bits, self.max, self.min = d, ii.bits, _b.int(ii.max), _b.int(ii.min)


def scalar_type_name(np_dtype):
    """torch's ScalarType name of a NumPy dtype in messages (``Float``, ``Long``, ...)."""
    return from_numpy_dtype(np_dtype)._legacy.replace("Tensor", "")
