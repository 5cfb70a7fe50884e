"""``torch.xpu``: Intel GPUs, which ember does not support (``is_available()`` is False;
device queries raise "Torch not compiled with XPU enabled" and memory statistics are 0, as
torch built without XPU)."""
import collections

__all__ = ["is_available", "device_count", "manual_seed", "manual_seed_all", "seed",
           "seed_all", "synchronize", "empty_cache", "is_initialized", "init", "current_device",
           "set_device", "get_device_name", "get_device_capability", "get_device_properties",
           "get_arch_list", "get_gencode_flags", "is_bf16_supported", "is_tf32_supported",
           "get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all",
           "initial_seed", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "memory_stats", "memory_stats_as_nested_dict",
           "memory_snapshot", "mem_get_info", "get_per_process_memory_fraction",
           "set_per_process_memory_fraction", "default_generators"]

default_generators = ()


def _unavailable(*args, **kwargs):
    raise AssertionError("Torch not compiled with XPU enabled")


def is_available():
    return False


def is_initialized():
    return False


def device_count():
    return 0


def manual_seed(seed):
    """Checks ``seed``, nothing more, as torch without XPU."""
    int(seed)


def manual_seed_all(seed):
    """As ``manual_seed``."""
    int(seed)


def seed():
    """No-op without XPU."""


seed_all = seed


def synchronize(device=None):
    _unavailable()


def empty_cache():
    """No-op without XPU, as torch."""


def init():
    _unavailable()


def current_device():
    _unavailable()


def set_device(device):
    _unavailable()


def get_device_name(device=None):
    _unavailable()


def get_device_capability(device=None):
    _unavailable()


def get_device_properties(device=None):
    _unavailable()


def get_rng_state(device="xpu"):
    _unavailable()


def initial_seed():
    _unavailable()


def mem_get_info(device=None):
    _unavailable()


def get_per_process_memory_fraction(device=None):
    _unavailable()


def set_per_process_memory_fraction(fraction, device=None):
    _unavailable()


def set_rng_state(new_state, device="xpu"):
    """Copies ``new_state`` as torch does, nothing more."""
    new_state.clone()


def set_rng_state_all(new_states):
    for state in new_states:
        set_rng_state(state)


def get_rng_state_all():
    return []


def get_arch_list():
    return []


def get_gencode_flags():
    return ""


def is_bf16_supported(including_emulation=True):
    return False


def is_tf32_supported():
    return False


def memory_allocated(device=None):
    return 0


max_memory_allocated = memory_reserved = max_memory_reserved = memory_allocated


def memory_stats(device=None):
    return collections.OrderedDict()


def memory_stats_as_nested_dict(device=None):
    return {}


def memory_snapshot(mempool_id=None):
    return []
