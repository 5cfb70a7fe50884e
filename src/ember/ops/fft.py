"""Discrete Fourier transforms (``ember.fft``): three differentiable primitives as torch's.

``FftC2C`` (complex to complex), ``FftR2C`` (real to complex, one-sided or full) and ``FftC2R``
(one-sided complex to real); every public transform resizes its input (``n``/``s``) and calls
one of them. ``norm`` is numpy's and torch's: "backward" (scale the inverse by ``1/n``),
"ortho" (both by ``1/sqrt(n)``) or "forward" (scale the forward transform by ``1/n``).
"""
import numbers

from .. import dtypes as _dt
from ..autograd import _autocast
from ..autograd.function import Function
from ..backend import backend_for, backend_of
from ..backend import quiet as _quiet
from ..tensor import Tensor
from ._util import get_array_module, wrap_dim, xp_of
from .complex import conj, conj_physical, real
from .shape import narrow, roll

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]

_NORMS = ("backward", "ortho", "forward")
# the same scale factor in the opposite direction (the adjoint transform's norm)
_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


class FftC2C(Function):
    """``fftn`` (``forward``) or ``ifftn`` of a complex tensor over ``dims``."""

    node_name = "FftC2CBackward0"

    @staticmethod
    def forward(ctx, a, dims, norm, forward):
        ctx.args = (dims, norm, forward)
        xp_fft = xp_of(a).fft
        fn = xp_fft.fftn if forward else xp_fft.ifftn
        return Tensor._wrap(_mkl_layout(fn(a._array, axes=dims, norm=norm),
                                        _sort_dims(a, dims), _elem_strides(a._array)))

    @staticmethod
    def backward(ctx, grad_output):
        dims, norm, forward = ctx.args
        # the adjoint of a DFT: the opposite transform with the same scale factor
        return FftC2C.apply(grad_output, dims, _DUAL[norm], not forward), None, None, None


class FftR2C(Function):
    """The DFT of a real tensor over ``dims``; ``onesided`` keeps the last dim's first half."""

    node_name = "FftR2CBackward0"

    @staticmethod
    def forward(ctx, a, dims, norm, onesided):
        ctx.args = (dims, norm, onesided)
        ctx.last = a._array.shape[dims[-1]]
        xp_fft = xp_of(a).fft
        fn = xp_fft.rfftn if onesided else xp_fft.fftn
        return Tensor._wrap(_mkl_layout(fn(a._array, axes=dims, norm=norm),
                                        _sort_dims(a, dims, True), _elem_strides(a._array)))

    @staticmethod
    def backward(ctx, grad_output):
        dims, norm, onesided = ctx.args
        g = grad_output
        if onesided:    # the dropped half of the spectrum gets no gradient: zeros
            g = Resize.apply(g, (dims[-1],), (ctx.last,))
        return real(FftC2C.apply(g, dims, _DUAL[norm], False)), None, None, None


class FftC2R(Function):
    """The inverse DFT of a one-sided (Hermitian) spectrum over ``dims``: a real tensor whose
    last transformed dim has ``last`` elements."""

    node_name = "FftC2RBackward0"

    @staticmethod
    def forward(ctx, a, dims, norm, last):
        ctx.args = (dims, norm, last)
        arr = a._array
        s = [arr.shape[d] for d in dims[:-1]] + [last]
        out = xp_of(a).fft.irfftn(arr, s=s, axes=dims, norm=norm)
        strides = _elem_strides(arr)
        if len(dims) > 1:   # (torch: a complex transform over the others first, then 1-D)
            strides = _layout_strides(arr.shape, strides, _sort_dims(a, dims[:-1]))
        return Tensor._wrap(_mkl_layout(out, dims[-1:], strides))

    @staticmethod
    def backward(ctx, grad_output):
        dims, norm, last = ctx.args
        g = FftR2C.apply(grad_output, dims, _DUAL[norm], True)
        # NOTE: as torch, entries whose mirror image lies outside the one-sided half stand for
        # two elements of the full spectrum: their gradient is doubled.
        half = last // 2 + 1
        double = last - half
        if double <= 0:
            return g, None, None, None
        xp = xp_of(g)
        w = xp.ones(half, dtype=_dt.from_numpy_dtype(g._array.dtype).to_real().np)
        w[1:1 + double] = 2
        shape = [1] * g._array.ndim
        shape[dims[-1]] = half
        return g * Tensor._wrap(w.reshape(shape)), None, None, None


def _elem_strides(arr):
    return tuple(st // arr.itemsize for st in arr.strides)


def _sort_dims(a, dims, exclude_last=False):
    """torch's ``_sort_dims``: the transformed dims by decreasing input stride."""
    st = _elem_strides(a._array)
    head = dims[:-1] if exclude_last else dims
    return tuple(sorted(head, key=lambda d: -st[d])) + (dims[-1:] if exclude_last else ())


def _partition(dims, keep):
    """libstdc++'s (unstable) ``std::partition``: the dims ``keep`` accepts, then the others."""
    a, first, last = list(dims), 0, len(dims)
    while True:
        while first != last and keep(a[first]):
            first += 1
        if first == last:
            return a, first
        last -= 1
        while first != last and not keep(a[last]):
            last -= 1
        if first == last:
            return a, first
        a[first], a[last] = a[last], a[first]
        first += 1


def _layout_order(strides, dims):
    """The dims in the order torch's MKL ``_exec_fft`` lays its output out (outermost first):
    the batch dims by decreasing input stride, then the transformed ``dims``."""
    perm, k = _partition(range(len(strides)), lambda d: d not in dims)
    return sorted(perm[:k], key=lambda d: -strides[d]) + list(dims)


def _layout_strides(shape, strides, dims):
    """The element strides of a transform's output of ``shape`` over ``dims`` whose input had
    ``strides``: row-major in ``_layout_order``."""
    out, step = [0] * len(shape), 1
    for d in reversed(_layout_order(strides, dims)):
        out[d] = step
        step *= max(shape[d], 1) if d in dims else shape[d]
    return tuple(out)


def _mkl_layout(out, dims, strides):
    """``out``, a transform over ``dims`` of an input with element ``strides``, in the memory
    layout torch's MKL transform gives it: not row-major when a batch dim follows a transformed
    one."""
    if out.ndim < 2 or not out.size:
        return out
    order = _layout_order(strides, dims)
    want = _layout_strides(out.shape, strides, dims)
    if _elem_strides(out) == want:
        return out
    buf = get_array_module(out).ascontiguousarray(out.transpose(order))
    # (as_strided: the strides of size-1 dims too, which a transposed view would not give)
    return backend_of(buf).as_strided(buf, out.shape, tuple(st * buf.itemsize for st in want))


class Resize(Function):
    """``a`` cropped or zero-padded at the end of each of ``dims`` to ``sizes``."""

    node_name = "ConstantPadNdBackward0"

    @staticmethod
    def forward(ctx, a, dims, sizes):
        arr = a._array
        ctx.args = (dims, tuple(arr.shape[d] for d in dims))
        shape = list(arr.shape)
        for d, n in zip(dims, sizes):
            shape[d] = n
        out = xp_of(a).zeros(tuple(shape), dtype=arr.dtype)
        common = tuple(slice(0, min(arr.shape[d], shape[d])) for d in range(arr.ndim))
        out[common] = arr[common]
        if all(n <= arr.shape[d] for d, n in zip(dims, sizes)):
            ctx.set_node_name("SliceBackward0")
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        dims, old = ctx.args
        return Resize.apply(grad_output, dims, old), None, None


def _norm(norm):
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise RuntimeError('Invalid normalization mode: "%s"' % norm)
    return norm


def _prep(x, real_only=None):
    """``x`` as a floating or complex tensor (integers as the default dtype); ``real_only``
    names the transform that refuses complex input."""
    x, = _autocast.inputs("fp32", (x,))
    kind = x._array.dtype.kind
    if kind in "iub":
        return Tensor._wrap(x._array.astype(_dt.get_default_dtype().np))
    if x._array.dtype.itemsize == 2 and kind in "fV":
        raise RuntimeError("Unsupported dtype %s" % _dt.scalar_type_name(x._array.dtype))
    if real_only and kind == "c":
        raise RuntimeError("%s expects a real input tensor, but got %s"
                           % (real_only, _dt.scalar_type_name(x._array.dtype)))
    return x


class ToComplex(Function):
    """A real tensor promoted to complex (torch's ``to``); the gradient is the real part."""

    node_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, a):
        arr = a._array
        return Tensor._wrap(arr.astype(_dt.from_numpy_dtype(arr.dtype).to_complex().np))

    @staticmethod
    def backward(ctx, grad_output):
        return real(grad_output)


def _as_complex(x):
    """``x`` promoted to complex."""
    if x._array.dtype.kind == "c":
        return x
    return ToComplex.apply(x)


def _one_dim(x, n, dim, check=True):
    """(dims, sizes) of a one-dimensional transform; sizes None when ``n`` is None
    (``check``: the number of points must be positive)."""
    if x._array.ndim == 0:
        raise IndexError("Dimension specified as %d but tensor has no dimensions" % dim)
    d = wrap_dim(dim, x._array.ndim)
    size = x._array.shape[d] if n is None else n
    if check and size < 1:
        raise RuntimeError("Invalid number of data points (%d) specified" % size)
    return (d,), (None if n is None else (n,))


def _int_list(v):
    return (v,) if isinstance(v, numbers.Integral) else tuple(v)


def _many_dims(x, s, dim):
    """(dims, sizes) of an n-dimensional transform as torch resolves ``s`` and ``dim``."""
    ndim = x._array.ndim
    shape = x._array.shape
    s = None if s is None else _int_list(s)
    if dim is not None:
        dims = _int_list(dim)
        if ndim == 0 and dims:
            raise IndexError("Dimension specified as %d but tensor has no dimensions" % dims[0])
        dims = tuple(wrap_dim(d, ndim) for d in dims)
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        dims = tuple(range(ndim - len(s), ndim))
    else:
        dims = tuple(range(ndim))
    if s is not None and len(s) > ndim:
        raise RuntimeError("Got shape with %d values but input tensor only has %d "
                           "dimensions." % (len(s), ndim))
    sizes = tuple(shape[d] if s is None or s[i] == -1 else int(s[i]) for i, d in enumerate(dims))
    for n in sizes:
        if n < 1:
            raise RuntimeError("Invalid number of data points (%d) specified" % n)
    return dims, (None if s is None else sizes)


def _resized(x, dims, sizes):
    """``x`` cropped (one slice per dim) then zero-padded to ``sizes``, as torch's
    ``resize_fft_input``."""
    if sizes is None:
        return x
    pad = False
    for d, n in zip(dims, sizes):
        if x._array.shape[d] > n:
            x = narrow(x, d, 0, n)
        elif x._array.shape[d] < n:
            pad = True
    return Resize.apply(x, dims, sizes) if pad else x


def _c2c(x, dims, sizes, norm, forward):
    """``fftn``/``ifftn``: a real input is promoted to complex first."""
    norm = _norm(norm)
    x = _resized(_as_complex(x), dims, sizes)
    if not dims:
        return x
    return FftC2C.apply(x, dims, norm, forward)


def _c2c_1d(x, dims, sizes, norm, forward):
    """``fft``/``ifft``: as torch, a real input takes a full real-to-complex transform (an
    inverse one is the conjugate of the forward transform with the same scale)."""
    norm = _norm(norm)
    x = _resized(x, dims, sizes)
    if x._array.dtype.kind == "c":
        return FftC2C.apply(x, dims, norm, forward)
    y = FftR2C.apply(x, dims, norm if forward else _DUAL[norm], False)
    return y if forward else conj(y)


def _r2c(x, dims, sizes, norm):
    norm = _norm(norm)
    return FftR2C.apply(_resized(x, dims, sizes), dims, norm, True)


def _c2r_sizes(x, dims, sizes, s):
    """The output length of the last dim and the input sizes the spectrum is resized to."""
    if sizes is not None and (s is None or _int_list(s)[-1] != -1):
        last = sizes[-1]
    else:
        last = 2 * (x._array.shape[dims[-1]] - 1)
    if last < 1:
        raise RuntimeError("Invalid number of data points (%d) specified" % last)
    new = tuple(sizes[:-1]) if sizes is not None else \
        tuple(x._array.shape[d] for d in dims[:-1])
    return last, new + (last // 2 + 1,)


def _c2r(x, dims, sizes, norm, s=None):
    norm = _norm(norm)
    x = _as_complex(x)
    last, new = _c2r_sizes(x, dims, sizes, s)
    x = _resized(x, dims, new if sizes is not None else None)
    return FftC2R.apply(x, dims, norm, last)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """One-dimensional discrete Fourier transform. Matches ``torch.fft.fft``.

    Example:
        >>> import ember
        >>> ember.fft.fft(ember.tensor([1., 0., 0., 0.]))
        tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    x = _prep(input)
    dims, sizes = _one_dim(x, n, dim)
    return _c2c_1d(x, dims, sizes, norm, True)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """One-dimensional inverse discrete Fourier transform. Matches ``torch.fft.ifft``."""
    x = _prep(input)
    dims, sizes = _one_dim(x, n, dim)
    return _c2c_1d(x, dims, sizes, norm, False)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional discrete Fourier transform over ``dim`` (all dims by default)."""
    dims, sizes = _many_dims(input, s, dim)
    return _c2c(_prep(input), dims, sizes, norm, True)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional inverse discrete Fourier transform."""
    dims, sizes = _many_dims(input, s, dim)
    return _c2c(_prep(input), dims, sizes, norm, False)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional discrete Fourier transform (``fftn`` over the last two dims)."""
    return fftn(input, s, dim, norm)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional inverse discrete Fourier transform."""
    return ifftn(input, s, dim, norm)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The DFT of a real signal: the ``n // 2 + 1`` non-negative frequencies."""
    x = _prep(input, "rfft")
    dims, sizes = _one_dim(x, n, dim)
    return _r2c(x, dims, sizes, norm)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of ``rfft``: a real signal of ``n`` points (default ``2 * (m - 1)``)."""
    x = _prep(input)
    dims, sizes = _one_dim(x, n, dim, check=False)
    return _c2r(x, dims, sizes, norm)


def _at_least_one(name, dims):
    if not dims:
        raise RuntimeError("%s must transform at least one axis" % name)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional DFT of a real signal (one-sided over the last of ``dim``)."""
    if input._array.dtype.kind == "c":
        raise RuntimeError("rfftn expects a real-valued input tensor, but got %s"
                           % _dt.scalar_type_name(input._array.dtype))
    dims, sizes = _many_dims(input, s, dim)
    _at_least_one("rfftn", dims)
    return _r2c(_prep(input), dims, sizes, norm)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of ``rfftn``."""
    dims, sizes = _many_dims(input, s, dim)
    _at_least_one("irfftn", dims)
    return _c2r(_prep(input), dims, sizes, norm, s)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional ``rfftn``."""
    return rfftn(input, s, dim, norm)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional ``irfftn``."""
    return irfftn(input, s, dim, norm)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The DFT of a Hermitian-symmetric signal given by its first half: a real tensor."""
    x = _as_complex(_prep(input))
    dims, sizes = _one_dim(x, n, dim, check=False)
    last, new = _c2r_sizes(x, dims, sizes, None)
    x = conj(_resized(x, dims, new if n is not None else None))
    return FftC2R.apply(x, dims, _DUAL[_norm(norm)], last)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of ``hfft``: the one-sided inverse DFT of a real signal."""
    x = _prep(input, "ihfft")
    dims, sizes = _one_dim(x, n, dim)
    return conj(_r2c(x, dims, sizes, _DUAL[_norm(norm)]))


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional ``hfft`` (the one-sided input is the last of ``dim``)."""
    dims, sizes = _many_dims(input, s, dim)
    _at_least_one("hfftn", dims)
    x = _as_complex(_prep(input))
    norm = _norm(norm)
    last, new = _c2r_sizes(x, dims, sizes, s)
    x = _resized(x, dims, new if sizes is not None else None)
    # as torch: forward complex transforms over all but the last dim, then a one-sided
    # inverse of the conjugate over the last
    if len(dims) > 1:
        x = FftC2C.apply(x, dims[:-1], norm, True)
    return FftC2R.apply(conj(x), dims[-1:], _DUAL[norm], last)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional ``ihfft``."""
    dims, sizes = _many_dims(input, s, dim)
    _at_least_one("ihfftn", dims)
    if input._array.dtype.kind == "c":
        raise RuntimeError("Only supports floating-point dtypes, but found: %s"
                           % _dt.scalar_type_name(input._array.dtype))
    x = _prep(input)
    norm = _norm(norm)
    # as torch: the one-sided inverse over the last dim, then complex inverses over the others
    y = _r2c(_resized(x, dims, sizes), dims[-1:], None, _DUAL[norm])
    if len(dims) == 1:
        return conj(y)
    return FftC2C.apply(conj_physical(y), dims[:-1], norm, False)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional ``hfftn``."""
    return hfftn(input, s, dim, norm)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional ``ihfftn``."""
    return ihfftn(input, s, dim, norm)


def _freq(values_fn, n, size, d, dtype, device, requires_grad):
    """``values_fn(xp, n) / (n * d)``: ``size`` frequencies (torch's error when negative)."""
    if size < 0:
        raise RuntimeError("Trying to create tensor with negative dimension %d: [%d]"
                           % (size, size))
    d_ = _dt.to_dtype(dtype)
    xp = backend_for(device).xp
    with _quiet():
        t = Tensor._wrap(xp.asarray(values_fn(xp, n) / (n * d), dtype=d_.np))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _fft_values(xp, n):
    k = xp.arange(n, dtype=float)
    return xp.where(k < (n + 1) // 2, k, k - n)


def _check_n(name, n):
    """``n`` as an int (a 0-d integer tensor too, as torch's argument parser)."""
    if isinstance(n, Tensor) and n._array.ndim == 0 and n._array.dtype.kind in "iu":
        return int(n._array)    # host: a Python int
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise TypeError("%s(): argument 'n' (position 1) must be int, not %s"
                        % (name, type(n).__name__))
    return n


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an ``n``-point ``fft`` with sample spacing ``d``."""
    n = _check_n("fft_fftfreq", n)
    return _freq(_fft_values, n, n, d, dtype, device, requires_grad)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an ``n``-point ``rfft`` with sample spacing ``d``."""
    n = _check_n("fft_rfftfreq", n)
    size = int(n / 2) + 1     # (C's division: truncated toward zero)
    return _freq(lambda xp, m: xp.arange(size, dtype=float), n, size, d, dtype, device,
                 requires_grad)


def _shift_dims(x, dim):
    ndim = x._array.ndim
    if dim is None:
        dim = tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if not dims:
        raise RuntimeError("`shifts` required")
    return tuple(wrap_dim(d, ndim) for d in dims)


def fftshift(input, dim=None):
    """Move the zero frequency to the centre (a roll by ``n // 2`` over ``dim``)."""
    dims = _shift_dims(input, dim)
    return roll(input, tuple(input._array.shape[d] // 2 for d in dims), dims)


def ifftshift(input, dim=None):
    """The inverse of ``fftshift``."""
    dims = _shift_dims(input, dim)
    return roll(input, tuple((input._array.shape[d] + 1) // 2 for d in dims), dims)
