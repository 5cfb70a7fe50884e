"""Produce the data files shipped in ``ember/datasets/data/`` (run once; needs scikit-learn).

Run from the repository root::

    python -m ember.datasets._make_data

The files are committed, so users never need scikit-learn. The sources and licences are in
``ember/datasets/NOTICE``.
"""
import os

import numpy as np

__all__ = ["main"]

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def main():
    """Write ``digits.npz`` and ``diabetes.npz`` from scikit-learn's copies of the data."""
    from sklearn import datasets

    os.makedirs(HERE, exist_ok=True)
    digits = datasets.load_digits()
    pixels = digits.data.astype(np.uint8)
    assert np.array_equal(pixels, digits.data), "digits pixels are integers 0..16"
    np.savez_compressed(os.path.join(HERE, "digits.npz"), data=pixels,
                        target=digits.target.astype(np.uint8))
    # The raw (unscaled) measurements; load_diabetes(scaled=True) scales them like sklearn.
    diabetes = datasets.load_diabetes(scaled=False)
    np.savez_compressed(os.path.join(HERE, "diabetes.npz"), data=diabetes.data,
                        target=diabetes.target.astype(np.float64),
                        feature_names=np.array(diabetes.feature_names))
    for name in sorted(os.listdir(HERE)):
        print("%-14s %6d bytes" % (name, os.path.getsize(os.path.join(HERE, name))))


if __name__ == "__main__":
    main()
