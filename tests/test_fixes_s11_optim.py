"""Session 11 fixes: optimizers on complex parameters, nn.init on complex tensors, torch.norm's
string orders and batch_norm's special running statistics, each checked against PyTorch."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

OPTIMIZERS = [
    ("Adam", {}), ("Adam", dict(amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(maximize=True, foreach=True)),
    ("Adam", dict(decoupled_weight_decay=True, weight_decay=0.1)),
    ("AdamW", {}), ("AdamW", dict(amsgrad=True, maximize=True)),
    ("RMSprop", {}), ("RMSprop", dict(centered=True, momentum=0.9, weight_decay=0.1)),
    ("RMSprop", dict(centered=True, foreach=True, maximize=True)),
    ("Adagrad", {}), ("Adagrad", dict(initial_accumulator_value=0.5, lr_decay=0.1,
                                      weight_decay=0.1)),
    ("Adadelta", {}), ("Adadelta", dict(weight_decay=0.1, maximize=True)),
    ("Adamax", {}), ("Adamax", dict(weight_decay=0.1, foreach=True)),
    ("NAdam", {}), ("NAdam", dict(decoupled_weight_decay=True, weight_decay=0.1)),
    ("RAdam", {}), ("RAdam", dict(weight_decay=0.1, decoupled_weight_decay=True)),
    ("ASGD", dict(t0=2)), ("Rprop", {}), ("Rprop", dict(maximize=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
]


def _run_optimizer(lib, name, kwargs, dtype_name, steps=5):
    gen = torch.Generator().manual_seed(1)
    dtype = getattr(lib, dtype_name)
    p = lib.nn.Parameter(lib.tensor(torch.randn(3, 2, dtype=torch.cdouble,
                                                generator=gen).numpy(), dtype=dtype))
    opt = getattr(lib.optim, name)([p], **kwargs)
    for _ in range(steps):
        grad = torch.randn(3, 2, dtype=torch.cdouble, generator=gen).numpy()
        p.grad = lib.tensor(grad, dtype=dtype)
        opt.step()
    state = {k: (str(v.dtype).split(".")[-1], tuple(v.shape), v.numpy())
             for k, v in opt.state_dict()["state"][0].items()}
    return p.detach().numpy(), state


@pytest.mark.parametrize("dtype_name", ["complex64", "complex128"])
@pytest.mark.parametrize("name,kwargs", OPTIMIZERS)
def test_optimizer_on_complex_parameter_matches_torch(name, kwargs, dtype_name):
    want, want_state = _run_optimizer(torch, name, kwargs, dtype_name)
    got, got_state = _run_optimizer(ember, name, kwargs, dtype_name)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert got_state.keys() == want_state.keys()
    for key, (dtype, shape, value) in want_state.items():
        assert got_state[key][:2] == (dtype, shape), key
        np.testing.assert_allclose(got_state[key][2], value, rtol=1e-5, atol=1e-6)


def test_complex_adam_state_round_trips_through_torch():
    tp = torch.nn.Parameter(torch.randn(4, dtype=torch.cfloat))
    topt = torch.optim.Adam([tp], lr=0.1)
    tp.grad = torch.randn(4, dtype=torch.cfloat)
    topt.step()
    ep = ember.nn.Parameter(ember.tensor(tp.detach().numpy()))
    eopt = ember.optim.Adam([ep], lr=0.1)
    eopt.load_state_dict(topt.state_dict())
    g = torch.randn(4, dtype=torch.cfloat)
    tp.grad, ep.grad = g, ember.tensor(g.numpy())
    topt.step()
    eopt.step()
    np.testing.assert_allclose(ep.detach().numpy(), tp.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert eopt.state[ep]["exp_avg"].dtype == ember.complex64


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_on_complex_and_real_parameters_matches_torch(line_search_fn):
    def run(lib):
        gen = torch.Generator().manual_seed(0)
        p = lib.nn.Parameter(lib.tensor(torch.randn(4, dtype=torch.cdouble,
                                                    generator=gen).numpy()))
        q = lib.nn.Parameter(lib.tensor(torch.randn(3, dtype=torch.double, generator=gen).numpy()))
        t = lib.tensor(torch.randn(4, dtype=torch.cdouble, generator=gen).numpy())
        opt = lib.optim.LBFGS([p, q], lr=0.5, max_iter=5, history_size=3,
                              line_search_fn=line_search_fn)

        def closure():
            opt.zero_grad()
            loss = ((p - t).abs() ** 2).sum() + (p ** 2).real.sum() * 0.1 + (q ** 4).sum()
            loss.backward()
            return loss

        for _ in range(2):
            opt.step(closure)
        return p.detach().numpy(), q.detach().numpy()

    for got, want in zip(run(ember), run(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)


INITS = {
    "uniform_": lambda L, t: L.nn.init.uniform_(t, -1, 2),
    "normal_": lambda L, t: L.nn.init.normal_(t, 1, 2),
    "xavier_uniform_": lambda L, t: L.nn.init.xavier_uniform_(t, gain=2.0),
    "xavier_normal_": lambda L, t: L.nn.init.xavier_normal_(t),
    "kaiming_uniform_": lambda L, t: L.nn.init.kaiming_uniform_(t, a=5 ** 0.5),
    "kaiming_normal_": lambda L, t: L.nn.init.kaiming_normal_(t, mode="fan_out"),
    "trunc_normal_": lambda L, t: L.nn.init.trunc_normal_(t, std=0.5),
    "trunc_normal_narrow": lambda L, t: L.nn.init.trunc_normal_(t, mean=3, std=1, a=2.9, b=3.0),
    "orthogonal_": lambda L, t: L.nn.init.orthogonal_(t),
    "sparse_": lambda L, t: L.nn.init.sparse_(t, 0.5),
    "uniform_reversed": lambda L, t: L.nn.init.uniform_(t, 2, -1),
    "normal_negative_std": lambda L, t: L.nn.init.normal_(t, 0, -1),
}


def _init_outcome(lib, fn, dtype_name):
    lib.manual_seed(0)
    t = lib.empty(4, 6, dtype=getattr(lib, dtype_name))
    try:
        fn(lib, t)
    except Exception as e:      # noqa: BLE001 (the error is compared with torch's)
        return type(e).__name__, str(e)
    after = lib.rand(2).numpy()        # the generator's state after the draws
    return t.numpy(), after


@pytest.mark.parametrize("dtype_name", ["complex64", "complex128", "float32", "float64", "int64",
                                        "bool"])
@pytest.mark.parametrize("name", sorted(INITS))
def test_init_matches_torch(name, dtype_name):
    want = _init_outcome(torch, INITS[name], dtype_name)
    got = _init_outcome(ember, INITS[name], dtype_name)
    if isinstance(want[0], str):
        assert got == want
        return
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)


def test_complex_linear_initial_weights_match_torch():
    torch.manual_seed(3)
    ember.manual_seed(3)
    want = torch.nn.Linear(4, 2, dtype=torch.cfloat)
    got = ember.nn.Linear(4, 2, dtype=ember.cfloat)
    np.testing.assert_allclose(got.weight.detach().numpy(), want.weight.detach().numpy(),
                               rtol=1e-6)
    np.testing.assert_allclose(got.bias.detach().numpy(), want.bias.detach().numpy(), rtol=1e-6)


def test_random_init_of_meta_tensors_is_a_no_op():
    for fn in (ember.nn.init.trunc_normal_, ember.nn.init.orthogonal_, ember.nn.init.uniform_):
        t = ember.empty(3, 4, device="meta")
        assert fn(t) is t


_NORM_INPUTS = {
    "A3": np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32),
    "A2": np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32),
    "v": np.random.default_rng(2).standard_normal(3).astype(np.float32),
    "scalar": np.array(2.5, dtype=np.float32),
    "empty": np.zeros((0, 3), dtype=np.float32),
    "complex": (np.random.default_rng(3).standard_normal((3, 3))
                + 1j * np.random.default_rng(4).standard_normal((3, 3))),
    "long": np.ones((2, 3), dtype=np.int64),
    "half": np.ones((2, 3), dtype=np.float16),
}
_NORM_PS = ["fro", "nuc", "bad", None, 2, 0, 3.5, -1, float("inf"), -float("inf")]
_NORM_DIMS = ["none", 0, -1, (0, 1), (-1, -3), (0, 0), (0, 1, 2), [], (0, 5)]
_NORM_EXTRAS = [{}, {"keepdim": True}, {"dtype": "float64"}, {"dtype": "float16"},
                {"dtype": "complex128"}, {"dtype": "int64"}]


def _norm_outcome(lib, x, p, dim, extra):
    kwargs = {k: (getattr(lib, v) if k == "dtype" else v) for k, v in extra.items()}
    if dim != "none":
        kwargs["dim"] = dim
    t = lib.tensor(x)
    try:
        r = lib.norm(t, p, **kwargs)
    except Exception as e:      # noqa: BLE001 (the error is compared with torch's)
        return type(e).__name__, str(e)
    return tuple(r.shape), str(r.dtype).split(".")[-1], r.numpy()


@pytest.mark.parametrize("name", sorted(_NORM_INPUTS))
@pytest.mark.parametrize("p", _NORM_PS, ids=repr)
def test_norm_every_p_form_matches_torch(name, p):
    x = _NORM_INPUTS[name]
    for dim in _NORM_DIMS:
        for extra in _NORM_EXTRAS:
            want = _norm_outcome(torch, x, p, dim, extra)
            got = _norm_outcome(ember, x, p, dim, extra)
            assert got[:2] == want[:2], (dim, extra, got[:2], want[:2])
            if len(want) == 3:
                np.testing.assert_allclose(got[2], want[2], rtol=1e-4, atol=1e-5,
                                           err_msg=str((dim, extra)))


def test_nuclear_norm_graph_and_gradient_match_torch():
    def chain(t):
        names, fn = [], t.grad_fn
        while fn is not None:
            names.append(type(fn).__name__)
            fn = fn.next_functions[0][0] if fn.next_functions else None
        return names

    results = []
    for lib in (torch, ember):
        a = lib.tensor(np.arange(24.0).reshape(2, 3, 4) ** 1.5, requires_grad=True)
        r = lib.norm(a, "nuc", dim=(2, 0), keepdim=True)
        r.backward(lib.tensor(np.arange(3.0).reshape(1, 3, 1)))
        m = a.norm(p="nuc", dim=(0, 1))
        results.append((tuple(r.shape), chain(r), chain(m), a.grad.numpy(), m.detach().numpy()))
    (*want, wg, wm), (*got, gg, gm) = results
    assert got == want
    np.testing.assert_allclose(gg, wg, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gm, wm, rtol=1e-10)


def test_fuzz_case_batch_norm_special_weight_on_strided_input():
    import json
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).parent))
    from fuzz import ops as fuzz_ops
    case = ["torch", "batch_norm", [
        ["T", [2, 3, 4], "float64", "u", "t", False], ["T", [3], "float64", "x", "c", False],
        ["T", [3], "float64", "u", "c", True], ["T", [3], "float64", "u", "c", False],
        ["T", [3], "float64", "pos", "c", False], True, 0.0, 0.0, False], {}, 1500057]
    assert fuzz_ops.check_case(fuzz_ops.case_from_json(json.loads(json.dumps(case)))) is None


@pytest.mark.parametrize("dtype_name,param_dtype", [
    ("float64", "float64"), ("float32", "float32"), ("float16", "float16"),
    ("bfloat16", "bfloat16"), ("float16", "float32")])
@pytest.mark.parametrize("layout", ["transposed", "strided_weight", "channels_last"])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_strided_kernel_matches_torch(dtype_name, param_dtype, layout, training):
    """torch's strided kernel ((x - mean) * invstd) * w + b: inf/NaN weights and biases
    propagate as in it, and 16-bit values round as it does."""
    outs = []
    for lib in (torch, ember):
        rng = np.random.default_rng(5)
        x0 = rng.standard_normal((2, 3, 4, 5)) * 3 + 1
        dt, pd = getattr(lib, dtype_name), getattr(lib, param_dtype)
        if layout == "transposed":
            x = lib.tensor(x0.swapaxes(-1, -2).copy(), dtype=dt).transpose(-1, -2)
        elif layout == "channels_last":
            x = lib.tensor(x0, dtype=dt).contiguous(memory_format=lib.channels_last)
        else:
            x = lib.tensor(x0, dtype=dt)
        w0, b0 = np.array([-np.inf, -0.0, 0.7]), np.array([0.3, -0.2, np.inf])
        w = (lib.tensor(np.repeat(w0, 2), dtype=pd)[::2] if layout == "strided_weight"
             else lib.tensor(w0, dtype=pd))
        b = lib.tensor(b0, dtype=pd)
        rm = lib.tensor(rng.standard_normal(3), dtype=pd)
        rv = lib.tensor(rng.random(3) + 0.1, dtype=pd)
        out = lib.batch_norm(x, w, b, rm, rv, training, 0.0, 0.0 if training else 1e-5, False)
        outs.append((str(out.dtype).split(".")[-1], out.float().numpy()))
    (wd, want), (gd, got) = outs
    assert gd == wd
    exact = layout != "channels_last" and not (training and dtype_name == "float32")
    if exact:
        np.testing.assert_array_equal(got, want)
    else:       # (channels-last: x * alpha + beta; float32 training: torch's float mean)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, want, rtol=1e-2 if "16" in dtype_name else 1e-5)


_FLAG_OPTIMIZERS = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam",
                    "RAdam", "ASGD", "Rprop"]
_FLAGS = [dict(differentiable=True), dict(capturable=True), dict(foreach=True),
          dict(fused=True), dict(foreach=True, fused=True), dict(fused=True, differentiable=True),
          dict(capturable=True, foreach=True), dict(foreach=False), dict(fused=False),
          dict(differentiable=True, weight_decay=0.1, decoupled_weight_decay=True)]


def _flag_outcome(lib, name, kwargs, dtype_name):
    p = lib.nn.Parameter(lib.ones(3, dtype=getattr(lib, dtype_name)))
    try:
        opt = getattr(lib.optim, name)([p], **kwargs)
    except Exception as e:      # noqa: BLE001 (the error is compared with torch's)
        return "init", type(e).__name__, str(e).replace("torch.", "")
    p.grad = lib.ones(3, dtype=p.dtype)
    try:
        opt.step()
    except Exception as e:      # noqa: BLE001
        return "step", type(e).__name__, str(e).replace("torch.", "")
    return "ok", p.detach().numpy().tolist()


@pytest.mark.parametrize("dtype_name", ["float32", "complex64"])
@pytest.mark.parametrize("kwargs", _FLAGS, ids=str)
@pytest.mark.parametrize("name", _FLAG_OPTIMIZERS)
def test_optimizer_flag_errors_match_torch(name, kwargs, dtype_name):
    want = _flag_outcome(torch, name, kwargs, dtype_name)
    got = _flag_outcome(ember, name, kwargs, dtype_name)
    if want[0] == "init" and want[1] == "TypeError":
        assert got[:2] == want[:2]      # (an unexpected keyword: the class name may differ)
    else:
        assert got == want
