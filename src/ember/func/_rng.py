"""vmap's randomness modes: detecting random draws from the global generator."""
import contextlib
import ctypes

from .. import random as _random

_RANDOM = ("vmap: called random operation while in randomness error mode. Please either use the "
           "'same' or 'different' randomness flags on vmap or perform the randomness operation "
           "out of vmap")

_RANDOMNESS = ("error", "different", "same")


def _check_randomness(randomness):
    if randomness not in _RANDOMNESS:
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           "'same'. Got %s" % (randomness,))


_MT19937_BYTES = 624 * 4 + 4      # NumPy's mt19937_state: uint32 key[624], int pos


def _rng_state():
    """The default generator's state, as comparable values."""
    gen = _random.default_generator
    bits = gen.rng.bit_generator
    if type(bits).__name__ == "MT19937":
        # NOTE: the C state's bytes (NumPy's documented ctypes interface): reading ``.state``
        # costs ~0.3 ms, which a vmap call pays twice
        raw = ctypes.string_at(bits.ctypes.state_address, _MT19937_BYTES)
        return (raw, getattr(gen, "_next_double", None), getattr(gen, "_next_float", None),
                getattr(gen, "_seed", None))
    return _freeze(bits.state)


def _freeze(state):
    """The generator state as comparable values (arrays become bytes)."""
    if isinstance(state, dict):
        return tuple((k, _freeze(v)) for k, v in state.items())
    return state.tobytes() if hasattr(state, "tobytes") else state


def _restore(state):
    """Put back a state taken by ``_rng_state`` (the MT19937 path) or ``get_rng_state``."""
    gen = _random.default_generator
    if isinstance(state, tuple) and isinstance(state[0], bytes):
        raw, gen._next_double, gen._next_float, seed = state
        ctypes.memmove(gen.rng.bit_generator.ctypes.state_address, raw, _MT19937_BYTES)
        if seed is not None:
            gen._seed = seed
    else:
        _random.set_rng_state(state)


@contextlib.contextmanager
def _rng_guard(randomness):
    """Under 'error', raise torch's error when the enclosed code drew random numbers; as in
    torch, whose first random call raises, the generator is left as it was."""
    if randomness != "error":
        yield
        return
    before = _rng_state()
    full = None if isinstance(before, tuple) and isinstance(before[0], bytes) else \
        _random.get_rng_state()
    try:
        yield
    finally:        # (also when an op raised torch's error itself, after its draw)
        moved = _rng_state() != before
        if moved:
            _restore(before if full is None else full)
    if moved:
        raise RuntimeError(_RANDOM)
