"""Interop: NumPy arrays, DLPack with NumPy and PyTorch, pickling and Python protocols."""
import copy
import pickle

import numpy as np
import pytest

import ember


def test_numpy_shares_memory():
    t = ember.arange(4.0)
    a = t.numpy()
    a[0] = 9
    assert t[0].item() == 9
    t.add_(1)
    assert a[1] == 2
    with pytest.raises(RuntimeError, match="requires grad"):
        ember.ones(2, requires_grad=True).numpy()
    assert ember.ones(2, requires_grad=True).detach().numpy().tolist() == [1.0, 1.0]


def test_array_protocol():
    t = ember.tensor([[1, 2], [3, 4]])
    a = np.asarray(t)
    assert a.dtype == np.int64 and a.tolist() == [[1, 2], [3, 4]]
    assert np.asarray(t, dtype=np.float32).dtype == np.float32
    assert np.array(t).tolist() == [[1, 2], [3, 4]]


def test_dlpack_numpy_roundtrip():
    t = ember.arange(6.0).reshape(2, 3)
    a = np.from_dlpack(t)
    a[0, 0] = 42
    assert t[0, 0].item() == 42
    b = np.arange(3, dtype=np.float64)
    e = ember.from_dlpack(b)
    b[1] = -1
    assert e.tolist() == [0.0, -1.0, 2.0] and e.dtype is ember.float64


def test_dlpack_torch_zero_copy(torch):
    e = ember.arange(6.0).reshape(2, 3)
    t = torch.from_dlpack(e)
    t[1, 2] = 100
    assert e[1, 2].item() == 100 and t.dtype == torch.float32 and tuple(t.shape) == (2, 3)
    src = torch.arange(4, dtype=torch.int64)
    x = ember.from_dlpack(src)
    src[0] = 7
    assert x.tolist() == [7, 1, 2, 3] and x.dtype is ember.int64
    nc = torch.arange(6.0).reshape(2, 3).t()
    y = ember.from_dlpack(nc)
    assert y.tolist() == nc.tolist()


def test_tolist_and_item():
    assert ember.tensor([[1.5, 2.0]]).tolist() == [[1.5, 2.0]]
    assert ember.tensor(3).tolist() == 3 and ember.tensor(True).item() is True
    with pytest.raises(RuntimeError):
        ember.ones(2).item()


def test_pickle_roundtrip():
    for t in [ember.randn(2, 3), ember.arange(4), ember.tensor([True, False]),
              ember.ones(2, dtype=ember.float64, requires_grad=True), ember.ones(4).t()[::2]]:
        u = pickle.loads(pickle.dumps(t))
        assert u.dtype is t.dtype and u.tolist() == t.tolist()
        assert u.requires_grad == t.requires_grad and u.is_leaf
    c = copy.deepcopy(ember.ones(2, requires_grad=True))
    assert c.requires_grad and c.tolist() == [1.0, 1.0]


def test_python_protocols(torch):
    t = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert len(t) == 2
    rows = list(t)
    assert len(rows) == 2 and rows[1].tolist() == [3.0, 4.0]
    assert bool(ember.tensor([1.0])) and not bool(ember.tensor(0))
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(t)
    assert float(ember.tensor([2.5])) == 2.5 and int(ember.tensor(3.7)) == 3
    assert [10, 20, 30][ember.tensor(2)] == 30
    with pytest.raises(TypeError):
        [1, 2][ember.tensor(1.0)]
    with pytest.raises(TypeError):
        len(ember.tensor(1.0))
    a, b = ember.ones(1), ember.ones(1)
    assert hash(a) != hash(b) and len({a, b}) == 2 and hash(a) == hash(a)
    for spec in [".3f", "", ".2e", "8.1f"]:
        assert format(ember.tensor(3.14159), spec) == format(torch.tensor(3.14159), spec)
    assert f"{ember.tensor(2)}" == "2" or f"{ember.tensor(2)}" == f"{torch.tensor(2)}"
    assert format(ember.ones(2)) == format(torch.ones(2))
