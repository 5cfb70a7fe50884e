"""``torch.overrides``: the ``__torch_function__`` protocol's helpers.

ember's functions and Tensor methods dispatch to ``__torch_function__`` once a program defines a
Tensor subclass (see ``ember/_torch_function.py``); these helpers let code written for the
protocol (``if has_torch_function(args): return handle_torch_function(...)``) run too.
"""
import functools

from .tensor import Tensor
from ._torch_function import overloaded_args, _relevant

__all__ = ["get_ignored_functions", "get_overridable_functions", "get_testing_overrides",
           "handle_torch_function", "has_torch_function", "resolve_name", "is_tensor_like",
           "is_tensor_method_or_property", "wrap_torch_function", "enable_reentrant_dispatch",
           "has_torch_function_unary", "has_torch_function_variadic"]


def _overloaded(relevant_args):
    args = overloaded_args(relevant_args)
    return [type(a) for a in args], args


def has_torch_function(relevant_args):
    """Whether an argument's type takes part in ``__torch_function__`` (not a plain Tensor or
    Parameter)."""
    return any(type(a) is not Tensor and _relevant(type(a)) for a in relevant_args)


def has_torch_function_unary(a):
    return type(a) is not Tensor and _relevant(type(a))


def has_torch_function_variadic(*args):
    return has_torch_function(args)


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call the ``__torch_function__`` of the arguments' types in turn until one answers
    other than ``NotImplemented``."""
    types, overloaded = _overloaded(relevant_args)
    for a in overloaded:
        result = type(a).__torch_function__(public_api, tuple(types), args, kwargs)
        if result is not NotImplemented:
            return result
    raise TypeError("no implementation found for '%s' on types that implement "
                    "__torch_function__: %s" % (resolve_name(public_api),
                                                [type(a) for a in overloaded]))


def wrap_torch_function(dispatcher):
    """Decorator: ``func`` dispatches to ``__torch_function__`` on what ``dispatcher``
    returns."""
    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner


def is_tensor_like(inp):
    """True for a Tensor or an object whose type defines ``__torch_function__``."""
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


def is_tensor_method_or_property(func):
    return getattr(Tensor, getattr(func, "__name__", ""), None) is func


def resolve_name(f):
    mod = getattr(f, "__module__", None) or ""
    return ("%s.%s" % (mod, getattr(f, "__qualname__", getattr(f, "__name__", repr(f))))
            .replace("ember", "torch"))


def get_ignored_functions():
    return set()


def get_overridable_functions():
    return {}


def get_testing_overrides():
    return {}


class enable_reentrant_dispatch:      # noqa: N801 (torch's name)
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
