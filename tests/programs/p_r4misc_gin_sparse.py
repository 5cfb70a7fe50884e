"""Graph isomorphism network (GIN, Xu et al.; weihua916/powerful-gnns' graphcnn.py) with a sparse
block-diagonal adjacency built by torch.sparse_coo_tensor and torch.sparse.mm, sum/mean graph
pooling through a sparse pooling matrix, eps learning, per-layer readout; plus DeepWalk-style
random walks drawn with torch.multinomial over adjacency rows. Synthetic graphs, not the TU
datasets."""
import importlib
import io
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
optim = torch.optim


class MLP(nn.Module):
    def __init__(self, num_layers, input_dim, hidden_dim, output_dim):
        super(MLP, self).__init__()
        self.linear_or_not = True
        self.num_layers = num_layers
        if num_layers < 1:
            raise ValueError("number of layers should be positive!")
        elif num_layers == 1:
            self.linear = nn.Linear(input_dim, output_dim)
        else:
            self.linear_or_not = False
            self.linears = torch.nn.ModuleList()
            self.batch_norms = torch.nn.ModuleList()
            self.linears.append(nn.Linear(input_dim, hidden_dim))
            for layer in range(num_layers - 2):
                self.linears.append(nn.Linear(hidden_dim, hidden_dim))
            self.linears.append(nn.Linear(hidden_dim, output_dim))
            for layer in range(num_layers - 1):
                self.batch_norms.append(nn.BatchNorm1d((hidden_dim)))

    def forward(self, x):
        if self.linear_or_not:
            return self.linear(x)
        else:
            h = x
            for layer in range(self.num_layers - 1):
                h = F.relu(self.batch_norms[layer](self.linears[layer](h)))
            return self.linears[self.num_layers - 1](h)


class GraphCNN(nn.Module):
    def __init__(self, num_layers, num_mlp_layers, input_dim, hidden_dim, output_dim,
                 final_dropout, learn_eps, graph_pooling_type, neighbor_pooling_type):
        super(GraphCNN, self).__init__()
        self.final_dropout = final_dropout
        self.num_layers = num_layers
        self.graph_pooling_type = graph_pooling_type
        self.neighbor_pooling_type = neighbor_pooling_type
        self.learn_eps = learn_eps
        self.eps = nn.Parameter(torch.zeros(self.num_layers - 1))

        self.mlps = torch.nn.ModuleList()
        self.batch_norms = torch.nn.ModuleList()
        for layer in range(self.num_layers - 1):
            if layer == 0:
                self.mlps.append(MLP(num_mlp_layers, input_dim, hidden_dim, hidden_dim))
            else:
                self.mlps.append(MLP(num_mlp_layers, hidden_dim, hidden_dim, hidden_dim))
            self.batch_norms.append(nn.BatchNorm1d(hidden_dim))

        self.linears_prediction = torch.nn.ModuleList()
        for layer in range(num_layers):
            if layer == 0:
                self.linears_prediction.append(nn.Linear(input_dim, output_dim))
            else:
                self.linears_prediction.append(nn.Linear(hidden_dim, output_dim))

    def __preprocess_neighbors_sumavepool(self, batch_graph):
        edge_mat_list = []
        start_idx = [0]
        for i, graph in enumerate(batch_graph):
            start_idx.append(start_idx[i] + len(graph["x"]))
            edge_mat_list.append(graph["edge_mat"] + start_idx[i])
        Adj_block_idx = torch.cat(edge_mat_list, 1)
        Adj_block_elem = torch.ones(Adj_block_idx.shape[1])

        if not self.learn_eps:
            num_node = start_idx[-1]
            self_loop_edge = torch.LongTensor([range(num_node), range(num_node)])
            elem = torch.ones(num_node)
            Adj_block_idx = torch.cat([Adj_block_idx, self_loop_edge], 1)
            Adj_block_elem = torch.cat([Adj_block_elem, elem], 0)

        Adj_block = torch.sparse.FloatTensor(Adj_block_idx, Adj_block_elem,
                                             torch.Size([start_idx[-1], start_idx[-1]]))
        return Adj_block

    def __preprocess_graphpool(self, batch_graph):
        start_idx = [0]
        for i, graph in enumerate(batch_graph):
            start_idx.append(start_idx[i] + len(graph["x"]))
        idx = []
        elem = []
        for i, graph in enumerate(batch_graph):
            if self.graph_pooling_type == "average":
                elem.extend([1. / len(graph["x"])] * len(graph["x"]))
            else:
                elem.extend([1] * len(graph["x"]))
            idx.extend([[i, j] for j in range(start_idx[i], start_idx[i + 1], 1)])
        elem = torch.FloatTensor(elem)
        idx = torch.LongTensor(idx).transpose(0, 1)
        graph_pool = torch.sparse_coo_tensor(idx, elem,
                                             torch.Size([len(batch_graph), start_idx[-1]]))
        return graph_pool

    def next_layer_eps(self, h, layer, padded_neighbor_list=None, Adj_block=None):
        pooled = torch.spmm(Adj_block, h)
        if self.neighbor_pooling_type == "average":
            degree = torch.spmm(Adj_block, torch.ones((Adj_block.shape[0], 1)))
            pooled = pooled / degree
        pooled = pooled + (1 + self.eps[layer]) * h
        pooled_rep = self.mlps[layer](pooled)
        h = self.batch_norms[layer](pooled_rep)
        h = F.relu(h)
        return h

    def forward(self, batch_graph):
        X_concat = torch.cat([graph["x"] for graph in batch_graph], 0)
        graph_pool = self.__preprocess_graphpool(batch_graph)
        Adj_block = self.__preprocess_neighbors_sumavepool(batch_graph)
        hidden_rep = [X_concat]
        h = X_concat
        for layer in range(self.num_layers - 1):
            h = self.next_layer_eps(h, layer, Adj_block=Adj_block)
            hidden_rep.append(h)
        score_over_layer = 0
        for layer, h in enumerate(hidden_rep):
            pooled_h = torch.spmm(graph_pool, h)
            score_over_layer += F.dropout(self.linears_prediction[layer](pooled_h),
                                          self.final_dropout, training=self.training)
        return score_over_layer


def make_graph(label, g):
    n = int(torch.randint(4, 7, (1,), generator=g))
    if label == 0:  # path
        src = torch.arange(n - 1)
        dst = src + 1
    else:  # triangle fan
        src = torch.cat([torch.zeros(n - 1, dtype=torch.long), torch.arange(1, n - 1)])
        dst = torch.cat([torch.arange(1, n), torch.arange(2, n)])
    edge_mat = torch.stack([torch.cat([src, dst]), torch.cat([dst, src])])
    deg = torch.bincount(edge_mat[0], minlength=n)
    x = F.one_hot(deg.clamp(max=3), 4).float()
    return {"x": x, "edge_mat": edge_mat, "label": label}


g = torch.Generator().manual_seed(3)
graphs = [make_graph(i % 2, g) for i in range(16)]
print(graphs[1]["x"], graphs[1]["edge_mat"])

torch.manual_seed(0)
model = GraphCNN(num_layers=3, num_mlp_layers=2, input_dim=4, hidden_dim=16, output_dim=2,
                 final_dropout=0.5, learn_eps=True, graph_pooling_type="sum",
                 neighbor_pooling_type="sum")
print(model)
print([n for n, _ in model.named_parameters()][:6])
adj = model._GraphCNN__preprocess_neighbors_sumavepool(graphs[:3])
pool = model._GraphCNN__preprocess_graphpool(graphs[:3])
print(adj.layout, adj.is_sparse, adj.shape, adj._nnz(), adj.dtype)
print(pool.to_dense())
print(adj.coalesce().indices()[:, :5], adj.coalesce().values()[:5])
print(torch.sparse.sum(adj, dim=1).to_dense())
buf = io.BytesIO()
torch.save({"adj": adj, "graph_pool": pool.coalesce()}, buf)
buf.seek(0)
cached = torch.load(buf)
print(cached["adj"].layout, cached["adj"].is_coalesced(), cached["graph_pool"].is_coalesced(),
      torch.equal(cached["adj"].to_dense(), adj.to_dense()), cached["graph_pool"]._nnz())

optimizer = optim.Adam(model.parameters(), lr=0.01)
scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
criterion = nn.CrossEntropyLoss()
for epoch in range(1, 6):
    model.train()
    perm = torch.randperm(len(graphs), generator=g)
    loss_accum = 0
    for i in range(0, 16, 8):
        batch_graph = [graphs[idx] for idx in perm[i:i + 8].tolist()]
        output = model(batch_graph)
        labels = torch.LongTensor([graph["label"] for graph in batch_graph])
        loss = criterion(output, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        loss_accum += loss.detach().cpu().numpy()
    scheduler.step()
    model.eval()
    with torch.no_grad():
        out = model(graphs)
    pred = out.max(1, keepdim=True)[1]
    labels = torch.LongTensor([graph["label"] for graph in graphs])
    correct = pred.eq(labels.view_as(pred)).sum().cpu().item()
    print(f"epoch {epoch} loss training: {loss_accum / 2:.6f} accuracy train: "
          f"{correct / len(graphs):.4f} eps {model.eps.data.tolist()}")
# (running_mean is not printed: the Linear biases feeding each BatchNorm get gradients that are
# pure rounding noise, which Adam turns into +-lr steps, so their values are machine-dependent)
bn0 = model.mlps[0].batch_norms[0]
print(model.eps.grad is not None, bn0.num_batches_tracked, bn0.weight[:4], bn0.running_var.shape)

# DeepWalk-style random walks over a dense adjacency via torch.multinomial
A = torch.zeros(6, 6)
ei = graphs[1]["edge_mat"]
A[ei[0], ei[1]] = 1.0
torch.manual_seed(5)
walks = []
for start in range(A.size(0)):
    walk = [start]
    for _ in range(4):
        probs = A[walk[-1]]
        walk.append(int(torch.multinomial(probs / probs.sum(), 1)))
    walks.append(walk)
print(walks)
print(torch.multinomial(torch.tensor([0.1, 0.0, 0.9, 0.5]), 3, replacement=False),
      torch.multinomial(torch.tensor([[1., 2.], [3., 1.]]), 4, replacement=True))
print("RESULT: gin", f"{loss.item():.4f}")
