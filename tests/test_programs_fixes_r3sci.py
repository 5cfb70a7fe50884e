"""Regression tests for the r3sci programs (tests/programs/p_r3sci_*.py): element-wise arithmetic
on sparse COO tensors (results stay sparse, merged as torch merges them) and the sparse CSR
layout, checked against torch."""
import warnings

import numpy as np
import pytest

import ember
from ember.ops.sparse import sparse_coo_tensor, sparse_csr_tensor, to_sparse

torch = pytest.importorskip("torch")
warnings.filterwarnings("ignore", message="Sparse")

D = [[1.5, 0.0, -2.0, 0.0], [0.0, 0.0, 3.0, 0.5], [0.0, -1.0, 0.0, 0.0], [2.0, 0.0, 0.0, 4.0]]
IDX = [[1, 0, 1, 3], [2, 0, 2, 3]]      # (1, 2) twice: uncoalesced
VAL = [3.0, 4.0, 5.0, -1.0]


def _dense():
    return ember.tensor(D), torch.tensor(D)


def _same(e, t):
    assert repr(e.layout) == repr(t.layout)
    assert repr(e) == repr(t)


def _raises(fe, ft):
    with pytest.raises(Exception) as te:
        ft()
    with pytest.raises(type(te.value)) as ee:
        fe()
    assert str(ee.value) == str(te.value)


def test_coo_scalar_arithmetic_stays_sparse():
    ed, td = _dense()
    es, ts = ed.to_sparse(), td.to_sparse()
    eu = sparse_coo_tensor(ember.tensor(IDX), ember.tensor(VAL), (4, 4))
    tu = torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor(VAL), (4, 4))
    for f in (lambda s: s * 2, lambda s: 2 * s, lambda s: s / 4, lambda s: -s,
              lambda s: s.mul(3), lambda s: s.div(2), lambda s: s.neg()):
        _same(f(es), f(ts))
        _same(f(eu), f(tu))
        assert f(eu).is_coalesced() == f(tu).is_coalesced()
    _same(es * ember.tensor(2.0), ts * torch.tensor(2.0))
    _same(es * ed, ts * td)
    assert repr((ed + es).layout) == repr((td + ts).layout)


def test_coo_add_sub_mul_sparse_sparse():
    ed, td = _dense()
    es, ts = ed.to_sparse(), td.to_sparse()
    eu = sparse_coo_tensor(ember.tensor(IDX), ember.tensor(VAL), (4, 4))
    tu = torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor(VAL), (4, 4))
    pairs = [(es, ts, es, ts), (es, ts, es.t(), ts.t()), (es.t(), ts.t(), es, ts),
             (eu, tu, es, ts), (es, ts, eu, tu), (eu, tu, eu.t(), tu.t())]
    for ea, ta, eb, tb in pairs:
        _same(ea + eb, ta + tb)
        _same(ea - eb, ta - tb)
        _same(ea * eb, ta * tb)
        assert (ea + eb).is_coalesced() == (ta + tb).is_coalesced()
        assert (ea * eb).is_coalesced() == (ta * tb).is_coalesced()
    _same(es.add(eu, alpha=2), ts.add(tu, alpha=2))


def test_coo_arithmetic_errors():
    ed, td = _dense()
    es, ts = ed.to_sparse(), td.to_sparse()
    e3 = sparse_coo_tensor(ember.tensor([[0]]), ember.tensor([1.0]), (3,))
    t3 = torch.sparse_coo_tensor(torch.tensor([[0]]), torch.tensor([1.0]), (3,))
    _raises(lambda: es + ed, lambda: ts + td)
    _raises(lambda: es + 1, lambda: ts + 1)
    _raises(lambda: es + e3, lambda: ts + t3)
    _raises(lambda: es * e3, lambda: ts * t3)


def test_coo_arithmetic_gradients_and_node_names():
    v = np.array([1.0, 2.0, -3.0])
    ev, tv = ember.tensor(v, requires_grad=True), torch.tensor(v, requires_grad=True)
    idx = [[0, 2, 3], [1, 1, 0]]
    es = sparse_coo_tensor(ember.tensor(idx), ev, (4, 2))
    ts = torch.sparse_coo_tensor(torch.tensor(idx), tv, (4, 2))
    ops = (lambda s: s * 2, lambda s: s + s, lambda s: -s, lambda s: s / 2, lambda s: s - s * 3,
           lambda s: s * s)
    for f in ops:
        assert type(f(es).grad_fn).__name__ == type(f(ts).grad_fn).__name__
    w = np.array([[0.5, -1.0], [2.0, 1.0], [0.3, 0.7], [-0.2, 1.5]])
    (f(es) * 3 + es * es).to_dense().mul(ember.tensor(w)).sum().backward()
    (f(ts) * 3 + ts * ts).to_dense().mul(torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(ev.grad.numpy(), tv.grad.numpy())


def test_csr_layout_repr_and_parts():
    ed, td = _dense()
    ec, tc = to_sparse(ed, layout=ember.sparse_csr), td.to_sparse(layout=torch.sparse_csr)
    _same(ec, tc)
    assert (ec.is_sparse, ec.is_sparse_csr, ec._nnz()) == (tc.is_sparse, tc.is_sparse_csr,
                                                           tc._nnz())
    for name in ("crow_indices", "col_indices", "values"):
        assert repr(getattr(ec, name)()) == repr(getattr(tc, name)())
    assert repr(ec.to_dense()) == repr(tc.to_dense())
    _same(ed.to_sparse().to_sparse_csr(), td.to_sparse().to_sparse_csr())
    _same(ec.to_sparse(), tc.to_sparse())
    _same(to_sparse(ember.zeros(2, 3), layout=ember.sparse_csr),
          torch.zeros(2, 3).to_sparse(layout=torch.sparse_csr))
    e64 = to_sparse(ember.tensor(D, dtype=ember.float64), layout=ember.sparse_csr)
    _same(e64, torch.tensor(D, dtype=torch.float64).to_sparse(layout=torch.sparse_csr))
    _same(sparse_csr_tensor([0, 1, 2], [1, 0], [5.0, 6.0]),
          torch.sparse_csr_tensor([0, 1, 2], [1, 0], [5.0, 6.0]))
    _same(sparse_csr_tensor(ember.tensor([0, 2, 2]), ember.tensor([0, 3]), ember.tensor([1, 2]),
                            (2, 4)),
          torch.sparse_csr_tensor(torch.tensor([0, 2, 2]), torch.tensor([0, 3]),
                                  torch.tensor([1, 2]), (2, 4)))


def test_csr_arithmetic_matmul_and_errors():
    ed, td = _dense()
    ec, tc = to_sparse(ed, layout=ember.sparse_csr), td.to_sparse(layout=torch.sparse_csr)
    for f in (lambda c: c * 2, lambda c: 2 * c, lambda c: -c, lambda c: c + c, lambda c: c * c,
              lambda c: c.neg()):
        _same(f(ec), f(tc))
    x = np.arange(8.0).reshape(4, 2)
    em, tm = ec @ ember.tensor(x, dtype=ember.float32), tc @ torch.tensor(x, dtype=torch.float32)
    assert repr(em.layout) == repr(tm.layout)
    np.testing.assert_allclose(em.numpy(), tm.numpy())
    assert repr(ember.ones(4, 4) + ec) == repr(torch.ones(4, 4) + tc)
    assert repr(ec + ember.ones(4, 4)) == repr(tc + torch.ones(4, 4))
    _raises(lambda: ec / 2, lambda: tc / 2)
    _raises(lambda: ec - ec, lambda: tc - tc)
    _raises(lambda: ec + 1, lambda: tc + 1)
    _raises(lambda: ec + ember.ones(2, 4), lambda: tc + torch.ones(2, 4))


def test_csr_gradients():
    w = np.arange(16.0).reshape(4, 4)
    ed = ember.tensor(D, requires_grad=True)
    td = torch.tensor(D, requires_grad=True)
    ec, tc = to_sparse(ed, layout=ember.sparse_csr), td.to_sparse(layout=torch.sparse_csr)
    assert type(ec.grad_fn).__name__ == type(tc.grad_fn).__name__
    assert type(ec.values().grad_fn).__name__ == type(tc.values().grad_fn).__name__
    ec2, tc2 = ec * 3, tc * 3
    assert type(ec2.grad_fn).__name__ == type(tc2.grad_fn).__name__
    (ec2.values() * ember.tensor([1.0, 2, 3, 4, 5, 6, 7])).sum().backward()
    (tc2.values() * torch.tensor([1.0, 2, 3, 4, 5, 6, 7])).sum().backward()
    np.testing.assert_allclose(ed.grad.numpy(), td.grad.numpy())
    ed.grad = None
    td.grad = None
    ec, tc = to_sparse(ed, layout=ember.sparse_csr), td.to_sparse(layout=torch.sparse_csr)
    ec.to_dense().mul(ember.tensor(w)).sum().backward()
    tc.to_dense().mul(torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(ed.grad.numpy(), td.grad.numpy())
