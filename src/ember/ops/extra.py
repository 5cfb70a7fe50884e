"""More of torch's tensor functions: histograms, statistics, windows, index helpers, number
theory, cumulative max/min, integration, aliases and in-place variants."""
import builtins as _b
import math
import warnings

import numpy as np

from .. import dtypes as _dt
from .. import return_types as _rt
from ..autograd import _autocast
from ..autograd.function import Function
from ..autograd.grad_mode import state as _grad_state
from ..tensor import Tensor
from ._inplace import _KIND_RANK, check_into, inplace, write
from ..backend import errstate
from ._util import (backend_for, binary_arrays, check_real_grad, checked_scalar, need_tensors,
                    needs_float, wrap_dim, xp_of)
from .activation import threshold, threshold_  # noqa: F401 (torch.threshold)
from .arithmetic import DivScalar, MulScalar, _no_bool_sub, float_power, neg_, sub
from .comparison import (_castable_into, bitwise_left_shift, bitwise_not,
                         bitwise_right_shift,
                         ge_, gt_, le_, logical_xor, lt_, ne_)
from .creation import _new, as_tensor, zeros
from .matmul import addbmm, addmm, addmv, baddbmm, check_inplace_product
from .reduction import cumsum, norm
from .scatter import gather, masked_select
from .complex import complex as _complex
from .shape import (Squeeze, _reshaped_view, c_order, cat, chunk, diag_embed, flatten, narrow,
                    split, split_with_sizes, stack, transpose_, tril, triu)
from .unary import _unary, _zero_grad, acosh, acosh_, asinh, asinh_, atanh, atanh_, clamp

__all__ = [
    "arcsinh", "arccosh", "arctanh", "arcsinh_", "arccosh_", "arctanh_", "negative_",
    "greater_", "greater_equal_", "less_", "less_equal_", "not_equal_", "logical_xor_",
    "swapaxes_", "swapdims_", "deg2rad", "rad2deg", "deg2rad_", "rad2deg_", "trace", "dist",
    "copysign", "copysign_", "ldexp", "ldexp_", "frexp", "gcd", "gcd_", "lcm", "lcm_",
    "heaviside", "heaviside_", "nextafter", "nextafter_", "float_power_", "diff", "gradient",
    "trapezoid", "trapz", "cumulative_trapezoid", "diagflat", "renorm", "renorm_", "isin",
    "quantile", "nanquantile", "cov", "corrcoef", "cummax", "cummin", "logcumsumexp", "addr",
    "addr_", "addmm_", "addmv_", "addbmm_", "baddbmm_", "bitwise_not_", "bitwise_left_shift_",
    "bitwise_right_shift_", "tril_", "triu_", "cdist", "bincount", "histc", "histogram",
    "histogramdd", "block_diag", "cartesian_prod", "combinations", "tril_indices",
    "triu_indices", "hann_window", "hamming_window", "blackman_window", "bartlett_window",
    "kaiser_window", "fill", "unravel_index", "is_same_size", "is_signed", "is_inference",
    "can_cast", "apply_", "map_", "map2_", "fill_diagonal_", "threshold", "threshold_",
    "unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes", "is_distributed", "dim_order",
]

arcsinh, arccosh, arctanh = asinh, acosh, atanh
arcsinh_, arccosh_, arctanh_ = asinh_, acosh_, atanh_
negative_ = neg_
greater_, greater_equal_, less_, less_equal_, not_equal_ = gt_, ge_, lt_, le_, ne_
swapaxes_ = swapdims_ = transpose_


def logical_xor_(input, other):
    """In-place ``logical_xor`` (the result cast to ``input``'s dtype)."""
    write(input, logical_xor(input, other)._array.astype(input._array.dtype), "logical_xor_")
    return input


def _inplace_of(fn, name):
    def op_(input, *args, **kwargs):
        return inplace(input, fn, *args, **kwargs)
    op_.__name__ = name + "_"
    op_.__doc__ = "In-place ``%s``." % name
    return op_


_DEG = math.pi / 180.0
Deg2Rad = _unary("Deg2Rad", lambda xp, x: x * x.dtype.type(_DEG), "Deg2RadBackward0",
                 lambda g, a: g * _DEG)
Rad2Deg = _unary("Rad2Deg", lambda xp, x: x * x.dtype.type(1 / _DEG), "Rad2DegBackward0",
                 lambda g, a: g * (1 / _DEG))


def deg2rad(input):
    """Angles in degrees to radians."""
    _no_complex(input, "deg2rad")
    return Deg2Rad.apply(input)


def rad2deg(input):
    """Angles in radians to degrees."""
    _no_complex(input, "rad2deg")
    return Rad2Deg.apply(input)


def _no_complex(input, op):
    if input._array.dtype.kind == "c":
        raise RuntimeError("%s is not supported for complex tensors." % op)


class Trace(Function):
    node_name = "TraceBackward0"

    @staticmethod
    def forward(ctx, a):
        arr = a._array
        if arr.dtype.kind in "biu":
            arr = arr.astype(np.int64)
        return Tensor._wrap(xp_of(a).asarray(xp_of(a).trace(arr)))

    @staticmethod
    def backward(ctx, grad_output):
        n, m = ctx._input_meta(0)[0]
        eye = Tensor._wrap(xp_of(grad_output).eye(n, m, dtype=grad_output._array.dtype))
        return grad_output * eye


def trace(input):
    """Sum of the main diagonal of a 2-D tensor."""
    if input._array.dtype == np.bool_:     # (torch's dtype dispatch comes before the dim check)
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    if input.dim() != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim %d" % input.dim())
    return Trace.apply(input)


def dist(input, other, p=2):
    """``norm(input - other, p)`` (a real result for complex inputs)."""
    need_tensors("dist", input, other)
    if input._array.dtype.kind == "b" or other._array.dtype.kind == "b":
        _no_bool_sub(input, other)
    aa, ba = binary_arrays("dist", input, other)
    if aa.dtype.kind not in "fcV":
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           "Got %s instead." % _dt.scalar_type_name(aa.dtype))
    return Dist.apply(input, other, float(p))


class Dist(Function):
    """``||a - b||_p`` over all elements, one node as torch's DistBackward0."""

    node_name = "DistBackward0"

    @staticmethod
    def forward(ctx, a, b, p):
        aa, ba = binary_arrays("dist", a, b)
        out = Tensor._wrap(norm(Tensor._wrap(aa - ba), p)._array)
        ctx.p, ctx.dtype = p, _dt.from_numpy_dtype(aa.dtype)
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        a, b, out = ctx.saved_tensors
        need = ctx.needs_input_grad
        if ctx.p == 0:
            if need[1]:
                raise RuntimeError("Expected a proper Tensor but got None (or an undefined "
                                   "Tensor in C++) for argument #0 'self'")
            return None, None, None
        dt = ctx.dtype
        d = (a if a.dtype == dt else a.to(dt)) - (b if b.dtype == dt else b.to(dt))
        gd = _norm_backward(grad_output, d, ctx.p, out, tuple(range(d.dim())))
        ga = _sum_back(gd, ctx._input_meta(0)[0]) if need[0] else None
        gb = _sum_back(-gd, ctx._input_meta(1)[0]) if need[1] else None
        for k, g in enumerate((ga, gb)):
            if g is not None:
                check_real_grad(g, ctx, k)
        return ga, gb, None


class Copysign(Function):
    node_name = "CopysignBackward0"

    @staticmethod
    def forward(ctx, a, b):
        aa, ba = binary_arrays("copysign", a, b)
        aa = needs_float(aa)
        if not isinstance(b, Tensor):   # (torch casts a number straight to the float dtype)
            ba = float(b)
        out = Tensor._wrap(xp_of(a).copysign(aa, xp_of(a).asarray(ba, dtype=aa.dtype)))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        a, out = ctx.saved_tensors
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ratio = Tensor._wrap(xp_of(a).where(a._array == 0, 0, out._array / xp_of(a).where(
                a._array == 0, 1, a._array)).astype(out._array.dtype))
            ga = _sum_back(grad_output * ratio, ctx._input_meta(0)[0])
        if ctx.needs_input_grad[1]:
            gb = _sum_back(_zero_grad(grad_output), ctx._input_meta(1)[0])
        return ga, gb


def _sum_back(g, shape):
    return g if tuple(g.shape) == tuple(shape) else g.sum_to_size(shape)


def copysign(input, other):
    """``input``'s magnitudes with ``other``'s signs (a float result)."""
    if not isinstance(input, Tensor):
        raise TypeError("copysign() received an invalid combination of arguments - got (%s, %s), "
                        "but expected one of:\n * (Tensor input, Tensor other, *, Tensor out = "
                        "None)\n * (Tensor input, Number other, *, Tensor out = None)\n"
                        % (type(input).__name__, type(other).__name__))
    if isinstance(other, Tensor):
        _broadcast_first(input._array.shape, other._array.shape)
    d = _dt.result_type(input, other)
    if d.is_complex:
        raise NotImplementedError("\"copysign_cpu\" not implemented for '%s'" % d._legacy[:-6])
    return Copysign.apply(input, other)


class Ldexp(Function):
    node_name = "LdexpBackward0"

    @staticmethod
    def forward(ctx, a, b, into=None):
        aa, ba = binary_arrays("ldexp", a, b)
        aa = needs_float(aa)
        xp = xp_of(a)
        bb = b._array
        with errstate(invalid="ignore", over="ignore"):
            if bb.dtype.kind in "fV":   # (torch's pow(2.0, b): rounded to its dtype first)
                d = _pow2_dtype(a._array.dtype, bb)
                p2 = xp.exp2(bb.astype(np.float64 if d == np.float64 else np.float32))
                p2 = p2.astype(d).astype(aa.dtype)
            elif aa.dtype.kind == "c":    # (torch's pow(2, b) = exp(b * log 2): inf * 0j is nan)
                p2 = xp.exp(ba.astype(aa.dtype) * aa.dtype.type(complex(_LN2, 0.0)))
            else:
                p2 = xp.exp2(ba.astype(aa.dtype))
            res = aa * p2
            out = Tensor._wrap(res if into is None else res.astype(into.np))
        ctx.into = into
        ctx.save_for_backward(b, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        b, out = ctx.saved_tensors
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = _sum_back(grad_output * _pow2(b).conj(), ctx._input_meta(0)[0])
            if ctx.into is not None:
                ga = ga.to(ctx.into)
            check_real_grad(ga, ctx, 0)
        if ctx.needs_input_grad[1]:
            # (in place: the gradient is formed in the input's dtype, as torch's result)
            gb = _sum_back((grad_output * out.conj()) * _LN2, ctx._input_meta(1)[0])
            check_real_grad(gb, ctx, 1)
            if ctx.into is not None:
                gb = gb.to(b.dtype)
        return ga, gb, None


_LN2 = math.log(2.0)


def _pow2_dtype(ad, bb):
    """The real dtype torch computes ldexp's ``2 ** b`` in (a float ``b``): ``pow`` of a 0-d
    two of the input's dtype (float32 for integers) by ``b``, promoted as tensors are; a
    float32 input with a 0-d ``b`` takes ``b``'s dtype."""
    bd = _dt._BY_NP[bb.dtype]
    two = _dt.float32 if ad.kind in "biu" else _dt._BY_NP[ad]
    if bb.ndim and two.is_complex:
        d = _dt.promote_types(bd, _dt.float32) if bd.np.itemsize < 4 else bd
    elif bb.ndim or two is _dt.float32:
        d = bd
    else:
        d = _dt.promote_types(two.to_real(), bd)
    return d.np


def _pow2(b):
    """torch's ``pow(2, b)`` in ``b``'s dtype: an integer power wraps, a negative one is 0."""
    arr = b._array
    if arr.dtype.kind not in "iu":
        return 2 ** b
    xp = xp_of(b)
    bits = arr.dtype.itemsize * 8
    ok = (arr >= 0) & (arr < bits)
    shifted = xp.left_shift(xp.ones_like(arr), xp.where(ok, arr, 0).astype(arr.dtype))
    return Tensor._wrap(xp.where(ok, shifted, 0).astype(arr.dtype))


def _broadcast_first(a_shape, b_shape):
    """torch's broadcast error (its message has no op name), checked before dtypes."""
    for i, (x, y) in enumerate(zip(reversed(a_shape), reversed(b_shape))):
        if x != y and x != 1 and y != 1:
            raise RuntimeError("The size of tensor a (%d) must match the size of tensor b (%d) "
                               "at non-singleton dimension %d"
                               % (x, y, _b.max(len(a_shape), len(b_shape)) - 1 - i))


def ldexp(input, other):
    """``input * 2 ** other``."""
    need_tensors("ldexp", input, other)
    _ldexp_chalf(input, other)
    _broadcast_first(input._array.shape, other._array.shape)
    if isinstance(other, Tensor) and other._array.dtype == np.bool_ and \
            input._array.dtype.kind in "fV":
        raise NotImplementedError("\"ldexp_cpu_exp\" not implemented for 'Bool'")
    return Ldexp.apply(input, other)


def _ldexp_chalf(input, other):
    """torch computes ``2 ** other`` in ComplexHalf for a complex input and a float16
    exponent with dims, a power it has no kernel for."""
    if input._array.dtype.kind == "c" and other._array.dtype == np.float16 and \
            other._array.ndim:
        raise NotImplementedError("\"pow\" not implemented for 'ComplexHalf'")


def frexp(input):
    """Mantissa in (-1, 1) and integer exponent with ``input == mantissa * 2 ** exponent``."""
    if _dt.kind(input._array.dtype) != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    return _rt_frexp(*Frexp.apply(input))


class Frexp(Function):
    node_name = "FrexpBackward0"

    @staticmethod
    def forward(ctx, a):
        m, e = xp_of(a).frexp(a._array)
        exponent = Tensor._wrap(e.astype(np.int32))
        ctx.save_for_backward(exponent)
        return Tensor._wrap(m.astype(a._array.dtype, copy=False)), exponent

    @staticmethod
    def backward(ctx, grad_mantissa, grad_exponent):
        exponent, = ctx.saved_tensors
        # NOTE: torch's formula ``grad / exponent.exp2()``: exp2 of the int32 exponent is
        # float32, so past 2**127 the gradient is 0
        return grad_mantissa / exponent.exp2()


_rt_frexp, _rt_cummax, _rt_cummin = _rt.frexp, _rt.cummax, _rt.cummin
_rt_histogram, _rt_histogramdd = _rt.histogram, _rt.histogramdd


def _int_binary(name, kernel):
    def fn(input, other):
        need_tensors(name, input, other)
        aa, ba = binary_arrays(name, input, other)
        if aa.dtype.kind not in "iu":
            raise NotImplementedError("\"%s_cpu\" not implemented for '%s'"
                                      % (name, _dt.from_numpy_dtype(aa.dtype)._legacy[:-6]))
        return Tensor._wrap(xp_of(input).asarray(getattr(xp_of(input), kernel)(aa, ba)))
    fn.__name__ = name
    fn.__doc__ = "Element-wise ``%s`` of integer tensors." % name
    return fn


gcd = _int_binary("gcd", "gcd")
lcm = _int_binary("lcm", "lcm")


def heaviside(input, values):
    """The Heaviside step: 0 below zero, 1 above, ``values`` at zero."""
    return _heaviside(input, values, "aten::heaviside")


def heaviside_(input, values):
    """In-place ``heaviside``."""
    def heaviside(t, v):
        return _heaviside(t, v, "aten::heaviside_")
    return inplace(input, heaviside, values)


def _heaviside(input, values, aten):
    need_tensors("heaviside", input, values, ("input", "values"))
    if input._array.dtype.kind == "c" or values._array.dtype.kind == "c":
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if not isinstance(values, Tensor) or values._array.dtype != input._array.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    aa, ba = binary_arrays("heaviside", input, values)
    xp = xp_of(input)
    # NOTE: torch's ``x == 0 ? values : x > 0``: NaN gives 0 (NumPy's heaviside gives NaN)
    out = Tensor._wrap(xp.where(aa == 0, ba, aa > 0).astype(aa.dtype))
    return _NoDerivative.apply(input, values, out, aten)


class _NoDerivative(Function):
    """Results ``outs`` computed from the Tensor inputs, whose backward raises torch's error for
    an op without a derivative formula (torch's node: NotImplemented)."""

    node_name = "NotImplemented"

    @staticmethod
    def forward(ctx, a, b, outs, aten):
        ctx.aten = aten
        return outs

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("derivative for %s is not implemented" % ctx.aten)


def nextafter(input, other):
    """The next float after ``input`` towards ``other``."""
    need_tensors("nextafter", input, other)
    aa, ba = binary_arrays("nextafter", input, other)
    if _dt.kind(aa.dtype) != "f":
        raise NotImplementedError("\"nextafter_cpu\" not implemented for '%s'"
                                  % _dt.from_numpy_dtype(aa.dtype)._legacy[:-6])
    return Nextafter.apply(input, other)


class Nextafter(Function):
    """torch's derivative: the gradient passes to ``input`` where it differs from ``other``
    (zero where they are equal); ``other`` gets zeros."""

    node_name = "NextafterBackward0"

    @staticmethod
    def forward(ctx, a, b):
        aa, ba = binary_arrays("nextafter", a, b)
        ctx.save_for_backward(a, b)
        return Tensor._wrap(xp_of(a).nextafter(aa, xp_of(a).asarray(ba, dtype=aa.dtype)))

    @staticmethod
    def backward(ctx, grad_output):
        need = ctx.needs_input_grad
        ga = None
        if need[0]:
            a, b = ctx.saved_tensors
            ga = _sum_back(grad_output.masked_fill(a == b, 0), ctx._input_meta(0)[0])
        gb = _sum_back(_zero_grad(grad_output), ctx._input_meta(1)[0]) if need[1] else None
        return ga, gb


def float_power_(input, exponent):
    """In-place ``float_power`` (``input`` must be float64)."""
    cplx = input._array.dtype.kind == "c" or isinstance(exponent, complex) or (
        isinstance(exponent, Tensor) and exponent._array.dtype.kind == "c")
    if input._array.dtype != (np.complex128 if cplx else np.float64):
        raise RuntimeError("the base given to float_power_ has dtype %s but the operation's "
                           "result requires dtype %s"
                           % (_dt.from_numpy_dtype(input._array.dtype)._legacy[:-6],
                              "ComplexDouble" if cplx else "Double"))
    return inplace(input, float_power, exponent)


def copysign_(input, other):
    """In-place ``copysign``."""
    # (torch's output checks, on the float result type, come before the kernel's dtype one)
    dst = input._array.dtype
    if isinstance(other, Tensor) and other._array.shape != input._array.shape:
        check_into(input._array.shape, other._array.shape)
    if isinstance(other, complex) and dst.kind != "c":
        res = "ComplexHalf" if dst == np.float16 else _dt.scalar_type_name(
            np.complex128 if dst == np.float64 else np.complex64)
    else:
        d = _dt.result_type(input, other).np
        res = _dt.scalar_type_name(d if d.kind in "fcV" else _dt.get_default_dtype().np)
    if res.startswith("Complex") and dst.kind != "c" or dst.kind in "biu":
        raise RuntimeError("result type %s can't be cast to the desired output type %s"
                           % (res, _dt.scalar_type_name(dst)))
    return inplace(input, copysign, other)
_ldexp_ = _inplace_of(ldexp, "ldexp")


def _ldexp_into(input, other):
    """``ldexp`` rounded to ``input``'s dtype in the node itself (for ``ldexp_``)."""
    need_tensors("ldexp", input, other)
    return Ldexp.apply(input, other, input.dtype)


_ldexp_into.__name__ = "ldexp"


def ldexp_(input, other):
    """In-place ``ldexp`` (``input`` must hold the float result)."""
    if input._array.dtype.kind not in "fcV":
        raise RuntimeError("ldexp can't be cast to the desired output type %s"
                           % _dt.scalar_type_name(input._array.dtype))
    if isinstance(other, Tensor):
        _ldexp_chalf(input, other)
        a, b = input._array.shape, other._array.shape
        _broadcast_first(a, b)
        full = tuple(np.broadcast_shapes(a, b))
        if full != tuple(a):
            raise RuntimeError("output with shape %s doesn't match the broadcast shape %s"
                               % (list(a), list(full)))
        res = _dt.result_type(input, other)
        if other._array.dtype != input._array.dtype and res.np != input._array.dtype:
            if res.is_complex and input._array.dtype.kind != "c":
                raise RuntimeError("result type %s can't be cast to the desired output type %s"
                                   % (_dt.scalar_type_name(res.np),
                                      _dt.scalar_type_name(input._array.dtype)))
            return inplace(input, _ldexp_into, other)
    return _ldexp_(input, other)
def _inplace_checked(fn, name):
    """In-place ``fn`` with torch's output checks first (the broadcast shape, then the result
    dtype), before the kernel's dtype check."""
    inner = _inplace_of(fn, name)

    def op_(input, other):
        if isinstance(other, Tensor):
            shape = tuple(input._array.shape)
            try:
                full = np.broadcast_shapes(shape, other._array.shape)
            except ValueError:
                full = shape
            if full != shape:
                raise RuntimeError("output with shape %s doesn't match the broadcast shape %s"
                                   % (list(shape), list(full)))
            d = _dt.result_type(input, other)
            if _KIND_RANK[d.np.kind] > _KIND_RANK[input._array.dtype.kind]:
                raise RuntimeError("result type %s can't be cast to the desired output type %s"
                                   % (_dt.scalar_type_name(d.np),
                                      _dt.scalar_type_name(input._array.dtype)))
        return inner(input, other)
    op_.__name__, op_.__doc__ = inner.__name__, inner.__doc__
    return op_


gcd_ = _inplace_checked(gcd, "gcd")
lcm_ = _inplace_checked(lcm, "lcm")
nextafter_ = _inplace_checked(nextafter, "nextafter")


def _inplace_product(fn, name, dims, out_shape, pre=None):
    """In-place ``fn`` (addmm, addmv, baddbmm) with torch's check, after ``fn``'s own: the
    shape ``out_shape(a, b)`` of the product of ``a`` and ``b`` (of ``dims`` dimensions) must be
    ``input``'s (no broadcasting); ``pre(input, a, b)``, if given, is torch's check made
    before the kernel (its meta function's)."""
    def check(t, a, b):
        shape = out_shape(a, b)
        if tuple(t.shape) != shape:
            raise RuntimeError("Bad in-place call: input tensor size %s and output tensor size %s"
                               " should match" % (list(t.shape), list(shape)))

    def checked(t, a, b, **kwargs):
        if pre is not None:
            pre(t, a, b)
        try:
            out = fn(t, a, b, **kwargs)
        except NotImplementedError:     # (a dtype torch's kernel lacks: checked after shapes)
            if (a.dim(), b.dim()) == dims:
                check(t, a, b)
            raise
        check(t, a, b)
        return out
    checked.__name__ = name

    def op_(input, a, b, **kwargs):
        return inplace(input, checked, a, b, **kwargs)
    op_.__name__ = name + "_"
    op_.__doc__ = "In-place ``%s``." % name
    return op_


addmm_ = _inplace_product(addmm, "addmm", (2, 2), lambda a, b: (a.shape[0], b.shape[1]))
addmv_ = _inplace_product(addmv, "addmv", (2, 1), lambda a, b: (a.shape[0],))
_addbmm_ = _inplace_of(addbmm, "addbmm")


def addbmm_(input, batch1, batch2, *, beta=1, alpha=1):
    """In-place ``addbmm``."""
    b1 = batch1._array if isinstance(batch1, Tensor) else None
    if input._array.dtype.kind in "iu" and b1 is not None and b1.ndim == 3 and not b1.shape[0]:
        # NOTE: torch's loop of addmm_ runs no call for no batch, so checks no dtype: an integer
        # input is only scaled by beta (torch keeps a node no gradient can pass; ember none)
        return _addbmm_(input, batch1.detach(), batch2.detach(), beta=beta, alpha=alpha)
    return _addbmm_(input, batch1, batch2, beta=beta, alpha=alpha)
baddbmm_ = _inplace_product(baddbmm, "baddbmm", (3, 3),
                            lambda a, b: (a.shape[0], a.shape[1], b.shape[2]),
                            lambda t, a, b: check_inplace_product("baddbmm", t, a, b))
bitwise_not_ = _inplace_of(bitwise_not, "bitwise_not")
_left_shift_ = _inplace_of(bitwise_left_shift, "bitwise_left_shift")
_right_shift_ = _inplace_of(bitwise_right_shift, "bitwise_right_shift")


def bitwise_left_shift_(input, other):
    """In-place ``bitwise_left_shift`` (the result type must fit ``input``, as torch)."""
    _castable_into(input, other)
    return _left_shift_(input, other)


def bitwise_right_shift_(input, other):
    """In-place ``bitwise_right_shift`` (the result type must fit ``input``, as torch)."""
    _castable_into(input, other)
    return _right_shift_(input, other)
tril_ = _inplace_of(tril, "tril")
triu_ = _inplace_of(triu, "triu")
deg2rad_ = _inplace_of(deg2rad, "deg2rad")
rad2deg_ = _inplace_of(rad2deg, "rad2deg")


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim``."""
    for name, t in (("prepend", prepend), ("append", append)):
        if t is not None and not isinstance(t, Tensor):
            raise TypeError("diff(): argument '%s' must be Tensor, not %s"
                            % (name, type(t).__name__))
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError("order must be non-negative but got %d" % n)
    for t in (prepend, append):
        if t is not None:
            d = wrap_dim(dim, input.dim())
            if t.dim() != input.dim():
                raise RuntimeError("diff expects prepend or append to be the same dimension "
                                   "as input")
            for i in range(t.dim()):
                if i != d and t.shape[i] != input.shape[i]:
                    raise RuntimeError(
                        "diff expects the shape of tensor to prepend or append to match that "
                        "of input except along the differencing dimension; input.size(%d) = "
                        "%d, but got tensor.size(%d) = %d" % (i, input.shape[i], i, t.shape[i]))
    if n == 0:      # (torch: a copy of the input, prepend/append ignored, dim never checked)
        return zeros(tuple(input.shape), dtype=input.dtype, device=input.device).copy_(input)
    dim = wrap_dim(dim, input.dim())
    parts = [t for t in (prepend, input, append) if t is not None]
    if len(parts) > 1:
        input = cat(parts, dim)
    for _ in range(n):
        length = input.shape[dim]
        if length == 0:
            break
        hi, lo = narrow(input, dim, 1, length - 1), narrow(input, dim, 0, length - 1)
        input = logical_xor(hi, lo) if input._array.dtype == np.bool_ else sub(hi, lo)
    return input


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Central-difference estimate of the gradient along each of ``dim`` (numpy's rules)."""
    nd = input.dim()
    if input._array.dtype == np.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    dims = list(range(nd)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    if isinstance(spacing, (list, tuple)):
        sp = list(spacing)
        if dim is None and len(sp) != nd:
            raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar, or "
                               "a list of length equal to 'self.dim() = %d', since dim argument "
                               "was not given, but got a list of length %d" % (nd, len(sp)))
    else:
        sp = [1.0 if spacing is None else spacing] * len(dims)
    if len(sp) != len(dims):
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's "
                           "spacing and dim arguments to have the same length, but got a spacing "
                           "argument of length %d and a dim argument of length %d."
                           % (len(sp), len(dims)))
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = [wrap_dim(d, nd) for d in dims]
    for k, d in enumerate(dims):
        if d in dims[:k]:
            raise RuntimeError("dim %d appears multiple times in the list of dims" % d)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    return tuple(_gradient_1d(input, d, h, edge_order) for d, h in zip(dims, sp))


def _gradient_1d(y, dim, h, edge_order):
    n = y.shape[dim]

    def sl(start, length):
        return narrow(y, dim, start, length)
    if not isinstance(h, Tensor):
        # (torch's C++ composite: ``tensor op number`` nodes with one edge)
        center = DivScalar.apply(sl(2, n - 2) - sl(0, n - 2), h)
        if edge_order == 1:
            first = DivScalar.apply(sl(1, 1) - sl(0, 1), h)
            last = DivScalar.apply(sl(n - 1, 1) - sl(n - 2, 1), h)
        else:
            first = DivScalar.apply(MulScalar.apply(sl(0, 1), -1.5) + MulScalar.apply(sl(1, 1), 2)
                                    - MulScalar.apply(sl(2, 1), 0.5), h)
            last = DivScalar.apply(MulScalar.apply(sl(n - 3, 1), 0.5)
                                   - MulScalar.apply(sl(n - 2, 1), 2)
                                   + MulScalar.apply(sl(n - 1, 1), 1.5), h)
        return cat([first, DivScalar.apply(center, 2), last], dim)
    shape = [1] * y.dim()
    shape[dim] = -1
    dx = h[1:] - h[:-1]
    dx1, dx2 = dx[:-1], dx[1:]
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    mid = a * sl(0, n - 2) + b * sl(1, n - 2) + c * sl(2, n - 2)
    if edge_order == 1:
        first = (sl(1, 1) - sl(0, 1)) / dx[0]
        last = (sl(n - 1, 1) - sl(n - 2, 1)) / dx[-1]
    else:
        d1, d2 = dx[0], dx[1]
        first = (-(2.0 * d1 + d2) / (d1 * (d1 + d2)) * sl(0, 1) + (d1 + d2) / (d1 * d2) * sl(1, 1)
                 + (-d1) / (d2 * (d1 + d2)) * sl(2, 1))
        d1, d2 = dx[-2], dx[-1]
        last = (d2 / (d1 * (d2 + d1)) * sl(n - 3, 1) - (d2 + d1) / (d2 * d1) * sl(n - 2, 1)
                + (2 * d2 + d1) / (d2 * (d2 + d1)) * sl(n - 1, 1))
    return cat([first, mid, last], dim)


def _slice(t, dim, start, stop=None):
    """``t`` sliced along ``dim`` as torch's ``slice(dim, start, stop)`` (clamped bounds)."""
    n = t.shape[dim]
    lo = _b.min(_b.max(start + n if start < 0 else start, 0), n)
    hi = n if stop is None else _b.min(_b.max(stop + n if stop < 0 else stop, 0), n)
    return narrow(t, dim, lo, _b.max(hi - lo, 0))


def _trap_dx(y, x, dim, op):
    """The spacing tensor ``x[1:] - x[:-1]`` along ``dim``, laid out against ``y``."""
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError("%s: There must be one `x` value for each sample point" % op)
        shape = [1] * y.dim()
        shape[dim] = x.shape[0]
        x = x.view(shape)
    elif x.dim() < y.dim():
        x = x.view((1,) * (y.dim() - x.dim()) + tuple(x.shape))
    return _slice(x, dim, 1) - _slice(x, dim, 0, -1)


def _check_trap(y, x, dx, op):
    if y._array.dtype == np.bool_ or (isinstance(x, Tensor) and x._array.dtype == np.bool_):
        if isinstance(x, Tensor):
            raise RuntimeError("%s: received a bool input for `x` or `y`, but bool is not "
                               "supported" % op)
        raise RuntimeError("%s: received a bool input for `y`, but bool is not supported" % op)
    if x is None and isinstance(dx, (bool, complex)):
        raise RuntimeError("%s: Currently, we only support dx as a real number." % op)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along ``dim`` (sample points ``x`` or spacing ``dx``)."""
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments - got both x "
                        "and dx")
    if x is not None and not isinstance(x, Tensor):
        x, dx = None, x
    dim = wrap_dim(dim, y.dim())
    if y.shape[dim] == 0:
        shape = tuple(s for k, s in enumerate(y.shape) if k != dim)
        return Tensor._wrap(xp_of(y).zeros(shape, dtype=y._array.dtype))
    _check_trap(y, x, dx, "trapezoid")
    if x is None:
        h = 1.0 if dx is None else float(dx)
        # (torch's C++ composite: ``tensor op number`` nodes with one edge)
        return MulScalar.apply(
            y.sum(dim) - MulScalar.apply(y.select(dim, 0) + y.select(dim, -1), 0.5), h)
    d = _trap_dx(y, x, dim, "trapezoid")
    return DivScalar.apply(((_slice(y, dim, 0, -1) + _slice(y, dim, 1)) * d).sum(dim), 2.0)


def trapz(y, x=None, *, dx=None, dim=-1):
    """``trapezoid`` (torch's older name)."""
    if x is not None and not isinstance(x, Tensor):
        return trapezoid(y, dx=x, dim=dim)
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal rule along ``dim`` (one element fewer than ``y``)."""
    if x is not None and not isinstance(x, Tensor):
        x, dx = None, x
    dim = wrap_dim(dim, y.dim())
    _check_trap(y, x, dx, "cumulative_trapezoid")
    pair = _slice(y, dim, 0, -1) + _slice(y, dim, 1)
    if x is None:
        h = 1.0 if dx is None else float(dx)
        return cumsum(MulScalar.apply(pair, h / 2.0), dim)
    d = _trap_dx(y, x, dim, "cumulative_trapezoid")
    return DivScalar.apply(cumsum(pair * d, dim), 2.0)


def diagflat(input, offset=0):
    """A 2-D tensor with the flattened ``input`` on diagonal ``offset``."""
    return diag_embed(flatten(input), offset)


def renorm(input, p, dim, maxnorm):
    """Each slice along ``dim`` rescaled to p-norm at most ``maxnorm``."""
    # (torch's order: the norm, maxnorm, the rank, the dim, then the dtype)
    if not p > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError("renorm: expected maxnorm to be >= 0 but got %s" % maxnorm)
    if input.dim() < 2:
        raise RuntimeError("renorm: input needs at least 2 dimensions, got %d dimensions"
                           % input.dim())
    dim = wrap_dim(dim, input.dim())
    if input._array.dtype.kind not in "fcV":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           "input. Got %s" % _dt.scalar_type_name(input._array.dtype))
    return Renorm.apply(input, float(p), dim, float(maxnorm))


def _renorm_parts(x, p, dims, maxnorm):
    """The slice norms of ``x`` (float32 for half types) and whether each is over ``maxnorm``."""
    nrm = norm(x, p, dims, keepdim=True)
    return nrm, nrm._array > maxnorm


class Renorm(Function):
    node_name = "RenormBackward0"

    @staticmethod
    def forward(ctx, a, p, dim, maxnorm):
        dims = tuple(d for d in range(a.dim()) if d != dim)
        nrm, over = _renorm_parts(a, p, dims, maxnorm)
        xp = xp_of(a)
        factor = xp.where(over, maxnorm / (nrm._array + 1e-7), 1).astype(nrm._array.dtype)
        out = a._array * factor
        ctx.p, ctx.dims, ctx.maxnorm = p, dims, maxnorm
        ctx.save_for_backward(a)
        return Tensor._wrap(out.astype(a._array.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        a, = ctx.saved_tensors
        p, dims, maxnorm = ctx.p, ctx.dims, ctx.maxnorm
        nrm = norm(a, p, dims, keepdim=True)
        s = (a.conj() * grad_output)
        if s._array.dtype.kind == "c":
            s = s.real
        s = s.sum(dims, keepdim=True)
        nb = _norm_backward(s, a, p, nrm, dims)
        inv = (nrm + 1e-7).reciprocal()
        factor = inv * maxnorm
        out = (factor * grad_output - (factor * inv) * nb).where(nrm > maxnorm, grad_output)
        return out, None, None, None


def _norm_backward(g, x, p, nrm, dims):
    """torch's ``norm_backward``: the gradient of the p-norm ``nrm`` (kept dims) of ``x``."""
    zero = Tensor._wrap(xp_of(x).zeros((), dtype=nrm._array.dtype))
    if p == 1:
        return x.sgn() * g
    if p == 2:
        return (x * (g / nrm)).where(nrm != 0, zero)
    if math.isinf(p):
        hit = (x.abs() == nrm)
        mask = hit.to(g.dtype)
        return x.sgn() * (g / mask.sum(dims, keepdim=True)) * mask
    if p < 1:
        scaled = (x.sgn() * x.abs() ** (p - 1)).where(x != 0, zero)
        return scaled * g * nrm ** (1 - p)
    if p < 2:
        gi = x.sgn() * x.abs() ** (p - 1) * g / nrm ** (p - 1)
    else:
        gi = x * x.abs() ** (p - 2) * g / nrm ** (p - 1)
    return gi.where(nrm != 0, zero)


renorm_ = _inplace_of(renorm, "renorm")


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each of ``elements`` is in ``test_elements``."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments")
    like = elements if isinstance(elements, Tensor) else test_elements
    xp = xp_of(like)
    ea = elements._array if isinstance(elements, Tensor) else xp.asarray(elements)
    ta = test_elements._array if isinstance(test_elements, Tensor) else xp.asarray(test_elements)
    for arr in (ea, ta):
        if arr.dtype.kind in "bc":
            raise RuntimeError("Unsupported input type encountered for isin(): %s"
                               % _dt.scalar_type_name(arr.dtype))
    if isinstance(test_elements, Tensor) and ea.size and ta.size and \
            ta.size < int(10.0 * ea.size ** 0.145):
        # NOTE: torch's loop over few test elements flattens them with view(-1) (after a
        # dtype cast that keeps a dense layout), so a layout view refuses raises there
        same = _dt.result_type(elements, test_elements).np == ta.dtype
        if _reshaped_view(ta, (ta.size,)) is None and (same or _dense(ta)):
            raise RuntimeError("view size is not compatible with input tensor's size and stride "
                               "(at least one dimension spans across two contiguous subspaces). "
                               "Use .reshape(...) instead.")
    return Tensor._wrap(xp.asarray(xp.isin(ea, ta, invert=invert)))


def _dense(arr):
    """torch's is_non_overlapping_and_dense: the strides are a permutation of contiguous ones."""
    expected = arr.itemsize
    for d in _b.sorted((d for d in range(arr.ndim) if arr.shape[d] != 1),
                       key=lambda d: arr.strides[d]):
        if arr.strides[d] != expected:
            return False
        expected *= arr.shape[d]
    return True


def _quantile(input, q, dim, keepdim, interpolation, name, ignore_nan):
    name = "quantile"    # (torch's messages say quantile() for nanquantile too)
    input, q = _autocast.inputs("fp32", (input, q))
    if input._array.dtype not in (np.float32, np.float64):
        raise RuntimeError("%s() input tensor must be either float or double dtype" % name)
    scalar_q = not isinstance(q, Tensor)
    if scalar_q:
        if not 0 <= q <= 1:
            raise RuntimeError("%s() q must be in the range [0, 1] but got %g" % (name, q))
        q_arr = xp_of(input).asarray([q], dtype=input._array.dtype)
    else:
        if q.dim() > 1:
            raise RuntimeError("%s() q must be a scalar or 1D tensor" % name)
        if q._array.dtype != input._array.dtype:
            raise RuntimeError("%s() q tensor must be same dtype as the input tensor" % name)
        q_arr = q._array.reshape(-1)
        if bool(((q_arr < 0) | (q_arr > 1)).any()):
            raise RuntimeError("%s() q values must be in the range [0, 1]" % name)
    if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise RuntimeError("%s() interpolation must be one of linear, lower, higher, midpoint or "
                           "nearest, but got %s" % (name, interpolation))
    if input.numel() == 0:
        raise RuntimeError("%s() input tensor must be non-empty" % name)
    xp = xp_of(input)
    nd = input.dim()
    # (torch's quantile_impl: sort, view as [...reduced, n], gather the ranks, lerp)
    if dim is None:
        srt = input.flatten().sort().values
        out_shape = [1] * nd if keepdim else []
    else:
        d = wrap_dim(dim, nd)
        if d == nd - 1 or nd == 0:
            srt = input.sort().values
        else:
            srt = input.unsqueeze(-1).transpose(d, -1).sort().values
        out_shape = list(input.shape)
        if nd:
            if keepdim:
                out_shape[d] = 1
            else:
                del out_shape[d]
    n = srt.shape[-1] if srt.dim() else 1
    srt = srt.view(out_shape + [n])
    dt = srt._array.dtype
    sa = srt._array
    nq = len(q_arr)
    if ignore_nan:
        valid = (~xp.isnan(sa)).sum(-1, keepdims=True)
        rank = q_arr * (valid - 1).astype(dt)
        rank = xp.where(rank < 0, 0, rank).astype(dt)
    else:
        rank = xp.broadcast_to(q_arr * (n - 1), sa.shape[:-1] + (nq,))
        rank = xp.where(xp.isnan(sa).any(-1, keepdims=True), n - 1, rank).astype(dt)
    if interpolation == "lower":
        rank = xp.floor(rank)
    elif interpolation == "higher":
        rank = xp.ceil(rank)
    elif interpolation == "nearest":
        rank = xp.round(rank)
    below = rank.astype(np.int64)
    out = gather(srt, -1, Tensor._wrap(below))
    if interpolation in ("linear", "midpoint"):
        w = xp.full(rank.shape, 0.5, dtype=dt) if interpolation == "midpoint" else \
            (rank - below).astype(dt)
        above = xp.ceil(rank).astype(np.int64)
        out = out.lerp(gather(srt, -1, Tensor._wrap(above)), Tensor._wrap(w))
    if scalar_q or q.dim() == 0:
        return _squeeze_(out, -1)
    return out.unsqueeze(0).transpose(0, -1).squeeze(-1)


def _squeeze_(t, dim):
    """``t.squeeze_(dim)`` of a fresh result: torch's SqueezeBackward4 node."""
    return Squeeze.apply(t, (wrap_dim(dim, t.dim()),), "SqueezeBackward4")


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The ``q``-th quantiles of ``input`` (flattened, or along ``dim``)."""
    return _quantile(input, q, dim, keepdim, interpolation, "quantile", False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """``quantile`` ignoring NaNs."""
    return _quantile(input, q, dim, keepdim, interpolation, "nanquantile", True)


def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance matrix of the variables in the rows of ``input``."""
    if input.dim() > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an "
                           "input with %d dimensions" % input.dim())
    if input._array.dtype == np.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    if x._array.dtype.kind in "iu":
        x = x.to(_dt.get_default_dtype())
    n_obs = x.shape[1]
    w = None
    for name, v in (("fweights", fweights), ("aweights", aweights)):
        if v is None:
            continue
        if v.dim() > 1:
            raise RuntimeError("cov(): expected %s to have one or fewer dimensions but got %s "
                               "with %d dimensions" % (name, name, v.dim()))
        kind = v._array.dtype.kind
        if (name == "fweights" and kind not in "iu") or (name == "aweights" and
                                                         kind not in "fV"):
            raise RuntimeError("cov(): expected %s to have %s dtype but got %s with %s dtype"
                               % (name, "integral" if name == "fweights" else "floating point",
                                  name, _dt.scalar_type_name(v._array.dtype)))
        if v.numel() != n_obs:
            raise RuntimeError("cov(): expected %s to have the same numel as there are "
                               "observations in the input but got %d != %d"
                               % (name, v.numel(), n_obs))
        if n_obs and not bool((v._array.min() >= 0)):
            raise RuntimeError("cov(): %s cannot be negative" % name)
        w = v if w is None else w * v
    if w is not None and not bool((w._array.sum() != 0)):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    if w is None:
        w_sum = Tensor._wrap(xp_of(x).asarray(n_obs, dtype=np.int64))
        avg = x.sum(1) / w_sum
        norm_factor = n_obs - correction
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        if aweights is not None and correction != 0:
            norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
        else:
            norm_factor = w_sum - correction
    xm = x - avg.unsqueeze(1)
    if not isinstance(norm_factor, Tensor):
        norm_factor = Tensor._wrap(xp_of(x).asarray(norm_factor, dtype=np.int64))
    if bool((norm_factor._array <= 0).all()):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.")
        norm_factor = Tensor._wrap(xp_of(x).zeros((), dtype=norm_factor._array.dtype))
    c = xm.mm((xm * w if w is not None else xm).t().conj())
    return (c / norm_factor).squeeze()


def corrcoef(input):
    """Pearson correlation coefficients of the variables in the rows of ``input``."""
    if input.dim() > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got "
                           "an input with %d dimensions" % input.dim())
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    stddev = (d.real if d._array.dtype.kind == "c" else d).sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    if c._array.dtype.kind == "c":
        return _complex(clamp(c.real, -1, 1), clamp(c.imag, -1, 1))
    return clamp(c, -1, 1)


class _CumExt(Function):
    node_name = "CummaxBackward0"

    @staticmethod
    def forward(ctx, a, dim, is_max):
        ctx.set_node_name("CummaxBackward0" if is_max else "CumminBackward0")
        xp = xp_of(a)
        arr = a._array
        if arr.ndim == 0:
            idx = xp.zeros((), dtype=np.int64)
            ctx.dim = 0
            ctx.save_for_backward(Tensor._wrap(idx))
            return Tensor._wrap(arr.copy()), Tensor._wrap(idx)
        x = xp.moveaxis(arr, dim, -1)
        ufunc = xp.maximum if is_max else xp.minimum
        if x.dtype == np.bool_:
            ufunc = xp.logical_or if is_max else xp.logical_and
        with errstate(invalid="ignore"):     # (bfloat16's ufuncs warn on NaN)
            vals = ufunc.accumulate(x, axis=-1) if x.shape[-1] else x.copy()
        pos = xp.broadcast_to(xp.arange(x.shape[-1], dtype=np.int64), x.shape)
        upd = x == vals
        if _dt.kind(x.dtype) == "f":
            # NOTE: torch's loop: a NaN is taken once; after it nothing replaces it.
            prev = xp.concatenate([xp.zeros(x.shape[:-1] + (1,), dtype=bool),
                                   xp.isnan(vals[..., :-1])], -1)
            upd = ~prev & (upd | xp.isnan(x))
        idx = xp.where(upd, pos, 0)
        idx = xp.maximum.accumulate(idx, axis=-1) if x.shape[-1] else idx
        vals = c_order(xp.moveaxis(vals, -1, dim))
        idx = c_order(xp.moveaxis(idx, -1, dim))
        ctx.dim = dim
        ctx.save_for_backward(Tensor._wrap(idx))
        return Tensor._wrap(vals), Tensor._wrap(idx)

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        idx, = ctx.saved_tensors
        if grad_values.dim() == 0:
            return grad_values, None, None
        g = zeros(tuple(grad_values.shape), dtype=grad_values.dtype, device=grad_values.device)
        return g.scatter_add(ctx.dim, idx, grad_values), None, None


def _cum_ext(input, dim, is_max, rt):
    name = "cummax" if is_max else "cummin"
    arr = input._array
    if arr.ndim == 0:
        if dim not in (0, -1):
            raise IndexError("%s(): Expected reduction dim -1 or 0 for scalar but got %d"
                             % (name, dim))
        dim = 0
    elif arr.size == 0:
        # NOTE: torch returns an empty input as is, before checking dim or dtype
        dim = dim % arr.ndim if -arr.ndim <= dim < arr.ndim else 0
    if arr.dtype.kind == "c" and not (arr.ndim and arr.size) and input.requires_grad and \
            _grad_state.enabled:
        raise RuntimeError("%s does not support automatic differentiation for outputs with "
                           "complex dtype." % name)
    if arr.ndim and arr.size:
        dim = wrap_dim(dim, arr.ndim)
        if arr.dtype.kind == "c":
            raise NotImplementedError("\"%s_cpu\" not implemented for '%s'"
                                      % (name, _dt.scalar_type_name(arr.dtype)))
    vals, idx = _CumExt.apply(input, dim, is_max)
    return rt(vals, idx)


def cummax(input, dim):
    """Running maximum along ``dim`` and the index where each was reached."""
    return _cum_ext(input, dim, True, _rt_cummax)


def cummin(input, dim):
    """Running minimum along ``dim`` and the index where each was reached."""
    return _cum_ext(input, dim, False, _rt_cummin)


def logcumsumexp(input, dim):
    """``log(cumsum(exp(input), dim))``, computed stably."""
    dim = wrap_dim(dim, input.dim())
    if input._array.dtype.kind in "biu":
        raise NotImplementedError("\"logcumsumexp_out_cpu\" not implemented for '%s'"
                                  % _dt.scalar_type_name(input._array.dtype))
    if input._array.dtype.kind == "c":
        if input.numel() == 0:
            return input.clone()
        xp = xp_of(input)
        m = xp.max(input._array.real, axis=dim if input.dim() else None, keepdims=True)
        shift = Tensor._wrap(xp.where(xp.isfinite(m), m, 0).astype(input._array.dtype))
        return (input - shift).exp().cumsum(dim).log() + shift
    return Logcumsumexp.apply(input, dim)


class Logcumsumexp(Function):
    node_name = "LogcumsumexpBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        arr = a._array
        xp = xp_of(a)
        if arr.ndim == 0 or arr.size == 0:
            out = arr.copy()
        else:
            work = arr.astype(np.float32) if arr.dtype.itemsize < 4 else arr
            with errstate(invalid="ignore", over="ignore"):
                out = xp.logaddexp.accumulate(work, axis=dim).astype(arr.dtype)
        out = Tensor._wrap(c_order(out))
        ctx.dim = dim
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        a, out = ctx.saved_tensors
        dim = ctx.dim
        if grad_output.numel() == 0:
            return grad_output, None
        xp = xp_of(grad_output)
        g = grad_output
        low = Tensor._wrap(xp.asarray(_dt.finfo(g.dtype).min, dtype=g._array.dtype))
        log_abs = g.abs().log()
        pos = log_abs.where(g > 0, low)
        neg = log_abs.where(g < 0, low)

        def rev(x):
            return logcumsumexp(x.flip(dim), dim).flip(dim) if x.dim() else x
        return (rev(pos - out) + a).exp() - (rev(neg - out) + a).exp(), None


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)``."""
    return _addr(input, vec1, vec2, beta, alpha, None)


def addr_(input, vec1, vec2, *, beta=1, alpha=1):
    """In-place ``addr``."""
    def addr(t, v1, v2):
        return _addr(t, v1, v2, beta, alpha, input._array.dtype)
    return inplace(input, addr, vec1, vec2)


def _addr(input, vec1, vec2, beta, alpha, out_np):
    """torch's checks (shapes, then the common dtype, then the scalars) and the Addr node;
    ``out_np``: the in-place output's NumPy dtype."""
    for k, v in ((1, vec1), (2, vec2)):
        if v.dim() != 1:
            raise RuntimeError("addr: Expected 1-D argument vec%d, but got %d-D" % (k, v.dim()))
    size = (vec1.shape[0], vec2.shape[0])
    shape = tuple(input.shape)
    if out_np is not None:
        if len(shape) != 2:
            raise RuntimeError("2D tensor expected, got %dD tensor for input" % len(shape))
        if shape != size:
            raise RuntimeError("size mismatch, input: %s, v1: %s, v2: %s"
                               % (list(shape), [size[0]], [size[1]]))
    else:
        if len(shape) > 2:
            raise RuntimeError("expand(%s{%s}, size=[%d, %d]): the number of sizes provided (2) "
                               "must be greater or equal to the number of dimensions in the "
                               "tensor (%d)" % (input.type(), list(shape), size[0], size[1],
                                                len(shape)))
        for i, s in enumerate(shape):
            j = i + 2 - len(shape)
            if s != 1 and s != size[j]:
                raise RuntimeError("The expanded size of the tensor (%d) must match the existing "
                                   "size (%d) at non-singleton dimension %d.  Target sizes: %s.  "
                                   "Tensor sizes: %s" % (size[j], s, j, list(size), list(shape)))
    dt = _dt.promote_types(_dt.promote_types(input.dtype, vec1.dtype), vec2.dtype)
    if out_np is not None and _KIND_RANK[dt.np.kind] > _KIND_RANK[out_np.kind]:
        raise RuntimeError("result type %s can't be cast to the desired output type %s"
                           % (_dt.scalar_type_name(dt.np), _dt.scalar_type_name(out_np)))
    scalars = []
    for name, s in (("beta", beta), ("alpha", alpha)):
        if isinstance(s, Tensor):
            s = s.item()
        if isinstance(s, (bool, np.bool_)) and dt.np != np.bool_:
            raise RuntimeError("Boolean %s only supported for Boolean results." % name)
        if dt._rank < 2 and not isinstance(s, (int, np.integer)):
            raise RuntimeError("For integral input tensors, argument %s must not be a floating "
                               "point number." % name)
        if isinstance(s, (complex, np.complexfloating)) and dt._rank == 2:
            if s.imag != 0:
                raise RuntimeError("value cannot be converted to type %s without overflow"
                                   % _dt._C_NAME.get(dt.name, dt.name))
            s = s.real
        scalars.append(s)
    return Addr.apply(input, vec1, vec2, scalars[0], scalars[1], dt.np, out_np)


class Addr(Function):
    node_name = "AddrBackward0"

    @staticmethod
    def forward(ctx, input, vec1, vec2, beta, alpha, dt, out_np):
        xp = xp_of(vec1)
        v1, v2 = vec1._array.astype(dt, copy=False), vec2._array.astype(dt, copy=False)
        ia = input._array.astype(dt, copy=False)
        with errstate(over="ignore", invalid="ignore"):
            if dt == np.bool_:
                out = bool(alpha) & v1[:, None] & v2[None, :]
                if bool(beta):
                    out = out | ia      # (torch: ``(beta && self) || (alpha && v1 && v2)``)
            else:
                # NOTE: torch's order, ``(alpha * v1) * v2``: it decides inf * 0 in complex
                out = (xp.asarray(alpha, dtype=dt) * v1)[:, None] * v2[None, :]
                if beta != 0:    # (beta == 0: input's NaNs ignored, as torch)
                    out = xp.asarray(beta, dtype=dt) * ia + out
        if out_np is not None and out.dtype != out_np:
            out = out.astype(out_np)
        ctx.beta, ctx.alpha = beta, alpha
        ctx.save_for_backward(vec1, vec2)
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        vec1, vec2 = ctx.saved_tensors
        need = ctx.needs_input_grad
        g = grad_output
        beta, alpha = ctx.beta, ctx.alpha
        if isinstance(beta, (complex, np.complexfloating)):
            beta = beta.conjugate()
        if isinstance(alpha, (complex, np.complexfloating)):
            alpha = alpha.conjugate()
        gi = g1 = g2 = None
        if need[0]:
            gi = _sum_back(g * beta if beta != 1 else g, ctx._input_meta(0)[0])
            if gi is g:
                gi = g.clone()
        for k, vec in ((1, vec2), (2, vec1)):
            if need[k] and vec._array.dtype != g._array.dtype:
                names = [_dt.scalar_type_name(a.dtype) for a in (vec._array, g._array)]
                raise RuntimeError("addmv input tensors must have the same dtype, but got %s, "
                                   "%s, and %s" % (names[0], names[1], names[0]))
        if need[1]:
            g1 = g.mv(vec2.conj()) * alpha
        if need[2]:
            g2 = g.t().mv(vec1.conj()) * alpha
        for k, gk in enumerate((gi, g1, g2)):
            if gk is not None:
                check_real_grad(gk, ctx, k)
        return gi, g1, g2, None, None, None, None


_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Pairwise p-norm distances between the rows of ``x1`` and ``x2`` (batched)."""
    x1, x2 = _autocast.inputs("fp32", (x1, x2))
    if x1.dim() < 2:
        raise RuntimeError("cdist only supports at least 2D tensors, X1 got: %dD" % x1.dim())
    if x2.dim() < 2:
        raise RuntimeError("cdist only supports at least 2D tensors, X2 got: %dD" % x2.dim())
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError("X1 and X2 must have the same number of columns. X1: %d X2: %d"
                           % (x1.shape[-1], x2.shape[-1]))
    d1, d2 = x1._array.dtype, x2._array.dtype
    for k, d in ((1, d1), (2, d2)):
        if d.kind not in "fV":
            raise RuntimeError("cdist only supports floating-point dtypes, X%d got: %s"
                               % (k, _dt.scalar_type_name(d)))
    if not p >= 0:     # (NaN too, as torch)
        raise RuntimeError("cdist only supports non-negative p values")
    mode = _CDIST_MODES.get(compute_mode, 0) if compute_mode is not None else 0
    r1, r2 = x1.shape[-2], x2.shape[-2]
    if x1.numel() and x2.numel():
        if p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25))):
            if d1 != d2:    # (torch's matmul formulation)
                raise RuntimeError("expected m1 and m2 to have the same dtype, but got: %s != %s"
                                   % (_dt._C_NAME.get(d1.name, d1.name),
                                      _dt._C_NAME.get(d2.name, d2.name)))
        else:
            if d1.kind == "V" or d1.itemsize < 4:
                raise NotImplementedError("\"cdist\" not implemented for '%s'"
                                          % _dt.scalar_type_name(d1))
            if d2 != d1:
                raise RuntimeError("expected scalar type %s but found %s"
                                   % (_dt.scalar_type_name(d1), _dt.scalar_type_name(d2)))
    return Cdist.apply(x1, x2, float(p))


class Cdist(Function):
    """p-norm distances between rows, with the gradient of torch's cdist kernel (zero where the
    distance is 0; NaN from a NaN difference)."""

    node_name = "CdistBackward0"

    @staticmethod
    def forward(ctx, x1, x2, p):
        xp = xp_of(x1)
        a1, a2 = x1._array, x2._array
        dt = a1.dtype
        if a2.dtype != dt:
            a2 = a2.astype(dt)
        batch = np.broadcast_shapes(a1.shape[:-2], a2.shape[:-2])
        a1 = xp.broadcast_to(a1, batch + a1.shape[-2:])
        a2 = xp.broadcast_to(a2, batch + a2.shape[-2:])
        d = a1[..., :, None, :] - a2[..., None, :, :]
        a = xp.abs(d)
        with errstate(over="ignore", invalid="ignore", divide="ignore"):
            if p == 0:
                out = xp.minimum(xp.ceil(a), 1).sum(-1)     # (torch's: NaN stays)
            elif p == math.inf:
                # NOTE: torch's ``std::max(agg, |diff|)`` from 0 passes NaNs over
                out = xp.where(xp.isnan(a), 0, a).max(-1) if a.shape[-1] else \
                    xp.zeros(a.shape[:-1], a.dtype)
            elif p == 1:
                out = a.sum(-1)
            elif p == 2:
                out = xp.sqrt((a * a).sum(-1))
            else:
                out = (a ** p).sum(-1) ** (1 / p)
        out = Tensor._wrap(xp.asarray(out, dtype=dt))
        ctx.p = p
        ctx.save_for_backward(x1, x2, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        x1, x2, out = ctx.saved_tensors
        p = ctx.p
        need = ctx.needs_input_grad
        d = x1.unsqueeze(-2) - x2.unsqueeze(-3)
        g = grad_output.unsqueeze(-1)
        o = out.unsqueeze(-1)
        zero = Tensor._wrap(xp_of(d).zeros((), dtype=d._array.dtype))
        nz = o != 0
        # NOTE: torch's kernel takes sign(NaN) = NaN (torch.sign gives 0)
        sgn = d.sign().where(~d.isnan(), d)
        if p == 0:
            gd = Tensor._wrap(xp_of(d).zeros_like(d._array))
        elif p == 1:
            gd = g * sgn
        elif p == 2:
            gd = (g * d / o.where(nz, zero + 1)).where(nz, zero)
        elif p == math.inf:
            gd = g * sgn * (1 - (d.abs() - o).abs().ceil().clamp(max=1))
        elif p < 2:
            safe = o.where(nz, zero + 1)
            gd = (sgn * d.abs() ** (p - 1) * g / safe ** (p - 1)).where(nz, zero)
            if p < 1:
                gd = gd.where(d != 0, zero)
        else:
            safe = o.where(nz, zero + 1)
            gd = (d * d.abs() ** (p - 2) * g / safe ** (p - 1)).where(nz, zero)
        g1 = _sum_back(gd.sum(-2), ctx._input_meta(0)[0]) if need[0] else None
        g2 = _sum_back(-gd.sum(-3), ctx._input_meta(1)[0]) if need[1] else None
        return g1, g2, None


def bincount(input, weights=None, minlength=0):
    """Counts of each value of a 1-D non-negative integer tensor (weighted sums with
    ``weights``)."""
    arr = input._array
    if arr.dtype.kind not in "iu":
        raise NotImplementedError("\"bincount_cpu\" not implemented for '%s'"
                                  % _dt.scalar_type_name(arr.dtype))
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    xp = xp_of(input)
    if arr.ndim == 1 and arr.size == 0:     # (torch: before any check of ``weights``)
        return Tensor._wrap(xp.zeros(minlength, dtype=np.int64))
    if arr.ndim != 1 or bool((arr.min() < 0)):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.dim() != 1 or weights.shape[0] != arr.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    n = _b.max(int(arr.max()) + 1, minlength)
    if weights is None:
        out = xp.zeros(n, dtype=np.int64)
        xp.add.at(out, arr.astype(np.int64), 1)
        return Tensor._wrap(out)
    w = weights._array
    # (torch adds in order, in float32 for float32 weights, else in float64)
    out = xp.zeros(n, dtype=np.float32 if w.dtype == np.float32 else np.float64)
    xp.add.at(out, arr.astype(np.int64), w.astype(out.dtype))
    out = Tensor._wrap(out)
    if weights._requires_grad:
        out = _NoDerivative.apply(input, weights, out, "aten::bincount")
    return out


def histc(input, bins=100, min=0, max=0):
    """Histogram of ``input`` with ``bins`` equal bins over [min, max] (data range if equal)."""
    arr = input._array
    if bins <= 0:
        raise RuntimeError("torch.histogram(): bins must be > 0, but got %d for dimension 0"
                           % bins)
    if arr.dtype.kind == "c" and min == max and arr.size:    # (torch fails finding the data range)
        raise NotImplementedError("\"aminmax_cpu\" not implemented for '%s'"
                                  % _dt.scalar_type_name(arr.dtype))
    xp = xp_of(input)
    lo, hi = float(min), float(max)
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if lo == hi and arr.size:     # (a NaN of the data prints as torch's -nan)
        lo, hi = (v if v == v else -abs(v) for v in (float(arr.min()), float(arr.max())))
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError("torch.histc: range of [%s, %s] is not finite" % (_g(lo), _g(hi)))
    if arr.dtype.kind == "b":    # (torch fails building the bin edges)
        raise NotImplementedError("\"linspace_cpu\" not implemented for 'Bool'")
    # (torch converts the range to the input's type before its dtype check)
    d = _dt.from_numpy_dtype(arr.dtype)
    name = None
    if d.is_complex:
        d = d.to_real()
        name = "c10::complex<%s>" % _dt._C_NAME[d.name]
    for v in (lo, hi):
        _dt.check_scalar(v, d, name)
    if arr.dtype.kind != "f" and d is not _dt.bfloat16:
        raise NotImplementedError("\"histogram_cpu\" not implemented for '%s'"
                                  % _dt.from_numpy_dtype(arr.dtype)._legacy[:-6])
    hist, _ = _linear_hist(xp, arr.reshape(-1), bins, lo, hi, None)
    return Tensor._wrap(hist.astype(arr.dtype))


def _linear_hist(xp, flat, bins, lo, hi, weight):
    """torch's histc binning: ``(x - lo) * bins / (hi - lo)`` in the input's dtype, the top
    edge in the last bin."""
    edges = xp.linspace(lo, hi, bins + 1).astype(flat.dtype)
    x = flat.astype(np.float64)
    keep = (x >= lo) & (x <= hi)
    # (in the input's dtype, each step rounded: float16/bfloat16 arithmetic rounds per op)
    first, last = edges[0], edges[bins]
    with errstate(divide="ignore", invalid="ignore", over="ignore"):
        q = (flat[keep] - first) * flat.dtype.type(bins) / (last - first)
    q = q.astype(np.float64)
    pos = xp.where(xp.isfinite(q), q, 0).astype(np.int64)
    pos = xp.minimum(xp.maximum(pos, 0), bins - 1)     # (histc: no search of the edges)
    w = None if weight is None else weight.reshape(-1)[keep].astype(np.float64)
    hist = xp.zeros(bins, dtype=np.float64)
    xp.add.at(hist, pos, 1.0 if w is None else w)
    return hist, edges


def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """Histogram of ``input``: counts (or density) and bin edges."""
    arr = input._array
    xp = xp_of(input)
    pts = arr.reshape(-1, 1)
    w = None if weight is None else weight._array.reshape(-1)
    if isinstance(bins, Tensor):
        _hist_check(pts, [bins._array], w)
        edges = [bins._array]
        _hist_bins_positive([e.shape[0] - 1 for e in edges])
    else:
        _hist_bins_positive([bins])
        los, his = _outer_edges(pts, range)
        edges = [_hist_linspace(xp, los[0], his[0], bins, arr.dtype)]
        _hist_check(pts, edges, w)
    hist = _hist_counts(xp, pts, edges, w, density)
    hist, edge = Tensor._wrap(hist), Tensor._wrap(xp.array(edges[0]))
    if input._requires_grad or (weight is not None and weight._requires_grad):
        hist, edge = _NoDerivative.apply(input, weight, (hist, edge), "aten::histogram")
    return _rt_histogram(hist, edge)


# torch's TypeMeta names of the dtypes, in histogram's messages
_META = {"uint8": "unsigned char", "int8": "signed char", "int16": "short int", "int32": "int",
         "int64": "long int", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
         "float32": "float", "float64": "double", "bool": "bool",
         "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _hist_check(pts, edges, w):
    """torch's ``histogramdd_check_inputs`` on the points (N innermost), edge arrays and
    weights."""
    n = pts.shape[-1]
    if len(edges) != n:
        raise RuntimeError("torch.histogramdd: expected %d sequences of bin edges for a "
                           "%d-dimensional histogram but got %d" % (n, n, len(edges)))
    for j, e in enumerate(edges):
        if e.dtype != pts.dtype:
            raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the "
                               "same dtype, but got input with dtype %s and bins for dimension %d"
                               " with dtype %s" % (_META[pts.dtype.name], j, _META[e.dtype.name]))
        if e.ndim != 1:
            raise RuntimeError("torch.histogramdd: bins tensor should have one dimension, but got "
                               "%d dimensions in the bins tensor for dimension %d" % (e.ndim, j))
        if e.size == 0:
            raise RuntimeError("torch.histogramdd: bins tensor should have at least 1 element, "
                               "but got 0 elements in the bins tensor for dimension %d" % j)
    if w is not None:
        if w.dtype != pts.dtype:
            raise RuntimeError("torch.histogramdd: if weight tensor is provided, input tensor and "
                               "weight tensor should have the same dtype, but got input(%s), and "
                               "weight(%s)" % (_META[pts.dtype.name], _META[w.dtype.name]))
        if tuple(pts.shape[:-1]) != (tuple(w.shape) or (1,)):
            raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have "
                               "the same shape as the input tensor excluding its innermost "
                               "dimension, but got input with shape %s and weight with shape %s"
                               % (list(pts.shape), list(w.shape)))


def _hist_bins_positive(counts):
    for j, b in enumerate(counts):
        if b <= 0:
            raise RuntimeError("torch.histogram(): bins must be > 0, but got %d for dimension %d"
                               % (b, j))


def _outer_edges(pts, range):
    """torch's ``select_outer_bin_edges``: each dimension's (finite) leftmost and rightmost
    edge, from ``range`` or the data."""
    n = pts.shape[-1]
    los, his = [0.0] * n, [1.0] * n     # (torch's edges for no points)
    if range is not None:
        if len(range) != 2 * n:
            raise RuntimeError("torch.histogramdd: for a %d-dimensional histogram range should "
                               "have %d elements, but got %d" % (n, 2 * n, len(range)))
        los = [float(range[2 * j]) for j in _b.range(n)]
        his = [float(range[2 * j + 1]) for j in _b.range(n)]
    elif pts.size:
        if pts.dtype not in (np.float32, np.float64):
            raise NotImplementedError("\"histogramdd\" not implemented for '%s'"
                                      % _dt.scalar_type_name(pts.dtype))
        los, his = [float(v) for v in pts.min(0)], [float(v) for v in pts.max(0)]
    for j in _b.range(n):
        lo, hi = los[j], his[j]
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError("torch.histogramdd: dimension %d's range [%s, %s] is not finite"
                               % (j, _g(lo), _g(hi)))
        if lo > hi:
            raise RuntimeError("torch.histogramdd: min should not exceed max, but got min %s max "
                               "%s for dimension %d" % (_g(lo), _g(hi), j))
        if lo == hi:
            los[j], his[j] = lo - 0.5, hi + 0.5
    return los, his


def _hist_linspace(xp, lo, hi, bins, dtype):
    """``bins + 1`` edges from ``lo`` to ``hi`` in ``dtype`` (torch's linspace_out)."""
    if bins + 1 < 0:
        raise RuntimeError("number of steps must be non-negative")
    if dtype == np.bool_:
        raise NotImplementedError("\"linspace_cpu\" not implemented for 'Bool'")
    steps = int(bins) + 1
    if dtype.kind not in "fV" or steps < 2:
        return xp.linspace(lo, hi, steps).astype(dtype)
    # NOTE: torch's kernel: the first half up from ``lo``, the rest down from ``hi``, each a
    # fused multiply-add for float32/float64 (one rounding), plain dtype arithmetic below
    start, end = xp.asarray(lo).astype(dtype), xp.asarray(hi).astype(dtype)
    step = (end - start) / xp.asarray(steps - 1).astype(dtype)
    idx = xp.arange(steps)
    base = xp.where(idx < steps // 2, start, end)
    k = xp.where(idx < steps // 2, idx, idx + 1 - steps)
    if dtype.itemsize < 4:
        return base + step * k.astype(dtype)
    if dtype == np.float32:
        return (base.astype(np.float64) + step.astype(np.float64) * k).astype(dtype)
    c = step * 134217729.0          # Dekker's split: step * k == (hi + lo) * k exactly
    hi = c - (c - step)
    ph, pl = hi * k, (step - hi) * k
    s = base + ph                   # Knuth's two-sum: base + ph == s + err exactly
    bb = s - base
    err = (base - (s - bb)) + (ph - bb)
    return s + (err + pl)


def _upper_bound(xp, e, x):
    """``std::upper_bound`` of each ``x`` in ``e`` (its comparisons, NaN included)."""
    first = xp.zeros(x.shape, dtype=np.int64)
    count = xp.full(x.shape, e.shape[0], dtype=np.int64)
    while bool((count > 0).any()):
        step = count // 2
        it = first + step
        live = count > 0
        go = live & ~(x < e[xp.minimum(it, e.shape[0] - 1)])
        first = xp.where(go, it + 1, first)
        count = xp.where(go, count - step - 1, xp.where(live, step, 0))
    return first


def _hist_counts(xp, pts, edges, w, density):
    """torch's histogramdd kernel: the (weighted) counts of the (M, N) points in the bins given
    by the N edge arrays (the last bin closed), NaNs and points outside skipped; in the input's
    dtype (the dispatch ``histogram_cpu``)."""
    if pts.dtype.kind not in "fV":
        raise NotImplementedError("\"histogram_cpu\" not implemented for '%s'"
                                  % _dt.scalar_type_name(pts.dtype))
    shape = tuple(e.shape[0] - 1 for e in edges)
    x = pts.astype(np.float64)
    keep = xp.ones(x.shape[0], dtype=bool)
    flat = xp.zeros(x.shape[0], dtype=np.int64)
    for j, e in enumerate(edges):
        e = e.astype(np.float64)
        xj = x[:, j]
        keep = keep & (xj >= e[0]) & (xj <= e[-1])
        pos = _upper_bound(xp, e, xj) - 1
        pos = xp.where(pos == e.shape[0] - 1, pos - 1, pos)
        flat = flat * shape[j] + xp.clip(pos, 0, shape[j] - 1)
    hist = xp.zeros(math.prod(shape), dtype=np.float64)
    wk = 1.0 if w is None else w.astype(np.float64)[keep]
    xp.add.at(hist, flat[keep], wk)
    hist = hist.reshape(shape).astype(pts.dtype)
    if density:
        with errstate(divide="ignore", invalid="ignore"):
            hist = hist / hist.astype(np.float64).sum().astype(pts.dtype)
            for j, e in enumerate(edges):
                view = [1] * len(edges)
                view[j] = -1
                hist = hist / (e[1:] - e[:-1]).astype(pts.dtype).reshape(view)
    return hist.astype(pts.dtype)


_HISTDD_SIGS = ("histogramdd() received an invalid combination of arguments - got (Tensor, %s), "
                "but expected one of:\n * (Tensor input, int bins, tuple of floats range = None, "
                "Tensor weight = None, bool density = False)\n * (Tensor input, tuple of ints "
                "bins, tuple of floats range = None, Tensor weight = None, bool density = False)"
                "\n * (Tensor input, tuple of Tensors bins, tuple of floats range = None, Tensor "
                "weight = None, bool density = False)\n")


def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """Multi-dimensional histogram of the points in the rows of ``input``."""
    if not isinstance(bins, (int, np.integer, list, tuple, Tensor)) or isinstance(bins, bool):
        raise TypeError(_HISTDD_SIGS % type(bins).__name__)
    arr = input._array
    if arr.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if arr.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    xp = xp_of(input)
    k = arr.shape[-1]
    if isinstance(bins, (int, np.integer)):
        bins = [int(bins)] * k
    elif isinstance(bins, Tensor):
        bins = [bins]
    pts = arr.reshape(-1, k) if k else arr.reshape(math.prod(arr.shape[:-1]), 0)
    w = None if weight is None else weight._array
    if len(bins) and isinstance(bins[0], Tensor):
        edges = [b._array for b in bins]
        _hist_check(arr, edges, w)
        _hist_bins_positive([e.shape[0] - 1 for e in edges])
    else:
        los, his = _outer_edges(pts, range)
        if len(bins) != k:
            raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                               "dimension of the input.")
        edges = [_hist_linspace(xp, lo, hi, b, arr.dtype) for lo, hi, b in zip(los, his, bins)]
        _hist_check(arr, edges, w)
        _hist_bins_positive(bins)
    if w is not None:
        w = w.reshape(-1)
    if k:
        hist = _hist_counts(xp, pts, edges, w, density)
    else:
        _hist_counts(xp, pts, edges, w, False)
        hist = xp.asarray(np.nan if density else 0.0).astype(arr.dtype)
    hist = Tensor._wrap(hist)
    edges = tuple(Tensor._wrap(xp.array(e)) for e in edges)
    if input._requires_grad or (weight is not None and weight._requires_grad):
        hist, *edges = _NoDerivative.apply(input, weight, (hist,) + edges,
                                           "aten::_histogramdd_from_bin_cts")
    return _rt_histogramdd(hist, tuple(edges))


def _g(v):
    return "-nan" if v != v and math.copysign(1, v) < 0 else "%g" % v


def block_diag(*tensors):
    """The block-diagonal matrix of ``tensors`` (each 0-, 1- or 2-D)."""
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError("torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               "Input %d has %d dimensions" % (i, t.dim()))
    if not tensors:
        return Tensor._wrap(backend_for(None).xp.zeros((1, 0), dtype=_dt.get_default_dtype().np))
    return BlockDiag.apply(*tensors)


class BlockDiag(Function):
    node_name = "BlockDiagBackward0"

    @staticmethod
    def forward(ctx, *tensors):
        arrs = [t._array.reshape(1, -1) if t._array.ndim < 2 else t._array for t in tensors]
        d = _dt.result_type(*tensors).np
        xp = xp_of(tensors[0])
        out = xp.zeros((_b.sum(a.shape[0] for a in arrs), _b.sum(a.shape[1] for a in arrs)),
                       dtype=d)
        r = c = 0
        for a in arrs:
            out[r:r + a.shape[0], c:c + a.shape[1]] = a
            r, c = r + a.shape[0], c + a.shape[1]
        ctx.blocks = [a.shape for a in arrs]
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        grads = []
        r = c = 0
        for k, (rows, cols) in enumerate(ctx.blocks):
            if ctx.needs_input_grad[k]:
                shape, dtype = ctx._input_meta(k)
                g = grad_output[r:r + rows, c:c + cols].reshape(shape)
                grads.append(g.to(_dt.from_numpy_dtype(dtype)) if g._array.dtype != dtype
                             else g)
            else:
                grads.append(None)
            r, c = r + rows, c + cols
        return tuple(grads)


def cartesian_prod(*tensors):
    """All tuples of one element from each 1-D tensor, as rows."""
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError("Expect a 1D vector, but got shape %s" % list(t.shape))
    if len(tensors) == 1:
        return tensors[0]
    grids = [g.flatten() for g in _meshgrid_ij(tensors)]
    return stack(grids, 1)


def _meshgrid_ij(tensors):
    if _b.any(t._array.dtype != tensors[0]._array.dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    shape = [t.shape[0] for t in tensors]
    out = []
    for k, t in enumerate(tensors):
        view = [1] * len(tensors)
        view[k] = -1
        out.append(t.view(view).expand(*shape))
    return out


def combinations(input, r=2, with_replacement=False):
    """All length-``r`` combinations of the elements of a 1-D tensor, as rows."""
    if input.dim() != 1:
        raise RuntimeError("Expect a 1D vector, but got shape %s" % list(input.shape))
    if r < 0:
        raise RuntimeError("Expect a non-negative number, but got %d" % r)
    if r == 0:
        return Tensor._wrap(xp_of(input).zeros((0,), dtype=input._array.dtype))
    n = input.shape[0]
    xp = xp_of(input)
    # (torch's way: the r-fold meshgrid of input, masked to increasing index tuples)
    grid = xp.indices((n,) * r) if r > 1 else xp.arange(n)[None]
    mask = xp.ones((n,) * r, dtype=bool)
    for k in range(r - 1):
        mask &= (grid[k] <= grid[k + 1]) if with_replacement else (grid[k] < grid[k + 1])
    mask = Tensor._wrap(mask)
    return stack([masked_select(g, mask) for g in _meshgrid_ij([input] * r)], 1)


def _tri_indices(row, col, offset, dtype, device, lower):
    for k, (name, v) in enumerate((("row", row), ("col", col), ("offset", offset))):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise TypeError("%s_indices(): argument '%s' (position %d) must be int, not %s"
                            % ("tril" if lower else "triu", name, k + 1, type(v).__name__))
    for name, v in (("row", row), ("col", col)):
        if v < 0:
            raise RuntimeError("%s must be non-negative, got%d" % (name, v))
    b = backend_for(device)
    d = _dt.to_dtype(dtype) if dtype is not None else _dt.int64
    if d not in (_dt.int64, _dt.int32):
        raise RuntimeError("\"%s_indices\" not implemented for '%s'"
                           % ("tril" if lower else "triu", d._legacy[:-6]))
    fn = b.xp.tril_indices if lower else b.xp.triu_indices
    r, c = fn(row, offset, col) if row and col else (b.xp.zeros(0, np.int64),) * 2
    return Tensor._wrap(b.xp.stack([r, c]).astype(d.np))


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """Coordinates of the lower triangle of a ``row x col`` matrix (2 x N)."""
    return _tri_indices(row, col, offset, dtype, device, True)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """Coordinates of the upper triangle of a ``row x col`` matrix (2 x N)."""
    return _tri_indices(row, col, offset, dtype, device, False)


def _window(name, window_length, periodic, dtype, device, requires_grad, fn):
    d = _dt.to_dtype(dtype) if dtype is not None else _dt.get_default_dtype()
    if not d.is_floating_point:
        raise RuntimeError("%s expects floating point dtypes, got: TensorOptions(dtype=%s, "
                           "device=cpu, layout=Strided (default), requires_grad=false "
                           "(default), pinned_memory=false, memory_format=(nullopt))"
                           % (name, _CPP.get(d._legacy[:-6], d._legacy[:-6])))
    if window_length < 0:
        raise RuntimeError("%s requires non-negative window_length, got window_length=%d"
                           % (name, window_length))
    xp = backend_for(device).xp
    if window_length == 0:
        return _new(xp.zeros(0, dtype=d.np), requires_grad)
    if window_length == 1:
        return _new(xp.ones(1, dtype=d.np), requires_grad)
    n = window_length + 1 if periodic else window_length
    out = fn(xp, xp.arange(n, dtype=d.np), n, d.np.type)
    if periodic:
        out = out[:-1]
    return _new(xp.ascontiguousarray(out.astype(d.np)), requires_grad)


_CPP = {"Long": "long int", "Int": "int", "Short": "short int", "Char": "signed char",
        "Byte": "unsigned char", "Bool": "bool"}


def _cosine(alpha, beta):
    def fn(xp, k, n, dt):
        return alpha - beta * xp.cos(k * dt(2 * math.pi / (n - 1)))
    return fn


class _DefaultTrue(int):
    """``periodic``'s default: true, told apart from an explicit ``True`` (torch's overloads
    take ``alpha``/``beta`` only after a given ``periodic``)."""

    def __repr__(self):
        return "True"


class _DefaultFloat(float):
    """A float default, told apart from the same number given."""


_PERIODIC = _DefaultTrue(1)
_WINDOW_KW = ("window_length, *, torch.dtype dtype = None, torch.layout layout = None, "
              "torch.device device = None, bool pin_memory = False, bool requires_grad = False")


def _arg_type(v):
    if isinstance(v, bool):
        return "bool"
    if type(v) in (int, float, str):
        return type(v).__name__
    mod = type(v).__module__.split(".")[0]
    return "%s.%s" % ("torch" if mod == "ember" else mod, type(v).__name__)


def _check_window_args(name, periodic, params, values, kw):
    """torch's TypeError for a window's arguments that fit none of its overloads: ``periodic``
    a bool, given before any of ``params`` (``values``: theirs), each of them after the ones
    before it; ``kw``: the keyword-only arguments, in signature order."""
    given = {k: v for k, v in zip(params, values) if not isinstance(v, _DefaultFloat)}
    explicit = periodic is not _PERIODIC
    if (not explicit or isinstance(periodic, bool)) and (explicit or not given) and \
            all(params[i - 1] in given for i, k in enumerate(params) if i and k in given):
        return
    # (torch lists keywords in the reverse of their order in the call: here, the signature's)
    got = ["int"] + ([_arg_type(periodic)] if explicit else []) + \
        ["%s=%s" % (k, _arg_type(v)) for k, v in reversed(list(kw.items()))
         if v is not None and v is not False] + \
        ["%s=%s" % (k, _arg_type(given[k])) for k in reversed(params) if k in given]
    sigs = ["int " + _WINDOW_KW, "int window_length, bool periodic, " + _WINDOW_KW[15:]]
    for i in range(1, len(params) + 1):
        sigs.append("int window_length, bool periodic, %s, %s" % (
            ", ".join("float " + p for p in params[:i]), _WINDOW_KW[15:]))
    raise TypeError("%s() received an invalid combination of arguments - got (%s), but "
                    "expected one of:\n%s\n" % (name, ", ".join(got),
                                                  "\n".join(" * (%s)" % g for g in sigs)))


def hamming_window(window_length, periodic=_PERIODIC, alpha=_DefaultFloat(0.54),
                   beta=_DefaultFloat(0.46), *, dtype=None, layout=None, device=None,
                   pin_memory=False, requires_grad=False):
    """The Hamming window ``alpha - beta * cos(2 pi n / (N - 1))``."""
    _check_window_args("hamming_window", periodic, ("alpha", "beta"), (alpha, beta),
                       dict(dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                            requires_grad=requires_grad))
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine(alpha, beta))


def hann_window(window_length, periodic=_PERIODIC, *, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False):
    """The Hann window ``0.5 - 0.5 * cos(2 pi n / (N - 1))``."""
    _check_window_args("hann_window", periodic, (), (), dict(
        dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
        requires_grad=requires_grad))
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine(0.5, 0.5))


def _blackman(xp, k, n, dt):
    c = k * dt(math.pi / (n - 1))
    return dt(0.42) - dt(0.5) * xp.cos(2 * c) + dt(0.08) * xp.cos(4 * c)


def blackman_window(window_length, periodic=_PERIODIC, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """The Blackman window."""
    _check_window_args("blackman_window", periodic, (), (), dict(
        dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
        requires_grad=requires_grad))
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _blackman)


def _bartlett(xp, k, n, dt):
    w = k * dt(2.0 / (n - 1))
    return xp.where(k < ((n - 1) >> 1) + 1, w, 2 - w)


def bartlett_window(window_length, periodic=_PERIODIC, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """The Bartlett (triangular) window."""
    _check_window_args("bartlett_window", periodic, (), (), dict(
        dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
        requires_grad=requires_grad))
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   _bartlett)


def kaiser_window(window_length, periodic=_PERIODIC, beta=_DefaultFloat(12.0), *, dtype=None,
                  layout=None, device=None, pin_memory=False, requires_grad=False):
    """The Kaiser window with shape parameter ``beta``."""
    _check_window_args("kaiser_window", periodic, ("beta",), (beta,),
                       dict(dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                            requires_grad=requires_grad))
    def fn(xp, k, n, dt):
        alpha = (n - 1) / 2.0
        r = (k.astype(np.float64) - alpha) / alpha
        arg = beta * xp.sqrt(xp.maximum(1 - r * r, 0))
        return xp.i0(arg) / xp.i0(xp.asarray(beta, dtype=np.float64))
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, fn)


class Fill(Function):
    node_name = "FillBackward0"

    @staticmethod
    def forward(ctx, a, value):
        return Tensor._wrap(xp_of(a).full(a._array.shape, value, dtype=a._array.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        return _zero_grad(grad_output), None


def fill(input, value):
    """A new tensor like ``input`` filled with ``value``."""
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor "
                               "with %d dimensions." % value.dim())
        arr = value._array
        if arr.dtype.kind == "c" and input._array.dtype.kind != "c":
            warnings.warn("Casting complex values to real discards the imaginary part",
                          UserWarning, stacklevel=2)
            arr = arr.real
        with errstate(invalid="ignore", over="ignore"):
            value = arr.astype(input._array.dtype).item()     # (torch's copy: a cast)
        return Fill.apply(input, value)
    d = _dt.from_numpy_dtype(input._array.dtype)
    if isinstance(value, complex) and not d.is_complex:
        if value.imag != 0:
            raise RuntimeError("value cannot be converted to type %s without overflow"
                               % _dt._C_NAME.get(d.name, d.name))
        value = value.real
    value = checked_scalar(value, d, reduced=input._array.size != 1)
    return Fill.apply(input, value)


def unravel_index(indices, shape):
    """The coordinates in ``shape`` of each flat index (a tuple of int64 tensors)."""
    if not isinstance(indices, Tensor):
        indices = as_tensor(indices)
    if indices._array.dtype.kind not in "iu":
        raise TypeError("expected 'indices' to be integer dtype, but got %s" % indices.dtype)
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)) or not all(
            isinstance(s, (int, np.integer)) for s in shape):
        bad = shape if not isinstance(shape, (tuple, list)) else next(
            s for s in shape if not isinstance(s, (int, np.integer)))
        raise TypeError("expected 'shape' to be int or sequence of ints, but got %s"
                        % type(bad))
    for s in shape:
        if s < 0:
            raise ValueError("'shape' cannot have negative values, but got %s" % (tuple(shape),))
    if 0 in shape and indices._array.size:
        raise RuntimeError("ZeroDivisionError")
    xp = xp_of(indices)
    rest = indices._array.astype(np.int64)
    out = []
    for s in reversed(shape):
        out.append(rest % s if s else rest * 0)
        rest = rest // s if s else rest
    return tuple(Tensor._wrap(xp.asarray(o)) for o in reversed(out))


def is_same_size(input, other):
    """Whether ``input`` and ``other`` have the same shape."""
    return tuple(input.shape) == tuple(other.shape)


def is_signed(input):
    """Whether ``input``'s dtype is signed."""
    return _dt.kind(input._array.dtype) in "ifc"


def is_inference(input):
    """Whether ``input`` is an inference tensor (made inside ``inference_mode()``)."""
    return input._inference


def can_cast(from_, to):
    """Whether torch's type promotion allows casting ``from_`` to ``to``."""
    f, t = _dt.to_dtype(from_), _dt.to_dtype(to)
    order = "biufc"
    fk, tk = _dt.kind(f.np), _dt.kind(t.np)
    return order.index(fk if fk != "u" else "i") <= order.index(tk if tk != "u" else "i")


def apply_(input, callable):
    """Apply the Python ``callable`` to each element, in place (slow; for the CPU)."""
    flat = [callable(v) for v in _flat_list(input)]
    write(input, xp_of(input).asarray(flat, dtype=input._array.dtype).reshape(input.shape),
          "apply_")
    return input


def _flat_list(t):
    return t._array.reshape(-1).tolist()    # host: per-element Python callables


def _map_checks(name, input, args):
    for pos, (arg, t) in enumerate(args, 1):
        if not isinstance(t, Tensor):
            raise TypeError("%s(): argument '%s' (position %d) must be Tensor, not %s"
                            % (name, arg, pos, type(t).__name__))
    if input.requires_grad:
        raise RuntimeError("Can't call %s() on Variable that requires grad. Use "
                           "var.detach().%s() instead." % (name, name))
    for arg, t in args:
        if t._array.dtype != input._array.dtype:
            raise TypeError("%s: expected torch.%s for %s'%s' (got torch.%s)" % (
                name, input.dtype._legacy, "argument " if name == "map2_" else "", arg,
                t.dtype._legacy))


def map_(input, tensor, callable):
    """``input[i] = callable(input[i], tensor[i])`` element-wise (``tensor`` broadcast)."""
    _map_checks("map_", input, [("other", tensor)])
    other = tensor.expand(input.shape).contiguous()
    vals = [callable(a, b) for a, b in zip(_flat_list(input), _flat_list(other))]
    write(input, xp_of(input).asarray(vals, dtype=input._array.dtype).reshape(input.shape),
          "map_")
    return input


def map2_(input, x, y, callable):
    """``input[i] = callable(input[i], x[i], y[i])`` element-wise."""
    _map_checks("map2_", input, [("x", x), ("y", y)])
    xs = x.expand(input.shape).contiguous()
    ys = y.expand(input.shape).contiguous()
    vals = [callable(a, b, c) for a, b, c in zip(_flat_list(input), _flat_list(xs),
                                                 _flat_list(ys))]
    write(input, xp_of(input).asarray(vals, dtype=input._array.dtype).reshape(input.shape),
          "map2_")
    return input



unsafe_chunk, unsafe_split, unsafe_split_with_sizes = chunk, split, split_with_sizes


def is_distributed(input):
    """Whether ``input`` is distributed (never, in ember)."""
    return False


def dim_order(input, *, ambiguity_check=False):
    """The order of ``input``'s dims from outermost to innermost in memory."""
    strides = input.stride()
    return tuple(sorted(range(input.dim()), key=lambda d: -strides[d]))


def fill_diagonal_(input, fill_value, wrap=False):
    """Write ``fill_value`` on the main diagonal (``wrap``: restart below a tall matrix's)."""
    if isinstance(fill_value, Tensor) and fill_value._array.ndim == 0:
        fill_value = fill_value.item()
    if not isinstance(fill_value, (int, float, complex, np.number, np.bool_)):
        raise TypeError("fill_diagonal_(): argument 'fill_value' (position 1) must be Number, "
                        "not %s" % type(fill_value).__name__)
    if not isinstance(wrap, (bool, np.bool_)):
        raise TypeError("fill_diagonal_(): argument 'wrap' (position 2) must be bool, not %s"
                        % type(wrap).__name__)
    if input.dim() >= 2:
        d = _dt._BY_NP[input._array.dtype]
        if isinstance(fill_value, (complex, np.complexfloating)) and fill_value.imag and \
                input._array.dtype.kind not in "cb":
            raise RuntimeError("value cannot be converted to type %s without overflow"
                               % _dt._C_NAME.get(d.name, d.name))
        fill_value = checked_scalar(fill_value, d, reduced=True)
    if input.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    shape = tuple(input.shape)
    if input.dim() > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    xp = xp_of(input)
    numel = math.prod(shape)
    if input.dim() == 2:
        rows, cols = shape
        step = cols + 1
        main = _b.min(rows, cols) * step
        # (torch fills the part below a tall matrix's first diagonal as a second slice)
        spans = [(0, main)] + ([(main, numel)] if wrap and rows > cols + 1 else [])
    else:
        step = _b.sum(math.prod(shape[k + 1:]) for k in range(len(shape)))
        spans = [(0, numel)]
    masks = []
    for lo, hi in spans:
        m = xp.zeros(numel, dtype=bool)
        m[lo:hi:step] = True
        masks.append(Tensor._wrap(m.reshape(shape)))

    def fill_diagonal(t):
        for m in masks:
            t = FillDiagonal.apply(t, m, fill_value)
        return t
    return inplace(input, fill_diagonal)


class FillDiagonal(Function):
    """``input`` with ``value`` where ``mask`` holds (one strided slice filled in place)."""

    node_name = "CopySlices"
    edge_args = (0,)

    @staticmethod
    def forward(ctx, a, mask, value):
        xp = xp_of(a)
        v = xp.asarray(value).astype(a._array.dtype)
        ctx.save_for_backward(mask)
        return Tensor._wrap(xp.where(mask._array, v, a._array))

    @staticmethod
    def backward(ctx, grad_output):
        mask, = ctx.saved_tensors
        return grad_output.masked_fill(mask, 0), None, None

