"""torch.sparse documentation tour + a GCN layer with a sparse normalized adjacency
(torch.sparse docs, Kipf & Welling style layer): sparse_coo_tensor, coalesce, indices/values,
to_dense, torch.sparse.mm, sparse @ dense, torch.sparse.sum, to_sparse, CSR layout, sparse
arithmetic."""

import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

i = [[0, 1, 1], [2, 0, 2]]
v = [3, 4, 5]
s = torch.sparse_coo_tensor(i, v, (2, 3))
print(s)
print(s.to_dense())
print(s.is_sparse, s.layout, s.dtype, s.shape, s.sparse_dim(), s.dense_dim(), s._nnz())

# uncoalesced: duplicate indices are summed by coalesce
i2 = torch.tensor([[1, 1]])
v2 = torch.tensor([3, 4], dtype=torch.float32)
s2 = torch.sparse_coo_tensor(i2, v2, (3,))
print(s2.is_coalesced())
c = s2.coalesce()
print(c.is_coalesced(), c.indices(), c.values())
print(s2.to_dense())

# hybrid tensor: sparse dim 1, dense dim 1
s3 = torch.sparse_coo_tensor(torch.tensor([[0, 2]]), torch.tensor([[1.0, 2.0], [3.0, 4.0]]), (3, 2))
print(s3.sparse_dim(), s3.dense_dim(), s3.to_dense())

# dense -> sparse and back
torch.manual_seed(0)
d = torch.randn(4, 5)
d[d.abs() < 0.8] = 0
sp = d.to_sparse()
print(sp.indices())
print(sp.values())
print(torch.equal(sp.to_dense(), d))
print("sparse sum", torch.sparse.sum(sp).item(), torch.sparse.sum(sp, dim=1).to_dense())

csr = d.to_sparse_csr()
print(csr.layout, csr.is_sparse, csr.is_sparse_csr, csr._nnz())
print(csr)
print(csr.crow_indices(), csr.col_indices())
print(csr.values())
print(torch.equal(csr.to_dense(), d))
csr2 = sp.to_sparse_csr()
print(torch.equal(csr2.crow_indices(), csr.crow_indices()),
      torch.allclose(csr2 @ torch.ones(5, 2), d.sum(1, keepdim=True).expand(4, 2)))
print((csr * 2).values(), (csr + csr).layout, csr.to_sparse().indices())

# sparse x dense products
w = torch.randn(5, 3)
print(torch.allclose(torch.sparse.mm(sp, w), d @ w))
print(torch.allclose(sp @ w, d @ w))
print(torch.allclose(torch.mm(sp, w), d @ w))

# elementwise on sparse
print((sp * 2).to_dense())
print((sp + sp).coalesce().values())
print(sp.t().coalesce().indices())
sq = sp.to_dense()[:, :4].to_sparse()
print((sq - sq.t()).to_dense())
print((sq * sq.t()).coalesce().values(), (sp * sp).is_coalesced())
print((-sp / 2).values(), (d + sp).layout)
try:
    sp + d
except Exception as e:
    print(type(e).__name__, e)


def normalized_adjacency(edge_index, n):
    ei = torch.cat([edge_index, edge_index.flip(0), torch.arange(n).repeat(2, 1)], dim=1)
    vals = torch.ones(ei.shape[1])
    A = torch.sparse_coo_tensor(ei, vals, (n, n)).coalesce()
    A = torch.sparse_coo_tensor(A.indices(), torch.ones_like(A.values()), (n, n),
                                is_coalesced=True)
    deg = torch.sparse.sum(A, dim=1).to_dense()
    dinv = deg.pow(-0.5)
    r, col = A.indices()
    return torch.sparse_coo_tensor(A.indices(), dinv[r] * A.values() * dinv[col], (n, n))


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(in_features, out_features))
        self.bias = nn.Parameter(torch.zeros(out_features))
        nn.init.xavier_uniform_(self.weight)

    def forward(self, x, adj):
        support = x @ self.weight
        return torch.sparse.mm(adj, support) + self.bias


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nclass):
        super().__init__()
        self.gc1 = GraphConvolution(nfeat, nhid)
        self.gc2 = GraphConvolution(nhid, nclass)

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        return F.log_softmax(self.gc2(x, adj), dim=1)


n = 12
edge_index = torch.randint(0, n, (2, 20))
adj = normalized_adjacency(edge_index, n)
print("adj nnz", adj._nnz(), adj.coalesce().values()[:4])
x = torch.randn(n, 6)
y = torch.randint(0, 3, (n,))
model = GCN(6, 8, 3)
print(model)
opt = torch.optim.Adam(model.parameters(), lr=0.05)
for epoch in range(10):
    opt.zero_grad()
    out = model(x, adj)
    loss = F.nll_loss(out, y)
    loss.backward()
    opt.step()
    if epoch % 3 == 0:
        acc = (out.argmax(1) == y).float().mean()
        print(f"epoch {epoch} loss {loss.item():.4f} acc {acc.item():.4f}")

# gradient w.r.t. the sparse values
vals = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
S = torch.sparse_coo_tensor(torch.tensor([[0, 1, 2], [1, 2, 0]]), vals, (3, 3))
out = torch.sparse.mm(S, torch.ones(3, 2)).sum()
out.backward()
print(vals.grad)
print("RESULT:", round(loss.item(), 4))
