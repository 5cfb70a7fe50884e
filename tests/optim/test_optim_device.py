"""Optimizers and gradient clipping on the strict device (NumPy behind CuPy's rules): the
parameters and their state stay on the device and follow torch's trajectory."""
import math
import warnings

import numpy as np
import pytest

import ember

RNG = np.random.default_rng(1)    # the data of test_optim.py
INIT = [RNG.standard_normal((4, 3)).astype(np.float32), RNG.standard_normal(3).astype(np.float32)]
SCALE = [RNG.uniform(0.5, 2.0, (4, 3)).astype(np.float32),
         RNG.uniform(0.5, 2.0, 3).astype(np.float32)]
TARGET = [RNG.standard_normal((4, 3)).astype(np.float32), RNG.standard_normal(3).astype(np.float32)]

CASES = [
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.1)),
    ("SGD", dict(lr=0.005, momentum=0.9, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.05)),
    ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.1)),
    ("AdamW", dict(lr=0.05, weight_decay=0.3)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.9, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5)),
    ("Adamax", dict(lr=0.05, weight_decay=0.1)),
    ("NAdam", dict(lr=0.05)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
]


def _host(t):
    return t.detach().cpu().numpy().copy()


def _loss(lib, params, device):
    loss = 0
    for p, s, t in zip(params, SCALE, TARGET):
        d = p - lib.tensor(t, device=device)
        loss = loss + (lib.tensor(s, device=device) * d * d).sum()
    return loss + (params[0] * params[0]).sum() * (params[1] * params[1]).sum() * 0.1


def _params(lib, device):
    return [lib.nn.Parameter(lib.tensor(a.copy(), device=device)) for a in INIT]


def _run(lib, name, kwargs, device, steps=3):
    params = _params(lib, device)
    opt = getattr(lib.optim, name)(params, **kwargs)
    trajectory = []
    for _ in range(steps):
        opt.zero_grad()
        _loss(lib, params, device).backward()
        opt.step()
        trajectory.append([_host(p) for p in params])
    return trajectory, opt, params


@pytest.mark.parametrize("name,kwargs", CASES, ids=["%s-%d" % (c[0], i) for i, c in
                                                    enumerate(CASES)])
def test_optimizer_on_strict_matches_cpu_and_torch(torch, name, kwargs):
    strict, opt, params = _run(ember, name, kwargs, "strict")
    cpu, _, _ = _run(ember, name, kwargs, "cpu")
    theirs, topt, _ = _run(torch, name, kwargs, "cpu")
    for step, (a, b, c) in enumerate(zip(strict, cpu, theirs)):
        for x, y, z in zip(a, b, c):
            np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-7, err_msg="step %d" % step)
            np.testing.assert_allclose(x, z, rtol=1e-5, atol=1e-6, err_msg="step %d" % step)
    assert all(p.device.type == "strict" for p in params)
    tstate = topt.state_dict()["state"]
    for k, state in opt.state_dict()["state"].items():
        for key, value in state.items():
            if not isinstance(value, ember.Tensor):
                continue
            # As torch: the step counter stays a CPU tensor, the buffers live with the params.
            assert value.device.type == ("cpu" if key in ("step", "mu_product") else "strict")
            np.testing.assert_allclose(_host(value), tstate[k][key].numpy(), rtol=1e-5,
                                       atol=1e-6)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_on_strict_matches_cpu_and_torch(torch, line_search_fn):
    results = []
    for lib, device in ((ember, "strict"), (ember, "cpu"), (torch, "cpu")):
        params = _params(lib, device)
        opt = lib.optim.LBFGS(params, lr=0.5, max_iter=5, history_size=4,
                              line_search_fn=line_search_fn)

        def closure():
            opt.zero_grad()
            loss = _loss(lib, params, device)
            loss.backward()
            return loss

        losses = [float(opt.step(closure).detach()) for _ in range(3)]
        results.append((losses, [_host(p) for p in params],
                        opt.state_dict()["state"][0]["func_evals"], params[0].device.type))
    (ls, ps, es, ds), (lc, pc, ec, _), (lt, pt, et, _) = results
    assert ds == "strict"
    np.testing.assert_allclose(ls, lc, rtol=1e-6)
    np.testing.assert_allclose(ls, lt, rtol=1e-4)
    for x, y, z in zip(ps, pc, pt):
        np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(x, z, rtol=1e-4, atol=1e-4)
    assert es == ec == et


def test_optimizer_state_dict_round_trip_on_strict(torch):
    _, opt, params = _run(ember, "Adam", dict(lr=0.05), "strict", steps=2)
    sd = opt.state_dict()
    fresh = ember.optim.Adam(params, lr=0.05)
    fresh.load_state_dict(sd)
    for key, value in fresh.state[params[0]].items():
        assert value.device.type == ("cpu" if key == "step" else "strict")
        np.testing.assert_array_equal(_host(value), _host(sd["state"][0][key]))
    # A torch state dict (CPU tensors) loads onto the parameters' device.
    _, topt, _ = _run(torch, "Adam", dict(lr=0.05), "cpu", steps=2)
    fresh.load_state_dict(topt.state_dict())
    assert fresh.state[params[0]]["exp_avg"].device.type == "strict"


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf, 3.0])
def test_clip_grad_norm_on_strict_matches_torch(torch, norm_type):
    g0 = np.arange(6.0, dtype=np.float32).reshape(2, 3) - 2
    g1 = np.array([3.0, -147.0], dtype=np.float32)
    ps = [ember.zeros(2, 3, device="strict", requires_grad=True),
          ember.zeros(2, device="strict", requires_grad=True)]
    ps[0].grad, ps[1].grad = ember.tensor(g0, device="strict"), ember.tensor(g1, device="strict")
    tp = [torch.zeros(2, 3, requires_grad=True), torch.zeros(2, requires_grad=True)]
    tp[0].grad, tp[1].grad = torch.tensor(g0), torch.tensor(g1)
    n = ember.nn.utils.clip_grad_norm_(ps, 1.5, norm_type)
    tn = torch.nn.utils.clip_grad_norm_(tp, 1.5, norm_type)
    assert n.device.type == "strict" and str(n.dtype) == str(tn.dtype)
    np.testing.assert_allclose(n.item(), tn.item(), rtol=1e-6)
    for p, q in zip(ps, tp):
        assert p.grad.device.type == "strict"
        np.testing.assert_allclose(_host(p.grad), q.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_clip_grad_value_and_nonfinite_on_strict(torch):
    p = ember.zeros(3, device="strict", requires_grad=True)
    p.grad = ember.tensor([-2.0, 0.5, 4.0], device="strict")
    ember.nn.utils.clip_grad_value_([p], 1.0)
    assert p.grad.device.type == "strict" and p.grad.tolist() == [-1.0, 0.5, 1.0]
    p.grad = ember.tensor([1.0, float("inf"), 0.0], device="strict")
    tq = torch.zeros(3, requires_grad=True)
    tq.grad = torch.tensor([1.0, float("inf"), 0.0])
    with pytest.raises(RuntimeError) as te:
        torch.nn.utils.clip_grad_norm_([tq], 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError, match="non-finite") as ee:
        ember.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    assert str(ee.value).split(",")[0] == str(te.value).split(",")[0]


def test_init_on_strict_writes_the_host_stream(torch):
    import ember.nn.init as init
    for fn in (init.uniform_, init.normal_, init.xavier_uniform_, init.kaiming_normal_,
               init.trunc_normal_, init.orthogonal_, lambda t: init.sparse_(t, 0.5),
               init.eye_, init.ones_, lambda t: init.constant_(t, 0.25)):
        values = []
        for device in ("strict", "cpu"):
            w = ember.empty(4, 3, device=device)
            ember.manual_seed(11)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn(w)
            assert w.device.type == device
            values.append(_host(w))
        np.testing.assert_array_equal(values[0], values[1])
    w = ember.empty(4, 2, 3, 3, device="strict")
    init.dirac_(w, groups=2)
    tw = torch.empty(4, 2, 3, 3)
    torch.nn.init.dirac_(tw, groups=2)
    np.testing.assert_array_equal(_host(w), tw.numpy())
