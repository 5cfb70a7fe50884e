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


# -- creation on a device: the strict test device (NumPy behind CuPy's rules) ----------------

def _host(t):
    return t.detach().cpu().numpy()


ON_DEVICE = [
    lambda L, d: L.tensor([1, 2], device=d), lambda L, d: L.tensor([1.0, 2], device=d),
    lambda L, d: L.tensor(np.arange(3.0), device=d), lambda L, d: L.tensor(2.5, device=d),
    lambda L, d: L.as_tensor([1.5, 2], device=d),
    lambda L, d: L.as_tensor(np.ones(2), dtype=L.float32, device=d),
    lambda L, d: L.asarray([1, 2], device=d), lambda L, d: L.asarray([1.0], copy=True, device=d),
    lambda L, d: L.zeros(2, 3, device=d), lambda L, d: L.zeros((2,), dtype=L.int64, device=d),
    lambda L, d: L.ones([0, 2], device=d), lambda L, d: L.ones((), device=d),
    lambda L, d: L.empty(2, 3, device=d).zero_(), lambda L, d: L.full((2, 2), 3, device=d),
    lambda L, d: L.full((2,), 1.5, device=d), lambda L, d: L.full((2,), True, device=d),
    lambda L, d: L.arange(5, device=d), lambda L, d: L.arange(0, 1, 0.1, device=d),
    lambda L, d: L.arange(5, 0, -2, device=d),
    lambda L, d: L.arange(0, 5, dtype=L.float64, device=d),
    lambda L, d: L.linspace(0, 1, 5, device=d),
    lambda L, d: L.linspace(0, 10, 5, dtype=L.int64, device=d),
    lambda L, d: L.logspace(0, 3, 4, base=2, device=d), lambda L, d: L.eye(3, device=d),
    lambda L, d: L.eye(2, 3, dtype=L.int64, device=d), lambda L, d: L.scalar_tensor(3, device=d),
    lambda L, d: L.empty_strided((2, 2), (2, 1), device=d).fill_(1),
    lambda L, d: L.zeros_like(L.ones(2, dtype=L.int32, device=d)),
    lambda L, d: L.ones_like(L.ones(2, 1, device=d)),
    lambda L, d: L.full_like(L.ones(3, dtype=L.long, device=d), 7.9),
    lambda L, d: L.empty_like(L.ones(2, device=d)).fill_(1),
    lambda L, d: L.zeros_like(L.ones(2), device=d),
    lambda L, d: L.ones(2, device=d).new_zeros(3),
    lambda L, d: L.ones(2, device=d).new_full((2,), 4),
    lambda L, d: L.ones(2, device=d).new_tensor([1, 2]),
    lambda L, d: L.tril(L.ones(3, 3, device=d)),
]


@pytest.mark.parametrize("fn", ON_DEVICE)
def test_creation_on_strict_matches_torch(torch, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e, t = fn(ember, "strict"), fn(torch, "cpu")
    assert e.device == ember.device("strict") and e.device.type == "strict"
    assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype)
    np.testing.assert_allclose(_host(e), t.numpy(), rtol=1e-6, atol=1e-7)


RANDOM_ON_DEVICE = [
    lambda L, g, d: L.rand(2, 3, generator=g, device=d),
    lambda L, g, d: L.randn(4, generator=g, dtype=L.float64, device=d),
    lambda L, g, d: L.randint(0, 5, (3, 2), generator=g, device=d),
    lambda L, g, d: L.randperm(6, generator=g, device=d),
    lambda L, g, d: L.normal(2.0, 3.0, (5,), generator=g, device=d),
    lambda L, g, d: L.normal(L.zeros(2, 3, device=d), L.ones(3, device=d), generator=g),
    lambda L, g, d: L.normal(L.zeros(2, device=d), 2.0, generator=g),
    lambda L, g, d: L.bernoulli(L.full((4,), 0.5, device=d), generator=g),
    lambda L, g, d: L.bernoulli(L.zeros(4, device=d), 0.3, generator=g),
    lambda L, g, d: L.multinomial(L.tensor([0.2, 0.3, 0.5], device=d), 2, generator=g),
    lambda L, g, d: L.multinomial(L.ones(2, 3, device=d), 4, True, generator=g),
    lambda L, g, d: L.rand_like(L.ones(2, dtype=L.float64, device=d), generator=g),
    lambda L, g, d: L.randn_like(L.ones(2, 2, device=d), generator=g),
    lambda L, g, d: L.randint_like(L.ones(3, device=d), 4, generator=g),
    lambda L, g, d: L.poisson(L.ones(3, device=d) * 4, generator=g),
    lambda L, g, d: L.ones(3, device=d).uniform_(-1, 1, generator=g),
    lambda L, g, d: L.ones(3, device=d).normal_(generator=g),
    lambda L, g, d: L.ones(3, device=d).bernoulli_(0.5, generator=g),
    lambda L, g, d: L.ones(3, device=d).bernoulli_(L.full((3,), 0.5, device=d), generator=g),
    lambda L, g, d: L.ones(3, device=d).random_(0, 10, generator=g),
    lambda L, g, d: L.ones(3, device=d).exponential_(generator=g),
    lambda L, g, d: L.ones(3, device=d).cauchy_(generator=g),
    lambda L, g, d: L.ones(3, device=d).geometric_(0.5, generator=g),
    lambda L, g, d: L.ones(3, device=d).log_normal_(generator=g),
]


@pytest.mark.parametrize("fn", RANDOM_ON_DEVICE)
def test_random_on_strict_is_the_cpu_stream_with_torch_dtypes(torch, fn):
    # The Generator draws on the host: one seed, the same numbers on every device.
    t = fn(torch, torch.Generator().manual_seed(0), "cpu")
    s = fn(ember, ember.Generator().manual_seed(3), "strict")
    c = fn(ember, ember.Generator().manual_seed(3), "cpu")
    assert s.device.type == "strict" and c.device.type == "cpu"
    assert str(s.dtype) == str(t.dtype) and tuple(s.shape) == tuple(t.shape)
    np.testing.assert_array_equal(_host(s), _host(c))


def test_device_argument_of_an_unusable_device_consumes_no_random_numbers():
    ember.manual_seed(4)
    with pytest.raises(RuntimeError, match="cuda"):
        ember.rand(3, device="cuda")
    a = ember.rand(3)
    ember.manual_seed(4)
    assert ember.rand(3).tolist() == a.tolist()


def test_from_numpy_frombuffer_stay_on_host_and_tensor_keeps_device(torch):
    s = ember.ones(2, device="strict")
    assert ember.tensor(s).device.type == "strict"        # no default device: data stays
    assert ember.as_tensor(s) is s
    assert ember.as_tensor(s, device="cpu").device.type == "cpu"
    assert ember.tensor(s, device="cpu").tolist() == [1.0, 1.0]
    h = ember.ones(2)
    m = ember.as_tensor(h, device="strict")
    assert m.device.type == "strict" and ember.as_tensor(h) is h
    c = ember.tensor(s)
    c[0] = 5
    assert s.tolist() == [1.0, 1.0]                       # tensor() copies on the same device
    a = np.zeros(2, dtype=np.float32)
    assert ember.from_numpy(a).device.type == "cpu"
    assert ember.frombuffer(bytearray(8), dtype=ember.float32).device.type == "cpu"


def test_set_default_device_strict_then_creation(torch):
    assert ember.get_default_device() == ember.device("cpu")
    ember.set_default_device("strict")
    try:
        assert ember.get_default_device() == ember.device("strict")
        for t in (ember.zeros(2), ember.ones(2, 3), ember.tensor([1.0, 2.0]), ember.arange(3),
                  ember.full((2,), 7), ember.eye(2), ember.linspace(0, 1, 3), ember.rand(2),
                  ember.randn(2), ember.randint(0, 3, (2,)), ember.randperm(3),
                  ember.as_tensor([1, 2]), ember.scalar_tensor(1.0), ember.empty(2),
                  ember.tensor(ember.ones(2, device="cpu"))):
            assert t.device.type == "strict", t
        host = ember.ones(2, device="cpu")
        assert host.device.type == "cpu"
        # As torch: *_like follow the input; from_numpy/frombuffer share host memory.
        assert ember.zeros_like(host).device.type == "cpu"
        assert ember.rand_like(host).device.type == "cpu"
        assert ember.from_numpy(np.zeros(2)).device.type == "cpu"
        assert ember.zeros(2).tolist() == torch.zeros(2).tolist()
    finally:
        ember.set_default_device(None)
    assert ember.zeros(2).device.type == "cpu"
    with ember.device("strict"):
        assert ember.ones(1).device.type == "strict"
    assert ember.ones(1).device.type == "cpu"


def test_cuda_without_cupy_raises_clear_errors(torch):
    if ember.cuda.is_available():
        pytest.skip("CUDA is available here")
    assert ember.cuda.device_count() == 0 and not ember.cuda.is_initialized()
    # Memory statistics and empty_cache answer without CUDA, as torch's.
    assert ember.cuda.memory_allocated() == torch.cuda.memory_allocated() == 0
    assert ember.cuda.max_memory_allocated() == 0 and ember.cuda.memory_reserved() == 0
    assert ember.cuda.empty_cache() is None
    with pytest.raises(AssertionError, match="CuPy"):    # (torch: not compiled with CUDA)
        ember.cuda.synchronize()
    for query in (ember.cuda.current_device, ember.cuda.get_device_name,
                  ember.cuda.get_device_capability, lambda: ember.cuda.set_device(0)):
        with pytest.raises(AssertionError, match=r"CuPy.*pip install \"ember\[gpu\]\""):
            query()
        with pytest.raises(RuntimeError):       # also ember's device-error type
            query()
    with pytest.raises(AssertionError):
        torch.cuda.current_device()
    for legacy in ("FloatTensor", "DoubleTensor", "LongTensor"):
        cls = getattr(ember.cuda, legacy)
        assert not isinstance(ember.ones(2), cls)
        with pytest.raises(TypeError) as te:
            getattr(torch.cuda, legacy)(2)
        with pytest.raises(TypeError, match="CuPy") as ee:
            cls(2)
        assert str(ee.value).startswith(str(te.value).split(" Torch")[0])
        with pytest.raises(RuntimeError, match=r"ember\[gpu\]"):
            ember.ones(2).type(cls)
    with pytest.raises(RuntimeError, match=r"ember\[gpu\]"):
        ember.ones(2).type("torch.cuda.FloatTensor")
    with pytest.raises(RuntimeError, match=r"CuPy.*ember\[gpu\]"):
        ember.ones(2).cuda()
