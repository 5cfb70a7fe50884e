"""Regressions found by the round-3 error-message programs (tests/programs/p_r3errs_*):
matmul's batched and folded size errors, advanced-index bounds errors (torch's kernel order and
dimension numbering), 0-d indexing, setitem value types, float list indices, grad assignment,
grad_outputs count, CopySlices in the version message, assert_close's scalar type check and the
saved tensors of the matrix-product nodes; each checked against PyTorch."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _both(fn):
    """``fn(lib)`` under ember and torch; an exception is returned as (class name, message)."""
    out = []
    for lib in (ember, torch):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = fn(lib)
            out.append(r.tolist() if isinstance(r, lib.Tensor) else r)
        except Exception as e:     # noqa: BLE001 - the error itself is the result compared
            out.append((type(e).__name__, str(e)))
    return out


_MATMUL = [((2, 3, 4), (2, 5, 6)), ((3, 4), (2, 5, 6)), ((4,), (2, 5, 6)), ((2, 3, 4), (5,)),
           ((2, 1, 3, 4), (3, 5, 6)), ((2, 3, 4), (5, 6)), ((2, 3, 4), (5, 4, 6)),
           ((2, 3, 4), (5, 5, 6)), ((3, 2, 3, 4), (2, 5, 6))]


@pytest.mark.parametrize("sa,sb", _MATMUL)
@pytest.mark.parametrize("grad", [(False, False), (True, False), (False, True)])
def test_matmul_size_errors(sa, sb, grad):
    e, t = _both(lambda L: L.matmul(L.zeros(sa, requires_grad=grad[0]),
                                    L.zeros(sb, requires_grad=grad[1])))
    assert e == t


def test_matmul_noncontiguous_batch_errors():
    e, t = _both(lambda L: L.matmul(L.zeros(2, 3, 4).transpose(0, 1), L.zeros(5)))
    assert e == t
    e, t = _both(lambda L: L.matmul(L.zeros(2, 3, 4).transpose(0, 1), L.zeros(5, 2)))
    assert e == t


_INDEX = [
    lambda L: L.zeros(2, 3, 4)[:, :, L.tensor([4])],
    lambda L: L.zeros(2, 3, 4)[:, L.tensor([0]), L.tensor([4])],
    lambda L: L.zeros(2, 3, 4)[0, :, L.tensor([4])],
    lambda L: L.zeros(2, 3, 4)[L.tensor([0]), :, L.tensor([4])],
    lambda L: L.zeros(2, 3, 4)[None, :, L.tensor([3])],
    lambda L: L.zeros(2, 3, 4)[:, L.tensor([True, False, True]), L.tensor([0, 5])],
    lambda L: L.zeros(3)[L.tensor([-9, 5])],
    lambda L: L.zeros(3, 4)[L.tensor([0, 1, 9]), L.tensor([7, 0, 0])],
    lambda L: L.zeros(3, 4)[L.tensor([[0], [1], [9]]), L.tensor([0, 0, 7])],
    lambda L: L.zeros(3, 4)[L.tensor([0, 1, 9]), L.tensor([7, 0])],
    lambda L: L.zeros(2, 3, 4).__setitem__((slice(None), L.tensor([0]), L.tensor([9])), 1.0),
    lambda L: L.tensor(5.0)[0],
    lambda L: L.tensor(5.0)[:],
    lambda L: L.tensor(5.0)[0, None],
    lambda L: L.tensor(5.0).__setitem__(0, 1.0),
    lambda L: L.tensor(5.0)[True].shape,
    lambda L: L.arange(12.0).reshape(3, 4)[[0.5, 2.9]],
    lambda L: L.arange(12.0).reshape(3, 4)[np.array([1.0])],
]


@pytest.mark.parametrize("i", range(len(_INDEX)))
def test_index_errors(i):
    e, t = _both(_INDEX[i])
    assert e == t


@pytest.mark.parametrize("value", [[1.0], (1.0, 2.0, 3.0), "a", None, np.ones(3), np.float32(2),
                                   np.bool_(True), np.int64(2), 2.5, True])
def test_setitem_value_types(value):
    e, t = _both(lambda L: L.zeros(3).__setitem__(slice(None), value))
    assert e == t
    e, t = _both(lambda L: L.zeros(3, dtype=L.long).__setitem__(0, value))
    assert e == t


def test_bool_of_empty():
    e, t = _both(lambda L: bool(L.zeros(0, 3)))
    assert e == t


@pytest.mark.parametrize("dtype", ["float64", "float16", "int64", "bfloat16", "complex64"])
def test_grad_assign_messages(dtype):
    def f(L):
        leaf = L.ones(2, requires_grad=True)
        leaf.grad = L.ones(3, dtype=getattr(L, dtype))
    e, t = _both(f)
    assert e == t


def test_grad_assign_size_and_type():
    def size(L):
        L.ones(2, requires_grad=True).grad = L.ones(3)

    def kind(L):
        L.ones(2, requires_grad=True).grad = [1.0, 2.0]
    assert _both(size)[0] == _both(size)[1]
    assert _both(kind)[0] == _both(kind)[1]


def test_nonleaf_grad_warning_text():
    msgs = []
    for L in (ember, torch):
        x = L.ones(2, requires_grad=True) * 2
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            x.grad
        msgs.append(str(w[0].message).split(" (Triggered")[0])
    assert msgs[0] == msgs[1]


def test_grad_outputs_count():
    def f(L):
        a = L.ones(2, requires_grad=True)
        return L.autograd.grad([(a * 2).sum(), (a * 3).sum()], a, grad_outputs=[L.tensor(1.0)])

    def g(L):
        a = L.ones(2, requires_grad=True)
        return L.autograd.grad([(a * 2).sum()], a, [L.tensor(1.0), L.tensor(2.0)])[0]
    assert _both(f)[0] == _both(f)[1]
    assert _both(g)[0] == _both(g)[1]


def test_copyslices_version_message():
    def f(L):
        p = L.randn(4, requires_grad=True) * 1
        q = p ** 2
        p[0] = 5.0
        q.sum().backward()
    e, t = _both(f)
    assert e == t


@pytest.mark.parametrize("a,e", [(1, 1.0), (1.0, 1 + 0j), (np.float32(1), 1.0), (3, 4)])
def test_assert_close_scalar_types(a, e):
    r = _both(lambda L: L.testing.assert_close(a, e))
    assert r[0] == r[1]


def test_assert_close_type_names():
    r = _both(lambda L: L.testing.assert_close(L.tensor([1.0]), [1.0]))
    assert r[0] == r[1]


def _saved(L, name, k):
    L.manual_seed(0)
    a = L.randn(2, 3, requires_grad=True)
    b = L.randn(3, 4, requires_grad=True)
    out = {"mm": lambda: L.mm(a, b), "bmm": lambda: L.bmm(a[None], b[None]),
           "addmm": lambda: L.addmm(L.zeros(4), a, b, beta=0.5, alpha=3),
           "mv": lambda: L.mv(a, b[:, 0]), "dot": lambda: L.dot(a[0], a[1]),
           "mm_b": lambda: L.mm(a, b.detach()), "mm_a": lambda: L.mm(a.detach(), b),
           "addmm_a": lambda: L.addmm(L.zeros(4, requires_grad=True), a.detach(), b),
           "baddbmm": lambda: L.baddbmm(L.zeros(1, 2, 4), a[None], b[None], alpha=2)}[name]()
    v = getattr(out.grad_fn, k)
    if isinstance(v, L.Tensor):
        return tuple(v.shape), v.requires_grad, v.detach().numpy().round(5).tolist()
    return v


_SAVED = {"mm": ["self", "mat2", "self_sym_sizes", "mat2_sym_sizes"],
          "mm_b": ["self", "mat2", "self_sym_sizes", "mat2_sym_sizes"],
          "mm_a": ["self", "mat2", "self_sym_sizes", "mat2_sym_sizes"],
          "bmm": ["self", "mat2"], "mv": ["self", "vec"], "dot": ["self", "tensor"],
          "addmm": ["mat1", "mat2", "alpha", "beta", "mat1_sym_sizes", "mat2_sym_sizes"],
          "addmm_a": ["mat1", "mat2", "mat1_sym_sizes", "mat2_sym_sizes"],
          "baddbmm": ["batch1", "batch2", "alpha", "beta"]}


@pytest.mark.parametrize("name,k", [(n, k) for n, ks in _SAVED.items() for k in ks])
def test_product_saved_attributes(name, k):
    e, t = _both(lambda L: _saved(L, name, "_saved_" + k))
    assert e == t


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gradcheck_mismatch_message(dtype):
    def f(L):
        class BadSquare(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a * a

            @staticmethod
            def backward(ctx, g):
                (a,) = ctx.saved_tensors
                return g * a
        x = L.tensor([1.0, 2.0], dtype=getattr(L, dtype), requires_grad=True)
        return L.autograd.gradcheck(BadSquare.apply, (x,), eps=1e-3, atol=1e-2)
    e, t = _both(f)
    assert e == t
