"""The random primitives torch's distributions draw through (``_standard_gamma``,
``_sample_dirichlet``), which ember's public ops do not have, in torch's CPU algorithms and
random stream."""
import math

import numpy as np

from ..autograd.function import Function
from ..backend import backend_of, to_host
from ..dtypes import scalar_type_name
from ..ops._util import needs_float
from ..random import _gen
from ..tensor import Tensor


def _special(a):
    return backend_of(a._array).scipy("special")


def _float(a):
    return needs_float(a._array)


# Random primitives: drawn on the host from the Generator, as ember's other random ops.

_F08, _F09, _F11 = (float(np.float32(v)) for v in (0.8, 0.9, 1.1))   # 0.8f...
_COEF_UV = ((0.16009398, -0.094634809, 0.025146376, -0.0030648343,
             1, 0.32668115, 0.10406089, 0.0014179084),
            (0.53487893, 0.1298071, 0.065735949, -0.0015649758,
             0.16639465, 0.020070113, -0.0035938915, -0.00058392623),
            (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
             0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07))


def _standard_gamma_grad_one(alpha, x):
    """torch's ``standard_gamma_grad_one`` (float64): d x / d alpha for a Gamma(alpha, 1)
    sample ``x``: a Taylor series for small x, Rice's saddle point expansion for large alpha,
    else a bivariate rational approximation."""
    if x < _F08:
        numer, denom = 1.0, alpha
        series1, series2 = numer / denom, numer / (denom * denom)
        for i in range(1, 6):
            numer *= -x / i
            denom += 1
            series1 += numer / denom
            series2 += numer / (denom * denom)
        pow_x_alpha = x ** alpha if x > 0 else 0.0 ** alpha
        gamma_pdf = (x ** (alpha - 1) if x > 0 else math.inf) * math.exp(-x)
        gamma_cdf = pow_x_alpha * series1
        log_x = math.log(x) if x > 0 else -math.inf
        gamma_cdf_alpha = (log_x - _digamma_one(alpha, float)) * gamma_cdf - pow_x_alpha * series2
        try:
            result = -gamma_cdf_alpha / gamma_pdf
        except ZeroDivisionError:
            result = math.nan
        return 0.0 if result != result else result
    if alpha > 8.0:
        if _F09 * alpha <= x <= _F11 * alpha:
            numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
            numer_2 = (1440 * (alpha * alpha) + 6 * x * (53 - 120 * x)
                       - 65 * x * x / alpha + alpha * (107 + 3600 * x))
            denom = 1244160 * (alpha * alpha) * (alpha * alpha)
            return numer_1 * numer_2 / denom
        denom = math.sqrt(8 * alpha)
        term2 = denom / (alpha - x)
        term3 = (x - alpha - alpha * math.log(x / alpha)) ** -1.5
        term23 = term2 - term3 if x < alpha else term2 + term3
        term1 = (math.log(x / alpha) * term23
                 - math.sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x)))
        stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
        numer = x * term1
        return -stirling * numer / denom
    u = math.log(x / alpha)
    v = math.log(alpha)
    c = [_COEF_UV[0][i] + u * (_COEF_UV[1][i] + u * _COEF_UV[2][i]) for i in range(8)]
    p = c[0] + v * (c[1] + v * (c[2] + v * c[3]))
    q = c[4] + v * (c[5] + v * (c[6] + v * c[7]))
    return math.exp(p / q)


def _standard_gamma_grad_arr(alpha, x):
    """d x / d alpha for Gamma(alpha, 1) samples ``x``, torch's approximation elementwise."""
    b = backend_of(alpha)
    a_host = to_host(alpha).astype(np.float64)     # host: torch's scalar CPU kernel
    x_host = to_host(x).astype(np.float64)         # host: torch's scalar CPU kernel
    a_host, x_host = np.broadcast_arrays(a_host, x_host)
    out = [_standard_gamma_grad_one(a, xx)
           for a, xx in zip(a_host.ravel().tolist(), x_host.ravel().tolist())]
    host = np.array(out, dtype=np.float64).reshape(a_host.shape)     # host: the kernel's result
    return b.asarray(host).astype(alpha.dtype)


class StandardGamma(Function):
    node_name = "StandardGammaBackward0"

    @staticmethod
    def forward(ctx, alpha):
        a = alpha._array
        if a.dtype not in (np.float32, np.float64):
            raise NotImplementedError("\"gamma_cpu\" not implemented for '%s'"
                                      % scalar_type_name(a.dtype))
        values = _gen()._gamma(to_host(a).ravel().tolist(), a.dtype == np.float32)
        tiny = np.finfo(a.dtype).tiny
        host = np.maximum(np.array(values, dtype=np.float64).astype(a.dtype), tiny)  # host: draw
        out = Tensor._wrap(backend_of(a).asarray(host.reshape(a.shape)))
        ctx.save_for_backward(alpha, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        alpha, x = ctx.saved_tensors
        return grad_output * Tensor._wrap(_standard_gamma_grad_arr(alpha._array, x._array))


def _standard_gamma(alpha):
    """Gamma(alpha, 1) samples, differentiable in ``alpha`` (torch._standard_gamma)."""
    return StandardGamma.apply(alpha)


def _standard_gamma_grad(alpha, x):
    return Tensor._wrap(_standard_gamma_grad_arr(alpha._array, x._array))


_LIBM32 = {}


def _libm32(name):
    """The C library's float32 function ``name`` (``logf``, ``powf``: torch's ``std::log`` and
    ``std::pow`` of floats); NumPy's float32 ufuncs can differ in the last bit."""
    fn = _LIBM32.get(name)
    if fn is None:
        try:
            import ctypes
            import ctypes.util
            c = getattr(ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6"), name)
            c.restype = ctypes.c_float
            c.argtypes = [ctypes.c_float] * (2 if name == "powf" else 1)

            def fn(*args, c=c):
                return np.float32(c(*(float(v) for v in args)))
        except (OSError, AttributeError):       # (no C library to call: NumPy's)
            fn = np.power if name == "powf" else getattr(np, name[:-1])   # host: scalars
        _LIBM32[name] = fn
    return fn


def _cmath(f):
    """(log, pow) in the arithmetic of ``f``: float32's C functions, else Python's (glibc's)."""
    if f is np.float32:
        return _libm32("logf"), _libm32("powf")
    return math.log, math.pow


_PSI_10 = 2.25175258906672110764
_DIGAMMA_A = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
              -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
              8.33333333333333333333E-2)


def _digamma_one(x, f):
    """torch's ``digamma_one<scalar_t, double>`` for a ``scalar_t`` (``f``) value ``x``."""
    log, _ = _cmath(f)
    if x == 0:
        return f(math.inf)
    additional = 0.0
    if x < 0:
        if x == math.floor(x):
            return f(math.inf)
        pi = f(math.pi)
        additional = float(-pi / f(math.tan(pi * x)))
        x = f(1) - x
    result = 0.0
    while x < 10:
        result -= float(f(1) / x)
        x = x + f(1)
    if x == 10:
        return f(result + _PSI_10 + additional)
    y = 0.0
    if x < 1.0e17:
        z = 1.0 / float(x * x)
        poly = 0.0
        for c in _DIGAMMA_A:
            poly = poly * z + c
        y = z * poly
    return f(result + float(log(x)) - float(f(0.5) / x) - y + additional)


def _beta_grad_alpha_small(x, alpha, beta, f):
    log, pow_ = _cmath(f)
    factor = _digamma_one(alpha, f) - _digamma_one(alpha + beta, f) - f(log(x))
    numer = f(1)
    series = numer / alpha * (factor + f(1) / alpha)
    for i in range(1, 11):
        ci = f(i)
        numer *= (ci - beta) * x / ci
        denom = alpha + ci
        series += numer / denom * (factor + f(1) / denom)
    result = x * f(pow_(f(1) - x, -beta)) * series
    return f(0) if result != result else result


def _beta_grad_beta_small(x, alpha, beta, f):
    _, pow_ = _cmath(f)
    factor = _digamma_one(alpha + beta, f) - _digamma_one(beta, f)
    numer, betas, dbetas, series = f(1), f(1), f(0), factor / alpha
    for i in range(1, 9):
        ci = f(i)
        numer *= -x / ci
        dbetas = dbetas * (beta - ci) + betas
        betas = betas * (beta - ci)
        series += numer / (alpha + ci) * (dbetas + factor * betas)
    result = -f(pow_(f(1) - x, f(1) - beta)) * series
    return f(0) if result != result else result


def _beta_grad_alpha_mid(x, alpha, beta):
    total = alpha + beta
    mean = alpha / total
    std = math.sqrt(alpha * beta / (total + 1)) / total
    if mean - 0.1 * std <= x <= mean + 0.1 * std:
        poly = (47 * x * (beta * beta) * (beta * beta) + alpha * (
                (43 + 20 * (16 + 27 * beta) * x) * (beta * beta) * beta + alpha * (
                    3 * (59 + 180 * beta - 90 * x) * (beta * beta) + alpha * (
                        (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (
                            8 * (1 - x) * (135 * beta - 11))))))
        prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
        prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
        return prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / math.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha))
                * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta)
    axbx = alpha * (x - 1) + beta * x
    term1_den = math.sqrt(2 * alpha / beta) * total ** 1.5 * axbx * axbx
    term1 = term1_num / term1_den
    term2 = 0.5 * math.log(alpha / (total * x))
    term3_num = math.sqrt(8 * alpha * beta / total)
    term3_den = beta * x + alpha * (x - 1)
    term3 = term3_num / term3_den
    term4_base = (beta * math.log(beta / (total * (1 - x)))
                  + alpha * math.log(alpha / (total * x)))
    term4 = term4_base ** -1.5
    term1234 = term1 + term2 * (term3 + (term4 if x < mean else -term4))
    return stirling * prefactor * term1234


_DIRICHLET_C = (
    (((1.003668233, -0.01061107488, -0.0657888334, 0.01201642863),
      (0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033),
      (-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013)),
     ((0.221950385, -0.3187676331, 0.01799915743, 0.01074823814),
      (-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057),
      (0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05)),
     ((-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565),
      (0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181),
      (0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05))),
    (((1, -0.02924021934, -0.04438342661, 0.007285809825),
      (0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521),
      (-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149)),
     ((0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273),
      (0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956),
      (-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05)),
     ((0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05),
      (0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05),
      (-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06))))


def _dirichlet_grad_one(x, alpha, total, f):
    """torch's ``dirichlet_grad_one`` (float64): the scaled reparameterised gradient of a
    Beta(alpha, total - alpha) sample ``x``: Taylor series near 0 and 1, Rice's saddle point
    expansion for large parameters, else a rational correction of an analytic approximation."""
    x, alpha, total = f(x), f(alpha), f(total)
    beta = total - alpha
    boundary = total * x * (f(1) - x)
    if x <= 0.5 and boundary < 2.5:
        return float(_beta_grad_alpha_small(x, alpha, beta, f))
    if x >= 0.5 and boundary < 0.75:
        return -float(_beta_grad_beta_small(f(1) - x, beta, alpha, f))
    x, alpha, total = float(x), float(alpha), float(total)
    if alpha > 6 and beta > 6:
        return _beta_grad_alpha_mid(x, alpha, total - alpha)
    u = math.log(x)
    a = math.log(alpha) - u
    b = math.log(total) - a
    pow_u = (1.0, u, u * u)
    pow_a = (1.0, a, a * a)
    p = q = 0.0
    for i in range(3):
        for j in range(3):
            ua = pow_u[i] * pow_a[j]
            c0, c1 = _DIRICHLET_C[0][i][j], _DIRICHLET_C[1][i][j]
            p += ua * (c0[0] + b * (c0[1] + b * (c0[2] + b * c0[3])))
            q += ua * (c1[0] + b * (c1[1] + b * (c1[2] + b * c1[3])))
    approx = x * float(_digamma_one(f(total), f) - _digamma_one(f(alpha), f)) / (total - alpha)
    return p / q * approx


def _dirichlet_grad(x, alpha, total):
    """``-(d/d alpha) cdf(x; alpha, beta) / pdf(x; alpha, beta) / (1 - x)`` for the
    Beta(alpha_i, total - alpha_i) marginal, ``beta`` held (torch._dirichlet_grad; the
    Dirichlet's backward turns it into d x / d alpha), in torch's approximation."""
    b = backend_of(alpha._array)
    f = np.float32 if alpha._array.dtype == np.float32 else float
    hosts = np.broadcast_arrays(*(to_host(t._array).astype(np.float64)   # host: CPU kernel
                                  for t in (x, alpha, total)))
    with np.errstate(all="ignore"):
        out = [_dirichlet_grad_one(xx, a, t, f)
               for xx, a, t in zip(*(h.ravel().tolist() for h in hosts))]
    host = np.array(out, dtype=np.float64).reshape(hosts[0].shape)   # host: the kernel's result
    return Tensor._wrap(b.asarray(host).astype(alpha._array.dtype))


def _sample_dirichlet(concentration):
    """Dirichlet samples: float64 Gamma draws (torch's ``_sample_dirichlet``), normalised over
    the last dimension and clamped into (0, 1)."""
    a = concentration._array
    d = a.dtype
    g = np.array(_gen()._gamma(to_host(a).ravel().tolist(), False),     # host: the draw
                 dtype=np.float64).reshape(a.shape)
    g = np.maximum(g, np.finfo(np.float64).tiny)     # host: the draw
    ratio = (g / g.sum(-1, keepdims=True)).astype(d)                   # host: the draw
    top = np.nextafter(d.type(1), d.type(0))
    ratio = np.minimum(top, np.maximum(np.finfo(d).tiny, ratio))    # host: the draw
    return Tensor._wrap(backend_of(a).asarray(ratio))
