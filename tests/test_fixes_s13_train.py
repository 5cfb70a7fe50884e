"""Session 13 (theme train) fixes, each checked against torch."""
import importlib

import ember


def _adam_pair(lib):
    lib.manual_seed(0)
    m1, m2 = lib.nn.Linear(3, 2), lib.nn.Linear(3, 2)
    o1 = lib.optim.Adam(m1.parameters(), lr=1e-2)
    m1(lib.ones(4, 3)).sum().backward()
    o1.step()
    o2 = lib.optim.Adam(m2.parameters(), lr=5.0)
    return m1, m2, o1, o2


def test_load_state_dict_keeps_tensors_that_need_no_cast(torch):
    """torch's load_state_dict keeps a state tensor already in the parameter's dtype (Tensor.to
    returns it), so two optimizers loaded from one live state dict share their buffers."""
    res = []
    for lib in (torch, ember):
        m1, m2, o1, o2 = _adam_pair(lib)
        sd = o1.state_dict()
        sd["state"][0]["step"] = sd["state"][0]["step"].double()
        sd["state"][1]["exp_avg"] = sd["state"][1]["exp_avg"].double()
        o2.load_state_dict(sd)
        s1, s2 = o1.state[m1.weight], o2.state[m2.weight]
        b1, b2 = o1.state[m1.bias], o2.state[m2.bias]
        res.append((s2["exp_avg"] is s1["exp_avg"], s2["exp_avg_sq"] is s1["exp_avg_sq"],
                    str(s2["step"].dtype), b2["exp_avg"] is b1["exp_avg"],
                    str(b2["exp_avg"].dtype), o2.defaults["differentiable"]))
    assert res[1] == res[0]


def test_load_state_dict_runs_subclass_setstate(torch):
    """load_state_dict goes through __setstate__, where custom optimizers fill in new options,
    and keeps state of unknown keys as it is."""
    res = []
    for lib in (torch, ember):
        class Opt(lib.optim.Optimizer):
            def __init__(self, params, lr=0.1):
                super().__init__(params, dict(lr=lr))

            def __setstate__(self, state):
                super().__setstate__(state)
                for group in self.param_groups:
                    group.setdefault("amsgrad", False)

        p = lib.nn.Parameter(lib.ones(2))
        opt = Opt([p])
        sd = opt.state_dict()
        sd["state"] = {0: {"n": 3, "buf": [lib.zeros(2, dtype=lib.float64)]}, 7: {"x": 1}}
        opt.load_state_dict(sd)
        res.append((opt.param_groups[0]["amsgrad"], sorted(opt.defaults),
                    opt.state[p]["n"], str(opt.state[p]["buf"][0].dtype), opt.state[7]))
    assert res[1] == res[0]


def _composite_errors(lib):
    out = []
    sched = lib.optim.lr_scheduler
    o1 = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.1)
    o2 = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.1)
    a, b = sched.StepLR(o1, 2), sched.StepLR(o2, 2)
    plateau = sched.ReduceLROnPlateau(o1)

    class NoOpt:
        pass

    calls = [lambda: sched.SequentialLR(o1, [a, b], milestones=[1]),
             lambda: sched.ChainedScheduler([a, b]),
             lambda: sched.ChainedScheduler([a, plateau]),
             lambda: sched.SequentialLR(o1, [a, plateau], milestones=[1]),
             lambda: sched.SequentialLR(o1, [a, NoOpt()], milestones=[1]),
             lambda: sched.ChainedScheduler([a, NoOpt()])]
    for call in calls:
        try:
            call()
        except Exception as e:
            out.append((type(e).__name__, str(e).replace("\n", " ")))
    return out


def test_sequential_chained_scheduler_errors(torch):
    """SequentialLR/ChainedScheduler reject foreign-optimizer schedulers, ReduceLROnPlateau and
    objects without an optimizer with torch's classes and messages."""
    assert _composite_errors(ember) == _composite_errors(torch)


def _global_step_hooks(lib):
    mod = importlib.import_module(lib.__name__ + ".optim.optimizer")
    log = []
    p = lib.nn.Parameter(lib.ones(2))
    p.grad = lib.ones(2)
    opt = lib.optim.SGD([p], lr=0.1)
    opt.register_step_pre_hook(lambda o, a, k: log.append("own pre"))
    opt.register_step_post_hook(lambda o, a, k: log.append("own post"))
    h1 = mod.register_optimizer_step_pre_hook(lambda o, a, k: log.append("global pre"))
    h2 = mod.register_optimizer_step_post_hook(lambda o, a, k: log.append("global post"))
    try:
        opt.step()
        lib.optim.Adam([p]).step()
    finally:
        h1.remove()
        h2.remove()
    opt.step()
    return log, "register_optimizer_step_pre_hook" in mod.__all__


def test_global_optimizer_step_hooks(torch):
    """torch.optim.optimizer.register_optimizer_step_pre/post_hook run around every optimizer's
    step, outside its own hooks."""
    assert _global_step_hooks(ember) == _global_step_hooks(torch)


def _strict_vectorize(lib):
    AF = importlib.import_module(lib.__name__ + ".autograd.functional")
    x = lib.tensor([1.0, 2.0, 3.0])
    out = []
    for call in (lambda: AF.jacobian(lambda t: t ** 2, x, strict=True, vectorize=True),
                 lambda: AF.hessian(lambda t: (t ** 3).sum(), x, strict=True, vectorize=True),
                 lambda: AF.jacobian(lambda t: lib.ones(2), x, strict=True, vectorize=True)):
        try:
            call()
            out.append("ok")
        except Exception as e:
            out.append((type(e).__name__, str(e)))
    return out


def test_jacobian_strict_and_vectorize_rejected(torch):
    """jacobian/hessian(strict=True, vectorize=True) raise as torch does, after the outputs'
    strict check."""
    assert _strict_vectorize(ember) == _strict_vectorize(torch)


def _param_checks(lib):
    out = []
    p = lib.nn.Parameter(lib.ones(2))
    nonleaf = lib.ones(2, requires_grad=True) * 2
    nonleaf.retain_grad()
    calls = [lambda: lib.optim.SGD([nonleaf], lr=0.1),
             lambda: lib.optim.Adam([lib.ones(2, requires_grad=True) * 2], differentiable=True),
             lambda: lib.optim.SGD([lib.ones(2, requires_grad=True) * 2], lr=0.1)]
    for name in ("Adam", "AdamW", "Adamax", "NAdam", "RAdam", "Adadelta", "ASGD", "LBFGS",
                 "RMSprop", "Rprop", "Adafactor"):
        calls.append(lambda name=name: getattr(lib.optim, name)([p], lr=lib.tensor([0.1, 0.2])))
        calls.append(lambda name=name: getattr(lib.optim, name)([p], lr=lib.tensor(0.1)))
    named = lib.optim.SGD([("a", p)], lr=0.1)
    plain = lib.optim.SGD([p], lr=0.1)
    calls.append(lambda: named.add_param_group({"params": [lib.nn.Parameter(lib.ones(1))]}))
    calls.append(lambda: plain.add_param_group({"params": [("b", lib.nn.Parameter(lib.ones(1)))]}))
    for call in calls:
        try:
            call()
            out.append("ok")
        except Exception as e:
            out.append((type(e).__name__, str(e)))
    return out


def test_optimizer_param_checks(torch):
    """Tensor lr of several elements, non-leaf parameters that retain grad or are optimized
    differentiably, and groups with and without names mixed: torch's errors."""
    assert _param_checks(ember) == _param_checks(torch)
