"""complex ops (being written)."""
__all__: list = []
