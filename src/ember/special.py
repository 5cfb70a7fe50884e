"""``ember.special``: special functions, as ``torch.special`` (kernels from SciPy's
``scipy.special`` on each device)."""
import math

from . import dtypes as _dt
from .autograd.function import Function
from .backend import quiet as _quiet
from .ops.activation import log_softmax as _log_softmax, softmax as _softmax
from .ops.arithmetic import xlogy
from .ops.comparison import where
from .ops.reduction import logsumexp
from .ops.special import (digamma, i0, igamma, igammac, lgamma, mvlgamma, polygamma, sinc,
                          scipy_unary as _scipy_unary, unsupported as _unsupported,
                          unsupported_half as _unsupported_half, _sp, _I1)
from .ops.arithmetic import reciprocal
from .ops.unary import (erf, erfc, erfinv, exp, exp2, expm1, log, log1p, logit, round,
                        sigmoid as expit, sign)
from .ops._util import needs_float, scalar_like, sum_to, xp_of, binary_arrays
from .tensor import Tensor

__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
           "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2",
           "expit", "expm1", "gammainc", "gammaincc", "gammaln", "hermite_polynomial_h",
           "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
           "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp",
           "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
           "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
           "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
           "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "sinc", "softmax",
           "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]

_SQRT_2PI = math.sqrt(2 * math.pi)
_SQRT1_2 = 1 / math.sqrt(2)
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)

gammaln = lgamma
psi = digamma
gammainc = igamma
gammaincc = igammac

SpecialErfcx = _scipy_unary(
    "SpecialErfcx", "erfcx", "SpecialErfcxBackward0",
    lambda g, a, out: g * (2 * a * out - _TWO_OVER_SQRT_PI), "erfcx_cpu", half=True)
SpecialI0e = _scipy_unary("SpecialI0E", "i0e", "SpecialI0EBackward0",
                          lambda g, a, out: g * (i1e(a) - sign(a) * out), "i0e_cpu")


def _i1e_grad(g, a, out):
    """torch's ``i1e_backward``: 0.5 where ``|a|`` is below eps (NaN-free ``where``)."""
    _unsupported_half(a._array, "i1e_backward")
    eps = _dt.finfo(_dt.from_numpy_dtype(a._array.dtype)).eps
    not_tiny = abs(a) > eps
    safe = where(not_tiny, a, eps)
    return g * where(not_tiny, i0e(safe) - out * (sign(safe) + reciprocal(safe)), 0.5)


SpecialI1e = _scipy_unary("SpecialI1E", "i1e", "SpecialI1EBackward0", _i1e_grad, "i1e_cpu")
SpecialNdtri = _scipy_unary("SpecialNdtri", "ndtri", "SpecialNdtriBackward0",
                            lambda g, a, out: g * _SQRT_2PI * exp(out * out / 2), "ndtri_cpu",
                            half=True)
SpecialLogNdtr = _scipy_unary(
    "SpecialLogNdtr", "log_ndtr", "SpecialLogNdtrBackward0",
    lambda g, a, out: g * exp(-(a * a) / 2 - out) / _SQRT_2PI, "log_ndtr_cpu", half=True)
SpecialEntr = _scipy_unary("SpecialEntr", "entr", "SpecialEntrBackward0",
                           lambda g, a, out: g * -(log(a) + 1), "entr_cpu")


def _no_grad_kernel(name, kernel):
    """A function of one tensor whose result does not require grad (torch's bessel_* ...)."""
    def fn(input, *, out=None):
        _unsupported(input._array, name + "_cpu", half=True)
        x = needs_float(input._array)
        with _quiet():
            res = kernel(_sp(x), x)
        return Tensor._wrap(xp_of(input).asarray(res).astype(x.dtype, copy=False))
    fn.__name__ = name
    return fn


def erfcx(input, *, out=None):
    """The scaled complementary error function ``exp(x**2) * erfc(x)``."""
    return SpecialErfcx.apply(input)


def i0e(input, *, out=None):
    """The exponentially scaled ``i0``: ``exp(-|x|) * i0(x)``."""
    return SpecialI0e.apply(input)


def i1(input, *, out=None):
    """The modified Bessel function of the first kind of order 1."""
    return _I1.apply(input)


def i1e(input, *, out=None):
    """The exponentially scaled ``i1``: ``exp(-|x|) * i1(x)``."""
    return SpecialI1e.apply(input)


class _MulScalar(Function):
    """``a * c`` for a Python number ``c`` (torch's ``mul(Tensor, Scalar)`` node)."""

    node_name = "MulBackward1"

    @staticmethod
    def forward(ctx, a, c):
        ctx.c = c
        arr = needs_float(a._array)
        return Tensor._wrap(arr * arr.dtype.type(c))

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.c, None


class _AddScalar(Function):
    """``a + c`` for a Python number ``c`` (torch's ``add(Tensor, Scalar)`` node)."""

    node_name = "AddBackward1"

    @staticmethod
    def forward(ctx, a, c):
        arr = a._array
        return Tensor._wrap(arr + arr.dtype.type(c))

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None


def ndtr(input, *, out=None):
    """The standard normal CDF ``(1 + erf(x / sqrt(2))) / 2``."""
    return _MulScalar.apply(_AddScalar.apply(erf(_MulScalar.apply(input, _SQRT1_2)), 1), 0.5)


def ndtri(input, *, out=None):
    """The inverse of ``ndtr``."""
    return SpecialNdtri.apply(input)


def log_ndtr(input, *, out=None):
    """``log(ndtr(input))``, accurate in the left tail."""
    return SpecialLogNdtr.apply(input)


def entr(input, *, out=None):
    """``-x * log(x)`` (0 at 0, -inf for x < 0)."""
    return SpecialEntr.apply(input)


def multigammaln(input, p, *, out=None):
    """The multivariate log-gamma of dimension ``p`` (``torch.mvlgamma``)."""
    return mvlgamma(input, p)


def softmax(input, dim, *, dtype=None):
    """``exp(x) / sum(exp(x))`` along ``dim``."""
    return _softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """``log(softmax(input, dim))``, computed stably."""
    return _log_softmax(input, dim, dtype=dtype)


class _Binary(Function):
    """``xlog1py`` and ``zeta``: SciPy kernels of two tensors with torch's gradients."""

    @staticmethod
    def forward(ctx, a, b, kind):
        aa, ba = binary_arrays(kind, a, b)
        _unsupported(aa, kind + "_cpu", half=kind == "zeta")
        if aa.dtype.kind not in "fc":
            d = _dt.get_default_dtype().np
            aa, ba = aa.astype(d), ba.astype(d)
        with _quiet():
            res = getattr(_sp(aa), kind)(aa, ba)
        if kind == "zeta":      # (torch's series gives NaN at q = inf)
            res = xp_of(a).where((ba == math.inf) & (aa > 1), math.nan, res)
        ctx.kind = kind
        ctx.set_node_name("SpecialXlog1PyBackward0" if kind == "xlog1py" else
                          "SpecialZetaBackward0")
        ctx.save_for_backward(a, b)
        return Tensor._wrap(xp_of(a).asarray(res).astype(aa.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        ga = gb = None
        if ctx.kind == "zeta":
            if ctx.needs_input_grad[0]:
                raise NotImplementedError("the derivative for 'zeta' is not implemented.")
            gb = grad_output * -a * zeta(a + 1, b)
        else:
            if ctx.needs_input_grad[0]:
                ga = grad_output * where(a == 0, 0.0, log1p(b))
                # NOTE: torch keeps log1p(y) where x == 0 only for nan y; 0 otherwise.
                ga = where(a == 0, where(b != b, b, 0.0) * grad_output, ga)
            if ctx.needs_input_grad[1]:
                gb = grad_output * a / (b + 1)
        if ga is not None:
            ga = sum_to(ga, ctx._input_meta(0)[0])
        if gb is not None:
            gb = sum_to(gb, ctx._input_meta(1)[0])
        return ga, gb, None


def _pair(input, other):
    if not isinstance(input, Tensor):
        input = scalar_like(input, other)
    if not isinstance(other, Tensor):
        other = scalar_like(other, input)
    return input, other


def xlog1py(input, other, *, out=None):
    """``input * log1p(other)`` (0 where ``input`` is 0)."""
    return _Binary.apply(*_pair(input, other), "xlog1py")


def zeta(input, other, *, out=None):
    """The Hurwitz zeta function ``sum_k (k + other) ** -input``."""
    return _Binary.apply(*_pair(input, other), "zeta")


bessel_j0 = _no_grad_kernel("bessel_j0", lambda sp, x: sp.j0(x))
bessel_j1 = _no_grad_kernel("bessel_j1", lambda sp, x: sp.j1(x))
bessel_y0 = _no_grad_kernel("bessel_y0", lambda sp, x: sp.y0(x))
bessel_y1 = _no_grad_kernel("bessel_y1", lambda sp, x: sp.y1(x))
modified_bessel_i0 = _no_grad_kernel("modified_bessel_i0", lambda sp, x: sp.i0(x))
modified_bessel_i1 = _no_grad_kernel("modified_bessel_i1", lambda sp, x: sp.i1(x))
modified_bessel_k0 = _no_grad_kernel("modified_bessel_k0", lambda sp, x: sp.k0(x))
modified_bessel_k1 = _no_grad_kernel("modified_bessel_k1", lambda sp, x: sp.k1(x))
scaled_modified_bessel_k0 = _no_grad_kernel("scaled_modified_bessel_k0",
                                            lambda sp, x: sp.k0e(x))
scaled_modified_bessel_k1 = _no_grad_kernel("scaled_modified_bessel_k1",
                                            lambda sp, x: sp.k1e(x))
spherical_bessel_j0 = _no_grad_kernel("spherical_bessel_j0",
                                      lambda sp, x: sp.spherical_jn(0, x))
airy_ai = _no_grad_kernel("airy_ai", lambda sp, x: sp.airy(x)[0])


def _polynomial(kind):
    """``P_n(x)`` for integral ``n`` (a float ``n`` truncated; 0 for ``n < 0`` and for a NaN or
    infinite ``n``), not differentiable, as torch's ``*_polynomial_*``."""
    def fn(input, n, *, out=None):
        x_t, n_t = _pair(input, n)
        xa, na = binary_arrays(kind, x_t, n_t)
        _unsupported(xa, kind + "_cpu", half=True)
        if xa.dtype.kind != "f":
            d = _dt.get_default_dtype().np
            xa, na = xa.astype(d), na.astype(d)
        xp = xp_of(x_t)
        xa, na = xp.broadcast_arrays(xa, na)
        # torch truncates the degree to an integer; a NaN or infinite one gives 0 (SciPy would
        # loop for ever on it)
        nf = xp.where(xp.isfinite(na), xp.trunc(na), -1.0)
        with _quiet():
            res = _poly_eval(_sp(xa), xp, kind, xa.astype("float64"), nf.astype("float64"))
        res = xp.where(nf < 0, 0.0, res)
        return Tensor._wrap(xp.asarray(res).astype(xa.dtype))
    fn.__name__ = kind
    return fn


def _poly_eval(sp, xp, kind, x, n):
    ni = xp.maximum(n, 0).astype("int64")
    if kind.startswith("shifted_"):
        return _poly_eval(sp, xp, kind[len("shifted_"):], 2 * x - 1, n)
    if kind == "chebyshev_polynomial_t":
        return sp.eval_chebyt(ni, x)
    if kind == "chebyshev_polynomial_u":
        return sp.eval_chebyu(ni, x)
    if kind in ("chebyshev_polynomial_v", "chebyshev_polynomial_w"):
        prev = xp.where(ni > 0, sp.eval_chebyu(xp.maximum(ni - 1, 0), x), 0.0)
        return sp.eval_chebyu(ni, x) + (prev if kind.endswith("w") else -prev)
    if kind == "hermite_polynomial_h":
        return sp.eval_hermite(ni, x)
    if kind == "hermite_polynomial_he":
        return sp.eval_hermitenorm(ni, x)
    if kind == "laguerre_polynomial_l":
        return sp.eval_laguerre(ni, x)
    return sp.eval_legendre(ni, x)


chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t")
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u")
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v")
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w")
shifted_chebyshev_polynomial_t = _polynomial("shifted_chebyshev_polynomial_t")
shifted_chebyshev_polynomial_u = _polynomial("shifted_chebyshev_polynomial_u")
shifted_chebyshev_polynomial_v = _polynomial("shifted_chebyshev_polynomial_v")
shifted_chebyshev_polynomial_w = _polynomial("shifted_chebyshev_polynomial_w")
hermite_polynomial_h = _polynomial("hermite_polynomial_h")
hermite_polynomial_he = _polynomial("hermite_polynomial_he")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l")
legendre_polynomial_p = _polynomial("legendre_polynomial_p")

del expm1, exp2, log1p, logit, erfinv, erfc, round, logsumexp, xlogy  # (re-exported below)
from .ops.unary import erfc, erfinv, exp2, expm1, log1p, logit, round  # noqa: E402,F401,F811
from .ops.reduction import logsumexp  # noqa: E402,F401,F811
from .ops.arithmetic import xlogy  # noqa: E402,F401,F811
