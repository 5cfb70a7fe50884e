"""Regression tests for the papers2 programs (tests/programs/p_papers2_*.py): sparse COO tensors
as pygcn uses them, checked against torch."""
import importlib

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
esparse = importlib.import_module("ember.sparse")
from ember.ops.sparse import sparse_coo_tensor, spmm  # noqa: E402

IDX = [[0, 1, 1, 0], [2, 0, 2, 2]]      # (0, 2) twice: uncoalesced
VAL = [3., 4., 5., 1.]


def _pair(dtype="float64", requires_grad=False):
    v = np.array(VAL, dtype=dtype)
    ev = ember.tensor(v, requires_grad=requires_grad)
    tv = torch.tensor(v, requires_grad=requires_grad)
    return (sparse_coo_tensor(ember.tensor(IDX), ev, (2, 3)), ev,
            torch.sparse_coo_tensor(torch.tensor(IDX), tv, (2, 3)), tv)


def test_repr_and_attributes():
    es, _, ts, _ = _pair("float32")
    assert repr(es) == repr(ts)
    assert repr(es.coalesce()) == repr(ts.coalesce())
    assert repr(es.t()) == repr(ts.t())
    assert (es.is_sparse, es._nnz(), es.sparse_dim(), es.dense_dim(), es.is_coalesced()) == \
        (ts.is_sparse, ts._nnz(), ts.sparse_dim(), ts.dense_dim(), ts.is_coalesced())
    assert repr(es.layout) == repr(ts.layout) and tuple(es.shape) == tuple(ts.shape)
    es, _, ts, _ = _pair("float64", requires_grad=True)
    assert repr(es) == repr(ts)
    e0 = sparse_coo_tensor(ember.zeros(2, 0, dtype=ember.long), ember.zeros(0), (2, 3))
    t0 = torch.sparse_coo_tensor(torch.zeros(2, 0, dtype=torch.long), torch.zeros(0), (2, 3))
    assert repr(e0) == repr(t0)
    eh = sparse_coo_tensor(ember.tensor(IDX), ember.ones(4, 2), (2, 3, 2))
    th = torch.sparse_coo_tensor(torch.tensor(IDX), torch.ones(4, 2), (2, 3, 2))
    assert repr(eh) == repr(th) and repr(eh.coalesce()) == repr(th.coalesce())
    assert repr(esparse.FloatTensor(ember.tensor(IDX), ember.tensor(VAL), ember.Size([2, 3]))) \
        == repr(torch.sparse.FloatTensor(torch.tensor(IDX), torch.tensor(VAL), torch.Size([2, 3])))


def test_coalesce_values_to_dense():
    es, _, ts, _ = _pair()
    np.testing.assert_array_equal(es.to_dense().numpy(), ts.to_dense().numpy())
    c, tc = es.coalesce(), ts.coalesce()
    np.testing.assert_array_equal(c.indices().numpy(), tc.indices().numpy())
    np.testing.assert_array_equal(c.values().numpy(), tc.values().numpy())
    with pytest.raises(RuntimeError, match="uncoalesced"):
        es.indices()
    with pytest.raises(RuntimeError, match="same nnz"):
        sparse_coo_tensor(ember.tensor(IDX), ember.tensor([1., 2.]), (2, 3))


@pytest.mark.parametrize("which", ["spmm", "sparse.mm", "matmul", "to_dense"])
def test_sparse_mm_gradients(which):
    es, ev, ts, tv = _pair(requires_grad=True)
    d = np.random.RandomState(0).randn(3, 2)
    ed, td = ember.tensor(d, requires_grad=True), torch.tensor(d, requires_grad=True)
    g = np.random.RandomState(1).randn(2, 2)
    if which == "spmm":
        eo, to = spmm(es, ed), torch.spmm(ts, td)
    elif which == "sparse.mm":
        eo, to = esparse.mm(es, ed), torch.sparse.mm(ts, td)
    elif which == "matmul":
        eo, to = es @ ed, ts @ td
    else:
        eo, to = es.coalesce().to_dense() @ ed, ts.coalesce().to_dense() @ td
    assert type(eo.grad_fn).__name__ == type(to.grad_fn).__name__
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=1e-12)
    eo.backward(ember.tensor(g))
    to.backward(torch.tensor(g))
    np.testing.assert_allclose(ed.grad.numpy(), td.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(ev.grad.numpy(), tv.grad.numpy(), rtol=1e-12)


def test_sparse_sum_and_dtype_error():
    es, _, ts, _ = _pair("float32")
    assert repr(esparse.sum(es, dim=1)) == repr(torch.sparse.sum(ts, dim=1))
    assert repr(esparse.sum(es, dim=0)) == repr(torch.sparse.sum(ts, dim=0))
    assert repr(esparse.sum(es)) == repr(torch.sparse.sum(ts))
    with pytest.raises(RuntimeError) as e:
        esparse.mm(es, ember.ones(3, 2, dtype=ember.float64))
    with pytest.raises(RuntimeError) as t:
        torch.sparse.mm(ts, torch.ones(3, 2, dtype=torch.float64))
    assert str(e.value) == str(t.value)


def test_strict_device_spmm():
    es, _, _, _ = _pair()
    d = ember.tensor(np.arange(6.).reshape(3, 2))
    s = sparse_coo_tensor(ember.tensor(IDX, device="strict"),
                          ember.tensor(VAL, dtype=ember.float64, device="strict"), (2, 3))
    out = spmm(s, d.to("strict"))
    np.testing.assert_allclose(out.cpu().numpy(), spmm(es, d).numpy())


def test_smm_returns_sparse_rows():
    i = [[0, 1, 1, 2], [1, 0, 2, 2]]
    v = [3., 4., 5., 0.]
    m = [[1., 2], [3, 4], [0, 1]]
    e = ember.smm if hasattr(ember, "smm") else importlib.import_module("ember.ops.sparse").smm
    eo = e(sparse_coo_tensor(ember.tensor(i), ember.tensor(v), (3, 3)), ember.tensor(m))
    to = torch.smm(torch.sparse_coo_tensor(torch.tensor(i), torch.tensor(v), (3, 3)),
                   torch.tensor(m))
    assert repr(eo) == repr(to)


def test_mm_errors_and_dense_fallback():
    es, _, ts, _ = _pair("float32")
    for ef, tf in ((spmm, torch.spmm), (esparse.mm, torch.sparse.mm)):
        with pytest.raises(RuntimeError) as e:
            ef(es, ember.ones(4, 2))
        with pytest.raises(RuntimeError) as t:
            tf(ts, torch.ones(4, 2))
        assert str(e.value) == str(t.value)
        a, b = np.arange(6.).reshape(2, 3), np.ones((3, 2))
        np.testing.assert_allclose(ef(ember.tensor(a), ember.tensor(b)).numpy(),
                                   tf(torch.tensor(a), torch.tensor(b)).numpy())
    out = esparse.addmm(ember.ones(2, 2), es, ember.ones(3, 2), beta=0.5, alpha=2.0)
    ref = torch.sparse.addmm(torch.ones(2, 2), ts, torch.ones(3, 2), beta=0.5, alpha=2.0)
    np.testing.assert_allclose(out.numpy(), ref.numpy())


def test_to_sparse_masks_gradient():
    from ember.ops.sparse import to_sparse
    a = [[0., 2], [3, 0]]
    ex, tx = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    es, ts = to_sparse(ex), tx.to_sparse()
    assert repr(es) == repr(ts)
    to_sparse(ex).to_dense().sum().backward()
    tx.to_sparse().to_dense().sum().backward()
    np.testing.assert_array_equal(ex.grad.numpy(), tx.grad.numpy())
    b = [[[0., 1], [0, 0]]]
    assert repr(to_sparse(ember.tensor(b), 2)) == repr(torch.tensor(b).to_sparse(2))
