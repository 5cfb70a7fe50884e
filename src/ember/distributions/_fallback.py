"""Local stand-ins for ops ember does not have yet (``lgamma``, ``digamma``, ``polygamma``,
``mvlgamma``, ``special.gammainc``, ``tril_indices``: to be replaced by the shared ops once they
exist), and the random primitives torch's distributions draw through (``_standard_gamma``,
``_sample_dirichlet``, ``binomial``)."""
import math
import types

from ..autograd.function import Function
from ..backend import backend_of, to_host
from ..dtypes import finfo
from ..ops import arange, broadcast_tensors, exp, expm1, log, xlogy, zeros
from ..ops._util import needs_float, sum_to
from ..random import _rng
from ..tensor import Tensor


def _special(a):
    return backend_of(a._array).scipy("special")


def _float(a):
    return needs_float(a._array)


class Lgamma(Function):
    node_name = "LgammaBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return Tensor._wrap(_special(a).gammaln(_float(a)))

    @staticmethod
    def backward(ctx, grad_output):
        a, = ctx.saved_tensors
        return grad_output * digamma(a)


class Digamma(Function):
    node_name = "DigammaBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        x = _float(a)
        out = _special(a).psi(x)
        # torch: digamma(0) is -inf (SciPy's pole gives nan)
        out = backend_of(x).xp.where(x == 0, x.dtype.type(-math.inf), out)
        return Tensor._wrap(out.astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        a, = ctx.saved_tensors
        return grad_output * polygamma(1, a)


class Polygamma(Function):
    node_name = "PolygammaBackward0"

    @staticmethod
    def forward(ctx, n, a):
        ctx.n = n
        ctx.save_for_backward(a)
        x = _float(a)
        return Tensor._wrap(_special(a).polygamma(n, x).astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        a, = ctx.saved_tensors
        return None, grad_output * polygamma(ctx.n + 1, a)


def lgamma(input):
    """``log|Gamma(input)|`` (torch.lgamma)."""
    return Lgamma.apply(input)


def digamma(input):
    """The logarithmic derivative of Gamma (torch.digamma)."""
    return Digamma.apply(input)


def polygamma(n, input):
    """The ``n``-th derivative of digamma (torch.polygamma)."""
    return Polygamma.apply(int(n), input)


def mvlgamma(input, p):
    """The multivariate log-gamma function of dimension ``p`` (torch.mvlgamma)."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if bool((input <= (p - 1) / 2).any()):
        raise RuntimeError("All elements must be greater than (p-1)/2")
    args = input.unsqueeze(-1) - arange(p, dtype=input.dtype) / 2
    return lgamma(args).sum(-1) + p * (p - 1) / 4 * math.log(math.pi)


class Gammainc(Function):
    node_name = "IgammaBackward0"

    @staticmethod
    def forward(ctx, a, x):
        ctx.save_for_backward(a, x)
        return Tensor._wrap(_special(a).gammainc(_float(a), _float(x)))

    @staticmethod
    def backward(ctx, grad_output):
        a, x = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            raise NotImplementedError(
                "the derivative for 'igamma: input' is not implemented.")
        grad_x = grad_output * exp((a - 1) * log(x) - x - lgamma(a))
        return None, sum_to(grad_x, x.shape)


def _gammainc(input, other):
    input, other = broadcast_tensors(input, other)
    return Gammainc.apply(input, other)


special = types.SimpleNamespace(gammainc=_gammainc, xlogy=xlogy, expm1=expm1,
                                digamma=digamma, gammaln=lgamma, polygamma=polygamma)


def tril_indices(row, col, offset=0, *, dtype=None, device=None):
    """The indices of the lower triangle of a ``row x col`` matrix (torch.tril_indices)."""
    xp = backend_of(zeros(0)._array).xp
    r, c = xp.tril_indices(row, offset, col)
    return Tensor._wrap(xp.stack([r, c]).astype(xp.int64))


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
