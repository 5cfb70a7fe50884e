"""More of torch's tensor functions (being written)."""
__all__: list = []
