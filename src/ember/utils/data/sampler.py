"""Samplers: the order in which a DataLoader visits a map-style dataset."""
import numpy as np

from ...random import Generator, _gen
from ...ops.creation import multinomial
from ...tensor import Tensor

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]


def _draw_seed(generator=None):
    """torch's ``torch.empty((), dtype=torch.int64).random_(generator=generator).item()``."""
    return int(_gen(generator)._random_default(1, np.int64)[0])


def _fresh_generator(generator):
    """``generator``, or a new one seeded from the global generator (torch's behaviour)."""
    if generator is not None:
        return generator
    return Generator().manual_seed(_draw_seed())


class Sampler:
    """Base class: an iterable of dataset indices (or of batches of indices)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """Indices ``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """Indices in random order (a new permutation per epoch), or drawn with replacement.

    Args:
        data_source: the dataset.
        replacement: draw with replacement (default False).
        num_samples: how many indices per epoch (default ``len(data_source)``).
        generator: the random generator (default: one seeded from the global generator).
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError("replacement should be a boolean value, but got replacement=%s"
                            % replacement)
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             "num_samples=%s" % self.num_samples)

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        gen = _fresh_generator(self.generator)
        if self.replacement:
            # torch draws in chunks of 32 (randint(high=n, size=(32,))), lazily
            for _ in range(self.num_samples // 32):
                yield from gen._random_from_to(32, np.int64, n, 0).tolist()
            yield from gen._random_from_to(self.num_samples % 32, np.int64, n, 0).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from gen._randperm(n).tolist()
        yield from gen._randperm(n).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in random order."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _gen(self.generator)._randperm(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probability proportional to ``weights``.

    Args:
        weights: non-negative weights, one per index (need not sum to 1).
        num_samples: number of indices drawn per epoch.
        replacement: draw with replacement (default True).
        generator: the random generator.
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             "num_samples=%s" % num_samples)
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got replacement=%s"
                             % replacement)
        w = np.asarray(weights._array if isinstance(weights, Tensor) else weights,
                       dtype=np.float64)
        if w.ndim != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape %s"
                             % (tuple(w.shape),))
        # (invalid weights are refused when sampling, by multinomial, as torch does)
        self.weights = Tensor._wrap(w)
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        # torch.multinomial(weights (float64), num_samples, replacement, generator)
        idx = multinomial(self.weights, self.num_samples, self.replacement,
                          generator=self.generator)
        yield from idx.tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Group the indices of ``sampler`` into lists of ``batch_size``.

    Example:
        >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
        [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler, batch_size, drop_last):
        if (not isinstance(batch_size, int) or isinstance(batch_size, bool)
                or batch_size <= 0):
            raise ValueError("batch_size should be a positive integer value, but got "
                             "batch_size=%s" % batch_size)
        if not isinstance(drop_last, bool):
            raise ValueError("drop_last should be a boolean value, but got drop_last=%s"
                             % drop_last)
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
