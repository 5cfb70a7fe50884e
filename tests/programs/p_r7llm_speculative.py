"""Speculative decoding with a small draft model, shrunk from feifeibear/LLMSpeculativeSampling:
sampling/utils.py (top_k_top_p_filter with in-place -inf masking, norm_logits, sample via
torch.multinomial, max_fn), sampling/autoregressive_sampling.py and
sampling/speculative_sampling.py's speculative_sampling_v2 (DeepMind's algorithm: gamma draft
tokens, accept while r < min(1, p/q), resample from norm(max(0, p - q)), a bonus token when all
are accepted, random_seed re-seeding). Two tiny GPTs of different width stand in for the target
and approx models; a vectorised check shows the accept/resample rule reproduces the target
distribution."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

VOCAB = 16


class Output:
    def __init__(self, logits):
        self.logits = logits


class GPT(nn.Module):
    def __init__(self, d, n_layer, block=48):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, d)
        self.wpe = nn.Embedding(block, d)
        layer = nn.TransformerEncoderLayer(d, 2, 2 * d, dropout=0.0, batch_first=True,
                                           norm_first=True)
        self.h = nn.TransformerEncoder(layer, n_layer, enable_nested_tensor=False)
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, VOCAB, bias=False)

    def forward(self, idx):
        T = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(T))
        mask = nn.Transformer.generate_square_subsequent_mask(T)
        return Output(2.0 * self.lm_head(self.ln_f(self.h(x, mask=mask, is_causal=True))))


def top_k_top_p_filter(logits, top_k=0, top_p=0.0):
    if top_k > 0:
        filter = torch.topk(logits, min(top_k, logits.size(-1)))[0]
        logits[logits < filter[:, [-1]]] = float("-inf")
    if top_p > 0.0:
        sorted_logits, sorted_indices = torch.sort(logits, descending=True)
        cumulative_probs = torch.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)
        filter = cumulative_probs > top_p
        filter[..., 1:] = filter[..., :-1].clone()
        filter[..., 0] = 0
        indices_to_remove = filter.scatter(1, sorted_indices, filter)
        logits[indices_to_remove] = float("-inf")
    return logits


def norm_logits(logits, temperature, top_k, top_p):
    assert logits.dim() == 2
    logits = logits / temperature
    logits = top_k_top_p_filter(logits, top_k=top_k, top_p=top_p)
    probs = F.softmax(logits, dim=1)
    return probs


def sample(probs, num_samples=1):
    idx_next = torch.multinomial(probs, num_samples=num_samples)
    return idx_next


def max_fn(x):
    x_max = torch.where(x > 0, x, torch.zeros_like(x))
    x_max_sum = torch.sum(x_max, dim=1, keepdim=True)
    return x_max / x_max_sum


@torch.no_grad()
def autoregressive_sampling(x, model, N, temperature=1, top_k=0, top_p=0):
    n = len(x)
    T = len(x) + N
    while n < T:
        outputs = model(x)
        last_p = norm_logits(outputs.logits[::, -1, :], temperature, top_k, top_p)
        idx_next = sample(last_p)
        x = torch.cat((x, idx_next), dim=1)
        n += 1
    return x


@torch.no_grad()
def speculative_sampling_v2(prefix, approx_model, target_model, max_len, gamma=4,
                            temperature=1, top_k=0, top_p=0, random_seed=None):
    seq_len = prefix.shape[1]
    T = seq_len + max_len
    assert prefix.shape[0] == 1, "input batch size must be 1"
    stats = {"accepted": 0, "resampled": 0, "bonus": 0, "rounds": 0}
    while prefix.shape[1] < T:
        x = prefix
        prefix_len = prefix.shape[1]
        for _ in range(gamma):
            # p.logits shape (batch, seq, vocab)
            q = approx_model(x).logits
            next_tok = sample(norm_logits(q[:, -1, :], temperature, top_k, top_p))
            x = torch.cat((x, next_tok), dim=1)
        # normalize the logits
        for i in range(q.shape[1]):
            q[:, i, :] = norm_logits(q[:, i, :], temperature, top_k, top_p)
        # p  = M_p[prefix + x_0, x_0, .., x_(gamma-1)]
        p = target_model(x).logits
        for i in range(p.shape[1]):
            p[:, i, :] = norm_logits(p[:, i, :], temperature, top_k, top_p)
        # n the end position of the valid prefix
        is_all_accept = True
        n = prefix_len - 1
        for i in range(gamma):
            if random_seed:
                torch.manual_seed(random_seed)
            r = torch.rand(1, device=p.device)
            j = x[:, prefix_len + i]
            if r < torch.min(torch.tensor([1], device=q.device),
                             p[:, prefix_len + i - 1, j] / q[:, prefix_len + i - 1, j]):
                # accept, and update n
                n += 1
                stats["accepted"] += 1
            else:
                # reject
                t = sample(max_fn(p[:, n, :] - q[:, n, :]))
                is_all_accept = False
                stats["resampled"] += 1
                break
        prefix = x[:, :n + 1]
        if is_all_accept:
            t = sample(p[:, -1, :])
            stats["bonus"] += 1
        prefix = torch.cat((prefix, t), dim=1)
        stats["rounds"] += 1
    return prefix, stats


torch.manual_seed(0)
target = GPT(32, 2).eval()
approx = GPT(16, 1).eval()
# make the draft resemble the target a little, as a distilled draft would
with torch.no_grad():
    approx.wte.weight.copy_(target.wte.weight[:, :16])
print("params target", sum(p.numel() for p in target.parameters()),
      "approx", sum(p.numel() for p in approx.parameters()))

logits = torch.randn(2, VOCAB)
print("top_k", norm_logits(logits.clone(), 1.0, 3, 0.0).gt(0).sum(1).tolist())
print("top_p", norm_logits(logits.clone(), 0.7, 0, 0.8).gt(0).sum(1).tolist())
print("top_k+top_p", norm_logits(logits.clone(), 1.0, 5, 0.5))
print("max_fn", max_fn(torch.tensor([[0.3, -0.1, 0.2, -0.4]])))

prefix = torch.tensor([[1, 2, 3]])
torch.manual_seed(123)
out = autoregressive_sampling(prefix, target, 12, top_k=8)
print("autoregressive", out.shape, out.tolist())
for kwargs in ({"gamma": 4}, {"gamma": 2, "top_k": 6}, {"gamma": 3, "top_p": 0.9,
                                                          "temperature": 0.8},
               {"gamma": 4, "random_seed": 7}):
    torch.manual_seed(321)
    out, stats = speculative_sampling_v2(prefix, approx, target, 12, **kwargs)
    print("speculative", kwargs, out.shape[1], out[0, 3:].tolist(), stats)

# the accept / resample rule is exact: tokens drawn from q then corrected follow p
p = F.softmax(torch.randn(1, 6) * 1.5, dim=-1)
q = F.softmax(torch.randn(1, 6) * 1.5, dim=-1)
g = torch.Generator().manual_seed(5)
n = 20000
draft = torch.multinomial(q.expand(n, 6), 1, replacement=True, generator=g).squeeze(1)
r = torch.rand(n, generator=g)
accept = r < torch.clamp(p[0, draft] / q[0, draft], max=1.0)
resampled = torch.multinomial(max_fn(p - q), n, replacement=True, generator=g)[0]
final = torch.where(accept, draft, resampled)
emp = torch.bincount(final, minlength=6).float() / n
print("acceptance rate %.4f expected %.4f" % (accept.float().mean().item(),
                                              torch.minimum(p, q).sum().item()))
print("p", p[0])
print("empirical", emp)
print("tv distance small", 0.5 * (emp - p[0]).abs().sum().item() < 0.02)
