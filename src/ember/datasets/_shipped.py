"""The two data sets shipped in the package: handwritten digits and diabetes."""
import os

import numpy as np

from ._util import Bunch, Dataset, to_tensors

__all__ = ["load_digits", "load_diabetes", "DigitsDataset", "DiabetesDataset"]

_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
_DIABETES_FEATURES = ["age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"]


def _load(name):
    path = os.path.join(_DATA, name + ".npz")
    if not os.path.exists(path):
        raise FileNotFoundError("ember.datasets: %s is missing; the package data was not "
                                "installed (reinstall ember)" % path)
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


def load_digits(*, n_class=10, return_X_y=True, as_tensors=False):
    """The 8x8 handwritten digits (UCI), shipped with ember: 1797 images, 10 classes.

    Like ``sklearn.datasets.load_digits`` except that ``return_X_y`` defaults to True.

    Args:
        n_class: keep only the classes ``0 .. n_class - 1``.
        return_X_y: return ``(X, y)``; when False return a ``Bunch`` with ``data``, ``target``,
            ``images``, ``feature_names``, ``target_names`` and ``DESCR``.
        as_tensors: give ember tensors (``X`` in the default float dtype, ``y`` int64) instead
            of NumPy arrays (``X`` float64 with values 0..16, ``y`` int64).

    Returns:
        ``(X, y)`` with ``X`` of shape ``(n, 64)`` and ``y`` of shape ``(n,)``, or a Bunch.

    Example:
        >>> from ember.datasets import load_digits
        >>> X, y = load_digits()
        >>> X.shape, y.shape, int(X.max())
        ((1797, 64), (1797,), 16)
    """
    if not 1 <= n_class <= 10:
        raise ValueError("load_digits: n_class must be in 1..10, got %r" % (n_class,))
    raw = _load("digits")
    X = raw["data"].astype(np.float64)
    y = raw["target"].astype(np.int64)
    keep = y < n_class
    X, y = X[keep], y[keep]
    if as_tensors:
        X, y = to_tensors(X, y, classification=True)
    if return_X_y:
        return X, y
    images = X.reshape(-1, 8, 8)
    return Bunch(data=X, target=y, images=images, target_names=np.arange(n_class),
                 feature_names=["pixel_%d_%d" % (i, j) for i in range(8) for j in range(8)],
                 DESCR="Optical Recognition of Handwritten Digits (UCI, CC BY 4.0): 8x8 "
                       "images, pixel values 0..16. See ember/datasets/NOTICE.")


def load_diabetes(*, scaled=True, return_X_y=True, as_tensors=False):
    """The diabetes regression data (Efron et al., 2004), shipped with ember: 442 x 10.

    Like ``sklearn.datasets.load_diabetes`` except that ``return_X_y`` defaults to True.

    Args:
        scaled: centre each feature and scale it by its standard deviation times
            ``sqrt(n_samples)`` (scikit-learn's convention); False gives the raw measurements.
        return_X_y: return ``(X, y)``; when False return a ``Bunch`` with ``data``, ``target``,
            ``feature_names`` and ``DESCR``.
        as_tensors: give ember tensors in the default float dtype instead of float64 arrays.

    Returns:
        ``(X, y)`` with ``X`` of shape ``(442, 10)`` and ``y`` (disease progression after one
        year, 25..346) of shape ``(442,)``, or a Bunch.

    Example:
        >>> from ember.datasets import load_diabetes
        >>> X, y = load_diabetes()
        >>> X.shape, y.shape
        ((442, 10), (442,))
    """
    raw = _load("diabetes")
    X = raw["data"].astype(np.float64)
    y = raw["target"].astype(np.float64)
    if scaled:
        X = (X - X.mean(axis=0)) / X.std(axis=0)
        X /= np.sqrt(X.shape[0])
    if as_tensors:
        X, y = to_tensors(X, y, classification=False)
    if return_X_y:
        return X, y
    return Bunch(data=X, target=y, feature_names=list(_DIABETES_FEATURES),
                 DESCR="Diabetes data (Efron, Hastie, Johnstone and Tibshirani, 2004), as "
                       "distributed by scikit-learn (BSD-3). See ember/datasets/NOTICE.")


def _split(n, train, test_size, seed):
    if not 0.0 < test_size < 1.0:
        raise ValueError("test_size must be in (0, 1), got %r" % (test_size,))
    order = np.random.default_rng(seed).permutation(n)
    n_test = int(round(n * test_size))
    return order[n_test:] if train else order[:n_test]


class DigitsDataset(Dataset):
    """The digits as a map-style dataset: ``ds[i]`` is ``(image, label)``.

    Pixels are scaled to ``[0, 1]`` (divided by 16), in the default float dtype; labels are
    int64 scalars. The split is a fixed random permutation, so train and test never overlap.

    Args:
        train: the training part (True) or the held-out test part (False).
        test_size: fraction of the 1797 images held out for testing.
        seed: seed of the permutation that makes the split.
        flatten: items of shape ``(64,)`` when True, ``(1, 8, 8)`` (for ``nn.Conv2d``) when False.
        transform: optional callable applied to each image tensor.
        target_transform: optional callable applied to each label tensor.

    Attributes:
        data: all images of the split as one tensor, ``(n, 64)`` or ``(n, 1, 8, 8)``.
        targets: all labels as one int64 tensor of shape ``(n,)``.
    """

    def __init__(self, train=True, test_size=0.2, seed=0, flatten=True, transform=None,
                 target_transform=None):
        X, y = load_digits()
        idx = _split(len(y), train, test_size, seed)
        X = X[idx] / 16.0
        if not flatten:
            X = X.reshape(-1, 1, 8, 8)
        self.data, self.targets = to_tensors(X, y[idx], classification=True)
        self.transform = transform
        self.target_transform = target_transform
        self.classes = list(range(10))

    def __len__(self):
        return self.targets.shape[0]

    def __getitem__(self, index):
        image, label = self.data[index], self.targets[index]
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            label = self.target_transform(label)
        return image, label


class DiabetesDataset(Dataset):
    """The diabetes data as a map-style dataset: ``ds[i]`` is ``(features, target)``.

    Features are scikit-learn's scaled features; the target has shape ``(1,)`` so that a batch
    ``(B, 1)`` matches the output of ``nn.Linear(10, 1)``. Both use the default float dtype.

    Args:
        train: the training part (True) or the held-out test part (False).
        test_size: fraction of the 442 patients held out for testing.
        seed: seed of the permutation that makes the split.
        standardize_target: subtract the mean and divide by the standard deviation of the
            target (both computed on all 442 patients), which makes plain SGD well behaved.
        transform: optional callable applied to each feature tensor.
        target_transform: optional callable applied to each target tensor.

    Attributes:
        data: features of the split, ``(n, 10)``.
        targets: targets of the split, ``(n, 1)``.
    """

    def __init__(self, train=True, test_size=0.2, seed=0, standardize_target=False,
                 transform=None, target_transform=None):
        X, y = load_diabetes()
        if standardize_target:
            y = (y - y.mean()) / y.std()
        idx = _split(len(y), train, test_size, seed)
        self.data, self.targets = to_tensors(X[idx], y[idx, None], classification=False)
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self):
        return self.targets.shape[0]

    def __getitem__(self, index):
        features, target = self.data[index], self.targets[index]
        if self.transform is not None:
            features = self.transform(features)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return features, target
