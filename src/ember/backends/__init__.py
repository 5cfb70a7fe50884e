"""``ember.backends``: the switches ``torch.backends`` offers, with torch's meaning where it
applies on ember and as harmless flags where it does not.

ember computes with NumPy (CuPy on a GPU): there is no cuDNN, MKL-DNN, MPS or NNPACK to turn
on or off, so their ``is_available()`` answers False and their flags are kept (and read back)
without changing any result. ``mkl.is_available()`` and ``openmp.is_available()`` answer for
NumPy's BLAS.
"""
import contextlib
import enum
import importlib.util
import sys
import types

__all__ = ["cpu", "cuda", "cudnn", "mha", "mkl", "mkldnn", "mps", "nnpack", "openmp",
           "opt_einsum"]


class _Flags(types.ModuleType):
    """A sub-module of flags with ``is_available()`` and a ``flags(...)`` context manager."""

    def __init__(self, name, available=False, **flags):
        super().__init__("ember.backends." + name)
        self._available = available
        self.__dict__.update(flags)
        self._names = tuple(flags)

    def is_available(self):
        return self._available

    def is_built(self):
        return self._available

    @contextlib.contextmanager
    def flags(self, **kwargs):
        """Set flags for the duration of a ``with`` block (torch's ``cudnn.flags``)."""
        unknown = set(kwargs) - set(self._names)
        if unknown:
            raise TypeError("flags() got an unexpected keyword argument %r" % sorted(unknown)[0])
        old = {k: getattr(self, k) for k in kwargs}
        self.__dict__.update(kwargs)
        try:
            yield
        finally:
            self.__dict__.update(old)


def _blas_info():
    try:
        from threadpoolctl import threadpool_info
        return threadpool_info()
    except Exception:       # (threadpoolctl missing or unable to inspect: assume nothing)
        return []


class _Cudnn(_Flags):
    def version(self):
        """None: ember has no cuDNN."""
        return None

    def is_acceptable(self, tensor):
        """Whether cuDNN would take ``tensor``: never (ember has no cuDNN)."""
        return False


class _Matmul:
    """``torch.backends.cuda.matmul``: TF32 and reduced-precision switches (CuPy honours its
    own settings; on the CPU they change nothing). ``allow_tf32`` and ``fp32_precision``
    follow ``torch.set_float32_matmul_precision`` ("highest": off), as torch's."""

    _NAMES = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction")

    def __init__(self):
        object.__setattr__(self, "_state", {
            "allow_fp16_reduced_precision_reduction": (True, True),
            "allow_bf16_reduced_precision_reduction": (True, True),
            "allow_fp16_accumulation": False})

    @staticmethod
    def _precision():
        from .. import _flags
        return _flags

    def __getattr__(self, name):
        if name == "allow_tf32":
            return self._precision()["matmul_precision"] != "highest"
        if name == "fp32_precision":
            flags = self._precision()
            return "tf32" if flags["matmul_precision"] != "highest" else \
                "ieee" if flags.get("matmul_precision_set") else "none"
        if name in self._NAMES:
            return self._state[name][0]
        if name.endswith("_split_k") and name[:-8] in self._NAMES:
            return self._state[name[:-8]][1]
        if name == "allow_fp16_accumulation":
            return self._state[name]
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            self._precision()["matmul_precision"] = "high" if value else "highest"
        elif name == "fp32_precision":
            if value not in ("none", "tf32", "ieee"):
                raise RuntimeError("Invalid precision %s" % value)
            self._precision()["matmul_precision"] = "high" if value == "tf32" else "highest"
            self._precision()["matmul_precision_set"] = value != "none"
        elif name in self._NAMES:
            self._state[name] = _reduction_setting(value, name)
        elif name == "allow_fp16_accumulation":
            self._state[name] = value
        else:
            raise AttributeError("Unknown attribute " + name)


def _reduction_setting(value, attr_name):
    """``(allow_reduced_precision, allow_splitk)`` from a bool or a 1-2 tuple of bools, with
    torch's errors."""
    def ensure_bool(obj, which):
        if isinstance(obj, bool):
            return obj
        raise TypeError("%s expects a bool for %s, but got %r" % (attr_name, which, type(obj)))

    if isinstance(value, bool):
        return value, True
    if not isinstance(value, (list, tuple)):
        raise TypeError("%s expects a bool or a tuple/list of bools, but got %r"
                        % (attr_name, type(value)))
    if not value:
        raise TypeError("%s expects at least one boolean argument" % attr_name)
    if len(value) > 2:
        raise TypeError("%s expects at most two boolean arguments" % attr_name)
    reduced = ensure_bool(value[0], "allow_reduced_precision")
    splitk = True if len(value) == 1 else ensure_bool(value[1], "allow_splitk")
    if reduced and not splitk:
        raise RuntimeError("allow_splitk=False is not supported when reduced precision "
                           "reductions are enabled")
    return reduced, splitk


class _LinalgBackend(enum.IntEnum):
    Default = 0
    Cusolver = 1
    Magma = 2


class _BlasBackend(enum.IntEnum):
    Default = 0
    Cublas = 1
    Cublaslt = 2
    Ck = 3


def _bool_flag(setter, value, typo=""):
    """Raise torch's error unless ``value`` is a bool (``typo``: the stray "%s" of torch's
    cuDNN message)."""
    if not isinstance(value, bool):
        raise RuntimeError("%s expects a bool, but got %s%s" % (setter, typo,
                                                              type(value).__name__))


class SDPBackend(enum.IntEnum):
    """The kernels ``scaled_dot_product_attention`` may use (torch's ``SDPBackend``); ember
    always computes the math one, the others are flags."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_SDP = {SDPBackend.MATH: True, SDPBackend.FLASH_ATTENTION: True,
        SDPBackend.EFFICIENT_ATTENTION: True, SDPBackend.CUDNN_ATTENTION: True,
        SDPBackend.OVERRIDEABLE: True}


class _Cuda(types.ModuleType):
    SDPBackend = SDPBackend

    def __init__(self):
        super().__init__("ember.backends.cuda")
        self.matmul = _Matmul()
        self._linalg = _LinalgBackend.Default
        self._blas = _BlasBackend.Cublas
        self._fp16_math_sdp = False

    def is_built(self):
        """Whether CuPy (ember's CUDA array library) can be imported."""
        import importlib.util
        return importlib.util.find_spec("cupy") is not None

    def preferred_linalg_library(self, backend=None):
        """The linear-algebra library CUDA ops prefer (a flag here: CuPy chooses)."""
        if backend is not None:
            if not isinstance(backend, (str, _LinalgBackend)):
                raise RuntimeError("Unknown input value type.")
            if isinstance(backend, str):
                if backend not in ("default", "cusolver", "magma"):
                    raise RuntimeError("Unknown input value. Choose from: default, cusolver, "
                                       "magma.")
                backend = _LinalgBackend[backend.capitalize()]
            self._linalg = backend
        return self._linalg

    def preferred_blas_library(self, backend=None):
        """The BLAS library CUDA matrix products prefer (a flag here: CuPy chooses)."""
        if backend is not None:
            if not isinstance(backend, (str, _BlasBackend)):
                raise RuntimeError("Unknown input value type.")
            names = {"default": _BlasBackend.Cublas, "cublas": _BlasBackend.Cublas,
                     "cublaslt": _BlasBackend.Cublaslt, "ck": _BlasBackend.Ck}
            if isinstance(backend, str) and backend not in names:
                raise RuntimeError("Unknown input value. Choose from: default, cublas, "
                                   "hipblas, cublaslt, hipblaslt, ck.")
            self._blas = names[backend] if isinstance(backend, str) else backend
        return self._blas

    def is_flash_attention_available(self):
        """False: ember has no FlashAttention kernel."""
        return False

    def is_ck_sdpa_available(self):
        """False: ember has no Composable Kernel attention."""
        return False

    def allow_fp16_bf16_reduction_math_sdp(self, enabled):
        """Let the math attention kernel reduce in 16 bits (a flag here)."""
        _bool_flag("set_sdp_use_math", enabled)
        self._fp16_math_sdp = enabled

    def fp16_bf16_reduction_math_sdp_allowed(self):
        return self._fp16_math_sdp

    def flash_sdp_enabled(self):
        return _SDP[SDPBackend.FLASH_ATTENTION]

    def math_sdp_enabled(self):
        return _SDP[SDPBackend.MATH]

    def mem_efficient_sdp_enabled(self):
        return _SDP[SDPBackend.EFFICIENT_ATTENTION]

    def cudnn_sdp_enabled(self):
        return _SDP[SDPBackend.CUDNN_ATTENTION]

    def enable_flash_sdp(self, enabled):
        _bool_flag("set_sdp_use_math", enabled)
        _SDP[SDPBackend.FLASH_ATTENTION] = enabled

    def enable_math_sdp(self, enabled):
        _bool_flag("set_sdp_use_math", enabled)
        _SDP[SDPBackend.MATH] = enabled

    def enable_mem_efficient_sdp(self, enabled):
        _bool_flag("set_sdp_use_math", enabled)
        _SDP[SDPBackend.EFFICIENT_ATTENTION] = enabled

    def enable_cudnn_sdp(self, enabled):
        _bool_flag("set_sdp_use_cudnn", enabled, "%s")
        _SDP[SDPBackend.CUDNN_ATTENTION] = enabled

    def sdp_kernel(self, enable_flash=True, enable_math=True, enable_mem_efficient=True,
                   enable_cudnn=True):
        """Turn the attention kernels on or off inside a ``with`` block (deprecated in torch
        for ``torch.nn.attention.sdpa_kernel``, with a FutureWarning)."""
        import warnings
        warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this "
                      "context manager will be removed. Please see "
                      "`torch.nn.attention.sdpa_kernel()` for the new context manager, with "
                      "updated signature.", FutureWarning, stacklevel=2)
        return _sdp_kernel({SDPBackend.FLASH_ATTENTION: enable_flash, SDPBackend.MATH: enable_math,
                            SDPBackend.EFFICIENT_ATTENTION: enable_mem_efficient,
                            SDPBackend.CUDNN_ATTENTION: enable_cudnn})


@contextlib.contextmanager
def _sdp_kernel(enabled):
    old = dict(_SDP)
    _SDP.update(enabled)
    try:
        yield {}
    finally:
        _SDP.update(old)


class _Cpu(types.ModuleType):
    def get_cpu_capability(self):
        """The widest SIMD level of this CPU, as torch names its own ("AVX512", "AVX2" or
        "DEFAULT")."""
        from ..ops._util import cpu_flags
        flags = cpu_flags()
        if "avx512f" in flags:
            return "AVX512"
        return "AVX2" if "avx2" in flags else "DEFAULT"


class _Mha(types.ModuleType):
    """``torch.backends.mha``: whether ``nn.MultiheadAttention`` and ``nn.TransformerEncoder``
    may take torch's fused inference fast path (where their inputs allow it)."""

    def __init__(self):
        super().__init__("ember.backends.mha")
        self._is_fastpath_enabled = True

    def get_fastpath_enabled(self):
        """Whether the fast path of ``TransformerEncoder`` and ``MultiheadAttention`` is on
        (it still runs only when every condition on the inputs is met)."""
        return self._is_fastpath_enabled

    def set_fastpath_enabled(self, value):
        """Turn the fast path on or off."""
        self._is_fastpath_enabled = value


cudnn = _Cudnn("cudnn", enabled=True, benchmark=False, deterministic=False, allow_tf32=True,
               benchmark_limit=None, fp32_precision="none")
cudnn.__dict__.update(conv=types.SimpleNamespace(fp32_precision="tf32"),
                      rnn=types.SimpleNamespace(fp32_precision="tf32"))
mkldnn = _Flags("mkldnn", enabled=True, deterministic=False, fp32_precision="none")
class _Mps(_Flags):
    def is_macos13_or_newer(self, minor=0):
        """Raises without MPS, as torch."""
        return self.is_macos_or_newer(13, minor)

    def is_macos_or_newer(self, major, minor):
        """Raises without MPS, as torch."""
        raise RuntimeError("Cannot execute isOnMacOSorNewer() without MPS backend.")


mps = _Mps("mps")
nnpack = _Flags("nnpack", enabled=True)
_has_opt_einsum = importlib.util.find_spec("opt_einsum") is not None
# (as torch: available, enabled and "auto" only where the opt_einsum package is installed)
opt_einsum = _Flags("opt_einsum", available=_has_opt_einsum, enabled=_has_opt_einsum,
                    strategy="auto" if _has_opt_einsum else None)
mkl = _Flags("mkl", available=any(i.get("internal_api") == "mkl" for i in _blas_info()))
openmp = _Flags("openmp", available=any(i.get("user_api") == "openmp" for i in _blas_info()))
cuda = _Cuda()
mha = _Mha()
cpu = _Cpu("ember.backends.cpu")

# ``import torch.backends.cudnn as cudnn`` and the like: the flag modules are importable paths
for _mod in (cudnn, mkldnn, mps, nnpack, opt_einsum, mkl, openmp, cuda, cpu, mha):
    sys.modules[_mod.__name__] = _mod
