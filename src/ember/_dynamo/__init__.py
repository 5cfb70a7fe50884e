"""torch._dynamo's names that user code reaches for: ``reset``, ``explain``, ``exc``, ``config``,
the decorators and marks (which ember's recorder does not need: they return their argument or
do nothing)."""
from . import exc  # noqa: F401

__all__ = ["config", "exc", "explain", "reset", "allow_in_graph", "assume_constant_result",
           "disable", "is_compiling", "list_backends", "set_stance", "substitute_in_graph",
           "mark_dynamic", "maybe_mark_dynamic", "mark_static", "disallow_in_graph",
           "graph_break", "is_dynamo_supported"]

_FROM_COMPILER = ("config", "explain", "reset", "allow_in_graph", "assume_constant_result",
                  "disable", "is_compiling", "list_backends", "set_stance", "substitute_in_graph")


def __getattr__(name):
    # (ember.compiler imports this package's exc: its names load on first use)
    if name in _FROM_COMPILER:
        import importlib
        return getattr(importlib.import_module("ember.compiler"), name)
    raise AttributeError("module 'ember._dynamo' has no attribute %r" % name)


def mark_dynamic(t, index, *, hint_override=None, min=None, max=None, specialize_on=None):
    """Mark dimension(s) ``index`` of ``t`` dynamic (ember guards on exact shapes: no effect)."""


def maybe_mark_dynamic(t, index):
    """As ``mark_dynamic``, without the error when the dimension specializes (no effect)."""


def mark_static(t, index=None):
    """Mark dimension(s) of ``t`` (or a module) static (no effect: shapes are always guarded)."""


def disallow_in_graph(fn):
    """Keep ``fn`` out of compiled graphs: returned unchanged (ember records the ops it runs)."""
    return fn


def graph_break(msg=""):
    """Force a graph break here (ember records straight-line programs: no effect eagerly)."""


def is_dynamo_supported():
    """True: ``ember.compile`` works on every Python ember supports."""
    return True
