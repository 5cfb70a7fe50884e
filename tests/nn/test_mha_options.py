"""``nn.MultiheadAttention`` with ``kdim``/``vdim``, ``add_bias_kv`` and ``add_zero_attn`` against
PyTorch: parameters (names, order, shapes, init), repr, errors, and outputs, attention weights and
every gradient (inputs, float masks, parameters) after loading torch's state_dict, in float64."""
import warnings

import numpy as np
import pytest

import ember

E, H = 8, 2
OPTIONS = {
    "kdim_vdim": dict(kdim=3, vdim=5),
    "kdim_only": dict(kdim=3),
    "vdim_only": dict(vdim=5),
    "kdim_vdim_equal_embed": dict(kdim=E, vdim=E),
    "bias_kv": dict(add_bias_kv=True),
    "zero_attn": dict(add_zero_attn=True),
    "bias_kv_zero_attn": dict(add_bias_kv=True, add_zero_attn=True),
    "all": dict(kdim=3, vdim=5, add_bias_kv=True, add_zero_attn=True),
    "all_no_bias": dict(kdim=3, vdim=5, add_bias_kv=True, add_zero_attn=True, bias=False),
    "bias_kv_no_bias": dict(add_bias_kv=True, bias=False),
}


def r(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _pair(torch, kwargs, dtype="float64"):
    tm = torch.nn.MultiheadAttention(E, H, **kwargs).to(getattr(torch, dtype))
    em = ember.nn.MultiheadAttention(E, H, **kwargs).to(getattr(ember, dtype))
    tsd = tm.state_dict()
    assert [(k, tuple(v.shape)) for k, v in em.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tsd.items()]
    assert [k for k, _ in em.named_parameters()] == [k for k, _ in tm.named_parameters()]
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tsd.items()})
    assert repr(em) == repr(tm)
    return em, tm


def _inputs(kwargs, seq=4, src=6, n=2, batch_first=False, unbatched=False):
    dims = (E, kwargs.get("kdim") or E, kwargs.get("vdim") or E)
    lens = (seq, src, src)
    if unbatched:
        return [r(L, d, seed=i) for i, (L, d) in enumerate(zip(lens, dims))]
    if batch_first:
        return [r(n, L, d, seed=i) for i, (L, d) in enumerate(zip(lens, dims))]
    return [r(L, n, d, seed=i) for i, (L, d) in enumerate(zip(lens, dims))]


def _run(lib, m, arrays, masks, call, self_attn):
    """Outputs, then the gradients of the inputs, the float masks and every parameter."""
    ins = [lib.tensor(a.copy(), requires_grad=True) for a in arrays]
    mts = {k: None if a is None else lib.tensor(a.copy()) for k, a in masks.items()}
    grad_masks = [t for t in mts.values() if t is not None and t.is_floating_point()]
    for t in grad_masks:
        t.requires_grad_(True)
    q, k, v = (ins[0],) * 3 if self_attn else ins
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # torch: mismatched mask types are deprecated
        out, w = m(q, k, v, **mts, **call)
    outs = [o for o in (out, w) if o is not None]
    ups = [r(*o.shape, seed=20 + i).astype(arrays[0].dtype) for i, o in enumerate(outs)]
    lib.autograd.backward(outs, [lib.tensor(u) for u in ups])
    grads = [t.grad for t in ins + grad_masks] + [p.grad for p in m.parameters()]
    return ([o.detach().numpy() for o in outs] + [None if g is None else g.numpy() for g in grads],
            w is None)


def _check(torch, kwargs, call=None, masks=None, layout=None, self_attn=False, dtype="float64",
           rtol=1e-9, atol=1e-10):
    em, tm = _pair(torch, kwargs, dtype)
    em.eval()
    tm.eval()
    arrays = [a.astype(dtype) for a in _inputs(kwargs, **(layout or {}))]
    if self_attn:
        arrays = arrays[:1]
    masks = masks or {}
    call = call or {}
    got, got_none = _run(ember, em, arrays, masks, call, self_attn)
    want, want_none = _run(torch, tm, arrays, masks, call, self_attn)
    assert got_none == want_none and len(got) == len(want)
    for a, b in zip(got, want):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.shape == b.shape and a.dtype == b.dtype
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", list(OPTIONS))
@pytest.mark.parametrize("layout", [{}, {"batch_first": True}, {"unbatched": True}],
                         ids=["seq_first", "batch_first", "unbatched"])
def test_options_parity(torch, name, layout):
    kwargs = dict(OPTIONS[name], batch_first=layout.get("batch_first", False))
    for call in ({}, {"average_attn_weights": False}, {"need_weights": False}):
        _check(torch, kwargs, call=call, layout=layout)


@pytest.mark.parametrize("name", ["bias_kv", "zero_attn", "bias_kv_zero_attn",
                                  "kdim_vdim_equal_embed"])
def test_self_attention_and_dropout_in_eval(torch, name):
    kwargs = dict(OPTIONS[name], dropout=0.5)
    _check(torch, kwargs, self_attn=True, layout={"src": 4})
    _check(torch, kwargs, self_attn=True, layout={"src": 4}, call={"need_weights": False})


def _masks(kind, seq=4, src=6, n=2, unbatched=False):
    rng = np.random.default_rng(3)
    kpm_b = np.array([[False, False, True, False, True, True], [False] * 5 + [True]])[:, :src]
    am_b = np.triu(np.ones((seq, src), dtype=bool), 1)
    if kind == "kpm_bool":
        out = {"key_padding_mask": kpm_b}
    elif kind == "kpm_float":
        out = {"key_padding_mask": rng.standard_normal((n, src))}
    elif kind == "attn2d_bool":
        out = {"attn_mask": am_b}
    elif kind == "attn2d_float":
        out = {"attn_mask": rng.standard_normal((seq, src))}
    elif kind == "attn3d_bool":
        out = {"attn_mask": rng.random((n * H, seq, src)) < 0.3}
    elif kind == "attn3d_float":
        out = {"attn_mask": rng.standard_normal((n * H, seq, src))}
    elif kind == "both_bool":
        out = {"attn_mask": am_b, "key_padding_mask": kpm_b}
    elif kind == "both_float":
        out = {"attn_mask": rng.standard_normal((n * H, seq, src)),
               "key_padding_mask": rng.standard_normal((n, src))}
    else:                                   # mixed types: torch warns, and still adds them
        out = {"attn_mask": am_b, "key_padding_mask": rng.standard_normal((n, src))}
    if unbatched:
        if "key_padding_mask" in out:
            out["key_padding_mask"] = out["key_padding_mask"][0]
        if "attn_mask" in out and out["attn_mask"].ndim == 3:
            out["attn_mask"] = out["attn_mask"][:H]
    return out


MASKS = ["kpm_bool", "kpm_float", "attn2d_bool", "attn2d_float", "attn3d_bool", "attn3d_float",
         "both_bool", "both_float", "mixed"]


@pytest.mark.parametrize("kind", MASKS)
@pytest.mark.parametrize("name", ["kdim_vdim", "bias_kv", "zero_attn", "all"])
def test_masks(torch, name, kind):
    for layout in ({}, {"batch_first": True}, {"unbatched": True}):
        kwargs = dict(OPTIONS[name], batch_first=layout.get("batch_first", False))
        masks = _masks(kind, unbatched=layout.get("unbatched", False))
        for call in ({}, {"average_attn_weights": False}, {"need_weights": False}):
            _check(torch, kwargs, call=call, masks=masks, layout=layout)


@pytest.mark.parametrize("name", ["kdim_vdim", "bias_kv", "zero_attn", "bias_kv_zero_attn"])
def test_fully_masked_rows(torch, name):
    # need_weights=True gives NaN rows (as torch); need_weights=False gives zero attention.
    kpm = np.array([[True] * 6, [False, True, False, True, True, True]])
    am = np.zeros((4, 6), dtype=bool)
    am[1] = True
    for masks in ({"key_padding_mask": kpm}, {"attn_mask": am}):
        for call in ({}, {"need_weights": False}):
            _check(torch, OPTIONS[name], call=call, masks=masks)


@pytest.mark.parametrize("kind", ["both_bool", "both_float"])
def test_float32(torch, kind):
    masks = {k: v.astype(np.float32) if v.dtype.kind == "f" else v
             for k, v in _masks(kind).items()}
    for call in ({}, {"need_weights": False}):
        _check(torch, dict(OPTIONS["all"], batch_first=True), call=call, masks=masks,
               layout={"batch_first": True}, dtype="float32", rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["bias_kv", "zero_attn", "bias_kv_zero_attn", "kdim_vdim"])
def test_is_causal_hint(torch, name):
    # The hint replaces attn_mask when need_weights=False and there is no key_padding_mask.
    am = {"attn_mask": np.triu(np.ones((4, 6), dtype=bool), 1)}
    zero = {"attn_mask": np.zeros((4, 6))}
    for masks in (am, zero):
        for call in ({"is_causal": True}, {"is_causal": True, "need_weights": False}):
            _check(torch, OPTIONS[name], call=call, masks=masks)
    _check(torch, OPTIONS[name], call={"is_causal": True, "need_weights": False},
           masks=dict(am, key_padding_mask=np.zeros((2, 6), dtype=bool)))


def test_encoder_layer_with_fully_masked_sequence(torch):
    kpm = np.array([[True] * 4, [False, False, True, True]])
    for lib in (ember, torch):
        lib.manual_seed(0)
    tm = torch.nn.TransformerEncoderLayer(E, H, 16, dropout=0.0).double()
    em = ember.nn.TransformerEncoderLayer(E, H, 16, dropout=0.0).double()
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    res = []
    for lib, m in ((ember, em), (torch, tm)):
        x = lib.tensor(r(4, 2, E), requires_grad=True)
        out = m(x, src_key_padding_mask=lib.tensor(kpm))
        out.backward(lib.tensor(r(4, 2, E, seed=5)))
        res.append([out.detach().numpy(), x.grad.numpy()]
                   + [p.grad.numpy() for p in m.parameters()])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


def test_attributes_and_init():
    m = ember.nn.MultiheadAttention(512, 4, kdim=100, vdim=300, add_bias_kv=True,
                                    add_zero_attn=True)
    assert (m.kdim, m.vdim, m._qkv_same_embed_dim, m.add_zero_attn) == (100, 300, False, True)
    assert m.in_proj_weight is None and m.in_proj_bias.shape == (3 * 512,)
    for w, fan in ((m.q_proj_weight, 512), (m.k_proj_weight, 100), (m.v_proj_weight, 300)):
        a = w.detach().numpy()
        bound = np.sqrt(6 / (512 + fan))
        assert np.abs(a).max() <= bound and np.abs(a).max() > 0.95 * bound
    for b in (m.bias_k, m.bias_v):
        assert b.shape == (1, 1, 512)
        assert abs(b.detach().numpy().std() * np.sqrt(512) - 1) < 0.15    # xavier_normal_
    assert not m.in_proj_bias.detach().numpy().any()
    same = ember.nn.MultiheadAttention(8, 2, kdim=8, vdim=8)
    assert same._qkv_same_embed_dim and same.q_proj_weight is None
    assert same.bias_k is None and same.bias_v is None and not same.add_zero_attn
    plain = ember.nn.MultiheadAttention(8, 2, add_bias_kv=True, bias=False)
    assert [k for k, _ in plain.named_parameters()] == ["in_proj_weight", "bias_k", "bias_v",
                                                        "out_proj.weight"]


def _errors(torch, kwargs, args, call):
    """Run the same bad call in both libraries; return the two (type name, message) pairs."""
    res = []
    for lib in (ember, torch):
        m = lib.nn.MultiheadAttention(E, H, **kwargs).double()
        ts = [lib.tensor(a) for a in args]
        cl = {k: lib.tensor(a) for k, a in call.items()}
        with pytest.raises(Exception) as info:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m(*ts, **cl)
        res.append((type(info.value).__name__, str(info.value)))
    return res


@pytest.mark.parametrize("kwargs, args, call", [
    (dict(kdim=3, vdim=5), [r(4, 2, E), r(6, 2, 3), r(5, 2, 5)], {}),
    (dict(kdim=3, vdim=5), [r(4, 2, E), r(6, 2, 3), r(6, 1, 5)], {}),
    (dict(kdim=3, vdim=5), [r(4, 2, E), r(6, 2, 2), r(6, 2, 5)], {}),
    (dict(kdim=3, vdim=5), [r(4, 2, E), r(6, 2, 3), r(6, 2, 4)], {}),
    (dict(kdim=3, vdim=5), [r(4, 2, 4), r(6, 2, 3), r(6, 2, 5)], {}),
    ({}, [r(4, 2, E), r(5, 2, E), r(4, 2, E)], {}),
    ({}, [r(1, 4, 2, E), r(4, 2, E), r(4, 2, E)], {}),
    ({}, [r(4, 2, E), r(4, E), r(4, 2, E)], {}),
    ({}, [r(4, E), r(4, E), r(4, 2, E)], {}),
    (dict(add_bias_kv=True, add_zero_attn=True), [r(4, 2, E)] * 3,
     {"key_padding_mask": np.zeros((2, 5), dtype=bool)}),
    (dict(add_bias_kv=True), [r(4, 2, E)] * 3, {"key_padding_mask": np.zeros((3, 4), dtype=bool)}),
    (dict(add_zero_attn=True), [r(4, 2, E)] * 3, {"key_padding_mask": np.zeros(4, dtype=bool)}),
    (dict(add_zero_attn=True), [r(4, E)] * 3, {"key_padding_mask": np.zeros((1, 4), dtype=bool)}),
    (dict(add_zero_attn=True), [r(4, E)] * 3, {"key_padding_mask": np.zeros(3, dtype=bool)}),
    (dict(add_bias_kv=True), [r(4, 2, E)] * 3, {"attn_mask": np.zeros((4, 5), dtype=bool)}),
    (dict(add_bias_kv=True), [r(4, 2, E)] * 3, {"attn_mask": np.zeros((2, 4, 4), dtype=bool)}),
    (dict(add_bias_kv=True), [r(4, 2, E)] * 3, {"attn_mask": np.zeros(4, dtype=bool)}),
    (dict(add_bias_kv=True), [r(4, E)] * 3, {"attn_mask": np.zeros((1, 4, 4), dtype=bool)}),
    ({}, [r(4, 2, E)] * 3, {"attn_mask": np.zeros((4, 4), dtype=np.int64)}),
    ({}, [r(4, 2, E)] * 3, {"key_padding_mask": np.zeros((2, 4), dtype=np.int32)}),
])
def test_errors_match_torch(torch, kwargs, args, call):
    got, want = _errors(torch, kwargs, args, call)
    assert got == want


def test_is_causal_needs_a_mask(torch):
    x = r(4, 2, E)
    for need_weights in (True, False):
        res = []
        for lib in (ember, torch):
            m = lib.nn.MultiheadAttention(E, H, add_bias_kv=True).double()
            t = lib.tensor(x)
            with pytest.raises(RuntimeError) as info:
                m(t, t, t, is_causal=True, need_weights=need_weights)
            res.append(str(info.value))
        assert res[0] == res[1]


def test_mismatched_mask_types_warn(torch):
    m = ember.nn.MultiheadAttention(E, H, add_zero_attn=True).double()
    x = ember.tensor(r(4, 2, E))
    with pytest.warns(UserWarning, match="mismatched key_padding_mask and attn_mask"):
        m(x, x, x, key_padding_mask=ember.zeros(2, 4), attn_mask=ember.zeros(4, 4).bool())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m(x, x, x, key_padding_mask=ember.zeros(2, 4).bool(),
          attn_mask=ember.zeros(4, 4).bool())
