"""Synthetic data generators in the style of ``sklearn.datasets.make_*``, seeded by ember."""
import numpy as np

from ._util import numpy_rng, to_tensors

__all__ = ["make_moons", "make_blobs", "make_regression"]


def _finish(X, y, rng, shuffle, as_tensors, classification):
    if shuffle:
        order = rng.permutation(X.shape[0])
        X, y = X[order], y[order]
    if as_tensors:
        return to_tensors(X, y, classification)
    return X, y


def make_moons(n_samples=100, *, shuffle=True, noise=None, generator=None, as_tensors=False):
    """Two interleaving half circles: a small non-linear binary classification problem.

    Args:
        n_samples: total number of points, or a pair ``(n_outer, n_inner)``.
        shuffle: shuffle the points (otherwise the outer moon comes first).
        noise: standard deviation of Gaussian noise added to the points.
        generator: None (ember's global generator), an int seed, an ``ember.Generator`` or a
            ``numpy.random.Generator``.
        as_tensors: return ember tensors (float X, int64 y) instead of NumPy arrays.

    Returns:
        ``(X, y)``: points of shape ``(n_samples, 2)`` and labels 0/1 of shape ``(n_samples,)``.

    Example:
        >>> from ember.datasets import make_moons
        >>> X, y = make_moons(10, noise=0.1, generator=0)
        >>> X.shape, sorted(set(y.tolist()))
        ((10, 2), [0, 1])
    """
    if isinstance(n_samples, (tuple, list)):
        n_out, n_in = (int(n) for n in n_samples)
    else:
        n_out = int(n_samples) // 2
        n_in = int(n_samples) - n_out
    rng = numpy_rng(generator)
    t_out = np.linspace(0, np.pi, n_out)
    t_in = np.linspace(0, np.pi, n_in)
    X = np.concatenate([np.stack([np.cos(t_out), np.sin(t_out)], axis=1),
                        np.stack([1 - np.cos(t_in), 1 - np.sin(t_in) - 0.5], axis=1)])
    y = np.concatenate([np.zeros(n_out, np.int64), np.ones(n_in, np.int64)])
    if noise is not None:
        X = X + rng.normal(scale=noise, size=X.shape)
    return _finish(X, y, rng, shuffle, as_tensors, classification=True)


def make_blobs(n_samples=100, n_features=2, *, centers=None, cluster_std=1.0,
               center_box=(-10.0, 10.0), shuffle=True, generator=None, as_tensors=False):
    """Isotropic Gaussian clusters for classification.

    Args:
        n_samples: total number of points, shared out evenly between the clusters.
        n_features: dimension of each point.
        centers: number of clusters (default 3) or an array ``(n_centers, n_features)``.
        cluster_std: standard deviation of every cluster (a number or one per cluster).
        center_box: bounds of the random centres when ``centers`` is a number.
        shuffle: shuffle the points.
        generator: None, an int seed, an ``ember.Generator`` or a ``numpy.random.Generator``.
        as_tensors: return ember tensors (float X, int64 y) instead of NumPy arrays.

    Returns:
        ``(X, y)``: points ``(n_samples, n_features)`` and cluster labels ``(n_samples,)``.
    """
    rng = numpy_rng(generator)
    if centers is None:
        centers = 3
    if np.isscalar(centers):
        centers = rng.uniform(center_box[0], center_box[1], size=(int(centers), n_features))
    centers = np.asarray(centers, dtype=np.float64)
    if centers.ndim != 2:
        raise ValueError("make_blobs: centers must be a number or a 2-D array, got shape %s"
                         % (centers.shape,))
    k = centers.shape[0]
    stds = np.broadcast_to(np.asarray(cluster_std, dtype=np.float64), (k,))
    counts = [n_samples // k + (1 if i < n_samples % k else 0) for i in range(k)]
    X = np.concatenate([rng.normal(centers[i], stds[i], size=(counts[i], centers.shape[1]))
                        for i in range(k)])
    y = np.concatenate([np.full(counts[i], i, np.int64) for i in range(k)])
    return _finish(X, y, rng, shuffle, as_tensors, classification=True)


def make_regression(n_samples=100, n_features=100, *, n_informative=10, bias=0.0, noise=0.0,
                    shuffle=True, coef=False, generator=None, as_tensors=False):
    """A random linear regression problem: ``y = X @ w + bias + noise``.

    ``X`` is standard normal; only ``n_informative`` entries of ``w`` are non-zero, drawn
    uniformly from ``[0, 100)``.

    Args:
        n_samples: number of rows.
        n_features: number of columns of ``X``.
        n_informative: number of features that enter ``y``.
        bias: constant added to ``y``.
        noise: standard deviation of Gaussian noise added to ``y``.
        shuffle: shuffle the rows and the order of the features.
        coef: also return the true coefficients ``w``.
        generator: None, an int seed, an ``ember.Generator`` or a ``numpy.random.Generator``.
        as_tensors: return ember tensors (default float dtype) instead of NumPy arrays.

    Returns:
        ``(X, y)`` or ``(X, y, w)``, with shapes ``(n_samples, n_features)``, ``(n_samples,)``
        and ``(n_features,)``.
    """
    rng = numpy_rng(generator)
    n_informative = min(n_features, n_informative)
    X = rng.standard_normal((n_samples, n_features))
    w = np.zeros(n_features)
    w[:n_informative] = 100.0 * rng.uniform(size=n_informative)
    y = X @ w + bias
    if noise > 0.0:
        y = y + rng.normal(scale=noise, size=y.shape)
    if shuffle:
        order = rng.permutation(n_features)
        X, w = X[:, order], w[order]
    X, y = _finish(X, y, rng, shuffle, as_tensors, classification=False)
    if coef:
        if as_tensors:
            from ..ops.creation import tensor
            from .. import dtypes
            w = tensor(w, dtype=dtypes.get_default_dtype())
        return X, y, w
    return X, y
