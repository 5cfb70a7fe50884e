"""The op database: one ``OpInfo`` entry per op, run by the generic tests in ``test_opdb.py``.

Each family module ``tests/opdb/<family>.py`` defines ``OPS``, a list of ``OpInfo``. One lambda
``fn(lib, *inputs)`` runs in both libraries (``lib`` is ``ember`` or ``torch``), so adding an op
means adding an entry::

    from opdb import OpInfo, make

    OPS = [
        OpInfo("exp", lambda L, x: L.exp(x),
               lambda dt: [(make((3,), dt),), (make((2, 3), dt), )]),
        OpInfo("add_scalar", lambda L, x, s: x + s,
               lambda dt: [(make((2, 3), dt), 2.5)]),
    ]

``samples(dtype)`` returns a list of tuples whose items are numpy arrays (they become tensors;
floating ones require grad unless ``grad_inputs`` says otherwise) or Python values passed
through unchanged. Keep samples small: gradcheck costs two forward calls per input element.
"""
import importlib
import pkgutil
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

__all__ = ["OpInfo", "make", "make_positive", "all_ops", "import_errors", "grad_mask"]


@dataclass
class OpInfo:
    """One op: a callable run in ember and torch, its sample inputs and what to check.

    Attributes:
        name: unique id of the entry (shown in test ids), e.g. ``"sum_dim_keepdim"``.
        fn: ``fn(lib, *inputs)`` returning a tensor or a tuple of tensors.
        samples: ``samples(numpy_dtype)`` -> list of tuples of numpy arrays / Python values.
        dtypes: floating numpy dtypes the op is compared in.
        differentiable: check gradients (against torch and with gradcheck).
        double_backward: also run gradgradcheck.
        rtol, atol: tolerances of the torch comparison (None: the oracle's per-dtype default).
        grad_inputs: indices of the inputs that require grad (None: every floating array).
        skip_gradcheck: skip the finite-difference checks (e.g. non-smooth at the samples).
        gradcheck_kwargs: extra keyword arguments of gradcheck/gradgradcheck (eps, atol, rtol).
        check_dtype: compare output dtypes with torch's.
    """

    name: str
    fn: Callable[..., Any]
    samples: Callable[[Any], Sequence[tuple]]
    dtypes: tuple = (np.float32, np.float64)
    differentiable: bool = True
    double_backward: bool = True
    rtol: Optional[float] = None
    atol: Optional[float] = None
    grad_inputs: Optional[Sequence[int]] = None
    skip_gradcheck: bool = False
    gradcheck_kwargs: dict = field(default_factory=dict)
    check_dtype: bool = True

    def __repr__(self):
        return "OpInfo(%r)" % self.name


def make(shape, dtype=np.float32, low=-2.0, high=2.0, seed=0, noncontiguous=False):
    """A reproducible random array of ``shape`` and ``dtype`` with values in [low, high).

    Integer dtypes give integers in [low, high). ``noncontiguous=True`` returns the same values
    in Fortran order, so that strided inputs are covered.
    """
    shape = tuple(int(d) for d in shape)
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(zlib.crc32(repr((shape, dtype.str, seed)).encode()))
    if noncontiguous:
        return np.asfortranarray(make(shape, dtype, low, high, seed))
    if dtype.kind in "iu":
        return rng.integers(int(low), int(high), size=shape).astype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    return rng.uniform(low, high, size=shape).astype(dtype)


def make_positive(shape, dtype=np.float32, low=0.5, high=2.0, seed=0):
    """Random values in [low, high) (for log, sqrt, division ...)."""
    return make(shape, dtype, low, high, seed)


def grad_mask(op, sample):
    """Which sample items require grad, as a list of bools (one per item)."""
    out = []
    for i, a in enumerate(sample):
        is_float = isinstance(a, np.ndarray) and a.dtype.kind == "f"
        out.append(is_float and (op.grad_inputs is None or i in op.grad_inputs))
    return out


_ERRORS = []
_CACHE = []


def _families():
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_") or info.name.startswith("test_") or info.ispkg:
            continue
        yield info.name


def all_ops():
    """Every ``OpInfo`` from every ``tests/opdb/<family>.py`` present, in file order.

    A family module that fails to import is recorded (see ``import_errors``) and skipped, so
    that one broken file does not hide the other families' results.
    """
    if _CACHE:
        return list(_CACHE[0])
    ops = []
    for name in sorted(_families()):
        try:
            mod = importlib.import_module(__name__ + "." + name)
        except Exception as e:  # noqa: BLE001  (reported by test_opdb.test_families_import)
            _ERRORS.append((name, "%s: %s" % (type(e).__name__, e)))
            continue
        ops.extend(getattr(mod, "OPS", []))
    _CACHE.append(ops)
    return list(ops)


def import_errors():
    """``[(family, message)]`` for the family modules that failed to import."""
    all_ops()
    return list(_ERRORS)
