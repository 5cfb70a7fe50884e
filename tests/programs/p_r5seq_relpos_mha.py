"""Relative position self-attention (Shaw et al. 2018) as in evelinehong's / the popular
"RelativePosition + MultiHeadAttentionLayer" implementation (clipped relative distances,
embedding tables for keys and values, einsum-free matmul form), checked side by side with
nn.MultiheadAttention used the ways seq2seq code uses it: kdim/vdim cross-attention,
key_padding_mask bool vs float, need_weights with average_attn_weights=False, batch_first,
causal attn_mask; trained a few steps on a toy tagging task."""

import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


class RelativePosition(nn.Module):
    def __init__(self, num_units, max_relative_position):
        super().__init__()
        self.num_units = num_units
        self.max_relative_position = max_relative_position
        self.embeddings_table = nn.Parameter(torch.Tensor(max_relative_position * 2 + 1, num_units))
        nn.init.xavier_uniform_(self.embeddings_table)

    def forward(self, length_q, length_k):
        range_vec_q = torch.arange(length_q)
        range_vec_k = torch.arange(length_k)
        distance_mat = range_vec_k[None, :] - range_vec_q[:, None]
        distance_mat_clipped = torch.clamp(
            distance_mat, -self.max_relative_position, self.max_relative_position
        )
        final_mat = distance_mat_clipped + self.max_relative_position
        final_mat = torch.LongTensor(final_mat)
        return self.embeddings_table[final_mat]


class MultiHeadAttentionLayer(nn.Module):
    def __init__(self, hid_dim, n_heads, dropout):
        super().__init__()
        assert hid_dim % n_heads == 0
        self.hid_dim = hid_dim
        self.n_heads = n_heads
        self.head_dim = hid_dim // n_heads
        self.max_relative_position = 2
        self.relative_position_k = RelativePosition(self.head_dim, self.max_relative_position)
        self.relative_position_v = RelativePosition(self.head_dim, self.max_relative_position)
        self.fc_q = nn.Linear(hid_dim, hid_dim)
        self.fc_k = nn.Linear(hid_dim, hid_dim)
        self.fc_v = nn.Linear(hid_dim, hid_dim)
        self.fc_o = nn.Linear(hid_dim, hid_dim)
        self.dropout = nn.Dropout(dropout)
        self.scale = torch.sqrt(torch.FloatTensor([self.head_dim]))

    def forward(self, query, key, value, mask=None):
        batch_size = query.shape[0]
        len_k = key.shape[1]
        len_q = query.shape[1]
        len_v = value.shape[1]
        query = self.fc_q(query)
        key = self.fc_k(key)
        value = self.fc_v(value)
        r_q1 = query.view(batch_size, -1, self.n_heads, self.head_dim).permute(0, 2, 1, 3)
        r_k1 = key.view(batch_size, -1, self.n_heads, self.head_dim).permute(0, 2, 1, 3)
        attn1 = torch.matmul(r_q1, r_k1.permute(0, 1, 3, 2))
        r_q2 = (
            query.permute(1, 0, 2)
            .contiguous()
            .view(len_q, batch_size * self.n_heads, self.head_dim)
        )
        r_k2 = self.relative_position_k(len_q, len_k)
        attn2 = torch.matmul(r_q2, r_k2.transpose(1, 2)).transpose(0, 1)
        attn2 = attn2.contiguous().view(batch_size, self.n_heads, len_q, len_k)
        attn = (attn1 + attn2) / self.scale
        if mask is not None:
            attn = attn.masked_fill(mask == 0, -1e10)
        attn = self.dropout(torch.softmax(attn, dim=-1))
        r_v1 = value.view(batch_size, -1, self.n_heads, self.head_dim).permute(0, 2, 1, 3)
        weight1 = torch.matmul(attn, r_v1)
        r_v2 = self.relative_position_v(len_q, len_v)
        weight2 = (
            attn.permute(2, 0, 1, 3).contiguous().view(len_q, batch_size * self.n_heads, len_k)
        )
        weight2 = torch.matmul(weight2, r_v2)
        weight2 = (
            weight2.transpose(0, 1)
            .contiguous()
            .view(batch_size, self.n_heads, len_q, self.head_dim)
        )
        x = weight1 + weight2
        x = x.permute(0, 2, 1, 3).contiguous()
        x = x.view(batch_size, -1, self.hid_dim)
        return self.fc_o(x), attn


torch.manual_seed(0)
B, L, D, H = 3, 5, 8, 2
x = torch.randn(B, L, D)
pad = torch.tensor([[False] * 5, [False] * 3 + [True] * 2, [False] * 4 + [True]])
rel = MultiHeadAttentionLayer(D, H, 0.1)
print(rel.relative_position_k(4, 6).shape, rel.relative_position_k(3, 3).sum().item())
mha = nn.MultiheadAttention(D, H, dropout=0.1, batch_first=True)
cross = nn.MultiheadAttention(D, H, kdim=6, vdim=4)
mem_k, mem_v = torch.randn(7, B, 6), torch.randn(7, B, 4)
mem_pad = torch.zeros(B, 7, dtype=torch.bool)
mem_pad[2, 5:] = True
head = nn.Linear(D, 3)
y = torch.randint(0, 3, (B, L))
params = [p for m in (rel, mha, cross, head) for p in m.parameters()]
opt = torch.optim.RMSprop(params, lr=1e-2, momentum=0.5)
for step in range(4):
    for m in (rel, mha, cross):
        m.train()
    h1, a1 = rel(x, x, x, mask=(~pad)[:, None, None, :])
    h2, a2 = mha(h1, h1, h1, key_padding_mask=pad, need_weights=True, average_attn_weights=False)
    h3, a3 = cross(h2.transpose(0, 1), mem_k, mem_v, key_padding_mask=mem_pad)
    logits = head(h3.transpose(0, 1))
    loss = F.cross_entropy(logits[~pad], y[~pad])
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(
        "step %d loss %.5f" % (step, loss.item()),
        tuple(a1.shape),
        tuple(a2.shape),
        tuple(a3.shape),
        "grad table %.5f" % rel.relative_position_v.embeddings_table.grad.abs().sum().item(),
    )

for m in (rel, mha, cross):
    m.eval()
with torch.no_grad():
    h1, a1 = rel(x, x, x, mask=(~pad)[:, None, None, :])
    print("rel attn", a1[1, 0, 0].numpy().round(5).tolist(), h1[1, 0].numpy().round(4).tolist())
    fmask = torch.zeros(B, L).masked_fill(pad, float("-inf"))
    o_b, w_b = mha(h1, h1, h1, key_padding_mask=pad)
    o_f, w_f = mha(h1, h1, h1, key_padding_mask=fmask)
    print("bool vs float", torch.allclose(o_b, o_f, atol=1e-6), torch.allclose(w_b, w_f, atol=1e-6))
    causal = nn.Transformer.generate_square_subsequent_mask(L)
    o_c, w_c = mha(h1, h1, h1, attn_mask=causal, average_attn_weights=False)
    print("causal", w_c[0, 1].numpy().round(5).tolist())
    o_n, w_n = mha(h1, h1, h1, key_padding_mask=pad, need_weights=False)
    print(
        "no weights",
        w_n,
        torch.allclose(o_n, o_b, atol=1e-5),
        o_n[2].sum(-1).numpy().round(4).tolist(),
    )
    o_x, w_x = cross(h1.transpose(0, 1), mem_k, mem_v, key_padding_mask=mem_pad.float() * -1e4)
    print("cross", tuple(o_x.shape), w_x[2, 0].numpy().round(5).tolist())
    print(
        "unbatched", [tuple(t.shape) for t in mha(h1[0], h1[0], h1[0], average_attn_weights=False)]
    )
for bad in (dict(attn_mask=torch.zeros(L + 1, L)), dict(key_padding_mask=pad[:2])):
    try:
        mha(x, x, x, **bad)
    except Exception as e:
        print(type(e).__name__, e)
try:
    cross(x.transpose(0, 1), mem_v, mem_v)
except Exception as e:
    print(type(e).__name__, e)
