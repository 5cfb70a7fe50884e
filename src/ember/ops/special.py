"""Special functions that torch also has at top level and as Tensor methods: gamma-family
(lgamma, digamma, polygamma, mvlgamma), incomplete gamma (igamma, igammac), Bessel ``i0`` and
``sinc``. The rest of ``torch.special`` lives in ``ember.special``."""
import math
import numbers

from .. import dtypes as _dt
from ..autograd.function import Function
from ..backend import backend_of
from ..backend import quiet as _quiet
from ..tensor import Tensor
from ._inplace import check_into, inplace
from .comparison import where as _where
from .complex import conj
from .reduction import sum as _sum
from .shape import unsqueeze
from .arithmetic import reciprocal
from .unary import cos, exp, log, sin
from ._util import binary_arrays, need_tensors, needs_float, sum_to, xp_of

__all__ = ["lgamma", "digamma", "polygamma", "mvlgamma", "i0", "sinc", "igamma", "igammac",
           "lgamma_", "digamma_", "polygamma_", "mvlgamma_", "i0_", "sinc_", "igamma_",
           "igammac_"]


def _sp(arr):
    return backend_of(arr).scipy("special")


def unsupported(arr, kernel, half=False):
    """torch's NotImplementedError for a kernel with no complex version (``half``: nor a Half
    or BFloat16 one): ``"kernel" not implemented for 'ComplexFloat'``."""
    kind = arr.dtype.kind
    if kernel is None:
        return
    if kind == "c" or (half and kind in "fV" and arr.dtype.itemsize == 2):
        raise NotImplementedError("\"%s\" not implemented for '%s'"
                                  % (kernel, _dt.scalar_type_name(arr.dtype)))


def scipy_unary(name, kernel, node, grad, cpu, half=False):
    """A Function for SciPy's special function ``kernel`` (a name, or ``kernel(sp, x)``) with
    backward ``grad(grad_output, input, output)`` in Tensor ops; ``cpu`` is torch's kernel name
    in its error for complex (``half``: also Half/BFloat16) inputs."""
    def forward(ctx, a):
        unsupported(a._array, cpu, half)
        x = needs_float(a._array)
        with _quiet():
            if isinstance(kernel, str):
                out = getattr(_sp(x), kernel)(x)
            else:
                out = kernel(_sp(x), x)
        out = Tensor._wrap(xp_of(a).asarray(out).astype(x.dtype, copy=False))
        ctx.save_for_backward(a, out)
        return out

    def backward(ctx, grad_output):
        a, out = ctx.saved_tensors
        return grad(grad_output, a, out)
    return type(name, (Function,), {"node_name": node, "forward": staticmethod(forward),
                                    "backward": staticmethod(backward)})


class Polygamma(Function):
    node_name = "PolygammaBackward0"

    @staticmethod
    def forward(ctx, a, n):
        unsupported(a._array, _POLYGAMMA_CPU.get(n, "polygamma"))
        x = needs_float(a._array)
        with _quiet():
            out = _polygamma_arr(x, n)
        ctx.n = n
        ctx.save_for_backward(a)
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        a, = ctx.saved_tensors
        return grad_output * polygamma(ctx.n + 1, a), None


_POLYGAMMA_CPU = {0: "digamma", 1: "trigamma"}


def _polygamma_arr(x, n):
    sp = _sp(x)
    xp = xp_of(Tensor._wrap(x))
    if n == 0:
        return xp.asarray(sp.psi(x)).astype(x.dtype, copy=False)
    if n == 1:
        return _trigamma(xp, x)
    out = xp.asarray(sp.polygamma(n, x)).astype(x.dtype, copy=False)
    return xp.where(x == math.inf, out.dtype.type(math.nan), out)     # (torch: nan at +inf)


def _trigamma(xp, x):
    """torch's ``trigamma`` kernel (reflection below 0.5, six recurrence steps, then the
    asymptotic series), in float32 for Half/Float inputs and float64 for Double, so the
    values at poles (huge, finite) and at -inf (nan) are torch's."""
    dt = x.dtype
    x = x.astype("float64" if dt.itemsize == 8 else "float32")
    c = x.dtype.type
    pi = c(math.pi)
    small = x < c(0.5)
    sin_pi_x = xp.sin(pi * x)
    result = xp.where(small, -(pi * pi) / (sin_pi_x * sin_pi_x), c(0))
    x = xp.where(small, c(1) - x, x)
    for _ in range(6):
        result = result + c(1) / (x * x)
        x = x + c(1)
    ixx = c(1) / (x * x)
    result = result + (c(1) + c(1) / (c(2) * x)
                       + ixx * (c(1 / 6) - ixx * (c(1 / 30) - ixx * c(1 / 42)))) / x
    return xp.where(small, -result, result).astype(dt, copy=False)


def _lgamma_kernel(sp, x):
    out = sp.gammaln(x)
    return xp_of(Tensor._wrap(x)).where(x == -math.inf, math.inf, out)   # (torch: +inf)


def _i1_grad(g, a, out):
    """torch's ``i1_backward``: 0.5 where ``|a|`` is below eps (NaN-free ``where``)."""
    unsupported_half(a._array, "i1_backward")
    eps = _dt.finfo(_dt.from_numpy_dtype(a._array.dtype)).eps
    not_tiny = abs(a) > eps
    safe = _where(not_tiny, a, eps)
    return g * _where(not_tiny, i0(safe) - out * reciprocal(safe), 0.5)


def unsupported_half(arr, kernel):
    """torch's NotImplementedError for a kernel with only float32/float64 versions."""
    if arr.dtype.kind != "f" or arr.dtype.itemsize == 2:
        raise NotImplementedError("\"%s\" not implemented for '%s'"
                                  % (kernel, _dt.scalar_type_name(arr.dtype)))


Lgamma = scipy_unary("Lgamma", _lgamma_kernel, "LgammaBackward0",
                     lambda g, a, out: g * digamma(a), "lgamma_vml_cpu")
Digamma = scipy_unary("Digamma", "psi", "DigammaBackward0",
                      lambda g, a, out: g * polygamma(1, a), "digamma")
I0 = scipy_unary("I0", "i0", "I0Backward0", lambda g, a, out: g * _I1.apply(a), "i0_vml_cpu")
_I1 = scipy_unary("SpecialI1", "i1", "SpecialI1Backward0", _i1_grad, "i1_cpu")


def _sinc_kernel(sp, x):
    with _quiet():
        return xp_of(Tensor._wrap(x)).sinc(x)


def _sinc_grad(g, a, out):
    # NOTE: torch's formula ((pi x) cos(pi x) - sin(pi x)) / (pi x x), in its rounding order
    pa = a * math.pi
    d = (pa * cos(pa) - sin(pa)) / (pa * a)
    return g * _where(a == 0, 0.0, conj(d))


Sinc = scipy_unary("Sinc", _sinc_kernel, "SincBackward0", _sinc_grad, None)


def _mvlgamma_args(x, p):
    """``x[..., None] + [-(p-1)/2, ..., -1/2, 0]`` (torch's order of the terms)."""
    offs = xp_of(x).arange(-p / 2 + 0.5, 0.5, 0.5, dtype=x._array.dtype)
    return unsqueeze(x, -1) + Tensor._wrap(offs)


class Mvlgamma(Function):
    """``sum_j lgamma(x - j/2) + p (p - 1) / 4 log(pi)`` over ``j < p``."""

    node_name = "MvlgammaBackward0"

    @staticmethod
    def forward(ctx, a, p):
        x = a if a._array.dtype.kind in "fV" else Tensor._wrap(needs_float(a._array))
        ctx.p = p
        ctx.save_for_backward(x)
        out = _sum(lgamma(_mvlgamma_args(x, p)), -1)._array
        return Tensor._wrap(out + out.dtype.type(p * (p - 1) / 4 * math.log(math.pi)))

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * _sum(digamma(_mvlgamma_args(x, ctx.p)), -1), None


class _Igamma(Function):
    """Regularised incomplete gamma ``P(a, x)`` (``upper``: ``Q(a, x)``); differentiable in x."""

    @staticmethod
    def forward(ctx, a, x, upper):
        aa, xa = binary_arrays("igamma", a, x)
        if _dt.kind(aa.dtype) != "f":
            raise NotImplementedError("\"%s_cpu\" not implemented for '%s'" % (
                "igammac" if upper else "igamma", _dt.scalar_type_name(aa.dtype)))
        with _quiet():
            out = getattr(_sp(aa), "gammaincc" if upper else "gammainc")(aa, xa)
        ctx.upper = upper
        ctx.set_node_name("IgammacBackward0" if upper else "IgammaBackward0")
        ctx.save_for_backward(a, x)
        return Tensor._wrap(xp_of(a).asarray(out).astype(aa.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        a, x = ctx.saved_tensors
        name = "igammac" if ctx.upper else "igamma"
        if ctx.needs_input_grad[0]:
            raise NotImplementedError("the derivative for '%s: input' is not implemented." % name)
        d = exp(-x + (a - 1) * log(x) - lgamma(a))
        gx = grad_output * (-d if ctx.upper else d)
        return None, sum_to(gx, ctx._input_meta(1)[0]), None


def _pair(op, input, other):
    need_tensors(op, input, other)
    return input, other


def lgamma(input, *, out=None):
    """``log |Gamma(input)|``."""
    return Lgamma.apply(input)


def digamma(input, *, out=None):
    """The logarithmic derivative of Gamma, ``psi(input)``."""
    return Digamma.apply(input)


def polygamma(n, input, *, out=None):
    """The ``n``-th derivative of ``digamma`` (``tensor.polygamma(n)`` as a method)."""
    if isinstance(n, Tensor) and not isinstance(input, Tensor):
        n, input = input, n
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise TypeError("polygamma(): argument 'n' (position 1) must be int, not %s"
                        % type(n).__name__)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return Polygamma.apply(input, int(n))


def mvlgamma(input, p, *, out=None):
    """The multivariate log-gamma of dimension ``p``."""
    if not isinstance(p, int) or isinstance(p, bool):
        raise TypeError("mvlgamma(): argument 'p' (position 2) must be int, not %s"
                        % type(p).__name__)
    arr = input._array
    if arr.dtype.kind == "b":
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if arr.dtype.kind == "c":
        raise NotImplementedError("\"arange_cpu\" not implemented for '%s'"
                                  % _dt.scalar_type_name(arr.dtype))
    return Mvlgamma.apply(input, p)


def i0(input, *, out=None):
    """The modified Bessel function of the first kind of order 0."""
    return I0.apply(input)


def sinc(input, *, out=None):
    """The normalised sinc ``sin(pi x) / (pi x)`` (1 at 0)."""
    return Sinc.apply(input)


def igamma(input, other, *, out=None):
    """The regularised lower incomplete gamma ``P(input, other)``."""
    return _Igamma.apply(*_pair("igamma", input, other), False)


def igammac(input, other, *, out=None):
    """The regularised upper incomplete gamma ``Q(input, other)``."""
    return _Igamma.apply(*_pair("igammac", input, other), True)


def lgamma_(input):
    return inplace(input, lgamma)


def digamma_(input):
    return inplace(input, digamma)


def polygamma_(input, n):
    return inplace(input, lambda t: polygamma(n, t))


def mvlgamma_(input, p):
    return inplace(input, mvlgamma, p)


def i0_(input):
    return inplace(input, i0)


def sinc_(input):
    return inplace(input, sinc)


def _check_inplace_cast(input, other):
    """torch checks that the result (its shape, then its type) can be written into ``input``
    before the kernel."""
    if isinstance(other, Tensor):
        check_into(input.shape, other.shape)
        res, dst = _dt.result_type(input, other).np, input._array.dtype
        rank = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}
        if rank[res.kind] > rank[dst.kind]:
            raise RuntimeError("result type %s can't be cast to the desired output type %s"
                               % (_dt.scalar_type_name(res), _dt.scalar_type_name(dst)))


def igamma_(input, other):
    _check_inplace_cast(input, other)
    return inplace(input, igamma, other)


def igammac_(input, other):
    _check_inplace_cast(input, other)
    return inplace(input, igammac, other)
