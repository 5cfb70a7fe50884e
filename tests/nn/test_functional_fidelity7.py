"""Regression tests (issue 21): nn.functional activations, norms and losses against torch --
dtype errors, NaN/-0.0 semantics, gradients at kinks, in-place nodes, error messages."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "complex64"]

# name -> callable(L, F, x)
ACTS = {
    "hardshrink": lambda L, F, x: F.hardshrink(x),
    "softshrink": lambda L, F, x: F.softshrink(x),
    "hardtanh": lambda L, F, x: F.hardtanh(x),
    "relu6": lambda L, F, x: F.relu6(x),
    "elu": lambda L, F, x: F.elu(x),
    "selu": lambda L, F, x: L.selu(x),
    "celu": lambda L, F, x: F.celu(x),
    "threshold": lambda L, F, x: F.threshold(x, 0.5, 2),
    "softmax": lambda L, F, x: F.softmax(x, -1),
    "log_softmax": lambda L, F, x: F.log_softmax(x, -1),
    "gelu": lambda L, F, x: F.gelu(x),
    "gelu_tanh": lambda L, F, x: F.gelu(x, approximate="tanh"),
    "silu": lambda L, F, x: F.silu(x),
    "mish": lambda L, F, x: F.mish(x),
    "softplus": lambda L, F, x: F.softplus(x),
    "logsigmoid": lambda L, F, x: F.logsigmoid(x),
    "hardswish": lambda L, F, x: F.hardswish(x),
    "hardsigmoid": lambda L, F, x: F.hardsigmoid(x),
    "leaky_relu": lambda L, F, x: F.leaky_relu(x),
    "rrelu": lambda L, F, x: F.rrelu(x),
    "rrelu_train": lambda L, F, x: F.rrelu(x, training=True),
    "glu": lambda L, F, x: F.glu(x),
    "prelu": lambda L, F, x: F.prelu(x, L.ones(1, dtype=x.dtype)),
    "layer_norm": lambda L, F, x: F.layer_norm(x, (4,)),
    "group_norm": lambda L, F, x: F.group_norm(x, 1),
    "batch_norm": lambda L, F, x: F.batch_norm(x, None, None, training=True),
    "instance_norm": lambda L, F, x: F.instance_norm(x.reshape(2, 2, 2)),
    "rms_norm": lambda L, F, x: F.rms_norm(x, (4,)),
    "cosine_similarity": lambda L, F, x: F.cosine_similarity(x, x),
}


def _outcome(L, fn, dt, shape=(2, 4)):
    F = L.nn.functional
    x = L.ones(*shape, dtype=getattr(L, dt))
    try:
        y = fn(L, F, x)
    except Exception as e:  # noqa: BLE001  (compared between the libraries)
        return type(e).__name__, str(e)
    return "ok", str(y.dtype)


@pytest.mark.parametrize("name", sorted(ACTS))
def test_dtype_support_and_errors(name):
    for dt in DTYPES:
        assert _outcome(ember, ACTS[name], dt) == _outcome(torch, ACTS[name], dt), (name, dt)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "elu", "hardshrink", "layer_norm"])
def test_empty_dtype_dispatch(name):
    # softmax/log_softmax check the dtype only when there is something to compute
    fn = ACTS[name]
    for dt in ["int64", "uint8", "complex64"]:
        assert _outcome(ember, fn, dt, (3, 0)) == _outcome(torch, fn, dt, (3, 0)), (name, dt)


VALS = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, 0.3, -3.0, 3.0, np.inf, -np.inf]


def _same(a, b, signs=True):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    both_nan = np.isnan(a) & np.isnan(b)
    rtol, atol = (1e-6, 1e-12) if a.dtype != np.float32 else (1e-3, 1e-6)
    np.testing.assert_allclose(np.where(both_nan, 0, a), np.where(both_nan, 0, b), rtol=rtol,
                               atol=atol)
    zero = (a == 0) & (b == 0)
    if signs:
        assert (np.signbit(a[zero]) == np.signbit(b[zero])).all(), (a, b)


GRAD_CASES = {
    "hardshrink": lambda F, x: F.hardshrink(x, 1.0),
    "softshrink": lambda F, x: F.softshrink(x, 1.0),
    "hardtanh": lambda F, x: F.hardtanh(x, -0.5, 0.5),
    "relu6": lambda F, x: F.relu6(x),
    "elu": lambda F, x: F.elu(x, 2.0),
    "celu": lambda F, x: F.celu(x, 2.0),
    "selu": lambda F, x: F.selu(x),
    "hardswish": lambda F, x: F.hardswish(x),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x),
    "threshold": lambda F, x: F.threshold(x, 0.5, 2.0),
    "prelu": lambda F, x: F.prelu(x, x.new_tensor([0.25])),
    "gelu": lambda F, x: F.gelu(x),
}


@pytest.mark.parametrize("dt", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_values_and_grads_at_kinks_and_infs(name, dt):
    # (no NaN input: torch's gradient there depends on the element's position in its SIMD loop)
    g = [0.1 * (i + 1) * (-1) ** i for i in range(len(VALS))]
    res = []
    for L in (torch, ember):
        x = L.tensor(VALS, dtype=getattr(L, dt), requires_grad=True)
        y = GRAD_CASES[name](L.nn.functional, x)
        y.backward(L.tensor(g, dtype=y.dtype))
        res.append((y.detach().numpy(), x.grad.numpy()))
    # (torch's softshrink zero is +0.0 in its SIMD blocks, x * 0 in its scalar tail loop)
    _same(res[1][0], res[0][0], signs=name != "softshrink")
    _same(res[1][1], res[0][1])


def test_gelu_inf_per_dtype():
    for dt in ["float32", "float64"]:
        xs = [np.inf, -np.inf, 1.0]
        _same(ember.nn.functional.gelu(ember.tensor(xs, dtype=getattr(ember, dt))).numpy(),
              torch.nn.functional.gelu(torch.tensor(xs, dtype=getattr(torch, dt))).numpy())


@pytest.mark.parametrize("args", [(-0.5, 1.5), (0.5, -1.5), (2, -1), (-1, 3)])
@pytest.mark.parametrize("dt", ["int32", "uint8", "int8"])
def test_threshold_integer_scalars(args, dt):
    vals = [0, 1, 2, 5]
    out = []
    for L in (torch, ember):
        try:
            out.append(L.nn.functional.threshold(L.tensor(vals, dtype=getattr(L, dt)),
                                                 *args).tolist())
        except RuntimeError as e:
            out.append(str(e))
    assert out[0] == out[1]
    out = []
    for L in (torch, ember):
        x = L.tensor(vals, dtype=getattr(L, dt))
        out.append(_err(lambda: L.nn.functional.threshold_(x, *args)) or x.tolist())
    assert out[0] == out[1]


def test_threshold_overflow():
    for L in (torch, ember):
        with pytest.raises(RuntimeError, match="value cannot be converted to type uint8_t"):
            L.nn.functional.threshold(L.tensor([1, 2], dtype=L.uint8), 300, 3)


def _err(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


ERRORS = [
    lambda L, F: F.hardtanh(L.ones(3), 2, -1),
    lambda L, F: F.hardtanh(L.ones(3, dtype=L.uint8), -1, 1),
    lambda L, F: F.softshrink(L.ones(2), -1),
    lambda L, F: F.softshrink(L.ones(2, dtype=L.float64), -0.5),
    lambda L, F: F.softshrink(L.ones(2, dtype=L.float16), float("nan")),
    lambda L, F: F.glu(L.ones(1, 5), 2),
    lambda L, F: F.glu(L.ones(1, 5), 1),
    lambda L, F: F.glu(L.tensor(1.0), 0),
    lambda L, F: F.rrelu(L.ones(3), 2, -1),
    lambda L, F: F.rrelu(L.ones(3, dtype=L.float16), training=True),
    lambda L, F: F.prelu(L.ones(2, 3), L.ones(1, dtype=L.complex128)),
    lambda L, F: F.prelu(L.ones(3, 2, dtype=L.float64), L.ones(1)),
    lambda L, F: F.prelu(L.ones(3, 2), L.ones(3)),
    lambda L, F: F.prelu(L.ones(3, 2), L.ones(2, 1)),
    lambda L, F: F.prelu(L.tensor(-1.0), L.ones(2)),
    lambda L, F: F.group_norm(L.ones(2, 2, 2), -1),
    lambda L, F: F.group_norm(L.ones(1, 4), 4),
    lambda L, F: F.group_norm(L.ones(2, 4, 2), 2, L.ones(3)),
    lambda L, F: L.group_norm(L.tensor(1.0), 2),
    lambda L, F: L.group_norm(L.ones(3), 1),
    lambda L, F: L.group_norm(L.ones(3, 0, dtype=L.int64), -1),
    lambda L, F: F.layer_norm(L.ones(2, 4), (4,), L.ones(3)),
    lambda L, F: F.layer_norm(L.ones(0, 3, dtype=L.int64), (3,)),
    lambda L, F: F.layer_norm(L.randn(2, 3), (3,), L.ones(3, dtype=L.float64)),
    lambda L, F: F.batch_norm(L.randn(2, 3), L.zeros(3, dtype=L.float64),
                              L.ones(3, dtype=L.float64)),
    lambda L, F: F.batch_norm(L.randn(2, 3, dtype=L.float64), L.zeros(3), L.ones(3)),
    lambda L, F: F.batch_norm(L.randn(2, 3), L.zeros(3), L.ones(3, dtype=L.bool)),
    lambda L, F: F.batch_norm(L.ones(2, 3, dtype=L.int64), L.zeros(3), L.ones(3)),
    lambda L, F: F.cross_entropy(L.tensor(1.0), L.tensor(1.0)),
    lambda L, F: F.cross_entropy(L.ones(1, 1, dtype=L.complex64), L.zeros(1, dtype=L.int64)),
    lambda L, F: F.nll_loss(L.ones(1, 1, dtype=L.int32), L.zeros(1, dtype=L.int64)),
    lambda L, F: F.nll_loss(L.ones(2, 3, 4, dtype=L.int32), L.zeros(2, 4, dtype=L.int64)),
    lambda L, F: F.cosine_similarity(L.ones(3, 2, dtype=L.complex128),
                                     L.ones(3, 2, dtype=L.complex128)),
    lambda L, F: F.local_response_norm(L.ones(2, 3, 4, dtype=L.uint8), 2),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_match(i):
    assert _err(lambda: ERRORS[i](ember, ember.nn.functional)) == \
        _err(lambda: ERRORS[i](torch, torch.nn.functional))


INPLACE = {
    "celu_neg": lambda L, F, y: L.celu_(y, -1.0),
    "elu_neg": lambda L, F, y: F.elu_(y, -1.0),
    "leaky_neg": lambda L, F, y: F.leaky_relu_(y, -0.5),
    "rrelu_neg": lambda L, F, y: F.rrelu_(y, -1.0, -0.5),
    "rrelu_train": lambda L, F, y: F.rrelu_(y, -1.0, -0.5, True),
    "selu_": lambda L, F, y: L.selu_(y),
    "elu_inplace": lambda L, F, y: F.elu(y, 0.5, inplace=True),
    "leaky_": lambda L, F, y: F.leaky_relu_(y, 0.1),
    "threshold_": lambda L, F, y: F.threshold_(y, 0.0, 2.0),
    "hardtanh_": lambda L, F, y: F.hardtanh_(y, 2.0, 1.0),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_nodes_and_backward(name):
    x0 = np.array([1.5, -0.3, -2.0, 0.7])
    res = []
    for L in (torch, ember):
        x = L.tensor(x0, requires_grad=True)
        y = INPLACE[name](L, L.nn.functional, x.clone())
        node = type(y.grad_fn).__name__
        err = _err(lambda: y.sum().backward())
        grad = None if err or "train" in name else x.grad.numpy().tolist()
        res.append((node, err, grad, None if "train" in name else y.detach().numpy().tolist()))
    assert res[1] == res[0]


def test_instance_norm_graph_values_and_running_stats():
    x = np.random.default_rng(0).standard_normal((2, 3, 5))
    w, b = np.linspace(0.5, 1.5, 3), np.linspace(-1, 1, 3)
    res = []
    for L in (torch, ember):
        xt = L.tensor(x, requires_grad=True)
        rm, rv = L.zeros(3, dtype=L.float64), L.ones(3, dtype=L.float64)
        y = L.nn.functional.instance_norm(xt, rm, rv, L.tensor(w), L.tensor(b))
        y.sum().backward()
        res.append((type(y.grad_fn).__name__, y.detach().numpy(), rm.numpy(), rv.numpy(),
                    xt.grad.numpy()))
    assert res[0][0] == res[1][0] == "ViewBackward0"
    for a, b_ in zip(res[0][1:], res[1][1:]):
        np.testing.assert_allclose(b_, a, rtol=1e-10, atol=1e-12)


def test_cross_entropy_empty_probs():
    for shape in [(0,), (3, 0)]:
        for red in ["mean", "sum", "none"]:
            a = torch.nn.functional.cross_entropy(torch.ones(shape), torch.ones(shape),
                                                  reduction=red)
            b = ember.nn.functional.cross_entropy(ember.ones(shape), ember.ones(shape),
                                                  reduction=red)
            assert a.shape == tuple(b.shape)
            _same(b.numpy(), a.numpy())


def test_bfloat16_keeps_dtype():
    for name in ["hardtanh", "gelu", "hardswish", "leaky_relu", "softmax", "rms_norm"]:
        assert _outcome(ember, ACTS[name], "bfloat16") == ("ok", "torch.bfloat16"), name
