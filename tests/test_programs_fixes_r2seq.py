"""Regressions found by the round-2 sequence programs (tests/programs/p_r2seq_*): each checked
against PyTorch."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


def _both(build):
    """``build(lib)`` run under torch and ember: (torch's error, ember's error)."""
    return _error(lambda: build(torch)), _error(lambda: build(ember))


def test_lstm_cell_needs_two_hidden_states():
    def build(lib):
        lib.manual_seed(0)
        cell = lib.nn.LSTMCell(4, 3)
        cell(lib.randn(2, 4), (lib.zeros(2, 3),))

    want, got = _both(build)
    assert want == ("RuntimeError", "lstm_cell expects two hidden states")
    assert got == want


_CTC_CASES = {
    "targets_3d": lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp, tg[None], [6, 6], [2, 2]),
    "log_probs_4d": lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp[None], tg, [6, 6], [2, 2]),
    "log_probs_1d": lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp[0, 0], tg, [1], [1]),
    "target_len_neg": lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp, tg, [6, 6], [-1, 2]),
    "concat_size": lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp, tg.view(-1), [6, 6],
                                                                   [2, 2]),
    "batch_size": lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp, tg[:1], [6, 6], [2, 2]),
    "too_short": lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp, tg, [6, 6], [4, 2]),
    "input_len_neg": lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp, tg, [-1, 6], [2, 2]),
    "input_len_big": lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp, tg, [7, 6], [2, 2]),
    "float_lengths": lambda lib, lp, tg: lib.nn.functional.ctc_loss(
        lp, tg, lib.tensor([6.0, 6.0]), lib.tensor([2, 2])),
    "float_target_lengths": lambda lib, lp, tg: lib.nn.functional.ctc_loss(
        lp, tg, lib.tensor([6, 6]), lib.tensor([2.0, 2.0])),
    "int_lengths": lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp[:, 0], tg[0], 6, 2),
    "mixed_lengths": lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp, tg, [6, 6],
                                                                     lib.tensor([2, 2])),
    "float_in_list": lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp, tg, [6, 6], [2, 2.5]),
    "empty": lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp[:, :0], tg[:0], [], []),
    "bad_reduction": lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp, tg, [6], [2, 2],
                                                                     reduction="avg"),
}


@pytest.mark.parametrize("case", sorted(_CTC_CASES))
def test_ctc_loss_argument_errors(case):
    def build(lib):
        lib.manual_seed(0)
        lp = lib.randn(6, 2, 5).log_softmax(2)
        tg = lib.tensor([[1, 2, 3], [1, 3, 4]])
        _CTC_CASES[case](lib, lp, tg)

    want, got = _both(build)
    assert want is not None
    assert got == want


@pytest.mark.parametrize("kind", ["concat_unbatched", "float_targets", "int32_lengths"])
def test_ctc_loss_accepted_forms(kind):
    def run(lib):
        lib.manual_seed(0)
        lp = lib.randn(6, 5, dtype=lib.float64).log_softmax(1).requires_grad_()
        if kind == "concat_unbatched":
            loss = lib.nn.functional.ctc_loss(lp, lib.tensor([1, 2]), [6], [2])
        elif kind == "float_targets":
            loss = lib.nn.functional.ctc_loss(lp, lib.tensor([1.0, 2.0]), [6], [2],
                                              reduction="sum")
        else:
            loss = lib.nn.functional.ctc_loss(lp, lib.tensor([1, 2]),
                                              lib.tensor([6], dtype=lib.int32),
                                              lib.tensor([2], dtype=lib.uint8))
        loss.backward()
        return loss.detach().numpy(), lp.grad.numpy()

    (lt, gt), (le, ge) = run(torch), run(ember)
    np.testing.assert_allclose(le, lt, rtol=1e-10)
    np.testing.assert_allclose(ge, gt, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("variant", ["left_aligned", "float_mask", "no_mask_check", "norm",
                                     "grad_enabled", "training", "with_mask"])
def test_transformer_encoder_nested_fast_path_zeroes_padding(variant):
    def run(lib):
        nn = lib.nn
        lib.manual_seed(0)
        layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        enc = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(8) if variant == "norm" else None)
        if variant != "training":
            enc.eval()
        x = lib.randn(3, 5, 8)
        pad = lib.tensor([[False] * 5, [False, False, True, True, True], [True] * 5])
        if variant == "no_mask_check":
            enc.mask_check = False
            pad = lib.tensor([[False] * 5, [True, False, False, True, True], [False] * 5])
        if variant == "float_mask":
            pad = lib.zeros(3, 5).masked_fill(pad, float("-inf"))
        mask = lib.zeros(5, 5) if variant == "with_mask" else None
        if variant in ("grad_enabled", "training"):
            return enc(x, mask=mask, src_key_padding_mask=pad).detach()[:2].numpy()
        with lib.no_grad():
            return enc(x, mask=mask, src_key_padding_mask=pad).numpy()

    np.testing.assert_allclose(run(ember), run(torch), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("variant", ["mha_pad", "mha_bool_mask", "mha_mask_3d", "mha_float_mask",
                                     "mha_weights", "mha_no_bias", "mha_cross", "layer",
                                     "layer_tanh", "layer_pre_ln", "decoder", "training"])
def test_fused_attention_nan_rows(variant):
    """torch's fused eval kernels give NaN where every key is masked; its composite path 0."""
    def run(lib):
        nn = lib.nn
        lib.manual_seed(0)
        x = lib.randn(3, 4, 8)
        pad = lib.tensor([[False] * 4, [False, True, True, True], [True] * 4])
        am = lib.zeros(4, 4, dtype=lib.bool)
        am[1] = True
        mha = nn.MultiheadAttention(8, 2, batch_first=True, bias=variant != "mha_no_bias")
        mha.eval()
        if variant == "training":
            mha.train()
        with lib.no_grad():
            if variant in ("mha_pad", "training", "mha_no_bias"):
                return mha(x, x, x, key_padding_mask=pad, need_weights=False)[0]
            if variant == "mha_bool_mask":
                return mha(x, x, x, attn_mask=am, key_padding_mask=pad, need_weights=False)[0]
            if variant == "mha_mask_3d":
                am3 = lib.zeros(6, 4, 4, dtype=lib.bool)
                am3[3, 2] = True
                return mha(x, x, x, attn_mask=am3, need_weights=False)[0]
            if variant == "mha_float_mask":
                fpad = lib.zeros(3, 4).masked_fill(pad, float("-inf"))
                return mha(x, x, x, key_padding_mask=fpad, need_weights=False)[0]
            if variant == "mha_weights":
                return lib.cat([mha(x, x, x, key_padding_mask=pad)[0],
                                mha(x, x, x, key_padding_mask=pad)[1]], -1)
            if variant == "mha_cross":
                return mha(x, x, x.clone(), key_padding_mask=pad, need_weights=False)[0]
            if variant.startswith("layer"):
                act = lib.tanh if variant == "layer_tanh" else "relu"
                layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True,
                                                   activation=act,
                                                   norm_first=variant == "layer_pre_ln")
                return layer.eval()(x, src_key_padding_mask=pad)
            dec = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True).eval()
            return dec(x, x, tgt_key_padding_mask=pad, memory_key_padding_mask=pad)

    want, got = run(torch).numpy(), run(ember).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
