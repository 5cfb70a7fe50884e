"""detectron2's data loading, shrunk: detectron2/data/samplers/distributed_sampler.py
(TrainingSampler's infinite seeded randperm stream sliced per rank with itertools.islice,
RandomSubsetTrainingSampler, RepeatFactorTrainingSampler's LVIS repeat factors with stochastic
rounding through torch.rand, InferenceSampler's _get_local_indices), grouped_batch_sampler.py's
GroupedBatchSampler, and data/common.py (DatasetFromList, MapDataset with its retry-on-None
fallback through a seeded random.Random, ToIterableDataset sharding the sampler by
get_worker_info, AspectRatioGroupedDataset bucketing by w > h) with the trivial_batch_collator
of build.py. Single process, world_size simulated per rank."""
import importlib
import itertools
import math
import os
import random
from collections import defaultdict

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
data = importlib.import_module(LIB + ".utils.data")
Sampler = data.Sampler


class TrainingSampler(Sampler):
    def __init__(self, size, shuffle=True, seed=None, rank=0, world_size=1):
        if not isinstance(size, int):
            raise TypeError(f"TrainingSampler(size=) expects an int. Got type {type(size)}.")
        if size <= 0:
            raise ValueError(f"TrainingSampler(size=) expects a positive int. Got {size}.")
        self._size, self._shuffle = size, shuffle
        self._seed = int(seed)
        self._rank, self._world_size = rank, world_size

    def __iter__(self):
        start = self._rank
        yield from itertools.islice(self._infinite_indices(), start, None, self._world_size)

    def _infinite_indices(self):
        g = torch.Generator()
        g.manual_seed(self._seed)
        while True:
            if self._shuffle:
                yield from torch.randperm(self._size, generator=g).tolist()
            else:
                yield from torch.arange(self._size).tolist()


class RandomSubsetTrainingSampler(TrainingSampler):
    def __init__(self, size, subset_ratio, shuffle=True, seed_shuffle=None, seed_subset=None,
                 rank=0, world_size=1):
        super().__init__(size=size, shuffle=shuffle, seed=seed_shuffle, rank=rank,
                         world_size=world_size)
        assert 0.0 < subset_ratio <= 1.0
        self._size_subset = int(size * subset_ratio)
        assert self._size_subset > 0
        g = torch.Generator()
        g.manual_seed(seed_subset)
        indexes_randperm = torch.randperm(self._size, generator=g)
        self._indexes_subset = indexes_randperm[: self._size_subset]

    def _infinite_indices(self):
        g = torch.Generator()
        g.manual_seed(self._seed)
        while True:
            if self._shuffle:
                randperm = torch.randperm(self._size_subset, generator=g)
                yield from self._indexes_subset[randperm].tolist()
            else:
                yield from self._indexes_subset.tolist()


class RepeatFactorTrainingSampler(Sampler):
    def __init__(self, repeat_factors, shuffle=True, seed=None, rank=0, world_size=1):
        self._shuffle, self._seed = shuffle, int(seed)
        self._rank, self._world_size = rank, world_size
        self._int_part = torch.trunc(repeat_factors)
        self._frac_part = repeat_factors - self._int_part

    @staticmethod
    def repeat_factors_from_category_frequency(dataset_dicts, repeat_thresh, sqrt=True):
        category_freq = defaultdict(int)
        for dataset_dict in dataset_dicts:
            cat_ids = {ann["category_id"] for ann in dataset_dict["annotations"]}
            for cat_id in cat_ids:
                category_freq[cat_id] += 1
        num_images = len(dataset_dicts)
        for k, v in category_freq.items():
            category_freq[k] = v / num_images
        category_rep = {
            cat_id: max(1.0, (math.sqrt(repeat_thresh / cat_freq) if sqrt
                              else (repeat_thresh / cat_freq)))
            for cat_id, cat_freq in category_freq.items()}
        rep_factors = []
        for dataset_dict in dataset_dicts:
            cat_ids = {ann["category_id"] for ann in dataset_dict["annotations"]}
            rep_factor = max({category_rep[cat_id] for cat_id in cat_ids}, default=1.0)
            rep_factors.append(rep_factor)
        return torch.tensor(rep_factors, dtype=torch.float32)

    def _get_epoch_indices(self, generator):
        rands = torch.rand(len(self._frac_part), generator=generator)
        rep_factors = self._int_part + (rands < self._frac_part).float()
        indices = []
        for dataset_index, rep_factor in enumerate(rep_factors):
            indices.extend([dataset_index] * int(rep_factor.item()))
        return torch.tensor(indices, dtype=torch.int64)

    def __iter__(self):
        yield from itertools.islice(self._infinite_indices(), self._rank, None, self._world_size)

    def _infinite_indices(self):
        g = torch.Generator()
        g.manual_seed(self._seed)
        while True:
            indices = self._get_epoch_indices(g)
            if self._shuffle:
                randperm = torch.randperm(len(indices), generator=g)
                yield from indices[randperm].tolist()
            else:
                yield from indices.tolist()


class InferenceSampler(Sampler):
    def __init__(self, size, rank=0, world_size=1):
        self._size = size
        assert size > 0
        self._local_indices = self._get_local_indices(size, world_size, rank)

    @staticmethod
    def _get_local_indices(total_size, world_size, rank):
        shard_size = total_size // world_size
        left = total_size % world_size
        shard_sizes = [shard_size + int(r < left) for r in range(world_size)]
        begin = sum(shard_sizes[:rank])
        end = min(sum(shard_sizes[: rank + 1]), total_size)
        return range(begin, end)

    def __iter__(self):
        yield from self._local_indices

    def __len__(self):
        return len(self._local_indices)


class GroupedBatchSampler(data.BatchSampler):
    def __init__(self, sampler, group_ids, batch_size):
        if not isinstance(sampler, Sampler):
            raise ValueError("sampler should be an instance of torch.utils.data.Sampler, "
                             "but got sampler={}".format(sampler))
        self.sampler, self.group_ids = sampler, np.asarray(group_ids)
        assert self.group_ids.ndim == 1
        self.batch_size = batch_size
        groups = np.unique(self.group_ids).tolist()
        self.buffer_per_group = {k: [] for k in groups}

    def __iter__(self):
        for idx in self.sampler:
            group_id = self.group_ids[idx]
            group_buffer = self.buffer_per_group[group_id]
            group_buffer.append(idx)
            if len(group_buffer) == self.batch_size:
                yield group_buffer[:]
                del group_buffer[:]

    def __len__(self):
        raise NotImplementedError("len() of GroupedBatchSampler is not well-defined.")


class DatasetFromList(data.Dataset):
    def __init__(self, lst, copy=True):
        self._lst, self._copy = lst, copy

    def __len__(self):
        return len(self._lst)

    def __getitem__(self, idx):
        return dict(self._lst[idx]) if self._copy else self._lst[idx]


class MapDataset(data.Dataset):
    def __init__(self, dataset, map_func):
        self._dataset, self._map_func = dataset, map_func
        self._rng = random.Random(42)
        self._fallback_candidates = set(range(len(dataset)))

    def __len__(self):
        return len(self._dataset)

    def __getitem__(self, idx):
        retry_count, cur_idx = 0, int(idx)
        while True:
            data_ = self._map_func(self._dataset[cur_idx])
            if data_ is not None:
                self._fallback_candidates.add(cur_idx)
                return data_
            retry_count += 1
            self._fallback_candidates.discard(cur_idx)
            cur_idx = self._rng.sample(sorted(self._fallback_candidates), k=1)[0]
            if retry_count >= 3:
                print("Failed to apply `_map_func` for idx: {}, retry count: {}".format(
                    idx, retry_count))


class ToIterableDataset(data.IterableDataset):
    def __init__(self, dataset, sampler, shard_sampler=True):
        assert not isinstance(dataset, data.IterableDataset), dataset
        assert isinstance(sampler, Sampler), sampler
        self.dataset, self.sampler, self.shard_sampler = dataset, sampler, shard_sampler

    def __iter__(self):
        if not self.shard_sampler:
            sampler = self.sampler
        else:
            worker_info = data.get_worker_info()
            if worker_info is None or worker_info.num_workers == 1:
                sampler = self.sampler
            else:
                sampler = itertools.islice(self.sampler, worker_info.id, None,
                                           worker_info.num_workers)
        for idx in sampler:
            yield self.dataset[idx]

    def __len__(self):
        return len(self.sampler)


class AspectRatioGroupedDataset(data.IterableDataset):
    def __init__(self, dataset, batch_size):
        self.dataset, self.batch_size = dataset, batch_size
        self._buckets = [[] for _ in range(2)]

    def __iter__(self):
        for d in self.dataset:
            w, h = d["width"], d["height"]
            bucket_id = 0 if w > h else 1
            bucket = self._buckets[bucket_id]
            bucket.append(d)
            if len(bucket) == self.batch_size:
                data_ = bucket[:]
                del bucket[:]
                yield data_


def trivial_batch_collator(batch):
    return batch


def main():
    for rank in range(2):
        s = TrainingSampler(7, seed=3, rank=rank, world_size=2)
        print("train rank", rank, list(itertools.islice(iter(s), 10)))
    print("no shuffle", list(itertools.islice(iter(TrainingSampler(4, shuffle=False, seed=0)), 9)))
    for bad in (3.0, 0):
        try:
            TrainingSampler(bad, seed=0)
        except (TypeError, ValueError) as e:
            print(type(e).__name__, e)
    sub = RandomSubsetTrainingSampler(10, 0.5, seed_shuffle=1, seed_subset=2)
    print("subset", sub._indexes_subset.tolist(), list(itertools.islice(iter(sub), 10)))

    g = torch.Generator().manual_seed(0)
    dicts = []
    for i in range(12):
        n_ann = int(torch.randint(1, 4, (1,), generator=g))
        cats = torch.randint(0, 5, (n_ann,), generator=g).tolist()
        dims = torch.randint(20, 60, (2,), generator=g).tolist()
        dicts.append({"image_id": i, "width": dims[0], "height": dims[1],
                      "annotations": [{"category_id": c} for c in cats]})
    dicts.append({"image_id": 12, "width": 30, "height": 30, "annotations": []})
    for sqrt in (True, False):
        rf = RepeatFactorTrainingSampler.repeat_factors_from_category_frequency(dicts, 0.3, sqrt)
        print("repeat factors sqrt", sqrt, [round(x, 4) for x in rf.tolist()])
    rs = RepeatFactorTrainingSampler(rf, seed=11)
    print("int/frac", rs._int_part.tolist(), [round(x, 4) for x in rs._frac_part.tolist()])
    ep = rs._get_epoch_indices(torch.Generator().manual_seed(5))
    print("epoch indices", ep.tolist(), ep.dtype)
    print("repeat stream", list(itertools.islice(iter(rs), 20)))
    print("repeat rank1", list(itertools.islice(iter(RepeatFactorTrainingSampler(
        rf, shuffle=False, seed=0, rank=1, world_size=3)), 12)))

    for ws in (1, 3, 5):
        print("inference ws", ws, [list(InferenceSampler(13, r, ws)) for r in range(ws)])

    ds = DatasetFromList(dicts)

    def mapper(d):
        if d["image_id"] in (2, 5):
            return None
        return {"image_id": d["image_id"], "aspect": d["width"] / d["height"],
                "width": d["width"], "height": d["height"],
                "gt": torch.tensor([a["category_id"] for a in d["annotations"]])}

    mapped = MapDataset(ds, mapper)
    print("map fallback", mapped[2]["image_id"], mapped[5]["image_id"], mapped[3]["image_id"])

    it_ds = ToIterableDataset(mapped, TrainingSampler(len(mapped), seed=4))
    grouped = AspectRatioGroupedDataset(it_ds, batch_size=3)
    loader = data.DataLoader(grouped, batch_size=None, collate_fn=trivial_batch_collator,
                             num_workers=0)
    for step, batch in enumerate(loader):
        print("aspect batch", [(b["image_id"], b["width"] > b["height"]) for b in batch],
              [b["gt"].tolist() for b in batch])
        if step == 4:
            break

    inf = ToIterableDataset(mapped, InferenceSampler(len(mapped)))
    print("len inference iterable", len(inf))
    batches = data.DataLoader(inf, batch_size=4, collate_fn=trivial_batch_collator)
    print("inference ids", [[d["image_id"] for d in b] for b in batches])

    group_ids = [0 if d["width"] > d["height"] else 1 for d in dicts]
    gbs = GroupedBatchSampler(data.RandomSampler(ds, generator=torch.Generator().manual_seed(8)),
                              group_ids, 2)
    print("grouped batch sampler", [b for b in gbs])
    try:
        len(gbs)
    except NotImplementedError as e:
        print("NotImplementedError", e)
    try:
        GroupedBatchSampler(list(range(3)), group_ids, 2)
    except ValueError as e:
        print("ValueError", str(e)[:60])
    loader = data.DataLoader(ds, batch_sampler=gbs,
                             collate_fn=lambda b: data.default_collate([x["image_id"] for x in b]))
    print("grouped loader", [t.tolist() for t in iter(loader)])


main()
