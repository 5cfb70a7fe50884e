"""Window functions of length ``M`` (symmetric, or periodic with ``sym=False``), computed in
``dtype`` as torch computes them."""
import math

from ... import dtypes as _dt
from ...ops import empty, exp, i0, linspace, minimum, ones, sqrt, tensor


def _checks(name, M, dtype, layout):
    if M < 0:
        raise ValueError("%s requires non-negative window length, got M=%s" % (name, M))
    if layout is not _dt.strided:
        raise ValueError("%s is implemented for strided tensors only, got: %s" % (name, layout))
    if dtype not in (_dt.float32, _dt.float64):
        raise ValueError("%s expects float32 or float64 dtypes, got: %s" % (name, dtype))


def _trivial(M, dtype, device, requires_grad):
    if M == 0:
        return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    return ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=_dt.strided,
                device=None, requires_grad=False):
    """``exp(-|n - center| / tau)``."""
    dtype = dtype or _dt.get_default_dtype()
    _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError("Tau must be positive, got: %s instead." % tau)
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    k = linspace(-center * tau ** -1, (-center + (M - 1)) * tau ** -1, M, dtype=dtype,
                 device=device)
    return exp(-k.abs()).requires_grad_(requires_grad)


def cosine(M, *, sym=True, dtype=None, layout=_dt.strided, device=None, requires_grad=False):
    """``sin(pi (n + 1/2) / M)`` (``M + 1`` for a periodic window)."""
    dtype = dtype or _dt.get_default_dtype()
    _checks("cosine", M, dtype, layout)
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    start = 0.5
    constant = math.pi / (M + 1 if not sym and M > 1 else M)
    k = linspace(start * constant, (start + (M - 1)) * constant, M, dtype=dtype,
                 device=device)
    return k.sin().requires_grad_(requires_grad)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=_dt.strided, device=None,
             requires_grad=False):
    """``exp(-(n - c)^2 / (2 std^2))`` around the centre ``c``."""
    dtype = dtype or _dt.get_default_dtype()
    _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError("Standard deviation must be positive, got: %s instead." % std)
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / (std * math.sqrt(2))
    k = linspace(start * constant, (start + (M - 1)) * constant, M, dtype=dtype,
                 device=device)
    return exp(-k ** 2).requires_grad_(requires_grad)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=_dt.strided, device=None,
           requires_grad=False):
    """``I0(beta sqrt(1 - (2n/(M-1) - 1)^2)) / I0(beta)``."""
    dtype = dtype or _dt.get_default_dtype()
    _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError("beta must be non-negative, got: %s instead." % beta)
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    b = tensor(beta, dtype=dtype, device=device)
    start = -b
    constant = 2.0 * b / (M if not sym else M - 1)
    end = minimum(b, start + (M - 1) * constant)
    k = linspace(start.item(), end.item(), M, dtype=dtype, device=device)
    return (i0(sqrt(b * b - k ** 2)) / i0(b)).requires_grad_(requires_grad)


def general_cosine(M, *, a, sym=True, dtype=None, layout=_dt.strided, device=None,
                   requires_grad=False):
    """``sum_i (-1)^i a_i cos(2 pi i n / (M - 1))`` (``M`` for a periodic window)."""
    dtype = dtype or _dt.get_default_dtype()
    _checks("general_cosine", M, dtype, layout)
    if a is None:
        raise TypeError("Coefficients cannot be None")
    if not isinstance(a, (list, tuple)):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    constant = 2 * math.pi / (M if not sym else M - 1)
    k = linspace(0, (M - 1) * constant, M, dtype=dtype, device=device)
    out = None
    for i, c in enumerate(a):
        term = (-1) ** i * c * (k * i).cos()
        out = term if out is None else out + term
    return out.requires_grad_(requires_grad)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=_dt.strided, device=None,
                    requires_grad=False):
    """``alpha - (1 - alpha) cos(2 pi n / (M - 1))``."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=_dt.strided, device=None, requires_grad=False):
    """The Hamming window (``general_hamming`` with ``alpha=0.54``)."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=_dt.strided, device=None, requires_grad=False):
    """The Hann window (``general_hamming`` with ``alpha=0.5``)."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=_dt.strided, device=None, requires_grad=False):
    """The Blackman window (cosine coefficients 0.42, 0.5, 0.08)."""
    dtype = dtype or _dt.get_default_dtype()
    _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=_dt.strided, device=None, requires_grad=False):
    """The triangular window ``1 - |2n/(M-1) - 1|``."""
    dtype = dtype or _dt.get_default_dtype()
    _checks("bartlett", M, dtype, layout)
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    start = -1
    constant = 2 / (M if not sym else M - 1)
    k = linspace(start, start + (M - 1) * constant, M, dtype=dtype, device=device)
    return (1 - k.abs()).requires_grad_(requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=_dt.strided, device=None, requires_grad=False):
    """The minimum 4-term Blackman-Harris window of Nuttall."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)
