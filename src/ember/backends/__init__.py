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
    own settings; on the CPU they change nothing)."""

    def __init__(self):
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True


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

    def is_built(self):
        """Whether CuPy (ember's CUDA array library) can be imported."""
        import importlib.util
        return importlib.util.find_spec("cupy") is not None

    def preferred_linalg_library(self, backend=None):
        return "default"

    def flash_sdp_enabled(self):
        return _SDP[SDPBackend.FLASH_ATTENTION]

    def math_sdp_enabled(self):
        return _SDP[SDPBackend.MATH]

    def mem_efficient_sdp_enabled(self):
        return _SDP[SDPBackend.EFFICIENT_ATTENTION]

    def cudnn_sdp_enabled(self):
        return _SDP[SDPBackend.CUDNN_ATTENTION]

    def enable_flash_sdp(self, enabled):
        _SDP[SDPBackend.FLASH_ATTENTION] = enabled

    def enable_math_sdp(self, enabled):
        _SDP[SDPBackend.MATH] = enabled

    def enable_mem_efficient_sdp(self, enabled):
        _SDP[SDPBackend.EFFICIENT_ATTENTION] = enabled

    def enable_cudnn_sdp(self, enabled):
        _SDP[SDPBackend.CUDNN_ATTENTION] = enabled

    @contextlib.contextmanager
    def sdp_kernel(self, enable_flash=True, enable_math=True, enable_mem_efficient=True,
                   enable_cudnn=True):
        """Turn the attention kernels on or off inside a ``with`` block (deprecated in torch
        for ``torch.nn.attention.sdpa_kernel``)."""
        old = dict(_SDP)
        _SDP.update({SDPBackend.FLASH_ATTENTION: enable_flash, SDPBackend.MATH: enable_math,
                     SDPBackend.EFFICIENT_ATTENTION: enable_mem_efficient,
                     SDPBackend.CUDNN_ATTENTION: enable_cudnn})
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
               benchmark_limit=10)
mkldnn = _Flags("mkldnn", enabled=True, deterministic=False)
class _Mps(_Flags):
    def is_macos13_or_newer(self, minor=0):
        return False

    def is_macos_or_newer(self, major, minor):
        return False


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
