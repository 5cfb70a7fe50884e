"""``torch.xpu``: Intel GPUs, which ember does not support (``is_available()`` is False)."""
__all__ = ["is_available", "device_count", "manual_seed", "manual_seed_all", "seed",
           "seed_all", "synchronize", "empty_cache"]


def is_available():
    return False


def device_count():
    return 0


def manual_seed(seed):
    """No-op without XPU, as torch."""


manual_seed_all = manual_seed


def seed():
    """No-op without XPU."""


seed_all = seed


def synchronize(device=None):
    raise AssertionError("Torch not compiled with XPU enabled")


def empty_cache():
    """No-op without XPU, as torch."""
