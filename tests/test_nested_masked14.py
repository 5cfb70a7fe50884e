"""torch.nested and torch.masked against torch: reprs, values, errors and gradients."""
import warnings

import numpy as np
import pytest

import ember

pytestmark = pytest.mark.filterwarnings("ignore:The PyTorch API of")


def _both(torch, fn):
    """``fn(lib)`` on torch and ember: (result, error) pairs."""
    out = []
    for lib in (torch, ember):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append((fn(lib), None))
        except Exception as e:      # noqa: BLE001  (the error is what is compared)
            out.append((None, e))
    return out


def _same(torch, fn, exact_repr=True):
    (t, te), (e, ee) = _both(torch, fn)
    if te is not None or ee is not None:
        assert type(te) is type(ee), (te, ee)
        assert str(ee)[:120] == str(te)[:120]
        return
    if exact_repr:
        assert repr(e) == repr(t)
    return t, e


def _parts(lib):
    g = np.random.default_rng(0)
    return [lib.tensor(g.standard_normal((n, 3)).astype("float32")) for n in (2, 4, 1)]


STRIDED = [
    lambda L: L.nested.nested_tensor(_parts(L)),
    lambda L: L.nested.nested_tensor(_parts(L), requires_grad=True),
    lambda L: L.nested.nested_tensor([[1, 2], [3]]),
    lambda L: L.nested.nested_tensor([[1.0, 2], [3]]),
    lambda L: L.nested.nested_tensor(_parts(L), dtype=L.float64),
    lambda L: L.nested.nested_tensor(_parts(L)) + 1,
    lambda L: L.nested.nested_tensor(_parts(L)) * L.nested.nested_tensor(_parts(L)),
    lambda L: L.nested.nested_tensor(_parts(L)).relu(),
    lambda L: L.relu(L.nested.nested_tensor(_parts(L))),
    lambda L: L.nested.nested_tensor(_parts(L)).tanh(),
    lambda L: L.nested.nested_tensor(_parts(L)).softmax(-1),
    lambda L: L.nested.nested_tensor(_parts(L)).transpose(1, 2),
    lambda L: L.nested.nested_tensor(_parts(L)).exp(),
    lambda L: L.nested.nested_tensor(_parts(L)).sum(),
    lambda L: L.nested.nested_tensor(_parts(L)).shape,
    lambda L: L.nested.nested_tensor(_parts(L)).size(1),
    lambda L: L.nested.nested_tensor(_parts(L)).size(2),
    lambda L: L.nested.nested_tensor(_parts(L)).transpose(0, 1),
    lambda L: L.nested.nested_tensor(_parts(L)) + L.ones(3),
    lambda L: L.nested.nested_tensor(_parts(L)) + L.nested.nested_tensor(_parts(L)[:2]),
    lambda L: L.nested.nested_tensor([L.ones(2), L.ones(2, 2)]),
    lambda L: L.nested.nested_tensor(L.ones(2)),
    lambda L: L.nested.nested_tensor(_parts(L), layout=L.sparse_coo),
    lambda L: L.nested.to_padded_tensor(L.nested.nested_tensor(_parts(L)), 0.0),
    lambda L: L.nested.nested_tensor(_parts(L)).to_padded_tensor(-1.0, (3, 5, 4)),
    lambda L: L.nested.nested_tensor(_parts(L)).to_padded_tensor(-1.0, (3, 2, 4)),
    lambda L: L.nested.nested_tensor(_parts(L)).unbind(),
    lambda L: [t for t in L.nested.nested_tensor(_parts(L))],
    lambda L: L.nested.nested_tensor(_parts(L)).narrow(0, 1, 2),
    lambda L: L.nested.nested_tensor(_parts(L)) @ L.ones(3, 2),
    lambda L: (L.nested.nested_tensor(_parts(L)).dim(), L.nested.nested_tensor(_parts(L)).numel(),
               L.nested.nested_tensor(_parts(L)).size(0), L.nested.nested_tensor(_parts(L)).layout,
               L.nested.nested_tensor(_parts(L)).is_nested),
]

JAGGED = [
    lambda L: L.nested.nested_tensor(_parts(L), layout=L.jagged).shape,
    lambda L: L.nested.nested_tensor(_parts(L), layout=L.jagged).values(),
    lambda L: L.nested.nested_tensor(_parts(L), layout=L.jagged).offsets(),
    lambda L: L.nested.nested_tensor(_parts(L), layout=L.jagged).exp().values(),
    lambda L: (L.nested.nested_tensor(_parts(L), layout=L.jagged) * 2 + 1).unbind(),
    lambda L: L.nested.nested_tensor(_parts(L), layout=L.jagged).sum(),
    lambda L: L.nested.nested_tensor(_parts(L), layout=L.jagged).transpose(0, 1),
    lambda L: L.nested.nested_tensor([L.ones(2, 3), L.ones(3, 4)], layout=L.jagged),
    lambda L: L.nested.to_padded_tensor(L.nested.nested_tensor(_parts(L), layout=L.jagged), 0.),
    lambda L: L.nested.nested_tensor_from_jagged(L.arange(12.).reshape(6, 2),
                                                 L.tensor([0, 2, 6])).unbind(),
    lambda L: L.nested.nested_tensor(_parts(L), layout=L.jagged).unflatten(-1, [3, 1])
    .transpose(1, 2).values().shape,
]


@pytest.mark.parametrize("i", range(len(STRIDED)))
def test_strided_matches_torch(torch, i):
    _same(torch, STRIDED[i])


@pytest.mark.parametrize("i", range(len(JAGGED)))
def test_jagged_matches_torch(torch, i):
    _same(torch, JAGGED[i])


def test_jagged_repr_numbers_ragged_sizes(torch):
    def fn(L):
        nt = L.nested.nested_tensor(_parts(L), layout=L.jagged)
        return repr(nt).split("j")[0], repr(nt * 2).split("grad_fn")[0]
    _same(torch, fn)


def _linear_sdpa(L, layout):
    L.manual_seed(0)
    lin = L.nn.Linear(3, 4)
    if layout is L.jagged:
        x = L.nested.nested_tensor(_parts(L), layout=layout, requires_grad=True)
        q = lin(x).unflatten(-1, [2, 2]).transpose(1, 2)
        out = L.nn.functional.scaled_dot_product_attention(q, q, q).transpose(1, 2).flatten(-2)
    else:       # (torch's strided layout has no unflatten: attention by hand, then SDPA)
        x = L.nested.nested_tensor(_parts(L), requires_grad=True)
        q = lin(x)
        att = q.bmm(q.transpose(1, 2)).softmax(-1).bmm(q)
        heads = L.nested.as_nested_tensor([c.reshape(-1, 2, 2).transpose(0, 1)
                                           for c in att.unbind()])
        out = L.nn.functional.scaled_dot_product_attention(heads, heads, heads)
    pad = L.nested.to_padded_tensor(out, 0.0)
    pad.pow(2).sum().backward()
    return pad, x.grad.unbind(), lin.weight.grad


@pytest.mark.parametrize("jagged", [False, True])
def test_linear_sdpa_autograd(torch, jagged):
    (t, te), (e, ee) = _both(torch, lambda L: _linear_sdpa(L, L.jagged if jagged else L.strided))
    assert te is None and ee is None, (te, ee)
    np.testing.assert_allclose(e[0].detach().numpy(), t[0].detach().numpy(), atol=1e-5)
    assert repr(e[0]).split("grad_fn")[1] == repr(t[0]).split("grad_fn")[1]
    for a, b in zip(e[1], t[1]):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-5)
    np.testing.assert_allclose(e[2].numpy(), t[2].numpy(), atol=1e-5)


def test_from_jagged_grad_reaches_values(torch):
    def fn(L):
        v = L.arange(12.).reshape(6, 2).requires_grad_()
        nt = L.nested.nested_tensor_from_jagged(v, L.tensor([0, 2, 6]))
        L.nested.to_padded_tensor(nt.sin() * 3, 0.0).sum().backward()
        return v.grad
    _same(torch, fn)


def test_as_nested_tensor_keeps_graph(torch):
    def fn(L):
        a, b = L.ones(2, 2, requires_grad=True), L.ones(1, 2, requires_grad=True)
        nt = L.nested.as_nested_tensor([a, b])
        L.nested.to_padded_tensor(nt * 5, 0.0).sum().backward()
        return repr(nt), nt.is_leaf, a.grad, b.grad
    _same(torch, fn)


def _mt(L, grad=False):
    data = L.tensor([[0., 1., 2.], [3., 4., 5.], [6., 7., 8.]])
    mask = L.tensor([[True, False, True], [False, False, False], [True, True, False]])
    return L.masked.masked_tensor(data, mask, requires_grad=grad)


MASKED = [
    lambda L: _mt(L),
    lambda L: L.masked.masked_tensor(L.tensor(3.), L.tensor(False)),
    lambda L: L.masked.masked_tensor(L.tensor([1, 2]), L.tensor([True, False])),
    lambda L: (_mt(L).get_data(), _mt(L).get_mask(), _mt(L).to_tensor(-1)),
    lambda L: _mt(L) + 1,
    lambda L: _mt(L) * _mt(L),
    lambda L: _mt(L).exp(),
    lambda L: L.sin(_mt(L)),
    lambda L: _mt(L) + L.masked.masked_tensor(L.ones(3, 3), L.ones(3, 3, dtype=L.bool)),
    lambda L: _mt(L).softmax(1),
    lambda L: _mt(L) > 2,
    lambda L: L.masked.masked_tensor(L.ones(2), L.ones(2)),
    lambda L: L.masked.masked_tensor(L.ones(2), L.ones(3, dtype=L.bool)),
    lambda L: L.masked.masked_tensor([1.0], L.ones(1, dtype=L.bool)),
    lambda L: (_mt(L).shape, _mt(L).dtype, _mt(L).is_sparse, _mt(L).layout),
]
for _name in ("sum", "mean", "amax", "amin", "prod", "argmax"):
    MASKED.append(lambda L, n=_name: getattr(_mt(L), n)())
    MASKED.append(lambda L, n=_name: getattr(_mt(L), n)(1))
    MASKED.append(lambda L, n=_name: getattr(_mt(L), n)(0, keepdim=True))


@pytest.mark.parametrize("i", range(len(MASKED)))
def test_masked_tensor_matches_torch(torch, i):
    _same(torch, MASKED[i])


def test_masked_tensor_gradients(torch):
    def fn(L):
        x = L.tensor([-10., -5, 0, 5, 10, 50, 60, 70, 80, 90, 100])
        mask = x < 0
        mx = L.masked.masked_tensor(x, mask, requires_grad=True)
        my = L.masked.masked_tensor(L.ones_like(x), ~mask, requires_grad=True)
        y = L.where(mask, L.exp(mx), my)
        y.sum().backward()
        return repr(y), repr(mx.grad), repr(my.grad)
    _same(torch, fn)


@pytest.mark.parametrize("op", ["mean", "amax", "sum", "to_tensor"])
def test_masked_tensor_reduction_grads(torch, op):
    def fn(L):
        g = np.random.default_rng(1).standard_normal((3, 4)).astype("float32")
        a = L.tensor(g)
        mt = L.masked.masked_tensor(a, a > 0, requires_grad=True)
        out = mt.to_tensor(0) * 3 if op == "to_tensor" else getattr(mt, op)(1)
        out.sum().backward()
        return repr(mt.grad)
    _same(torch, fn)


def _fdata(L):
    g = np.random.default_rng(2)
    x = L.tensor(g.standard_normal((3, 4)))
    m = L.tensor(g.random((3, 4)) > 0.5)
    m[1] = False
    return x, m


@pytest.mark.parametrize("op", ["sum", "mean", "amax", "amin", "prod", "softmax", "log_softmax",
                                "norm", "var", "std", "argmax"])
@pytest.mark.parametrize("dim", [None, 1, 0, -1])
def test_functional_masked_reductions(torch, op, dim):
    if op in ("softmax", "log_softmax") and dim is None:
        return
    def fn(L):
        x, m = _fdata(L)
        x.requires_grad_()
        out = getattr(L.masked, op)(x, dim, mask=m) if op != "norm" else \
            L.masked.norm(x, 2.0, dim, mask=m)
        if out.requires_grad:
            w = L.tensor(np.random.default_rng(3).standard_normal(tuple(out.shape)))
            L.where(out.isfinite(), out * w, L.zeros_like(out)).sum().backward()
        return out.detach(), x.grad
    (t, te), (e, ee) = _both(torch, fn)
    assert te is None and ee is None, (te, ee)
    np.testing.assert_allclose(e[0].numpy(), t[0].numpy(), rtol=1e-6)
    assert (e[1] is None) == (t[1] is None)
    if t[1] is not None:
        np.testing.assert_allclose(e[1].numpy(), t[1].numpy(), rtol=1e-6)


def test_functional_keepdim_dtype(torch):
    def fn(L):
        x, m = _fdata(L)
        return (L.masked.sum(x.int(), 1, keepdim=True, mask=m),
                L.masked.mean(x, (0, 1), mask=m, dtype=L.float32),
                L.masked.var(x, 1, unbiased=False, keepdim=True, mask=m))
    _same(torch, fn)


def test_functional_masked_errors(torch):
    _same(torch, lambda L: L.masked.mean(L.ones(2, dtype=L.int64), mask=L.ones(2).bool()))
    _same(torch, lambda L: L.masked.sum(L.ones(2), 2, mask=L.ones(2).bool()))
    _same(torch, lambda L: L.masked.sum(L.ones(2), mask=L.ones(1, 2).bool()))
