"""Custom samplers as public repos write them: ufoym/imbalanced-dataset-sampler's
ImbalancedDatasetSampler (inverse class-frequency weights through torch.multinomial), a
length-grouped BatchSampler (HF Trainer's LengthGroupedSampler idea, shrunk), a
Sampler passed to DataLoader(batch_sampler=...) with len(), samplers over Subset /
ConcatDataset from random_split with fractions, and DataLoader's mutually-exclusive
argument errors."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
data = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".utils.data")


class ImbalancedDatasetSampler(data.Sampler):
    def __init__(self, dataset, labels, indices=None, num_samples=None, generator=None):
        self.indices = list(range(len(dataset))) if indices is None else indices
        self.num_samples = len(self.indices) if num_samples is None else num_samples
        counts = torch.bincount(labels[self.indices])
        self.weights = (1.0 / counts[labels[self.indices]]).double()
        self.generator = generator

    def __iter__(self):
        picks = torch.multinomial(self.weights, self.num_samples, replacement=True,
                                  generator=self.generator)
        return (self.indices[i] for i in picks.tolist())

    def __len__(self):
        return self.num_samples


class LengthGroupedBatchSampler(data.Sampler):
    def __init__(self, lengths, batch_size, mega=4, generator=None):
        self.lengths, self.batch_size, self.mega, self.generator = lengths, batch_size, mega, \
            generator

    def __iter__(self):
        perm = torch.randperm(len(self.lengths), generator=self.generator).tolist()
        size = self.batch_size * self.mega
        for s in range(0, len(perm), size):
            group = sorted(perm[s:s + size], key=lambda i: -self.lengths[i])
            for b in range(0, len(group), self.batch_size):
                yield group[b:b + self.batch_size]

    def __len__(self):
        return (len(self.lengths) + self.batch_size - 1) // self.batch_size


g = torch.Generator().manual_seed(3)
labels = torch.tensor([0] * 12 + [1] * 3 + [2] * 1)
feats = torch.arange(16.0).unsqueeze(1)
ds = data.TensorDataset(feats, labels)
sampler = ImbalancedDatasetSampler(ds, labels, generator=g)
loader = data.DataLoader(ds, batch_size=4, sampler=sampler)
seen = torch.cat([y for _, y in loader])
print(len(loader), seen.tolist(), torch.bincount(seen, minlength=3).tolist())
print([round(w, 4) for w in sampler.weights[[0, 12, 15]].tolist()])

torch.manual_seed(11)
lengths = torch.randint(1, 30, (22,)).tolist()
bs = LengthGroupedBatchSampler(lengths, 3, generator=torch.Generator().manual_seed(0))
seqs = [torch.ones(n) * i for i, n in enumerate(lengths)]


def pad(batch):
    return torch.nn.utils.rnn.pad_sequence(batch, batch_first=True)


loader = data.DataLoader(seqs, batch_sampler=bs, collate_fn=pad)
print(len(loader), [tuple(b.shape) for b in loader])
print(loader.batch_size, loader.drop_last, type(loader.sampler).__name__)

base = data.TensorDataset(torch.arange(10))
train, val, test = data.random_split(base, [0.5, 0.3, 0.2],
                                     generator=torch.Generator().manual_seed(42))
print(len(train), len(val), len(test), train.indices, val.indices, test.indices)
odd = data.random_split(range(7), [0.5, 0.5], generator=torch.Generator().manual_seed(1))
print([list(s) for s in odd])
both = data.ConcatDataset([train, test])
print(len(both), both.cumulative_sizes, [int(both[i][0]) for i in (0, 4, 5, -1)])
rs = data.RandomSampler(both, replacement=True, num_samples=5,
                        generator=torch.Generator().manual_seed(9))
print(list(rs), len(rs))
print(list(data.BatchSampler(data.SequentialSampler(val), 2, drop_last=False)))
print(list(data.BatchSampler(range(5), 2, drop_last=True)))

for kw in ({"sampler": sampler, "shuffle": True},
           {"batch_sampler": bs, "batch_size": 2},
           {"batch_sampler": bs, "drop_last": True},
           {"batch_size": None, "drop_last": True}):
    try:
        data.DataLoader(ds, **kw)
        print("no error")
    except ValueError as e:
        print(type(e).__name__, e)
for bad in (lambda: data.random_split(base, [0.5, 0.6]),
            lambda: data.random_split(base, [3, 3]),
            lambda: data.BatchSampler(range(3), 0, False),
            lambda: data.RandomSampler(base, num_samples=0),
            lambda: both[20]):
    try:
        bad()
        print("no error")
    except Exception as e:
        print(type(e).__name__, e)
