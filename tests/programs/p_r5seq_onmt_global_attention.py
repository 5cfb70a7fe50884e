"""OpenNMT-py's GlobalAttention (onmt/modules/global_attention.py: Luong "dot"/"general" and
Bahdanau "mlp" scores, sequence_mask over memory_lengths, coverage, softmax/ sparsemax-free path)
inside an InputFeedRNNDecoder-style loop over nn.LSTMCell / GRUCell / RNNCell with teacher
forcing, trained a few steps on a copy task with synthetic data."""

import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


def sequence_mask(lengths, max_len=None):
    batch_size = lengths.numel()
    max_len = max_len or lengths.max()
    return (
        torch.arange(0, max_len, device=lengths.device)
        .type_as(lengths)
        .repeat(batch_size, 1)
        .lt(lengths.unsqueeze(1))
    )


class GlobalAttention(nn.Module):
    def __init__(self, dim, coverage=False, attn_type="dot"):
        super().__init__()
        self.dim = dim
        assert attn_type in ["dot", "general", "mlp"], "Please select a valid attention type."
        self.attn_type = attn_type
        if self.attn_type == "general":
            self.linear_in = nn.Linear(dim, dim, bias=False)
        elif self.attn_type == "mlp":
            self.linear_context = nn.Linear(dim, dim, bias=False)
            self.linear_query = nn.Linear(dim, dim, bias=True)
            self.v = nn.Linear(dim, 1, bias=False)
        out_bias = self.attn_type == "mlp"
        self.linear_out = nn.Linear(dim * 2, dim, bias=out_bias)
        if coverage:
            self.linear_cover = nn.Linear(1, dim, bias=False)

    def score(self, h_t, h_s):
        src_batch, src_len, src_dim = h_s.size()
        tgt_batch, tgt_len, tgt_dim = h_t.size()
        if self.attn_type in ["general", "dot"]:
            if self.attn_type == "general":
                h_t_ = h_t.view(tgt_batch * tgt_len, tgt_dim)
                h_t_ = self.linear_in(h_t_)
                h_t = h_t_.view(tgt_batch, tgt_len, tgt_dim)
            h_s_ = h_s.transpose(1, 2)
            return torch.bmm(h_t, h_s_)
        dim = self.dim
        wq = self.linear_query(h_t.view(-1, dim))
        wq = wq.view(tgt_batch, tgt_len, 1, dim)
        wq = wq.expand(tgt_batch, tgt_len, src_len, dim)
        uh = self.linear_context(h_s.contiguous().view(-1, dim))
        uh = uh.view(src_batch, 1, src_len, dim)
        uh = uh.expand(src_batch, tgt_len, src_len, dim)
        wquh = torch.tanh(wq + uh)
        return self.v(wquh.view(-1, dim)).view(tgt_batch, tgt_len, src_len)

    def forward(self, source, memory_bank, memory_lengths=None, coverage=None):
        if source.dim() == 2:
            one_step = True
            source = source.unsqueeze(1)
        else:
            one_step = False
        batch, source_l, dim = memory_bank.size()
        if coverage is not None:
            cover = coverage.view(-1).unsqueeze(1)
            memory_bank = memory_bank + self.linear_cover(cover).view_as(memory_bank)
            memory_bank = torch.tanh(memory_bank)
        align = self.score(source, memory_bank)
        if memory_lengths is not None:
            mask = sequence_mask(memory_lengths, max_len=align.size(-1))
            mask = mask.unsqueeze(1)
            align.masked_fill_(~mask, -float("inf"))
        align_vectors = F.softmax(align.view(batch * 1 * source.size(1), source_l), -1)
        align_vectors = align_vectors.view(batch, source.size(1), source_l)
        c = torch.bmm(align_vectors, memory_bank)
        concat_c = torch.cat([c, source], 2).view(batch * source.size(1), dim * 2)
        attn_h = self.linear_out(concat_c).view(batch, source.size(1), dim)
        if self.attn_type in ["general", "dot"]:
            attn_h = torch.tanh(attn_h)
        if one_step:
            return attn_h.squeeze(1), align_vectors.squeeze(1)
        return attn_h.transpose(0, 1).contiguous(), align_vectors.transpose(0, 1).contiguous()


class Seq2Seq(nn.Module):
    def __init__(self, vocab, dim, cell, attn_type, coverage):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.encoder = nn.GRU(dim, dim, batch_first=True)
        self.cell_type = cell
        cls = {"lstm": nn.LSTMCell, "gru": nn.GRUCell, "rnn": nn.RNNCell}[cell]
        self.cell = cls(2 * dim, dim)
        self.attn = GlobalAttention(dim, coverage=coverage, attn_type=attn_type)
        self.coverage = coverage
        self.gen = nn.Linear(dim, vocab)

    def forward(self, src, lengths, tgt_in):
        memory_bank, h = self.encoder(self.emb(src))
        h = h[0]
        state = (h, torch.zeros_like(h)) if self.cell_type == "lstm" else h
        input_feed = torch.zeros_like(h)
        coverage = None
        outs, attns = [], []
        for emb_t in self.emb(tgt_in).split(1, dim=1):
            x = torch.cat([emb_t.squeeze(1), input_feed], 1)
            state = self.cell(x, state)
            rnn_out = state[0] if self.cell_type == "lstm" else state
            attn_h, p_attn = self.attn(
                rnn_out, memory_bank, memory_lengths=lengths, coverage=coverage
            )
            if self.coverage:
                coverage = p_attn if coverage is None else coverage + p_attn
            input_feed = attn_h
            outs.append(attn_h)
            attns.append(p_attn)
        return self.gen(torch.stack(outs, 1)), torch.stack(attns, 1), coverage


torch.manual_seed(0)
B, S, V, D = 4, 6, 10, 8
lengths = torch.tensor([6, 4, 5, 2])
src = torch.randint(3, V, (B, S)) * sequence_mask(lengths, S).long()
tgt = torch.cat([torch.ones(B, 1, dtype=torch.long), src], 1)
print(sequence_mask(lengths).int().tolist())
for cell, attn_type, cov in (
    ("lstm", "general", False),
    ("gru", "dot", True),
    ("rnn", "mlp", False),
    ("lstm", "mlp", True),
):
    torch.manual_seed(1)
    model = Seq2Seq(V, D, cell, attn_type, cov)
    opt = torch.optim.Adagrad(model.parameters(), lr=0.1, initial_accumulator_value=0.1)
    for step in range(3):
        logits, attn, coverage = model(src, lengths, tgt[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, V), tgt[:, 1:].reshape(-1), ignore_index=0)
        cov_loss = torch.min(attn, coverage.unsqueeze(1)).sum() if cov else torch.zeros(())
        opt.zero_grad()
        (loss + 0.1 * cov_loss).backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        print(
            cell,
            attn_type,
            cov,
            "step",
            step,
            "loss %.5f cov %.5f" % (loss.item(), cov_loss.item()),
        )
    print(" attn row", attn[3, 0].detach().numpy().round(5).tolist(), attn.grad_fn.name())
    ga = GlobalAttention(D, attn_type=attn_type)
    h_all, a_all = ga(torch.randn(B, 3, D), torch.randn(B, S, D), lengths)
    print(" multi-step", tuple(h_all.shape), tuple(a_all.shape), a_all[:, 3].sum(-1).tolist())
try:
    GlobalAttention(D, attn_type="concat")
except Exception as e:
    print(type(e).__name__, e)
