"""Position schemes and cache layouts of LLM code bases in plain torch, shrunk: T5's
_relative_position_bucket and compute_bias (torch.log, torch.min with full_like, torch.where,
an nn.Embedding of buckets permuted to heads), ALiBi's get_slopes and bias (BLOOM-style with
cumsum over the attention mask, baddbmm), a Mistral sliding-window causal mask with triu/tril
diagonals, HF's StaticCache update with index_copy_, a DynamicCache with torch.cat, and
position_ids from a left-padded attention mask (cumsum - 1, masked_fill_)."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


def _relative_position_bucket(relative_position, bidirectional=True, num_buckets=32,
                              max_distance=128):
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    relative_position_if_large = max_exact + (
        torch.log(relative_position.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    relative_position_if_large = torch.min(
        relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1))
    relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
    return relative_buckets


class T5Bias(nn.Module):
    def __init__(self, num_buckets=8, max_distance=16, n_heads=2, bidirectional=True):
        super().__init__()
        self.relative_attention_bias = nn.Embedding(num_buckets, n_heads)
        self.num_buckets, self.max_distance = num_buckets, max_distance
        self.bidirectional = bidirectional

    def compute_bias(self, query_length, key_length, device=None):
        context_position = torch.arange(query_length, dtype=torch.long, device=device)[:, None]
        memory_position = torch.arange(key_length, dtype=torch.long, device=device)[None, :]
        relative_position = memory_position - context_position
        relative_position_bucket = _relative_position_bucket(
            relative_position, bidirectional=self.bidirectional, num_buckets=self.num_buckets,
            max_distance=self.max_distance)
        values = self.relative_attention_bias(relative_position_bucket)
        values = values.permute([2, 0, 1]).unsqueeze(0)
        return values


def get_slopes(n):
    def get_slopes_power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        ratio = start
        return [start * ratio ** i for i in range(n)]
    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return get_slopes_power_of_2(closest_power_of_2) + \
        get_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]


def build_alibi_tensor(attention_mask, num_heads, dtype):
    batch_size, seq_length = attention_mask.shape
    closest_power_of_2 = 2 ** math.floor(math.log2(num_heads))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3))), dtype=torch.float32)
    powers = torch.arange(1, 1 + closest_power_of_2, dtype=torch.int32)
    slopes = torch.pow(base, powers)
    if closest_power_of_2 != num_heads:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest_power_of_2) - 3))),
                                  dtype=torch.float32)
        num_remaining_heads = min(closest_power_of_2, num_heads - closest_power_of_2)
        extra_powers = torch.arange(1, 1 + 2 * num_remaining_heads, 2, dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra_base, extra_powers)], dim=0)
    arange_tensor = ((attention_mask.cumsum(dim=-1) - 1) * attention_mask)[:, None, :]
    alibi = slopes[..., None] * arange_tensor
    return alibi.reshape(batch_size * num_heads, 1, seq_length).to(dtype)


def sliding_window_causal_mask(seq_len, window, dtype=torch.float32):
    min_dtype = torch.finfo(dtype).min
    mask = torch.full((seq_len, seq_len), fill_value=min_dtype, dtype=dtype)
    mask = torch.triu(mask, diagonal=1)
    sliding = torch.arange(seq_len).reshape(1, -1) <= (torch.arange(seq_len).reshape(-1, 1)
                                                       - window)
    return mask.masked_fill(sliding, min_dtype)


class StaticCache:
    def __init__(self, batch, heads, max_len, head_dim):
        self.key_cache = torch.zeros(batch, heads, max_len, head_dim)
        self.value_cache = torch.zeros(batch, heads, max_len, head_dim)

    def update(self, key_states, value_states, cache_position):
        self.key_cache.index_copy_(2, cache_position, key_states)
        self.value_cache.index_copy_(2, cache_position, value_states)
        return self.key_cache, self.value_cache

    def get_seq_length(self):
        return (self.key_cache[0, 0].any(dim=-1)).sum()


class DynamicCache:
    def __init__(self):
        self.key_cache, self.value_cache = [], []

    def update(self, key_states, value_states, layer_idx):
        if len(self.key_cache) <= layer_idx:
            self.key_cache.append(key_states)
            self.value_cache.append(value_states)
        else:
            self.key_cache[layer_idx] = torch.cat([self.key_cache[layer_idx], key_states], dim=-2)
            self.value_cache[layer_idx] = torch.cat([self.value_cache[layer_idx], value_states],
                                                    dim=-2)
        return self.key_cache[layer_idx], self.value_cache[layer_idx]

    def get_seq_length(self, layer_idx=0):
        return 0 if not self.key_cache else self.key_cache[layer_idx].shape[-2]


torch.manual_seed(0)
rel = torch.arange(-20, 21, 4)
print(_relative_position_bucket(rel, True, 8, 16))
print(_relative_position_bucket(rel, False, 8, 16))
print(_relative_position_bucket(torch.arange(-200, 200, 37), num_buckets=32, max_distance=128))
t5 = T5Bias()
b = t5.compute_bias(4, 6)
print(b.shape, b.grad_fn.name())
print(b[0, 1])
scores = torch.randn(1, 2, 4, 6, requires_grad=True)
out = F.softmax(scores + b, dim=-1)
out[..., 0].sum().backward()
print(t5.relative_attention_bias.weight.grad)

print([f"{s:.6f}" for s in get_slopes(6)], [f"{s:.4f}" for s in get_slopes(8)])
am = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]])
alibi = build_alibi_tensor(am, 6, torch.float32)
print(alibi.shape, alibi.dtype)
print(alibi[:6, 0])
q = torch.randn(12, 5, 4)
k = torch.randn(12, 5, 4)
matmul_result = alibi.baddbmm(batch1=q, batch2=k.transpose(-1, -2), beta=1.0,
                              alpha=1 / math.sqrt(4))
print(matmul_result.shape, matmul_result[0, 0])

m = sliding_window_causal_mask(6, 3)
print((m == 0).int())
print(m.dtype, m[5, 1].item() == torch.finfo(torch.float32).min)

position_ids = am.long().cumsum(-1) - 1
position_ids.masked_fill_(am == 0, 1)
print(position_ids)

heads, head_dim = 2, 4
static = StaticCache(1, heads, 8, head_dim)
dynamic = DynamicCache()
for step, n in enumerate([3, 1, 1]):
    start = dynamic.get_seq_length()
    cache_position = torch.arange(start, start + n)
    ks, vs = torch.randn(1, heads, n, head_dim), torch.randn(1, heads, n, head_dim)
    sk, sv = static.update(ks, vs, cache_position)
    dk, dv = dynamic.update(ks, vs, 0)
    print(step, cache_position.tolist(), tuple(dk.shape), int(static.get_seq_length()),
          torch.equal(sk[:, :, : start + n], dk),
          torch.equal(sv[:, :, start + n:], torch.zeros_like(sv[:, :, start + n:])))
qn = torch.randn(1, heads, 1, head_dim)
full_len = dynamic.get_seq_length()
att_dyn = F.scaled_dot_product_attention(qn, dk, dv)
mask = torch.arange(8) < full_len
try:
    F.scaled_dot_product_attention(qn, sk, sv, attn_mask=mask)
except Exception as e:
    print(type(e).__name__, e)
att_static = F.scaled_dot_product_attention(qn, sk, sv, attn_mask=mask[None, :])
print(torch.allclose(att_dyn, att_static, atol=1e-6), att_dyn[0, :, 0])
print("RESULT:", f"{matmul_result.sum().item():.4f}")
