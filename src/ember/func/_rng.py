"""vmap's randomness modes: detecting random draws from the global generator."""
import contextlib

from .. import random as _random

_RANDOM = ("vmap: called random operation while in randomness error mode. Please either use the "
           "'same' or 'different' randomness flags on vmap or perform the randomness operation "
           "out of vmap")

_RANDOMNESS = ("error", "different", "same")


def _check_randomness(randomness):
    if randomness not in _RANDOMNESS:
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           "'same'. Got %s" % (randomness,))


def _rng_state():
    return _freeze(_random.default_generator.rng.bit_generator.state)


def _freeze(state):
    """The generator state as comparable values (arrays become bytes)."""
    if isinstance(state, dict):
        return tuple((k, _freeze(v)) for k, v in state.items())
    return state.tobytes() if hasattr(state, "tobytes") else state


@contextlib.contextmanager
def _rng_guard(randomness):
    """Under 'error', raise torch's error when the enclosed code drew random numbers."""
    before = _rng_state() if randomness == "error" else None
    yield
    if before is not None and _rng_state() != before:
        raise RuntimeError(_RANDOM)
