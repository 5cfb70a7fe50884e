"""``torch.fx.passes``: graph passes (``shape_prop``)."""
from . import shape_prop

__all__ = ["shape_prop"]
