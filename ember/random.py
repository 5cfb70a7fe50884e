"""Random number generation: the global Generator, ``manual_seed`` and ``Generator`` objects.

Random numbers are drawn on the host, whatever the device of the tensor they fill, so one
seed gives the same numbers on every device; ``ember.cuda.manual_seed`` has nothing to seed.
"""
import json

import numpy as np

from .backend import device as _device
from .tensor import Tensor

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
           "default_generator"]


class Generator:
    """A source of random numbers (NumPy's PCG64 underneath, on the host for every device).

    Example:
        >>> import ember
        >>> g = ember.Generator().manual_seed(0)
        >>> a = ember.rand(2, generator=g)
        >>> b = ember.rand(2, generator=ember.Generator().manual_seed(0))
        >>> bool((a == b).all())
        True
    """

    def __init__(self, device="cpu"):
        self._seed = 67280421310721
        self.rng = np.random.Generator(np.random.PCG64(self._seed))
        self.device = _device(device)

    def manual_seed(self, seed):
        seed = int(seed)
        if seed < 0:
            seed &= 0xFFFFFFFFFFFFFFFF
        self._seed = seed
        self.rng = np.random.Generator(np.random.PCG64(seed))
        return self

    def seed(self):
        s = int(np.random.SeedSequence().entropy) & 0xFFFFFFFFFFFFFFFF
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        blob = json.dumps(self.rng.bit_generator.state).encode()
        return Tensor._wrap(np.frombuffer(blob, dtype=np.uint8).copy())   # on the CPU, as torch

    def set_state(self, state):
        self.rng.bit_generator.state = json.loads(bytes(state.tolist()).decode())
        return self


default_generator = Generator()


def _rng(generator=None):
    return (generator or default_generator).rng


def manual_seed(seed):
    """Seed the global generator so that every random op is reproducible; returns it."""
    return default_generator.manual_seed(seed)


def seed():
    """Seed the global generator from fresh entropy and return the seed."""
    return default_generator.seed()


def initial_seed():
    """The seed the global generator was last seeded with."""
    return default_generator.initial_seed()


def get_rng_state():
    """The global generator's state as a uint8 tensor."""
    return default_generator.get_state()


def set_rng_state(state):
    """Restore the global generator's state from ``get_rng_state()``."""
    default_generator.set_state(state)
