"""Regression tests against torch for the fuzzer's findings in ember/ops/extra.py: addr's dtype and
scalar rules, cummax/cummin's check order, heaviside of NaN, histogram/histogramdd's checks and
bin edges, cdist's dtypes and NaN gradients, cov's checks, gradient's checks, bincount, and
torch's graph nodes of gradient/trapezoid/frexp."""
import math

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")


def _run(lib, fn):
    try:
        return "ok", fn(lib)
    except Exception as e:  # noqa: BLE001  (compared between the libraries)
        return "raise", (type(e).__name__, str(e))


def _same(fn, rtol=1e-6, atol=1e-7):
    """``fn(ember)`` and ``fn(torch)`` agree: both raise the same class and message, or give the
    same dtypes and values (a tensor or a tuple of them)."""
    e, t = _run(ember, fn), _run(torch, fn)
    assert e[0] == t[0], (e, t)
    if e[0] == "raise":
        assert e[1] == t[1]
        return
    outs_e, outs_t = _flat(e[1]), _flat(t[1])
    assert len(outs_e) == len(outs_t)
    for a, b in zip(outs_e, outs_t):
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        np.testing.assert_allclose(a.detach().float().numpy() if b.dtype == torch.bfloat16
                                   else a.detach().numpy(),
                                   b.detach().float().numpy() if b.dtype == torch.bfloat16
                                   else b.detach().numpy(), rtol=rtol, atol=atol)


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _t(L, values, dtype="float32", grad=False):
    t = L.tensor(values, dtype=getattr(L, dtype))
    return t.requires_grad_(True) if grad else t


ADDR = [
    lambda L: L.addr(L.ones(2, 3, dtype=L.int64), L.ones(2, dtype=L.int64),
                     L.ones(3, dtype=L.int64), beta=0.5),
    lambda L: L.addr(L.ones(2, 3, dtype=L.int64), L.ones(2, dtype=L.int64),
                     L.ones(3, dtype=L.int64), alpha=0.5),
    lambda L: L.addr(L.ones(2, 3, dtype=L.bool), L.ones(2, dtype=L.bool),
                     L.zeros(3, dtype=L.bool), beta=2, alpha=3),
    lambda L: L.addr(L.ones(2, 3), L.ones(2), L.ones(3), beta=True),
    lambda L: L.addr(L.ones(2, 3), L.ones(2), L.ones(3), beta=1j),
    lambda L: L.addr(L.tensor(2., dtype=L.float64), L.ones(2), L.zeros(3)),
    lambda L: L.addr(L.ones(3, 1), L.ones(2), L.zeros(3)),
    lambda L: L.ones(3, 2).addr_(L.ones(2), L.zeros(3)),
    lambda L: L.ones(2, 3, dtype=L.int64).addr_(L.ones(2, dtype=L.int64),
                                                L.ones(3, dtype=L.int64), beta=0.5),
    lambda L: L.ones(2, 3, dtype=L.bool).addr_(L.ones(2, dtype=L.bool),
                                               L.ones(3, dtype=L.bool), beta=2, alpha=0),
    # (alpha * vec1) * vec2, torch's order: it decides inf * 0 in complex
    lambda L: L.addr(L.ones(2, 2, dtype=L.complex128), L.tensor([1.5, 2.], dtype=L.complex128),
                     L.tensor([INF, 1.], dtype=L.complex128), beta=0.5, alpha=2),
]


@pytest.mark.parametrize("k", range(len(ADDR)))
def test_addr_dtypes_scalars_shapes(k):
    _same(ADDR[k])


def test_addr_inplace_mixed_dtype_backward():
    grads = []
    for L in (ember, torch):
        a = L.ones(1, 3, requires_grad=True)
        v1 = L.tensor([0.5], dtype=L.float64, requires_grad=True)
        v2 = L.tensor([1., 2., 3.])
        r = (a * 1).addr_(v1, v2)
        assert r.dtype == L.float32
        r.backward(L.ones(1, 3))
        grads.append((a.grad.numpy(), v1.grad.numpy(), str(v1.grad.dtype)))
    np.testing.assert_allclose(grads[0][0], grads[1][0])
    np.testing.assert_allclose(grads[0][1], grads[1][1])
    assert grads[0][2].split(".")[-1] == grads[1][2].split(".")[-1]


@pytest.mark.parametrize("fn", [
    lambda L: L.cummax(L.ones(2, 3, dtype=L.complex64), 2),
    lambda L: L.cummin(L.ones(2, 3, dtype=L.complex64), -3),
    lambda L: L.ones(2, 3, dtype=L.complex64).cummax(1),
])
def test_cummax_dim_checked_before_dtype(fn):
    _same(fn)


def test_heaviside_nan_and_inplace():
    _same(lambda L: L.heaviside(_t(L, [NAN, 0., -1., 2., -INF]), _t(L, [0.5])))
    _same(lambda L: _t(L, [[NAN], [0.], [3.]], "float64").heaviside_(_t(L, [2.], "float64")))


HIST = [
    lambda L: L.histogram(L.tensor(-INF, dtype=L.float64), 2),
    lambda L: L.histogram(_t(L, [1., NAN]), 2),
    lambda L: L.histogram(_t(L, [1., INF]), 2),
    lambda L: L.histogram(_t(L, [1., 2.]), 2, range=(0., INF)),
    lambda L: L.histogram(_t(L, [1., 2.]), 2, range=(3.5, 1.25)),
    lambda L: L.histogram(_t(L, [1., 2.]), 2, range=(0., 1., 2.)),
    lambda L: L.histogram(_t(L, [1., 2.]), _t(L, [0., 1.], "float64")),
    lambda L: L.histogram(_t(L, [1., 2.]), _t(L, [[0., 1., 3.]])),
    lambda L: L.histogram(_t(L, [1., 2.]), _t(L, [0.])),
    lambda L: L.histogram(_t(L, [1., 2., 0.5, 2.5]), _t(L, [0., 3., 1., 2.])),
    lambda L: L.histogram(_t(L, [1., 2.]), _t(L, [0., NAN, 3.])),
    lambda L: L.histogram(L.ones(3, dtype=L.int64), 3),
    lambda L: L.histogram(L.ones(3, dtype=L.int64), 3, range=(0., 1.)),
    lambda L: L.histogram(L.ones(3, dtype=L.float16), 3),
    lambda L: L.histogram(L.ones(3, dtype=L.float16), 3, range=(0., 1.)),
    lambda L: L.histogram(L.ones(0, dtype=L.bool), 3),
    lambda L: L.histogram(L.ones(3), 3, weight=L.ones(3, dtype=L.int64)),
    lambda L: L.histogram(L.ones(3), 3, weight=L.ones(4)),
    lambda L: L.histogram(L.ones(3), 3, range=(0, 2), density=True),
    lambda L: L.histogram(L.arange(12.).reshape(2, 3, 2) / 7, 30, range=(0.1, 1.3),
                          weight=L.arange(12.), density=True),
    lambda L: L.histogramdd(_t(L, [[1., NAN]]), 2),
    lambda L: L.histogramdd(_t(L, [[1., INF]]), 2),
    lambda L: L.histogramdd(L.ones(3, 2), 2, range=[3., 1., 0., 1.], weight=L.ones(2)),
    lambda L: L.histogramdd(L.ones(3, 2), [0, -2]),
    lambda L: L.histogramdd(L.ones(3, 2), [2, 2, 2], range=[1., 2.]),
    lambda L: L.histogramdd(L.ones(3, 2, dtype=L.float16), [2, 2]),
    lambda L: L.histogramdd(L.ones(3, 2), [_t(L, [0., 1.]), _t(L, [0., 1.], "float64")]),
    lambda L: L.histogramdd(L.ones(3, 2), [_t(L, [0., 1.]), _t(L, [])]),
    lambda L: L.histogramdd(L.ones(3, 2), [_t(L, [0., 1.])]),
    lambda L: L.histogramdd(L.ones(1, 2), [2, 2], weight=L.tensor(1.)),
    lambda L: L.histogramdd(L.arange(12.).reshape(2, 3, 2), [2, 3],
                            weight=L.arange(6.).reshape(2, 3), density=True),
    lambda L: L.histc(_t(L, [1., INF]), 2),
]


@pytest.mark.parametrize("k", range(len(HIST)))
def test_histogram_checks_and_bins(k):
    _same(HIST[k])


CDIST = [
    lambda L: L.cdist(L.ones(2, 3, dtype=L.float16), L.ones(2, 3, dtype=L.float16)),
    lambda L: L.cdist(L.ones(2, 3, dtype=L.bfloat16), L.ones(2, 3, dtype=L.bfloat16), p=1),
    lambda L: L.cdist(L.ones(2, 3), L.ones(2, 3, dtype=L.float64)),
    lambda L: L.cdist(L.ones(2, 3), L.ones(2, 3, dtype=L.int64), p=-1),
    lambda L: L.cdist(L.ones(0, 3, dtype=L.float16), L.ones(2, 3)),
    lambda L: L.cdist(L.ones(30, 3), L.ones(30, 3, dtype=L.float64)),
    lambda L: L.cdist(_t(L, [[NAN, 1.], [2., 3.]]), _t(L, [[1., 1.]]), p=math.inf),
    lambda L: L.cdist(_t(L, [[NAN, 1.], [2., 3.]]), _t(L, [[1., 1.]]), p=0),
]


@pytest.mark.parametrize("k", range(len(CDIST)))
def test_cdist_dtypes_and_nan(k):
    _same(CDIST[k])


@pytest.mark.parametrize("p", [0, 0.5, 1, 1.5, 2, 3, math.inf])
def test_cdist_gradient_nan_inf_and_zero_distance(p):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 3, 2)), rng.standard_normal((2, 4, 2))
    a[0, 0, 0], b[1, 2, 1] = np.nan, np.inf
    b[0, 1] = a[0, 1]                        # a zero distance
    up = rng.standard_normal((2, 3, 4))
    res = []
    for L in (ember, torch):
        x, y = L.tensor(a, requires_grad=True), L.tensor(b, requires_grad=True)
        L.cdist(x, y, p).backward(L.tensor(up))
        res.append((x.grad.numpy(), y.grad.numpy()))
    for u, v in zip(*res):
        np.testing.assert_allclose(u, v, rtol=1e-7, atol=1e-12)


@pytest.mark.parametrize("fn", [
    lambda L: L.cov(L.ones(2, 3, dtype=L.bool)),
    lambda L: L.corrcoef(L.ones(2, 3, dtype=L.bool)),
    lambda L: L.cov(L.ones(2, 3), fweights=L.ones(3)),
    lambda L: L.cov(L.ones(2, 3), aweights=L.ones(3, dtype=L.int64)),
    lambda L: L.cov(L.ones(2, 3), fweights=L.ones(1, 3, dtype=L.int64)),
    lambda L: L.cov(L.ones(2, 3), fweights=L.ones(4, dtype=L.int64)),
    lambda L: L.cov(L.ones(2, 3), fweights=-L.ones(3, dtype=L.int64)),
    lambda L: L.cov(L.ones(2, 3), aweights=_t(L, [1., NAN, 2.])),
    lambda L: L.cov(L.ones(2, 3), aweights=L.zeros(3)),
])
def test_cov_checks(fn):
    _same(fn)


@pytest.mark.parametrize("fn", [
    lambda L: L.gradient(L.tensor([True, False, True]))[0],
    lambda L: L.gradient(L.tensor([True, False, True]), edge_order=2)[0],
    lambda L: L.gradient(L.tensor([True, False, True]), spacing=[_t(L, [1., 2., 4.])])[0],
    lambda L: L.gradient(L.tensor([1, 5, 2], dtype=L.uint8))[0],
    lambda L: L.gradient(L.tensor([1, 5, 2, 7]), spacing=3, edge_order=2)[0],
    lambda L: L.gradient(L.ones(3, 4), spacing=[1., 2., 3.])[0],
    lambda L: L.gradient(L.ones(3, 4), edge_order=3)[0],
    lambda L: L.gradient(L.ones(3, 4), dim=[0, 0])[0],
    lambda L: L.gradient(L.arange(12.).reshape(3, 4) ** 2, spacing=[0.3, 2], edge_order=2),
])
def test_gradient_checks(fn):
    _same(fn)


@pytest.mark.parametrize("fn", [
    lambda L: L.bincount(L.tensor([], dtype=L.int64), weights=L.ones(1, dtype=L.int32),
                         minlength=3),
    lambda L: L.bincount(L.tensor([1, 3, 1], dtype=L.int8), weights=L.tensor([1, 2, 3])),
    lambda L: L.bincount(L.tensor([1, 3, 1]), weights=_t(L, [0.1, 0.2, 0.7])),
    lambda L: L.bincount(L.tensor([1, 3, 1]), weights=L.ones(2)),
    lambda L: L.bincount(L.tensor([1, -3, 1])),
    lambda L: L.bincount(L.tensor([1., 3.])),
    lambda L: L.bincount(L.tensor([1, 3]), minlength=-1),
    lambda L: L.tensor([2, 0]).bincount(minlength=5),
])
def test_bincount(fn):
    _same(fn)


def test_bincount_weights_have_no_derivative():
    msgs = []
    for L in (ember, torch):
        out = L.bincount(L.tensor([0, 2]), weights=L.ones(2, requires_grad=True))
        with pytest.raises(RuntimeError) as e:
            out.sum().backward()
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def _nodes(t):
    order, i = [t.grad_fn], 0
    while i < len(order):
        for nxt, _ in order[i].next_functions:
            if nxt is not None and nxt not in order:
                order.append(nxt)
        i += 1
    return [(type(n).__name__, len(n.next_functions)) for n in order]


@pytest.mark.parametrize("fn", [
    lambda L, x: L.gradient(x)[1],
    lambda L, x: L.gradient(x, spacing=0.5, dim=1, edge_order=2)[0],
    lambda L, x: L.trapezoid(x),
    lambda L, x: L.trapz(x, dx=0.5, dim=0),
    lambda L, x: L.cumulative_trapezoid(x),
    lambda L, x: L.cumulative_trapezoid(x, dx=2.0, dim=0),
    lambda L, x: L.trapezoid(x, L.tensor([0., 0.5, 1.5, 3.], dtype=L.float64)),
    lambda L, x: L.frexp(x * 10)[0],
])
def test_composite_graph_nodes(fn):
    a = np.random.default_rng(0).standard_normal((3, 4))
    sigs = [_nodes(fn(L, L.tensor(a, requires_grad=True))) for L in (ember, torch)]
    assert sigs[0] == sigs[1]


def test_frexp_values_and_gradient():
    a = np.array([1e-310, 3., -5., 0.375, 2.0 ** 130], dtype=np.float64)
    res = []
    for L in (ember, torch):
        x = L.tensor(a, requires_grad=True)
        m, e = L.frexp(x)
        m.backward(L.ones(5, dtype=L.float64))
        res.append((m.detach().numpy(), e.numpy(), str(e.dtype), x.grad.numpy()))
    for u, v in zip(res[0], res[1]):
        if isinstance(u, str):
            assert u.split(".")[-1] == v.split(".")[-1]
        else:
            np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("fn", [
    lambda L: L.tensor(1.).addmv_(L.ones(3, 2), L.ones(2)),
    lambda L: L.ones(1).addmv_(L.ones(3, 2), L.ones(2)),
    lambda L: L.ones(3).addmv_(L.ones(3, 2), L.ones(2), beta=0.5, alpha=2),
    lambda L: L.ones(1, 2).addmm_(L.ones(3, 2), L.ones(2, 2)),
    lambda L: L.ones(1, 2).addmm_(L.ones(3, 2), L.ones(2, 2, dtype=L.float64)),
    lambda L: L.tensor(True).addmm_(L.ones(2, 1, dtype=L.bool), L.ones(1, 1, dtype=L.bool)),
    lambda L: L.ones(3, 2).baddbmm_(L.ones(1, 3, 2), L.ones(1, 2, 2)),
    lambda L: L.ones(2, dtype=L.bool).baddbmm_(L.ones(2, 1, 1, dtype=L.bool),
                                               L.ones(2, 1, 2, dtype=L.bool)),
])
def test_inplace_products_keep_the_input_shape(fn):
    _same(fn)
