"""``torch.signal``: window functions (``ember.signal.windows``)."""
from . import windows

__all__ = ["windows"]
