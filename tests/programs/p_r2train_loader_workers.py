"""DataLoader with worker processes, as the torch.utils.data docs and the "Reproducibility"
notes write it: the docs' range IterableDataset split across workers with get_worker_info()
(and the worker_init_fn variant), seed_worker + a seeded Generator, per-worker torch seeds,
random augmentation inside workers, persistent_workers across epochs, drop_last, ChainDataset,
prefetch_factor, and a worker exception re-raised in the main process."""
import importlib
import math
import os
import random

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
data = importlib.import_module(LIB + ".utils.data")


class MyIterableDataset(data.IterableDataset):
    def __init__(self, start, end):
        super(MyIterableDataset).__init__()
        assert end > start, "this example code only works with end >= start"
        self.start = start
        self.end = end

    def __iter__(self):
        worker_info = data.get_worker_info()
        if worker_info is None:  # single-process data loading, return the full iterator
            iter_start = self.start
            iter_end = self.end
        else:  # in a worker process
            per_worker = int(math.ceil((self.end - self.start) / float(worker_info.num_workers)))
            worker_id = worker_info.id
            iter_start = self.start + worker_id * per_worker
            iter_end = min(iter_start + per_worker, self.end)
        return iter(range(iter_start, iter_end))


class PlainRange(data.IterableDataset):
    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        return iter(range(self.start, self.end))


def worker_init_fn(worker_id):
    worker_info = data.get_worker_info()
    dataset = worker_info.dataset  # the dataset copy in this worker process
    overall_start = dataset.start
    overall_end = dataset.end
    per_worker = int(math.ceil((overall_end - overall_start) / float(worker_info.num_workers)))
    worker_id = worker_info.id
    dataset.start = overall_start + worker_id * per_worker
    dataset.end = min(dataset.start + per_worker, overall_end)


def seed_worker(worker_id):
    worker_seed = torch.initial_seed() % 2**32
    np.random.seed(worker_seed)
    random.seed(worker_seed)


class NoisyDataset(data.Dataset):
    """Random augmentation in __getitem__: depends on the worker's RNG streams."""

    def __init__(self, n):
        self.x = torch.arange(n, dtype=torch.float32)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        info = data.get_worker_info()
        wid = -1 if info is None else info.id
        noise = torch.rand(1).item()
        return {"x": self.x[i] + round(noise, 4), "np": int(np.random.randint(0, 1000)),
                "py": random.randint(0, 1000), "worker": wid}


class SeedReporter(data.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = data.get_worker_info()
        return torch.tensor([info.id, info.num_workers, info.seed - torch.initial_seed()])


class Faulty(data.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 3:
            raise KeyError(f"bad index {i}")
        return i


if __name__ == "__main__":
    ds = MyIterableDataset(start=3, end=7)
    print(list(data.DataLoader(ds, num_workers=0)))
    print(list(data.DataLoader(ds, num_workers=2)))
    ds = MyIterableDataset(start=1, end=20)
    print([b.tolist() for b in data.DataLoader(ds, num_workers=2, batch_size=3)])
    print([b.tolist() for b in data.DataLoader(ds, num_workers=2, batch_size=3,
                                                drop_last=True)])
    ds = PlainRange(start=3, end=7)
    print(list(data.DataLoader(ds, num_workers=2)))  # each worker yields everything
    print(list(data.DataLoader(ds, num_workers=2, worker_init_fn=worker_init_fn)))
    print(list(data.DataLoader(ds, num_workers=3, worker_init_fn=worker_init_fn)))

    chain = data.ChainDataset([PlainRange(0, 3), PlainRange(10, 12)])
    print(list(chain), [b.tolist() for b in data.DataLoader(chain, batch_size=2)])

    g = torch.Generator()
    g.manual_seed(0)
    loader = data.DataLoader(SeedReporter(), batch_size=1, num_workers=2,
                             worker_init_fn=seed_worker, generator=g)
    print([b.tolist() for b in loader])

    # the reproducibility recipe: same generator seed -> same shuffles and same augmentation
    runs = []
    for rep in range(2):
        g = torch.Generator()
        g.manual_seed(0)
        loader = data.DataLoader(NoisyDataset(10), batch_size=3, shuffle=True, num_workers=2,
                                 worker_init_fn=seed_worker, generator=g, prefetch_factor=2)
        epoch = []
        for batch in loader:
            epoch.append((batch["x"].tolist(), batch["np"].tolist(), batch["py"].tolist(),
                          batch["worker"].tolist()))
        runs.append(epoch)
    for row in runs[0]:
        print(row)
    print("reproducible:", runs[0] == runs[1])
    print(len(loader), loader.prefetch_factor, loader.num_workers)

    # persistent workers keep their RNG streams across epochs
    g = torch.Generator()
    g.manual_seed(3)
    loader = data.DataLoader(NoisyDataset(8), batch_size=4, shuffle=True, num_workers=2,
                             generator=g, persistent_workers=True, drop_last=True)
    for epoch in range(3):
        print(epoch, [(b["x"].tolist(), b["worker"].tolist()) for b in loader])
    print(g.initial_seed(), loader.persistent_workers)

    # main-process loading draws from the global RNG
    torch.manual_seed(5)
    loader = data.DataLoader(NoisyDataset(6), batch_size=3, shuffle=True)
    print([b["x"].tolist() for b in loader])

    loader = data.DataLoader(Faulty(), batch_size=2, num_workers=2)
    try:
        for b in loader:
            print(b)
    except KeyError as e:
        msg = str(e)
        print(type(e).__name__, msg.splitlines()[0])
        print("bad index 3" in msg)
    for kwargs in ({"num_workers": -1}, {"prefetch_factor": 2},
                   {"persistent_workers": True}):
        try:
            data.DataLoader(Faulty(), **kwargs)
        except ValueError as e:
            print(type(e).__name__, e)
    print("RESULT:", runs[0][0][0])
