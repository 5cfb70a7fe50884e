"""Streaming data with IterableDataset as the torch.utils.data docs and WebDataset/HF-streaming
style loaders write it: a line-reader dataset over a temp file, a seeded shuffle buffer,
per-worker sharding with get_worker_info() (id, num_workers, seed, dataset copy), batching
and drop_last over a stream, the IterableDataset __len__ warning, and the DataLoader errors
for shuffle/sampler/batch_sampler with an IterableDataset."""
import importlib
import itertools
import os
import tempfile
import warnings

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
data = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".utils.data")
DataLoader, IterableDataset = data.DataLoader, data.IterableDataset


class LineDataset(IterableDataset):
    def __init__(self, path):
        super().__init__()
        self.path = path

    def __iter__(self):
        info = data.get_worker_info()
        wid, nw = (0, 1) if info is None else (info.id, info.num_workers)
        with open(self.path) as f:
            for i, line in enumerate(f):
                if i % nw == wid:
                    a, b = line.split(",")
                    yield torch.tensor([float(a), float(b)]), int(b) % 3


class ShuffleBuffer(IterableDataset):
    def __init__(self, source, size, seed):
        self.source, self.size, self.seed = source, size, seed

    def __iter__(self):
        g = torch.Generator().manual_seed(self.seed)
        buf = []
        for item in self.source:
            buf.append(item)
            if len(buf) >= self.size:
                yield buf.pop(int(torch.randint(len(buf), (1,), generator=g)))
        while buf:
            yield buf.pop(int(torch.randint(len(buf), (1,), generator=g)))


class InfoDataset(IterableDataset):
    def __init__(self, n):
        self.n = n
        self.touched = False

    def __iter__(self):
        info = data.get_worker_info()
        info.dataset.touched = True
        yield {"id": info.id, "nw": info.num_workers, "seed_mod": info.seed % 1,
               "same": info.dataset is self, "items": list(range(info.id, self.n, 2))}


class Counted(IterableDataset):
    def __len__(self):
        return 3

    def __iter__(self):
        return iter(range(5))


tmp = tempfile.mkdtemp()
path = os.path.join(tmp, "lines.csv")
with open(path, "w") as f:
    for i in range(11):
        f.write("%d,%d\n" % (i, i * i))

print(data.get_worker_info())
ds = LineDataset(path)
for xb, yb in DataLoader(ds, batch_size=4):
    print(xb[:, 0].tolist(), yb.tolist())
print([x[0].tolist() for x, _ in DataLoader(ds, batch_size=4, drop_last=True)])
got = [x[:, 0].tolist() for x, _ in DataLoader(ds, batch_size=3, num_workers=2)]
print(got)
got = sorted(int(v) for v in itertools.chain(*(
    x[:, 0].tolist() for x, _ in DataLoader(ds, batch_size=2, num_workers=2))))
print(got)

shuf = ShuffleBuffer(LineDataset(path), size=4, seed=7)
print([int(x[0]) for x, _ in shuf])
print([int(x[0]) for x, _ in shuf])
for xb, yb in DataLoader(shuf, batch_size=5):
    print(xb[:, 0].long().tolist(), yb.tolist())

idset = InfoDataset(5)
for b in DataLoader(idset, batch_size=None, num_workers=2):
    print(b)
print("main copy touched:", idset.touched)

try:
    len(LineDataset(path))
except TypeError as e:
    print(type(e).__name__, e)
loader = DataLoader(Counted(), batch_size=2)
print(len(loader))
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    print([b.tolist() for b in loader])
    print([str(x.message)[:150] for x in w])

for kw in ({"shuffle": True}, {"sampler": [0, 1]}, {"batch_sampler": [[0, 1]]}):
    try:
        DataLoader(ds, **kw)
        print("no error", kw)
    except ValueError as e:
        print(type(e).__name__, e)
print(DataLoader(ds, shuffle=False).batch_size)

chained = data.ChainDataset([LineDataset(path), Counted()])
print(sum(1 for _ in chained))
try:
    data.ChainDataset([LineDataset(path), [1, 2]]).__len__()
except Exception as e:
    print(type(e).__name__, e)
cat = LineDataset(path) + Counted()
print(type(cat).__name__, len(list(cat)))
