"""nn.Parameter: a leaf tensor that a Module registers as one of its parameters."""
import numpy as np

from ..backend import backend_for, to_host
from .. import dtypes as _dt
from ..tensor import Tensor

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer",
           "UninitializedTensorMixin"]


class _ParameterMeta(type):
    """``isinstance(t, Parameter)`` is also true for a user Tensor subclass instance made a
    parameter by ``Parameter(t)`` (marked ``_is_param``, as torch's ``_ParameterMeta``)."""

    def __instancecheck__(cls, instance):
        if super().__instancecheck__(instance):
            return True
        return cls is Parameter and type(instance) is not Tensor and \
            isinstance(instance, Tensor) and \
            getattr(instance, "__dict__", {}).get("_is_param", False)


def _user_subclass(data):
    """A Tensor subclass defined outside ember (ember's own, like sparse, act as torch.Tensor)."""
    t = type(data)
    return t is not Tensor and not t.__module__.startswith("ember.")


class Parameter(Tensor, metaclass=_ParameterMeta):
    """A Tensor that is a module parameter; requires grad by default. ``Parameter(t)`` of a
    user Tensor subclass instance returns ``t.detach()`` (still of that subclass) marked as a
    parameter, as torch does.

    Example:
        >>> import ember
        >>> p = ember.nn.Parameter(ember.zeros(2))
        >>> p
        Parameter containing:
        tensor([0., 0.], requires_grad=True)
    """

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        from ..ops.creation import empty
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError("Parameter data must be a Tensor, got %s" % type(data).__name__)
        if cls is Parameter and _user_subclass(data) and not isinstance(data, Parameter):
            t = data.detach().requires_grad_(requires_grad)
            if type(t) is not type(data):
                raise RuntimeError(
                    f"Creating a Parameter from an instance of type {type(data).__name__} "
                    "requires that detach() returns an instance of the same type, but return "
                    f"type {type(t).__name__} was found instead. To use the type as a "
                    "Parameter, please correct the detach() semantics defined by its "
                    "__torch_dispatch__() implementation.")
            t._is_param = True
            return t
        p = Tensor.__new__(cls)
        p._array = data._array
        p._requires_grad = False
        p._grad = None
        p.grad_fn = None
        p._output_nr = 0
        p._version_ref = data._version_ref
        p._base = None
        p._hooks = None
        p._accum = None
        p._retains_grad = False
        if requires_grad:
            if _dt.kind(p._array.dtype) not in "fc":
                raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                                   "gradients")
            p.requires_grad = True
        return p

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (to_host(self._array), self._requires_grad,
                                     str(self.device)))


def _rebuild_parameter(arr, requires_grad, device="cpu"):
    # host: the unpickled array, moved to its device
    return Parameter(Tensor._wrap(backend_for(device).asarray(np.array(arr))), requires_grad)


class UninitializedTensorMixin:
    """A tensor whose shape is not known yet (lazy modules): ``materialize`` gives it one and
    turns it into ``cls_to_become``."""

    __slots__ = ()
    cls_to_become: type

    def __repr__(self):
        return "<%s>" % type(self).__name__

    __str__ = __repr__

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually "
            "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
            "initialized one. Call `forward` to initialize the parameters before accessing their "
            "attributes.")

    def materialize(self, shape, device=None, dtype=None):
        """Give the tensor ``shape`` (uninitialised values) and make it ``cls_to_become``."""
        from ..ops.creation import empty
        device = self.device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        self.data = empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet (lazy modules); ``materialize`` gives it one
    and turns it into a ``Parameter``."""

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        from ..ops.creation import empty
        return Parameter.__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (lazy modules); ``materialize`` gives it one and
    turns it into a plain ``Tensor``."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        from ..ops.creation import empty
        t = empty(0, device=device, dtype=dtype, requires_grad=requires_grad)
        t.__class__ = cls
        t.__dict__["persistent"] = persistent
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass


class Buffer(Tensor):
    """Marks a tensor to be registered as a module buffer: ``self.stats = nn.Buffer(t)``."""

    __slots__ = ()

    def __new__(cls, data=None, *, persistent=True):
        from ..ops.creation import empty
        data = empty(0) if data is None else data
        b = Tensor._wrap(data._array)
        b.__dict__["_buffer_persistent"] = persistent
        return b
