"""Parity with torch for the breadth layers: outputs, input and parameter gradients, reprs."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _np(t):
    return None if t is None else np.asarray(t.detach().cpu().numpy())


def _lib_tensor(lib, a, grad):
    t = lib.tensor(a)
    if grad and np.issubdtype(np.asarray(a).dtype, np.floating):
        t.requires_grad_(True)
    return t


def parity(ctor, *arrays, grad=True, train=True, rtol=1e-6, atol=1e-8, call=None, seed=0,
           out_index=None):
    """Build ``ctor(lib)`` in both libraries with torch's state, run ``arrays`` through it and
    compare outputs, the input gradients and the parameter gradients."""
    torch.manual_seed(seed)
    tm = ctor(torch)
    em = ctor(ember)
    if isinstance(tm, torch.nn.Module):
        tm.double()
        em.double()
        tsd = tm.state_dict()
        esd = em.state_dict()
        assert list(esd.keys()) == list(tsd.keys())
        em.load_state_dict({k: ember.tensor(_np(v)) for k, v in tsd.items()})
        tm.train(train)
        em.train(train)
        assert repr(em) == repr(tm)
    tin = [_lib_tensor(torch, a, grad) for a in arrays]
    ein = [_lib_tensor(ember, a, grad) for a in arrays]
    fn_t = (lambda *x: call(tm, *x)) if call else tm
    fn_e = (lambda *x: call(em, *x)) if call else em
    to, eo = fn_t(*tin), fn_e(*ein)
    if out_index is not None:
        to, eo = to[out_index], eo[out_index]
    assert tuple(eo.shape) == tuple(to.shape)
    assert str(eo.dtype).split(".")[-1] == str(to.dtype).split(".")[-1]
    np.testing.assert_allclose(_np(eo), _np(to), rtol=rtol, atol=atol)
    if not grad or not to.requires_grad:
        return tm, em
    g = np.random.default_rng(seed + 1).standard_normal(tuple(to.shape))
    to.backward(torch.tensor(g, dtype=to.dtype))
    eo.backward(ember.tensor(g).to(eo.dtype))
    for a, b in zip(tin, ein):
        if a.requires_grad:
            np.testing.assert_allclose(_np(b.grad), _np(a.grad), rtol=rtol, atol=atol)
    if isinstance(tm, torch.nn.Module):
        for (n, a), (_, b) in zip(tm.named_parameters(), em.named_parameters()):
            if a.grad is not None:
                np.testing.assert_allclose(_np(b.grad), _np(a.grad), rtol=rtol, atol=atol,
                                           err_msg=n)
        for (n, a), (_, b) in zip(tm.named_buffers(), em.named_buffers()):
            np.testing.assert_allclose(_np(b), _np(a), rtol=rtol, atol=atol, err_msg=n)
    return tm, em


R = np.random.default_rng(0)


def rand(*shape):
    return R.standard_normal(shape)


PAD_CASES = [
    (lambda nn: nn.ConstantPad1d((1, 2), 3.5), (2, 3, 4)),
    (lambda nn: nn.ConstantPad2d(1, -1.0), (2, 3, 4)),
    (lambda nn: nn.ConstantPad3d((1, 0, 2, 1, 0, 1), 0.5), (1, 2, 3, 3, 2)),
    (lambda nn: nn.ZeroPad1d(2), (2, 3)),
    (lambda nn: nn.ZeroPad2d((1, 1, 2, 0)), (1, 2, 3, 3)),
    (lambda nn: nn.ZeroPad3d(1), (1, 1, 2, 2, 2)),
    (lambda nn: nn.ReflectionPad1d((2, 1)), (2, 3, 4)),
    (lambda nn: nn.ReflectionPad2d(1), (1, 2, 3, 4)),
    (lambda nn: nn.ReflectionPad3d(1), (1, 1, 3, 3, 3)),
    (lambda nn: nn.ReplicationPad1d((2, 1)), (2, 3, 4)),
    (lambda nn: nn.ReplicationPad2d((1, 2, 0, 1)), (1, 2, 3, 4)),
    (lambda nn: nn.ReplicationPad3d(1), (1, 1, 2, 3, 2)),
    (lambda nn: nn.CircularPad1d((2, 1)), (2, 3, 4)),
    (lambda nn: nn.CircularPad2d(1), (1, 2, 3, 4)),
    (lambda nn: nn.CircularPad3d(1), (1, 1, 2, 3, 2)),
]


@pytest.mark.parametrize("case", range(len(PAD_CASES)))
def test_padding_layers(case):
    ctor, shape = PAD_CASES[case]
    parity(lambda lib: ctor(lib.nn), rand(*shape))


ACT_CASES = [
    (lambda nn: nn.GLU(1), (2, 4, 3)),
    (lambda nn: nn.Hardshrink(0.7), (3, 5)),
    (lambda nn: nn.Softshrink(0.3), (3, 5)),
    (lambda nn: nn.Tanhshrink(), (3, 5)),
    (lambda nn: nn.Softmax2d(), (2, 3, 2, 2)),
    (lambda nn: nn.RReLU(0.1, 0.3), (3, 5)),
    (lambda nn: nn.PixelShuffle(2), (2, 8, 2, 3)),
    (lambda nn: nn.PixelUnshuffle(2), (2, 2, 4, 6)),
    (lambda nn: nn.ChannelShuffle(2), (2, 4, 3, 3)),
    (lambda nn: nn.Upsample(scale_factor=2, mode="nearest"), (1, 2, 3, 3)),
    (lambda nn: nn.UpsamplingNearest2d(size=(5, 4)), (1, 2, 3, 3)),
    (lambda nn: nn.UpsamplingBilinear2d(scale_factor=2), (1, 2, 3, 3)),
    (lambda nn: nn.Unfold((2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), (2, 3, 5, 6)),
    (lambda nn: nn.Fold((4, 5), (2, 2), padding=(1, 0), stride=(1, 2)), (2, 12, 10)),
    (lambda nn: nn.InstanceNorm1d(3), (2, 3, 5)),
    (lambda nn: nn.InstanceNorm2d(3, affine=True, track_running_stats=True), (2, 3, 4, 3)),
    (lambda nn: nn.InstanceNorm3d(2, affine=True), (2, 2, 3, 2, 3)),
    (lambda nn: nn.RMSNorm([3, 4]), (2, 3, 4)),
    (lambda nn: nn.RMSNorm(4, eps=1e-3, elementwise_affine=False), (2, 3, 4)),
    (lambda nn: nn.LocalResponseNorm(3), (2, 5, 4)),
    (lambda nn: nn.LocalResponseNorm(2, alpha=0.1, beta=0.5, k=2.0), (2, 5, 3, 2)),
    (lambda nn: nn.BatchNorm3d(3), (2, 3, 2, 3, 2)),
    (lambda nn: nn.Conv3d(4, 6, (2, 3, 2), stride=(1, 2, 1), padding=1, dilation=(2, 1, 1),
                          groups=2), (2, 4, 5, 6, 4)),
    (lambda nn: nn.Conv3d(2, 3, 3, padding="same", padding_mode="reflect"), (1, 2, 4, 4, 4)),
    (lambda nn: nn.ConvTranspose3d(4, 2, (2, 3, 2), stride=(2, 1, 2), padding=(0, 1, 1),
                                   output_padding=(1, 0, 1), groups=2, dilation=(1, 2, 1)),
     (2, 4, 3, 3, 2)),
    (lambda nn: nn.MaxPool3d(2, stride=1, padding=1, dilation=(1, 2, 1)), (2, 2, 3, 5, 4)),
    (lambda nn: nn.MaxPool3d((2, 2, 3), ceil_mode=True), (1, 2, 5, 5, 4)),
    (lambda nn: nn.AvgPool3d(2, stride=(1, 2, 2), padding=1, count_include_pad=False),
     (2, 2, 3, 5, 4)),
    (lambda nn: nn.AvgPool3d(3, ceil_mode=True, padding=1), (1, 2, 5, 5, 4)),
    (lambda nn: nn.AvgPool3d(2, divisor_override=3), (1, 2, 4, 4, 4)),
    (lambda nn: nn.AdaptiveAvgPool3d((2, 3, None)), (2, 2, 5, 7, 3)),
    (lambda nn: nn.AdaptiveMaxPool3d(2), (2, 2, 5, 4, 3)),
    (lambda nn: nn.LPPool1d(2, 3, stride=2), (2, 3, 7)),
    (lambda nn: nn.LPPool2d(3, (2, 2)), (2, 3, 4, 6)),
    (lambda nn: nn.LPPool3d(2, 2), (1, 2, 4, 4, 4)),
    (lambda nn: nn.CosineSimilarity(dim=-1), (3, 4), (3, 4)),
    (lambda nn: nn.PairwiseDistance(p=3.0, keepdim=True), (3, 4), (3, 4)),
    (lambda nn: nn.Bilinear(3, 2, 4), (5, 3), (5, 2)),
]


@pytest.mark.parametrize("case", range(len(ACT_CASES)))
def test_layers(case):
    ctor, *shapes = ACT_CASES[case]
    arrays = [rand(*s) for s in shapes]
    if case in (1, 2) or "MaxPool" in repr(ctor(torch.nn)):
        arrays = [np.round(a, 1) + R.standard_normal(a.shape) * 1e-3 for a in arrays]
    tol = dict(rtol=1e-5, atol=1e-7)
    if "LPPool" in repr(ctor(torch.nn)):
        arrays = [np.abs(a) + 0.1 for a in arrays]
    train = "RReLU" not in repr(ctor(torch.nn))     # (training draws slopes at random)
    parity(lambda lib: ctor(lib.nn), *arrays, train=train, **tol)


def test_eval_mode_norms():
    x = rand(2, 3, 4, 3)

    def ctor(lib):
        m = lib.nn.InstanceNorm2d(3, affine=True, track_running_stats=True)
        return m
    tm, em = parity(ctor, x, train=True)
    parity(ctor, x, train=False)


def test_maxpool3d_indices_and_unpool():
    x = rand(2, 2, 4, 5, 4)
    tx, ex = torch.tensor(x), ember.tensor(x)
    to, ti = torch.nn.functional.max_pool3d(tx, 2, stride=2, padding=1, return_indices=True)
    eo, ei = ember.nn.functional.max_pool3d(ex, 2, stride=2, padding=1, return_indices=True)
    np.testing.assert_allclose(_np(eo), _np(to))
    assert ei.tolist() == ti.tolist()
    tu = torch.nn.MaxUnpool3d(2, 2, 1)(to, ti, output_size=x.shape[2:])
    eu = ember.nn.MaxUnpool3d(2, 2, 1)(eo, ei, output_size=x.shape[2:])
    np.testing.assert_allclose(_np(eu), _np(tu))
    to, ti = torch.nn.functional.adaptive_max_pool3d(tx, (2, 3, 2), return_indices=True)
    eo, ei = ember.nn.functional.adaptive_max_pool3d(ex, (2, 3, 2), return_indices=True)
    assert ei.tolist() == ti.tolist()
    x2 = rand(2, 3, 6, 4)
    to, ti = torch.nn.functional.max_pool2d(torch.tensor(x2), 2, return_indices=True)
    for u in ("MaxUnpool2d",):
        tu = getattr(torch.nn, u)(2)(to, ti)
        eu = getattr(ember.nn, u)(2)(ember.tensor(_np(to)), ember.tensor(_np(ti)))
        np.testing.assert_allclose(_np(eu), _np(tu))
    x1 = rand(2, 3, 7)
    to, ti = torch.nn.functional.max_pool1d(torch.tensor(x1), 2, return_indices=True)
    tu = torch.nn.MaxUnpool1d(2)(to, ti)
    eu = ember.nn.MaxUnpool1d(2)(ember.tensor(_np(to)), ember.tensor(_np(ti)))
    np.testing.assert_allclose(_np(eu), _np(tu))


def test_functional_only():
    F, TF = ember.nn.functional, torch.nn.functional
    x = rand(3, 5)
    for name, args in [("hardshrink", ()), ("softshrink", (0.2,)), ("tanhshrink", ()),
                       ("glu", (0,)) if False else ("glu", (-1,)) if x.shape[-1] % 2 == 0
                       else ("tanhshrink", ())]:
        np.testing.assert_allclose(_np(getattr(F, name)(ember.tensor(x), *args)),
                                   _np(getattr(TF, name)(torch.tensor(x), *args)))
    np.testing.assert_allclose(_np(F.pdist(ember.tensor(x))), _np(TF.pdist(torch.tensor(x))))
    for f in ("elu_", "selu_", "celu_", "leaky_relu_", "hardtanh_"):
        a, b = ember.tensor(x), torch.tensor(x)
        getattr(F, f)(a)
        getattr(TF, f)(b)
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6)
    a, b = ember.tensor(x), torch.tensor(x)
    F.threshold_(a, 0.1, 20.0)
    TF.threshold_(b, 0.1, 20.0)
    np.testing.assert_allclose(_np(a), _np(b))


LOSS_CASES = [
    ("GaussianNLLLoss", dict(full=True), lambda: (rand(4, 3), rand(4, 3),
                                                 np.abs(rand(4, 3)) + 0.1)),
    ("GaussianNLLLoss", dict(reduction="sum"), lambda: (rand(4, 3), rand(4, 3),
                                                       np.abs(rand(4, 1)) + 0.1)),
    ("PoissonNLLLoss", dict(), lambda: (rand(4, 3), np.abs(rand(4, 3)) * 3)),
    ("PoissonNLLLoss", dict(log_input=False, full=True, reduction="none"),
     lambda: (np.abs(rand(4, 3)) + 0.1, np.floor(np.abs(rand(4, 3)) * 3))),
    ("HingeEmbeddingLoss", dict(margin=0.5), lambda: (rand(4, 3),
                                                      np.sign(rand(4, 3)))),
    ("SoftMarginLoss", dict(), lambda: (rand(4, 3), np.sign(rand(4, 3)))),
    ("MultiLabelSoftMarginLoss", dict(reduction="sum"),
     lambda: (rand(4, 3), (rand(4, 3) > 0).astype(np.float64))),
    ("MultiMarginLoss", dict(), lambda: (rand(4, 5), np.array([0, 4, 2, 2]))),
    ("MultiMarginLoss", dict(p=2, margin=0.5, reduction="none"),
     lambda: (rand(4, 5), np.array([0, 4, 2, 2]))),
    ("MultiLabelMarginLoss", dict(), lambda: (rand(3, 4), np.array([[3, 0, -1, 1],
                                                                   [1, 2, 3, 0],
                                                                   [-1, 1, 2, 3]]))),
    ("MarginRankingLoss", dict(margin=0.2), lambda: (rand(5), rand(5), np.sign(rand(5)))),
    ("CosineEmbeddingLoss", dict(margin=0.1), lambda: (rand(4, 3), rand(4, 3),
                                                       np.sign(rand(4)))),
    ("TripletMarginWithDistanceLoss", dict(swap=True), lambda: (rand(4, 3), rand(4, 3),
                                                                rand(4, 3))),
]


@pytest.mark.parametrize("case", range(len(LOSS_CASES)))
def test_losses(case):
    name, kw, make = LOSS_CASES[case]
    arrays = make()

    def ctor(lib):
        return getattr(lib.nn, name)(**kw)
    tm, em = ctor(torch), ctor(ember)
    tin = [_lib_tensor(torch, a, i == 0) for i, a in enumerate(arrays)]
    ein = [_lib_tensor(ember, a, i == 0) for i, a in enumerate(arrays)]
    to, eo = tm(*tin), em(*ein)
    np.testing.assert_allclose(_np(eo), _np(to), rtol=1e-6, atol=1e-10)
    g = np.random.default_rng(1).standard_normal(tuple(to.shape))
    to.backward(torch.tensor(g))
    eo.backward(ember.tensor(g))
    np.testing.assert_allclose(_np(ein[0].grad), _np(tin[0].grad), rtol=1e-6, atol=1e-10)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag(mode):
    idx = np.array([1, 2, 4, 5, 4, 3, 2, 9])
    offsets = np.array([0, 3, 3, 5])
    psw = rand(8).astype(np.float32) if mode == "sum" else None

    def ctor(lib):
        return lib.nn.EmbeddingBag(10, 3, mode=mode, padding_idx=2)
    torch.manual_seed(0)
    tm = ctor(torch)
    em = ctor(ember)
    em.load_state_dict({k: ember.tensor(_np(v)) for k, v in tm.state_dict().items()})
    assert repr(em) == repr(tm)
    args_t = [torch.tensor(idx), torch.tensor(offsets)]
    args_e = [ember.tensor(idx), ember.tensor(offsets)]
    if psw is not None:
        args_t.append(torch.tensor(psw))
        args_e.append(ember.tensor(psw))
    to, eo = tm(*args_t), em(*args_e)
    np.testing.assert_allclose(_np(eo), _np(to), rtol=1e-6)
    g = rand(*to.shape)
    to.backward(torch.tensor(g).float())
    eo.backward(ember.tensor(g).float())
    np.testing.assert_allclose(_np(em.weight.grad), _np(tm.weight.grad), rtol=1e-5, atol=1e-6)
    # 2-D input: fixed-size bags
    t2 = torch.nn.functional.embedding_bag(torch.tensor(idx.reshape(2, 4)), tm.weight, mode=mode)
    e2 = ember.nn.functional.embedding_bag(ember.tensor(idx.reshape(2, 4)), em.weight, mode=mode)
    np.testing.assert_allclose(_np(e2), _np(t2), rtol=1e-6)


@pytest.mark.parametrize("name,shape", [("LazyLinear", (3, 5)), ("LazyConv2d", (2, 3, 5, 5)),
                                        ("LazyConv1d", (2, 3, 5)),
                                        ("LazyConvTranspose2d", (2, 3, 4, 4)),
                                        ("LazyBatchNorm1d", (4, 3)),
                                        ("LazyInstanceNorm2d", (2, 3, 4, 4))])
def test_lazy_modules(name, shape):
    args = {"LazyLinear": (4,), "LazyConv2d": (4, 3), "LazyConv1d": (4, 2),
            "LazyConvTranspose2d": (4, 2), "LazyBatchNorm1d": (),
            "LazyInstanceNorm2d": ()}[name]
    em = getattr(ember.nn, name)(*args)
    tm = getattr(torch.nn, name)(*args)
    x = rand(*shape).astype(np.float32)
    eo = em(ember.tensor(x))
    to = tm(torch.tensor(x))
    assert type(em).__name__ == type(tm).__name__
    assert tuple(eo.shape) == tuple(to.shape)
    assert list(em.state_dict().keys()) == list(tm.state_dict().keys())
    for k, v in tm.state_dict().items():
        assert tuple(em.state_dict()[k].shape) == tuple(v.shape), k
    assert repr(em) == repr(tm)


def test_dropout_family_shapes_and_scaling():
    x = ember.ones(4, 6, 5)
    ember.manual_seed(0)
    y = ember.nn.functional.dropout1d(x, 0.5, True)
    per_channel = y._array.reshape(4, 6, 5)
    assert ((per_channel == 0).all(-1) | (per_channel == 2).all(-1)).all()
    ember.nn.Dropout3d(0.3)(ember.ones(2, 3, 2, 2, 2))
    a = ember.nn.AlphaDropout(0.2)
    a.eval()
    assert a(x) is x
    a.train()
    out = a(ember.ones(1000))
    vals = set(np.round(np.asarray(out.tolist()), 6))
    assert len(vals) == 2
    fa = ember.nn.FeatureAlphaDropout(0.5)(ember.ones(4, 3, 2))
    assert tuple(fa.shape) == (4, 3, 2)
    assert repr(ember.nn.Dropout1d(0.2)) == repr(torch.nn.Dropout1d(0.2))


def test_grid_sample_affine_grid():
    theta = rand(2, 2, 3) * 0.5 + np.array([[1, 0, 0], [0, 1, 0]])
    for ac in (False, True):
        tg = torch.nn.functional.affine_grid(torch.tensor(theta), (2, 3, 4, 5), align_corners=ac)
        eg = ember.nn.functional.affine_grid(ember.tensor(theta), (2, 3, 4, 5), align_corners=ac)
        np.testing.assert_allclose(_np(eg), _np(tg), atol=1e-12)
    x = rand(2, 3, 4, 5)
    grid = rand(2, 3, 2, 2) * 1.3
    for mode in ("bilinear", "nearest"):
        for pm in ("zeros", "border", "reflection"):
            for ac in (False, True):
                tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
                tg, eg = torch.tensor(grid, requires_grad=True), ember.tensor(grid,
                                                                               requires_grad=True)
                to = torch.nn.functional.grid_sample(tx, tg, mode, pm, ac)
                eo = ember.nn.functional.grid_sample(ex, eg, mode, pm, ac)
                np.testing.assert_allclose(_np(eo), _np(to), atol=1e-10,
                                           err_msg="%s %s %s" % (mode, pm, ac))
                g = rand(*to.shape)
                to.backward(torch.tensor(g))
                eo.backward(ember.tensor(g))
                np.testing.assert_allclose(_np(ex.grad), _np(tx.grad), atol=1e-10)
                if mode == "bilinear":
                    np.testing.assert_allclose(_np(eg.grad), _np(tg.grad), atol=1e-10)


def test_gumbel_softmax_properties():
    x = ember.randn(4, 5)
    y = ember.nn.functional.gumbel_softmax(x, tau=0.5)
    np.testing.assert_allclose(_np(y.sum(-1)), np.ones(4), rtol=1e-6)
    h = ember.nn.functional.gumbel_softmax(x, hard=True)
    assert set(np.unique(_np(h)).tolist()) <= {0.0, 1.0}
    np.testing.assert_allclose(_np(h.sum(-1)), np.ones(4))


def test_modules_import_paths():
    import importlib
    import types
    names = [n for n in dir(torch.nn.modules)
             if isinstance(getattr(torch.nn.modules, n), types.ModuleType)
             and n not in ("_functions", "linear_cross_entropy_options")]
    for n in names:
        importlib.import_module("ember.nn.modules." + n)
    from ember.nn.modules.activation import MultiheadAttention  # noqa: F401
    from ember.nn.modules.batchnorm import _BatchNorm  # noqa: F401
    from ember.nn.modules.conv import Conv2d  # noqa: F401
    from ember.nn.modules.loss import _Loss  # noqa: F401
    from ember.nn.modules.module import Module  # noqa: F401


def test_name_coverage():
    missing = [n for n in dir(torch.nn) if n[0].isupper() and not hasattr(ember.nn, n)]
    total = len([n for n in dir(torch.nn) if n[0].isupper()])
    assert len(missing) <= 0.05 * total, missing


def test_adaptive_log_softmax():
    def ctor(lib):
        return lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0)
    torch.manual_seed(0)
    tm, em = ctor(torch), ctor(ember)
    em.load_state_dict({k: ember.tensor(_np(v)) for k, v in tm.state_dict().items()})
    x = rand(5, 8).astype(np.float32)
    t = np.array([0, 4, 9, 2, 7])
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    to = tm(tx, torch.tensor(t))
    eo = em(ex, ember.tensor(t))
    np.testing.assert_allclose(_np(eo.output), _np(to.output), rtol=1e-5, atol=1e-6)
    to.loss.backward()
    eo.loss.backward()
    np.testing.assert_allclose(_np(ex.grad), _np(tx.grad), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(_np(em.log_prob(ember.tensor(x))),
                               _np(tm.log_prob(torch.tensor(x))), rtol=1e-5, atol=1e-6)
    assert em.predict(ember.tensor(x)).tolist() == tm.predict(torch.tensor(x)).tolist()


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer(norm_first):
    def ctor(lib):
        return lib.nn.Transformer(8, 2, 2, 2, 16, dropout=0.0, norm_first=norm_first,
                                  batch_first=True)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(4)
    emask = ember.nn.Transformer.generate_square_subsequent_mask(4)
    np.testing.assert_array_equal(_np(emask), _np(mask))

    def call(m, src, tgt):
        lib = torch if isinstance(m, torch.nn.Module) else ember
        msk = lib.nn.Transformer.generate_square_subsequent_mask(4, dtype=lib.float64)
        return m(src, tgt, tgt_mask=msk)
    parity(ctor, rand(2, 5, 8), rand(2, 4, 8), call=call, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("tgt2d", [True, False])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_ctc_loss(tgt2d, reduction):
    rng = np.random.default_rng(0)
    steps, n, c = 7, 3, 5
    x = rng.standard_normal((steps, n, c))
    lp = x - np.log(np.exp(x).sum(-1, keepdims=True))
    tl, il = [3, 1, 2], [7, 5, 6]
    tg = rng.integers(1, c, (n, 3))
    tg[0, 1] = tg[0, 0]                                 # a repeated label needs a blank
    targets = tg if tgt2d else np.concatenate([tg[b, :tl[b]] for b in range(n)])
    a, b = torch.tensor(lp, requires_grad=True), ember.tensor(lp, requires_grad=True)
    to = torch.nn.CTCLoss(reduction=reduction)(a, torch.tensor(targets), torch.tensor(il),
                                               torch.tensor(tl))
    eo = ember.nn.CTCLoss(reduction=reduction)(b, ember.tensor(targets), ember.tensor(il),
                                               ember.tensor(tl))
    np.testing.assert_allclose(_np(eo), _np(to), rtol=1e-10)
    g = rng.standard_normal(tuple(to.shape))
    to.backward(torch.tensor(g))
    eo.backward(ember.tensor(g))
    np.testing.assert_allclose(_np(b.grad), _np(a.grad), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_infeasible(zero_infinity):
    x = np.random.default_rng(1).standard_normal((2, 1, 4))
    lp = x - np.log(np.exp(x).sum(-1, keepdims=True))
    a, b = torch.tensor(lp, requires_grad=True), ember.tensor(lp, requires_grad=True)
    ta = torch.nn.functional.ctc_loss(a, torch.tensor([[1, 1, 2]]), [2], [3], reduction="sum",
                                      zero_infinity=zero_infinity)
    eb = ember.nn.functional.ctc_loss(b, ember.tensor([[1, 1, 2]]), [2], [3], reduction="sum",
                                      zero_infinity=zero_infinity)
    assert float(eb) == float(ta)
    ta.backward()
    eb.backward()
    np.testing.assert_array_equal(_np(b.grad), _np(a.grad))


def _copy_state(tm, em):
    em.load_state_dict({k: ember.tensor(_np(v)) for k, v in tm.state_dict().items()})


@pytest.mark.parametrize("dim", [0, 1, None])
def test_parametrized_weight_norm(dim):
    tp, ep = torch.nn.utils.parametrizations, ember.nn.utils.parametrizations
    torch.manual_seed(0)
    tm = tp.weight_norm(torch.nn.Linear(4, 3).double(), dim=dim)
    em = ep.weight_norm(ember.nn.Linear(4, 3).double(), dim=dim)
    assert list(em.state_dict()) == list(tm.state_dict())
    _copy_state(tm, em)
    assert type(em).__name__ == type(tm).__name__
    x = rand(5, 4)
    to, eo = tm(torch.tensor(x)), em(ember.tensor(x))
    np.testing.assert_allclose(_np(eo), _np(to), rtol=1e-10)
    g = rand(5, 3)
    to.backward(torch.tensor(g))
    eo.backward(ember.tensor(g))
    for (n, a), (_, b) in zip(tm.named_parameters(), em.named_parameters()):
        np.testing.assert_allclose(_np(b.grad), _np(a.grad), rtol=1e-8, err_msg=n)
    assert ember.nn.utils.parametrize.is_parametrized(em, "weight")
    tu = torch.nn.utils.parametrize.remove_parametrizations(tm, "weight")
    eu = ember.nn.utils.parametrize.remove_parametrizations(em, "weight")
    assert type(eu) is ember.nn.Linear and list(eu.state_dict()) == list(tu.state_dict())
    np.testing.assert_allclose(_np(eu.weight), _np(tu.weight), rtol=1e-10)


def test_register_parametrization_custom_and_cached():
    class Sym(torch.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).transpose(-1, -2)

    class ESym(ember.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).transpose(-1, -2)

    torch.manual_seed(0)
    tm = torch.nn.Linear(3, 3).double()
    em = ember.nn.Linear(3, 3).double()
    _copy_state(tm, em)
    torch.nn.utils.parametrize.register_parametrization(tm, "weight", Sym())
    ember.nn.utils.parametrize.register_parametrization(em, "weight", ESym())
    assert list(em.state_dict()) == list(tm.state_dict())
    np.testing.assert_allclose(_np(em.weight), _np(tm.weight))
    with ember.nn.utils.parametrize.cached():
        assert em.weight is em.weight
    assert ember.nn.utils.parametrize.type_before_parametrizations(em) is ember.nn.Linear
    with pytest.raises(ValueError):
        ember.nn.utils.parametrize.register_parametrization(em, "nothing", ESym())


def test_spectral_norm_both_styles():
    torch.manual_seed(0)
    for style in ("parametrizations", "hooks"):
        tm = torch.nn.Linear(5, 4).double()
        em = ember.nn.Linear(5, 4).double()
        _copy_state(tm, em)
        if style == "hooks":
            torch.nn.utils.spectral_norm(tm)
            ember.nn.utils.spectral_norm(em)
        else:
            torch.nn.utils.parametrizations.spectral_norm(tm)
            ember.nn.utils.parametrizations.spectral_norm(em)
        assert sorted(em.state_dict()) == sorted(tm.state_dict())
        _copy_state(tm, em)             # (u, v start random: take torch's)
        x = rand(3, 5)
        for train in (True, False):
            tm.train(train)
            em.train(train)
            to, eo = tm(torch.tensor(x)), em(ember.tensor(x))
            np.testing.assert_allclose(_np(eo), _np(to), rtol=1e-8)
        to.sum().backward()
        eo.sum().backward()
        for (n, a), (_, b) in zip(tm.named_parameters(), em.named_parameters()):
            np.testing.assert_allclose(_np(b.grad), _np(a.grad), rtol=1e-7, err_msg=n)


def test_old_weight_norm_hooks():
    torch.manual_seed(0)
    tm = torch.nn.Conv1d(2, 3, 2).double()
    em = ember.nn.Conv1d(2, 3, 2).double()
    _copy_state(tm, em)
    torch.nn.utils.weight_norm(tm, dim=1)
    ember.nn.utils.weight_norm(em, dim=1)
    assert list(em.state_dict()) == list(tm.state_dict())
    x = rand(2, 2, 5)
    to, eo = tm(torch.tensor(x)), em(ember.tensor(x))
    np.testing.assert_allclose(_np(eo), _np(to), rtol=1e-10)
    to.sum().backward()
    eo.sum().backward()
    np.testing.assert_allclose(_np(em.weight_g.grad), _np(tm.weight_g.grad), rtol=1e-8)
    np.testing.assert_allclose(_np(em.weight_v.grad), _np(tm.weight_v.grad), rtol=1e-8)
    torch.nn.utils.remove_weight_norm(tm)
    ember.nn.utils.remove_weight_norm(em)
    assert list(em.state_dict()) == list(tm.state_dict())


def test_fusion_and_norm_utils():
    torch.manual_seed(0)
    tc, tb = torch.nn.Conv2d(2, 3, 2).double(), torch.nn.BatchNorm2d(3).double()
    tb.running_mean.uniform_(-1, 1)
    tb.running_var.uniform_(0.5, 2)
    tb.weight.data.uniform_(0.5, 2)
    ec, eb = ember.nn.Conv2d(2, 3, 2).double(), ember.nn.BatchNorm2d(3).double()
    _copy_state(tc, ec)
    _copy_state(tb, eb)
    for m in (tc, tb, ec, eb):
        m.eval()
    tf = torch.nn.utils.fuse_conv_bn_eval(tc, tb)
    ef = ember.nn.utils.fuse_conv_bn_eval(ec, eb)
    x = rand(1, 2, 4, 4)
    np.testing.assert_allclose(_np(ef(ember.tensor(x))), _np(tf(torch.tensor(x))), rtol=1e-10)
    tl, tb1 = torch.nn.Linear(3, 4).double(), torch.nn.BatchNorm1d(4).double()
    el, eb1 = ember.nn.Linear(3, 4).double(), ember.nn.BatchNorm1d(4).double()
    _copy_state(tl, el)
    for m in (tl, tb1, el, eb1):
        m.eval()
    np.testing.assert_allclose(_np(ember.nn.utils.fuse_linear_bn_eval(el, eb1).weight),
                               _np(torch.nn.utils.fuse_linear_bn_eval(tl, tb1).weight))
    ts = [torch.tensor(rand(3)), torch.tensor(rand(2, 2))]
    es = [ember.tensor(_np(t)) for t in ts]
    for p in (2.0, 1.0, float("inf")):
        np.testing.assert_allclose(_np(ember.nn.utils.get_total_norm(es, p)),
                                   _np(torch.nn.utils.get_total_norm(ts, p)))
    tp = [torch.nn.Parameter(t.clone()) for t in ts]
    ep = [ember.nn.Parameter(ember.tensor(_np(t))) for t in ts]
    for a, b in zip(tp, ep):
        a.grad = a.detach() * 3
        b.grad = b.detach() * 3
    torch.nn.utils.clip_grads_with_norm_(tp, 1.0, torch.tensor(5.0, dtype=torch.float64))
    ember.nn.utils.clip_grads_with_norm_(ep, 1.0, ember.tensor(5.0, dtype=ember.float64))
    for a, b in zip(tp, ep):
        np.testing.assert_allclose(_np(b.grad), _np(a.grad))
    m = ember.nn.utils.skip_init(ember.nn.Linear, 3, 4)
    assert tuple(m.weight.shape) == (4, 3)
    from ember.nn.utils.stateless import functional_call
    out = functional_call(el, {"weight": ember.ones(4, 3, dtype=ember.float64),
                               "bias": ember.zeros(4, dtype=ember.float64)},
                          (ember.ones(1, 3, dtype=ember.float64),))
    np.testing.assert_allclose(_np(out), np.full((1, 4), 3.0))


INTERP_CASES = [
    ((1, 2, 5), dict(size=8, mode="linear")),
    ((1, 2, 4, 5), dict(scale_factor=1.7, mode="bicubic")),
    ((1, 2, 4, 5), dict(size=(7, 3), mode="bicubic", align_corners=True)),
    ((1, 2, 6, 5), dict(size=(3, 4), mode="bicubic")),
    ((1, 1, 3, 4, 5), dict(scale_factor=2, mode="trilinear")),
    ((1, 1, 3, 4, 5), dict(size=(2, 5, 7), mode="trilinear", align_corners=True)),
    ((1, 2, 5, 7), dict(size=(3, 4), mode="area")),
    ((1, 2, 5, 7), dict(size=(8, 11), mode="nearest-exact")),
    ((1, 2, 5, 7), dict(scale_factor=0.6, mode="nearest-exact")),
]


@pytest.mark.parametrize("case", range(len(INTERP_CASES)))
def test_interpolate_modes(case):
    shape, kw = INTERP_CASES[case]
    parity(lambda lib: lib.nn.Upsample(**kw), rand(*shape), rtol=1e-10, atol=1e-12)


def test_interpolate_errors():
    x = np.zeros((1, 1, 4, 4))
    for kw in (dict(size=3, mode="linear"), dict(size=3, mode="nearest", align_corners=True),
               dict(size=3, scale_factor=2)):
        with pytest.raises(Exception) as te:
            torch.nn.functional.interpolate(torch.tensor(x), **kw)
        with pytest.raises(type(te.value)) as ee:
            ember.nn.functional.interpolate(ember.tensor(x), **kw)
        assert str(ee.value) == str(te.value)


FRAC_CASES = [(2, (2, 3, 9, 8), dict(kernel_size=2, output_size=(4, 5))),
              (2, (2, 3, 9, 8), dict(kernel_size=(3, 2), output_ratio=0.5)),
              (2, (3, 7, 7), dict(kernel_size=2, output_size=3)),
              (3, (1, 2, 6, 7, 8), dict(kernel_size=2, output_size=(3, 4, 5))),
              (3, (1, 2, 6, 7, 8), dict(kernel_size=(2, 3, 2), output_ratio=(0.5, 0.4, 0.7)))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", range(len(FRAC_CASES)))
def test_fractional_max_pool(case, dtype):
    nd, shape, kw = FRAC_CASES[case]
    rng = np.random.default_rng(case)
    x = rng.standard_normal(shape).astype(dtype)
    n = 1 if len(shape) == nd + 1 else shape[0]
    samples = rng.random((n, shape[-nd - 1], nd)).astype(dtype)
    name = "FractionalMaxPool%dd" % nd
    tm = getattr(torch.nn, name)(return_indices=True, _random_samples=torch.tensor(samples), **kw)
    em = getattr(ember.nn, name)(return_indices=True, _random_samples=ember.tensor(samples), **kw)
    assert repr(em) == repr(tm)
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    (to, ti), (eo, ei) = tm(tx), em(ex)
    np.testing.assert_array_equal(_np(eo), _np(to))
    assert ei.tolist() == ti.tolist()
    g = rng.standard_normal(tuple(to.shape)).astype(dtype)
    to.backward(torch.tensor(g))
    eo.backward(ember.tensor(g))
    np.testing.assert_allclose(_np(ex.grad), _np(tx.grad))


def test_fractional_max_pool_errors():
    for args, kw in [((2,), {}), ((2, 3, 0.5), {}), ((2,), dict(output_ratio=1.5))]:
        with pytest.raises(ValueError) as te:
            torch.nn.FractionalMaxPool2d(*args, **kw)
        with pytest.raises(ValueError) as ee:
            ember.nn.FractionalMaxPool2d(*args, **kw)
        assert str(ee.value) == str(te.value)
    with pytest.raises(RuntimeError) as te:
        torch.nn.functional.fractional_max_pool2d(torch.randn(1, 1, 5, 5), 3, output_size=4)
    with pytest.raises(RuntimeError) as ee:
        ember.nn.functional.fractional_max_pool2d(ember.randn(1, 1, 5, 5), 3, output_size=4)
    assert str(ee.value) == str(te.value)


@pytest.mark.parametrize("shape,omap,triv", [((4, 4), None, True), ((4, 4), "cayley", True),
                                             ((5, 3), "householder", False),
                                             ((3, 5), "householder", False),
                                             ((4, 4), "householder", True),
                                             ((5, 3), None, True)])
def test_orthogonal(shape, omap, triv):
    tp, ep = torch.nn.utils.parametrizations, ember.nn.utils.parametrizations
    torch.manual_seed(0)
    tl = torch.nn.Linear(shape[1], shape[0]).double()
    el = ember.nn.Linear(shape[1], shape[0]).double()
    _copy_state(tl, el)
    tp.orthogonal(tl, orthogonal_map=omap, use_trivialization=triv)
    ep.orthogonal(el, orthogonal_map=omap, use_trivialization=triv)
    assert list(el.state_dict()) == list(tl.state_dict())
    w = _np(el.weight)
    gram = w.T @ w if shape[0] >= shape[1] else w @ w.T
    np.testing.assert_allclose(gram, np.eye(min(shape)), atol=1e-10)
    if shape[0] == shape[1] or not triv:     # (else the completion is random)
        np.testing.assert_allclose(w, _np(tl.weight), atol=1e-10)
        x = rand(2, shape[1])
        tl(torch.tensor(x)).sum().backward()
        el(ember.tensor(x)).sum().backward()
        for (n, a), (_, b) in zip(tl.named_parameters(), el.named_parameters()):
            np.testing.assert_allclose(_np(b.grad), _np(a.grad), atol=1e-10, err_msg=n)
