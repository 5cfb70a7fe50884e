"""Helpers shared by the data set loaders and generators."""
import numpy as np

__all__ = ["Bunch", "Dataset", "numpy_rng", "to_tensors"]

from ..utils.data import Dataset


class Bunch(dict):
    """A dict whose keys are also attributes (``bunch.data``), like scikit-learn's."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def numpy_rng(generator):
    """A NumPy Generator over ``generator``'s stream: None (ember's global generator, so
    ``ember.manual_seed`` applies), an int seed (the same stream as ``ember.Generator()``
    seeded with it), an ``ember.Generator`` or a NumPy Generator."""
    from ..random import Generator, default_generator
    if generator is None:
        return default_generator.rng
    if isinstance(generator, Generator):
        return generator.rng
    if isinstance(generator, np.random.Generator):
        return generator
    if isinstance(generator, (int, np.integer)) and not isinstance(generator, bool):
        return Generator().manual_seed(int(generator)).rng
    raise TypeError("generator must be None, an int seed, an ember.Generator or a "
                    "numpy.random.Generator, got %s" % type(generator).__name__)


def to_tensors(X, y, classification):
    """``X`` in the default float dtype and ``y`` int64 (classes) or default float (values)."""
    from .. import dtypes
    from ..ops.creation import tensor
    float_dtype = dtypes.get_default_dtype()
    X = tensor(np.ascontiguousarray(X), dtype=float_dtype)
    y = tensor(np.ascontiguousarray(y), dtype=dtypes.int64 if classification else float_dtype)
    return X, y
