"""Creation and random ops, devices and global settings, checked against PyTorch."""
import warnings

import numpy as np
import pytest

import ember


def same(e, t):
    """ember and torch tensors agree in shape, dtype and values."""
    assert tuple(e.shape) == tuple(t.shape), (e.shape, t.shape)
    assert str(e.dtype) == str(t.dtype), (e.dtype, t.dtype)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6, atol=1e-7)


CREATE = [
    lambda L: L.tensor([1, 2]), lambda L: L.tensor([1.0, 2]), lambda L: L.tensor([True]),
    lambda L: L.tensor([]), lambda L: L.tensor(3), lambda L: L.tensor(2.5),
    lambda L: L.tensor([[1, 2]], dtype=L.float64), lambda L: L.tensor(np.arange(3.0)),
    lambda L: L.tensor(np.arange(3, dtype=np.int32)), lambda L: L.as_tensor([1.5, 2]),
    lambda L: L.as_tensor(np.ones(2), dtype=L.float32), lambda L: L.zeros(2, 3),
    lambda L: L.zeros((2, 3), dtype=L.int64), lambda L: L.ones([0, 2]), lambda L: L.ones(()),
    lambda L: L.full((2, 2), 3), lambda L: L.full((2,), 1.5), lambda L: L.full((2,), True),
    lambda L: L.full((2,), 2, dtype=L.float64), lambda L: L.empty(2, 3).zero_(),
    lambda L: L.zeros_like(L.ones(2, dtype=L.int32)), lambda L: L.ones_like(L.ones(2, 1)),
    lambda L: L.full_like(L.ones(3), 7), lambda L: L.full_like(L.ones(3, dtype=L.long), 7.9),
    lambda L: L.empty_like(L.ones(2)).fill_(1), lambda L: L.arange(5),
    lambda L: L.arange(1, 4), lambda L: L.arange(0, 1, 0.1), lambda L: L.arange(1, 2.5, 0.5),
    lambda L: L.arange(5, 0, -2), lambda L: L.arange(4.0),
    lambda L: L.arange(0, 5, dtype=L.float64),
    lambda L: L.linspace(0, 1, 5), lambda L: L.linspace(-2, 2, 1),
    lambda L: L.linspace(0, 10, 5, dtype=L.int64), lambda L: L.linspace(0, 1, 0),
    lambda L: L.logspace(0, 2, 3), lambda L: L.logspace(0, 3, 4, base=2),
    lambda L: L.eye(3), lambda L: L.eye(2, 3, dtype=L.int64), lambda L: L.scalar_tensor(3),
    lambda L: L.zeros(2, device="cpu"), lambda L: L.ones(2, device=L.device("cpu")),
    lambda L: L.arange(3, device="cpu"), lambda L: L.tensor([1.0], device="cpu"),
    lambda L: L.ones(2).new_zeros(3), lambda L: L.ones(2, dtype=L.int32).new_ones((2, 1)),
    lambda L: L.ones(2).new_full((2,), 4), lambda L: L.ones(2).new_tensor([1, 2]),
    lambda L: L.tril(L.ones(3, 3)), lambda L: L.range(0, 3),
]


@pytest.mark.parametrize("fn", CREATE)
def test_creation_matches_torch(torch, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(fn(ember), fn(torch))


RANDOM = [
    (lambda L, g: L.rand(2, 3, generator=g), "float32", (2, 3)),
    (lambda L, g: L.randn(4, generator=g, dtype=L.float64), "float64", (4,)),
    (lambda L, g: L.randint(0, 5, (3, 2), generator=g), "int64", (3, 2)),
    (lambda L, g: L.randint(7, (3,), generator=g), "int64", (3,)),
    (lambda L, g: L.randperm(6, generator=g), "int64", (6,)),
    (lambda L, g: L.normal(2.0, 3.0, (5,), generator=g), "float32", (5,)),
    (lambda L, g: L.normal(L.zeros(2, 3), L.ones(3), generator=g), "float32", (2, 3)),
    (lambda L, g: L.bernoulli(L.full((4,), 0.5), generator=g), "float32", (4,)),
    (lambda L, g: L.multinomial(L.tensor([0.2, 0.3, 0.5]), 2, generator=g), "int64", (2,)),
    (lambda L, g: L.multinomial(L.ones(2, 3), 4, True, generator=g), "int64", (2, 4)),
    (lambda L, g: L.rand_like(L.ones(2, dtype=L.float64), generator=g), "float64", (2,)),
    (lambda L, g: L.randn_like(L.ones(2, 2), generator=g), "float32", (2, 2)),
    (lambda L, g: L.randint_like(L.ones(3), 4, generator=g), "float32", (3,)),
    (lambda L, g: L.ones(3).uniform_(-1, 1, generator=g), "float32", (3,)),
    (lambda L, g: L.ones(3).normal_(generator=g), "float32", (3,)),
    (lambda L, g: L.poisson(L.ones(3) * 4, generator=g), "float32", (3,)),
]


@pytest.mark.parametrize("fn,dtype,shape", RANDOM)
def test_random_dtypes_and_reproducible(torch, fn, dtype, shape):
    t = fn(torch, torch.Generator().manual_seed(0))
    assert str(t.dtype) == "torch." + dtype and tuple(t.shape) == shape
    a = fn(ember, ember.Generator().manual_seed(3))
    b = fn(ember, ember.Generator().manual_seed(3))
    assert str(a.dtype) == "torch." + dtype and tuple(a.shape) == shape
    assert np.array_equal(a.numpy(), b.numpy())
    ember.manual_seed(5)
    c = fn(ember, None)
    ember.manual_seed(5)
    d = fn(ember, None)
    assert np.array_equal(c.numpy(), d.numpy())


def test_random_ranges():
    g = ember.Generator().manual_seed(0)
    x = ember.rand(1000, generator=g)
    assert 0 <= x.min().item() and x.max().item() < 1
    r = ember.randint(3, 6, (500,), generator=g)
    assert set(r.tolist()) == {3, 4, 5}
    p = ember.randperm(10, generator=g)
    assert sorted(p.tolist()) == list(range(10))
    m = ember.multinomial(ember.tensor([0.0, 1.0, 0.0]), 1, generator=g)
    assert m.tolist() == [1]
    assert ember.initial_seed() == 0
    state = ember.get_rng_state()
    a = ember.rand(3)
    ember.set_rng_state(state)
    assert ember.rand(3).tolist() == a.tolist()


def test_devices(torch):
    d = ember.device("cpu")
    assert repr(d) == repr(torch.device("cpu")) and str(d) == "cpu"
    assert d == ember.device("cpu") and ember.ones(2).device == d
    x = ember.ones(2)
    assert x.to("cpu") is x and x.cpu() is x and x.to(ember.device("cpu")) is x
    assert x.to("cpu", ember.float64).dtype is ember.float64
    assert not ember.cuda.is_available() and ember.cuda.device_count() == 0
    with pytest.raises(RuntimeError, match="cuda"):
        x.cuda()
    with pytest.raises(RuntimeError, match="cuda"):
        x.to("cuda")
    with pytest.raises(RuntimeError, match="cuda"):
        ember.zeros(2, device="cuda")
    with pytest.raises(RuntimeError, match="cuda"):
        ember.rand_like(x, device="cuda")
    assert x.get_device() == -1 and not x.is_cuda
    with ember.device("cpu"):
        assert ember.zeros(1).device.type == "cpu"
    ember.set_default_device("cpu")
    assert ember.get_default_device() == ember.device("cpu")
    with pytest.raises(RuntimeError):
        ember.set_default_device("cuda")


def test_default_dtype_and_type(torch):
    assert ember.get_default_dtype() is ember.float32
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.tensor([1.5]).dtype is ember.float64
        assert ember.zeros(2).dtype is ember.float64 and ember.arange(2.0).dtype is ember.float64
        assert ember.tensor([1]).dtype is ember.int64
    finally:
        ember.set_default_dtype(ember.float32)
    with pytest.raises(TypeError):
        ember.set_default_dtype(ember.int64)
    x = ember.tensor([1.7, -2.2])
    for spec in ["FloatTensor", "DoubleTensor", "IntTensor", "LongTensor", "BoolTensor"]:
        same(x.type(getattr(ember, spec)), torch.tensor([1.7, -2.2]).type(getattr(torch, spec)))
        same(x.type("torch." + spec), torch.tensor([1.7, -2.2]).type("torch." + spec))
    assert x.type() == "torch.FloatTensor" and x.long().type() == "torch.LongTensor"


def test_num_threads():
    n = ember.get_num_threads()
    assert isinstance(n, int) and n >= 1
    ember.set_num_threads(1)
    assert ember.get_num_threads() == 1
    ember.set_num_threads(n)
    assert ember.get_num_threads() == n


def test_from_numpy_shares_memory():
    a = np.zeros(3, dtype=np.float32)
    t = ember.from_numpy(a)
    a[0] = 5
    assert t[0].item() == 5
    t[1] = 7
    assert a[1] == 7
    s = ember.as_tensor(a)
    s[2] = 9
    assert a[2] == 9
    c = ember.tensor(a)
    c[0] = -1
    assert a[0] == 5


@pytest.mark.parametrize("fn", [
    lambda L: L.arange(0, 5, 0), lambda L: L.arange(5, 0, 1), lambda L: L.zeros(-1),
    lambda L: L.randint(5, 2, (2,)), lambda L: L.multinomial(L.tensor([1.0, -1]), 1),
    lambda L: L.multinomial(L.ones(2), 3), lambda L: L.normal(0.0, -1.0, (2,)),
])
def test_creation_errors(torch, fn):
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(type(te.value)):
        fn(ember)
