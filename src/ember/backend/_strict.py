"""The strict test device: NumPy arrays behind a wall that behaves like CuPy's.

A ``StrictArray`` holds a NumPy array but, like a CuPy array, refuses implicit conversion to a
host array (``np.asarray``, ``__array__``) and refuses to be mixed with host ``numpy.ndarray``
operands in ufuncs, NumPy functions, indexing and assignment. Reductions return 0-d arrays (not
NumPy scalars), as CuPy's do. ``strict_numpy`` is its array module (the ``xp`` of the device):
NumPy's namespace, with creation functions making ``StrictArray``s and every other function
refusing host arrays. A host call that slipped into an op therefore fails on a CPU-only machine.
"""
from __future__ import annotations

import types
from typing import Any

import numpy as np

__all__ = ["StrictArray", "strict_numpy", "HostMixError"]

_MIX = ("strict device: an operation mixed a host numpy.ndarray with a strict-device array "
        "(CuPy refuses this too); move data explicitly with the backend's asarray / to_host")


class HostMixError(TypeError):
    """A host array met a device array without an explicit transfer."""


def _unwrap(x: Any) -> Any:
    t = type(x)
    if t is StrictArray:
        return x._a
    if t is np.ndarray:
        raise HostMixError(_MIX)
    if t is list or t is tuple:
        return t(_unwrap(v) for v in x)
    if t is dict:
        return {k: _unwrap(v) for k, v in x.items()}
    return x


def _wrap(x: Any) -> Any:
    t = type(x)
    if t is np.ndarray:
        return StrictArray(x)
    if isinstance(x, np.generic):
        return StrictArray(np.asarray(x))
    if t is tuple or t is list:
        return t(_wrap(v) for v in x)
    if isinstance(x, tuple):    # NumPy's named tuples (linalg.svd, eigh, ...)
        return t(*(_wrap(v) for v in x))
    return x


def _wrap_fn(fn: Any) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        return _wrap(fn(*_unwrap(args), **_unwrap(kwargs)))
    call.__name__ = getattr(fn, "__name__", "fn")
    call.__doc__ = getattr(fn, "__doc__", None)
    return call


class StrictArray:
    """A NumPy array that behaves, towards host code, like a CuPy array."""

    __slots__ = ("_a",)
    __array_priority__ = 2000

    def __init__(self, a: np.ndarray) -> None:
        self._a = a

    # -- what CuPy refuses -----------------------------------------------------------------
    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use "
                        "`.get()` to construct a NumPy array explicitly. (strict device)")

    @property
    def __array_interface__(self) -> Any:
        raise AttributeError("strict-device arrays have no __array_interface__ (as CuPy's)")

    def get(self) -> np.ndarray:
        """A host copy (CuPy's ``ndarray.get``)."""
        return self._a.copy()

    # -- NumPy's protocols: dispatch to NumPy on the unwrapped arrays -----------------------
    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        out = kwargs.get("out")
        args = _unwrap(inputs)
        kw = _unwrap(kwargs)
        result = getattr(ufunc, method)(*args, **kw)
        if out is not None:
            outs = out if isinstance(out, tuple) else (out,)
            return outs[0] if len(outs) == 1 else outs
        return _wrap(result)

    def __array_function__(self, func: Any, types_: Any, args: Any, kwargs: Any) -> Any:
        return _wrap(func(*_unwrap(args), **_unwrap(kwargs)))

    # -- attributes ------------------------------------------------------------------------
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: self._a.flags)
    T = property(lambda self: StrictArray(self._a.T))
    mT = property(lambda self: StrictArray(np.swapaxes(self._a, -1, -2)))
    real = property(lambda self: StrictArray(self._a.real))
    imag = property(lambda self: StrictArray(self._a.imag))

    @property
    def base(self) -> Any:
        b = self._a.base
        return None if b is None else StrictArray(b) if isinstance(b, np.ndarray) else b

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("ctypes", "data"):
            raise AttributeError("strict-device arrays have no %r (host memory access)" % name)
        attr = getattr(self._a, name)
        return _wrap_fn(attr) if callable(attr) else _wrap(attr)

    def item(self, *args: Any) -> Any:
        return self._a.item(*args)

    def tolist(self) -> Any:
        return self._a.tolist()

    def __getitem__(self, index: Any) -> Any:
        return _wrap(self._a[_unwrap(index)])

    def __setitem__(self, index: Any, value: Any) -> None:
        self._a[_unwrap(index)] = _unwrap(value)

    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self) -> Any:
        return (StrictArray(np.asarray(v)) for v in self._a)

    def __bool__(self) -> bool:
        return bool(self._a)

    def __float__(self) -> float:
        return float(self._a)

    def __int__(self) -> int:
        return int(self._a)

    def __index__(self) -> int:
        return self._a.__index__()

    def __complex__(self) -> complex:
        return complex(self._a)

    def __repr__(self) -> str:
        return "strict_array(%r)" % (self._a,)

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self._a.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> Any:
        return self._a.__dlpack_device__()

    def __copy__(self) -> "StrictArray":
        return StrictArray(self._a.copy())

    def __deepcopy__(self, memo: Any) -> "StrictArray":
        return StrictArray(self._a.copy())

    def __reduce__(self) -> Any:
        return (StrictArray, (self._a,))

    __hash__ = None  # type: ignore[assignment]


def _operator(ufunc: Any, reflected: bool = False) -> Any:
    if reflected:
        def op(self: StrictArray, other: Any) -> Any:
            return ufunc(other, self)
    else:
        def op(self: StrictArray, other: Any) -> Any:
            return ufunc(self, other)
    return op


def _ioperator(ufunc: Any) -> Any:
    def op(self: StrictArray, other: Any) -> Any:
        ufunc(self, other, out=self)
        return self
    return op


_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
           "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power,
           "matmul": np.matmul, "and": np.bitwise_and, "or": np.bitwise_or,
           "xor": np.bitwise_xor, "lshift": np.left_shift, "rshift": np.right_shift}
for _name, _uf in _BINARY.items():
    setattr(StrictArray, "__%s__" % _name, _operator(_uf))
    setattr(StrictArray, "__r%s__" % _name, _operator(_uf, reflected=True))
    setattr(StrictArray, "__i%s__" % _name, _ioperator(_uf))
for _name, _uf in {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
                   "gt": np.greater, "ge": np.greater_equal}.items():
    setattr(StrictArray, "__%s__" % _name, _operator(_uf))
# (mypy cannot see attributes added after the class body; it reports the unary operators as
# unsupported on the class object and __abs__ as undefined.)
StrictArray.__neg__ = lambda self: np.negative(self)  # type: ignore[operator]
StrictArray.__pos__ = lambda self: np.positive(self)  # type: ignore[operator]
StrictArray.__abs__ = lambda self: np.absolute(self)  # type: ignore[attr-defined]
StrictArray.__invert__ = lambda self: np.invert(self)  # type: ignore[operator]


class _UFunc:
    """A NumPy ufunc whose methods (``at``, ``reduce``, ...) also refuse host arrays."""

    def __init__(self, uf: Any) -> None:
        self._uf = uf
        self.__name__ = uf.__name__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._uf(*args, **kwargs) if _has_strict(args, kwargs) else \
            _wrap(self._uf(*_unwrap(args), **_unwrap(kwargs)))

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._uf, name)
        if not callable(attr):
            return attr

        def method(*args: Any, **kwargs: Any) -> Any:
            if name == "at":
                a = args[0]
                if type(a) is not StrictArray:
                    raise HostMixError(_MIX)
                attr(a._a, *_unwrap(args[1:]), **_unwrap(kwargs))
                return None
            return _wrap(attr(*_unwrap(args), **_unwrap(kwargs)))
        return method


def _has_strict(args: Any, kwargs: Any) -> bool:
    for a in args:
        if type(a) is StrictArray:
            return True
    out = kwargs.get("out")
    return type(out) is StrictArray


_CREATION = {"empty", "zeros", "ones", "full", "arange", "eye", "identity", "linspace",
             "logspace", "geomspace", "tri", "indices", "frombuffer", "fromiter"}
_HOST_OK = {"asarray", "array", "ascontiguousarray", "asanyarray", "asfortranarray"}


class _Namespace(types.ModuleType):
    """NumPy's namespace (or one of its submodules) over strict-device arrays."""

    def __init__(self, name: str, mod: Any) -> None:
        super().__init__(name)
        self._mod = mod

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._mod, name)
        if isinstance(attr, types.ModuleType):
            value: Any = _Namespace(self.__name__ + "." + name, attr)
        elif isinstance(attr, np.ufunc):
            value = _UFunc(attr)
        elif name in _HOST_OK:
            value = _transfer(attr)
        elif isinstance(attr, type) or not callable(attr) or name in ("errstate", "dtype"):
            value = attr
        else:
            value = _wrap_fn(attr)
        self.__dict__[name] = value
        return value


def _transfer(fn: Any) -> Any:
    """``asarray``/``array``: host data is copied onto the device (an explicit transfer)."""
    def call(obj: Any, *args: Any, **kwargs: Any) -> Any:
        if type(obj) is StrictArray:
            return _wrap(fn(obj._a, *args, **_unwrap(kwargs)))
        if type(obj) in (list, tuple):
            obj = _unwrap_mixed(obj)
        return StrictArray(np.array(fn(obj, *args, **_unwrap(kwargs)), copy=True))
    call.__name__ = fn.__name__
    return call


def _unwrap_mixed(x: Any) -> Any:
    if type(x) is StrictArray:
        return x._a
    if type(x) in (list, tuple):
        return type(x)(_unwrap_mixed(v) for v in x)
    return x


strict_numpy = _Namespace("ember.backend.strict_numpy", np)
strict_numpy.ndarray = StrictArray  # type: ignore[attr-defined]

_MODULES: dict = {}


def strict_module(mod: Any) -> Any:
    """Another module (e.g. ``scipy.special``) over strict-device arrays, as ``strict_numpy``."""
    ns = _MODULES.get(mod.__name__)
    if ns is None:
        ns = _MODULES[mod.__name__] = _Namespace("ember.backend.strict." + mod.__name__, mod)
    return ns
