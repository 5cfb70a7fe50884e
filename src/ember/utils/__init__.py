"""ember.utils: data loading, checkpointing, hook helpers, pytrees, benchmarking and
``swap_tensors``."""
from . import data  # noqa: F401
from . import checkpoint  # noqa: F401
from . import hooks  # noqa: F401
from . import _pytree  # noqa: F401
from ..nn.modules._swap import swap_tensors  # noqa: F401


def __getattr__(name):
    if name == "benchmark":     # (torch imports it on first use too)
        import importlib
        return importlib.import_module(__name__ + ".benchmark")
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
