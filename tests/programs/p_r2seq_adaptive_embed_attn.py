"""Word-LM odds and ends from the docs and blog posts: nn.AdaptiveLogSoftmaxWithLoss (Grave et al.)
as the output layer of a small LSTM LM (cutoffs, div_value, head_bias, log_prob, predict),
nn.Embedding options (padding_idx, max_norm, scale_grad_by_freq, sparse, from_pretrained with
freeze), nn.EmbeddingBag (offsets, include_last_offset, per_sample_weights), and attention
variants: Bahdanau additive, Luong general, F.scaled_dot_product_attention (attn_mask bool/float,
is_causal, scale, enable_gqa)."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(0)

# AdaptiveLogSoftmaxWithLoss
asm = nn.AdaptiveLogSoftmaxWithLoss(16, 40, cutoffs=[8, 20], div_value=2.0)
print(asm)
print([(k, tuple(v.shape)) for k, v in asm.state_dict().items()])
print(asm.shortlist_size, asm.n_clusters, asm.head_size, asm.cutoffs)
x = torch.randn(6, 16)
target = torch.tensor([0, 7, 8, 19, 20, 39])
out = asm(x, target)
print(type(out).__name__, out._fields, out.output, out.loss, out.loss.grad_fn)
lp = asm.log_prob(x)
print(lp.shape, lp.exp().sum(1), lp[2, 18:22])
print(asm.predict(x), lp.argmax(1))
print(torch.allclose(out.output, lp.gather(1, target[:, None]).squeeze(1), atol=1e-6))
out.loss.backward()
print(asm.head.weight.grad.abs().sum(), asm.tail[1][0].weight.grad.shape)
asm_b = nn.AdaptiveLogSoftmaxWithLoss(16, 40, cutoffs=[10], head_bias=True)
print(asm_b, asm_b.head.bias.shape)
o1 = asm_b(x[0], torch.tensor(12))
print(o1.output.shape, o1.loss)
for bad in (lambda: nn.AdaptiveLogSoftmaxWithLoss(16, 40, cutoffs=[20, 8]),
            lambda: nn.AdaptiveLogSoftmaxWithLoss(16, 40, cutoffs=[8, 40]),
            lambda: asm(x, torch.tensor([0, 1, 2, 3, 4, 40])),
            lambda: asm(x, target[:3])):
    try:
        bad()
    except Exception as e:
        print(type(e).__name__, e)


class AdaptiveLM(nn.Module):
    def __init__(self, ntoken, ninp, nhid):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp, padding_idx=0)
        self.rnn = nn.LSTM(ninp, nhid, batch_first=True)
        self.crit = nn.AdaptiveLogSoftmaxWithLoss(nhid, ntoken, cutoffs=[6, 15], div_value=4.0)

    def forward(self, inp, tgt):
        out, _ = self.rnn(self.encoder(inp))
        return self.crit(out.reshape(-1, out.size(-1)), tgt.reshape(-1))


torch.manual_seed(1)
lm = AdaptiveLM(30, 12, 16)
opt = torch.optim.Adagrad(lm.parameters(), lr=0.1)
data = torch.randint(1, 30, (3, 8))
for step in range(5):
    opt.zero_grad()
    res = lm(data[:, :-1], data[:, 1:])
    res.loss.backward()
    opt.step()
    print(step, f"{res.loss.item():.4f}", f"{math.exp(res.loss.item()):.3f}")
print(lm.encoder.weight.grad[0].abs().sum(), lm.encoder.weight[0])

# Embedding options
torch.manual_seed(2)
emb = nn.Embedding(10, 4, padding_idx=2, max_norm=1.0, norm_type=2.0)
print(emb, emb.weight[2])
idx = torch.tensor([[1, 2, 3, 3], [2, 5, 1, 9]])
before = emb.weight.detach().norm(dim=1)
e = emb(idx)
after = emb.weight.detach().norm(dim=1)
print(before, after)
print(e.norm(dim=-1))
(e * torch.arange(4.)).sum().backward()
print(emb.weight.grad)
emb2 = nn.Embedding(6, 3, scale_grad_by_freq=True)
emb2(torch.tensor([1, 1, 1, 4])).sum().backward()
print(emb2, emb2.weight.grad)
emb3 = nn.Embedding(6, 3, sparse=True)
print(emb3, emb3(torch.tensor([[0, 2], [2, 5]])).shape)  # (its sparse .grad: not in ember yet)
weight = torch.FloatTensor([[1, 2.3, 3], [4, 5.1, 6.3]])
embedding = nn.Embedding.from_pretrained(weight)
print(embedding(torch.LongTensor([1])), embedding.weight.requires_grad)
embedding = nn.Embedding.from_pretrained(weight, freeze=False, padding_idx=0, max_norm=5.0)
print(embedding, embedding.weight.requires_grad, embedding(torch.tensor([1, 0])))
print(F.embedding(torch.tensor([[0, 1]]), weight, padding_idx=1))
try:
    nn.Embedding(5, 2, padding_idx=7)
except Exception as e:
    print(type(e).__name__, e)
try:
    nn.Embedding(10, 4, padding_idx=2)(torch.tensor([10]))
except Exception as e:
    print(type(e).__name__, e)
try:
    nn.Embedding(10, 4, padding_idx=2)(torch.tensor([1.0]))
except Exception as e:
    print(type(e).__name__, e)
for bad_idx in ([1.0], [3, 12, 5, 11], [-1, 4]):
    emb_mn = nn.Embedding(10, 4, max_norm=1.0)
    try:
        emb_mn(torch.tensor(bad_idx))
    except Exception as e:
        print(type(e).__name__, e)
    print(emb_mn.weight.detach().norm(dim=1))

# EmbeddingBag
torch.manual_seed(3)
embedding_sum = nn.EmbeddingBag(10, 3, mode='sum')
input = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9], dtype=torch.long)
offsets = torch.tensor([0, 4], dtype=torch.long)
print(embedding_sum(input, offsets))
print(nn.EmbeddingBag(10, 3, mode='mean', include_last_offset=True)(input, torch.tensor([0, 3, 8])))
w = torch.rand(8, requires_grad=True)
o = embedding_sum(input, offsets, per_sample_weights=w)
o.sum().backward()
print(o, w.grad)
print(embedding_sum(torch.tensor([[1, 2], [3, 3]])))
print(F.embedding_bag(input, embedding_sum.weight, offsets, mode='max'))
print(nn.EmbeddingBag(10, 3, mode='mean')(input, torch.tensor([0, 0, 5])))
try:
    nn.EmbeddingBag(10, 3, mode='mean')(input, offsets, per_sample_weights=w)
except Exception as e:
    print(type(e).__name__, e)


# Attention variants
class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size):
        super(BahdanauAttention, self).__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)

    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        scores = scores.squeeze(2).unsqueeze(1)
        weights = F.softmax(scores, dim=-1)
        context = torch.bmm(weights, keys)
        return context, weights


class LuongGeneral(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.W = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, query, keys, mask=None):
        scores = torch.bmm(self.W(query), keys.transpose(1, 2))
        if mask is not None:
            scores = scores.masked_fill(~mask.unsqueeze(1), -1e9)
        weights = scores.softmax(-1)
        return weights @ keys, weights


torch.manual_seed(4)
q = torch.randn(2, 1, 8)
keys = torch.randn(2, 5, 8)
ctx, wts = BahdanauAttention(8)(q, keys)
print(ctx.shape, wts)
mask = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])
ctx, wts = LuongGeneral(8)(q, keys, mask)
print(wts, ctx.grad_fn)

Q = torch.randn(2, 4, 6, 8, requires_grad=True)
K = torch.randn(2, 4, 7, 8)
V = torch.randn(2, 4, 7, 8)
bool_mask = torch.ones(6, 7, dtype=torch.bool).tril(diagonal=1)
float_mask = torch.zeros(6, 7).masked_fill(~bool_mask, float("-inf"))
a = F.scaled_dot_product_attention(Q, K, V, attn_mask=bool_mask)
b = F.scaled_dot_product_attention(Q, K, V, attn_mask=float_mask)
print(a[0, 0, :2], torch.allclose(a, b, atol=1e-6))
c = F.scaled_dot_product_attention(Q, K[:, :, :6], V[:, :, :6], is_causal=True, scale=0.5)
print(c[1, 3, -1])
ref = torch.softmax((Q @ K[:, :, :6].transpose(-2, -1) * 0.5).masked_fill(
    torch.ones(6, 6, dtype=torch.bool).triu(1), float("-inf")), dim=-1) @ V[:, :, :6]
print(torch.allclose(c, ref, atol=1e-6))
c.sum().backward()
print(Q.grad[0, 0, 0].abs().max() < 1e-5)    # (zero up to rounding noise, which is kernel-dependent)
Kg, Vg = torch.randn(2, 2, 7, 8), torch.randn(2, 2, 7, 8)
g = F.scaled_dot_product_attention(Q, Kg, Vg, enable_gqa=True)
print(g.shape, g[1, 3, 0, :4])
try:
    F.scaled_dot_product_attention(Q[0], K[0], V[0], attn_mask=bool_mask, is_causal=True)
except Exception as e:
    print(type(e).__name__, str(e)[:80])
h = F.scaled_dot_product_attention(Q, K, V, attn_mask=bool_mask, is_causal=True)
print(h.grad_fn.name(), h[0, 1, 2, :4])
with torch.autocast("cpu"):
    lo = F.scaled_dot_product_attention(Q, K, V, attn_mask=float_mask)
print(lo.dtype, lo[1, 0, 0, :4])
print("RESULT:", f"{out.loss.item():.4f}", f"{g.sum().item():.4f}")
