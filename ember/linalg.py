"""``ember.linalg``: norms, inverse, determinant (filled in by the op-library work)."""

__all__ = []
