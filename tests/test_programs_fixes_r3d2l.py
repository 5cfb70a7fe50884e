"""Regressions found by the d2l.ai programs (tests/programs/p_r3d2l_*.py), checked against torch."""
import pickle

import pytest

import ember

torch = pytest.importorskip("torch")

# the module classes of activation, loss, dropout, linear and rnn
_CLASSES = [
    "ReLU", "Hardtanh", "ReLU6", "LeakyReLU", "PReLU", "ELU", "CELU", "SELU", "GELU", "SiLU",
    "Mish", "Softplus", "Softsign", "Sigmoid", "LogSigmoid", "Tanh", "Hardsigmoid", "Hardswish",
    "Softmax", "LogSoftmax", "Softmin", "Threshold", "GLU", "Hardshrink", "Softshrink",
    "Tanhshrink", "Softmax2d", "RReLU",
    "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout",
    "Identity", "Linear", "Bilinear", "LazyLinear",
    "L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "CrossEntropyLoss", "NLLLoss", "NLLLoss2d",
    "BCELoss", "BCEWithLogitsLoss", "KLDivLoss", "CosineEmbeddingLoss", "MarginRankingLoss",
    "TripletMarginLoss", "GaussianNLLLoss", "PoissonNLLLoss", "CTCLoss", "HingeEmbeddingLoss",
    "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "SoftMarginLoss",
    "TripletMarginWithDistanceLoss",
    "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",
]


def _mro(cls):
    return [k.__name__ for k in cls.__mro__ if k.__name__ not in ("object", "Generic")]


@pytest.mark.parametrize("name", _CLASSES)
def test_module_class_tree_and_constants(name):
    ours, theirs = getattr(ember.nn, name), getattr(torch.nn, name)
    assert _mro(ours) == _mro(theirs)
    assert list(getattr(ours, "__constants__", [])) == list(getattr(theirs, "__constants__", []))


def test_no_isinstance_between_sibling_activations():
    pairs = [("Hardswish", "Hardsigmoid"), ("Mish", "SiLU"), ("Softshrink", "Hardshrink")]
    for a, b in pairs:
        assert isinstance(getattr(ember.nn, a)(), getattr(ember.nn, b)) is \
            isinstance(getattr(torch.nn, a)(), getattr(torch.nn, b))


_REPRS = ["ELU()", "ELU(0.5, True)", "CELU(2.0, True)", "Mish()", "Mish(True)", "Hardswish(True)",
          "Hardsigmoid(True)", "Softmax()", "Softmax(1)", "LogSoftmax(-1)", "Softmin(0)",
          "Softshrink()", "Softshrink(1)", "Hardshrink(0.3)", "Tanhshrink()", "Softmax2d()",
          "Sigmoid()", "Tanh()", "LogSigmoid()", "Softsign()"]


@pytest.mark.parametrize("expr", _REPRS)
def test_activation_repr(expr):
    ours, theirs = eval("ember.nn." + expr), eval("torch.nn." + expr)
    assert repr(ours) == repr(theirs)
    assert ours.extra_repr() == theirs.extra_repr()


@pytest.mark.parametrize("expr", ["Softmax(1, 2)", "ELU(1.0, False, 3)", "Hardswish(1, 2)",
                                  "Softshrink(0.5, 1)", "Mish(x=1)"])
def test_constructor_errors(expr):
    with pytest.raises(TypeError) as theirs:
        eval("torch.nn." + expr)
    with pytest.raises(TypeError) as ours:
        eval("ember.nn." + expr)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("name", ["Softmax", "LogSoftmax", "Softmin"])
def test_softmax_modules_unpickle_without_dim(name):
    m = getattr(ember.nn, name)(1)
    del m.__dict__["dim"]
    m2 = pickle.loads(pickle.dumps(m))
    assert m2.dim is None
    with pytest.warns(UserWarning, match="Implicit dimension choice"):
        out = m2(ember.randn(2, 3))
    assert m2.__class__ is m.__class__ and out.shape == (2, 3)


def test_activation_modules_forward_match():
    import numpy as np
    x = np.random.RandomState(0).randn(2, 3, 4, 5).astype("float32")
    for name in ["ELU", "CELU", "Mish", "Hardswish", "Softshrink", "Tanhshrink", "Softmax2d",
                 "Sigmoid", "Tanh", "LogSigmoid", "Softsign"]:
        ours = getattr(ember.nn, name)()(ember.tensor(x))
        theirs = getattr(torch.nn, name)()(torch.tensor(x))
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-6)
    for name in ["Softmax", "LogSoftmax", "Softmin"]:
        ours = getattr(ember.nn, name)(1)(ember.tensor(x))
        theirs = getattr(torch.nn, name)(1)(torch.tensor(x))
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-6)


def _names(fn, out):
    if fn is None:
        return out
    out.append(type(fn).__name__)
    for nf, _ in fn.next_functions:
        _names(nf, out)
    return out


@pytest.mark.parametrize("kw", [{}, {"weight": True}, {"label_smoothing": 0.1},
                                {"weight": True, "label_smoothing": 0.2},
                                {"reduction": "sum", "label_smoothing": 0.1},
                                {"reduction": "none", "weight": True, "label_smoothing": 0.1},
                                {"ignore_index": 2, "weight": True, "label_smoothing": 0.1}])
@pytest.mark.parametrize("probs", [False, True])
def test_cross_entropy_graph_node_names(kw, probs):
    if probs and "ignore_index" in kw:
        return
    import numpy as np
    rs = np.random.RandomState(0)
    x = rs.randn(4, 5).astype("float32")
    w = rs.rand(5).astype("float32")
    p = rs.dirichlet(np.ones(5), 4).astype("float32")
    y = np.array([0, 2, 4, 1])
    res = []
    for lib in (ember, torch):
        xt = lib.tensor(x, requires_grad=True)
        tgt = lib.tensor(p) if probs else lib.tensor(y)
        k = dict(kw)
        if k.get("weight"):
            k["weight"] = lib.tensor(w)
        out = lib.nn.functional.cross_entropy(xt, tgt, **k)
        out.backward(lib.ones_like(out))
        res.append((_names(out.grad_fn, []), out.detach().numpy(), xt.grad.numpy()))
    assert res[0][0] == res[1][0]
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(res[0][2], res[1][2], rtol=1e-5, atol=1e-6)


def test_module_dict_attributes_as_torch():
    for name, args in [("Module", ()), ("Linear", (2, 3)), ("LSTM", (3, 4))]:
        ours = getattr(ember.nn, name)(*args)
        theirs = getattr(torch.nn, name)(*args)
        keys = [k for k in vars(theirs) if k not in ("_flat_weights", "_flat_weight_refs")]
        assert [k for k in vars(ours)] == keys
        assert ours._is_full_backward_hook is None
    m = ember.nn.Linear(2, 2)
    state = {k: v for k, v in m.__dict__.items()
             if k not in ("_forward_hooks_always_called", "_is_full_backward_hook")}
    m2 = ember.nn.Linear.__new__(ember.nn.Linear)
    m2.__setstate__(state)      # (a module pickled before these attributes existed)
    assert m2._forward_hooks_always_called == {} and m2._is_full_backward_hook is None
    assert m2(ember.ones(2)).shape == (2,)


def _always_call_log(lib):
    class Bad(lib.nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    log = []
    m = Bad()
    m.register_forward_hook(lambda mod, a, o: log.append(("plain", o)))
    h = m.register_forward_hook(lambda mod, a, o: log.append(("always", o)), always_call=True)
    m.register_forward_hook(lambda mod, a, k, o: log.append(("kw", k, o)), always_call=True,
                            with_kwargs=True)

    def bad_hook(mod, a, o):
        raise KeyError("hook fail")
    m.register_forward_hook(bad_hook, always_call=True)
    with pytest.warns(UserWarning) as rec:
        with pytest.raises(ValueError, match="boom"):
            m(lib.ones(2))
    log.append([str(r.message) for r in rec])
    log.append(len(m._forward_hooks_always_called))
    h.remove()
    log.append(len(m._forward_hooks_always_called))
    lin = lib.nn.Linear(2, 2)
    lin.register_forward_hook(lambda mod, a, o: (_ for _ in ()).throw(RuntimeError("late")))
    lin.register_forward_hook(lambda mod, a, o: log.append(tuple(o.shape)), always_call=True)
    with pytest.raises(RuntimeError, match="late"):
        lin(lib.ones(2))
    lin = lib.nn.Linear(2, 2)
    lin.register_forward_hook(lambda mod, a, o: log.append("once"), always_call=True)
    lin(lib.ones(2))
    g = lib.nn.modules.module.register_module_forward_hook(
        lambda mod, a, o: log.append(("global", type(mod).__name__, o)), always_call=True)
    try:
        with pytest.raises(ValueError):
            Bad()(lib.ones(1))
    finally:
        g.remove()
    return log


def test_forward_hook_always_call():
    assert _always_call_log(ember) == _always_call_log(torch)


def test_forward_pre_hook_with_kwargs_bad_return():
    msgs = []
    for lib in (ember, torch):
        lin = lib.nn.Linear(2, 2)
        lin.register_forward_pre_hook(lambda mod, a, k: 5, with_kwargs=True)
        with pytest.raises(RuntimeError) as e:
            lin(lib.ones(2))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_rnn_all_weights_names():
    for kw in [{}, {"num_layers": 2, "bidirectional": True}, {"proj_size": 2, "bias": False}]:
        assert ember.nn.LSTM(3, 4, **kw)._all_weights == torch.nn.LSTM(3, 4, **kw)._all_weights
    assert ember.nn.GRU(3, 4, 2)._all_weights == torch.nn.GRU(3, 4, 2)._all_weights
