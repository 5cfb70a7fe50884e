"""End-to-end training (issue 4): an MLP and a small CNN reach >= 95% test accuracy on the
shipped digits data, and a character-level LSTM's loss falls on a short text."""
import pathlib

import numpy as np

import ember
from ember import nn
from ember.datasets import DigitsDataset
from ember.utils.data import DataLoader

F = nn.functional


def _accuracy(model, dataset):
    X = ember.stack([dataset[i][0] for i in range(len(dataset))])
    y = ember.tensor([int(dataset[i][1]) for i in range(len(dataset))])
    model.eval()
    with ember.no_grad():
        pred = model(X).argmax(dim=1)
    return (pred == y).float().mean().item()


def _train(model, flatten, epochs, lr):
    ember.manual_seed(0)
    train = DigitsDataset(train=True, flatten=flatten)
    test = DigitsDataset(train=False, flatten=flatten)
    loader = DataLoader(train, batch_size=64, shuffle=True,
                        generator=ember.Generator().manual_seed(0))
    opt = ember.optim.Adam(model.parameters(), lr=lr)
    for _ in range(epochs):
        model.train()
        for xb, yb in loader:
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return _accuracy(model, test)


def test_mlp_reaches_95_percent_on_digits():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    assert _train(model, flatten=True, epochs=15, lr=1e-2) >= 0.95


def test_cnn_reaches_95_percent_on_digits():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(16 * 2 * 2, 10))
    assert _train(model, flatten=False, epochs=8, lr=1e-2) >= 0.95


def test_char_lstm_loss_falls():
    text = (pathlib.Path(__file__).parents[2] / "examples" / "data" / "tiny.txt").read_text()
    text = text[:2000]
    chars = sorted(set(text))
    idx = np.array([chars.index(c) for c in text])
    ember.manual_seed(0)
    emb, lstm = nn.Embedding(len(chars), 16), nn.LSTM(16, 64, batch_first=True)
    head = nn.Linear(64, len(chars))
    params = list(emb.parameters()) + list(lstm.parameters()) + list(head.parameters())
    opt = ember.optim.Adam(params, lr=1e-2)
    rng = np.random.default_rng(0)
    seq, batch, losses = 32, 16, []
    for _ in range(60):
        starts = rng.integers(0, len(idx) - seq - 1, batch)
        x = ember.tensor(np.stack([idx[s:s + seq] for s in starts]))
        y = ember.tensor(np.stack([idx[s + 1:s + seq + 1] for s in starts]))
        out, _ = lstm(emb(x))
        loss = F.cross_entropy(head(out).reshape(-1, len(chars)), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert np.mean(losses[-10:]) < 0.75 * np.mean(losses[:5]), losses
