"""DistributedSampler: each rank of a distributed job visits its own share of a dataset."""
import math

from ... import distributed as dist
from ...ops.creation import randperm
from ...random import Generator
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """The indices of ``dataset`` that rank ``rank`` of ``num_replicas`` visits, as torch's.

    Each epoch's order (a permutation seeded with ``seed + epoch`` when ``shuffle``) is padded
    by repeating its start until it divides evenly (or cut, with ``drop_last``); rank r takes
    every ``num_replicas``-th index from position r. Call ``set_epoch(epoch)`` before each
    epoch so that the order changes.

    Args:
        dataset: the dataset (only its length is used).
        num_replicas: the number of ranks (default: the world size).
        rank: this rank (default: ``ember.distributed.get_rank()``).
        shuffle: a new permutation per epoch (default True).
        seed: the shuffle's seed, the same on every rank (default 0).
        drop_last: drop the tail instead of padding (default False).
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None:
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            num_replicas = dist.get_world_size()
        if rank is None:
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError("Invalid rank %s, rank should be in the interval [0, %s]"
                             % (rank, num_replicas - 1))
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            self.num_samples = math.ceil((len(self.dataset) - self.num_replicas)
                                         / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        if self.shuffle:
            g = Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = randperm(len(self.dataset), generator=g).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[:self.total_size]
        if len(indices) != self.total_size:
            raise AssertionError("Number of indices (%d) does not match total_size (%d)"
                                 % (len(indices), self.total_size))
        indices = indices[self.rank:self.total_size:self.num_replicas]
        if len(indices) != self.num_samples:
            raise AssertionError("Number of subsampled indices (%d) does not match num_samples "
                                 "(%d)" % (len(indices), self.num_samples))
        return iter(indices)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Use the order of ``epoch`` from the next iteration on (when shuffling)."""
        self.epoch = epoch
