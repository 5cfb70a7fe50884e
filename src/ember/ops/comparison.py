"""Comparisons, logical and bitwise ops, ``where``; results carry no gradient (except where)."""
import warnings

import numpy as np

from ..autograd.function import Function
from ..backend import quiet as _quiet
from ..dtypes import check_scalar, from_numpy_dtype, result_type, scalar_type_name
from ..tensor import Tensor
from ._inplace import castable_into as _castable_into, inplace
from ._util import (SCALAR_TYPES, binary_arrays, check_real_grad, check_shapes_broadcast,
                    need_tensors,
                    not_implemented_for, scalar_like, sum_to, xp_of)

__all__ = ["eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
           "not_equal", "logical_and", "logical_or", "logical_not", "logical_xor", "bitwise_and",
           "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_and_", "bitwise_or_",
           "bitwise_xor_", "bitwise_left_shift", "bitwise_right_shift", "isnan", "isinf",
           "isfinite", "isposinf", "isneginf", "isclose", "allclose", "equal", "where",
           "eq_", "ne_", "lt_", "le_", "gt_", "ge_", "logical_not_", "logical_and_",
           "logical_or_", "signbit", "isreal"]


_OPERANDS = (Tensor,) + SCALAR_TYPES


def _cmp(op, kernel, ordered=False, tensors_only=False):
    """The comparison ``op`` computed by the array module's function ``kernel`` (``ordered``:
    refused for complex; ``tensors_only``: both arguments must be tensors)."""
    def fn(input, other, *, out=None):
        if tensors_only:
            need_tensors(op, input, other)
        elif not isinstance(input, Tensor) or not isinstance(other, _OPERANDS):
            got = ", ".join("Tensor" if isinstance(v, Tensor) else type(v).__name__
                            for v in (input, other))
            raise TypeError("%s() received an invalid combination of arguments - got (%s), but "
                            "expected one of:\n * (Tensor input, Tensor other, *, Tensor out = "
                            "None)\n * (Tensor input, Number other, *, Tensor out = None)\n"
                            % (op, got))
        a, b = binary_arrays(op, input, other)
        if ordered and a.dtype.kind == "c":
            raise NotImplementedError("\"%s_cpu\" not implemented for '%s'"
                                      % (op, scalar_type_name(a.dtype)))
        return Tensor._wrap(getattr(xp_of(input), kernel)(a, b))
    fn.__name__ = op
    fn.__doc__ = "Element-wise ``%s`` giving a bool tensor (broadcasting). Matches ``torch.%s``." \
        % (op, op)
    return fn


eq = _cmp("eq", "equal")
ne = not_equal = _cmp("ne", "not_equal")
lt = less = _cmp("lt", "less", ordered=True)
le = less_equal = _cmp("le", "less_equal", ordered=True)
gt = greater = _cmp("gt", "greater", ordered=True)
ge = greater_equal = _cmp("ge", "greater_equal", ordered=True)
logical_and = _cmp("logical_and", "logical_and", tensors_only=True)
logical_or = _cmp("logical_or", "logical_or", tensors_only=True)
logical_xor = _cmp("logical_xor", "logical_xor", tensors_only=True)


def _bitwise(op, kernel, torch_kernel=None, refused="fcV"):
    """The bitwise ``op`` computed by the array module's function ``kernel`` (torch's CPU kernel
    ``torch_kernel`` has no version for the result dtype kinds ``refused``)."""
    name = "%s_cpu" % (torch_kernel or op)

    def fn(input, other, *, out=None):
        if not isinstance(input, Tensor) and isinstance(input, SCALAR_TYPES) and \
                isinstance(other, Tensor):
            input = scalar_like(input, other, False)    # (torch's (Number, Tensor) overload)
        a, b = binary_arrays(op, input, other)
        res = result_type(input, other).np
        if res.kind in refused:
            raise NotImplementedError("\"%s\" not implemented for '%s'"
                                      % (name, scalar_type_name(res)))
        xp = xp_of(input)
        return Tensor._wrap(xp.asarray(getattr(xp, kernel)(a, b)))
    fn.__name__ = op
    fn.__doc__ = "Element-wise ``%s`` of integer or bool tensors." % op
    return fn


bitwise_and = _bitwise("bitwise_and", "bitwise_and")
bitwise_or = _bitwise("bitwise_or", "bitwise_or")
bitwise_xor = _bitwise("bitwise_xor", "bitwise_xor")
bitwise_left_shift = _bitwise("bitwise_left_shift", "left_shift", "lshift", "bfcV")
bitwise_right_shift = _bitwise("bitwise_right_shift", "right_shift", "rshift", "bfcV")


def bitwise_not(input, *, out=None):
    """``~input`` for integer or bool tensors."""
    not_implemented_for(input._array, "bitwise_not_cpu", "fcV")
    return Tensor._wrap(xp_of(input).invert(input._array))


def logical_not(input, *, out=None):
    """Element-wise ``not`` giving a bool tensor."""
    return Tensor._wrap(xp_of(input).logical_not(input._array))


def isnan(input):
    """True where ``input`` is NaN."""
    return Tensor._wrap(xp_of(input).isnan(input._array))


def isinf(input):
    """True where ``input`` is +-inf."""
    return Tensor._wrap(xp_of(input).isinf(input._array))


def _no_complex(op, input):
    if input._array.dtype.kind == "c":
        raise RuntimeError("%s does not support complex inputs." % op)


def isposinf(input, *, out=None):
    """True where ``input`` is +inf."""
    _no_complex("isposinf", input)
    return Tensor._wrap(xp_of(input).isposinf(input._array))


def isneginf(input, *, out=None):
    """True where ``input`` is -inf."""
    _no_complex("isneginf", input)
    return Tensor._wrap(xp_of(input).isneginf(input._array))


def isfinite(input):
    """True where ``input`` is finite."""
    return Tensor._wrap(xp_of(input).isfinite(input._array))


def isreal(input):
    """True where ``input``'s imaginary part is zero (everywhere for a real tensor)."""
    arr = input._array
    xp = xp_of(input)
    if arr.dtype.kind == "c":
        return Tensor._wrap(xp.asarray(arr.imag == 0))
    return Tensor._wrap(xp.ones(arr.shape, dtype=bool))


def signbit(input, *, out=None):
    """True where ``input``'s sign bit is set (-0.0 included)."""
    arr = input._array
    if arr.dtype.kind == "c":
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    if arr.dtype.kind == "V":   # (bfloat16)
        arr = arr.astype(np.float32)
    return Tensor._wrap(xp_of(input).signbit(arr))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|input - other| <= atol + rtol * |other|`` element-wise."""
    need_tensors("isclose", input, other)
    if input._array.dtype != other._array.dtype:
        raise RuntimeError("%s did not match %s" % (scalar_type_name(input._array.dtype),
                                                    scalar_type_name(other._array.dtype)))
    if not rtol >= 0:
        raise RuntimeError("rtol must be greater than or equal to zero, but got %s" % rtol)
    if not atol >= 0:
        raise RuntimeError("atol must be greater than or equal to zero, but got %s" % atol)
    a, b = binary_arrays("isclose", input, other)
    return Tensor._wrap(xp_of(input).isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when every element is ``isclose``."""
    return bool(isclose(input, other, rtol, atol, equal_nan)._array.all())


def equal(input, other):
    """True when both tensors have the same shape and elements."""
    return input._array.shape == other._array.shape and \
        bool(xp_of(input).array_equal(input._array, other._array))


def _shape(x):
    return x._array.shape if isinstance(x, Tensor) else ()


class Where(Function):
    node_name = "WhereBackward0"
    edge_args = (1, 2)     # (torch gives the index/mask/condition no edge)

    @staticmethod
    def forward(ctx, cond, a, b):
        ctx.save_for_backward(cond)
        shape = check_shapes_broadcast("where", cond._array.shape, _shape(a))
        check_shapes_broadcast("where", shape, _shape(b))
        xp = xp_of(cond)
        if isinstance(a, Tensor) and isinstance(b, Tensor):
            aa, bb = binary_arrays("where", a, b)
        elif isinstance(a, Tensor):
            aa, bb = binary_arrays("where", a, b)
            check_scalar(b, from_numpy_dtype(aa.dtype), reduced=False)
            with _quiet():    # (1e6 is inf in float16, as torch)
                bb = xp.asarray(bb, dtype=aa.dtype)
        else:
            bb, aa = binary_arrays("where", b, a)
            check_scalar(a, from_numpy_dtype(bb.dtype), reduced=False)
            with _quiet():
                aa = xp.asarray(aa, dtype=bb.dtype)
        return Tensor._wrap(xp.where(cond._array, aa, bb))

    @staticmethod
    def backward(ctx, grad_output):
        cond, = ctx.saved_tensors
        need = ctx.needs_input_grad
        zero = Tensor._wrap(xp_of(grad_output).zeros_like(grad_output._array))  # (inf * 0: nan)
        ga = sum_to(where(cond, grad_output, zero), ctx._input_meta(1)[0]) if need[1] else None
        gb = sum_to(where(cond, zero, grad_output), ctx._input_meta(2)[0]) if need[2] else None
        check_real_grad(ga, ctx, 1)
        check_real_grad(gb, ctx, 2)
        return None, ga, gb


def where(condition, input=None, other=None, *, out=None):
    """Pick ``input`` where ``condition`` is true, else ``other`` (broadcasting).

    With only ``condition``, returns ``nonzero(condition, as_tuple=True)``.
    """
    if input is None and other is None:
        from .indexing import nonzero
        return nonzero(condition, as_tuple=True)
    if not isinstance(condition, Tensor):
        from .creation import as_tensor
        condition = as_tensor(condition)
    if condition._array.dtype == np.uint8:
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated and "
                      "will be removed in a future version of PyTorch. Use a boolean condition "
                      "instead.", UserWarning, stacklevel=2)
        condition = Tensor._wrap(condition._array.astype(bool))
    elif condition._array.dtype != np.bool_:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                           "with dtype %s" % scalar_type_name(condition._array.dtype))
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        from .creation import as_tensor
        input = as_tensor(input)
    return Where.apply(condition, input, other)


class _CmpInplace(Function):
    """``input.eq_(other)`` and its kin: the comparison written in ``input``'s dtype. Its
    gradient is zero for both arguments (torch's EqBackward0 for a number, EqBackward1 for a
    tensor)."""

    node_name = "EqBackward0"

    @staticmethod
    def forward(ctx, a, b, fn, name):
        ctx.set_node_name("%sBackward%d" % (name, isinstance(b, Tensor)))
        return Tensor._wrap(fn(a, b)._array.astype(a._array.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        need = ctx.needs_input_grad
        xp = xp_of(grad_output)
        grads = [Tensor._wrap(xp.zeros(*ctx._input_meta(i))) if need[i] else None
                 for i in (0, 1)]
        return grads[0], grads[1], None, None


def _inplace_cmp(fn, name):
    def cmp(input, other):
        return _CmpInplace.apply(input, other, fn, name)
    cmp.__name__ = fn.__name__

    def op_(input, other):
        return inplace(input, cmp, other)
    op_.__name__ = fn.__name__ + "_"
    return op_


eq_, ne_, lt_, le_, gt_, ge_ = (_inplace_cmp(f, n) for f, n in (
    (eq, "Eq"), (ne, "Ne"), (lt, "Lt"), (le, "Le"), (gt, "Gt"), (ge, "Ge")))


def logical_and_(input, other):
    from ._inplace import write
    write(input, logical_and(input, other)._array.astype(input._array.dtype), "logical_and_")
    return input


def logical_or_(input, other):
    from ._inplace import write
    write(input, logical_or(input, other)._array.astype(input._array.dtype), "logical_or_")
    return input


def logical_not_(input):
    from ._inplace import write
    write(input, xp_of(input).logical_not(input._array).astype(input._array.dtype),
          "logical_not_")
    return input


def bitwise_and_(input, other):
    _castable_into(input, other)
    return inplace(input, bitwise_and, other)


def bitwise_or_(input, other):
    _castable_into(input, other)
    return inplace(input, bitwise_or, other)


def bitwise_xor_(input, other):
    _castable_into(input, other)
    return inplace(input, bitwise_xor, other)
