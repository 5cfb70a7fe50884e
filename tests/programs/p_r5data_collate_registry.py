"""Extending default_collate as the torch.utils.data docs show it ("Example: Extend this
function to handle batch of custom type"): collate(batch, collate_fn_map=...) with a custom
type, default_collate_fn_map.update, a tensor override that pads instead of stacking, and
mapping/sequence subclasses (defaultdict, a list subclass with attributes, a read-only
Mapping) kept through collation and default_convert, in a DataLoader."""
import collections
import collections.abc
import importlib
import os

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
data = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".utils.data")
cmod = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".utils.data._utils.collate")
collate, default_collate_fn_map = cmod.collate, cmod.default_collate_fn_map


class Box:
    def __init__(self, xyxy):
        self.xyxy = xyxy


class BoxList:
    def __init__(self, boxes):
        self.boxes = boxes

    def __repr__(self):
        return "BoxList(%d)" % len(self.boxes)


def collate_box_fn(batch, *, collate_fn_map=None):
    return BoxList([b.xyxy for b in batch])


def pad_tensor_fn(batch, *, collate_fn_map=None):
    m = max(t.shape[0] for t in batch)
    out = batch[0].new_zeros((len(batch), m) + tuple(batch[0].shape[1:]))
    for i, t in enumerate(batch):
        out[i, :t.shape[0]] = t
    return out


class Tagged(list):
    tag = "cls"


class Frozen(collections.abc.Mapping):
    def __init__(self, d):
        self._d = dict(d)

    def __getitem__(self, k):
        return self._d[k]

    def __iter__(self):
        return iter(self._d)

    def __len__(self):
        return len(self._d)


torch.manual_seed(0)
samples = [(torch.randn(3), Box(torch.tensor([i, i, i + 2, i + 3]).float()), i) for i in range(4)]
out = collate(samples, collate_fn_map={Box: collate_box_fn, **default_collate_fn_map})
print(type(out).__name__, out[0].shape, out[1], out[1].boxes[2].tolist(), out[2].tolist())
try:
    data.default_collate(samples)
except TypeError as e:
    print(type(e).__name__, str(e))
try:
    collate([s[1] for s in samples])
except TypeError as e:
    print(type(e).__name__, str(e))
print([k.__name__ if isinstance(k, type) else tuple(t.__name__ for t in k)
       for k in default_collate_fn_map])

var = [torch.arange(n, dtype=torch.float32) for n in (2, 4, 3)]
padded = collate(var, collate_fn_map={torch.Tensor: pad_tensor_fn})
print(padded.tolist())
print(collate([1.5, 2.0], collate_fn_map={float: lambda b, collate_fn_map=None: sum(b)}))
print(collate([True, False], collate_fn_map=default_collate_fn_map))
print(collate([np.int32(3), np.int32(4)], collate_fn_map=default_collate_fn_map).dtype)

dd = []
for i in range(3):
    d = collections.defaultdict(list)
    d["x"] = torch.full((2,), float(i))
    d["y"] = i
    dd.append(d)
b = data.default_collate(dd)
print(type(b).__name__, b.default_factory.__name__, b["x"].tolist(), b["y"].tolist())
b["missing"].append(1)
print(sorted(b.keys()))

tl = []
for i in range(2):
    t = Tagged([torch.tensor(i), 0.5 * i])
    t.tag = "sample%d" % i
    tl.append(t)
b = data.default_collate(tl)
print(type(b).__name__, b.tag, [x.tolist() for x in b])
b = data.default_collate([Frozen({"a": i, "b": torch.ones(1) * i}) for i in range(2)])
print(type(b).__name__, b["a"].tolist(), b["b"].tolist())
c = data.default_convert(Tagged([np.ones(2), "s"]))
print(type(c).__name__, c.tag, type(c[0]).__name__, c[1])
c = data.default_convert(collections.defaultdict(int, a=np.zeros(1, dtype=np.float32)))
print(type(c).__name__, c["a"].dtype, c["zz"])
arr = np.arange(3.0)
t = data.default_convert(arr)
t[0] = 7
print(arr.tolist(), t.dtype)
print(data.default_convert(range(3)), data.default_convert((np.int16(2), "k")))

default_collate_fn_map[Box] = collate_box_fn
try:
    ds = [{"img": torch.randn(2), "box": Box(torch.tensor([0.0, 0, i, i])), "id": "im%d" % i}
          for i in range(5)]
    for batch in data.DataLoader(ds, batch_size=2):
        print(batch["img"].shape, batch["box"], batch["box"].boxes[-1].tolist(), batch["id"])
finally:
    del default_collate_fn_map[Box]
print(Box in default_collate_fn_map)
