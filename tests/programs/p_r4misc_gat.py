"""Graph attention networks: Diego999/pyGAT's dense GraphAttentionLayer and GAT model (layers.py,
models.py, train.py) and a PyG-style sparse GATConv over edge_index with a scatter softmax, on a
small synthetic graph instead of Cora."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
optim = torch.optim


class GraphAttentionLayer(nn.Module):
    """Simple GAT layer, similar to https://arxiv.org/abs/1710.10903"""

    def __init__(self, in_features, out_features, dropout, alpha, concat=True):
        super(GraphAttentionLayer, self).__init__()
        self.dropout = dropout
        self.in_features = in_features
        self.out_features = out_features
        self.alpha = alpha
        self.concat = concat

        self.W = nn.Parameter(torch.empty(size=(in_features, out_features)))
        nn.init.xavier_uniform_(self.W.data, gain=1.414)
        self.a = nn.Parameter(torch.empty(size=(2 * out_features, 1)))
        nn.init.xavier_uniform_(self.a.data, gain=1.414)

        self.leakyrelu = nn.LeakyReLU(self.alpha)

    def forward(self, h, adj):
        Wh = torch.mm(h, self.W)  # h.shape: (N, in_features), Wh.shape: (N, out_features)
        e = self._prepare_attentional_mechanism_input(Wh)

        zero_vec = -9e15 * torch.ones_like(e)
        attention = torch.where(adj > 0, e, zero_vec)
        attention = F.softmax(attention, dim=1)
        attention = F.dropout(attention, self.dropout, training=self.training)
        h_prime = torch.matmul(attention, Wh)

        if self.concat:
            return F.elu(h_prime)
        else:
            return h_prime

    def _prepare_attentional_mechanism_input(self, Wh):
        Wh1 = torch.matmul(Wh, self.a[:self.out_features, :])
        Wh2 = torch.matmul(Wh, self.a[self.out_features:, :])
        # broadcast add
        e = Wh1 + Wh2.T
        return self.leakyrelu(e)

    def __repr__(self):
        return self.__class__.__name__ + ' (' + str(self.in_features) + ' -> ' + \
            str(self.out_features) + ')'


class GAT(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout, alpha, nheads):
        """Dense version of GAT."""
        super(GAT, self).__init__()
        self.dropout = dropout

        self.attentions = [GraphAttentionLayer(nfeat, nhid, dropout=dropout, alpha=alpha,
                                               concat=True) for _ in range(nheads)]
        for i, attention in enumerate(self.attentions):
            self.add_module('attention_{}'.format(i), attention)

        self.out_att = GraphAttentionLayer(nhid * nheads, nclass, dropout=dropout, alpha=alpha,
                                           concat=False)

    def forward(self, x, adj):
        x = F.dropout(x, self.dropout, training=self.training)
        x = torch.cat([att(x, adj) for att in self.attentions], dim=1)
        x = F.dropout(x, self.dropout, training=self.training)
        x = F.elu(self.out_att(x, adj))
        return F.log_softmax(x, dim=1)


def accuracy(output, labels):
    preds = output.max(1)[1].type_as(labels)
    correct = preds.eq(labels).double()
    correct = correct.sum()
    return correct / len(labels)


# synthetic "citation" graph: 3 communities
torch.manual_seed(72)
N, nfeat, nclass = 24, 10, 3
labels = torch.arange(N) % nclass
centers = torch.randn(nclass, nfeat)
features = centers[labels] + 0.8 * torch.randn(N, nfeat)
same = labels.unsqueeze(0) == labels.unsqueeze(1)
rand_adj = torch.rand(N, N)
adj = ((same & (rand_adj < 0.35)) | (rand_adj < 0.05)).float()
adj = ((adj + adj.t()) > 0).float() + torch.eye(N)
adj = adj.clamp(max=1.0)
# row-normalize like pyGAT's utils.normalize_adj
rowsum = adj.sum(1)
r_inv_sqrt = rowsum.pow(-0.5).flatten()
r_inv_sqrt[torch.isinf(r_inv_sqrt)] = 0.
r_mat_inv_sqrt = torch.diag(r_inv_sqrt)
adj = adj.mm(r_mat_inv_sqrt).t().mm(r_mat_inv_sqrt)
print("adj", adj.shape, adj.dtype, f"{adj.sum().item():.4f}", int((adj > 0).sum()))
features = features / features.sum(1, keepdim=True).abs().clamp(min=1.0)
idx_train = torch.LongTensor(range(0, 12))
idx_val = torch.LongTensor(range(12, 18))
idx_test = torch.LongTensor(range(18, 24))

model = GAT(nfeat=nfeat, nhid=8, nclass=nclass, dropout=0.6, alpha=0.2, nheads=4)
print(model)
print([k for k in model.state_dict().keys()])
print(sum(p.numel() for p in model.parameters()))
optimizer = optim.Adam(model.parameters(), lr=0.005, weight_decay=5e-4)


def train(epoch):
    model.train()
    optimizer.zero_grad()
    output = model(features, adj)
    loss_train = F.nll_loss(output[idx_train], labels[idx_train])
    acc_train = accuracy(output[idx_train], labels[idx_train])
    loss_train.backward()
    optimizer.step()

    model.eval()
    output = model(features, adj)
    loss_val = F.nll_loss(output[idx_val], labels[idx_val])
    acc_val = accuracy(output[idx_val], labels[idx_val])
    print('Epoch: {:04d}'.format(epoch + 1),
          'loss_train: {:.4f}'.format(loss_train.data.item()),
          'acc_train: {:.4f}'.format(acc_train.data.item()),
          'loss_val: {:.4f}'.format(loss_val.data.item()),
          'acc_val: {:.4f}'.format(acc_val.data.item()))
    return loss_val.data.item()


loss_values = []
for epoch in range(8):
    loss_values.append(train(epoch))
best_epoch = loss_values.index(min(loss_values))
print("best epoch", best_epoch)

model.eval()
output = model(features, adj)
loss_test = F.nll_loss(output[idx_test], labels[idx_test])
acc_test = accuracy(output[idx_test], labels[idx_test])
print("Test set results:", "loss= {:.4f}".format(loss_test.item()),
      "accuracy= {:.4f}".format(acc_test.item()))
print(output.grad_fn, output.shape, acc_test.dtype)


# ---- sparse GATConv over edge_index (PyG's gat_conv.py written in plain torch) ----
def add_self_loops(edge_index, num_nodes):
    loop = torch.arange(num_nodes, dtype=edge_index.dtype)
    return torch.cat([edge_index, torch.stack([loop, loop])], dim=1)


def scatter_softmax(src, index, num_nodes):
    # src: [E, H]; softmax of src over edges sharing the same target node
    size = (num_nodes,) + tuple(src.shape[1:])
    idx = index.view(-1, 1).expand_as(src)
    src_max = torch.full(size, float("-inf")).scatter_reduce(0, idx, src, reduce="amax",
                                                             include_self=True)
    out = (src - src_max.index_select(0, index)).exp()
    out_sum = torch.zeros(size).scatter_add_(0, idx, out) + 1e-16
    return out / out_sum.index_select(0, index)


class GATConv(nn.Module):
    def __init__(self, in_channels, out_channels, heads=1, concat=True, negative_slope=0.2,
                 dropout=0.0):
        super().__init__()
        self.in_channels, self.out_channels, self.heads = in_channels, out_channels, heads
        self.concat, self.negative_slope, self.dropout = concat, negative_slope, dropout
        self.lin = nn.Linear(in_channels, heads * out_channels, bias=False)
        self.att_src = nn.Parameter(torch.empty(1, heads, out_channels))
        self.att_dst = nn.Parameter(torch.empty(1, heads, out_channels))
        self.bias = nn.Parameter(torch.empty(heads * out_channels if concat else out_channels))
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.xavier_uniform_(self.lin.weight)
        nn.init.xavier_uniform_(self.att_src)
        nn.init.xavier_uniform_(self.att_dst)
        nn.init.zeros_(self.bias)

    def forward(self, x, edge_index, return_attention_weights=False):
        H, C = self.heads, self.out_channels
        N = x.size(0)
        x = self.lin(x).view(-1, H, C)
        alpha_src = (x * self.att_src).sum(dim=-1)
        alpha_dst = (x * self.att_dst).sum(dim=-1)
        edge_index = add_self_loops(edge_index, N)
        src, dst = edge_index[0], edge_index[1]
        alpha = alpha_src[src] + alpha_dst[dst]
        alpha = F.leaky_relu(alpha, self.negative_slope)
        alpha = scatter_softmax(alpha, dst, N)
        alpha = F.dropout(alpha, p=self.dropout, training=self.training)
        msg = x[src] * alpha.unsqueeze(-1)
        out = torch.zeros(N, H, C).index_add_(0, dst, msg)
        if self.concat:
            out = out.view(-1, H * C)
        else:
            out = out.mean(dim=1)
        out = out + self.bias
        if return_attention_weights:
            return out, (edge_index, alpha)
        return out

    def __repr__(self):
        return (f'{self.__class__.__name__}({self.in_channels}, '
                f'{self.out_channels}, heads={self.heads})')


class SparseGAT(nn.Module):
    def __init__(self, nfeat, nhid, nclass, heads=4):
        super().__init__()
        self.conv1 = GATConv(nfeat, nhid, heads=heads, dropout=0.0)
        self.conv2 = GATConv(nhid * heads, nclass, heads=2, concat=False)

    def forward(self, x, edge_index):
        x = F.dropout(x, p=0.5, training=self.training)
        x = F.elu(self.conv1(x, edge_index))
        x = F.dropout(x, p=0.5, training=self.training)
        return self.conv2(x, edge_index)


torch.manual_seed(0)
A = (adj > 0) & ~torch.eye(N, dtype=torch.bool)
edge_index = A.nonzero().t().contiguous()
print("edge_index", edge_index.shape, edge_index.dtype, edge_index[:, :6].tolist())
net = SparseGAT(nfeat, 8, nclass)
print(net)
for name, p in net.named_parameters():
    print(name, tuple(p.shape), p.requires_grad)
opt = torch.optim.Adam(net.parameters(), lr=0.01, weight_decay=5e-4)
for step in range(10):
    net.train()
    opt.zero_grad()
    out = net(features, edge_index)
    loss = F.cross_entropy(out[idx_train], labels[idx_train])
    loss.backward()
    opt.step()
    if step % 3 == 0:
        print(f"step {step} loss {loss.item():.4f} grad_norm "
              f"{net.conv1.att_src.grad.norm().item():.4f}")
net.eval()
with torch.no_grad():
    out, (ei, att) = net.conv1(features, edge_index, return_attention_weights=True)
print(out.shape, ei.shape, att.shape)
sums = torch.zeros(N, att.size(1)).index_add_(0, ei[1], att)
print("attention sums to one:", torch.allclose(sums, torch.ones_like(sums)))
print(att[:5])
pred = net(features, edge_index).argmax(dim=1)
print("test acc", (pred[idx_test] == labels[idx_test]).float().mean().item())
print("RESULT: gat", f"{loss.item():.4f}")
