"""RAdam, Adadelta, Rprop, ASGD, Adafactor, SparseAdam, CyclicLR and swa_utils against torch:
20-step trajectories in float32 and float64, state_dict layout and a round trip into torch."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(3)
INIT = [RNG.standard_normal((4, 3)), RNG.standard_normal(3)]
SCALE = [RNG.uniform(0.5, 2.0, (4, 3)), RNG.uniform(0.5, 2.0, 3)]
TARGET = [RNG.standard_normal((4, 3)), RNG.standard_normal(3)]

CASES = [
    ("RAdam", dict(lr=0.05)),
    ("RAdam", dict(lr=0.05, weight_decay=0.1, betas=(0.8, 0.9))),
    ("RAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    ("Rprop", dict(lr=0.02)),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2), maximize=True)),
    ("ASGD", dict(lr=0.02)),
    ("ASGD", dict(lr=0.02, lambd=0.01, alpha=0.5, t0=5, weight_decay=0.1)),
    ("Adafactor", dict(lr=0.05)),
    ("Adafactor", dict(lr=0.05, beta2_decay=-0.5, eps=(1e-20, 1e-2), d=2.0, weight_decay=0.1,
                       maximize=True)),
]


def _loss(lib, params):
    loss = 0
    for p, s, t in zip(params, SCALE, TARGET):
        loss = loss + (lib.tensor(s, dtype=p.dtype) * (p - lib.tensor(t, dtype=p.dtype)) ** 2
                       ).sum()
    return loss + (params[0] * params[0]).sum() * (params[1] * params[1]).sum() * 0.1


def _run(lib, name, kwargs, dtype, steps=20):
    dt = getattr(lib, dtype)
    params = [lib.nn.Parameter(lib.tensor(a.copy(), dtype=dt)) for a in INIT]
    opt = getattr(lib.optim, name)(params, **kwargs)
    traj = []
    for _ in range(steps):
        opt.zero_grad()
        _loss(lib, params).backward()
        opt.step()
        traj.append([p.detach().numpy().copy() for p in params])
    return traj, opt, params


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_trajectory(case, dtype):
    name, kwargs = CASES[case]
    mine, opt, params = _run(ember, name, kwargs, dtype)
    theirs, topt, tparams = _run(torch, name, kwargs, dtype)
    tol = dict(rtol=2e-5, atol=2e-5) if dtype == "float32" else dict(rtol=1e-11, atol=1e-12)
    for step, (a, b) in enumerate(zip(mine, theirs)):
        for x, y in zip(a, b):
            assert x.dtype == y.dtype
            np.testing.assert_allclose(x, y, err_msg="step %d" % step, **tol)
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert sd["param_groups"] == tsd["param_groups"]
    assert sd["state"].keys() == tsd["state"].keys()
    for k in tsd["state"]:
        assert list(sd["state"][k].keys()) == list(tsd["state"][k].keys())
        for key, value in tsd["state"][k].items():
            mine_v = sd["state"][k][key]
            assert str(mine_v.dtype) == str(value.dtype), key
            assert tuple(mine_v.shape) == tuple(value.shape), key
            np.testing.assert_allclose(mine_v.numpy(), value.numpy(), **tol)
    # round trip: ember's state_dict into torch's optimizer, continue both for 3 steps
    t2 = [torch.nn.Parameter(torch.tensor(p.detach().numpy().copy())) for p in params]
    topt2 = getattr(torch.optim, name)(t2, **kwargs)
    topt2.load_state_dict({"state": {k: {kk: torch.tensor(vv.numpy()) for kk, vv in v.items()}
                                     for k, v in sd["state"].items()},
                           "param_groups": sd["param_groups"]})
    for _ in range(3):
        for o, ps, lib in ((opt, params, ember), (topt2, t2, torch)):
            o.zero_grad()
            _loss(lib, ps).backward()
            o.step()
    for a, b in zip(params, t2):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **tol)


def test_constructor_errors():
    p = [ember.nn.Parameter(ember.ones(2))]
    tp = [torch.nn.Parameter(torch.ones(2))]
    for name, kw in [("RAdam", dict(lr=-1)), ("RAdam", dict(betas=(1.0, 0.9))),
                     ("Adadelta", dict(rho=1.5)), ("Rprop", dict(etas=(1.5, 2.0))),
                     ("ASGD", dict(weight_decay=-1)), ("Adafactor", dict(d=0.5)),
                     ("Adafactor", dict(beta2_decay=0.5)), ("SparseAdam", dict(eps=-1))]:
        with pytest.raises(ValueError) as te:
            getattr(torch.optim, name)(tp, **kw)
        with pytest.raises(ValueError) as ee:
            getattr(ember.optim, name)(p, **kw)
        assert str(ee.value) == str(te.value)


def test_sparse_adam_refuses_dense_gradients():
    p = ember.nn.Parameter(ember.ones(2))
    opt = ember.optim.SparseAdam([p])
    (p * 2).sum().backward()
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
        opt.step()


@pytest.mark.parametrize("kw", [dict(mode="triangular"), dict(mode="triangular2"),
                                dict(mode="exp_range", gamma=0.9),
                                dict(step_size_down=2, cycle_momentum=False)])
@pytest.mark.parametrize("optname", ["SGD", "Adam"])
def test_cyclic_lr(kw, optname):
    res = []
    for lib in (ember, torch):
        p = [lib.nn.Parameter(lib.zeros(2))]
        extra = dict(momentum=0.9) if optname == "SGD" else {}
        opt = getattr(lib.optim, optname)(p, lr=0.1, **extra)
        sch = lib.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1, step_size_up=3, **kw)
        lrs = []
        for _ in range(15):
            opt.step()
            sch.step()
            g = opt.param_groups[0]
            lrs.append((g["lr"], g.get("momentum"), g.get("betas")))
        res.append((lrs, sorted(k for k in sch.state_dict() if not k.startswith("_"))))
    assert res[0][0] == res[1][0]
    assert res[0][1] == res[1][1]


def test_swa_utils():
    results = []
    w = [RNG.standard_normal((4, 3)).astype(np.float32) for _ in range(3)]
    xs = [RNG.standard_normal((5, 3)).astype(np.float32) for _ in range(2)]
    for lib in (ember, torch):
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4))
        with lib.no_grad():
            model[0].bias.zero_()
        swa = lib.optim.swa_utils.AveragedModel(model)
        ema = lib.optim.swa_utils.AveragedModel(
            model, multi_avg_fn=lib.optim.swa_utils.get_ema_multi_avg_fn(0.9))
        ema2 = lib.optim.swa_utils.AveragedModel(
            model, avg_fn=lib.optim.swa_utils.get_ema_avg_fn(0.8))
        for a in w:
            with lib.no_grad():
                model[0].weight.copy_(lib.tensor(a))
            for m in (swa, ema, ema2):
                m.update_parameters(model)
        data = [lib.tensor(x) for x in xs]
        lib.optim.swa_utils.update_bn(data, swa)
        opt = lib.optim.SGD(model.parameters(), lr=0.5)
        sch = lib.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=3)
        lrs = []
        for _ in range(5):
            opt.step()
            sch.step()
            lrs.append(opt.param_groups[0]["lr"])
        results.append(([m.module[0].weight.detach().numpy().copy() for m in (swa, ema, ema2)],
                        swa.module[1].running_mean.numpy().copy(), int(swa.n_averaged), lrs,
                        list(swa.state_dict().keys())))
    (w1, rm1, n1, l1, k1), (w2, rm2, n2, l2, k2) = results
    for a, b in zip(w1, w2):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    assert n1 == n2 and k1 == k2
    np.testing.assert_allclose(l1, l2)
    np.testing.assert_allclose(rm1, rm2, rtol=1e-5, atol=1e-6)


def test_stack_dataset():
    from ember.utils.data import DataLoader, StackDataset, TensorDataset
    from torch.utils.data import StackDataset as TStack
    a = TensorDataset(ember.arange(6))
    b = [i * 10 for i in range(6)]
    ds = StackDataset(a, b)
    tds = TStack(list(range(6)), b)
    assert len(ds) == len(tds) == 6
    assert int(ds[2][0][0]) == 2 and ds[2][1] == tds[2][1]
    kw = StackDataset(x=a, y=b)
    assert set(kw[1]) == {"x", "y"} and kw[1]["y"] == 10
    assert [s[1] for s in ds.__getitems__([0, 3])] == [0, 30]
    batch = next(iter(DataLoader(kw, batch_size=3)))
    assert batch["y"].tolist() == [0, 10, 20]
    for args, kwargs in [((a, b[:3]), {}), ((), {}), ((a,), {"y": b})]:
        with pytest.raises(ValueError) as te:
            TStack(*[list(range(len(x))) for x in args], **kwargs)
        with pytest.raises(ValueError) as ee:
            StackDataset(*args, **kwargs)
        assert str(ee.value) == str(te.value)
