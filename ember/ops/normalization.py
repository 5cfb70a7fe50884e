"""normalization ops (filled in by the op-library / nn work)."""

__all__ = []
