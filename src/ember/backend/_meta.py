"""The meta device: tensors with a shape and a dtype but no data.

A ``MetaArray`` is a NumPy array whose memory is one zero broadcast over its shape, so it holds
no storage. NumPy's functions and ufuncs on it work out the result's shape and dtype (by
running on the broadcast zeros) and return a new ``MetaArray``; writes into one change nothing;
asking for a value raises torch's error. ``meta_numpy`` is the device's array module.
"""
from __future__ import annotations

import types
from typing import Any

import numpy as np

__all__ = ["MetaArray", "meta_numpy", "empty", "NO_DATA", "NO_ITEM"]

NO_DATA = "Cannot copy out of meta tensor; no data!"
NO_ITEM = "Tensor.item() cannot be called on meta tensors"
_DATA_DEPENDENT = ("The register_meta function for torch.nonzero() raises unimplemented by "
                   "default, as a correct data-independent implementation does not exist. This "
                   "implementation returns a fake value, assuming all elements of the tensor "
                   "are non-zero. To enable this registration, please set "
                   "'torch.fx.experimental._config.meta_nonzero_assume_all_nonzero' to True.")
_NO_KERNEL = ("aten::_unique2: attempted to run this operator with Meta tensors, but there was "
              "no fake impl or Meta kernel registered. You may have run into this message while "
              "using an operator with PT2 compilation APIs (torch.compile/torch.export); in "
              "order to use this operator with those APIs you'll need to add a fake impl. "
              "Please see the following for next steps:  "
              "https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html")
# NumPy functions whose result's shape depends on the values (torch has no meta kernel).
_BY_VALUE = {"nonzero", "flatnonzero", "argwhere", "unique", "compress", "extract", "bincount",
             "unique_values", "unique_counts", "unique_inverse", "unique_all", "trim_zeros"}

# NumPy functions that write into their first argument (nothing to write).
_WRITES = {"copyto", "put", "put_along_axis", "place", "putmask", "fill_diagonal"}


def empty(shape: Any, dtype: Any) -> MetaArray:
    """A meta array of ``shape`` and ``dtype``."""
    return np.broadcast_to(np.zeros((), dtype), shape).view(MetaArray)


def _plain(x: Any) -> Any:
    t = type(x)
    if t is MetaArray:
        return x.view(np.ndarray)
    if t is list or t is tuple:
        return t(_plain(v) for v in x)
    if t is dict:
        return {k: _plain(v) for k, v in x.items()}
    return x


def _meta(x: Any) -> Any:
    if isinstance(x, (np.ndarray, np.generic)):
        return empty(np.shape(x), x.dtype)
    if type(x) is tuple or type(x) is list:
        return type(x)(_meta(v) for v in x)
    if isinstance(x, tuple):    # NumPy's named tuples (linalg.svd, eigh, ...)
        return type(x)(*(_meta(v) for v in x))
    return x


class MetaArray(np.ndarray):
    """A NumPy array with a shape and a dtype and no data (the meta device's array)."""

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        out = kwargs.pop("out", None)
        if method == "at":
            return None
        result = getattr(ufunc, method)(*_plain(inputs), **_plain(kwargs))
        if out is not None:         # (the write changes nothing: there is no data)
            return out[0] if len(out) == 1 else out
        return _meta(result)

    def __array_function__(self, func: Any, types_: Any, args: Any, kwargs: Any) -> Any:
        if func.__name__ in _BY_VALUE:
            raise NotImplementedError(_NO_KERNEL if func.__name__.startswith("unique")
                                      else _DATA_DEPENDENT)
        if func.__name__ in _WRITES:
            return None
        out = kwargs.pop("out", None)
        result = func(*_plain(args), **_plain(kwargs))
        return out if out is not None else _meta(result)

    def __getitem__(self, index: Any) -> Any:
        if _by_mask(index):
            raise NotImplementedError(_DATA_DEPENDENT)
        return _meta(self.view(np.ndarray)[_plain(index)])

    def __setitem__(self, index: Any, value: Any) -> None:
        if _by_mask(index):
            raise NotImplementedError(_DATA_DEPENDENT)

    def fill(self, value: Any) -> None:
        """Nothing to write."""

    def sort(self, *args: Any, **kwargs: Any) -> None:
        """Nothing to sort."""

    def astype(self, dtype: Any, *args: Any, **kwargs: Any) -> MetaArray:
        return empty(self.shape, dtype)

    def copy(self, order: Any = "C") -> MetaArray:
        return empty(self.shape, self.dtype)

    def item(self, *args: Any) -> Any:
        raise RuntimeError(NO_ITEM)

    def tolist(self) -> Any:
        raise NotImplementedError(NO_DATA)

    # An op's own checks on values (``bool(xp.isnan(out).any())``, bounds) see zeros, so the
    # op runs its usual path; a Tensor's ``item()`` and ``tolist()`` raise torch's errors.
    def __bool__(self) -> bool:
        return False

    def __int__(self) -> int:
        return 0

    __index__ = __int__

    def __float__(self) -> float:
        return 0.0

    def __complex__(self) -> complex:
        return 0j

    def __reduce__(self) -> Any:
        return (empty, (self.shape, self.dtype))


def _by_mask(index: Any) -> bool:
    items = index if type(index) is tuple else (index,)
    return any(isinstance(i, np.ndarray) and i.dtype == bool for i in items)


def _creation(fn: Any) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        if fn.__name__ in _NO_VALUES and (args and not isinstance(args[0], np.ndarray)):
            # (no values to keep: the broadcast zero, whatever the size, as torch's meta tensors)
            probe = fn((), *_plain(args[1:]), **_plain(kwargs))
            return empty(args[0], probe.dtype)
        return _meta(fn(*_plain(args), **_plain(kwargs)))
    call.__name__ = fn.__name__
    return call


_NO_VALUES = {"empty", "zeros", "ones", "full"}
_CREATION = {"empty", "zeros", "ones", "full", "arange", "eye", "identity", "linspace",
             "logspace", "geomspace", "tri", "indices", "asarray", "array",
             "ascontiguousarray", "frombuffer", "fromiter"}


class _Namespace(types.ModuleType):
    """NumPy's namespace whose creation functions make meta arrays."""

    def __getattr__(self, name: str) -> Any:
        attr = getattr(np, name)
        value = _creation(attr) if name in _CREATION else attr
        self.__dict__[name] = value
        return value


meta_numpy = _Namespace("ember.backend.meta_numpy")
meta_numpy.ndarray = MetaArray  # type: ignore[attr-defined]
