"""nn.functional against PyTorch: activations, losses, padding, resizing, attention."""
import math

import numpy as np
import pytest

import ember
from oracle import compare


def r(*shape, dtype=np.float64, seed=0, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)


ACTS = {
    "relu": lambda F, x: F.relu(x),
    "relu6": lambda F, x: F.relu6(x * 4),
    "leaky_relu": lambda F, x: F.leaky_relu(x, 0.2),
    "elu": lambda F, x: F.elu(x, 0.7),
    "selu": lambda F, x: F.selu(x),
    "celu": lambda F, x: F.celu(x, 0.5),
    "gelu": lambda F, x: F.gelu(x),
    "gelu_tanh": lambda F, x: F.gelu(x, approximate="tanh"),
    "silu": lambda F, x: F.silu(x),
    "mish": lambda F, x: F.mish(x),
    "softplus": lambda F, x: F.softplus(x),
    "softplus_beta": lambda F, x: F.softplus(x * 10, beta=2, threshold=5),
    "softsign": lambda F, x: F.softsign(x),
    "sigmoid": lambda F, x: F.sigmoid(x),
    "logsigmoid": lambda F, x: F.logsigmoid(x),
    "tanh": lambda F, x: F.tanh(x),
    "hardtanh": lambda F, x: F.hardtanh(x, -0.5, 0.8),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x * 4),
    "hardswish": lambda F, x: F.hardswish(x * 4),
    "softmax": lambda F, x: F.softmax(x, dim=1),
    "log_softmax": lambda F, x: F.log_softmax(x, dim=-1),
    "softmin": lambda F, x: F.softmin(x, dim=0),
    "threshold": lambda F, x: F.threshold(x, 0.1, -2.0),
}


@pytest.mark.parametrize("name", list(ACTS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activation(torch, name, dtype):
    x = r(3, 5, dtype=dtype)
    x[0, :3] = [0.0, 3.0, -3.0]   # kinks
    compare(torch, lambda L, t: ACTS[name](L.nn.functional, t), x)


@pytest.mark.parametrize("name", ["ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU",
                                  "SiLU", "Mish", "Softplus", "Softsign", "Sigmoid",
                                  "LogSigmoid", "Tanh", "Hardtanh", "Hardsigmoid", "Hardswish"])
def test_activation_modules(torch, name):
    x = r(4, 3, dtype=np.float32)
    compare(torch, lambda L, t: getattr(L.nn, name)()(t), x)
    assert repr(getattr(ember.nn, name)()) == repr(getattr(torch.nn, name)())


def test_activation_module_args(torch):
    x = r(2, 3, 4, dtype=np.float32)
    for make in (lambda nn: nn.PReLU(3, 0.1), lambda nn: nn.PReLU(), lambda nn: nn.Softmax(1),
                 lambda nn: nn.LogSoftmax(-1), lambda nn: nn.Softmin(2),
                 lambda nn: nn.Threshold(0.1, 20), lambda nn: nn.LeakyReLU(0.3),
                 lambda nn: nn.GELU("tanh"), lambda nn: nn.Softplus(2, 3),
                 lambda nn: nn.Hardtanh(-2, 2), lambda nn: nn.ELU(0.5)):
        tm, em = make(torch.nn), make(ember.nn)
        assert repr(em) == repr(tm)
        em.load_state_dict({k: ember.tensor(v.detach().numpy())
                            for k, v in tm.state_dict().items()})
        compare(torch, lambda L, t: (em if L is ember else tm)(t), x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_stable_at_extremes(torch, dtype):
    x = np.array([-1e4, -100.0, -20.0, 0.0, 20.0, 100.0, 1e4], dtype=dtype)
    F = ember.nn.functional
    # NOTE: torch itself overflows to inf for beta * x above ~88 when threshold is huge, so
    # the last case only checks that ember stays finite.
    fns = (lambda F, t: F.softplus(t), lambda F, t: F.logsigmoid(t),
           lambda F, t: F.log_softmax(t, 0), lambda F, t: F.mish(t),
           lambda F, t: F.softplus(t, beta=0.5, threshold=1e6))
    for fn in fns:
        t = ember.tensor(x, requires_grad=True)
        y = fn(F, t)
        y.sum().backward()
        assert np.all(np.isfinite(y.detach().numpy())) and np.all(np.isfinite(t.grad.numpy()))
        if fn is not fns[-1]:
            compare(torch, lambda L, t, fn=fn: fn(L.nn.functional, t), x)
    tgt = (x > 0).astype(dtype)
    compare(torch, lambda L, t, y: L.nn.functional.binary_cross_entropy_with_logits(
        t, y, reduction="none"), x, tgt, requires_grad=[True, False])
    logits = np.array([[1e4, -1e4, 0.0], [-1e4, 1e4, 5.0]], dtype=dtype)
    compare(torch, lambda L, t, y: L.nn.functional.cross_entropy(t, y), logits,
            np.array([1, 0]))


REDUCTIONS = ["none", "mean", "sum"]


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_regression_losses(torch, reduction):
    a, b = r(4, 3), r(4, 3, seed=1)
    b[0, 0] = a[0, 0]
    F = "nn.functional"
    for fn in (lambda F, x, y: F.mse_loss(x, y, reduction=reduction),
               lambda F, x, y: F.l1_loss(x, y, reduction=reduction),
               lambda F, x, y: F.smooth_l1_loss(x, y, reduction=reduction, beta=0.5),
               lambda F, x, y: F.smooth_l1_loss(x, y, reduction=reduction, beta=0.0),
               lambda F, x, y: F.huber_loss(x, y, reduction=reduction, delta=0.7)):
        compare(torch, lambda L, x, y: fn(L.nn.functional, x, y), a, b)
    del F


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cross_entropy(torch, reduction, dtype):
    x = r(5, 4, dtype=dtype)
    t = np.array([0, 3, 1, -100, 3])
    w = np.abs(r(4, dtype=dtype, seed=2)) + 0.1
    F = lambda L: L.nn.functional  # noqa: E731
    compare(torch, lambda L, a: F(L).cross_entropy(a, L.tensor(t), reduction=reduction), x)
    for ls in (0.0, 0.2):
        compare(torch, lambda L, a, ww: F(L).cross_entropy(
            a, L.tensor(t), weight=ww, reduction=reduction, label_smoothing=ls),
            x, w, requires_grad=[True, False])
        compare(torch, lambda L, a: F(L).cross_entropy(
            a, L.tensor(np.abs(t) % 4), ignore_index=3, reduction=reduction, label_smoothing=ls), x)
    probs = np.abs(r(5, 4, dtype=dtype, seed=3))
    probs /= probs.sum(1, keepdims=True)
    compare(torch, lambda L, a, p: F(L).cross_entropy(a, p, reduction=reduction,
                                                      label_smoothing=0.1), x, probs)
    compare(torch, lambda L, a, p, ww: F(L).cross_entropy(a, p, weight=ww, reduction=reduction),
            x, probs, w, requires_grad=[True, True, False])
    x4 = r(2, 3, 4, 2, dtype=dtype)
    t4 = np.random.default_rng(0).integers(0, 3, (2, 4, 2))
    compare(torch, lambda L, a: F(L).cross_entropy(a, L.tensor(t4), reduction=reduction), x4)
    compare(torch, lambda L, a: F(L).cross_entropy(a, L.tensor(2), reduction=reduction),
            r(3, dtype=dtype))
    logp = np.log(probs)
    compare(torch, lambda L, a, ww: F(L).nll_loss(a, L.tensor(t), weight=ww,
                                                  reduction=reduction), logp, w,
            requires_grad=[True, False])
    compare(torch, lambda L, a: L.nn.CrossEntropyLoss(reduction=reduction)(a, L.tensor(t)), x)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_other_losses(torch, reduction):
    p = 1 / (1 + np.exp(-r(4, 3)))
    y = (r(4, 3, seed=1) > 0).astype(np.float64)
    w = np.abs(r(3, seed=4))
    F = lambda L: L.nn.functional  # noqa: E731
    compare(torch, lambda L, a, b: F(L).binary_cross_entropy(a, b, reduction=reduction), p, y)
    compare(torch, lambda L, a, b, ww: F(L).binary_cross_entropy(a, b, ww, reduction=reduction),
            p, y, w, requires_grad=[True, False, False])
    compare(torch, lambda L, a, b, pw: F(L).binary_cross_entropy_with_logits(
        a, b, reduction=reduction, pos_weight=pw), r(4, 3), y, w + 0.5,
        requires_grad=[True, True, False])
    logq = np.log(np.abs(r(4, 3, seed=5)) + 0.1)
    tgt = np.abs(r(4, 3, seed=6))
    tgt[0, 0] = 0
    for red in (reduction, "batchmean"):
        compare(torch, lambda L, a, b: F(L).kl_div(a, b, reduction=red), logq, tgt,
                requires_grad=[True, False])
        compare(torch, lambda L, a, b: F(L).kl_div(a, b, reduction=red), logq, tgt + 0.1)
        compare(torch, lambda L, a, b: F(L).kl_div(a, b, reduction=red, log_target=True), logq,
                logq * 0.5)
    lab = np.array([1.0, -1.0, 1.0, -1.0])
    compare(torch, lambda L, a, b, c: F(L).cosine_embedding_loss(a, b, c, margin=0.1,
                                                                 reduction=reduction),
            r(4, 3), r(4, 3, seed=1), lab, requires_grad=[True, True, False])
    compare(torch, lambda L, a, b, c: F(L).margin_ranking_loss(a, b, c, margin=0.2,
                                                               reduction=reduction),
            r(4), r(4, seed=1), lab, requires_grad=[True, True, False])
    for swap in (False, True):
        compare(torch, lambda L, a, b, c: F(L).triplet_margin_loss(
            a, b, c, margin=0.5, swap=swap, reduction=reduction), r(4, 3), r(4, 3, seed=1),
            r(4, 3, seed=2))


def test_distances(torch):
    F = lambda L: L.nn.functional  # noqa: E731
    compare(torch, lambda L, a, b: F(L).cosine_similarity(a, b), r(4, 3), r(4, 3, seed=1))
    compare(torch, lambda L, a, b: F(L).cosine_similarity(a, b, dim=0), r(4, 3), r(1, 3, seed=1))
    compare(torch, lambda L, a, b: F(L).pairwise_distance(a, b), r(4, 3), r(4, 3, seed=1))
    compare(torch, lambda L, a, b: F(L).pairwise_distance(a, b, p=1.5, keepdim=True), r(4, 3),
            r(4, 3, seed=1))
    compare(torch, lambda L, a: F(L).normalize(a), r(4, 3))
    compare(torch, lambda L, a: F(L).normalize(a, p=1, dim=0), r(4, 3))


def test_one_hot(torch):
    t = np.array([[0, 2], [1, 4]])
    a = ember.nn.functional.one_hot(ember.tensor(t))
    b = torch.nn.functional.one_hot(torch.tensor(t))
    assert a.dtype == ember.int64 and np.array_equal(a.numpy(), b.numpy())
    assert ember.nn.functional.one_hot(ember.tensor(t), 6).shape == (2, 2, 6)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad(torch, mode):
    F = lambda L: L.nn.functional  # noqa: E731
    compare(torch, lambda L, a: F(L).pad(a, (1, 2), mode=mode), r(2, 3, 4))
    compare(torch, lambda L, a: F(L).pad(a, (1, 2, 2, 1), mode=mode), r(1, 2, 4, 5))
    compare(torch, lambda L, a: F(L).pad(a, (0, 0, 0, 0), mode=mode), r(1, 2, 4, 5))
    if mode == "constant":
        compare(torch, lambda L, a: F(L).pad(a, (1, -1, 0, 2), value=3.5), r(2, 4, 5))
        compare(torch, lambda L, a: F(L).pad(a, (1, 1, 0, 0, 2, 0)), r(2, 4, 5))


@pytest.mark.parametrize("kw", [dict(size=(5, 7)), dict(scale_factor=2),
                                dict(size=(3, 2), mode="bilinear"),
                                dict(size=(6, 9), mode="bilinear", align_corners=True),
                                dict(scale_factor=1.5, mode="bilinear"),
                                dict(size=(7, 3), mode="bilinear", align_corners=False)])
def test_interpolate(torch, kw):
    compare(torch, lambda L, a: L.nn.functional.interpolate(a, **kw), r(2, 3, 4, 5))


def test_interpolate_1d(torch):
    compare(torch, lambda L, a: L.nn.functional.interpolate(a, size=7), r(2, 3, 4))
    compare(torch, lambda L, a: L.nn.functional.interpolate(a, scale_factor=2.5, mode="linear"),
            r(2, 3, 4))


def test_sdpa(torch):
    q, k, v = r(2, 3, 4, 8), r(2, 3, 5, 8, seed=1), r(2, 3, 5, 6, seed=2)
    F = lambda L: L.nn.functional  # noqa: E731
    compare(torch, lambda L, a, b, c: F(L).scaled_dot_product_attention(a, b, c), q, k, v)
    compare(torch, lambda L, a, b, c: F(L).scaled_dot_product_attention(a, b, c, scale=0.3,
                                                                        is_causal=True),
            q, r(2, 3, 4, 8, seed=1), r(2, 3, 4, 6, seed=2))
    bmask = np.random.default_rng(0).random((4, 5)) > 0.3
    bmask[:, 0] = True
    compare(torch, lambda L, a, b, c: F(L).scaled_dot_product_attention(
        a, b, c, attn_mask=L.tensor(bmask)), q, k, v)
    compare(torch, lambda L, a, b, c, m: F(L).scaled_dot_product_attention(a, b, c, attn_mask=m),
            q, k, v, r(4, 5, seed=5), requires_grad=[True, True, True, False])


def test_conv_functional(torch):
    F = lambda L: L.nn.functional  # noqa: E731
    compare(torch, lambda L, x, w, b: F(L).conv2d(x, w, b, stride=2, padding=1), r(2, 4, 7, 6),
            r(6, 4, 3, 2), r(6))
    compare(torch, lambda L, x, w: F(L).conv2d(x, w, padding="same", dilation=2, groups=2),
            r(2, 4, 7, 6), r(6, 2, 3, 2))
    compare(torch, lambda L, x, w, b: F(L).conv_transpose2d(x, w, b, stride=(2, 3),
                                                            padding=(0, 1), dilation=2),
            r(2, 4, 5, 6), r(4, 3, 3, 2), r(3))
    compare(torch, lambda L, x: F(L).max_pool2d(x, 2, ceil_mode=True), r(2, 3, 5, 5))
    compare(torch, lambda L, x: F(L).avg_pool2d(x, 3, 1, 1, divisor_override=2), r(2, 3, 5, 5))
    compare(torch, lambda L, x: F(L).adaptive_avg_pool1d(x, 3), r(2, 3, 7))
    compare(torch, lambda L, x: F(L).adaptive_max_pool1d(x, 3), r(2, 3, 7))


def test_norm_functional(torch):
    F = lambda L: L.nn.functional  # noqa: E731
    compare(torch, lambda L, x, w, b: F(L).layer_norm(x, (3, 4), w, b), r(2, 3, 4), r(3, 4),
            r(3, 4))
    compare(torch, lambda L, x, w, b: F(L).group_norm(x, 3, w, b, eps=1e-3), r(2, 6, 4),
            r(6), r(6))
    rm, rv = r(3), np.abs(r(3, seed=1))
    compare(torch, lambda L, x, w, b: F(L).batch_norm(x, L.tensor(rm), L.tensor(rv), w, b),
            r(4, 3, 2), r(3), r(3))
    compare(torch, lambda L, x: F(L).batch_norm(x, None, None, training=True), r(4, 3, 2))


def test_linear_fused_and_bilinear(torch):
    x, w, b = r(5, 4, dtype=np.float32), r(3, 4, dtype=np.float32), r(3, dtype=np.float32)
    out = compare(torch, lambda L, a, ww, bb: L.nn.functional.linear(a, ww, bb), x, w, b)
    y = ember.nn.functional.linear(ember.tensor(x, requires_grad=True), ember.tensor(w),
                                   ember.tensor(b))
    assert type(y.grad_fn).__name__ == "AddmmBackward0" and y.dtype == ember.float32
    assert out
    compare(torch, lambda L, a, c, ww, bb: L.nn.functional.bilinear(a, c, ww, bb), r(5, 2),
            r(5, 3), r(4, 2, 3), r(4))


def test_dropout_statistics():
    ember.manual_seed(0)
    x = ember.ones(200, 100)
    y = ember.nn.functional.dropout(x, 0.3)
    kept = (y.numpy() != 0)
    assert abs(kept.mean() - 0.7) < 0.02
    np.testing.assert_allclose(y.numpy()[kept], 1 / 0.7, rtol=1e-6)
    assert ember.nn.functional.dropout(x, 0.3, training=False) is x
    assert np.all(ember.nn.functional.dropout(x, 1.0).numpy() == 0)
    y2 = ember.nn.functional.dropout2d(ember.ones(50, 40, 3, 3), 0.5)
    per_channel = y2.numpy().reshape(50, 40, 9)
    assert np.all((per_channel == 0).all(-1) | (per_channel == 2).all(-1))
    assert abs((per_channel[..., 0] == 0).mean() - 0.5) < 0.05
    d = ember.nn.Dropout(0.5)
    d.eval()
    assert d(x) is x
    xg = ember.ones(10, 10, requires_grad=True)
    out = ember.nn.functional.dropout(xg, 0.5)
    out.sum().backward()
    np.testing.assert_allclose(xg.grad.numpy(), out.detach().numpy())
    with pytest.raises(ValueError, match="dropout probability"):
        ember.nn.Dropout(1.5)


def test_seeded_dropout_reproducible():
    ember.manual_seed(3)
    a = ember.nn.functional.dropout(ember.ones(20), 0.5).numpy()
    ember.manual_seed(3)
    b = ember.nn.functional.dropout(ember.ones(20), 0.5).numpy()
    assert np.array_equal(a, b)


def test_double_backward_softplus():
    x = ember.tensor([0.3, -1.2, 2.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: ember.nn.functional.softplus(t, 2.0, 3.0), (x,))
    assert ember.autograd.gradgradcheck(lambda t: ember.nn.functional.softplus(t), (x,))
    assert ember.autograd.gradcheck(lambda t: ember.nn.functional.gelu(t), (x,))
    assert math.isfinite(float(ember.nn.functional.softplus(x).sum()))


def _f64(*shape, seed=0):
    return ember.tensor(r(*shape, seed=seed), requires_grad=True)


@pytest.mark.parametrize("name", ["linear", "conv2d", "conv_t", "max_pool", "avg_pool",
                                  "adaptive_max", "layer_norm", "batch_norm", "group_norm",
                                  "cross_entropy", "nll", "pad_reflect", "pad_replicate",
                                  "interpolate", "lstm_cell", "embedding"])
def test_gradcheck_fused(name):
    F = ember.nn.functional
    gc = ember.autograd.gradcheck
    x4 = _f64(2, 2, 5, 4)
    cases = {
        "linear": (lambda a, w, b: F.linear(a, w, b), (_f64(3, 4), _f64(2, 4, seed=1),
                                                       _f64(2, seed=2))),
        "conv2d": (lambda a, w: F.conv2d(a, w, stride=2, padding=1, dilation=1),
                   (x4, _f64(3, 2, 2, 2, seed=1))),
        "conv_t": (lambda a, w: F.conv_transpose2d(a, w, stride=2, output_padding=1),
                   (x4, _f64(2, 3, 2, 2, seed=1))),
        "max_pool": (lambda a: F.max_pool2d(a, 2, 1), (x4,)),
        "avg_pool": (lambda a: F.avg_pool2d(a, 3, 2, 1, ceil_mode=True), (x4,)),
        "adaptive_max": (lambda a: F.adaptive_max_pool2d(a, (2, 3)), (x4,)),
        "layer_norm": (lambda a: F.layer_norm(a, (5, 4)), (x4,)),
        "batch_norm": (lambda a: F.batch_norm(a, None, None, training=True), (x4,)),
        "group_norm": (lambda a: F.group_norm(a, 1), (x4,)),
        "cross_entropy": (lambda a: F.cross_entropy(a, ember.tensor([[1, 0], [0, 1]]),
                                                    label_smoothing=0.2), (_f64(2, 2, 2),)),
        "nll": (lambda a: F.nll_loss(a, ember.tensor([1, 0, 2]), reduction="sum"),
                (_f64(3, 3),)),
        "pad_reflect": (lambda a: F.pad(a, (2, 1, 1, 3), mode="reflect"), (x4,)),
        "pad_replicate": (lambda a: F.pad(a, (2, 1, 1, 0), mode="replicate"), (x4,)),
        "interpolate": (lambda a: F.interpolate(a, (7, 3), mode="bilinear"), (x4,)),
        "lstm_cell": (lambda a, h, c: ember.nn.LSTMCell(3, 2).double()(a, (h, c)),
                      (_f64(2, 3), _f64(2, 2, seed=1), _f64(2, 2, seed=2))),
        "embedding": (lambda w: F.embedding(ember.tensor([[0, 2], [2, 2]]), w),
                      (_f64(3, 2),)),
    }
    fn, args = cases[name]
    ember.manual_seed(0)
    if name == "lstm_cell":
        cell = ember.nn.LSTMCell(3, 2).double()
        fn = lambda a, h, c: cell(a, (h, c))  # noqa: E731
    assert gc(fn, args)
