"""A character-level language model: an LSTM learns to spell like Lewis Carroll.

The text is the first pages of *Alice's Adventures in Wonderland* (1865, public domain),
shipped beside this script in ``examples/data/tiny.txt``. The model reads a window of
characters and predicts each next one: ``nn.Embedding`` -> ``nn.LSTM`` -> ``nn.Linear``,
trained with ``nn.functional.cross_entropy``, ``optim.Adam`` and gradient clipping. It then
writes a sample, one character at a time, from a prompt.

Run:
    python examples/char_lstm.py             # 400 steps, then a sample
    python examples/char_lstm.py --steps 2   # smoke run (CI)
"""
import argparse
import os
import time

import ember as torch
from ember import nn

TEXT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tiny.txt")
STEPS = 400
SEQ_LEN = 32
BATCH_SIZE = 16
EMBED = 32
HIDDEN = 128
LEARNING_RATE = 1e-2
CLIP = 1.0
LOG_EVERY = 50
SAMPLE_CHARS = 200
TEMPERATURE = 0.8
SEED = 0


class CharModel(nn.Module):
    def __init__(self, vocab_size):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, EMBED)
        self.lstm = nn.LSTM(EMBED, HIDDEN, batch_first=True)
        self.head = nn.Linear(HIDDEN, vocab_size)

    def forward(self, idx, state=None):
        out, state = self.lstm(self.embed(idx), state)  # out: (B, T, HIDDEN)
        return self.head(out), state                   # logits: (B, T, vocab)


def get_batch(data):
    starts = torch.randint(0, len(data) - SEQ_LEN - 1, (BATCH_SIZE,))
    x = torch.stack([data[s:s + SEQ_LEN] for s in starts.tolist()])
    y = torch.stack([data[s + 1:s + SEQ_LEN + 1] for s in starts.tolist()])
    return x, y


def sample(model, prompt, stoi, itos, n):
    model.eval()
    idx = torch.tensor([[stoi[c] for c in prompt]])
    out, state = list(prompt), None
    with torch.no_grad():
        for _ in range(n):
            logits, state = model(idx, state)
            probs = torch.softmax(logits[0, -1] / TEMPERATURE, dim=-1)
            nxt = torch.multinomial(probs, 1)
            out.append(itos[nxt.item()])
            idx = nxt.view(1, 1)
    model.train()
    return "".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=STEPS)
    args = parser.parse_args()
    torch.manual_seed(SEED)

    with open(TEXT, encoding="utf-8") as f:
        text = f.read()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    itos = {i: c for c, i in stoi.items()}
    data = torch.tensor([stoi[c] for c in text])
    print("%d characters, vocabulary of %d" % (len(text), len(chars)))

    model = CharModel(len(chars))
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    start = time.perf_counter()
    for step in range(args.steps):
        x, y = get_batch(data)
        logits, _ = model(x)
        loss = nn.functional.cross_entropy(logits.reshape(-1, len(chars)), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), CLIP)
        optimizer.step()
        if step % LOG_EVERY == 0 or step == args.steps - 1:
            print("step %4d  loss %.3f  (%.1f s)" % (step, loss.item(),
                                                    time.perf_counter() - start))

    n = SAMPLE_CHARS if args.steps >= LOG_EVERY else 20
    print("\nsample:\n" + sample(model, "Alice ", stoi, itos, n))


if __name__ == "__main__":
    main()
