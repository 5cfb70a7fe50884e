"""The layer classes of ``ember.nn``."""
from .module import Module  # noqa: F401
from .linear import Identity, Linear  # noqa: F401
