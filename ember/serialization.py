"""save/load: safetensors files, never pickle (filled in by the nn/optim/data work)."""

__all__ = []
