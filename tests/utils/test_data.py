"""utils.data: datasets, samplers, default_collate against torch's, DataLoader and workers."""
import collections
import gc
import multiprocessing

import numpy as np
import pytest

import ember
from ember.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, IterableDataset,
                              RandomSampler, SequentialSampler, Subset, SubsetRandomSampler,
                              TensorDataset, WeightedRandomSampler, default_collate,
                              default_convert, get_worker_info, random_split)

Point = collections.namedtuple("Point", "x y")


def _dataset(n=10):
    return TensorDataset(ember.arange(n), ember.arange(n, dtype=ember.float32).reshape(n, 1) * 2)


def _to_plain(obj):
    """A library-neutral view of a collated batch: types, dtypes, shapes and values."""
    if hasattr(obj, "numpy") and hasattr(obj, "dtype"):
        return ("tensor", str(obj.dtype).replace("torch.", ""), tuple(obj.shape),
                obj.detach().numpy().tolist())
    if isinstance(obj, dict):
        return ("dict", {k: _to_plain(v) for k, v in obj.items()})
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return ("namedtuple", type(obj).__name__, [_to_plain(v) for v in obj])
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [_to_plain(v) for v in obj])
    if isinstance(obj, np.ndarray):
        return ("ndarray", obj.tolist())
    return (type(obj).__name__, obj)


def _samples(lib):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(3)]
    return {
        "tensors": [lib.tensor(a) for a in arrays],
        "numpy": [a.copy() for a in arrays],
        "numpy scalars": [np.float32(1.5), np.float32(2.5)],
        "floats": [1.0, 2.5, 3.0],
        "ints": [1, 2, 3],
        "bools": [True, False],
        "strings": ["a", "b"],
        "tuples": [(lib.tensor(arrays[i]), i, "s%d" % i) for i in range(3)],
        "lists": [[1.0, 2], [3.0, 4]],
        "dicts": [{"x": lib.tensor(arrays[i]), "label": i, "meta": {"w": 0.5 * i}}
                  for i in range(3)],
        "namedtuples": [Point(lib.tensor([float(i)]), i) for i in range(3)],
        "int64 tensors": [lib.tensor([i, i + 1]) for i in range(3)],
    }


@pytest.mark.parametrize("kind", list(_samples(ember)))
def test_default_collate_matches_torch(torch, kind):
    from torch.utils.data import default_collate as torch_collate
    mine = default_collate(_samples(ember)[kind])
    theirs = torch_collate(_samples(torch)[kind])
    assert _to_plain(mine) == _to_plain(theirs)


def test_default_convert_matches_torch(torch):
    from torch.utils.data import default_convert as torch_convert
    sample = {"a": np.arange(3), "b": (np.ones(2, np.float32), "s"), "c": 1.5}
    assert _to_plain(default_convert(sample)) == _to_plain(torch_convert(sample))


def test_collate_errors():
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        default_collate([ember.ones(2), ember.ones(3)])
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal"):
        default_collate([[1, 2], [1]])
    with pytest.raises(TypeError, match="default_collate: batch must contain"):
        default_collate([object(), object()])


def _order(loader):
    return [b[0].tolist() for b in loader]


def test_shuffle_is_reproducible_with_a_generator():
    ds = _dataset(20)
    a = _order(DataLoader(ds, batch_size=4, shuffle=True,
                          generator=ember.Generator().manual_seed(7)))
    b = _order(DataLoader(ds, batch_size=4, shuffle=True,
                          generator=ember.Generator().manual_seed(7)))
    c = _order(DataLoader(ds, batch_size=4, shuffle=True,
                          generator=ember.Generator().manual_seed(8)))
    assert a == b and a != c
    assert sorted(sum(a, [])) == list(range(20))
    loader = DataLoader(ds, batch_size=4, shuffle=True, generator=ember.Generator().manual_seed(7))
    assert _order(loader) != _order(loader)     # a new permutation every epoch


def test_shuffle_follows_the_global_seed():
    ds = _dataset(20)
    ember.manual_seed(3)
    a = _order(DataLoader(ds, batch_size=5, shuffle=True))
    ember.manual_seed(3)
    b = _order(DataLoader(ds, batch_size=5, shuffle=True))
    assert a == b


def test_batches_len_and_drop_last(torch):
    import torch.utils.data as tud
    for kwargs in [dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=5),
                   dict(batch_size=None)]:
        mine = DataLoader(_dataset(10), **kwargs)
        theirs = tud.DataLoader(tud.TensorDataset(torch.arange(10),
                                                  torch.arange(10.).reshape(10, 1) * 2), **kwargs)
        assert len(mine) == len(theirs)
        assert [_to_plain(b) for b in mine] == [_to_plain(b) for b in theirs]


def test_sampler_batch_sampler_and_collate_fn():
    ds = _dataset(6)
    loader = DataLoader(ds, sampler=[5, 0, 3], batch_size=2)
    assert _order(loader) == [[5, 0], [3]]
    loader = DataLoader(ds, batch_sampler=[[1, 2], [0], [4, 5, 3]])
    assert _order(loader) == [[1, 2], [0], [4, 5, 3]]
    loader = DataLoader(ds, batch_size=4, collate_fn=lambda batch: len(batch))
    assert list(loader) == [4, 2]


def test_dataloader_argument_errors():
    ds = _dataset(4)
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        DataLoader(ds, sampler=[0, 1], shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        DataLoader(ds, batch_sampler=[[0]], batch_size=2)
    with pytest.raises(ValueError, match="mutually exclusive with drop_last"):
        DataLoader(ds, batch_size=None, drop_last=True)
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="expected unspecified shuffle"):
        DataLoader(_Stream(4), shuffle=True)


def test_samplers(torch):
    import torch.utils.data as tud
    assert list(SequentialSampler(range(4))) == list(tud.SequentialSampler(range(4)))
    for drop_last in (False, True):
        mine = BatchSampler(SequentialSampler(range(7)), 3, drop_last)
        theirs = tud.BatchSampler(tud.SequentialSampler(range(7)), 3, drop_last)
        assert list(mine) == list(theirs) and len(mine) == len(theirs)
    g = ember.Generator().manual_seed(0)
    assert sorted(RandomSampler(range(9), generator=g)) == list(range(9))
    drawn = list(RandomSampler(range(3), replacement=True, num_samples=50, generator=g))
    assert len(drawn) == 50 and set(drawn) <= {0, 1, 2}
    assert len(list(RandomSampler(range(4), num_samples=10, generator=g))) == 10
    assert sorted(SubsetRandomSampler([3, 5, 7], generator=g)) == [3, 5, 7]
    w = list(WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 200, generator=g))
    assert set(w) == {1, 3} and 100 < w.count(3) < 190
    assert sorted(WeightedRandomSampler([1, 1, 1, 1], 4, replacement=False, generator=g)) == \
        [0, 1, 2, 3]
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        WeightedRandomSampler([1.0], 0)
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        BatchSampler(range(3), 0, False)


def test_datasets_match_torch(torch):
    import torch.utils.data as tud
    mine = ConcatDataset([_dataset(3), Subset(_dataset(10), [9, 2, 4])])
    theirs = tud.ConcatDataset([
        tud.TensorDataset(torch.arange(3), torch.arange(3.).reshape(3, 1) * 2),
        tud.Subset(tud.TensorDataset(torch.arange(10), torch.arange(10.).reshape(10, 1) * 2),
                   [9, 2, 4])])
    assert len(mine) == len(theirs) == 6
    for i in range(-6, 6):
        assert _to_plain(mine[i]) == _to_plain(theirs[i])
    assert mine.cumulative_sizes == theirs.cumulative_sizes
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(ember.ones(3), ember.ones(4))
    with pytest.raises(AssertionError, match="empty iterable"):
        ConcatDataset([])


def test_random_split(torch):
    import torch.utils.data as tud
    ds = _dataset(11)
    for lengths in ([3, 8], [0.5, 0.3, 0.2], [0.25, 0.75]):
        mine = random_split(ds, lengths, generator=ember.Generator().manual_seed(0))
        theirs = tud.random_split(range(11), lengths, generator=torch.Generator().manual_seed(0))
        assert [len(s) for s in mine] == [len(s) for s in theirs]
        assert sorted(i for s in mine for i in s.indices) == list(range(11))
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(ds, [3, 3])


class _Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))

    def __len__(self):
        return self.n


class _Faulty(Dataset):
    def __getitem__(self, i):
        if i == 5:
            raise ValueError("sample %d is corrupt" % i)
        return i

    def __len__(self):
        return 8


class _WhoLoads(Dataset):
    def __getitem__(self, i):
        info = get_worker_info()
        return -1 if info is None else info.id

    def __len__(self):
        return 8


def _no_children():
    import time
    for attempt in range(100):
        if not multiprocessing.active_children():
            return True
        if attempt == 50:       # (a loader another test left in a reference cycle: its
            gc.collect()        # workers go when the collector frees it, as torch's)
        time.sleep(0.05)
    return False


def test_iterable_dataset_single_process():
    assert [b.tolist() for b in DataLoader(_Stream(7), batch_size=3)] == [[0, 1, 2], [3, 4, 5],
                                                                         [6]]
    assert len(DataLoader(_Stream(7), batch_size=3, drop_last=True)) == 2
    assert [int(b) for b in DataLoader(_Stream(3), batch_size=None)] == [0, 1, 2]


def test_workers_give_the_same_batches():
    ds = _dataset(23)
    for kwargs in (dict(batch_size=4), dict(batch_size=4, shuffle=True, drop_last=True)):
        single = _order(DataLoader(ds, generator=ember.Generator().manual_seed(1), **kwargs))
        multi = _order(DataLoader(ds, num_workers=2, generator=ember.Generator().manual_seed(1),
                                  **kwargs))
        assert single == multi
    assert [int(v) for b in DataLoader(_WhoLoads(), batch_size=2, num_workers=2) for v in b] == \
        [0, 0, 1, 1, 0, 0, 1, 1]
    assert get_worker_info() is None
    assert _no_children()


def test_iterable_dataset_with_workers():
    batches = [b.tolist() for b in DataLoader(_Stream(10), batch_size=2, num_workers=2)]
    assert sorted(sum(batches, [])) == list(range(10))
    assert batches[0] == [0, 2] and batches[1] == [1, 3]
    for n, workers in ((7, 3), (1, 3), (0, 2)):
        batches = [b.tolist() for b in DataLoader(_Stream(n), batch_size=2, num_workers=workers,
                                                  prefetch_factor=4)]
        assert sorted(sum(batches, [])) == list(range(n))
    assert _no_children()


def test_worker_error_reaches_main_process_with_traceback():
    loader = DataLoader(_Faulty(), batch_size=2, num_workers=2)
    with pytest.raises(ValueError) as info:
        list(loader)
    text = str(info.value)
    assert "Caught ValueError in DataLoader worker process" in text
    assert "Original Traceback" in text and "sample 5 is corrupt" in text
    assert "__getitem__" in text
    assert _no_children()


def test_breaking_early_leaves_no_orphans():
    it = iter(DataLoader(_dataset(40), batch_size=2, num_workers=2))
    next(it)
    del it
    gc.collect()
    assert _no_children()


def _init(worker_id):
    if worker_id == 1:
        raise RuntimeError("init failed in worker %d" % worker_id)


def test_worker_init_fn_error_is_reported():
    with pytest.raises(RuntimeError, match="init failed in worker 1"):
        list(DataLoader(_dataset(8), batch_size=2, num_workers=2, worker_init_fn=_init))
    assert _no_children()
