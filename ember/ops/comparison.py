"""Comparisons, logical and bitwise ops, ``where``; results carry no gradient (except where)."""
import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from ._inplace import inplace
from ._util import binary_arrays, check_shapes_broadcast, sum_to

__all__ = ["eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
           "not_equal", "logical_and", "logical_or", "logical_not", "logical_xor", "bitwise_and",
           "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_and_", "bitwise_or_",
           "bitwise_xor_", "bitwise_left_shift", "bitwise_right_shift", "isnan", "isinf",
           "isfinite", "isposinf", "isneginf", "isclose", "allclose", "equal", "where",
           "eq_", "ne_", "lt_", "le_", "gt_", "ge_", "logical_not_", "logical_and_",
           "logical_or_", "signbit", "isreal"]


def _cmp(op, np_fn):
    def fn(input, other, *, out=None):
        if not isinstance(input, Tensor):
            from .creation import as_tensor
            input = as_tensor(input)
        if not isinstance(other, Tensor) and not isinstance(other, (int, float, bool,
                                                                    np.number, np.bool_)):
            from .creation import as_tensor
            other = as_tensor(other)
        a, b = binary_arrays(op, input, other)
        return Tensor._wrap(np_fn(a, b))
    fn.__name__ = op
    fn.__doc__ = "Element-wise ``%s`` giving a bool tensor (broadcasting). Matches ``torch.%s``." \
        % (op, op)
    return fn


eq = _cmp("eq", np.equal)
ne = not_equal = _cmp("ne", np.not_equal)
lt = less = _cmp("lt", np.less)
le = less_equal = _cmp("le", np.less_equal)
gt = greater = _cmp("gt", np.greater)
ge = greater_equal = _cmp("ge", np.greater_equal)
logical_and = _cmp("logical_and", np.logical_and)
logical_or = _cmp("logical_or", np.logical_or)
logical_xor = _cmp("logical_xor", np.logical_xor)


def _bitwise(op, np_fn):
    def fn(input, other, *, out=None):
        a, b = binary_arrays(op, input, other)
        if a.dtype.kind == "f" or (isinstance(b, np.ndarray) and b.dtype.kind == "f") or \
                isinstance(b, float):
            raise RuntimeError("\"%s_cpu\" not implemented for 'Float'" % op)
        return Tensor._wrap(np.asarray(np_fn(a, b)))
    fn.__name__ = op
    fn.__doc__ = "Element-wise ``%s`` of integer or bool tensors." % op
    return fn


bitwise_and = _bitwise("bitwise_and", np.bitwise_and)
bitwise_or = _bitwise("bitwise_or", np.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", np.bitwise_xor)
bitwise_left_shift = _bitwise("bitwise_left_shift", np.left_shift)
bitwise_right_shift = _bitwise("bitwise_right_shift", np.right_shift)


def bitwise_not(input, *, out=None):
    """``~input`` for integer or bool tensors."""
    if input._array.dtype.kind == "f":
        raise RuntimeError("\"bitwise_not_cpu\" not implemented for 'Float'")
    return Tensor._wrap(np.invert(input._array))


def logical_not(input, *, out=None):
    """Element-wise ``not`` giving a bool tensor."""
    return Tensor._wrap(np.logical_not(input._array))


def isnan(input):
    """True where ``input`` is NaN."""
    return Tensor._wrap(np.isnan(input._array))


def isinf(input):
    """True where ``input`` is +-inf."""
    return Tensor._wrap(np.isinf(input._array))


def isposinf(input):
    return Tensor._wrap(np.isposinf(input._array))


def isneginf(input):
    return Tensor._wrap(np.isneginf(input._array))


def isfinite(input):
    """True where ``input`` is finite."""
    return Tensor._wrap(np.isfinite(input._array))


def isreal(input):
    return Tensor._wrap(np.ones(input._array.shape, dtype=bool))


def signbit(input):
    return Tensor._wrap(np.signbit(input._array))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|input - other| <= atol + rtol * |other|`` element-wise."""
    a, b = binary_arrays("isclose", input, other)
    return Tensor._wrap(np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when every element is ``isclose``."""
    return bool(isclose(input, other, rtol, atol, equal_nan)._array.all())


def equal(input, other):
    """True when both tensors have the same shape and elements."""
    return input._array.shape == other._array.shape and \
        bool(np.array_equal(input._array, other._array))


def _arr(x):
    return x._array if isinstance(x, Tensor) else x


class Where(Function):
    node_name = "WhereBackward0"

    @staticmethod
    def forward(ctx, cond, a, b):
        ctx.save_for_backward(cond)
        shape = check_shapes_broadcast("where", cond._array.shape, np.shape(_arr(a)))
        check_shapes_broadcast("where", shape, np.shape(_arr(b)))
        if isinstance(a, Tensor) and isinstance(b, Tensor):
            aa, bb = binary_arrays("where", a, b)
        elif isinstance(a, Tensor):
            aa, bb = binary_arrays("where", a, b)
            bb = np.asarray(bb, dtype=aa.dtype)
        else:
            bb, aa = binary_arrays("where", b, a)
            aa = np.asarray(aa, dtype=bb.dtype)
        return Tensor._wrap(np.where(cond._array, aa, bb))

    @staticmethod
    def backward(ctx, grad_output):
        cond, = ctx.saved_tensors
        need = ctx.needs_input_grad
        zero = grad_output * 0
        ga = sum_to(where(cond, grad_output, zero), ctx._input_meta(1)[0]) if need[1] else None
        gb = sum_to(where(cond, zero, grad_output), ctx._input_meta(2)[0]) if need[2] else None
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
    if condition._array.dtype != np.bool_:
        condition = Tensor._wrap(condition._array.astype(bool))
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        from .creation import as_tensor
        input = as_tensor(input)
    return Where.apply(condition, input, other)


def _inplace_cmp(fn):
    def op_(input, other):
        res = fn(input, other)
        from ._inplace import write
        write(input, res._array.astype(input._array.dtype), fn.__name__ + "_")
        return input
    op_.__name__ = fn.__name__ + "_"
    return op_


eq_, ne_, lt_, le_, gt_, ge_ = (_inplace_cmp(f) for f in (eq, ne, lt, le, gt, ge))
logical_and_ = _inplace_cmp(logical_and)
logical_or_ = _inplace_cmp(logical_or)


def logical_not_(input):
    from ._inplace import write
    write(input, np.logical_not(input._array).astype(input._array.dtype), "logical_not_")
    return input


def bitwise_and_(input, other):
    return inplace(input, bitwise_and, other)


def bitwise_or_(input, other):
    return inplace(input, bitwise_or, other)


def bitwise_xor_(input, other):
    return inplace(input, bitwise_xor, other)
