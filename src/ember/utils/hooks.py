"""``torch.utils.hooks``: the handle every ``register_*hook`` returns."""
from ..tensor import RemovableHandle

__all__ = ["RemovableHandle"]
