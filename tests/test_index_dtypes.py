"""Index, mask and fill-value dtypes as torch 2.13 takes them (compared against torch): int32
indices for gather/scatter/scatter_add/scatter_reduce (and int64 only for index_fill, take,
put_, take_along_dim with a dim and searchsorted's sorter), the int32/int64 1-D indices of
index_select/index_add/index_reduce, the long/int/byte/bool tensors of ``t[...]``, bool masks,
torch's messages and check order, int32-index gradients, and complex fill values for real
tensors (the imaginary part must be 0; the real part is checked)."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

DTYPES = ["int8", "int16", "int32", "int64", "uint8", "bool", "float32"]
I2 = [[0, 1], [1, 0]]
I1 = [1, 0]
MASK = [1, 0, 1, 0]


def T(lib, v, dt):
    return lib.tensor(v, dtype=getattr(lib, dt))


def X(lib, shape=(3, 4)):
    return lib.arange(float(np.prod(shape))).reshape(shape)


def _set(x, i, v):
    x[i] = v
    return x


CASES = {
    "gather": lambda m, d: m.gather(X(m), 1, T(m, I2, d)),
    "Tensor.gather": lambda m, d: X(m).gather(0, T(m, I2, d)),
    "scatter_src": lambda m, d: m.scatter(X(m), 1, T(m, I2, d), -X(m, (2, 2))),
    "scatter_value": lambda m, d: m.scatter(X(m), 1, T(m, I2, d), 7.0),
    "scatter_reduce_arg": lambda m, d: m.scatter(X(m), 1, T(m, I2, d), -X(m, (2, 2)),
                                                 reduce="add"),
    "scatter_": lambda m, d: X(m).scatter_(1, T(m, I2, d), 7.0),
    "scatter_add": lambda m, d: m.scatter_add(X(m), 1, T(m, I2, d), -X(m, (2, 2))),
    "scatter_add_": lambda m, d: X(m).scatter_add_(1, T(m, I2, d), -X(m, (2, 2))),
    "scatter_reduce": lambda m, d: m.scatter_reduce(X(m), 1, T(m, I2, d), -X(m, (2, 2)), "amax"),
    "scatter_reduce_": lambda m, d: X(m).scatter_reduce_(1, T(m, I2, d), -X(m, (2, 2)), "sum"),
    "index_select": lambda m, d: m.index_select(X(m), 0, T(m, I1, d)),
    "index_select_0d": lambda m, d: m.index_select(m.tensor(3.0), 0, T(m, [0], d)),
    "index_add": lambda m, d: m.index_add(X(m), 0, T(m, I1, d), X(m, (2, 4))),
    "index_add_": lambda m, d: X(m).index_add_(0, T(m, I1, d), X(m, (2, 4))),
    "index_copy": lambda m, d: m.index_copy(X(m), 0, T(m, I1, d), X(m, (2, 4))),
    "index_copy_": lambda m, d: X(m).index_copy_(0, T(m, I1, d), X(m, (2, 4))),
    "index_fill": lambda m, d: m.index_fill(X(m), 0, T(m, I1, d), 5.0),
    "index_fill_": lambda m, d: X(m).index_fill_(0, T(m, I1, d), 5.0),
    "index_fill_t": lambda m, d: X(m).index_fill(1, T(m, I1, d), m.tensor(5.0)),
    "index_put": lambda m, d: m.index_put(X(m), (T(m, I1, d),), m.tensor(5.0)),
    "index_put_": lambda m, d: X(m).index_put_((T(m, I1, d),), m.tensor(5.0), accumulate=True),
    "index_put2": lambda m, d: m.index_put(X(m), (T(m, I1, d), T(m, I1, d)), m.tensor(5.0)),
    "index_reduce": lambda m, d: m.index_reduce(X(m), 0, T(m, I1, d), X(m, (2, 4)), "prod"),
    "index_reduce_": lambda m, d: X(m).index_reduce_(0, T(m, I1, d), X(m, (2, 4)), "amax"),
    "take": lambda m, d: m.take(X(m), T(m, I2, d)),
    "put_": lambda m, d: X(m).put_(T(m, I1, d), m.tensor([9.0, 8.0])),
    "put": lambda m, d: X(m).put(T(m, I1, d), m.tensor([9.0, 8.0]), accumulate=True),
    "take_along_dim": lambda m, d: m.take_along_dim(X(m), T(m, I2[:1], d), 1),
    "take_along_dim_none": lambda m, d: m.take_along_dim(X(m), T(m, I1, d)),
    "masked_select": lambda m, d: m.masked_select(X(m), T(m, MASK, d)),
    "masked_fill": lambda m, d: m.masked_fill(X(m), T(m, MASK, d), 3.0),
    "masked_scatter": lambda m, d: X(m).masked_scatter(T(m, MASK, d), -X(m)),
    "getitem": lambda m, d: X(m)[T(m, I1, d)],
    "getitem2d": lambda m, d: X(m)[T(m, [MASK] * 3, d)],
    "getitem_tuple": lambda m, d: X(m)[:, T(m, [1, 0, 1, 1], d)],
    "getitem_0d": lambda m, d: X(m)[T(m, 1, d)],
    "setitem": lambda m, d: _set(X(m), T(m, I1, d), 5.0),
    "setitem_tuple": lambda m, d: _set(X(m), (T(m, I1, d), T(m, I1, d)), 5.0),
    "bincount": lambda m, d: m.bincount(T(m, [0, 1, 1, 3], d)),
    "one_hot": lambda m, d: m.nn.functional.one_hot(T(m, [0, 1, 1, 3], d), 4),
    "nll_loss": lambda m, d: m.nn.functional.nll_loss(X(m, (2, 3)), T(m, [1, 0], d)),
    "searchsorted_sorter": lambda m, d: m.searchsorted(m.tensor([3.0, 1.0, 2.0]), m.tensor([1.5]),
                                                       sorter=T(m, [1, 2, 0], d)),
    "unravel_index": lambda m, d: m.unravel_index(T(m, [1, 0, 5], d), (2, 3)),
}


def outcome(lib, fn):
    """("ok", dtype, values) or ("err", class name, message)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(lib)
    except Exception as e:      # noqa: BLE001 (the class and message are compared)
        return ("err", type(e).__name__, str(e).split("\n")[0])
    rs = r if isinstance(r, (tuple, list)) else (r,)
    return ("ok", [(str(t.dtype).split(".")[-1], _values(t.detach())) for t in rs])


def _values(t):
    if str(t.dtype).endswith("bfloat16"):
        t = t.float()
    return np.asarray(t.numpy()).tolist()


def same(fn):
    a, b = outcome(torch, fn), outcome(ember, fn)
    assert a == b, "\ntorch: %s\nember: %s" % (a, b)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_index_dtype_matrix(name, dt):
    same(lambda lib: CASES[name](lib, dt))


_ORDER = {
    # gather/scatter: the dim is wrapped before the index dtype is checked
    "gather_dim": lambda m: m.gather(X(m), 5, T(m, [[0]], "int8")),
    "gather_list": lambda m: m.gather(X(m), 5, [0]),
    "scatter_dim": lambda m: m.scatter(X(m), 5, T(m, [[0]], "int8"), 1.0),
    "scatter_add_dim": lambda m: m.scatter_add(X(m), 5, T(m, [[0]], "int8"), X(m, (1, 1))),
    "scatter_add_src": lambda m: m.scatter_add(X(m), 0, T(m, [[0]], "int8"),
                                               X(m, (1, 1)).double()),
    "scatter_add_src64": lambda m: m.scatter_add(X(m), 0, T(m, [[0]], "int64"),
                                                 X(m, (1, 1)).double()),
    "scatter_reduce_src": lambda m: m.scatter_reduce(X(m), 0, T(m, [[0]], "int32"),
                                                     X(m, (1, 1)).double(), "xx"),
    "scatter_reduce_bad": lambda m: m.scatter_reduce(X(m), 0, T(m, [[0]], "int8"),
                                                     X(m, (1, 1)), "xx"),
    "scatter_reduce_dim": lambda m: m.scatter_reduce(X(m), 5, T(m, [[0]], "int64"),
                                                     X(m, (1, 1)), "xx"),
    # take_along_dim: the ndim, then the dtype, then the dim
    "tad_ndim": lambda m: m.take_along_dim(X(m), T(m, [0], "int32"), 5),
    "tad_dtype": lambda m: m.take_along_dim(X(m), T(m, [[0]], "int32"), 5),
    "tad_dim": lambda m: m.take_along_dim(X(m), T(m, [[0]], "int64"), 5),
    # index_fill: the value's ndim, the dtype, complex, the dim, then the index's ndim
    "ifill_dtype": lambda m: X(m).index_fill(5, T(m, [0], "int32"), 1.0),
    "ifill_value": lambda m: X(m).index_fill(0, T(m, [0], "int32"), m.tensor([1.0])),
    "ifill_ndim": lambda m: X(m).index_fill(0, T(m, [[0]], "int64"), 1.0),
    "ifill_ndim_dim": lambda m: X(m).index_fill(5, T(m, [[0]], "int64"), 1.0),
    "ifill_complex": lambda m: X(m).index_fill(5, T(m, [0], "int64"), 1 + 1j),
    "ifill_complex_t": lambda m: X(m).index_fill(0, T(m, [0], "int64"), m.tensor(1 + 0j)),
    "ifill_complex_bool": lambda m: X(m).bool().index_fill(0, T(m, [0], "int64"), 1 + 0j),
    # the 1-D index ops: the dim, then the index's ndim, then its dtype
    "isel_ndim": lambda m: X(m).index_select(0, T(m, [[0]], "int8")),
    "isel_dim": lambda m: X(m).index_select(5, T(m, [0], "int8")),
    "iadd_ndim": lambda m: X(m).index_add(0, T(m, [[0]], "int8"), X(m, (1, 4))),
    "ireduce_ndim": lambda m: X(m).index_reduce(0, T(m, [[0]], "int16"), X(m, (1, 4)), "prod"),
    "icopy_ndim": lambda m: X(m).index_copy(0, T(m, [[0]], "int64"), X(m, (1, 4))),
    "put_source": lambda m: X(m).put(T(m, [0], "int32"), m.ones(1, dtype=m.float64)),
    "take_list": lambda m: m.take(X(m), [0]),
    # searchsorted's sorter: its shape, then its dtype, then its range
    "sorter_shape": lambda m: m.searchsorted(m.tensor([3.0, 1.0, 2.0]), m.tensor([1.5]),
                                             sorter=T(m, [1, 2], "int32")),
    "sorter_range": lambda m: m.searchsorted(m.tensor([3.0, 1.0, 2.0]), m.tensor([1.5]),
                                             sorter=T(m, [1, 2, 5], "int64")),
    "sorter_neg": lambda m: m.searchsorted(m.tensor([3.0, 1.0, 2.0]), m.tensor([1.5]),
                                           sorter=T(m, [-1, 2, 0], "int64")),
    "sorter_side": lambda m: m.searchsorted(m.tensor([3.0, 1.0, 2.0]), m.tensor([1.5]),
                                            side="x", sorter=T(m, [1], "int32")),
    "sorter_ok": lambda m: m.searchsorted(m.tensor([3.0, 1.0, 2.0]), m.tensor([1.5, 9.0]),
                                          sorter=T(m, [1, 2, 0], "int64"), right=True),
}


@pytest.mark.parametrize("name", sorted(_ORDER))
def test_check_order(name):
    same(_ORDER[name])


MASK_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "float16", "bfloat16", "float32",
               "float64", "complex64", "complex128"]


@pytest.mark.parametrize("dt", MASK_DTYPES)
@pytest.mark.parametrize("op", ["masked_fill", "masked_select", "masked_scatter"])
def test_mask_dtype_messages(op, dt):
    def fn(lib):
        x, m = lib.zeros(4), lib.zeros(4, dtype=getattr(lib, dt))
        if op == "masked_fill":
            return x.masked_fill(m, 1.0)
        if op == "masked_select":
            return x.masked_select(m)
        return x.masked_scatter(m, x)
    same(fn)


def _grads(lib, fn, dt):
    x = X(lib).double().requires_grad_(True)
    s = (-X(lib, (2, 2))).double().requires_grad_(True)
    out = fn(lib, x, T(lib, I2, dt), s)
    out.backward(lib.ones_like(out))
    return [out.detach().numpy(), x.grad.numpy()] + ([s.grad.numpy()] if s.grad is not None
                                                     else [])


GRAD_FNS = {
    "gather": lambda m, x, i, s: m.gather(x, 1, i) * s,
    "scatter": lambda m, x, i, s: m.scatter(x, 1, i, s),
    "scatter_add": lambda m, x, i, s: m.scatter_add(x, 1, i, s),
    "scatter_reduce_prod": lambda m, x, i, s: m.scatter_reduce(x, 1, i, s, "prod"),
    "scatter_reduce_amax": lambda m, x, i, s: m.scatter_reduce(x, 1, i, s, "amax",
                                                               include_self=False),
    "take_along_dim": lambda m, x, i, s: m.take_along_dim(x, i.reshape(-1)) * 2,
    "index_select": lambda m, x, i, s: m.index_select(x, 0, i[0]) * 3,
    "index_add": lambda m, x, i, s: m.index_add(x[:2], 1, i[0], s, alpha=2),
    "index_reduce": lambda m, x, i, s: m.index_reduce(x[:2], 1, i[0], s, "amin"),
    "getitem": lambda m, x, i, s: x[i] * 1,
}


@pytest.mark.parametrize("name", sorted(GRAD_FNS))
def test_int32_index_gradients(name):
    a = _grads(torch, GRAD_FNS[name], "int32")
    b = _grads(ember, GRAD_FNS[name], "int32")
    assert len(a) == len(b)
    for u, v in zip(a, b):
        np.testing.assert_allclose(v, u)
        assert v.dtype == u.dtype


FILL_CASES = {
    "fill_": lambda m, v, d: m.zeros(2, dtype=d).fill_(v),
    "fill_1": lambda m, v, d: m.zeros(1, dtype=d).fill_(v),
    "fill_t": lambda m, v, d: m.zeros(2, dtype=d).fill_(m.tensor(v)),
    "masked_fill": lambda m, v, d: m.zeros(2, dtype=d).masked_fill(m.tensor([True, False]), v),
    "masked_fill_t": lambda m, v, d: m.zeros(2, dtype=d).masked_fill(m.tensor([True, False]),
                                                                     m.tensor(v)),
    "index_fill": lambda m, v, d: m.zeros(2, dtype=d).index_fill(0, m.tensor([0]), v),
    "index_fill_t": lambda m, v, d: m.zeros(2, dtype=d).index_fill(0, m.tensor([0]),
                                                                   m.tensor(v)),
    "zeros_like_fill_": lambda m, v, d: m.zeros_like(m.zeros(2, dtype=d)).fill_(v),
    "scatter_value": lambda m, v, d: m.zeros(2, dtype=d).scatter(0, m.tensor([0]), v),
}
FILL_VALUES = [1 + 2j, 3 + 0j, -3 + 0j, complex(float("nan"), 0), complex(0, float("nan")),
               complex(float("inf"), 0), 1e40 + 0j, 1e5 + 0j, 1e300j]
FILL_DTYPES = ["float32", "float64", "int32", "int64", "bool", "complex64", "complex128",
               "float16", "bfloat16", "uint8", "int8"]


@pytest.mark.parametrize("name", sorted(FILL_CASES))
def test_complex_fill_values(name):
    bad = []
    for v in FILL_VALUES:
        for dt in FILL_DTYPES:
            def fn(lib):
                return FILL_CASES[name](lib, v, getattr(lib, dt))
            a, b = outcome(torch, fn), outcome(ember, fn)
            if repr(a) != repr(b):      # (repr: nan == nan)
                bad.append((v, dt, a, b))
    assert not bad, "\n".join(map(str, bad))
