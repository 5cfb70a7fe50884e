"""Reproducible data loading (PyTorch "Reproducibility" notes, torch.utils.data docs, Lightning's
seed_everything idiom): a torch.Generator passed to DataLoader / random_split / RandomSampler /
WeightedRandomSampler / SubsetRandomSampler, random_split with fractions, the seed_worker
worker_init_fn, BatchSampler, default_collate and default_convert on mixed batches, and a
pad_sequence collate_fn."""
import collections
import importlib
import os
import random

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
data = importlib.import_module(LIB + ".utils.data")
rnn = importlib.import_module(LIB + ".nn.utils.rnn")


def seed_worker(worker_id):
    worker_seed = torch.initial_seed() % 2**32
    np.random.seed(worker_seed)
    random.seed(worker_seed)


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


seed_everything(0)
X = torch.randn(12, 3)
Y = torch.randint(0, 3, (12,))
ds = data.TensorDataset(X, Y)

g = torch.Generator()
g.manual_seed(0)
loader = data.DataLoader(ds, batch_size=5, shuffle=True, worker_init_fn=seed_worker, generator=g)
for xb, yb in loader:
    print(yb, xb[:, 0])
g.manual_seed(0)
print([yb.tolist() for _, yb in loader])
print([yb.tolist() for _, yb in loader])

torch.manual_seed(1)
print([yb.tolist() for _, yb in data.DataLoader(ds, batch_size=6, shuffle=True)])
print(torch.rand(1))

train, val = data.random_split(ds, [0.75, 0.25], generator=torch.Generator().manual_seed(42))
print(len(train), len(val), train.indices, val.indices)
parts = data.random_split(range(10), [0.3, 0.3, 0.4], generator=torch.Generator().manual_seed(1))
print([list(p) for p in parts])
parts = data.random_split(range(7), [0.5, 0.5], generator=torch.Generator().manual_seed(3))
print([len(p) for p in parts], [list(p) for p in parts])
parts = data.random_split(range(5), [2, 3], generator=torch.Generator().manual_seed(3))
print([list(p) for p in parts])
try:
    data.random_split(range(5), [2, 2])
except Exception as e:
    print(type(e).__name__, e)
try:
    data.random_split(range(5), [0.5, 0.6])
except Exception as e:
    print(type(e).__name__, e)

gen = torch.Generator().manual_seed(7)
print(list(data.RandomSampler(range(6), generator=gen)))
print(list(data.RandomSampler(range(6), replacement=True, num_samples=8, generator=gen)))
print(list(data.RandomSampler(range(4), num_samples=10, generator=gen)))
print(len(data.RandomSampler(range(6), num_samples=3)))
print(list(data.SequentialSampler(range(4))))
print(list(data.SubsetRandomSampler([10, 20, 30, 40], generator=gen)))
ws = data.WeightedRandomSampler([0.1, 0.9, 0.4, 0.7], num_samples=6, replacement=True,
                                generator=gen)
print(list(ws), len(ws))
print(list(data.WeightedRandomSampler(torch.tensor([1.0, 1.0, 5.0]), 3, replacement=False,
                                      generator=gen)))
try:
    data.WeightedRandomSampler([0.5, 0.5], num_samples=-1)
except Exception as e:
    print(type(e).__name__, e)
print(list(data.BatchSampler(data.SequentialSampler(range(10)), batch_size=3, drop_last=False)))
print(list(data.BatchSampler(data.SequentialSampler(range(10)), batch_size=3, drop_last=True)))
print(len(data.BatchSampler(range(10), 4, False)), len(data.BatchSampler(range(10), 4, True)))
bs = data.BatchSampler(data.RandomSampler(ds, generator=torch.Generator().manual_seed(5)), 4,
                       False)
print([yb.tolist() for _, yb in data.DataLoader(ds, batch_sampler=bs)])
print([b.tolist() for b in data.DataLoader(range(7), sampler=ws, batch_size=4)])

Sample = collections.namedtuple("Sample", ["image", "label", "meta"])
batch = [Sample(np.ones((2, 2), dtype=np.float32) * i, i, {"id": f"s{i}", "w": 0.5 * i})
         for i in range(3)]
out = data.default_collate(batch)
print(type(out).__name__, out.image.dtype, out.image.shape, out.label, out.meta)
print(data.default_collate([(1, (2.0, "a")), (3, (4.0, "b"))]))
print(data.default_collate([np.int64(3), np.int64(4)]))
print(data.default_collate([np.array(1.5), np.array(2.5)]))
print(data.default_convert(np.arange(3)))
print(data.default_convert({"a": np.zeros(2), "b": [np.ones(1)], "c": "x", "d": 1}))
print(data.default_convert(Sample(np.ones(1), 2, "m")))
try:
    data.default_collate([object(), object()])
except Exception as e:
    print(type(e).__name__, str(e).split(";")[0][:60])
try:
    data.default_collate([torch.zeros(2), torch.zeros(3)])
except Exception as e:
    print(type(e).__name__, e)


def pad_collate(batch):
    seqs = [s for s, _ in batch]
    lengths = torch.tensor([len(s) for s in seqs])
    labels = torch.tensor([lab for _, lab in batch])
    padded = rnn.pad_sequence(seqs, batch_first=True, padding_value=0)
    return padded, lengths, labels


torch.manual_seed(3)
seqs = [(torch.randint(1, 9, (int(n),)), i % 2) for i, n in enumerate(torch.randint(1, 6, (5,)))]
for padded, lengths, labels in data.DataLoader(seqs, batch_size=3, collate_fn=pad_collate):
    print(padded, lengths, labels)
    packed = rnn.pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
    print(packed.batch_sizes, packed.sorted_indices)
print(rnn.pad_sequence([torch.ones(2), torch.ones(3)], padding_value=-1))
print(rnn.pad_sequence([torch.ones(2), torch.ones(3)], batch_first=True, padding_side="left"))
print("RESULT:", torch.initial_seed(), torch.rand(1).item() > 0)
