"""Double backward through the fused layers: convolutions (their gradients built from
differentiable (transposed) convolutions), pooling and cross_entropy/nll_loss, checked by
gradgradcheck and against torch (a gradient penalty, Hessian-vector products)."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

F = ember.nn.functional


def _t(*shape, seed=0):
    arr = np.random.default_rng(seed).standard_normal(shape)
    return ember.tensor(arr, requires_grad=True)


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1),
                                dict(padding=(1, 2), dilation=(2, 1)),
                                dict(groups=2, stride=(2, 1)), dict(padding="same", dilation=2)])
def test_conv2d_second_derivatives(kw):
    g = kw.get("groups", 1)
    args = (_t(2, 4, 5, 4), _t(4, 4 // g, 3, 2, seed=1), _t(4, seed=2))
    fn = lambda x, w, b: F.conv2d(x, w, b, **kw)    # noqa: E731
    assert gradcheck(fn, args)
    assert gradgradcheck(fn, args)


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1, output_padding=1),
                                dict(groups=2, dilation=2),
                                dict(stride=(2, 3), padding=(0, 1), output_padding=(1, 2))])
def test_conv_transpose2d_second_derivatives(kw):
    g = kw.get("groups", 1)
    args = (_t(1, 4, 3, 4), _t(4, 3, 3, 2, seed=1), _t(3 * g, seed=2))
    fn = lambda x, w, b: F.conv_transpose2d(x, w, b, **kw)    # noqa: E731
    assert gradgradcheck(fn, args)


def test_conv1d_and_unbatched_second_derivatives():
    assert gradgradcheck(lambda x, w: F.conv1d(x, w, stride=2, padding=2, dilation=2),
                         (_t(2, 4, 9), _t(6, 4, 3, seed=1)))
    assert gradgradcheck(lambda x, w: F.conv_transpose1d(x, w, stride=2),
                         (_t(2, 4, 5), _t(4, 3, 3, seed=1)))
    assert gradgradcheck(lambda x, w: F.conv2d(x, w, padding=1), (_t(3, 6, 6), _t(2, 3, 3, 3)))


def test_gradient_penalty_matches_torch(torch):
    """WGAN-GP: the norm of d critic / d input, minimised over the critic's weights."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 2, 8, 8)).astype(np.float32)
    results = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        critic = lib.nn.Sequential(lib.nn.Conv2d(2, 4, 3, stride=2, padding=1),
                                   lib.nn.LeakyReLU(0.2), lib.nn.Conv2d(4, 1, 4))
        if lib is ember:
            critic.load_state_dict({k: ember.tensor(v) for k, v in state.items()})
        else:
            state = {k: v.detach().numpy().copy() for k, v in critic.state_dict().items()}
        xt = lib.tensor(x, requires_grad=True)
        g, = lib.autograd.grad(critic(xt).sum(), xt, create_graph=True)
        penalty = ((g.reshape(4, -1).norm(dim=1) - 1) ** 2).mean()
        penalty.backward()
        grads = [p.grad for p in critic.parameters()] + [xt.grad]
        results.append([penalty.detach().numpy()] +
                       [None if g is None else g.numpy() for g in grads])
    # torch: the last bias takes no part (None); the first bias and the input get zeros
    # (LeakyReLU's backward has a zero derivative in its input, not a missing one)
    assert [a is None for a in results[0]] == [b is None for b in results[1]]
    assert results[0][-2] is None and results[0][2] is not None
    for a, b in zip(*results):
        if a is not None:
            np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=2, stride=1, dilation=2),
                                dict(kernel_size=(2, 3), ceil_mode=True)])
def test_max_pool2d_second_derivatives(kw):
    assert gradgradcheck(lambda x: F.max_pool2d(x, **kw), (_t(1, 2, 7, 6),))


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                     count_include_pad=False),
                                dict(kernel_size=(2, 3), divisor_override=5)])
def test_avg_pool2d_second_derivatives(kw):
    assert gradgradcheck(lambda x: F.avg_pool2d(x, **kw), (_t(1, 2, 7, 6),))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_second_derivatives(reduction):
    x = _t(4, 5)
    t = ember.tensor([0, 3, -100, 1])
    w = ember.tensor(np.random.default_rng(5).random(5))
    assert gradgradcheck(lambda x: F.cross_entropy(x, t, reduction=reduction), (x,))
    assert gradgradcheck(lambda x: F.nll_loss(F.log_softmax(x, 1), t, reduction=reduction), (x,))
    assert gradgradcheck(lambda x: F.cross_entropy(x, t, weight=w, reduction=reduction,
                                                   label_smoothing=0.1), (x,))
    probs = _t(2, 3, 4, seed=6)
    assert gradgradcheck(lambda x, p: F.cross_entropy(x, p, reduction=reduction),
                         (_t(2, 3, 4, seed=7), probs))


@pytest.mark.parametrize("pool", ["max", "avg"])
def test_hessian_vector_product_matches_torch(torch, pool):
    """Second derivatives of a pooled classifier's loss, and torch's zero (not missing)
    gradient for the pooling's input."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 2, 6, 6))
    w = rng.standard_normal((4, 2, 3, 3))
    target = [1, 0, 3]
    res = []
    for lib in (ember, torch):
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        fn = getattr(lib.nn.functional, pool + "_pool2d")
        logits = fn(lib.nn.functional.conv2d(xt, wt, padding=1), 6).flatten(1)
        loss = lib.nn.functional.cross_entropy(logits, lib.tensor(target))
        gx, gw = lib.autograd.grad(loss, (xt, wt), create_graph=True)
        ((gx * gx).sum() + (gw ** 3).sum()).backward()
        res.append((xt.grad.numpy(), wt.grad.numpy()))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)


def test_second_backward_after_the_input_changed_in_place_as_torch(torch):
    """cross_entropy keeps its log-softmax, not its input: changing the input in place after
    forward raises in neither order of derivatives, in torch and in ember, and the gradients
    agree (they are those of the original input)."""
    grads = []
    for lib in (torch, ember):
        x = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        h = x * 1
        loss = lib.nn.functional.cross_entropy(h, lib.tensor([0, 2]))
        with lib.no_grad():
            h.add_(1)
        g1, = lib.autograd.grad(loss, x, retain_graph=True)
        g2, = lib.autograd.grad(loss, x, create_graph=True)
        grads.append((g1.detach().numpy(), g2.detach().numpy()))
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, rtol=1e-12)


def test_normalization_second_derivatives():
    x, w, b = _t(4, 3, 5), _t(5, seed=1), _t(5, seed=2)
    assert gradgradcheck(lambda x, w, b: F.layer_norm(x, (5,), w, b), (x, w, b))
    x4, w6 = _t(4, 6, 3, 2, seed=3), _t(6, seed=4)
    assert gradgradcheck(lambda x, w: F.group_norm(x, 3, w), (x4, w6))
    assert gradgradcheck(lambda x, w: F.batch_norm(x, None, None, w, training=True), (x4, w6))


def test_layer_norm_critic_gradient_penalty_matches_torch(torch):
    """WGAN-GP's recommended critic (LayerNorm, no BatchNorm) through double backward."""
    x = np.random.default_rng(9).standard_normal((3, 8))
    res = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(8, 16), lib.nn.LayerNorm(16), lib.nn.LeakyReLU(0.2),
                              lib.nn.Linear(16, 1)).double()
        if lib is torch:
            state = {k: v.detach().numpy().copy() for k, v in m.state_dict().items()}
        else:
            m.load_state_dict({k: ember.tensor(v) for k, v in state.items()})
        xt = lib.tensor(x, requires_grad=True)
        g, = lib.autograd.grad(m(xt).sum(), xt, create_graph=True)
        ((g.norm(dim=1) - 1) ** 2).mean().backward()
        res.append([None if p.grad is None else p.grad.numpy() for p in m.parameters()])
    assert [a is None for a in res[0]] == [b is None for b in res[1]]
    for a, b in zip(*res):
        if a is not None:
            np.testing.assert_allclose(b, a, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_and_padded_conv_second_derivatives(mode):
    x = _t(1, 2, 4, 5)
    # (a non-constant pad of a 4-d input pads two dims, as torch requires)
    pads = [(1, 2), (1, 2, 2, 1), (0, 0, 0, 0), (1, -1, 0, 2)] if mode == "constant" else \
        [(1, 2, 0, 0), (1, 2, 2, 1), (0, 0, 0, 0)]
    for pad in pads:
        assert gradgradcheck(lambda x: F.pad(x, pad, mode=mode) ** 2, (x,))
    if mode != "constant":
        conv = ember.nn.Conv2d(2, 2, 3, padding=1, padding_mode=mode).double()
        assert gradgradcheck(lambda x: conv(x) ** 2, (x,))


def test_embedding_second_derivatives_match_torch(torch):
    w = _t(6, 3)
    idx = [[0, 2, 2], [5, 1, 0]]
    assert gradgradcheck(lambda w: F.embedding(ember.tensor(idx), w, padding_idx=2) ** 2, (w,))
    res = []
    for lib in (ember, torch):
        wt = lib.tensor(w.detach().numpy(), requires_grad=True)
        e = lib.nn.functional.embedding(lib.tensor(idx), wt, padding_idx=2)
        g, = lib.autograd.grad((e ** 3).sum(), wt, create_graph=True)
        (g ** 2).sum().backward()
        res.append(wt.grad.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-10)


def test_adaptive_max_pool_second_derivatives_match_torch(torch):
    x = _t(2, 3, 7, 6)
    assert gradgradcheck(lambda x: F.adaptive_max_pool2d(x, (3, 2)), (x,))
    res = []
    for lib in (ember, torch):
        xt = lib.tensor(x.detach().numpy(), requires_grad=True)
        y = lib.nn.functional.adaptive_max_pool2d(xt * 1, (3, 2))
        g, = lib.autograd.grad((y ** 3).sum(), xt, create_graph=True)
        (g ** 2).sum().backward()
        res.append(xt.grad.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-10)
