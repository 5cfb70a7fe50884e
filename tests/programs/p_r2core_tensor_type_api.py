"""The torch.Tensor type API as the "Tensor attributes" / "torch.Tensor" docs and the blitz show
it: x.type(), isinstance, torch.is_tensor, is_floating_point, dtype properties, itemsize,
element_size, nbytes, numel, dim/ndim, size() vs shape, torch.Size arithmetic, tolist/item,
NumPy round trips and from_numpy memory sharing."""

import importlib
import os

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))

torch.manual_seed(0)
x = torch.randn(2, 3, 4)
print(type(x).__name__, x.type(), x.dtype, x.device, x.layout, x.is_leaf, x.requires_grad)
print(
    isinstance(x, torch.Tensor),
    torch.is_tensor(x),
    torch.is_tensor([1, 2]),
    torch.is_storage(x),
    torch.is_floating_point(x),
    torch.is_complex(x),
    x.is_complex(),
)
print(torch.numel(x), x.numel(), x.nelement(), x.dim(), x.ndim, x.ndimension(), len(x))
print(x.size(), x.shape, x.size(1), x.size(-1), x.shape[0], x.size() == x.shape)
print(x.element_size(), x.itemsize, x.nbytes, x.dtype.itemsize, x.stride(), x.stride(0))
print(
    x.is_contiguous(), x.transpose(0, 1).is_contiguous(), x.storage_offset(), x[1].storage_offset()
)
print(x.is_cuda, x.is_sparse, x.is_quantized, x.is_meta, x.is_cpu, x.is_mkldnn)

for dt in (
    torch.float32,
    torch.float64,
    torch.float16,
    torch.bfloat16,
    torch.int8,
    torch.uint8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.bool,
    torch.complex64,
    torch.complex128,
):
    t = torch.zeros(2, 3, dtype=dt)
    print(
        f"{str(dt):16s} {t.type():24s} fp={dt.is_floating_point!s:5s} cx={dt.is_complex!s:5s} "
        f"signed={dt.is_signed!s:5s} item={dt.itemsize} es={t.element_size()} nb={t.nbytes} "
        f"{t.is_floating_point()} {torch.is_floating_point(t)}"
    )
print(
    torch.float is torch.float32,
    torch.double == torch.float64,
    torch.long,
    torch.int,
    torch.short,
    torch.half,
    torch.cfloat,
    torch.cdouble,
    torch.uint8 != torch.int8,
)
print(torch.float32.to_complex(), torch.complex64.to_real(), torch.float16.to_complex())
print(
    x.new_zeros(2).type(),
    x.new_ones((1, 2), dtype=torch.int64).type(),
    x.new_tensor([1, 2]).dtype,
    x.new_empty(0).shape,
    x.new_full((2,), 3.5),
)
print(x.type(torch.float64).type(), x.type(torch.int32).dtype, x.type("torch.DoubleTensor").dtype)
print(x.int().type(), x.long().type(), x.bool().type(), x.half().type(), x.double().type())
print(
    torch.FloatTensor.__name__,
    torch.LongTensor([1, 2]),
    torch.FloatTensor(2, 3).shape,
    torch.DoubleTensor([1.5]).dtype,
    torch.BoolTensor([True]).dtype,
    torch.IntTensor([3]).type(),
)
print(
    isinstance(torch.ones(1), torch.FloatTensor),
    isinstance(torch.ones(1), torch.LongTensor),
    isinstance(torch.ones(1, dtype=torch.long), torch.LongTensor),
)
print(
    isinstance(torch.nn.Parameter(torch.ones(1)), torch.Tensor),
    type(torch.nn.Parameter(torch.ones(1))).__name__,
    torch.nn.Parameter(torch.ones(1)).type(),
)

s = x.shape
print(
    type(s).__name__,
    s,
    s + (5,),
    s[1:],
    s.numel(),
    torch.Size([2, 3]) == (2, 3),
    isinstance(s, tuple),
    s.index(3),
    s.count(4),
    list(reversed(s)),
    max(s),
    sum(s),
)
print(torch.Size(), torch.Size([]).numel(), torch.Size((0, 3)).numel(), torch.Size([4]) * 2)
print(
    x.view(s[0], -1).shape,
    x.reshape(*s[:2], 2, 2).shape,
    torch.empty(s).shape,
    torch.zeros(*s).size(),
    x.new_zeros(s[1:]).shape,
    torch.ones(s[::-1]).shape,
)
print(x.size()[1:] == torch.Size([3, 4]), tuple(x.shape), x.shape.__class__ is torch.Size)
print(
    torch.tensor([]).shape,
    torch.tensor(5).shape,
    torch.tensor(5).dim(),
    torch.tensor(5).numel(),
    torch.zeros(3, 0).numel(),
    torch.zeros(3, 0).nbytes,
)

v = torch.tensor([[1.5, 2.0], [-3.0, 4.25]])
print(v.tolist(), v[0].tolist(), v[0, 0].tolist(), type(v[0, 0].tolist()).__name__)
print(
    v.sum().item(),
    type(v.sum().item()).__name__,
    torch.tensor(3).item(),
    type(torch.tensor(3).item()).__name__,
    torch.tensor(True).item(),
    torch.tensor(1 + 2j).item(),
)
print(
    torch.tensor([7], dtype=torch.int8).item(),
    torch.tensor(0.1, dtype=torch.float16).item(),
    torch.tensor(0.1, dtype=torch.bfloat16).item(),
    torch.tensor(0.1).item(),
    torch.tensor(0.1, dtype=torch.float64).item(),
)
print(
    torch.tensor([1, 2], dtype=torch.uint8).tolist(),
    torch.tensor([True]).tolist(),
    torch.tensor([1j]).tolist(),
    torch.zeros(2, 0).tolist(),
    torch.tensor(2.5).tolist(),
)

a = np.arange(6, dtype=np.float32).reshape(2, 3)
t = torch.from_numpy(a)
print(t, t.dtype, t.shape, t.stride())
a[0, 0] = 100
print(t[0, 0], t.numpy() is a, np.shares_memory(t.numpy(), a))
t.add_(1)
print(a)
t2 = torch.tensor(a)
a[0, 1] = -5
print(t2[0, 1], t[0, 1])
t3 = torch.as_tensor(a)
a[1, 1] = 42
print(t3[1, 1], torch.as_tensor(a, dtype=torch.float64)[1, 1])
n = torch.ones(3).numpy()
print(type(n).__name__, n.dtype, n)
print(
    torch.from_numpy(np.array([1, 2], dtype=np.int32)).dtype,
    torch.from_numpy(np.array([1.0])).dtype,
    torch.from_numpy(np.array([True])).dtype,
    torch.from_numpy(np.array([1], dtype=np.uint8)).dtype,
    torch.from_numpy(np.zeros((2, 2), dtype=np.complex64)).dtype,
    torch.from_numpy(np.array([1.0], dtype=np.float16)).dtype,
)
print(
    torch.tensor(np.float64(2.5)).dtype,
    torch.tensor(np.array(3)).dtype,
    torch.tensor([np.float32(1.0)]).dtype,
    torch.as_tensor([1, 2]).dtype,
)
ft = torch.from_numpy(np.arange(12.0).reshape(3, 4)[:, ::2])
print(ft, ft.stride(), ft.is_contiguous())
tt = torch.arange(4.0)
nn_ = tt.numpy()
nn_[0] = 9
print(tt, torch.arange(3).numpy().dtype, np.asarray(torch.arange(3.0)).dtype)
g = torch.ones(2, requires_grad=True)
print(g.detach().numpy(), g.numpy(force=True), g.data.numpy())
print(np.array(torch.tensor([1, 2])) + 1, np.add(torch.ones(2).numpy(), 1))
print(torch.tensor([1.0, 2.0]).numpy().tolist(), torch.tensor([[1, 2]]).numpy().shape)
print(
    torch.get_default_dtype(),
    torch.ones(1).dtype,
    torch.tensor([1, 2.5]).dtype,
    torch.tensor([1, 2]).dtype,
    torch.tensor([True, 1]).dtype,
)
print("RESULT: ok")
