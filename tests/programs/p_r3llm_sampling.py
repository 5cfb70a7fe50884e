"""Decoding strategies as in Hugging Face's logits processors / warpers and nanoGPT's generate,
on a tiny GPT with a KV cache: temperature, top-k (torch.topk + masked_fill with -inf),
top-p / nucleus (sort, softmax, cumsum, scatter back), min-p, typical decoding (entropy),
repetition penalty (gather/scatter), no-repeat bigram ban, greedy, beam-search scores with
log_softmax + topk over flattened beams, and torch.multinomial with a seeded torch.Generator."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


class TinyGPT(nn.Module):
    def __init__(self, vocab=30, d=24, n_head=2, block=24):
        super().__init__()
        self.n_head = n_head
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(block, d)
        self.ln = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * d, d))
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # weight tying
        self.apply(self._init_weights)

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.2)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.2)

    def forward(self, idx, past=None):
        B, T = idx.shape
        start = 0 if past is None else past[0].size(2)
        pos = torch.arange(start, start + T, dtype=torch.long).unsqueeze(0)
        x = self.wte(idx) + self.wpe(pos)
        q, k, v = self.qkv(self.ln(x)).split(x.size(-1), dim=2)
        q, k, v = (t.view(B, T, self.n_head, -1).transpose(1, 2) for t in (q, k, v))
        if past is not None:
            k = torch.cat([past[0], k], dim=-2)
            v = torch.cat([past[1], v], dim=-2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=past is None and T > 1)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(B, T, -1))
        x = x + self.mlp(self.ln(x))
        return self.lm_head(self.ln_f(x)), (k, v)


def top_k_filter(logits, top_k, filter_value=-float("Inf")):
    top_k = min(max(top_k, 1), logits.size(-1))
    indices_to_remove = logits < torch.topk(logits, top_k)[0][..., -1, None]
    return logits.masked_fill(indices_to_remove, filter_value)


def top_p_filter(scores, top_p, filter_value=-float("Inf"), min_tokens_to_keep=1):
    sorted_logits, sorted_indices = torch.sort(scores, descending=False)
    cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    sorted_indices_to_remove = cumulative_probs <= (1 - top_p)
    sorted_indices_to_remove[..., -min_tokens_to_keep:] = 0
    indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices,
                                                         sorted_indices_to_remove)
    return scores.masked_fill(indices_to_remove, filter_value)


def min_p_filter(scores, min_p, filter_value=-float("Inf")):
    probs = torch.softmax(scores, dim=-1)
    top_probs, _ = probs.max(dim=-1, keepdim=True)
    scaled_min_p = min_p * top_probs
    tokens_to_remove = probs < scaled_min_p
    sorted_indices = torch.argsort(scores, descending=True, dim=-1)
    sorted_indices_to_remove = torch.gather(tokens_to_remove, dim=-1, index=sorted_indices)
    sorted_indices_to_remove[..., :1] = False
    indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices,
                                                         sorted_indices_to_remove)
    return scores.masked_fill(indices_to_remove, filter_value)


def typical_filter(scores, mass=0.9, filter_value=-float("Inf")):
    normalized = torch.nn.functional.log_softmax(scores, dim=-1)
    p = torch.exp(normalized)
    ent = -(normalized * p).nansum(-1, keepdim=True)
    shifted_scores = torch.abs((-normalized) - ent)
    sorted_scores, sorted_indices = torch.sort(shifted_scores, descending=False)
    sorted_logits = scores.gather(-1, sorted_indices)
    cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    last_ind = (cumulative_probs < mass).sum(dim=1)
    last_ind.clamp_(max=sorted_scores.shape[-1] - 1)
    sorted_indices_to_remove = sorted_scores > sorted_scores.gather(1, last_ind.view(-1, 1))
    indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices,
                                                         sorted_indices_to_remove)
    return scores.masked_fill(indices_to_remove, filter_value)


def repetition_penalty(input_ids, scores, penalty):
    score = torch.gather(scores, 1, input_ids)
    score = torch.where(score < 0, score * penalty, score / penalty)
    return scores.scatter(1, input_ids, score)


def ban_repeated_bigrams(input_ids, scores):
    for b in range(input_ids.shape[0]):
        seq = input_ids[b].tolist()
        banned = [seq[i + 1] for i in range(len(seq) - 1) if seq[i] == seq[-1]]
        scores[b, banned] = -float("inf")
    return scores


torch.manual_seed(1337)
model = TinyGPT().eval()
print(model.lm_head.weight is model.wte.weight,
      sum(p.numel() for p in model.parameters()),
      len(model.state_dict()), "lm_head.weight" in model.state_dict())
logits = torch.randn(2, 12)
print("top_k", top_k_filter(logits, 3))
print("top_p", top_p_filter(logits, 0.8))
print("min_p", min_p_filter(logits, 0.2))
print("typical", typical_filter(logits, 0.7))
prev = torch.tensor([[1, 3, 3], [0, 11, 2]])
print("rep", repetition_penalty(prev, logits, 1.3))
print("bigram", ban_repeated_bigrams(torch.tensor([[4, 5, 4, 6, 4]]), logits[:1].clone()))
probs = F.softmax(top_p_filter(logits, 0.9) / 0.7, dim=-1)
print(probs.sum(-1), (probs == 0).sum(-1))

g = torch.Generator().manual_seed(42)
print("multinomial", torch.multinomial(probs, num_samples=4, replacement=True, generator=g))
print("no replacement", torch.multinomial(probs, 3, generator=g))
print("seed", g.initial_seed(), torch.multinomial(torch.tensor([0.0, 1.0, 0.0]), 1))


@torch.no_grad()
def generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, top_p=None,
             do_sample=True, generator=None, penalty=None):
    logits, past = model(idx)
    for _ in range(max_new_tokens):
        logits = logits[:, -1, :] / temperature
        if penalty is not None:
            logits = repetition_penalty(idx, logits, penalty)
        if top_k is not None:
            v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
            logits[logits < v[:, [-1]]] = -float("Inf")
        if top_p is not None:
            logits = top_p_filter(logits, top_p)
        if do_sample:
            probs = F.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1, generator=generator)
        else:
            idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        idx = torch.cat((idx, idx_next), dim=1)
        logits, past = model(idx_next, past)
    return idx


prompt = torch.randint(0, 30, (2, 4))
print("prompt", prompt)
print("greedy", generate(model, prompt, 6, do_sample=False))
full, _ = model(generate(model, prompt, 6, do_sample=False))
print("no-cache argmax", full[:, 3:-1].argmax(-1))
g = torch.Generator().manual_seed(7)
print("top_k", generate(model, prompt, 6, temperature=0.8, top_k=5, generator=g))
print("top_p", generate(model, prompt, 6, top_p=0.9, generator=g, penalty=1.2))
torch.manual_seed(3)
print("global rng", generate(model, prompt, 5))

# beam search bookkeeping (num_beams=3) on the first prompt
num_beams, vocab = 3, 30
beam_scores = torch.zeros(num_beams)
beam_scores[1:] = -1e9
seqs = prompt[:1].repeat(num_beams, 1)
for step in range(4):
    logits, _ = model(seqs)
    next_scores = F.log_softmax(logits[:, -1, :], dim=-1) + beam_scores[:, None]
    next_scores = next_scores.view(1, num_beams * vocab)
    next_scores, next_tokens = torch.topk(next_scores, 2 * num_beams, dim=1, largest=True,
                                          sorted=True)
    next_indices = torch.div(next_tokens, vocab, rounding_mode="floor")
    next_tokens = next_tokens % vocab
    beam_scores = next_scores[0, :num_beams]
    seqs = torch.cat([seqs[next_indices[0, :num_beams]],
                      next_tokens[0, :num_beams].unsqueeze(-1)], dim=-1)
    print(step, next_indices.tolist(), [f"{s:.4f}" for s in beam_scores.tolist()])
print(seqs)
lengths = torch.tensor([seqs.shape[1]] * num_beams, dtype=torch.float)
print("length-normalized", beam_scores / lengths ** 1.0)
entropy = -(F.softmax(logits[:, -1], -1) * F.log_softmax(logits[:, -1], -1)).sum(-1)
print("entropy", entropy, f"ppl {math.exp(entropy.mean().item()):.4f}")
print("RESULT:", seqs[0].tolist())
