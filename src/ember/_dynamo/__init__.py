"""torch._dynamo's names that user code reaches for: ``reset``, ``explain``, ``exc``, ``config``."""
from . import exc  # noqa: F401

__all__ = ["config", "exc", "explain", "reset"]


def __getattr__(name):
    # (ember.compiler imports this package's exc: its names load on first use)
    if name in ("config", "explain", "reset"):
        import importlib
        return getattr(importlib.import_module("ember.compiler"), name)
    raise AttributeError("module 'ember._dynamo' has no attribute %r" % name)
