"""Tensor methods kept for torch's older and rarer APIs: the legacy constructor ``new``,
``resize_``/``set_``, storages, device flags of other backends, and the functions torch removed
(which raise torch's message). ``install(Tensor)`` attaches them; they are not part of how
ember works (tensor.py), only of what torch code may call."""
from __future__ import annotations

import builtins
import functools
import operator
import warnings
from typing import Any, Iterator, List, Optional, Sequence

import numpy as np

from . import backend as _backend
from . import dtypes as _dt
from . import _torch_function
from . import ops as _ops
from .ops import _util
from .ops._util import warn_once as _warn_once
from .autograd.function import Function
from .autograd.grad_mode import state as _grad_state
from .tensor import Size, Tensor

__all__ = ["install", "TypedStorage", "UntypedStorage", "REMOVED"]


def _is_int(x: Any) -> builtins.bool:
    return isinstance(x, (builtins.int, np.integer)) and not isinstance(x, builtins.bool)


def _type_name(x: Any) -> str:
    return "Tensor" if isinstance(x, Tensor) else type(x).__name__


# the C++ type names in torch's TensorOptions text
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "uint8": "unsigned char", "int8": "signed char",
              "int16": "short int", "int32": "int", "int64": "long int", "bool": "bool",
              "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _options(t: Tensor) -> str:
    """torch's text of a tensor's TensorOptions (in ``Tensor.new``'s dtype error)."""
    return ("TensorOptions(dtype=%s, device=%s, layout=Strided, requires_grad=false (default), "
            "pinned_memory=false (default), memory_format=(nullopt))"
            % (_CPP_NAMES.get(str(t.dtype).split(".")[-1], str(t.dtype)), t.device))


def _new_mismatch(args: Any, kwargs: Any, why: str) -> str:
    got = [_type_name(a) for a in args] + ["%s=%s" % (k, "torch.dtype" if isinstance(
        v, _dt.dtype) else _type_name(v)) for k, v in kwargs.items()]
    return ("new() received an invalid combination of arguments - got (%s), but expected one "
            "of:\n * (*, torch.device device = None)\n%s * (torch.Storage storage)\n"
            " * (Tensor other)\n * (tuple of ints size, *, torch.device device = None)\n"
            " * (object data, *, torch.device device = None)\n" % (", ".join(got), why))


class _Resize(Function):
    """torch's ``torch.autograd._functions.Resize`` (its arithmetic and messages included)."""

    node_name = "ResizeBackward"

    @staticmethod
    def forward(ctx: Any, tensor: Tensor, sizes: Any) -> Tensor:
        numel = functools.reduce(operator.mul, sizes, 1)
        if tensor.numel() != numel:
            raise RuntimeError(
                "requested resize to %s (%s elements in total), but the given tensor has a size "
                "of %s (%d elements). autograd's resize can only change the shape of a given "
                "tensor, while preserving the number of elements. "
                % ("x".join(map(str, sizes)), numel, "x".join(map(str, tensor.shape)),
                   tensor.numel()))
        if not sizes or not all(_is_int(n) for n in sizes):
            raise TypeError("view() received an invalid combination of arguments - got (%s), "
                            "but expected one of:\n * (torch.dtype dtype)\n * (tuple of ints "
                            "size)\n" % ", ".join(_type_name(n) for n in sizes))
        ctx.input_sizes = tuple(tensor.shape)
        return _ops.view(_ops.contiguous(tensor), *sizes)

    @staticmethod
    def backward(ctx: Any, grad_output: Tensor) -> Any:
        return _ops.reshape(grad_output, ctx.input_sizes), None


def _layout_error(method: str, layout: str) -> RuntimeError:
    """torch's error for a sparse-only method called on a dense (strided) tensor."""
    return RuntimeError("%s expected %s tensor layout but got Strided" % (method, layout))


class _Compat:
    def _warn_scalar(self) -> None:
        """torch's warning, once per process, for ``float()`` of a tensor that requires grad."""
        _warn_once("scalar of a tensor that requires grad", "Converting a tensor with "
                   "requires_grad=True to a scalar may lead to unexpected behavior.\nConsider "
                   "using tensor.detach() first.", 4)

    def _warn_T(self) -> None:
        """torch's warning, once per process, for ``x.T`` of a tensor that is not 2-D."""
        _warn_once("x.T", "The use of `x.T` on tensors of dimension other than 2 to reverse their "
                   "shape is deprecated and it will throw an error in a future release. Consider "
                   "`x.mT` to transpose batches of matrices or `x.permute(*torch.arange(x.ndim - "
                   "1, -1, -1))` to reverse the dimensions of a tensor.", 4)

    def _bad_grad(self, value: Any) -> None:
        """torch's error for ``self.grad = value`` of another type, dtype or size."""
        if not isinstance(value, Tensor):
            raise TypeError("assigned grad expected to be a Tensor or None but got grad of "
                            "type %s" % type(value).__name__)
        if value._array.dtype != self._array.dtype:
            raise RuntimeError(
                "attempting to assign a gradient with dtype '%s' to a tensor with grad_dtype "
                "'%s'. The gradient must match the tensor's grad_dtype (defaults to the "
                "tensor's dtype). You can set the tensor's grad_dtype attribute with a specific "
                "dtype, or None to allow any dtype. Set grad_dtype with caution. Diverging the "
                "dtypes of a tensor and its gradient may break downstream systems that assume "
                "they match." % (_CPP_NAMES.get(str(value.dtype).split(".")[-1], value.dtype),
                                 _dt.scalar_type_name(self._array.dtype)))
        raise RuntimeError("attempting to assign a gradient of size '%s' to a tensor of size "
                           "'%s'. Please ensure that the gradient and the tensor are the same "
                           "size" % (list(value.shape), list(self.shape)))

    @property
    def volatile(self) -> bool:
        warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning,
                      stacklevel=2)
        return False

    @property
    def grad_dtype(self) -> Optional[_dt.dtype]:
        """The dtype a gradient of this tensor has (its own)."""
        return self.dtype

    def const_data_ptr(self) -> int:
        return self.data_ptr()

    def is_set_to(self, tensor: Tensor) -> builtins.bool:
        """Whether both tensors view the same memory with the same offset, size and stride."""
        return (self.untyped_storage().data_ptr() == tensor.untyped_storage().data_ptr()
                and self.data_ptr() == tensor.data_ptr() and self.shape == tensor.shape
                and self.stride() == tensor.stride())

    def to_dense(self, dtype: Optional[_dt.dtype] = None, *, masked_grad: Any = None) -> Tensor:
        """The tensor itself (it is dense), or a copy in ``dtype``."""
        return self if dtype is None or dtype == self.dtype else _ops.to(self, dtype)

    def to_sparse(self, *args: Any, **kwargs: Any) -> Tensor:
        """This tensor as a sparse COO tensor (``sparse_dim`` leading sparse dims)."""
        from .ops import sparse as _sparse     # (loaded on first use, as ember.sparse)
        return _sparse.to_sparse(self, *args, **kwargs)

    def to_sparse_coo(self) -> Tensor:
        return self.to_sparse()

    def sparse_dim(self) -> int:
        return 0

    def dense_dim(self) -> int:
        return self._array.ndim

    def coalesce(self) -> Tensor:
        raise _layout_error("coalesce", "sparse coordinate")

    def indices(self) -> Tensor:
        raise _layout_error("indices", "sparse coordinate")

    def is_coalesced(self) -> bool:
        raise _layout_error("is_coalesced", "sparse coordinate")

    def values(self) -> Tensor:
        raise _layout_error("values", "sparse")

    def crow_indices(self) -> Tensor:
        raise _layout_error("crow_indices", "sparse row compressed")

    def col_indices(self) -> Tensor:
        raise _layout_error("col_indices", "sparse row compressed")

    def ccol_indices(self) -> Tensor:
        raise _layout_error("ccol_indices", "sparse column compressed")

    def row_indices(self) -> Tensor:
        raise _layout_error("row_indices", "sparse column compressed")

    def xpu(self, *args: Any, **kwargs: Any) -> Tensor:
        raise AssertionError("Torch not compiled with XPU enabled")

    def ipu(self, *args: Any, **kwargs: Any) -> Tensor:
        raise RuntimeError("PyTorch is not linked with support for ipu devices")

    def record_stream(self, stream: Any) -> None:
        """Accepted for torch's code: CuPy's allocator keeps a block alive while a stream uses
        it, so there is nothing to record."""

    def module_load(self, other: Any, assign: builtins.bool = False) -> Any:
        """What ``load_state_dict`` puts in this parameter's place under swap mode: ``other``
        (``assign=True``) or this tensor after copying ``other`` into it, detached."""
        return other.detach() if assign else self.copy_(other).detach()

    def as_subclass(self, cls: type) -> Tensor:
        """This tensor's data (shared) and graph, as an instance of ``cls``."""
        return _torch_function.as_subclass(self, cls)

    def chalf(self, memory_format: Any = None) -> Tensor:
        return _ops.to(self, _dt.complex32)

    def new(self, *args: Any, **kwargs: Any) -> Tensor:
        """torch's legacy constructor: ``x.new(2, 3)`` (uninitialised, this dtype and device),
        ``x.new([1, 2])`` (data), ``x.new(t)`` (an alias of ``t``, of this dtype) or
        ``x.new()`` (empty); only ``device`` is a keyword."""
        device = kwargs.pop("device", None)
        for key in ("size", "data", "other"):
            if key in kwargs and not args:
                args = (kwargs.pop(key),)
                if key == "size":
                    args = tuple(args[0])
        if kwargs:
            raise TypeError(_new_mismatch(args, kwargs, "      didn't match because some of "
                                          "the keywords were incorrect: %s\n"
                                          % ", ".join(kwargs)))
        dtype, dev = self.dtype, device or self.device
        if not args:
            return _ops.empty(0, dtype=dtype, device=dev)
        first = args[0]
        if len(args) == 1 and isinstance(first, Tensor):
            if device is not None:
                raise RuntimeError("Legacy tensor new of the form tensor.new(tensor, "
                                   "device=device) is not supported.  Use torch.as_tensor(...) "
                                   "instead.")
            if first.dtype != dtype:
                raise TypeError("expected %s (got %s)" % (_options(self), _options(first)))
            return first[...]     # (torch's alias: a view, AliasBackward0)
        if len(args) == 1 and isinstance(first, Size):
            args = tuple(first)
        elif len(args) == 1 and not _is_int(first):
            if isinstance(first, (builtins.float, builtins.complex, builtins.bool)) or \
                    first is None or isinstance(first, np.generic):
                name = type(first).__name__
                raise TypeError("new(): data must be a sequence (got %s)" % (
                    "numpy." + name if isinstance(first, np.generic) else name))
            return _ops.tensor(first, dtype=dtype, device=dev)
        if not _is_int(args[0]):
            types = "(%s)" % ", ".join("!%s!" % _type_name(a) for a in args)
            raise TypeError(_new_mismatch(args, {}, "      didn't match because some of the "
                                          "arguments have invalid types: %s\n" % types))
        for i, a in enumerate(args):
            if not (_is_int(a) or isinstance(a, (builtins.bool, np.bool_))):
                raise TypeError("new(): argument 'size' failed to unpack the object at pos %d "
                                "with error \"type must be tuple of ints,but got %s\""
                                % (i + 1, _type_name(a)))
        return _ops.empty(*[builtins.int(a) for a in args], dtype=dtype, device=dev)

    def new_empty_strided(self, size: Any, stride: Any, dtype: Optional[_dt.dtype] = None,
                          device: Any = None, requires_grad: builtins.bool = False) -> Tensor:
        return _ops.empty_strided(size, stride, dtype=dtype or self.dtype,
                                  device=device or self.device, requires_grad=requires_grad)

    def resize_(self, *sizes: Any, memory_format: Any = None) -> Tensor:
        """Reshape in place to ``sizes``, keeping the first elements (new ones uninitialised),
        as torch; refused for a tensor that requires grad."""
        if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
            sizes = tuple(sizes[0])
        if self.requires_grad:
            raise RuntimeError("cannot resize variables that require grad")
        if any(not isinstance(n, builtins.int) or n < 0 for n in sizes):
            raise RuntimeError("Trying to create tensor with negative dimension %s: %s"
                               % (min(sizes), list(sizes)))
        arr = self._array
        xp = _backend.get_array_module(arr)
        n = 1
        for d in sizes:
            n *= d
        if tuple(arr.shape) == tuple(sizes):
            return self
        flat = arr.reshape(-1)
        if n <= flat.size and self._base is None and arr.flags.c_contiguous:
            self._array = flat[:n].reshape(sizes)
        else:
            new = xp.zeros(n, arr.dtype)
            k = min(n, flat.size)
            new[:k] = flat[:k]
            self._array = new.reshape(sizes)
        self._bump()
        return self

    def resize_as_(self, the_template: Tensor, memory_format: Any = None) -> Tensor:
        return self.resize_(tuple(the_template.shape))

    def resize(self, *sizes: Any) -> Tensor:
        """Deprecated out-of-place ``resize_``: this tensor's elements viewed in shape
        ``sizes`` (the same number of elements), as torch's autograd ``Resize``."""
        warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
        return _Resize.apply(self, sizes)

    def resize_as(self, tensor: Tensor) -> Tensor:
        warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
        return _Resize.apply(self, tensor.shape)

    def as_strided_(self, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
        """Make this tensor the view ``as_strided(size, stride, storage_offset)`` of its own
        memory, in place."""
        if _grad_state.enabled and self.requires_grad:
            if self.grad_fn is None:
                raise RuntimeError("a leaf Variable that requires grad is being used in an "
                                   "in-place operation.")
            view = _ops.as_strided(self, size, stride, storage_offset)
            view.grad_fn.set_node_name("AsStridedBackward1")
            self.grad_fn, self._output_nr = view.grad_fn, view._output_nr
            if self._base is not None:
                self.__dict__["_view_fn"] = view.__dict__.get("_view_fn")
        else:
            view = _ops.as_strided(self.detach(), size, stride, storage_offset)
        self._array = view._array
        self._bump()
        if "_view_version" in self.__dict__:
            self.__dict__["_view_version"] = self._version_ref[0]
        return self

    name = None     # (torch's named-tensor name; ember tensors have none)

    def reinforce(self, reward: Any) -> Any:
        raise RuntimeError(
            "reinforce() was removed.\nUse torch.distributions instead.\nSee "
            "https://pytorch.org/docs/main/distributions.html\n\nInstead of:\n\nprobs = "
            "policy_network(state)\naction = probs.multinomial()\nnext_state, reward = "
            "env.step(action)\naction.reinforce(reward)\naction.backward()\n\nUse:\n\n"
            "probs = policy_network(state)\n# NOTE: categorical is equivalent to what used to "
            "be called multinomial\nm = torch.distributions.Categorical(probs)\naction = "
            "m.sample()\nnext_state, reward = env.step(action)\nloss = -m.log_prob(action) * "
            "reward\nloss.backward()\n")

    def set_(self, source: Any = None, storage_offset: builtins.int = 0, size: Any = None,
             stride: Any = None) -> Tensor:
        """Make this tensor use ``source``'s memory (``set_()``: empty), as torch."""
        if isinstance(source, TypedStorage):    # (its memory, read as this tensor's dtype)
            source = Tensor._wrap(source._flat._array.view(self._array.dtype))
        if source is None:
            self._array = _backend.get_array_module(self._array).zeros(0, self._array.dtype)
        elif isinstance(source, Tensor):
            if source.dtype != self.dtype:
                raise RuntimeError("Expected object of scalar type %s but got scalar type %s "
                                   "for argument 'source'" % (_dt.scalar_type_name(self.dtype),
                                                              _dt.scalar_type_name(
                                                                  source.dtype)))
            arr = source._array
            if size is not None:
                arr = _ops.as_strided(source, size, stride or _contiguous_strides(size),
                                      storage_offset)._array
            self._array = arr       # (its own version counter, as torch's)
        else:
            raise TypeError("set_(): argument 'source' must be Tensor, not %s"
                            % type(source).__name__)
        self._bump()
        return self

    def storage(self) -> "TypedStorage":
        """The tensor's memory as a flat typed storage (torch's deprecated ``TypedStorage``)."""
        _warn_typed_storage_removal(stacklevel=3)
        return TypedStorage(self)

    def to_sparse_csr(self, dense_dim: Optional[int] = None) -> Tensor:
        """This 2-D tensor in compressed sparse row layout."""
        from .ops import sparse as _sparse     # (loaded on first use, as ember.sparse)
        return _sparse.to_sparse_csr(self, dense_dim)

    def untyped_storage(self) -> "UntypedStorage":
        """The tensor's memory as bytes."""
        return UntypedStorage(self)

    def eig(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(REMOVED["eig"])

    def lstsq(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(REMOVED["lstsq"])

    def solve(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(REMOVED["solve"])

    def symeig(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(REMOVED["symeig"])


def _contiguous_strides(size: Sequence[int]) -> List[int]:
    out, n = [], 1
    for d in reversed(list(size)):
        out.append(n)
        n *= max(d, 1)
    return out[::-1]


def _storage_tensor(t: Tensor) -> Tensor:
    """``t``'s whole memory as a flat tensor (its base's, for a view; for a tensor that names
    its storage's flat array in ``_storage``, as torch.load's do, that array)."""
    base = t._base if t._base is not None else t
    if "_storage" in base.__dict__:
        return Tensor._wrap(base.__dict__["_storage"])
    return Tensor._wrap(base._array.reshape(-1)) if base._array.flags.c_contiguous \
        else Tensor._wrap(base._array.copy().reshape(-1))


def _warn_typed_storage_removal(stacklevel: int = 2) -> None:
    """torch's TypedStorage deprecation warning: once per process (its ``has_warned`` flag)."""
    _warn_once("TypedStorage", "TypedStorage is deprecated. It will be removed in the future and "
               "UntypedStorage will be the only storage class. This should only matter to you if "
               "you are using storages directly.  To access UntypedStorage directly, use "
               "tensor.untyped_storage() instead of tensor.storage()", stacklevel + 1)


def _reset_warn_typed_storage_removal() -> None:
    _util._WARNED.discard("TypedStorage")


class TypedStorage:
    """A tensor's memory as a flat sequence of its dtype (torch's deprecated storage API)."""

    def __init__(self, t: Tensor) -> None:
        self._flat = _storage_tensor(t)
        self.dtype = t.dtype
        self.device = t.device

    def size(self) -> int:
        return self._flat._array.size

    __len__ = size

    def nbytes(self) -> int:
        return self._flat._array.nbytes

    def element_size(self) -> int:
        return self._flat._array.itemsize

    def data_ptr(self) -> int:
        return self._flat.data_ptr()

    def tolist(self) -> List[Any]:
        return self._flat.tolist()

    def __getitem__(self, i: Any) -> Any:
        return self._flat[i].item() if isinstance(i, builtins.int) else self._flat[i]

    def __setitem__(self, i: Any, v: Any) -> None:
        self._flat._array[i] = v

    def __iter__(self) -> Iterator[Any]:
        return iter(self.tolist())

    def __repr__(self) -> str:
        return " %s\n[%s of size %d]" % ("\n ".join(str(v) for v in self.tolist()),
                                         type(self).__name__, self.size())


class UntypedStorage(TypedStorage):
    """A tensor's memory as bytes."""

    def size(self) -> int:
        return self._flat._array.nbytes

    __len__ = size

    def element_size(self) -> int:
        return 1

    def tolist(self) -> List[Any]:
        return self._flat._array.view(np.uint8).tolist()   # host: bytes of host memory


# (messages of the functions torch removed in 1.9 and keeps only to say what replaced them)
REMOVED = {
    "eig": "This function was deprecated since version 1.9 and is now removed. "
           "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather "
           "than real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be "
           "replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = "
           "torch.eig(A, eigenvectors=True) should be replaced with:\nL_complex, V_complex = "
           "torch.linalg.eig(A)",
    "lstsq": "This function was deprecated since version 1.9 and is now removed. `torch.lstsq` "
             "is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has "
             "reversed arguments and does not return the QR decomposition in the returned "
             "tuple (although it returns other information about the problem).\n\nTo get the "
             "QR decomposition consider using `torch.linalg.qr`.\n\nThe returned solution in "
             "`torch.lstsq` stored the residuals of the solution in the last m - n columns of "
             "the returned value whenever m > n. In torch.linalg.lstsq, the residuals are in "
             "the field 'residuals' of the returned named tuple.\n\nThe unpacking of the "
             "solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\nshould be "
             "replaced with:\nX = torch.linalg.lstsq(A, B).solution",
    "solve": "This function was deprecated since version 1.9 and is now removed. `torch.solve` "
             "is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its "
             "arguments reversed and does not return the LU factorization.\n\nTo get the LU "
             "factorization see `torch.lu`, which can be used with `torch.lu_solve` or "
             "`torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced with:\nX "
             "= torch.linalg.solve(A, B)",
    "symeig": "This function was deprecated since version 1.9 and is now removed. The default "
              "behavior has changed from using the upper triangular portion of the matrix by "
              "default to using the lower triangular portion.\n\nL, _ = torch.symeig(A, "
              "upper=upper) should be replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if "
              "upper else 'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) should be "
              "replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')",
    "matrix_rank": "This function was deprecated since version 1.9 and is now removed.\nPlease "
                   "use the `torch.linalg.matrix_rank` function instead. The parameter "
                   "'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'.",
}


def install(cls: type) -> None:
    """Attach the methods above to ``cls`` (``Tensor``)."""
    for name, value in vars(_Compat).items():
        if not name.startswith("__"):
            setattr(cls, name, value)
