"""Parity of the speed paths: wide col2im, loop-free pooling, fused cross_entropy, fused LSTM,
blocked Adam. Every case is compared against PyTorch."""
import numpy as np
import pytest

from oracle import compare


def r(*shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def F(lib):
    return lib.nn.functional


@pytest.mark.parametrize("padding, dilation, groups", [
    (1, 1, 1), (0, 1, 1), (2, 2, 1), ((1, 0), (1, 2), 2), ("same", 1, 1), ("same", 2, 3),
    ((0, 2), 1, 6),
])
def test_conv2d_stride1(torch, padding, dilation, groups):
    compare(torch, lambda L, x, w, b: F(L).conv2d(x, w, b, padding=padding, dilation=dilation,
                                                  groups=groups),
            r(2, 6, 7, 5), r(6, 6 // groups, 3, 2, seed=1), r(6, seed=2))


@pytest.mark.parametrize("stride, padding, dilation", [(2, 1, 1), ((1, 2), 0, 2), (3, 2, 1)])
def test_conv2d_strided(torch, stride, padding, dilation):
    compare(torch, lambda L, x, w: F(L).conv2d(x, w, stride=stride, padding=padding,
                                               dilation=dilation),
            r(2, 3, 9, 8), r(4, 3, 3, 3, seed=1))


def test_conv2d_float32_and_1d(torch):
    compare(torch, lambda L, x, w, b: F(L).conv2d(x, w, b, padding=1),
            r(4, 3, 10, 10, dtype=np.float32), r(8, 3, 3, 3, dtype=np.float32, seed=1),
            r(8, dtype=np.float32, seed=2), rtol=1e-4, atol=1e-4)
    compare(torch, lambda L, x, w: F(L).conv1d(x, w, padding=2, dilation=2, groups=2),
            r(3, 4, 11), r(6, 2, 3, seed=1))
    compare(torch, lambda L, x, w: F(L).conv2d(x, w, padding=1), r(3, 6, 5), r(2, 3, 3, 3, seed=1))


def test_conv2d_input_only_or_weight_only(torch):
    compare(torch, lambda L, x, w: F(L).conv2d(x, w, padding=1), r(2, 3, 6, 6),
            r(4, 3, 3, 3, seed=1), requires_grad=[True, False])
    compare(torch, lambda L, x, w: F(L).conv2d(x, w, padding=1), r(2, 3, 6, 6),
            r(4, 3, 3, 3, seed=1), requires_grad=[False, True])


@pytest.mark.parametrize("stride, padding, output_padding, dilation, groups", [
    (1, 0, 0, 1, 1), (1, 1, 0, 2, 1), (1, 1, 1, 2, 2), (2, 1, 1, 1, 1), ((2, 1), 0, 0, 1, 2),
])
def test_conv_transpose2d(torch, stride, padding, output_padding, dilation, groups):
    compare(torch, lambda L, x, w, b: F(L).conv_transpose2d(
        x, w, b, stride=stride, padding=padding, output_padding=output_padding,
        dilation=dilation, groups=groups),
        r(2, 4, 5, 6), r(4, 6 // groups, 3, 2, seed=1), r(6, seed=2))


@pytest.mark.parametrize("kernel, stride, padding, dilation, ceil_mode", [
    (2, None, 0, 1, False), (3, None, 0, 1, False), ((2, 3), None, 0, 1, False),
    (2, None, 0, 1, True), (3, 2, 1, 1, False), (3, 2, 1, 2, True), ((1, 2), (2, 1), 0, 1, False),
])
def test_max_pool2d(torch, kernel, stride, padding, dilation, ceil_mode):
    for shape in [(2, 3, 6, 6), (2, 3, 7, 9)]:
        compare(torch, lambda L, x: F(L).max_pool2d(x, kernel, stride, padding, dilation,
                                                    ceil_mode, return_indices=True), r(*shape))
        compare(torch, lambda L, x: F(L).max_pool2d(x, kernel, stride, padding, dilation,
                                                    ceil_mode), r(*shape, dtype=np.float32))


def test_max_pool2d_ties_nan_and_inf(torch):
    rng = np.random.default_rng(3)
    ties = rng.integers(0, 3, (2, 2, 6, 6)).astype(np.float64)
    for k, s, p in [(2, 2, 0), (3, 3, 0), (3, 1, 1), (2, 1, 0)]:
        compare(torch, lambda L, x: F(L).max_pool2d(x, k, s, p, return_indices=True), ties)
    special = r(1, 2, 4, 6)
    special[0, 0, 0, :3] = np.nan
    special[0, 0, 1, 1] = np.nan
    special[0, 1, :2, :2] = -np.inf
    special[0, 1, 2:, 4:] = np.inf
    for k, s, p in [(2, 2, 0), (3, 1, 1), (2, 1, 1)]:
        compare(torch, lambda L, x: F(L).max_pool2d(x, k, s, p, return_indices=True), special)


def test_max_pool1d_and_unbatched(torch):
    compare(torch, lambda L, x: F(L).max_pool1d(x, 2, return_indices=True), r(2, 3, 8))
    compare(torch, lambda L, x: F(L).max_pool1d(x, 3, 2, 1), r(3, 9))
    compare(torch, lambda L, x: F(L).max_pool2d(x, 2), r(3, 4, 6))
    compare(torch, lambda L, x: L.nn.MaxPool2d(2)(x), r(2, 3, 8, 8, dtype=np.float32))


def _lstm_case(torch, make, x, *state, pick=None, rtol=1e-9, atol=1e-10):
    """Same weights in both libraries; compare outputs and every input's and weight's grad."""
    import ember
    tm = make(torch.nn).double()
    em = make(ember.nn).double()
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    results = []
    rng = np.random.default_rng(5)
    ups = None
    for lib, m in ((ember, em), (torch, tm)):
        xs = [lib.tensor(a.copy(), requires_grad=True) for a in (x,) + state]
        hx = tuple(xs[1:]) if state else None
        out, (h, c) = m(xs[0], hx)
        outs = [out, h, c] if pick is None else [[out, h, c][i] for i in pick]
        if ups is None:
            ups = [rng.standard_normal(tuple(o.shape)) for o in outs]
        lib.autograd.backward(outs, [lib.tensor(u) for u in ups])
        grads = [t.grad.numpy() for t in xs] + [p.grad.numpy() for p in m.parameters()]
        results.append(([o.detach().numpy() for o in outs], grads))
    (eo, eg), (to, tg) = results
    for a, b in zip(eo + eg, to + tg):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


@pytest.mark.parametrize("kwargs", [
    dict(), dict(bias=False), dict(num_layers=2, bidirectional=True),
    dict(batch_first=True, bidirectional=True),
])
def test_lstm_sequence(torch, kwargs):
    shape = (2, 5, 3) if kwargs.get("batch_first") else (5, 2, 3)
    _lstm_case(torch, lambda nn: nn.LSTM(3, 4, **kwargs), r(*shape))


def test_lstm_state_and_partial_outputs(torch):
    _lstm_case(torch, lambda nn: nn.LSTM(3, 4, num_layers=2), r(6, 2, 3), r(2, 2, 4, seed=1),
               r(2, 2, 4, seed=2))
    _lstm_case(torch, lambda nn: nn.LSTM(3, 4), r(6, 2, 3), pick=[0])
    _lstm_case(torch, lambda nn: nn.LSTM(3, 4, bidirectional=True), r(6, 2, 3), pick=[1])
    _lstm_case(torch, lambda nn: nn.LSTM(3, 4), r(6, 2, 3), pick=[2])
    _lstm_case(torch, lambda nn: nn.LSTM(3, 4), r(1, 2, 3), pick=[0, 2])


def test_lstm_float32_and_gradcheck():
    import ember
    m = ember.nn.LSTM(2, 3, bidirectional=True).double()
    x = ember.tensor(r(4, 2, 2), requires_grad=True)
    h0 = ember.tensor(r(2, 2, 3, seed=1), requires_grad=True)
    c0 = ember.tensor(r(2, 2, 3, seed=2), requires_grad=True)
    assert ember.autograd.gradcheck(lambda a, b, c: m(a, (b, c))[0], (x, h0, c0))
    out, (h, c) = ember.nn.LSTM(3, 4)(ember.tensor(r(5, 2, 3, dtype=np.float32)))
    assert out.dtype == h.dtype == c.dtype == ember.float32
    assert out.grad_fn.name() == "MkldnnRnnLayerBackward0"


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_class_indices(torch, reduction):
    x = r(6, 5)
    for t, ignore in [([0, 4, 1, 1, 3, 2], -100), ([0, 4, -100, 1, -100, 2], -100),
                      ([0, 4, 1, 1, 3, 2], 1), ([2, 2, 2, 2, 2, 2], 2)]:
        compare(torch, lambda L, a: F(L).cross_entropy(a, L.tensor(t), ignore_index=ignore,
                                                       reduction=reduction), x)
        compare(torch, lambda L, a: F(L).nll_loss(F(L).log_softmax(a, 1), L.tensor(t),
                                                  ignore_index=ignore, reduction=reduction), x)
    compare(torch, lambda L, a: F(L).cross_entropy(a, L.tensor([3, 0, 1, 9]),
                                                   reduction=reduction),
            r(4, 10, dtype=np.float32))


def test_cross_entropy_bad_target():
    import ember
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        ember.nn.functional.cross_entropy(ember.tensor(r(2, 5)), ember.tensor([1, 5]))


@pytest.mark.parametrize("name, kwargs", [
    ("Adam", dict(lr=0.01)), ("Adam", dict(lr=0.01, weight_decay=0.1, betas=(0.6, 0.9))),
    ("AdamW", dict(lr=0.01)), ("Adam", dict(lr=0.01, amsgrad=True, maximize=True)),
])
def test_adam_blocked_update(torch, name, kwargs):
    """Parameters larger than one 65536-element chunk, and one that is not contiguous."""
    import ember
    out = []
    for lib in (ember, torch):
        params = [lib.nn.Parameter(lib.tensor(r(300, 300, dtype=np.float32, seed=s)))
                  for s in range(2)] + [lib.nn.Parameter(lib.tensor(r(7, dtype=np.float32)))]
        params.append(lib.nn.Parameter(lib.tensor(r(5, 4, dtype=np.float32, seed=3)).t()))
        opt = getattr(lib.optim, name)(params, **kwargs)
        for step in range(4):
            opt.zero_grad()
            loss = sum(((p * p * (k + 1)).sum() + (p.sin() * step).sum())
                       for k, p in enumerate(params))
            loss.backward()
            opt.step()
        out.append([p.detach().numpy().copy() for p in params])
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
