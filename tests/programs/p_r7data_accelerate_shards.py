"""Hugging Face accelerate's data_loader.py, shrunk: SeedableRandomSampler (a RandomSampler
whose generator is reseeded with initial_seed + epoch on every pass and which bumps its epoch
itself), BatchSamplerShard (split_batches / even_batches / drop_last, the "loop back to the
start" padding of uneven last batches), IterableDatasetShard (slices of real batches per
process), SkipBatchSampler (skip_first_batches for resuming), and prepare_data_loader's
rebuilding of a DataLoader around a sharded batch sampler. Each process is simulated in turn."""
import importlib
import math
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
data = importlib.import_module(LIB + ".utils.data")
BatchSampler, RandomSampler = data.BatchSampler, data.RandomSampler


class SeedableRandomSampler(RandomSampler):
    def __init__(self, *args, **kwargs):
        data_seed = kwargs.pop("data_seed", None)
        super().__init__(*args, **kwargs)
        self.initial_seed = data_seed if data_seed is not None else torch.random.initial_seed()
        self.epoch = 0

    def __iter__(self):
        if self.generator is None:
            self.generator = torch.Generator(device=torch.get_default_device())
            self.generator.manual_seed(self.initial_seed)
        seed = self.epoch + self.initial_seed
        self.generator.manual_seed(seed)
        yield from super().__iter__()
        self.set_epoch(self.epoch + 1)

    def set_epoch(self, epoch):
        self.epoch = epoch


class BatchSamplerShard(BatchSampler):
    def __init__(self, batch_sampler, num_processes=1, process_index=0, split_batches=False,
                 even_batches=True):
        if split_batches and batch_sampler.batch_size % num_processes != 0:
            raise ValueError(
                f"To use `BatchSamplerShard` in `split_batches` mode, the batch size "
                f"({batch_sampler.batch_size}) needs to be a round multiple of the number of "
                f"processes ({num_processes}).")
        self.batch_sampler = batch_sampler
        self.num_processes, self.process_index = num_processes, process_index
        self.split_batches, self.even_batches = split_batches, even_batches
        self.batch_size = getattr(batch_sampler, "batch_size", None)
        self.drop_last = getattr(batch_sampler, "drop_last", False)
        if self.batch_size is None and self.even_batches:
            raise ValueError("You need to use `even_batches=False` when the batch sampler has no "
                             "batch size. If not possible, set `split_batches=True`.")

    @property
    def total_length(self):
        return len(self.batch_sampler)

    def __len__(self):
        if self.split_batches:
            return len(self.batch_sampler)
        if len(self.batch_sampler) % self.num_processes == 0:
            return len(self.batch_sampler) // self.num_processes
        length = len(self.batch_sampler) // self.num_processes
        if self.drop_last:
            return length
        elif self.even_batches:
            return length + 1
        else:
            return (length + 1 if self.process_index < len(self.batch_sampler) % self.num_processes
                    else length)

    def __iter__(self):
        return self._iter_with_split() if self.split_batches else self._iter_with_no_split()

    def _iter_with_split(self):
        initial_data = []
        batch_length = self.batch_sampler.batch_size // self.num_processes
        for idx, batch in enumerate(self.batch_sampler):
            if idx == 0:
                initial_data = batch
            if len(batch) == self.batch_size:
                yield batch[batch_length * self.process_index:
                            batch_length * (self.process_index + 1)]
        if not self.drop_last and len(initial_data) > 0 and len(batch) < self.batch_size:
            if not self.even_batches:
                if len(batch) > batch_length * self.process_index:
                    yield batch[batch_length * self.process_index:
                                batch_length * (self.process_index + 1)]
            else:
                while len(initial_data) < self.batch_size:
                    initial_data += initial_data
                batch = batch + initial_data
                yield batch[batch_length * self.process_index:
                            batch_length * (self.process_index + 1)]

    def _iter_with_no_split(self):
        initial_data = []
        batch_to_yield = []
        for idx, batch in enumerate(self.batch_sampler):
            if not self.drop_last and idx < self.num_processes:
                initial_data += batch
            if idx % self.num_processes == self.process_index:
                batch_to_yield = batch
            if idx % self.num_processes == self.num_processes - 1 and (
                    self.batch_size is None or len(batch) == self.batch_size):
                yield batch_to_yield
                batch_to_yield = []
        if not self.drop_last and len(initial_data) > 0:
            if not self.even_batches:
                if len(batch_to_yield) > 0:
                    yield batch_to_yield
            else:
                if len(batch_to_yield) == self.batch_size:
                    yield batch_to_yield
                while len(initial_data) < self.num_processes * self.batch_size:
                    initial_data += initial_data
                if len(batch) == self.batch_size:
                    batch = []
                    idx += 1
                cycle_index = 0
                while idx % self.num_processes != 0 or len(batch) > 0:
                    end_index = cycle_index + self.batch_size - len(batch)
                    batch += initial_data[cycle_index:end_index]
                    if idx % self.num_processes == self.process_index:
                        yield batch
                    cycle_index = end_index
                    batch = []
                    idx += 1


class IterableDatasetShard(data.IterableDataset):
    def __init__(self, dataset, batch_size=1, drop_last=False, num_processes=1, process_index=0,
                 split_batches=False):
        if split_batches and batch_size > 1 and batch_size % num_processes != 0:
            raise ValueError(
                f"To use `IterableDatasetShard` in `split_batches` mode, the batch size "
                f"({batch_size}) needs to be a round multiple of the number of processes "
                f"({num_processes}).")
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.num_processes, self.process_index = num_processes, process_index
        self.split_batches = split_batches

    def __len__(self):
        if self.drop_last:
            return (len(self.dataset) // (self.batch_size * self.num_processes)) * self.batch_size
        return math.ceil(len(self.dataset) / (self.batch_size * self.num_processes)) \
            * self.batch_size

    def __iter__(self):
        real_batch_size = (self.batch_size if self.split_batches
                           else (self.batch_size * self.num_processes))
        process_batch_size = ((self.batch_size // self.num_processes) if self.split_batches
                              else self.batch_size)
        process_slice = range(self.process_index * process_batch_size,
                              (self.process_index + 1) * process_batch_size)
        first_batch = None
        current_batch = []
        for element in self.dataset:
            current_batch.append(element)
            if len(current_batch) == real_batch_size:
                for i in process_slice:
                    yield current_batch[i]
                if first_batch is None:
                    first_batch = current_batch.copy()
                current_batch = []
        if not self.drop_last and len(current_batch) > 0:
            if first_batch is None:
                first_batch = current_batch.copy()
            while len(current_batch) < real_batch_size:
                current_batch += first_batch
            for i in process_slice:
                yield current_batch[i]


class SkipBatchSampler(BatchSampler):
    def __init__(self, batch_sampler, skip_batches=0):
        self.batch_sampler, self.skip_batches = batch_sampler, skip_batches

    def __iter__(self):
        for index, samples in enumerate(self.batch_sampler):
            if index >= self.skip_batches:
                yield samples

    @property
    def total_length(self):
        return len(self.batch_sampler)

    def __len__(self):
        return len(self.batch_sampler) - self.skip_batches


class RangeStream(data.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


def prepare_data_loader(dataloader, num_processes, process_index, split_batches=False,
                        even_batches=True, skip_batches=0):
    new_batch_sampler = BatchSamplerShard(dataloader.batch_sampler, num_processes=num_processes,
                                          process_index=process_index,
                                          split_batches=split_batches, even_batches=even_batches)
    if skip_batches:
        new_batch_sampler = SkipBatchSampler(new_batch_sampler, skip_batches)
    return data.DataLoader(dataloader.dataset, batch_sampler=new_batch_sampler,
                           collate_fn=dataloader.collate_fn)


def main():
    torch.manual_seed(17)
    s = SeedableRandomSampler(range(10))
    print("initial seed", s.initial_seed)
    print("epochs", list(s), list(s), s.epoch)
    s.set_epoch(0)
    print("epoch 0 again", list(s))
    s2 = SeedableRandomSampler(range(10), data_seed=5, num_samples=4)
    print("data_seed", list(s2), len(s2), s2.epoch)

    for n, bs, drop_last in ((24, 3, False), (22, 3, False), (21, 3, False), (2, 3, False),
                             (22, 3, True), (20, 4, False)):
        bsamp = BatchSampler(range(n), bs, drop_last)
        for split in (False, True):
            if split and bs % 2:
                continue
            for even in (True, False):
                shards = [BatchSamplerShard(bsamp, 2, i, split, even) for i in range(2)]
                print(f"n={n} bs={bs} drop={drop_last} split={split} even={even}",
                      [len(sh) for sh in shards], [list(sh) for sh in shards])
    try:
        BatchSamplerShard(BatchSampler(range(8), 3, False), 2, 0, split_batches=True)
    except ValueError as e:
        print("ValueError", e)

    class NoSize:
        def __iter__(self):
            return iter([[0, 1], [2]])

        def __len__(self):
            return 2

    try:
        BatchSamplerShard(NoSize(), 2, 0)
    except ValueError as e:
        print("ValueError", e)
    print("no batch size", [list(BatchSamplerShard(NoSize(), 2, i, even_batches=False))
                            for i in range(2)])

    for n, bs, drop, split in ((10, 2, False, False), (10, 2, True, False), (9, 4, False, True),
                               (3, 2, False, False)):
        shards = [IterableDatasetShard(RangeStream(n), bs, drop, 2, i, split) for i in range(2)]
        print(f"iterable n={n} bs={bs} drop={drop} split={split}",
              [len(sh) for sh in shards], [list(sh) for sh in shards])
    try:
        IterableDatasetShard(RangeStream(4), 3, num_processes=2, split_batches=True)
    except ValueError as e:
        print("ValueError", e)

    x = torch.arange(26.0).view(13, 2)
    ds = data.TensorDataset(x, torch.arange(13))
    base = data.DataLoader(ds, batch_size=3,
                           sampler=SeedableRandomSampler(ds, data_seed=3))
    for rank in range(2):
        dl = prepare_data_loader(base, 2, rank)
        print("rank", rank, "len", len(dl), [yb.tolist() for _, yb in dl])
        print("rank", rank, "next epoch", [yb.tolist() for _, yb in dl])
    base.sampler.set_epoch(0)
    dl = prepare_data_loader(base, 2, 0, skip_batches=1)
    print("skip", len(dl), dl.batch_sampler.total_length, [yb.tolist() for _, yb in dl])
    dl = prepare_data_loader(base, 2, 1, split_batches=False, even_batches=False)
    xb, yb = next(iter(dl))
    print("first batch", xb.tolist(), yb.tolist())
    loader = data.DataLoader(IterableDatasetShard(ds, batch_size=2, num_processes=3,
                                                  process_index=2), batch_size=2)
    print("iterable shard loader", len(loader), [b[1].tolist() for b in loader])


main()
