"""Variable-length sequences through multi-head attention with nested tensors, shrunk from the
PyTorch tutorial "Getting Started with Nested Tensors" (intermediate/nested_tensor_tutorial: the
MultiHeadAttention module with in/out projections over jagged query/key/value, compared with the
padded baseline that masks the padding; plus nested_tensor_from_jagged, to_padded_tensor and
gradients back to the variable-length inputs)."""
import importlib
import os
import warnings

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
warnings.filterwarnings("ignore", message="The PyTorch API of nested tensors")
torch.manual_seed(1)


class MultiHeadAttention(nn.Module):
    def __init__(self, E_q, E_k, E_v, E_total, nheads, dropout=0.0, bias=True):
        super().__init__()
        self.nheads = nheads
        self.dropout = dropout
        self.q_proj = nn.Linear(E_q, E_total, bias=bias)
        self.k_proj = nn.Linear(E_k, E_total, bias=bias)
        self.v_proj = nn.Linear(E_v, E_total, bias=bias)
        self.out_proj = nn.Linear(E_total, E_q, bias=bias)
        self.E_head = E_total // nheads

    def forward(self, query, key, value, attn_mask=None, is_causal=False):
        query, key, value = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        # (N, L_t, E_total) -> (N, L_t, nheads, E_head) -> (N, nheads, L_t, E_head)
        query = query.unflatten(-1, [self.nheads, self.E_head]).transpose(1, 2)
        key = key.unflatten(-1, [self.nheads, self.E_head]).transpose(1, 2)
        value = value.unflatten(-1, [self.nheads, self.E_head]).transpose(1, 2)
        attn_output = F.scaled_dot_product_attention(
            query, key, value, attn_mask=attn_mask, dropout_p=self.dropout, is_causal=is_causal)
        attn_output = attn_output.transpose(1, 2).flatten(-2)
        return self.out_proj(attn_output)


def gen_batch(N, E_q, E_k, E_v):
    sentence_lengths = [3, 5, 2, 4][:N]
    query = torch.nested.nested_tensor([torch.randn(s, E_q) for s in sentence_lengths],
                                       layout=torch.jagged, requires_grad=True)
    key = torch.nested.nested_tensor([torch.randn(s, E_k) for s in sentence_lengths],
                                     layout=torch.jagged)
    value = torch.nested.nested_tensor([torch.randn(s, E_v) for s in sentence_lengths],
                                       layout=torch.jagged)
    return query, key, value, sentence_lengths


def jagged_to_padded(jt, padding_val):
    return torch.nested.to_padded_tensor(jt, padding_val)


N, E_q, E_k, E_v, E_total, nheads = 4, 8, 8, 8, 8, 2
mha = MultiHeadAttention(E_q, E_k, E_v, E_total, nheads)
query, key, value, lengths = gen_batch(N, E_q, E_k, E_v)
print("query:", query.dim(), query.size(0), query.size(2), query.layout, query.is_nested)
print("offsets:", query.offsets().tolist(), "values:", tuple(query.values().shape))

out = mha(query, key, value)
print("nested out components:", [tuple(t.shape) for t in out.unbind()])
padded_out = jagged_to_padded(out, 0.0)
print("padded out shape:", tuple(padded_out.shape))

# the padded baseline: pad, and mask the padded keys out of the attention
padded_q, padded_k, padded_v = (jagged_to_padded(t, 0.0) for t in (query, key, value))
L_max = max(lengths)
key_ok = torch.arange(L_max)[None, :] < torch.tensor(lengths)[:, None]
attn_mask = key_ok[:, None, None, :]
base = mha(padded_q, padded_k, padded_v, attn_mask=attn_mask)
for i, n in enumerate(lengths):
    print("row %d close: %s" % (i, torch.allclose(out.unbind()[i], base[i, :n], atol=1e-5)))
print("padded rows zero:", bool((padded_out[2, 2:] == 0).all()))

# gradients reach the variable-length query components
loss = padded_out.pow(2).sum()
loss.backward()
print("loss %.4f" % loss.item())
print("query grad rows:", [tuple(g.shape) for g in query.grad.unbind()])
print("query grad[1] %.4f" % query.grad.unbind()[1].abs().sum().item())
print("q_proj grad %.4f" % mha.q_proj.weight.grad.abs().sum().item())

# a jagged tensor cut out of one packed buffer; its gradient lands on the buffer
values = torch.randn(7, 4, requires_grad=True)
offsets = torch.tensor([0, 2, 7])
nt = torch.nested.nested_tensor_from_jagged(values, offsets)
lin = nn.Linear(4, 3)
y = lin(nt).relu()
print("from jagged:", [tuple(t.shape) for t in y.unbind()], torch.equal(nt.values(), values))
jagged_to_padded(y, -1.0).clamp(min=0).sum().backward()
print("values grad %.4f" % values.grad.sum().item())

# the strided layout prints its components
st = torch.nested.nested_tensor([torch.arange(3.), torch.arange(2.) * 2])
print(st * 2 + 1)
print(torch.nested.to_padded_tensor(st.relu(), -1.0))
