"""Tensor: one backend array plus the autograd fields (grad, grad_fn, version, hooks).

The core's one upward reference (DESIGN.md): Tensor's methods dispatch into ``ember.ops`` and the
autograd engine through ``_ops`` and ``_engine``, bound by ``ember/__init__.py`` once both are
imported (``_bind``); this file imports nothing above the backend and dtypes.
"""
from __future__ import annotations

import builtins
import functools
import warnings
import weakref
from types import FunctionType as _FunctionType, MethodType as _MethodType
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Union

import numpy as np

from . import backend as _backend
from .backend._meta import MetaArray as _MetaArray
from . import dtypes as _dt
from ._tensor_str import tensor_repr

__all__ = ["Tensor", "Size"]

_ndarray = np.ndarray
_CONJ_NUMPY = ("Can't call numpy() on Tensor that has conjugate bit set. Use "
               "tensor.resolve_conj().numpy() instead.")
_ops: Any = None        # ember.ops, bound by _bind
_engine: Any = None     # ember.autograd.engine, bound by _bind


class Size(tuple):
    """The shape of a tensor: a tuple that prints as ``torch.Size([2, 3])``."""

    def __repr__(self) -> str:
        return "torch.Size([%s])" % ", ".join(str(d) for d in self)

    def __getattr__(self, name: str) -> Any:
        raise AttributeError("'torch.Size' object has no attribute %r" % name)

    def numel(self) -> int:
        n = 1
        for d in self:
            n *= d
        return n

    # Slices, sums and repeats of a Size are Sizes, as torch's (``x.shape[1:]``).
    def __getitem__(self, i: Any) -> Any:
        out = tuple.__getitem__(self, i)
        return Size(out) if isinstance(i, slice) else out

    def __add__(self, other: Any) -> Size:
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other: Any) -> Size:
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(other) + tuple(self))

    def __mul__(self, n: Any) -> Size:
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__


class RemovableHandle:
    """Returned by every ``register_*hook``; ``remove()`` unregisters the hook.

    The one handle class of ember (tensor, node and module hooks), as
    ``torch.utils.hooks.RemovableHandle``.
    """

    _next_id = [0]

    def __init__(self, hooks_dict: dict, *extra_dicts: dict, extra_dict: Any = None) -> None:
        self.hooks_dict = hooks_dict     # (a plain dict cannot be weakly referenced)
        self.extra_dicts = extra_dicts + (tuple(extra_dict) if isinstance(extra_dict, list)
                                          else () if extra_dict is None else (extra_dict,))
        self.id = self._next_id[0]
        self._next_id[0] += 1

    def remove(self) -> None:
        self.hooks_dict.pop(self.id, None)
        for d in self.extra_dicts:
            d.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def _add_hook(hooks_dict: dict, hook: Any) -> RemovableHandle:
    """Register ``hook`` in ``hooks_dict`` under a new handle's id."""
    handle = RemovableHandle(hooks_dict)
    hooks_dict[handle.id] = hook
    return handle


def _legacy_data(args):
    """Interpret the arguments of the legacy constructor ``Tensor(...)``."""
    if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
        data = args[0]
        if isinstance(data, Tensor):
            return data._array
        if isinstance(data, Size):
            return _backend.backend_for(None).xp.zeros(tuple(data), dtype=np.float32)
        return None
    for a in args:
        if not isinstance(a, (int, np.integer)):
            raise TypeError("Tensor(): expected a sequence or sizes (ints), got %r"
                            % type(a).__name__)
    return _backend.backend_for(None).xp.zeros(tuple(int(a) for a in args), dtype=np.float32)


class Tensor:
    """A multi-dimensional array that records the operations applied to it.

    ``ember.Tensor(2, 3)`` and ``ember.Tensor([1, 2])`` are the legacy constructors (float32);
    prefer ``ember.tensor(data)``.
    """

    __slots__ = ("_array", "_requires_grad", "_grad", "_grad_fn", "_output_nr", "_version_ref",
                 "_base", "__weakref__", "__dict__")
    _hooks: Optional[Dict[int, Any]] = None     # rarer state: class defaults, set per
    _accum: Any = None                          # instance only when used
    _retains_grad: bool = False
    _conj_bit: bool = False                     # (set by ``conj()``, as torch's lazy bit)
    _inference: bool = False                    # made inside ``inference_mode()``
    _soff: int = 0                              # a detached view's storage offset
    __array_priority__ = 1000    # (NumPy's binary operators defer to the reflected ones)

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is Tensor and len(args) == 1 and isinstance(args[0], Tensor) and not kwargs:
            return args[0][...]     # (torch's Tensor(t): an alias of t, its dtype kept)
        return _new(cls)

    def __init__(self, *args: Any, _dtype: Optional[_dt.dtype] = None) -> None:
        if hasattr(self, "_array"):
            return      # (built by a subclass's __new__: torch's __init__ ignores the arguments)
        arr = _legacy_data(args) if args else \
            _backend.backend_for(None).xp.zeros((0,), dtype=np.float32)
        d = _dtype or _dt.get_default_dtype()
        if arr is None:
            arr = _backend.backend_for(None).asarray(_to_array(args[0], d))
        if arr.dtype != d.np:
            arr = arr.astype(d.np)
        self._array: Any = arr
        self._requires_grad = False
        self._grad: Optional[Tensor] = None
        self._grad_fn: Any = None      # the graph Node that made this tensor; None for a leaf
        self._output_nr = 0
        self._version_ref: List[int] = [0]
        self._base: Optional[Tensor] = None

    @staticmethod
    def _wrap(arr: Any, requires_grad: bool = False) -> Tensor:
        """Make a Tensor around ``arr`` without copying (internal fast path)."""
        t = _new(Tensor)
        # host: a NumPy scalar or Python number (not a device array) becomes a CPU array
        t._array = arr if type(arr) is _ndarray or _backend.is_array(arr) else np.asarray(arr)
        t._requires_grad = requires_grad
        t._grad = None
        t._grad_fn = None
        t._output_nr = 0
        t._version_ref = [0]
        t._base = None
        return t

    # ---- basic attributes -------------------------------------------------------
    @property
    def dtype(self) -> _dt.dtype:
        return _dt._BY_NP[self._array.dtype]

    @property
    def shape(self) -> Size:
        return Size(self._array.shape)

    def size(self, dim: Optional[int] = None) -> Any:     # a Size, or one dim's length
        if dim is None:
            return Size(self._array.shape)
        if not self._array.ndim:
            _no_dims(dim)
        return self._array.shape[_ops._wrap_dim(dim, self._array.ndim, "size")]

    def dim(self) -> int:
        return self._array.ndim

    ndimension = dim

    @property
    def ndim(self) -> int:
        return self._array.ndim

    def numel(self) -> int:
        return self._array.size

    nelement = numel

    def element_size(self) -> int:
        return self._array.itemsize

    @property
    def itemsize(self) -> int:
        return self._array.itemsize

    @property
    def nbytes(self) -> int:
        return self._array.nbytes

    @property
    def device(self) -> _backend.device:
        arr = self._array
        if type(arr) is _ndarray:
            return _CPU
        return _backend.backend_of(arr).device_of(arr)

    @property
    def is_cuda(self) -> bool:
        return type(self._array) is not _ndarray and self.device.type == "cuda"

    def get_device(self) -> int:
        """The device index (-1 on the CPU), as torch."""
        d = self.device
        return -1 if d.type == "cpu" else (d.index or 0)

    is_sparse = False
    is_sparse_csr = False
    is_quantized = False
    is_nested = False
    is_mkldnn = False
    is_xpu = is_mps = is_mtia = is_maia = is_ipu = is_xla = is_vulkan = False
    layout = _dt.strided

    @property
    def is_meta(self) -> bool:
        return type(self._array) is _MetaArray

    @property
    def is_cpu(self) -> bool:
        return type(self._array) is _ndarray or self.device.type == "cpu"

    @property
    def output_nr(self) -> int:
        """Which output of its ``grad_fn`` this tensor is (0 for a leaf)."""
        return self._output_nr if self.grad_fn is not None else 0

    def is_floating_point(self) -> bool:
        return self._array.dtype.kind in "fV"

    def is_complex(self) -> bool:
        return self._array.dtype.kind == "c"

    @property
    def real(self) -> Tensor:
        """The real part: a view of a complex tensor; the tensor itself when it is real."""
        return _ops.real(self)

    @real.setter
    def real(self, value: Any) -> None:
        _ops.real(self).copy_(value)

    @property
    def imag(self) -> Tensor:
        """The imaginary part (a view; complex tensors only)."""
        return _ops.imag(self)

    @imag.setter
    def imag(self, value: Any) -> None:
        _ops.imag(self).copy_(value)

    def stride(self, dim: Optional[int] = None) -> Any:     # a tuple, or one dim's stride
        arr = self._array
        if arr.size == 0 or type(arr) is _MetaArray:
            # (torch: C-contiguous strides, a zero-length dim counted as 1; a meta tensor
            # keeps no layout here: it reports C-contiguous strides)
            rev: List[int] = []
            n = 1
            for d in reversed(arr.shape):
                rev.append(n)
                n *= max(d, 1)
            st = tuple(reversed(rev))
        else:
            st = tuple(s // arr.itemsize for s in arr.strides)
        if dim is not None and not arr.ndim:
            _no_dims(dim)
        return st if dim is None else st[_ops._wrap_dim(dim, self._array.ndim, "stride")]

    def is_contiguous(self, memory_format: Any = None) -> bool:
        if type(self._array) is _MetaArray:
            return True
        if memory_format is not None:
            return _ops.conversion._is_contiguous_in(self._array, memory_format)
        return self._array.flags.c_contiguous

    def data_ptr(self) -> int:
        if not self._array.size:
            return 0        # (torch's address of no elements)
        return _backend.backend_of(self._array).data_ptr(self._array)

    def storage_offset(self) -> int:
        root = self if self._base is None else self._base
        off = root._soff        # (a detached view keeps its offset)
        if root is not self:
            ptr = _backend.backend_of(self._array).data_ptr
            off += (ptr(self._array) - ptr(root._array)) // self._array.itemsize
        return off

    def _alias(self) -> Tensor:
        """A new leaf over the same array, with this one's storage offset and inference mode."""
        t, off = Tensor._wrap(self._array), self.storage_offset()
        if off:
            t._soff = off
        if self._inference:
            t._inference = True
        return t

    @property
    def _version(self) -> int:
        return self._version_ref[0]

    def _bump(self) -> None:
        self._version_ref[0] += 1

    # ---- autograd attributes ----------------------------------------------------
    @property
    def grad_fn(self) -> Any:
        """The graph node that made this tensor (None for a leaf). A view whose base (or a
        sibling view) was modified in place gets its node regenerated first, as torch does."""
        if self._base is not None:
            _refresh_view(self)
        return self._grad_fn

    @grad_fn.setter
    def grad_fn(self, node: Any) -> None:
        self._grad_fn = node

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self.grad_fn is not None:
            if not value:
                raise RuntimeError("you can only change requires_grad flags of leaf variables. "
                                   "If you want to use a computed variable in a subgraph that "
                                   "doesn't require differentiation use "
                                   "var_no_grad = var.detach().")
            return
        if value and self._array.dtype.kind not in "fcV":
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")      # (torch's words for each path, as here)
        if value and self._inference and not _engine._state.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if type(requires_grad) is not builtins.bool:
            raise TypeError("requires_grad_(): argument 'requires_grad' (position 1) must be "
                            "bool, not %s" % type(requires_grad).__name__)
        if requires_grad and self.grad_fn is None and self._array.dtype.kind not in "fcV":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def creator(self) -> Any:
        """Legacy name of ``grad_fn`` (also set by legacy-style Functions when not recording)."""
        if self.grad_fn is not None:
            return self.grad_fn
        return self.__dict__.get("_creator")

    @property
    def grad(self) -> Optional[Tensor]:
        if self.grad_fn is not None and not self._retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during autograd.backward(). If you indeed want "
                "the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the "
                "non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you "
                "access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for "
                "more information.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Optional[Tensor]) -> None:
        if value is not None and (not isinstance(value, Tensor) or value._array.dtype !=
                                  self._array.dtype or value._array.shape != self._array.shape):
            self._bad_grad(value)       # (torch's messages: in _tensor_compat)
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def data(self) -> Tensor:
        """The same values as a Tensor detached from the graph (no shared version counter)."""
        return self._alias()

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError("data must be a Tensor, got %s" % type(value).__name__)
        self._array = value._array

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        self._retains_grad = True
        self.grad_fn._add_retain(self._output_nr, weakref.ref(self))

    def register_hook(self, hook: Callable[[Tensor], Optional[Tensor]]) -> RemovableHandle:
        """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a new one."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn._add_tensor_hook(self._output_nr, hook)
        if self._hooks is None:
            self._hooks = {}
        _engine.note_leaf_hook(self)
        return _add_hook(self._hooks, hook)

    def register_post_accumulate_grad_hook(self, hook: Callable[[Tensor], None]) -> RemovableHandle:
        """Call ``hook(tensor)`` after this leaf's ``.grad`` has been accumulated."""
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        d = self.__dict__.setdefault("_post_hooks", {})
        _engine.note_leaf_hook(self)
        return _add_hook(d, hook)

    def backward(self, gradient: Optional[Tensor] = None, retain_graph: Optional[bool] = None,
                 create_graph: bool = False,
                 inputs: Union[Tensor, Sequence[Tensor], None] = None) -> None:
        """Accumulate the gradient of this tensor into the leaves' ``.grad``."""
        fn = self.grad_fn
        if gradient is None and inputs is None and fn is not None and self._base is None and \
                not self._array.shape and not create_graph:
            # loss.backward(): what engine.backward does, directly
            arr = self._array
            if arr.dtype.kind == "c":
                raise RuntimeError("grad can be implicitly created only for real scalar outputs "
                                   "but got %s" % self.dtype)
            ones = Tensor._wrap(_backend._XP.get(type(arr), np).asarray(1, dtype=arr.dtype))
            return _engine._execute(((fn, self._output_nr),), (ones,), bool(retain_graph), False,
                                    None, None)
        _engine.backward((self,), gradient, retain_graph, create_graph, inputs)

    def where(self, condition: Any, other: Any) -> Tensor:
        """``self`` where ``condition`` holds, else ``other`` (``ember.where(condition, self,
        other)``)."""
        return _ops.where(condition, self, other)

    def detach(self) -> Tensor:
        """A Tensor sharing values and version counter, outside the graph."""
        t = self._alias()
        t._version_ref = self._version_ref
        if self._conj_bit:
            t._conj_bit = True
        return t

    def detach_(self) -> Tensor:
        if self._base is not None and self._base.requires_grad:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._requires_grad = False
        return self

    # ---- conversion -------------------------------------------------------------
    def item(self) -> Union[int, float, bool]:
        if self._array.size != 1:
            raise RuntimeError("a Tensor with %d elements cannot be converted to Scalar"
                               % self._array.size)
        return self._array.item()

    def tolist(self) -> Any:
        return self._array.tolist()

    def numpy(self, force: bool = False) -> np.ndarray:
        if type(self._array) is not _ndarray:
            if not force:
                raise TypeError(_host_message(self))
            return _backend.to_host(self._array)
        if self._requires_grad and not force and _engine._state.enabled:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if self._conj_bit and not force:
            raise RuntimeError(_CONJ_NUMPY)
        if self._array.dtype.kind == "V":       # (bfloat16: NumPy has none, as torch says)
            raise TypeError("Got unsupported ScalarType BFloat16")
        return self._array.view()       # (a new array on the same memory, as torch's)

    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> np.ndarray:
        arr = self._array
        if type(arr) is not _ndarray:
            raise TypeError(_host_message(self))
        if self._requires_grad and _engine._state.enabled:    # (torch's __array__ is numpy())
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if self._conj_bit:
            raise RuntimeError(_CONJ_NUMPY)
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            return arr.astype(dtype)
        return arr.copy() if copy else arr

    def __array_wrap__(self, array: Any, context: Any = None, return_scalar: bool = False) -> Any:
        """A NumPy ufunc's result on a tensor comes back a Tensor (a bool one as uint8), and a
        NumPy function without a tensor method sees the array (torch's interop)."""
        if array.dtype == bool:
            array = array.astype(np.uint8)
        return _ops.from_numpy(np.asarray(array))   # host: NumPy gave a host array

    def __dlpack__(self, stream: Any = None, **kwargs: Any) -> Any:
        return self._array.__dlpack__(**kwargs) if kwargs else self._array.__dlpack__()

    def __dlpack_device__(self) -> Any:
        return self._array.__dlpack_device__()

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """Convert dtype and/or device: ``to(dtype)``, ``to('cpu')``, ``to(other)``."""
        return _ops.to(self, *args, **kwargs)

    def type(self, dtype: Any = None, non_blocking: bool = False,
             **kwargs: Any) -> Any:   # str or Tensor
        """The legacy type name (``'torch.cuda.FloatTensor'``) without ``dtype``; else the
        tensor converted to ``dtype``: a dtype keeps the device, a legacy type or type name
        (``ember.cuda.FloatTensor``, ``'torch.FloatTensor'``) also moves it to that type's
        device, as torch."""
        if dtype is None:
            return ("torch.cuda." if self.is_cuda else "torch.") + self.dtype._legacy
        d = _ops._type_to_dtype(dtype)
        dev = _legacy_device(dtype)
        return _ops.to(self, d) if dev is None else _ops.to(self, dev, d)

    def type_as(self, other: Tensor) -> Tensor:
        return _ops.to(self, other.dtype)

    def float(self) -> Tensor:
        return _ops.to(self, _dt.float32)

    def double(self) -> Tensor:
        return _ops.to(self, _dt.float64)

    def half(self) -> Tensor:
        return _ops.to(self, _dt.float16)

    def cfloat(self) -> Tensor:
        return _ops.to(self, _dt.complex64)

    def cdouble(self) -> Tensor:
        return _ops.to(self, _dt.complex128)

    def bfloat16(self) -> Tensor:
        return _ops.to(self, _dt.bfloat16)

    def long(self) -> Tensor:
        return _ops.to(self, _dt.int64)

    def int(self) -> Tensor:
        return _ops.to(self, _dt.int32)

    def short(self) -> Tensor:
        return _ops.to(self, _dt.int16)

    def char(self) -> Tensor:
        return _ops.to(self, _dt.int8)

    def byte(self) -> Tensor:
        return _ops.to(self, _dt.uint8)

    def bool(self) -> Tensor:
        return _ops.to(self, _dt.bool)

    def cpu(self, memory_format: Any = None) -> Tensor:
        """This tensor in CPU memory (itself when it is there already)."""
        return self if type(self._array) is _ndarray else _ops.to(self, "cpu")

    def cuda(self, device: Any = None, non_blocking: builtins.bool = False,
             memory_format: Any = None) -> Tensor:
        """This tensor on a CUDA device (the current one by default; itself when it is there
        already). Raises, saying what is missing, when CUDA cannot be used."""
        return _ops.to(self, "cuda" if device is None else _cuda_device(device))

    def pin_memory(self, device: Any = None) -> Tensor:
        """A copy in page-locked host memory for fast copies to the GPU, as torch.

        ember's copies to the GPU go through CuPy, so the copy is ordinary host memory marked
        pinned (``is_pinned()``). Without CUDA this raises torch's error."""
        if type(self._array) is not _ndarray:
            raise RuntimeError("cannot pin '%s' only dense CPU tensors can be pinned"
                               % self.type())
        if not _backend.cuda_status()[0]:
            raise RuntimeError("Cannot access accelerator device when none is available.")
        if self.__dict__.get("_pinned"):
            return self
        t = _ops.clone(self)
        t.__dict__["_pinned"] = True
        return t

    def share_memory_(self) -> Tensor:
        """Move this tensor's memory (and that of every tensor sharing it: views, ``detach()``,
        ``.data``) to shared memory that child processes see, in place; a no-op when it is
        there already and for CUDA tensors, as torch. A NumPy array given to ``from_numpy``
        keeps the old memory, as torch's."""
        from .backend import _shared
        if type(self._array) is not _ndarray or _shared.is_shared(self._array):
            return self
        aliases = _aliases(self)
        for t, new in zip(aliases, _shared.share_arrays([t._array for t in aliases])):
            t._array = new
        return self

    def is_pinned(self, device: Any = None) -> builtins.bool:
        """True for a tensor made by ``pin_memory()``."""
        return builtins.bool(self.__dict__.get("_pinned", False))

    def is_shared(self) -> builtins.bool:
        """Whether the tensor is in shared memory (always True for CUDA tensors, as torch)."""
        arr = self._array
        if type(arr) is _ndarray:
            from .backend import _shared
            return _shared.is_shared(arr)
        return self.is_cuda

    def new_tensor(self, data: Any, dtype: Optional[_dt.dtype] = None, device: Any = None,
                   requires_grad: builtins.bool = False) -> Tensor:
        return _ops.tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                           requires_grad=requires_grad)

    def new_zeros(self, *size: Any, dtype: Optional[_dt.dtype] = None, device: Any = None,
                      requires_grad: builtins.bool = False) -> Tensor:
        return _ops.zeros(*size, dtype=dtype or self.dtype, device=device or self.device,
                          requires_grad=requires_grad)

    def new_ones(self, *size: Any, dtype: Optional[_dt.dtype] = None, device: Any = None,
                     requires_grad: builtins.bool = False) -> Tensor:
        return _ops.ones(*size, dtype=dtype or self.dtype, device=device or self.device,
                         requires_grad=requires_grad)

    def new_empty(self, *size: Any, dtype: Optional[_dt.dtype] = None, device: Any = None,
                      requires_grad: builtins.bool = False) -> Tensor:
        return _ops.empty(*size, dtype=dtype or self.dtype, device=device or self.device,
                          requires_grad=requires_grad)

    def new_full(self, size: Any, fill_value: Any, dtype: Optional[_dt.dtype] = None,
                 device: Any = None, requires_grad: builtins.bool = False) -> Tensor:
        return _ops.full(size, fill_value, dtype=dtype or self.dtype,
                         device=device or self.device, requires_grad=requires_grad)

    # ---- Python protocol --------------------------------------------------------
    def __repr__(self, *, tensor_contents: Any = None) -> str:
        if type(self) is Tensor or type(self).__module__.startswith("ember."):
            return tensor_repr(self)
        return tensor_repr(self, type(self).__name__ + "(")     # (a program's subclass)

    def __str__(self) -> str:
        return tensor_repr(self)

    def __format__(self, spec: str) -> str:
        if self._array.ndim == 0:
            return self._array.item().__format__(spec)
        return object.__format__(self, spec) if spec else repr(self)

    def __len__(self) -> builtins.int:
        if self._array.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._array.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self) -> builtins.bool:
        if self._array.size != 1:
            raise RuntimeError("Boolean value of Tensor with %s is ambiguous" % (
                "no values" if self._array.size == 0 else "more than one value"))
        return bool(self._array.item())

    def __float__(self) -> builtins.float:
        if self._requires_grad and _engine._state.enabled:
            self._warn_scalar()         # (once per process, as torch's; in _tensor_compat)
        return float(self._scalar())

    def __int__(self) -> builtins.int:
        return int(self._scalar())

    def _scalar(self) -> Any:
        if self._array.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def __index__(self) -> builtins.int:
        if self._array.dtype.kind not in "iub" or self._array.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self._array.item())

    def __complex__(self) -> complex:
        return complex(self._scalar())

    __hash__ = object.__hash__

    def __reduce_ex__(self, proto: Any) -> Any:
        return (_rebuild, (_backend.to_host(self._array), self._requires_grad,
                           str(self.device)))

    def __deepcopy__(self, memo: Dict[builtins.int, Any]) -> Tensor:
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.")
        new = _new(type(self))
        _copy_fields(self, new, memo)
        memo[id(self)] = new
        return new

    # ---- operators --------------------------------------------------------------
    # An operator with a NumPy array operand answers NotImplemented, as torch's: NumPy then
    # computes ``t + a`` (on ``t.__array__()``, the result wrapped back into a Tensor) and
    # ``a + t`` raises TypeError. (``__add__``, ``__iadd__``, ... come from
    # ``ops.arithmetic.OPERATORS``.)
    def __radd__(self, other: Any) -> Tensor:
        return NotImplemented if not isinstance(other, _OPND) else _ops.add(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return NotImplemented if not isinstance(other, _OPND) else _ops.mul(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return NotImplemented if not isinstance(other, _OPND) else _ops.rsub(self, other)

    def __matmul__(self, other: Any) -> Tensor:
        return NotImplemented if not isinstance(other, _OPND) else _ops.matmul(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        if not isinstance(other, (_OPND, _ndarray)):
            return NotImplemented
        return _ops.reciprocal(self) * other     # (torch's: an array ``other``: NumPy's ``*``)

    def __rfloordiv__(self, other: Any) -> Tensor:
        if not isinstance(other, _OPND):
            return NotImplemented
        return _ops.floor_divide(_ops._scalar_like(other, self, False), self)

    def __rmod__(self, other: Any) -> Tensor:
        if not isinstance(other, _OPND):
            return NotImplemented
        return _ops.remainder(_ops._scalar_like(other, self, False), self)

    def __rpow__(self, other: Any) -> Tensor:
        return NotImplemented if not isinstance(other, _OPND) else _ops.pow(other, self)

    def __rmatmul__(self, other: Any) -> Tensor:
        if not isinstance(other, _OPND):
            return NotImplemented
        return _ops.matmul(_ops.as_tensor(other), self)

    def __pos__(self) -> Tensor:
        return self

    def __invert__(self) -> Tensor:
        return _ops.bitwise_not(self)

    def __and__(self, other: Any) -> Tensor:
        return NotImplemented if not isinstance(other, _OPND) else _ops.bitwise_and(self, other)

    def __rand__(self, other: Any) -> Tensor:
        return NotImplemented if not isinstance(other, _OPND) else self.__and__(other)

    def __iand__(self, other: Any) -> Tensor:
        return NotImplemented if not isinstance(other, _OPND) else _ops.bitwise_and_(self, other)

    def __or__(self, other: Any) -> Tensor:
        return NotImplemented if not isinstance(other, _OPND) else _ops.bitwise_or(self, other)

    def __ror__(self, other: Any) -> Tensor:
        return NotImplemented if not isinstance(other, _OPND) else self.__or__(other)

    def __ior__(self, other: Any) -> Tensor:
        return NotImplemented if not isinstance(other, _OPND) else _ops.bitwise_or_(self, other)

    def __xor__(self, other: Any) -> Tensor:
        return NotImplemented if not isinstance(other, _OPND) else _ops.bitwise_xor(self, other)

    def __rxor__(self, other: Any) -> Tensor:
        return NotImplemented if not isinstance(other, _OPND) else self.__xor__(other)

    def __ixor__(self, other: Any) -> Tensor:
        return NotImplemented if not isinstance(other, _OPND) else _ops.bitwise_xor_(self, other)

    def __lshift__(self, other: Any) -> Tensor:
        if not isinstance(other, _OPND):
            return NotImplemented
        return _ops.bitwise_left_shift(self, other)

    def __rshift__(self, other: Any) -> Tensor:
        if not isinstance(other, _OPND):
            return NotImplemented
        return _ops.bitwise_right_shift(self, other)

    def __rlshift__(self, other: Any) -> Tensor:
        if not isinstance(other, _OPND):
            return NotImplemented
        return _ops.bitwise_left_shift(other, self)

    def __rrshift__(self, other: Any) -> Tensor:
        if not isinstance(other, _OPND):
            return NotImplemented
        return _ops.bitwise_right_shift(other, self)

    def __ilshift__(self, other: Any) -> Tensor:
        if not isinstance(other, _OPND):
            return NotImplemented
        return _ops.bitwise_left_shift_(self, other)

    def __irshift__(self, other: Any) -> Tensor:
        if not isinstance(other, _OPND):
            return NotImplemented
        return _ops.bitwise_right_shift_(self, other)

    def __contains__(self, element: Any) -> builtins.bool:
        if not isinstance(element, (Tensor, builtins.int, builtins.float, builtins.bool,
                                    complex, np.number)):
            raise RuntimeError("Tensor.__contains__ only supports Tensor or scalar, but you "
                               "passed in a %s." % type(element))
        return builtins.bool((self == element).any().item())

    def __reversed__(self) -> Tensor:
        return self if not self._array.ndim else _ops.flip(self, 0)

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]  # element-wise, as torch
        if not isinstance(other, _CMP_OPERANDS):
            if isinstance(other, _ndarray):     # (only == takes an array, as torch's)
                return _ops.eq(self, _ops.as_tensor(other))
            return NotImplemented     # (as torch: == None is False, < a list a TypeError)
        return _ops.eq(self, other)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]  # element-wise, as torch
        if not isinstance(other, _CMP_OPERANDS):
            return NotImplemented     # (as torch: == None is False, < a list a TypeError)
        return _ops.ne(self, other)

    def __lt__(self, other: Any) -> Tensor:
        if not isinstance(other, _CMP_OPERANDS):
            return NotImplemented     # (as torch: == None is False, < a list a TypeError)
        return _ops.lt(self, other)

    def __le__(self, other: Any) -> Tensor:
        if not isinstance(other, _CMP_OPERANDS):
            return NotImplemented     # (as torch: == None is False, < a list a TypeError)
        return _ops.le(self, other)

    def __gt__(self, other: Any) -> Tensor:
        if not isinstance(other, _CMP_OPERANDS):
            return NotImplemented     # (as torch: == None is False, < a list a TypeError)
        return _ops.gt(self, other)

    def __ge__(self, other: Any) -> Tensor:
        if not isinstance(other, _CMP_OPERANDS):
            return NotImplemented     # (as torch: == None is False, < a list a TypeError)
        return _ops.ge(self, other)

    def __getitem__(self, index: Any) -> Tensor:
        try:
            return _ops._getitem(self, index)
        except (IndexError, TypeError):
            _check_text_index(self, index)
            raise

    def __setitem__(self, index: Any, value: Any) -> None:
        try:
            _ops._setitem(self, index, value)
        except (IndexError, TypeError):
            _check_text_index(self, index)
            raise

    @property
    def T(self) -> Tensor:
        if self._array.ndim != 2:
            self._warn_T()
        return _ops.permute(self, tuple(range(self._array.ndim - 1, -1, -1)))

    @property
    def mT(self) -> Tensor:
        return self._matrix_attr("mT") or _ops.transpose(self, -2, -1)

    def _matrix_attr(self, name: str) -> Optional[Tensor]:
        """torch's checks of ``mT``/``mH``: a 0-d tensor is returned as is (with torch's
        warning), a 1-D one refused; None for a matrix or batch of them."""
        n = self._array.ndim
        if n >= 2:
            return None
        if n == 1:
            raise RuntimeError("tensor.%s is only supported on matrices or batches of matrices. "
                               "Got 1-D tensor." % name)
        import warnings
        warnings.warn("Tensor.%s is deprecated on 0-D tensors. %s" % (
            name, "This function is the identity in these cases." if name == "mT"
            else "Consider using x.conj()."), UserWarning, stacklevel=3)
        return self

    @property
    def H(self) -> Tensor:
        if self._array.ndim != 2:
            raise RuntimeError("tensor.H is only supported on matrices (2-D tensors). Got %d-D "
                               "tensor." % self._array.ndim)
        t = _ops.transpose(self, 0, 1)
        return _ops.conj(t) if self._array.dtype.kind == "c" else t

    @property
    def mH(self) -> Tensor:
        t = self._matrix_attr("mH") or _ops.transpose(self, -2, -1)
        return _ops.conj(t) if self._array.dtype.kind == "c" else t

    def __getattr__(self, name: str) -> Any:
        # Tensor methods that mirror an ``ember.<name>`` function taking the tensor first.
        if name in _ops._TENSOR_METHODS:
            # (a C-level bound method: cheap; the op without the ``out=`` wrapper: methods
            # take no ``out=`` in torch)
            return _MethodType(_ops._PLAIN.get(name) or getattr(_ops, name), self)
        raise AttributeError("'Tensor' object has no attribute %r" % name)


_new = object.__new__


def _refresh_view(view: Tensor) -> None:
    """Regenerate a stale view's node (replaced by autograd.function's ``refresh_view``)."""


# what the comparison operators take (anything else: NotImplemented, Python's fallback)
_CMP_OPERANDS = (Tensor, builtins.int, builtins.float, builtins.bool, complex, np.number,
                 np.bool_)
_OPND = _CMP_OPERANDS   # (what the operators take; anything else: NotImplemented)
_CPU = _backend.cpu.device




def _no_dims(dim):
    """torch's error for a dimension of a 0-d tensor (where ``size``/``stride`` take none)."""
    if isinstance(dim, (builtins.int, np.integer)):
        raise IndexError("Dimension specified as %d but tensor has no dimensions" % dim)


_NON_TUPLE = ("Using a non-tuple sequence for multidimensional indexing is deprecated and will "
              "be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 "
              "this will be interpreted as tensor index, x[torch.tensor(seq)], which will "
              "result either in an error or a different result")


def _check_text_index(t, index):
    """torch's error for a str or bytes in an index (the index is read as data, as
    ``tensor(index)`` would)."""
    text = (str, bytes)
    if isinstance(index, text):
        if isinstance(index, str):          # (a sequence of one-letter indices to torch)
            warnings.warn(_NON_TUPLE, UserWarning, stacklevel=3)
            if len(index) > t.dim():
                raise IndexError("too many indices for tensor of dimension %d" % t.dim())
        bad = index
    elif isinstance(index, (tuple, list)) and any(isinstance(i, text) for i in index):
        if isinstance(index, list):         # (read as a tuple, as torch)
            warnings.warn(_NON_TUPLE, UserWarning, stacklevel=3)
        n = builtins.sum(1 for i in index if i is not None and i is not Ellipsis
                         and not isinstance(i, builtins.bool))
        if n > t.dim():
            raise IndexError("too many indices for tensor of dimension %d" % t.dim())
        bad = next(i for i in index if isinstance(i, text))
    else:
        return
    raise TypeError("new(): invalid data type '%s'" % type(bad).__name__)


def _aliases(t):
    """``t`` and the live tensors on its memory: its base, its views, tensors sharing its
    version counter (``detach()``) or its array (``.data``). The search through the heap runs
    only when something else holds ``t``'s version counter, base or array."""
    import gc
    import sys

    from .backend import _shared
    root = t._base if t._base is not None else t
    out = [t] if root is t else [t, root]
    if sys.getrefcount(t._version_ref) <= 2 and sys.getrefcount(t._array) <= 2 and root is t:
        return out
    targets = (root, t._version_ref, root._version_ref, t._array, root._array)
    seen = {id(o) for o in out}
    for o in gc.get_referrers(*targets):
        if isinstance(o, Tensor) and id(o) not in seen and type(o._array) is _ndarray \
                and _shared.same_memory(o._array, t._array):
            seen.add(id(o))
            out.append(o)
    return out


def _rebuild(arr, requires_grad, device="cpu"):
    t = Tensor._wrap(_backend.backend_for(device).asarray(np.array(arr)))  # host: unpickled
    t._requires_grad = requires_grad
    return t


def _host_message(t):
    return ("can't convert %s device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
            "to host memory first." % t.device)


def _legacy_device(t):
    """The device a legacy type (``ember.cuda.FloatTensor``) or type name
    (``'torch.cuda.FloatTensor'``) names; None for a dtype."""
    if isinstance(t, _dt.dtype):
        return None
    if getattr(t, "_legacy_dtype", None) is not None:
        return getattr(t, "_legacy_device", None) or "cpu"
    if isinstance(t, str):
        parts = t.split(".")
        if parts[-1] in _dt._BY_LEGACY:
            return "cuda" if "cuda" in parts[:-1] else "cpu"
    return None


def _cuda_device(device):
    d = _backend.device(device)
    return d if d.type == "cuda" else _backend.device("cuda", d.index)


def _copy_fields(src, dst, memo):
    import copy
    dst._array = src._array.copy()
    dst._requires_grad = src._requires_grad
    dst._grad = None if src._grad is None else copy.deepcopy(src._grad, memo)
    dst._grad_fn = None
    dst._output_nr = 0
    dst._version_ref = [0]
    dst._base = None
    dst._hooks = None
    dst._accum = None
    dst._retains_grad = False
    for k, v in getattr(src, "__dict__", {}).items():
        if k != "_post_hooks":
            dst.__dict__[k] = copy.deepcopy(v, memo)


def _as_arrays(x):
    """``x`` with every Tensor (also inside lists, tuples and dicts) replaced by its array."""
    if isinstance(x, Tensor):
        return x._array
    if isinstance(x, list):
        return [_as_arrays(v) for v in x]
    if isinstance(x, tuple):
        return tuple(_as_arrays(v) for v in x)
    if isinstance(x, dict):
        return {k: _as_arrays(v) for k, v in x.items()}
    return x


def _to_array(data, d=None):
    """Turn nested lists, scalars, arrays or tensors into an ndarray (dtype inferred as torch)."""
    if isinstance(data, Tensor):
        arr = data._array
    elif _backend.is_array(data) and not isinstance(data, np.ndarray):
        arr = data
    elif isinstance(data, np.ndarray):
        arr = data
    elif isinstance(data, (list, tuple)):
        arr = _nested_to_array(data, d)
        if d is None and any(isinstance(x, (Tensor, np.ndarray)) for x in data):
            return arr.astype(_infer_nested(data).np)      # (their dtypes count, as torch)
        if d is None and arr.dtype.kind in "biufc":
            want = _numpy_scalars_dtype(data)
            if want is not None:
                return arr.astype(want)
    elif isinstance(data, np.generic) and d is None:
        arr = np.asarray(data)    # host: a NumPy scalar keeps its dtype, as a 0-d array
        given = True
        if arr.dtype not in _dt._BY_NP:
            _dt.from_numpy_dtype(arr.dtype)
        return arr
    else:
        if isinstance(data, str):
            raise TypeError("new(): invalid data type 'str'")
        arr = np.asarray(data)    # host: a Python scalar or host array-like
        if arr.dtype == object:
            raise RuntimeError("Could not infer dtype of %s" % type(data).__name__)
    given = isinstance(data, Tensor) or _backend.is_array(data)
    if d is None and arr.dtype.kind in "fV" and not given:
        arr = arr.astype(_dt.get_default_dtype().np)
    elif d is None and arr.dtype.kind == "c" and not given:
        arr = arr.astype(_dt.default_complex_dtype().np)
    if d is not None and arr.dtype.kind == "c" and d.np.kind in "fiuV" and not given and not (
            isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data)):
        raise TypeError("must be real number, not complex" if d.np.kind in "fV" else
                        "'complex' object cannot be interpreted as an integer")
    if d is not None and arr.dtype != d.np:
        arr = arr.astype(d.np)
    if d is None and arr.dtype.kind == "i" and arr.dtype != np.int64 and \
            not given:
        arr = arr.astype(np.int64)
    if arr.dtype not in _dt._BY_NP:
        _dt.from_numpy_dtype(arr.dtype)
    return arr


def _numpy_scalars_dtype(data):
    """torch's dtype for a nested sequence holding NumPy scalars (each counts with its own
    dtype, a Python float as the default dtype, an int as int64; all promoted together), or
    None when it holds none."""
    found, seen = False, set()
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, np.generic):
            found = True
            seen.add(x.dtype)
        elif isinstance(x, (bool, int, float, complex)):
            seen.add(type(x))
        else:
            return None       # (tensors, arrays: the general path)
    if not found:
        return None
    py = {bool: _dt.bool, int: _dt.int64, float: _dt.get_default_dtype(),
          complex: _dt.default_complex_dtype()}
    out = None
    for k in seen:
        e = py[k] if k in py else _dt.from_numpy_dtype(k)
        out = e if out is None else _dt.promote_types(out, e)
    return out.np


def _nested_to_array(data, d=None):
    sizes = _first_sizes(data)
    if 0 in sizes:     # torch stores nothing, so checks nothing: only the first elements count
        return np.zeros(sizes, (d or _infer_nested(data)).np)    # host: an empty result
    if any(isinstance(x, Tensor) for x in data):
        data = _store(data, sizes, 0, data, d)
    try:
        arr = np.array(data)    # host: nested Python sequences
    except ValueError as e:
        _infer_nested(data)
        _store(data, sizes, 0, data, d)
        _check_nested(data)
        raise ValueError("expected sequence of equal-length sequences to build a tensor (%s)"
                         % e) from None
    if arr.dtype == object or arr.ndim > len(sizes):
        _infer_nested(data)
        _store(data, sizes, 0, data, d)
        _check_nested(data)
    if arr.dtype == object:
        for leaf in arr.reshape(-1):
            if not isinstance(leaf, (int, float, complex, bool, np.generic, Tensor)):
                raise RuntimeError("Could not infer dtype of %s" % type(leaf).__name__)
        raise TypeError("can't build a tensor from a ragged or non-numeric sequence")
    if arr.dtype.kind in "US":
        _check_nested(data)
        raise TypeError("new(): invalid data type 'str'")
    return arr


def _first_sizes(data):
    """torch's size of nested sequences: the lengths along the first elements (a tensor ends
    the walk: it stands for one number there)."""
    sizes = []
    x = data
    while isinstance(x, (list, tuple)):
        sizes.append(len(x))
        if not x:
            break
        x = x[0]
    if isinstance(x, np.ndarray):       # (a NumPy array is a sequence to torch; a tensor isn't)
        sizes.extend(x.shape)
    return sizes


def _infer_nested(data):
    """torch's dtype for nested sequences (an empty one counts as the default dtype)."""
    if isinstance(data, (list, tuple)):
        if not data:
            return _dt.get_default_dtype()
        out = None
        for x in data:
            d = _infer_nested(x)
            out = d if out is None else _dt.promote_types(out, d)
        return out
    if isinstance(data, Tensor):
        return data.dtype
    if isinstance(data, (np.ndarray, np.generic)):
        return _dt.from_numpy_dtype(data.dtype)
    if isinstance(data, str):
        raise TypeError("new(): invalid data type 'str'")
    if isinstance(data, builtins.bool):
        return _dt.bool
    if isinstance(data, builtins.int):
        return _dt.int64
    if isinstance(data, complex):
        return _dt.default_complex_dtype()
    return _dt.get_default_dtype()


def _store(obj, sizes, dim, top, d):
    """``obj`` (the part of nested data at depth ``dim``) with its tensors made host arrays,
    after torch's checks when filling a tensor of size ``sizes``: a sequence of the right
    length at each depth, one number (or one-element tensor) at the last; ``top`` is the
    whole data (its dtype, or ``d`` when given, words the error for a sequence where a number
    belongs)."""
    if dim == len(sizes):
        if isinstance(obj, Tensor):
            if obj._array.size != 1:
                raise ValueError("only one element tensors can be converted to Python scalars")
            return _backend.to_host(obj._array).reshape(())
        if isinstance(obj, (list, tuple)):
            if (d or _infer_nested(top)).np.kind in "fcV":
                raise TypeError("must be real number, not %s" % type(obj).__name__)
            raise TypeError("'%s' object cannot be interpreted as an integer"
                            % type(obj).__name__)
        return obj
    if isinstance(obj, (Tensor, np.ndarray)):
        arr = obj._array if isinstance(obj, Tensor) else obj
        shape = arr.shape
        for k, n in enumerate(shape):
            if dim + k == len(sizes):
                if arr.size // max(_prod(shape[:k]), 1) != 1:
                    raise ValueError("only one element tensors can be converted to Python "
                                     "scalars")
                break
            if n != sizes[dim + k]:
                raise ValueError("expected sequence of length %d at dim %d (got %d)"
                                 % (sizes[dim + k], dim + k, n))
        return _backend.to_host(arr) if isinstance(obj, Tensor) else obj
    if not isinstance(obj, (list, tuple)):
        raise TypeError("not a sequence")
    if len(obj) != sizes[dim]:
        raise ValueError("expected sequence of length %d at dim %d (got %d)"
                         % (sizes[dim], dim, len(obj)))
    return [_store(x, sizes, dim + 1, top, d) for x in obj]


def _prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _check_nested(data):
    """Raise torch's error for nested sequences that make no tensor: the sizes come from the
    first element at each depth, and every sequence must have its depth's size."""
    sizes = []
    x = data
    while isinstance(x, (list, tuple, str)):
        if isinstance(x, str):
            raise ValueError("too many dimensions 'str'")
        sizes.append(len(x))
        if not x:
            return
        x = x[0]
    level = [data]
    for dim, size in enumerate(sizes):
        nxt = []
        for seq in level:
            if not isinstance(seq, (list, tuple)):
                raise TypeError("not a sequence")
            if len(seq) != size:
                raise ValueError("expected sequence of length %d at dim %d (got %d)"
                                 % (size, dim, len(seq)))
            nxt.extend(seq)
        level = nxt


class _LegacyType(type):
    """``isinstance(t, ember.FloatTensor)`` is true of every float32 tensor, as in torch."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj._array.dtype == cls._legacy_dtype.np

    def __call__(cls, *args, **kwargs):
        if len(args) == 1 and isinstance(args[0], Tensor) and "device" in kwargs:
            raise RuntimeError("Legacy tensor constructor of the form torch.Tensor(tensor, "
                               "device=device) is not supported.  Use torch.tensor(...) or "
                               "torch.as_tensor(...) instead.")
        # torch's rules are ``Tensor.new``'s: data, sizes, or an alias of a tensor of this dtype
        return _ops.empty(0, dtype=cls._legacy_dtype).new(*args, **kwargs)


def _legacy_type(name, d):
    return _LegacyType(name, (), {"_legacy_dtype": d, "dtype": d, "layout": _dt.strided,
                                  "is_cuda": False, "is_sparse": False, "is_sparse_csr": False,
                                  "__doc__": "Legacy constructor for %r tensors." % d})


FloatTensor = _legacy_type("FloatTensor", _dt.float32)
DoubleTensor = _legacy_type("DoubleTensor", _dt.float64)
HalfTensor = _legacy_type("HalfTensor", _dt.float16)
LongTensor = _legacy_type("LongTensor", _dt.int64)
IntTensor = _legacy_type("IntTensor", _dt.int32)
ShortTensor = _legacy_type("ShortTensor", _dt.int16)
CharTensor = _legacy_type("CharTensor", _dt.int8)
ByteTensor = _legacy_type("ByteTensor", _dt.uint8)
BoolTensor = _legacy_type("BoolTensor", _dt.bool)


# The hottest methods and operators are the ops' functions themselves (a Python call less than a
# wrapper method; other methods go through ``__getattr__``).
_METHODS = {
    "add": "add", "add_": "add_", "sub": "sub", "sub_": "sub_", "mul": "mul", "mul_": "mul_",
    "div": "div", "div_": "div_", "pow": "pow", "matmul": "matmul", "neg": "__neg__",
    "abs": "__abs__", "relu": "relu", "sum": "sum", "mean": "mean", "mm": "mm", "t": "t",
    "view": "view", "reshape": "reshape", "exp": "exp", "log": "log", "clamp": "clamp",
    "unsqueeze": "unsqueeze", "squeeze": "squeeze", "expand": "expand", "sigmoid": "sigmoid",
    "tanh": "tanh", "transpose": "transpose", "permute": "permute", "flatten": "flatten",
    "zero_": "zero_"}


def _bind(ops, engine):
    """Connect Tensor's methods to ``ember.ops`` and the engine (called by ``ember/__init__``)."""
    global _ops, _engine
    _ops = ops
    _engine = engine
    for op, names in _METHODS.items():
        for name in names.split():
            setattr(Tensor, name, ops._PLAIN.get(op) or getattr(ops, op))
    for name, fn in ops.arithmetic.OPERATORS.items():     # (a NumPy operand: NotImplemented)
        setattr(Tensor, name, fn)
    # Every other method is a class attribute too, as torch's (``torch.Tensor.abs(x)``,
    # ``hasattr(torch.Tensor, "abs")``); what Tensor defines itself wins.
    for name in ops._TENSOR_METHODS:
        if not hasattr(Tensor, name):
            fn = ops._PLAIN.get(name) or getattr(ops, name)
            setattr(Tensor, name, fn if type(fn) is _FunctionType else _as_method(fn))


def _as_method(fn):
    """A function calling ``fn`` (a callable that is not a function: it would not bind)."""
    @functools.wraps(fn)
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    return method
