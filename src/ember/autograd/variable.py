"""``Variable(tensor, requires_grad=False, volatile=False)``: the pre-0.4 wrapper, now a Tensor."""
from __future__ import annotations

import warnings
from typing import Any, Optional

from ..backend import backend_for
from ..tensor import Tensor
from .engine import queue_callback

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """Return ``data`` as a Tensor (sharing its values) with ``requires_grad`` set.

    ``volatile=True`` (old no-graph mode) gives a tensor that never records a graph and warns;
    use ``with ember.no_grad():`` instead.
    """

    # (returns a Tensor, not a Variable: a legacy constructor, which mypy flags as misc)
    def __new__(cls, data: Optional[Tensor] = None, requires_grad: bool = False,  # type: ignore[misc]
                volatile: bool = False) -> Tensor:
        if data is None:
            data = Tensor._wrap(backend_for(None).xp.zeros((0,), dtype="float32"))
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


class _ExecutionEngine:
    """``Variable._execution_engine``, where torch code queues end-of-backward callbacks."""

    queue_callback = staticmethod(queue_callback)


Variable._execution_engine = _ExecutionEngine()  # type: ignore[attr-defined]
