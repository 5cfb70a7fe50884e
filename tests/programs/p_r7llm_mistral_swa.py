"""Mistral's sliding-window attention with a rolling KV cache, shrunk from mistralai/mistral-src
one_file_ref.py (v0.1): ModelArgs, repeat_kv via repeat_interleave (grouped-query attention),
precompute_freqs_cis with torch.polar + apply_rotary_emb through view_as_complex / view_as_real,
Attention whose cache_k / cache_v are rotating buffers written with scatter_ at
positions % sliding_window, the banded causal mask (tril, triu(diagonal=-sliding_window), log),
RMSNorm in float, SwiGLU FeedForward, Transformer.forward(input_ids, positions) and the greedy
generate() with its pre-fill / decode split and teacher-forced prompt tokens. Plus a few
training steps on the banded mask and a check of the GQA attention against
F.scaled_dot_product_attention(enable_gqa=True). Tiny sizes, float32 on CPU."""
import importlib
import os
from dataclasses import dataclass

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


@dataclass
class ModelArgs:
    dim: int = 32
    n_layers: int = 2
    head_dim: int = 8
    hidden_dim: int = 64
    n_heads: int = 4
    n_kv_heads: int = 2
    sliding_window: int = 6
    norm_eps: float = 1e-5
    vocab_size: int = 40
    max_batch_size: int = 3


def repeat_kv(keys, values, repeats):
    keys = torch.repeat_interleave(keys, repeats=repeats, dim=2)
    values = torch.repeat_interleave(values, repeats=repeats, dim=2)
    return keys, values


def _reshape_for_broadcast(freqs_cis, x):
    """freqs_cis: complex - (seq_len, head_dim / 2); x: complex - (bsz, seq_len, head_dim / 2)"""
    ndim = x.ndim
    assert 1 < ndim
    assert freqs_cis.shape == (x.shape[1], x.shape[-1]), (freqs_cis.shape,
                                                         (x.shape[1], x.shape[-1]))
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(*shape)


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = _reshape_for_broadcast(freqs_cis, xq_)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


class Attention(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.n_heads = args.n_heads
        self.n_kv_heads = args.n_kv_heads
        self.repeats = self.n_heads // self.n_kv_heads
        self.sliding_window = self.args.sliding_window
        self.scale = self.args.head_dim ** -0.5
        self.wq = nn.Linear(args.dim, args.n_heads * args.head_dim, bias=False)
        self.wk = nn.Linear(args.dim, args.n_kv_heads * args.head_dim, bias=False)
        self.wv = nn.Linear(args.dim, args.n_kv_heads * args.head_dim, bias=False)
        self.wo = nn.Linear(args.n_heads * args.head_dim, args.dim, bias=False)
        # (the reference allocates these with torch.empty(..., dtype=float16).cuda())
        self.cache_k = torch.zeros((args.max_batch_size, args.sliding_window, self.n_kv_heads,
                                    self.args.head_dim))
        self.cache_v = torch.zeros((args.max_batch_size, args.sliding_window, self.n_kv_heads,
                                    self.args.head_dim))

    def forward(self, x, freqs_cis, positions, mask):
        bsz, seqlen, _ = x.shape
        xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)
        xq = xq.view(bsz, seqlen, self.n_heads, self.args.head_dim)
        xk = xk.view(bsz, seqlen, self.n_kv_heads, self.args.head_dim)
        xv = xv.view(bsz, seqlen, self.n_kv_heads, self.args.head_dim)
        xq, xk = apply_rotary_emb(xq, xk, freqs_cis=freqs_cis)

        # The cache is a rotating buffer
        scatter_pos = (positions[-self.sliding_window:] % self.sliding_window)[None, :, None, None]
        scatter_pos = scatter_pos.repeat(bsz, 1, self.n_kv_heads, self.args.head_dim)
        self.cache_k[:bsz].scatter_(dim=1, index=scatter_pos,
                                    src=xk[:, -self.sliding_window:].detach())
        self.cache_v[:bsz].scatter_(dim=1, index=scatter_pos,
                                    src=xv[:, -self.sliding_window:].detach())

        if positions.shape[0] > 1:
            # prefill
            key, value = repeat_kv(xk, xv, self.repeats)
        else:
            cur_pos = positions[-1].item() + 1
            key, value = repeat_kv(self.cache_k[:bsz, :cur_pos, ...],
                                   self.cache_v[:bsz, :cur_pos, ...], self.repeats)

        query = xq.transpose(1, 2)
        key = key.transpose(1, 2)
        value = value.transpose(1, 2)
        # scores : [bsz, n_heads, seqlen | 1, seqlen]
        scores = torch.matmul(query, key.transpose(2, 3)) * self.scale

        if mask is not None:
            scores += mask[None, None, ...]

        scores = scores.float()
        scores = nn.functional.softmax(scores, dim=-1).type_as(query)
        output = torch.matmul(scores, value)  # (bs, n_local_heads, slen, head_dim)
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.wo(output)


class FeedForward(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.w1 = nn.Linear(args.dim, args.hidden_dim, bias=False)
        self.w2 = nn.Linear(args.hidden_dim, args.dim, bias=False)
        self.w3 = nn.Linear(args.dim, args.hidden_dim, bias=False)

    def forward(self, x):
        return self.w2(nn.functional.silu(self.w1(x)) * self.w3(x))


class RMSNorm(torch.nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        output = self._norm(x.float()).type_as(x)
        return output * self.weight


class TransformerBlock(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.n_heads = args.n_heads
        self.dim = args.dim
        self.attention = Attention(args)
        self.feed_forward = FeedForward(args=args)
        self.attention_norm = RMSNorm(args.dim, eps=args.norm_eps)
        self.ffn_norm = RMSNorm(args.dim, eps=args.norm_eps)
        self.args = args

    def forward(self, x, freqs_cis, positions, mask):
        r = self.attention.forward(self.attention_norm(x), freqs_cis, positions, mask)
        h = x + r
        r = self.feed_forward.forward(self.ffn_norm(h))
        out = h + r
        return out


def precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    return torch.polar(torch.ones_like(freqs), freqs)  # complex64


class Transformer(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.vocab_size = args.vocab_size
        self.n_layers = args.n_layers
        assert self.vocab_size > 0
        self.tok_embeddings = nn.Embedding(args.vocab_size, args.dim)
        self.layers = torch.nn.ModuleList([TransformerBlock(args=args)
                                           for _ in range(args.n_layers)])
        self.norm = RMSNorm(args.dim, eps=args.norm_eps)
        self.output = nn.Linear(args.dim, args.vocab_size, bias=False)
        self.freqs_cis = precompute_freqs_cis(self.args.head_dim, 128)

    def forward(self, input_ids, positions):
        h = self.tok_embeddings(input_ids)
        freqs_cis = self.freqs_cis[positions]
        mask = None
        if input_ids.shape[1] > 1:
            seqlen = input_ids.shape[1]
            tensor = torch.full((seqlen, seqlen), dtype=h.dtype, fill_value=1, device=h.device)
            mask = torch.tril(tensor, diagonal=0).to(h.dtype)
            # make the mask banded to account for sliding window
            mask = torch.triu(mask, diagonal=-self.args.sliding_window)
            mask = torch.log(mask)
        for layer in self.layers:
            h = layer(h, freqs_cis, positions, mask)
        return self.output(self.norm(h)).float()


@torch.no_grad()
def generate(encoded_prompts, model, max_tokens, pad_id=0):
    prompt_lens = [len(x) for x in encoded_prompts]
    min_prompt_len = min(prompt_lens)
    max_prompt_len = max(prompt_lens)
    input_tokens = torch.full((len(encoded_prompts), max_prompt_len), pad_id, dtype=torch.long)
    for i, encoded in enumerate(encoded_prompts):
        input_tokens[i, :len(encoded)] = torch.tensor(encoded).to(input_tokens)
    input_mask = input_tokens != pad_id
    # pre-fill
    positions = torch.arange(0, min_prompt_len)
    logits = model.forward(input_tokens[:, :min_prompt_len], positions)
    logprobs = nn.functional.log_softmax(logits, dim=-1)
    # decode
    generated = []
    all_logprobs = [logprobs[:, :-1, :].gather(2, input_tokens[:, 1:min_prompt_len, None])
                    .squeeze(-1), ]
    cur_pos = min_prompt_len
    for _ in range(max_tokens):
        next_token = torch.argmax(logprobs[:, -1, :], dim=-1)
        if cur_pos < input_mask.shape[1]:
            next_token = torch.where(input_mask[:, cur_pos], input_tokens[:, cur_pos], next_token)
        all_logprobs.append(logprobs[:, -1, :].gather(1, next_token[:, None]), )
        generated.append(next_token[:, None])
        logits = model.forward(next_token[:, None], torch.LongTensor([cur_pos]).to(next_token))
        logprobs = nn.functional.log_softmax(logits, dim=-1)
        cur_pos += 1
    all_logprobs = torch.cat(all_logprobs, 1)
    res = []
    if max_tokens > 0:
        generated = torch.cat(generated, 1)
        for i, x in enumerate(encoded_prompts):
            res.append(x[:min_prompt_len] + generated[i].tolist())
    return res, all_logprobs


torch.manual_seed(0)
args = ModelArgs()
model = Transformer(args)
print("params", sum(p.numel() for p in model.parameters()), "freqs_cis", model.freqs_cis.dtype,
      tuple(model.freqs_cis.shape))
print("freqs_cis[3]", model.freqs_cis[3])
x = torch.randn(2, 5, 4, 8)
q, k = apply_rotary_emb(x, x[:, :, :2], model.freqs_cis[:5])
print("rope", tuple(q.shape), tuple(k.shape), "%.5f" % q.norm().item(), "%.5f" % x.norm().item())
seqlen = 9
mask = torch.log(torch.triu(torch.tril(torch.full((seqlen, seqlen), fill_value=1.0)),
                            diagonal=-args.sliding_window))
print("banded mask row 8", mask[8])

# grouped-query attention: repeat_kv vs enable_gqa
kk, vv = torch.randn(2, 7, 2, 8), torch.randn(2, 7, 2, 8)
qq = torch.randn(2, 7, 4, 8)
rk, rv = repeat_kv(kk, vv, 2)
ref = F.scaled_dot_product_attention(qq.transpose(1, 2), rk.transpose(1, 2),
                                     rv.transpose(1, 2), is_causal=True)
gqa = F.scaled_dot_product_attention(qq.transpose(1, 2), kk.transpose(1, 2),
                                     vv.transpose(1, 2), is_causal=True, enable_gqa=True)
print("repeat_kv", tuple(rk.shape), torch.equal(rk[:, :, 0], rk[:, :, 1]),
      "gqa max diff < 1e-6", (ref - gqa).abs().max().item() < 1e-6)

# a few training steps with the banded mask (full-sequence forward)
g = torch.Generator().manual_seed(2)
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.1)
for step in range(5):
    start = torch.randint(1, args.vocab_size, (3, 1), generator=g)
    seq = (start + torch.arange(13) * 2) % (args.vocab_size - 1) + 1
    inp, tgt = seq[:, :-1], seq[:, 1:]
    logits = model(inp, torch.arange(inp.shape[1]))
    loss = F.cross_entropy(logits.reshape(-1, args.vocab_size), tgt.reshape(-1))
    opt.zero_grad()
    loss.backward()
    gn = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    print("train", step, "loss %.5f grad_norm %.5f" % (loss.item(), gn.item()))
print("wq grad", tuple(model.layers[0].attention.wq.weight.grad.shape),
      "wk grad", tuple(model.layers[0].attention.wk.weight.grad.shape))

# greedy generation through the rolling cache; prompts of different lengths
prompts = [[5, 7, 9, 11], [3, 5, 7, 9, 11, 13], [20, 22, 24, 26, 28]]
res, logprobs = generate(prompts, model, max_tokens=10)
for r in res:
    print("generated", r)
print("logprobs", tuple(logprobs.shape), "%.5f" % logprobs.sum().item(), logprobs[0, :4])
cache = model.layers[1].attention.cache_k
print("cache", tuple(cache.shape), "%.5f" % cache.abs().sum().item())

# decode with the cache == full forward while the sequence fits in the window
with torch.no_grad():
    seq = torch.tensor(res)[:, :args.sliding_window]
    full = model(seq, torch.arange(seq.shape[1]))
    model(seq[:, :3], torch.arange(3))
    steps = [model(seq[:, i:i + 1], torch.LongTensor([i])) for i in range(3, seq.shape[1])]
    inc = torch.cat(steps, 1)
print("cache decode vs full", tuple(inc.shape), (inc - full[:, 3:]).abs().max().item() < 1e-4)
