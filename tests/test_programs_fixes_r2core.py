"""Regressions found by the round-2 core programs (tests/programs/p_r2core_*): activations'
double-backward nodes, softshrink's signed zeros, the containers' dict/list API, extra state,
set_submodule/to_empty and the layers' ``device=`` factory argument; each checked against
PyTorch."""
from collections import OrderedDict

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _both(fn):
    """``fn(lib)`` under ember and torch; an exception is returned as (class name, message)."""
    out = []
    for lib in (ember, torch):
        try:
            out.append(fn(lib))
        except Exception as e:     # noqa: BLE001 - the error itself is the result compared
            out.append((type(e).__name__, str(e)))
    return out


# -- double backward through activations: torch's nodes and values ----------------------------

_ACTS = {
    "gelu": lambda F, x: F.gelu(x),
    "gelu_tanh": lambda F, x: F.gelu(x, approximate="tanh"),
    "hardswish": lambda F, x: F.hardswish(x),
    "softplus": lambda F, x: F.softplus(x, beta=2.0, threshold=1.0),
    "elu": lambda F, x: F.elu(x, 0.7),
    "celu": lambda F, x: F.celu(x, 1.5),
    "selu": lambda F, x: F.selu(x),
    "logsigmoid": lambda F, x: F.logsigmoid(x),
    "hardtanh": lambda F, x: F.hardtanh(x, -0.5, 0.5),
    "relu6": lambda F, x: F.relu6(x * 4),
    "hardshrink": lambda F, x: F.hardshrink(x, 0.3),
    "softshrink": lambda F, x: F.softshrink(x, 0.3),
    "threshold": lambda F, x: F.threshold(x, 0.1, 2.0),
    "rrelu_eval": lambda F, x: F.rrelu(x, training=False),
}


@pytest.mark.parametrize("name", sorted(_ACTS))
def test_activation_double_backward_node_and_values(name):
    x0 = np.random.default_rng(1).standard_normal(7)
    res = {}
    for lib in (ember, torch):
        F = lib.nn.functional
        x = lib.tensor(x0, requires_grad=True)
        up = lib.linspace(0.5, 1.5, 7, dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad(_ACTS[name](F, x), x, up, create_graph=True)
        w = lib.arange(7.0, dtype=lib.float64)
        gx, gup = lib.autograd.grad((g * w).sum(), (x, up))
        res[lib] = (type(g.grad_fn).__name__, g.detach().numpy(), gx.numpy(), gup.numpy())
    e, t = res[ember], res[torch]
    assert e[0] == t[0]
    for a, b in zip(e[1:], t[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_activation_triple_backward_gelu():
    x0 = np.array([-1.3, -0.2, 0.4, 2.1])
    res = []
    for lib in (ember, torch):
        x = lib.tensor(x0, requires_grad=True)
        g, = lib.autograd.grad(lib.nn.functional.gelu(x).sum(), x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x, create_graph=True)
        ggg, = lib.autograd.grad(gg.sum(), x)
        res.append(ggg.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-10)


def test_hardsigmoid_double_backward_raises_as_torch():
    def run(lib):
        x = lib.tensor([0.5, -1.0], requires_grad=True)
        g, = lib.autograd.grad(lib.nn.functional.hardsigmoid(x).sum(), x, create_graph=True)
        name = type(g.grad_fn).__name__
        lib.autograd.grad(g.sum(), x)
        return name
    e, t = _both(run)
    assert e == t == ("RuntimeError", "derivative for aten::hardsigmoid_backward is not "
                                      "implemented")


# -- softshrink: +0 in torch's vectorised blocks, x * 0 in its scalar tail ---------------------

@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("n", [8, 9, 16, 17, 33])
def test_softshrink_signed_zeros(dtype, n):
    def run(lib):
        x = -lib.full((n,), 0.5, dtype=getattr(lib, dtype))
        return lib.signbit(lib.nn.functional.softshrink(x, 1.0)).tolist()
    e, t = _both(run)
    assert e == t


def test_softshrink_signed_zeros_layouts():
    def run(lib):
        x = -lib.full((4, 9), 0.5)
        F = lib.nn.functional
        return [lib.signbit(F.softshrink(v, 1.0)).tolist() for v in (x, x.t(), x[:, ::2])]
    e, t = _both(run)
    assert e == t


# -- containers --------------------------------------------------------------------------------

def test_parameter_dict_dict_api():
    def run(lib):
        nn = lib.nn
        pd = nn.ParameterDict({"b": lib.ones(2), "a": nn.Parameter(lib.zeros(1))})
        out = [list(pd.keys())]        # (a plain dict is taken in sorted key order)
        out.append(pd.setdefault("c", nn.Parameter(lib.ones(1))).shape)
        out.append(pd.setdefault("a").shape)
        out.append(list(pd.fromkeys(["x", "y"], lib.ones(1)).keys()))
        out.append(list(pd.copy().keys()))
        out.append(pd.popitem()[0])
        out.append(list(reversed(pd)))
        out.append(list((pd | nn.ParameterDict({"q": lib.ones(1)})).keys()))
        pd |= {"w": lib.zeros(2), "v": lib.ones(1)}
        out.append(list(pd.keys()))
        pd.update([("z", lib.ones(1))])
        out.append(list(pd.keys()))
        pd.clear()
        out.append(len(pd))
        return out
    e, t = _both(run)
    assert e == t


@pytest.mark.parametrize("call", [
    lambda nn, lib: nn.ParameterDict({"a": lib.ones(1)})[3],
    lambda nn, lib: nn.ParameterDict().update(5),
    lambda nn, lib: nn.ParameterDict().update([("a", lib.ones(1), 1)]),
    lambda nn, lib: nn.ParameterDict().update([5]),
    lambda nn, lib: nn.ParameterDict()(lib.ones(1)),
    lambda nn, lib: nn.ParameterList([lib.ones(1)])(lib.ones(1)),
    lambda nn, lib: nn.ParameterList().extend(lib.ones(2)),
    lambda nn, lib: nn.ModuleDict().update(nn.ReLU()),
    lambda nn, lib: nn.ModuleDict().update([("a", nn.Tanh(), 1)]),
    lambda nn, lib: nn.ModuleList().extend(5),
    lambda nn, lib: nn.Sequential(nn.ReLU()).insert(3, nn.Tanh()),
])
def test_container_errors(call):
    e, t = _both(lambda lib: call(lib.nn, lib))
    assert e == t


def test_sequential_insert_as_torch():
    def run(lib):
        nn = lib.nn
        s = nn.Sequential(nn.ReLU(), nn.Tanh())
        s.insert(1, nn.Sigmoid())
        s.insert(-1, nn.Identity())
        s.insert(4, nn.GELU())
        s += nn.Sequential(nn.ELU())
        out = [[type(m).__name__ for m in s], list(s._modules.keys())]
        named = nn.Sequential(OrderedDict([("a", nn.ReLU()), ("b", nn.Tanh())]))
        try:        # (torch's renumbering needs the keys 0, 1, ...)
            named.insert(1, nn.Sigmoid())
        except KeyError as e:
            out.append(("KeyError", str(e)))
        ml = nn.ModuleList([nn.ReLU(), nn.Tanh()])
        ml.insert(1, nn.Sigmoid())
        ml.insert(0, nn.Identity())
        out.append([type(m).__name__ for m in ml])
        out.append([k for k in dir(ml) if k.isdigit()])
        pl = lib.nn.ParameterList([lib.ones(1), lib.zeros(2), lib.ones(3)])
        out.append([tuple(p.shape) for p in pl[::-1]])
        return out
    e, t = _both(run)
    assert e == t


# -- Module: extra state, set_submodule, to_empty, factory device -----------------------------

def _counter(lib):
    class Counter(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(2, 2)
            self.calls = 0

        def get_extra_state(self):
            return {"calls": self.calls}

        def set_extra_state(self, state):
            self.calls = state["calls"]
    return Counter


def test_extra_state_round_trip():
    def run(lib):
        nn = lib.nn
        m = nn.Sequential(_counter(lib)(), nn.ReLU())
        m[0].calls = 3
        sd = m.state_dict()
        m2 = nn.Sequential(_counter(lib)(), nn.ReLU())
        out = [list(sd.keys()), sd["0._extra_state"], str(m2.load_state_dict(sd)), m2[0].calls]
        del sd["0._extra_state"]
        out.append(str(m2.load_state_dict(sd, strict=False)))
        try:
            m2.load_state_dict(sd)
        except RuntimeError as e:
            out.append(str(e))
        sd2 = nn.Sequential(nn.Linear(2, 2)).state_dict()
        sd2["0._extra_state"] = 5
        out.append(str(nn.Sequential(nn.Linear(2, 2)).load_state_dict(sd2, strict=False)))
        return out
    e, t = _both(run)
    assert e == t


def test_get_extra_state_default_raises():
    e, t = _both(lambda lib: lib.nn.Module().get_extra_state())
    assert e == t


@pytest.mark.parametrize("args", [("", "relu"), ("1.5", "relu", True), ("0.weight", "relu"),
                                  ("1", 3), ("9.1", "relu"), ("1.0", "tanh"), ("2", "tanh")])
def test_set_submodule(args):
    def run(lib):
        nn = lib.nn
        net = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU(), nn.Linear(3, 1)))
        mod = {"relu": nn.ReLU(), "tanh": nn.Tanh()}.get(args[1], args[1])
        net.set_submodule(args[0], mod, *args[2:])
        return [n for n, _ in net.named_modules()], repr(net)
    e, t = _both(run)
    if isinstance(t[0], str) and t[0] == "ValueError" and "found" in t[1]:
        assert e[0] == t[0]      # (the message names the class by its module path)
    else:
        assert e == t


def test_to_empty():
    def run(lib):
        e = lib.nn.Linear(3, 2).to_empty(device="cpu")
        s = lib.nn.Sequential(lib.nn.Linear(3, 2)).to_empty(device="meta", recurse=False)
        m = lib.nn.Linear(3, 2, device="meta").to_empty(device="cpu")
        return (tuple(e.weight.shape), str(e.weight.dtype), e.weight.requires_grad,
                type(e.weight).__name__, str(s[0].weight.device), str(m.weight.device))
    e, t = _both(run)
    assert e == t


@pytest.mark.parametrize("make", [
    lambda nn: nn.Linear(2, 3, device="meta"),
    lambda nn: nn.Conv2d(1, 2, 3, device="meta"),
    lambda nn: nn.BatchNorm1d(2, device="meta"),
    lambda nn: nn.Embedding(4, 2, device="meta"),
    lambda nn: nn.LayerNorm(3, device="meta"),
    lambda nn: nn.PReLU(device="meta"),
    lambda nn: nn.LSTM(2, 3, device="meta"),
    lambda nn: nn.MultiheadAttention(4, 2, device="meta"),
    lambda nn: nn.TransformerEncoderLayer(4, 2, 8, device="meta"),
    lambda nn: nn.Linear(2, 3, device="cpu"),
])
def test_factory_device_kwarg(make):
    def run(lib):
        m = make(lib.nn)
        return sorted({str(t.device) for t in list(m.parameters()) + list(m.buffers())})
    e, t = _both(run)
    assert e == t


def test_factory_device_strict():
    m = ember.nn.Linear(2, 3, device="strict")
    assert m.weight.device.type == "strict" and m.bias.device.type == "strict"
    assert ember.ones(1).device.type == "cpu"       # (the default device is restored)


# -- Unflatten keeps its size argument as given; Module's construction errors -----------------

@pytest.mark.parametrize("args", [(1, [2, 3]), (1, (2, -1)), (1, (2, 2)), (1, 6), (1, (2.0, 3)),
                                  (5, (2, 3))])
def test_unflatten(args):
    def run(lib):
        m = lib.nn.Unflatten(*args)
        return repr(m), tuple(m(lib.arange(12.0).reshape(2, 6)).shape)
    e, t = _both(run)
    assert e == t


def _uninit(lib, body):
    return type("X", (lib.nn.Module,), {"__init__": body})


@pytest.mark.parametrize("body", [
    lambda self: self.register_buffer("w", None),
    lambda self: self.register_parameter("w", None),
    lambda self: self.add_module("w", None),
    lambda self: super(type(self), self).__init__(3),
    lambda self: super(type(self), self).__init__(a=3),
])
def test_module_init_errors(body):
    e, t = _both(lambda lib: _uninit(lib, body)())
    assert e == t


def test_state_dict_positional_args_warn():
    for lib in (ember, torch):
        with pytest.warns(FutureWarning, match="Positional args are being deprecated"):
            keys = list(lib.nn.Linear(1, 1).state_dict(None, "pre.").keys())
        assert keys == ["pre.weight", "pre.bias"]
