"""Matrix products and ember.linalg against PyTorch (values, dtypes, gradients, errors)."""
import numpy as np
import pytest

import ember
from oracle import compare

R = np.random.default_rng(0)


def rn(*shape, dtype=np.float64):
    return R.standard_normal(shape).astype(dtype)


def spd(n, batch=()):
    a = R.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)),
                                   ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)), ((3,), (5, 3, 4)),
                                   ((5, 2, 3), (3,)), ((5, 1, 2, 3), (4, 3, 2)),
                                   ((2, 0), (0, 3)), ((4, 2, 3), (4, 3, 1))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_shapes(torch, sa, sb, dtype):
    compare(torch, lambda L, a, b: L.matmul(a, b), rn(*sa, dtype=dtype), rn(*sb, dtype=dtype))
    compare(torch, lambda L, a, b: a @ b.detach(), rn(*sa, dtype=dtype), rn(*sb, dtype=dtype))


def test_products(torch):
    compare(torch, lambda L, a, b: L.mm(a, b), rn(2, 3), rn(3, 4))
    compare(torch, lambda L, a, b: L.bmm(a, b), rn(4, 2, 3), rn(4, 3, 5))
    compare(torch, lambda L, a, b: L.mv(a, b), rn(2, 3), rn(3))
    compare(torch, lambda L, a, b: L.dot(a, b), rn(3), rn(3))
    compare(torch, lambda L, a, b: L.outer(a, b), rn(3), rn(4))
    compare(torch, lambda L, a, b: a.mm(b.t()), rn(2, 3), rn(4, 3))
    compare(torch, lambda L, a, b: L.inner(a, b), rn(2, 3), rn(4, 3))
    compare(torch, lambda L, a, b: L.kron(a, b), rn(2, 3), rn(2, 2))


@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2.0), (0, 1.5)])
def test_add_products(torch, beta, alpha):
    compare(torch, lambda L, i, a, b: L.addmm(i, a, b, beta=beta, alpha=alpha),
            rn(4), rn(2, 3), rn(3, 4))
    compare(torch, lambda L, i, a, b: L.addmm(i, a, b, beta=beta, alpha=alpha),
            rn(2, 4), rn(2, 3), rn(3, 4))
    compare(torch, lambda L, i, a, b: L.addmv(i, a, b, beta=beta, alpha=alpha),
            rn(2), rn(2, 3), rn(3))
    compare(torch, lambda L, i, a, b: L.baddbmm(i, a, b, beta=beta, alpha=alpha),
            rn(1, 2, 5), rn(4, 2, 3), rn(4, 3, 5))
    compare(torch, lambda L, i, a, b: L.addbmm(i, a, b, beta=beta, alpha=alpha),
            rn(2, 5), rn(4, 2, 3), rn(4, 3, 5))


def test_grad_fn_names(torch):
    a = ember.randn(2, 3, requires_grad=True)
    v = ember.randn(3, requires_grad=True)
    assert ember.mm(a, a.t()).grad_fn.name() == "MmBackward0"
    assert ember.mv(a, v).grad_fn.name() == "MvBackward0"
    assert ember.dot(v, v).grad_fn.name() == "DotBackward0"
    assert ember.addmm(v, a.t(), a).grad_fn.name() == "AddmmBackward0"
    b = ember.randn(2, 2, 3, requires_grad=True)
    assert ember.bmm(b, b.mT).grad_fn.name() == "BmmBackward0"
    assert ember.baddbmm(b[:, :, :2], b, b.transpose(1, 2)).grad_fn.name() == "BaddbmmBackward0"
    assert ember.addmv(v[:2], a, v).grad_fn.name() == "AddmvBackward0"
    assert ember.linalg.vector_norm(a).grad_fn.name() == "LinalgVectorNormBackward0"
    s = ember.eye(3, requires_grad=True)
    assert ember.linalg.inv(s).grad_fn.name() == "LinalgInvExBackward0"
    assert ember.linalg.det(s).grad_fn.name() == "LinalgDetBackward0"


@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ij->", [(2, 3)]), ("ij->ji", [(2, 3)]),
    ("i,j->ij", [(2,), (3,)]), ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("ijk,k->j", [(2, 3, 4), (4,)]),
    ("ij,ij->i", [(2, 3), (1, 3)]), ("i,i", [(3,), (3,)]), ("ba,ca", [(2, 3), (4, 3)]),
])
def test_einsum(torch, eq, shapes):
    compare(torch, lambda L, *xs: L.einsum(eq, *xs), *[rn(*s) for s in shapes])


def test_einsum_list_and_double_backward(torch):
    compare(torch, lambda L, a, b: L.einsum("ij,jk->ik", [a, b]), rn(2, 3), rn(3, 4))
    compare(torch, lambda L, a, b: L.einsum(a, [0, 1], b, [1, 2], [2, 0]), rn(2, 3), rn(3, 4))
    compare(torch, lambda L, a, b: L.einsum(a, [Ellipsis, 1], b, [1]), rn(2, 3), rn(3))
    a = ember.tensor(rn(2, 3), requires_grad=True)
    b = ember.tensor(rn(3, 3), requires_grad=True)
    assert ember.autograd.gradcheck(lambda x, y: ember.einsum("ij,jj->i", x, y), (a, b))
    assert ember.autograd.gradgradcheck(lambda x, y: ember.einsum("ij,jk->ik", x, y), (a, b))


@pytest.mark.parametrize("dims,sb", [(2, (2, 4, 5)), (1, (4, 5)), (0, (2,)),
                                     (([1, 0], [0, 1]), (2, 3, 4)), (([0], [1]), (2, 3))])
def test_tensordot(torch, dims, sb):
    compare(torch, lambda L, a, b: L.tensordot(a, b, dims=dims), rn(3, 2, 4), rn(*sb))


@pytest.mark.parametrize("ord", [2, 1, 0, 3, 0.5, float("inf"), float("-inf"), -1])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (1, False), ((0, 2), True), (-1, True)])
def test_vector_norm(torch, ord, dim, keepdim):
    x = rn(3, 4, 2)
    compare(torch, lambda L, a: L.linalg.vector_norm(a, ord, dim, keepdim), x)
    compare(torch, lambda L, a: L.linalg.vector_norm(a, ord, dim, keepdim),
            x.astype(np.float32))


def test_vector_norm_ties_and_zero(torch):
    x = np.array([[1.0, -3.0, 3.0], [0.0, 0.0, 0.0]])
    compare(torch, lambda L, a: L.linalg.vector_norm(a, float("inf"), 1), x)
    compare(torch, lambda L, a: L.linalg.vector_norm(a, 2, 1), x)
    compare(torch, lambda L, a: L.linalg.norm(a, dim=1), x)


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf")])
@pytest.mark.parametrize("keepdim", [False, True])
def test_matrix_norm(torch, ord, keepdim):
    compare(torch, lambda L, a: L.linalg.matrix_norm(a, ord, keepdim=keepdim), rn(2, 3, 4))
    compare(torch, lambda L, a: L.linalg.matrix_norm(a, ord, dim=(0, 2), keepdim=keepdim),
            rn(3, 2, 4))


@pytest.mark.parametrize("ord,dim", [(None, None), (None, (0, 1)), (None, 1), (2, None),
                                     ("fro", None), (1, (1, 0)), (3, 0), ("nuc", None)])
def test_linalg_norm(torch, ord, dim):
    compare(torch, lambda L, a: L.linalg.norm(a, ord, dim), rn(3, 4))


def test_linalg_norm_vector_ord(torch):
    compare(torch, lambda L, a: L.linalg.norm(a, 3), rn(5))
    compare(torch, lambda L, a: L.linalg.norm(a), rn(2, 3, 4))


def test_inv_det_solve(torch):
    compare(torch, lambda L, a: L.linalg.inv(a), spd(3))
    compare(torch, lambda L, a: L.inverse(a), spd(3, (2,)))
    compare(torch, lambda L, a: L.linalg.det(a), rn(3, 3))
    compare(torch, lambda L, a: L.det(a), rn(2, 3, 3))
    compare(torch, lambda L, a: a.det(), rn(4, 4).astype(np.float32), rtol=1e-3, atol=1e-4)
    compare(torch, lambda L, a, b: L.linalg.solve(a, b), spd(3), rn(3))
    compare(torch, lambda L, a, b: L.linalg.solve(a, b), spd(3), rn(3, 2))
    compare(torch, lambda L, a, b: L.linalg.solve(a, b), spd(3, (2,)), rn(3, 2))
    compare(torch, lambda L, a, b: L.linalg.solve(a, b), spd(3, (2,)), rn(2, 3))
    compare(torch, lambda L, a, b: L.linalg.solve(a, b, left=False), spd(3), rn(2, 3))


def test_det_singular(torch):
    compare(torch, lambda L, a: L.linalg.det(a), np.array([[1.0, 2.0], [2.0, 4.0]]))
    compare(torch, lambda L, a: L.linalg.det(a), np.array([[[1.0, 2.0], [2.0, 4.0]],
                                                           [[1.0, 2.0], [3.0, 4.0]]]))


def test_linalg_gradcheck():
    a = ember.tensor(spd(3), requires_grad=True)
    b = ember.tensor(rn(3, 2), requires_grad=True)
    g = ember.autograd
    assert g.gradcheck(ember.linalg.inv, (a,))
    assert g.gradgradcheck(ember.linalg.inv, (a,))
    assert g.gradcheck(ember.linalg.det, (a,))
    assert g.gradgradcheck(ember.linalg.det, (a,))
    assert g.gradcheck(ember.linalg.solve, (a, b))
    assert g.gradgradcheck(ember.linalg.solve, (a, b))
    x = ember.tensor(rn(3, 4), requires_grad=True)
    for ord in (1, 2, 3, 0.5, float("inf")):
        assert g.gradcheck(lambda t: ember.linalg.vector_norm(t, ord, 1), (x,))
    assert g.gradgradcheck(lambda t: ember.linalg.vector_norm(t, 3, 1), (x,))
    m = ember.tensor(rn(3, 4), requires_grad=True)
    n = ember.tensor(rn(4, 2), requires_grad=True)
    i = ember.tensor(rn(3, 2), requires_grad=True)
    assert g.gradgradcheck(lambda p, q, r: ember.addmm(p, q, r, beta=0.5, alpha=2), (i, m, n))
    assert g.gradgradcheck(lambda p, q: ember.matmul(p, q), (ember.tensor(
        rn(2, 3, 4), requires_grad=True), ember.tensor(rn(4,), requires_grad=True)))


@pytest.mark.parametrize("fn", [
    lambda L: L.mm(L.ones(2, 3), L.ones(4, 5)),
    lambda L: L.mm(L.ones(2, 3), L.ones(3, 4, dtype=L.float64)),
    lambda L: L.bmm(L.ones(2, 3), L.ones(2, 3, 4)),
    lambda L: L.bmm(L.ones(2, 2, 3), L.ones(2, 2, 4)),
    lambda L: L.mv(L.ones(2, 3), L.ones(4)),
    lambda L: L.dot(L.ones(3), L.ones(4)),
    lambda L: L.dot(L.ones(2, 3), L.ones(4)),
    lambda L: L.dot(L.ones(3), L.ones(3, dtype=L.float64)),
    lambda L: L.matmul(L.ones(3), L.ones(4, 2)),
    lambda L: L.matmul(L.ones(2, 3), L.ones(4)),
    lambda L: L.addmm(L.ones(3), L.ones(2, 3), L.ones(4, 3)),
    lambda L: L.linalg.inv(L.zeros(3, 3)),
    lambda L: L.linalg.inv(L.zeros(3, 2)),
    lambda L: L.linalg.det(L.zeros(3, 2)),
    lambda L: L.linalg.vector_norm(L.ones(3, dtype=L.long)),
    lambda L: L.einsum("ij,jk->ik", L.ones(2, 3), L.ones(4, 2)),
    lambda L: L.einsum("ij,jk->ik", L.ones(2, 3)),
    lambda L: L.tensordot(L.ones(2, 3), L.ones(4, 2), dims=1),
])
def test_errors_match_torch(torch, fn):
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(Exception) as ee:
        fn(ember)
    assert str(ee.value) == str(te.value)
