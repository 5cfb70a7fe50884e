"""Beam search with incremental decoding state, as fairseq's SequenceGenerator and OpenNMT's
BeamSearch do it: an LSTM decoder with Luong "general" attention that caches its state per step
(incremental_state) and reorders it by the surviving beams (reorder_incremental_state via
index_select), GNMT length penalty ((5 + len) / 6) ** alpha, EOS handling, finalized hypotheses
sorted by score, plus greedy decoding and top-k sampling; untrained (seeded) weights."""

import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

BOS, EOS, PAD, V, H = 0, 1, 2, 11, 12


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, H, padding_idx=PAD)
        self.rnn = nn.LSTM(H, H // 2, bidirectional=True, batch_first=True)

    def forward(self, src):
        out, (h, c) = self.rnn(self.emb(src))
        h = torch.cat([h[0], h[1]], -1)
        c = torch.cat([c[0], c[1]], -1)
        return out, (h, c), src.eq(PAD)


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, H, padding_idx=PAD)
        self.cell = nn.LSTMCell(2 * H, H)
        self.attn_in = nn.Linear(H, H, bias=False)
        self.attn_out = nn.Linear(2 * H, H, bias=False)
        self.proj = nn.Linear(H, V)

    def forward(self, prev_tokens, enc, incremental_state):
        enc_out, (h0, c0), enc_mask = enc
        if "h" not in incremental_state:
            incremental_state.update(h=h0, c=c0, feed=torch.zeros_like(h0))
        x = self.emb(prev_tokens[:, -1])
        h, c = self.cell(
            torch.cat([x, incremental_state["feed"]], -1),
            (incremental_state["h"], incremental_state["c"]),
        )
        scores = torch.bmm(enc_out, self.attn_in(h).unsqueeze(2)).squeeze(2)
        scores = scores.float().masked_fill_(enc_mask, float("-inf"))
        attn = F.softmax(scores, dim=-1)
        ctx = torch.bmm(attn.unsqueeze(1), enc_out).squeeze(1)
        out = torch.tanh(self.attn_out(torch.cat([ctx, h], -1)))
        incremental_state.update(h=h, c=c, feed=out)
        return F.log_softmax(self.proj(out), -1), attn

    @staticmethod
    def reorder_incremental_state(incremental_state, new_order):
        for k, v in incremental_state.items():
            incremental_state[k] = v.index_select(0, new_order)


def reorder_encoder_out(enc, new_order):
    out, (h, c), mask = enc
    return (
        out.index_select(0, new_order),
        (h.index_select(0, new_order), c.index_select(0, new_order)),
        mask.index_select(0, new_order),
    )


def length_penalty(length, alpha):
    return ((5.0 + length) / 6.0) ** alpha


@torch.no_grad()
def beam_search(enc_model, dec_model, src, beam, max_len, alpha=0.6, min_len=1):
    bsz = src.size(0)
    enc = enc_model(src)
    new_order = torch.arange(bsz).view(-1, 1).repeat(1, beam).view(-1)
    enc = reorder_encoder_out(enc, new_order)
    tokens = torch.full((bsz * beam, 1), BOS, dtype=torch.long)
    scores = torch.zeros(bsz, beam)
    scores[:, 1:] = float("-inf")
    finalized = [[] for _ in range(bsz)]
    done = [False] * bsz
    state = {}
    for step in range(max_len):
        lprobs, _ = dec_model(tokens, enc, state)
        lprobs[:, PAD] = float("-inf")
        if step < min_len:
            lprobs[:, EOS] = float("-inf")
        if step == max_len - 1:
            lprobs[:, :EOS] = float("-inf")
            lprobs[:, EOS + 1 :] = float("-inf")
        cand = (scores.view(-1, 1) + lprobs).view(bsz, -1)
        top_scores, top_idx = cand.topk(2 * beam, dim=1)
        beams = torch.div(top_idx, V, rounding_mode="floor")
        words = top_idx.fmod(V)
        next_scores = torch.full((bsz, beam), float("-inf"))
        next_beams = torch.zeros(bsz, beam, dtype=torch.long)
        next_words = torch.full((bsz, beam), PAD, dtype=torch.long)
        for b in range(bsz):
            j = 0
            for s, bm, w in zip(top_scores[b].tolist(), beams[b].tolist(), words[b].tolist()):
                if done[b] or j == beam:
                    break
                hyp = tokens[b * beam + bm]
                if w == EOS:
                    if len(finalized[b]) < beam:
                        lp = length_penalty(step + 1, alpha)
                        finalized[b].append((s / lp, hyp[1:].tolist() + [EOS]))
                    continue
                next_scores[b, j], next_beams[b, j], next_words[b, j] = s, bm, w
                j += 1
            if len(finalized[b]) >= beam:
                done[b] = True
        if all(done):
            break
        reorder = (next_beams + torch.arange(bsz).unsqueeze(1) * beam).view(-1)
        dec_model.reorder_incremental_state(state, reorder)
        tokens = torch.cat([tokens.index_select(0, reorder), next_words.view(-1, 1)], 1)
        scores = next_scores
    return [sorted(f, key=lambda t: -t[0]) for f in finalized]


@torch.no_grad()
def greedy(enc_model, dec_model, src, max_len, topk=None, temperature=1.0):
    enc = enc_model(src)
    tokens = torch.full((src.size(0), 1), BOS, dtype=torch.long)
    state = {}
    for _ in range(max_len):
        lprobs, attn = dec_model(tokens, enc, state)
        if topk is None:
            nxt = lprobs.argmax(-1)
        else:
            v, i = (lprobs / temperature).topk(topk, -1)
            nxt = i.gather(1, torch.multinomial(v.softmax(-1), 1)).squeeze(1)
        tokens = torch.cat([tokens, nxt.unsqueeze(1)], 1)
    return tokens, attn


torch.manual_seed(0)
enc_model, dec_model = Encoder().eval(), Decoder().eval()
src = torch.randint(3, V, (3, 6))
src[1, 4:] = PAD
src[2, 2:] = PAD
for beam, alpha in ((1, 0.0), (3, 0.6), (4, 1.0)):
    for b, hyps in enumerate(beam_search(enc_model, dec_model, src, beam, 7, alpha)):
        print(
            "beam", beam, "alpha", alpha, "sent", b, ["%.4f %s" % (s, toks) for s, toks in hyps[:3]]
        )
toks, attn = greedy(enc_model, dec_model, src, 6)
print("greedy", toks.tolist())
print("last attn", attn.numpy().round(4).tolist())
torch.manual_seed(3)
print("top-k", greedy(enc_model, dec_model, src, 6, topk=3, temperature=0.7)[0].tolist())
print("lp", [round(length_penalty(n, 0.6), 5) for n in range(1, 6)])
