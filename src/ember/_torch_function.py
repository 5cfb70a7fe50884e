"""``__torch_function__``: Tensor subclasses see the calls made on them, as in torch.

Dormant until a program defines a Tensor subclass of its own: ``enable()`` (called from
``Tensor.__init_subclass__``) then puts a dispatcher in front of every public function of
``ember``, ``ember.nn.functional``, ``ember.linalg``, ``ember.fft`` and ``ember.special`` and
every Tensor method and operator. A call whose arguments hold an instance of such a subclass
goes to the subclass's ``__torch_function__(func, types, args, kwargs)``; the default one
(``Tensor.__torch_function__``) runs the call and returns results of the caller's class, so
``MyTensor + 1`` is a ``MyTensor``. Calls without one cost a flag test and an argument scan.
Objects that are not tensors but define ``__torch_function__`` are dispatched the same way once
the protocol is on. ember's own subclasses (``Parameter``, ...) opt out, as torch's
``Parameter`` does.
"""
import functools  # noqa: F401  (used by the dispatchers, compiled below)
import types as _types

from .tensor import Tensor

__all__ = ["enable", "enabled", "DisableTorchFunctionSubclass", "default_torch_function",
           "disabled_torch_function_impl", "overloaded_args"]

_on = [False]
_off = [0]          # depth of DisableTorchFunctionSubclass blocks


class DisableTorchFunctionSubclass:
    """Context manager: calls inside it skip subclasses' ``__torch_function__``."""

    def __enter__(self):
        _off[0] += 1
        return self

    def __exit__(self, *exc):
        _off[0] -= 1
        return False


def disabled_torch_function_impl(cls, func, types, args=(), kwargs=None):
    """A ``__torch_function__`` that takes no part (torch's ``_disabled_torch_function_impl``):
    the call runs as on a plain Tensor."""
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


def _convert(ret, cls):
    if isinstance(ret, Tensor):
        return ret if isinstance(ret, cls) else as_subclass(ret, cls)
    if isinstance(ret, (tuple, list)):
        items = [_convert(r, cls) for r in ret]
        return type(ret)(*items) if hasattr(ret, "_fields") else type(ret)(items)
    return ret


def default_torch_function(cls, func, types, args=(), kwargs=None):
    """Tensor's ``__torch_function__``: run ``func`` and give its tensor results the class
    ``cls`` (``NotImplemented`` when another type among ``types`` is not a base of ``cls``)."""
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        ret = func(*args, **(kwargs or {}))
    return _convert(ret, cls)


def as_subclass(t, cls):
    """``t``'s data (shared) as an instance of ``cls``; a tensor that requires grad stays in
    the graph through an ``AliasBackward0`` node, as torch's."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("as_subclass(): argument 'cls' must be a subclass of Tensor")
    out = _alias()(t) if t.requires_grad else t.detach()
    out.__class__ = cls
    return out


def make_subclass(cls, data, require_grad=False, **kwargs):
    """``Tensor._make_subclass``: ``data``'s memory (detached) as a ``cls`` instance."""
    out = data.detach()
    out.__class__ = cls
    if require_grad:
        out.requires_grad_(True)
    return out


_ALIAS = []


def _alias():
    if not _ALIAS:
        from .autograd.function import Function
        from .ops.shape import _view_of

        class Alias(Function):
            node_name = "AliasBackward0"

            @staticmethod
            def forward(ctx, a):
                return _view_of(a, a._array.view(), Alias)

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output
        _ALIAS.append(Alias.apply)
    return _ALIAS[0]


def _relevant(t):
    if t is Tensor:
        return False
    tf = getattr(t, "__torch_function__", None)
    tf = getattr(tf, "__func__", tf)
    # (a real torch.Tensor's default handler would call the function back: such a tensor is
    # data to ember, as without dispatch)
    return tf is not None and tf is not disabled_torch_function_impl and \
        getattr(tf, "__module__", None) != "torch._tensor"


def overloaded_args(values):
    """The arguments whose types take part, torch's order: subclasses before their bases, else
    left to right (one per type)."""
    found, seen = [], []
    for v in values:
        t = type(v)
        if t in (list, tuple):
            for w in v:
                if type(w) is not Tensor and _relevant(type(w)) and type(w) not in seen:
                    seen.append(type(w))
                    found.append(w)
        elif t is not Tensor and _relevant(t) and t not in seen:
            seen.append(t)
            found.append(v)
    if len(found) > 1:
        ordered = []
        for v in found:
            i = next((k for k, o in enumerate(ordered) if issubclass(type(v), type(o))),
                     len(ordered))
            ordered.insert(i, v)
        found = ordered
    return found


def _is_method(f):
    return Tensor.__dict__.get(f.__name__) is f


# The dispatchers' frames sit between a caller and ember's function: compiled under a file name
# that Python's warnings machinery treats as internal (as importlib._bootstrap's), so a
# warning's ``stacklevel`` inside the function still points at the caller's line.
_SRC = r'''
def _dispatch(public, args, kwargs):
    over = overloaded_args(tuple(args) + tuple(kwargs.values()))
    if not over:
        return public.__wrapped__(*args, **kwargs)
    types = tuple(type(a) for a in over)
    for a in over:
        ret = type(a).__torch_function__(public, types, args, kwargs)
        if ret is not NotImplemented:
            return ret
    name = "torch." + public.__name__ if not _is_method(public) else \
        "torch._C.TensorBase." + public.__name__
    raise TypeError("Multiple dispatch failed for '%s'; all __torch_function__ handlers "
                    "returned NotImplemented:\n\n%s\n\nFor more information, try re-running "
                    "with TORCH_LOGS=not_implemented" % (name, "\n".join(
                        "  - tensor subclass %s" % t for t in types)))


def _dispatcher(fn):
    def public(*args, **kwargs):
        if _off[0]:
            return fn(*args, **kwargs)
        return _dispatch(public, args, kwargs)
    functools.update_wrapper(public, fn)
    return public
'''
_NS: dict = {}
exec(compile(_SRC, "<ember._torch_function dispatch (importlib._bootstrap-style frames)>", "exec"),
     globals(), _NS)
_dispatch, _dispatcher = _NS["_dispatch"], _NS["_dispatcher"]


# Tensor attributes that stay as they are: the protocol itself, construction, attribute access,
# printing and copying.
_KEEP = {"__init__", "__new__", "__init_subclass__", "__torch_function__", "__getattr__",
         "__setattr__", "__delattr__", "__getattribute__", "__repr__", "__str__", "__format__",
         "__reduce_ex__", "__deepcopy__", "__copy__", "__hash__", "__dir__", "__sizeof__",
         "__class_getitem__", "_wrap", "as_subclass", "_make_subclass", "__array__",
         "__array_wrap__", "__array_ufunc__", "__array_function__", "__dlpack__",
         "__dlpack_device__", "__iter__"}


def subclassed(cls, **kwargs):
    """``Tensor.__init_subclass__``: a program's subclass turns the protocol on; ember's own
    subclasses opt out unless they define ``__torch_function__``."""
    if not (cls.__module__ or "").startswith("ember."):
        enable()
    elif "__torch_function__" not in vars(cls):
        cls.__torch_function__ = classmethod(disabled_torch_function_impl)


Tensor.__torch_function__ = classmethod(default_torch_function)
Tensor._make_subclass = staticmethod(make_subclass)
Tensor.__init_subclass__ = classmethod(subclassed)


# The name torch's ``func`` has for an operator (the method it dispatches as).
_NAMES = {"__matmul__": "matmul", "__radd__": "add", "__rmul__": "mul", "__rtruediv__": "__rdiv__",
          "__pos__": "positive", "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge",
          "__ne__": "ne", "__rand__": "bitwise_and", "__ror__": "bitwise_or",
          "__rxor__": "bitwise_xor", "__floordiv__": "__floordiv__"}


def enabled():
    """Whether the dispatchers are in place."""
    return _on[0]


def enable():
    """Put the dispatchers in front of ember's public functions and Tensor's methods (once)."""
    if _on[0]:
        return
    _on[0] = True
    import importlib     # (the namespaces above this file: loaded by name, no import cycle)
    for mod in map(importlib.import_module, ("ember", "ember.nn.functional", "ember.linalg",
                                             "ember.fft", "ember.special")):
        for name, fn in list(vars(mod).items()):
            if isinstance(fn, _types.FunctionType) and not name.startswith("_") and \
                    (fn.__module__ or "").startswith("ember."):
                setattr(mod, name, _dispatcher(fn))
    for name, fn in list(vars(Tensor).items()):
        if isinstance(fn, _types.FunctionType) and name not in _KEEP:
            public = _dispatcher(fn)
            public.__name__ = _NAMES.get(name, fn.__name__)
            setattr(Tensor, name, public)
        elif isinstance(fn, property) and not name.startswith("_"):
            get = _dispatcher(fn.fget)
            get.__name__ = "__get__"
            setattr(Tensor, name, property(get, fn.fset, fn.fdel, fn.__doc__))
