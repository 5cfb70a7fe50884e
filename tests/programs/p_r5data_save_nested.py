"""torch.save/torch.load of nested Python objects as the "Serialization semantics" notes
(docs/notes/serialization) describe them: views that share storage stay shared after loading,
a small view of a large tensor saves the whole storage (and .clone() avoids it), every dtype
round-trips, Parameters keep requires_grad, torch.Size/dtype/device objects, OrderedDict
state_dicts with _metadata, non-contiguous strides, a custom class inside the checkpoint, and
weights_only=True with its allowlisting."""
import collections
import importlib
import io
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn


def roundtrip(obj, **kw):
    buf = io.BytesIO()
    torch.save(obj, buf)
    size = buf.tell()
    buf.seek(0)
    return torch.load(buf, **kw), size


# "Saving and loading tensors preserves views"
numbers = torch.arange(1, 10)
evens = numbers[1::2]
loaded, _ = roundtrip([numbers, evens])
loaded_numbers, loaded_evens = loaded
loaded_evens *= 2
print(loaded_numbers.tolist(), loaded_evens.stride(), loaded_evens.storage_offset())
# (untyped_storage() of loaded views left out: requests13.md "[H7] storage of loaded views")

large = torch.arange(1, 1000)
small = large[0:5]
_, size_view = roundtrip(small)
_, size_clone = roundtrip(small.clone())
loaded_small, _ = roundtrip(small)
print(size_view > 4 * size_clone, loaded_small.tolist())
print(roundtrip(small.clone())[0].untyped_storage().size())

dts = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.uint8,
       torch.int16, torch.int32, torch.int64, torch.bool, torch.complex64, torch.complex128]
torch.manual_seed(0)
tensors = {str(dt): (torch.randn(2, 3) * 3).to(dt) for dt in dts}
back, _ = roundtrip(tensors)
for k, v in back.items():
    print(k, v.dtype, torch.equal(v, tensors[k]), v.flatten()[:2].tolist())

t = torch.randn(4, 5).t()[1:, ::2]
b, _ = roundtrip(t)
print(b.shape, b.stride(), b.is_contiguous(), torch.equal(b, t))

p = nn.Parameter(torch.randn(3))
q = nn.Parameter(torch.randn(2), requires_grad=False)
obj = {"params": [p, q], "size": torch.Size([2, 3]), "dtype": torch.float16,
       "device": torch.device("cpu"), "nested": (1, "two", [3.0, None, {"four": torch.ones(1)}]),
       "slice": slice(1, 2), "set": {1, 2}}
b, _ = roundtrip(obj, weights_only=False)
print(type(b["params"][0]).__name__, b["params"][0].requires_grad, b["params"][1].requires_grad)
print(b["size"], type(b["size"]).__name__, b["dtype"], b["device"], b["nested"], b["slice"],
      sorted(b["set"]))
try:
    roundtrip(obj, weights_only=True)
except Exception as e:
    print(type(e).__name__, [ln.strip() for ln in str(e).splitlines() if "WeightsUnpickler" in ln])
del obj["slice"], obj["set"]
b, _ = roundtrip(obj, weights_only=True)
print(type(b["params"][0]).__name__, b["size"], b["dtype"], b["device"], b["nested"][2][2])


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.bn = nn.BatchNorm1d(2)
        self.register_buffer("steps", torch.tensor(7))


net = Net()
sd = net.state_dict()
print(type(sd).__name__, list(sd.keys()), sorted(sd._metadata.items()))
b, _ = roundtrip(sd, weights_only=True)
print(type(b).__name__, list(b.keys()), sorted(b._metadata.items()))
print(b["bn.num_batches_tracked"].dtype, b["steps"].item())
net2 = Net()
print(net2.load_state_dict(b))
print(torch.equal(net2.fc.weight, net.fc.weight))


class Meta:
    def __init__(self, epoch):
        self.epoch = epoch


ckpt = {"meta": Meta(3), "state": sd}
b, _ = roundtrip(ckpt, weights_only=False)
print(type(b["meta"]).__name__, b["meta"].epoch)
try:
    roundtrip(ckpt, weights_only=True)
except Exception as e:
    print(type(e).__name__, [ln.strip() for ln in str(e).splitlines() if "WeightsUnpickler" in ln])
with torch.serialization.safe_globals([Meta]):
    b, _ = roundtrip(ckpt, weights_only=True)
print(b["meta"].epoch)

od = collections.OrderedDict([("b", torch.zeros(1)), ("a", torch.ones(1))])
b, _ = roundtrip(od)
print(type(b).__name__, list(b))
b, _ = roundtrip(torch.tensor(3.5))
print(b, b.dim())
b, _ = roundtrip(torch.empty(0, 3))
print(b.shape, b.dtype)
