"""ember.utils: data loading, checkpointing and hook helpers."""
from . import data  # noqa: F401
from . import checkpoint  # noqa: F401
from . import hooks  # noqa: F401
