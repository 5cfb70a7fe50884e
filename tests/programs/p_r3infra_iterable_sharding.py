"""The torch.utils.data docs' IterableDataset examples (splitting work with get_worker_info in
__iter__ and in worker_init_fn), ChainDataset, ConcatDataset, StackDataset, Subset, and the
len()/drop_last arithmetic of DataLoaders over map- and iterable-style datasets."""
import importlib
import math
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
data = importlib.import_module(LIB + ".utils.data")


class MyIterableDataset(data.IterableDataset):
    def __init__(self, start, end):
        super().__init__()
        assert end > start, "this example code only works with end >= start"
        self.start = start
        self.end = end

    def __iter__(self):
        worker_info = data.get_worker_info()
        if worker_info is None:
            iter_start = self.start
            iter_end = self.end
        else:
            per_worker = int(math.ceil((self.end - self.start) / float(worker_info.num_workers)))
            worker_id = worker_info.id
            iter_start = self.start + worker_id * per_worker
            iter_end = min(iter_start + per_worker, self.end)
        return iter(range(iter_start, iter_end))


ds = MyIterableDataset(start=3, end=7)
print(list(data.DataLoader(ds, num_workers=0)))
print(list(data.DataLoader(ds, batch_size=3)))
print(list(data.DataLoader(ds, batch_size=3, drop_last=True)))
print(data.get_worker_info())


class RangeDS(data.IterableDataset):
    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        return iter(range(self.start, self.end))


def worker_init_fn(worker_id):
    worker_info = data.get_worker_info()
    dataset = worker_info.dataset
    overall_start = dataset.start
    overall_end = dataset.end
    per_worker = int(math.ceil((overall_end - overall_start) / float(worker_info.num_workers)))
    dataset.start = overall_start + worker_id * per_worker
    dataset.end = min(dataset.start + per_worker, overall_end)


print(list(data.DataLoader(RangeDS(3, 7), num_workers=0, worker_init_fn=worker_init_fn)))

chain = data.ChainDataset([RangeDS(0, 3), RangeDS(10, 12)])
print(list(chain))
print([b.tolist() for b in data.DataLoader(chain, batch_size=2)])
it_sum = RangeDS(0, 2) + RangeDS(5, 7)
print(type(it_sum).__name__, list(it_sum))

torch.manual_seed(0)
a = data.TensorDataset(torch.arange(5.0), torch.arange(5))
b = data.TensorDataset(torch.arange(10.0, 13.0), torch.arange(10, 13))
cat = data.ConcatDataset([a, b])
print(len(cat), cat.cumulative_sizes)
print(cat[4], cat[5], cat[-1])
cat2 = a + b
print(type(cat2).__name__, len(cat2), cat2[6])
try:
    cat[100]
except Exception as e:
    print(type(e).__name__, e)

sub = data.Subset(cat, [0, 6, 7])
print(len(sub), sub[1], sub.indices)
print(data.Subset(a, [4, 0, 2])[[0, 2]])
print(sub.__getitems__([0, 2]))
loader = data.DataLoader(sub, batch_size=2)
for xb, yb in loader:
    print(xb, yb)

if hasattr(data, "StackDataset"):
    stack = data.StackDataset(a, a)
    print(len(stack), stack[1])
    sd = data.StackDataset(x=torch.arange(3.0), y=torch.tensor([7, 8, 9]))
    print(len(sd), sd[2])
    print(data.DataLoader(sd, batch_size=2).__iter__().__next__())
    try:
        data.StackDataset(torch.arange(3), torch.arange(4))
    except Exception as e:
        print(type(e).__name__, e)

tds = data.TensorDataset(torch.randn(10, 2), torch.randint(0, 2, (10,)))
for bs in (1, 3, 4, 10, 11):
    print(bs, len(data.DataLoader(tds, batch_size=bs)),
          len(data.DataLoader(tds, batch_size=bs, drop_last=True)))


class SizedRange(RangeDS):
    def __len__(self):
        return self.end - self.start


print(len(data.DataLoader(SizedRange(0, 10), batch_size=3)))
print(len(data.DataLoader(SizedRange(0, 10), batch_size=3, drop_last=True)))
print(len(data.ChainDataset([SizedRange(0, 4), SizedRange(0, 3)])))
try:
    len(data.DataLoader(MyIterableDataset(0, 5)))
except Exception as e:
    print(type(e).__name__, e)
try:
    data.TensorDataset(torch.zeros(3), torch.zeros(4))
except Exception as e:
    print(type(e).__name__, e)
try:
    data.DataLoader(RangeDS(0, 4), shuffle=True)
except Exception as e:
    print(type(e).__name__, e)
try:
    data.DataLoader(tds, batch_size=2, sampler=data.SequentialSampler(tds), shuffle=True)
except Exception as e:
    print(type(e).__name__, e)
try:
    data.DataLoader(tds, batch_sampler=data.BatchSampler(data.SequentialSampler(tds), 2, False),
                    batch_size=3)
except Exception as e:
    print(type(e).__name__, e)
dl = data.DataLoader(tds, batch_size=4, shuffle=False)
xb, yb = next(iter(dl))
print(xb.shape, yb, dl.batch_size, dl.drop_last, dl.num_workers)
print(type(dl.sampler).__name__, type(dl.batch_sampler).__name__)
print(type(data.DataLoader(RangeDS(0, 2)).sampler).__name__)
print("RESULT:", sum(int(v) for v in chain))
