""""einsum is all you need" (Rocktaschel's einsum blog post, every example) followed by a
shape-manipulation drill: split/chunk/tensor_split/unbind, the stack family, meshgrid with both
indexings, cartesian_prod/combinations, diagonal/diag_embed/tril/triu on batches, kron,
block_diag, rot90, unfold and the error messages of wrong shapes."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))

torch.manual_seed(3)
a = torch.arange(6).reshape(2, 3)
print(torch.einsum('ij->ji', a))                      # transpose
print(torch.einsum('ij->', a))                        # sum
print(torch.einsum('ij->j', a))                       # column sum
print(torch.einsum('ij->i', a))                       # row sum
b = torch.arange(3)
print(torch.einsum('ik,k->i', a, b))                  # matrix-vector
b = torch.arange(15).reshape(3, 5)
print(torch.einsum('ik,kj->ij', a, b))                # matrix-matrix
a = torch.arange(3)
b = torch.arange(3, 6)
print(torch.einsum('i,i->', a, b))                    # dot product
a = torch.arange(6).reshape(2, 3)
b = torch.arange(6, 12).reshape(2, 3)
print(torch.einsum('ij,ij->', a, b))                  # dot product of matrices
print(torch.einsum('ij,ij->ij', a, b))                # hadamard
a = torch.arange(3)
b = torch.arange(3, 7)
print(torch.einsum('i,j->ij', a, b))                  # outer
a = torch.randn(3, 2, 5)
b = torch.randn(3, 5, 3)
print(torch.einsum('ijk,ikl->ijl', a, b))             # batch matmul
a = torch.randn(2, 3, 5, 7)
b = torch.randn(11, 13, 3, 17, 5)
print(torch.einsum('pqrs,tuqvr->pstuv', a, b).shape)  # tensor contraction
a = torch.randn(2, 3)
b = torch.randn(5, 3, 7)
c = torch.randn(2, 7)
print(torch.einsum('ik,jkl,il->ij', a, b, c))         # bilinear
print(torch.nn.functional.bilinear(a, c, b).shape)
m = torch.arange(9.0).view(3, 3)
print(torch.einsum('ii->i', m), torch.einsum('ii', m), torch.einsum('...ii->...i', m[None]))
print(torch.einsum(m, [0, 1], [1]), torch.einsum(m, [0, 1], m, [1, 2], [0, 2]))
print(torch.einsum('b h i d, b h j d -> b h i j', torch.ones(1, 2, 3, 4),
                   torch.ones(1, 2, 5, 4)).shape)
print(torch.einsum('...d,...d->...', torch.ones(2, 3, 4), torch.ones(3, 4)))
print(torch.einsum('ij,jk', torch.ones(2, 3), torch.ones(3, 2)), torch.einsum('i->', torch.ones(0)))
for bad in [lambda: torch.einsum('ij,jk->ik', torch.ones(2, 3), torch.ones(2, 3)),
            lambda: torch.einsum('ij->ijk', torch.ones(2, 3)),
            lambda: torch.einsum('i,j', torch.ones(2)),
            lambda: torch.einsum('ij', torch.ones(3))]:
    try:
        bad()
    except Exception as e:
        print(type(e).__name__, e)

x = torch.arange(10)
print(x.split(3), x.split([2, 3, 5]), x.chunk(4), x.chunk(6), torch.chunk(torch.arange(5), 2))
print(x.tensor_split(3), x.tensor_split((2, 5)), x.tensor_split(torch.tensor([1, 8])),
      torch.tensor_split(x, torch.tensor(4)))
y = torch.arange(24).view(2, 3, 4)
print([t.shape for t in y.split(2, dim=-1)], [t.shape for t in y.chunk(2, 1)],
      [t.shape for t in y.unbind(2)], [t.shape for t in torch.split(y, [1, 2], 1)])
print([t.shape for t in y.tensor_split([1, 3], dim=2)], y.split(1)[1].shape)
for bad in [lambda: x.split([2, 3]), lambda: x.view(3, -1), lambda: torch.stack([x, x[:5]]),
            lambda: torch.cat([y, x]), lambda: torch.cat([y, y[:, :2, :3]], dim=1),
            lambda: y.chunk(0), lambda: y.unbind(3), lambda: torch.cat([]),
            lambda: y.narrow(2, 3, 2), lambda: y.unflatten(1, (2, 2)),
            lambda: y.permute(0, 1), lambda: y.permute(0, 1, 1), lambda: y.transpose(0, 3),
            lambda: y.reshape(5, -1), lambda: y.flatten(2, 1), lambda: y.movedim(0, 3)]:
    try:
        bad()
    except Exception as e:
        print(type(e).__name__, str(e).split("\n")[0])
p, q = torch.tensor([1, 2]), torch.tensor([3, 4])
print(torch.stack([p, q]), torch.stack([p, q], dim=1), torch.stack((p, q), -1).shape)
print(torch.hstack([p, q]), torch.vstack([p, q]), torch.dstack([p, q]), torch.column_stack([p, q]))
print(torch.row_stack([p, q]), torch.cat([p[None], q[None]]), torch.cat([p, torch.tensor([])]))
print(torch.hstack([torch.ones(2, 1), torch.zeros(2, 2)]),
      torch.vstack([torch.ones(1, 2), torch.zeros(2)]))
print(torch.dstack([torch.ones(2, 2), torch.zeros(2, 2, 1)]).shape,
      torch.column_stack([torch.ones(3), torch.zeros(3, 2)]).shape)
xs, ys = torch.meshgrid(torch.arange(3), torch.arange(2), indexing="ij")
print(xs, ys)
xs, ys = torch.meshgrid(torch.arange(3), torch.arange(2), indexing="xy")
print(xs, ys, [g.shape for g in torch.meshgrid(torch.arange(2), torch.arange(3),
                                                  torch.arange(4), indexing="xy")])
grid = torch.stack(torch.meshgrid(torch.linspace(-1, 1, 3), torch.linspace(-1, 1, 2),
                                  indexing="ij"), dim=-1)
print(grid.shape, grid.reshape(-1, 2))
print(torch.cartesian_prod(torch.tensor([1, 2]), torch.tensor([3, 4, 5])),
      torch.cartesian_prod(torch.tensor([7, 8])))
c = torch.tensor([1, 2, 3, 4])
print(torch.combinations(c), torch.combinations(c, r=3), torch.combinations(c[:3],
                                                                            with_replacement=True))
print(torch.combinations(c, r=1).shape)
B = torch.arange(2 * 3 * 3).view(2, 3, 3)
print(B.diagonal(dim1=-2, dim2=-1), B.diagonal(offset=1, dim1=1, dim2=2),
      torch.diagonal(B, -1, 0, 2), B.diagonal(offset=5, dim1=1, dim2=2).shape)
print(torch.diag_embed(torch.tensor([[1, 2], [3, 4]])), torch.diag_embed(torch.tensor([1, 2]),
                                                                          offset=1).shape)
print(torch.diag_embed(torch.ones(2, 3), offset=-1, dim1=0, dim2=2).shape)
print(torch.diag(torch.tensor([1, 2]), 1), torch.diag(torch.arange(9).view(3, 3), -1),
      torch.diagflat(torch.tensor([[1, 2], [3, 4]])))
print(B.tril(), B.triu(1), torch.tril(torch.ones(2, 4), -1), torch.triu(torch.ones(4, 2), -2))
print(torch.tril_indices(4, 3, 1), torch.triu_indices(3, 4, -1), torch.tril_indices(3, 3).dtype)
r, cc = torch.triu_indices(3, 3, 1)
S = torch.zeros(3, 3)
S[r, cc] = torch.tensor([1.0, 2.0, 3.0])
print(S + S.T)
print(torch.kron(torch.eye(2), torch.tensor([[1.0, 2.0], [3.0, 4.0]])),
      torch.block_diag(torch.ones(1, 2), torch.tensor([[5]]), torch.tensor([7, 8])))
r2 = torch.arange(6).view(2, 3)
print(torch.rot90(r2), torch.rot90(r2, 2), torch.rot90(r2, -1), torch.rot90(r2, 3, [1, 0]))
print(torch.arange(8).unfold(0, 3, 2), torch.arange(12).view(3, 4).unfold(1, 2, 2).shape)
print(r2.repeat(2, 1, 1).shape, r2.repeat_interleave(torch.tensor([1, 2]), dim=0),
      r2.repeat_interleave(2, dim=1), torch.repeat_interleave(torch.tensor(3), 2))
print(r2.flatten(), r2.flatten(0, 1), r2.unflatten(1, (1, 3)).shape,
      r2.unflatten(-1, (3, -1)).shape)
print(r2.narrow(1, 1, 2), r2.narrow(0, torch.tensor(1), 1), r2.select(1, -1), r2.movedim(1, 0))
print(torch.swapdims(torch.ones(2, 3, 4), 0, 2).shape, torch.ones(2, 3, 4).mT.shape, r2.mH.shape,
      r2.H.shape, r2.adjoint().shape)
print("RESULT:", grid.sum().item(), S.sum().item())
