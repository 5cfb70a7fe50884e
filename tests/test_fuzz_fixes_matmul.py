"""Regression tests for the matrix-product fuzzer fixes (issue 21), checked against torch:
products with nothing to sum (empty results, an empty inner dimension, no batch), torch's
dtype checks and their order, addmv's result shape for an empty matrix, tensordot's dot path,
linalg.multi_dot's order, bmm's own loop for small complex products, and einsum computed
(and graphed) as torch does."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _outcome(lib, fn):
    """``("ok", dtype, shape, values)`` or ``("raise", exception class, message)``."""
    try:
        out = fn(lib)
    except Exception as e:  # noqa: BLE001  (compared between the libraries)
        return ("raise", type(e).__name__, str(e))
    return ("ok", str(out.dtype).split(".")[-1], tuple(out.shape),
            np.asarray(out.detach().numpy(), dtype=complex).ravel())


def _same(fn):
    t, e = _outcome(torch, fn), _outcome(ember, fn)
    assert t[:3] == e[:3]
    if t[0] == "ok":
        np.testing.assert_allclose(e[3], t[3], rtol=1e-6, atol=1e-6)


def _ones(lib, shape, dtype="float32", requires_grad=False):
    return lib.ones(shape, dtype=getattr(lib, dtype), requires_grad=requires_grad)


EMPTY_PRODUCTS = [
    ("mm", [(0, 3), (3, 2)]), ("mm", [(2, 0), (0, 2)]), ("mm", [(1, 0), (0, 0)]),
    ("bmm", [(0, 2, 3), (0, 3, 2)]), ("bmm", [(2, 1, 0), (2, 0, 2)]),
    ("bmm", [(2, 0, 3), (2, 3, 2)]), ("mv", [(0, 3), (3,)]), ("mv", [(2, 0), (0,)]),
    ("matmul", [(0, 1, 0), (0, 0, 2)]), ("chain_matmul", [(2, 0), (0, 2)]),
]


@pytest.mark.parametrize("dtypes", [("bool", "bool"), ("int64", "int64"),
                                    ("float32", "float64"), ("int64", "float64")])
@pytest.mark.parametrize("op,shapes", EMPTY_PRODUCTS)
def test_product_with_nothing_to_sum(op, shapes, dtypes):
    _same(lambda L: getattr(L, op)(*[_ones(L, s, d) for s, d in zip(shapes, dtypes)]))


@pytest.mark.parametrize("op,shapes", [("mm", [(2, 3), (3, 2)]), ("bmm", [(2, 2, 3), (2, 3, 2)]),
                                       ("mv", [(2, 3), (3,)])])
@pytest.mark.parametrize("dtypes", [("bool", "bool"), ("bool", "float32"),
                                    ("int64", "float32")])
def test_product_kernel_errors(op, shapes, dtypes):
    _same(lambda L: getattr(L, op)(*[_ones(L, s, d) for s, d in zip(shapes, dtypes)]))


ADD_PRODUCTS = [
    ("addmm", [(2, 2), (2, 3), (3, 2)]), ("addmm", [(), (2, 0), (0, 2)]),
    ("addmm", [(1,), (0, 3), (3, 2)]), ("addmv", [(2,), (2, 3), (3,)]),
    ("addmv", [(), (0, 3), (3,)]), ("addmv", [(1,), (0, 3), (3,)]), ("addmv", [(), (1, 0), (0,)]),
    ("baddbmm", [(2, 2, 2), (2, 2, 3), (2, 3, 2)]), ("baddbmm", [(1,), (0, 1, 0), (0, 0, 2)]),
    ("baddbmm", [(2, 1, 2), (2, 1, 0), (2, 0, 2)]), ("addbmm", [(2, 2), (2, 2, 3), (2, 3, 2)]),
    ("addbmm", [(1, 2), (0, 1, 1), (0, 1, 2)]), ("addbmm", [(1, 2), (2, 1, 0), (2, 0, 2)]),
    ("addbmm", [(1, 2), (1, 1, 0), (1, 0, 2)]),
]


@pytest.mark.parametrize("kwargs", [{}, {"beta": 0.5}, {"beta": 0}, {"beta": 2, "alpha": 3}])
@pytest.mark.parametrize("dtypes", [("bool",) * 3, ("int64",) * 3, ("uint8",) * 3,
                                    ("float64", "float64", "float32"),
                                    ("float64", "int64", "float64"),
                                    ("float32", "float64", "float64"), ("float64",) * 3])
@pytest.mark.parametrize("op,shapes", ADD_PRODUCTS)
def test_add_product(op, shapes, dtypes, kwargs):
    _same(lambda L: getattr(L, op)(*[_ones(L, s, d) for s, d in zip(shapes, dtypes)], **kwargs))


@pytest.mark.parametrize("beta", [1j, 0.5])
def test_empty_inner_dim_scales_input_in_place(beta):
    _same(lambda L: L.addmm(_ones(L, (2, 2)), _ones(L, (2, 0)), _ones(L, (0, 2)), beta=beta))


def test_empty_inner_dim_ignores_alpha():
    _same(lambda L: L.addmm(_ones(L, (2, 2)), _ones(L, (2, 0)), _ones(L, (0, 2)),
                            alpha=float("inf")))


def test_empty_product_of_a_non_differentiable_dtype():
    _same(lambda L: L.bmm(_ones(L, (1, 3, 0), requires_grad=True), _ones(L, (1, 0, 1), "bool")))
    _same(lambda L: L.baddbmm(_ones(L, (1, 3, 1)), _ones(L, (1, 3, 0), requires_grad=True),
                              _ones(L, (1, 0, 1), "bool")))


def test_addmv_of_an_empty_matrix_backward():
    def fn(L):
        out = L.addmv(_ones(L, (), "float64", True), _ones(L, (3, 0), "float64", True),
                      _ones(L, (0,), "float64", True))
        out.backward()
        return out
    _same(fn)


def test_addbmm_of_no_batch_grads():
    outs = []
    for L in (torch, ember):
        ts = [_ones(L, s, "float64", True) for s in [(1, 2), (0, 1, 3), (0, 3, 2)]]
        L.addbmm(*ts, beta=2.0).sum().backward()
        outs.append([t.grad.numpy() for t in ts])
    for t, e in zip(*outs):
        np.testing.assert_array_equal(e, t)


@pytest.mark.parametrize("shapes", [[(1, 0), (0,)], [(1, 0), (1, 0)], [(2, 0), (0,)],
                                    [(2, 0), (1, 0)], [(1, 3), (1, 3)]])
@pytest.mark.parametrize("dtype", ["bool", "float32"])
def test_inner_single_element_is_a_dot(shapes, dtype):
    _same(lambda L: L.inner(*[_ones(L, s, dtype) for s in shapes]))


def _graph(out):
    names, todo = [], [out.grad_fn]
    while todo:
        node = todo.pop(0)
        names.append(type(node).__name__)
        todo += [n for n, _ in node.next_functions
                 if n is not None and type(n).__name__ != "AccumulateGrad"]
    return names


MULTI_DOT = [[(3,), (3, 2)], [(2, 3), (3,)], [(3,), (3,)], [(2, 2), (2, 3), (3, 2)],
             [(2, 3), (3, 4), (4, 2)], [(3,), (3, 4), (4,)], [(2, 2), (2, 3), (3, 2), (2, 5)],
             [(5, 1), (1, 4), (4, 3), (3, 6), (6, 2)]]


@pytest.mark.parametrize("shapes", MULTI_DOT)
def test_multi_dot_order_and_graph(shapes):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    arrays[-1].flat[0] = np.inf     # (the order decides where inf meets 0 * inf)
    res = []
    for L in (torch, ember):
        ts = [L.tensor(a, requires_grad=True) for a in arrays]
        out = L.linalg.multi_dot(ts)
        res.append((_graph(out), out.detach().numpy()))
    assert res[1][0] == res[0][0]
    np.testing.assert_allclose(res[1][1], res[0][1])


EINSUM = [("bij,bjk->bik", (2, 2, 3), (2, 3, 2)), ("...ii,...i->...", (2, 3, 3), (3,)),
          ("ij,jk,kl->il", (2, 3), (3, 4), (4, 5)), ("i,i->", (3,), (3,)), ("ij->", (2, 3)),
          ("iij->j", (2, 2, 3)), ("ii", (3, 3)), ("bhid,bhjd->bhij", (2, 3, 4, 5), (2, 3, 6, 5)),
          ("...ij,...jk->...ik", (4, 1, 2, 3), (5, 3, 2)), ("ij,ij->", (2, 3), (1, 3)),
          ("Ab,bc->Ac", (2, 3), (3, 4)), ("iji->j", (2, 3, 2)), ("...,...->...", (2, 3), (3,)),
          ("bn,anm,bm->ba", (2, 3), (4, 3, 5), (2, 5)), ("ij,jk->ik", (2, 0), (0, 3)),
          ("i,j,k->ijk", (2,), (3,), (4,)), (" i j , j k -> i k ", (2, 3), (3, 4))]


@pytest.mark.parametrize("case", EINSUM, ids=[c[0] for c in EINSUM])
def test_einsum_as_torch(case):
    eq, shapes = case[0], case[1:]
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s) for s in shapes]
    arrays[0].flat[:1] = np.nan     # (a NaN off any diagonal must not reach other gradients)
    res = []
    for L in (torch, ember):
        ts = [L.tensor(a, requires_grad=True) for a in arrays]
        out = L.einsum(eq, *ts)
        g = L.tensor(np.random.default_rng(2).standard_normal(tuple(out.shape)))
        grads = L.autograd.grad(out, ts, g)
        with L.no_grad():
            plain = L.einsum(eq, *ts).numpy()
        res.append((_graph(out), out.detach().numpy(), [x.numpy() for x in grads], plain))
    (tg, tv, tgr, tp), (eg, ev, egr, ep) = res
    assert eg == tg
    np.testing.assert_allclose(ev, tv, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ep, tp, rtol=1e-12, atol=1e-12)
    for e, t in zip(egr, tgr):
        np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-12)


def test_small_complex_bmm_non_finite():
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((3, 2, 3)) + 1j * rng.standard_normal((3, 2, 3)))
    b = (rng.standard_normal((3, 3, 2)) + 1j * rng.standard_normal((3, 3, 2)))
    a[0, 0, 1], b[1, 2, 0], b[2, 0, 1] = np.inf, complex(-np.inf, 1), complex(np.nan, 0)
    c = rng.standard_normal((3, 2, 2)) + 0j
    for dtype in ("complex64", "complex128"):
        _same(lambda L: L.bmm(L.tensor(a.astype(dtype)), L.tensor(b.astype(dtype))))
        _same(lambda L: L.baddbmm(L.tensor(c.astype(dtype)), L.tensor(a.astype(dtype)),
                                  L.tensor(b.astype(dtype))))


def _layout(lib, shape, layout, dtype="float32"):
    """A tensor of ``shape`` laid out C-contiguous ("c"), transposed ("t") or strided ("s")."""
    if layout == "t" and len(shape) >= 2:
        return lib.ones(shape[:-2] + shape[-2:][::-1], dtype=getattr(lib, dtype)).transpose(-1, -2)
    if layout == "s":
        return lib.ones(tuple(2 * n for n in shape), dtype=getattr(lib, dtype))[
            tuple(slice(None, None, 2) for _ in shape)]
    return lib.ones(shape, dtype=getattr(lib, dtype))


KRON = [((2, 3), (3, 2)), ((2, 3), (3, 1)), ((2, 3), (1, 3)), ((2,), (3, 2)), ((3, 2), (2,)),
        ((2, 2, 3), (3, 2)), ((2, 3), (2, 2, 3)), ((1, 3), (3, 3)), ((), (2, 3))]


@pytest.mark.parametrize("layouts", ["cc", "tc", "ct", "tt", "sc", "ts"])
@pytest.mark.parametrize("shapes", KRON)
def test_kron_view_of_the_product(shapes, layouts):
    _same(lambda L: L.kron(_layout(L, shapes[0], layouts[0]),
                           _layout(L, shapes[1], layouts[1], "float64")))


INPLACE = [("addmm", [(), (2, 1), (1, 1)]), ("addmm", [(2, 1), (2, 1), (1, 1)]),
           ("addmm", [(2,), (2, 3), (3, 2)]), ("addmm", [(2, 2), (2, 3), (4, 2)]),
           ("addmv", [(), (3, 0), (0,)]), ("addmv", [(1,), (0, 3), (3,)]),
           ("addmv", [(3,), (3, 2), (2,)]), ("baddbmm", [(2,), (2, 1, 1), (2, 1, 2)]),
           ("baddbmm", [(1, 3, 1), (1, 3, 0), (1, 0, 1)]),
           ("baddbmm", [(3,), (2, 1, 3), (2, 3, 2)])]


@pytest.mark.parametrize("dtypes", [("float32",) * 3, ("bool",) * 3,
                                    ("float32", "float32", "bool"),
                                    ("float64", "float64", "float32")])
@pytest.mark.parametrize("op,shapes", INPLACE)
def test_check_inplace_product(op, shapes, dtypes):
    """``check_inplace_product`` (for ember's addmm_/addmv_/baddbmm_) raises what torch's
    in-place op raises before computing."""
    import importlib
    check = importlib.import_module("ember.ops.matmul").check_inplace_product
    args = [(s, d) for s, d in zip(shapes, dtypes)]
    try:
        getattr(_ones(torch, *args[0]), op + "_")(_ones(torch, *args[1]), _ones(torch, *args[2]))
        expected = None
    except RuntimeError as e:
        expected = str(e)
    try:
        check(op, *[_ones(ember, *a) for a in args])
        got = None
    except RuntimeError as e:
        got = str(e)
    if got is not None or (expected or "").startswith("Bad in-place call"):
        assert got == expected


EINSUM_DTYPES = [("ij,jk", (2, 3), (3, 4)), ("i,j->ij", (2,), (3,)), ("ij,ij->", (2, 3), (2, 3)),
                 ("i,i->i", (2,), (2,)), ("ij,jk", (2, 0), (0, 4))]


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("dtypes", [("int32", "int64"), ("int64", "int64"), ("bool", "bool"),
                                    ("bool", "int64"), ("uint8", "float32"),
                                    ("float32", "float64"), ("float32", "complex64")])
@pytest.mark.parametrize("case", EINSUM_DTYPES, ids=[c[0] for c in EINSUM_DTYPES])
def test_einsum_dtypes(case, dtypes, requires_grad):
    eq, sa, sb = case
    rg = requires_grad and dtypes[0].startswith("float")
    _same(lambda L: L.einsum(eq, _ones(L, sa, dtypes[0], rg), _ones(L, sb, dtypes[1])))
    _same(lambda L: L.einsum(eq.split(",")[0] + "->", _ones(L, sa, dtypes[0])))
