"""ember: PyTorch's autograd and training API, rebuilt in plain Python on NumPy.

``import ember as torch`` runs PyTorch-style code: tensors record the operations applied to
them, ``backward()`` walks the graph, ``nn``, ``optim`` and ``utils.data`` train models.
"""
import builtins as _builtins
import sys as _sys
import types as _types
import warnings as _warnings

from . import dtypes
from .dtypes import (bool, float, float16, float32, float64, double, half, int, int8, int16,
                     int32, int64, long, short, uint8, bfloat16, dtype, finfo, iinfo,
                     get_default_dtype, set_default_dtype, promote_types, complex64, cfloat,
                     complex128, cdouble, complex32, chalf, uint16, uint32, uint64,
                     float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz,
                     float8_e8m0fnu, float4_e2m1fn_x2, quint8, qint8, qint32, quint4x2,
                     quint2x4, bits8, bits16, bits1x8, bits2x4, bits4x2, layout, memory_format,
                     strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc,
                     jagged, contiguous_format, channels_last, channels_last_3d,
                     preserve_format, legacy_contiguous_format, int1, int2, int3, int4, int5,
                     int6, int7, uint1, uint2, uint3, uint4, uint5, uint6, uint7, bit)
from .tensor import (Tensor, Size, FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor,
                     ShortTensor, CharTensor, ByteTensor, BoolTensor)
from .tensor import _bind as _bind_tensor
from .tensor import RemovableHandle as _Handle
from . import _torch_function  # noqa: E402  (before any Tensor subclass: see that file)
from ._tensor_str import set_printoptions
from .random import (Generator, manual_seed, seed, initial_seed, get_rng_state, set_rng_state,
                     default_generator)
from .ops import *  # noqa: F401,F403
from .ops import _getitem  # noqa: F401
from .backend import device, set_default_device, get_default_device  # noqa: F401
from .autograd.grad_mode import (no_grad, enable_grad, set_grad_enabled, is_grad_enabled,
                                 inference_mode, is_inference_mode_enabled)
from . import autograd, ops, return_types  # noqa: F401
from .profiler import _legacy as _autograd_profiler  # noqa: E402
# (torch.autograd.profiler: kept beside torch.profiler, reachable at torch's path)
autograd.profiler = _autograd_profiler
__import__("sys").modules[__name__ + ".autograd.profiler"] = _autograd_profiler
from . import cuda  # noqa: F401,E402

# ``from .ops import *`` also bound op-family modules named as public sub-packages
# (``special``): those load on first use instead (``__getattr__`` below).
for _name in ("special", "fft", "sparse"):
    if type(globals().get(_name)) is type(dtypes):
        del globals()[_name]
_bind_tensor(ops, autograd.engine)    # Tensor's methods dispatch into ops (see tensor.py)
_Handle.__module__ = "ember.utils.hooks"        # (its public home, as torch.utils.hooks')


def _prelu(self, weight):
    from .nn import functional
    return functional.prelu(self, weight)


def _hash_tensor(self, dim=(), *, keepdim=False, mode=0):
    from ._torch_ns import hash_tensor as _hash
    return _hash(self, dim, keepdim=keepdim, mode=mode)


Tensor.prelu, Tensor.hash_tensor = _prelu, _hash_tensor     # (their ops live above ops/)
# torch's kernels give inf/nan silently; NumPy's ufuncs called from ember's code would warn
# (``0 * inf``): a filter, not an errstate per op, keeps that free on the hot path.
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"ember\.")
from . import _tensor_compat  # noqa: E402  (torch's older Tensor methods; see that file)
_tensor_compat.install(Tensor)
from ._legacy_storage import *  # noqa: E402,F401,F403  (torch.FloatStorage, ...)
from ._legacy_storage import Storage, TypedStorage, UntypedStorage  # noqa: E402,F401


globals().update(ops.shape.FUNCTION_FORMS)   # torch.flip/permute/reshape/tile take one sequence


def hsplit(input, indices_or_sections):
    return ops.hsplit(input, indices_or_sections)


def vsplit(input, indices_or_sections):
    return ops.vsplit(input, indices_or_sections)


def dsplit(input, indices_or_sections):
    return ops.dsplit(input, indices_or_sections)


def adaptive_max_pool1d(input, output_size):
    """``torch.adaptive_max_pool1d``: ``(values, indices)`` (``nn.functional``'s returns the
    values only)."""
    if isinstance(output_size, (tuple, list)):
        for i, v in enumerate(output_size):
            if not isinstance(v, _builtins.int) or isinstance(v, _builtins.bool):
                raise TypeError("adaptive_max_pool1d(): argument 'output_size' (position 2) must "
                                "be tuple of ints, but found element of type %s at pos %d"
                                % (type(v).__name__, i))
        if len(output_size) != 1:
            raise RuntimeError("adaptive_max_pool1d() argument 'output_size' should contain one "
                               "int (got %d)" % len(output_size))
    return ops.adaptive_max_pool1d(input, output_size, return_indices=True)
# ``from .ops import *`` bound ``linalg`` to ``ops.linalg``; load the public ``ember.linalg``.
linalg = __import__("importlib").import_module(__name__ + ".linalg")
from ._lowrank import svd_lowrank, pca_lowrank  # noqa: E402
from ._lobpcg import lobpcg  # noqa: E402

from .version import __version__  # noqa: E402
from math import inf, nan, pi, e  # noqa: E402
newaxis = None
has_lapack = has_spectral = True
has_mkl = has_openmp = False


def result_type(tensor1, tensor2):
    """The dtype torch would give an op on ``tensor1`` and ``tensor2``."""
    return dtypes.result_type(tensor1, tensor2)


_flags = {"matmul_precision": "highest", "deterministic": False, "warn_only": False}


def set_float32_matmul_precision(precision):
    """Accepted for torch's code ("highest", "high" or "medium"): ember's float32 products are
    NumPy's (CuPy's), always in full float32 precision, so the setting changes no result."""
    if precision not in ("highest", "high", "medium"):
        import warnings
        warnings.warn("%s is not one of 'highest', 'high', or 'medium'; the current "
                      "setFloat32MatmulPrecision call has no effect." % precision)
        return
    _flags["matmul_precision"] = precision
    _flags["matmul_precision_set"] = True       # ("highest" then reads as "ieee", not "none")


def get_float32_matmul_precision():
    return _flags["matmul_precision"]


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Accepted for torch's code: every ember op is deterministic on the CPU (scatter-adds run
    in a fixed order), so the flag is recorded and read back only."""
    if type(mode) is not type(True):    # (``bool`` here is ember.bool, the dtype)
        raise TypeError("_set_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        "bool, not %s" % type(mode).__name__)
    _flags["deterministic"] = mode
    _flags["warn_only"] = warn_only


def are_deterministic_algorithms_enabled():
    return _flags["deterministic"]


def is_deterministic_algorithms_warn_only_enabled():
    return _flags["warn_only"]


def compile(model=None, **kwargs):
    """``torch.compile``: ``model`` (a function or Module) recorded once and replayed (see
    ``ember.compiler``)."""
    from .compiler import compile as _compile
    return _compile(model, **kwargs)


def typename(obj):
    if isinstance(obj, Tensor):
        return "torch." + obj.dtype._legacy
    return type(obj).__name__


_LAZY = ("nn", "optim", "utils", "viz", "datasets", "fft", "special", "distributions", "func",
         "distributed", "backends", "compiler", "_dynamo", "serialization", "testing",
         "signal", "jit", "version", "cpu", "functional", "amp", "multiprocessing", "profiler",
         "types", "overrides", "hub", "accelerator", "mps", "xpu", "sparse", "quasirandom",
         "fx", "library", "__future__", "nested", "masked")


def save(obj, f, *args, **kwargs):
    """``torch.save``: ``obj`` in PyTorch's checkpoint format (``torch.load`` reads it), or a
    safetensors file for a path ending in ``.safetensors`` (see ``ember.serialization``).

    Example:
        >>> import io, ember
        >>> buf = io.BytesIO()
        >>> ember.save({"w": ember.ones(2)}, buf)
        >>> _ = buf.seek(0)
        >>> ember.load(buf)
        {'w': tensor([1., 1.])}
    """
    from .serialization import save as _save
    return _save(obj, f, *args, **kwargs)


def load(f, *args, **kwargs):
    """``torch.load``: what ``torch.save`` or ``ember.save`` wrote, through a restricted
    unpickler unless ``weights_only=False`` (see ``ember.serialization``).

    Example:
        >>> import io, ember
        >>> buf = io.BytesIO()
        >>> ember.save([ember.tensor(3.0)], buf)
        >>> _ = buf.seek(0)
        >>> ember.load(buf, weights_only=True)
        [tensor(3.)]
    """
    from .serialization import load as _load
    return _load(f, *args, **kwargs)


def _assert(condition, message):
    """``torch._assert``: ``assert condition, message`` that tracing keeps."""
    if not condition:
        raise AssertionError(message)


class SymInt:
    """``torch.SymInt``: a symbolic int of traced shapes (ember's shapes are always plain
    ints, so nothing is ever an instance)."""


class SymFloat:
    """``torch.SymFloat`` (never instantiated by ember; see ``SymInt``)."""


class SymBool:
    """``torch.SymBool`` (never instantiated by ember; see ``SymInt``)."""


DisableTorchFunctionSubclass = _torch_function.DisableTorchFunctionSubclass


class DisableTorchFunction(DisableTorchFunctionSubclass):
    """Context manager: ``__torch_function__`` off (see ``DisableTorchFunctionSubclass``)."""


class _LazyModule(_types.ModuleType):
    """A module path whose contents load on first use (``ember.cuda.amp``)."""

    def __init__(self, name, target, attr):
        super().__init__(name)
        self.__dict__["_target"] = (target, attr)

    def __getattr__(self, name):
        import importlib
        target, attr = self.__dict__["_target"]
        return getattr(getattr(importlib.import_module(target), attr), name)

    def __dir__(self):
        import importlib
        target, attr = self.__dict__["_target"]
        return dir(getattr(importlib.import_module(target), attr))


# ``torch.cuda.amp.autocast(...)`` and ``import torch.cuda.amp``: torch's older AMP spelling
cuda.amp = _sys.modules["ember.cuda.amp"] = _LazyModule("ember.cuda.amp", "ember.amp._legacy",
                                                       "cuda")


def __dir__():
    from . import _torch_ns
    from .optim import _foreach
    return sorted(set(globals()) | _torch_ns.NAMES | set(_foreach.__all__))


def __getattr__(name):
    if name == "CheckpointError":
        from .serialization import CheckpointError
        return CheckpointError
    if name in ("Future", "fork", "wait"):
        from . import jit
        return getattr(jit, name)
    # Heavier or optional sub-packages load on first use, keeping ``import ember`` fast.
    if name in ("sparse_coo_tensor", "sparse_csr_tensor", "spmm", "smm"):
        from .ops import sparse as _sparse
        return getattr(_sparse, name)
    if name in _LAZY:
        import importlib
        return importlib.import_module("ember." + name)
    if name.startswith("_foreach_"):
        from .optim import _foreach
        if name in _foreach.__all__:
            return getattr(_foreach, name)
    if not name.startswith("_"):
        # torch's C++-signature forms of nn.functional and the rest (``ember.kl_div``)
        import importlib
        ns = importlib.import_module("ember._torch_ns")
        if name in ns.NAMES:
            return getattr(ns, name)
    raise AttributeError("module 'ember' has no attribute %r" % name)
