"""Modules not covered elsewhere, against torch: the same weights (copied from torch's
module), the same input, outputs and gradients compared."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _copy_params(src, dst):
    sd = {k: ember.tensor(v.detach().numpy().copy()) for k, v in src.state_dict().items()}
    dst.load_state_dict(sd)


def _run(mod_t, mod_e, *shapes, train=False, kw=None):
    rng = np.random.RandomState(0)
    xs = [rng.randn(*s) .astype(np.float32) for s in shapes]
    mod_t.train(train)
    mod_e.train(train)
    ts = [torch.tensor(x, requires_grad=True) for x in xs]
    es = [ember.tensor(x, requires_grad=True) for x in xs]
    ot = mod_t(*ts, **(kw or {}))
    oe = mod_e(*es, **(kw or {}))
    ot = ot[0] if isinstance(ot, tuple) else ot
    oe = oe[0] if isinstance(oe, tuple) else oe
    np.testing.assert_allclose(oe.detach().numpy(), ot.detach().numpy(), rtol=1e-4, atol=1e-5)
    g = rng.randn(*ot.shape).astype(np.float32)
    ot.backward(torch.tensor(g))
    oe.backward(ember.tensor(g))
    for a, b in zip(es, ts):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)
    pt = dict(mod_t.named_parameters())
    for name, p in mod_e.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), pt[name].grad.numpy(), rtol=1e-3,
                                   atol=1e-5, err_msg=name)


def _pair(name, *args, **kwargs):
    torch.manual_seed(0)
    mt = getattr(torch.nn, name)(*args, **kwargs)
    me = getattr(ember.nn, name)(*args, **kwargs)
    _copy_params(mt, me)
    return mt, me


def test_transformer_encoder():
    layer_t = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                               batch_first=True)
    layer_e = ember.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                               batch_first=True)
    mt = torch.nn.TransformerEncoder(layer_t, 2, enable_nested_tensor=False)
    me = ember.nn.TransformerEncoder(layer_e, 2, enable_nested_tensor=False)
    _copy_params(mt, me)
    assert sorted(dict(me.state_dict())) == sorted(dict(mt.state_dict()))
    _run(mt, me, (2, 5, 8), train=True)


def test_transformer_decoder():
    layer_t = torch.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                               batch_first=True, norm_first=True)
    layer_e = ember.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                               batch_first=True, norm_first=True)
    mt = torch.nn.TransformerDecoder(layer_t, 2, norm=torch.nn.LayerNorm(8))
    me = ember.nn.TransformerDecoder(layer_e, 2, norm=ember.nn.LayerNorm(8))
    _copy_params(mt, me)
    assert sorted(dict(me.state_dict())) == sorted(dict(mt.state_dict()))
    _run(mt, me, (2, 5, 8), (2, 4, 8), train=True)


def test_transformer_decoder_layer_causal():
    mt, me = _pair("TransformerDecoderLayer", 8, 2, dim_feedforward=16, dropout=0.0)
    mask_t = torch.nn.Transformer.generate_square_subsequent_mask(5)
    mask_e = ember.nn.Transformer.generate_square_subsequent_mask(5)
    np.testing.assert_array_equal(mask_e.numpy(), mask_t.numpy())
    rng = np.random.RandomState(1)
    tgt, mem = rng.randn(5, 2, 8).astype(np.float32), rng.randn(3, 2, 8).astype(np.float32)
    ot = mt(torch.tensor(tgt), torch.tensor(mem), tgt_mask=mask_t)
    oe = me(ember.tensor(tgt), ember.tensor(mem), tgt_mask=mask_e)
    np.testing.assert_allclose(oe.detach().numpy(), ot.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_cross_map_lrn2d():
    mt, me = _pair("CrossMapLRN2d", 3, alpha=1e-2, beta=0.75, k=1.0)
    _run(mt, me, (2, 5, 4, 4))


def test_nll_loss2d():
    t = np.random.RandomState(0).randint(0, 3, (2, 4, 4))
    lt = torch.nn.NLLLoss2d()(torch.log_softmax(torch.ones(2, 3, 4, 4), 1), torch.tensor(t))
    le = ember.nn.NLLLoss2d()(ember.log_softmax(ember.ones(2, 3, 4, 4), 1), ember.tensor(t))
    np.testing.assert_allclose(le.item(), lt.item(), rtol=1e-6)


@pytest.mark.parametrize("name,shape", [("LazyBatchNorm2d", (2, 3, 4, 4)),
                                        ("LazyBatchNorm3d", (2, 3, 2, 2, 2)),
                                        ("LazyInstanceNorm1d", (2, 3, 5)),
                                        ("LazyInstanceNorm3d", (2, 3, 2, 2, 2))])
def test_lazy_norms(name, shape):
    mt, me = getattr(torch.nn, name)(), getattr(ember.nn, name)()
    x = np.random.RandomState(0).randn(*shape).astype(np.float32)
    ot, oe = mt(torch.tensor(x)), me(ember.tensor(x))
    np.testing.assert_allclose(oe.detach().numpy(), ot.detach().numpy(), rtol=1e-4, atol=1e-5)
    assert type(me).__name__ == type(mt).__name__.replace("Lazy", "")
    assert sorted(dict(me.state_dict())) == sorted(dict(mt.state_dict()))


@pytest.mark.parametrize("name,args,shape", [
    ("LazyConv3d", (4, 2), (1, 2, 4, 4, 4)),
    ("LazyConvTranspose1d", (4, 3), (2, 3, 5)),
    ("LazyConvTranspose3d", (2, 2), (1, 3, 3, 3, 3))])
def test_lazy_convs(name, args, shape):
    mt, me = getattr(torch.nn, name)(*args), getattr(ember.nn, name)(*args)
    x = np.random.RandomState(0).randn(*shape).astype(np.float32)
    mt(torch.tensor(x))
    me(ember.tensor(x))
    _copy_params(mt, me)
    _run(mt, me, shape)


def test_fractional_max_pool3d_with_samples():
    samples = np.random.RandomState(0).rand(1, 2, 3).astype(np.float32)
    mt = torch.nn.FractionalMaxPool3d(2, output_size=3,
                                      _random_samples=torch.tensor(samples))
    me = ember.nn.FractionalMaxPool3d(2, output_size=3,
                                      _random_samples=ember.tensor(samples))
    _run(mt, me, (1, 2, 6, 6, 6))
