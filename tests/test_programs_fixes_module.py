"""Regressions found by the nn.Module / data / serialization programs (tests/programs/p_module_*):
each checked against PyTorch."""
import importlib

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _lenet(lib):
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 3, 3)
            self.fc1 = nn.Linear(12, 6)
            self.fc2 = nn.Linear(6, 4)

        def forward(self, x):
            return self.fc2(lib.relu(self.fc1(self.conv1(x).flatten(1)[:, :12])))

    lib.manual_seed(0)
    return Net()


def _prune(lib):
    return importlib.import_module(lib.__name__ + ".nn.utils.prune")


# -- load_state_dict(strict=False) result ------------------------------------------------------

def test_incompatible_keys_repr_and_class_name():
    res = {}
    for lib in (ember, torch):
        m = lib.nn.Linear(2, 2)
        sd = {"weight": lib.zeros(2, 2), "extra": lib.zeros(1)}
        r = m.load_state_dict(sd, strict=False)
        ok = m.load_state_dict(lib.nn.Linear(2, 2).state_dict())
        res[lib] = (repr(r), str(r), type(r).__name__, r.missing_keys, r.unexpected_keys,
                    repr(ok), tuple(r) == (r.missing_keys, r.unexpected_keys))
    assert res[ember] == res[torch]


# -- nn.utils.prune ------------------------------------------------------------------------------

def _prune_run(lib):
    prune = _prune(lib)
    m = _lenet(lib)
    out = {}
    prune.random_unstructured(m.conv1, name="weight", amount=0.3)
    prune.l1_unstructured(m.conv1, name="bias", amount=1)
    prune.ln_structured(m.conv1, name="weight", amount=0.5, n=2, dim=0)
    out["conv1.weight"] = m.conv1.weight
    out["conv1.bias"] = m.conv1.bias
    out["names"] = ([n for n, _ in m.conv1.named_parameters()],
                    [n for n, _ in m.conv1.named_buffers()],
                    [type(h).__name__ for h in m.conv1._forward_pre_hooks.values()],
                    list(m.state_dict().keys()))
    hook = [h for h in m.conv1._forward_pre_hooks.values() if h._tensor_name == "weight"][0]
    out["container"] = (len(hook), [type(x).__name__ for x in hook])
    prune.remove(m.conv1, "weight")
    out["removed"] = m.conv1.weight
    out["removed_names"] = ([n for n, _ in m.conv1.named_parameters()],
                            [n for n, _ in m.conv1.named_buffers()],
                            type(m.conv1.weight).__name__)
    prune.global_unstructured([(m.fc1, "weight"), (m.fc2, "weight")],
                              pruning_method=prune.L1Unstructured, amount=0.4)
    out["fc1.mask"], out["fc2.mask"] = m.fc1.weight_mask, m.fc2.weight_mask
    prune.random_structured(m.fc2, "bias" if False else "weight", amount=2, dim=1)
    out["fc2.mask2"] = m.fc2.weight_mask
    out["pruned"] = (prune.is_pruned(m), prune.is_pruned(_lenet(lib)))
    lib.manual_seed(1)
    x = lib.randn(2, 1, 4, 6)
    y = m(x)
    y.sum().backward()
    out["y"] = y
    out["fc1.grad"] = m.fc1.weight_orig.grad
    out["node"] = (type(m.fc1.weight.grad_fn).__name__, m.fc1.weight.is_leaf)
    out["prune()"] = prune.L1Unstructured(amount=2).prune(lib.tensor([3.0, -1.0, 0.5, 2.0]))
    return out


def test_prune_matches_torch():
    e, t = _prune_run(ember), _prune_run(torch)
    assert e.keys() == t.keys()
    for k in e:
        if hasattr(t[k], "numpy"):
            np.testing.assert_allclose(e[k].detach().numpy(), t[k].detach().numpy(),
                                       rtol=1e-5, atol=1e-6, err_msg=k)
            assert str(e[k].dtype) == str(t[k].dtype), k
        else:
            assert e[k] == t[k], k


@pytest.mark.parametrize("call", [
    lambda p, nn: p.l1_unstructured(nn.Linear(2, 2), "weight", amount=-1),
    lambda p, nn: p.l1_unstructured(nn.Linear(2, 2), "weight", amount=1.5),
    lambda p, nn: p.l1_unstructured(nn.Linear(2, 2), "weight", amount="a"),
    lambda p, nn: p.l1_unstructured(nn.Linear(2, 2), "weight", amount=5),
    lambda p, nn: p.ln_structured(nn.Linear(2, 2), "bias", amount=1, n=2, dim=0),
    lambda p, nn: p.ln_structured(nn.Linear(2, 2), "weight", amount=1, n=2, dim=3),
    lambda p, nn: p.global_unstructured([(nn.Linear(2, 2), "weight")],
                                        pruning_method=p.LnStructured, amount=1, n=1),
    lambda p, nn: p.global_unstructured(None, pruning_method=p.L1Unstructured, amount=1),
])
def test_prune_errors_match_torch(call):
    msgs = []
    for lib in (ember, torch):
        with pytest.raises(Exception) as info:
            call(_prune(lib), lib.nn)
        msgs.append((type(info.value).__name__,
                     str(info.value).replace("torch.", "").replace("ember.", "")))
    assert msgs[0] == msgs[1]


def test_prune_failed_apply_restores_the_parameter():
    for lib in (ember, torch):
        m = lib.nn.Linear(2, 2)
        with pytest.raises(ValueError):
            _prune(lib).l1_unstructured(m, "weight", amount=9)
        assert [n for n, _ in m.named_parameters()] == ["bias", "weight"] or \
            [n for n, _ in m.named_parameters()] == ["weight", "bias"]
        assert not _prune(lib).is_pruned(m)


# -- weight normalisation: one WeightNormInterfaceBackward0 node --------------------------------

@pytest.mark.parametrize("dim,gshape", [(0, (3, 1, 1)), (2, (1, 1, 5)), (1, (1, 4, 1)),
                                        (-1, ())])
def test_weight_norm_node_and_grads(dim, gshape):
    rng = np.random.default_rng(0)
    vn, gn, go = rng.standard_normal((3, 4, 5)), rng.standard_normal(gshape), \
        rng.standard_normal((3, 4, 5))
    res = {}
    for lib in (ember, torch):
        v = lib.tensor(vn, requires_grad=True)
        g = lib.tensor(gn, requires_grad=True)
        if lib is torch:
            w = torch._weight_norm(v, g, dim)
        else:
            from ember.nn.utils._norms import _weight_norm
            w = _weight_norm(v, g, dim)
        w.backward(lib.tensor(go))
        res[lib] = (type(w.grad_fn).__name__, w.detach().numpy(), v.grad.numpy(), g.grad.numpy())
    assert res[ember][0] == res[torch][0]
    for a, b in zip(res[ember][1:], res[torch][1:]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_weight_norm_double_backward():
    from ember.nn.utils._norms import _weight_norm
    v = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    for dim, g in ((0, ember.randn(3, 1, dtype=ember.float64, requires_grad=True)),
                   (1, ember.randn(1, 4, dtype=ember.float64, requires_grad=True))):
        assert ember.autograd.gradcheck(lambda v, g: _weight_norm(v, g, dim), (v, g))
        assert ember.autograd.gradgradcheck(lambda v, g: _weight_norm(v, g, dim), (v, g))


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_weight_norm_parametrization_and_hook_node_names():
    names = {}
    for lib in (ember, torch):
        lib.manual_seed(0)
        a = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(4, 3))
        b = lib.nn.utils.weight_norm(lib.nn.Linear(4, 3))
        c = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(4, 3), dim=None)
        b(lib.ones(1, 4))
        names[lib] = [type(m.weight.grad_fn).__name__ for m in (a, b, c)]
        names[lib].append(a.weight.detach().numpy())
    assert names[ember][:3] == names[torch][:3]
    np.testing.assert_allclose(names[ember][3], names[torch][3], rtol=1e-6)


# -- lazy modules --------------------------------------------------------------------------------

def test_uninitialized_parameter_repr_and_materialize():
    res = {}
    for lib in (ember, torch):
        p = lib.nn.UninitializedParameter()
        lazy = lib.nn.LazyLinear(3)
        r = (repr(p), str(p), repr(lazy.weight), repr(lib.nn.UninitializedBuffer()),
             p.requires_grad)
        p.materialize((2, 3))
        q = lib.nn.UninitializedParameter(requires_grad=False, dtype=lib.float64)
        q.materialize((4,))
        res[lib] = r + (type(p).__name__, tuple(p.shape), p.requires_grad, type(q).__name__,
                        str(q.dtype).split(".")[1], q.requires_grad)
    assert res[ember] == res[torch]


def test_hook_weight_norm_warns_like_torch():
    got = []
    for lib in (ember, torch):
        with pytest.warns(FutureWarning) as rec:
            lib.nn.utils.weight_norm(lib.nn.Linear(2, 2))
        got.append([str(w.message) for w in rec if w.category is FutureWarning])
    assert got[0] == got[1]


# -- state_dict / load_state_dict hooks ----------------------------------------------------------

def _hooks_run(lib):
    nn = lib.nn
    log = []
    lib.manual_seed(0)
    shared = nn.Linear(2, 2)
    m = nn.Sequential(shared, nn.ReLU(), shared, nn.Sequential(nn.Linear(2, 1)))

    def post(module, sd, prefix, meta):
        log.append(("post", type(module).__name__, prefix, meta.get("version")))
        sd[prefix + "note"] = lib.tensor(1.0)

    def pre(module, prefix, keep_vars):
        log.append(("pre", type(module).__name__, prefix, keep_vars))

    def load_pre(module, sd, prefix, meta, strict, missing, unexpected, errors):
        log.append(("load_pre", type(module).__name__, prefix, meta.get("version"), strict))
        sd.pop(prefix + "note", None)

    def load_post(module, keys):
        log.append(("load_post", type(module).__name__, list(keys.missing_keys),
                    list(keys.unexpected_keys)))
        keys.missing_keys.clear()

    m[3].register_state_dict_post_hook(post)
    m.register_state_dict_post_hook(post)
    m[3][0].register_state_dict_pre_hook(pre)
    m[3].register_load_state_dict_pre_hook(load_pre)
    m.register_load_state_dict_pre_hook(load_pre)
    m[3].register_load_state_dict_post_hook(load_post)
    m.register_load_state_dict_post_hook(load_post)
    sd = m.state_dict()
    keys = list(sd.keys())
    meta = dict(sd._metadata)
    r = m.load_state_dict(sd)
    sd2 = m.state_dict()
    del sd2["3.0.bias"]
    r2 = m.load_state_dict(sd2)     # (the post hook clears the missing key: no error)

    def bad(module, sd, prefix, meta):
        return {}

    m.register_state_dict_post_hook(bad)
    with pytest.raises(RuntimeError) as e1:
        m.state_dict()
    with pytest.raises(RuntimeError) as e2:
        m._register_state_dict_hook(post)
    return log, keys, meta, repr(r), repr(r2), str(e1.value), str(e2.value)


def test_state_dict_hooks_match_torch():
    assert _hooks_run(ember) == _hooks_run(torch)


def test_shared_submodule_state_dict_roundtrip():
    res = []
    for lib in (ember, torch):
        lin = lib.nn.Linear(2, 2)
        m = lib.nn.Sequential(lin, lin)
        res.append((list(m.state_dict().keys()), repr(m.load_state_dict(m.state_dict()))))
    assert res[0] == res[1]


# -- data: errors raised where and as torch raises them -------------------------------------------

def _err(f):
    try:
        return ("ok", f())
    except Exception as e:  # noqa: BLE001
        return (type(e).__name__, str(e).split(" at 0x")[0].replace("ember.", "torch."))


def _data_errors(lib):
    data = importlib.import_module(lib.__name__ + ".utils.data")

    class R(data.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    class Bad(data.IterableDataset):
        pass

    return [
        _err(lambda: list(data.WeightedRandomSampler([1.0, -1.0], 2))),
        _err(lambda: list(data.WeightedRandomSampler([0.0, 0.0], 2))),
        _err(lambda: list(data.WeightedRandomSampler([1.0, 0.0], 2, replacement=False,
                                                     generator=lib.Generator().manual_seed(0)))),
        _err(lambda: data.WeightedRandomSampler([[1.0]], 2) and None),
        _err(lambda: data.ConcatDataset([R()]) and None),
        _err(lambda: Bad() and None),
        _err(lambda: list(R() + R())),
        _err(lambda: isinstance(R(), data.Dataset)),
    ]


def test_data_errors_match_torch():
    assert _data_errors(ember) == _data_errors(torch)


# -- Module / container API details --------------------------------------------------------------

def _module_api(lib):
    nn = lib.nn
    m = nn.Linear(2, 2)
    seq = nn.Sequential(nn.ReLU(), nn.Tanh())
    seq3 = nn.Sequential(nn.ReLU())
    seq3 *= 3
    return [
        _err(lambda: m.register_parameter("x", lib.ones(1))),
        _err(lambda: setattr(m, "weight", lib.ones(2, 2))),
        _err(lambda: setattr(m, "weight", 3)),
        _err(lambda: m.get_parameter("nope")),
        _err(lambda: m.get_buffer("weight")),
        _err(lambda: m.get_buffer("nope")),
        _err(lambda: type(m.get_parameter("bias")).__name__),
        _err(lambda: repr(nn.ParameterDict({"a": lib.ones(1), "b": "s",
                                            "c": nn.Parameter(lib.ones(2, 3).double())}))),
        _err(lambda: repr(nn.ParameterList([lib.ones(1), 3]))),
        _err(lambda: repr(seq * 2)), _err(lambda: repr(2 * seq)), _err(lambda: repr(seq3)),
        _err(lambda: seq * 0), _err(lambda: seq * 1.5),
        _err(lambda: seq + nn.ModuleList()),
        _err(lambda: str(nn.Linear(2, 2).bfloat16().weight.dtype)),
        _err(lambda: str(nn.BatchNorm1d(2).bfloat16().num_batches_tracked.dtype)),
        _err(lambda: m.load_state_dict({"weight": lib.ones(2, 2), "bias": 3})),
        _err(lambda: m.load_state_dict([1])),
    ]


def test_module_api_matches_torch():
    e, t = _module_api(ember), _module_api(torch)
    for a, b in zip(e, t):
        assert a == b


def test_zero_element_kaiming_warns():
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            lib.nn.Linear(0, 3)


# -- utils.checkpoint: the reentrant variant (torch's default) -------------------------------------

def _ckpt_run(lib):
    import warnings
    ck = importlib.import_module(lib.__name__ + ".utils.checkpoint")
    nn = lib.nn
    lib.manual_seed(0)
    x = lib.randn(3, 4, requires_grad=True)
    lin = nn.Linear(4, 4)
    drop = nn.Dropout(0.5)

    def f(a, s):
        return drop(lin(a)).tanh() * s, a.sin()

    o1, o2 = ck.checkpoint(f, x, 2.0, use_reentrant=True)
    (o1.sum() + o2.pow(2).sum()).backward()
    res = [o1, o2, x.grad, lin.weight.grad, lin.bias.grad, type(o1.grad_fn).__name__]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        y = ck.checkpoint(lin, lib.ones(2, 4))
        z = ck.checkpoint(lin, x)
        seq = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
        r = ck.checkpoint_sequential(seq, 2, x)
    res += [y.requires_grad, type(z.grad_fn).__name__, r,
            [str(m.message) for m in w]]
    res.append(_err(lambda: ck.checkpoint(lin, x, use_reentrant=True, foo=1)))
    res.append(_err(lambda: ck.checkpoint_sequential(seq, 2, x, use_reentrant=True, foo=1)))
    return res


def test_reentrant_checkpoint_matches_torch():
    e, t = _ckpt_run(ember), _ckpt_run(torch)
    for a, b in zip(e, t):
        if hasattr(b, "detach"):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5,
                                       atol=1e-6)
        else:
            assert a == b
