"""Stanford CS224n assignment 4 (NMT with attention), shrunk: vocab.py's VocabEntry with
to_input_tensor / pad_sents, model_embeddings.py (nn.Embedding with padding_idx), nmt_model.py's
NMT (post-embedding Conv1d, bidirectional nn.LSTM encoder over pack_padded_sequence /
pad_packed_sequence, h/c projections of the final states, nn.LSTMCell decoder, multiplicative
attention with torch.bmm, e_t.data.masked_fill_(enc_masks.bool(), -inf), combined output
projection, gold-word log-likelihood with torch.gather), sanity_check.py-style shape checks,
run.py's training loop (batch_iter sorting by source length, Adam, clip_grad_norm_,
perplexity) and a greedy decode in place of beam search. Toy copy-and-reverse "translation"."""

import importlib
import math
import os

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
rnn_utils = importlib.import_module(LIB + ".nn.utils.rnn")
pad_packed_sequence, pack_padded_sequence = (
    rnn_utils.pad_packed_sequence,
    rnn_utils.pack_padded_sequence,
)

torch.manual_seed(0)
np.random.seed(0)


def pad_sents(sents, pad_token):
    sents_padded = []
    max_len = max(len(s) for s in sents)
    for s in sents:
        padded = [pad_token] * max_len
        padded[: len(s)] = s
        sents_padded.append(padded)
    return sents_padded


class VocabEntry(object):
    def __init__(self, words):
        self.word2id = dict()
        self.word2id["<pad>"] = 0  # Pad Token
        self.word2id["<s>"] = 1  # Start Token
        self.word2id["</s>"] = 2  # End Token
        self.word2id["<unk>"] = 3  # Unknown Token
        self.unk_id = self.word2id["<unk>"]
        for w in words:
            self.word2id.setdefault(w, len(self.word2id))
        self.id2word = {v: k for k, v in self.word2id.items()}

    def __getitem__(self, word):
        return self.word2id.get(word, self.unk_id)

    def __len__(self):
        return len(self.word2id)

    def words2indices(self, sents):
        if type(sents[0]) is list:
            return [[self[w] for w in s] for s in sents]
        return [self[w] for w in sents]

    def to_input_tensor(self, sents, device):
        word_ids = self.words2indices(sents)
        sents_t = pad_sents(word_ids, self["<pad>"])
        sents_var = torch.tensor(sents_t, dtype=torch.long, device=device)
        return torch.t(sents_var)


class Vocab(object):
    def __init__(self, src_vocab, tgt_vocab):
        self.src = src_vocab
        self.tgt = tgt_vocab


class ModelEmbeddings(nn.Module):
    def __init__(self, embed_size, vocab):
        super(ModelEmbeddings, self).__init__()
        self.embed_size = embed_size
        src_pad_token_idx = vocab.src["<pad>"]
        tgt_pad_token_idx = vocab.tgt["<pad>"]
        self.source = nn.Embedding(len(vocab.src), self.embed_size, padding_idx=src_pad_token_idx)
        self.target = nn.Embedding(len(vocab.tgt), self.embed_size, padding_idx=tgt_pad_token_idx)


class NMT(nn.Module):
    def __init__(self, embed_size, hidden_size, vocab, dropout_rate=0.2):
        super(NMT, self).__init__()
        self.model_embeddings = ModelEmbeddings(embed_size, vocab)
        self.hidden_size = hidden_size
        self.dropout_rate = dropout_rate
        self.vocab = vocab
        self.post_embed_cnn = nn.Conv1d(embed_size, embed_size, kernel_size=2, padding="same")
        self.encoder = nn.LSTM(embed_size, hidden_size, bias=True, bidirectional=True)
        self.decoder = nn.LSTMCell(embed_size + hidden_size, hidden_size, bias=True)
        self.h_projection = nn.Linear(2 * hidden_size, hidden_size, bias=False)
        self.c_projection = nn.Linear(2 * hidden_size, hidden_size, bias=False)
        self.att_projection = nn.Linear(2 * hidden_size, hidden_size, bias=False)
        self.combined_output_projection = nn.Linear(3 * hidden_size, hidden_size, bias=False)
        self.target_vocab_projection = nn.Linear(hidden_size, len(vocab.tgt), bias=False)
        self.dropout = nn.Dropout(self.dropout_rate)

    def forward(self, source, target):
        source_lengths = [len(s) for s in source]
        source_padded = self.vocab.src.to_input_tensor(source, device=self.device)  # (src_len, b)
        target_padded = self.vocab.tgt.to_input_tensor(target, device=self.device)  # (tgt_len, b)
        enc_hiddens, dec_init_state = self.encode(source_padded, source_lengths)
        enc_masks = self.generate_sent_masks(enc_hiddens, source_lengths)
        combined_outputs = self.decode(enc_hiddens, enc_masks, dec_init_state, target_padded)
        P = F.log_softmax(self.target_vocab_projection(combined_outputs), dim=-1)
        target_masks = (target_padded != self.vocab.tgt["<pad>"]).float()
        target_gold_words_log_prob = (
            torch.gather(P, index=target_padded[1:].unsqueeze(-1), dim=-1).squeeze(-1)
            * target_masks[1:]
        )
        scores = target_gold_words_log_prob.sum(dim=0)
        return scores

    def encode(self, source_padded, source_lengths):
        X = self.model_embeddings.source(source_padded)
        X = self.post_embed_cnn(X.permute(1, 2, 0)).permute(2, 0, 1)
        X = pack_padded_sequence(X, source_lengths)
        enc_hiddens, (last_hidden, last_cell) = self.encoder(X)
        enc_hiddens, _ = pad_packed_sequence(enc_hiddens)
        enc_hiddens = enc_hiddens.permute(1, 0, 2)
        init_decoder_hidden = self.h_projection(torch.cat((last_hidden[0], last_hidden[1]), 1))
        init_decoder_cell = self.c_projection(torch.cat((last_cell[0], last_cell[1]), 1))
        dec_init_state = (init_decoder_hidden, init_decoder_cell)
        return enc_hiddens, dec_init_state

    def decode(self, enc_hiddens, enc_masks, dec_init_state, target_padded):
        target_padded = target_padded[:-1]
        dec_state = dec_init_state
        batch_size = enc_hiddens.size(0)
        o_prev = torch.zeros(batch_size, self.hidden_size, device=self.device)
        combined_outputs = []
        enc_hiddens_proj = self.att_projection(enc_hiddens)
        Y = self.model_embeddings.target(target_padded)
        for Y_t in torch.split(Y, 1, dim=0):
            Y_t = Y_t.squeeze(0)
            Ybar_t = torch.cat((Y_t, o_prev), dim=1)
            dec_state, o_t, e_t = self.step(
                Ybar_t, dec_state, enc_hiddens, enc_hiddens_proj, enc_masks
            )
            combined_outputs.append(o_t)
            o_prev = o_t
        combined_outputs = torch.stack(combined_outputs, dim=0)
        return combined_outputs

    def step(self, Ybar_t, dec_state, enc_hiddens, enc_hiddens_proj, enc_masks):
        combined_output = None
        dec_state = self.decoder(Ybar_t, dec_state)
        dec_hidden, dec_cell = dec_state
        e_t = torch.bmm(enc_hiddens_proj, dec_hidden.unsqueeze(2)).squeeze(2)
        # Set e_t to -inf where enc_masks has 1
        if enc_masks is not None:
            e_t.data.masked_fill_(enc_masks.bool(), -float("inf"))
        alpha_t = F.softmax(e_t, dim=1)
        a_t = torch.bmm(alpha_t.unsqueeze(1), enc_hiddens).squeeze(1)
        U_t = torch.cat((dec_hidden, a_t), dim=1)
        V_t = self.combined_output_projection(U_t)
        O_t = self.dropout(torch.tanh(V_t))
        combined_output = O_t
        return dec_state, combined_output, e_t

    def generate_sent_masks(self, enc_hiddens, source_lengths):
        enc_masks = torch.zeros(enc_hiddens.size(0), enc_hiddens.size(1), dtype=torch.float)
        for e_id, src_len in enumerate(source_lengths):
            enc_masks[e_id, src_len:] = 1
        return enc_masks.to(self.device)

    def greedy_search(self, src_sent, max_decoding_time_step=12):
        src_sents_var = self.vocab.src.to_input_tensor([src_sent], self.device)
        src_encodings, dec_init_vec = self.encode(src_sents_var, [len(src_sent)])
        src_encodings_att_linear = self.att_projection(src_encodings)
        h_tm1 = dec_init_vec
        att_tm1 = torch.zeros(1, self.hidden_size, device=self.device)
        hyp, score = ["<s>"], 0.0
        while len(hyp) < max_decoding_time_step:
            y_tm1 = torch.tensor([self.vocab.tgt[hyp[-1]]], dtype=torch.long, device=self.device)
            y_t_embed = self.model_embeddings.target(y_tm1)
            x = torch.cat([y_t_embed, att_tm1], dim=-1)
            (h_t, cell_t), att_t, _ = self.step(
                x, h_tm1, src_encodings, src_encodings_att_linear, enc_masks=None
            )
            log_p_t = F.log_softmax(self.target_vocab_projection(att_t), dim=-1)
            best, idx = log_p_t.max(dim=-1)
            score += best.item()
            hyp.append(self.vocab.tgt.id2word[idx.item()])
            if hyp[-1] == "</s>":
                break
            h_tm1, att_tm1 = (h_t, cell_t), att_t
        return hyp[1:-1] if hyp[-1] == "</s>" else hyp[1:], score

    @property
    def device(self):
        return self.model_embeddings.source.weight.device


def batch_iter(data, batch_size, shuffle=False):
    batch_num = math.ceil(len(data) / batch_size)
    index_array = list(range(len(data)))
    if shuffle:
        np.random.shuffle(index_array)
    for i in range(batch_num):
        indices = index_array[i * batch_size : (i + 1) * batch_size]
        examples = [data[idx] for idx in indices]
        examples = sorted(examples, key=lambda e: len(e[0]), reverse=True)
        src_sents = [e[0] for e in examples]
        tgt_sents = [e[1] for e in examples]
        yield src_sents, tgt_sents


# toy parallel corpus: target = reversed source with letters upper-cased
letters = list("abcdefg")
vocab = Vocab(VocabEntry(letters), VocabEntry([c.upper() for c in letters]))
print("src vocab", len(vocab.src), "tgt vocab", len(vocab.tgt))


def make_pair():
    n = int(np.random.randint(2, 7))
    src = [letters[i] for i in np.random.randint(0, len(letters), size=n)]
    return src, ["<s>"] + [c.upper() for c in reversed(src)] + ["</s>"]


train_data = [make_pair() for _ in range(96)]
dev_data = [make_pair() for _ in range(16)]

# sanity checks (sanity_check.py, shapes only)
model = NMT(embed_size=12, hidden_size=16, vocab=vocab, dropout_rate=0.2)
print(model)
src_sents, tgt_sents = next(batch_iter(train_data, 5))
print("src lengths", [len(s) for s in src_sents])
source_padded = vocab.src.to_input_tensor(src_sents, device=model.device)
print("source_padded", tuple(source_padded.shape), source_padded[:, -1].tolist())
enc_hiddens, (h0, c0) = model.encode(source_padded, [len(s) for s in src_sents])
print("enc_hiddens", tuple(enc_hiddens.shape), "dec_init_state", tuple(h0.shape), tuple(c0.shape))
print("padding positions zero:", enc_hiddens[-1, len(src_sents[-1]) :].abs().sum().item() == 0.0)
enc_masks = model.generate_sent_masks(enc_hiddens, [len(s) for s in src_sents])
print("enc_masks", enc_masks.tolist()[-1])
model.eval()
Ybar_t = torch.randn(5, 12 + 16)
dec_state, o_t, e_t = model.step(
    Ybar_t, (h0, c0), enc_hiddens, model.att_projection(enc_hiddens), enc_masks
)
print(
    "step: dec_state", tuple(dec_state[0].shape), "o_t", tuple(o_t.shape), "e_t", tuple(e_t.shape)
)
print(
    "e_t masked",
    e_t[-1].tolist()[len(src_sents[-1]) :],
    "alpha rows sum",
    F.softmax(e_t, dim=1).sum(1).round(decimals=5).tolist(),
)
print("e_t grad_fn", type(e_t.grad_fn).__name__)
target_padded = vocab.tgt.to_input_tensor(tgt_sents, device=model.device)
combined = model.decode(enc_hiddens, enc_masks, (h0, c0), target_padded)
print("combined_outputs", tuple(combined.shape))

# training (run.py)
model.train()
for p in model.parameters():
    p.data.uniform_(-0.1, 0.1)
optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
train_batch_size, clip_grad = 16, 5.0
for epoch in range(6):
    cum_loss = cum_tgt_words = 0
    for src_sents, tgt_sents in batch_iter(train_data, batch_size=train_batch_size, shuffle=True):
        optimizer.zero_grad()
        batch_size = len(src_sents)
        example_losses = -model(src_sents, tgt_sents)  # (batch_size,)
        batch_loss = example_losses.sum()
        loss = batch_loss / batch_size
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), clip_grad)
        optimizer.step()
        cum_loss += batch_loss.item()
        cum_tgt_words += sum(len(s[1:]) for s in tgt_sents)
    print(
        "epoch %d, avg. loss %.4f, ppl %.4f, last grad norm %.4f"
        % (epoch, cum_loss / len(train_data), math.exp(cum_loss / cum_tgt_words), grad_norm)
    )

    model.eval()
    with torch.no_grad():
        dev_loss = dev_words = 0.0
        for src_sents, tgt_sents in batch_iter(dev_data, batch_size=8):
            dev_loss += -model(src_sents, tgt_sents).sum().item()
            dev_words += sum(len(s[1:]) for s in tgt_sents)
    print("validation: iter %d, dev. ppl %f" % (epoch, math.exp(dev_loss / dev_words)))
    model.train()

model.eval()
with torch.no_grad():
    for src, tgt in dev_data[:3]:
        hyp, score = model.greedy_search(src)
        print(
            "src",
            "".join(src),
            "ref",
            "".join(tgt[1:-1]),
            "hyp",
            "".join(hyp),
            "score %.4f" % score,
        )
