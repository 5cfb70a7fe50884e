"""A torchtext-free text pipeline as the torchtext migration tutorial and "BucketIterator"
replacements write it: tokenizer, Counter-based vocab with specials/min_freq/default index
(build_vocab_from_iterator semantics), numericalisation with <bos>/<eos>, a bucketing
batch_sampler (sort within pools of batches, shuffle the batches) over a DataLoader whose
collate_fn pads with pad_sequence, and a TransformerEncoder classifier using
src_key_padding_mask with masked mean pooling; trained a few steps, then evaluated under
no_grad (the encoder's fast path)."""

import importlib
import os
import random
import re
from collections import Counter, OrderedDict

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
data_mod = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".utils.data")
rnn_utils = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.utils.rnn")

WORDS = (
    "the a good bad movie film plot actor great awful boring fun loved hated story "
    "was is and but not very really"
).split()


def basic_english(line):
    line = line.lower()
    line = re.sub(r"([.,!?])", r" \1 ", line)
    return line.split()


class Vocab:
    def __init__(self, counter, min_freq=1, specials=("<unk>", "<pad>", "<bos>", "<eos>")):
        ordered = OrderedDict(
            sorted(sorted(counter.items(), key=lambda x: x[0]), key=lambda x: x[1], reverse=True)
        )
        self.itos = list(specials) + [
            t for t, f in ordered.items() if f >= min_freq and t not in specials
        ]
        self.stoi = {t: i for i, t in enumerate(self.itos)}
        self.default_index = None

    def set_default_index(self, idx):
        self.default_index = idx

    def __len__(self):
        return len(self.itos)

    def __call__(self, tokens):
        return [self.stoi.get(t, self.default_index) for t in tokens]


def make_corpus(n, rng):
    out = []
    for _ in range(n):
        k = rng.randint(3, 14)
        words = [rng.choice(WORDS) for _ in range(k)]
        label = int(
            sum(w in ("good", "great", "fun", "loved") for w in words)
            > sum(w in ("bad", "awful", "boring", "hated") for w in words)
        )
        out.append((label, " ".join(words) + rng.choice([".", "!", " ?", ""])))
    return out


class BucketBatchSampler(data_mod.Sampler):
    def __init__(self, lengths, batch_size, pool=3, seed=0):
        self.lengths = lengths
        self.batch_size = batch_size
        self.pool = pool
        self.g = torch.Generator().manual_seed(seed)

    def __iter__(self):
        idx = torch.randperm(len(self.lengths), generator=self.g).tolist()
        size = self.batch_size * self.pool
        batches = []
        for i in range(0, len(idx), size):
            chunk = sorted(idx[i : i + size], key=lambda j: self.lengths[j])
            batches += [
                chunk[k : k + self.batch_size] for k in range(0, len(chunk), self.batch_size)
            ]
        for b in torch.randperm(len(batches), generator=self.g).tolist():
            yield batches[b]

    def __len__(self):
        return (len(self.lengths) + self.batch_size - 1) // self.batch_size


class Classifier(nn.Module):
    def __init__(self, ntoken, d_model, nhead, nlayers, pad_idx, max_len=32):
        super().__init__()
        self.embed = nn.Embedding(ntoken, d_model, padding_idx=pad_idx)
        self.pos = nn.Parameter(torch.randn(max_len, d_model) * 0.02)
        layer = nn.TransformerEncoderLayer(
            d_model, nhead, dim_feedforward=32, dropout=0.1, batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, nlayers, enable_nested_tensor=False)
        self.fc = nn.Linear(d_model, 2)

    def forward(self, tokens, pad_mask):
        x = self.embed(tokens) + self.pos[: tokens.size(1)]
        h = self.encoder(x, src_key_padding_mask=pad_mask)
        keep = (~pad_mask).unsqueeze(-1).float()
        return self.fc((h * keep).sum(1) / keep.sum(1))


rng = random.Random(0)
train, test = make_corpus(48, rng), make_corpus(12, rng)
counter = Counter(t for _, line in train for t in basic_english(line))
vocab = Vocab(counter, min_freq=2)
vocab.set_default_index(vocab.stoi["<unk>"])
PAD, BOS, EOS = vocab.stoi["<pad>"], vocab.stoi["<bos>"], vocab.stoi["<eos>"]
print("vocab", len(vocab), vocab.itos[:10], vocab(["the", "zzz", "movie"]))


def text_pipeline(line):
    return [BOS] + vocab(basic_english(line)) + [EOS]


def collate_batch(batch):
    labels = torch.tensor([label for label, _ in batch], dtype=torch.int64)
    seqs = [torch.tensor(text_pipeline(line), dtype=torch.int64) for _, line in batch]
    padded = rnn_utils.pad_sequence(seqs, batch_first=True, padding_value=PAD)
    return labels, padded, padded.eq(PAD)


lengths = [len(text_pipeline(line)) for _, line in train]
loader = data_mod.DataLoader(
    train, batch_sampler=BucketBatchSampler(lengths, 8), collate_fn=collate_batch
)
print("batches", len(loader), [tuple(b[1].shape) for b in loader])
torch.manual_seed(0)
model = Classifier(len(vocab), 16, 2, 2, PAD)
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
for epoch in range(2):
    model.train()
    tot = 0.0
    for labels, tokens, mask in loader:
        loss = F.cross_entropy(model(tokens, mask), labels, label_smoothing=0.05)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        tot += loss.item() * labels.numel()
    print("epoch %d loss %.5f" % (epoch, tot / len(train)))

model.eval()
labels, tokens, mask = collate_batch(test)
with torch.no_grad():
    logits = model(tokens, mask)
    print("test logits", " ".join("%.5f" % v for v in logits.flatten().tolist()))
    print("acc", (logits.argmax(1) == labels).float().mean().item())
    h = model.encoder(model.embed(tokens) + model.pos[: tokens.size(1)], src_key_padding_mask=mask)
    print("padded rows", h[mask].abs().sum().item() > 0, tuple(h.shape))
print("example", test[0][1], "->", text_pipeline(test[0][1]))
