"""The random primitives torch's distributions draw through (``_standard_gamma``,
``_sample_dirichlet``, ``binomial``), which ember's public ops do not have."""

from ..autograd.function import Function
from ..backend import backend_of, to_host
from ..dtypes import finfo
from ..ops._util import needs_float
from ..random import _rng
from ..tensor import Tensor


def _special(a):
    return backend_of(a._array).scipy("special")


def _float(a):
    return needs_float(a._array)


# Random primitives: drawn on the host from the Generator, as ember's other random ops.

def _standard_gamma_grad_arr(alpha, x):
    """d x / d alpha for a Gamma(alpha, 1) sample ``x`` (implicit reparameterisation:
    ``-(d/d alpha) P(alpha, x) / pdf(x)``)."""
    sp = backend_of(alpha).scipy("special")
    xp = backend_of(alpha).xp
    a = alpha.astype(xp.float64)
    xx = x.astype(xp.float64)
    h = 1e-5 * xp.maximum(a, 1.0)
    dF = (sp.gammainc(a + h, xx) - sp.gammainc(a - h, xx)) / (2 * h)
    logpdf = (a - 1) * xp.log(xx) - xx - sp.gammaln(a)
    g = -dF * xp.exp(-logpdf)
    return g.astype(alpha.dtype)


class StandardGamma(Function):
    node_name = "StandardGammaBackward0"

    @staticmethod
    def forward(ctx, alpha):
        a = alpha._array
        b = backend_of(a)
        s = _rng().standard_gamma(to_host(a))   # host: drawn where the Generator is
        out = Tensor._wrap(b.asarray(s).astype(a.dtype))
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


def _dirichlet_grad(x, alpha, total):
    """``-(d/d alpha) cdf(x; alpha, beta) / pdf(x; alpha, beta) / (1 - x)`` for the
    Beta(alpha_i, total - alpha_i) marginal, ``beta`` held (torch._dirichlet_grad; the
    Dirichlet's backward turns it into d x / d alpha)."""
    b = backend_of(alpha._array)
    sp, xp = b.scipy("special"), b.xp
    a = alpha._array.astype(xp.float64)
    t = total._array.astype(xp.float64)
    xx = x._array.astype(xp.float64)
    h = 1e-5 * xp.maximum(a, 1.0)
    dF = (sp.betainc(a + h, t - a, xx) - sp.betainc(a - h, t - a, xx)) / (2 * h)
    logpdf = ((a - 1) * xp.log(xx) + (t - a - 1) * xp.log1p(-xx)
              - sp.betaln(a, t - a))
    return Tensor._wrap((-dF * xp.exp(-logpdf) / (1 - xx)).astype(alpha._array.dtype))


def _sample_dirichlet(concentration):
    """Dirichlet samples (normalised Gamma draws; torch._sample_dirichlet)."""
    a = concentration._array
    b = backend_of(a)
    g = _rng().standard_gamma(to_host(a))   # host: drawn where the Generator is
    g = g / g.sum(-1, keepdims=True)        # host: the draw
    tiny = finfo(concentration.dtype).tiny
    return Tensor._wrap(b.asarray(g).astype(a.dtype).clip(tiny, 1 - finfo(
        concentration.dtype).eps))


def binomial(count, prob, generator=None):
    """Binomial samples with ``count`` trials of success probability ``prob``."""
    c, p = count._array, prob._array
    s = _rng(generator).binomial(to_host(c).astype("int64"), to_host(p))   # host: the draw
    return Tensor._wrap(backend_of(c).asarray(s).astype(p.dtype))
