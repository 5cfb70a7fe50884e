"""``repr``/``str`` of tensors must be identical to PyTorch's, under every print option."""
import numpy as np
import pytest

import ember

R = np.random.default_rng(0)

ARRAYS = [
    np.array([0.0, 1.0, 1.0]), np.array([1, 2, 3]), np.array([True, False]), np.array(3.5),
    np.array(2), np.array(True), np.arange(12.0).reshape(3, 4), R.standard_normal((2, 3, 4)),
    R.standard_normal((3, 4)).astype(np.float64), np.array([1e-5, 1.0]), np.array([1e10, 1.0]),
    np.array([np.nan, 1.0, -np.inf]), np.array([np.nan, np.inf]), np.zeros((0,)),
    np.zeros((2, 0)), np.zeros((0, 3), dtype=np.int64), np.arange(2000.0),
    np.arange(1500).reshape(30, 50), R.standard_normal((40, 40)), R.standard_normal(30),
    np.array([123456.789, 0.001]), np.array([-1.5, 2.25]), np.array([100.0, 2000.0]),
    np.array([1e-10]), np.array([0.0, 0.0]), np.array([-0.0, 1.0]),
    np.array([1, 2], dtype=np.int32), np.array([1.5], dtype=np.float16),
    np.array([[1, -100], [3, 4]], dtype=np.int8), np.array(1e20), np.array([12345678.9]),
    R.standard_normal((2, 2, 2, 2)), np.arange(10 ** 4).reshape(10, 10, 10, 10) * 1.0,
    np.array([1e-4, 1.0]), np.array([9.99995e-5, 1.0]), np.array([1.0, 2.0, 3.0, 1001.0]),
    np.array([0.1, 0.2]).astype(np.float32), R.standard_normal((5, 12)) * 1000,
    np.array([[True] * 30] * 2), np.array([-5, 10 ** 12]), np.zeros((2, 0, 3)),
    np.array([1, 2, 3], dtype=np.uint8), np.arange(1200).reshape(2, 600) % 7 == 0,
]


@pytest.mark.parametrize("arr", ARRAYS, ids=[str(i) for i in range(len(ARRAYS))])
def test_repr_matches_torch(torch, arr):
    e, t = ember.tensor(arr), torch.tensor(arr)
    assert repr(e) == repr(t)
    assert str(e) == str(t)


GRAPH = [
    lambda L: L.ones(3, requires_grad=True),
    lambda L: L.ones(3, requires_grad=True) * 2,
    lambda L: L.ones(3, dtype=L.float64, requires_grad=True).sum(),
    lambda L: L.ones(2, 3, requires_grad=True).t(),
    lambda L: L.zeros(0, requires_grad=True),
    lambda L: L.ones(70, dtype=L.float64, requires_grad=True) * 2,
    lambda L: L.ones(2, 2, dtype=L.float64, requires_grad=True) @ L.ones(2, 2,
                                                                           dtype=L.float64),
]


@pytest.mark.parametrize("fn", GRAPH)
def test_repr_autograd_suffixes(torch, fn):
    assert repr(fn(ember)) == repr(fn(torch))


OPTIONS = [dict(precision=2), dict(threshold=5), dict(edgeitems=1, threshold=5),
           dict(linewidth=40), dict(sci_mode=True), dict(sci_mode=False),
           dict(profile="short"), dict(profile="full"), dict(precision=6, linewidth=120)]


@pytest.mark.parametrize("opts", OPTIONS, ids=[str(o) for o in OPTIONS])
def test_set_printoptions(torch, opts):
    try:
        for lib in (ember, torch):
            lib.set_printoptions(**opts)
        for arr in [np.arange(12.0).reshape(3, 4) / 7, np.array([1e-6, 1e3]), np.arange(30.0),
                    np.arange(2000.0) * 1.5, np.array([1, 2, 3]), np.array([np.nan, 0.5])]:
            assert repr(ember.tensor(arr)) == repr(torch.tensor(arr))
    finally:
        for lib in (ember, torch):
            lib.set_printoptions(profile="default")
            lib.set_printoptions(sci_mode=None)
    assert ember._tensor_str.get_printoptions()["precision"] == 4


def test_named_tuple_repr(torch):
    x = np.array([[3.0, 1.0, 2.0]])
    assert repr(ember.sort(ember.tensor(x))) == repr(torch.sort(torch.tensor(x)))
