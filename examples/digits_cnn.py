"""A small convolutional network on the 8x8 handwritten digits, PyTorch style.

``Dataset`` + ``DataLoader``, ``nn.Sequential`` of ``Conv2d``/``ReLU``/``MaxPool2d``/``Linear``,
``nn.CrossEntropyLoss`` and ``optim.Adam``: the usual PyTorch training loop, unchanged, on
ember. The digits (1797 images) ship with ember; 20% are held out for testing. The trained
weights are saved with ``torch.save`` as a safetensors file PyTorch can read, in ``--out``
(``ember-out/digits_cnn.safetensors`` by default).

Run:
    python examples/digits_cnn.py               # 10 epochs, about 97% test accuracy
    python examples/digits_cnn.py --steps 2     # smoke run (CI): two optimizer steps
"""
import argparse
import os
import time

import ember as torch
from ember import nn
from ember.datasets import DigitsDataset
from ember.utils.data import DataLoader

EPOCHS = 10
BATCH_SIZE = 64
LEARNING_RATE = 3e-3
SEED = 0
OUT = "ember-out"  # the folder for the files it writes
CHECKPOINT = "digits_cnn.safetensors"


def make_model():
    return nn.Sequential(
        nn.Conv2d(1, 16, kernel_size=3, padding=1),  # (B, 1, 8, 8) -> (B, 16, 8, 8)
        nn.ReLU(),
        nn.MaxPool2d(2),                             # -> (B, 16, 4, 4)
        nn.Conv2d(16, 32, kernel_size=3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),                             # -> (B, 32, 2, 2)
        nn.Flatten(),
        nn.Linear(32 * 2 * 2, 10),
    )


def evaluate(model, dataset):
    model.eval()
    with torch.no_grad():
        predictions = model(dataset.data).argmax(dim=1)
    model.train()
    return (predictions == dataset.targets).float().mean().item()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=None, help="stop after N optimizer steps")
    parser.add_argument("--out", default=OUT, help="folder for the saved weights")
    args = parser.parse_args()
    torch.manual_seed(SEED)

    train_set = DigitsDataset(train=True, flatten=False)
    test_set = DigitsDataset(train=False, flatten=False)
    loader = DataLoader(train_set, batch_size=BATCH_SIZE, shuffle=True)
    model = make_model()
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    print(model)

    step, start = 0, time.perf_counter()
    for epoch in range(EPOCHS):
        total, seen = 0.0, 0
        for images, labels in loader:
            loss = loss_fn(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(labels)
            seen += len(labels)
            step += 1
            if args.steps is not None and step >= args.steps:
                break
        print("epoch %2d  loss %.4f  test accuracy %.1f%%  (%.1f s)" % (
            epoch + 1, total / seen, 100 * evaluate(model, test_set), time.perf_counter() - start))
        if args.steps is not None and step >= args.steps:
            break

    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, CHECKPOINT)
    torch.save(model.state_dict(), path)
    print("saved the weights to", os.path.abspath(path))


if __name__ == "__main__":
    main()
