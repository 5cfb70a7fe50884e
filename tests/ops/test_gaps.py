"""Closed gaps of the op library (issue 3), each checked against PyTorch: zeros in product
gradients, rsub nodes, setitem through views (CopySlices), erfinv's saved input, the NumPy
protocol, ``ember.return_types``, sort/topk/kthvalue ties and matmul node names."""
import pickle

import numpy as np
import pytest

import ember
from oracle import compare

R = np.random.default_rng(3)


def rn(*shape, dtype=np.float64):
    return R.standard_normal(shape).astype(dtype)


def ix(L, a):
    return L.tensor(np.asarray(a, dtype=np.int64))


SELF = np.array([[2.0, 0.0], [0.0, 3.0], [4.0, 1.0], [0.0, 0.0]])
SRC = np.array([[1.0, 0.0], [0.0, 5.0], [0.0, 0.0], [2.0, 7.0], [0.0, 3.0]])
ROWS = [0, 0, 1, 2, 3]


@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_prod_gradient_with_zeros(torch, include_self):
    # groups with no zero, one zero (in self or in src), and two zeros (src+src, self+src)
    index = np.repeat(np.array(ROWS)[:, None], 2, axis=1)
    compare(torch, lambda L, a, s: a.scatter_reduce(0, ix(L, index), s, "prod",
                                                    include_self=include_self), SELF, SRC)
    a = ember.tensor([2.0, 0.0, 3.0, 4.0], dtype=ember.float64, requires_grad=True)
    s = ember.tensor([1.0, 0.0, 5.0, 0.0, 0.0, 2.0, 7.0], dtype=ember.float64,
                     requires_grad=True)
    i = ember.tensor([0, 0, 1, 1, 2, 2, 3])
    assert ember.autograd.gradcheck(
        lambda a, s: a.scatter_reduce(0, i, s, "prod", include_self=include_self), (a, s))


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_with_zeros(torch, reduce, include_self):
    compare(torch, lambda L, a, s: a.index_reduce(0, ix(L, ROWS), s, reduce,
                                                  include_self=include_self), SELF, SRC)
    for lib in (ember, torch):
        a = lib.tensor(SELF, requires_grad=True)
        out = a.index_reduce(0, ix(lib, ROWS), lib.tensor(SRC), reduce)
        assert out.grad_fn.name() == "IndexReduceBackward0"


def test_index_reduce_in_place_and_bad_reduce(torch):
    def fn(L, a, s):
        h = a * 1
        h.index_reduce_(0, ix(L, ROWS), s, "prod")
        return h
    compare(torch, fn, SELF, SRC)
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="Expected reduce to be one of prod, mean, amax "
                                               "or amin but got sum"):
            lib.tensor(SELF).index_reduce(0, ix(lib, ROWS), lib.tensor(SRC), "sum")


@pytest.mark.parametrize("fn", [
    lambda L, x: x.prod(), lambda L, x: x.prod(1), lambda L, x: x.prod(0, keepdim=True),
    lambda L, x: x.cumprod(1), lambda L, x: x.cumprod(0)], ids=["all", "dim1", "dim0",
                                                                  "cum1", "cum0"])
def test_prod_and_cumprod_with_zeros(torch, fn):
    x = np.array([[2.0, 0.0, 3.0, 0.0], [1.0, 0.0, 2.0, 4.0], [1.5, 2.0, 3.0, -1.0]])
    compare(torch, fn, x)
    compare(torch, fn, x[1:])


def _names(L, fn):
    x = L.tensor([1.0, 2.0], requires_grad=True)
    y = L.tensor([3.0, 4.0], requires_grad=True)
    out = fn(L, x, y)
    return out.grad_fn.name(), len(out.grad_fn.next_functions)


RSUB = {
    "one_minus": lambda L, x, y: 1 - x,
    "float_minus": lambda L, x, y: 2.5 - x,
    "dunder": lambda L, x, y: x.__rsub__(2),
    "rsub_scalar_alpha": lambda L, x, y: L.rsub(x, 2, alpha=3),
    "rsub_tensor": lambda L, x, y: L.rsub(x, y),
    "rsub_tensor_alpha": lambda L, x, y: L.rsub(x, y, alpha=2),
    "dunder_tensor": lambda L, x, y: x.__rsub__(y),
}


@pytest.mark.parametrize("fn", list(RSUB.values()), ids=list(RSUB))
def test_rsub_node_values_and_grads(torch, fn):
    assert _names(ember, fn) == _names(torch, fn)
    compare(torch, lambda L, a, b: fn(L, a, b), rn(2, 3), rn(3))
    compare(torch, lambda L, a, b: fn(L, a, b), rn(3), rn(2, 3, dtype=np.float32))


def test_rsub_dtypes(torch):
    for fn in [lambda L: 1 - L.tensor([1, 2]), lambda L: 1.5 - L.tensor([1, 2]),
               lambda L: L.rsub(L.tensor([1, 2], dtype=L.uint8), 300),
               lambda L: 3 - L.tensor([1, 2], dtype=L.int8),
               lambda L: L.rsub(L.tensor([1, 2]), 2.5, alpha=2)]:
        e, t = fn(ember), fn(torch)
        assert str(e.dtype) == str(t.dtype)
        np.testing.assert_array_equal(e.numpy(), t.numpy())
    for fn in [lambda L: True - L.tensor([True]), lambda L: 1 - L.tensor([True])]:
        for lib in (ember, torch):
            with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with"):
                fn(lib)


SETITEM = {
    "int": (lambda L, v: 0, lambda v: v[0]),
    "column": (lambda L, v: (slice(None), 0), lambda v: v[:, 0]),
    "int_scalar": (lambda L, v: 0, lambda v: 1.5),
    "two_ints": (lambda L, v: (1, 2), lambda v: v[0, 0]),
    "two_ints_scalar": (lambda L, v: (1, 2), lambda v: -2.0),
    "ellipsis": (lambda L, v: Ellipsis, lambda v: v),
    "ellipsis_scalar": (lambda L, v: Ellipsis, lambda v: 3.0),
    "full": (lambda L, v: slice(None), lambda v: v),
    "full_long_stop": (lambda L, v: slice(0, 10), lambda v: v),
    "negative_start": (lambda L, v: slice(-3, None), lambda v: v),
    "none": (lambda L, v: None, lambda v: v),
    "step": (lambda L, v: (slice(None, None, 2), 1), lambda v: v[:2, 0]),
    "broadcast": (lambda L, v: 1, lambda v: v[0, :1]),
    "leading_ones": (lambda L, v: 1, lambda v: v[:1]),
    "zero_dim_value": (lambda L, v: 2, lambda v: v[1, 1]),
    "zero_dim_tensor_index": (lambda L, v: L.tensor(1), lambda v: v[0]),
    "mask": (lambda L, v: v > 0, lambda v: 2.0),
    "list": (lambda L, v: ix(L, [0, 2]), lambda v: v[:2]),
    "int_and_list": (lambda L, v: (1, ix(L, [0, 2])), lambda v: v[0, :2]),
    "slice_and_list": (lambda L, v: (slice(1, None), ix(L, [0, 3])), lambda v: v[:2, :2]),
}


@pytest.mark.parametrize("case", list(SETITEM.values()), ids=list(SETITEM))
def test_setitem_node_and_gradients_like_torch(torch, case):
    index, value = case

    def fn(L, x, v):
        t = x * 1
        t[index(L, v)] = value(v * 2)
        return t * x

    compare(torch, fn, rn(3, 4), rn(3, 4))
    try:
        torch.zeros(3, 4, dtype=torch.float64)[index(torch, torch.ones(3, 4))] = \
            value(torch.ones(3, 4))
    except RuntimeError:
        for lib in (ember, torch):      # an advanced index needs equal dtypes, as torch says
            with pytest.raises(RuntimeError, match="Index put requires the source and "
                                                   "destination dtypes match"):
                fn(lib, lib.ones(3, 4, dtype=lib.float64), lib.ones(3, 4))
    else:
        compare(torch, fn, rn(3, 4), rn(3, 4, dtype=np.float32))      # value cast to float64
    names = []
    for lib in (ember, torch):
        x = lib.tensor(np.arange(12.0).reshape(3, 4) - 5, requires_grad=True)
        t = x * 1
        t[index(lib, x)] = value(x * 2)
        names.append((type(t.grad_fn).__name__, t._version))
    assert names[0] == names[1]


def test_setitem_through_a_view_and_without_grad(torch):
    def on_view(L, x, v):
        base = x * 1
        view = base[1:]
        view[0, 1:] = v
        view[:, 0] = 7.0
        return base * base, view
    compare(torch, on_view, rn(3, 4), rn(3))

    def buffer(L, v):
        buf = L.zeros(3, 4, dtype=L.float64)
        buf[1] = v
        buf[:, 2] = v[1:] * 2
        return buf
    compare(torch, buffer, rn(4))
    for lib in (ember, torch):
        x = lib.arange(24.0).reshape(2, 3, 4)
        x[0, :, ix(lib, [0, 1])] = lib.tensor([[-1.0, -2.0]] * 3)
        x[1, 1] = 100.0
        if lib is ember:
            got = x.numpy().copy()
        else:
            np.testing.assert_array_equal(got, x.numpy())


def test_setitem_errors_like_torch(torch):
    for lib in (ember, torch):
        x = lib.ones(2, 3, requires_grad=True)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            x[0] = 2.0
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            x[...] = 2.0
        with pytest.raises(RuntimeError, match="The expanded size of the tensor"):
            (x * 1)[0] = lib.ones(2)


@pytest.mark.parametrize("index", [
    (0, slice(None), [0, 1]), (1, [0, 1], slice(1, None)), ([1, 0], 0), (slice(None), 1, [2, 0]),
    (Ellipsis, [0, 1], 1), (0, None, [1]), ([0, 1], slice(None), 2)],
    ids=[str(i) for i in range(7)])
def test_getitem_ints_with_advanced_index_select_first(torch, index):
    # torch applies ints as selects before the advanced index (NumPy treats them as advanced)
    def fn(L, x):
        return x[tuple(ix(L, i) if isinstance(i, list) else i for i in index)]
    compare(torch, fn, rn(2, 3, 4))
    e = fn(ember, ember.ones(2, 3, 4, requires_grad=True)).grad_fn
    t = fn(torch, torch.ones(2, 3, 4, requires_grad=True)).grad_fn
    assert e.name() == t.name()
    assert [f.name() for f, _ in e.next_functions] == [f.name() for f, _ in t.next_functions]


def test_getitem_zero_dim_int_tensor_is_a_select(torch):
    for lib in (ember, torch):
        x = lib.arange(6.0).reshape(2, 3).requires_grad_()
        y = x[lib.tensor(1)]
        assert y.grad_fn.name() == "SelectBackward0"
        assert tuple(y.shape) == (3,)
        z = x.detach()[1, 2]
        z.add_(1)
        assert x[1, 2].item() == 6.0 and x._version == 1


def test_erfinv_saves_its_input(torch):
    def fn(L, x):
        y = x.erfinv()
        y.mul_(2)          # torch saves the input, so this does not break backward
        return y
    compare(torch, fn, np.array([0.1, -0.5, 0.9, 0.0]))
    x = ember.tensor([0.1, -0.5, 0.7], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradgradcheck(ember.erfinv, (x,))


@pytest.mark.parametrize("grad", [False, True])
def test_numpy_functions_on_tensors(torch, grad):
    """NumPy's functions on a tensor do what they do on torch's: the tensor's own method where
    NumPy calls one, a Tensor back from ufuncs, torch's errors (a tensor that requires grad
    cannot become an array)."""
    a = np.array([[1.0, -2.0], [3.0, 4.5]], dtype=np.float32)

    def run(lib, fn):
        t = lib.tensor(a, requires_grad=grad)
        try:
            r = fn(t)
        except Exception as e:   # noqa: BLE001
            return ("raise", type(e).__name__)
        if isinstance(r, lib.Tensor):
            return ("Tensor", repr(r.detach().numpy().tolist()))
        return (type(r).__name__, repr(np.asarray(r).tolist()))

    for fn in (np.sum, np.mean, np.max, np.min, np.prod, np.std, np.var, np.median, np.argmax,
               np.ndim, np.any, np.cumsum, np.ravel, np.diff, np.nonzero, np.exp, np.sqrt,
               lambda t: np.allclose(t, a), lambda t: np.concatenate([t, t]),
               lambda t: np.stack([t, t]), lambda t: t * np.float32(2),
               lambda t: np.float64(2.0) * t):
        assert run(ember, fn) == run(torch, fn), fn
    # (an array on the left of an operator: torch's reflected operators refuse arrays, so
    # Python raises TypeError, as for ember's)
    for lib in (ember, torch):
        with pytest.raises(TypeError):
            np.ones(2, dtype=np.float32) + lib.tensor([1.0, 2.0])


RETURN_TYPES = {
    "max": lambda L, x: x.max(1), "min": lambda L, x: x.min(0),
    "median": lambda L, x: x.median(1), "nanmedian": lambda L, x: x.nanmedian(1),
    "mode": lambda L, x: x.mode(1), "sort": lambda L, x: x.sort(1),
    "topk": lambda L, x: x.topk(2), "kthvalue": lambda L, x: x.kthvalue(2),
    "aminmax": lambda L, x: x.aminmax(),
    "linalg_inv_ex": lambda L, x: L.linalg.inv_ex(x[:, :2] + L.eye(2, dtype=L.float64) * 3),
}


@pytest.mark.parametrize("name", list(RETURN_TYPES))
def test_return_types_like_torch(torch, name):
    x = np.array([[1.0, 3.0, 2.0], [0.0, 5.0, -1.0]])
    e, t = RETURN_TYPES[name](ember, ember.tensor(x)), RETURN_TYPES[name](torch, torch.tensor(x))
    cls = getattr(ember.return_types, name)
    assert isinstance(e, cls) and isinstance(e, tuple) and len(e) == len(t) == 2
    assert type(e).__name__ == type(t).__name__
    assert repr(e) == repr(t)
    first, second = e
    assert first is e[0] and second is e[1]
    again = pickle.loads(pickle.dumps(e))
    assert type(again) is cls and repr(again) == repr(e)


MATMUL = [((3,), (3, 4)), ((2, 3), (5, 3, 4)), ((3,), (5, 3, 4)), ((5, 2, 3), (3, 4)),
          ((5, 2, 3), (3,)), ((5, 2, 3), (5, 3, 4)), ((2, 1, 2, 3), (5, 3, 4)),
          ((5, 2, 3), (1, 3, 4)), ((2, 3), (3, 4)), ((3,), (3,)), ((2, 3), (3,))]


@pytest.mark.parametrize("shapes", MATMUL, ids=[str(s) for s in MATMUL])
def test_matmul_node_names(torch, shapes):
    a, b = shapes
    for req in ((True, True), (True, False), (False, True)):
        names = [(lib.ones(*a, requires_grad=req[0]) @ lib.ones(*b, requires_grad=req[1]))
                 .grad_fn.name() for lib in (ember, torch)]
        assert names[0] == names[1], req
    compare(torch, lambda L, x, y: x @ y, rn(*a), rn(*b))


TIES = {
    "sort": lambda L, x: x.sort(0), "sort_desc": lambda L, x: x.sort(1, descending=True),
    "sort_stable": lambda L, x: L.sort(x, dim=0, descending=True, stable=True),
    "argsort": lambda L, x: x.argsort(0), "msort": lambda L, x: x.msort(),
    "topk": lambda L, x: x.topk(3, 0),
    "topk_smallest": lambda L, x: x.topk(5, 1, largest=False),
    "topk_unsorted": lambda L, x: x.topk(7, 0, sorted=False),
    "topk_partial_sort": lambda L, x: x.topk(1, 0), "topk_all": lambda L, x: x.topk(20, 1),
    "kthvalue": lambda L, x: x.kthvalue(4, 0), "kthvalue_last": lambda L, x: x.kthvalue(20, 1),
    "mode": lambda L, x: x.mode(0), "median": lambda L, x: x.median(0),
}


def _tie_data(kind, shape, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4 if kind != "wide" else 30, size=shape).astype(np.float64)
    if kind == "nan":
        a[a == 3] = np.nan
    elif kind == "inf":
        a[a == 3], a[a == 2] = np.inf, -np.inf
    elif kind == "const":
        a[:] = 1.0
    return a


@pytest.mark.parametrize("kind", ["small", "wide", "nan", "inf", "const"])
@pytest.mark.parametrize("name", list(TIES))
def test_tie_breaking_matches_torch_cpu(torch, name, kind):
    if kind == "nan" and name == "mode":
        pytest.skip("torch's mode sorts with `<`, undefined for nan")
    for seed, shape in enumerate([(70, 20), (17, 20), (300, 20)]):
        a = _tie_data(kind, shape, seed)
        compare(torch, TIES[name], a, seed=seed)     # values, indices and gradients



def test_advanced_setitem_on_expanded_tensor_writes_with_warning(torch):
    got = []
    for lib in (ember, torch):
        base = lib.tensor([[1.0, 2.0]])
        e = base.expand(3, 2)
        with pytest.warns(UserWarning, match="Use of masked_fill_ on expanded tensors is "
                                             "deprecated"):
            e[e > 1] = 0.0
        with pytest.warns(UserWarning, match="Use of index_put_ on expanded tensors is "
                                             "deprecated"):
            e[ix(lib, [0, 1]), ix(lib, [0, 0])] = lib.tensor([7.0, 8.0])
        got.append((e.numpy().copy(), base.numpy().copy()))
        with pytest.raises(RuntimeError, match="more than one element of the written-to"):
            e[:, 0] = lib.tensor([3.0, 4.0, 5.0])
    np.testing.assert_array_equal(got[0][0], got[1][0])
    np.testing.assert_array_equal(got[0][1], got[1][1])


def test_setitem_double_backward(torch):
    def fn(L, x):
        y = x * 1
        y[0] = x[1] ** 2
        y[:, 1] = 3.0
        y[1, ix(L, [0, 2])] = x[0, :2] * x[1, 1]
        g, = L.autograd.grad((y ** 3).sum(), x, create_graph=True)
        return g * g
    compare(torch, fn, np.array([[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]]))
