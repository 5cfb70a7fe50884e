"""Graph edges and the arithmetic family against torch: node names and ``next_functions`` of
the alpha, scalar and deprecated-overload forms, ``ctx.mark_edges``, addcmul/addcdiv."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:This overload of")


def _edges(out):
    g = out.grad_fn
    return (type(g).__name__,
            [None if f is None else type(f).__name__ for f, _ in g.next_functions])


def _inputs(lib, dtype="float64"):
    rng = np.random.default_rng(7)
    t = lib.tensor(rng.uniform(0.5, 2.0, (2, 3)).astype(dtype), requires_grad=True)
    u = lib.tensor(rng.uniform(0.5, 2.0, (3,)).astype(dtype), requires_grad=True)
    c = lib.tensor(rng.uniform(0.5, 2.0, (2, 3)).astype(dtype))
    n = lib.tensor(2)
    return t, u, c, n


GRAPHS = {
    "add_alpha": lambda L, t, u, c, n: L.add(t, u, alpha=2),
    "add_alpha_const_first": lambda L, t, u, c, n: L.add(c, t, alpha=2),
    "add_alpha_number": lambda L, t, u, c, n: L.add(t, 2, alpha=3),
    "sub_alpha": lambda L, t, u, c, n: L.sub(t, u, alpha=-0.5),
    "sub_alpha_const_first": lambda L, t, u, c, n: L.sub(c, u, alpha=2),
    "rsub_alpha": lambda L, t, u, c, n: L.rsub(t, u, alpha=2),
    "add_inplace_alpha": lambda L, t, u, c, n: (t * 1).add_(u, alpha=2),
    "add_inplace_alpha_const": lambda L, t, u, c, n: c.clone().add_(t, alpha=2),
    "sub_inplace_alpha": lambda L, t, u, c, n: (t * 1).sub_(u, alpha=3),
    "add_deprecated": lambda L, t, u, c, n: L.add(t, 2, u),
    "sub_deprecated": lambda L, t, u, c, n: t.sub(2, u),
    "add_number": lambda L, t, u, c, n: t + 2.0,
    "mul_number": lambda L, t, u, c, n: 2 * t,
    "div_floor_number": lambda L, t, u, c, n: L.div(t, 2, rounding_mode="floor"),
    "div_trunc_tensor": lambda L, t, u, c, n: L.div(t, u, rounding_mode="trunc"),
    "pow_int_0d": lambda L, t, u, c, n: L.pow(t, n),
    "remainder_number_first": lambda L, t, u, c, n: L.remainder(2.0, t),
    "xlogy_number_first": lambda L, t, u, c, n: L.xlogy(2.0, t),
    "xlogy_number_second": lambda L, t, u, c, n: L.xlogy(t, 2),
    "xlogy_tensors": lambda L, t, u, c, n: L.xlogy(c, u),
    "addcmul": lambda L, t, u, c, n: L.addcmul(t, u, c, value=2),
    "addcdiv": lambda L, t, u, c, n: L.addcdiv(t, c, u, value=0.5),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_node_and_edges_match_torch(name):
    fn = GRAPHS[name]
    assert _edges(fn(ember, *_inputs(ember))) == _edges(fn(torch, *_inputs(torch)))


VALUES = {
    "add_alpha": lambda L, t, u, c: L.add(t, u, alpha=2.5),
    "sub_alpha": lambda L, t, u, c: L.sub(t, u, alpha=-0.5),
    "add_inplace_alpha": lambda L, t, u, c: (t * 1).add_(u, alpha=2),
    "add_deprecated": lambda L, t, u, c: L.add(t, 3, u),
    "sub_deprecated": lambda L, t, u, c: t.sub(2, u),
    "xlogy_number_first": lambda L, t, u, c: L.xlogy(2.0, t),
    "xlogy_number_second": lambda L, t, u, c: L.xlogy(t, 2),
    "pow_int_0d": lambda L, t, u, c: L.pow(t, L.tensor(3)),
    "addcmul": lambda L, t, u, c: L.addcmul(t, u, c, value=2),
    "addcdiv": lambda L, t, u, c: L.addcdiv(t, c, u, value=0.5),
    "addcdiv_grad_t2": lambda L, t, u, c: L.addcdiv(c, t, u, value=-1.5),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_and_grads_match_torch(name, dtype):
    fn = VALUES[name]
    res = []
    for L in (ember, torch):
        t, u, c, _ = _inputs(L, dtype)
        out = fn(L, t, u, c)
        g = np.random.default_rng(1).standard_normal(tuple(out.shape)).astype(dtype)
        out.backward(L.tensor(g))
        res.append((out.detach().numpy(), *[None if x.grad is None else x.grad.numpy()
                                             for x in (t, u)], str(out.dtype)))
    tol = 1e-12 if dtype == "float64" else 1e-5
    for e, t in zip(res[0][:3], res[1][:3]):
        assert (e is None) == (t is None)
        if e is not None:
            np.testing.assert_allclose(e, t, rtol=tol, atol=tol)
    assert res[0][3].split(".")[-1] == res[1][3].split(".")[-1]


def test_complex_alpha_gradient_matches_torch():
    grads = []
    for L in (ember, torch):
        a = L.tensor([1.0 + 2.0j, -0.5j], requires_grad=True)
        b = L.tensor([0.5, 2.0], dtype=L.float64, requires_grad=True)
        L.sub(a, b, alpha=1.5 - 2j).abs().sum().backward()
        grads.append((a.grad.numpy(), b.grad.numpy()))
    for e, t in zip(*grads):
        np.testing.assert_allclose(e, t, rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float16", "int64"])
def test_addcmul_reduced_and_integer_values(dtype):
    outs = []
    for L in (ember, torch):
        x = L.tensor(np.array([1.0, 2.5, 3.0]).astype(dtype))
        y = L.tensor(np.array([0.3, 1.7, -2.0]).astype(dtype))
        outs.append(L.addcmul(x, y, x, value=0.1 if dtype == "float16" else 2).numpy())
    np.testing.assert_array_equal(*outs)


def _raises(fn):
    try:
        fn()
    except Exception as e:     # noqa: BLE001 - the class and message are compared
        return type(e).__name__, str(e).split(" (Triggered")[0]
    return None


ERRORS = {
    "addcdiv_integers": lambda L: L.addcdiv(L.tensor([1, 2]), L.tensor([1, 2]), L.tensor([3, 4])),
    "addcdiv_int_and_bool": lambda L: L.addcdiv(L.ones(2), L.tensor([1, 2]),
                                                L.tensor([True, False])),
    "addcmul_bool": lambda L: L.addcmul(*[L.tensor([True, False])] * 3),
    "addcdiv_backward_integral_divisor": lambda L: L.addcdiv(
        L.ones(2), L.ones(2, requires_grad=True), L.tensor([1, 2], dtype=L.uint8)).sum().backward(),
    "remainder_number_first_backward": lambda L: L.remainder(
        2.0, L.ones(2, requires_grad=True)).sum().backward(),
    "subtract_alpha_float_for_int": lambda L: L.subtract(L.zeros(2, dtype=L.int32), -1, 0.0),
    "rsub_alpha_float_for_int": lambda L: L.rsub(L.zeros(2, dtype=L.int32), -1, 0.0),
    "add_deprecated_and_keyword_alpha": lambda L: L.add(L.ones(2), 2, L.ones(2), alpha=3),
    "add__deprecated_to_int": lambda L: L.zeros(2, dtype=L.int32).add_(-1, 0.0),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    fn = ERRORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e, t = _raises(lambda: fn(ember)), _raises(lambda: fn(torch))
    assert t is not None and e == t


POSITIONAL = {
    "add_deprecated_numbers": lambda L, x: L.add(x, -1, 0.5),
    "method_add_deprecated": lambda L, x: x.add(2.0, 3.0),
    "sub_deprecated_numbers": lambda L, x: L.sub(x, 2.0, 3.0),
    "subtract_positional_alpha": lambda L, x: L.subtract(x, 2, 3),
    "method_subtract_positional_alpha": lambda L, x: x.subtract(2, 3),
    "rsub_positional_alpha": lambda L, x: L.rsub(x, 2.0, 3.0),
    "add__deprecated": lambda L, x: x.clone().add_(-0.5, 4.0),
    "sub__deprecated": lambda L, x: x.clone().sub_(2, x),
    "subtract__positional_alpha": lambda L, x: x.clone().subtract_(2.0, 3.0),
    "int_add_deprecated_float_other": lambda L, x: L.add(x.to(L.int32), -1, 0.0),
}


@pytest.mark.parametrize("name", sorted(POSITIONAL))
def test_positional_alpha_forms_match_torch(name):
    fn = POSITIONAL[name]
    outs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for L in (ember, torch):
            out = fn(L, L.tensor([1.0, -2.0, 3.5]))
            outs.append((out.numpy(), str(out.dtype).split(".")[-1]))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    assert outs[0][1] == outs[1][1]


class _Scaled(ember.autograd.Function):
    """``x * k`` with an index argument and a factor torch-style nodes would not list."""

    @staticmethod
    def forward(ctx, x, index, k):
        ctx.mark_edges(0)
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.k, None, None


def test_mark_edges_lists_only_the_marked_arguments():
    x = ember.ones(3, requires_grad=True)
    out = _Scaled.apply(x, ember.tensor([0, 1]), 2.0)
    assert [type(f).__name__ for f, _ in out.grad_fn.next_functions] == ["AccumulateGrad"]
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_mark_edges_shows_a_missing_optional_input_as_none():
    class Axpy(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x, bias, k):
            ctx.mark_edges(0, 1)
            return x * k if bias is None else x * k + bias

        @staticmethod
        def backward(ctx, grad):
            return grad, None, None

    out = Axpy.apply(ember.ones(2, requires_grad=True), None, 3.0)
    assert [None if f is None else type(f).__name__
            for f, _ in out.grad_fn.next_functions] == ["AccumulateGrad", None]


def test_scalar_overload_nodes_have_one_edge_as_torch_composites():
    from ember.ops.arithmetic import AddScalar, DivScalar, MulScalar, SubScalar
    # torch's own composites record these (e.g. cosine_embedding_loss: AddBackward1, SubBackward1)
    x = torch.ones(2, 3, requires_grad=True)
    seen, stack = {}, [torch.nn.functional.cosine_embedding_loss(x, x * 2, torch.ones(2)).grad_fn]
    while stack:
        node = stack.pop()
        seen[type(node).__name__] = len(node.next_functions)
        stack += [f for f, _ in node.next_functions if f is not None]
    assert seen["AddBackward1"] == 1 and seen["SubBackward1"] == 1
    t = ember.ones(2, requires_grad=True)
    for cls, name in ((AddScalar, "AddBackward1"), (SubScalar, "SubBackward1"),
                      (MulScalar, "MulBackward1"), (DivScalar, "DivBackward1")):
        out = cls.apply(t, 4.0)
        assert _edges(out) == (name, ["AccumulateGrad"])
