"""PyTorch Lightning's data utilities, shrunk: lightning/fabric/utilities/seed.py
(seed_everything(workers=True) and pl_worker_init_function, which backs the base seed out of
torch.initial_seed() in each worker and derives torch / random / numpy seeds with the LCG
_generate_seed_sequence and a numpy SeedSequence), lightning/pytorch/utilities/
combined_loader.py's modes (max_size_cycle, min_size, sequential) over a dict of DataLoaders,
and the DataLoader settings Lightning passes through: num_workers=2, persistent_workers=True
over two epochs, prefetch_factor, timeout, in_order=False (results compared as a set), the
plain worker seeding torch does without a worker_init_fn (numpy seeded per worker), and a
multiprocessing_context="spawn" loader."""
import importlib
import os
import random

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
data = importlib.import_module(LIB + ".utils.data")
DataLoader = data.DataLoader

max_seed_value, min_seed_value = 4294967295, 0


def seed_everything(seed, workers=False):
    if not (min_seed_value <= seed <= max_seed_value):
        print(f"{seed} is not in bounds, numpy accepts from {min_seed_value} to {max_seed_value}")
        seed = 0
    os.environ["PL_GLOBAL_SEED"] = str(seed)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    os.environ["PL_SEED_WORKERS"] = f"{int(workers)}"
    return seed


def _generate_seed_sequence(base_seed, worker_id, global_rank, count):
    combined_seed = (base_seed << 32) | (worker_id << 16) | global_rank
    seeds = []
    for _ in range(count):
        combined_seed = (combined_seed * 6364136223846793005 + 1) & ((1 << 64) - 1)
        seeds.append(combined_seed)
    return seeds


def pl_worker_init_function(worker_id, rank=None):
    global_rank = rank if rank is not None else 0
    process_seed = torch.initial_seed()
    base_seed = process_seed - worker_id
    seed_sequence = _generate_seed_sequence(base_seed, worker_id, global_rank, count=4)
    torch.manual_seed(seed_sequence[0])
    random.seed((seed_sequence[1] << 32) | seed_sequence[2])
    ss = np.random.SeedSequence([base_seed, worker_id, global_rank])
    np_rng_seed = ss.generate_state(4)
    np.random.seed(np_rng_seed)


class Augmented(data.Dataset):
    """Random "augmentation" drawn from every RNG a transform pipeline might use."""

    def __init__(self, n):
        self.x = torch.arange(float(n))

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        info = data.get_worker_info()
        wid = -1 if info is None else info.id
        noise = torch.rand(()).item()
        return {"x": self.x[i] + round(noise, 6), "np": round(float(np.random.rand()), 6),
                "py": round(random.random(), 6), "worker": wid}


def show(tag, batch):
    print(tag, batch["x"].tolist(), batch["np"].tolist(), batch["py"].tolist(),
          batch["worker"].tolist())


class _ModeIterator:
    def __init__(self, iterables):
        self.iterables, self.iterators, self._idx = iterables, [], 0

    def __iter__(self):
        self.iterators = [iter(iterable) for iterable in self.iterables]
        self._idx = 0
        return self


class _MaxSizeCycle(_ModeIterator):
    def __next__(self):
        n = len(self.iterators)
        out = [None] * n
        for i in range(n):
            try:
                out[i] = next(self.iterators[i])
            except StopIteration:
                self._consumed[i] = True
                if all(self._consumed):
                    raise
                self.iterators[i] = iter(self.iterables[i])
                out[i] = next(self.iterators[i])
        index = self._idx
        self._idx += 1
        return out, index, 0

    def __iter__(self):
        super().__iter__()
        self._consumed = [False] * len(self.iterables)
        return self

    def __len__(self):
        return max(len(it) for it in self.iterables)


class _MinSize(_ModeIterator):
    def __next__(self):
        out = [next(it) for it in self.iterators]
        index = self._idx
        self._idx += 1
        return out, index, 0

    def __len__(self):
        return min(len(it) for it in self.iterables)


class _Sequential(_ModeIterator):
    def __next__(self):
        n = len(self.iterables)
        if n == 0 or self._iterator_idx >= n:
            raise StopIteration
        try:
            out = next(self.iterators[0])
            index = self._idx
            self._idx += 1
            return out, index, self._iterator_idx
        except StopIteration:
            self._iterator_idx += 1
            self._idx = 0
            self._load_current_iterator()
            return self.__next__()

    def __iter__(self):
        self._iterator_idx = 0
        self._idx = 0
        self._load_current_iterator()
        return self

    def _load_current_iterator(self):
        if self._iterator_idx < len(self.iterables):
            self.iterators = [iter(self.iterables[self._iterator_idx])]
        else:
            self.iterators = []

    def __len__(self):
        return sum(len(it) for it in self.iterables)


_SUPPORTED_MODES = {"min_size": _MinSize, "max_size_cycle": _MaxSizeCycle,
                    "sequential": _Sequential}


class CombinedLoader:
    def __init__(self, iterables, mode="min_size"):
        if mode not in _SUPPORTED_MODES:
            raise ValueError(f"Unsupported mode {mode!r}, please select one of: "
                             f"{list(_SUPPORTED_MODES)}.")
        self._keys = list(iterables)
        self._flattened = [iterables[k] for k in self._keys]
        self._mode = mode
        self._iterator = None

    def __iter__(self):
        self._iterator = iter(_SUPPORTED_MODES[self._mode](self._flattened))
        return self

    def __next__(self):
        out, batch_idx, dataloader_idx = next(self._iterator)
        if self._mode == "sequential":
            return out, batch_idx, dataloader_idx
        return dict(zip(self._keys, out)), batch_idx, dataloader_idx

    def __len__(self):
        return len(_SUPPORTED_MODES[self._mode](self._flattened))


def main():
    print("seed", seed_everything(123, workers=True), os.environ["PL_SEED_WORKERS"])
    print("out of bounds ->", seed_everything(-1))
    print("lcg", _generate_seed_sequence(1234, 1, 0, 3))
    seed_everything(7)
    ds = Augmented(8)

    loader = DataLoader(ds, batch_size=2, num_workers=2, worker_init_fn=pl_worker_init_function,
                        generator=torch.Generator().manual_seed(11), prefetch_factor=3,
                        timeout=20)
    for i, b in enumerate(loader):
        show(f"pl seeded {i}", b)

    plain = DataLoader(ds, batch_size=2, num_workers=2,
                       generator=torch.Generator().manual_seed(11))
    for i, b in enumerate(plain):
        show(f"torch-seeded {i}", b)

    persistent = DataLoader(ds, batch_size=3, shuffle=True, num_workers=2,
                            persistent_workers=True, worker_init_fn=pl_worker_init_function,
                            generator=torch.Generator().manual_seed(5))
    for epoch in range(2):
        for i, b in enumerate(persistent):
            show(f"persistent epoch {epoch} step {i}", b)
    print("same workers object", persistent._iterator is not None)

    unordered = DataLoader(ds, batch_size=2, num_workers=2, in_order=False,
                           worker_init_fn=pl_worker_init_function,
                           generator=torch.Generator().manual_seed(2))
    rows = sorted((b["x"].tolist(), b["worker"].tolist()) for b in unordered)
    print("in_order=False as a set", rows)

    for bad in (dict(prefetch_factor=2), dict(persistent_workers=True)):
        try:
            DataLoader(ds, **bad)
        except ValueError as e:
            print("ValueError", e)

    spawn = DataLoader(data.TensorDataset(torch.arange(6).view(3, 2)), batch_size=2,
                       num_workers=1, multiprocessing_context="spawn",
                       worker_init_fn=pl_worker_init_function,
                       generator=torch.Generator().manual_seed(0))
    print("spawn", [b[0].tolist() for b in spawn])

    seed_everything(3)
    loaders = {"a": DataLoader(range(5), batch_size=2),
               "b": DataLoader(range(10, 17), batch_size=3, shuffle=True)}
    for mode in ("min_size", "max_size_cycle", "sequential"):
        combined = CombinedLoader(loaders, mode)
        print(mode, "len", len(combined))
        for batch, batch_idx, dl_idx in combined:
            if isinstance(batch, dict):
                print(" ", batch_idx, dl_idx, {k: v.tolist() for k, v in batch.items()})
            else:
                print(" ", batch_idx, dl_idx, batch.tolist())
    try:
        CombinedLoader(loaders, "zip")
    except ValueError as e:
        print("ValueError", e)


if __name__ == "__main__":
    main()
