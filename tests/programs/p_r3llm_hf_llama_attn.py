"""Hugging Face transformers' modeling_llama.py pieces in plain torch, shrunk: LlamaRMSNorm with
extra_repr, LlamaRotaryEmbedding (inv_freq buffer registered with persistent=False, cos/sin in
float32), rotate_half / apply_rotary_pos_emb, repeat_kv, eager_attention_forward (softmax in
float32), the sdpa path with a 4D float mask, _prepare_4d_causal_attention_mask built from a
padded attention_mask with torch.finfo(dtype).min, and a tiny LlamaForCausalLM with a shifted
cross-entropy loss."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


class LlamaRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)

    def extra_repr(self):
        return f"{tuple(self.weight.shape)}, eps={self.variance_epsilon}"


class LlamaRotaryEmbedding(nn.Module):
    def __init__(self, dim, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.original_inv_freq = self.inv_freq
        self.attention_scaling = 1.0

    @torch.no_grad()
    def forward(self, x, position_ids):
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(
            position_ids.shape[0], -1, 1).to(x.device)
        position_ids_expanded = position_ids[:, None, :].float()
        freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos = emb.cos() * self.attention_scaling
        sin = emb.sin() * self.attention_scaling
        return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(
        batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


def eager_attention_forward(module, query, key, value, attention_mask, scaling, dropout=0.0):
    key_states = repeat_kv(key, module.num_key_value_groups)
    value_states = repeat_kv(value, module.num_key_value_groups)
    attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
    if attention_mask is not None:
        causal_mask = attention_mask[:, :, :, : key_states.shape[-2]]
        attn_weights = attn_weights + causal_mask
    attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
    attn_weights = nn.functional.dropout(attn_weights, p=dropout, training=module.training)
    attn_output = torch.matmul(attn_weights, value_states)
    attn_output = attn_output.transpose(1, 2).contiguous()
    return attn_output, attn_weights


def sdpa_attention_forward(module, query, key, value, attention_mask, scaling, dropout=0.0):
    key = repeat_kv(key, module.num_key_value_groups)
    value = repeat_kv(value, module.num_key_value_groups)
    causal_mask = attention_mask
    if attention_mask is not None:
        causal_mask = causal_mask[:, :, :, : key.shape[-2]]
    query = query.contiguous()
    key = key.contiguous()
    value = value.contiguous()
    is_causal = query.shape[2] > 1 and causal_mask is None
    attn_output = torch.nn.functional.scaled_dot_product_attention(
        query, key, value, attn_mask=causal_mask, dropout_p=dropout, scale=scaling,
        is_causal=is_causal)
    attn_output = attn_output.transpose(1, 2).contiguous()
    return attn_output, None


class LlamaAttention(nn.Module):
    def __init__(self, hidden_size, num_heads, num_kv_heads, layer_idx, impl="eager"):
        super().__init__()
        self.layer_idx = layer_idx
        self.head_dim = hidden_size // num_heads
        self.num_key_value_groups = num_heads // num_kv_heads
        self.scaling = self.head_dim ** -0.5
        self.attention_dropout = 0.0
        self.is_causal = True
        self.impl = impl
        self.q_proj = nn.Linear(hidden_size, num_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(hidden_size, num_kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(hidden_size, num_kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(num_heads * self.head_dim, hidden_size, bias=False)

    def forward(self, hidden_states, position_embeddings, attention_mask):
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.head_dim)
        query_states = self.q_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        cos, sin = position_embeddings
        query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)
        fn = eager_attention_forward if self.impl == "eager" else sdpa_attention_forward
        attn_output, attn_weights = fn(self, query_states, key_states, value_states,
                                       attention_mask, scaling=self.scaling,
                                       dropout=0.0 if not self.training else self.attention_dropout)
        attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        attn_output = self.o_proj(attn_output)
        return attn_output, attn_weights


class LlamaMLP(nn.Module):
    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        self.gate_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.up_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.down_proj = nn.Linear(intermediate_size, hidden_size, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, hidden_size, layer_idx, impl):
        super().__init__()
        self.self_attn = LlamaAttention(hidden_size, 4, 2, layer_idx, impl)
        self.mlp = LlamaMLP(hidden_size, 2 * hidden_size + 8)
        self.input_layernorm = LlamaRMSNorm(hidden_size, eps=1e-6)
        self.post_attention_layernorm = LlamaRMSNorm(hidden_size, eps=1e-6)

    def forward(self, hidden_states, attention_mask, position_embeddings):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states, _ = self.self_attn(hidden_states, position_embeddings, attention_mask)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        return residual + hidden_states


def _prepare_4d_causal_attention_mask(attention_mask, input_shape, dtype):
    bsz, tgt_len = input_shape
    min_dtype = torch.finfo(dtype).min
    causal_mask = torch.full((tgt_len, tgt_len), min_dtype, dtype=dtype)
    causal_mask = torch.triu(causal_mask, diagonal=1)
    causal_mask = causal_mask[None, None, :, :].expand(bsz, 1, -1, -1).clone()
    if attention_mask is not None:
        mask_length = attention_mask.shape[-1]
        padding_mask = causal_mask[:, :, :, :mask_length] + attention_mask[:, None, None, :]
        padding_mask = padding_mask == 0
        causal_mask[:, :, :, :mask_length] = causal_mask[:, :, :, :mask_length].masked_fill(
            padding_mask, min_dtype)
    return causal_mask


class LlamaForCausalLM(nn.Module):
    def __init__(self, vocab_size=40, hidden_size=32, num_layers=2, impl="eager"):
        super().__init__()
        self.padding_idx = 0
        self.embed_tokens = nn.Embedding(vocab_size, hidden_size, self.padding_idx)
        self.layers = nn.ModuleList(
            [LlamaDecoderLayer(hidden_size, i, impl) for i in range(num_layers)])
        self.norm = LlamaRMSNorm(hidden_size, eps=1e-6)
        self.rotary_emb = LlamaRotaryEmbedding(hidden_size // 4)
        self.lm_head = nn.Linear(hidden_size, vocab_size, bias=False)

    def forward(self, input_ids, attention_mask=None, labels=None):
        inputs_embeds = self.embed_tokens(input_ids)
        position_ids = torch.arange(input_ids.shape[1]).unsqueeze(0)
        mask = _prepare_4d_causal_attention_mask(attention_mask, input_ids.shape,
                                                 inputs_embeds.dtype)
        position_embeddings = self.rotary_emb(inputs_embeds, position_ids)
        hidden_states = inputs_embeds
        for decoder_layer in self.layers:
            hidden_states = decoder_layer(hidden_states, mask, position_embeddings)
        logits = self.lm_head(self.norm(hidden_states))
        loss = None
        if labels is not None:
            shift_logits = logits[..., :-1, :].contiguous().float()
            shift_labels = labels[..., 1:].contiguous()
            loss = F.cross_entropy(shift_logits.view(-1, shift_logits.size(-1)),
                                   shift_labels.view(-1), ignore_index=-100)
        return loss, logits


torch.manual_seed(0)
rope = LlamaRotaryEmbedding(8)
print(rope.inv_freq, rope.state_dict(), list(rope.named_buffers()))
x = torch.randn(1, 5, 8, dtype=torch.float64)
pos = torch.arange(5).unsqueeze(0)
cos, sin = rope(x, pos)
print(cos.dtype, cos.shape, cos.requires_grad)
print(cos[0, :3], sin[0, 4])
q = torch.randn(1, 2, 5, 8, requires_grad=True)
k = torch.randn(1, 2, 5, 8)
qe, ke = apply_rotary_pos_emb(q, k, *rope(q, pos))
print(rotate_half(torch.arange(6.0)), qe.grad_fn.name())
qe.pow(2).sum().backward()
print(q.grad[0, 1, 2])

attention_mask = torch.tensor([[1, 1, 1, 1, 1, 1], [0, 0, 1, 1, 1, 1]])
m4 = _prepare_4d_causal_attention_mask(attention_mask, (2, 6), torch.float32)
print(m4.shape, m4.dtype, torch.finfo(torch.float32).min, torch.finfo(torch.float16).min)
print((m4 == torch.finfo(torch.float32).min).int()[1, 0])
print(torch.finfo(torch.bfloat16), torch.finfo(torch.float32).eps, torch.finfo(torch.float64).tiny)

model = LlamaForCausalLM()
print(model)
print(sorted(n for n, _ in model.named_buffers()), "inv_freq" in str(model.state_dict().keys()))
ids = torch.randint(1, 40, (2, 6)).masked_fill(attention_mask == 0, 0)
labels = ids.masked_fill(attention_mask == 0, -100)
print(ids, labels, sep="\n")
model.eval()
loss, logits = model(ids, attention_mask, labels)
print(f"loss {loss.item():.5f}", logits.shape, loss.grad_fn)
print(logits[1, -1, :5])

sdpa = LlamaForCausalLM(impl="sdpa")
sdpa.load_state_dict(model.state_dict())
loss2, logits2 = sdpa(ids, attention_mask, labels)
print("sdpa == eager:", torch.allclose(logits2, logits, atol=1e-5), f"{loss2.item():.5f}")
# without a padding mask the sdpa path uses is_causal=True
_, l3 = sdpa(ids[:1])
_, l4 = model(ids[:1], torch.ones(1, 6, dtype=torch.long))
print("is_causal path agrees:", torch.allclose(l3, l4, atol=1e-5))

model.train()
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.1, betas=(0.9, 0.95))
for step in range(6):
    loss, _ = model(ids, attention_mask, labels)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    print(step, f"{loss.item():.5f}", f"{gnorm.item():.4f}")
print("embed pad row grad zero:", bool(model.embed_tokens.weight.grad[0].abs().sum() == 0))
print("RESULT:", f"{loss.item():.5f}")
