"""``torch.mps``: Apple's Metal device, which ember does not support (queries answer "not
available"; device work raises as torch does without the MPS backend)."""
__all__ = ["is_available", "device_count", "synchronize", "manual_seed", "seed",
           "empty_cache", "current_allocated_memory", "driver_allocated_memory",
           "set_per_process_memory_fraction", "recommended_max_memory", "get_rng_state",
           "set_rng_state"]


def is_available():
    return False


def device_count():
    return 0


def synchronize():
    raise RuntimeError("Cannot execute deviceSynchronize() without MPS backend.")


def manual_seed(seed):
    """No-op without MPS, as torch."""


def seed():
    """Raises without MPS, as torch."""
    raise RuntimeError("Cannot execute getDefaultGenerator() without MPS backend.")


def get_rng_state(device="mps"):
    """Raises without MPS, as torch."""
    raise RuntimeError("Cannot execute getDefaultGenerator() without MPS backend.")


def set_rng_state(new_state, device="mps"):
    """Raises without MPS, as torch."""
    new_state.clone()
    raise RuntimeError("Cannot execute getDefaultGenerator() without MPS backend.")


def empty_cache():
    raise RuntimeError("Cannot execute emptyCache() without MPS backend.")


def current_allocated_memory():
    raise RuntimeError("Cannot execute getCurrentAllocatedMemory() without MPS backend.")


def driver_allocated_memory():
    raise RuntimeError("Cannot execute getDriverAllocatedMemory() without MPS backend.")


def recommended_max_memory():
    raise RuntimeError("Cannot execute getRecommendedMaxMemory() without MPS backend.")


def set_per_process_memory_fraction(fraction):
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    raise RuntimeError("Cannot execute setMemoryFraction() without MPS backend.")
