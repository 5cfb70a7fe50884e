""""Deep Learning with PyTorch", chapter 3 (It starts with a tensor): lists vs tensors,
indexing, named-dimension-free einsum/broadcast weights, dtypes, storage, size/offset/stride,
transposes without copying, contiguity, NumPy interop, in-place ops, serialization."""
import importlib
import io
import os

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))

a = [1.0, 2.0, 1.0]
print(a[0], a)
a = torch.ones(3)
print(a, a[1], float(a[1]))
a[2] = 2.0
print(a)
points = torch.zeros(6)
points[0] = 4.0
points[1] = 1.0
points[2] = 5.0
points[3] = 3.0
points[4] = 2.0
points[5] = 1.0
print(points, float(points[0]), float(points[1]))
points = torch.tensor([[4.0, 1.0], [5.0, 3.0], [2.0, 1.0]])
print(points, points.shape, points[0, 1], points[0])
print(points[1:], points[1:, :], points[1:, 0], points[None].shape)

torch.manual_seed(0)
img_t = torch.randn(3, 5, 5)
weights = torch.tensor([0.2126, 0.7152, 0.0722])
batch_t = torch.randn(2, 3, 5, 5)
img_gray_naive = img_t.mean(-3)
batch_gray_naive = batch_t.mean(-3)
print(img_gray_naive.shape, batch_gray_naive.shape)
unsqueezed_weights = weights.unsqueeze(-1).unsqueeze_(-1)
img_weights = (img_t * unsqueezed_weights)
batch_weights = (batch_t * unsqueezed_weights)
img_gray_weighted = img_weights.sum(-3)
batch_gray_weighted = batch_weights.sum(-3)
print(batch_weights.shape, batch_t.shape, unsqueezed_weights.shape)
img_gray_weighted_fancy = torch.einsum('...chw,c->...hw', img_t, weights)
batch_gray_weighted_fancy = torch.einsum('...chw,c->...hw', batch_t, weights)
print(batch_gray_weighted_fancy.shape, torch.allclose(img_gray_weighted_fancy, img_gray_weighted))

double_points = torch.ones(10, 2, dtype=torch.double)
short_points = torch.tensor([[1, 2], [3, 4]], dtype=torch.short)
print(short_points.dtype, double_points.dtype)
double_points = torch.zeros(10, 2).double()
short_points = torch.ones(10, 2).short()
double_points = torch.zeros(10, 2).to(torch.double)
short_points = torch.ones(10, 2).to(dtype=torch.short)
points_64 = torch.rand(5, dtype=torch.double)
points_short = points_64.to(torch.short)
print(points_64 * points_short, (points_64 * points_short).dtype)

a = list(range(6))
a_t = torch.ones(3, 2)
a_t = a_t.t()
print(a_t.shape, a_t)
a = torch.ones(3, 2)
a_t = torch.transpose(a, 0, 1)
print(a.shape, a_t.shape)

points = torch.tensor([[4.0, 1.0], [5.0, 3.0], [2.0, 1.0]])
print(points.untyped_storage().nbytes(), points.storage_offset(), points.stride())
second_point = points[1]
print(second_point.storage_offset(), second_point.size(), second_point.shape,
      second_point.stride())
second_point = points[1].clone()
second_point[0] = 10.0
print(points)
second_point = points[1]
second_point[0] = 10.0
print(points)
points_t = points.t()
print(points_t, points.untyped_storage().data_ptr() == points_t.untyped_storage().data_ptr())
print(points.stride(), points_t.stride())
some_t = torch.ones(3, 4, 5)
transpose_t = some_t.transpose(0, 2)
print(some_t.shape, transpose_t.shape, some_t.stride(), transpose_t.stride())
print(points.is_contiguous(), points_t.is_contiguous())
points_t_cont = points_t.contiguous()
print(points_t_cont, points_t_cont.stride(), points_t_cont.is_contiguous())
print(points[:, 1].stride(), points[::2].stride(), points[1:, 1:].storage_offset())
print(torch.arange(12).view(3, 4)[:, 1:3].stride(), torch.ones(2, 3).expand(4, 2, 3).stride())
print(points.nelement(), points.numel(), points.dim(), points.ndim, points.element_size(),
      points.size(1), points.size(-1))

points = torch.ones(3, 4)
points_np = points.numpy()
print(points_np, points_np.dtype)
points = torch.from_numpy(points_np)
print(points, torch.from_numpy(np.arange(4)), torch.as_tensor(np.float32(2.5)))
points_np[0, 0] = 7.0
print(points[0, 0], torch.tensor(points_np)[0, 0], torch.from_numpy(np.zeros((2, 2))).dtype)

a = torch.ones(3, 2)
a.zero_()
print(a)
a.fill_(2.5).mul_(2).sub_(1).clamp_(max=3.5)
print(a, a.add_(torch.ones(2)), a.div_(2), a.pow_(2), a.neg_().abs_())
buf = io.BytesIO()
torch.save(points, buf)
buf.seek(0)
points_loaded = torch.load(buf)
print(points_loaded, torch.equal(points_loaded, points))
buf = io.BytesIO()
torch.save({"a": torch.arange(3), "b": [torch.ones(2)]}, buf)
buf.seek(0)
print(torch.load(buf))
print("RESULT: ok")
