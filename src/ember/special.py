"""``ember.special``: special functions, as ``torch.special`` (kernels from SciPy's
``scipy.special`` on each device)."""
import math

from . import dtypes as _dt
from .autograd.function import Function
from .backend import quiet as _quiet
from .ops.activation import log_softmax as _log_softmax, softmax as _softmax
from .ops.arithmetic import check_number_or_tensor as _check_number_or_tensor, xlogy
from .ops.comparison import where
from .ops.reduction import logsumexp
from .ops.special import (digamma, i0, igamma, igammac, lgamma, mvlgamma, polygamma, sinc,
                          scipy_unary as _scipy_unary, unsupported as _unsupported,
                          unsupported_half as _unsupported_half, _sp, _I1)
from .ops.arithmetic import reciprocal
from .ops.unary import (erf, erfc, erfinv, exp, exp2, expm1, log, log1p, logit, round,
                        sigmoid as expit, sign)
from .ops._util import (binary_arrays, get_array_module, needs_float, scalar_like, sum_to,
                        xp_of)
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
    """``xlog1py`` and ``zeta``: SciPy kernels of two tensors with torch's gradients.
    ``variant``: 0 for two tensors, 1 (2) for a number ``input`` (``other``) given as a 0-d
    tensor, ``number`` that number (torch's ``self_scalar``/``other_scalar`` overloads)."""

    @staticmethod
    def forward(ctx, a, b, kind, variant=0, number=None):
        aa, ba = binary_arrays(kind, a, b)
        _unsupported(aa, kind + "_cpu", half=kind == "zeta")
        if _dt.kind(aa.dtype) not in "fc":
            d = _dt.get_default_dtype().np
            aa, ba = aa.astype(d), ba.astype(d)
        with _quiet():
            res = getattr(_sp(aa), kind)(aa, ba)
        if kind == "zeta":      # (torch's series gives NaN at q = inf)
            res = xp_of(a).where((ba == math.inf) & (aa > 1), res.dtype.type(math.nan), res)
        ctx.kind, ctx.variant, ctx.number = kind, variant, number
        ctx.set_node_name("SpecialXlog1PyBackward%d" % variant if kind == "xlog1py" else
                          "SpecialZetaBackward%d" % variant)
        if variant:
            ctx.mark_edges(1 if variant == 1 else 0)
        ctx.save_for_backward(a, b)
        return Tensor._wrap(xp_of(a).asarray(res).astype(aa.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        ga = gb = None
        need = ctx.needs_input_grad
        if ctx.kind == "zeta":
            if need[0] and ctx.variant != 1:
                raise NotImplementedError("the derivative for 'zeta' is not implemented.")
            if need[1] and ctx.variant != 2:
                gb = _zeta_other_grad(ctx, grad_output, a, b)
        else:
            # torch's formulas: xlog1py(grad, other), 0 where input is 0 and other <= -1 (for a
            # number other: where input is 0 unless other > -1); grad * input / (other + 1)
            if need[0] and ctx.variant != 1:
                ga = xlog1py(grad_output, b if ctx.variant != 2 else ctx.number)
                if ctx.variant == 2:
                    if not ctx.number > -1:
                        ga = where(a == 0, 0.0, ga)
                else:
                    ga = where((a == 0) & (b <= -1), 0.0, ga)
            if need[1] and ctx.variant != 2:
                gb = grad_output * (a if ctx.variant != 1 else ctx.number) / (b + 1)
        if ga is not None:
            ga = sum_to(ga, ctx._input_meta(0)[0])
        if gb is not None:
            gb = sum_to(gb, ctx._input_meta(1)[0])
        return ga, gb, None, None, None


def _zeta_other_grad(ctx, grad_output, a, b):
    """torch's ``grad * -self * zeta(self + 1., other)`` (a number ``self`` in double)."""
    if ctx.variant != 1:
        return grad_output * -a * zeta(a + 1.0, b)
    c = ctx.number
    if isinstance(c, bool):
        raise RuntimeError("torch boolean negative, the `-` operator, is not supported.")
    return grad_output * -c * zeta(c + 1.0, b)


def _pair(op, input, other):
    """The two arguments as tensors, and torch's overload: 0 for two tensors, 1 (2) for a number
    ``input`` (``other``), with that number."""
    _check_number_or_tensor(op, input, other)
    if not isinstance(input, Tensor):
        return scalar_like(input, other, floating=True), other, 1, input
    if not isinstance(other, Tensor):
        return input, scalar_like(other, input, floating=True), 2, other
    return input, other, 0, None


def xlog1py(input, other, *, out=None):
    """``input * log1p(other)`` (0 where ``input`` is 0)."""
    a, b, variant, number = _pair("special_xlog1py", input, other)
    return _Binary.apply(a, b, "xlog1py", variant, number)


def zeta(input, other, *, out=None):
    """The Hurwitz zeta function ``sum_k (k + other) ** -input``."""
    a, b, variant, number = _pair("special_zeta", input, other)
    return _Binary.apply(a, b, "zeta", variant, number)


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
airy_ai = _no_grad_kernel("airy_ai", lambda sp, x: _airy_ai(get_array_module(x), x))

# Cephes' rational fits of Ai: for x >= 2.09 (AN/AD in 1/zeta) and x < -2.09 (AFN/AFD, AGN/AGD
# in 1/zeta**2), as torch's ``airy_ai_forward``
_AIRY_AN = (3.46538101525629032477e-01, 1.20075952739645805542e+01, 7.62796053615234516538e+01,
            1.68089224934630576269e+02, 1.59756391350164413639e+02, 7.05360906840444183113e+01,
            1.40264691163389668864e+01, 9.99999999999999995305e-01)
_AIRY_AD = (5.67594532638770212846e-01, 1.47562562584847203173e+01, 8.45138970141474626562e+01,
            1.77318088145400459522e+02, 1.64234692871529701831e+02, 7.14778400825575695274e+01,
            1.40959135607834029598e+01, 1.00000000000000000470e+00)
_AIRY_AFN = (-1.31696323418331795333e-01, -6.26456544431912369773e-01,
             -6.93158036036933542233e-01, -2.79779981545119124951e-01,
             -4.91900132609500318020e-02, -4.06265923594885404393e-03,
             -1.59276496239262096340e-04, -2.77649108155232920844e-06,
             -1.67787698489114633780e-08)
_AIRY_AFD = (1.33560420706553243746e+01, 3.26825032795224613948e+01, 2.67367040941499554804e+01,
             9.18707402907259625840e+00, 1.47529146771666414581e+00, 1.15687173795188044134e-01,
             4.40291641615211203805e-03, 7.54720348287414296618e-05, 4.51850092970580378464e-07)
_AIRY_AGN = (1.97339932091685679179e-02, 3.91103029615688277255e-01, 1.06579897599595591108e+00,
             9.39169229816650230044e-01, 3.51465656105547619242e-01, 6.33888919628925490927e-02,
             5.85804113048388458567e-03, 2.82851600836737019778e-04, 6.98793669997260967291e-06,
             8.11789239554389293311e-08, 3.41551784765923618484e-10)
_AIRY_AGD = (9.30892908077441974853e+00, 1.98352928718312140417e+01, 1.55646628932864612953e+01,
             5.47686069422975497931e+00, 9.54293611618961883998e-01, 8.64580826352392193095e-02,
             4.12656523824222607191e-03, 1.01259085116509135510e-04, 1.17166733214413521882e-06,
             4.91834570062930015649e-09)


def _horner(coeffs, v):
    """The polynomial with ``coeffs`` (highest power first) at ``v``, in ``v``'s dtype."""
    acc = v * 0
    for c in coeffs:
        acc = acc * v + v.dtype.type(c)
    return acc


def _airy_ai(xp, x):
    """torch's ``airy_ai_forward`` in ``x``'s dtype: Cephes' asymptotic fits for |x| >= 2.09,
    its power series between (NaN at +-inf, 0 above 103.892)."""
    t = x.dtype.type
    one, two, three = t(1), t(2), t(3)
    sqpii = t(5.64189583547756286948e-01)
    with _quiet():
        # x < -2.09: ai = sqpii / |x|**(1/4) * (sin(w) (1 + z**2 afn/afd) - cos(w) z agn/agd)
        neg = x < t(-2.09)
        xn = xp.where(neg, x, t(-3))
        w0 = t(-2) * xn * xp.sqrt(-xn) / three
        z = one / w0
        zz = z * z
        w = w0 + t(0.25) * t(math.pi)
        ai_neg = sqpii / xp.sqrt(xp.sqrt(-xn)) * (
            _elem(xp, "sin", w) * (one + zz * _horner(_AIRY_AFN, zz) / _horner(_AIRY_AFD, zz)) -
            _elem(xp, "cos", w) * (z * _horner(_AIRY_AGN, zz) / _horner(_AIRY_AGD, zz)))
        # x >= 2.09: ai = sqpii * an/ad / (2 x**(1/4) exp(zeta))
        pos = x >= t(2.09)
        xq = xp.where(pos, x, t(3))
        zeta = two * xq * xp.sqrt(xq) / three
        iz = one / zeta
        ai_pos = sqpii * (_horner(_AIRY_AN, iz) / _horner(_AIRY_AD, iz)) / (
            two * xp.sqrt(xp.sqrt(xq)) * _elem(xp, "exp", zeta))
        # the power series c1 f(x) - c2 g(x), each element until its term is below 2**-53
        mid = ~(neg | pos)
        xs = xp.where(mid, x, t(0))
        f, g, k, m, n = one + xs * 0, xs, one, one + xs * 0, xs
        z3 = xs * xs * xs
        live = mid | xp.isnan(x)
        for _ in range(200):
            m2 = m * z3 / (k + one) / (k + two)
            n2 = n * z3 / (k + two) / (k + three)
            f2, g2 = f + m2, g + n2
            m, n = xp.where(live, m2, m), xp.where(live, n2, n)
            f, g = xp.where(live, f2, f), xp.where(live, g2, g)
            k = k + three
            live = live & (abs(m / f) > t(1.11022302462515654042e-16))
            if not bool(live.any()):
                break
        ai_mid = t(0.355028053887817239260) * f - t(0.258819403792806798405) * g
    res = xp.where(neg, ai_neg, xp.where(pos, ai_pos, ai_mid))
    res = xp.where(x > t(103.892), t(0), res)
    return xp.where(xp.isinf(x), t(math.nan), res)


def _polynomial(kind):
    """``P_n(x)`` for integral ``n`` (a float ``n`` truncated; 0 for ``n < 0`` and for a NaN or
    infinite ``n``), not differentiable, as torch's ``*_polynomial_*``."""
    def fn(input, n, *, out=None):
        _check_poly_args(kind, input, n)
        x_t, n_t = _pair(kind, input, n)[:2]
        xa, na = binary_arrays(kind, x_t, n_t)
        _unsupported(xa, kind + "_cpu", half=True)
        if xa.dtype.kind != "f":
            d = _dt.get_default_dtype().np
            xa = xa.astype(d)
        xp = xp_of(x_t)
        na = xp.asarray(na).astype(xa.dtype, copy=False)    # (torch casts n to x's dtype first)
        xa, na = xp.broadcast_arrays(xa, na)
        # the degree as torch's int64 cast of it: truncated; a NaN, infinite or out-of-range
        # one becomes negative (so the result is 0)
        ok = xp.isfinite(na) & (abs(na) < 2.0 ** 63)
        ni = xp.where(ok, na, -1).astype("int64")
        with _quiet():
            res = _POLY[kind](xp, xa, ni)
        return Tensor._wrap(xp.asarray(res).astype(xa.dtype, copy=False))
    fn.__name__ = kind
    return fn


def _check_poly_args(kind, x, n):
    """torch's TypeError for a call matching none of its (Tensor|Number, Tensor|Number)
    overloads."""
    def number(v):
        return isinstance(v, (int, float, complex))
    if (isinstance(x, Tensor) and (isinstance(n, Tensor) or number(n))) or (
            number(x) and isinstance(n, Tensor)):
        return
    got = ", ".join("Tensor" if isinstance(v, Tensor) else type(v).__name__ for v in (x, n))
    raise TypeError(
        "special_%s() received an invalid combination of arguments - got (%s), but expected "
        "one of:\n * (Tensor x, Tensor n, *, Tensor out = None)\n * (Number x, Tensor n, *, "
        "Tensor out = None)\n * (Tensor x, Number n, *, Tensor out = None)\n" % (kind, got))


def _recurrence(xp, x, n, q0, step):
    """torch's three-term recurrence ``q_{k+1} = step(x, q_k, q_{k-1}, k)`` from ``p = 1``,
    ``q = q0`` run ``n - 1`` times per element (only elements with ``n >= 2`` matter)."""
    out = xp.array(q0, copy=True, order="C")     # (written through its flat view below)
    idx = xp.nonzero((n >= 2).ravel())[0]
    if not idx.size:
        return out
    out_flat = out.reshape(-1)
    xs, ns = x.reshape(-1)[idx], n.reshape(-1)[idx]
    p, q = xp.ones_like(xs), q0.reshape(-1)[idx]
    j = 1
    while idx.size:
        stop = min(j + 64, int(ns.max()))      # compact the live elements every 64 steps
        for jj in range(j, stop):
            live = jj < ns
            r = step(xp, xs, q, p, jj)
            p, q = xp.where(live, q, p), xp.where(live, r, q)
        j = stop
        # (a NaN stays NaN: torch stops its loop there)
        done = (ns <= j) | xp.isnan(q)
        out_flat[idx[done]] = q[done]
        keep = ~done
        idx, xs, ns, p, q = idx[keep], xs[keep], ns[keep], p[keep], q[keep]
    return out


def _fms(xp, a, q, c):
    """``a * q - c`` rounded once, as the fused multiply-add in torch's compiled recurrences
    (so ``a * q`` past the largest float minus an infinite ``c`` is ``-inf``, not NaN)."""
    if a.dtype.itemsize == 4:       # (exact in float64, then rounded)
        return (a.astype("float64") * q.astype("float64") - c.astype("float64")).astype(a.dtype)
    prod = a * q
    finite = (abs(a) < math.inf) & (abs(q) < math.inf)
    res = xp.where(finite & (abs(prod) == math.inf), ((a * 0.5) * q - c * 0.5) * 2, prod - c)
    return xp.where(finite & (abs(c) == math.inf), -c, res)


def _elem(xp, fn, v):
    """``fn(v)`` correctly rounded for float32 (as C's ``acosf``, ``sinf``...)."""
    if v.dtype.itemsize == 4:
        return getattr(xp, fn)(v.astype("float64")).astype(v.dtype)
    return getattr(xp, fn)(v)


def _cheb_step(xp, xs, q, p, j):
    return _fms(xp, xs + xs, q, p)


def _nf(n, x):
    """The int64 degree as a number of ``x``'s dtype (C++'s int-to-float conversion)."""
    return n.astype(x.dtype)


def _sign_even(xp, n, value):
    """``value`` for even ``n``, ``-value`` for odd ``n``."""
    return xp.where(n % 2 == 0, value, -value)


def _chebyshev(kind, shifted):
    """torch's ``chebyshev_polynomial_{t,u,v,w}_forward`` (``shifted``: of ``2x - 1``)."""
    def ev(xp, x, n):
        one = x.dtype.type(1)
        y = x + x - one if shifted else x
        nf = _nf(n, x)
        q0 = {"t": y, "u": y + y, "v": y + y - one, "w": y + y + one}[kind]
        res = _recurrence(xp, y, n, q0, _cheb_step)
        res = xp.where(n == 1, q0, res)
        res = xp.where(n == 0, one, res)
        cut = {"t": 6, "u": 6 if shifted else 8, "v": 6 if shifted else 8,
               "w": 4 if shifted else 8}[kind]
        inner = (n > cut) & (abs(y) < one)
        a = _elem(xp, "arccos", xp.where(inner, y, 0))
        n1, twon1 = nf + one, nf + nf + one
        if kind == "t":
            closed = _elem(xp, "cos", nf * a)
        elif kind == "u":
            s = _elem(xp, "sin", a)
            closed = xp.where(s != 0, _elem(xp, "sin", n1 * a) / xp.where(s != 0, s, one),
                              n1 * _elem(xp, "cos", n1 * a) / y)
        elif kind == "v":
            closed = xp.where(_elem(xp, "sin", a / 2) != one,
                              _elem(xp, "cos", (nf + 0.5) * a) / _elem(xp, "cos", a / 2),
                              _sign_even(xp, n, twon1))
        else:
            h = _elem(xp, "sin", a / 2)
            edge = _sign_even(xp, n, one) if shifted else xp.where(
                x > 0, twon1, _sign_even(xp, n, one))
            closed = xp.where(_elem(xp, "cos", a / 2) != one, _elem(xp, "sin", (nf + 0.5) * a) /
                              xp.where(h != 0, h, one), edge)
        res = xp.where(inner, closed, res)
        # the end points (torch tests x == 0 and x == 1 for the shifted ones, |x| == 1 else)
        if shifted:
            at_hi, at_lo = x == one, x == 0
        else:
            at_hi, at_lo = x == one, x == -one
        hi = {"t": one, "u": n1, "v": one, "w": twon1}[kind]
        lo = {"t": _sign_even(xp, n, one), "u": _sign_even(xp, n, n1),
              "v": _sign_even(xp, n, twon1), "w": _sign_even(xp, n, one)}[kind]
        res = xp.where(at_lo, lo, xp.where(at_hi, hi, res))
        return xp.where(n < 0, 0, res)
    return ev


def _hermite(physicists):
    """torch's ``hermite_polynomial_h_forward`` / ``hermite_polynomial_he_forward``."""
    def ev(xp, x, n):
        one = x.dtype.type(1)
        limit = 128 if x.dtype.itemsize == 4 else 512
        if physicists:
            q0 = x + x
            def step(xp, xs, q, p, j):
                return _fms(xp, xs + xs, q, (2 * j) * p)
        else:
            q0 = x
            def step(xp, xs, q, p, j):
                return _fms(xp, xs, q, j * p)
        res = _recurrence(xp, x, xp.where(n > limit, 0, n), q0, step)
        res = xp.where(n > limit, math.nan, res)
        res = xp.where(n == 1, q0, res)
        res = xp.where(n == 0, one, res)
        return xp.where(n < 0, 0, res)
    return ev


def _laguerre(xp, x, n):
    """torch's ``laguerre_polynomial_l_forward``."""
    one = x.dtype.type(1)
    q0 = one - x

    def step(xp, xs, q, p, k):
        return _fms(xp, (k + k) + (one - xs), q, k * p) / (k + 1)
    res = _recurrence(xp, x, n, q0, step)
    res = xp.where(n == 1, q0, res)
    res = xp.where((n == 0) | (x == 0), one, res)
    return xp.where(n < 0, 0, res)


def _legendre(xp, x, n):
    """torch's ``legendre_polynomial_p_forward``."""
    one = x.dtype.type(1)

    def step(xp, xs, q, p, k):
        return _fms(xp, (k + k + 1) * xs, q, k * p) / (k + 1)
    res = _recurrence(xp, x, n, x, step)
    res = xp.where(n == 1, x, res)
    res = xp.where(n == 0, one, res)
    res = xp.where(abs(x) == one, xp.where((x > 0) | (n % 2 == 0), one, -one), res)
    return xp.where(n < 0, 0, res)


_POLY = {"hermite_polynomial_h": _hermite(True), "hermite_polynomial_he": _hermite(False),
         "laguerre_polynomial_l": _laguerre, "legendre_polynomial_p": _legendre}
for _k in "tuvw":
    _POLY["chebyshev_polynomial_" + _k] = _chebyshev(_k, False)
    _POLY["shifted_chebyshev_polynomial_" + _k] = _chebyshev(_k, True)


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
from .ops.unary import erfc, erfinv, exp2, expm1, log1p, logit  # noqa: E402,F401,F811
from .ops.unary import RoundDecimals as _RoundDecimals  # noqa: E402
from .ops.unary import round as _unary_round  # noqa: E402
from .ops._util import not_implemented_for  # noqa: E402


def round(input, *, decimals=0, out=None):
    """``torch.special.round``: ``torch.round``, refusing integer and bool tensors."""
    not_implemented_for(input._array, "round_cpu" if decimals else "round_vml_cpu", "iub")
    if out is None and input._array.dtype.kind != "c":
        return _RoundDecimals.apply(input, decimals)    # (torch's round.decimals, even for 0)
    return _unary_round(input, decimals=decimals, out=out)
from .ops.reduction import logsumexp  # noqa: E402,F401,F811
from .ops.arithmetic import xlogy as _xlogy  # noqa: E402


def xlogy(input, other, *, out=None):
    """``input * log(other)`` (0 where ``input`` is 0 and ``other`` is not NaN)."""
    _check_number_or_tensor("special_xlogy", input, other)
    return _xlogy(input, other, out=out)


from .ops.linalg import _add_out  # noqa: E402

_add_out(globals(), __all__, "special_")
