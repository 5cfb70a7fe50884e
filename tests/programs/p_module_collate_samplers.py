"""Collation and sampling recipes: default_collate of dicts/tuples/namedtuples/NumPy arrays/ints/
strings, a padding collate_fn for variable-length sequences, the samplers (Random, Sequential,
Batch, WeightedRandom, SubsetRandom) and random_split with a seeded generator."""
import collections
import importlib
import os

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
data = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".utils.data")
rnn_utils = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.utils.rnn")
default_collate = data.default_collate

Point = collections.namedtuple("Point", ["x", "y"])
batch = [{"a": np.array([1.0, 2.0]), "b": 3, "c": "s0", "d": 0.5},
         {"a": np.array([3.0, 4.0]), "b": 4, "c": "s1", "d": 1.5}]
out = default_collate(batch)
print(sorted(out.keys()))
print(out["a"], out["a"].dtype)
print(out["b"], out["b"].dtype)
print(out["c"])
print(out["d"], out["d"].dtype)
pts = default_collate([Point(1, 2.0), Point(3, 4.0)])
print(type(pts).__name__, pts.x, pts.y)
tup = default_collate([(torch.ones(2), 1), (torch.zeros(2), 0)])
print(type(tup).__name__, tup[0], tup[1])
print(default_collate([[1, 2], [3, 4]]))
print(default_collate([np.float32(1.5), np.float32(2.5)]))
print(default_collate([True, False]))
print(data.default_convert(np.arange(3)))
print(data.default_convert({"k": np.ones(2, dtype=np.float32)}))

# a collate_fn for variable-length data
torch.manual_seed(0)
seqs = [torch.randn(n, 2) for n in (3, 1, 4, 2)]
labels = torch.tensor([0, 1, 1, 0])


class VarLen(data.Dataset):
    def __len__(self):
        return len(seqs)

    def __getitem__(self, i):
        return seqs[i], labels[i]


def pad_collate(batch):
    xs, ys = zip(*batch)
    lens = torch.tensor([len(x) for x in xs])
    padded = rnn_utils.pad_sequence(xs, batch_first=True, padding_value=0.0)
    return padded, lens, torch.stack(ys)


for xb, lens, yb in data.DataLoader(VarLen(), batch_size=2, collate_fn=pad_collate):
    print(xb.shape, lens.tolist(), yb.tolist())
    print(xb)

# samplers
g = torch.Generator().manual_seed(42)
print(list(data.SequentialSampler(range(5))))
print(list(data.RandomSampler(range(8), generator=g)))
print(list(data.RandomSampler(range(8), replacement=True, num_samples=5, generator=g)))
print(list(data.BatchSampler(data.SequentialSampler(range(10)), batch_size=3, drop_last=False)))
print(list(data.BatchSampler(range(10), batch_size=3, drop_last=True)))
print(len(data.BatchSampler(range(10), batch_size=3, drop_last=False)))
w = [0.1, 0.9, 0.4, 0.7, 3.0, 0.6]
ws = data.WeightedRandomSampler(w, num_samples=10, replacement=True, generator=g)
print(list(ws), len(ws))
print(list(data.WeightedRandomSampler(torch.tensor(w), 4, replacement=False, generator=g)))
print(list(data.SubsetRandomSampler([10, 20, 30, 40], generator=g)))
torch.manual_seed(3)
print(list(data.RandomSampler(range(6))))
print(list(data.SubsetRandomSampler([5, 6, 7])))

# class-balanced sampling as in many imbalanced-data blog posts
targets = torch.tensor([0, 0, 0, 0, 1, 1, 2, 0, 0, 1])
class_count = torch.bincount(targets)
weights = 1.0 / class_count.float()
sample_weights = weights[targets]
print(sample_weights)
sampler = data.WeightedRandomSampler(sample_weights, num_samples=len(sample_weights),
                                     generator=torch.Generator().manual_seed(0))
tds = data.TensorDataset(torch.arange(10), targets)
for xb, yb in data.DataLoader(tds, batch_size=5, sampler=sampler):
    print(xb.tolist(), yb.tolist())

bs = data.BatchSampler(data.RandomSampler(tds, generator=torch.Generator().manual_seed(1)), 4,
                       False)
for xb, yb in data.DataLoader(tds, batch_sampler=bs):
    print(xb.tolist())

# random_split
full = data.TensorDataset(torch.arange(10).float())
train, val = data.random_split(full, [7, 3], generator=torch.Generator().manual_seed(42))
print(len(train), len(val), train.indices, val.indices)
parts = data.random_split(range(10), [0.5, 0.3, 0.2], generator=torch.Generator().manual_seed(42))
print([list(p) for p in parts])
parts = data.random_split(range(11), [0.5, 0.5], generator=torch.Generator().manual_seed(0))
print([list(p) for p in parts])
torch.manual_seed(5)
a, b = data.random_split(range(6), [4, 2])
print(list(a), list(b))
print("RESULT: ok")
