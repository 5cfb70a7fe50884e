"""``torch._foreach_*``: the multi-tensor ops that torch's optimizers, schedule-free and EMA
code (timm's ModelEmaV3) call on lists of tensors. torch fuses each into a few kernels; here
each runs the matching single-tensor op over the list, which gives the same numbers.

In-place forms (``_foreach_mul_``) return the list they were given; out-of-place forms return
a tuple of new tensors, as torch does."""
import numbers

import ember

_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
          "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round",
          "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")
_BINARY = ("add", "sub", "mul", "div", "maximum", "minimum", "clamp_min", "clamp_max", "pow")


def _check(self, *others):
    """torch's list checks: non-empty, and every tensor/scalar list as long as ``self``."""
    if len(self) == 0:
        raise RuntimeError("Tensor list must have at least one tensor.")
    for other in others:
        if isinstance(other, (list, tuple)) and len(other) != len(self):
            if all(isinstance(o, numbers.Number) for o in other):
                raise RuntimeError("Tensor list must have same number of elements as scalar list.")
            raise RuntimeError("Tensor lists must have the same number of tensors, got %d and %d"
                               % (len(self), len(other)))


def _each(other, n):
    """One operand per tensor: a list is split, a scalar or single Tensor is repeated."""
    return list(other) if isinstance(other, (list, tuple)) else [other] * n


def _binary(op, a, b, alpha):
    if op in ("add", "sub"):
        return getattr(ember, op)(a, b, alpha=alpha)
    if op in ("clamp_min", "clamp_max") and not isinstance(b, ember.Tensor):
        return ember.clamp(a, **{op[6:]: b})
    if op in ("clamp_min", "clamp_max"):
        op = "maximum" if op == "clamp_min" else "minimum"
    if op in ("maximum", "minimum") and not isinstance(b, ember.Tensor):
        b = ember.tensor(b, dtype=a.dtype)
    return getattr(ember, op)(a, b)


def _operand(other, scalar, scalars, exponent):
    """The second operand, however torch's overloads name it (``other``/``scalar``/...)."""
    for value in (scalar, scalars, exponent):
        if value is not None:
            return value
    return other


def _make_unary(name):
    def out_of_place(self):
        _check(self)
        return tuple(getattr(ember, name)(t) for t in self)

    def in_place(self):
        _check(self)
        for t in self:
            getattr(t, name + "_")()
        return self
    return out_of_place, in_place


def _make_binary(name):
    def out_of_place(self, other=None, *, alpha=1, scalar=None, scalars=None, exponent=None):
        other = _operand(other, scalar, scalars, exponent)
        if isinstance(self, numbers.Number):          # _foreach_pow(scalar, exponents)
            _check(other)
            return tuple(ember.pow(self, e) for e in other)
        _check(self, other)
        return tuple(_binary(name, t, o, alpha) for t, o in zip(self, _each(other, len(self))))

    def in_place(self, other=None, *, alpha=1, scalar=None, scalars=None, exponent=None):
        other = _operand(other, scalar, scalars, exponent)
        _check(self, other)
        for t, o in zip(self, _each(other, len(self))):
            _inplace(name, t, o, alpha)
        return self
    return out_of_place, in_place


def _inplace(name, t, o, alpha):
    if name in ("add", "sub"):
        t.add_(o, alpha=alpha if name == "add" else -alpha)
    elif name in ("clamp_min", "clamp_max", "maximum", "minimum"):
        t.copy_(_binary(name, t, o, alpha))
    else:
        getattr(t, name + "_")(o)


for _name in _UNARY:
    globals()["_foreach_" + _name], globals()["_foreach_" + _name + "_"] = _make_unary(_name)
for _name in _BINARY:
    globals()["_foreach_" + _name], globals()["_foreach_" + _name + "_"] = _make_binary(_name)


def _foreach_lerp(self, tensors1, weight=None, *, weights=None):
    weight = weights if weights is not None else weight
    _check(self, tensors1, weight)
    return tuple(ember.lerp(t, e, w) for t, e, w in zip(self, tensors1, _each(weight, len(self))))


def _foreach_lerp_(self, tensors1, weight=None, *, weights=None):
    weight = weights if weights is not None else weight
    _check(self, tensors1, weight)
    for t, e, w in zip(self, tensors1, _each(weight, len(self))):
        t.lerp_(e, w)
    return self


def _pointwise_values(value, n):
    """addcmul/addcdiv's ``value``: a scalar, a list of scalars, or a 1-D Tensor of them."""
    if isinstance(value, ember.Tensor):
        value = value.tolist()
    return _each(value, n)


def _foreach_addcmul(self, tensor1, tensor2, value=1):
    _check(self, tensor1, tensor2, value)
    return tuple(ember.addcmul(t, a, b, value=v) for t, a, b, v in
                 zip(self, tensor1, tensor2, _pointwise_values(value, len(self))))


def _foreach_addcmul_(self, tensor1, tensor2, value=1):
    _check(self, tensor1, tensor2, value)
    for t, a, b, v in zip(self, tensor1, tensor2, _pointwise_values(value, len(self))):
        t.addcmul_(a, b, value=v)
    return self


def _foreach_addcdiv(self, tensor1, tensor2, value=1):
    _check(self, tensor1, tensor2, value)
    return tuple(ember.addcdiv(t, a, b, value=v) for t, a, b, v in
                 zip(self, tensor1, tensor2, _pointwise_values(value, len(self))))


def _foreach_addcdiv_(self, tensor1, tensor2, value=1):
    _check(self, tensor1, tensor2, value)
    for t, a, b, v in zip(self, tensor1, tensor2, _pointwise_values(value, len(self))):
        t.addcdiv_(a, b, value=v)
    return self


def _foreach_norm(self, ord=2, dtype=None):
    """The ``ord``-norm of each tensor, flattened (``torch.linalg.vector_norm``)."""
    _check(self)
    return tuple(ember.linalg.vector_norm(t, ord, dtype=dtype) for t in self)


def _foreach_max(self):
    _check(self)
    return tuple(t.max() for t in self)


def _foreach_clone(self):
    _check(self)
    return tuple(t.clone() for t in self)


def _foreach_copy_(self, src, non_blocking=False):
    _check(self, src)
    for t, s in zip(self, src):
        t.copy_(s)
    return self


def _foreach_zero_(self):
    _check(self)
    for t in self:
        t.zero_()
    return self


__all__ = sorted(n for n in globals() if n.startswith("_foreach_"))
