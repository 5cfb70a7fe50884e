"""nn.MultiheadAttention in the ways blog posts and the docs use it: self-attention with
key_padding_mask and need_weights (averaged and per head), attn_mask (bool and float), kdim/vdim,
batch_first, add_bias_kv/add_zero_attn, F.scaled_dot_product_attention, training it."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(0)
embed_dim, num_heads = 8, 2
multihead_attn = nn.MultiheadAttention(embed_dim, num_heads)
print(multihead_attn)
print([(k, tuple(v.shape)) for k, v in multihead_attn.state_dict().items()])
L, S, N = 4, 5, 3
query = torch.randn(L, N, embed_dim)
key = torch.randn(S, N, embed_dim)
value = torch.randn(S, N, embed_dim)
attn_output, attn_output_weights = multihead_attn(query, key, value)
print(attn_output.shape, attn_output_weights.shape)
print(attn_output[0])
print(attn_output_weights[0])

key_padding_mask = torch.tensor([[False] * 5, [False] * 3 + [True] * 2, [False] * 4 + [True]])
out, w = multihead_attn(query, key, value, key_padding_mask=key_padding_mask)
print(w[1])
out, w = multihead_attn(query, key, value, key_padding_mask=key_padding_mask,
                        average_attn_weights=False)
print(w.shape, w[2, 1])
out, w = multihead_attn(query, key, value, need_weights=False)
print(out[1, 2], w)

causal = torch.triu(torch.ones(L, L, dtype=torch.bool), diagonal=1)
x = torch.randn(L, N, embed_dim)
out, w = multihead_attn(x, x, x, attn_mask=causal)
print(w[0])
float_mask = torch.zeros(L, L).masked_fill(causal, float('-inf'))
out2, _ = multihead_attn(x, x, x, attn_mask=float_mask)
print(torch.allclose(out, out2))
mask3 = torch.zeros(N * num_heads, L, L)
mask3[:, :, 0] = -1.0
out3, w3 = multihead_attn(x, x, x, attn_mask=mask3, is_causal=False)
print(out3[2, 0])

mha_bf = nn.MultiheadAttention(embed_dim, 4, batch_first=True, kdim=6, vdim=3, dropout=0.0)
print(mha_bf)
print([n for n, _ in mha_bf.named_parameters()])
q = torch.randn(2, 3, embed_dim)
k = torch.randn(2, 5, 6)
v = torch.randn(2, 5, 3)
o, w = mha_bf(q, k, v)
print(o.shape, w.shape, o[0, 0])

mha_kv = nn.MultiheadAttention(embed_dim, num_heads, add_bias_kv=True, add_zero_attn=True,
                               bias=False)
print([(n, tuple(p.shape)) for n, p in mha_kv.named_parameters()])
o, w = mha_kv(query, key, value, key_padding_mask=key_padding_mask)
print(o.shape, w.shape, w[1, 0])

# unbatched input
o, w = multihead_attn(query[:, 0], key[:, 0], value[:, 0])
print(o.shape, w.shape)

# The functional building block.
qh = torch.randn(2, 2, 4, 3)
kh = torch.randn(2, 2, 5, 3)
vh = torch.randn(2, 2, 5, 3)
print(F.scaled_dot_product_attention(qh, kh, vh)[0, 0])
print(F.scaled_dot_product_attention(qh, kh[:, :, :4], vh[:, :, :4], is_causal=True)[1, 1])
print(F.scaled_dot_product_attention(qh, kh, vh, attn_mask=torch.ones(4, 5).tril().bool(),
                                     scale=0.5)[0, 1])


def attention(q, k, v, mask=None):
    d_k = q.size(-1)
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    return torch.matmul(p_attn, v), p_attn


ref, _ = attention(qh, kh, vh)
print(torch.allclose(ref, F.scaled_dot_product_attention(qh, kh, vh), atol=1e-6))

# A few training steps of a self-attention block.
block = nn.MultiheadAttention(embed_dim, num_heads, batch_first=True)
ln = nn.LayerNorm(embed_dim)
opt = torch.optim.AdamW(list(block.parameters()) + list(ln.parameters()), lr=1e-2)
xb = torch.randn(4, 6, embed_dim)
target = torch.randn(4, 6, embed_dim)
kpm = torch.zeros(4, 6, dtype=torch.bool)
kpm[1, 4:] = True
for step in range(10):
    opt.zero_grad()
    h, _ = block(xb, xb, xb, key_padding_mask=kpm, need_weights=False)
    y = ln(xb + h)
    loss = F.mse_loss(y, target)
    loss.backward()
    opt.step()
    if step % 3 == 0:
        print(f"step {step} loss {loss.item():.5f} {type(loss.grad_fn).__name__}")
print(block.in_proj_weight.grad.abs().sum(), block.out_proj.bias)
print("RESULT:", f"{loss.item():.4f}")
