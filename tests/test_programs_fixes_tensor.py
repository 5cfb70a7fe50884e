"""Regression tests for differences found by the tensor-area programs (tests/programs/p_tensor_*),
each checked against torch."""
import pytest

import ember

torch = pytest.importorskip("torch")


def _err(lib, fn):
    try:
        fn(lib)
    except Exception as e:      # noqa: BLE001 - the class and message are what is compared
        return type(e).__name__, str(e)
    return None


def _same_error(fn):
    expected = _err(torch, fn)
    assert expected is not None
    assert _err(ember, fn) == expected


def _leaf(L):
    return L.tensor([1.0, 2.0], requires_grad=True)


def _twice(L, make):
    a = _leaf(L)
    y = make(a).sum()
    y.backward()
    y.backward()


@pytest.mark.parametrize("make", [lambda a: a.exp() * a, lambda a: a.sigmoid(), lambda a: a * 2,
                                  lambda a: 2 * a, lambda a: a / 2, lambda a: a.mul(2.5),
                                  lambda a: a.tanh()])
def test_backward_twice_message(make):
    _same_error(lambda L: _twice(L, make))


def test_backward_twice_through_scalar_add_is_fine():
    for L in (torch, ember):
        _twice(L, lambda a: a + 1)
        _twice(L, lambda a: 1 - a)


@pytest.mark.parametrize("fn", [
    lambda L: (_leaf(L) * 2).backward(),
    lambda L: (_leaf(L) * 2).view(1, 2).backward(),
    lambda L: L.autograd.backward([(_leaf(L) * 2).sum(), _leaf(L) * 3]),
    lambda L: (_leaf(L) * 1j).sum().backward(),
    lambda L: L.autograd.grad((_leaf(L) * 2).sum(), [_leaf(L)]),
    lambda L: L.autograd.grad((_leaf(L) * 2).sum(), L.ones(2)),
    lambda L: L.tensor([1, 2], requires_grad=True),
    lambda L: L.zeros(2, dtype=L.int32, requires_grad=True),
    lambda L: L.arange(3, requires_grad=True),
    lambda L: L.full((2,), 1, requires_grad=True),
    lambda L: L.tensor([1, 2]).requires_grad_(),
])
def test_autograd_error_messages(fn):
    _same_error(fn)


def test_unused_input_message_names_its_index():
    def fn(L):
        a = _leaf(L)
        L.autograd.grad((a * 2).sum(), [a, L.ones(2, requires_grad=True)])
    _same_error(fn)


def _inference(L):
    a = _leaf(L)
    with L.inference_mode():
        r = a * 2
        inside = (r.is_inference(), r.requires_grad, L.is_inference_mode_enabled(),
                  L.ones(2).is_inference())
    with L.no_grad():
        nog = ((a * 2).is_inference(), L.is_inference_mode_enabled())
    with L.inference_mode(False):
        off = ((a * 2).is_inference(), (a * 2).requires_grad)
    return inside, nog, off, r.is_inference(), a.is_inference(), L.is_inference(r), \
        (r * 2).is_inference(), L.is_inference_mode_enabled()


def test_inference_mode_tensors():
    assert _inference(ember) == _inference(torch)


@pytest.mark.parametrize("use", [lambda L, r, a: r * a, lambda L, r, a: r.add_(1),
                                 lambda L, r, a: r.requires_grad_()])
def test_inference_tensor_misuse(use):
    def fn(L):
        a = _leaf(L)
        with L.inference_mode():
            r = a * 2
        use(L, r, a)
    _same_error(fn)


def test_inference_tensor_inplace_inside_mode_is_fine():
    for L in (torch, ember):
        with L.inference_mode():
            r = L.ones(2)
            r.add_(1)
        assert r.tolist() == [2.0, 2.0]


@pytest.mark.parametrize("name", ["tanh", "sigmoid"])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_tanh_sigmoid_double_backward(name, dtype):
    def run(L):
        g = L.Generator().manual_seed(0)
        x = L.randn(5, dtype=getattr(L, dtype), generator=g).requires_grad_()
        go = L.randn(5, dtype=getattr(L, dtype), generator=g).requires_grad_()
        y = getattr(x, name)()
        h, = L.autograd.grad(y, x, go, create_graph=True)
        gx, ggo = L.autograd.grad((h * h.conj()).real.sum(), [x, go])
        return type(h.grad_fn).__name__, h.detach(), gx, ggo
    (n1, *t1), (n2, *t2) = run(torch), run(ember)
    assert n1 == n2
    for a, b in zip(t1, t2):
        assert torch.allclose(a, torch.from_numpy(b.numpy()), atol=1e-10)


def test_saved_tensor_attributes():
    def run(L):
        x = L.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = x.pow(2)
        out = [x.equal(y.grad_fn._saved_self), x is y.grad_fn._saved_self,
               y.grad_fn._saved_exponent]
        for f in ("exp", "tanh", "sigmoid", "relu"):
            y = getattr(x, f)()
            out += [y.equal(y.grad_fn._saved_result), y is y.grad_fn._saved_result]
        for f in ("sin", "cos", "abs"):
            out.append(x is getattr(x, f)().grad_fn._saved_self)
        y = x.exp()
        y.sum().backward()
        out.append(_err(L, lambda L: y.grad_fn._saved_result))
        out.append(_err(L, lambda L: y.grad_fn._saved_nothing)[0])
        return out
    assert run(ember) == run(torch)


def test_iinfo_repr_and_unsigned_types():
    names = ["int8", "uint8", "int16", "int32", "int64", "uint16", "uint32", "uint64"]
    for n in names:
        e, t = ember.iinfo(getattr(ember, n)), torch.iinfo(getattr(torch, n))
        assert repr(e) == repr(t) and str(e) == str(t)
        assert (e.bits, e.min, e.max, e.dtype) == (t.bits, t.min, t.max, t.dtype)


@pytest.mark.parametrize("fn", [
    lambda L: L.ones(2).backward(),
    lambda L: L.ones(2, dtype=L.complex64).backward(),
    lambda L: (_leaf(L) * 1j).backward(),
    lambda L: L.autograd.backward([L.ones(2), (_leaf(L) * 2).sum()]),
    lambda L: (_leaf(L) * 2).sum().backward(1.0),
    lambda L: (_leaf(L) * 2).sum().backward([1.0]),
    lambda L: (_leaf(L) * 2).backward([1.0, 1.0]),
    lambda L: L.autograd.backward((_leaf(L) * 2).sum(), 1.0),
    lambda L: L.autograd.grad((_leaf(L) * 2).sum(), _leaf(L), 2.0),
    lambda L: L.autograd.grad(_leaf(L) * 2, _leaf(L), [[1.0, 2.0]]),
])
def test_implicit_and_given_gradient_errors(fn):
    _same_error(fn)


def _setitem(idx, value_shape, grad=False):
    def fn(L):
        y = L.zeros(3, 4, requires_grad=grad).clone() if grad else L.zeros(3, 4)
        i = idx(L) if callable(idx) else idx
        y[i] = L.ones(value_shape)
    return fn


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("idx, shape", [
    (0, (5,)), (0, (2, 4)), (slice(0, 2), (3, 4)), ((slice(None), 1), (4,)), (Ellipsis, (5,)),
    ((0, 0), (2,)), (lambda L: L.tensor([0, 1]), (3, 4)), (lambda L: L.tensor([0, 1]), (3,)),
    (lambda L: (L.tensor([0, 1]), L.tensor([0, 1])), (3,)),
    (lambda L: L.tensor([True, False, True]), (5,)),
])
def test_setitem_shape_errors(idx, shape, grad):
    _same_error(_setitem(idx, shape, grad))


@pytest.mark.parametrize("fn", [
    lambda L: L.zeros(3, 4)[[0, 1], [1, 2, 3]],
    lambda L: L.zeros(3, 4)[L.tensor([[0, 1]]), L.tensor([1, 2, 3])],
    lambda L: L.zeros(3, 4)[L.tensor([True, False, True]), L.tensor([0, 1, 2])],
    lambda L: L.zeros(3, 4).index_put_((L.tensor([0, 1]),), L.ones(3)),
    lambda L: L.zeros(3, 4).index_put_((L.tensor([0, 1]),), L.ones(3), accumulate=True),
    lambda L: L.ones(3, 4).masked_fill(L.tensor([True, False]), 0),
    lambda L: L.ones(3, 4).masked_fill_(L.tensor([True, False]), 0),
    lambda L: L.ones(3, 4).masked_select(L.tensor([True, False])),
    lambda L: L.where(L.ones(3, 4) > 0, L.ones(3, 4), L.ones(2)),
    lambda L: L.where(L.ones(2, 1) > 0, L.ones(3), L.ones(4)),
    lambda L: L.ones(3, 4) + L.ones(4, 3),
    lambda L: L.ones(2) == L.ones(3),
    lambda L: L.ones(3, 4).expand(2, 3),
    lambda L: L.ones(2, 3).expand(-1, 2, 3),
    lambda L: L.ones(2, 3).expand(5, -1, 4),
])
def test_index_and_broadcast_messages(fn):
    _same_error(fn)


@pytest.mark.parametrize("data", [
    [[1, 2], [3]], [[1], [3, 4]], [[[1, 2], [3, 4]], [[1, 2], [3]]], [[1, 2], 3],
    [[1, 2], [3, 4, 5]], [1, "a"], ["a"], "abc", None, [1, None], [[1, 2], [None, 3]],
    [[1.0, 2.0], (3.0,)],
])
def test_tensor_from_bad_data_messages(data):
    _same_error(lambda L: L.tensor(data))


@pytest.mark.parametrize("fn", [
    lambda L: L.linalg.norm(L.ones(2, 3, 4), ord="fro", dim=0),
    lambda L: L.linalg.norm(L.ones(2, 3, 4), ord="nuc", dim=(0, 1, 2)),
    lambda L: L.linalg.norm(L.ones(3), ord="fro"),
    lambda L: L.linalg.norm(L.ones(2, 3, 4), ord="fro"),
    lambda L: L.linalg.norm(L.ones(2, 3, 4), dim=(0, 1, 2)),
    lambda L: L.linalg.matrix_norm(L.ones(2, 3, 4), dim=(0,)),
    lambda L: L.linalg.matrix_norm(L.ones(2, 3, 4), dim=(0, 1, 2)),
    lambda L: L.linalg.solve(L.ones(3, 3), L.ones(4)),
    lambda L: L.linalg.solve(L.ones(3, 3), L.ones(4), left=False),
    lambda L: L.linalg.solve(L.ones(3, 3), L.ones(2, 4), left=False),
])
def test_linalg_norm_and_solve_messages(fn):
    _same_error(fn)


def test_linalg_norm_string_ord_values():
    for args in [("fro", (0, 2)), ("nuc", (1, 2)), ("fro", None)]:
        a = torch.arange(24.0).reshape(2, 3, 4) if args[1] else torch.arange(12.0).reshape(3, 4)
        e = ember.tensor(a.numpy())
        want = torch.linalg.norm(a, ord=args[0], dim=args[1])
        got = ember.linalg.norm(e, ord=args[0], dim=args[1])
        assert torch.allclose(want, torch.from_numpy(got.numpy()))


@pytest.mark.parametrize("name", ["sum", "mean", "amax", "std", "var", "logsumexp", "nansum",
                                  "count_nonzero", "any", "std_mean"])
@pytest.mark.parametrize("dims", [(0, 0), (1, -1)])
def test_repeated_reduction_dims_message(name, dims):
    _same_error(lambda L: getattr(L, name)(L.ones(2, 3), dims))


@pytest.mark.parametrize("eq", ["ij->k", "ij->ii", "ij->ji,", "i j->k", "ij,jk->ik", "i->"])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_einsum_equation_errors(eq, dtype):
    _same_error(lambda L: L.einsum(eq, L.ones(2, 3, dtype=getattr(L, dtype))))


def test_vector_norm_repeated_dims():
    _same_error(lambda L: L.linalg.vector_norm(L.ones(2, 3), dim=(0, 0)))
