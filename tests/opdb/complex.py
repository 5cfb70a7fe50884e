"""Op-database entries of complex ops and ``fft``: real inputs made complex inside the lambda
(``complex(a, b)``) and complex results seen as real (``view_as_real``), so that the harness's
float inputs, random upstream gradients and gradcheck exercise the complex gradients."""

from opdb import OpInfo, make, make_positive

__all__ = ["OPS"]


def _z(L, a, b):
    return L.complex(a, b)


def _r(L, out):
    """A complex result as real pairs (torch's lazy conjugation and negation resolved)."""
    out = out.resolve_conj().resolve_neg()
    return L.view_as_real(out) if out.is_complex() else out


def _pair(low=-2.0, high=2.0):
    def samples(dt):
        return [(make((4, 3), dt, low, high, seed=2).T, make((3, 4), dt, low, high, seed=3)),
                (make((), dt, low, high, seed=4), make((), dt, low, high, seed=5))]
    return samples


def _quad(dt):
    return [(make((2, 3), dt), make((2, 3), dt, seed=1), make((3,), dt, seed=2),
             make((3,), dt, seed=3)),
            (make((2, 1), dt, seed=4), make((2, 1), dt, seed=5), make((1, 3), dt, seed=6),
             make((1, 3), dt, seed=7))]


def _unary(name, fn, low=-2.0, high=2.0, **kw):
    return OpInfo("complex_" + name, lambda L, a, b: _r(L, fn(L, _z(L, a, b))),
                  _pair(low=low, high=high), **kw)


def _binary(name, fn, **kw):
    return OpInfo("complex_" + name,
                  lambda L, a, b, c, d: _r(L, fn(L, _z(L, a, b), _z(L, c, d))), _quad, **kw)


def _signal(dt):
    return [(make((3, 4), dt, seed=2), make((3, 4), dt, seed=3))]


def _real_signal(dt):
    return [(make((6,), dt),), (make((5, 3), dt, seed=3).T,)]


def _fft(name, fn, **kw):
    return OpInfo("fft_" + name, lambda L, a, b: _r(L, fn(L, _z(L, a, b))), _signal, **kw)


def _rfft(name, fn, **kw):
    return OpInfo("fft_" + name, lambda L, a: _r(L, fn(L, a)), _real_signal, **kw)


OPS = [
    OpInfo("complex_make", lambda L, a, b: _r(L, L.complex(a, b)), _pair()),
    OpInfo("complex_polar", lambda L, a, b: _r(L, L.polar(a, b)),
           lambda dt: [(make_positive((2, 3), dt), make((2, 3), dt, seed=1)),
                       (make_positive((3,), dt, seed=2), make((2, 3), dt, seed=3))]),
    OpInfo("complex_view_as_complex", lambda L, a: _r(L, L.view_as_complex(a) * 2),
           lambda dt: [(make((3, 2), dt),), (make((2, 4, 2), dt, seed=1),)]),
    _unary("real", lambda L, z: z.real * 1),
    _unary("imag", lambda L, z: z.imag * 1),
    _unary("conj", lambda L, z: z.conj() * z.exp()),
    _unary("conj_physical", lambda L, z: L.conj_physical(z)),
    _unary("abs", lambda L, z: z.abs()),
    _unary("angle", lambda L, z: z.angle()),
    _unary("sgn", lambda L, z: z.sgn()),
    _unary("neg", lambda L, z: -z),
    _unary("exp", lambda L, z: z.exp()),
    _unary("log", lambda L, z: z.log()),
    _unary("sqrt", lambda L, z: z.sqrt()),
    _unary("rsqrt", lambda L, z: z.rsqrt()),
    _unary("sin", lambda L, z: z.sin()),
    _unary("cos", lambda L, z: z.cos()),
    _unary("tan", lambda L, z: z.tan(), low=-0.5, high=0.5),
    _unary("tanh", lambda L, z: z.tanh(), low=-0.5, high=0.5),
    _unary("sigmoid", lambda L, z: z.sigmoid(), low=-0.5, high=0.5),
    _unary("expm1", lambda L, z: L.expm1(z)),
    _unary("log1p", lambda L, z: L.log1p(z), low=0.2, high=2.0),
    _unary("reciprocal", lambda L, z: z.reciprocal()),
    _unary("square", lambda L, z: z.square()),
    _unary("pow_scalar", lambda L, z: z ** 3),
    _unary("pow_float", lambda L, z: z ** 2.5, low=0.2, high=2.0),
    _unary("mul_complex_scalar", lambda L, z: z * (2 - 3j)),
    _unary("div_complex_scalar", lambda L, z: z / (1 + 2j)),
    _unary("sum", lambda L, z: z.sum(0)),
    _unary("mean", lambda L, z: z.mean()),
    _unary("abs_squared", lambda L, z: (z * z.conj()).real),
    _binary("add", lambda L, z, w: z + w),
    _binary("sub", lambda L, z, w: z - w),
    _binary("mul", lambda L, z, w: z * w),
    _binary("div", lambda L, z, w: z / w),
    OpInfo("complex_mul_real", lambda L, a, b, c: _r(L, _z(L, a, b) * c),
           lambda dt: [(make((2, 3), dt), make((2, 3), dt, seed=1), make((3,), dt, seed=2))]),
    OpInfo("complex_real_times_j", lambda L, a: _r(L, a * 1j), _real_signal),
    _fft("fft", lambda L, z: L.fft.fft(z)),
    _fft("fft_n_ortho", lambda L, z: L.fft.fft(z, n=7, norm="ortho")),
    _fft("ifft_forward", lambda L, z: L.fft.ifft(z, n=4, dim=0, norm="forward")),
    _fft("fftn", lambda L, z: L.fft.fftn(z)),
    _fft("ifft2_s", lambda L, z: L.fft.ifft2(z.reshape(1, -1), s=(2, 4))),
    _fft("irfft", lambda L, z: L.fft.irfft(z)),
    _fft("irfft_n_odd", lambda L, z: L.fft.irfft(z, n=5, norm="ortho")),
    _fft("irfftn", lambda L, z: L.fft.irfftn(z)),
    _fft("hfft", lambda L, z: L.fft.hfft(z, n=6)),
    _fft("hfftn", lambda L, z: L.fft.hfftn(z, norm="forward")),
    _rfft("fft_real", lambda L, x: L.fft.fft(x, norm="ortho")),
    _rfft("ifftn_real", lambda L, x: L.fft.ifftn(x)),
    _rfft("rfft", lambda L, x: L.fft.rfft(x)),
    _rfft("rfft_n", lambda L, x: L.fft.rfft(x, n=7, dim=0)),
    _rfft("rfftn", lambda L, x: L.fft.rfftn(x, norm="forward")),
    _rfft("rfft2_s", lambda L, x: L.fft.rfft2(x.reshape(1, -1), s=(2, 6))),
    _rfft("ihfft", lambda L, x: L.fft.ihfft(x)),
    _rfft("ihfftn", lambda L, x: L.fft.ihfftn(x, norm="ortho")),
    _rfft("fftshift", lambda L, x: L.fft.fftshift(x)),
    _rfft("ifftshift", lambda L, x: L.fft.ifftshift(x, dim=0)),
]
