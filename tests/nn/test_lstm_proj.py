"""``nn.LSTM(..., proj_size=P)`` against PyTorch: parameters (names, order, shapes, init),
repr, errors, and outputs, final states and every gradient after loading torch's state_dict."""
import math
import warnings

import numpy as np
import pytest

import ember


def r(*shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _pair(torch, make, dtype="float64"):
    tm = make(torch.nn).to(getattr(torch, dtype))
    em = make(ember.nn).to(getattr(ember, dtype))
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return em, tm


def _run(lib, m, x, state, ups):
    """Outputs and the input's, the states' and every parameter's gradient."""
    xs = [lib.tensor(a.copy(), requires_grad=True) for a in (x,) + state]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # torch: "LSTM with projections is not supported..."
        out, (h, c) = m(xs[0], tuple(xs[1:]) if state else None)
    lib.autograd.backward([out, h, c], [lib.tensor(u) for u in ups])
    grads = [t.grad.numpy() for t in xs] + [p.grad.numpy() for p in m.parameters()]
    return [out.detach().numpy(), h.detach().numpy(), c.detach().numpy()] + grads


def _check(torch, kwargs, shape, with_state=False, dtype="float64", rtol=1e-9, atol=1e-10,
           eval_mode=False):
    em, tm = _pair(torch, lambda nn: nn.LSTM(3, 5, proj_size=2, **kwargs), dtype)
    if eval_mode:
        em.eval()
        tm.eval()
    dirs = 2 if kwargs.get("bidirectional") else 1
    nl = dirs * kwargs.get("num_layers", 1)
    unbatched = len(shape) == 2
    seq, n = (shape[1], shape[0]) if kwargs.get("batch_first") and not unbatched else shape[:2]
    batch = () if unbatched else (n,)
    state = ()
    if with_state:
        state = (r(nl, *batch, 2, dtype=dtype, seed=1), r(nl, *batch, 5, dtype=dtype, seed=2))
    out_shape = shape[:-1] + (2 * dirs,)
    ups = [r(*s, dtype=dtype, seed=10 + i)
           for i, s in enumerate([out_shape, (nl,) + batch + (2,), (nl,) + batch + (5,)])]
    x = r(*shape, dtype=dtype)
    got = _run(ember, em, x, state, ups)
    want = _run(torch, tm, x, state, ups)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


@pytest.mark.parametrize("kwargs, shape", [
    (dict(), (6, 2, 3)),
    (dict(bias=False), (5, 3, 3)),
    (dict(num_layers=2), (4, 2, 3)),
    (dict(bidirectional=True), (5, 2, 3)),
    (dict(num_layers=3, bidirectional=True), (4, 2, 3)),
    (dict(batch_first=True, bidirectional=True), (2, 5, 3)),
    (dict(num_layers=2, bidirectional=True), (5, 3)),      # unbatched
    (dict(num_layers=2, batch_first=True), (5, 3)),        # unbatched ignores batch_first
    (dict(), (1, 1, 3)),
])
def test_parity(torch, kwargs, shape):
    _check(torch, kwargs, shape)


@pytest.mark.parametrize("kwargs, shape", [
    (dict(), (5, 2, 3)), (dict(num_layers=2, bidirectional=True), (4, 3, 3)),
    (dict(bidirectional=True, batch_first=True), (3, 4, 3)), (dict(num_layers=2), (4, 3)),
])
def test_parity_given_state(torch, kwargs, shape):
    _check(torch, kwargs, shape, with_state=True)


def test_dropout_eval_mode(torch):
    _check(torch, dict(num_layers=3, dropout=0.5, bidirectional=True), (5, 2, 3),
           with_state=True, eval_mode=True)


def test_float32(torch):
    _check(torch, dict(num_layers=2, bidirectional=True), (7, 4, 3), with_state=True,
           dtype="float32", rtol=1e-4, atol=1e-5)


def test_partial_outputs_and_no_grad(torch):
    em, tm = _pair(torch, lambda nn: nn.LSTM(3, 6, proj_size=4, num_layers=2))
    x = r(5, 2, 3)
    grads = []
    for lib, m in ((ember, em), (torch, tm)):
        xt = lib.tensor(x, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, (h, _) = m(xt)
        h.backward(lib.tensor(r(2, 2, 4, seed=3)))
        grads.append([xt.grad.numpy()] + [p.grad.numpy() for p in m.parameters()])
        with lib.no_grad():
            out, (h, c) = m(lib.tensor(x))
        assert not out.requires_grad and out.grad_fn is None
        grads[-1] += [out.numpy(), h.numpy(), c.numpy()]
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


def test_gradcheck():
    m = ember.nn.LSTM(2, 3, proj_size=2, bidirectional=True).double()
    x = ember.tensor(r(4, 2, 2), requires_grad=True)
    h0 = ember.tensor(r(2, 2, 2, seed=1), requires_grad=True)
    c0 = ember.tensor(r(2, 2, 3, seed=2), requires_grad=True)
    assert ember.autograd.gradcheck(lambda a, b, c: m(a, (b, c))[0], (x, h0, c0))


@pytest.mark.parametrize("kwargs", [
    dict(), dict(bias=False), dict(num_layers=2, bidirectional=True),
    dict(num_layers=3, bias=False, bidirectional=True, batch_first=True, dropout=0.25),
])
def test_parameters_as_torch(torch, kwargs):
    tm = torch.nn.LSTM(4, 6, proj_size=3, **kwargs)
    em = ember.nn.LSTM(4, 6, proj_size=3, **kwargs)
    assert repr(em) == repr(tm)
    assert em.proj_size == tm.proj_size == 3
    assert em._flat_weights_names == tm._flat_weights_names
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert [(k, tuple(v.shape)) for k, v in em.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    assert [[tuple(p.shape) for p in ws] for ws in em.all_weights] == \
        [[tuple(p.shape) for p in ws] for ws in tm.all_weights]
    assert all(p is getattr(em, n) for ws, names in
               zip(em.all_weights, [em._flat_weights_names[i:i + len(em.all_weights[0])] for i
                                    in range(0, len(em._flat_weights_names),
                                             len(em.all_weights[0]))])
               for p, n in zip(ws, names))


def test_init_uniform_on_every_weight():
    m = ember.nn.LSTM(4, 64, proj_size=16, num_layers=2, bidirectional=True)
    bound = 1 / math.sqrt(64)
    for name, p in m.named_parameters():
        a = p.detach().numpy()
        assert a.min() >= -bound and a.max() <= bound, name
        # NOTE: U(-b, b) has standard deviation b / sqrt(3); loose enough for small tensors.
        assert abs(a.std() - bound / math.sqrt(3)) < 0.2 * bound, name
    m.reset_parameters()
    assert abs(m.weight_hr_l1_reverse.detach().numpy()).max() <= bound


def test_repr_without_projection_unchanged(torch):
    for kwargs in (dict(), dict(proj_size=0, num_layers=2)):
        assert repr(ember.nn.LSTM(3, 5, **kwargs)) == repr(torch.nn.LSTM(3, 5, **kwargs))
        assert ember.nn.LSTM(3, 5, **kwargs).proj_size == 0


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("make", [
    lambda nn: nn.LSTM(3, 5, proj_size=-1),
    lambda nn: nn.LSTM(3, 5, proj_size=5),
    lambda nn: nn.LSTM(3, 5, proj_size=7),
    lambda nn: nn.LSTM(3, 5, num_layers=0, proj_size=-1),
    lambda nn: nn.LSTM(3, 0, proj_size=-1),
    lambda nn: nn.LSTM(3, 0),
    lambda nn: nn.GRU(3, 5.0),
    lambda nn: nn.LSTM(3, 5, num_layers=1.5),
    lambda nn: nn.GRU(3, 5, proj_size=2),
    lambda nn: nn.GRU(3, 5, proj_size=0),
    lambda nn: nn.RNN(3, 5, proj_size=2),
    lambda nn: nn.RNN(3, 5, nonlinearity="relu", proj_size=0),
])
def test_constructor_errors(torch, make):
    want = _error(lambda: make(torch.nn))
    got = _error(lambda: make(ember.nn))
    assert want[0] in (ValueError, TypeError)
    assert got == want


@pytest.mark.parametrize("proj, h0, c0", [
    (2, (1, 2, 5), (1, 2, 5)), (2, (1, 2, 2), (1, 2, 2)), (0, (1, 2, 4), (1, 2, 5)),
    (0, (1, 2, 5), (1, 2, 4)), (2, (2, 2), (2, 5)),
])
def test_state_shape_errors(torch, proj, h0, c0):
    x = r(4, 2, 3, dtype=np.float32)
    want, got = [_error(lambda: lib.nn.LSTM(3, 5, proj_size=proj)(
        lib.tensor(x), (lib.zeros(h0), lib.zeros(c0)))) for lib in (torch, ember)]
    assert got == want


@pytest.mark.parametrize("make, x, hx", [
    (lambda nn: nn.LSTM(3, 5, proj_size=2), (2, 3), ((1, 1, 2), (1, 1, 5))),
    (lambda nn: nn.LSTM(3, 5), (4, 2, 3), ((1, 2, 5), (2, 5))),
    (lambda nn: nn.GRU(3, 5), (4, 2, 3), (2, 5)),
    (lambda nn: nn.RNN(3, 5), (2, 3), (1, 1, 5)),
])
def test_state_dim_errors(torch, make, x, hx):
    def call(lib):
        h = tuple(lib.zeros(s) for s in hx) if isinstance(hx[0], tuple) else lib.zeros(hx)
        return make(lib.nn)(lib.zeros(x), h)
    assert _error(lambda: call(ember)) == _error(lambda: call(torch))


def test_fused_path_only_without_projection():
    x = ember.tensor(r(5, 2, 3)).float()      # (torch fuses float32 LSTMs only)
    out, _ = ember.nn.LSTM(3, 5)(x)
    assert out.grad_fn.name() == "MkldnnRnnLayerBackward0"
    out, _ = ember.nn.LSTM(3, 5, proj_size=2)(x)
    assert out.grad_fn.name() == "StackBackward0"


def test_training_trajectory(torch):
    """A few Adam steps on a projected, bidirectional, batch_first LSTM follow torch's."""
    make = lambda nn: nn.LSTM(3, 6, proj_size=2, num_layers=2, bidirectional=True,  # noqa: E731
                              batch_first=True)
    em, tm = _pair(torch, make)
    x, y = r(3, 5, 3), r(3, 5, 4, seed=1)
    losses = []
    for lib, m in ((ember, em), (torch, tm)):
        opt = lib.optim.Adam(m.parameters(), lr=0.05)
        run = []
        for _ in range(4):
            opt.zero_grad()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out, _ = m(lib.tensor(x))
            loss = ((out - lib.tensor(y)) ** 2).mean()
            loss.backward()
            opt.step()
            run.append(loss.item())
        losses.append(run + [p.detach().numpy() for p in m.parameters()])
    for a, b in zip(*losses):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)
