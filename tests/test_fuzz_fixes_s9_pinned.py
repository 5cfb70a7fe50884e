"""Regression tests for pinned fuzzer classes (issue 21, session 9), checked against torch:
nll_loss's target-dtype check order, tensordot's single-element path (dot or a summed
product), batch norm's zero inverse deviation at zero variance and eps, the engine's
complex-to-real gradient check of empty baddbmm/addbmm, addbmm's shape checks, the
grad-mode rule of an empty product's dtype error, poisson_nll_loss's Stirling term on the
target as given, and pdist's NaN ``p``."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _outcome(lib, fn):
    """``("ok", dtype, shape, values, grads)`` or ``("raise", class, message)``."""
    try:
        out, leaves = fn(lib)
        if out.requires_grad:
            out.backward(lib.ones_like(out))
    except Exception as e:  # noqa: BLE001  (compared between the libraries)
        return ("raise", type(e).__name__, str(e))
    grads = [None if t.grad is None else np.asarray(t.grad.numpy(), dtype=complex).ravel()
             for t in leaves]
    return ("ok", str(out.dtype).split(".")[-1], tuple(out.shape),
            np.asarray(out.detach().numpy(), dtype=complex).ravel(), grads)


def _same(fn, rtol=1e-6):
    t, e = _outcome(torch, fn), _outcome(ember, fn)
    assert t[:3] == e[:3]
    if t[0] == "ok":
        np.testing.assert_allclose(e[3], t[3], rtol=rtol, atol=1e-6)
        for ge, gt in zip(e[4], t[4]):
            assert (ge is None) == (gt is None)
            if gt is not None:
                np.testing.assert_allclose(ge, gt, rtol=rtol, atol=1e-6)


def _t(lib, values, dtype="float32", requires_grad=False):
    return lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=requires_grad)


def _ones(lib, shape, dtype="float32", requires_grad=False):
    return lib.ones(shape, dtype=getattr(lib, dtype), requires_grad=requires_grad)


NLL_CASES = [
    ((1,), (4,), None, "float32"), ((3,), (4,), 4, "float32"), ((3,), (4,), 4, "int64"),
    ((2, 3), (2,), 4, "float32"), ((2, 3), (2,), 4, "int64"), ((3,), (3, 1), None, "float32"),
    ((2, 3, 4), (2, 4), 5, "float32"), ((2, 3, 4, 5), (2, 4, 6), None, "float32"),
    ((2, 3, 4, 5), (2, 4, 6), 7, "int64"), ((2, 3, 4, 5), (2, 4, 5), 7, "float32"),
    ((3,), (), 5, "float32"), ((3,), (2,), None, "int32"), ((2, 3), (2,), None, "bool"),
]


@pytest.mark.parametrize("fn", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize("xs,ts,w,dt", NLL_CASES)
def test_nll_target_dtype_checked_before_sizes(fn, xs, ts, w, dt):
    def run(L):
        x = L.zeros(xs, requires_grad=True)
        t = L.zeros(ts, dtype=getattr(L, dt))
        wt = None if w is None else L.ones(w)
        return getattr(L.nn.functional, fn)(x, t, wt), [x]
    _same(run)


def _noncontig(lib, values, dtype):
    doubled = [v for v in values for _ in (0, 1)]
    return _t(lib, doubled, dtype)[::2]


@pytest.mark.parametrize("dtype", ["bool", "int32", "float32"])
@pytest.mark.parametrize("layout", ["cc", "cs", "sc", "ss"])
def test_inner_single_element(dtype, layout):
    a_vals, b_vals = [True, False, True], [True, True, False]

    def run(L):
        a = _noncontig(L, a_vals, dtype) if layout[0] == "s" else _t(L, a_vals, dtype)
        b = _noncontig(L, b_vals, dtype) if layout[1] == "s" else _t(L, b_vals, dtype)
        return L.inner(a, b), []
    _same(run)


def _graph(t):
    names, stack = [], [t.grad_fn]
    while stack:
        f = stack.pop()
        names.append(None if f is None else type(f).__name__)
        if f is not None:
            stack.extend(g for g, _ in reversed(f.next_functions))
    return names


@pytest.mark.parametrize("case", range(5))
def test_tensordot_single_element_graph(case):
    outs = []
    for L in (torch, ember):
        a = L.ones(3, requires_grad=True)
        b = L.ones(6, requires_grad=True)
        m = L.ones(2, 3, requires_grad=True)
        x, y, dims = [(a, a, 1), (a, b[::2], 1), (m, m, 2), (m.t(), m.t(), ([1, 0], [1, 0])),
                      (m[:1], b[::2], ([1], [0]))][case]
        out = L.tensordot(x, y, dims)
        outs.append((_graph(out), float(out)))
    assert outs[0] == outs[1]


@pytest.mark.parametrize("fn", ["batch_norm", "native_batch_norm"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_batch_norm_zero_variance_zero_eps(fn, dtype):
    def run(L):
        x = _t(L, [[1.0, 2.0, 3.0]], dtype, requires_grad=True)
        w = _t(L, [2.0, float("nan"), float("inf")], dtype, requires_grad=True)
        b = _t(L, [0.5, 0.6, 0.7], dtype)
        args = (x, w, b, None, None, True, 1.0, 0.0)
        if fn == "batch_norm":
            return L.batch_norm(*args, False), [x, w]
        out = L.native_batch_norm(*args)
        return out[0] + out[2].sum() + out[1].sum(), [x, w]
    _same(run)


def test_batch_norm_constant_channels_zero_eps():
    _same(lambda L: (L.batch_norm(_ones(L, (2, 3, 4), "float64"), None, None, None, None,
                                  True, 1.0, 0.0, False), []))


MIXED = [("float16", "float16", "complex128"), ("float32", "float32", "complex128"),
         ("complex128", "float32", "float32"), ("float32", "complex128", "int32"),
         ("float32", "float32", "int32"), ("complex128", "int32", "float32")]


@pytest.mark.parametrize("dtypes", MIXED)
@pytest.mark.parametrize("op,shapes", [("baddbmm", [(1,), (0, 3, 1), (0, 1, 1)]),
                                       ("baddbmm", [(1,), (2, 3, 0), (2, 0, 1)]),
                                       ("addbmm", [(1,), (0, 3, 1), (0, 1, 1)])])
def test_empty_batch_product_gradient_dtypes(op, shapes, dtypes):
    def run(L):
        ts = [_ones(L, s, d, requires_grad=d != "int32") for s, d in zip(shapes, dtypes)]
        return getattr(L, op)(*ts), ts
    _same(run)


ADDBMM_SHAPES = [((0, 3, 1), (0, 1, 2)), ((0, 1, 0), (1, 1, 2)), ((0, 3, 1), (0, 2, 2)),
                 ((1, 3, 0), (1, 1, 2)), ((0, 1, 0), (0, 1, 2)), ((3, 1), (0, 1, 2)),
                 ((0, 3, 1), (1, 2)), ((2, 3, 1), (2, 1, 2, 1))]


@pytest.mark.parametrize("dtypes", [("int32", "float32", "float32"),
                                    ("float32", "float64", "float32"),
                                    ("float32", "float32", "float32")])
@pytest.mark.parametrize("input_shape", [(1,), (3, 2), (4,)])
@pytest.mark.parametrize("s1,s2", ADDBMM_SHAPES)
def test_addbmm_shape_checks_before_dtypes(s1, s2, input_shape, dtypes):
    def run(L):
        i = _ones(L, input_shape, dtypes[0])
        return L.addbmm(i, _ones(L, s1, dtypes[1]), _ones(L, s2, dtypes[2])), []
    _same(run)


@pytest.mark.parametrize("grad_mode", [False, True])
@pytest.mark.parametrize("case", range(4))
def test_empty_product_int_result_needs_grad_mode(case, grad_mode):
    def run(L):
        f = _ones(L, (0, 3, 1), requires_grad=True)
        ints = _ones(L, (0, 1, 2), "int32")
        with (L.enable_grad() if grad_mode else L.no_grad()):
            out = [lambda: L.addbmm(_ones(L, (1,), "int32"), f, _ones(L, (0, 1, 2),
                                                                      requires_grad=True)),
                   lambda: L.baddbmm(L.ones(1), f, ints),
                   lambda: L.bmm(f, ints),
                   lambda: L.matmul(f, ints)][case]()
        return out, []
    _same(run)


@pytest.mark.parametrize("target", [0.0, -0.5, 0.5, 2.0, float("inf"), float("nan")])
def test_poisson_nll_full_stirling_term(target):
    def run(L):
        x = _t(L, [0.3, 0.2], requires_grad=True)
        t = _t(L, [target, 3.0], requires_grad=True)
        return L.nn.functional.poisson_nll_loss(x, t, full=True, reduction="sum"), [x, t]
    _same(run, rtol=1e-5)


def test_poisson_nll_empty_input_0d_target():
    def run(L):
        x = L.zeros(0, requires_grad=True)
        t = _t(L, -0.6449, requires_grad=True)
        return L.poisson_nll_loss(x, t, True, True, 1e-8, 0), [x, t]
    _same(run)


@pytest.mark.parametrize("ns", ["torch", "F"])
@pytest.mark.parametrize("p", [float("nan"), -1.0, 0.0, float("inf")])
def test_pdist_p_checked(ns, p):
    def run(L):
        mod = L if ns == "torch" else L.nn.functional
        return mod.pdist(L.ones(3, 2, dtype=L.float64), p), []
    _same(run)
