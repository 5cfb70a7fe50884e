"""The PyTorch tutorial "(Beta) Implementing High-Performance Transformers with Scaled Dot Product
Attention (SDPA)", shrunk (no CUDA, no timing): F.scaled_dot_product_attention on random
q/k/v, the torch.nn.attention sdpa_kernel(SDPBackend.MATH) context manager and the backend
flags, nanoGPT's CausalSelfAttention with is_causal=True, the causal_upper_left /
causal_lower_right biases of torch.nn.attention.bias, and the math reference implementation
from the docs compared with the fused call (bool and float masks, scale, enable_gqa)."""
import importlib
import math
import os
import warnings

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
attention = importlib.import_module(LIB + ".nn.attention")
bias = importlib.import_module(LIB + ".nn.attention.bias")
SDPBackend, sdpa_kernel = attention.SDPBackend, attention.sdpa_kernel
causal_upper_left, causal_lower_right = bias.causal_upper_left, bias.causal_lower_right

device = "cpu"
torch.manual_seed(0)
query, key, value = torch.randn(2, 3, 8, device=device), torch.randn(2, 3, 8, device=device), \
    torch.randn(2, 3, 8, device=device)
print(F.scaled_dot_product_attention(query, key, value))

print([b.name for b in (SDPBackend.MATH, SDPBackend.FLASH_ATTENTION,
                        SDPBackend.EFFICIENT_ATTENTION)], int(SDPBackend.MATH))
with sdpa_kernel(SDPBackend.MATH):
    out_math = F.scaled_dot_product_attention(query, key, value)
    print("math only:", torch.backends.cuda.math_sdp_enabled(),
          torch.backends.cuda.flash_sdp_enabled())
print("restored:", torch.backends.cuda.flash_sdp_enabled())
with sdpa_kernel([SDPBackend.MATH, SDPBackend.EFFICIENT_ATTENTION]):
    print(torch.backends.cuda.mem_efficient_sdp_enabled(),
          torch.backends.cuda.flash_sdp_enabled())
print(torch.allclose(out_math, F.scaled_dot_product_attention(query, key, value), atol=1e-6))


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """The docs' reference implementation."""
    L, S = query.size(-2), key.size(-2)
    scale_factor = 1 / math.sqrt(query.size(-1)) if scale is None else scale
    attn_bias = torch.zeros(L, S, dtype=query.dtype, device=query.device)
    if is_causal:
        assert attn_mask is None
        temp_mask = torch.ones(L, S, dtype=torch.bool).tril(diagonal=0)
        attn_bias.masked_fill_(temp_mask.logical_not(), float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            attn_bias.masked_fill_(attn_mask.logical_not(), float("-inf"))
        else:
            attn_bias = attn_mask + attn_bias
    if enable_gqa:
        key = key.repeat_interleave(query.size(-3) // key.size(-3), -3)
        value = value.repeat_interleave(query.size(-3) // value.size(-3), -3)
    attn_weight = query @ key.transpose(-2, -1) * scale_factor
    attn_weight += attn_bias
    attn_weight = torch.softmax(attn_weight, dim=-1)
    attn_weight = torch.dropout(attn_weight, dropout_p, train=True)
    return attn_weight @ value


q = torch.randn(2, 4, 5, 8, requires_grad=True)
k = torch.randn(2, 4, 5, 8, requires_grad=True)
v = torch.randn(2, 4, 5, 8, requires_grad=True)
bool_mask = torch.rand(5, 5) > 0.3
bool_mask[:, 0] = True
float_mask = torch.randn(2, 1, 5, 5)
for name, kw in [("plain", {}), ("causal", {"is_causal": True}), ("bool", {"attn_mask": bool_mask}),
                 ("float", {"attn_mask": float_mask}), ("scale", {"scale": 0.5})]:
    fused = F.scaled_dot_product_attention(q, k, v, **kw)
    ref = scaled_dot_product_attention(q, k, v, **kw)
    g = torch.randn_like(fused)
    gf = torch.autograd.grad(fused, (q, k, v), g)
    gr = torch.autograd.grad(ref, (q, k, v), g)
    print(f"{name:7s}", fused.shape, fused.grad_fn.name(),
          torch.allclose(fused, ref, atol=1e-5),
          all(torch.allclose(a, b, atol=1e-5) for a, b in zip(gf, gr)))
kv_q = torch.randn(1, 4, 3, 8)
kv_k, kv_v = torch.randn(1, 2, 6, 8), torch.randn(1, 2, 6, 8)
gqa = F.scaled_dot_product_attention(kv_q, kv_k, kv_v, enable_gqa=True)
print("gqa", gqa.shape,
      torch.allclose(gqa, scaled_dot_product_attention(kv_q, kv_k, kv_v, enable_gqa=True),
                     atol=1e-5))
try:
    F.scaled_dot_product_attention(q, k, v, attn_mask=bool_mask, is_causal=True)
except Exception as e:
    print(type(e).__name__, e)


class CausalSelfAttention(nn.Module):
    def __init__(self, num_heads: int, embed_dimension: int, bias: bool = False,
                 is_causal: bool = False, dropout: float = 0.0):
        super().__init__()
        assert embed_dimension % num_heads == 0
        self.c_attn = nn.Linear(embed_dimension, 3 * embed_dimension, bias=bias)
        self.c_proj = nn.Linear(embed_dimension, embed_dimension, bias=bias)
        self.dropout = dropout
        self.resid_dropout = nn.Dropout(dropout)
        self.num_heads = num_heads
        self.embed_dimension = embed_dimension
        self.is_causal = is_causal

    def forward(self, x):
        query_projected = self.c_attn(x)
        batch_size = query_projected.size(0)
        embed_dim = query_projected.size(2)
        head_dim = embed_dim // (self.num_heads * 3)
        query, key, value = query_projected.chunk(3, -1)
        query = query.view(batch_size, -1, self.num_heads, head_dim).transpose(1, 2)
        key = key.view(batch_size, -1, self.num_heads, head_dim).transpose(1, 2)
        value = value.view(batch_size, -1, self.num_heads, head_dim).transpose(1, 2)
        if self.training:
            dropout = self.dropout
            is_causal = self.is_causal
        else:
            dropout = 0.0
            is_causal = False
        y = F.scaled_dot_product_attention(query, key, value, attn_mask=None,
                                           dropout_p=dropout, is_causal=is_causal)
        y = y.transpose(1, 2).view(batch_size, -1, self.num_heads * head_dim)
        y = self.resid_dropout(self.c_proj(y))
        return y


num_heads = 4
heads_per_dim = 8
embed_dimension = num_heads * heads_per_dim
dtype = torch.float32
model = CausalSelfAttention(num_heads=num_heads, embed_dimension=embed_dimension, bias=False,
                            is_causal=True, dropout=0.0).to("cpu").to(dtype).eval()
print(model)
x = torch.rand(2, 6, embed_dimension, device=device, dtype=dtype)
print(model(x)[0, :2, :5])
model.train()
y = model(x)
print(y.grad_fn, y[0, 0, :5])
y.pow(2).mean().backward()
print(f"{model.c_attn.weight.grad.norm().item():.6f}", model.c_proj.weight.grad.shape)

# causal biases: upper-left is is_causal=True; lower-right aligns to the last keys
bsz, n_heads, seq_len_q, seq_len_kv, head_dim = 2, 2, 3, 5, 8
upper_left_bias = causal_upper_left(seq_len_q, seq_len_kv)
lower_right_bias = causal_lower_right(seq_len_q, seq_len_kv)
print(type(upper_left_bias).__name__, type(lower_right_bias).__name__)
assert type(upper_left_bias) == type(lower_right_bias)  # noqa: E721
assert issubclass(type(upper_left_bias), torch.Tensor)
print(upper_left_bias)
print(lower_right_bias)
print(upper_left_bias.variant, lower_right_bias.variant, lower_right_bias.seq_len_kv,
      bias.CausalVariant.LOWER_RIGHT, bias.CausalVariant(1).name)
q = torch.randn(bsz, n_heads, seq_len_q, head_dim, device=device, dtype=torch.float32)
k = torch.randn(bsz, n_heads, seq_len_kv, head_dim, device=device, dtype=torch.float32)
v = torch.randn(bsz, n_heads, seq_len_kv, head_dim, device=device, dtype=torch.float32)
out_upper_left = F.scaled_dot_product_attention(q, k, v, upper_left_bias)
out_lower_right = F.scaled_dot_product_attention(q, k, v, lower_right_bias)
out_is_causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)
print(torch.allclose(out_upper_left, out_is_causal), torch.allclose(out_upper_left,
                                                                    out_lower_right))
print(out_lower_right[0, 0, 0], out_upper_left[1, 1, 2])
mat = lower_right_bias._materialize(q.device)
print(mat.dtype, torch.allclose(out_lower_right, F.scaled_dot_product_attention(q, k, v, mat)))
try:
    F.scaled_dot_product_attention(q, k, v, attn_mask=upper_left_bias, is_causal=True)
except Exception as e:
    print(type(e).__name__, e)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    causal_lower_right(4, 2)
    print(w[0].category.__name__, w[0].message)
try:
    causal_upper_left(2, 3, 4)
except Exception as e:
    print(type(e).__name__, e)
print("RESULT:", f"{out_lower_right.sum().item():.5f}")
