"""dtype-level fidelity against torch: bfloat16, overflow checks on Python numbers, promotion,
index checks and the fast small integer powers."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _outcome(lib, fn):
    try:
        r = fn(lib)
    except Exception as e:      # noqa: BLE001 (the class and message are compared)
        return ("raise", type(e).__name__, str(e))
    if hasattr(r, "dtype") and hasattr(r, "shape"):
        vals = r.detach().to(lib.float64).tolist() if r.dtype.is_floating_point else \
            r.detach().tolist()
        return ("tensor", str(r.dtype), tuple(r.shape), vals)
    return ("value", repr(r))


def _same(fn):
    a, b = _outcome(ember, fn), _outcome(torch, fn)
    if a[0] == "tensor" and b[0] == "tensor":
        assert a[:3] == b[:3]
        np.testing.assert_array_equal(np.array(a[3], dtype=complex),
                                      np.array(b[3], dtype=complex))
    else:
        assert a == b


BF = [1.0, 2.5, -3.3, 0.1, 1e10, 3.14159, 1.00390625000001, -0.0]


@pytest.mark.parametrize("fn", [
    lambda L: L.tensor(BF, dtype=L.bfloat16),
    lambda L: L.tensor(BF, dtype=L.float64).to(L.bfloat16),
    lambda L: L.tensor(BF, dtype=L.bfloat16).float(),
    lambda L: L.tensor(BF, dtype=L.bfloat16) + 1.5,
    lambda L: L.tensor(BF, dtype=L.bfloat16) + 0.003907,
    lambda L: L.tensor(BF, dtype=L.bfloat16) * 1.003907,
    lambda L: L.tensor(BF, dtype=L.bfloat16) / 3,
    lambda L: L.tensor(BF, dtype=L.bfloat16) * L.tensor(1.003907),
    lambda L: L.tensor(BF, dtype=L.bfloat16) * L.tensor(BF, dtype=L.bfloat16),
    lambda L: L.tensor(BF, dtype=L.bfloat16) + L.ones(8, dtype=L.float16),
    lambda L: L.tensor(BF, dtype=L.bfloat16) + L.ones(8),
    lambda L: L.tensor(BF, dtype=L.bfloat16) + L.arange(8),
    lambda L: L.arange(8) + L.tensor(2.5, dtype=L.bfloat16),
    lambda L: L.tensor(BF, dtype=L.bfloat16) + 1j,
    lambda L: L.tensor(BF, dtype=L.bfloat16) ** 3,
    lambda L: L.tensor(BF, dtype=L.bfloat16).exp(),
    lambda L: L.tensor(BF, dtype=L.bfloat16).reshape(2, 4) @ L.ones(4, 2, dtype=L.bfloat16),
    lambda L: L.zeros(3, dtype=L.bfloat16),
    lambda L: L.arange(5, dtype=L.bfloat16),
    lambda L: L.full((2,), 0.1, dtype=L.bfloat16),
    lambda L: L.promote_types(L.bfloat16, L.float16),
    lambda L: L.promote_types(L.bfloat16, L.float32),
    lambda L: L.promote_types(L.int64, L.bfloat16),
    lambda L: L.promote_types(L.bfloat16, L.complex32),
    lambda L: L.tensor([1.5], dtype=L.bfloat16).element_size(),
])
def test_bfloat16_matches_torch(fn):
    _same(fn)


@pytest.mark.parametrize("values", [[1.0, 2.5], [1e10, 3.14159], [1e-5, 1.0], 1.5,
                                    [float("nan"), 2.0, -float("inf")]])
def test_bfloat16_repr(values):
    assert repr(ember.tensor(values, dtype=ember.bfloat16)) == \
        repr(torch.tensor(values, dtype=torch.bfloat16))


def test_bfloat16_dtype_and_finfo():
    assert repr(ember.bfloat16) == "torch.bfloat16"
    assert ember.bfloat16 is not ember.float32
    assert ember.bfloat16.is_floating_point and ember.bfloat16.itemsize == 2
    for d in ("bfloat16", "float16", "float32", "float64"):
        e, t = ember.finfo(getattr(ember, d)), torch.finfo(getattr(torch, d))
        assert repr(e) == repr(t)
        for f in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
            assert getattr(e, f) == getattr(t, f), (d, f)
    assert repr(ember.iinfo(ember.int8)) == repr(torch.iinfo(torch.int8))


@pytest.mark.parametrize("name", ["uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2",
                                  "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu",
                                  "quint8", "qint8", "qint32", "complex32", "bits8"])
def test_unsupported_dtypes_raise_clearly(name):
    d = getattr(ember.dtypes, name)
    assert repr(d) == repr(getattr(torch, name))
    with pytest.raises(TypeError, match="ember does not support torch.%s" % name):
        ember.zeros(2, dtype=d)
    with pytest.raises(TypeError, match="ember does not support torch.%s" % name):
        ember.ones(2).to(d)


OVERFLOW = [
    lambda L: L.zeros(3, dtype=L.int64).masked_fill(L.tensor([True, False, True]), -float("inf")),
    lambda L: L.zeros(3, dtype=L.int64).masked_fill(L.tensor([True, False, True]), 1.5),
    lambda L: L.zeros(3, dtype=L.uint8).masked_fill(L.tensor([True, False, True]), 300),
    lambda L: L.zeros(3, dtype=L.uint8).masked_fill(L.tensor([True, False, True]), -1),
    lambda L: L.zeros(3, dtype=L.int32).masked_fill(L.tensor([True, False, True]), float("nan")),
    lambda L: L.zeros(3).masked_fill(L.tensor([True, False, True]), 1e39),
    lambda L: L.zeros(3, dtype=L.float16).masked_fill(L.tensor([True, False, True]), 1e5),
    lambda L: L.zeros(3, dtype=L.uint8).masked_fill(L.tensor([True, False, True]), L.tensor(300)),
    lambda L: L.full((1,), float("inf"), dtype=L.int64),
    lambda L: L.full((1,), 300, dtype=L.uint8),
    lambda L: L.full((1,), -255, dtype=L.uint8),
    lambda L: L.full((1,), -256, dtype=L.uint8),
    lambda L: L.full((1,), 255.9, dtype=L.uint8),
    lambda L: L.full((1,), 2 ** 63, dtype=L.int64),
    lambda L: L.full((1,), 1e39),
    lambda L: L.full((1,), 1e5, dtype=L.float16),
    lambda L: L.full((1,), -1, dtype=L.bool),
    lambda L: L.full_like(L.zeros(2, dtype=L.uint8), 300),
    lambda L: L.tensor(300, dtype=L.uint8),
    lambda L: L.tensor([300], dtype=L.uint8),
    lambda L: L.tensor(-1, dtype=L.uint8),
    lambda L: L.tensor(-1.0, dtype=L.uint8),
    lambda L: L.tensor([1.5e3], dtype=L.int8),
    lambda L: L.tensor(float("inf"), dtype=L.int64),
    lambda L: L.tensor(1.7, dtype=L.int64),
    lambda L: L.tensor(2 ** 40, dtype=L.int32),
    lambda L: L.tensor(2 ** 63),
    lambda L: L.tensor(1e39, dtype=L.float32),
    lambda L: L.as_tensor(300, dtype=L.uint8),
    lambda L: L.zeros(2, dtype=L.uint8).fill_(300),
    lambda L: L.zeros(2, dtype=L.uint8).fill_(-1),
    lambda L: L.zeros(2, dtype=L.int64).fill_(float("inf")),
    lambda L: L.zeros(2, dtype=L.int64).fill_(1.7),
    lambda L: L.zeros(2).fill_(1e39),
    lambda L: L.zeros(2, dtype=L.float16).fill_(1e5),
    lambda L: L.zeros(1, dtype=L.float16).fill_(1e5),
    lambda L: L.full((2,), 1e39, dtype=L.bfloat16),
    lambda L: L.zeros(2, dtype=L.float16).index_fill_(0, L.tensor([1]), 1e5),
    lambda L: L.zeros(2, dtype=L.uint8).fill_(L.tensor(300)),
    lambda L: L.zeros(3, dtype=L.uint8).index_fill_(0, L.tensor([1]), 300),
    lambda L: L.zeros(3, dtype=L.uint8).scatter_(0, L.tensor([1]), 300),
    lambda L: L.arange(0, 3, 0.5, dtype=L.int64),
    lambda L: L.arange(0, 2.5, dtype=L.int64),
    lambda L: L.arange(0.5, 3, 1, dtype=L.int64),
    lambda L: L.arange(-3, 0, dtype=L.uint8),
    lambda L: L.linspace(0, 300, 4, dtype=L.uint8),
    lambda L: L.zeros(2, dtype=L.uint8) + 300,
]


@pytest.mark.parametrize("fn", OVERFLOW)
def test_overflow_checks_match_torch(fn):
    _same(fn)


def _setitem(L, index, value, dtype):
    x = L.zeros(3, dtype=getattr(L, dtype))
    x[index(L)] = value
    return x


@pytest.mark.parametrize("index", [lambda L: 1, lambda L: slice(1, None),
                                   lambda L: L.tensor([True, False, True])])
@pytest.mark.parametrize("value,dtype", [(300, "uint8"), (-1, "uint8"), (float("inf"), "int64"),
                                         (1e5, "float16"),
                                         (1e39, "float32"), (2.7, "int64")])
def test_setitem_overflow_matches_torch(index, value, dtype):
    _same(lambda L: _setitem(L, index, value, dtype))


@pytest.mark.parametrize("fn", [
    lambda L: L.arange(4.).index_select(0, L.tensor([0., 1.])),
    lambda L: L.tensor(5.).index_select(0, L.tensor([0])),
    lambda L: L.tensor(5.).index_select(0, L.tensor([0, 0])),
    lambda L: L.arange(4.).index_select(0, L.tensor([-1])),
    lambda L: L.arange(4.).index_select(0, L.tensor([1], dtype=L.int32)),
    lambda L: L.zeros(4).index_add_(0, L.tensor([-1]), L.ones(1)),
    lambda L: L.zeros(4).index_add_(0, L.tensor([4]), L.ones(1)),
    lambda L: L.zeros(4).index_add_(0, L.tensor([1.]), L.ones(1)),
    lambda L: L.ones(2) + np.float64(1),
    lambda L: L.ones(2, dtype=L.int32) + np.int64(2),
    lambda L: L.ones(2) * np.float64(2),
    lambda L: L.ones(2) + np.complex128(1),
    lambda L: L.add(L.tensor([True, False]), L.tensor([True, True]), alpha=2),
    lambda L: L.add(L.tensor([True, False]), L.tensor([True, True]), alpha=0),
    lambda L: L.add(L.tensor([1, 2]), L.tensor([1, 1]), alpha=True),
    lambda L: L.add(L.tensor([1, 2]), L.tensor([1, 1]), alpha=1.5),
    lambda L: L.add(L.tensor([1., 2]), L.tensor([1, 1]), alpha=2.5),
    lambda L: L.sub(L.tensor([1, 2]), L.tensor([True, True]), alpha=2),
    lambda L: L.tensor([2, 3]) ** -1,
    lambda L: L.pow(L.tensor([2]), -2),
    lambda L: L.tensor([2, 3, 1, -1, -1]) ** L.tensor([-1, 1, -3, -3, -2]),
    lambda L: 2 ** L.tensor([-1, 1]),
])
def test_promotion_and_index_checks_match_torch(fn):
    _same(fn)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("e", [2, 3, -1, -2, 0.5, -0.5, 4, 3.0])
def test_small_powers_match_torch(dtype, e):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(2000) * 3).astype(dtype)
    x[:10] = [0, -0.0, np.inf, -np.inf, np.nan, 1e-30, 1e30, -1, 1, 2]
    a = (ember.tensor(x) ** e).numpy()
    b = (torch.tensor(x) ** e).numpy()
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    if e in (0.5, 4):   # torch's sqrt/std::pow: within 1 ulp
        diff = np.abs(a[~same].astype(np.float64) - b[~same])
        assert np.all(diff <= np.spacing(np.abs(b[~same]).astype(dtype))), e
    else:
        assert same.all(), e
    xe = ember.tensor(x[10:20], requires_grad=True)
    xt = torch.tensor(x[10:20], requires_grad=True)
    g = rng.standard_normal(10).astype(dtype)
    (xe ** e).backward(ember.tensor(g))
    (xt ** e).backward(torch.tensor(g))
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=4e-7 if dtype ==
                               "float32" else 1e-15, equal_nan=True)


def test_small_power_is_fast():
    import timeit
    x = ember.randn(2000)
    t2 = min(timeit.repeat(lambda: x ** 2, number=200, repeat=3))
    for e in (3, -1, 0.5, -2):
        assert min(timeit.repeat(lambda: x ** e, number=200, repeat=3)) < 4 * t2 + 2e-3, e


def test_bfloat16_checkpoints_round_trip_with_torch():
    import io
    t = torch.tensor([1.5, -2.25, 3e38, 0.1], dtype=torch.bfloat16)
    buf = io.BytesIO()
    torch.save({"w": t}, buf)
    buf.seek(0)
    e = ember.load(buf)["w"]
    assert e.dtype is ember.bfloat16
    assert e.to(ember.float32).tolist() == t.float().tolist()
    buf = io.BytesIO()
    ember.save({"w": e}, buf)
    buf.seek(0)
    assert torch.equal(torch.load(buf)["w"], t)
