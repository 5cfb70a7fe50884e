"""Regression tests (against torch) for fuzzer mismatches: norms of empty tensors with a NaN
order, batch norm's int64 error and weight gradient with infinite invstd, the variance
gradient without degrees of freedom, complex variance, complex affine_grid_generator."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

nan, inf = float("nan"), float("inf")


def _np(t):
    return t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)


def _same(a, b, rtol=1e-6):
    a, b = _np(a), _np(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_allclose(a, b, rtol=rtol, equal_nan=True)


@pytest.mark.parametrize("shape,dim", [((0,), None), ((0, 3), 0), ((0, 3), None),
                                       ((2, 0), 1), ((0, 3), (0, 1))])
@pytest.mark.parametrize("keepdim", [False, True])
def test_empty_norm_nan_order(shape, dim, keepdim):
    for fn in (lambda L, x: L.linalg.vector_norm(x, nan, dim, keepdim),
               lambda L, x: L.norm(x, nan, dim, keepdim),
               lambda L, x: x.norm(nan, dim, keepdim)):
        _same(fn(ember, ember.zeros(shape)), fn(torch, torch.zeros(shape)))


@pytest.mark.parametrize("layout", ["c", "s", "t"])
@pytest.mark.parametrize("params", [(None, None, None, None), ("f", None, "f", "f"),
                                    (None, None, "f", "f"), (None, None, "i", "i"),
                                    ("i", "f", None, None), ("f", "i", None, None),
                                    (None, None, "f", None), (None, "i", None, "i")])
@pytest.mark.parametrize("fn", ["batch_norm", "native_batch_norm"])
def test_batch_norm_int64_error(layout, params, fn):
    res = []
    for L in (torch, ember):
        if layout == "s":
            x = L.zeros(2, 3, 8, dtype=L.int64)[..., ::2]
        elif layout == "t":
            x = L.zeros(2, 4, 3, dtype=L.int64).transpose(-1, -2)
        else:
            x = L.zeros(2, 3, 4, dtype=L.int64)
        args = [None if p is None else L.ones(3, dtype=L.float64 if p == "f" else L.int64)
                for p in params]
        extra = (False,) if fn == "batch_norm" else ()
        with pytest.raises(Exception) as e:
            getattr(L, fn)(x, *args, True, 0.1, 1e-5, *extra)
        res.append((type(e.value), str(e.value)))
    assert res[0] == res[1]


@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("which", [0, 1])
def test_batch_norm_one_running_stat(training, which):
    res = []
    for L in (torch, ember):
        stats = [None, None]
        stats[which] = L.ones(3)
        out = []
        for call in (lambda x: L.batch_norm(x, None, None, *stats, training, 0.1, 1e-5, False),
                     lambda x: L.nn.functional.batch_norm(x, *stats, None, None, training)):
            for x in (L.zeros(2, 3, 4), L.zeros(0, 3, 4)):
                try:
                    call(x)
                    out.append("ok")
                except Exception as e:  # noqa: BLE001  (compared with torch)
                    out.append((type(e), str(e)))
        res.append(out)
    assert res[0] == res[1]


@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_weight_grad_infinite_invstd(training):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4))
    g = rng.standard_normal((2, 3, 4))
    out = []
    for L in (torch, ember):
        w = L.tensor([-0.8, 1.6, -0.1], dtype=L.float64, requires_grad=True)
        rm = L.tensor([-0.3, 0.8, -1.7], dtype=L.float64)
        rv = L.tensor([-0.0, 0.0, nan], dtype=L.float64)
        xt = L.tensor(x)
        if training:
            xt = L.tensor(np.repeat(x[:, :, :1], 4, axis=2))    # (zero batch variance)
        y = L.batch_norm(xt, w, None, rm, rv, training, 1.0, 0.0, False)
        y.backward(L.tensor(g))
        out.append(w.grad)
    _same(out[1], out[0])


def _var_grad(L, fn, v, dt, c, dim, g):
    x = L.tensor(v, dtype=getattr(L, dt), requires_grad=True)
    kw = {} if dim is None else {"dim": dim}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = getattr(L, fn)(x, correction=c, **kw)
    s = r[0] * 0.5 + r[1] * 0.25 if isinstance(r, tuple) else r
    s.backward(L.full(s.shape, g, dtype=s.dtype))
    return (r[0] if isinstance(r, tuple) else r), x.grad


@pytest.mark.parametrize("fn", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("v", [1.5, nan, inf, [1.5, 1.0], [1.0, 1.0], [3.0, 1.0, 2.0],
                               [inf, 1.0], [nan, 1.0], [-inf, inf]])
@pytest.mark.parametrize("dt", ["float32", "float64", "complex64"])
def test_var_grad_without_dof(fn, v, dt):
    for c in (1, 2, 3):
        for dim in (None, 0):
            for g in (0.7, -0.7):
                ye, ge = _var_grad(ember, fn, v, dt, c, dim, g)
                yt, gt = _var_grad(torch, fn, v, dt, c, dim, g)
                _same(ye, yt, 1e-5)
                _same(ge, gt, 1e-5)


def test_var_grad_without_dof_has_no_input_dependency():
    x = ember.tensor([3.0, 1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = ember.var(x, correction=3)
    g = ember.tensor(0.7, requires_grad=True)
    gx, = ember.autograd.grad(y, x, g, create_graph=True)
    _same(gx, torch.tensor([inf, inf, nan]))


def test_complex_var_adds_part_variances():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for c in (2, 3):
            for L_dim in (None, 0):
                a = ember.var(ember.tensor([1.5 + 0j, 1.0 + 0j]), L_dim, correction=c)
                b = torch.var(torch.tensor([1.5 + 0j, 1.0 + 0j]), L_dim, correction=c)
                _same(a, b)
    a = np.random.default_rng(1).standard_normal((3, 4, 2)).view(np.complex128)[..., 0]
    _same(ember.std(ember.tensor(a), 1), torch.std(torch.tensor(a), 1))


@pytest.mark.parametrize("device", ["cpu", "strict"])
def test_affine_grid_generator_complex_infinities(device):
    th = np.array([[[1 + 2j, -inf + 0j, 0.5 - 1j], [2 - 1j, 0.3 + 0j, complex(0, inf)]],
                   [[0.2 + 0j, 1 - 1j, -0.0 + 0j], [inf + 1j, 0.5 + 0.5j, 1 + 0j]]])
    for size, ac in (([2, 1, 2, 3], False), ([2, 1, 3, 5], True)):
        a = ember.affine_grid_generator(ember.tensor(th, device=device), size, ac)
        b = torch.affine_grid_generator(torch.tensor(th), size, ac)
        _same(a, b)
    th = np.random.default_rng(0).standard_normal((2, 3, 4)) + 1j
    _same(ember.affine_grid_generator(ember.tensor(th), [2, 1, 2, 3, 2], True),
          torch.affine_grid_generator(torch.tensor(th), [2, 1, 2, 3, 2], True))

