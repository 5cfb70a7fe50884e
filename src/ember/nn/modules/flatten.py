"""Flatten and Unflatten."""
from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Flattens dims ``start_dim`` .. ``end_dim`` into one (by default all but the batch dim)."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return "start_dim=%d, end_dim=%d" % (self.start_dim, self.end_dim)


class Unflatten(Module):
    """Expands dim ``dim`` into ``unflattened_size``."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        self.dim = dim
        self.unflattened_size = tuple(unflattened_size) if isinstance(unflattened_size, list) \
            else unflattened_size

    def forward(self, input):
        d = self.dim % input.dim()
        shape = tuple(input.shape)
        return input.reshape(shape[:d] + tuple(self.unflattened_size) + shape[d + 1:])

    def extra_repr(self):
        return "dim=%s, unflattened_size=%s" % (self.dim, self.unflattened_size)
