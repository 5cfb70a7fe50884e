"""CTC end to end: a BiGRU acoustic model trained with F.ctc_loss (padded and concatenated
targets, every reduction, zero_infinity for impossible alignments, nn.CTCLoss), then decoded
with torchaudio's tutorial GreedyCTCDecoder (argmax, unique_consecutive, drop blanks) and the
CTC prefix beam search of githubharald/CTCDecoder (prefix_search / beam_search.py) in log
space; random features instead of audio."""

import importlib
import math
import os
from collections import defaultdict

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

LABELS = "-abcde"  # blank first, as torchaudio's bundles
C = len(LABELS)


class GreedyCTCDecoder(nn.Module):
    def __init__(self, labels, blank=0):
        super().__init__()
        self.labels = labels
        self.blank = blank

    def forward(self, emission):
        indices = torch.argmax(emission, dim=-1)
        indices = torch.unique_consecutive(indices, dim=-1)
        indices = [i for i in indices if i != self.blank]
        return "".join([self.labels[i] for i in indices])


def logsumexp(*args):
    if all(a == -math.inf for a in args):
        return -math.inf
    a_max = max(args)
    return a_max + math.log(sum(math.exp(a - a_max) for a in args))


def prefix_beam_search(logp, beam_width=4, blank=0):
    """logp: (T, C) log-probabilities; returns the best label sequences with scores."""
    beams = {(): (0.0, -math.inf)}  # prefix -> (log p ending in blank, log p ending in non-blank)
    for t in range(logp.shape[0]):
        row = logp[t].tolist()
        nxt = defaultdict(lambda: (-math.inf, -math.inf))
        for prefix, (pb, pnb) in beams.items():
            for c in range(len(row)):
                p = row[c]
                if c == blank:
                    b, nb = nxt[prefix]
                    nxt[prefix] = (logsumexp(b, pb + p, pnb + p), nb)
                    continue
                last = prefix[-1] if prefix else None
                new = prefix + (c,)
                b, nb = nxt[new]
                if c != last:
                    nxt[new] = (b, logsumexp(nb, pb + p, pnb + p))
                else:
                    nxt[new] = (b, logsumexp(nb, pb + p))
                    b, nb = nxt[prefix]
                    nxt[prefix] = (b, logsumexp(nb, pnb + p))
        beams = dict(sorted(nxt.items(), key=lambda kv: -logsumexp(*kv[1]))[:beam_width])
    return [("".join(LABELS[i] for i in k), logsumexp(*v)) for k, v in beams.items()]


class Acoustic(nn.Module):
    def __init__(self, n_feats=8, hidden=16):
        super().__init__()
        self.rnn = nn.GRU(n_feats, hidden, num_layers=2, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(2 * hidden, C)

    def forward(self, x):
        return self.fc(self.rnn(x)[0]).log_softmax(-1)


torch.manual_seed(0)
N, T, S = 4, 14, 5
x = torch.randn(N, T, 8)
targets = torch.randint(1, C, (N, S))
input_lengths = torch.tensor([14, 12, 9, 3])
target_lengths = torch.tensor([5, 4, 3, 5])  # the last cannot be aligned in 3 frames
model = Acoustic()
opt = torch.optim.AdamW(model.parameters(), lr=3e-2)
ctc = nn.CTCLoss(blank=0, zero_infinity=True)
for step in range(30):
    lp = model(x).transpose(0, 1)
    loss = ctc(lp, targets, input_lengths, target_lengths)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 4:
        print(
            "step %d ctc %.5f grad %.5f" % (step, loss.item(), model.fc.weight.grad.norm().item())
        )

lp = model(x).transpose(0, 1).detach().requires_grad_()
flat = torch.cat([targets[i, :n] for i, n in enumerate(target_lengths.tolist())])
for red in ("none", "mean", "sum"):
    for zi in (False, True):
        a = F.ctc_loss(lp, targets, input_lengths, target_lengths, reduction=red, zero_infinity=zi)
        b = F.ctc_loss(
            lp,
            flat,
            tuple(input_lengths.tolist()),
            tuple(target_lengths.tolist()),
            reduction=red,
            zero_infinity=zi,
        )
        (g,) = torch.autograd.grad(b.sum(), lp)
        print(
            red,
            zi,
            a.detach().numpy().round(5).tolist(),
            bool(torch.equal(a, b)),
            "grad rows",
            g[:, 0].sum(-1)[:4].numpy().round(5).tolist(),
            g[:, 3].abs().sum().item(),
        )
for bad in (
    dict(input_lengths=torch.tensor([15, 12, 9, 3])),
    dict(target_lengths=torch.tensor([6, 4, 3, 5])),
    dict(blank=C),
):
    kw = dict(input_lengths=input_lengths, target_lengths=target_lengths)
    kw.update(bad)
    try:
        F.ctc_loss(lp, targets, **kw)
    except Exception as e:
        print(type(e).__name__, e)
print("unbatched", F.ctc_loss(lp[:, 0], targets[0], torch.tensor(14), torch.tensor(5)).item())
print("float64", F.ctc_loss(lp.double(), targets, input_lengths, target_lengths).item())

decoder = GreedyCTCDecoder(LABELS)
with torch.no_grad():
    em = model(x)
for i in range(N):
    e = em[i, : input_lengths[i]]
    ref = "".join(LABELS[j] for j in targets[i, : target_lengths[i]].tolist())
    beams = prefix_beam_search(e, beam_width=3)
    print("utt", i, "ref", ref, "greedy", decoder(e), "beam", [(s, round(p, 4)) for s, p in beams])
