"""Optimizer parity with torch: 20-step trajectories from identical starts, state_dict layout."""
import warnings

import numpy as np
import pytest

import ember

RNG = np.random.default_rng(1)
INIT = [RNG.standard_normal((4, 3)).astype(np.float32), RNG.standard_normal(3).astype(np.float32)]
SCALE = [RNG.uniform(0.5, 2.0, (4, 3)).astype(np.float32),
         RNG.uniform(0.5, 2.0, 3).astype(np.float32)]
TARGET = [RNG.standard_normal((4, 3)).astype(np.float32), RNG.standard_normal(3).astype(np.float32)]

CASES = [
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.1)),
    ("SGD", dict(lr=0.005, momentum=0.9, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.05)),
    ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.05, maximize=True, betas=(0.8, 0.99))),
    ("AdamW", dict(lr=0.05)),
    ("AdamW", dict(lr=0.05, amsgrad=True, weight_decay=0.3)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.9, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5)),
    ("Adamax", dict(lr=0.05)),
    ("Adamax", dict(lr=0.05, weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.05)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
]


def make_params(lib):
    return [lib.nn.Parameter(lib.tensor(a.copy())) for a in INIT]


def quadratic_loss(lib, params):
    loss = 0
    for p, s, t in zip(params, SCALE, TARGET):
        loss = loss + (lib.tensor(s) * (p - lib.tensor(t)) ** 2).sum()
    return loss + (params[0] * params[0]).sum() * (params[1] * params[1]).sum() * 0.1


def run(lib, name, kwargs, steps=20, groups=False):
    params = make_params(lib)
    if groups:
        opt = getattr(lib.optim, name)([{"params": [params[0]]},
                                        {"params": [params[1]], "lr": kwargs["lr"] * 0.5}],
                                       **kwargs)
    else:
        opt = getattr(lib.optim, name)(params, **kwargs)
    trajectory = []
    for _ in range(steps):
        opt.zero_grad()
        quadratic_loss(lib, params).backward()
        opt.step()
        trajectory.append([p.detach().numpy().copy() for p in params])
    return trajectory, opt, params


@pytest.mark.parametrize("name,kwargs", CASES, ids=["%s-%d" % (c[0], i) for i, c in
                                                    enumerate(CASES)])
def test_trajectory_matches_torch(torch, name, kwargs):
    mine, opt, params = run(ember, name, kwargs)
    theirs, topt, _ = run(torch, name, kwargs)
    for step, (a, b) in enumerate(zip(mine, theirs)):
        for x, y in zip(a, b):
            assert x.dtype == np.float32
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5, err_msg="step %d" % step)
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert sd["param_groups"] == [{k: v for k, v in g.items()} for g in tsd["param_groups"]]
    assert sd["state"].keys() == tsd["state"].keys()
    for k in tsd["state"]:
        assert sd["state"][k].keys() == tsd["state"][k].keys()
        for key, value in tsd["state"][k].items():
            mine_v = sd["state"][k][key]
            assert isinstance(mine_v, ember.Tensor)
            assert str(mine_v.dtype) == str(value.dtype)
            np.testing.assert_allclose(mine_v.numpy(), value.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop"])
def test_param_groups_match_torch(torch, name):
    kwargs = dict(lr=0.02, momentum=0.9) if name != "Adam" else dict(lr=0.02)
    mine, _, _ = run(ember, name, kwargs, steps=10, groups=True)
    theirs, _, _ = run(torch, name, kwargs, steps=10, groups=True)
    for x, y in zip(mine[-1], theirs[-1]):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_matches_torch(torch, line_search_fn):
    results = []
    for lib in (ember, torch):
        params = make_params(lib)
        opt = lib.optim.LBFGS(params, lr=0.5, max_iter=5, history_size=4,
                              line_search_fn=line_search_fn)

        def closure():
            opt.zero_grad()
            loss = quadratic_loss(lib, params)
            loss.backward()
            return loss

        losses = [float(opt.step(closure).detach()) for _ in range(3)]
        results.append((losses, [p.detach().numpy().copy() for p in params],
                        opt.state_dict()["state"][0]["func_evals"]))
    (l1, p1, e1), (l2, p2, e2) = results
    np.testing.assert_allclose(l1, l2, rtol=1e-4)
    for x, y in zip(p1, p2):
        np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-4)
    assert e1 == e2


def test_load_state_dict_resumes_identically(torch):
    full, _, _ = run(ember, "Adam", dict(lr=0.05), steps=10)
    params = make_params(ember)
    opt = ember.optim.Adam(params, lr=0.05)
    for _ in range(5):
        opt.zero_grad()
        quadratic_loss(ember, params).backward()
        opt.step()
    saved = opt.state_dict()
    params2 = [ember.nn.Parameter(p.detach().clone()) for p in params]
    opt2 = ember.optim.Adam(params2, lr=0.5)
    opt2.load_state_dict(saved)
    assert opt2.param_groups[0]["lr"] == 0.05
    for _ in range(5):
        opt2.zero_grad()
        quadratic_loss(ember, params2).backward()
        opt2.step()
    for x, y in zip(params2, full[-1]):
        np.testing.assert_allclose(x.detach().numpy(), y, rtol=1e-6, atol=1e-7)


def test_load_torch_state_dict(torch):
    _, topt, tparams = run(torch, "SGD", dict(lr=0.05, momentum=0.9), steps=3)
    params = [ember.nn.Parameter(ember.tensor(p.detach().numpy().copy())) for p in tparams]
    opt = ember.optim.SGD(params, lr=0.05, momentum=0.9)
    opt.load_state_dict(topt.state_dict())
    buf = opt.state[params[0]]["momentum_buffer"]
    assert isinstance(buf, ember.Tensor)
    np.testing.assert_array_equal(buf.numpy(),
                                  topt.state_dict()["state"][0]["momentum_buffer"].numpy())


def test_zero_grad():
    p = ember.nn.Parameter(ember.ones(3))
    opt = ember.optim.SGD([p], lr=0.1)
    (p * 2).sum().backward()
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(p.grad.numpy(), np.zeros(3, np.float32))
    opt.zero_grad()
    assert p.grad is None


def test_step_with_closure_returns_loss():
    p = ember.nn.Parameter(ember.ones(3))
    opt = ember.optim.SGD([p], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    assert float(opt.step(closure)) == 3.0
    np.testing.assert_allclose(p.detach().numpy(), np.full(3, 0.8, np.float32))


def test_add_param_group_and_defaults():
    a, b = ember.nn.Parameter(ember.ones(2)), ember.nn.Parameter(ember.ones(2))
    opt = ember.optim.SGD([a], lr=0.1, momentum=0.5)
    opt.add_param_group({"params": b, "lr": 0.01})
    assert opt.param_groups[1]["lr"] == 0.01 and opt.param_groups[1]["momentum"] == 0.5
    assert opt.state_dict()["param_groups"][1]["params"] == [1]


def test_named_parameters_like_torch(torch):
    groups = []
    for lib in (ember, torch):
        model = lib.nn.Linear(2, 2)
        groups.append(lib.optim.Adam(model.named_parameters()).state_dict()["param_groups"])
    assert groups[0] == groups[1]


def test_errors():
    p = ember.nn.Parameter(ember.ones(2))
    with pytest.raises(ValueError, match="empty parameter list"):
        ember.optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        ember.optim.Adam([p * 2])
    with pytest.raises(ValueError, match="more than one parameter group"):
        ember.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        ember.optim.SGD([p, p], lr=0.1)
    with pytest.raises(TypeError, match="can only optimize Tensors"):
        ember.optim.SGD([1.0], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        ember.optim.Adam([p], lr=-1)
    opt = ember.optim.SGD([p], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": []})
    assert opt.param_groups[0]["lr"] == 0.1


def test_float32_kept_and_version_bumped():
    for name in ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam"]:
        p = ember.nn.Parameter(ember.ones(3))
        opt = getattr(ember.optim, name)([p], lr=0.1)
        (p * p).sum().backward()
        v = p._version
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            opt.step()
        assert p.dtype == ember.float32 and p._version == v + 1
        for value in opt.state[p].values():
            assert value.dtype == ember.float32


@pytest.mark.parametrize("name,kwargs", [("LBFGS", dict(lr=0.5, max_iter=3, history_size=3)),
                                         ("NAdam", dict(lr=0.05)),
                                         ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5))])
def test_checkpoint_through_a_file_resumes_identically(name, kwargs):
    import io

    def train(params, opt, steps):
        def closure():
            opt.zero_grad()
            loss = quadratic_loss(ember, params)
            loss.backward()
            return loss

        for _ in range(steps):
            opt.step(closure)

    params = make_params(ember)
    opt = getattr(ember.optim, name)(params, **kwargs)
    train(params, opt, 2)
    buf = io.BytesIO()
    ember.save({"params": [p.detach() for p in params], "optim": opt.state_dict()}, buf)
    train(params, opt, 2)
    buf.seek(0)
    ckpt = ember.load(buf)
    params2 = [ember.nn.Parameter(t) for t in ckpt["params"]]
    opt2 = getattr(ember.optim, name)(params2, **kwargs)
    opt2.load_state_dict(ckpt["optim"])
    train(params2, opt2, 2)
    for a, b in zip(params, params2):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
