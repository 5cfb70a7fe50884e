"""ember.datasets: shipped data equal scikit-learn's, splits, generators, Dataset protocol."""
import os

import numpy as np
import pytest

import ember
from ember import datasets

sklearn_datasets = pytest.importorskip("sklearn.datasets")


def test_digits_equal_sklearn():
    X, y = datasets.load_digits()
    ref = sklearn_datasets.load_digits()
    assert X.shape == (1797, 64) and y.shape == (1797,)
    assert X.dtype == np.float64 and y.dtype == np.int64
    np.testing.assert_array_equal(X, ref.data)
    np.testing.assert_array_equal(y, ref.target)


def test_digits_n_class_and_bunch():
    bunch = datasets.load_digits(n_class=3, return_X_y=False)
    ref = sklearn_datasets.load_digits(n_class=3)
    np.testing.assert_array_equal(bunch.data, ref.data)
    np.testing.assert_array_equal(bunch.images, ref.images)
    assert bunch.feature_names == ref.feature_names
    with pytest.raises(ValueError, match="n_class"):
        datasets.load_digits(n_class=11)


@pytest.mark.parametrize("scaled", [True, False])
def test_diabetes_equal_sklearn(scaled):
    X, y = datasets.load_diabetes(scaled=scaled)
    ref = sklearn_datasets.load_diabetes(scaled=scaled)
    assert X.shape == (442, 10)
    np.testing.assert_allclose(X, ref.data, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(y, ref.target)
    bunch = datasets.load_diabetes(return_X_y=False)
    assert bunch.feature_names == ref.feature_names


def test_as_tensors_dtypes():
    X, y = datasets.load_digits(as_tensors=True)
    assert isinstance(X, ember.Tensor) and X.dtype == ember.float32 and y.dtype == ember.int64
    X, y = datasets.load_diabetes(as_tensors=True)
    assert X.dtype == ember.float32 and y.dtype == ember.float32 and tuple(y.shape) == (442,)


def test_shipped_files_small_and_noticed():
    here = os.path.dirname(datasets.__file__)
    sizes = [os.path.getsize(os.path.join(here, "data", f)) for f in ("digits.npz",
                                                                       "diabetes.npz")]
    assert sum(sizes) < 200_000
    notice = open(os.path.join(here, "NOTICE"), encoding="utf-8").read()
    assert "CC BY 4.0" in notice and "Efron" in notice and "BSD" in notice


@pytest.mark.parametrize("cls,n,item_shape", [(datasets.DigitsDataset, 1797, (64,)),
                                              (datasets.DiabetesDataset, 442, (10,))])
def test_dataset_split_is_a_partition(cls, n, item_shape):
    train, test = cls(train=True), cls(train=False)
    assert len(train) + len(test) == n
    assert len(test) == round(0.2 * n)
    x, t = train[0]
    assert tuple(x.shape) == item_shape
    all_rows = np.concatenate([train.data.numpy(), test.data.numpy()])
    full = cls(train=True, test_size=1e-9).data.numpy()
    np.testing.assert_array_equal(np.unique(all_rows, axis=0), np.unique(full, axis=0))
    assert len(train.data) == len(train)
    other = cls(train=True, seed=1)
    assert not np.array_equal(other.data.numpy(), train.data.numpy())


def test_digits_dataset_images_and_transforms():
    ds = datasets.DigitsDataset(flatten=False, transform=lambda t: t * 2,
                                target_transform=lambda t: t + 100)
    x, t = ds[5]
    assert tuple(x.shape) == (1, 8, 8) and x.dtype == ember.float32
    assert x.numpy().max() <= 2.0 and int(t) >= 100
    assert tuple(ds.targets.shape) == (len(ds),) and ds.targets.dtype == ember.int64


def test_digits_dataset_rows_are_digits_rows():
    X, y = datasets.load_digits()
    ds = datasets.DigitsDataset(train=False)
    rows = ds.data.numpy() * 16
    lookup = {r.tobytes(): label for r, label in zip(X.astype(np.float32), y)}
    assert all(lookup[r.tobytes()] == int(ds.targets[i]) for i, r in enumerate(rows))


def test_diabetes_dataset_target_shape():
    ds = datasets.DiabetesDataset(standardize_target=True)
    x, t = ds[0]
    assert tuple(t.shape) == (1,)
    _, y = datasets.load_diabetes()
    assert abs(float(ds.targets.numpy().mean())) < 0.3
    assert float(ds.targets.numpy().std()) == pytest.approx(1.0, abs=0.2)
    assert y.shape == (442,)


def test_make_moons_matches_sklearn_without_noise():
    X, y = datasets.make_moons(50, shuffle=False)
    Xr, yr = sklearn_datasets.make_moons(50, shuffle=False)
    np.testing.assert_allclose(X, Xr, atol=1e-12)
    np.testing.assert_array_equal(y, yr)


@pytest.mark.parametrize("make", [datasets.make_moons, datasets.make_blobs,
                                  datasets.make_regression])
def test_generators_seeded(make):
    kwargs = {"noise": 0.1} if make is not datasets.make_blobs else {}
    a = make(40, generator=3, **kwargs)
    b = make(40, generator=ember.Generator().manual_seed(3), **kwargs)
    c = make(40, generator=4, **kwargs)
    np.testing.assert_array_equal(a[0], b[0])
    assert not np.array_equal(a[0], c[0])
    ember.manual_seed(7)
    d = make(40, **kwargs)
    ember.manual_seed(7)
    e = make(40, **kwargs)
    np.testing.assert_array_equal(d[0], e[0])
    assert a[0].shape[0] == 40 and a[1].shape == (40,)


def test_make_regression_is_linear():
    X, y, w = datasets.make_regression(30, 5, n_informative=2, bias=3.0, coef=True,
                                       generator=0)
    np.testing.assert_allclose(X @ w + 3.0, y, rtol=1e-12)
    assert (w != 0).sum() == 2
    Xt, yt, wt = datasets.make_regression(30, 5, coef=True, generator=0, as_tensors=True)
    assert Xt.dtype == ember.float32 and tuple(wt.shape) == (5,)


def test_make_blobs_centers():
    centers = np.array([[0.0, 0.0], [100.0, 100.0]])
    X, y = datasets.make_blobs(20, centers=centers, cluster_std=0.1, generator=0)
    np.testing.assert_allclose(X[y == 1].mean(axis=0), [100, 100], atol=0.2)
    assert np.bincount(y).tolist() == [10, 10]


def test_bad_generator():
    with pytest.raises(TypeError, match="generator"):
        datasets.make_moons(10, generator="seed")


def test_datasets_work_with_dataloader():
    from ember.utils.data import DataLoader, Dataset
    ds = datasets.DigitsDataset(flatten=False)
    assert isinstance(ds, Dataset)
    images, labels = next(iter(DataLoader(ds, batch_size=16, shuffle=True,
                                          generator=ember.Generator().manual_seed(0))))
    assert tuple(images.shape) == (16, 1, 8, 8) and tuple(labels.shape) == (16,)
    assert labels.dtype == ember.int64
    x, t = next(iter(DataLoader(datasets.DiabetesDataset(train=False), batch_size=8)))
    assert tuple(x.shape) == (8, 10) and tuple(t.shape) == (8, 1)
