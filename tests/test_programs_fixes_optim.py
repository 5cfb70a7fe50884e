"""Regression tests (against torch) for the differences the optim programs
(tests/programs/p_optim_*.py) exposed: LBFGS state, scheduler internals and warnings, the
optimizer repr, hooks, Tensor learning rates, AveragedModel with integer buffers and
GradScaler's scale shape."""
import copy
import pickle
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _np(t):
    return t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)


def _pair(seed=0, shape=(3, 2)):
    w = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return ember.nn.Parameter(ember.tensor(w)), torch.nn.Parameter(torch.tensor(w))


def _lbfgs_state(L, p, history_size=3, steps=2):
    x = L.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
    y = L.tensor(np.arange(4, dtype=np.float32).reshape(4, 1))
    opt = L.optim.LBFGS([p], history_size=history_size, max_iter=3)

    def closure():
        opt.zero_grad()
        loss = ((x @ p - y) ** 2).mean()
        loss.backward()
        return loss

    for _ in range(steps):
        opt.step(closure)
    return opt.state_dict()["state"][0]


def test_lbfgs_state_keeps_al_like_torch():
    pe, pt = _pair(shape=(3, 1))
    se, st = _lbfgs_state(ember, pe), _lbfgs_state(torch, pt)
    assert sorted(se) == sorted(st)
    assert len(se["al"]) == len(st["al"]) == 3
    for a, b in zip(se["al"], st["al"]):
        assert (a is None) == (b is None)
        if a is not None:
            assert isinstance(a, ember.Tensor) and a.dim() == b.dim()
            np.testing.assert_allclose(_np(a), _np(b), rtol=1e-4, atol=1e-6)


def _sched(L, cls="StepLR", **kw):
    p = L.nn.Parameter(L.zeros(2))
    opt = L.optim.SGD([p], lr=0.1)
    return opt, getattr(L.optim.lr_scheduler, cls)(opt, **kw)


@pytest.mark.parametrize("cls,kw", [("StepLR", dict(step_size=2)),
                                    ("ExponentialLR", dict(gamma=0.9)),
                                    ("CosineAnnealingWarmRestarts", dict(T_0=2)),
                                    ("OneCycleLR", dict(max_lr=1.0, total_steps=5))])
def test_scheduler_state_dict_keys_and_get_lr_warning(cls, kw):
    results = []
    for L in (ember, torch):
        opt, s = _sched(L, cls, **kw)
        opt.step()
        s.step()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            s.get_lr()
        results.append((sorted(s.state_dict()), [str(x.message) for x in w],
                        s.state_dict()["_get_lr_called_within_step"]))
    assert results[0] == results[1]
    assert results[0][1] == ["To get the last learning rate computed by the scheduler, please "
                             "use `get_last_lr()`."]


def test_scheduler_warnings_and_resume_error_match_torch():
    msgs = []
    for L in (ember, torch):
        opt, s = _sched(L, "StepLR", step_size=2)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            s.step()
        got = [str(x.message) for x in w]
        p = L.nn.Parameter(L.zeros(2))
        with pytest.raises(KeyError) as e:
            L.optim.lr_scheduler.StepLR(L.optim.SGD([p], lr=0.1), step_size=2, last_epoch=3)
        msgs.append((got, str(e.value)))
    assert msgs[0] == msgs[1]


def test_optimizer_repr_matches_torch():
    reprs = []
    for L in (ember, torch):
        a, b = L.nn.Parameter(L.zeros(2)), L.nn.Parameter(L.zeros(2))
        reprs.append([repr(L.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1,
                                       momentum=0.9)),
                      repr(L.optim.AdamW([a], lr=1e-3))])
    assert reprs[0] == reprs[1]


@pytest.mark.parametrize("name,kw", [("Adam", {}), ("AdamW", {}), ("SGD", {"momentum": 0.9}),
                                     ("RMSprop", {}), ("Adagrad", {}), ("NAdam", {}),
                                     ("RAdam", {}), ("Adamax", {})])
def test_tensor_learning_rate(name, kw):
    out = []
    for L in (ember, torch):
        p = _pair()[0 if L is ember else 1]
        opt = getattr(L.optim, name)([p], lr=L.tensor(0.05), **kw)
        for _ in range(3):
            opt.zero_grad()
            (p.sin() * L.tensor(np.arange(6.0, dtype=np.float32).reshape(3, 2))).sum().backward()
            opt.step()
        out.append((_np(p), str(opt.param_groups[0]["lr"])))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-5, atol=1e-6)
    assert out[0][1] == out[1][1]


def _hook_trace(L):
    log = []
    p = _pair()[0 if L is ember else 1]
    opt = L.optim.Adam([p], lr=0.1)
    opt.register_step_pre_hook(lambda o, a, k: log.append(("pre", len(a), a[0] is o, k)))
    opt.register_step_post_hook(lambda o, a, k: log.append(("post", len(a), sorted(k))))
    opt.register_state_dict_pre_hook(lambda o: log.append("sd pre"))
    opt.register_state_dict_post_hook(lambda o, sd: dict(sd, extra=1))
    opt.register_state_dict_post_hook(lambda o, sd: log.append(("sd post", sorted(sd))),
                                      prepend=True)
    opt.register_load_state_dict_pre_hook(lambda o, sd: log.append(("load pre", sorted(sd))))
    opt.register_load_state_dict_post_hook(lambda o: log.append("load post"))
    p.sum().backward()
    opt.step()
    opt.step(closure=None)
    sd = opt.state_dict()
    log.append(sorted(sd))
    del sd["extra"]
    opt.load_state_dict(sd)
    opt.register_step_pre_hook(lambda o, a, k: 3)
    with pytest.raises(RuntimeError) as e:
        opt.step()
    log.append(str(e.value).split(" must return")[1])
    return log


def test_optimizer_hooks_match_torch():
    assert _hook_trace(ember) == _hook_trace(torch)


def test_step_hooks_run_for_lbfgs_and_after_pickling():
    for L in (ember, torch):
        p = _pair()[0 if L is ember else 1]
        opt = L.optim.LBFGS([p], max_iter=2)
        calls = []
        opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))

        def closure():
            opt.zero_grad()
            loss = (p ** 2).sum()
            loss.backward()
            return loss

        opt.step(closure)
        assert calls == ["pre"]
        sgd = L.optim.SGD([p], lr=0.1)
        clone = copy.deepcopy(sgd) if L is torch else pickle.loads(pickle.dumps(sgd))
        clone.step()     # the hook dicts come back after unpickling


def _ema(L):
    L.manual_seed(0)
    model = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.BatchNorm1d(4))
    ema = L.optim.swa_utils.AveragedModel(
        model, multi_avg_fn=L.optim.swa_utils.get_ema_multi_avg_fn(0.9), use_buffers=True)
    x = L.tensor(np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32))
    for i in range(3):
        with L.no_grad():
            model[0].bias.add_(1.0)
        model(x * (i + 1))
        ema.update_parameters(model)
    return {k: _np(v) for k, v in ema.state_dict().items()}


def test_averaged_model_ema_with_integer_buffers():
    e, t = _ema(ember), _ema(torch)
    assert list(e) == list(t)
    for k in e:
        assert e[k].dtype == t[k].dtype, k
        np.testing.assert_allclose(e[k], t[k], rtol=1e-5, atol=1e-6)


def test_grad_scaler_scale_keeps_the_output_shape():
    for shape in [(), (2,)]:
        x = np.full(shape, 3.0, dtype=np.float32)
        e = ember.amp.GradScaler("cpu", init_scale=2.0).scale(ember.tensor(x))
        t = torch.amp.GradScaler("cpu", init_scale=2.0).scale(torch.tensor(x))
        assert tuple(e.shape) == tuple(t.shape) and e.dtype is ember.float32
        np.testing.assert_array_equal(_np(e), _np(t))


@pytest.mark.parametrize("norm_type", [0, 0.5, 1, 2.0, 3, "inf", -float("inf")])
def test_clip_grad_norm_all_norm_types(norm_type):
    out = []
    for L in (ember, torch):
        ps = [_pair(seed=i, shape=s)[0 if L is ember else 1] for i, s in enumerate([(3,), (2, 2)])]
        for i, p in enumerate(ps):
            g = np.arange(p.numel(), dtype=np.float32).reshape(tuple(p.shape)) - 1.0 - i
            p.grad = L.tensor(g)
        total = L.nn.utils.clip_grad_norm_(ps, 0.7, norm_type=norm_type)
        norm = L.nn.utils.get_total_norm([p.grad for p in ps], norm_type=norm_type)
        out.append([_np(total), _np(norm)] + [_np(p.grad) for p in ps])
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _outcome(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn()
            out = ("ok", float(_np(r)) if r.dim() == 0 else _np(r).tolist())
        except Exception as e:  # noqa: BLE001
            out = ("raise", type(e).__name__, str(e))
    return out, [(x.category.__name__, str(x.message)) for x in w]


@pytest.mark.parametrize("call", [
    lambda L, a, b: L.nn.functional.huber_loss(a, b, delta=0.0),
    lambda L, a, b: L.nn.functional.huber_loss(a, b, delta=-1.0),
    lambda L, a, b: L.nn.HuberLoss(delta=-2.0)(a, b),
    lambda L, a, b: L.nn.functional.smooth_l1_loss(a, b, beta=-1.0),
    lambda L, a, b: L.nn.functional.mse_loss(a, b, size_average=False),
    lambda L, a, b: L.nn.functional.l1_loss(a, b, reduce=False),
    lambda L, a, b: L.nn.MSELoss(size_average=False)(a, b),
    lambda L, a, b: L.nn.SmoothL1Loss(reduce=True, size_average=True)(a, b),
    lambda L, a, b: L.nn.functional.mse_loss(a[:0], b[:0]),
    lambda L, a, b: L.nn.functional.l1_loss(a[:0], b[:0]),
    lambda L, a, b: L.nn.functional.smooth_l1_loss(a[:0], b[:0]),
])
def test_loss_errors_and_warnings_match_torch(call):
    data = np.array([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]], dtype=np.float32)
    res = [_outcome(lambda: call(L, L.tensor(data), L.tensor(data[::-1].copy())))
           for L in (ember, torch)]
    assert res[0][0][0] == res[1][0][0]
    if res[1][0][0] == "raise":
        assert res[0][0] == res[1][0]
    else:
        np.testing.assert_allclose(res[0][0][1], res[1][0][1], rtol=1e-6)
    assert res[0][1] == res[1][1]
