"""save/load: PyTorch's own checkpoint format (a zip of a pickle and raw storages), and safetensors.

``ember.save(obj, "model.pt")`` writes what ``torch.save`` writes: a zip archive holding
``data.pkl`` (the object, pickled with protocol 2, every tensor as a
``torch._utils._rebuild_tensor_v2`` call on a persistent storage id) and one ``data/<key>``
record per storage, so real ``torch.load`` reads it with its default ``weights_only=True``. A
path ending in ``.safetensors`` gets a safetensors file instead (written by the ``safetensors``
package).

``ember.load`` tells the formats apart by content. Checkpoints are unpickled by
``_WeightsUnpickler``, an opcode interpreter adapted from torch's weights-only unpickler
(BSD-3-Clause, see ember/LICENSE-PyTorch): it never
imports anything, and the only callables a file can reach are the allow-listed globals (tensor
rebuild functions, ``OrderedDict``, ``torch.Size``, dtypes, devices, ...) and those the user adds
with ``add_safe_globals``. ``weights_only=False`` unpickles fully (arbitrary code: trusted
files only), mapping ``torch.*`` names to ember's. See ``docs/security.md``.
"""
import _compat_pickle
import collections
import enum
import hashlib
import io
import json
import math
import mmap as _mmap
import os
import pickle
import struct
import sys
import warnings
import zipfile
from pickle import UnpicklingError

import numpy as np

from . import dtypes as _dt
from .backend import backend_for, device as _device, to_host
from .tensor import Size, Tensor

__all__ = ["save", "load", "CheckpointError", "SourceChangeWarning", "LoadEndianness",
           "get_default_load_endianness", "set_default_load_endianness", "get_default_mmap_options",
           "set_default_mmap_options", "location_tag",
           "default_restore_location", "register_package", "DEFAULT_PROTOCOL",
           "get_unsafe_globals_in_checkpoint", "check_module_version_greater_or_equal"]

DEFAULT_PROTOCOL = 2


class CheckpointError(RuntimeError, ValueError):
    """A checkpoint file is malformed, truncated, forged or in no format ember reads."""


class _NotACheckpointError(CheckpointError, UnpicklingError):
    """A file in no checkpoint format: torch's unpickling error for it, also a CheckpointError."""


class _EmptyFileError(CheckpointError, EOFError):
    """An empty file: an ``EOFError`` as in torch, also a CheckpointError."""


class _TorchRuntimeError(CheckpointError):
    """A failure torch reports as a ``RuntimeError`` with the same message."""


# (named as torch's exception classes, so ``type(e).__name__`` reads as under torch)
_NotACheckpointError.__name__ = _NotACheckpointError.__qualname__ = "UnpicklingError"
_EmptyFileError.__name__ = _EmptyFileError.__qualname__ = "EOFError"
_TorchRuntimeError.__name__ = _TorchRuntimeError.__qualname__ = "RuntimeError"


def _fail(msg):
    raise CheckpointError("ember.load: " + msg)


UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will "
    "likely succeed, but it can result in arbitrary code execution. Do it only if you got the "
    "file from a trusted source."
)
_DOCS_MESSAGE = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
    "weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
)
_MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
_PROTOCOL_VERSION = 1001
_LEGACY_PREFIX = pickle.dumps(_MAGIC_NUMBER, protocol=2)[:-1]    # PROTO 2, LONG1 <10 bytes>
_ZIP_MAGIC = b"PK\x03\x04"
_ALIGN = 64
_MAX_DIMS = 64
_MAX_DEPTH = 64
_MAX_DEFLATE_RATIO = 1032       # deflate never expands more than this

# torch's legacy storage class names and the dtype of their elements.
_STORAGE_DTYPES = {
    "DoubleStorage": "float64", "FloatStorage": "float32", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
    "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
    "BoolStorage": "bool", "ComplexDoubleStorage": "complex128",
    "ComplexFloatStorage": "complex64", "QInt8Storage": "qint8", "QUInt8Storage": "quint8",
    "QInt32Storage": "qint32", "QUInt4x2Storage": "quint4x2", "QUInt2x4Storage": "quint2x4",
    "UntypedStorage": "uint8", "TypedStorage": "uint8",
}
_STORAGE_NAMES = {d: n for n, d in _STORAGE_DTYPES.items() if n not in ("UntypedStorage",
                                                                         "TypedStorage")}
# torch's dtype names that ember lacks: a checkpoint may name them; using one is an error.
_TORCH_ONLY_DTYPES = (
    "complex32", "complex64", "complex128", "cfloat", "cdouble", "chalf", "uint16", "uint32",
    "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
    "float8_e8m0fnu", "float4_e2m1fn_x2", "qint8", "quint8", "qint32", "quint4x2", "quint2x4",
    "bits8", "bits16", "bits1x8", "bits2x4", "bits4x2", "int1", "int2", "int3", "int4", "int5",
    "int6", "int7", "uint1", "uint2", "uint3", "uint4", "uint5", "uint6", "uint7",
)


class _StorageType:
    """What a ``torch.FloatStorage``-like global unpickles to: a marker with a dtype name."""

    __slots__ = ("name", "dtype_name")

    def __init__(self, name):
        self.name = name
        self.dtype_name = _STORAGE_DTYPES[name]

    def __repr__(self):
        return "StorageType(dtype=torch.%s)" % self.dtype_name


_STORAGE_TYPES = {n: _StorageType(n) for n in _STORAGE_DTYPES}


def _np_dtype(dtype_name):
    """The NumPy dtype a storage of ``dtype_name`` is read as (bfloat16: its raw uint16 bits)."""
    if dtype_name == "bfloat16":
        return np.dtype(np.uint16)
    d = _dt._BY_NAME.get(dtype_name)
    if d is None or isinstance(d, _dt._NoArrayDtype):
        _fail("storages of dtype torch.%s are not supported by ember" % dtype_name)
    return d.np


class _Storage:
    """A loaded storage: a 1-D host array and the device its tensors go to.

    ``map_location`` callables receive one (as torch's receive a CPU storage) and may return
    ``storage.cpu()``, ``storage.cuda(i)`` or ``storage.to(device)``.
    """

    __slots__ = ("array", "device", "dtype")

    def __init__(self, array, device, dtype):
        self.array = array
        self.device = _device(device)
        self.dtype = dtype

    def _moved(self, device):
        return _Storage(self.array, device, self.dtype)

    def cpu(self):
        return self._moved("cpu")

    def cuda(self, device=None, non_blocking=False):
        if isinstance(device, int):
            return self._moved(_device("cuda", device))
        return self._moved("cuda" if device is None else device)

    def to(self, device=None, non_blocking=False):
        return self._moved(device)

    def size(self):
        return self.array.size

    def nbytes(self):
        return self.array.nbytes

    def __len__(self):
        return self.array.size

    def __repr__(self):
        return "<ember storage of %d %s on %s>" % (self.array.size, self.dtype, self.device)


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _check_shape(size, stride, offset):
    if isinstance(size, Size):
        size = tuple(size)
    if isinstance(stride, Size):
        stride = tuple(stride)
    if (not isinstance(size, tuple) or not isinstance(stride, tuple) or len(size) != len(stride)
            or len(size) > _MAX_DIMS or not all(_is_int(s) and s >= 0 for s in size)
            or not all(_is_int(s) and s >= 0 for s in stride)
            or not _is_int(offset) or offset < 0):
        _fail("a tensor has an invalid size %.80r, stride %.80r or storage offset %.40r"
              % (size, stride, offset))
    return size, stride


def _as_view(storage, offset, size, stride, dtype_name=None):
    """The host array viewing ``storage`` with torch's offset/size/stride (all in elements)."""
    if not isinstance(storage, _Storage):
        _fail("a tensor is rebuilt from %s instead of a storage" % type(storage).__name__)
    size, stride = _check_shape(size, stride, offset)
    base = storage.array
    if dtype_name is not None and dtype_name != storage.dtype:
        np_dtype = _np_dtype(dtype_name)
        if base.nbytes % np_dtype.itemsize:
            _fail("a storage of %d bytes cannot hold torch.%s elements"
                  % (base.nbytes, dtype_name))
        base = base.view(np_dtype)
        if dtype_name == "bfloat16":
            base = _widen_bf16(base)
    if 0 in size:
        return np.empty(size, dtype=base.dtype)
    last = offset + sum((n - 1) * s for n, s in zip(size, stride))
    if last >= base.size:
        item = base.itemsize
        raise _TorchRuntimeError(
            "setStorage: sizes %s, strides %s, storage offset %d, and itemsize %d requiring a "
            "storage size of %d are out of bounds for storage of size %d"
            % (list(size), list(stride), offset, item, (last + 1) * item, base.nbytes))
    item = base.itemsize
    return np.lib.stride_tricks.as_strided(base[offset:], size, tuple(s * item for s in stride))


def _widen_bf16(bits):
    """Raw bfloat16 bits (uint16) as ml_dtypes' bfloat16, ember's bfloat16."""
    return bits.view(_dt.bfloat16.np)


def _to_tensor(arr, storage, requires_grad, storage_offset=0):
    if storage.device.type != "cpu":
        try:
            arr = backend_for(storage.device).asarray(arr)
        except RuntimeError as e:
            _fail("cannot put a tensor on %s: %s" % (storage.device, e))
    t = Tensor._wrap(arr)
    if storage_offset:
        t._soff = storage_offset        # torch's storage_offset() of the saved view
    if storage.device.type == "cpu":    # the whole saved storage, for untyped_storage()
        flat = storage.array
        t._storage = flat if flat.dtype == arr.dtype else flat.view(arr.dtype)
    if requires_grad:
        if _dt.kind(arr.dtype) not in "fc":
            _fail("a tensor of dtype %s is marked requires_grad" % arr.dtype)
        t._requires_grad = True
    return t


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
    return _to_tensor(_as_view(storage, storage_offset, size, stride), storage,
                      bool(requires_grad), storage_offset)


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _rebuild_tensor_v2(storage, storage_offset, size, stride)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    if not isinstance(dtype, _dt.dtype):
        _fail("_rebuild_tensor_v3 got %.80r instead of a dtype" % (dtype,))
    return _to_tensor(_as_view(storage, storage_offset, size, stride, dtype.name), storage,
                      bool(requires_grad), storage_offset)


def _set_state(obj, state):
    if isinstance(state, tuple) and len(state) == 2:
        state = state[0]
    if isinstance(state, dict):
        for k, v in state.items():
            if isinstance(k, str):
                obj.__dict__[k] = v


def _rebuild_parameter(data, requires_grad, backward_hooks):
    from .nn.parameter import Parameter
    if not isinstance(data, Tensor):
        _fail("a Parameter is rebuilt from %s instead of a tensor" % type(data).__name__)
    return Parameter(data, bool(requires_grad))


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    p = _rebuild_parameter(data, requires_grad, backward_hooks)
    _set_state(p, state)
    return p


def _rebuild_from_type_v2(func, new_type, args, state):
    from .nn.parameter import Parameter
    if func not in _REBUILDERS or not isinstance(args, tuple):
        _fail("_rebuild_from_type_v2 got an unexpected rebuild function %.80r" % (func,))
    ret = func(*args)
    if new_type is Parameter and not isinstance(ret, Parameter):
        ret = Parameter(ret, ret.requires_grad)
    elif new_type is not Tensor and new_type is not type(ret):
        _fail("tensor subclass %.80r is not supported by ember" % (new_type,))
    _set_state(ret, state)
    return ret


def _rebuild_device_tensor_from_cpu_tensor(data, dtype, device, requires_grad):
    if not isinstance(data, Tensor) or not isinstance(dtype, _dt.dtype):
        _fail("_rebuild_device_tensor_from_cpu_tensor got malformed arguments")
    t = data.to(dtype=dtype)
    if requires_grad:
        t.requires_grad_(True)
    return t


_LAYOUTS = {repr(_l): _l for _l in (_dt.strided, _dt.sparse_coo, _dt.sparse_csr,
                                               _dt.sparse_csc, _dt.sparse_bsr, _dt.sparse_bsc)}


def _get_layout(name):
    """``torch.serialization._get_layout``: the layout object named ``name``."""
    if name not in _LAYOUTS:
        _fail("_get_layout got an unknown layout %.40r" % (name,))
    return _LAYOUTS[name]


def _rebuild_sparse_tensor(layout, data):
    """``torch._utils._rebuild_sparse_tensor``: a sparse COO tensor from its indices, values,
    size (and coalesced flag), checked as torch checks a loaded sparse tensor."""
    from .ops.sparse import sparse_coo_tensor
    if layout is not _dt.sparse_coo:
        _fail("rebuilding a %s tensor is not supported by ember" % layout)
    if not isinstance(data, tuple) or len(data) not in (3, 4):
        _fail("_rebuild_sparse_tensor got malformed arguments")
    indices, values, size = data[:3]
    coalesced = data[3] if len(data) == 4 else None
    if not (isinstance(indices, Tensor) and isinstance(values, Tensor)):
        _fail("_rebuild_sparse_tensor got malformed arguments")
    return sparse_coo_tensor(indices, values, size, is_coalesced=coalesced)


class _LayoutRef:
    """A layout in a pickle, written as torch writes it: ``_get_layout("torch.sparse_coo")``."""

    def __init__(self, name):
        self.name = name


class _Unsupported:
    """A torch global ember knows but cannot build (sparse, quantized, nested tensors ...)."""

    def __init__(self, name):
        self.name = name

    def __call__(self, *args, **kwargs):
        _fail("%s is not supported by ember" % self.name)

    def __repr__(self):
        return "<unsupported %s>" % self.name


def _encode_bytes(obj, encoding="utf-8", errors="strict"):
    # _codecs.encode, as protocol 2 pickles bytes; only text codecs (no compression codecs).
    if not isinstance(obj, str) or encoding not in ("latin1", "latin-1", "utf-8", "utf8",
                                                      "ascii", "iso-8859-1"):
        _fail("_codecs.encode is only allowed to turn text into bytes")
    return obj.encode(encoding, errors)


def _bytearray(*args):
    if args and not isinstance(args[0], (str, bytes, bytearray, list)):
        _fail("bytearray is only allowed from text or bytes")
    return bytearray(*args)


_REBUILDERS = (_rebuild_tensor_v2, _rebuild_tensor, _rebuild_tensor_v3, _rebuild_parameter,
               _rebuild_parameter_with_state, _rebuild_device_tensor_from_cpu_tensor)


def _torch_globals():
    """torch's weights-only allow-list, mapped to ember's objects."""
    from .nn.parameter import Parameter
    g = {
        "collections.OrderedDict": collections.OrderedDict,
        "collections.Counter": collections.Counter,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.Size": Size,
        "torch.Tensor": Tensor,
        "torch.device": _device,
        "_codecs.encode": _encode_bytes,
        "builtins.bytearray": _bytearray,
        "builtins.set": set,
        "builtins.complex": complex,
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_tensor": _rebuild_tensor,
        "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._utils._rebuild_device_tensor_from_cpu_tensor":
            _rebuild_device_tensor_from_cpu_tensor,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
    }
    for name in ("_rebuild_qtensor", "_rebuild_nested_tensor",
                 "_rebuild_meta_tensor_no_storage", "_rebuild_wrapper_subclass",
                 "_rebuild_device_tensor_from_numpy"):
        g["torch._utils." + name] = _Unsupported("torch._utils." + name)
    g["torch._utils._rebuild_sparse_tensor"] = _rebuild_sparse_tensor
    g["torch.serialization._get_layout"] = _get_layout
    for d in _dt._ALL:
        g["torch." + d.name] = d
    g["torch.bfloat16"] = _dt.bfloat16
    for name in _TORCH_ONLY_DTYPES:
        g["torch." + name] = _Unsupported("dtype torch." + name)
    for name, st in _STORAGE_TYPES.items():
        g["torch." + name] = st
    g["torch.storage.UntypedStorage"] = _STORAGE_TYPES["UntypedStorage"]
    g["torch.storage.TypedStorage"] = _STORAGE_TYPES["TypedStorage"]
    return g


_GLOBALS = []       # [dict], built on first load (it imports ember.nn)


def _allowed_globals():
    if not _GLOBALS:
        _GLOBALS.append(_torch_globals())
    return _GLOBALS[0]


_BLOCKED_MODULES = ("sys", "os", "posix", "nt")
_marked_safe_globals = set()


def add_safe_globals(safe_globals):
    """Mark globals (classes or functions, or ``(obj, "module.name")`` pairs) safe to load with
    ``weights_only=True``, as ``torch.serialization.add_safe_globals``.

    Example:
        >>> import argparse, ember
        >>> ember.serialization.add_safe_globals([argparse.Namespace])
        >>> argparse.Namespace in ember.serialization.get_safe_globals()
        True
        >>> ember.serialization.clear_safe_globals()
    """
    global _marked_safe_globals
    _marked_safe_globals = _marked_safe_globals.union(set(safe_globals))


def get_safe_globals():
    """The globals marked safe by ``add_safe_globals``."""
    return list(_marked_safe_globals)


def clear_safe_globals():
    """Forget every global marked safe by ``add_safe_globals``."""
    global _marked_safe_globals
    _marked_safe_globals = set()


def _remove_safe_globals(globals_to_remove):
    global _marked_safe_globals
    _marked_safe_globals = _marked_safe_globals - set(globals_to_remove)


class safe_globals:
    """Context manager marking globals safe for ``weights_only=True`` loads inside it.

    Example:
        >>> import argparse, ember
        >>> with ember.serialization.safe_globals([argparse.Namespace]):
        ...     argparse.Namespace in ember.serialization.get_safe_globals()
        True
    """

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, type, value, tb):
        _remove_safe_globals(self.safe_globals)


def _user_globals():
    rc = {}
    for f in _marked_safe_globals:
        if isinstance(f, tuple):
            if len(f) != 2:
                raise ValueError("Expected tuple of length 2 (global, str of callable full "
                                 "path), but got tuple of length: %d" % len(f))
            if type(f[1]) is not str:
                raise TypeError("Expected second item in tuple to be str of callable full "
                                "path, but got: %s" % type(f[1]))
            rc[f[1]] = f[0]
        else:
            rc["%s.%s" % (f.__module__, f.__qualname__)] = f
    return rc


def _unsupported_global_message(full_path):
    if full_path.startswith("builtins."):
        full_path = full_path[len("builtins."):]
    return ("Unsupported global: GLOBAL %s was not an allowed global by default. Please use "
            "`torch.serialization.add_safe_globals([%s])` or the "
            "`torch.serialization.safe_globals([%s])` context manager to allowlist this global "
            "if you trust this class/function." % (full_path, full_path, full_path))


def _wo_message(message):
    """torch's text for a failed weights-only load."""
    if "was not an allowed global by default." in message:
        return ("Weights only load failed. This file can still be loaded, to do so you have two "
                "options, \033[1mdo those steps only if you trust the source of the "
                "checkpoint\033[0m. \n\t(1) " + UNSAFE_MESSAGE + "\n\t(2) Alternatively, to "
                "load with `weights_only=True` please check the recommended steps in the "
                "following error message.\n\tWeightsUnpickler error: " + message
                + _DOCS_MESSAGE)
    out = "Weights only load failed. " + UNSAFE_MESSAGE + "\n"
    if "is blocked" not in message:
        out += ("Please file an issue with the following so that we can make "
                "`weights_only=True` compatible with your use case: WeightsUnpickler error: ")
    return out + "\n\n" + message + _DOCS_MESSAGE


# pickle opcodes, as ints
_ADDITEMS = pickle.ADDITEMS[0]
_APPEND = pickle.APPEND[0]
_APPENDS = pickle.APPENDS[0]
_BINBYTES = pickle.BINBYTES[0]
_BINBYTES8 = pickle.BINBYTES8[0]
_BINFLOAT = pickle.BINFLOAT[0]
_BINGET = pickle.BINGET[0]
_BININT = pickle.BININT[0]
_BININT1 = pickle.BININT1[0]
_BININT2 = pickle.BININT2[0]
_BINPERSID = pickle.BINPERSID[0]
_BINPUT = pickle.BINPUT[0]
_BINSTRING = pickle.BINSTRING[0]
_BINUNICODE = pickle.BINUNICODE[0]
_BINUNICODE8 = pickle.BINUNICODE8[0]
_BUILD = pickle.BUILD[0]
_EMPTY_DICT = pickle.EMPTY_DICT[0]
_EMPTY_LIST = pickle.EMPTY_LIST[0]
_EMPTY_SET = pickle.EMPTY_SET[0]
_EMPTY_TUPLE = pickle.EMPTY_TUPLE[0]
_FRAME = pickle.FRAME[0]
_FROZENSET = pickle.FROZENSET[0]
_GLOBAL = pickle.GLOBAL[0]
_LONG1 = pickle.LONG1[0]
_LONG_BINGET = pickle.LONG_BINGET[0]
_LONG_BINPUT = pickle.LONG_BINPUT[0]
_MARK = pickle.MARK[0]
_MEMOIZE = pickle.MEMOIZE[0]
_NEWFALSE = pickle.NEWFALSE[0]
_NEWOBJ = pickle.NEWOBJ[0]
_NEWTRUE = pickle.NEWTRUE[0]
_NONE = pickle.NONE[0]
_PROTO = pickle.PROTO[0]
_REDUCE = pickle.REDUCE[0]
_SETITEM = pickle.SETITEM[0]
_SETITEMS = pickle.SETITEMS[0]
_SHORT_BINBYTES = pickle.SHORT_BINBYTES[0]
_SHORT_BINSTRING = pickle.SHORT_BINSTRING[0]
_SHORT_BINUNICODE = pickle.SHORT_BINUNICODE[0]
_STACK_GLOBAL = pickle.STACK_GLOBAL[0]
_STOP = pickle.STOP[0]
_TUPLE = pickle.TUPLE[0]
_TUPLE1 = pickle.TUPLE1[0]
_TUPLE2 = pickle.TUPLE2[0]
_TUPLE3 = pickle.TUPLE3[0]


# Opcodes ember's interpreter reads but torch's weights-only unpickler refuses (protocol 3+
# strings/bytes, protocol 4 frames/memo/sets): refused too, with torch's error.
_NOT_IN_TORCH = frozenset((_STACK_GLOBAL, _ADDITEMS, _FROZENSET, _SHORT_BINUNICODE, _BINUNICODE8,
                           _BINSTRING, _SHORT_BINBYTES, _BINBYTES, _BINBYTES8, _MEMOIZE, _FRAME))


class _WeightsUnpickler:
    """An opcode interpreter for the pickles torch writes, which can only build allow-listed
    objects (torch's ``_weights_only_unpickler``, on ember's objects). Nothing is imported; a
    global name is looked up in a table; only table entries can be called."""

    def __init__(self, file, persistent_load, encoding="bytes"):
        self.read_raw = file.read
        self.readline_raw = file.readline
        self.persistent_load = persistent_load
        self.encoding = encoding
        self.memo = {}
        self.allowed = _allowed_globals()
        self.user = _user_globals()
        self.callable_ids = {id(v) for v in self.allowed.values()}
        self.callable_ids.update(id(v) for v in self.user.values())
        self.callable_ids.difference_update((id(Tensor),) + tuple(
            id(v) for v in _STORAGE_TYPES.values()) + tuple(id(d) for d in _dt._ALL))

    def read(self, n):
        data = self.read_raw(n)
        if len(data) != n:
            raise UnpicklingError("pickle data was truncated")
        return data

    def readline(self):
        line = self.readline_raw()
        if not line.endswith(b"\n"):
            raise UnpicklingError("pickle data was truncated")
        return line[:-1].decode("utf-8")

    def find_global(self, module, name):
        full_path = "%s.%s" % (module, name)
        if module in _BLOCKED_MODULES:
            raise UnpicklingError("Trying to load unsupported GLOBAL %s whose module %s is "
                                  "blocked." % (full_path, module))
        if full_path in self.allowed:
            return self.allowed[full_path]
        if full_path in self.user:
            return self.user[full_path]
        if module.startswith("torch.") or module == "torch":
            ember_path = "ember" + full_path[len("torch"):]
            if ember_path in self.user:
                return self.user[ember_path]
        raise UnpicklingError(_unsupported_global_message(full_path))

    def load(self):
        try:
            return self._load()
        except (UnpicklingError, CheckpointError):
            raise
        except (IndexError, KeyError, TypeError, ValueError, AttributeError, struct.error,
                OverflowError, UnicodeError, EOFError, RecursionError) as e:
            if getattr(e, "_ember_raw", False):
                raise
            raise UnpicklingError("malformed pickle data (%s: %s)" % (type(e).__name__, e)) \
                from None

    def _call_check(self, func):
        if id(func) not in self.callable_ids:
            msg = "Trying to call reduce for unrecognized function %s" % (func,)
            if hasattr(func, "__self__"):
                msg += " which belongs to %s" % (func.__self__,)
            raise UnpicklingError(msg)

    def _check_set_item_target(self, stack, opcode):
        if type(stack[-1]) not in (dict, collections.OrderedDict, collections.Counter):
            raise UnpicklingError("Can only %s for dict, collections.OrderedDict, "
                                  "collections.Counter, but got %s" % (opcode, type(stack[-1])))

    def _load(self):  # noqa: C901 (one branch per opcode, as pickle's own loader)
        from .nn.parameter import Parameter
        metastack = []
        stack = []
        read, memo = self.read, self.memo
        while True:
            key = read(1)[0]
            if key in _NOT_IN_TORCH:
                raise UnpicklingError("Unsupported operand %d" % key)
            if key == _GLOBAL:
                module = self.readline()
                name = self.readline()
                # protocol 2 writes Python 2's names (__builtin__.set): map them as torch does
                if (module, name) in _compat_pickle.NAME_MAPPING:
                    module, name = _compat_pickle.NAME_MAPPING[(module, name)]
                elif module in _compat_pickle.IMPORT_MAPPING:
                    module = _compat_pickle.IMPORT_MAPPING[module]
                stack.append(self.find_global(module, name))
            elif key == _STACK_GLOBAL:
                name, module = stack.pop(), stack.pop()
                if type(name) is not str or type(module) is not str:
                    raise UnpicklingError("STACK_GLOBAL requires str")
                stack.append(self.find_global(module, name))
            elif key == _NEWOBJ:
                args = stack.pop()
                cls = stack.pop()
                if cls is Parameter:
                    stack.append(Parameter(*args))
                elif isinstance(cls, type) and id(cls) in self.callable_ids:
                    stack.append(cls.__new__(cls, *args))
                else:
                    raise UnpicklingError("Can only create new object for nn.Parameter or "
                                          "classes allowlisted via `add_safe_globals` but got "
                                          "%s" % (cls,))
            elif key == _REDUCE:
                args = stack.pop()
                func = stack[-1]
                self._call_check(func)
                if not isinstance(args, tuple):
                    raise UnpicklingError("REDUCE arguments must be a tuple")
                stack[-1] = func(*args)
            elif key == _BUILD:
                state = stack.pop()
                inst = stack[-1]
                t = type(inst)
                if t is Tensor or t is Parameter or t is collections.OrderedDict:
                    _set_state(inst, state)
                elif id(t) in self.callable_ids and t not in (set, complex, bytearray):
                    if hasattr(inst, "__setstate__"):
                        inst.__setstate__(state)
                    else:
                        slotstate = None
                        if isinstance(state, tuple) and len(state) == 2:
                            state, slotstate = state
                        if state:
                            inst.__dict__.update(state)
                        if slotstate:
                            for k, v in slotstate.items():
                                setattr(inst, k, v)
                else:
                    raise UnpicklingError("Can only build Tensor, Parameter, OrderedDict or "
                                          "types allowlisted via `add_safe_globals`, but got %s"
                                          % (t,))
            elif key == _APPEND:
                item = stack.pop()
                if type(stack[-1]) is not list:
                    raise UnpicklingError("Can only append to lists, but got %s"
                                          % type(stack[-1]))
                stack[-1].append(item)
            elif key == _APPENDS:
                items, stack = stack, metastack.pop()
                if type(stack[-1]) is not list:
                    raise UnpicklingError("Can only extend lists, but got %s" % type(stack[-1]))
                stack[-1].extend(items)
            elif key == _SETITEM:
                v, k = stack.pop(), stack.pop()
                self._check_set_item_target(stack, "SETITEM")
                stack[-1][k] = v
            elif key == _SETITEMS:
                items, stack = stack, metastack.pop()
                self._check_set_item_target(stack, "SETITEMS")
                if len(items) % 2:
                    raise UnpicklingError("SETITEMS needs key/value pairs")
                for i in range(0, len(items), 2):
                    stack[-1][items[i]] = items[i + 1]
            elif key == _ADDITEMS:
                items, stack = stack, metastack.pop()
                if type(stack[-1]) is not set:
                    raise UnpicklingError("Can only add items to sets")
                stack[-1].update(items)
            elif key == _MARK:
                metastack.append(stack)
                stack = []
            elif key == _TUPLE:
                items, stack = stack, metastack.pop()
                stack.append(tuple(items))
            elif key == _FROZENSET:
                items, stack = stack, metastack.pop()
                stack.append(frozenset(items))
            elif key == _TUPLE1:
                stack[-1] = (stack[-1],)
            elif key == _TUPLE2:
                if len(stack) < 2:
                    raise UnpicklingError("stack underflow")
                stack[-2:] = [(stack[-2], stack[-1])]
            elif key == _TUPLE3:
                if len(stack) < 3:
                    raise UnpicklingError("stack underflow")
                stack[-3:] = [(stack[-3], stack[-2], stack[-1])]
            elif key == _NONE:
                stack.append(None)
            elif key == _NEWFALSE:
                stack.append(False)
            elif key == _NEWTRUE:
                stack.append(True)
            elif key == _EMPTY_TUPLE:
                stack.append(())
            elif key == _EMPTY_LIST:
                stack.append([])
            elif key == _EMPTY_DICT:
                stack.append({})
            elif key == _EMPTY_SET:
                stack.append(set())
            elif key == _BININT:
                stack.append(struct.unpack("<i", read(4))[0])
            elif key == _BININT1:
                stack.append(read(1)[0])
            elif key == _BININT2:
                stack.append(struct.unpack("<H", read(2))[0])
            elif key == _BINFLOAT:
                stack.append(struct.unpack(">d", read(8))[0])
            elif key in (_BINUNICODE, _SHORT_BINUNICODE, _BINUNICODE8):
                n = self._length(key)
                stack.append(str(read(n), "utf-8", "surrogatepass"))
            elif key in (_SHORT_BINSTRING, _BINSTRING):
                n = read(1)[0] if key == _SHORT_BINSTRING else \
                    struct.unpack("<i", read(4))[0]
                if n < 0:
                    raise UnpicklingError("BINSTRING pickle has negative byte count")
                data = read(n)
                stack.append(data if self.encoding == "bytes" else data.decode(self.encoding))
            elif key in (_SHORT_BINBYTES, _BINBYTES, _BINBYTES8):
                n = {_SHORT_BINBYTES: 1, _BINBYTES: 4}.get(key, 8)
                n = int.from_bytes(read(n), "little")
                stack.append(read(n))
            elif key == _BINPERSID:
                pid = stack.pop()
                if type(pid) is not tuple and type(pid) is not int:
                    raise UnpicklingError("persistent_load id must be tuple or int, but got %s"
                                          % type(pid))
                if type(pid) is tuple and len(pid) > 0 and _ascii(pid[0]) != "storage":
                    raise UnpicklingError("Only persistent_load of storage is allowed, but got "
                                          "%s" % type(pid[0]))
                stack.append(self.persistent_load(pid))
            elif key in (_BINGET, _LONG_BINGET):
                i = read(1)[0] if key == _BINGET else struct.unpack("<I", read(4))[0]
                if i not in memo:
                    raise UnpicklingError("Memo value not found at index %d" % i)
                stack.append(memo[i])
            elif key in (_BINPUT, _LONG_BINPUT):
                i = read(1)[0] if key == _BINPUT else struct.unpack("<I", read(4))[0]
                memo[i] = stack[-1]
            elif key == _MEMOIZE:
                memo[len(memo)] = stack[-1]
            elif key == _LONG1:
                stack.append(pickle.decode_long(read(read(1)[0])))
            elif key == _FRAME:
                read(8)
            elif key == _PROTO:
                proto = read(1)[0]
                if proto != 2:
                    warnings.warn(
                        "Detected pickle protocol %d in the checkpoint, which was not the default "
                        "pickle protocol used by `torch.load` (2). The weights_only Unpickler "
                        "might not support all instructions implemented by this protocol, please "
                        "file an issue for adding support if you encounter this." % proto,
                        stacklevel=4)
            elif key == _STOP:
                return stack.pop()
            else:
                raise UnpicklingError("Unsupported operand %d" % key)

    def _length(self, key):
        if key == _SHORT_BINUNICODE:
            return self.read(1)[0]
        if key == _BINUNICODE:
            return struct.unpack("<I", self.read(4))[0]
        n = struct.unpack("<Q", self.read(8))[0]
        if n > sys.maxsize:
            raise UnpicklingError("String is too long")
        return n


def _ascii(x):
    return x.decode("ascii") if isinstance(x, bytes) else x


class _FullUnpickler(pickle.Unpickler):
    """Plain unpickling (runs code from the file), with torch's names mapped to ember's."""

    def __init__(self, file, persistent_load=None, **kwargs):
        super().__init__(file, **kwargs)
        if persistent_load is not None:
            self.persistent_load = persistent_load

    def find_class(self, module, name):
        full_path = "%s.%s" % (module, name)
        allowed = _allowed_globals()
        if full_path in allowed:
            return allowed[full_path]
        if module == "torch" and name.endswith("Storage") and name in _STORAGE_TYPES:
            return _STORAGE_TYPES[name]
        if module == "torch" or module.startswith("torch."):
            return _ember_global(module, name)
        return super().find_class(module, name)


def _ember_global(module, name):
    """ember's object for torch's ``module.name`` (``torch.nn.modules.linear.Linear`` ->
    ``ember.nn.modules.linear.Linear``)."""
    import importlib
    module = {"torch.tensor": "torch._tensor", "torch._tensor": "torch.tensor"}.get(module,
                                                                                     module)
    candidates = ["ember" + module[len("torch"):]]
    if module.startswith("torch.nn.modules"):
        candidates.append("ember.nn")
    candidates.append("ember")
    for mod_name in candidates:
        try:
            obj = importlib.import_module(mod_name)
            for part in name.split("."):
                obj = getattr(obj, part)
            return obj
        except (ImportError, AttributeError):
            continue
    raise UnpicklingError("ember.load: the checkpoint needs %s.%s, which ember does not have"
                          % (module, name))


class _Loader:
    """Turns persistent storage ids into ``_Storage`` objects for one load."""

    def __init__(self, read_record, byteorder, map_location, legacy=False):
        self.read_record = read_record      # (key, np_dtype, numel) -> 1-D host array
        self.byteorder = byteorder
        self.map_location = map_location
        self.legacy = legacy
        self.storages = {}
        self.pending = []                   # legacy format: storages filled after the pickle

    def restore(self, storage, location):
        ml = self.map_location
        if ml is None:
            target = location
        elif isinstance(ml, dict):
            target = ml.get(location, location)
        elif isinstance(ml, (str, bytes, _device)):
            target = _ascii(ml) if isinstance(ml, bytes) else str(ml)
        elif callable(ml):
            result = ml(storage, location)
            if result is None:
                target = location
            elif isinstance(result, _Storage):
                return result
            else:
                _fail("map_location returned %s, not a storage or None" % type(result).__name__)
        else:       # (torch calls it: the error is Python's, not the unpickler's)
            e = TypeError("'%s' object is not callable" % type(ml).__name__)
            e._ember_raw = True
            raise e
        return storage._moved(_restore_device(target))

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or len(pid) != (6 if self.legacy else 5) \
                or _ascii(pid[0]) != "storage":
            _fail("unexpected persistent id %.100r (only storages are allowed)" % (pid,))
        storage_type, key, location, numel = pid[1:5]
        key, location = _ascii(key), _ascii(location)
        if not isinstance(storage_type, _StorageType):
            _fail("persistent id names %.80r instead of a storage type" % (storage_type,))
        if not isinstance(key, str) or not isinstance(location, str) or not _is_int(numel) \
                or numel < 0:
            _fail("malformed persistent id %.100r" % (pid,))
        storage = self.storages.get(key)
        if storage is None:
            dtype_name = storage_type.dtype_name
            np_dtype = _np_dtype(dtype_name)
            arr = self.read_record(key, np_dtype, numel)
            if dtype_name == "bfloat16":
                arr = _widen_bf16(arr)   # a view: the legacy reader fills ``arr`` later
            storage = self.restore(_Storage(arr, "cpu", dtype_name), location)
            self.storages[key] = storage
        if self.legacy and pid[5] is not None:
            view = pid[5]
            if (not isinstance(view, tuple) or len(view) != 3 or not _is_int(view[1])
                    or not _is_int(view[2]) or view[1] < 0 or view[2] < 0
                    or view[1] + view[2] > storage.array.size):
                _fail("malformed storage view %.100r" % (view,))
            storage = _Storage(storage.array[view[1]:view[1] + view[2]], storage.device,
                               storage.dtype)
        return storage


def _restore_device(location):
    try:
        dev = _device(location)
    except (RuntimeError, ValueError, TypeError):
        raise _TorchRuntimeError("don't know how to restore data location of torch.storage."
                                 "UntypedStorage (tagged with %s)" % location) from None
    if dev.type == "cuda":
        try:
            backend_for(dev)
        except RuntimeError:
            raise _TorchRuntimeError(
                "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() "
                "is False. If you are running on a CPU-only machine, please use torch.load with "
                "map_location=torch.device('cpu') to map your storages to the CPU.") from None
    return dev


def _file_size(fh):
    try:
        here = fh.tell()
        end = fh.seek(0, io.SEEK_END)
        fh.seek(here)
        return here, end
    except (AttributeError, OSError, io.UnsupportedOperation, ValueError):
        return None, None


def _byteorder_dtype(np_dtype, byteorder):
    return np_dtype.newbyteorder("<" if byteorder == "little" else ">")


def _open_zip(fh, start, end):
    try:
        zf = zipfile.ZipFile(fh)
        infos = zf.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError,
            struct.error, OverflowError, UnicodeDecodeError, KeyError, IndexError) as e:
        _fail("the file starts like a zip archive (torch.save's format) but is not a valid one "
              "(%s: %s); it may be truncated" % (type(e).__name__, e))
    pkls = [i.filename for i in infos if i.filename.endswith("/data.pkl")
            and i.filename.count("/") == 1]
    if not pkls:
        if any(i.filename.endswith("constants.pkl") for i in infos):
            _fail("this is a TorchScript archive (torch.jit.save); ember cannot load those")
        _fail("the zip archive has no data.pkl record, so it was not written by torch.save")
    return zf, pkls[0][:-len("data.pkl")]


class _ZipRecords:
    """Reads records of a torch zip checkpoint, checking every size before allocating."""

    def __init__(self, zf, prefix, archive_size, path=None, mmap=False):
        self.zf, self.prefix, self.size = zf, prefix, archive_size
        self.path, self.mmap = path, mmap

    def info(self, name):
        try:
            info = self.zf.getinfo(self.prefix + name)
        except KeyError:
            _fail("the checkpoint has no record '%s%s' (the file is truncated, or was not "
                  "written by torch.save)" % (self.prefix, name))
        if info.flag_bits & 0x1:
            _fail("record %s is encrypted" % info.filename)
        if info.header_offset + info.compress_size > self.size:
            _fail("record %s declares %d bytes, past the end of the %d-byte file"
                  % (info.filename, info.compress_size, self.size))
        if info.compress_type == zipfile.ZIP_STORED:
            if info.file_size != info.compress_size:
                _fail("record %s: stored size %d differs from its size %d"
                      % (info.filename, info.compress_size, info.file_size))
        elif info.file_size > _MAX_DEFLATE_RATIO * max(info.compress_size, 1):
            _fail("record %s declares %d bytes from %d compressed bytes"
                  % (info.filename, info.file_size, info.compress_size))
        return info

    def has(self, name):
        return (self.prefix + name) in self.zf.NameToInfo

    def read(self, name):
        info = self.info(name)
        return self._guard(info, lambda: self.zf.read(info))

    def _guard(self, info, fn):
        try:
            return fn()
        except CheckpointError:
            raise
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, struct.error, KeyError,
                NotImplementedError, RuntimeError, OverflowError, UnicodeDecodeError,
                Exception) as e:
            _fail("cannot read record %s (%s: %s); the file may be truncated or corrupt"
                  % (info.filename, type(e).__name__, e))

    def array(self, key, np_dtype, numel, byteorder):
        info = self.info("data/" + key)
        nbytes = numel * np_dtype.itemsize
        if info.file_size != nbytes:
            _fail("record %s holds %d bytes but its storage needs %d (%d elements of %s)"
                  % (info.filename, info.file_size, nbytes, numel, np_dtype))
        dtype = _byteorder_dtype(np_dtype, byteorder)
        if nbytes == 0:
            arr = np.empty(0, dtype=np_dtype)
        elif self.mmap and info.compress_type == zipfile.ZIP_STORED:
            arr = self._guard(info, lambda: self._memmap(info, dtype, numel))
        else:
            arr = np.empty(numel, dtype=dtype)
            got = self._guard(info, lambda: _readinto(self.zf, info, arr))
            if got != nbytes:
                _fail("record %s ended after %d of its %d bytes" % (info.filename, got, nbytes))
        if not arr.dtype.isnative:      # (a native '<' view stays a view of the mapped file)
            arr = arr.astype(arr.dtype.newbyteorder("="))
        return arr.view(arr.dtype.newbyteorder("=")) if arr.dtype.byteorder == "<" \
            or arr.dtype.byteorder == ">" else arr

    def _memmap(self, info, dtype, numel):
        with open(self.path, "rb") as fh:
            fh.seek(info.header_offset)
            head = fh.read(30)
        if len(head) != 30 or head[:4] != _ZIP_MAGIC:
            _fail("record %s has a bad local header" % info.filename)
        n, m = struct.unpack("<HH", head[26:30])
        offset = info.header_offset + 30 + n + m
        if offset + numel * dtype.itemsize > self.size:
            _fail("record %s runs past the end of the file" % info.filename)
        mode = "r+" if _LOAD_OPTIONS["mmap_flags"] == _mmap.MAP_SHARED else "c"
        return np.memmap(self.path, dtype=dtype, mode=mode, offset=offset, shape=(numel,))


def _readinto(zf, info, arr):
    view = memoryview(arr.reshape(-1)).cast("B")
    got = 0
    with zf.open(info) as r:
        r._expected_crc = None      # torch reads without CRC-32 checks (MAP_SHARED edits data)
        while got < len(view):
            n = r.readinto(view[got:])
            if not n:
                break
            got += n
    return got


def _load_zip(fh, start, end, map_location, weights_only, path, mmap, pickle_module,
              pickle_load_args):
    fh.seek(start)
    zf, prefix = _open_zip(fh, start, end)
    records = _ZipRecords(zf, prefix, end, path, mmap)
    fallback = _LOAD_OPTIONS["endianness"]
    byteorder = {LoadEndianness.BIG: "big", LoadEndianness.LITTLE: "little"}.get(
        fallback, sys.byteorder)
    if records.has("byteorder"):
        byteorder = _ascii(records.read("byteorder"))
        if byteorder not in ("little", "big"):
            raise CheckpointError("Unknown endianness type: " + str(byteorder))
    loader = _Loader(lambda key, dt, n: records.array(key, dt, n, byteorder), byteorder,
                     map_location)
    data = io.BytesIO(records.read("data.pkl"))
    return _unpickle(data, loader, weights_only, pickle_module, pickle_load_args)


def _unpickle(data, loader, weights_only, pickle_module, pickle_load_args):
    if weights_only:
        try:
            return _WeightsUnpickler(data, loader.persistent_load).load()
        except UnpicklingError as e:
            raise UnpicklingError(_wo_message(str(e))) from None
    unpickler_cls = _FullUnpickler
    if pickle_module is not None and pickle_module is not pickle:
        class unpickler_cls(pickle_module.Unpickler):    # noqa: N801
            def find_class(self, module, name):
                return _FullUnpickler.find_class(self, module, name)
    up = unpickler_cls(data, **pickle_load_args)
    up.persistent_load = loader.persistent_load
    return up.load()


def _load_legacy(fh, start, end, map_location, weights_only, pickle_module, pickle_load_args):
    """The format of ``torch.save(..., _use_new_zipfile_serialization=False)``."""
    fh.seek(start)
    storages = []

    def read_record(key, np_dtype, numel):
        left = end - fh.tell()
        if numel * np_dtype.itemsize > left:
            _fail("storage %s declares %d elements, more than the %d bytes left in the file"
                  % (key, numel, left))
        arr = np.empty(numel, dtype=np_dtype)
        storages.append((key, arr))
        return arr

    loader = _Loader(read_record, "little", map_location, legacy=True)

    def unpickle():
        if weights_only:
            try:
                return _WeightsUnpickler(fh, loader.persistent_load).load()
            except UnpicklingError as e:
                raise UnpicklingError(_wo_message(str(e))) from None
        up = _FullUnpickler(fh, loader.persistent_load, **pickle_load_args)
        return up.load()

    if unpickle() != _MAGIC_NUMBER:
        raise _TorchRuntimeError("Invalid magic number; corrupt file?")
    version = unpickle()
    if version != _PROTOCOL_VERSION:
        raise _TorchRuntimeError("Invalid protocol version: %.40r" % (version,))
    sys_info = unpickle()
    if not isinstance(sys_info, dict) or not sys_info.get("little_endian", True):
        _fail("big-endian legacy checkpoints are not supported")
    result = unpickle()
    keys = unpickle()
    by_key = {}
    for key, arr in storages:
        by_key.setdefault(key, arr)
    if not isinstance(keys, list):
        _fail("the legacy checkpoint's storage key list is malformed")
    for key in keys:
        arr = by_key.get(_ascii(key))
        if arr is None:
            _fail("storage key %.40r not found in the checkpoint" % (key,))
        head = fh.read(8)
        if len(head) != 8 or struct.unpack("<q", head)[0] != arr.size:
            _fail("storage %s: its size record does not match (file truncated?)" % key)
        view = memoryview(arr).cast("B") if arr.size else b""
        got = fh.readinto(view) if arr.size else 0
        if got != arr.nbytes:
            _fail("storage %s ended after %d of its %d bytes" % (key, got, arr.nbytes))
    return result


class _Ref:
    """A storage's persistent id (a tuple) while pickling."""

    __slots__ = ("pid",)

    def __init__(self, pid):
        self.pid = pid


class _Global:
    """A ``module name`` pair written as a pickle GLOBAL (torch's names, without torch)."""

    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):      # pickle's save_reduce wants a callable
        raise TypeError("%s.%s is a name for torch, not callable in ember"
                        % (self.module, self.name))


def _contiguous_strides(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


class _Storages:
    """Assigns torch storage records to tensors, sharing one record among views of one array."""

    def __init__(self):
        self.records = []           # [(key, flat host array)]
        self.keys = {}              # (id(root), dtype) -> key
        self.keep = []              # roots whose ids are keys
        self.dtypes = {}            # id(root) -> the dtype its storage is saved as

    def _new(self, flat):
        key = str(len(self.records))
        self.records.append((key, flat))
        return key

    def add(self, t):
        """(key, dtype, location, numel, offset, size, stride) of tensor ``t``'s storage."""
        arr = t._array
        shape = tuple(arr.shape)
        if type(arr) is not np.ndarray:
            dev = t.device
            location = "cuda:%d" % (dev.index or 0) if dev.type == "cuda" else str(dev)
            arr = np.ascontiguousarray(to_host(arr))
            shared = None
        else:
            location = "cpu"
            shared = self._shared(arr)
        if shared is None:
            flat = np.ascontiguousarray(arr).reshape(-1)
            key = self._new(flat)
            return key, flat.size, location, 0, shape, _contiguous_strides(shape)
        key, flat, offset, stride = shared
        return key, flat.size, location, offset, shape, stride

    def _shared(self, arr):
        if arr.size == 0:
            return None
        root = arr
        while isinstance(root.base, np.ndarray):
            root = root.base
        if root.flags.c_contiguous:
            flat = root.reshape(-1)
        elif root.flags.f_contiguous:
            flat = root.T.reshape(-1)
        else:
            return None
        item = arr.itemsize
        if flat.dtype != arr.dtype:
            if flat.nbytes % item:
                return None
            flat = flat.view(arr.dtype)
        begin = flat.__array_interface__["data"][0]
        delta = arr.__array_interface__["data"][0] - begin
        stride = []
        for n, s in zip(arr.shape, arr.strides):
            if n == 1:
                s = 0
            if s < 0 or s % item:
                return None
            stride.append(s // item)
        if delta < 0 or delta % item:
            return None
        offset = delta // item
        if offset + sum((n - 1) * s for n, s in zip(arr.shape, stride)) >= flat.size:
            return None
        if arr.ndim and 1 in arr.shape:
            # torch's stride for a size-1 dim is the contiguous one; any value is valid.
            contiguous = _contiguous_strides(arr.shape)
            stride = [c if n == 1 else s for n, s, c in zip(arr.shape, stride, contiguous)]
        if self.dtypes.setdefault(id(root), flat.dtype) != flat.dtype:
            raise _TorchRuntimeError("Cannot save multiple tensors or storages that view the "
                                     "same data as different types")
        rkey = (id(root), flat.dtype.str)
        key = self.keys.get(rkey)
        if key is None:
            key = self._new(flat)
            self.keys[rkey] = key
            self.keep.append(root)
        return key, flat, offset, tuple(stride)


class _TorchPickler(pickle._Pickler):
    """Pickles like ``torch.save``: tensors as ``_rebuild_tensor_v2`` calls on persistent
    storage ids, dtypes as ``torch.float32`` globals, ember's classes under torch's names."""

    def __init__(self, file, protocol, storages, legacy=False):
        super().__init__(file, protocol)
        self.storages = storages
        self.legacy = legacy
        self.globals = {}

    def g(self, module, name):
        key = (module, name)
        if key not in self.globals:
            self.globals[key] = _Global(module, name)
        return self.globals[key]

    def persistent_id(self, obj):
        return obj.pid if type(obj) is _Ref else None

    def reducer_override(self, obj):
        if type(obj) is _Global or isinstance(obj, _dt.dtype):
            return obj.name
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if isinstance(obj, _device):
            args = (obj.type,) if obj.index is None else (obj.type, obj.index)
            return self.g("torch", "device"), args
        if isinstance(obj, Size):
            return self.g("torch", "Size"), (tuple(obj),)
        if type(obj) is _LayoutRef:
            return self.g("torch.serialization", "_get_layout"), (obj.name,)
        return NotImplemented

    def _reduce_tensor(self, t):
        from .nn.parameter import Parameter
        if isinstance(t, Parameter):
            data = Tensor._wrap(t._array)
            return (self.g("torch._utils", "_rebuild_parameter"),
                    (data, t.requires_grad, collections.OrderedDict()))
        if t.layout is _dt.sparse_coo:
            data = (t._indices(), t._values().detach(), t.size(), t.is_coalesced())
            return (self.g("torch._utils", "_rebuild_sparse_tensor"),
                    (_LayoutRef("torch.sparse_coo"), data))
        key, numel, location, offset, size, stride = self.storages.add(t)
        name = _STORAGE_NAMES[t.dtype.name]
        pid = ("storage", self.g("torch", name), key, location, numel)
        if self.legacy:
            pid += (None,)
        return (self.g("torch._utils", "_rebuild_tensor_v2"),
                (_Ref(pid), offset, size, stride, t.requires_grad, collections.OrderedDict()))

    def save_global(self, obj, name=None):
        if type(obj) is _Global:
            module, name = obj.module, obj.name
        elif isinstance(obj, _dt.dtype):
            module, name = "torch", obj.name
        else:
            name = name or getattr(obj, "__qualname__", None) or obj.__name__
            module = pickle.whichmodule(obj, name)
            if module != "ember" and not module.startswith("ember."):
                return super().save_global(obj, name)
            module = "torch" + module[len("ember"):]
        if self.proto >= 4:
            self.save(module)
            self.save(name)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + module.encode("utf-8") + b"\n" + name.encode("utf-8")
                       + b"\n")
        self.memoize(obj)


def _pickle_torch(obj, protocol):
    storages = _Storages()
    buf = io.BytesIO()
    _TorchPickler(buf, protocol, storages).dump(obj)
    return buf.getvalue(), storages


def _little_endian(flat):
    if flat.dtype.byteorder == ">" or (flat.dtype.byteorder == "=" and sys.byteorder == "big"):
        return flat.astype(flat.dtype.newbyteorder("<"))
    return flat


def _zip_entry(zf, name, size, base):
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.file_size = size
    if base is not None:
        # Pad with an extra field so the record's data starts on a 64-byte boundary, as torch.
        here = zf.fp.tell() - base
        zip64 = 20 if size * 1.05 > zipfile.ZIP64_LIMIT else 0
        header = 30 + len(name.encode("utf-8")) + zip64 + 4
        pad = -(here + header) % _ALIGN
        info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    return info


def _write_zip(fh, archive, pkl, storages):
    try:
        base = fh.tell()
    except (AttributeError, OSError, io.UnsupportedOperation):
        base = None
    digest = hashlib.sha1(pkl)
    with zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED) as zf:
        def put(name, data):
            name = archive + "/" + name
            with zf.open(_zip_entry(zf, name, len(data), base), "w") as w:
                if len(data):
                    w.write(data)

        put("data.pkl", pkl)
        put(".format_version", b"1")
        put(".storage_alignment", b"%d" % _ALIGN)
        put("byteorder", b"little")
        for key, flat in storages.records:
            flat = _little_endian(flat)
            if flat.dtype.kind == "V":      # bfloat16: its raw bits
                flat = flat.view(np.uint16)
            data = memoryview(flat).cast("B") if flat.size else b""
            digest.update(key.encode())
            digest.update(struct.pack("<Q", flat.nbytes))
            put("data/" + key, data)
        put("version", b"3\n")
        put(".data/serialization_id", b"%040d" % (int(digest.hexdigest(), 16) % 10 ** 40))


def _write_legacy(fh, obj, protocol):
    storages = _Storages()
    buf = io.BytesIO()
    pickler = _TorchPickler(buf, protocol, storages, legacy=True)
    pickler.dump(obj)
    for value in (_MAGIC_NUMBER, _PROTOCOL_VERSION,
                  {"protocol_version": _PROTOCOL_VERSION, "little_endian": True,
                   "type_sizes": {"short": 2, "int": 4, "long": 4}}):
        pickle.dump(value, fh, protocol=protocol)
    fh.write(buf.getvalue())
    pickle.dump([key for key, _ in storages.records], fh, protocol=protocol)
    for _, flat in storages.records:
        fh.write(struct.pack("<q", flat.size))
        if flat.size:
            flat = _little_endian(flat)
            fh.write(memoryview(flat.view(np.uint16) if flat.dtype.kind == "V" else flat)
                     .cast("B"))


def _encode(obj, path, tensors, names, depth):
    """The JSON-able description of ``obj`` for a safetensors file's metadata."""
    if depth > _MAX_DEPTH:
        raise ValueError("ember.save: nesting deeper than %d levels" % _MAX_DEPTH)
    if isinstance(obj, np.ndarray):
        obj = Tensor._wrap(obj)
    if isinstance(obj, Tensor):
        name = names.get(id(obj))
        if name is None:
            name = path or "tensor"
            k = 1
            while name in tensors:
                name = "%s#%d" % (path, k)
                k += 1
            names[id(obj)] = name
            tensors[name] = obj
        node = {"T": name}
        if obj.requires_grad:
            node["g"] = True
        if type(obj).__name__ == "Parameter":
            node["P"] = True
        return node
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        obj = float(obj)
        return obj if math.isfinite(obj) else {"f": repr(obj)}
    prefix = path + "." if path else ""
    if isinstance(obj, dict):
        items = []
        for key, value in obj.items():
            if not (key is None or isinstance(key, (bool, int, float, str))):
                raise TypeError("ember.save: dict keys must be str, int, float, bool or None, "
                                "got %s" % type(key).__name__)
            items.append([key, _encode(value, prefix + str(key), tensors, names, depth + 1)])
        return {"d": items}
    if isinstance(obj, (list, tuple)):
        values = [_encode(v, prefix + str(i), tensors, names, depth + 1)
                  for i, v in enumerate(obj)]
        return {"t" if isinstance(obj, tuple) else "l": values}
    raise TypeError("ember.save: cannot store an object of type %s in a safetensors file (only "
                    "tensors, numbers, strings, None and dicts/lists/tuples of them); use a "
                    "file name not ending in .safetensors for torch's format"
                    % type(obj).__name__)


def _save_safetensors(obj, path):
    import safetensors.numpy
    tensors = {}
    structure = _encode(obj, "", tensors, {}, 0)
    arrays = {}
    for name, t in tensors.items():
        arrays[name] = np.require(to_host(t.detach()._array), requirements="C")
    metadata = {"format": "pt", "ember": json.dumps(structure, allow_nan=False)}
    safetensors.numpy.save_file(arrays, path, metadata=metadata)


def _is_safetensors_path(f):
    return isinstance(f, (str, os.PathLike)) and os.fspath(f).endswith(".safetensors")


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save an object in PyTorch's checkpoint format (``torch.load`` reads it), or, for a path
    ending in ``.safetensors``, as a safetensors file.

    Tensors are stored once per underlying array: views of one array (``t``, ``t[1:]``,
    ``t.T``) share one storage record and come back sharing memory. Other objects are pickled
    with ember's classes under torch's names (``ember.nn.Linear`` as
    ``torch.nn.modules.linear.Linear``). ``pickle_module`` is accepted and ignored.

    Args:
        obj: what to save.
        f: a path or a binary file object open for writing.
        pickle_protocol: the pickle protocol (torch's default 2).

    Example:
        >>> import io, ember
        >>> buf = io.BytesIO()
        >>> ember.save({"w": ember.ones(2), "step": 3}, buf)
        >>> _ = buf.seek(0)
        >>> ember.load(buf)
        {'w': tensor([1., 1.]), 'step': 3}
    """
    if _is_safetensors_path(f):
        _save_safetensors(obj, f)
        return
    if isinstance(f, (str, os.PathLike)):
        with _open_for_save(f, _use_new_zipfile_serialization) as fh:
            _save(obj, fh, pickle_protocol, _use_new_zipfile_serialization,
                  os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive")
    else:
        _save(obj, f, pickle_protocol, _use_new_zipfile_serialization, "archive")


def _open_for_save(f, zip_format):
    """``open(f, "wb")``, failing as torch's zip writer does for a path it cannot open."""
    name = os.fspath(f)
    if not zip_format or not isinstance(name, str) or not name.isascii():
        return open(f, "wb")
    cut = max(name.rfind("/"), name.rfind("\\"))
    if cut > 0 and not os.path.exists(name[:cut]):
        raise RuntimeError("Parent directory %s does not exist." % name[:cut])
    try:
        return open(f, "wb")
    except OSError as e:
        raise RuntimeError("[enforce fail at inline_container.cc:747] . open file failed with "
                           "strerror: %s" % e.strerror) from None


def _save(obj, fh, protocol, zip_format, archive):
    if not zip_format:
        _write_legacy(fh, obj, protocol)
        return
    pkl, storages = _pickle_torch(obj, protocol)
    _write_zip(fh, archive, pkl, storages)


def _load_safetensors(data, map_location):
    import safetensors
    try:
        flat = safetensors.deserialize(data)
    except Exception as e:     # SafetensorError, or the Rust layer's own errors
        _fail("not a PyTorch checkpoint (zip or legacy format) and not a valid safetensors "
              "file (%s)" % e)
    tensors = {}
    for name, info in flat:
        code = info["dtype"]
        np_dtype = _SAFETENSORS_DTYPES.get(code.upper())
        if np_dtype is None:
            _fail("tensor %r: dtype %s is not supported by ember" % (name, code))
        if len(info["shape"]) > _MAX_DIMS:
            _fail("tensor %r has %d dimensions, more than %d" % (name, len(info["shape"]),
                                                                _MAX_DIMS))
        arr = np.frombuffer(info["data"], dtype=np_dtype).reshape(tuple(info["shape"]))
        if code.upper() == "BF16":
            arr = _widen_bf16(arr)
        else:
            arr = arr.astype(np_dtype.newbyteorder("="))   # a writable, native-order copy
        tensors[name] = Tensor._wrap(arr)
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    meta = header.get("__metadata__") or {}
    obj = tensors
    if "ember" in meta:
        if len(meta["ember"]) > n:
            _fail("the structure is longer than the header")
        structure = _parse_json(meta["ember"], "the ember structure")
        _check_depth(structure)
        obj = _decode(structure, tensors, 0)
    device = map_location
    if isinstance(device, dict):
        device = device.get("cpu", None)
    elif callable(device) and not isinstance(device, (str, _device)):
        device = None
    if device is not None and str(device) != "cpu":
        obj = _to_device(obj, device)
    return obj


_SAFETENSORS_DTYPES = {"F16": np.dtype("<f2"), "F32": np.dtype("<f4"), "F64": np.dtype("<f8"),
                       "I8": np.dtype("i1"), "I16": np.dtype("<i2"), "I32": np.dtype("<i4"),
                       "I64": np.dtype("<i8"), "U8": np.dtype("u1"), "BOOL": np.dtype("?"),
                       "BF16": np.dtype("<u2")}


def _parse_json(raw, what):
    try:
        return json.loads(raw, parse_constant=lambda c: _fail("%s has a non-finite number %s"
                                                               % (what, c)))
    except RecursionError:
        _fail("%s is nested too deeply" % what)
    except (ValueError, TypeError) as e:
        if isinstance(e, CheckpointError):
            raise
        _fail("%s is not valid JSON (%s)" % (what, e))


def _check_depth(root):
    """Reject a structure nested deeper than ``_MAX_DEPTH`` (iteratively, before decoding)."""
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        # Each Python level is two JSON levels ({"l": [...]}).
        if depth > 2 * _MAX_DEPTH + 2:
            _fail("the structure is nested deeper than %d levels" % _MAX_DEPTH)
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)


def _decode(node, tensors, depth):
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if isinstance(node, dict) and len(node) >= 1:
        if "T" in node:
            name = node["T"]
            if not isinstance(name, str) or name not in tensors:
                _fail("the structure refers to a missing tensor %r" % (name,))
            t = tensors[name]
            if node.get("P"):
                from .nn.parameter import Parameter
                t = Parameter(t, requires_grad=bool(node.get("g")))
            elif node.get("g"):
                if not t.dtype.is_floating_point:
                    _fail("tensor %r requires grad but is not floating point" % name)
                t.requires_grad_(True)
            return t
        if len(node) == 1:
            kind, value = next(iter(node.items()))
            if kind == "f" and value in ("inf", "-inf", "nan"):
                return float(value)
            if kind in ("l", "t") and isinstance(value, list):
                items = [_decode(v, tensors, depth + 1) for v in value]
                return tuple(items) if kind == "t" else items
            if kind == "d" and isinstance(value, list):
                out = {}
                for item in value:
                    if (not isinstance(item, list) or len(item) != 2
                            or not (item[0] is None or isinstance(item[0], (bool, int, float,
                                                                             str)))):
                        _fail("a dict entry of the structure is malformed")
                    out[item[0]] = _decode(item[1], tensors, depth + 1)
                return out
    _fail("the structure has an unknown node %.80r" % (node,))


def _to_device(obj, device):
    if isinstance(obj, Tensor):
        return obj.to(device)
    if isinstance(obj, dict):
        return {k: _to_device(v, device) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_device(v, device) for v in obj)
    return obj


class SourceChangeWarning(Warning):
    """The source of a module saved whole changed since the checkpoint was written (torch's)."""


class LoadEndianness(enum.Enum):
    """Fallback byte order for checkpoints with no byte-order record."""

    NATIVE = 1
    LITTLE = 2
    BIG = 3


_LOAD_OPTIONS = {"endianness": None, "crc32": True, "mmap_flags": _mmap.MAP_PRIVATE}


def get_default_load_endianness():
    """The fallback byte order for loading (``None``: native), as ``torch.serialization``."""
    return _LOAD_OPTIONS["endianness"]


def set_default_load_endianness(endianness):
    """Set the fallback byte order for loading: a ``LoadEndianness`` or ``None``."""
    if not isinstance(endianness, LoadEndianness) and endianness is not None:
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    _LOAD_OPTIONS["endianness"] = endianness


def get_default_mmap_options():
    """The mmap flags ``load(..., mmap=True)`` maps files with (default ``mmap.MAP_PRIVATE``:
    writes to the loaded tensors stay in memory; ``MAP_SHARED`` writes them to the file)."""
    return _LOAD_OPTIONS["mmap_flags"]


class set_default_mmap_options:
    """Set the mmap flags for ``load(..., mmap=True)`` (``mmap.MAP_PRIVATE`` or
    ``mmap.MAP_SHARED``); as a context manager, restore the old ones on exit."""

    def __init__(self, flags):
        if flags != _mmap.MAP_PRIVATE and flags != _mmap.MAP_SHARED:
            raise ValueError("Invalid argument in function set_default_mmap_options, expected "
                             f"mmap.MAP_PRIVATE or mmap.MAP_SHARED, but got {flags}")
        self.prev = _LOAD_OPTIONS["mmap_flags"]
        _LOAD_OPTIONS["mmap_flags"] = flags

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_value, traceback):
        _LOAD_OPTIONS["mmap_flags"] = self.prev


def get_crc32_options():
    """Whether ``save`` computes CRC-32 checksums of its records."""
    return _LOAD_OPTIONS["crc32"]


def set_crc32_options(compute_crc32):
    """Set whether ``save`` computes CRC-32 checksums of its records."""
    _LOAD_OPTIONS["crc32"] = compute_crc32


def _storage_typename(obj):
    return "torch.storage." + type(obj).__name__


def _cpu_tag(obj):
    if obj.device.type == "cpu":
        return "cpu"
    return None


def _cpu_deserialize(obj, location):
    if location == "cpu":
        return obj
    return None


def _cuda_tag(obj):
    if obj.device.type == "cuda":
        return "cuda:" + str(obj.device.index or 0)
    return None


def _cuda_deserialize(obj, location):
    if location != "cuda" and not location.startswith("cuda:"):
        return None
    from . import cuda
    if not cuda.is_available():
        raise RuntimeError(
            "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() "
            "is False. If you are running on a CPU-only machine, please use torch.load with "
            "map_location=torch.device('cpu') to map your storages to the CPU.")
    return obj.to(device=location)


_package_registry = [(10, _cpu_tag, _cpu_deserialize), (20, _cuda_tag, _cuda_deserialize)]


def register_package(priority, tagger, deserializer):
    """Register a storage tagger (save) and deserializer (load), tried in priority order."""
    _package_registry.append((priority, tagger, deserializer))
    _package_registry.sort(key=lambda entry: entry[0])


def location_tag(storage):
    """The location string (``'cpu'``, ``'cuda:0'``) recorded for ``storage`` at save time."""
    for _, tagger, _ in _package_registry:
        location = tagger(storage)
        if location:
            return location
    raise RuntimeError("don't know how to determine data location of "
                       + _storage_typename(storage))


def default_restore_location(storage, location):
    """Restore ``storage`` to ``location`` with the first registered deserializer that can."""
    for _, _, fn in _package_registry:
        result = fn(storage, location)
        if result is not None:
            return result
    raise RuntimeError("don't know how to restore data location of "
                       + _storage_typename(storage) + " (tagged with " + location + ")")


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Load what ``torch.save`` or ``ember.save`` wrote, or a safetensors file.

    The format is recognised by content: torch's zip format, torch's legacy format
    (``_use_new_zipfile_serialization=False``), or safetensors (returned as
    ``{name: tensor}``, or the structure ``ember.save`` stored). With ``weights_only=True`` (the
    default) the pickle can only build tensors, Parameters, containers, numbers, strings,
    dtypes, devices and the globals marked safe with ``add_safe_globals``; anything else raises
    ``pickle.UnpicklingError`` without running code. ``weights_only=False`` unpickles fully:
    only for files you trust. Malformed or truncated files raise ``CheckpointError`` (a
    ``RuntimeError`` and ``ValueError``) naming the cause, before allocating more than the
    file holds; a file in none of these formats is read as torch reads it, as a pickle, and
    raises torch's error for it (``pickle.UnpicklingError``, ``EOFError`` for an empty file,
    ``RuntimeError`` for a pickle that is no checkpoint), a ``CheckpointError`` too.

    Args:
        f: a path or a binary file object open for reading (seekable for torch's formats).
        map_location: where storages go: ``None`` (where they were saved), a device or its
            name, a ``{saved: target}`` dict of location tags, or a callable
            ``(storage, location) -> storage or None``.
        weights_only: restrict unpickling (default True unless ``pickle_module`` is given).
        mmap: map tensor data from the file instead of reading it (``f`` must be a path).

    Returns:
        The saved object.

    Example:
        >>> import datetime, io, pickle, ember
        >>> buf = io.BytesIO()
        >>> ember.save({"w": ember.ones(2), "when": datetime.date(2024, 1, 2)}, buf)
        >>> _ = buf.seek(0)
        >>> try:                       # a date is not on the weights-only allow-list
        ...     ember.load(buf)
        ... except pickle.UnpicklingError:
        ...     print("refused")
        refused
        >>> _ = buf.seek(0)
        >>> ember.load(buf, weights_only=False)   # runs the pickle: trusted files only
        {'w': tensor([1., 1.]), 'when': datetime.date(2024, 1, 2)}
    """
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    if not weights_only:
        pickle_load_args.setdefault("encoding", "utf-8")
    if _is_safetensors_path(f) and (isinstance(map_location, dict) or (
            callable(map_location) and not isinstance(map_location, (str, _device)))):
        kind = "dict" if isinstance(map_location, dict) else "callable"
        raise RuntimeError("Loading safetensors file with %s map_location is not supported. Use "
                           "a device string or torch.device instead." % kind)
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _load(fh, map_location, weights_only, os.fspath(f), mmap, pickle_module,
                         pickle_load_args)
    return _load(f, map_location, weights_only, None, mmap, pickle_module, pickle_load_args)


def _load(fh, map_location, weights_only, path, mmap, pickle_module, pickle_load_args):
    start, end = _file_size(fh)
    if start is None:
        fh = io.BytesIO(fh.read())
        start, end = 0, len(fh.getbuffer())
    head = fh.read(16)
    fh.seek(start)
    if head[:4] == _ZIP_MAGIC:
        return _load_zip(fh, start, end, map_location, weights_only, path, mmap, pickle_module,
                         pickle_load_args)
    if mmap:
        raise _TorchRuntimeError(
            "mmap can only be used with files saved with `torch.save(%s"
            "_use_new_zipfile_serialization=True), please torch.save your checkpoint with this "
            "option in order to use mmap." % ("" if path is None else path + ", "))
    if head.startswith(_LEGACY_PREFIX):
        return _load_legacy(fh, start, end, map_location, weights_only, pickle_module,
                            pickle_load_args)
    if head[8:9] == b"{":     # a safetensors header: 8-byte length, then a JSON object
        return _load_safetensors(fh.read(), map_location)
    if end == start:
        raise _EmptyFileError("" if weights_only else "Ran out of input")
    # Anything else is read as torch reads it: as a legacy checkpoint, which starts with a
    # pickled magic number; garbage fails in the unpickler with torch's error.
    try:
        return _load_legacy(fh, start, end, map_location, weights_only, pickle_module,
                            pickle_load_args)
    except UnpicklingError as e:
        if isinstance(e, CheckpointError):
            raise
        raise _NotACheckpointError(str(e)) from None


def get_unsafe_globals_in_checkpoint(f):
    """The ``module.name`` strings of the GLOBALs in a ``torch.save`` checkpoint that
    ``weights_only=True`` would refuse (not allowlisted by default nor by
    ``add_safe_globals``/``safe_globals``). Matches torch's."""
    import pickletools
    own = isinstance(f, (str, os.PathLike))
    fh = open(f, "rb") if own else f
    try:
        start = fh.tell()
        if fh.read(4) != _ZIP_MAGIC:
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        fh.seek(start)
        zf = zipfile.ZipFile(fh)
        if any(i.filename.endswith("constants.pkl") for i in zf.infolist()):
            raise ValueError("Expected input to be a checkpoint returned by torch.save but got "
                             "a torchscript checkpoint")
        zf, prefix = _open_zip(fh, start, None)
        pkl = zf.read(prefix + "data.pkl")
    finally:
        if own:
            fh.close()
    found = {arg.replace(" ", ".") for op, arg, _ in pickletools.genops(pkl)
             if op.name == "GLOBAL"}
    safe = set(_allowed_globals())
    for name in _user_globals():
        safe.add(name)
        if name.startswith("ember."):
            safe.add("torch." + name[len("ember."):])
    return list(found - safe)


def check_module_version_greater_or_equal(module, req_version_tuple, error_if_malformed=True):
    """Whether ``module.__version__`` is at least ``req_version_tuple`` (compared field by
    field, each cast to the type of the required field). Matches torch's."""
    try:
        version_strs = module.__version__.split(".")
        module_version = tuple(type(req_field)(version_strs[idx])
                               for idx, req_field in enumerate(req_version_tuple))
        requirement_is_met = module_version >= req_version_tuple
    except Exception as e:
        message = (f"'{module.__name__}' module version string is malformed "
                   f"'{module.__version__}' and cannot be compared with tuple "
                   f"{str(req_version_tuple)}")
        if error_if_malformed:
            raise RuntimeError(message) from e
        warnings.warn(message + ", but continuing assuming that requirement is met",
                      stacklevel=2)
        requirement_is_met = True
    return requirement_is_met
