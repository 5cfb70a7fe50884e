"""Session 7 fidelity fixes (second round) of the creation, random, scatter/index, sorting and
miscellaneous op families, checked against torch: errors (class and message), dtypes, values,
graph nodes and gradients."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _outcome(fn, lib, values=True):
    """What ``fn(lib)`` gives: the exception class, or the result's dtype, shape and values."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(lib)
    except Exception as e:  # noqa: BLE001 (the class is what is compared)
        return ("raise", type(e).__name__)
    rs = r if isinstance(r, tuple) else (r,)
    out = []
    for t in rs:
        if not hasattr(t, "shape"):
            out.append(t)
            continue
        a = t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)
        out.append((str(t.dtype).split(".")[-1], tuple(a.shape),
                    a.tolist() if values else None))
    return tuple(out)


def _same(fn, values=True):
    t = _outcome(fn, torch, values)
    e = _outcome(fn, ember, values)
    assert e == t, "ember %s, torch %s" % (e, t)


def _same_error(fn):
    """Both raise the same class with the same message."""
    msgs = []
    for lib in (torch, ember):
        with pytest.raises(Exception) as info:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn(lib)
        msgs.append((type(info.value).__name__, str(info.value).split("\n")[0]))
    assert msgs[1] == msgs[0]


CREATION_ERRORS = [
    lambda L: L.empty(-2, 0.5),
    lambda L: L.zeros(2, 0.5),
    lambda L: L.ones(0.5),
    lambda L: L.rand([2.0]),
    lambda L: L.randn(2, 0.5),
    lambda L: L.eye(-2, 5),
    lambda L: L.eye(2, -5),
    lambda L: L.range(0, 3, 0),
    lambda L: L.range(2, 0),
    lambda L: L.arange(2, 0),
    lambda L: L.arange(L.tensor(3.0, requires_grad=True)),
    lambda L: L.arange(L.ones(2)),
    lambda L: L.scalar_tensor(L.ones(1, 1)),
    lambda L: L.scalar_tensor(1 + 2j),
    lambda L: L.poisson(L.ones(2, dtype=L.int64)),
    lambda L: L.poisson(L.ones(2, dtype=L.complex128)),
    lambda L: L.bernoulli(L.ones(2, dtype=L.int32)),
    lambda L: L.bernoulli(L.ones(2, dtype=L.complex64)),
    lambda L: L.bernoulli(L.ones(2, dtype=L.complex64), 0.5),
    lambda L: L.normal(L.ones(2, dtype=L.int64), 1.0),
    lambda L: L.normal(L.ones(2, dtype=L.complex128, requires_grad=True)),
    lambda L: L.randint_like(L.ones(2)),
    lambda L: L.rand(0, dtype=L.int64),
]


@pytest.mark.parametrize("fn", CREATION_ERRORS, ids=range(len(CREATION_ERRORS)))
def test_creation_errors(fn):
    _same_error(fn)


CREATION_OK = [
    lambda L: L.arange(L.tensor(3.0)),
    lambda L: L.scalar_tensor(True),
    lambda L: L.eye(0, 3),
    lambda L: L.range(2, 0, -1),
    lambda L: L.randn(0, dtype=L.int64),
    lambda L: L.bernoulli(L.zeros(0, dtype=L.complex64), 0.5),
    lambda L: L.normal(L.zeros(0, dtype=L.int64), 1),
]


@pytest.mark.parametrize("fn", CREATION_OK, ids=range(len(CREATION_OK)))
def test_creation_values(fn):
    _same(fn)


def test_empty_strided_keeps_strides():
    for size, stride in (((2, 3), (1, 2)), ((2, 3), (0, 0)), ((3,), (2,))):
        e = ember.empty_strided(size, stride)
        t = torch.empty_strided(size, stride)
        assert e.stride() == t.stride() and tuple(e.shape) == tuple(t.shape)
    assert ember.zeros(2).new_empty_strided((2, 3), (1, 2)).stride() == (1, 2)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_random_streams(dtype):
    for name in ("rand", "randn"):
        vals = []
        for lib in (torch, ember):
            lib.manual_seed(0)
            vals.append(getattr(lib, name)(10, dtype=getattr(lib, dtype)).numpy())
        np.testing.assert_allclose(vals[1], vals[0], rtol=1e-6)
    outs = []
    for lib in (torch, ember):
        lib.manual_seed(1)
        outs.append(lib.zeros(20, dtype=getattr(lib, dtype)).normal_(1, 2).numpy())
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-6)


def test_poisson_infinite_rate_and_stream():
    outs = []
    for lib in (torch, ember):
        lib.manual_seed(3)
        x = lib.tensor([1.0, float("inf"), 20.0, float("inf"), 3.0], dtype=lib.float64)
        outs.append((lib.poisson(x).numpy(), lib.rand(2).numpy()))
    np.testing.assert_array_equal(outs[1][0], outs[0][0])
    np.testing.assert_array_equal(outs[1][1], outs[0][1])


@pytest.mark.parametrize("make,node", [
    (lambda L, x: L.normal(x, 2.0), "NormalBackward1"),
    (lambda L, x: L.normal(1.0, x), "NormalBackward2"),
    (lambda L, x: L.normal(x, x), "NormalBackward3"),
    (lambda L, x: L.poisson(x), "PoissonBackward0"),
    (lambda L, x: L.bernoulli(x), "BernoulliBackward0"),
])
def test_random_nodes_give_zero_grads(make, node):
    grads = []
    for lib in (torch, ember):
        x = lib.rand(3, requires_grad=True)
        out = make(lib, x)
        assert type(out.grad_fn).__name__ == node
        out.backward(lib.ones(3))
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


def test_bernoulli_scalar_p_has_no_derivative():
    for lib in (torch, ember):
        x = lib.rand(3, requires_grad=True)
        out = lib.bernoulli(x, 0.3)
        assert type(out.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::bernoulli"):
            out.sum().backward()


FILLS = ["normal_", "uniform_", "exponential_", "cauchy_", "log_normal_", "geometric_",
         "bernoulli_", "random_"]


@pytest.mark.parametrize("name", FILLS)
@pytest.mark.parametrize("dtype", ["int64", "bool", "complex128", "float16"])
@pytest.mark.parametrize("n", [2, 0])
def test_random_fill_dtype_checks(name, dtype, n):
    args = (0.5,) if name == "geometric_" else ()
    _same(lambda L: getattr(L.zeros(n, dtype=getattr(L, dtype)), name)(*args), values=False)


@pytest.mark.parametrize("fn", [
    lambda L: L.zeros(2, dtype=L.int64).normal_(-2, -1),
    lambda L: L.zeros(2, dtype=L.int64).log_normal_(1, -1),
    lambda L: L.zeros(2, dtype=L.int64).exponential_(-1),
    lambda L: L.zeros(2, dtype=L.bool).geometric_(1.5),
    lambda L: L.zeros(2, dtype=L.complex64).bernoulli_(2),
    lambda L: L.zeros(2, dtype=L.int64).cauchy_(0, -1),
])
def test_random_fill_parameter_checks_come_first(fn):
    _same_error(fn)


def test_to_backward_takes_real_part_of_complex_grad():
    grads = []
    for lib in (torch, ember):
        x = lib.ones(3, requires_grad=True)
        y = x.to(lib.complex64)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            y.backward(lib.ones(3, dtype=lib.complex64) * (1 + 2j))
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


def _chain(t):
    out, fn = [], t.grad_fn
    while fn is not None:
        out.append(type(fn).__name__)
        nxt = [f for f, _ in fn.next_functions if f is not None]
        fn = nxt[0] if nxt else None
    return out


@pytest.mark.parametrize("fn", [
    lambda L, x: x[1:, None, ::2],
    lambda L, x: x[-1, ..., 1:],
    lambda L, x: x[0, 1],
    lambda L, x: x[:, 0],
    lambda L, x: x[...],
    lambda L, x: x[1:],
    lambda L, x: x[None, 1:, [0, 1]],
    lambda L, x: x[0, 1:][[0, 2]],
    lambda L, x: x.repeat_interleave(2, dim=-1),
    lambda L, x: x.repeat_interleave(2),
    lambda L, x: x.t().repeat_interleave(2),
    lambda L, x: x[0].repeat_interleave(2),
    lambda L, x: x.repeat_interleave(L.tensor([1, 2, 1]), dim=0),
    lambda L, x: x.put(L.tensor([1, 7]), L.tensor([5.0, 6.0], dtype=L.float64)),
])
def test_graph_chains(fn):
    chains, grads = [], []
    for lib in (torch, ember):
        x = lib.tensor(np.arange(24.0).reshape(3, 8), requires_grad=True)
        out = fn(lib, x)
        chains.append(_chain(out))
        out.backward(lib.tensor(np.random.default_rng(0).standard_normal(tuple(out.shape))))
        grads.append(x.grad.numpy())
    assert chains[1] == chains[0]
    np.testing.assert_allclose(grads[1], grads[0])


def _T(L, v, **kw):
    return L.tensor(v, **kw)


SCATTER = [
    lambda L: L.index_add(_T(L, 1.5), 0, _T(L, [0, 0]), _T(L, 2.0)),
    lambda L: L.index_add(_T(L, 1.5), 0, _T(L, [0]), _T(L, [2.0])),
    lambda L: L.index_add(L.zeros(3), 0, _T(L, [1]), _T(L, 1.0)),
    lambda L: L.index_add(L.zeros(3, 0), 1, _T(L, [0, 1]), L.ones(3, 2)),
    lambda L: L.index_add(L.zeros(0), 0, _T(L, [0, 1]), L.ones(2)),
    lambda L: L.index_add(L.zeros(3, 2), 1, _T(L, [0, 1]), L.ones(3)),
    lambda L: L.index_add(L.zeros(2, 3), 0, _T(L, [0, 0]), L.ones(3, 3)),
    lambda L: L.index_copy(_T(L, 1.5), 0, _T(L, [0, 0]), _T(L, 2.0)),
    lambda L: L.index_copy(_T(L, 1.5), 0, _T(L, [0, 0]), _T(L, [2.0, 3.0])),
    lambda L: L.index_copy(_T(L, 1.5), 0, _T(L, [0]), _T(L, [2.0, 3.0])),
    lambda L: L.index_copy(L.zeros(0), 0, _T(L, [0, 0]), _T(L, [2.0, 3.0])),
    lambda L: L.index_copy(L.zeros(1, 3), 0, _T(L, [1]), L.ones(1, 3)),
    lambda L: L.index_copy(L.zeros(2, 3), 0, _T(L, [0, 0], dtype=L.int32), L.ones(2, 3)),
    lambda L: L.index_fill(L.zeros(0, 3), 0, _T(L, [0, 0]), 1.0),
    lambda L: L.index_fill(_T(L, 1.5), 0, _T(L, [1]), 1.0),
    lambda L: L.index_select(L.zeros(3, 0), 1, _T(L, [0, 0])),
    lambda L: L.index_select(L.zeros(3, 0), 0, _T(L, [5])),
    lambda L: L.index_select(L.zeros(0), 0, _T(L, [0, 0])),
    lambda L: L.repeat_interleave(_T(L, 1.5), 2, -1),
    lambda L: L.repeat_interleave(_T(L, [1.0, 2.0]), _T(L, [[1, 2]]), 0),
    lambda L: L.repeat_interleave(_T(L, [1.0, 2.0]), _T(L, [1.0, 2.0]), 0),
    lambda L: L.repeat_interleave(_T(L, [1.0, 2.0]), -1, 0),
    lambda L: L.repeat_interleave(_T(L, [1.0, 2.0])),
    lambda L: L.repeat_interleave(_T(L, [1.0, 2.0]), 2, 0, output_size=3),
    lambda L: L.take_along_dim(L.zeros(0), _T(L, [0])),
    lambda L: L.take_along_dim(L.zeros(2, 2, 2).transpose(0, 1), _T(L, [], dtype=L.int64)),
    lambda L: L.take_along_dim(L.arange(3.0), _T(L, [-1]), 0),
    lambda L: L.take_along_dim(L.zeros(2, 2, 2), _T(L, [-1])),
    lambda L: L.take(L.zeros(0), _T(L, [0])),
    lambda L: L.gather(L.zeros(3), 0, _T(L, [-1])),
    lambda L: _T(L, 1.5).unfold(0, 0, 2),
    lambda L: _T(L, 1.5).unfold(1, 1, 1),
    lambda L: L.put(L.zeros(3), _T(L, [0, 1]), _T(L, [1.0])),
    lambda L: L.put(L.zeros(3), _T(L, [0]), _T(L, [1.0], dtype=L.float64)),
    lambda L: L.index_put_(L.zeros(2, 3, dtype=L.float64), (_T(L, [0, 1]),),
                           L.ones(2, 3, dtype=L.float64, requires_grad=True), accumulate=True),
]


@pytest.mark.parametrize("fn", SCATTER, ids=range(len(SCATTER)))
def test_scatter_index_edge_cases(fn):
    _same(fn)


def test_index_put_inplace_records_value_grad():
    for lib in (torch, ember):
        x = lib.zeros(2, 3, dtype=lib.float64)
        v = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
        y = x.index_put_((lib.tensor([0, 1]),), v, accumulate=True)
        assert type(y.grad_fn).__name__ == "IndexPutBackward0"


def _search_inputs(L):
    rng = np.random.default_rng(0)
    a = rng.uniform(-2, 2, (3, 5))
    v = rng.uniform(-2, 2, (3, 4))
    a[0, 1], a[1, 3], v[0, 0] = np.nan, np.inf, np.nan
    return L.tensor(a), L.tensor(v)


SORTING = [
    lambda L: L.searchsorted(*_search_inputs(L)),
    lambda L: L.searchsorted(*_search_inputs(L), right=True),
    lambda L: L.searchsorted(_search_inputs(L)[0][0], _search_inputs(L)[1]),
    lambda L: L.bucketize(_search_inputs(L)[1], _search_inputs(L)[0][1]),
    lambda L: L.searchsorted(_T(L, [1.0, 2.0]), 0.5 + 1j),
    lambda L: L.searchsorted(_T(L, [1, 2, 3]), _T(L, [True])),
    lambda L: L.searchsorted(_T(L, [True, False]), _T(L, [True])),
    lambda L: L.searchsorted(_T(L, [1.0, 2.0]), _T(L, [], dtype=L.complex64)),
    lambda L: L.searchsorted(_T(L, 1.0), _T(L, [1.0])),
    lambda L: L.searchsorted(_T(L, [[1.0, 2.0]]), _T(L, 1.0)),
    lambda L: L.searchsorted(L.zeros(3, 0), L.zeros(3, 2)),
    lambda L: L.bucketize(_T(L, [1, 2]), _T(L, [True])),
    lambda L: L.sort(L.zeros(2, 3, dtype=L.complex64), 2),
    lambda L: L.argsort(L.zeros(2, 3, dtype=L.complex64), 2),
    lambda L: L.topk(L.zeros(2, 3), 1, largest=1),
    lambda L: L.topk(L.zeros(2, 3), 1, sorted=0),
    lambda L: L.kthvalue(L.zeros(0, dtype=L.bool), 1),
    lambda L: L.kthvalue(L.zeros(2, 0, dtype=L.bool), 1, 0),
    lambda L: L.kthvalue(L.zeros(2, 1, 3, dtype=L.bool), 2, -2),
]


@pytest.mark.parametrize("fn", SORTING, ids=range(len(SORTING)))
def test_sorting_edge_cases(fn):
    _same(fn)


@pytest.mark.parametrize("fn,aten", [
    (lambda L, x: L.unique(x), "_unique2"),
    (lambda L, x: L.unique(x.view(3, 1), dim=0), "unique_dim"),
    (lambda L, x: L.unique_consecutive(x), "unique_consecutive"),
])
def test_unique_has_no_derivative(fn, aten):
    for lib in (torch, ember):
        out = fn(lib, lib.tensor([1.0, 1.0, 2.0], requires_grad=True))
        with pytest.raises(NotImplementedError, match=aten):
            out.sum().backward()


EXTRA = [
    lambda L: L.cummax(L.zeros(0), 2),
    lambda L: L.cummin(L.zeros(2, 0), 5),
    lambda L: L.cummax(_T(L, 1.0), 1),
    lambda L: L.cummax(_T(L, 1.0 + 1j), 0),
    lambda L: L.cummax(L.zeros(0, dtype=L.complex128, requires_grad=True), -1),
    lambda L: L.cummax(L.zeros(2, dtype=L.complex128), 0),
    lambda L: L.unravel_index(_T(L, 3), 0),
    lambda L: L.unravel_index(_T(L, [], dtype=L.int64), (0,)),
    lambda L: L.unravel_index(_T(L, 3), (2, -1)),
    lambda L: L.unravel_index(_T(L, -7), (2, 3)),
    lambda L: L.unravel_index(_T(L, 1), 2.5),
    lambda L: L.fill(L.zeros(0, dtype=L.uint8), -2),
    lambda L: L.fill(L.zeros(2, dtype=L.uint8), -2),
    lambda L: L.fill(L.zeros(2, dtype=L.uint8), 300),
    lambda L: L.fill(L.zeros(2), 1 + 2j),
    lambda L: L.fill(L.zeros(2, dtype=L.int64), -2.7),
    lambda L: L.fill(L.zeros(2, dtype=L.float16), 1e6),
    lambda L: L.fill(L.zeros(2, dtype=L.uint8), _T(L, -2)),
    lambda L: L.fill(L.zeros(2), _T(L, 1 + 2j)),
    lambda L: L.fill(L.zeros(2, dtype=L.int32), float("nan")),
    lambda L: L.histogramdd(_T(L, 1.0), float("inf")),
    lambda L: L.histogramdd(_T(L, 1.0), 2),
    lambda L: L.histogramdd(L.zeros(4), 2),
    lambda L: L.histogramdd(L.zeros(1, 1, dtype=L.float64), 0),
    lambda L: L.histogramdd(L.zeros(2, 2, 2, dtype=L.int32), 1),
    lambda L: L.histogramdd(L.zeros(3, 0), 2).hist,
    lambda L: L.histogramdd(L.zeros(0, 2), 2).bin_edges,
    lambda L: L.histogramdd(L.zeros(2, 1, 3), -2),
    lambda L: L.histogramdd(L.zeros(2, 1, 3), [2, 2]),
    lambda L: L.histogramdd(L.zeros(2, 1, 3), 2, range=[1.0, 0.0, 0, 1, 0, 1]),
    lambda L: L.histogramdd(L.zeros(2, 1, 3), 2, weight=L.ones(3)),
    lambda L: L.ldexp(L.zeros(3), L.ones(3, dtype=L.bool)),
    lambda L: L.ldexp(L.zeros(2, dtype=L.bool), L.zeros(2, dtype=L.bool)),
    lambda L: L.zeros((), dtype=L.int64).ldexp_(L.zeros(0, dtype=L.bool)),
    lambda L: L.zeros(3, dtype=L.uint8).gcd_(L.zeros(1, 3, dtype=L.int32)),
    lambda L: L.zeros(0, dtype=L.int64).lcm_(_T(L, 1j, dtype=L.complex64)),
    lambda L: L.zeros(3).nextafter_(L.zeros(1, 3)),
    lambda L: L.tril_indices(-2, 5, 2),
    lambda L: L.triu_indices(2, -5),
]


@pytest.mark.parametrize("fn", EXTRA, ids=range(len(EXTRA)))
def test_extra_edge_cases(fn):
    _same(fn)


def _grads(fn, *arrays, dtypes, upstream_seed=0):
    out = []
    for lib in (torch, ember):
        xs = [lib.tensor(a, dtype=getattr(lib, d), requires_grad=True)
              for a, d in zip(arrays, dtypes)]
        y = fn(lib, *xs)
        g = np.random.default_rng(upstream_seed).standard_normal(tuple(y.shape))
        if y.dtype.is_complex:
            g = g + 1j * np.random.default_rng(upstream_seed + 1).standard_normal(tuple(y.shape))
        try:
            y.backward(lib.tensor(g, dtype=y.dtype))
        except RuntimeError as e:
            out.append(("raise", str(e)[:60]))
            continue
        out.append([x.grad.numpy() for x in xs])
    return out


def test_ldexp_complex_gradients():
    a, b = np.array([0.3 + 0.4j, -1.2 + 0.5j]), np.array([0.7 - 0.2j, 1.5 + 1.0j])
    t, e = _grads(lambda L, x, y: L.ldexp(x, y), a, b, dtypes=("complex128", "complex128"))
    for gt, ge in zip(t, e):
        np.testing.assert_allclose(ge, gt, rtol=1e-12)


@pytest.mark.parametrize("fn,dtypes", [
    (lambda L, x, y: L.ldexp(x, y), ("complex128", "float32")),
    (lambda L, x, y: L.dist(x, y), ("complex128", "float32")),
])
def test_complex_gradient_of_real_input_raises(fn, dtypes):
    a, b = np.array(0.5 + 0.5j), np.array(0.25)
    t, e = _grads(fn, a, b, dtypes=dtypes)
    assert t[0] == e[0] == "raise" and e[1] == t[1]


def test_addr_mixed_dtype_backward_raises():
    msgs = []
    for lib in (torch, ember):
        m = lib.zeros(0, 1, dtype=lib.float64)
        v1 = lib.zeros(0, dtype=lib.uint8)
        v2 = lib.ones(1, dtype=lib.float64, requires_grad=True)
        out = lib.addr(m, v1, v2)
        with pytest.raises(RuntimeError) as info:
            out.backward(lib.zeros(0, 1, dtype=lib.float64))
        msgs.append(str(info.value))
    assert msgs[1] == msgs[0]


def test_nextafter_gradients():
    for inplace in (False, True):
        grads = []
        for lib in (torch, ember):
            x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
            y = lib.tensor([1.0, -2.0, 2.0], dtype=lib.float64, requires_grad=True)
            out = x.clone().nextafter_(y) if inplace else lib.nextafter(x, y)
            assert type(out.grad_fn).__name__ == "NextafterBackward0"
            out.backward(lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64))
            grads.append((x.grad.numpy(), y.grad.numpy()))
        np.testing.assert_array_equal(grads[1][0], grads[0][0])
        np.testing.assert_array_equal(grads[1][1], grads[0][1])
