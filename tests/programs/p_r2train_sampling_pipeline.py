"""Data-pipeline recipes from training scripts: class-balanced sampling with
WeightedRandomSampler (the "imbalanced dataset" blog post), DistributedSampler sharding with
set_epoch/drop_last as each rank sees it, a length-bucketing batch sampler with a padding
collate_fn (pad_sequence + lengths), StackDataset, dataset + dataset, random_split with
fractions, nested Subsets, and the DataLoader's argument errors."""
import importlib
import os
import warnings

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
data = importlib.import_module(LIB + ".utils.data")
rnn_utils = importlib.import_module(LIB + ".nn.utils.rnn")
DistributedSampler = importlib.import_module(LIB + ".utils.data.distributed").DistributedSampler

torch.manual_seed(0)
labels = torch.cat([torch.zeros(40), torch.ones(8), torch.full((2,), 2.0)]).long()
features = torch.randn(50, 3)
dataset = data.TensorDataset(features, labels)
class_sample_count = torch.tensor([(labels == t).sum() for t in torch.unique(labels,
                                                                           sorted=True)])
weight = 1. / class_sample_count.float()
samples_weight = torch.tensor([weight[t] for t in labels])
print(class_sample_count, weight, samples_weight.dtype, samples_weight.shape)
sampler = data.WeightedRandomSampler(samples_weight, len(samples_weight))
print(sampler.num_samples, sampler.replacement, len(sampler))
loader = data.DataLoader(dataset, batch_size=10, sampler=sampler)
seen = []
for i, (x, y) in enumerate(loader):
    seen.append(y)
    print("batch index {}, 0/1/2: {}/{}/{}".format(
        i, len(torch.where(y == 0)[0]), len(torch.where(y == 1)[0]), len(torch.where(y == 2)[0])))
print(torch.bincount(torch.cat(seen), minlength=3))
g = torch.Generator().manual_seed(3)
wrs = data.WeightedRandomSampler([0.1, 0.9, 0.4, 0.7, 3.0, 0.6], 5, replacement=False,
                                 generator=g)
print(list(wrs), list(wrs))
for bad in [dict(weights=[[0.1, 0.2]], num_samples=2), dict(weights=[0.1, 0.2], num_samples=0),
            dict(weights=[0.1, 0.2], num_samples=2, replacement=1)]:
    try:
        data.WeightedRandomSampler(**bad)
    except (ValueError, TypeError) as e:
        print(type(e).__name__, e)

# DistributedSampler as each of 3 ranks sees it (no process group needed with explicit args)
small = data.TensorDataset(torch.arange(10))
for drop_last in (False, True):
    for epoch in range(2):
        shards = []
        for rank in range(3):
            s = DistributedSampler(small, num_replicas=3, rank=rank, shuffle=True, seed=7,
                                   drop_last=drop_last)
            s.set_epoch(epoch)
            shards.append(list(s))
        print(drop_last, epoch, shards, s.num_samples, s.total_size, len(s))
s = DistributedSampler(small, num_replicas=4, rank=1, shuffle=False)
print(list(s), [b[0].tolist() for b in data.DataLoader(small, batch_size=2, sampler=s)])
try:
    DistributedSampler(small, num_replicas=2, rank=2)
except ValueError as e:
    print(type(e).__name__, e)


class BucketBatchSampler(data.Sampler):
    """Batches of similar lengths (sorted within shuffled chunks), as seq2seq scripts use."""

    def __init__(self, lengths, batch_size, generator=None):
        self.lengths = lengths
        self.batch_size = batch_size
        self.generator = generator

    def __iter__(self):
        order = torch.randperm(len(self.lengths), generator=self.generator).tolist()
        chunks = [order[i:i + 2 * self.batch_size]
                  for i in range(0, len(order), 2 * self.batch_size)]
        batches = []
        for chunk in chunks:
            chunk.sort(key=lambda i: self.lengths[i])
            batches += [chunk[i:i + self.batch_size] for i in range(0, len(chunk),
                                                                    self.batch_size)]
        yield from batches

    def __len__(self):
        return (len(self.lengths) + self.batch_size - 1) // self.batch_size


class Sentences(data.Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(11)
        self.lengths = torch.randint(2, 9, (n,), generator=g).tolist()
        self.items = [torch.randint(1, 50, (k,), generator=g) for k in self.lengths]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i], i % 3


def pad_collate(batch):
    seqs, ys = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs])
    padded = rnn_utils.pad_sequence(seqs, batch_first=True, padding_value=0)
    return padded, lengths, torch.tensor(ys)


sents = Sentences(11)
bs = BucketBatchSampler(sents.lengths, 3, generator=torch.Generator().manual_seed(5))
loader = data.DataLoader(sents, batch_sampler=bs, collate_fn=pad_collate)
print(len(loader), sents.lengths)
for padded, lengths, ys in loader:
    print(tuple(padded.shape), lengths.tolist(), ys.tolist(), padded[0].tolist())
packed = rnn_utils.pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
print(packed.batch_sizes, packed.sorted_indices)

# composing datasets
a = data.TensorDataset(torch.arange(4))
b = data.TensorDataset(torch.arange(10, 13))
both = a + b
print(type(both).__name__, len(both), both[5], both.cumulative_sizes)
stack = data.StackDataset(features[:4], labels[:4])
print(len(stack), stack[1])
named = data.StackDataset(x=features[:4], y=labels[:4])
print(named[2]["y"], sorted(named[2]))
print(next(iter(data.DataLoader(named, batch_size=4)))["y"])
parts = data.random_split(range(10), [0.5, 0.3, 0.2], generator=torch.Generator().manual_seed(1))
print([len(p) for p in parts], [list(p) for p in parts])
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    parts = data.random_split(range(7), [0.5, 0.5],
                              generator=torch.Generator().manual_seed(1))
print([len(p) for p in parts], [str(x.message) for x in w])
try:
    data.random_split(range(10), [5, 4])
except ValueError as e:
    print(type(e).__name__, e)
sub = data.Subset(data.Subset(both, [6, 5, 4, 3, 2]), [0, 2, 4])
print([sub[i] for i in range(len(sub))], sub.dataset.indices)

for kwargs in [dict(sampler=sampler, shuffle=True), dict(batch_sampler=bs, batch_size=4),
               dict(batch_sampler=bs, drop_last=True), dict(batch_size=None, drop_last=True),
               dict(batch_sampler=bs, sampler=sampler)]:
    try:
        data.DataLoader(sents, **kwargs)
    except ValueError as e:
        print(type(e).__name__, e)
print("RESULT:", torch.bincount(torch.cat(seen), minlength=3).tolist())
