"""GraphSAGE mean aggregation and graph classification by message passing, written in plain
torch as in the "GNNs from scratch" tutorials (PyG's SAGEConv/GCNConv/global_mean_pool
re-implemented with index_add_, scatter_reduce and scatter_add_), on synthetic mini-batches
of small graphs instead of MUTAG."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


def scatter_mean(src, index, dim_size):
    out = torch.zeros(dim_size, src.size(1), dtype=src.dtype)
    out.index_add_(0, index, src)
    count = torch.zeros(dim_size, dtype=src.dtype).index_add_(0, index, torch.ones_like(index,
                                                                                       dtype=src.dtype))
    return out / count.clamp(min=1).unsqueeze(-1)


class SAGEConv(nn.Module):
    """x_i' = W_1 x_i + W_2 mean_{j in N(i)} x_j"""

    def __init__(self, in_channels, out_channels, normalize=False, root_weight=True):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.normalize = normalize
        self.root_weight = root_weight
        self.lin_l = nn.Linear(in_channels, out_channels, bias=True)
        if self.root_weight:
            self.lin_r = nn.Linear(in_channels, out_channels, bias=False)

    def forward(self, x, edge_index):
        src, dst = edge_index
        # scatter_reduce mean, neighbours only
        agg = torch.zeros_like(x).scatter_reduce(0, dst.unsqueeze(-1).expand(-1, x.size(1)),
                                                 x[src], reduce="mean", include_self=False)
        out = self.lin_l(agg)
        if self.root_weight:
            out = out + self.lin_r(x)
        if self.normalize:
            out = F.normalize(out, p=2., dim=-1)
        return out

    def __repr__(self):
        return f'{self.__class__.__name__}({self.in_channels}, {self.out_channels}, aggr=mean)'


class GCNConv(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lin = nn.Linear(in_channels, out_channels, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_channels))

    def forward(self, x, edge_index):
        num_nodes = x.size(0)
        loops = torch.arange(num_nodes)
        edge_index = torch.cat([edge_index, torch.stack([loops, loops])], dim=1)
        row, col = edge_index
        deg = torch.zeros(num_nodes).scatter_add_(0, col, torch.ones(col.size(0)))
        deg_inv_sqrt = deg.pow(-0.5)
        deg_inv_sqrt[deg_inv_sqrt == float('inf')] = 0
        norm = deg_inv_sqrt[row] * deg_inv_sqrt[col]
        x = self.lin(x)
        msg = norm.view(-1, 1) * x[row]
        out = torch.zeros(num_nodes, x.size(1)).scatter_add_(
            0, col.view(-1, 1).expand_as(msg), msg)
        return out + self.bias


def global_mean_pool(x, batch, size=None):
    size = int(batch.max().item() + 1) if size is None else size
    return scatter_mean(x, batch, size)


def global_max_pool(x, batch, size):
    idx = batch.view(-1, 1).expand_as(x)
    return torch.full((size, x.size(1)), float('-inf')).scatter_reduce(0, idx, x, "amax")


class GNN(nn.Module):
    def __init__(self, in_channels, hidden_channels, num_classes):
        super().__init__()
        torch.manual_seed(12345)
        self.conv1 = GCNConv(in_channels, hidden_channels)
        self.conv2 = SAGEConv(hidden_channels, hidden_channels)
        self.conv3 = SAGEConv(hidden_channels, hidden_channels, normalize=True)
        self.lin = nn.Linear(2 * hidden_channels, num_classes)

    def forward(self, x, edge_index, batch, num_graphs):
        x = self.conv1(x, edge_index).relu()
        x = self.conv2(x, edge_index).relu()
        x = self.conv3(x, edge_index)
        x = torch.cat([global_mean_pool(x, batch, num_graphs),
                       global_max_pool(x, batch, num_graphs)], dim=1)
        x = F.dropout(x, p=0.5, training=self.training)
        return self.lin(x)


def make_graph(label, g):
    n = int(torch.randint(4, 8, (1,), generator=g))
    if label == 0:  # ring
        src = torch.arange(n)
        dst = (src + 1) % n
    else:  # star
        src = torch.zeros(n - 1, dtype=torch.long)
        dst = torch.arange(1, n)
    ei = torch.stack([torch.cat([src, dst]), torch.cat([dst, src])])
    x = torch.randn(n, 5, generator=g) * 0.3
    x[:, 0] = 1.0
    return x, ei, label


def collate(graphs):
    xs, eis, batch, ys = [], [], [], []
    offset = 0
    for i, (x, ei, y) in enumerate(graphs):
        xs.append(x)
        eis.append(ei + offset)
        batch.append(torch.full((x.size(0),), i, dtype=torch.long))
        ys.append(y)
        offset += x.size(0)
    return torch.cat(xs), torch.cat(eis, dim=1), torch.cat(batch), torch.tensor(ys)


g = torch.Generator().manual_seed(0)
dataset = [make_graph(i % 2, g) for i in range(24)]
x0, ei0, y0 = dataset[0]
print(f"Data(x={list(x0.shape)}, edge_index={list(ei0.shape)}, y={y0})")
perm = torch.randperm(len(dataset), generator=g)
dataset = [dataset[i] for i in perm.tolist()]
train_dataset, test_dataset = dataset[:16], dataset[16:]
print(f'Number of training graphs: {len(train_dataset)}')
print(f'Number of test graphs: {len(test_dataset)}')

x, edge_index, batch, y = collate(train_dataset[:4])
print(x.shape, edge_index.shape, batch.tolist(), y)
conv = SAGEConv(5, 3)
print(conv, conv(x, edge_index).shape)
print("in-degree", torch.bincount(edge_index[1], minlength=x.size(0)).tolist())
sr = torch.zeros(3, 2).scatter_reduce(0, torch.tensor([[0, 0], [2, 2], [0, 0]]),
                                      torch.tensor([[1., 2.], [3., 4.], [5., 6.]]),
                                      reduce="mean", include_self=False)
print(sr)
sr2 = torch.ones(3).scatter_reduce(0, torch.tensor([0, 0, 2]), torch.tensor([1., 2., 3.]),
                                   reduce="mean", include_self=True)
print(sr2)
sr3 = torch.zeros(3).scatter_reduce(0, torch.tensor([0, 0, 2]), torch.tensor([4., 2., 3.]),
                                    reduce="prod", include_self=False)
print(sr3, torch.zeros(4, dtype=torch.long).scatter_add(0, torch.tensor([1, 1, 3]),
                                                        torch.tensor([5, 6, 7])))

model = GNN(5, 16, 2)
print(model)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
criterion = torch.nn.CrossEntropyLoss()


def train():
    model.train()
    total = 0.
    for i in range(0, len(train_dataset), 8):
        x, edge_index, batch, y = collate(train_dataset[i:i + 8])
        out = model(x, edge_index, batch, y.size(0))
        loss = criterion(out, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        total += loss.item() * y.size(0)
    return total / len(train_dataset)


def test(loader):
    model.eval()
    x, edge_index, batch, y = collate(loader)
    out = model(x, edge_index, batch, y.size(0))
    pred = out.argmax(dim=1)
    correct = int((pred == y).sum())
    return correct / len(loader)


for epoch in range(1, 9):
    loss = train()
    train_acc = test(train_dataset)
    test_acc = test(test_dataset)
    print(f'Epoch: {epoch:03d}, Loss: {loss:.4f}, Train Acc: {train_acc:.4f}, '
          f'Test Acc: {test_acc:.4f}')

# gradient through scatter_reduce mean / amax and index_add_
xg = torch.randn(6, 3, requires_grad=True)
idx = torch.tensor([0, 1, 0, 2, 1, 0])
m = torch.zeros(3, 3).scatter_reduce(0, idx.view(-1, 1).expand(-1, 3), xg, "mean",
                                     include_self=False)
mx = torch.zeros(3, 3).scatter_reduce(0, idx.view(-1, 1).expand(-1, 3), xg, "amax")
s = torch.zeros(3, 3).index_add(0, idx, xg, alpha=2.0)
print(m.grad_fn.name(), mx.grad_fn.name(), s.grad_fn.name())
(m * torch.arange(9.).view(3, 3)).sum().backward(retain_graph=True)
print(xg.grad)
xg.grad = None
(mx.sum() + s.pow(2).sum()).backward()
print(xg.grad)
print("RESULT: sage_mpnn", f"{loss:.4f}")
