"""fairseq's label-smoothed cross entropy (criterions/label_smoothed_cross_entropy.py:
label_smoothed_nll_loss with ignore_index=padding_idx, compute_accuracy, sentence_avg vs token
normalisation) checked against F.cross_entropy(label_smoothing=...), driving a tiny GRU decoder
language model trained a few steps with Adam and inverse_sqrt warmup as fairseq's
InverseSquareRootSchedule does; synthetic token ids instead of a corpus."""

import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

PAD, EOS, V = 1, 2, 13


def label_smoothed_nll_loss(lprobs, target, epsilon, ignore_index=None, reduce=True):
    if target.dim() == lprobs.dim() - 1:
        target = target.unsqueeze(-1)
    nll_loss = -lprobs.gather(dim=-1, index=target)
    smooth_loss = -lprobs.sum(dim=-1, keepdim=True)
    if ignore_index is not None:
        pad_mask = target.eq(ignore_index)
        nll_loss.masked_fill_(pad_mask, 0.0)
        smooth_loss.masked_fill_(pad_mask, 0.0)
    else:
        nll_loss = nll_loss.squeeze(-1)
        smooth_loss = smooth_loss.squeeze(-1)
    if reduce:
        nll_loss = nll_loss.sum()
        smooth_loss = smooth_loss.sum()
    eps_i = epsilon / (lprobs.size(-1) - 1)
    loss = (1.0 - epsilon - eps_i) * nll_loss + eps_i * smooth_loss
    return loss, nll_loss


class TinyDecoder(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim, padding_idx=PAD)
        self.embed_scale = math.sqrt(dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.output_projection = nn.Linear(dim, vocab, bias=False)
        self.output_projection.weight = self.embed_tokens.weight

    def forward(self, prev_output_tokens):
        x = self.embed_scale * self.embed_tokens(prev_output_tokens)
        x = F.dropout(x, p=0.1, training=self.training)
        x, _ = self.rnn(x)
        return self.output_projection(x), None

    def get_normalized_probs(self, net_output, log_probs):
        logits = net_output[0]
        return F.log_softmax(logits, dim=-1) if log_probs else F.softmax(logits, dim=-1)


class LabelSmoothedCrossEntropyCriterion:
    def __init__(self, padding_idx, sentence_avg, label_smoothing, ignore_prefix_size=0):
        self.padding_idx = padding_idx
        self.sentence_avg = sentence_avg
        self.eps = label_smoothing
        self.ignore_prefix_size = ignore_prefix_size

    def __call__(self, model, sample, reduce=True):
        net_output = model(sample["net_input"]["prev_output_tokens"])
        lprobs = model.get_normalized_probs(net_output, log_probs=True)
        target = sample["target"]
        if self.ignore_prefix_size > 0:
            lprobs = lprobs[:, self.ignore_prefix_size :, :].contiguous()
            target = target[:, self.ignore_prefix_size :].contiguous()
        lprobs, target = lprobs.view(-1, lprobs.size(-1)), target.view(-1)
        loss, nll_loss = label_smoothed_nll_loss(
            lprobs, target, self.eps, ignore_index=self.padding_idx, reduce=reduce
        )
        sample_size = sample["target"].size(0) if self.sentence_avg else sample["ntokens"]
        mask = target.ne(self.padding_idx)
        n_correct = torch.sum(lprobs.argmax(1).masked_select(mask).eq(target.masked_select(mask)))
        logging_output = {
            "loss": loss.data,
            "nll_loss": nll_loss.data,
            "ntokens": sample["ntokens"],
            "nsentences": sample["target"].size(0),
            "sample_size": sample_size,
            "n_correct": n_correct.item(),
            "total": mask.sum().item(),
        }
        return loss, sample_size, logging_output, lprobs, target


def make_batch(g, bsz=4, maxlen=7):
    lens = torch.randint(3, maxlen + 1, (bsz,), generator=g)
    tgt = torch.full((bsz, maxlen), PAD, dtype=torch.long)
    prev = torch.full((bsz, maxlen), PAD, dtype=torch.long)
    for i, n in enumerate(lens.tolist()):
        toks = torch.randint(3, V, (n - 1,), generator=g)
        tgt[i, :n] = torch.cat([toks, torch.tensor([EOS])])
        prev[i, :n] = torch.cat([torch.tensor([EOS]), toks])
    return {
        "net_input": {"prev_output_tokens": prev},
        "target": tgt,
        "ntokens": int(tgt.ne(PAD).sum()),
    }


torch.manual_seed(0)
g = torch.Generator().manual_seed(7)
model = TinyDecoder(V, 16)
print(model)
opt = torch.optim.Adam(model.parameters(), lr=5e-3, betas=(0.9, 0.98), eps=1e-8, weight_decay=1e-4)
warmup, base = 4, 5e-3
sched = torch.optim.lr_scheduler.LambdaLR(
    opt, lambda n: min((n + 1) / warmup, math.sqrt(warmup / (n + 1)))
)
for sentence_avg in (False, True):
    crit = LabelSmoothedCrossEntropyCriterion(PAD, sentence_avg, 0.1)
    for step in range(4):
        sample = make_batch(g)
        model.train()
        loss, ss, log, lprobs, target = crit(model, sample)
        opt.zero_grad()
        (loss / ss).backward()
        gn = nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        sched.step()
        print(
            "avg=%s step %d loss %.5f nll %.5f ntok %d correct %d/%d gnorm %.5f lr %.6f"
            % (
                sentence_avg,
                step,
                log["loss"] / ss / math.log(2),
                log["nll_loss"] / ss,
                log["ntokens"],
                log["n_correct"],
                log["total"],
                gn,
                sched.get_last_lr()[0],
            )
        )

# fairseq's smoothing vs torch's: eps_i = eps/(V-1) on the others vs eps/V spread over all
model.eval()
sample = make_batch(g)
with torch.no_grad():
    loss, ss, log, lprobs, target = crit(model, sample)
    logits = model(sample["net_input"]["prev_output_tokens"])[0].view(-1, V)
    for eps in (0.0, 0.1, 0.3):
        fl, _ = label_smoothed_nll_loss(lprobs, target, eps, ignore_index=PAD)
        tl = F.cross_entropy(
            logits, target, ignore_index=PAD, label_smoothing=eps * V / (V - 1), reduction="sum"
        )
        print("eps %.1f fairseq %.5f torch %.5f" % (eps, fl.item(), tl.item()))
    tl_mean = F.cross_entropy(logits, target, ignore_index=PAD, label_smoothing=0.1)
    print(
        "mean %.6f none %s"
        % (
            tl_mean.item(),
            F.cross_entropy(
                logits, target, ignore_index=PAD, label_smoothing=0.1, reduction="none"
            )[:8],
        )
    )
    fl, nl = label_smoothed_nll_loss(lprobs, target, 0.1, ignore_index=None, reduce=False)
    print("no ignore", fl.shape, nl.shape, fl.sum().item())
    crit2 = LabelSmoothedCrossEntropyCriterion(PAD, False, 0.1, ignore_prefix_size=1)
    print("prefix", crit2(model, sample)[0].item())
