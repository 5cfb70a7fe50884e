"""Regression tests for the differences the r3nn programs (tests/programs/p_r3nn_*.py) found."""
import pytest

import ember

torch = pytest.importorskip("torch")


def _err(lib, fn):
    try:
        fn(lib)
    except Exception as e:      # noqa: BLE001 - the class and message are the point
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("shapes", [((128, 20), (100, 30)), ((4, 5, 20), (4, 6, 30))])
def test_bilinear_batch_dim_error_names_the_dim(shapes):
    def fn(lib):
        m = lib.nn.Bilinear(20, 30, 40)
        m(lib.randn(*shapes[0]), lib.randn(*shapes[1]))
    assert _err(ember, fn) == _err(torch, fn)


def test_uninitialized_parameter_shape_raises():
    def fn(lib):
        return lib.nn.LazyLinear(3).weight.shape
    assert _err(ember, fn) == _err(torch, fn)
    e, t = ember.nn.LazyConv2d(2, 3).weight, torch.nn.LazyConv2d(2, 3).weight
    assert tuple(e.size()) == tuple(t.size())
    assert repr(e) == repr(t).replace("torch.nn.parameter.", "")


def test_lazy_state_dict_keeps_uninitialized_entries():
    for name, args in [("LazyLinear", (3,)), ("LazyConv2d", (3, 2))]:
        e = getattr(ember.nn, name)(*args).state_dict()
        t = getattr(torch.nn, name)(*args).state_dict()
        assert {k: type(v).__name__ for k, v in e.items()} == \
            {k: type(v).__name__ for k, v in t.items()}
    e = ember.nn.LazyBatchNorm1d().state_dict()
    t = torch.nn.LazyBatchNorm1d().state_dict()
    assert {k: type(v).__name__ for k, v in e.items()} == \
        {k: type(v).__name__ for k, v in t.items()}


def test_lazy_load_state_dict_materializes():
    src = torch.nn.Linear(4, 3)
    sd_t = src.state_dict()
    sd_e = {k: ember.tensor(v.numpy()) for k, v in sd_t.items()}
    t, e = torch.nn.LazyLinear(3), ember.nn.LazyLinear(3)
    rt, re_ = t.load_state_dict(sd_t), e.load_state_dict(sd_e)
    assert list(re_.missing_keys) == list(rt.missing_keys) == []
    assert tuple(e.weight.shape) == tuple(t.weight.shape) == (3, 4)
    assert type(e.weight).__name__ == type(t.weight).__name__ == "Parameter"
    assert (e.weight.detach().numpy() == sd_t["weight"].numpy()).all()
    bt, be = torch.nn.LazyBatchNorm1d(), ember.nn.LazyBatchNorm1d()
    sd_t = torch.nn.BatchNorm1d(4).state_dict()
    bt.load_state_dict(sd_t)
    be.load_state_dict({k: ember.tensor(v.numpy()) for k, v in sd_t.items()})
    assert tuple(be.running_mean.shape) == tuple(bt.running_mean.shape) == (4,)


def test_loading_lazy_into_initialized_raises_as_torch():
    def fn(lib):
        m = lib.nn.LazyLinear(3)
        m(lib.randn(2, 5))
        m.load_state_dict(lib.nn.LazyLinear(3).state_dict())
    assert _err(ember, fn) == _err(torch, fn)


_UNBATCHED_POOLS = [
    ("max_pool2d", lambda F, x: F.max_pool2d(x, 2)),
    ("max_pool2d_pad", lambda F, x: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True)),
    ("max_pool2d_idx", lambda F, x: F.max_pool2d(x, 2, stride=1, return_indices=True)),
    ("avg_pool2d", lambda F, x: F.avg_pool2d(x, 2)),
    ("avg_pool2d_pad", lambda F, x: F.avg_pool2d(x, 3, 2, 1, True, False)),
    ("avg_pool2d_div", lambda F, x: F.avg_pool2d(x, 2, divisor_override=3)),
    ("max_pool1d", lambda F, x: F.max_pool1d(x[0], 2)),
    ("avg_pool1d", lambda F, x: F.avg_pool1d(x[0], 2)),
]


@pytest.mark.parametrize("name,fn", _UNBATCHED_POOLS, ids=[n for n, _ in _UNBATCHED_POOLS])
def test_unbatched_pool2d_is_one_node(name, fn):
    import numpy as np
    arr = np.random.RandomState(0).randn(2, 5, 6)
    outs = []
    for lib in (ember, torch):
        x = lib.tensor(arr, requires_grad=True)
        out = fn(lib.nn.functional, x)
        idx = out[1] if isinstance(out, tuple) else None
        out = out[0] if isinstance(out, tuple) else out
        up = lib.tensor(np.random.RandomState(1).randn(*out.shape))
        (gx,) = lib.autograd.grad(out, x, up, create_graph=True)
        (ggx,) = lib.autograd.grad((gx * gx).sum(), x, allow_unused=True, materialize_grads=True)
        outs.append((type(out.grad_fn).__name__, out.detach().numpy(), gx.detach().numpy(),
                     ggx.numpy(), None if idx is None else idx.numpy()))
    (ne, oe, ge, gge, ie), (nt, ot, gt, ggt, it) = outs
    assert ne == nt
    np.testing.assert_allclose(oe, ot, rtol=1e-12)
    np.testing.assert_allclose(ge, gt, rtol=1e-12)
    np.testing.assert_allclose(gge, ggt, rtol=1e-12)
    if ie is not None:
        assert (ie == it).all()


def test_unbatched_pool2d_gradgradcheck():
    x = ember.randn(2, 5, 6, dtype=ember.float64, requires_grad=True)
    F = ember.nn.functional
    for fn in (lambda t: F.max_pool2d(t, 3, 2, 1), lambda t: F.avg_pool2d(t, 3, 2, 1)):
        assert ember.autograd.gradcheck(fn, (x,))
        assert ember.autograd.gradgradcheck(fn, (x,))


def test_stateless_functional_call_is_deprecated():
    import warnings
    msgs = []
    for lib in (ember, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.nn.utils.stateless.functional_call(lib.nn.Linear(2, 2), {}, (lib.ones(1, 2),))
        msgs.append([(x.category.__name__, str(x.message)) for x in w])
    assert msgs[0] == msgs[1]
