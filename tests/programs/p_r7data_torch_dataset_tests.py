"""pytorch/pytorch test/test_dataloader.py's dataset tests, shrunk to printed checks:
TestDatasetRandomSplit (fractions with the round-robin remainder, the "Length of split at
index i is 0" warning, bad fractions / lengths, a seeded generator, Subset of a Subset and
random_split of a Subset, splitting a range), TestTensorDataset (size mismatch), TestStackDataset
(tuple and dict forms, __getitems__ on datasets that have it and that return the wrong count,
the mixed args/kwargs and size errors), TestConcatDataset (cumulative_sizes + bisect, negative
indices, the index errors, iterable inputs refused, ds + ds) and ChainDataset (len, non-iterable
member), plus SubsetRandomSampler / WeightedRandomSampler draws with seeded generators."""
import importlib
import os
import warnings

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
data = importlib.import_module(LIB + ".utils.data")
(ConcatDataset, ChainDataset, StackDataset, Subset, TensorDataset, IterableDataset, Dataset,
 random_split) = (data.ConcatDataset, data.ChainDataset, data.StackDataset, data.Subset,
                  data.TensorDataset, data.IterableDataset, data.Dataset, data.random_split)


def catch(tag, fn, *args, **kwargs):
    try:
        out = fn(*args, **kwargs)
    except Exception as e:   # noqa: BLE001 - the class and message are what we compare
        print(tag, type(e).__name__, e)
        return None
    return out


class CountingIterable(IterableDataset):
    def __init__(self, start, n):
        self.start, self.n = start, n

    def __iter__(self):
        return iter(range(self.start, self.start + self.n))

    def __len__(self):
        return self.n


class BatchedRange(Dataset):
    """A dataset with its own __getitems__ (as HF datasets provide), optionally wrong."""

    def __init__(self, n, short=False):
        self.n, self.short = n, short

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i * 10

    def __getitems__(self, idxs):
        out = [i * 10 for i in idxs]
        return out[:-1] if self.short else out


def split_tests():
    for lengths in ([0.3, 0.3, 0.4], [0.5, 0.5], [1 / 3, 1 / 3, 1 / 3], [0.1, 0.2, 0.3, 0.4]):
        splits = random_split(range(10), lengths, generator=torch.Generator().manual_seed(1))
        print("fractions", [round(f, 3) for f in lengths], [len(s) for s in splits],
              [list(s) for s in splits])
    splits = random_split(range(7), [0.2, 0.2, 0.2, 0.2, 0.2],
                          generator=torch.Generator().manual_seed(0))
    print("remainder round-robin", [len(s) for s in splits])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        splits = random_split(range(3), [0.5, 0.5, 0.0])
        print("zero split", [len(s) for s in splits], [str(x.message) for x in w])
    catch("bad fraction", random_split, range(10), [1.1, -0.1])
    catch("not summing", random_split, range(10), [0.3, 0.3])
    catch("bad lengths", random_split, range(10), [3, 3, 3])

    g = torch.Generator().manual_seed(3)
    a, b = random_split(range(20), [12, 8], generator=g)
    aa, ab = random_split(a, [0.75, 0.25], generator=g)
    print("split of split", list(aa), list(ab), type(aa.dataset).__name__,
          aa.dataset is a)
    sub = Subset(Subset(range(100, 120), [1, 3, 5, 7, 9, 11]), [0, 2, 4])
    print("subset of subset", list(sub), len(sub), sub[-1], sub.indices)
    print("subset __getitems__", sub.__getitems__([0, 1]),
          Subset(BatchedRange(5), [4, 2]).__getitems__([0, 1]))
    tds = TensorDataset(torch.arange(12).view(6, 2), torch.arange(6))
    s = Subset(tds, torch.tensor([5, 0, 2]))
    print("subset of tensor ds", [(x.tolist(), y.item()) for x, y in s])
    catch("tensor mismatch", TensorDataset, torch.zeros(3, 2), torch.zeros(4))


def stack_tests():
    x, y = torch.arange(5.0), torch.arange(5) * 2
    tup = StackDataset(TensorDataset(x), y)
    print("tuple", len(tup), tup[2], tup.__getitems__([1, 3]))
    dct = StackDataset(img=TensorDataset(x), label=BatchedRange(5))
    print("dict", dct[4], dct.__getitems__([0, 4]))
    print("batched tuple", StackDataset(BatchedRange(3), BatchedRange(3)).__getitems__([2, 0]))
    catch("short getitems", StackDataset(BatchedRange(3, short=True)).__getitems__, [0, 1])
    catch("short getitems dict", StackDataset(a=BatchedRange(3, short=True)).__getitems__, [0, 1])
    catch("mixed", StackDataset, x, label=y)
    catch("size", StackDataset, x, torch.arange(4))
    catch("size dict", StackDataset, a=x, b=torch.arange(4))
    catch("empty", StackDataset)
    loader = data.DataLoader(dct, batch_size=2)
    print("stack loader", [{k: v.tolist() if not isinstance(v, list) else
                            [t.tolist() for t in v] for k, v in b.items()} for b in loader])


def concat_tests():
    parts = [TensorDataset(torch.arange(n) + 100 * k) for k, n in enumerate((3, 0, 4, 2))]
    cat = ConcatDataset(parts)
    print("cumulative", cat.cumulative_sizes, len(cat))
    print("items", [cat[i][0].item() for i in range(len(cat))])
    print("negative", [cat[i][0].item() for i in (-1, -2, -9)])
    catch("too negative", cat.__getitem__, -10)
    catch("too big", cat.__getitem__, 9)
    catch("empty", ConcatDataset, [])
    catch("iterable", ConcatDataset, [CountingIterable(0, 2)])
    both = parts[0] + parts[2]
    print("add", type(both).__name__, len(both), both.cumulative_sizes, both[4][0].item())
    nested = ConcatDataset([cat, range(3)])
    print("nested", nested.cumulative_sizes, nested[9], nested[8][0].item())
    loader = data.DataLoader(cat, batch_size=4, shuffle=True,
                             generator=torch.Generator().manual_seed(4))
    print("concat loader", [b[0].tolist() for b in loader])

    chain = ChainDataset([CountingIterable(0, 3), CountingIterable(10, 2)])
    print("chain", list(chain), len(chain))
    print("iterable add", list(CountingIterable(0, 2) + CountingIterable(5, 1)))
    bad = ChainDataset([CountingIterable(0, 1), range(3)])
    catch("chain iter", list, bad)
    catch("chain len", len, bad)
    print("chain loader", [b.tolist() for b in data.DataLoader(chain, batch_size=2)])


def sampler_tests():
    g = torch.Generator().manual_seed(9)
    srs = data.SubsetRandomSampler([10, 20, 30, 40, 50], generator=g)
    print("subset random", list(srs), list(srs), len(srs))
    for replacement in (True, False):
        wrs = data.WeightedRandomSampler([0.1, 0.9, 0.4, 0.0, 2.0], 4, replacement=replacement,
                                         generator=torch.Generator().manual_seed(2))
        print("weighted", replacement, list(wrs), list(wrs))
    catch("weighted shape", data.WeightedRandomSampler, torch.ones(2, 2), 3)
    catch("weighted num_samples", data.WeightedRandomSampler, [1.0], 0)
    catch("weighted replacement", data.WeightedRandomSampler, [1.0], 2, replacement=1)
    torch.manual_seed(6)
    print("global generator", list(data.SubsetRandomSampler(range(6))),
          list(data.RandomSampler(range(5), replacement=True, num_samples=8)))
    bs = data.BatchSampler(data.SubsetRandomSampler(range(7), torch.Generator().manual_seed(0)),
                           3, drop_last=True)
    print("batch sampler", list(bs), len(bs))
    catch("batch size", data.BatchSampler, range(3), 0, False)
    catch("drop_last", data.BatchSampler, range(3), 2, "no")


split_tests()
stack_tests()
concat_tests()
sampler_tests()
