"""ember.utils: data loading and checkpointing helpers."""
from . import data  # noqa: F401
