"""Fidelity leftovers of the unary, shape, reduction families (issue 21): in-place layout changes
of non-leaf tensors, Tensor-method varargs, 0-d corner cases, clamp's complex-bound errors,
prod's gradient shortcuts and norm's ``dtype=``, each compared against torch."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _outcome(lib, fn):
    """``fn(lib)`` as comparable data: values/dtype/shape, or the exception's class and text."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(lib)
    except Exception as e:  # noqa: BLE001  (compared across libraries)
        return ("raise", type(e).__name__, str(e).split("\n")[0])
    outs = out if isinstance(out, (tuple, list)) else (out,)
    res = []
    for o in outs:
        if hasattr(o, "detach"):
            a = o.detach().numpy()
            res.append((str(o.dtype).replace("torch.", ""), a.shape, a.tolist()))
        else:
            res.append(o)
    return ("ok", res)


def _same(fn):
    e, t = _outcome(ember, fn), _outcome(torch, fn)
    if e[0] == t[0] == "ok":
        assert len(e[1]) == len(t[1])
        for a, b in zip(e[1], t[1]):
            if isinstance(a, tuple):
                assert a[:2] == b[:2], (a, b)
                np.testing.assert_allclose(np.array(a[2], dtype=complex),
                                           np.array(b[2], dtype=complex), rtol=1e-5,
                                           equal_nan=True)
            else:
                assert a == b
    else:
        assert e == t


def _graph(t):
    """The node names of ``t``'s graph, breadth first, with their next nodes' names."""
    out, todo, seen = [], [t.grad_fn], set()
    while todo:
        node = todo.pop(0)
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        nxt = [n for n, _ in node.next_functions]
        out.append((type(node).__name__, [type(n).__name__ for n in nxt]))
        todo += nxt
    return out


X = np.random.default_rng(0).standard_normal((3, 1, 2))
INPLACE = ["y.squeeze_()", "y.squeeze_(1)", "y.squeeze_((1, 2))", "y.unsqueeze_(0)",
           "y.transpose_(0, 1)", "y.swapaxes_(0, 2)", "y.swapdims_(2, 0)",
           "y.unsqueeze_(0).squeeze_(0)", "y[..., ::2].squeeze_(1)", "y[0].t_()",
           "y[0].transpose_(0, 1)", "y[0, 0].t_()", "y[0, 0, 0].transpose_(0, -1)"]


@pytest.mark.parametrize("code", INPLACE)
def test_inplace_layout_change_of_non_leaf(code):
    """squeeze_/unsqueeze_/transpose_/t_ on a non-leaf that requires grad are recorded."""
    res = []
    for lib in (torch, ember):
        x = lib.tensor(X, requires_grad=True)
        y = x * 2     # noqa: F841  (used by the code)
        r = eval(code)
        g = lib.tensor(np.random.default_rng(1).standard_normal(tuple(r.shape)))
        (r * g).sum().backward()
        res.append((_graph(r), tuple(r.shape), r._version, x.grad.numpy().round(9).tolist()))
    assert res[1] == res[0]


def test_inplace_layout_change_without_grad_and_leaf_errors():
    for lib in (torch, ember):
        x = lib.ones(3, 1)
        x.squeeze_()
        assert x._version == 1 and tuple(x.shape) == (3,)
    _same(lambda L: L.ones(3, 1, requires_grad=True).squeeze_())
    _same(lambda L: L.ones(3, 1, requires_grad=True)[0].t_())
    _same(lambda L: L.ones(3, 1, requires_grad=True).transpose_(0, 1))


@pytest.mark.parametrize("code", [
    "L.ones(2, 3).tile(2, 3)", "L.ones(3).tile(2)", "L.tile(L.ones(3), (2, 2))",
    "L.tile(L.ones(2), dims=(2,))", "L.ones(()).tile(2, -1)", "L.tile(L.ones(0), (-1,))",
    "L.ones(3, 0).tile(-1)", "L.ones(2, 3).repeat(1, -1, 2)", "L.ones(2, 0).repeat(-1, -3)",
    "L.ones(2, 0).repeat(1, -3)", "L.ones(3).hsplit(1, 2)", "L.ones(3).hsplit(0, 0)",
    "L.ones(2, 2, 2).hsplit(2, -2)", "L.ones(4, 2).vsplit(1, 3)", "L.ones(()).vsplit(2, -1)",
    "L.ones(2, 2, 4).dsplit(1, 2)", "L.ones(3).hsplit((1, 2))", "L.ones(4, 2).vsplit(2)"])
def test_method_varargs_and_negative_repeats(code):
    _same(lambda L: eval(code))


@pytest.mark.parametrize("dtype", ["complex128", "float64"])
def test_adjoint_of_0d(dtype):
    for lib in (torch, ember):
        x = lib.tensor(np.array(1 + 2j, dtype=dtype) if dtype == "complex128" else 1.5,
                       requires_grad=True) * 1
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = x.adjoint()
        if lib is ember:    # (torch warns once per process)
            assert any("adjoint() is deprecated on 0-D" in str(w.message) for w in caught)
        if dtype == "float64":
            assert y is x
        else:
            assert type(y.grad_fn).__name__ == "ConjBackward0"
            assert type(y.grad_fn.next_functions[0][0]).__name__ == "MulBackward0"
            assert y.item() == 1 - 2j


@pytest.mark.parametrize("code", [
    "L.clamp(x, c)", "L.clamp(x, None, c)", "L.clamp(x, x, c)", "L.clamp_min(x, c)",
    "L.clamp_max(x, c)", "L.clamp(z, c)", "L.clamp(z, x)", "L.clamp(x, 1 + 1j)",
    "L.clamp(z, 1)", "x.clone().clamp_(z)", "z.clone().clamp_(x)", "x.clone().clamp_(1 + 1j)",
    "x.clone().clamp_max_(c)", "x.clone().clamp_min_(c)", "x.clone().clip_(x, c)",
    "x.clone().clamp_(x - 1, x + 1)"])
def test_clamp_complex_bounds(code):
    def fn(L):
        x, c = L.ones(3), L.tensor(1 + 1j)     # noqa: F841  (used by the code)
        z = L.ones(3, dtype=L.complex64)     # noqa: F841  (used by the code)
        return eval(code)
    _same(fn)


@pytest.mark.parametrize("grad", [False, True])
def test_mode_of_0d_complex(grad):
    _same(lambda L: L.mode(L.tensor(1 + 1j, requires_grad=grad)))
    _same(lambda L: L.mode(L.tensor([1 + 1j])))


def _grads(fn, arr):
    res = []
    for lib in (torch, ember):
        x = lib.tensor(arr, requires_grad=True)
        outs = fn(x)
        rng = np.random.default_rng(3)
        loss = 0
        for o in outs:
            s = (o * lib.tensor(rng.standard_normal(tuple(o.shape)))).sum()
            loss = loss + (s.real if s.is_complex() else s)
        loss.backward()
        res.append(x.grad.numpy())
    np.testing.assert_allclose(res[1], res[0], rtol=1e-6, equal_nan=True)


def test_prod_gradient_of_0d_inf_and_of_several_zeros():
    _grads(lambda x: (x.prod(),), np.array(np.inf))
    a = np.random.default_rng(2).standard_normal((3, 4))
    a[1, 2] = a[2, 0] = 0.0
    a[0, 0], a[2, 3] = np.nan, np.inf
    _grads(lambda x: (x.prod(), x.prod(1), x.prod(0)), a)
    b = np.array([2.0, 0.0, 3.0, np.inf])   # one zero: the product of the others
    _grads(lambda x: (x.prod(),), b)


@pytest.mark.parametrize("kw", [{}, {"p": 1, "dim": 1}, {"p": 3, "dim": 0},
                                {"p": float("inf")}, {"p": 2, "dim": 1, "keepdim": True}])
def test_norm_dtype_computes_inside_the_node(kw):
    a = np.random.default_rng(4).standard_normal((3, 4)).astype(np.float32)
    res = []
    for lib in (torch, ember):
        x = lib.tensor(a, requires_grad=True)
        r = lib.norm(x, dtype=lib.float64, **kw)
        r.sum().backward()
        res.append((str(r.dtype).split(".")[-1], _graph(r), str(x.grad.dtype).split(".")[-1],
                    x.grad.numpy()))
    assert res[0][:3] == res[1][:3]
    np.testing.assert_allclose(res[1][3], res[0][3], rtol=1e-6)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumprod_gradient_with_zeros_nan_and_inf(dim):
    a = np.random.default_rng(5).standard_normal((3, 5))
    a[0, 1] = a[0, 3] = a[1, 0] = a[2, 4] = a[1, 2] = 0.0
    a[0, 0], a[2, 2] = np.nan, np.inf
    _grads(lambda x: (x.cumprod(dim),), a)
    _grads(lambda x: (x.cumprod(dim),), a + 1j * a[::-1])
    b = np.where(np.isfinite(a), a, 0.5)
    _grads(lambda x: (x.cumprod(dim),), b)
