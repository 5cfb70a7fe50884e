"""Random number generation: the global Generator, ``manual_seed`` and ``Generator`` objects.

ember's generator is PyTorch's CPU generator: the 32-bit Mersenne Twister (mt19937) seeded
from the low 32 bits of the seed, with torch's transforms for every distribution, so
``manual_seed(s)`` followed by the same calls gives the same numbers as ``torch`` on the CPU.
Random numbers are drawn on the host whatever the device of the tensor they fill, so one seed
gives the same numbers on every device; ``ember.cuda.manual_seed`` has nothing to seed.

``get_rng_state`` returns torch's 5056-byte state layout, so a state saved by torch loads here
and the other way round.
"""
import contextlib
import math
import os

import numpy as np

from . import dtypes as _dt
from .backend import device as _device
from .backend._meta import MetaArray
from .tensor import Tensor

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
           "default_generator", "fork_rng"]

_N = 624                                # mt19937 state words
_DEFAULT_SEED = 67280421310721          # torch's default_rng_seed_val
_STATE_BYTES = 5056                     # sizeof(CPUGeneratorImplState)
_M64 = 0xFFFFFFFFFFFFFFFF
_U64 = np.uint64


def _seed_words(seed):
    """std::mt19937's state after ``seed(seed & 0xffffffff)`` (torch's ``init_with_uint32``)."""
    s = seed & 0xFFFFFFFF
    words = [s]
    for j in range(1, _N):
        s = (1812433253 * (s ^ (s >> 30)) + j) & 0xFFFFFFFF
        words.append(s)
    return np.array(words, dtype=np.uint32)


def _check_seed(seed):
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise RuntimeError("manual_seed expected a long, but got %s" % type(seed).__name__)
    seed = int(seed)
    if seed < -(1 << 63) or seed > _M64:
        raise ValueError("Overflow when unpacking long long")
    return seed & _M64


# ---- exact libm on arrays -------------------------------------------------------------------
# torch's kernels call glibc's scalar log/log1p/exp/tan. NumPy's SIMD versions can differ in
# the last bit, so these go through Python's math module (the same libm), with a fast path for
# log that is exact whenever 80-bit long double decides the rounding.

_LONG_DOUBLE = np.finfo(np.longdouble).nmant >= 63


def _libm(fn, x):
    x = np.asarray(x, dtype=np.float64)
    return np.fromiter(map(fn, x.ravel().tolist()), dtype=np.float64,
                       count=x.size).reshape(x.shape)


def _log(x):
    """glibc's ``log`` of a float64 array of positive numbers, value for value."""
    x = np.asarray(x, dtype=np.float64)
    if not _LONG_DOUBLE or x.size < 64:
        return _libm(math.log, x)
    ld = np.log(x.astype(np.longdouble))
    r = ld.astype(np.float64)
    m, _ = np.frexp(r)
    dist = np.abs((ld - r) / np.spacing(np.abs(r)).astype(np.longdouble))
    # near a rounding midpoint (or a power of two) the long double result cannot decide
    unsure = (dist > 0.45) | (np.abs(m) == 0.5) | ~np.isfinite(r)
    if unsure.any():
        r[unsure] = _libm(math.log, x[unsure])
    return r


def _fma32(a, b, c):
    """float32 fused multiply-add (the product is exact in float64)."""
    return (np.asarray(a, np.float64) * np.asarray(b, np.float64)
            + np.asarray(c, np.float64)).astype(np.float32)


def _fma64(a, b, c):
    """float64 fused multiply-add through error-free transformations."""
    a = np.asarray(a, dtype=np.float64)
    b = np.float64(b)
    p = a * b
    split = 134217729.0
    ca = split * a
    ah = ca - (ca - a)
    al = a - ah
    cb = split * b
    bh = cb - (cb - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    bb = s - p
    err = (p - (s - bb)) + (c - bb)
    with np.errstate(invalid="ignore"):
        out = s + (e + err)
    return np.where(np.isfinite(out), out, s)


# ---- the AVX2 Box-Muller of torch's float32 normal_ (avx_mathfun.h, as GCC compiles it) -----

_F = np.float32
_LOG_P = [_F(v) for v in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1,
                          -1.2420140846E-1, 1.4249322787E-1, -1.6668057665E-1,
                          2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1)]


def _round32(a64, buf32):
    """Round a float64 array to float32 precision, in place."""
    np.copyto(buf32, a64, casting="unsafe")
    np.copyto(a64, buf32)
    return a64


def _poly32(y64, x64, coeffs, buf32):
    """Horner steps ``y = fma(y, x, c)`` in float32, each fused (one rounding)."""
    for c in coeffs:
        y64 *= x64
        y64 += c
        _round32(y64, buf32)
    return y64


def _log256(x):
    buf = np.empty_like(x)
    x = np.maximum(x, np.array(0x00800000, np.int32).view(_F))
    bits = x.view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(_F) + _F(1)
    x = ((bits & ~0x7F800000) | np.array(0.5, _F).view(np.int32)).view(_F)
    mask = x < _F(0.707106781186547524)
    tmp = np.where(mask, x, _F(0))
    x = x - _F(1)
    e = e - mask.astype(_F)
    x = x + tmp
    z = x * x
    x64 = x.astype(np.float64)
    y64 = np.full(x.shape, float(_LOG_P[0]))
    _poly32(y64, x64, [float(p) for p in _LOG_P[1:]], buf)
    y = y64.astype(_F) * x
    y64 = y.astype(np.float64)
    y64 *= z
    y64 += e * _F(-2.12194440e-4)
    y = y64.astype(_F)
    y = y - z * _F(0.5)
    x = x + y
    return x + e * _F(0.693359375)


def _sincos256(x):
    buf = np.empty_like(x)
    sign_sin = np.signbit(x)
    x = np.abs(x)
    j = (x * _F(1.27323954473516)).astype(np.int32)
    j = (j + 1) & ~1
    y = j.astype(np.float64)
    swap_sin = (j & 4) != 0
    poly = (j & 2) == 0
    x64 = x.astype(np.float64)
    for c in (-0.78515625, -2.4187564849853515625e-4, float(_F(-3.77489497744594108e-8))):
        x64 += y * c
        _round32(x64, buf)
    x = x64.astype(_F)
    sign_cos = (~(j - 2) & 4) != 0
    sign_sin = sign_sin ^ swap_sin
    z = x * x
    z64 = z.astype(np.float64)
    yc = np.full(x.shape, float(_F(2.443315711809948E-005)))
    _poly32(yc, z64, [float(_F(-1.388731625493765E-003)), float(_F(4.166664568298827E-002))],
            buf)
    yc = yc.astype(_F) * z
    yc64 = yc.astype(np.float64)
    yc64 *= z64
    yc64 -= z * _F(0.5)
    yc = yc64.astype(_F) + _F(1)
    ys = np.full(x.shape, float(_F(-1.9515295891E-4)))
    _poly32(ys, z64, [float(_F(8.3321608736E-3)), float(_F(-1.6666654611E-1))], buf)
    ys = ys.astype(_F) * z
    ys64 = ys.astype(np.float64)
    ys64 *= x64
    ys64 += x64
    ys = ys64.astype(_F)
    s = np.where(poly, ys, yc)
    c = np.where(poly, yc, ys)
    return np.where(sign_sin, -s, s), np.where(sign_cos, -c, c)


def _box_muller16_f32(u, mean, std):
    """torch's ``normal_fill_16_AVX2`` over rows of 16 float32 uniforms."""
    u = u.reshape(-1, 16)
    if len(u) > 4096:       # in blocks that stay in cache
        return np.concatenate([_box_muller16_f32(u[i:i + 4096], mean, std)
                               for i in range(0, len(u), 4096)])
    radius = np.sqrt(_F(-2) * _log256(_F(1) - u[:, :8]))
    s, c = _sincos256(_F(2.0 * math.pi) * u[:, 8:])
    out = np.empty_like(u)
    out[:, :8] = _fma32(radius * c, _F(std), _F(mean))
    out[:, 8:] = _fma32(radius * s, _F(std), _F(mean))
    return out.ravel()


def _box_muller16_f64(u, mean, std):
    """torch's ``normal_fill_16<double>`` over rows of 16 float64 uniforms."""
    u = u.reshape(-1, 16)
    radius = np.sqrt(-2.0 * _log(1.0 - u[:, :8]))
    theta = (2.0 * math.pi) * u[:, 8:]
    out = np.empty_like(u)
    out[:, :8] = _fma64(radius * np.cos(theta), std, mean)
    out[:, 8:] = _fma64(radius * np.sin(theta), std, mean)
    return out.ravel()


class Generator:
    """A source of random numbers: PyTorch's CPU generator (mt19937), on the host for every
    device, with torch's streams for every distribution.

    Example:
        >>> import ember
        >>> g = ember.Generator().manual_seed(0)
        >>> a = ember.rand(2, generator=g)
        >>> b = ember.rand(2, generator=ember.Generator().manual_seed(0))
        >>> bool((a == b).all())
        True
    """

    def __init__(self, device="cpu"):
        self.device = _device(device)
        self._bits_now = None
        self._np = None
        self.manual_seed(_DEFAULT_SEED)

    @property
    def _bits(self):
        """The mt19937 bit generator, made (and seeded) on first use: NumPy's random module
        loads only when numbers are drawn, not at ``import ember``."""
        bits = self._bits_now
        if bits is None:
            bits = self._bits_now = np.random.MT19937(0)
            bits.state = {"bit_generator": "MT19937",
                          "state": {"key": _seed_words(self._seed), "pos": _N}}
        return bits

    def __repr__(self):
        return "<ember.Generator object at 0x%x>" % id(self)

    # -- seeding and state
    def manual_seed(self, seed):
        """Seed with ``seed`` (in [-2**63, 2**64)); returns the generator."""
        seed = _check_seed(seed)
        self._seed = seed
        if self._bits_now is not None:
            self._bits_now.state = {"bit_generator": "MT19937",
                                    "state": {"key": _seed_words(seed), "pos": _N}}
        self._fresh = True
        self._next_double = None       # Box-Muller's cached second value (double path)
        self._next_float = None
        return self

    def seed(self):
        """Seed from fresh entropy and return the seed."""
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self):
        """The seed last given to ``manual_seed`` (or drawn by ``seed``)."""
        return self._seed

    def clone_state(self):
        """A new generator in this one's state (same seed, same position in the stream)."""
        g = Generator(self.device)
        return g.set_state(self.get_state())

    def get_offset(self):
        raise RuntimeError("CPU Generator does not use offset")

    def set_offset(self, offset):
        raise RuntimeError("CPU Generator does not use offset")

    def graphsafe_get_state(self):
        raise NotImplementedError("graphsafe_get_state is not supported in this Generator")

    def graphsafe_set_state(self, state):
        raise NotImplementedError("graphsafe_set_state is not supported in this Generator")

    def get_state(self):
        """The state as a 5056-byte uint8 tensor, in torch's layout."""
        st = self._bits.state["state"]
        pos = int(st["pos"])
        buf = bytearray(_STATE_BYTES)
        head = np.array([self._seed], dtype=np.uint64).tobytes()
        head += np.array([_N + 1 - pos, 1], dtype=np.int32).tobytes()
        head += np.array([0 if self._fresh and pos == _N else pos], dtype=np.uint64).tobytes()
        buf[0:24] = head
        buf[24:24 + 8 * _N] = st["key"].astype(np.uint64).tobytes()
        if self._next_double is not None:
            buf[5024:5032] = np.array([self._next_double], np.float64).tobytes()
            buf[5040:5044] = np.array([1], np.int32).tobytes()
        if self._next_float is not None:
            buf[5048:5052] = np.array([self._next_float], np.float32).tobytes()
            buf[5052] = 1
        return Tensor._wrap(np.frombuffer(bytes(buf), dtype=np.uint8).copy())

    def set_state(self, new_state):
        """Restore a state from ``get_state`` (ember's or torch's); returns the generator."""
        arr = getattr(new_state, "_array", None)
        if arr is None and hasattr(new_state, "numpy"):        # a torch tensor
            arr = new_state.detach().cpu().numpy()
        if arr is None or np.asarray(arr).dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = np.asarray(arr).tobytes()   # host: the state bytes
        if len(raw) != _STATE_BYTES:
            raise RuntimeError("Expected a CPUGeneratorImplState of size %d but found the input "
                               "RNG state size to be %d" % (_STATE_BYTES, len(raw)))
        seed = int(np.frombuffer(raw[0:8], np.uint64)[0])
        left, seeded = (int(v) for v in np.frombuffer(raw[8:16], np.int32))
        nxt = int(np.frombuffer(raw[16:24], np.uint64)[0])
        if not (seeded and 0 < left <= _N and nxt <= _N):
            raise RuntimeError("Invalid mt19937 state")
        key = np.frombuffer(raw[24:24 + 8 * _N], np.uint64).astype(np.uint32)
        self._bits.state = {"bit_generator": "MT19937",
                            "state": {"key": key, "pos": _N + 1 - left}}
        self._seed = seed
        self._fresh = left == 1 and nxt == 0
        valid = int(np.frombuffer(raw[5040:5044], np.int32)[0])
        self._next_double = float(np.frombuffer(raw[5024:5032], np.float64)[0]) if valid \
            else None
        self._next_float = float(np.frombuffer(raw[5048:5052], np.float32)[0]) \
            if raw[5052] else None
        return self

    @property
    def rng(self):
        """A NumPy Generator drawing from this generator's mt19937 stream (for host-side code
        that wants NumPy's distributions; its draws are not torch's)."""
        if self._np is None:
            self._np = np.random.Generator(self._bits)
        self._fresh = False
        return self._np

    # -- raw draws: torch's random() and random64()
    def _random(self, n):
        """``n`` 32-bit draws (uint64 array)."""
        self._fresh = False
        return self._bits.random_raw(int(n))

    def _random64(self, n):
        """``n`` 64-bit draws: two 32-bit draws each, the first the high word."""
        r = self._random(2 * int(n))
        return (r[0::2] << _U64(32)) | r[1::2]

    def _unit(self, n, np_dtype):
        """``n`` uniforms on [0, 1): 24 bits of a 32-bit draw for float32 and float16 (torch
        draws half in float and rounds), 53 bits of a 64-bit draw for float64."""
        d = np.dtype(np_dtype)
        if d == np.float64:
            return (self._random64(n) & _U64((1 << 53) - 1)).astype(np.float64) * 2.0 ** -53
        r = self._random(n) & _U64((1 << 24) - 1)
        return r.astype(np.float32) * np.float32(2.0 ** -24)

    # -- distributions (host arrays, in the order torch's kernels fill memory)
    def _uniform(self, n, np_dtype, low=0.0, high=1.0):
        d = np.dtype(np_dtype)
        x = self._unit(n, d)
        if low == 0 and high == 1:
            return x.astype(d, copy=False)      # x * 1 + 0: exact, fused or not
        if d == np.float64:
            return _fma64(x, high - low, low)
        lo, hi = np.float32(low), np.float32(high)     # (float bounds for half too, as torch)
        return _fma32(x, hi - lo, lo).astype(d, copy=False)

    def _normal_scalar(self, n, mean=0.0, std=1.0):
        """``n`` draws of torch's scalar ``normal_distribution<double>`` (Box-Muller pairs,
        the second value cached in the generator). float64 result."""
        out = np.empty(n, dtype=np.float64)
        i = 0
        if n and self._next_double is not None:
            out[0] = self._next_double
            self._next_double = None
            i = 1
        m = n - i
        if m:
            pairs = (m + 1) // 2
            u = self._unit(2 * pairs, np.float64)
            if pairs <= 8:      # a few values: Python's math (glibc) beats array overheads
                both = []
                for u1, u2 in zip(u[0::2].tolist(), u[1::2].tolist()):
                    r = math.sqrt(-2.0 * math.log1p(-u2))
                    theta = (2.0 * math.pi) * u1
                    both += (r * math.cos(theta), r * math.sin(theta))
                both = np.array(both)
            else:
                r = np.sqrt(-2.0 * _libm(math.log1p, -u[1::2]))
                theta = (2.0 * math.pi) * u[0::2]
                both = np.empty(2 * pairs)
                both[0::2] = r * np.cos(theta)
                both[1::2] = r * np.sin(theta)
            out[i:] = both[:m]
            if m % 2:
                self._next_double = float(both[-1])
        if mean == 0 and std == 1:
            return out          # val * 1 + 0: exact, fused or not
        return _fma64(out, std, mean)

    def _normal(self, n, np_dtype, mean=0.0, std=1.0, contiguous=True):
        """torch's ``normal_`` on ``n`` elements: the vectorised Box-Muller over blocks of 16
        for contiguous tensors of 16 or more elements, else the scalar path."""
        d = np.dtype(np_dtype)
        if n < 16 or not contiguous or d not in (np.float32, np.float64):
            return self._normal_scalar(n, mean, std).astype(d)
        u = self._unit(n, d)
        fill = _box_muller16_f32 if d == np.float32 else _box_muller16_f64
        whole = n // 16 * 16
        out = np.empty(n, dtype=d)
        out[:whole] = fill(u[:whole], mean, std)
        if n % 16:
            out[n - 16:] = fill(self._unit(16, d), mean, std)    # torch redoes the last 16
        return out

    def _random_from_to(self, n, np_dtype, rng_range, base):
        """Integers ``base + draw % rng_range`` (torch's ``random_(from, to)``)."""
        d = np.dtype(np_dtype)
        wide = rng_range >= (1 << 32) and (d in (np.int64, np.float64, np.float32) or
                                           d.kind == "V")     # (V: bfloat16, as torch's)
        r = self._random64(n) if wide else self._random(n)
        v = (r % _U64(rng_range)).astype(np.int64) + np.int64(base) if rng_range < (1 << 63) \
            else ((r % _U64(rng_range)) + _U64(base & _M64)).view(np.int64)
        return v.astype(d)

    def _random_default(self, n, np_dtype):
        """torch's ``random_()``: [0, 2**mantissa] for floats, [0, max] for integers."""
        d = np.dtype(np_dtype)
        if d == np.bool_:
            return (self._random(n) & _U64(1)).astype(np.bool_)
        if d in (np.float64, np.int64):
            r = self._random64(n)
        else:
            r = self._random(n)
        if _dt.kind(d) == "f":
            mod = (1 << _digits(d)) + 1
        else:
            mod = int(np.iinfo(d).max) + 1
        return (r % _U64(mod)).astype(d)

    def _random_full64(self, n, np_dtype):
        return self._random64(n).view(np.int64).astype(np_dtype)

    def _exponential(self, n, lambd):
        u = self._unit(n, np.float64)
        return (-1.0 / lambd) * _libm(math.log1p, -u)

    def _cauchy(self, n, median, sigma):
        u = self._unit(n, np.float64)
        return _fma64(_libm(math.tan, math.pi * (u - 0.5)), sigma, median)

    def _log_normal(self, n, mean, std):
        return _libm(math.exp, self._normal_scalar(n, mean, std))

    def _geometric(self, n, p):
        u = self._unit(n, np.float64)
        with np.errstate(divide="ignore"):
            lu = np.where(u > 0, _log(np.where(u > 0, u, 1.0)), -np.inf)
        return np.ceil(lu / math.log(1.0 - p))

    def _poisson(self, rates):
        """torch's CPU ``sample_poisson`` per rate (float64 results): Hoermann's transformed
        rejection for rates >= 10, a product of uniforms below."""
        out = np.empty(len(rates), dtype=np.float64)
        for i, lam in enumerate(np.asarray(rates, dtype=np.float64).tolist()):
            if not lam >= 0:
                raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
            out[i] = self._poisson_one(lam)
        return out

    def _poisson_one(self, lam):
        unif = self._unit_scalar
        if lam >= 10:
            slam = math.sqrt(lam)
            loglam = math.log(lam)
            b = 0.931 + 2.53 * slam
            a = -0.059 + 0.02483 * b
            invalpha = 1.1239 + 1.1328 / (b - 3.4)
            vr = 0.9277 - 3.6224 / (b - 2)
            while True:
                u = unif() - 0.5
                v = unif()
                us = 0.5 - abs(u)
                k = math.floor((2 * a / us + b) * u + lam + 0.43)
                if us >= 0.07 and v <= vr:
                    return k
                if k < 0 or (us < 0.013 and v > us):
                    continue
                if (math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b)
                        <= -lam + k * loglam - math.lgamma(k + 1.0)):
                    return k
        if lam == 0:
            return 0
        enlam = math.exp(-lam)
        x, prod = 0, 1.0
        while True:
            prod *= unif()
            if prod > enlam:
                x += 1
            else:
                return x

    def _binomial(self, counts, probs, single):
        """torch's CPU ``sample_binomial`` per (count, prob) pair, in its arithmetic: BTRS
        (Hormann's transformed rejection) where ``count * min(p, 1 - p) >= 10``, else the
        inversion of geometric waiting times; ``single``: the values are float32, whose
        arithmetic torch's kernel does in float32 where its C++ types are ``float``."""
        out = []
        f = np.float32 if single else float
        log1p = _log1pf if single else math.log1p
        for count, prob in zip(counts, probs):
            count, prob = f(count), f(prob)
            out.append(self._binomial_one(count, prob, f, log1p))
        return out

    def _binomial_one(self, count, prob, f, log1p):
        if count <= 0 or prob <= 0:
            return 0.0
        if prob >= 1:
            return float(count)
        if prob <= 0.5:
            if f(count * prob) >= 10:
                return float(self._btrs(count, prob, f))
            return float(self._binomial_inversion(count, prob, f, log1p))
        if prob > 0.5:
            q = f(1.0 - float(prob))
            if f(count * q) >= 10:
                return float(f(count - self._btrs(count, q, f)))
            if count != count:     # (torch's loop never ends for a NaN count)
                return math.nan
            return float(f(count - self._binomial_inversion(count, q, f, log1p)))
        return math.nan

    def _binomial_inversion(self, count, prob, f, log1p):
        logprob = float(log1p(-prob))
        count = float(count)
        if count != count:
            return math.nan
        geom_sum, num_geom = 0.0, f(0)
        while True:
            u = self._unit_scalar()
            if u == 0:
                break       # (log(0) / logprob: an infinite wait)
            g = math.log(u) / logprob
            geom_sum += float(math.ceil(g)) if g != math.inf else math.inf
            if geom_sum > count:
                break
            num_geom = f(num_geom + 1)
        return num_geom

    def _btrs(self, count, prob, f):
        log = _clog
        stddev = float(np.sqrt(f(f(count * prob) * f(1 - prob))))
        b = 1.15 + 2.53 * stddev
        a = -0.0873 + 0.0248 * b + 0.01 * float(prob)
        c = float(f(count * prob)) + 0.5
        v_r = 0.92 - 4.2 / b
        r = float(f(prob / f(1 - prob)))
        alpha = (2.83 + 5.1 / b) * stddev
        m = float(math.floor(f(f(count + 1) * prob)))
        cnt = float(count)
        while True:
            u = self._unit_scalar() - 0.5
            v = self._unit_scalar()
            us = 0.5 - abs(u)
            if us == 0:
                continue        # (k is -inf: rejected)
            x = (2 * a / us + b) * u + c
            k = f(math.floor(x) if math.isfinite(x) else x)
            if k < 0 or k > count:
                continue
            if us >= 0.07 and v <= v_r:
                return k
            v = log(v * alpha / (a / (us * us) + b))
            kd = float(k)
            upperbound = ((m + 0.5) * log((m + 1) / (r * (cnt - m + 1)))
                          + float(f(count + 1)) * log((cnt - m + 1) / float(f(f(count - k) + 1)))
                          + (kd + 0.5) * log(r * float(f(f(count - k) + 1)) / float(f(k + 1)))
                          + _stirling_tail(m) + _stirling_tail(cnt - m)
                          - _stirling_tail(kd) - _stirling_tail(float(f(count - k))))
            if v <= upperbound:
                return k

    def _gamma(self, alphas, single):
        """torch's CPU ``sample_gamma`` per concentration (Marsaglia and Tsang, with the
        ``alpha < 1`` boost), float64 results before the caller's cast; ``single``: the
        concentrations are float32, whose arithmetic torch's kernel does in float32 where its
        C++ type is ``scalar_t``."""
        f = np.float32 if single else float
        words = _Words(self)
        try:
            return [_gamma_one(f(a), f, words) for a in alphas]
        finally:
            words.close()

    def _unit_scalar(self):
        return float(self._unit(1, np.float64)[0])

    def _randperm(self, n):
        """torch's ``randperm`` for n < 2**32 / 20: swap i with i + random() % (n - i)."""
        perm = list(range(n))
        if n > 1:
            z = self._random(n - 1) % np.arange(n, 1, -1, dtype=np.uint64)
            for i, j in enumerate((z + np.arange(n - 1, dtype=np.uint64)).tolist()):
                perm[i], perm[j] = perm[j], perm[i]
        return np.array(perm, dtype=np.int64)

    def _multinomial_replacement(self, rows, n_sample):
        """torch's CPU multinomial with replacement: a cumulative sum per row (in the rows'
        dtype), then a binary search of one float64 uniform per sample."""
        out = np.empty((rows.shape[0], n_sample), dtype=np.int64)
        for i, row in enumerate(rows):
            cum = np.cumsum(row, dtype=row.dtype)
            total = cum[-1]
            if not total > 0:
                raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
            cum = cum / total
            cum[-1] = 1
            u = self._unit(n_sample, np.float64)
            out[i] = np.searchsorted(cum.astype(np.float64), u, side="left")
        return out


default_generator = Generator()
default_generator.seed()        # like torch: a fresh seed in each process


_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
         0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
         0.00925546218271273, 0.00833056343336287)


class _Words:
    """A generator's 32-bit draws for a scalar Python loop, taken in blocks; ``close`` leaves
    the generator exactly after the draws used (and keeps Box-Muller's cached value)."""

    def __init__(self, gen):
        self.gen = gen
        self.saved = gen._bits.state
        self.buf, self.i, self.used = [], 0, 0

    def word(self):
        if self.i == len(self.buf):
            self.buf, self.i = self.gen._bits.random_raw(1024).tolist(), 0
        self.i += 1
        self.used += 1
        return self.buf[self.i - 1]

    def unit(self):
        """torch's ``uniform_real_distribution<double>(0, 1)``: 53 bits of a 64-bit draw."""
        hi = self.word()
        return ((((hi << 32) | self.word()) & _MASK53) * 2.0 ** -53)

    def normal(self):
        """torch's ``normal_distribution<double>(0, 1)``: Box-Muller, the second value cached
        in the generator."""
        gen = self.gen
        if gen._next_double is not None:
            v, gen._next_double = gen._next_double, None
            return v
        u1 = self.unit()
        u2 = self.unit()
        r = math.sqrt(-2.0 * math.log1p(-u2))
        theta = (2.0 * math.pi) * u1
        gen._next_double = r * math.sin(theta)
        return r * math.cos(theta)

    def close(self):
        bits = self.gen._bits
        bits.state = self.saved
        if self.used:
            bits.random_raw(self.used)
            self.gen._fresh = False


def _gamma_one(alpha, f, words):
    scale = 1.0
    if alpha < 1:
        if alpha == 0:
            return 0.0
        scale *= (1.0 - words.unit()) ** float(f(1.0) / alpha)
        alpha = f(alpha + f(1.0))
    d = float(f(alpha - _THIRD32)) if f is np.float32 else float(alpha) - float(_THIRD32)
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        while True:
            x = words.normal()
            y = 1.0 + c * x
            if y > 0:
                break
        v = y * y * y
        u = 1.0 - words.unit()
        xx = x * x
        if u < 1.0 - _C0331 * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


_MASK53 = (1 << 53) - 1
_THIRD32 = np.float32(1.0) / np.float32(3.0)     # torch's ``1.0f / 3.0f``
_C0331 = float(np.float32(0.0331))               # torch's ``0.0331f``


def _stirling_tail(k):
    """torch's ``stirling_approx_tail`` (float64): log(k!) minus its Stirling approximation."""
    if k <= 9:
        return _TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _clog(x):
    """C's ``log`` of a float: -inf at 0, NaN below (where Python's raises)."""
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


_LOG1PF = []


def _log1pf(x):
    """The C library's float32 ``log1pf`` (torch's ``std::log1p(float)``); NumPy's float32
    log1p can differ in the last bit."""
    if not _LOG1PF:
        try:
            import ctypes
            import ctypes.util
            fn = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6").log1pf
            fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
            _LOG1PF.append(lambda v: np.float32(fn(float(v))))
        except (OSError, AttributeError):       # (no C library to call: NumPy's)
            _LOG1PF.append(lambda v: np.log1p(np.float32(v)))
    return _LOG1PF[0](x)


_FLOAT_DIGITS = {2: 11, 4: 24, 8: 53}


def _digits(d):
    """The mantissa digits (``std::numeric_limits::digits``) of a float NumPy dtype."""
    return 8 if d.kind == "V" else _FLOAT_DIGITS[d.itemsize]

_INT_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char",
              "int16": "short int", "int32": "int", "int64": "long int"}


def _update_from(from_, d):
    """torch's ``update_from``: the first integer at or above ``from_`` the float dtype holds."""
    from_plus_1 = int(np.array(from_ + 1, dtype=np.float64).astype(d))
    if from_plus_1 < from_:
        n = abs(from_ + 1).bit_length() - 1
        from_ = from_plus_1 + (1 << (n - _digits(d) + 1))
    return from_


def _update_to(to, d):
    to_minus_1 = int(np.array(to - 1, dtype=np.float64).astype(d))
    if to_minus_1 >= to:
        n = abs(to - 1).bit_length() - 1
        to = to_minus_1 - (1 << (n - _digits(d) + 1))
    return to


def _check_in_range(from_, to_inc, d):
    if _dt.kind(d) == "f":
        import warnings
        digits = _digits(d)
        name = "c10::BFloat16" if d.kind == "V" else \
            {2: "c10::Half", 4: "float", 8: "double"}[d.itemsize]
        for what, v in (("from", from_), ("to - 1", to_inc)):
            if not -(1 << digits) <= v <= 1 << digits:
                warnings.warn("%s is out of bounds [-(2^%d), 2^%d]. Due to precision limitations "
                              "%s can support discrete uniform distribution only within this "
                              "range. This warning will become an error in version 1.7 release, "
                              "please fix the code in advance" % (what, digits, digits, name),
                              UserWarning, stacklevel=5)
        return
    lo, hi = (0, 1) if d.kind == "b" else (int(np.iinfo(d).min), int(np.iinfo(d).max))
    name = _INT_NAMES.get(d.name, d.name)
    if not lo <= from_ <= hi:
        raise RuntimeError("from is out of bounds for %s" % name)
    if not lo <= to_inc <= hi:
        raise RuntimeError("to - 1 is out of bounds for %s" % name)


def _random_range(d, from_, to):
    """torch's ``random_from_to_impl`` bounds: ``(range, base)`` for [from_, to) (``to`` None:
    up to the dtype's maximum), or None for the full 64-bit range."""
    d = np.dtype(d)
    if to is not None:
        if from_ >= to:
            raise RuntimeError("random_ expects 'from' to be less than 'to', but got from=%d >= "
                               "to=%d" % (from_, to))
        if _dt.kind(d) not in "biuf":
            raise RuntimeError("check_random_bounds handles only integral, floating-point and "
                               "boolean types")
        if _dt.kind(d) == "f":
            from_, to = _update_from(from_, d), _update_to(to, d)
            if from_ >= to:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than 'to' "
                                   "casted to dtype, but got from=%d >= to=%d" % (from_, to))
        _check_in_range(from_, to - 1, d)
        return to - from_, from_
    if _dt.kind(d) not in "biuf":
        raise RuntimeError("random_from_to_impl handles only integral, floating-point and "
                           "boolean types")
    if from_ == -(1 << 63):
        return None
    if _dt.kind(d) == "f":
        to_inc = 1 << _digits(d)
        from_ = _update_from(from_, d)
        if from_ >= to_inc:
            raise RuntimeError("random_ expects 'from' casted to dtype to be less than or equal "
                               "to 'to_inc' casted to dtype, but got from=%d > to_inc=%d"
                               % (from_, to_inc))
    else:
        to_inc = 1 if d.kind == "b" else int(np.iinfo(d).max)
    _check_in_range(from_, to_inc, d)
    return to_inc - from_ + 1, from_


def _sample_like(arr, draw):
    """A host sample shaped like array ``arr``: ``draw(n, contiguous)`` returns ``n`` values
    in the order torch's kernels visit ``arr``'s memory (innermost the smallest stride)."""
    if type(arr) is MetaArray:      # (no data: torch draws nothing for a meta tensor)
        return arr
    shape = arr.shape
    contiguous = bool(arr.flags.c_contiguous)
    flat = draw(arr.size, contiguous)
    if contiguous or arr.ndim < 2:
        return flat.reshape(shape)
    strides = arr.strides
    order = sorted(range(arr.ndim), key=lambda a: -abs(strides[a]) if shape[a] > 1 else 0)
    permuted = flat.reshape([shape[a] for a in order])
    return permuted.transpose([order.index(a) for a in range(arr.ndim)])


def _gen(generator=None):
    return default_generator if generator is None else generator


def _rng(generator=None):
    """The NumPy Generator over ``generator``'s stream (host-side code that needs NumPy's
    distributions)."""
    return _gen(generator).rng


def manual_seed(seed):
    """Seed the global generator so that every random op is reproducible; returns it."""
    return default_generator.manual_seed(int(seed))


def seed():
    """Seed the global generator from fresh entropy and return the seed."""
    return default_generator.seed()


def initial_seed():
    """The seed the global generator was last seeded with."""
    return default_generator.initial_seed()


def get_rng_state():
    """The global generator's state as a uint8 tensor (torch's 5056-byte layout)."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restore the global generator's state from ``get_rng_state()``."""
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type="cuda"):
    """Run the block with the global generator's state restored afterwards."""
    if not enabled:
        yield
        return
    state = default_generator.get_state()
    try:
        yield
    finally:
        default_generator.set_state(state)
