"""Round-7 data-loading fixes, checked against torch."""
import random

import numpy as np

import ember
from ember.utils.data._worker import _generate_state


class _NumpyRandom:
    """Each item draws from the worker's global numpy, torch and random states."""

    def __init__(self, lib):
        self.lib = lib

    def __len__(self):
        return 6

    def __getitem__(self, i):
        return [i, float(np.random.rand()), float(self.lib.rand(())), random.random()]


def _draws(lib, loader_mod, workers, init=None):
    loader = loader_mod.DataLoader(_NumpyRandom(lib), batch_size=None, num_workers=workers,
                                   generator=lib.Generator().manual_seed(3),
                                   worker_init_fn=init)
    return [row for row in loader]


def test_worker_numpy_seed_matches_torch(torch):
    import torch.utils.data as tdata
    from torch.utils.data._utils.worker import _generate_state as t_state
    for seed, wid in ((0, 0), (5, 3), (2**32 - 1, 1), (2**32, 0), (2**63 - 1, 7),
                      (8470213580357961482, 2)):
        assert _generate_state(seed, wid) == t_state(seed, wid)
    ours = _draws(ember, ember.utils.data, 2)
    theirs = _draws(torch, tdata, 2)
    assert [[float(v) for v in r] for r in ours] == [[float(v) for v in r] for r in theirs]
    # two workers no longer share a numpy stream (the classic duplicated-augmentation bug)
    assert ours[0][1] != ours[1][1]


def _np_reseed(worker_id):
    np.random.seed(np.random.get_state()[1][0] + worker_id)


def test_worker_init_fn_sees_seeded_numpy(torch):
    import torch.utils.data as tdata
    ours = _draws(ember, ember.utils.data, 2, _np_reseed)
    theirs = _draws(torch, tdata, 2, _np_reseed)
    assert [r[1] for r in ours] == [r[1] for r in theirs]
