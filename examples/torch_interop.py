"""Move weights between ember and PyTorch through safetensors files, both ways.

1. Train an MLP on the two-moons problem in ember and ``ember.save`` its ``state_dict``.
2. Load the file in PyTorch (``safetensors.torch.load_file``) into the same architecture and
   compare the outputs on the same inputs.
3. The other way: save a PyTorch model with ``safetensors.torch.save_file``, load it with
   ``ember.load`` and compare again.

The ``state_dict`` keys (``0.weight``, ``2.bias`` ...) are PyTorch's, so nothing is renamed.
Needs ``torch`` and ``safetensors``; without them only step 1 runs.

Run:
    python examples/torch_interop.py             # 300 steps
    python examples/torch_interop.py --steps 2   # smoke run (CI)
"""
import argparse
import os
import tempfile

import numpy as np

import ember
from ember.datasets import make_moons

STEPS = 300
HIDDEN = 32
LEARNING_RATE = 1e-2
SEED = 0


def mlp(nn):
    """The same architecture, written once for either library's ``nn``."""
    return nn.Sequential(nn.Linear(2, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, 2))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=STEPS)
    args = parser.parse_args()
    ember.manual_seed(SEED)

    X, y = make_moons(256, noise=0.1, generator=SEED, as_tensors=True)
    model = mlp(ember.nn)
    optimizer = ember.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    for _ in range(args.steps):
        loss = ember.nn.functional.cross_entropy(model(X), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    accuracy = (model(X).argmax(1) == y).float().mean().item()
    print("ember: loss %.4f, training accuracy %.1f%%" % (loss.item(), 100 * accuracy))

    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "moons.safetensors")
    ember.save(model.state_dict(), path)
    print("saved", sorted(model.state_dict()), "to", path)

    try:
        import torch
        from safetensors.torch import load_file, save_file
    except ImportError:
        print("PyTorch or safetensors not installed: skipping the comparison")
        return

    twin = mlp(torch.nn)
    twin.load_state_dict(load_file(path))
    with torch.no_grad(), ember.no_grad():
        theirs = twin(torch.tensor(X.numpy())).numpy()
        ours = model(X).numpy()
    print("ember -> PyTorch: max |output difference| = %.2e" % np.abs(theirs - ours).max())
    assert np.allclose(theirs, ours, atol=1e-5)

    torch.manual_seed(SEED)
    torch_model = mlp(torch.nn)
    save_file(torch_model.state_dict(), os.path.join(folder, "from_torch.safetensors"))
    model.load_state_dict(ember.load(os.path.join(folder, "from_torch.safetensors")))
    with torch.no_grad(), ember.no_grad():
        theirs = torch_model(torch.tensor(X.numpy())).numpy()
        ours = model(X).numpy()
    print("PyTorch -> ember: max |output difference| = %.2e" % np.abs(theirs - ours).max())
    assert np.allclose(theirs, ours, atol=1e-5)


if __name__ == "__main__":
    main()
