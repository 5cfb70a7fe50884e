"""Regressions found by the round-3 LLM programs (tests/programs/p_r3llm_*):
``torch.nn.attention.bias`` (causal_upper_left / causal_lower_right as ``attn_mask`` of
``scaled_dot_product_attention``), the attention/embedding layers' ``__constants__`` and
MultiheadAttention's home module; each checked against PyTorch."""
import importlib
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _bias(lib):
    return importlib.import_module(lib.__name__ + ".nn.attention.bias")


def _qkv(lib, lq, lk, grad=False):
    rng = np.random.default_rng(0)
    return [lib.tensor(rng.standard_normal((2, 2, n, 4)).astype(np.float32), requires_grad=grad)
            for n in (lq, lk, lk)]


@pytest.mark.parametrize("variant", ["causal_upper_left", "causal_lower_right"])
@pytest.mark.parametrize("sizes", [(3, 5), (4, 4), (1, 3)])
def test_causal_bias_sdpa_matches_torch(variant, sizes):
    outs = []
    for lib in (ember, torch):
        q, k, v = _qkv(lib, *sizes, grad=True)
        b = getattr(_bias(lib), variant)(*sizes)
        # (the function is looked up before the bias exists, as in ``F.sdpa(q, k, v, make())``)
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v, b)
        g = lib.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(out.shape))
        grads = lib.autograd.grad(out, (q, k, v), g)
        outs.append([out.detach().numpy()] + [x.numpy() for x in grads] + [repr(b), str(b)])
    e, t = outs
    for a, b in zip(e[:4], t[:4]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert e[4:] == t[4:]


def test_causal_bias_attributes_and_materialize():
    for lib in (ember, torch):
        m = _bias(lib)
        lr, ul = m.causal_lower_right(2, 3), m.causal_upper_left(2, 3)
        assert isinstance(lr, lib.Tensor) and type(lr) is m.CausalBias
        assert (lr.variant, ul.variant, lr.seq_len_q, lr.seq_len_kv) == (2, 1, 2, 3)
        assert lr._materialize().dtype == lib.bool
        assert lr._materialize().tolist() == [[True, True, False], [True, True, True]]
        assert ul._materialize().tolist() == [[True, False, False], [True, True, False]]
        assert [v.name for v in m.CausalVariant] == ["UPPER_LEFT", "LOWER_RIGHT"]
        assert m.__all__ == ["causal_upper_left", "causal_lower_right", "CausalVariant",
                             "CausalBias"]


def test_causal_bias_errors_and_warning():
    res = []
    for lib in (ember, torch):
        m = _bias(lib)
        q, k, v = _qkv(lib, 2, 3)
        got = []
        for fn in (lambda: lib.nn.functional.scaled_dot_product_attention(
                       q, k, v, attn_mask=m.causal_upper_left(2, 3), is_causal=True),
                   lambda: m.causal_lower_right(1, 2, 3),
                   lambda: m.CausalBias(1, 2, 3)):
            try:
                fn()
                got.append(None)
            except Exception as e:     # noqa: BLE001 - the error itself is compared
                got.append((type(e).__name__, str(e)))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m.causal_lower_right(4, 2)
        got.append([(x.category.__name__, str(x.message)) for x in w])
        res.append(got)
    assert res[0] == res[1]


def test_causal_bias_lower_right_nan_rows_match():
    outs = []
    for lib in (ember, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            b = _bias(lib).causal_lower_right(4, 2)
        q, k, v = _qkv(lib, 4, 2)
        outs.append(lib.nn.functional.scaled_dot_product_attention(q, k, v, b).numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", ["Transformer", "TransformerEncoder", "TransformerDecoder",
                                  "TransformerEncoderLayer", "TransformerDecoderLayer",
                                  "MultiheadAttention", "Embedding", "EmbeddingBag"])
def test_layer_constants_and_module(name):
    e, t = getattr(ember.nn, name), getattr(torch.nn, name)
    assert getattr(e, "__constants__", None) == getattr(t, "__constants__", None)
    assert e.__module__.replace("ember", "torch") == t.__module__
    assert [c.__name__ for c in e.__mro__] == [c.__name__ for c in t.__mro__]


# -- scaled_dot_product_attention's CPU flash node: saved state and gradients -----------------

_SDPA_CASES = {
    "plain": ((3, 5), 2, {}),
    "causal": ((4, 4), 2, {"is_causal": True}),
    "float_mask": ((3, 5), 2, {"attn_mask": "float"}),
    "bool_mask_dead_row": ((3, 5), 2, {"attn_mask": "dead"}),
    "gqa": ((3, 5), 1, {"enable_gqa": True}),
    "scale": ((2, 3), 2, {"scale": 0.7}),
}


def _sdpa_inputs(lib, case, dtype):
    (lq, lk), kv_heads, kw = _SDPA_CASES[case]
    rng = np.random.default_rng(1)
    mk = [(1, 2, lq, 4), (1, kv_heads, lk, 4), (1, kv_heads, lk, 4)]
    q, k, v = [lib.tensor(rng.standard_normal(s), dtype=getattr(lib, dtype), requires_grad=True)
               for s in mk]
    kw = dict(kw)
    if kw.get("attn_mask") == "float":
        kw["attn_mask"] = lib.tensor(rng.standard_normal((lq, lk)), dtype=getattr(lib, dtype))
    elif kw.get("attn_mask") == "dead":
        m = np.ones((lq, lk), dtype=bool)
        m[1] = False
        kw["attn_mask"] = lib.tensor(m)
    return q, k, v, kw


@pytest.mark.parametrize("case", sorted(_SDPA_CASES))
def test_sdpa_flash_saved_tensors_and_grads_match_torch(case):
    res = []
    for lib in (ember, torch):
        q, k, v, kw = _sdpa_inputs(lib, case, "float64")
        packed = []

        def pack(t):
            packed.append((tuple(t.shape), str(t.dtype).replace("ember", "torch")))
            return t

        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = lib.nn.functional.scaled_dot_product_attention(q, k, v, **kw)
        g = lib.tensor(np.linspace(-1, 2, out.numel()).reshape(out.shape))
        grads = lib.autograd.grad(out, (q, k, v), g)
        res.append((type(out.grad_fn).__name__, packed, out.detach().numpy(),
                    [x.numpy() for x in grads]))
    (en, ep, eo, eg), (tn, tp, to, tg) = res
    assert (en, ep) == (tn, tp)
    np.testing.assert_allclose(eo, to, rtol=1e-10, atol=1e-12)
    for a, b in zip(eg, tg):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("case", ["plain", "causal", "float_mask", "gqa"])
def test_sdpa_flash_gradcheck(case):
    q, k, v, kw = _sdpa_inputs(ember, case, "float64")
    fn = ember.nn.functional.scaled_dot_product_attention
    assert ember.autograd.gradcheck(lambda a, b, c: fn(a, b, c, **kw), (q, k, v))
