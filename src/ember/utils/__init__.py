"""ember.utils: data loading and checkpointing helpers."""
from . import data  # noqa: F401
from . import checkpoint  # noqa: F401
