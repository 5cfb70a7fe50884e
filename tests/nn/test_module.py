"""nn.Module behaviour against PyTorch: reprs, state_dict keys, loading, hooks, init, utils."""
import numpy as np
import pytest

import ember


def _np(t):
    return np.asarray(t.detach().numpy())


REPRS = [
    lambda nn: nn.Conv2d(2, 3, 3),
    lambda nn: nn.Conv2d(2, 4, (3, 1), stride=2, padding=1, dilation=2, groups=2, bias=False),
    lambda nn: nn.Conv1d(2, 3, 3, padding="same"),
    lambda nn: nn.ConvTranspose2d(2, 3, 3, stride=2, output_padding=1),
    lambda nn: nn.MaxPool2d(2), lambda nn: nn.MaxPool2d(3, 2, 1), lambda nn: nn.MaxPool1d(2),
    lambda nn: nn.AvgPool2d(2), lambda nn: nn.AvgPool1d(3),
    lambda nn: nn.AdaptiveAvgPool2d((2, 3)), lambda nn: nn.AdaptiveMaxPool2d(1),
    lambda nn: nn.BatchNorm1d(3),
    lambda nn: nn.BatchNorm2d(3, affine=False, track_running_stats=False),
    lambda nn: nn.LayerNorm(4), lambda nn: nn.LayerNorm((2, 3), elementwise_affine=False),
    lambda nn: nn.GroupNorm(2, 4), lambda nn: nn.RNN(3, 4),
    lambda nn: nn.LSTM(3, 4, 2, batch_first=True, bidirectional=True, dropout=0.1),
    lambda nn: nn.GRU(3, 4, bias=False), lambda nn: nn.RNNCell(3, 4, nonlinearity="relu"),
    lambda nn: nn.LSTMCell(3, 4), lambda nn: nn.GRUCell(3, 4, bias=False),
    lambda nn: nn.MultiheadAttention(8, 2), lambda nn: nn.Bilinear(2, 3, 4),
    lambda nn: nn.Embedding(10, 3), lambda nn: nn.Embedding(10, 3, padding_idx=0),
    lambda nn: nn.Dropout(), lambda nn: nn.Dropout2d(0.2), lambda nn: nn.Flatten(),
    lambda nn: nn.Unflatten(1, (2, 3)), lambda nn: nn.Identity(), lambda nn: nn.ReLU(True),
    lambda nn: nn.MSELoss(), lambda nn: nn.CrossEntropyLoss(), lambda nn: nn.BCEWithLogitsLoss(),
    lambda nn: nn.TripletMarginLoss(), lambda nn: nn.KLDivLoss(),
    lambda nn: nn.Sequential(nn.Linear(2, 3), nn.ReLU()),
    lambda nn: nn.ModuleList([nn.Linear(2, 3), nn.Linear(2, 3), nn.ReLU()]),
    lambda nn: nn.ModuleDict({"a": nn.ReLU(), "b": nn.Linear(1, 2)}),
    lambda nn: nn.TransformerEncoderLayer(8, 2, 16),
]


@pytest.mark.parametrize("i", range(len(REPRS)))
def test_repr_and_state_dict_keys(torch, i):
    tm, em = REPRS[i](torch.nn), REPRS[i](ember.nn)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]
    for (n, p), (_, q) in zip(em.named_parameters(), tm.named_parameters()):
        assert tuple(p.shape) == tuple(q.shape), n
        assert p.requires_grad == q.requires_grad


def test_parameter_containers(torch):
    for lib in (ember, torch):
        pl = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2, 3)), lib.zeros(3)])
        pd = lib.nn.ParameterDict({"a": lib.nn.Parameter(lib.ones(2)), "b": lib.zeros(1)})
        assert len(pl) == 2 and isinstance(pl[1], lib.nn.Parameter)
        assert list(pd.keys()) == ["a", "b"] and isinstance(pd["b"], lib.nn.Parameter)
    e = ember.nn.ParameterDict({"a": ember.nn.Parameter(ember.ones(2, 3)),
                                "b": ember.nn.Parameter(ember.ones(2, dtype=ember.float64))})
    t = torch.nn.ParameterDict({"a": torch.nn.Parameter(torch.ones(2, 3)),
                                "b": torch.nn.Parameter(torch.ones(2, dtype=torch.float64))})
    assert repr(e) == repr(t) and list(e.state_dict()) == list(t.state_dict())
    e = ember.nn.ParameterList([ember.nn.Parameter(ember.ones(2, 3))])
    t = torch.nn.ParameterList([torch.nn.Parameter(torch.ones(2, 3))])
    assert list(e.state_dict()) == list(t.state_dict())
    assert repr(e) == repr(t)


def test_sequential_ops():
    nn = ember.nn
    s = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert isinstance(s[-1], nn.Linear) and len(s[:2]) == 2
    s.append(nn.Sigmoid())
    assert len(s) == 4 and s(ember.ones(5, 2)).shape == (5, 1)
    del s[1]
    assert list(s.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]
    ml = nn.ModuleList([nn.Linear(2, 2)])
    ml += [nn.ReLU()]
    assert len(ml) == 2 and len(list(ml.parameters())) == 2
    with pytest.raises(IndexError):
        ml[5]


def _net(nn):
    return nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU(), nn.Flatten(),
                         nn.Linear(8, 3))


def test_state_dict_round_trip(torch):
    tm, em = _net(torch.nn), _net(ember.nn)
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    tm.eval()
    em.eval()
    x = np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype(np.float32)
    np.testing.assert_allclose(_np(em(ember.tensor(x))), _np(tm(torch.tensor(x))), rtol=1e-5,
                               atol=1e-6)
    back = {k: torch.tensor(_np(v)) for k, v in em.state_dict().items()}
    tm.load_state_dict(back)


def test_load_state_dict_reports_everything_and_loads_what_fits():
    """As torch's: a failed strict load still copies every key that fits, then raises."""
    m = _net(ember.nn)
    sd = {k: v.clone() + 1 for k, v in m.state_dict().items()}
    sd["4.weight"] = ember.zeros(3, 9)
    del sd["0.bias"]
    sd["extra.weight"] = ember.zeros(1)
    with pytest.raises(RuntimeError) as err:
        m.load_state_dict(sd)
    msg = str(err.value)
    assert 'Missing key(s) in state_dict: "0.bias"' in msg
    assert 'Unexpected key(s) in state_dict: "extra.weight"' in msg
    assert "size mismatch for 4.weight" in msg and "3, 9" in msg
    for k, v in m.state_dict().items():
        np.testing.assert_array_equal(_np(v), _np(sd[k]) if k in sd and k != "4.weight"
                                      else _np(v))
    assert not np.array_equal(_np(m.state_dict()["4.weight"]), np.zeros((3, 9)))
    del sd["4.weight"]
    res = m.load_state_dict(sd, strict=False)
    assert res.missing_keys == ["0.bias", "4.weight"] and res.unexpected_keys == ["extra.weight"]


def test_buffers_and_persistence(torch):
    class M(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("a", ember.zeros(2))
            self.register_buffer("b", ember.ones(2), persistent=False)
            self.fc = ember.nn.Linear(2, 2)

    m = M()
    assert list(m.state_dict()) == ["a", "fc.weight", "fc.bias"]
    assert [n for n, _ in m.named_buffers()] == ["a", "b"]
    m.double()
    assert m.a.dtype == ember.float64 and m.fc.weight.dtype == ember.float64
    m.to(ember.float32)
    assert m.fc.weight.dtype == ember.float32 and m.fc.weight.is_leaf
    m.half()
    assert m.fc.bias.dtype == ember.float16
    bn = ember.nn.BatchNorm1d(3).double()
    assert bn.num_batches_tracked.dtype == ember.int64


def test_zero_grad_apply_train_eval():
    m = _net(ember.nn)
    m(ember.randn(2, 1, 4, 4)).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0 for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen[-1] == "Sequential" and seen[0] == "Conv2d"
    m.eval()
    assert not any(mod.training for mod in m.modules())


def test_hooks_match_torch(torch):
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)
    got = {}
    for lib in (ember, torch):
        lin = lib.nn.Linear(4, 2)
        lin.load_state_dict({"weight": lib.tensor(w), "bias": lib.zeros(2)})
        rec = {}
        lin.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
        lin.register_forward_hook(lambda m, args, out: out + 1)
        lin.register_full_backward_hook(
            lambda m, gi, go: rec.update(gi=[_np(g) for g in gi], go=[_np(g) for g in go]))
        xt = lib.tensor(x, requires_grad=True)
        out = lin(xt)
        (out * lib.tensor(np.arange(6, dtype=np.float32).reshape(3, 2))).sum().backward()
        got[lib.__name__] = (_np(out), _np(xt.grad), rec)
    (eo, eg, er), (to, tg, tr) = got["ember"], got["torch"]
    np.testing.assert_allclose(eo, to, rtol=1e-5)
    np.testing.assert_allclose(eg, tg, rtol=1e-5)
    np.testing.assert_allclose(er["gi"][0], tr["gi"][0], rtol=1e-5)
    np.testing.assert_allclose(er["go"][0], tr["go"][0], rtol=1e-5)


def _uniform_bound_ok(t, bound):
    a = _np(t)
    return a.min() >= -bound and a.max() <= bound and a.max() > 0.8 * bound \
        and a.min() < -0.8 * bound


def test_default_init_distributions():
    nn = ember.nn
    lin = nn.Linear(400, 300)
    assert _uniform_bound_ok(lin.weight, 1 / np.sqrt(400))
    assert _uniform_bound_ok(lin.bias, 1 / np.sqrt(400))
    conv = nn.Conv2d(8, 64, 3)
    assert _uniform_bound_ok(conv.weight, 1 / np.sqrt(72))
    assert _uniform_bound_ok(conv.bias, 1 / np.sqrt(72))
    convt = nn.ConvTranspose2d(16, 32, 3)
    fan_in = 32 * 9   # torch's fan_in for a transposed weight (in, out/g, k, k) is dim 1
    assert _uniform_bound_ok(convt.weight, 1 / np.sqrt(fan_in))
    lstm = nn.LSTM(10, 50)
    for p in lstm.parameters():
        assert _uniform_bound_ok(p, 1 / np.sqrt(50))
    emb = nn.Embedding(1000, 50, padding_idx=3)
    a = _np(emb.weight)
    assert abs(a.mean()) < 0.02 and abs(a.std() - 1) < 0.02 and not a[3].any()
    bn = nn.BatchNorm2d(4)
    assert _np(bn.weight).tolist() == [1] * 4 and _np(bn.running_var).tolist() == [1] * 4
    mha = nn.MultiheadAttention(64, 4)
    bound = np.sqrt(6 / (64 + 192))
    assert _uniform_bound_ok(mha.in_proj_weight, bound)
    assert not _np(mha.in_proj_bias).any() and not _np(mha.out_proj.bias).any()
    bil = nn.Bilinear(100, 3, 50)
    assert _uniform_bound_ok(bil.weight, 0.1)
    prelu = nn.PReLU(3)
    assert np.allclose(_np(prelu.weight), 0.25)


def test_clip_grad_and_vector_utils(torch):
    rng = np.random.default_rng(0)
    arrs = [rng.standard_normal(s).astype(np.float32) for s in ((3, 4), (4,), (2, 2))]
    for norm_type in (2.0, 1.0, float("inf"), 3.0):
        res = {}
        for lib in (ember, torch):
            ps = [lib.nn.Parameter(lib.tensor(a)) for a in arrs]
            for p, a in zip(ps, arrs):
                p.grad = lib.tensor(a * 3)
            total = lib.nn.utils.clip_grad_norm_(ps, 1.5, norm_type=norm_type)
            res[lib.__name__] = (float(total), [_np(p.grad) for p in ps])
        assert np.isclose(res["ember"][0], res["torch"][0], rtol=1e-5)
        for a, b in zip(res["ember"][1], res["torch"][1]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    ps = [ember.nn.Parameter(ember.tensor(a)) for a in arrs]
    for p, a in zip(ps, arrs):
        p.grad = ember.tensor(a)
    ember.nn.utils.clip_grad_value_(ps, 0.5)
    assert all(np.abs(_np(p.grad)).max() <= 0.5 for p in ps)
    vec = ember.nn.utils.parameters_to_vector(ps)
    assert vec.shape == (20,)
    np.testing.assert_array_equal(_np(vec), np.concatenate([a.ravel() for a in arrs]))
    ember.nn.utils.vector_to_parameters(vec * 2, ps)
    np.testing.assert_allclose(_np(ps[0]), arrs[0] * 2)


@pytest.mark.parametrize("make, x, match", [
    (lambda: ember.nn.Conv2d(1, 2, 3), (1, 28), "Expected 3D \\(unbatched\\) or 4D"),
    (lambda: ember.nn.Conv2d(3, 2, 3), (1, 2, 5, 5), "expected input\\[1, 2, 5, 5\\] to have 3"),
    (lambda: ember.nn.Conv2d(1, 2, 5), (1, 1, 3, 3), "Kernel size can't be greater"),
    (lambda: ember.nn.BatchNorm2d(3), (2, 3, 4), "expected 4D input \\(got 3D input\\)"),
    (lambda: ember.nn.BatchNorm1d(3), (1, 3), "Expected more than 1 value per channel"),
    (lambda: ember.nn.Linear(3, 2), (4, 5), "mat1 and mat2 shapes cannot be multiplied"),
    (lambda: ember.nn.LayerNorm(4), (2, 3), "normalized_shape=\\[4\\]"),
    (lambda: ember.nn.LSTM(3, 4), (2, 5, 2), "input.size\\(-1\\) must be equal to input_size"),
    (lambda: ember.nn.MaxPool2d(2), (3,), "3D or 4D"),
])
def test_bad_input_messages(make, x, match):
    with pytest.raises((RuntimeError, ValueError), match=match):
        make()(ember.randn(*x))


def test_bad_loss_inputs():
    F = ember.nn.functional
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        F.cross_entropy(ember.randn(2, 3), ember.tensor([0, 7]))
    with pytest.raises(ValueError, match="batch_size"):
        F.cross_entropy(ember.randn(2, 3), ember.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.mse_loss(ember.randn(2), ember.randn(2), reduction="avg")
    with pytest.raises(IndexError, match="index out of range"):
        F.embedding(ember.tensor([5]), ember.randn(3, 2))


def test_embedding_from_pretrained(torch):
    w = np.arange(6, dtype=np.float32).reshape(3, 2)
    e = ember.nn.Embedding.from_pretrained(ember.tensor(w))
    t = torch.nn.Embedding.from_pretrained(torch.tensor(w))
    assert repr(e) == repr(t) and not e.weight.requires_grad
    idx = [[2, 0], [1, 1]]
    np.testing.assert_array_equal(_np(e(ember.tensor(idx))), _np(t(torch.tensor(idx))))
    e2 = ember.nn.Embedding.from_pretrained(ember.tensor(w), freeze=False, padding_idx=1)
    out = e2(ember.tensor(idx))
    out.sum().backward()
    np.testing.assert_array_equal(_np(e2.weight.grad), [[1, 1], [0, 0], [1, 1]])


def test_state_dict_pre_hook(torch):
    calls = {}
    for lib in (ember, torch):
        m = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.ReLU())
        seen = []
        m[0].register_state_dict_pre_hook(lambda mod, prefix, kv: seen.append((prefix, kv)))
        m.state_dict()
        calls[lib.__name__] = seen
    assert calls["ember"] == calls["torch"]
