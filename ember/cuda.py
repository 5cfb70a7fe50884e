"""``ember.cuda``: no CUDA backend in this build; ``is_available()`` is False."""

__all__ = ["is_available", "device_count", "manual_seed", "manual_seed_all", "synchronize"]


def is_available():
    """False: this build of ember runs on the CPU only."""
    return False


def device_count():
    return 0


def manual_seed(seed):
    """No-op (there is no CUDA generator)."""


manual_seed_all = manual_seed


def synchronize(device=None):
    """No-op."""
