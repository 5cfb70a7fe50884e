"""Session 7 fidelity fixes of the miscellaneous op families, checked against torch: graph
nodes (DistBackward0, RenormBackward0, ...), errors and dtypes."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _pair(*arrays, grad=True):
    outs = []
    for lib in (ember, torch):
        ts = [lib.tensor(a.copy(), requires_grad=grad and a.dtype.kind == "f") for a in arrays]
        outs.append(ts)
    return outs


def _r(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


FUSED = [
    ("dist", lambda L, a, b: L.dist(a, b, 3), [(2, 3), (3,)], "DistBackward0"),
    ("renorm", lambda L, a: L.renorm(a, 2, 0, 1.0), [(3, 4)], "RenormBackward0"),
    ("logcumsumexp", lambda L, a: L.logcumsumexp(a, 1), [(3, 4)], "LogcumsumexpBackward0"),
    ("addr", lambda L, m, a, b: L.addr(m, a, b, beta=0.5, alpha=2), [(3, 4), (3,), (4,)],
     "AddrBackward0"),
    ("cdist", lambda L, a, b: L.cdist(a, b, 1.5), [(2, 3, 2), (4, 2)], "CdistBackward0"),
    ("block_diag", lambda L, a, b: L.block_diag(a, b), [(2, 3), (2,)], "BlockDiagBackward0"),
]


@pytest.mark.parametrize("name,fn,shapes,node", FUSED, ids=[f[0] for f in FUSED])
def test_fused_node_values_and_grads(name, fn, shapes, node):
    arrays = [_r(*s, seed=i) for i, s in enumerate(shapes)]
    (e_in, t_in) = _pair(*arrays)
    e_out, t_out = fn(ember, *e_in), fn(torch, *t_in)
    assert type(e_out.grad_fn).__name__ == type(t_out.grad_fn).__name__ == node
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-10)
    g = _r(*t_out.shape, seed=9)
    e_out.backward(ember.tensor(g))
    t_out.backward(torch.tensor(g))
    for e, t in zip(e_in, t_in):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-8, atol=1e-12)


def test_fill_diagonal_copyslices_wrap():
    a = _r(7, 2)
    for wrap in (False, True):
        (e,), (t,) = _pair(a)
        eo, to = (e * 1).fill_diagonal_(-1.0, wrap=wrap), (t * 1).fill_diagonal_(-1.0, wrap=wrap)
        assert type(eo.grad_fn).__name__ == "CopySlices"
        np.testing.assert_array_equal(eo.detach().numpy(), to.detach().numpy())
        eo.sum().backward()
        to.sum().backward()
        np.testing.assert_array_equal(e.grad.numpy(), t.grad.numpy())


def test_combinations_empty_and_with_replacement():
    for n, r, rep in ((0, 2, False), (4, 3, True), (3, 1, False)):
        (e,), (t,) = _pair(_r(n))
        eo, to = ember.combinations(e, r, rep), torch.combinations(t, r, rep)
        assert eo.shape == tuple(to.shape)
        np.testing.assert_array_equal(eo.detach().numpy(), to.detach().numpy())
        assert eo.requires_grad == to.requires_grad


def _raises_like(fn, *args):
    try:
        fn(torch, *args)
    except Exception as te:
        with pytest.raises(type(te)) as ei:
            fn(ember, *args)
        assert str(ei.value) == str(te)
    else:
        raise AssertionError("torch did not raise")


@pytest.mark.parametrize("fn", [
    lambda L: L.gcd(L.tensor([True]), L.tensor([False])),
    lambda L: L.copysign(L.tensor([1j]), 1),
    lambda L: L.heaviside(L.tensor([1j]), L.tensor([1j])),
    lambda L: L.diff(L.tensor([1, 2, 3]), -1),
    lambda L: L.renorm(L.ones(2, 3), -1, 0, 1),
    lambda L: L.histc(L.tensor([1, 2]), -1),
    lambda L: L.tril_indices(1.5, 3),
    lambda L: L.cartesian_prod(L.tensor([1.0]), L.tensor([1])),
    lambda L: L.kthvalue(L.tensor(1.0), 2),
    lambda L: L.dist(L.tensor([True]), L.tensor([1.0])),
])
def test_errors_match_torch(fn):
    _raises_like(fn)


def test_no_derivative_ops_raise_in_backward():
    for lib in (ember, torch):
        x = lib.tensor([0.5, -1.0], requires_grad=True)
        out = lib.heaviside(x, lib.tensor([1.0, 1.0]))
        assert type(out.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::heaviside is not"):
            out.sum().backward()
        h = lib.histogram(x)      # (default bins=100)
        assert h.hist.shape[0] == 100
        with pytest.raises(RuntimeError, match="derivative for aten::histogram is not"):
            h.hist.sum().backward()


def test_trapezoid_family_dtypes_and_padding():
    y, x = _r(2, 2, 2), _r(2, 2, seed=1)
    for fn in (lambda L, a, b: L.trapezoid(a, b), lambda L, a, b: L.cumulative_trapezoid(a, b)):
        (e, ex), (t, tx) = _pair(y, x)
        np.testing.assert_allclose(fn(ember, e, ex).detach().numpy(),
                                   fn(torch, t, tx).detach().numpy(), rtol=1e-12)
    yi = np.zeros((3, 0), dtype=np.int32)
    for name in ("trapezoid", "cumulative_trapezoid"):
        eo, to = getattr(ember, name)(ember.tensor(yi)), getattr(torch, name)(torch.tensor(yi))
        assert str(eo.dtype) == str(to.dtype) and eo.shape == tuple(to.shape)
    (e,), (t,) = _pair(np.zeros((3, 0), dtype=np.float32))
    assert ember.trapezoid(e).requires_grad == torch.trapezoid(t).requires_grad


def test_quantile_graph_and_values():
    a = _r(3, 4)
    for kw in ({"q": 0.3}, {"q": 0.6, "dim": 1, "keepdim": True}, {"q": 0.4, "dim": 0}):
        (e,), (t,) = _pair(a)
        eo, to = ember.nanquantile(e, **kw), torch.nanquantile(t, **kw)
        assert type(eo.grad_fn).__name__ == type(to.grad_fn).__name__ == "SqueezeBackward4"
        np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=1e-12)
