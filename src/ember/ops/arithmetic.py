"""Arithmetic with broadcasting and Python scalars on either side: add, sub, mul, div, pow, ..."""
import cmath
import math

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..backend import errstate, is_array
from ..backend import quiet as _quiet
from ..tensor import Tensor
from ._index import _iter_perm
from ._inplace import castable_into, inplace
from .conversion import _dense, _in_order, restrided
from ._util import (R_TO_C_MSG, SCALAR_TYPES, _int_scalar_for, big_int_check, binary_arrays,
                    deprecated_overload,
                    check_real_grad,
                    check_shapes_broadcast,
                    is_scalar, need_tensors, not_implemented_for, opmath_scalar, scalar_like,
                    sum_to, xp_of)

__all__ = ["add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
           "floor_divide", "remainder", "fmod", "pow", "float_power", "neg", "negative",
           "reciprocal", "rsub", "add_", "sub_", "mul_", "div_", "pow_", "neg_",
           "reciprocal_", "floor_divide_", "remainder_", "fmod_", "true_divide_",
           "subtract_", "multiply_", "divide_", "square", "square_", "lerp", "lerp_",
           "addcmul", "addcdiv", "addcmul_", "addcdiv_",
           "maximum", "minimum", "fmax", "fmin", "atan2", "arctan2", "logaddexp", "logaddexp2",
           "hypot", "xlogy", "atan2_", "arctan2_", "hypot_", "xlogy_"]


def _grad_shape(ctx, i):
    return ctx._input_meta(i)[0]


def _same(g, arr):
    """``arr`` has the shape and dtype of gradient ``g`` (its backward may skip the ops)."""
    return g.shape == arr.shape and (g.dtype is arr.dtype or g.dtype == arr.dtype)


def _laid(out, a, b=0):
    """``out``, the element-wise result of tensors (or numbers) ``a`` and ``b``, laid out as
    torch's TensorIterator lays it out (NumPy's order differs for mixed layouts)."""
    if out.ndim < 2 or a._array.flags.c_contiguous and (
            not isinstance(b, Tensor) or b._array.flags.c_contiguous) or out.size == 0 or \
            not is_array(out):
        return out
    aa, bb = a._array, b._array if isinstance(b, Tensor) else b
    shape, arrs = out.shape, [x for x in (aa, bb) if is_array(x)]
    ops = [(0,) * (out.ndim - x.ndim) + tuple(
        0 if n == 1 and m != 1 else s // x.itemsize
        for n, s, m in zip(x.shape, x.strides, shape[out.ndim - x.ndim:])) for x in arrs]
    perm, target = _iter_perm(shape, ops), list(ops[0])
    if all(getattr(x, "shape", ()) == shape for x in (aa, bb)):     # (torch's fast setup)
        if out.ndim == 4 and all(_in_order(x, [0, 2, 3, 1]) for x in arrs):
            perm = [1, 3, 2, 0]
        elif ops.count(ops[0]) == len(ops) and _dense(shape, ops[0]):
            perm = ()
    step = 1
    for d in perm:
        target[d], step = step, step * shape[d]
    if tuple(target) == tuple(s // out.itemsize for s in out.strides):
        return out
    return restrided(out, target)


class Add(Function):
    node_name = "AddBackward0"

    @staticmethod
    def forward(ctx, a, b):
        aa, bb = binary_arrays("add", a, b)
        return Tensor._wrap(_laid(_plus(aa, bb, 1), a, b))

    @staticmethod
    def backward(ctx, grad_output):
        need = ctx.needs_input_grad
        ga = sum_to(grad_output, _grad_shape(ctx, 0)) if need[0] else None
        gb = sum_to(grad_output, _grad_shape(ctx, 1)) if need[1] else None
        return ga, gb


class Sub(Function):
    node_name = "SubBackward0"

    @staticmethod
    def forward(ctx, a, b):
        _no_bool_sub(a, b)
        aa, bb = binary_arrays("sub", a, b)
        return Tensor._wrap(_laid(_plus(aa, bb, -1), a, b))

    @staticmethod
    def backward(ctx, grad_output):
        need = ctx.needs_input_grad
        ga = sum_to(grad_output, _grad_shape(ctx, 0)) if need[0] else None
        gb = sum_to(-grad_output, _grad_shape(ctx, 1)) if need[1] else None
        return ga, gb


def _plus(aa, bb, one):
    """``aa + one * bb`` (``one`` is 1 or -1) as torch's kernel: for a complex result, torch
    multiplies ``bb`` by ``one + 0j`` first, so an infinite part of ``bb`` makes a NaN."""
    if _complex(aa) or _complex(bb):
        with _quiet():
            return aa + (complex(bb) * one if isinstance(bb, SCALAR_TYPES) else bb * complex(one))
    return aa + bb if one == 1 else aa - bb


def _complex(x):
    """Whether the array or number ``x`` is complex."""
    return isinstance(x, complex) if isinstance(x, SCALAR_TYPES) else x.dtype.kind == "c"


def _plus_alpha(op, a, b, alpha):
    """``a + alpha * b`` (``b`` a tensor, or a number for a complex result), the product in the
    result dtype as torch's kernel."""
    aa, bb = binary_arrays(op, a, b)
    if _complex(aa) or _complex(bb):
        with _quiet():
            if isinstance(bb, SCALAR_TYPES):
                return Tensor._wrap(aa + complex(bb) * complex(alpha))
            return Tensor._wrap(aa + bb * complex(alpha))
    if _reduced_float(aa):
        # (torch's float16/bfloat16 kernel: alpha and a number ``b`` in the tensors' dtype,
        # then a + alpha * b in float32, rounded once)
        f32 = np.float32
        al = f32(aa.dtype.type(f32(alpha)))
        b32 = f32(aa.dtype.type(f32(bb))) if isinstance(bb, SCALAR_TYPES) else bb.astype(f32)
        return Tensor._wrap((aa.astype(f32) + al * b32).astype(aa.dtype))
    if _f32s(aa, bb) and not isinstance(alpha, complex):
        return Tensor._wrap(_fma32(np.float32(bb), np.float32(alpha), aa))
    return Tensor._wrap(aa + mul(Tensor._wrap(bb), alpha)._array)


def _fma32(x, y, z):
    """``x * y + z`` of float32 operands rounded once, as torch's CPU kernels fuse them (the
    float32 product is exact in float64)."""
    f = np.float64
    with _quiet():
        return (x.astype(f) * y.astype(f) + z.astype(f)).astype(np.float32)


def _f32s(aa, bb):
    """Whether both operands are float32 (where torch's kernel fuses a multiply-add); a real
    Python number ``bb`` counts, in float32."""
    if isinstance(bb, SCALAR_TYPES):
        return aa.dtype == np.float32 and not isinstance(bb, complex)
    return aa.dtype == np.float32 and bb.dtype == np.float32


def _reduced_float(arr):
    return not isinstance(arr, SCALAR_TYPES) and (arr.dtype == np.float16 or
                                                  arr.dtype.kind == "V")


class AddAlpha(Function):
    """``a + alpha * b`` of two tensors: one node, as torch's (``sign`` -1: ``a - alpha * b``)."""

    node_name = "AddBackward0"
    edge_args = (0, 1)     # (alpha is no input of torch's node)
    sign = 1

    @staticmethod
    def forward(ctx, a, b, alpha):
        ctx.alpha = alpha
        return _plus_alpha("add", a, b, alpha)

    @staticmethod
    def backward(ctx, grad_output):
        need = ctx.needs_input_grad
        ga = sum_to(grad_output, _grad_shape(ctx, 0)) if need[0] else None
        gb = None
        if need[1]:
            alpha = ctx.alpha * ctx._forward_cls.sign
            # (torch's grad * conj(alpha), real again for a real ``b``)
            g = grad_output * (alpha.conjugate() if isinstance(alpha, complex) else alpha)
            gb = _real_if(ctx, 1, sum_to(g, _grad_shape(ctx, 1)))
        return ga, gb, None


class SubAlpha(AddAlpha):
    node_name = "SubBackward0"
    sign = -1

    @staticmethod
    def forward(ctx, a, b, alpha):
        ctx.alpha = alpha
        _no_bool_sub(a, b)
        return _plus_alpha("sub", a, b, -alpha)


def _no_bool_sub(a, b):
    a_bool = a._array.dtype.kind == "b"
    b_bool = isinstance(b, bool) or (isinstance(b, Tensor) and b._array.dtype.kind == "b")
    if a_bool and b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if a_bool or b_bool:
        if b.__class__ is int:
            _int_scalar_for(b, np.dtype(np.float64), True)     # (torch's OverflowError first)
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not "
                           "supported. If you are trying to invert a mask, use the `~` or "
                           "`logical_not()` operator instead.")


class Rsub(Function):
    """``other - alpha * input`` (a tensor or a number ``other``); inputs in torch's order."""

    node_name = "RsubBackward0"

    @staticmethod
    def forward(ctx, a, b, alpha):
        _no_bool_sub(a, b)
        aa, bb = binary_arrays("rsub", a, b)
        ctx.alpha = alpha
        if not isinstance(b, Tensor):
            ctx.set_node_name("RsubBackward1")    # torch's name for a number ``other``
        xp = xp_of(a)
        if _complex(aa) or _complex(bb):
            with _quiet():     # (torch's ``other + (-alpha + 0j) * input``)
                out = bb + aa * complex(-alpha)
            return Tensor._wrap(xp.asarray(out))
        if alpha != 1 and _reduced_float(aa) and (isinstance(bb, SCALAR_TYPES) or
                                                  bb.dtype == aa.dtype):
            f32 = np.float32
            b32 = f32(aa.dtype.type(f32(bb))) if isinstance(bb, SCALAR_TYPES) else \
                bb.astype(f32)
            out = b32 - f32(aa.dtype.type(f32(alpha))) * aa.astype(f32)
            return Tensor._wrap(xp.asarray(out.astype(aa.dtype)))
        if alpha != 1 and _f32s(aa, bb) and not isinstance(alpha, complex):
            return Tensor._wrap(_fma32(aa, -np.float32(alpha), np.float32(bb)))
        if alpha != 1:
            out = bb - aa * binary_arrays("rsub", Tensor._wrap(aa), alpha)[1]
            return Tensor._wrap(xp.asarray(out).astype(aa.dtype, copy=False))
        return Tensor._wrap(xp.asarray(bb - aa))

    @staticmethod
    def backward(ctx, grad_output):
        need = ctx.needs_input_grad
        g = -grad_output if ctx.alpha == 1 else grad_output * -ctx.alpha
        ga = sum_to(g, _grad_shape(ctx, 0)) if need[0] else None
        gb = sum_to(grad_output, _grad_shape(ctx, 1)) if need[1] else None
        return ga, gb, None


class Mul(Function):
    node_name = "MulBackward0"

    @staticmethod
    def forward(ctx, a, b):
        aa, bb = binary_arrays("mul", a, b)
        need = ctx.needs_input_grad
        if isinstance(b, Tensor):
            if need[0] or need[1]:
                # (torch's order: other, then self, as a pack hook sees them)
                ctx.save_for_backward(b if need[0] else None, a if need[1] else None)
        else:
            ctx.scalar = b
            ctx.save_for_backward()     # (torch saves the number: freed after backward too)
        if aa.dtype.kind == "b" and (not isinstance(b, Tensor) or bb.dtype.kind == "b"):
            return Tensor._wrap(xp_of(a).logical_and(aa, bb))
        s = opmath_scalar(aa, b)
        if s is not None:
            return Tensor._wrap(xp_of(a).multiply(aa, s, dtype=np.float32).astype(aa.dtype))
        return Tensor._wrap(_laid(aa * bb, a, b))

    @staticmethod
    def backward(ctx, grad_output):
        if hasattr(ctx, "scalar"):
            s = ctx.scalar
            ctx.saved_tensors       # (raises once the graph is freed, as torch's)
            if isinstance(s, complex):
                return _real_if(ctx, 0, grad_output * s.conjugate()), None
            return grad_output * s, None
        b, a = ctx.saved_tensors
        return Mul._grads(ctx, grad_output, a, b)

    @staticmethod
    def _grads(ctx, grad_output, a, b):
        need = ctx.needs_input_grad
        if grad_output._array.dtype.kind == "c":
            # NOTE: torch's convention for complex gradients: grad * conj(d out / d input).
            ga = _real_if(ctx, 0, sum_to(grad_output * _cj(b), _grad_shape(ctx, 0))) \
                if need[0] else None
            gb = _real_if(ctx, 1, sum_to(grad_output * _cj(a), _grad_shape(ctx, 1))) \
                if need[1] else None
            return ga, gb
        ga = sum_to(grad_output * b, _grad_shape(ctx, 0)) if need[0] else None
        gb = sum_to(grad_output * a, _grad_shape(ctx, 1)) if need[1] else None
        return ga, gb

    @staticmethod
    def array_backward(ctx, grad_output):
        g = grad_output._array
        if g.dtype.kind not in "fV":
            return Mul.backward(ctx, grad_output)
        if hasattr(ctx, "scalar"):
            if type(ctx.scalar) in (int, float):
                ctx.saved_tensors       # (raises once the graph is freed, as torch's)
                return Tensor._wrap(g * ctx.scalar), None
            return Mul.backward(ctx, grad_output)
        b, a = ctx.saved_tensors     # (unpacked once: a checkpoint's unpack hook allows no more)
        if (a is None or _same(g, a._array)) and (b is None or _same(g, b._array)):
            # no broadcast to undo and no dtype to cast: the products alone
            need = ctx.needs_input_grad
            return (Tensor._wrap(g * b._array) if need[0] else None,
                    Tensor._wrap(g * a._array) if need[1] else None)
        return Mul._grads(ctx, grad_output, a, b)


class Div(Function):
    node_name = "DivBackward0"

    @staticmethod
    def forward(ctx, a, b):
        aa, bb = binary_arrays("div", a, b)
        if aa.dtype.kind not in "fcV":
            d = _dt.get_default_dtype().np
            aa = aa.astype(d)
            bb = bb if isinstance(b, Tensor) else b.item() if isinstance(b, np.generic) else b
            if isinstance(b, Tensor) and bb.dtype.kind not in "fcV":
                bb = bb.astype(d)
        elif isinstance(b, Tensor) and bb.dtype != aa.dtype:
            bb = bb.astype(aa.dtype)
        if isinstance(b, Tensor):
            # (torch's order: other, then self)
            ctx.save_for_backward(b, a if ctx.needs_input_grad[1] else None)
        else:
            ctx.scalar = b
            ctx.save_for_backward()     # (torch saves the number: freed after backward too)
        s = opmath_scalar(aa, b)
        with errstate(divide="ignore", invalid="ignore"):
            if s is not None:
                return Tensor._wrap(xp_of(a).divide(aa, s, dtype=np.float32).astype(aa.dtype))
            return Tensor._wrap(_laid(aa / bb, a, b))

    @staticmethod
    def backward(ctx, grad_output):
        if hasattr(ctx, "scalar"):
            s = ctx.scalar
            ctx.saved_tensors       # (raises once the graph is freed, as torch's)
            if isinstance(s, complex):
                return _real_if(ctx, 0, grad_output / s.conjugate()), None
            return grad_output / s, None
        need = ctx.needs_input_grad
        b, a = ctx.saved_tensors
        if grad_output._array.dtype.kind == "c":
            ga = _real_if(ctx, 0, sum_to(grad_output / _cj(b), _grad_shape(ctx, 0))) \
                if need[0] else None
            gb = _real_if(ctx, 1, sum_to(-grad_output * _cj((a / b) / b), _grad_shape(ctx, 1))) \
                if need[1] else None
            return ga, gb
        ga = sum_to(grad_output / b, _grad_shape(ctx, 0)) if need[0] else None
        gb = sum_to(-grad_output * ((a / b) / b), _grad_shape(ctx, 1)) if need[1] else None
        return ga, gb


# torch's nodes of ``tensor op number`` from its C++ code (the ATen ``.Scalar`` overloads, one
# edge): for composites that reproduce torch's graph, e.g. ``AddScalar.apply(x, 1e-12)``
# (Python's ``x + 1e-12`` records AddBackward0 with a None edge, as torch's Python API)
class AddScalar(Add):
    node_name = "AddBackward1"


class SubScalar(Sub):
    node_name = "SubBackward1"


class MulScalar(Mul):
    node_name = "MulBackward1"


class DivScalar(Div):
    node_name = "DivBackward1"


class Neg(Function):
    node_name = "NegBackward0"

    @staticmethod
    def forward(ctx, a):
        if a._array.dtype == np.bool_:
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                               "If you are trying to invert a mask, use the `~` or "
                               "`logical_not()` operator instead.")
        return Tensor._wrap(_laid(-a._array, a))

    @staticmethod
    def backward(ctx, grad_output):
        return -grad_output


class Reciprocal(Function):
    node_name = "ReciprocalBackward0"

    @staticmethod
    def forward(ctx, a):
        arr = a._array if a._array.dtype.kind in "fcV" else \
            a._array.astype(_dt.get_default_dtype().np)
        with errstate(divide="ignore", invalid="ignore"):    # (complex: 1 / z, as torch)
            out = Tensor._wrap(xp_of(a).reciprocal(arr) if arr.dtype.kind != "c" else 1 / arr)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        out, = ctx.saved_tensors
        return -grad_output * _cj(out * out)




def _pow4(xp, x):
    if x.dtype == np.float32:     # (x * x exact in float64: one rounding, as std::pow)
        x2 = x.astype(np.float64)
        x2 *= x2
        return (x2 * x2).astype(np.float32)
    return xp.power(x, 4.0)


# NOTE: torch's pow kernel special-cases these exponents with the same formulas (x*x*x,
# 1/x, 1/(x*x), sqrt, 1/sqrt); 4 is within 1 ulp of its std::pow.
_FAST_POW = {3: lambda xp, x: x * x * x, -1: lambda xp, x: xp.reciprocal(x),
             -2: lambda xp, x: xp.reciprocal(x * x), 0.5: lambda xp, x: xp.sqrt(x),
             -0.5: lambda xp, x: xp.reciprocal(xp.sqrt(x)), 4: _pow4}


class PowScalar(Function):
    """``a ** e`` with a Python number ``e``."""

    node_name = "PowBackward0"

    @staticmethod
    def forward(ctx, a, e):
        arr = a._array
        if arr.dtype.kind == "b" and not isinstance(e, (bool, float)):
            arr = arr.astype(np.int64)   # NOTE: bool ** int is int64, bool ** bool stays bool
        elif arr.dtype.kind == "b" and isinstance(e, bool):
            return Tensor._wrap(arr | (not e))
        if arr.dtype.kind in "iub":
            if isinstance(e, float) and not float(e).is_integer():
                arr = arr.astype(_dt.get_default_dtype().np)
            elif e < 0:
                raise RuntimeError("Integers to negative integer powers are not allowed.")
            elif isinstance(e, float):
                arr = arr.astype(_dt.get_default_dtype().np)
        ctx.save_for_backward(a)
        ctx.e = e
        with errstate(divide="ignore", invalid="ignore", over="ignore"):
            if e == 2:
                return Tensor._wrap(arr * arr)
            if arr.dtype.kind == "f" and arr.dtype.itemsize >= 4 and e in _FAST_POW:
                return Tensor._wrap(_FAST_POW[e](xp_of(a), arr))
            if arr.dtype.kind == "V":     # (bfloat16)
                # NOTE: torch's special exponents round each bfloat16 step (as ml_dtypes' ufuncs
                # do); other exponents take float32's pow of a bfloat16 exponent (1.001 is 1),
                # rounded once.
                f = _FAST_POW.get(e) if e != 4 else None
                if f is not None:
                    return Tensor._wrap(f(xp_of(a), arr))
                e = np.float32(arr.dtype.type(e))
                return Tensor._wrap(xp_of(a).power(arr.astype(np.float32), e).astype(arr.dtype))
            if arr.dtype.kind == "c":
                return Tensor._wrap(_cpow(xp_of(a), arr, xp_of(a).asarray(e, arr.dtype), True))
            return Tensor._wrap(xp_of(a).power(arr, e if arr.dtype.kind in "fV" else int(e)))

    @staticmethod
    def backward(ctx, grad_output):
        return PowScalar._grad(ctx, grad_output, *ctx.saved_tensors)

    @staticmethod
    def _grad(ctx, grad_output, a):
        e = ctx.e
        if e == 0:    # (zeros, not grad * 0: an inf/nan upstream gradient still gives 0)
            return Tensor._wrap(xp_of(grad_output).zeros_like(grad_output._array)), None
        # (torch's formula: the number times a ** (e - 1), which keeps a's graph even for e == 1)
        return grad_output * _cj(MulScalar.apply(a ** (e - 1), e)), None

    @staticmethod
    def array_backward(ctx, grad_output):
        a, = ctx.saved_tensors
        g = grad_output._array
        x = a._array
        if ctx.e == 1 and g.dtype == x.dtype:
            return grad_output, None
        if ctx.e == 2 and g.dtype == x.dtype and g.dtype.kind in "fV":
            return Tensor._wrap(g * (x * 2.0)), None
        return PowScalar._grad(ctx, grad_output, a)


class PowScalarTensor(PowScalar):
    """``a ** e`` with a 0-d integer tensor ``exponent`` that needs no gradient, computed as
    with its number ``e``; torch's node is that of two tensors."""

    node_name = "PowBackward1"

    @staticmethod
    def forward(ctx, a, e, exponent):
        ctx.mark_edges(0, 2)
        return PowScalar.forward(ctx, a, e)

    @staticmethod
    def backward(ctx, grad_output):
        return PowScalar.backward(ctx, grad_output) + (None,)


class Pow(Function):
    """``a ** b`` with both tensors."""

    node_name = "PowBackward1"

    @staticmethod
    def forward(ctx, a, b):
        aa, bb = binary_arrays("pow", a, b)
        not_implemented_for(aa, "pow", "b")
        xp = xp_of(a)
        with errstate(divide="ignore", invalid="ignore", over="ignore"):
            if aa.dtype.kind in "iu" and bool((bb < 0).any()):
                out = Tensor._wrap(_int_pow(xp, aa, bb))
            else:
                out = Tensor._wrap(_cpow(xp, aa, bb) if aa.dtype.kind == "c" else xp.power(aa, bb))
        ctx.save_for_backward(b, a, out)     # (torch's order: exponent, self, result)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        from .unary import log
        from .comparison import where
        b, a, out = ctx.saved_tensors
        need = ctx.needs_input_grad
        ga = gb = None
        if out._array.dtype.kind == "c":
            if need[0]:
                g = grad_output * _cj(b * a ** (b - 1))
                ga = _real_if(ctx, 0, sum_to(g, _grad_shape(ctx, 0)))
            if need[1]:
                ac = a if a._array.dtype == out._array.dtype else a.to(out.dtype)
                g = grad_output * _cj(out * log(ac))    # (a real base's log taken as complex)
                gb = _real_if(ctx, 1, sum_to(g, _grad_shape(ctx, 1)))
            return ga, gb
        if need[0]:
            # NOTE: torch gives 0 where b == 0 (even at a == 0).
            safe_a = where(b == 0, 1.0, a)   # avoids 0 * inf where the result is masked anyway
            g = grad_output * (b * safe_a ** (b - 1))
            ga = sum_to(where(b == 0, 0.0, g), _grad_shape(ctx, 0))
        if need[1]:
            # NOTE: torch gives 0 where a == 0 and b >= 0 instead of nan from log(0); at a == 0
            # and b < 0 it is out * log(0) = inf * -inf = -inf.
            zero = (a == 0) & (b >= 0)
            # (torch: the base in the promoted dtype, grad * (result * log(base)))
            d = _dt.result_type(a, b)
            ap = a if a._array.dtype == d.np else a.to(d)
            g = grad_output * (out * log(where(zero, ap + 1, ap)))    # (no 0 * log(0) computed)
            gb = sum_to(where(zero, 0.0, g), _grad_shape(ctx, 1))
        return ga, gb


class RPow(Function):
    """``s ** b`` with a Python number ``s`` and a tensor exponent."""

    node_name = "PowBackward2"

    @staticmethod
    def forward(ctx, b, s):
        d = _dt.result_type(b, s).np
        if d.kind == "b":    # (True ** a bool tensor)
            raise NotImplementedError("\"pow\" not implemented for 'Bool'")
        arr = b._array if b._array.dtype == d else b._array.astype(d)
        xp = xp_of(b)
        if d.kind in "iu" and s.__class__ is int:
            s = _int_scalar_for(s, d, False)      # (wrapped into the dtype, as torch's cast)
        with errstate(divide="ignore", invalid="ignore", over="ignore"):
            if d.kind in "iu" and bool((arr < 0).any()):
                out = Tensor._wrap(_int_pow(xp, xp.asarray(s, dtype=d), arr))
            elif d.kind == "c":
                out = Tensor._wrap(_cpow(xp, xp.asarray(s, dtype=d), arr))
            else:
                out = Tensor._wrap(xp.power(xp.asarray(s, dtype=d), arr))
        ctx.s = s
        ctx.save_for_backward(out, b)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        out, b = ctx.saved_tensors
        s = ctx.s
        if s == 0 and out._array.dtype.kind == "c":
            from .comparison import where
            # NOTE: torch's grad * where(imag(b) == 0 & real(b) >= 0, 0, conj(out * log(0)))
            keep = (b.imag == 0) & (b.real >= 0) if b._array.dtype.kind == "c" else b >= 0
            return grad_output * where(keep, 0.0, (out * -math.inf).conj()), None
        if s == 0:
            from .comparison import where
            # NOTE: torch's grad * where(exponent >= 0, 0, out * log(0)): -inf for a negative
            # exponent (out is inf there, and 0 or 1 for exponent >= 0)
            return grad_output * where(out <= 1, 0.0, -out), None
        if out._array.dtype.kind == "c":
            # NOTE: torch takes the log of the base as a complex number (log|s| + i pi for a
            # negative one) and conjugates: grad * conj(out * log(s))
            return grad_output * _cj(out * cmath.log(s)), None
        # (log of a negative base is nan, as torch's gradient)
        return grad_output * out * (math.log(s) if s > 0 else math.nan), None


def _cpow(xp, a, b, scalar=False):
    """Complex ``a ** b``; a zero base takes torch's ``exp(b * log(a))`` (``inf+nanj`` for a
    negative exponent, ``nan`` for a zero one, where NumPy gives ``nan`` and 1), except that a
    number exponent 0 gives 1 as torch's scalar kernel."""
    out = xp.asarray(xp.power(a, b))
    zero = a == 0
    if zero.any():
        a, b = xp.broadcast_arrays(a, b)
        zero = xp.broadcast_to(zero, out.shape)
        fix = xp.exp(b[zero] * xp.log(a[zero]))
        if scalar:
            fix[b[zero] == 0] = 1
        out = out.copy() if not out.flags.writeable or not out.ndim else out
        if not out.ndim:
            return xp.asarray(fix[0] if fix.size else out, dtype=out.dtype)
        out[zero] = fix
    return out


def _int_pow(xp, a, b):
    """Integer ``a ** b`` with tensor exponents, negative ones included (as torch: 1 ** -n is
    1, (-1) ** -n is +-1, any other base gives 0)."""
    neg = b < 0
    pos = xp.power(a, xp.where(neg, b.dtype.type(0), b))
    one = a.dtype.type(1)
    odd = (b % 2).astype(bool)
    small = xp.where(a == 1, one, xp.where(a == -1, xp.where(odd, -one, one), a.dtype.type(0)))
    return xp.where(neg, small, pos)


_OPERAND = (Tensor,) + SCALAR_TYPES    # a Tensor or a Python/NumPy number


def _tp_name(x):
    """The name torch's argument errors give ``x``'s type (NumPy's are ``numpy.ndarray``)."""
    t = type(x)
    return "numpy." + t.__name__ if t.__module__ == "numpy" else t.__name__


def _not_tensor(op, other):
    """torch's TypeError for a method ``t.op(other)`` given an ``other`` it takes no overload of."""
    raise TypeError("%s(): argument 'other' (position 1) must be Tensor, not %s"
                    % (op, _tp_name(other)))


# torch's overload lists, for the ops whose argument errors print them
_OVERLOADS = {
    "pow": " * (Tensor input, Tensor exponent, *, Tensor out = None)\n * (Number self, Tensor "
           "exponent, *, Tensor out = None)\n * (Tensor input, Number exponent, *, Tensor out = "
           "None)\n",
    "fmod": " * (Tensor input, Tensor other, *, Tensor out = None)\n * (Tensor input, Number "
            "other, *, Tensor out = None)\n",
    "floor_divide": " * (Tensor input, Tensor other, *, Tensor out = None)\n * (Tensor input, "
                    "Number other)\n      didn't match because some of the arguments have "
                    "invalid types: (Tensor, !%s!)\n",
    "remainder": " * (Tensor input, Tensor other, *, Tensor out = None)\n * (Number self, Tensor "
                 "other)\n      didn't match because some of the arguments have invalid types: "
                 "(!Tensor!, !%s!)\n * (Tensor input, Number other, *, Tensor out = None)\n"}
_METHOD_OVERLOADS = (" * (Tensor %s)\n      didn't match because some of the arguments have "
                     "invalid types: (!numpy.ndarray!)\n * (Number %s)\n      didn't match "
                     "because some of the arguments have invalid types: (!numpy.ndarray!)\n")


def _tensor_first(op, a, b, floating=False):
    """``a`` and ``b`` with ``a`` a Tensor: a number ``a`` becomes a 0-d tensor of torch's
    dtype for ``a op b`` (an int out of an integer dtype's range wraps, as torch's cast, or keeps
    its value in float for an op computed in float: ``floating``)."""
    if not isinstance(a, Tensor):
        if isinstance(b, Tensor) and is_scalar(a):
            return scalar_like(a, b, floating), b
        from .creation import as_tensor
        a = as_tensor(a)
    if not isinstance(b, Tensor) and not is_scalar(b):
        if op in _OVERLOADS:
            _no_overload(op, (a, b), _OVERLOADS[op].replace("%s", _tp_name(b)))
        raise TypeError("%s(): argument 'other' (position 2) must be Tensor, not %s"
                        % (op, _tp_name(b)))
    return a, b


def add(input, other, *args, alpha=1, out=None):
    """``input + alpha * other`` with broadcasting. Matches ``torch.add`` (and its deprecated
    form ``add(input, alpha, other)``)."""
    if alpha.__class__ is int and alpha == 1 and isinstance(input, Tensor) and \
            isinstance(other, _OPERAND) and not args:
        return Add.apply(input, other)     # the common case, without argument juggling
    if args:
        other, alpha = _deprecated_alpha("add", other, args, alpha)
    if not isinstance(input, Tensor) and isinstance(other, Tensor) and \
            alpha.__class__ is int and alpha == 1 and not isinstance(input, complex) and \
            not other.is_complex():
        input, other = other, input     # (not for complex: torch's ``input + (1+0j) * other``)
    input, other = _tensor_first("add", input, other)
    if alpha.__class__ is not int or alpha != 1:
        if _check_alpha(input, other, alpha):
            return Add.apply(input, other if alpha else (
                mul(other, False) if isinstance(other, Tensor) else False))
        if isinstance(other, Tensor) or input.is_complex() or isinstance(other, complex) or \
                _reduced_float(input._array) or input._array.dtype == np.float32:
            return AddAlpha.apply(input, other, alpha)     # (float32: torch's fma)
        other = other * alpha
    return Add.apply(input, other)


_DEPRECATED = ("This overload of %s is deprecated:\n\t%s(Number alpha, Tensor other)\nConsider "
               "using one of the following signatures instead:\n\t%s(Tensor other, *, Number "
               "alpha = 1)")


def _deprecated_alpha(op, alpha, args, kw_alpha):
    """``(other, alpha)`` of torch's deprecated ``op(input, alpha, other)`` call."""
    if len(args) > 1 or kw_alpha != 1 or isinstance(kw_alpha, bool):
        raise TypeError("%s() takes 2 positional arguments but %d were given"
                        % (op, 2 + len(args)))
    deprecated_overload(_DEPRECATED % (op, op, op))
    return args[0], alpha


def _positional_alpha(op, other, args, kw_alpha):
    """``alpha`` given after a number ``other``, as torch's ``op(input, other, alpha)``."""
    if len(args) > 1 or kw_alpha != 1 or isinstance(kw_alpha, bool) or \
            not is_scalar(other) or not is_scalar(args[0]):
        raise TypeError("%s() received an invalid combination of arguments - got (%s), but "
                        "expected one of:\n * (Tensor input, Tensor other, *, Number alpha = 1)"
                        "\n * (Tensor input, Number other, Number alpha = 1)\n"
                        % (op, ", ".join(["Tensor"] + [type(a).__name__
                                                      for a in (other,) + tuple(args)])))
    return args[0]


def _check_alpha(input, other, alpha):
    """torch's checks of ``alpha`` against the result dtype; True for a bool result."""
    rd = _dt.result_type(input, other)
    if isinstance(alpha, (bool, np.bool_)) and rd._rank != 0:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if rd._rank <= 1 and not isinstance(alpha, (int, np.integer, np.bool_)):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    if rd._rank != 3 and isinstance(alpha, (complex, np.complexfloating)):
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex "
                           "number.")
    return rd._rank == 0


def sub(input, other, *args, alpha=1, out=None):
    """``input - alpha * other`` with broadcasting. Matches ``torch.sub`` (and its deprecated
    form ``sub(input, alpha, other)``)."""
    if alpha.__class__ is int and alpha == 1 and isinstance(input, Tensor) and \
            isinstance(other, _OPERAND) and not args:
        return Sub.apply(input, other)
    if args:
        other, alpha = _deprecated_alpha("sub", other, args, alpha)
    return _sub(input, other, alpha)


def _sub(input, other, alpha):
    if isinstance(input, (bool, np.bool_)) and isinstance(other, Tensor):
        _no_bool_sub(other, input)     # (torch wraps a bool ``input`` as a bool tensor)
    input, other = _tensor_first("sub", input, other)
    if alpha.__class__ is not int or alpha != 1:
        _no_bool_sub(input, other)
        _check_alpha(input, other, alpha)
    if alpha != 1:
        if isinstance(other, Tensor) or input.is_complex() or isinstance(other, complex) or \
                _reduced_float(input._array) or input._array.dtype == np.float32:
            return SubAlpha.apply(input, other, alpha)     # (float32: torch's fma)
        other = other * alpha
    return Sub.apply(input, other)


def subtract(input, other, *args, alpha=1, out=None):
    """``input - alpha * other``; ``alpha`` may follow a number ``other`` positionally. Matches
    ``torch.subtract``."""
    if args:
        alpha = _positional_alpha("subtract", other, args, alpha)
    return _sub(input, other, alpha)


def rsub(input, other, *args, alpha=1):
    """``other - alpha * input``. Matches ``torch.rsub``."""
    if args:
        alpha = _positional_alpha("rsub", other, args, alpha)
    if not isinstance(input, Tensor) and isinstance(other, Tensor):
        _no_overload("rsub", (input, other), " * (Tensor input, Tensor other, *, Number alpha = "
                     "1)\n * (Tensor input, Number other, Number alpha = 1)\n")
    if not isinstance(other, Tensor) and not is_scalar(other):
        if not isinstance(other, np.ndarray):     # host: (an array: torch's operators take it)
            raise TypeError("rsub(): argument 'other' (position 2) must be Tensor, not %s"
                            % type(other).__name__)
        from .creation import as_tensor
        other = as_tensor(other)
    if (alpha.__class__ is not int or alpha != 1) and isinstance(input, Tensor):
        _no_bool_sub(input, other)
        _check_alpha(input, other, alpha)
    return Rsub.apply(input, other, alpha)


def mul(input, other, *, out=None):
    """Element-wise product with broadcasting. Matches ``torch.mul``."""
    if isinstance(input, Tensor) and isinstance(other, _OPERAND):
        return Mul.apply(input, other)
    if not isinstance(input, Tensor) and isinstance(other, Tensor):
        input, other = other, input
    input, other = _tensor_first("mul", input, other)
    return Mul.apply(input, other)


multiply = mul


def div(input, other, *, rounding_mode=None, out=None):
    """``input / other``; ``rounding_mode`` 'trunc' or 'floor' rounds the quotient."""
    if rounding_mode is None and isinstance(input, Tensor) and isinstance(other, _OPERAND):
        return Div.apply(input, other)
    input, other = _tensor_first("div", input, other, rounding_mode is None)
    if rounding_mode is None:
        return Div.apply(input, other)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                         "found '%s'" % rounding_mode)
    return DivRounding.apply(input, other, rounding_mode)


divide = div


def true_divide(dividend, divisor, *, out=None):
    """``dividend / divisor`` (always true division). Matches ``torch.true_divide``."""
    return div(dividend, divisor)


def floor_divide(input, other, *, out=None):
    """``floor(input / other)`` (not differentiable). Matches ``torch.floor_divide``."""
    input, other = _tensor_first("floor_divide", input, other)
    return FloorDivide.apply(input, other)


def remainder(input, other, *, out=None):
    """Python-style modulus (sign of the divisor). Matches ``torch.remainder``."""
    if not isinstance(input, Tensor) and isinstance(other, Tensor) and is_scalar(input):
        return RemainderOfNumber.apply(scalar_like(input, other, False), other, "remainder")
    input, other = _tensor_first("remainder", input, other)
    return Mod.apply(input, other, "remainder")


def fmod(input, other, *, out=None):
    """C-style modulus (sign of the dividend). Matches ``torch.fmod``."""
    if not isinstance(input, Tensor) and isinstance(other, Tensor):
        _no_overload("fmod", (input, other), _OVERLOADS["fmod"])
    input, other = _tensor_first("fmod", input, other)
    return Mod.apply(input, other, "fmod")


def pow(input, exponent, *, out=None):
    """``input ** exponent`` (tensor or number on either side). Matches ``torch.pow``."""
    if not isinstance(input, Tensor):
        if isinstance(exponent, Tensor) and is_scalar(input):
            if input.__class__ is int and not -(1 << 63) <= input < 1 << 63:
                big_int_check(input, exponent._array.dtype)
            return RPow.apply(exponent, input)
        from .creation import as_tensor
        input = as_tensor(input)
    if isinstance(exponent, Tensor):
        if exponent._array.ndim == 0 and not exponent._requires_grad and \
                input._array.dtype.kind in "fV" and exponent._array.dtype.kind not in "fV":
            return PowScalarTensor.apply(input, exponent.item(), exponent)
        return Pow.apply(input, exponent)
    if not is_scalar(exponent):
        if isinstance(exponent, np.ndarray):
            _no_overload("pow", (input, exponent), _OVERLOADS["pow"])
        from .creation import as_tensor
        return Pow.apply(input, as_tensor(exponent))
    if isinstance(exponent, np.generic):
        exponent = exponent.item()     # (a NumPy number acts as the Python number, as in torch)
    if exponent.__class__ is int:
        _int_scalar_for(exponent, np.dtype(np.float64), True)     # (int64/uint64 range)
        k = input._array.dtype.kind
        if exponent >= 1 << 63 and k in "biu":
            _dt.check_scalar(exponent, _dt.int64)
        elif (k in "biu" and exponent >= 0) or input._array.dtype == np.float16:
            # torch's check of the exponent against the base's dtype (int64 for bool)
            _dt.check_scalar(exponent, _dt.int64 if k == "b" else input.dtype)
    return PowScalar.apply(input, exponent)


def float_power(input, exponent):
    """``pow`` computed in float64."""
    from .conversion import to
    cplx = any(x._array.dtype.kind == "c" if isinstance(x, Tensor) else isinstance(x, complex)
               for x in (input, exponent))
    dt = _dt.complex128 if cplx else _dt.float64    # (complex128 when either is complex)
    input = to(input, dt) if isinstance(input, Tensor) else input
    exponent = to(exponent, dt) if isinstance(exponent, Tensor) else exponent
    return pow(input, exponent)


def neg(input, *, out=None):
    """``-input``."""
    return Neg.apply(input)


negative = neg


def reciprocal(input, *, out=None):
    """``1 / input`` (integers give floats)."""
    return Reciprocal.apply(input)


def square(input, *, out=None):
    """``input * input``."""
    return PowScalar.apply(input, 2)


_CPP = {"float32": "float", "float64": "double", "float16": "c10::Half",
        "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int", "int16": "short int",
        "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
        "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _cpp(t):
    """A tensor's dtype as torch's C++ messages print it (``double``, ``long int``)."""
    return _CPP.get(str(t.dtype).replace("torch.", ""), str(t.dtype))


def _lerp_dtype(a, end, weight):
    """torch's checks of lerp's dtypes: ``end`` (and a weight tensor of one or more dims) of
    ``input``'s dtype, the computation in a float or complex dtype."""
    if end.dtype != a.dtype:
        raise RuntimeError("expected dtype %s for `end` but got dtype %s" % (_cpp(a), _cpp(end)))
    if isinstance(weight, Tensor):
        if weight.dim() != 0 and weight.dtype != a.dtype:
            raise RuntimeError("expected dtype %s for `weight` but got dtype %s"
                               % (_cpp(a), _cpp(weight)))
        # (a 0-dim weight joins the type promotion)
        dt = _dt.result_type(a, weight).np if weight.dim() == 0 else a._array.dtype
        if dt.kind in "iub":
            raise NotImplementedError("\"lerp_kernel_tensor\" not implemented for '%s'"
                                      % _dt.scalar_type_name(dt))
        return dt
    not_implemented_for(a._array, "lerp_kernel_scalar", "iub")
    if isinstance(weight, complex) and a._array.dtype.kind != "c":
        raise RuntimeError("value cannot be converted to type %s without overflow" % _cpp(a))
    return a._array.dtype


class Lerp(Function):
    node_name = "LerpBackward0"

    @staticmethod
    def forward(ctx, a, end, weight):
        dt = _lerp_dtype(a, end, weight)
        xp = xp_of(a)
        aa, ee = a._array.astype(dt, copy=False), end._array.astype(dt, copy=False)
        check_shapes_broadcast("lerp", aa.shape, ee.shape)
        diff = ee - aa
        # NOTE: torch's two-sided formula, exact at both ends (weight 0 and 1).
        if isinstance(weight, Tensor):
            w = weight._array.astype(dt, copy=False)
            check_shapes_broadcast("lerp", np.broadcast_shapes(aa.shape, ee.shape), w.shape)
            ctx.save_for_backward(a, end, weight)
            ctx.set_node_name("LerpBackward1")    # torch's name for a tensor weight
            if dt == np.float32:    # (torch's kernel: fused multiply-adds)
                out = xp.where(xp.abs(w) < 0.5, _fma32(w, diff, aa), _fma32(-diff, 1 - w, ee))
            else:
                out = xp.where(xp.abs(w) < 0.5, aa + w * diff, ee - diff * (1 - w))
        else:
            ctx.weight = w = weight
            if dt == np.float32 and not isinstance(w, complex):
                w32 = np.float32(w)
                out = _fma32(w32, diff, aa) if abs(w) < 0.5 else _fma32(-diff, 1 - w32, ee)
            else:
                out = aa + w * diff if abs(w) < 0.5 else ee - diff * (1 - w)
        return Tensor._wrap(xp.asarray(out, dtype=dt))

    @staticmethod
    def backward(ctx, grad_output):
        need = ctx.needs_input_grad
        if hasattr(ctx, "weight"):
            w = ctx.weight
            ga = sum_to(grad_output * _conj_number(1 - w), _grad_shape(ctx, 0)) if need[0] \
                else None
            ge = sum_to(grad_output * _conj_number(w), _grad_shape(ctx, 1)) if need[1] else None
            return ga, ge, None
        a, end, w = ctx.saved_tensors
        ga = sum_to(grad_output * _cj(1 - w), _grad_shape(ctx, 0)) if need[0] else None
        ge = sum_to(grad_output * _cj(w), _grad_shape(ctx, 1)) if need[1] else None
        gw = sum_to(grad_output * _cj(end - a), _grad_shape(ctx, 2)) if need[2] else None
        check_real_grad(gw, ctx, 2)     # (torch's formula has no complex-to-real step)
        return ga, ge, gw


def _conj_number(w):
    return w.conjugate() if isinstance(w, complex) else w


def lerp(input, end, weight, *, out=None):
    """``input + weight * (end - input)`` (``weight`` a number or a tensor)."""
    return Lerp.apply(input, end, weight)


_ADDCDIV_INT = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will "
    "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
    "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer "
    "inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
    "behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all "
    "dtypes.")


class Addcmul(Function):
    """``input + value * tensor1 * tensor2`` in one kernel (``Addcdiv``: ``/ tensor2``)."""

    node_name = "AddcmulBackward0"
    op = "addcmul"

    @staticmethod
    def forward(ctx, a, t1, t2, value):
        cls = ctx._forward_cls
        d = _dt.result_type(a, t1, t2).np
        arrs = []
        for t in (a, t1, t2):
            arr = t._array
            arrs.append(arr if arr.dtype == d else arr.astype(d))
        aa, xa, ya = arrs
        if cls is Addcdiv and t1._array.dtype.kind in "iub" and t2._array.dtype.kind in "iub":
            raise RuntimeError(_ADDCDIV_INT)
        not_implemented_for(aa, cls.op + "_cpu_out", "b")
        shape = check_shapes_broadcast(cls.op, aa.shape, xa.shape)
        check_shapes_broadcast(cls.op, shape, ya.shape)
        _dt.check_scalar(value, _dt.from_numpy_dtype(d))
        ctx.value = value
        ctx.save_for_backward(t1 if ctx.needs_input_grad[2] else None,
                              t2 if ctx.needs_input_grad[1] or cls is Addcdiv else None)
        xp = xp_of(a)
        # NOTE: torch's kernel: self + (value * tensor1) op tensor2, half types in float32
        if d.kind in "iu":
            v = int(value.real if isinstance(value, complex) else value)
        elif d.kind == "V" or (d.kind == "f" and d.itemsize == 2):
            aa, xa, ya = [x.astype(np.float32) for x in (aa, xa, ya)]
            v = np.float32(value)
        else:
            v = value if d.kind == "c" else float(value.real if isinstance(value, complex)
                                                   else value)
        with _quiet():
            if cls is Addcmul and d == np.float32:     # (torch's fma: value * t1 rounded)
                out = _fma32(xa * np.float32(v), ya, aa)
            else:
                prod = (xa * v) * ya if cls is Addcmul else (xa * v) / ya
                out = aa + prod
        return Tensor._wrap(xp.asarray(out).astype(d, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        t1, t2 = ctx.saved_tensors
        v = ctx.value
        need = ctx.needs_input_grad
        g = grad_output
        ga = _real_if(ctx, 0, sum_to(g, _grad_shape(ctx, 0))) if need[0] else None
        g1 = _real_if(ctx, 1, sum_to(g * _cj(t2 * v), _grad_shape(ctx, 1))) if need[1] else None
        g2 = _real_if(ctx, 2, sum_to(g * _cj(t1 * v), _grad_shape(ctx, 2))) if need[2] else None
        return ga, g1, g2, None


class Addcdiv(Addcmul):
    node_name = "AddcdivBackward0"
    op = "addcdiv"

    @staticmethod
    def backward(ctx, grad_output):
        t1, t2 = ctx.saved_tensors
        v = ctx.value
        need = ctx.needs_input_grad
        g = grad_output
        if need[1] and t2._array.dtype.kind in "iub":
            # NOTE: torch's formula takes ``value / tensor2`` in tensor2's own (integral) dtype
            raise RuntimeError("result type %s can't be cast to the desired output type %s"
                               % (_dt.scalar_type_name(_dt.get_default_dtype()),
                                  _dt.scalar_type_name(t2._array.dtype)))
        ga = _real_if(ctx, 0, sum_to(g, _grad_shape(ctx, 0))) if need[0] else None
        g1 = _real_if(ctx, 1, sum_to(g * _cj(v / t2), _grad_shape(ctx, 1))) if need[1] else None
        g2 = None
        if need[2]:
            g2 = _real_if(ctx, 2, sum_to(-g * _cj(v * t1 / (t2 * t2)), _grad_shape(ctx, 2)))
        return ga, g1, g2, None


def _deprecated_value(op, tensor1, tensor2, args, value):
    """``(tensor1, tensor2, value)`` of torch's deprecated ``op(input, value, t1, t2)``."""
    if not args:
        return tensor1, tensor2, value
    if len(args) > 1 or value != 1 or not is_scalar(tensor1):
        n = 2 if op.endswith("_") else 3       # (an in-place one is a method: no input)
        raise TypeError("%s() takes %d positional arguments but %d were given"
                        % (op, n, n + len(args)))
    deprecated_overload("This overload of %s is deprecated:\n\t%s(Number value, Tensor "
                        "tensor1, Tensor tensor2)\nConsider using one of the following signatures "
                        "instead:\n\t%s(Tensor tensor1, Tensor tensor2, *, Number value = 1)"
                        % (op, op, op))
    return tensor2, args[0], tensor1


def addcmul(input, tensor1, tensor2, *args, value=1, out=None):
    """``input + value * tensor1 * tensor2``. Matches ``torch.addcmul``."""
    tensor1, tensor2, value = _deprecated_value("addcmul", tensor1, tensor2, args, value)
    return Addcmul.apply(input, tensor1, tensor2, value)


def addcdiv(input, tensor1, tensor2, *args, value=1, out=None):
    """``input + value * tensor1 / tensor2``. Matches ``torch.addcdiv``."""
    tensor1, tensor2, value = _deprecated_value("addcdiv", tensor1, tensor2, args, value)
    return Addcdiv.apply(input, tensor1, tensor2, value)


def _cast_before_alpha(input, other, alpha):
    """torch's in-place result-dtype check, then its checks of ``alpha``."""
    if (alpha.__class__ is not int or alpha != 1) and isinstance(input, Tensor) and \
            isinstance(other, _OPERAND):
        res = _dt.result_type(input, other)
        if res._rank > input.dtype._rank:
            raise RuntimeError("result type %s can't be cast to the desired output type %s"
                               % (_dt.scalar_type_name(res.np),
                                  _dt.scalar_type_name(input._array.dtype)))
        _check_alpha(input, other, alpha)


def add_(input, other, *args, alpha=1):
    if isinstance(other, np.ndarray):
        _not_tensor("add_", other)
    if args:
        other, alpha = _deprecated_alpha("add_", other, args, alpha)
    _cast_before_alpha(input, other, alpha)
    return inplace(input, add, other, alpha=alpha)


def sub_(input, other, *args, alpha=1):
    if isinstance(other, np.ndarray):
        _not_tensor("sub_", other)
    if args:
        other, alpha = _deprecated_alpha("sub_", other, args, alpha)
    if isinstance(input, Tensor):
        _no_bool_sub(input, other)
    _cast_before_alpha(input, other, alpha)
    return inplace(input, sub, other, alpha=alpha)


def subtract_(input, other, *args, alpha=1):
    if args:
        alpha = _positional_alpha("subtract_", other, args, alpha)
    if isinstance(input, Tensor):
        _no_bool_sub(input, other)
    _cast_before_alpha(input, other, alpha)
    return inplace(input, sub, other, alpha=alpha)


def mul_(input, other):
    if isinstance(other, np.ndarray):
        _not_tensor("mul_", other)
    return inplace(input, mul, other)


multiply_ = mul_


def div_(input, other, *, rounding_mode=None):
    if isinstance(other, np.ndarray):
        _not_tensor("div_", other)
    return inplace(input, div, other, rounding_mode=rounding_mode)


divide_ = div_


def true_divide_(input, other):
    return inplace(input, div, other)


def pow_(input, exponent):
    if isinstance(exponent, np.ndarray):
        _no_overload("pow_", (exponent,), _METHOD_OVERLOADS % ("exponent", "exponent"))
    castable_into(input, exponent, numbers=False)
    return inplace(input, pow, exponent)


def neg_(input):
    return inplace(input, neg)


def reciprocal_(input):
    return inplace(input, reciprocal)


def square_(input):
    return inplace(input, square)


def floor_divide_(input, other):
    if isinstance(other, np.ndarray):
        _no_overload("floor_divide_", (other,), _METHOD_OVERLOADS % ("other", "other"))
    castable_into(input, other, numbers=False)
    return inplace(input, floor_divide, other)


def remainder_(input, other):
    if isinstance(other, np.ndarray):
        _no_overload("remainder_", (other,), _METHOD_OVERLOADS % ("other", "other"))
    castable_into(input, other, numbers=False)
    return inplace(input, remainder, other)


def fmod_(input, other):
    castable_into(input, other, numbers=False)
    return inplace(input, fmod, other)


def lerp_(input, end, weight):
    # torch's order: dtype equality of end/weight, then shapes, then the kernel's dtype
    same = isinstance(end, Tensor) and end.dtype == input.dtype and not (
        isinstance(weight, Tensor) and weight.dim() != 0 and weight.dtype != input.dtype)
    if same:
        castable_into(input, end, weight, numbers=False)
    return inplace(input, lerp, end, weight)


def addcmul_(input, tensor1, tensor2, *args, value=1):
    tensor1, tensor2, value = _deprecated_value("addcmul_", tensor1, tensor2, args, value)
    return inplace(input, addcmul, tensor1, tensor2, value=value)


def addcdiv_(input, tensor1, tensor2, *args, value=1):
    tensor1, tensor2, value = _deprecated_value("addcdiv_", tensor1, tensor2, args, value)
    return inplace(input, addcdiv, tensor1, tensor2, value=value)


def _cj(t):
    """``t.conj()`` for a complex tensor, ``t`` itself for a real one (complex backward)."""
    return t.conj() if t._array.dtype.kind == "c" else t


def _real_if(ctx, i, g):
    """The real part of the complex gradient ``g`` when input ``i`` is real (as torch)."""
    if g is not None and g._array.dtype.kind == "c" and ctx._input_meta(i)[1].kind != "c":
        return g.real
    return g


def _int_zero_check(aa, bb):
    """torch's error for an integer division by zero; an empty result divides nothing."""
    shape = np.broadcast_shapes(aa.shape, bb.shape) if is_array(bb) else aa.shape
    if 0 in shape:
        return
    if bool((bb == 0).any()) if is_array(bb) else bb == 0:
        raise RuntimeError("ZeroDivisionError")


class DivRounding(Function):
    """``div`` with ``rounding_mode`` 'trunc' or 'floor': piecewise constant, gradient zero."""

    node_name = "DivBackward2"

    @staticmethod
    def forward(ctx, a, b, mode):
        ctx.mark_edges(0, 1)     # (a number divisor is a None edge of torch's node)
        aa, bb = binary_arrays("div", a, b)
        xp = xp_of(a)
        if aa.dtype.kind in "iubc":
            not_implemented_for(aa, "div_%s_cpu" % mode, "bc")
            _int_zero_check(aa, bb)
            if not is_array(bb):
                bb = xp.asarray(bb, dtype=aa.dtype)
            with _quiet():     # (a - fmod(a, b) is exact: no abs() to overflow at INT64_MIN)
                q = xp.floor_divide(aa, bb) if mode == "floor" else \
                    (aa - xp.fmod(aa, bb)) // bb
            return Tensor._wrap(xp.asarray(q, dtype=aa.dtype))
        with _quiet():
            q = xp.floor_divide(aa, bb) if mode == "floor" else xp.trunc(aa / bb)
        return Tensor._wrap(xp.asarray(q, dtype=aa.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        # (zeros, not grad * 0: an inf/nan upstream gradient still gives 0, as torch)
        need = ctx.needs_input_grad
        xp = xp_of(grad_output)
        ga = gb = None
        if need[0]:
            ga = Tensor._wrap(xp.zeros(ctx._input_meta(0)[0], dtype=grad_output._array.dtype))
        if need[1]:
            gb = Tensor._wrap(xp.zeros(ctx._input_meta(1)[0], dtype=grad_output._array.dtype))
        return ga, gb, None


class FloorDivide(Function):
    node_name = "NotImplemented"

    @staticmethod
    def forward(ctx, a, b):
        return DivRounding.forward(ctx, a, b, "floor")

    @staticmethod
    def backward(ctx, grad_output):
        raise RuntimeError("the derivative for 'floor_divide' is not implemented.")


class Mod(Function):
    """``fmod`` (C-style: the sign of the dividend) or ``remainder`` (Python-style: the sign of
    the divisor) by a tensor or a number, as ``op`` says."""

    node_name = "FmodBackward1"

    @staticmethod
    def forward(ctx, a, b, op):
        ctx.op = op
        ctx.by_tensor = isinstance(b, Tensor)
        if ctx.by_tensor:
            ctx.save_for_backward(a, b)
            if op == "remainder":
                ctx.set_node_name("RemainderBackward1")
        else:    # torch's names for a number divisor
            ctx.set_node_name("FmodBackward0" if op == "fmod" else "RemainderBackward0")
        return _mod(op, a, b)

    @staticmethod
    def backward(ctx, grad_output):
        if not ctx.by_tensor:    # a number divisor: the gradient passes through unchanged
            return grad_output, None, None
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        ga = sum_to(grad_output, ctx._input_meta(0)[0]) if need[0] else None
        gb = None
        if need[1]:
            q = div(a, b, rounding_mode="trunc" if ctx.op == "fmod" else "floor")
            gb = sum_to(-grad_output * q, ctx._input_meta(1)[0])
        return ga, gb, None


def _mod(op, a, b):
    aa, bb = binary_arrays(op, a, b)
    if aa.dtype.kind in "iubc":
        not_implemented_for(aa, op + "_cpu", "bc")
        _int_zero_check(aa, bb)
    xp = xp_of(a)
    with _quiet():
        if op == "fmod" or aa.dtype.kind in "iub":
            q = xp.fmod(aa, bb) if op == "fmod" else xp.remainder(aa, bb)
        else:       # torch's float remainder: fmod, plus the divisor where the signs differ
            q = xp.fmod(aa, bb)
            q = xp.where((q != 0) & ((bb < 0) != (q < 0)), q + bb, q)
    return Tensor._wrap(xp.asarray(q, dtype=aa.dtype) if hasattr(q, "dtype") else xp.asarray(q))


class RemainderOfNumber(Function):
    """``remainder(number, tensor)`` (``a`` the number as a tensor): torch's node for it has
    the divisor as its one input and no derivative."""

    node_name = "NotImplemented"

    @staticmethod
    def forward(ctx, a, b, op):
        ctx.mark_edges(1)
        return _mod(op, a, b)

    @staticmethod
    def backward(ctx, grad_output):
        raise RuntimeError("derivative for aten::remainder is not implemented")


def _float_arrays(op, a, b):
    """Promoted arrays of two tensors, as the default float dtype when both are integral."""
    aa, bb = binary_arrays(op, a, b)
    if aa.dtype.kind not in "fcV":
        d = _dt.get_default_dtype().np
        aa, bb = aa.astype(d), bb.astype(d)
    return aa, bb


def _no_overload(op, args, overloads):
    """torch's TypeError for arguments matching none of ``op``'s ``overloads`` (its lines)."""
    got = ", ".join("Tensor" if isinstance(v, Tensor) else _tp_name(v) for v in args)
    raise TypeError("%s() received an invalid combination of arguments - got (%s), but expected "
                    "one of:\n%s" % (op, got, overloads))


def check_number_or_tensor(op, a, b):
    """torch's TypeError for ``op(a, b)`` (xlogy, special.xlog1py, ...) matching none of its
    (Tensor, Tensor), (Number, Tensor), (Tensor, Number) overloads."""
    if isinstance(a, Tensor) and (isinstance(b, Tensor) or is_scalar(b)) or \
            isinstance(b, Tensor) and is_scalar(a):
        return
    got = ", ".join("Tensor" if isinstance(v, Tensor) else type(v).__name__ for v in (a, b))
    raise TypeError(
        "%s() received an invalid combination of arguments - got (%s), but expected one of:\n"
        " * (Tensor input, Tensor other, *, Tensor out = None)\n * (Number self, Tensor other, "
        "*, Tensor out = None)\n * (Tensor input, Number other, *, Tensor out = None)\n"
        % (op, got))


def _as_tensors(op, a, b):
    check_number_or_tensor(op, a, b)
    if not isinstance(a, Tensor) and is_scalar(a):
        a = scalar_like(a, b, floating=True)    # (xlogy computes integers in float)
    a, b = _tensor_first(op, a, b)
    if not isinstance(b, Tensor):
        b = scalar_like(b, a, floating=True)
    return a, b


class _MinMax(Function):
    """maximum, minimum, fmax, fmin: an element-wise pick whose ties share the gradient."""

    node_name = "MaximumBackward0"
    kernel = "maximum"  # the array module's function
    sign = 1            # 1: the larger operand wins, -1: the smaller
    nan_aware = False   # fmax/fmin ignore a nan operand

    @staticmethod
    def forward(ctx, a, b):
        cls = ctx._forward_cls
        aa, bb = binary_arrays(cls.__name__.lower(), a, b)
        if aa.dtype.kind == "c":
            raise RuntimeError("%s not implemented for complex tensors." % cls.__name__.lower())
        ctx.save_for_backward(b, a)     # (torch's order: other, then self)
        xp = xp_of(a)
        if cls.nan_aware:
            # NOTE: torch's fmax/fmin keep ``a`` at ties (-0.0 vs 0.0) and where ``b`` is nan
            keep_a = ((aa >= bb) if cls.sign == 1 else (aa <= bb)) | xp.isnan(bb)
            return Tensor._wrap(xp.asarray(xp.where(keep_a, aa, bb)))
        # NOTE: the array module's maximum/minimum give the second operand at ties (-0.0 vs
        # 0.0); torch's element-wise kernel gives the first.
        return Tensor._wrap(_laid(xp.asarray(getattr(xp, cls.kernel)(bb, aa)), a, b))

    @staticmethod
    def backward(ctx, grad_output):
        cls = ctx._forward_cls
        if cls.nan_aware:
            return _fminmax_grads(ctx, grad_output, cls.sign)
        return _minmax_grads(ctx, grad_output, cls.sign)


class Maximum(_MinMax):
    node_name = "MaximumBackward0"


class Minimum(_MinMax):
    node_name = "MinimumBackward0"
    kernel = "minimum"
    sign = -1


class Fmax(_MinMax):
    node_name = "FmaxBackward0"
    kernel = "fmax"
    nan_aware = True


class Fmin(_MinMax):
    node_name = "FminBackward0"
    kernel = "fmin"
    sign = -1
    nan_aware = True


def _minmax_grads(ctx, grad_output, sign):
    """Gradients of maximum (``sign`` 1) or minimum (-1): split in half at ties, as torch."""
    from .comparison import where
    b, a = ctx.saved_tensors
    need = ctx.needs_input_grad
    half = where(a == b, grad_output / 2, grad_output)
    a_loses = (a < b) if sign == 1 else (a > b)
    b_loses = (a > b) if sign == 1 else (a < b)
    ga = sum_to(where(a_loses, 0.0, half), ctx._input_meta(0)[0]) if need[0] else None
    gb = sum_to(where(b_loses, 0.0, half), ctx._input_meta(1)[0]) if need[1] else None
    return ga, gb


def _fminmax_grads(ctx, grad_output, sign):
    """Gradients of fmax (``sign`` 1) or fmin (-1): all to the operand kept (``a`` at ties)."""
    from .comparison import where, isnan
    b, a = ctx.saved_tensors
    need = ctx.needs_input_grad
    keep_a = ((a >= b) if sign == 1 else (a <= b)) | isnan(b)
    ga = sum_to(where(keep_a, grad_output, 0.0), ctx._input_meta(0)[0]) if need[0] else None
    gb = sum_to(where(keep_a, 0.0, grad_output), ctx._input_meta(1)[0]) if need[1] else None
    return ga, gb


def maximum(input, other, *, out=None):
    """Element-wise maximum (nan propagates; ties split the gradient). Matches ``torch.maximum``."""
    return Maximum.apply(*need_tensors("maximum", input, other))


def minimum(input, other, *, out=None):
    """Element-wise minimum (nan propagates; ties split the gradient). Matches ``torch.minimum``."""
    return Minimum.apply(*need_tensors("minimum", input, other))


def fmax(input, other, *, out=None):
    """Element-wise maximum that ignores nan. Matches ``torch.fmax``."""
    return Fmax.apply(*need_tensors("fmax", input, other))


def fmin(input, other, *, out=None):
    """Element-wise minimum that ignores nan. Matches ``torch.fmin``."""
    return Fmin.apply(*need_tensors("fmin", input, other))


class Atan2(Function):
    node_name = "Atan2Backward0"

    @staticmethod
    def forward(ctx, a, b):
        aa, bb = _float_arrays("atan2", a, b)
        not_implemented_for(aa, "atan2_cpu", "c")
        ctx.save_for_backward(a, b)
        xp = xp_of(a)
        return Tensor._wrap(xp.asarray(xp.arctan2(aa, bb)))

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        denom = a * a + b * b
        # torch's rule: a zero ``a**2 + b**2`` (the origin, or underflow) gives a zero slope.
        recip = denom.reciprocal().masked_fill(denom == 0, 0)
        ga = sum_to(grad_output * b * recip, ctx._input_meta(0)[0]) if need[0] else None
        # NOTE: torch negates ``input`` itself, which raises for a bool tensor.
        gb = sum_to(grad_output * -a * recip, ctx._input_meta(1)[0]) if need[1] else None
        return ga, gb


class Logaddexp(Function):
    """``log(exp(a) + exp(b))``; Logaddexp2 is the same in base 2."""

    node_name = "LogaddexpBackward0"
    op = "logaddexp"
    kernel = "logaddexp"

    kinds = "iub"    # dtype kinds without a kernel

    @staticmethod
    def forward(ctx, a, b):
        cls = ctx._forward_cls
        aa, bb = binary_arrays(cls.op, a, b)
        not_implemented_for(aa, cls.op + "_cpu", cls.kinds)
        ctx.save_for_backward(a, b)
        xp = xp_of(a)
        with _quiet():
            if aa.dtype.kind == "c":
                return Tensor._wrap(_logaddexp_complex(xp, aa, bb))
            return Tensor._wrap(xp.asarray(getattr(xp, cls.kernel)(aa, bb)))

    @staticmethod
    def backward(ctx, grad_output):
        from .unary import exp, exp2
        power = exp2 if ctx._forward_cls is Logaddexp2 else exp
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        if grad_output._array.dtype.kind == "c":
            # NOTE: torch's formula has no complex-to-real step: a real input that needs a
            # gradient fails the engine's dtype check.
            for i, t in enumerate((a, b)):
                if need[i] and t._array.dtype.kind != "c":
                    raise RuntimeError(R_TO_C_MSG)
        ga = sum_to(grad_output / _cj(power(b - a) + 1), ctx._input_meta(0)[0]) if need[0] \
            else None
        gb = sum_to(grad_output / _cj(power(a - b) + 1), ctx._input_meta(1)[0]) if need[1] \
            else None
        return ga, gb


def _log1p_complex(xp, z):
    """``log(1 + z)`` for complex ``z``, accurate near 0 (torch's c10 formula)."""
    x, y = z.real, z.imag
    theta = xp.arctan2(y, x + 1)
    r = x * (2 + x) + y * y
    small = xp.where(r == 0, x, 0.5 * xp.log1p(r))
    real = xp.where(xp.abs(z) < 0.5, small, xp.log(xp.hypot(x + 1, y)))
    return real + 1j * theta


def _logaddexp_complex(xp, x, y):
    """torch's complex logaddexp: ``max + log1p(exp(min - max))`` by real part, nan first."""
    x, y = xp.broadcast_arrays(x, y)
    xnan, ynan = xp.isnan(x), xp.isnan(y)
    x_low = ~ynan & (xnan | (x.real < y.real))
    lo, hi = xp.where(x_low, x, y), xp.where(x_low, y, x)
    out = _log1p_complex(xp, xp.exp(lo - hi)) + hi
    both_inf = ~xp.isfinite(lo.real) & (lo.real == hi.real)
    out = xp.where(both_inf & (lo.real < 0), lo, out)
    out = xp.where(both_inf & (lo.real > 0), xp.log(xp.exp(lo) + xp.exp(hi)), out)
    nan = xp.asarray(complex(np.nan, np.nan), dtype=out.dtype)
    return xp.where(xp.isnan(lo), nan, out).astype(x.dtype, copy=False)


class Logaddexp2(Logaddexp):
    node_name = "Logaddexp2Backward0"
    op = "logaddexp2"
    kernel = "logaddexp2"
    kinds = "iubc"


class Hypot(Function):
    node_name = "HypotBackward0"

    @staticmethod
    def forward(ctx, a, b):
        aa, bb = binary_arrays("hypot", a, b)
        not_implemented_for(aa, "hypot_cpu", "iubc")
        xp = xp_of(a)
        out = Tensor._wrap(xp.asarray(xp.hypot(aa, bb)))
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        a, b, out = ctx.saved_tensors
        need = ctx.needs_input_grad
        # (torch's order: grad * x / result, so a wider x widens the division too)
        ga = sum_to(grad_output * a / out, ctx._input_meta(0)[0]) if need[0] else None
        gb = sum_to(grad_output * b / out, ctx._input_meta(1)[0]) if need[1] else None
        return ga, gb


class Xlogy(Function):
    node_name = "XlogyBackward0"

    @staticmethod
    def forward(ctx, a, b, number=None):
        aa, bb = _float_arrays("xlogy", a, b)
        not_implemented_for(aa, "xlogy_cpu", "c")
        ctx.save_for_backward(a, b)
        ctx.number = number     # (a number ``other``, for the gradient's mask)
        xp = xp_of(a)
        with _quiet():
            out = aa * xp.log(bb)
        out = xp.where((aa == 0) & ~xp.isnan(bb), aa.dtype.type(0), out)
        return Tensor._wrap(xp.asarray(out, dtype=aa.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        from .comparison import where
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        ga = gb = None
        if need[0]:
            g = xlogy(grad_output, b)
            # (a number other: torch masks where a is 0 unless other > 0, a NaN other too)
            mask = (a == 0) & (b <= 0) if ctx.number is None else (
                None if ctx.number > 0 else a == 0)
            ga = sum_to(g if mask is None else where(mask, 0.0, g), ctx._input_meta(0)[0])
        if need[1]:
            gb = sum_to(grad_output * a / b, ctx._input_meta(1)[0])
        return ga, gb


class XlogyScalar(Xlogy):
    """``xlogy`` with a number ``input`` (``variant`` 1) or ``other`` (2) given as a tensor:
    torch's node for it has the other argument as its one input."""

    node_name = "XlogyBackward1"

    @staticmethod
    def forward(ctx, a, b, variant, number):
        if variant == 2:
            ctx.set_node_name("XlogyBackward2")
        ctx.mark_edges(1 if variant == 1 else 0)
        return Xlogy.forward(ctx, a, b, number if variant == 2 else None)

    @staticmethod
    def backward(ctx, grad_output):
        return Xlogy.backward(ctx, grad_output) + (None, None)


def atan2(input, other, *, out=None):
    """Element-wise ``atan(input / other)`` in the right quadrant. Matches ``torch.atan2``."""
    return Atan2.apply(*need_tensors("atan2", input, other))


arctan2 = atan2


def logaddexp(input, other, *, out=None):
    """``log(exp(input) + exp(other))`` without overflow. Matches ``torch.logaddexp``."""
    return Logaddexp.apply(*need_tensors("logaddexp", input, other))


def logaddexp2(input, other, *, out=None):
    """``log2(2**input + 2**other)`` without overflow. Matches ``torch.logaddexp2``."""
    return Logaddexp2.apply(*need_tensors("logaddexp2", input, other))


def hypot(input, other, *, out=None):
    """``sqrt(input**2 + other**2)`` element-wise. Matches ``torch.hypot``."""
    return Hypot.apply(*need_tensors("hypot", input, other))


def xlogy(input, other, *, out=None):
    """``input * log(other)``, 0 where ``input`` is 0 (unless ``other`` is nan)."""
    a, b = _as_tensors("xlogy", input, other)
    if a is input and b is other:
        return Xlogy.apply(a, b)
    return XlogyScalar.apply(a, b, 1 if b is other else 2, other)


def _check_inplace_binary(op, input, other, floating):
    """torch's checks of ``input.op_(other)`` before its kernel runs: the broadcast shape is
    ``input``'s, then the result dtype (a float one for ``floating`` ops) casts to it."""
    if not isinstance(other, Tensor):
        raise TypeError("%s_(): argument 'other' (position 1) must be Tensor, not %s"
                        % (op, type(other).__name__))
    ia, oa = input._array, other._array
    if ia.shape != oa.shape:
        check_shapes_broadcast(op, ia.shape, oa.shape)
        shape = np.broadcast_shapes(ia.shape, oa.shape)
        if shape != ia.shape:
            raise RuntimeError("output with shape %s doesn't match the broadcast shape %s"
                               % (list(ia.shape), list(shape)))
    res = _dt.result_type(input, other).np
    if floating and res.kind in "iub":
        res = _dt.get_default_dtype().np
    rank = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}
    if rank[res.kind] > rank[ia.dtype.kind]:
        raise RuntimeError("result type %s can't be cast to the desired output type %s"
                           % (_dt.scalar_type_name(res), _dt.scalar_type_name(ia.dtype)))


def atan2_(input, other):
    _check_inplace_binary("atan2", input, other, True)
    return inplace(input, atan2, other)


arctan2_ = atan2_


def hypot_(input, other):
    _check_inplace_binary("hypot", input, other, False)
    return inplace(input, hypot, other)


def xlogy_(input, other):
    if isinstance(other, Tensor):
        _check_inplace_binary("xlogy", input, other, True)
    elif isinstance(other, (complex, np.complexfloating)) and input._array.dtype.kind != "c":
        raise RuntimeError("result type %s can't be cast to the desired output type %s"
                           % (_dt.scalar_type_name(_dt.result_type(input, other).np),
                              _dt.scalar_type_name(input._array.dtype)))
    return inplace(input, xlogy, other)


def _operator(fn, fast=None):
    """Tensor's operator for ``fn``: ``fast`` (else ``fn``) for a Tensor or number operand, and
    NotImplemented for anything else, as torch's operators answer: a NumPy array then computes
    ``t + a`` on ``t.__array__()`` and wraps the result into a new Tensor (``t += a`` rebinds
    ``t``); a list, a tuple or None gives Python's TypeError (or its own operator's answer)."""
    fast = fast or fn

    def operator(input, other):
        if isinstance(other, _OPERAND):
            return fast(input, other)
        return NotImplemented
    operator.__name__ = operator.__qualname__ = fn.__name__
    operator.__doc__ = fn.__doc__
    return operator


OPERATORS = {
    "__add__": _operator(add, Add.apply), "__sub__": _operator(sub, Sub.apply),
    "__mul__": _operator(mul, Mul.apply), "__truediv__": _operator(div, Div.apply),
    "__floordiv__": _operator(floor_divide), "__mod__": _operator(remainder),
    "__pow__": _operator(pow), "__iadd__": _operator(add_), "__isub__": _operator(sub_),
    "__imul__": _operator(mul_), "__itruediv__": _operator(div_),
    "__ifloordiv__": _operator(floor_divide_), "__imod__": _operator(remainder_),
    "__ipow__": _operator(pow_)}
