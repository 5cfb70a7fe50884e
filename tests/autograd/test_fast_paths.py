"""The engine's and ops' fast paths give torch's answers (gradients summed without a graph,
scalar-bound clamp masks, the 0-d expand in sum's backward, scalar fills, explicit methods)."""
import numpy as np
import pytest

import ember
from oracle import compare

F64 = np.float64


def _arr(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(F64)


def test_reused_input_sums_its_gradients(torch):
    compare(torch, lambda L, x: ((x * 2 + 1).relu() * x).sum(), _arr(16))
    compare(torch, lambda L, x, w: (x * w + x * x - w).sum(1), _arr(3, 4), _arr(4, seed=1))


def test_reused_intermediate_sums_its_gradients(torch):
    def fn(L, x):
        h = x.exp()
        return h * h + h.t().t() - h.sum()
    compare(torch, fn, _arr(2, 3))


@pytest.mark.parametrize("kw", [dict(min=0.0), dict(max=0.1), dict(min=-0.5, max=0.5),
                                dict(min=0.5, max=-0.5), dict(min=0)])
def test_clamp_with_number_bounds_first_and_second_derivative(torch, kw):
    x = np.array([-1.0, -0.5, 0.0, 0.1, 0.5, 2.0])
    compare(torch, lambda L, t: t.clamp(**kw) * t, x)
    res = []
    for lib in (ember, torch):
        t = lib.tensor(x, requires_grad=True)
        g, = lib.autograd.grad((t.clamp(**kw) ** 3).sum(), t, create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), t)
        res.append((g.detach().numpy(), gg.numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0])
    np.testing.assert_allclose(res[0][1], res[1][1])


def test_sum_backward_gradient_accumulates_and_grad_stays_writable(torch):
    res = []
    for lib in (ember, torch):
        x = lib.ones(2, 3, requires_grad=True)
        seen = []
        x.register_hook(lambda g: seen.append(g.clone()))
        x.sum().backward()
        x.mean().backward()
        first = x.grad.numpy().copy()
        x.grad = None
        x.sum().backward()
        x.grad.add_(1)      # .grad owns its memory, writable
        res.append((first, x.grad.numpy().copy(), [s.numpy() for s in seen]))
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])
    for a, b in zip(res[0][2], res[1][2]):
        np.testing.assert_array_equal(a, b)


def test_sum_of_empty_and_scalar_tensors(torch):
    compare(torch, lambda L, x: x.sum(), np.zeros((0, 3)))
    compare(torch, lambda L, x: x.sum(), np.array(2.5))


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_zero_and_fill_bump_the_version(torch, dtype):
    for lib in (ember, torch):
        t = lib.ones(2, 3, dtype=getattr(lib, dtype))
        v = t._version
        t.zero_()
        t.fill_(2.7)
        assert t._version == v + 2
        expect = 2.7 if dtype == "float32" else 2
        np.testing.assert_allclose(t.numpy(), np.full((2, 3), expect), rtol=1e-6)


def test_zero_on_an_expanded_view_writes_the_shared_memory(torch):
    out = []
    for lib in (ember, torch):
        b = lib.ones(1, 3)
        b.expand(2, 3).zero_()      # torch allows it: every element is set to the same value
        out.append(b.tolist())
    assert out[0] == out[1]


def test_explicit_methods_match_torch(torch):
    def fn(L, x, w):
        y = x.mm(w).clamp(min=0).pow(2).sum(1).mean()
        z = x.view(6).reshape(2, 3).t().matmul(x).unsqueeze(0).squeeze(0).expand(3, 3)
        z = z.transpose(0, 1).permute(1, 0).flatten().relu().exp().log().sigmoid().tanh()
        return y + z.sum()
    compare(torch, fn, _arr(2, 3), _arr(3, 4, seed=1))


def test_in_place_methods_under_no_grad(torch):
    res = []
    for lib in (ember, torch):
        w = lib.tensor(_arr(3, 2), requires_grad=True)
        (w * w).sum().backward()
        with lib.no_grad():
            w.sub_(0.1 * w.grad)
            w.add_(w.grad, alpha=0.5)
            w.mul_(2.0)
            w.div_(3.0)
            w.grad.zero_()
        res.append((w.detach().numpy().copy(), w.grad.numpy().copy()))
    np.testing.assert_allclose(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])


def test_custom_function_wrong_gradient_count_and_shape_raise():
    class TooMany(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g, g

    class BadShape(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return ember.ones(5)

    x = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        TooMany.apply(x).sum().backward()
    with pytest.raises(RuntimeError, match="invalid gradient at index 0"):
        BadShape.apply(x).sum().backward()


def test_function_apply_under_no_grad_sets_needs_input_grad():
    seen = []

    class Probe(ember.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, c):
            seen.append(ctx.needs_input_grad)
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g, g, None

    a, b = ember.ones(2, requires_grad=True), ember.ones(2)
    with ember.no_grad():
        out = Probe.apply(a, b, 3)
    assert seen == [(True, False, False)] and out.grad_fn is None and not out.requires_grad


def _first_and_second(torch, fn, *arrays):
    """Gradients of ``fn`` (array backward, then the graph built for double backward) in both
    libraries: the backward formulas on raw arrays must give what the Tensor formulas give."""
    res = []
    for lib in (ember, torch):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = fn(lib, *ts)
        plain = lib.autograd.grad(out.sum(), ts, retain_graph=True)
        graph = lib.autograd.grad(out.sum(), ts, create_graph=True)
        second = lib.autograd.grad(sum((g * g).sum() for g in graph), ts, allow_unused=True,
                                   materialize_grads=True)
        res.append([g.detach().numpy() for g in plain + graph + second])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_array_backwards_of_hot_ops_match_torch(torch, dtype):
    x, y = _arr(5, 4).astype(dtype), _arr(5, 4, seed=1).astype(dtype)
    w = _arr(4, 3, seed=2).astype(dtype)
    _first_and_second(torch, lambda L, a, b: a * b * 3, x, y)
    _first_and_second(torch, lambda L, a, b: a.mm(b) ** 2, x, w)
    _first_and_second(torch, lambda L, a: (a * a).relu() * a, x)
    _first_and_second(torch, lambda L, a: a.clamp(min=-0.2, max=0.3) * a, x)


def test_relu_gradient_passes_at_nan_as_torch(torch):
    x = np.array([np.nan, -1.0, 0.0, 2.0], np.float32)
    compare(torch, lambda L, t: t.relu(), x)
    compare(torch, lambda L, t: L.nn.functional.relu(t * 1), x)


@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 1, 3, 4), (0, 3, 4)])
def test_linear_on_nd_input_matches_torch(torch, shape):
    x, w, b = _arr(*shape), _arr(5, 4, seed=1), _arr(5, seed=2)
    compare(torch, lambda L, x, w, b: L.nn.functional.linear(x, w, b), x, w, b)
    compare(torch, lambda L, x, w, b: L.nn.functional.linear(x.transpose(0, -2), w, b), x, w, b)
    for lib in (ember, torch):
        out = lib.nn.functional.linear(lib.tensor(x, requires_grad=True), lib.tensor(w),
                                       lib.tensor(b))
        assert out.grad_fn.name() == "ViewBackward0"
        assert out.grad_fn.next_functions[0][0].name() == "AddmmBackward0"


@pytest.mark.parametrize("act", ["relu", "leaky_relu"])
def test_second_order_through_relu_gives_zeros_not_none_as_torch(torch, act):
    """torch's ReLU/LeakyReLU backward has a zero derivative in its input: leaves behind it get
    a zero .grad (which optimizers then use), not None."""
    x = np.array([1.0, -2.0, 0.5, np.nan])
    res = []
    for lib in (ember, torch):
        t = lib.tensor(x, requires_grad=True)
        y = getattr(lib.nn.functional, act)(t * 2)
        g, = lib.autograd.grad((y * y.detach()).sum(), t, create_graph=True)
        (g * g).sum().backward()
        res.append((g.detach().numpy(), t.grad.numpy(), y.grad_fn.name()))
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])
    assert res[0][2] == res[1][2]
