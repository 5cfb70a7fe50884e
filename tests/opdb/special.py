"""Op-database entries of ``torch.special`` (and the top-level gamma/Bessel/sinc functions)."""
import importlib

import numpy as np

from opdb import OpInfo, make, make_positive

__all__ = ["OPS"]


def S(L):
    """``torch.special`` or ``ember.special``."""
    if L.__name__ == "torch":
        return L.special
    return importlib.import_module("ember.special")


def _x(*shapes, low=-2.0, high=2.0):
    def samples(dt):
        return [tuple(make(s, dt, low, high, seed=k) for k, s in enumerate(shapes))]
    return samples


def _pos(*shapes, low=0.5, high=3.0):
    def samples(dt):
        return [tuple(make_positive(s, dt, low, high, seed=k) for k, s in enumerate(shapes))]
    return samples


def _ints(dt):
    return [(np.array([0, 1, 2, 5], dtype=np.int64),)]


def _unary(name, domain=None, **kw):
    return OpInfo("special_" + name, lambda L, x: getattr(S(L), name)(x),
                  domain or _x((2, 3)), **kw)


_NO_GRAD = dict(differentiable=False)
_POLY = ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
         "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
         "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
         "laguerre_polynomial_l", "legendre_polynomial_p")

OPS = [
    _unary("erf"), _unary("erfc"), _unary("erfcx"), _unary("erfinv", _x((5,), low=-0.9, high=0.9)),
    _unary("expit"), _unary("logit", _x((5,), low=0.1, high=0.9)), _unary("exp2"),
    _unary("expm1"), _unary("log1p", _pos((5,))), _unary("gammaln", _pos((2, 3))),
    _unary("digamma", _pos((2, 3))), _unary("psi", _pos((5,))),
    _unary("i0"), _unary("i0e"), _unary("i1"), _unary("i1e"), _unary("ndtr"),
    _unary("ndtri", _x((5,), low=0.05, high=0.95)), _unary("log_ndtr", _x((5,), low=-4.0)),
    _unary("sinc"), _unary("entr", _pos((5,), low=0.1)), _unary("round", **_NO_GRAD),
    *[_unary(n, _pos((2, 3), low=0.2), **_NO_GRAD)
      for n in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
                "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
                "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0",
                "airy_ai")],
    OpInfo("special_gammaln_int", lambda L, x: S(L).gammaln(x + 1), _ints, dtypes=(np.int64,)),
    OpInfo("special_polygamma", lambda L, x: S(L).polygamma(2, x), _pos((2, 3))),
    OpInfo("polygamma_method", lambda L, x: x.polygamma(1), _pos((4,))),
    OpInfo("special_multigammaln", lambda L, x: S(L).multigammaln(x, 3), _pos((4,), low=1.5)),
    OpInfo("mvlgamma", lambda L, x: L.mvlgamma(x, 2), _pos((4,), low=1.0)),
    OpInfo("lgamma", lambda L, x: L.lgamma(x), _pos((4,))),
    OpInfo("digamma_method", lambda L, x: x.digamma(), _pos((4,))),
    OpInfo("i0_top", lambda L, x: L.i0(x), _x((4,))),
    OpInfo("sinc_top", lambda L, x: L.sinc(x), _x((4,))),
    OpInfo("special_gammainc", lambda L, a, x: S(L).gammainc(a, x), _pos((3,), (2, 3)),
           grad_inputs=(1,)),
    OpInfo("special_gammaincc", lambda L, a, x: S(L).gammaincc(a, x), _pos((3,), (3,)),
           grad_inputs=(1,)),
    OpInfo("igamma", lambda L, a, x: L.igamma(a, x), _pos((3,), (3,)), grad_inputs=(1,)),
    OpInfo("special_xlog1py", lambda L, a, b: S(L).xlog1py(a, b), _pos((2, 3), (3,))),
    OpInfo("special_xlogy", lambda L, a, b: S(L).xlogy(a, b), _pos((3,), (3,))),
    OpInfo("special_zeta", lambda L, a, q: S(L).zeta(a, q),
           lambda dt: [(make_positive((3,), dt, 1.5, 3.0), make_positive((3,), dt, 0.5, 2.0))],
           grad_inputs=(1,)),
    OpInfo("special_logsumexp", lambda L, x: S(L).logsumexp(x, 1), _x((2, 3))),
    OpInfo("special_softmax", lambda L, x: S(L).softmax(x, 0), _x((2, 3))),
    OpInfo("special_log_softmax", lambda L, x: S(L).log_softmax(x, -1), _x((2, 3))),
    *[OpInfo("special_" + n, (lambda n: lambda L, x, k: getattr(S(L), n)(x, k))(n),
             lambda dt: [(make((2, 4), dt, -1.0, 1.0), np.array([0., 1., 3., 6.], dtype=dt))],
             **_NO_GRAD) for n in _POLY],
    OpInfo("special_chebyshev_t_scalar_n",
           lambda L, x: S(L).chebyshev_polynomial_t(x, 2), _x((4,), low=-1.0, high=1.0),
           **_NO_GRAD),
]
