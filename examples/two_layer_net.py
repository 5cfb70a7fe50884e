"""A two-layer network trained by hand on the diabetes data, with autograd alone.

The network of the notes this project started from (Chinese notes on how PyTorch builds its
graph): ``y_pred = X.mm(w1).clamp(min=0).mm(w2)``, a sum-of-squares loss, ``loss.backward()`` and a
plain gradient step on ``w1`` and ``w2`` under ``no_grad``: no ``nn``, no ``optim``, just the
autograd engine. The data (442 patients x 10 features) ship with ember; features and target
are standardised.

Run:
    python examples/two_layer_net.py              # 500 steps, under a second
    python examples/two_layer_net.py --steps 2    # smoke run (CI)
"""
import argparse
import time

import ember as torch
from ember.datasets import load_diabetes

STEPS = 500
HIDDEN = 50
LEARNING_RATE = 1e-4
LOG_EVERY = 100
TEST_SIZE = 88  # patients held out
SEED = 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=STEPS)
    args = parser.parse_args()
    torch.manual_seed(SEED)

    X, y = load_diabetes(as_tensors=True)
    X = (X - X.mean(0)) / X.std(0)
    y = ((y - y.mean()) / y.std()).unsqueeze(1)
    order = torch.randperm(len(y))
    test_idx, train_idx = order[:TEST_SIZE], order[TEST_SIZE:]
    X_train, y_train, X_test, y_test = X[train_idx], y[train_idx], X[test_idx], y[test_idx]

    d_in, d_out = X.shape[1], 1
    w1 = (torch.randn(d_in, HIDDEN) / d_in ** 0.5).requires_grad_()
    w2 = (torch.randn(HIDDEN, d_out) / HIDDEN ** 0.5).requires_grad_()

    start = time.perf_counter()
    for step in range(args.steps):
        h = X_train.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        loss = (y_pred - y_train).pow(2).sum()
        if step % LOG_EVERY == 0 or step == args.steps - 1:
            print("step %5d  train MSE %.4f" % (step, loss.item() / len(y_train)))

        loss.backward()  # fills w1.grad and w2.grad through the graph built above
        with torch.no_grad():  # the update itself must not be recorded
            w1 -= LEARNING_RATE * w1.grad
            w2 -= LEARNING_RATE * w2.grad
            w1.grad.zero_()  # gradients accumulate: clear them for the next step
            w2.grad.zero_()

    with torch.no_grad():
        mse = (X_test.mm(w1).clamp(min=0).mm(w2) - y_test).pow(2).mean().item()
    print("test MSE %.4f (predicting the mean scores about 1.0), %.1f s"
          % (mse, time.perf_counter() - start))


if __name__ == "__main__":
    main()
