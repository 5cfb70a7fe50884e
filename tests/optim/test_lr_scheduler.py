"""lr_scheduler parity with torch: 20 steps of lrs and parameters from identical starts."""
import numpy as np
import pytest

import ember

RNG = np.random.default_rng(1)
INIT = [RNG.standard_normal((4, 3)).astype(np.float32), RNG.standard_normal(3).astype(np.float32)]
SCALE = [RNG.uniform(0.5, 2.0, (4, 3)).astype(np.float32),
         RNG.uniform(0.5, 2.0, 3).astype(np.float32)]
TARGET = [RNG.standard_normal((4, 3)).astype(np.float32), RNG.standard_normal(3).astype(np.float32)]


def make_params(lib):
    return [lib.nn.Parameter(lib.tensor(a.copy())) for a in INIT]


def quadratic_loss(lib, params):
    loss = 0
    for p, s, t in zip(params, SCALE, TARGET):
        loss = loss + (lib.tensor(s) * (p - lib.tensor(t)) ** 2).sum()
    return loss


def _lambda(epoch):
    return 0.95 ** epoch


def _mult(epoch):
    return 0.9


SCHEDULERS = {
    "StepLR": lambda s, o: s.StepLR(o, step_size=3, gamma=0.5),
    "MultiStepLR": lambda s, o: s.MultiStepLR(o, milestones=[2, 5, 5, 11], gamma=0.5),
    "ExponentialLR": lambda s, o: s.ExponentialLR(o, gamma=0.9),
    "CosineAnnealingLR": lambda s, o: s.CosineAnnealingLR(o, T_max=6, eta_min=0.001),
    "CosineAnnealingWarmRestarts": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2,
                                                                              eta_min=0.001),
    "OneCycleLR": lambda s, o: s.OneCycleLR(o, max_lr=0.1, total_steps=25),
    "OneCycleLR-3": lambda s, o: s.OneCycleLR(o, max_lr=[0.1, 0.05], total_steps=25,
                                              anneal_strategy="linear", three_phase=True),
    "LinearLR": lambda s, o: s.LinearLR(o, start_factor=0.25, total_iters=6),
    "LambdaLR": lambda s, o: s.LambdaLR(o, lr_lambda=_lambda),
    "MultiplicativeLR": lambda s, o: s.MultiplicativeLR(o, lr_lambda=_mult),
    "ConstantLR": lambda s, o: s.ConstantLR(o, factor=0.5, total_iters=4),
    "PolynomialLR": lambda s, o: s.PolynomialLR(o, total_iters=8, power=2.0),
    "SequentialLR": lambda s, o: s.SequentialLR(
        o, [s.LinearLR(o, start_factor=0.1, total_iters=4), s.ExponentialLR(o, gamma=0.9)],
        milestones=[5]),
    "ChainedScheduler": lambda s, o: s.ChainedScheduler(
        [s.ConstantLR(o, factor=0.5, total_iters=3), s.ExponentialLR(o, gamma=0.9)]),
    "ReduceLROnPlateau": lambda s, o: s.ReduceLROnPlateau(o, factor=0.5, patience=1,
                                                          threshold=0.05, cooldown=1),
}


def run(lib, name, optimizer="SGD", steps=20):
    params = make_params(lib)
    if optimizer == "SGD":
        opt = lib.optim.SGD([{"params": [params[0]]}, {"params": [params[1]], "lr": 0.02}],
                            lr=0.05, momentum=0.9)
    else:
        opt = lib.optim.Adam([{"params": [params[0]]}, {"params": [params[1]], "lr": 0.02}],
                             lr=0.05)
    sched = SCHEDULERS[name](lib.optim.lr_scheduler, opt)
    lrs, values = [sched.get_last_lr()], []
    for _ in range(steps):
        opt.zero_grad()
        loss = quadratic_loss(lib, params)
        loss.backward()
        opt.step()
        if name == "ReduceLROnPlateau":
            sched.step(float(loss.detach()))
        else:
            sched.step()
        lrs.append(list(sched.get_last_lr()))
        values.append([p.detach().numpy().copy() for p in params])
    return lrs, values, opt, sched


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_schedule_matches_torch(torch, name):
    optimizer = "Adam" if name.startswith("OneCycle") else "SGD"
    lrs, values, opt, _ = run(ember, name, optimizer)
    tlrs, tvalues, topt, _ = run(torch, name, optimizer)
    np.testing.assert_allclose(np.array(lrs, dtype=float), np.array(tlrs, dtype=float),
                               rtol=1e-12, atol=1e-15)
    for a, b in zip(values, tvalues):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)
    for g, tg in zip(opt.param_groups, topt.param_groups):
        for key in ("lr", "initial_lr", "betas", "momentum"):
            if key in tg:
                assert np.allclose(g[key], tg[key], rtol=1e-12)


def test_epoch_argument_uses_closed_form(torch):
    out = []
    for lib in (ember, torch):
        opt = lib.optim.SGD(make_params(lib), lr=0.1)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        opt.step()
        with pytest.warns(UserWarning):
            sched.step(5)
        out.append(sched.get_last_lr())
    assert out[0] == out[1]


def test_state_dict_round_trip():
    opt = ember.optim.SGD(make_params(ember), lr=0.1)
    sched = ember.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
    for _ in range(3):
        opt.step()
        sched.step()
    state = sched.state_dict()
    assert "optimizer" not in state and state["last_epoch"] == 3
    opt2 = ember.optim.SGD(make_params(ember), lr=0.1)
    sched2 = ember.optim.lr_scheduler.CosineAnnealingLR(opt2, T_max=10)
    sched2.load_state_dict(state)
    opt2.load_state_dict(opt.state_dict())
    opt.step()
    sched.step()
    opt2.step()
    sched2.step()
    assert sched.get_last_lr() == sched2.get_last_lr()


def test_warns_when_scheduler_steps_first():
    opt = ember.optim.SGD(make_params(ember), lr=0.1)
    sched = ember.optim.lr_scheduler.StepLR(opt, step_size=2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()


def test_errors():
    opt = ember.optim.SGD(make_params(ember), lr=0.1)
    s = ember.optim.lr_scheduler
    with pytest.raises(TypeError, match="is not an Optimizer"):
        s.StepLR(object(), step_size=1)
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        s.ReduceLROnPlateau(opt, factor=2.0)
    with pytest.raises(ValueError, match="total_steps"):
        s.OneCycleLR(opt, max_lr=0.1)
    with pytest.raises(ValueError, match="one more than the number of milestone"):
        s.SequentialLR(opt, [s.ExponentialLR(opt, 0.9)], milestones=[3])
