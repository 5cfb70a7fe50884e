"""A "NumPy to PyTorch" cheat-sheet: each NumPy idiom next to its torch spelling, printed
side by side (creation, shapes, axis/dim, stacking/splitting, indexing helpers, math)."""
import importlib
import os

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))

a_np = np.arange(12, dtype=np.float32).reshape(3, 4)
a = torch.from_numpy(a_np)
print("from_numpy:", a.dtype, a.shape, a.numpy().dtype, np.shares_memory(a.numpy(), a_np))
a_np[0, 0] = 100.0
print("shared:", a[0, 0].item())
a_np[0, 0] = 0.0
t = torch.tensor(a_np)
a_np[0, 0] = -1.0
print("copied:", t[0, 0].item(), torch.as_tensor(a_np)[0, 0].item())
a_np[0, 0] = 0.0

print("ndim/size:", a_np.ndim, a.ndim, a.dim(), a_np.size, a.numel(), a.nelement(), a.size(1))
print("shape:", a_np.shape, a.shape, tuple(a.shape), list(a.size()), a.shape[-1])
print("itemsize:", a_np.itemsize, a.element_size(), a.itemsize, a_np.nbytes, a.nbytes)
print("strides:", a_np.strides, a.stride(), a.stride(0), a.T.stride())

print("swapaxes:", np.swapaxes(a_np, 0, 1).shape, torch.swapaxes(a, 0, 1).shape,
      a.swapdims(0, 1).shape, a.transpose(-1, -2).shape)
b3 = torch.arange(24).reshape(2, 3, 4)
print("moveaxis:", np.moveaxis(b3.numpy(), 0, -1).shape, torch.moveaxis(b3, 0, -1).shape,
      b3.movedim((0, 1), (2, 0)).shape, b3.permute(2, 0, 1).shape)
print("newaxis:", a[:, None].shape, a[None, :, None].shape, a.unsqueeze(-1).shape,
      a_np[np.newaxis].shape)
print("ravel:", a.ravel(), a.flatten().shape, a.reshape(-1).shape, a.view(2, -1).shape)
print("expand_dims/squeeze:", torch.unsqueeze(a, 1).shape,
      torch.zeros(1, 3, 1, 2).squeeze((0, 2)).shape, torch.zeros(1, 3, 1).squeeze(-1).shape)
print("atleast:", torch.atleast_1d(torch.tensor(1.0)), torch.atleast_2d(torch.arange(3)),
      torch.atleast_3d(torch.arange(3)).shape, torch.atleast_2d(torch.tensor(1), torch.ones(2)))

x = torch.tensor([1, 2, 3])
y = torch.tensor([4, 5, 6])
print("concatenate:", torch.concatenate([x, y]), torch.concat([x, y]), torch.cat([x, y], 0))
print("column_stack:", torch.column_stack([x, y]), np.column_stack([x.numpy(), y.numpy()]))
print("row_stack:", torch.row_stack([x, y]), torch.vstack([x, y]))
print("dstack:", torch.dstack([x, y]), torch.dstack([x, y]).shape)
print("hstack 2d:", torch.hstack([x[:, None], y[:, None]]).shape)
print("tile:", torch.tile(x, (2,)), torch.tile(x, (2, 2)), x.tile(2, 1, 1).shape,
      np.tile(x.numpy(), 2))
print("repeat:", x.repeat(2), np.repeat(x.numpy(), 2), x.repeat_interleave(2),
      torch.repeat_interleave(x, torch.tensor([1, 0, 3])))
print("split:", torch.tensor_split(torch.arange(7), 3), torch.tensor_split(torch.arange(7),
                                                                             [1, 5]))
print("hsplit:", torch.hsplit(a, 2), torch.hsplit(a, [1, 3]))
print("vsplit:", torch.vsplit(a, 3), torch.vsplit(a, [1]))
print("dsplit:", [p.shape for p in torch.dsplit(b3, [1, 2])], torch.dsplit(b3, 2)[1].shape)
print("array_split:", np.array_split(np.arange(7), 3), torch.arange(7).tensor_split(3, dim=0))

print("argmax axis:", a.argmax(dim=1), a_np.argmax(axis=1), a.argmax(1, keepdim=True).shape)
print("sum axis:", a.sum(axis=0), a.sum(dim=(0, 1)), a.sum(0, keepdim=True),
      np.sum(a_np, axis=(0, 1)))
print("mean/std:", a.mean(), a.std(), a_np.std(), a.std(unbiased=False), a.std(correction=0),
      a.var(dim=1, correction=2))
print("prod/cumsum:", a[1].prod(), a.cumsum(axis=1)[2], np.cumsum(a_np, axis=1)[2])
print("clip:", torch.clip(x, 2, 2), x.clip(min=2), x.clamp(max=2), np.clip(x.numpy(), 2, None))
print("round:", torch.round(torch.tensor([0.5, 1.5, 2.5, -0.5, 1.2345])),
      torch.round(torch.tensor([1.2345, 12.345]), decimals=2), np.round(1.2345, 2),
      torch.tensor([1234.5]).round(decimals=-2))
print("abs/sign:", torch.absolute(torch.tensor([-1.5, 2.0])), torch.tensor([-2.0, 0.0, 3.0]).sign())
print("where:", torch.where(x > 1, x, -x), np.where(x.numpy() > 1)[0], torch.where(x > 1)[0])
print("argwhere:", torch.argwhere(a > 9), np.argwhere(a_np > 9))
print("nonzero:", np.nonzero(a_np > 9), torch.nonzero(a > 9, as_tuple=True))
print("take_along:", torch.take_along_dim(a, a.argmax(1, keepdim=True), dim=1),
      np.take_along_axis(a_np, a_np.argmax(1)[:, None], axis=1))
print("take_along flat:", torch.take_along_dim(a, torch.tensor([0, 11, 5])))
print("put:", torch.zeros(2, 3).put_(torch.tensor([0, 5]), torch.tensor([7.0, 8.0])),
      torch.zeros(2, 3).put(torch.tensor([1, 1]), torch.tensor([1.0, 2.0]), accumulate=True))
print("diff:", torch.diff(x), torch.diff(x, n=2), torch.diff(x, prepend=torch.tensor([0])),
      torch.diff(a, dim=0), torch.diff(x, append=torch.tensor([10, 20])))
print("outer/inner:", torch.outer(x, y), torch.inner(x, y), np.outer(x.numpy(), y.numpy())[1])
print("allclose:", torch.allclose(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-9])),
      torch.isclose(torch.tensor([1.0, float('nan')]), torch.tensor([1.0, float('nan')])),
      torch.isclose(torch.tensor([1.0, float('nan')]), torch.tensor([1.1, float('nan')]),
                    rtol=0.2, equal_nan=True),
      torch.equal(x, y), torch.equal(x, x.clone()))
print("linspace/logspace:", torch.linspace(0, 1, 5), torch.logspace(0, 2, 3),
      torch.logspace(0, 3, 4, base=2))
print("eye/full/empty_like:", torch.eye(2, 3), torch.full((2, 2), 7), torch.full((2,), 1.5).dtype,
      torch.zeros_like(a).shape, torch.full_like(x, 3), torch.ones_like(a, dtype=torch.int32).dtype)
print("flip:", torch.flipud(a)[0], torch.fliplr(a)[0], torch.flip(a, dims=(0, 1))[0],
      torch.rot90(a)[0], torch.rot90(a, 2)[0], torch.rot90(a, -1, dims=[0, 1])[0])
print("copy:", np.copy(a_np)[0, 1], a.clone()[0, 1], a.detach().clone().requires_grad)
print("astype:", a.to(torch.int64).dtype, a.type(torch.int16).dtype, a.int().dtype, a.type())
print("triu_indices:", torch.triu_indices(3, 3), torch.tril_indices(3, 3, offset=-1),
      np.triu_indices(3))
print("RESULT:", float(a.sum()), a.numpy().sum())
