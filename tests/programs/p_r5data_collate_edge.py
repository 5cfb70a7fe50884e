"""Collation edge cases from the torch.utils.data docs ("Working with collate_fn", "Disable
automatic batching") and forum answers: default_collate of nested dicts/namedtuples/lists,
bool/float/int/NumPy scalar fields, strings and bytes, the errors for unequal tensor sizes,
unequal list lengths and unsupported element types, batch_size=None (default_convert per
sample), a dict-returning Dataset and a collate_fn closure that pads and builds a mask."""
import collections
import importlib
import os

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
data = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".utils.data")
DataLoader = data.DataLoader
default_collate = data.default_collate
default_convert = data.default_convert

Point = collections.namedtuple("Point", ["xy", "label", "name"])


def show(name, x, depth=0):
    pad = "  " * depth
    if isinstance(x, torch.Tensor):
        print(pad + name, "Tensor", tuple(x.shape), x.dtype, x.flatten()[:6].tolist())
    elif isinstance(x, dict):
        print(pad + name, type(x).__name__, list(x.keys()))
        for k, v in x.items():
            show(str(k), v, depth + 1)
    elif isinstance(x, (list, tuple)):
        print(pad + name, type(x).__name__, len(x))
        for i, v in enumerate(x):
            show("[%d]" % i, v, depth + 1)
    else:
        print(pad + name, type(x).__name__, repr(x))


torch.manual_seed(0)
samples = [{"img": torch.randn(2, 3), "meta": {"id": i, "scale": 0.5 * i, "flip": i % 2 == 0,
                                                "tag": "s%d" % i, "raw": b"x"},
            "pt": Point(np.arange(2, dtype=np.float32) + i, np.int64(i), "p%d" % i),
            "boxes": [torch.tensor([i, i + 1]), np.float64(i) / 3]}
           for i in range(3)]
show("batch", default_collate(samples))
od = [collections.OrderedDict(a=torch.tensor(i), b=[i, i + 1]) for i in range(2)]
show("ordered", default_collate(od))
show("np uint8", default_collate([np.full((2,), i, dtype=np.uint8) for i in range(3)]))
show("np bool scalar", default_collate([np.bool_(True), np.bool_(False)]))
show("np f16", default_collate([np.float16(1.5), np.float16(2.5)]))
show("convert", default_convert({"a": np.ones(2, dtype=np.int32), "b": (np.float32(2.0), "s"),
                                 "c": [np.zeros(1)]}))
show("convert str array", default_convert(np.array(["a", "b"])))

for bad in ([torch.zeros(2), torch.zeros(3)],
            [[1, 2], [1, 2, 3]],
            [object(), object()],
            [np.array(["a", "b"]), np.array(["c", "d"])],
            [{"a": 1}, {"b": 2}],
            [None, None]):
    try:
        default_collate(bad)
        print("no error")
    except Exception as e:
        msg = str(e).split(" at 0x")[0]
        print(type(e).__name__, msg)


class DictDataset(data.Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(1)
        self.lengths = torch.randint(1, 6, (n,), generator=g).tolist()
        self.seqs = [torch.randint(0, 50, (ln,), generator=g) for ln in self.lengths]

    def __len__(self):
        return len(self.seqs)

    def __getitem__(self, i):
        return {"input_ids": self.seqs[i], "label": i % 3, "text": "doc%d" % i}


def make_collate(pad_id):
    def collate(batch):
        m = max(len(b["input_ids"]) for b in batch)
        ids = torch.full((len(batch), m), pad_id, dtype=torch.long)
        mask = torch.zeros(len(batch), m, dtype=torch.bool)
        for j, b in enumerate(batch):
            ids[j, :len(b["input_ids"])] = b["input_ids"]
            mask[j, :len(b["input_ids"])] = True
        rest = default_collate([{k: v for k, v in b.items() if k != "input_ids"} for b in batch])
        return dict(input_ids=ids, attention_mask=mask, **rest)
    return collate


ds = DictDataset(7)
dl = DataLoader(ds, batch_size=3, shuffle=True, generator=torch.Generator().manual_seed(5),
                collate_fn=make_collate(-1))
for b in dl:
    print(b["input_ids"].tolist(), b["attention_mask"].sum(1).tolist(), b["label"].tolist(),
          b["text"])
print("len", len(dl))

# batch_size=None: no auto-collation, each sample goes through default_convert
dl = DataLoader([np.arange(3) * i for i in range(3)], batch_size=None)
for b in dl:
    print(type(b).__name__, b.dtype, b.tolist())
dl = DataLoader([(np.float32(i), "t%d" % i) for i in range(2)], batch_size=None)
for b in dl:
    show("nobatch", b)
print(dl.batch_size, dl.drop_last, dl.batch_sampler is None)
