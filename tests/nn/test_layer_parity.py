"""Layer parity with PyTorch: same state_dict keys, outputs and every gradient.

Each case builds the layer in both libraries, copies torch's state_dict into ember, runs the
same inputs and back-propagates one random upstream gradient through every output. Every test
runs twice: with the ember module and inputs on the CPU and on the strict test device
(``Module.to("strict")``), which refuses host/device mixing as CuPy does.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import ember

_DEVICE = {"type": "cpu"}     # the ember side's device in this test (the fixture below)


@pytest.fixture(autouse=True, params=["cpu", "strict"])
def device(request):
    _DEVICE["type"] = request.param
    yield request.param
    _DEVICE["type"] = "cpu"


def _np(t):
    return None if t is None else np.asarray(t.detach().cpu().numpy())


def _to_device(em, dev):
    """``em.to(dev)``, checked to move every parameter and buffer in place, as torch's."""
    params = dict(em.named_parameters())
    assert em.to(dev) is em
    for name, p in em.named_parameters():
        assert p is params[name], name
        assert p.device.type == dev, name
    for name, b in em.named_buffers():
        assert b.device.type == dev, name


def parity(torch, ctor, *arrays, modes=("train", "eval"), rtol=1e-5, atol=1e-6, seed=0,
           call=None):
    """Compare ``ctor(lib.nn)`` in ember and torch on ``arrays`` in each mode."""
    tm = ctor(torch.nn)
    em = ctor(ember.nn)
    tsd = tm.state_dict()
    assert list(em.state_dict().keys()) == list(tsd.keys())
    for k, v in tsd.items():
        assert tuple(em.state_dict()[k].shape) == tuple(v.shape), k
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tsd.items()})
    assert repr(em) == repr(tm)
    dev = _DEVICE["type"]
    if dev != "cpu":
        _to_device(em, dev)
    rng = np.random.default_rng(seed)
    for mode in modes:
        outs = {}
        for lib, m in ((ember, em), (torch, tm)):
            m.train(mode == "train")
            m.zero_grad()
            ins = []
            for a in arrays:
                t = ember.tensor(a.copy(), device=dev) if lib is ember else lib.tensor(a.copy())
                if a.dtype.kind == "f":
                    t.requires_grad_(True)
                ins.append(t)
            out = call(m, *ins) if call else m(*ins)
            flat = []
            stack = [out]
            while stack:
                o = stack.pop(0)
                if isinstance(o, (tuple, list)):
                    stack = list(o) + stack
                elif o is not None:
                    flat.append(o)
            outs[lib.__name__] = (flat, ins, m)
        (ef, ei, _), (tf, ti, _) = outs["ember"], outs["torch"]
        assert len(ef) == len(tf)
        ups = [rng.standard_normal(tuple(o.shape)).astype(_np(o).dtype) for o in tf]
        for e, t in zip(ef, tf):
            assert tuple(e.shape) == tuple(t.shape)
            assert str(e.dtype) == str(t.dtype)
            assert e.device.type == dev
            np.testing.assert_allclose(_np(e), _np(t), rtol=rtol, atol=atol)
        pairs = [(i, u) for i, (o, u) in enumerate(zip(tf, ups)) if o.requires_grad]
        if not pairs:
            continue
        ember.autograd.backward([ef[i] for i, _ in pairs],
                                [ember.tensor(u, device=dev) for _, u in pairs])
        torch.autograd.backward([tf[i] for i, _ in pairs], [torch.tensor(u) for _, u in pairs])
        for e, t in zip(ei, ti):
            if t.requires_grad:
                assert e.grad.device.type == dev
                np.testing.assert_allclose(_np(e.grad), _np(t.grad), rtol=rtol, atol=atol)
        tparams = dict(tm.named_parameters())
        for name, p in em.named_parameters():
            tg = tparams[name].grad
            assert (p.grad is None) == (tg is None), name
            if tg is not None:
                assert p.grad.device.type == dev, name
                np.testing.assert_allclose(_np(p.grad), _np(tg), rtol=rtol, atol=atol,
                                           err_msg=name)
        for name, b in em.named_buffers():
            np.testing.assert_allclose(_np(b), _np(dict(tm.named_buffers())[name]), rtol=rtol,
                                       atol=atol, err_msg=name)


def r(*shape, dtype=np.float32, seed=1):
    return np.random.default_rng(seed + len(shape)).standard_normal(shape).astype(dtype)


CASES = {
    "linear": (lambda nn: nn.Linear(4, 3), [r(5, 4)]),
    "linear3d_nobias": (lambda nn: nn.Linear(4, 3, bias=False), [r(2, 5, 4)]),
    "bilinear": (lambda nn: nn.Bilinear(2, 3, 4), [r(5, 2), r(5, 3)]),
    "conv1d": (lambda nn: nn.Conv1d(2, 4, 3, stride=2, padding=1), [r(2, 2, 9)]),
    "conv1d_same": (lambda nn: nn.Conv1d(2, 3, 4, padding="same", dilation=2), [r(2, 2, 9)]),
    "conv2d": (lambda nn: nn.Conv2d(2, 3, 3), [r(2, 2, 6, 5)]),
    "conv2d_groups": (lambda nn: nn.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 0),
                                           dilation=(1, 2), groups=2, bias=False),
                      [r(2, 4, 7, 6)]),
    "conv2d_unbatched": (lambda nn: nn.Conv2d(2, 3, 1), [r(2, 4, 4)]),
    "conv2d_reflect": (lambda nn: nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode="reflect"),
                       [r(2, 2, 6, 5)]),
    "conv2d_replicate_same": (lambda nn: nn.Conv2d(2, 3, (3, 4), padding="same", dilation=2,
                                                   padding_mode="replicate"), [r(2, 6, 7)]),
    "conv2d_circular_strided": (lambda nn: nn.Conv2d(2, 3, 3, stride=2, padding=2,
                                                     padding_mode="circular"), [r(2, 2, 6, 5)]),
    "conv1d_circular": (lambda nn: nn.Conv1d(2, 3, 3, padding=1, padding_mode="circular"),
                        [r(2, 2, 7)]),
    "conv_transpose2d": (lambda nn: nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1,
                                                       output_padding=1, groups=2),
                         [r(2, 4, 3, 4)]),
    "conv_transpose1d": (lambda nn: nn.ConvTranspose1d(2, 3, 3, stride=2), [r(2, 2, 5)]),
    "maxpool2d": (lambda nn: nn.MaxPool2d(3, 2, 1), [r(2, 3, 7, 6)]),
    "maxpool2d_ceil": (lambda nn: nn.MaxPool2d(2, ceil_mode=True), [r(1, 2, 5, 5)]),
    "maxpool2d_dil": (lambda nn: nn.MaxPool2d(2, 1, dilation=2), [r(1, 2, 6, 5)]),
    "maxpool1d": (lambda nn: nn.MaxPool1d(2), [r(2, 3, 7)]),
    "avgpool2d": (lambda nn: nn.AvgPool2d(3, 2, 1), [r(2, 3, 7, 6)]),
    "avgpool2d_nopad": (lambda nn: nn.AvgPool2d(3, 2, 1, ceil_mode=True,
                                                count_include_pad=False), [r(1, 2, 6, 6)]),
    "avgpool1d": (lambda nn: nn.AvgPool1d(3), [r(2, 3, 7)]),
    "adaptive_avg": (lambda nn: nn.AdaptiveAvgPool2d((2, 3)), [r(2, 3, 5, 7)]),
    "adaptive_avg1": (lambda nn: nn.AdaptiveAvgPool2d(1), [r(2, 3, 5, 7)]),
    "adaptive_max": (lambda nn: nn.AdaptiveMaxPool2d((3, 2)), [r(2, 3, 5, 7)]),
    "batchnorm1d": (lambda nn: nn.BatchNorm1d(3), [r(6, 3)]),
    "batchnorm1d_3d": (lambda nn: nn.BatchNorm1d(3, momentum=None), [r(4, 3, 5)]),
    "batchnorm2d": (lambda nn: nn.BatchNorm2d(3), [r(4, 3, 2, 3)]),
    "batchnorm2d_noaffine": (lambda nn: nn.BatchNorm2d(3, affine=False,
                                                       track_running_stats=False),
                             [r(4, 3, 2, 3)]),
    "layernorm": (lambda nn: nn.LayerNorm(5), [r(3, 4, 5)]),
    "layernorm2": (lambda nn: nn.LayerNorm((4, 5), elementwise_affine=False), [r(3, 4, 5)]),
    "groupnorm": (lambda nn: nn.GroupNorm(2, 4), [r(3, 4, 5)]),
    "flatten": (lambda nn: nn.Flatten(), [r(2, 3, 4)]),
    "unflatten": (lambda nn: nn.Unflatten(1, (2, 3)), [r(4, 6)]),
    "identity": (lambda nn: nn.Identity(), [r(4, 6)]),
    "sequential": (lambda nn: nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)),
                   [r(3, 4)]),
    "dropout_p0": (lambda nn: nn.Dropout(0.0), [r(4, 6)]),
    "rnn": (lambda nn: nn.RNN(3, 4), [r(5, 2, 3)]),
    "rnn_relu_2l": (lambda nn: nn.RNN(3, 4, num_layers=2, nonlinearity="relu"), [r(5, 2, 3)]),
    "lstm": (lambda nn: nn.LSTM(3, 4, num_layers=2, batch_first=True, bidirectional=True),
             [r(2, 5, 3)]),
    "lstm_unbatched": (lambda nn: nn.LSTM(3, 4), [r(5, 3)]),
    "gru": (lambda nn: nn.GRU(3, 4, bias=False, bidirectional=True), [r(5, 2, 3)]),
    "rnncell": (lambda nn: nn.RNNCell(3, 4), [r(2, 3), r(2, 4)]),
    "lstmcell": (lambda nn: nn.LSTMCell(3, 4), [r(2, 3)]),
    "grucell": (lambda nn: nn.GRUCell(3, 4), [r(2, 3), r(2, 4)]),
    "mha": (lambda nn: nn.MultiheadAttention(8, 2), [r(4, 2, 8), r(5, 2, 8), r(5, 2, 8)]),
    "mha_batch_first": (lambda nn: nn.MultiheadAttention(8, 4, batch_first=True),
                        [r(2, 4, 8), r(2, 4, 8), r(2, 4, 8)]),
    "encoder_layer": (lambda nn: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0),
                      [r(4, 2, 8)]),
    "encoder_layer_prenorm": (lambda nn: nn.TransformerEncoderLayer(
        8, 2, 16, dropout=0.0, batch_first=True, norm_first=True, activation="gelu"),
        [r(2, 4, 8)]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_layer(torch, name):
    ctor, arrays = CASES[name]
    parity(torch, ctor, *arrays, rtol=1e-4, atol=1e-5)


def test_layer_float64(torch):
    parity(torch, lambda nn: nn.Conv2d(2, 3, 3, padding=1).double(), r(2, 2, 5, 5,
                                                                      dtype=np.float64),
           rtol=1e-10, atol=1e-12)
    parity(torch, lambda nn: nn.LSTM(3, 4).double(), r(4, 2, 3, dtype=np.float64), rtol=1e-10,
           atol=1e-12)


def test_embedding(torch):
    idx = np.array([[1, 0, 3], [3, 2, 0]], dtype=np.int64)
    parity(torch, lambda nn: nn.Embedding(5, 3, padding_idx=0), idx)
    parity(torch, lambda nn: nn.Embedding(5, 3), idx)


def test_mha_masks(torch):
    mask = np.triu(np.ones((4, 4), dtype=bool), 1)
    kpm = np.array([[False, False, True, True], [False, False, False, True]])
    for avg in (True, False):
        parity(torch, lambda nn: nn.MultiheadAttention(8, 2),
               r(4, 2, 8), r(4, 2, 8), r(4, 2, 8), mask, kpm,
               call=lambda m, q, k, v, am, kp: m(q, k, v, key_padding_mask=kp, attn_mask=am,
                                                  average_attn_weights=avg),
               rtol=1e-4, atol=1e-5)
    fmask = r(4, 4)
    parity(torch, lambda nn: nn.MultiheadAttention(8, 2, batch_first=True), r(2, 4, 8),
           fmask, call=lambda m, x, am: m(x, x, x, attn_mask=am, need_weights=False),
           rtol=1e-4, atol=1e-5)


def test_lstm_given_state(torch):
    parity(torch, lambda nn: nn.LSTM(3, 4, num_layers=2), r(5, 2, 3), r(2, 2, 4), r(2, 2, 4),
           call=lambda m, x, h, c: m(x, (h, c)), rtol=1e-4, atol=1e-5)
    parity(torch, lambda nn: nn.GRU(3, 4, batch_first=True), r(2, 5, 3), r(1, 2, 4),
           call=lambda m, x, h: m(x, h), rtol=1e-4, atol=1e-5)


def test_maxpool_ties_and_indices(torch):
    x = np.zeros((1, 1, 4, 4), dtype=np.float32)
    x[0, 0, 1, 1] = x[0, 0, 0, 1] = 2.0
    parity(torch, lambda nn: nn.MaxPool2d(2, 1), x)
    parity(torch, lambda nn: nn.MaxPool2d(3, 2, 1, return_indices=True), r(2, 2, 5, 6))
    parity(torch, lambda nn: nn.AdaptiveMaxPool2d(2, return_indices=True), x)


def test_batchnorm_running_stats_over_steps(torch, device):
    tm, em = torch.nn.BatchNorm2d(3, momentum=0.3), ember.nn.BatchNorm2d(3, momentum=0.3)
    _to_device(em, device)
    for s in range(3):
        x = r(4, 3, 2, 2, seed=s)
        tm(torch.tensor(x))
        em(ember.tensor(x, device=device))
    for k, v in tm.state_dict().items():
        np.testing.assert_allclose(_np(em.state_dict()[k]), _np(v), rtol=1e-5, atol=1e-6)
    tm.eval()
    em.eval()
    x = r(2, 3, 2, 2, seed=9)
    np.testing.assert_allclose(_np(em(ember.tensor(x, device=device))),
                               _np(tm(torch.tensor(x))), rtol=1e-5, atol=1e-6)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(1, 2), c=st.sampled_from([1, 2, 4]), o=st.sampled_from([2, 4]),
       h=st.integers(3, 7), w=st.integers(3, 7), k=st.integers(1, 3), s=st.integers(1, 3),
       p=st.integers(0, 1), d=st.integers(1, 2), g=st.sampled_from([1, 2]),
       transposed=st.booleans())
def test_conv2d_configs(n, c, o, h, w, k, s, p, d, g, transposed):
    torch = pytest.importorskip("torch")
    if c % g or o % g or (h + 2 * p < d * (k - 1) + 1) or (w + 2 * p < d * (k - 1) + 1):
        return
    x = r(n, c, h, w, dtype=np.float64)
    if transposed:
        make = lambda nn: nn.ConvTranspose2d(c, o, k, s, p, groups=g, dilation=d).double()  # noqa
    else:
        make = lambda nn: nn.Conv2d(c, o, k, s, p, d, groups=g).double()  # noqa: E731
    parity(torch, make, x, modes=("train",), rtol=1e-9, atol=1e-10)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(h=st.integers(2, 7), w=st.integers(2, 7), k=st.integers(1, 3), s=st.integers(1, 3),
       p=st.integers(0, 1), d=st.integers(1, 2), ceil=st.booleans(), avg=st.booleans(),
       ties=st.booleans())
def test_pool2d_configs(h, w, k, s, p, d, ceil, avg, ties):
    torch = pytest.importorskip("torch")
    if 2 * p > k or h + 2 * p < d * (k - 1) + 1 or w + 2 * p < d * (k - 1) + 1:
        return
    x = r(2, 2, h, w, dtype=np.float64)
    if ties:
        x = np.round(x)
    if avg:
        make = lambda nn: nn.AvgPool2d(k, s, p, ceil_mode=ceil,  # noqa: E731
                                       count_include_pad=bool(d - 1))
    else:
        make = lambda nn: nn.MaxPool2d(k, s, p, d, ceil_mode=ceil)  # noqa: E731
    parity(torch, make, x, modes=("train",), rtol=1e-9, atol=1e-10)


def test_lstm_only_cell_state_used(torch):
    parity(torch, lambda nn: nn.LSTM(3, 4), r(5, 2, 3), call=lambda m, x: m(x)[1][1],
           rtol=1e-4, atol=1e-5)
    parity(torch, lambda nn: nn.LSTMCell(3, 4), r(2, 3), call=lambda m, x: m(x)[0],
           rtol=1e-4, atol=1e-5)
