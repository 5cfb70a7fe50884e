"""Special functions that torch also has at top level and as Tensor methods: gamma-family
(lgamma, digamma, polygamma, mvlgamma), incomplete gamma (igamma, igammac), Bessel ``i0`` and
``sinc``. The rest of ``torch.special`` lives in ``ember.special``."""
import math

from .. import dtypes as _dt
from ..autograd.function import Function
from ..backend import backend_of
from ..backend import quiet as _quiet
from ..tensor import Tensor
from ._inplace import inplace
from .comparison import where as _where
from ._util import binary_arrays, need_tensors, needs_float, sum_to, xp_of

__all__ = ["lgamma", "digamma", "polygamma", "mvlgamma", "i0", "sinc", "igamma", "igammac",
           "lgamma_", "digamma_", "polygamma_", "mvlgamma_", "i0_", "sinc_", "igamma_",
           "igammac_"]


def _sp(arr):
    return backend_of(arr).scipy("special")


def scipy_unary(name, kernel, node, grad):
    """A Function for SciPy's special function ``kernel`` (a name, or ``kernel(sp, x)``) with
    backward ``grad(grad_output, input, output)`` in Tensor ops (None: not differentiable)."""
    def forward(ctx, a):
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


def _polygamma_arr(x, n):
    sp = _sp(x)
    xp = xp_of(Tensor._wrap(x))
    if n == 0:
        return xp.asarray(sp.psi(x)).astype(x.dtype, copy=False)
    return xp.asarray(sp.polygamma(n, x)).astype(x.dtype, copy=False)


Lgamma = scipy_unary("Lgamma", "gammaln", "LgammaBackward0",
                     lambda g, a, out: g * digamma(a))
Digamma = scipy_unary("Digamma", "psi", "DigammaBackward0",
                      lambda g, a, out: g * polygamma(1, a))
I0 = scipy_unary("I0", "i0", "I0Backward0", lambda g, a, out: g * _I1.apply(a))
_I1 = scipy_unary("SpecialI1", "i1", "SpecialI1Backward0",
                  lambda g, a, out: g * _where(a == 0, 0.5, i0(a) - out / a))


def _sinc_kernel(sp, x):
    with _quiet():
        return xp_of(Tensor._wrap(x)).sinc(x)


def _sinc_grad(g, a, out):
    from .comparison import where
    from .unary import cos
    pa = a * math.pi
    d = (cos(pa) * pa - out * pa) / (a * pa)
    return g * where(a == 0, 0.0, d)


Sinc = scipy_unary("Sinc", _sinc_kernel, "SincBackward0", _sinc_grad)


class _Igamma(Function):
    """Regularised incomplete gamma ``P(a, x)`` (``upper``: ``Q(a, x)``); differentiable in x."""

    @staticmethod
    def forward(ctx, a, x, upper):
        aa, xa = binary_arrays("igamma", a, x)
        if aa.dtype.kind not in "fc":
            d = _dt.get_default_dtype().np
            aa, xa = aa.astype(d), xa.astype(d)
        with _quiet():
            out = getattr(_sp(aa), "gammaincc" if upper else "gammainc")(aa, xa)
        ctx.upper = upper
        ctx.set_node_name("IgammacBackward0" if upper else "IgammaBackward0")
        ctx.save_for_backward(a, x)
        return Tensor._wrap(xp_of(a).asarray(out).astype(aa.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        from .unary import exp, log
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
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return Polygamma.apply(input, int(n))


def mvlgamma(input, p, *, out=None):
    """The multivariate log-gamma of dimension ``p``."""
    from .reduction import sum as _sum
    from .shape import unsqueeze
    x = input
    if x._array.dtype.kind not in "fc":
        from .conversion import to
        x = to(x, _dt.get_default_dtype())
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    xp = xp_of(x)
    offs = Tensor._wrap(xp.arange(p, dtype=x._array.dtype) / -2)
    return _sum(lgamma(unsqueeze(x, -1) + offs), -1) + p * (p - 1) / 4 * math.log(math.pi)


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


def igamma_(input, other):
    return inplace(input, igamma, other)


def igammac_(input, other):
    return inplace(input, igammac, other)
