"""Indexing, gather/scatter, index_*, masked_*, sorting and searching against PyTorch."""
import numpy as np
import pytest

import ember
from oracle import compare

R = np.random.default_rng(2)


def rn(*shape, dtype=np.float64):
    return R.standard_normal(shape).astype(dtype)


def ix(L, a):
    return L.tensor(np.asarray(a, dtype=np.int64))


GETITEM = [
    (1,), (-1,), (slice(None, None, 2),), (slice(-3, None),), (Ellipsis, 1),
    (None, 0, Ellipsis, None), (1, slice(1, None, 2), -1), ([0, 2, 0],), ([[0, 1], [2, 2]],),
    (slice(None), [1, 0, 1]), ([0, 1], slice(None), [1, 2]), ([0, 1], [1, 2]),
    (slice(None), [0, 1], [1, 2]), (0, [0, 1], [1, 2]), (Ellipsis, [2, 2]),
    ([1, 0], None, slice(None)), (slice(1, 1),), ([],),
]


@pytest.mark.parametrize("index", GETITEM, ids=[str(i) for i in range(len(GETITEM))])
def test_getitem(torch, index):
    compare(torch, lambda L, x: x[tuple(ix(L, i) if isinstance(i, list) and i else i
                                        for i in index)], rn(3, 4, 3))
    compare(torch, lambda L, x: x[index], rn(3, 4, 3))


def test_getitem_masks(torch):
    x = rn(3, 4)
    m = x > 0
    compare(torch, lambda L, a: a[L.tensor(m)], x)
    compare(torch, lambda L, a: a[L.tensor(m[:, 0])], x)
    compare(torch, lambda L, a: a[:, L.tensor(m[0])], x)
    compare(torch, lambda L, a: a[L.tensor(m[:, 0]), 1:], x)
    compare(torch, lambda L, a: a[a > 0.5], x)


def test_getitem_grad_fn_names(torch):
    for fn in [lambda x: x[0], lambda x: x[:, 1], lambda x: x[None], lambda x: x[..., ::2],
               lambda x: x[[0, 1]], lambda x: x[x > 0], lambda x: x[0, 1:], lambda x: x[1:, 0],
               lambda x: x[:], lambda x: x[..., None], lambda x: x[None, 0]]:
        t = fn(torch.ones(2, 3, requires_grad=True)).grad_fn.name()
        e = fn(ember.ones(2, 3, requires_grad=True)).grad_fn.name()
        assert e == t


def test_setitem(torch):
    def f1(L, x, v):
        y = x * 1
        y[0, 1:] = v
        return y
    compare(torch, f1, rn(3, 4), rn(3))

    def f2(L, x, v):
        y = x * 1
        y[ix(L, [0, 2])] = v
        return y
    compare(torch, f2, rn(3, 4), rn(4))

    def f3(L, x):
        y = x * 1
        y[y > 0] = 0.0
        y[:, 0] = 5.0
        return y
    compare(torch, f3, rn(3, 4))

    def f4(L, x, v):
        y = x.clone()
        y[..., None, 1] = v
        return y.sum(0)
    compare(torch, f4, rn(3, 4), rn(1))


def test_repeated_index_accumulates(torch):
    compare(torch, lambda L, x: x[ix(L, [0, 0, 1, 0])], rn(3, 2))
    compare(torch, lambda L, x: x.index_select(0, ix(L, [2, 2, 0])), rn(3, 2))


G = [
    ("gather", lambda L, x: x.gather(1, ix(L, [[0, 0], [2, 1]])), (2, 3)),
    ("gather0", lambda L, x: L.gather(x, 0, ix(L, [[1, 0, 1]])), (2, 3)),
    ("gather_neg", lambda L, x: x.gather(-1, ix(L, [[2], [0]])), (2, 3)),
    ("scatter", lambda L, x: x.scatter(0, ix(L, [[1, 0, 1]]), 2.5), (2, 3)),
    ("scatter_src", lambda L, x: x.scatter(1, ix(L, [[2, 0], [1, 0]]), x.flip(0)[:, :2] * 3),
     (2, 3)),
    ("scatter_add", lambda L, x: x.scatter_add(1, ix(L, [[0, 0, 2], [1, 1, 1]]), x * 2),
     (2, 3)),
    ("scatter_add_small", lambda L, x: x.scatter_add(0, ix(L, [[1, 1]]), x[:1, :2]), (2, 3)),
    ("index_select", lambda L, x: x.index_select(-1, ix(L, [2, 0])), (2, 3)),
    ("index_add", lambda L, x: x.index_add(0, ix(L, [1, 1, 0]), x.repeat(2, 1)[:3] * 2),
     (2, 3)),
    ("index_add_alpha", lambda L, x: x.index_add(1, ix(L, [2]), x[:, :1], alpha=-2.0),
     (2, 3)),
    ("index_copy", lambda L, x: x.index_copy(1, ix(L, [2, 0]), x[:, :2] * 3), (2, 3)),
    ("index_fill", lambda L, x: x.index_fill(1, ix(L, [0, 2]), -1.0), (2, 3)),
    ("masked_fill", lambda L, x: x.masked_fill(x > 0, 0.5), (3, 4)),
    ("masked_fill_b", lambda L, x: x.masked_fill(L.tensor([True, False, True, False]), 1.0),
     (3, 4)),
    ("masked_select", lambda L, x: x.masked_select(x > 0), (3, 4)),
    ("masked_select_b", lambda L, x: L.masked_select(x, L.tensor([[True], [False], [True]])),
     (3, 4)),
    ("masked_scatter", lambda L, x: x.masked_scatter(x < 0, x.flip(0) * 2), (3, 4)),
    ("take", lambda L, x: x.take(ix(L, [[0, 5], [11, 5]])), (3, 4)),
    ("take_along_dim", lambda L, x: L.take_along_dim(x, ix(L, [[0], [2], [1]]), 1), (3, 4)),
    ("take_along_dim_b", lambda L, x: L.take_along_dim(x, ix(L, [[0, 3]]), 1), (3, 4)),
    ("take_along_dim_flat", lambda L, x: L.take_along_dim(x, ix(L, [1, 7])), (3, 4)),
    ("put", lambda L, x: x.put(ix(L, [0, 5]), x[0, :2] * 3), (3, 4)),
    ("put_acc", lambda L, x: x.put(ix(L, [0, 0]), x[0, :2] * 3, accumulate=True), (3, 4)),
]


@pytest.mark.parametrize("name,fn,shape", G, ids=[g[0] for g in G])
def test_index_ops(torch, name, fn, shape):
    compare(torch, fn, rn(*shape))
    compare(torch, fn, rn(*shape, dtype=np.float32))


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(torch, reduce, include_self):
    idx = [[0, 1, 0, 1], [2, 2, 0, 0]]
    compare(torch, lambda L, x, s: x.scatter_reduce(1, ix(L, idx), s, reduce,
                                                    include_self=include_self),
            rn(2, 3), rn(2, 4))
    compare(torch, lambda L, x, s: x.scatter_reduce(0, ix(L, [[1, 1, 0], [1, 0, 0]]), s,
                                                    reduce, include_self=include_self),
            np.array([[1.0, 2, 3], [2, 2, 2]]), np.array([[2.0, 2, 3], [2, 5, 3]]))


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
def test_index_reduce(torch, reduce):
    compare(torch, lambda L, x, s: x.index_reduce(0, ix(L, [0, 2, 0]), s, reduce,
                                                  include_self=False), rn(3, 2), rn(3, 2))


def test_inplace_variants(torch):
    def f(L, x, s):
        y = x * 1
        y.masked_fill_(y > 0, 0.0)
        y.index_add_(0, ix(L, [1, 1]), s)
        y.scatter_add_(1, ix(L, [[0, 0, 0], [1, 2, 1]]), s)
        y.scatter_(0, ix(L, [[1, 0, 1]]), s[:1] * 2)
        y.index_fill_(1, ix(L, [2]), 3.0)
        y.index_copy_(0, ix(L, [0]), s[1:] * s[1:])
        return y
    compare(torch, f, rn(2, 3), rn(2, 3))
    x = ember.zeros(3)
    x.masked_fill_(ember.tensor([True, False, True]), 2.0)
    assert x.tolist() == [2.0, 0.0, 2.0] and x._version == 1
    leaf = ember.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        leaf.index_fill_(0, ember.tensor([0]), 1.0)


def test_nonzero_argwhere(torch):
    x = np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]])
    compare(torch, lambda L, a: L.nonzero(a), x, grad=False)
    compare(torch, lambda L, a: L.argwhere(a), x, grad=False)
    compare(torch, lambda L, a: L.nonzero(a, as_tuple=True), x, grad=False)


SORTS = [
    ("sort", lambda L, x: x.sort()),
    ("sort_desc", lambda L, x: L.sort(x, dim=0, descending=True)),
    ("sort_stable", lambda L, x: x.sort(stable=True, dim=-1, descending=True)),
    ("argsort", lambda L, x: x.argsort(dim=0)),
    ("argsort_desc", lambda L, x: L.argsort(x, descending=True)),
    ("msort", lambda L, x: L.msort(x)),
    ("topk", lambda L, x: x.topk(2)),
    ("topk_small", lambda L, x: x.topk(2, dim=0, largest=False)),
    ("kthvalue", lambda L, x: x.kthvalue(2)),
    ("kthvalue_keep", lambda L, x: L.kthvalue(x, 3, 0, keepdim=True)),
]


@pytest.mark.parametrize("name,fn", SORTS, ids=[s[0] for s in SORTS])
def test_sorting(torch, name, fn):
    compare(torch, fn, rn(4, 5))


def test_sort_ties_stable(torch):
    x = np.array([[2.0, 1.0, 2.0, 1.0, np.nan, 2.0]])
    compare(torch, lambda L, a: L.sort(a, stable=True), x)
    compare(torch, lambda L, a: L.sort(a, descending=True, stable=True), x)
    compare(torch, lambda L, a: L.sort(a), np.array([3, 1, 2, 1]), grad=False)
    r = ember.sort(ember.tensor([3.0, 1.0]))
    assert r.values.tolist() == [1.0, 3.0] and r[1].tolist() == [1, 0]
    assert type(r).__name__ == "sort"


def test_unique(torch):
    x = np.array([[3, 1, 2], [1, 3, 3]])
    for kw in [{}, {"return_inverse": True}, {"return_counts": True},
               {"return_inverse": True, "return_counts": True}, {"dim": 0},
               {"dim": 1, "return_inverse": True, "return_counts": True}]:
        compare(torch, lambda L, a: L.unique(a, **kw), x, grad=False)
        compare(torch, lambda L, a: a.unique(sorted=True, **kw), x.astype(np.float32),
                grad=False)
    y = np.array([1, 1, 2, 2, 3, 1, 1, 2])
    for kw in [{}, {"return_inverse": True, "return_counts": True}]:
        compare(torch, lambda L, a: L.unique_consecutive(a, **kw), y, grad=False)
    z = np.array([[1, 1, 2], [1, 1, 2], [0, 0, 0]])
    compare(torch, lambda L, a: L.unique_consecutive(a, return_counts=True, dim=0), z,
            grad=False)


def test_searchsorted_bucketize(torch):
    seq = np.array([1.0, 3.0, 5.0, 7.0])
    vals = np.array([[0.0, 3.0, 6.0], [7.0, 8.0, 1.0]])
    for right in (False, True):
        compare(torch, lambda L, s, v: L.searchsorted(s, v, right=right), seq, vals,
                grad=False)
        compare(torch, lambda L, s, v: L.bucketize(v, s, right=right), seq, vals, grad=False)
    compare(torch, lambda L, s, v: L.searchsorted(s, v, side="right", out_int32=True),
            np.sort(rn(2, 5), -1), rn(2, 3), grad=False)
    compare(torch, lambda L, s: L.searchsorted(s, 4.0), seq, grad=False)


def test_index_gradcheck():
    x = ember.tensor(rn(3, 4), requires_grad=True)
    g = ember.autograd
    i = ember.tensor([[0, 2, 1, 0]])
    fns = [lambda t: t[[0, 0, 2]], lambda t: t[t > 0], lambda t: t.gather(0, i),
           lambda t: t.scatter_add(0, i, t[:1] * t[:1]), lambda t: t.sort(1).values,
           lambda t: t.topk(2).values, lambda t: t.masked_fill(t > 0, 1.0) * t,
           lambda t: t.index_add(1, ember.tensor([0, 0]), t[:, :2] ** 2),
           lambda t: t.scatter_reduce(0, i, t[1:2], "amax"),
           lambda t: t.scatter_reduce(0, i, t[1:2], "mean", include_self=False),
           lambda t: t.masked_scatter(t > 0, t * 2), lambda t: t.take(ember.tensor([1, 1]))]
    for fn in fns:
        assert g.gradcheck(fn, (x,))
        assert g.gradgradcheck(fn, (x,))


@pytest.mark.parametrize("fn", [
    lambda L: L.ones(2, 3)[2],
    lambda L: L.ones(2, 3)[:, -4],
    lambda L: L.ones(2, 3)[L.tensor([0, 5])],
    lambda L: L.ones(2, 3)[0, 0, 0],
    lambda L: L.ones(2, 3).gather(1, L.tensor([[3]])),
    lambda L: L.ones(2, 3).masked_fill(L.ones(2, 3), 0.0),
    lambda L: L.ones(2, 3).take(L.tensor([6])),
    lambda L: L.ones(2, 3).topk(4),
    lambda L: L.ones(2, 3).index_fill(1, L.tensor([0]), L.ones(2)),
    lambda L: L.ones(2, 3).select(1, 3),
])
def test_errors(torch, fn):
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(type(te.value)):
        fn(ember)
