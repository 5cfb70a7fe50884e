"""Regression tests for wave-2 fuzzer fixes (issue 21), checked against torch: addbmm with
nothing to sum (its result made like ``input``, so an integer input refuses a ``batch`` that
requires grad), baddbmm_'s in-place dtype check, multinomial on empty rows or categories and
its per-row checks with replacement, the ``*_scatter`` ops into integer inputs of a ``src``
that requires grad, and householder_product's backward (torch's K-update algorithm, so NaNs
spread as in torch)."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _outcome(lib, fn):
    """``("ok", dtype, shape, requires_grad, values)`` or ``("raise", class, message)``."""
    try:
        out = fn(lib)
    except Exception as e:  # noqa: BLE001  (compared between the libraries)
        return ("raise", type(e).__name__, str(e))
    return ("ok", str(out.dtype).split(".")[-1], tuple(out.shape), out.requires_grad,
            np.asarray(out.detach().numpy(), dtype=complex).ravel())


def _same(fn, values=True):
    t, e = _outcome(torch, fn), _outcome(ember, fn)
    assert t[:4] == e[:4]
    if t[0] == "ok" and values:
        np.testing.assert_allclose(e[4], t[4], rtol=1e-6, atol=1e-6)


def _ones(lib, shape, dtype="float32", requires_grad=False):
    return lib.ones(shape, dtype=getattr(lib, dtype), requires_grad=requires_grad)


ADDBMM_EMPTY = [
    ("int32", "int32", "float64", False, True),
    ("int32", "float64", "float64", True, False),
    ("int32", "float64", "int32", True, False),
    ("int32", "int32", "int32", False, False),
    ("int64", "int64", "float64", False, True),
    ("float32", "float64", "float64", True, True),
    ("float32", "int32", "int32", False, False),
]


@pytest.mark.parametrize("method", [False, True])
@pytest.mark.parametrize("batches", [((0, 1, 3), (0, 3, 1)), ((2, 1, 0), (2, 0, 1))])
@pytest.mark.parametrize("case", ADDBMM_EMPTY)
def test_addbmm_nothing_to_sum(case, batches, method):
    di, d1, d2, rg1, rg2 = case

    def fn(lib):
        inp = _ones(lib, (1,), di, requires_grad=di.startswith("float"))
        b1 = _ones(lib, batches[0], d1, rg1)
        b2 = _ones(lib, batches[1], d2, rg2)
        return inp.addbmm(b1, b2) if method else lib.addbmm(inp, b1, b2)
    _same(fn)


@pytest.mark.parametrize("shapes", [((1, 1, 1), (1, 1, 0), (1, 0, 1)),
                                    ((1, 1, 1), (1, 1, 2), (1, 2, 1)),
                                    ((2, 1, 1), (1, 1, 2), (1, 2, 1)),
                                    ((1, 1, 1), (1, 1, 2), (1, 3, 1))])
@pytest.mark.parametrize("dtypes", [("float32", "float32", "float64"),
                                    ("float32", "float64", "float64"),
                                    ("float64", "float64", "float32"),
                                    ("float32", "float32", "float32")])
def test_baddbmm_inplace_dtype_check(shapes, dtypes):
    def fn(lib):
        s, a, b = (_ones(lib, sh, dt) for sh, dt in zip(shapes, dtypes))
        return s.baddbmm_(a, b)
    _same(fn)


@pytest.mark.parametrize("shape", [(3, 0), (0,), (0, 0), (0, 3), (1, 0)])
@pytest.mark.parametrize("n", [1, 2, 6])
@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_empty(shape, n, replacement):
    _same(lambda lib: lib.multinomial(lib.ones(shape), n, replacement))
    _same(lambda lib: lib.ones(shape).multinomial(n, replacement=replacement))


NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize("probs", [[[NAN, 1.0]], [[INF, 1.0]], [[1.0, INF], [1.0, -1.0]],
                                   [[0.0, 0.0], [1.0, NAN]], [[1.0, -1.0], [NAN, 1.0]],
                                   [[NAN, -1.0]], [[1.0, 0.0], [0.0, 0.0]]])
def test_multinomial_replacement_checks_row_by_row(probs):
    _same(lambda lib: lib.multinomial(lib.tensor(probs), 2, True))


def _scatters(lib, dtype, n, src_dtype="float32", grad=True):
    inp = _ones(lib, (n, n), dtype)
    s = _ones(lib, (n,), src_dtype, grad)
    return [lambda: lib.slice_scatter(inp, _ones(lib, (n, n), src_dtype, grad)),
            lambda: lib.select_scatter(inp, s, 0, 0) if n else lib.slice_scatter(inp, s[None]),
            lambda: lib.diagonal_scatter(inp, s),
            lambda: lib.as_strided_scatter(inp, s, (n,), (1,)),
            lambda: inp.slice_scatter(_ones(lib, (n, n), src_dtype, grad))]


@pytest.mark.parametrize("which", range(5))
@pytest.mark.parametrize("n", [0, 2])
@pytest.mark.parametrize("dtypes", [("int64", "float32", True), ("bool", "float64", True),
                                    ("int32", "float32", False), ("float32", "int64", False),
                                    ("float32", "float64", True)])
def test_scatter_into_integer_input_of_grad_src(which, n, dtypes):
    dtype, src_dtype, grad = dtypes
    _same(lambda lib: _scatters(lib, dtype, n, src_dtype, grad)[which]())


def test_scatter_into_integer_input_no_grad_mode():
    def fn(lib):
        with lib.no_grad():
            return lib.slice_scatter(_ones(lib, (2,), "int64"), _ones(lib, (2,), "float32", True))
    _same(fn)


def _hh_grads(lib, A, tau, g, create=False):
    a = lib.tensor(A, requires_grad=True)
    t = lib.tensor(tau, requires_grad=True)
    q = lib.linalg.householder_product(a, t)
    ga, gt = lib.autograd.grad(q, (a, t), lib.tensor(g), create_graph=create)
    out = [ga.detach().numpy(), gt.detach().numpy()]
    if create:
        out += [x.numpy() for x in lib.autograd.grad(ga.abs().sum() + gt.abs().sum(), (a, t))]
    return out


@pytest.mark.parametrize("shape,k", [((4, 3), 3), ((4, 3), 2), ((2, 5, 3), 2), ((4, 2), 1)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("mode", ["plain", "nan", "inf", "create_graph", "nan_create_graph"])
def test_householder_product_backward(shape, k, dtype, mode):
    rng = np.random.default_rng(sum(shape) + k)
    A = rng.standard_normal(shape)
    tau = rng.standard_normal(shape[:-2] + (k,))
    g = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        A = A + 1j * rng.standard_normal(shape)
        tau = tau + 1j * rng.standard_normal(tau.shape)
        g = g + 1j * rng.standard_normal(shape)
    if "nan" in mode:
        A.flat[3] = np.nan
    if mode == "inf":
        A.flat[shape[-1] + 1] = np.inf
    A, tau, g = A.astype(dtype), tau.astype(dtype), g.astype(dtype)
    create = "create" in mode
    tol = 1e-4 if dtype == "float32" else 1e-8
    for e, t in zip(_hh_grads(ember, A, tau, g, create), _hh_grads(torch, A, tau, g, create)):
        assert (np.isnan(e) == np.isnan(t)).all()
        np.testing.assert_allclose(e, t, rtol=tol, atol=tol)


F64 = "float64"
SHAPE_CHECKS = [
    ("addmm", [((2, 2, 2),), ((2, 2),), ((2, 2),)]),
    ("addmm", [((3, 2),), ((2, 2),), ((2, 2),)]),
    ("addmm", [((2, 3),), ((2, 2),), ((2, 2),)]),
    ("baddbmm", [((2, 2, 2, 2),), ((2, 2, 2),), ((2, 2, 2),)]),
    ("baddbmm", [((3, 1, 1), F64), ((2, 2, 2), F64), ((2, 2, 2), F64)]),
    ("baddbmm", [((3, 2, 2),), ((2, 2, 2),), ((2, 2, 2),)]),
    ("addbmm", [((3, 2),), ((0, 2, 2),), ((0, 2, 2),)]),
    ("addbmm", [((3, 2, 2),), ((0, 2, 2),), ((0, 2, 2),)]),
    ("addmv", [((3,),), ((2, 2), F64), ((2,),)]),
    ("addmv", [((3,),), ((2, 2),), ((2,),)]),
    ("addmv", [((1,),), ((2, 2),), ((2,),)]),
    ("addmv", [((),), ((2, 2),), ((2,),)]),
    ("addmv", [((),), ((2, 3),), ((2,),)]),
    ("addmv", [((2, 1),), ((2, 2),), ((2,),)]),
    ("addmv", [((2,),), ((2, 2, 2),), ((2,),)]),
    ("addmv", [((2,), F64), ((2, 3),), ((2,),)]),
    ("addmv", [((3,),), ((0, 2),), ((2,),)]),
    ("addmv", [((0,),), ((2, 0),), ((0,),)]),
    ("addmv_", [((1,),), ((2, 2),), ((2,),)]),
    ("addmv_", [((2,),), ((2, 2),), ((2,), F64)]),
]


@pytest.mark.parametrize("op,args", SHAPE_CHECKS)
def test_product_shape_checks_in_torch_order(op, args):
    def fn(lib):
        ts = [_ones(lib, *a) for a in args]
        return getattr(ts[0], op)(*ts[1:]) if op.endswith("_") else getattr(lib, op)(*ts)
    _same(fn)
