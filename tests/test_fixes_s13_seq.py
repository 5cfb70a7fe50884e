"""Fixes from session 13, theme sequence / NLP (helper H10): checked against torch."""

import numpy as np
import pytest

import ember


def _err(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__, str(e)
    return None


def test_multilabel_soft_margin_bad_reduction_message(torch):
    def run(lib):
        x = lib.zeros(2, 3)
        return _err(
            lambda: lib.nn.functional.multilabel_soft_margin_loss(x, x, reduction="batchmean")
        )

    assert run(ember) == run(torch) == ("ValueError", "batchmean is not valid")


def _dropout_masks(lib, fn):
    x = lib.arange(1.0, 25.0).view(2, 3, 4).transpose(0, 1)
    lib.manual_seed(3)
    out = fn(lib, x)
    return out.detach().numpy(), out.stride(), lib.rand(1).item()


@pytest.mark.parametrize(
    "name", ["dropout", "alpha_dropout", "feature_alpha_dropout", "dropout1d", "module"]
)
def test_dropout_draws_noise_in_memory_order(torch, name):
    """torch fills empty_like(input): a transposed input gets its mask in memory order."""
    fns = {
        "dropout": lambda lib, x: lib.nn.functional.dropout(x, 0.5),
        "alpha_dropout": lambda lib, x: lib.nn.functional.alpha_dropout(x, 0.3, True),
        "feature_alpha_dropout": lambda lib, x: lib.nn.functional.feature_alpha_dropout(
            x, 0.5, True
        ),
        "dropout1d": lambda lib, x: lib.nn.functional.dropout1d(x, 0.5),
        "module": lambda lib, x: lib.nn.Dropout(0.4)(x),
    }
    got, want = _dropout_masks(ember, fns[name]), _dropout_masks(torch, fns[name])
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    assert got[2] == want[2]
    if "feature" not in name and name != "dropout1d":  # x * (C-broadcast noise): see requests13
        assert got[1] == want[1]


def test_transformer_layer_dropout_after_batch_first_attention(torch):
    """_sa_block's dropout1 acts on MultiheadAttention's transposed output."""

    def run(lib):
        lib.manual_seed(0)
        x = lib.randn(2, 5, 8)
        pad = lib.zeros(2, 5, dtype=lib.bool)
        pad[1, 3:] = True
        layer = lib.nn.TransformerEncoderLayer(
            8, 2, dim_feedforward=16, dropout=0.1, batch_first=True
        )
        w = lib.randn(2, 5, 8)
        lib.manual_seed(3)
        out = layer(x, src_key_padding_mask=pad)
        (out * w).sum().backward()
        return out.detach().numpy(), layer.linear1.weight.grad.numpy()

    for a, b in zip(run(ember), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("layout", ["channels_last", "sliced", "expanded"])
def test_dropout_layouts(torch, layout):
    def run(lib):
        lib.manual_seed(5)
        x = lib.randn(2, 3, 4, 5)
        x = {
            "channels_last": x.to(memory_format=lib.channels_last),
            "sliced": x[..., ::2],
            "expanded": x[:, :1].expand(2, 3, 4, 5),
        }[layout]
        lib.manual_seed(0)
        outs = [lib.nn.functional.dropout(x, 0.5), lib.nn.functional.alpha_dropout(x, 0.5, True)]
        return [(o.numpy(), o.stride()) for o in outs]

    for (a, sa), (b, sb) in zip(run(ember), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-6)
        assert sa == sb
