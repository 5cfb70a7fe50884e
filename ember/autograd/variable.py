"""``Variable(tensor, requires_grad=False, volatile=False)``: the pre-0.4 wrapper, now a Tensor."""
import warnings

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        from ..tensor import Tensor
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """Return ``data`` as a Tensor (sharing its values) with ``requires_grad`` set.

    ``volatile=True`` (old no-graph mode) gives a tensor that never records a graph and warns;
    use ``with ember.no_grad():`` instead.
    """

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        from ..tensor import Tensor
        from .. import ops
        if data is None:
            data = ops.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError("Variable data has to be a tensor, but got %s" % type(data).__name__)
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():`"
                          " instead.", UserWarning, stacklevel=2)
            requires_grad = False
        t = Tensor._wrap(data._array)
        t._version_ref = data._version_ref
        if requires_grad:
            t.requires_grad = True
        return t
