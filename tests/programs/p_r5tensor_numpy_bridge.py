"""The NumPy bridge, after the "Tensors" tutorial's "Bridge with NumPy" section, the
torch.from_numpy / torch.as_tensor / Tensor.numpy docs and the Stack Overflow questions
"from_numpy vs torch.tensor (memory sharing)", "ValueError: some of the strides of a given
numpy array are negative", "TypeError: can't convert np.ndarray of type numpy.object_",
"numpy uint16 to torch", "mixing numpy scalars and tensors": sharing, copies, dtypes kept or
promoted, non-writable/negative-stride/object arrays, numpy scalars in arithmetic."""
import importlib
import os
import warnings

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
warnings.simplefilter("ignore")


def err(fn):
    try:
        r = fn()
        print("ok", r)
    except Exception as e:
        print(type(e).__name__, e)


# tutorial: tensor -> numpy shares memory
t = torch.ones(5)
n = t.numpy()
t.add_(1)
print(t, n, type(n).__name__, n.dtype)
n = np.ones(5)
t = torch.from_numpy(n)
np.add(n, 1, out=n)
print(t, n, t.dtype)

# copies versus shares
a = np.arange(6, dtype=np.float32).reshape(2, 3)
shares = {"from_numpy": torch.from_numpy(a), "as_tensor": torch.as_tensor(a),
          "asarray": torch.asarray(a), "tensor": torch.tensor(a), "Tensor": torch.Tensor(a),
          "as_tensor_f64": torch.as_tensor(a, dtype=torch.float64), "asarray_copy": torch.asarray(a, copy=True)}
a[0, 0] = 100
for k, v in shares.items():
    print(f"{k:14s} {v[0, 0].item():6.1f} {v.dtype}")
tt = torch.from_numpy(a)
tt[1, 1] = -5
print(a[1, 1], tt.numpy() is a, np.shares_memory(tt.numpy(), a))

# dtypes across the bridge
for dt in [np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8,
           np.bool_, np.complex64, np.complex128]:  # (uint16/32/64: ember has no such tensors)
    arr = np.array([1, 0, 1], dtype=dt)
    try:
        print(dt.__name__, torch.from_numpy(arr).dtype, torch.tensor(arr).dtype, torch.as_tensor(arr).dtype)
    except Exception as e:
        print(dt.__name__, type(e).__name__, e)
# (bfloat16 .numpy(): requests13 [lead] from H7)
for dt in [torch.float16, torch.int8, torch.bool, torch.complex64, torch.uint8, torch.int16]:
    try:
        print(dt, torch.zeros(2, dtype=dt).numpy().dtype)
    except Exception as e:
        print(dt, type(e).__name__, e)
print(torch.tensor(np.float64(2.5)).dtype, torch.tensor(np.int32(3)).dtype, torch.tensor([np.float32(1)]).dtype)
print(torch.tensor([np.int64(1), 2.5]).dtype, torch.as_tensor([np.float16(1.5)]).dtype, torch.tensor(np.bool_(True)).dtype)

# awkward arrays
rev = np.arange(5)[::-1]
# (torch.from_numpy/tensor/as_tensor(rev) raise in torch: requests13 [H1] from H7)
print(torch.from_numpy(rev.copy()), torch.as_tensor(np.ascontiguousarray(rev)), torch.tensor(rev.tolist()))
strided = np.arange(12).reshape(3, 4)[:, ::2]
ts = torch.from_numpy(strided)
print(ts.stride(), ts.is_contiguous(), ts)
fort = np.asfortranarray(np.arange(6.0).reshape(2, 3))
print(torch.from_numpy(fort).stride())  # torch.tensor(fort).stride(): requests13 [H1] from H7
ro = np.arange(3.0)
ro.flags.writeable = False
print(torch.from_numpy(ro), torch.as_tensor(ro))
err(lambda: torch.from_numpy(np.array([1, "a"], dtype=object)))
err(lambda: torch.tensor(np.array(["a", "b"])))
err(lambda: torch.from_numpy([1, 2]))
err(lambda: torch.tensor(np.array([[1, 2], [3]], dtype=object)))
print(torch.from_numpy(np.zeros((0, 3))).shape, torch.from_numpy(np.array(5.0)).shape, torch.from_numpy(np.array(5.0)).dim())

# tensors back to numpy
g = torch.ones(2, requires_grad=True)
err(lambda: g.numpy())
err(lambda: np.asarray(g))
print(g.detach().numpy(), np.asarray(g.detach()) + 1, (g * 2).detach().cpu().numpy())
print(torch.arange(6).view(2, 3).t().numpy().strides, torch.arange(6).view(2, 3)[:, 1].numpy())
print(torch.tensor(3.5).numpy(), torch.tensor(3.5).numpy().shape, torch.tensor([1, 2]).tolist())
c = torch.arange(4.0)
cn = c.numpy()
cn[0] = 42
print(c, c._version)
cj = torch.tensor([1 + 1j]).conj()
err(lambda: cj.numpy())
print(cj.resolve_conj().numpy())

# numpy scalars and arrays mixed with tensors
x = torch.tensor([1.0, 2.0], dtype=torch.float32)
print((x * np.float64(2)).dtype, (x + np.int64(1)).dtype, (np.float32(3) * x).dtype, type(np.float64(2) * x).__name__)
print((torch.tensor([1, 2]) * np.float64(1.5)).dtype, (torch.tensor([1, 2]) + np.int32(1)).dtype)
print(type(x.sum().item()).__name__, float(np.float32(x.sum())), x.numpy().sum(), x.sum().numpy())
print(torch.tensor([1, 2])[np.int64(1)], x[np.array([1, 0])], x[np.array([True, False])])
idx = np.array([0, 1, 1])
print(torch.arange(5)[idx], torch.zeros(3).index_add(0, torch.from_numpy(idx), torch.ones(3)))
print(np.exp(torch.tensor([0.0, 1.0])), np.asarray(torch.tensor([1, 2, 3])).sum())
err(lambda: np.sum(torch.tensor([1, 2, 3])))
print(torch.tensor([1.0]) == np.float64(1.0), torch.arange(3) < np.int64(2))
