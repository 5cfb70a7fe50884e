"""Regression tests against torch (session 11): in-place ops that compute wider than ``self``
(gradient dtype and rounding), saved-tensor order as pack hooks see it, round's explicit
``decimals``, the version-counter message's type names and silent casts."""
import json
import sys
import warnings
from pathlib import Path

import pytest

import ember

torch = pytest.importorskip("torch")

sys.path.insert(0, str(Path(__file__).parent))
from fuzz import ops as fuzz_ops  # noqa: E402


def _case(op, args, seed, ns="Tensor"):
    return [ns, op, args, {}, seed]


_B3 = ["T", [2, 2, 2], "bfloat16", "u", "t", False]
_W11 = ["T", [1, 1], "float64", "u", "t", True]
_FAMILY = [_case(op, [_B3, _W11], 1500094) for op in (
    "add_", "sub_", "mul_", "clamp_", "clamp_min_", "xlogy_", "copy_", "div_", "pow_",
    "fmod_", "maximum")]
_FAMILY += [
    _case("clamp_", [_B3, _W11], 1500094, "torch"),
    _case("addcdiv_", [_B3, _W11, ["T", [2, 2, 2], "bfloat16", "u", "c", True]], 1500094),
    _case("addcmul_", [_B3, _W11, ["T", [2, 2, 2], "bfloat16", "u", "c", True]], 1500094),
    _case("atan2_", [["T", [3, 3], "float16", "u", "t", True],
                     ["T", [3], "float64", "u", "c", True]], 1500064),
    _case("hypot_", [["T", [3, 3], "float16", "u", "t", True],
                     ["T", [3], "float64", "u", "c", True]], 1500064),
    _case("hypot_", [["T", [3], "bfloat16", "u", "c", True],
                     ["T", [3], "float64", "u", "c", True]], 1400075),
    _case("binary_cross_entropy_with_logits", [["T", [3], "bfloat16", "prob", "c", True],
                                               ["T", [3], "float64", "prob", "c", True]],
          1500066, "F"),
]


@pytest.mark.parametrize("case", _FAMILY, ids=lambda c: "%s:%s" % (c[0], c[1]))
def test_wide_other_gradient_rounding(case):
    """A broadcast gradient is summed in the output's dtype, then cast (torch's engine)."""
    m = fuzz_ops.check_case(fuzz_ops.case_from_json(json.loads(json.dumps(case))))
    assert m is None, m


def _grads(lib, op, self_dtype, other_shape):
    base = lib.tensor([[0.3, -1.7], [2.9, 0.11]], dtype=self_dtype)
    w = lib.tensor([[1.23456789]] if other_shape == (1, 1) else [1.23456789, -0.987654321],
                   dtype=lib.float64, requires_grad=True)
    src = lib.ones(2, 2, dtype=lib.float64, requires_grad=True)
    x = src.to(self_dtype) * 1
    getattr(x, op)(w)
    assert x.dtype == self_dtype
    up = lib.tensor([[0.1, 0.7], [1.3, 2.9]], dtype=self_dtype)
    (x * up + base).sum().backward()
    return w.grad, src.grad


@pytest.mark.parametrize("op", ["add_", "mul_", "copy_", "hypot_", "div_"])
@pytest.mark.parametrize("shape", [(1, 1), (2,)])
def test_inplace_wide_other_direct(op, shape):
    for dt in ("bfloat16", "float16"):
        e = _grads(ember, op, getattr(ember, dt), shape)
        t = _grads(torch, op, getattr(torch, dt), shape)
        for a, b in zip(e, t):
            assert a.dtype == ember.float64
            assert a.tolist() == b.tolist()


def _pack_shapes(lib, fn):
    log = []

    def pack(t):
        log.append(tuple(t.shape))
        return t
    with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn(lib)
    return log


def _mk(lib, *shape, rg=True):
    return lib.ones(*shape, dtype=lib.float64).requires_grad_(rg)


_PACKS = {
    "mul": lambda L: _mk(L, 2, 3) * _mk(L, 3),
    "mul_self_only": lambda L: _mk(L, 2, 3) * _mk(L, 3, rg=False),
    "mul_other_only": lambda L: _mk(L, 2, 3, rg=False) * _mk(L, 3),
    "div": lambda L: _mk(L, 2, 3) / _mk(L, 3),
    "div_self_only": lambda L: _mk(L, 2, 3) / _mk(L, 3, rg=False),
    "pow": lambda L: _mk(L, 2, 3) ** _mk(L, 3),
    "pow_self_only": lambda L: _mk(L, 2, 3) ** _mk(L, 3, rg=False),
    "maximum": lambda L: L.maximum(_mk(L, 2, 3), _mk(L, 3)),
    "fmin": lambda L: L.fmin(_mk(L, 2, 3), _mk(L, 3)),
    "gelu": lambda L: L.nn.functional.gelu(_mk(L, 2, 3)),
    "gelu_tanh": lambda L: L.nn.functional.gelu(_mk(L, 2, 3), approximate="tanh"),
    "add_sub": lambda L: _mk(L, 2, 3) + _mk(L, 3) - _mk(L, 3),
    "relu_sigmoid_tanh_exp": lambda L: _mk(L, 2, 3).relu().sigmoid().tanh().exp(),
    "sum_mean": lambda L: _mk(L, 2, 3).sum(0).mean(),
    "softmax": lambda L: L.softmax(_mk(L, 2, 3), 1),
    "log_softmax": lambda L: L.log_softmax(_mk(L, 2, 3), 1),
    "nll": lambda L: L.nn.functional.nll_loss(_mk(L, 2, 3), L.tensor([0, 2])),
    "cross_entropy": lambda L: L.nn.functional.cross_entropy(_mk(L, 2, 3), L.tensor([0, 2])),
    "cross_entropy_sum": lambda L: L.nn.functional.cross_entropy(
        _mk(L, 2, 3), L.tensor([0, -100]), reduction="sum"),
    "nll_none": lambda L: L.nn.functional.nll_loss(_mk(L, 2, 3), L.tensor([0, 2]),
                                                   reduction="none"),
}


@pytest.mark.parametrize("name", sorted(_PACKS))
def test_saved_tensor_pack_order(name):
    assert _pack_shapes(ember, _PACKS[name]) == _pack_shapes(torch, _PACKS[name])


def test_nll_saved_total_weight_values():
    vals = {}
    for lib in (ember, torch):
        log = []
        with lib.autograd.graph.saved_tensors_hooks(lambda t: log.append(t.tolist()) or t,
                                                    lambda t: t):
            for red in ("mean", "sum", "none"):
                lib.nn.functional.cross_entropy(_mk(lib, 3, 3), lib.tensor([0, 2, -100]),
                                                reduction=red)
        vals[lib] = log
    assert vals[ember] == vals[torch]


def test_mul_gelu_backward_after_reorder():
    for lib in (ember, torch):
        a = lib.tensor([0.5, -1.25, 2.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([1.5, 0.75, -2.0], dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.gelu(a * b) / b + (a * a + 1) ** b + lib.maximum(a, b)
        ga, gb = lib.autograd.grad(y.sum(), (a, b), create_graph=True)
        gg = lib.autograd.grad((ga * gb).sum(), (a, b))
        if lib is ember:
            res_e = [v for t in (ga, gb) + gg for v in t.tolist()]
        else:
            res_t = [v for t in (ga, gb) + gg for v in t.tolist()]
    assert res_e == pytest.approx(res_t, rel=1e-12, abs=1e-12)


def _round_names(lib):
    x = lib.tensor([0.5, 1.5, 2.26, -3.5], requires_grad=True)
    out = []
    for f in (lambda: lib.round(x, decimals=0), lambda: x.round(decimals=0),
              lambda: lib.round(x), lambda: x.round(), lambda: lib.round(x, decimals=1),
              lambda: (x * 1).round_(decimals=0), lambda: (x * 1).round_()):
        r = f()
        out.append((r.tolist(), type(r.grad_fn).__name__))
    for dt in ("int32", "bool"):
        for kw in ({}, {"decimals": 0}, {"decimals": 1}):
            try:
                out.append(lib.round(x.detach().to(getattr(lib, dt)), **kw).tolist())
            except NotImplementedError as e:
                out.append(str(e))
    return out


def test_round_explicit_decimals_zero():
    assert _round_names(ember) == _round_names(torch)
    assert "decimals=0" in str(__import__("inspect").signature(ember.round))


@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16", "complex64",
                                "complex128", "int64", "int32", "int16", "int8", "uint8",
                                "bool"])
def test_version_message_type_names(dt):
    msgs = []
    for lib in (ember, torch):
        w = lib.ones(3, 3, dtype=lib.float64, requires_grad=True)
        o = lib.ones(3, 3, dtype=getattr(lib, dt))
        b = w * o
        if dt == "bool":
            o.fill_(True)
        else:
            o.zero_()
        with pytest.raises(RuntimeError) as info:
            (b.abs() if b.is_complex() else b).sum().backward()
        msgs.append(str(info.value).split("]]")[0])
    assert msgs[0] == msgs[1]


def _casts(lib):
    x = lib.tensor([1e6, -1e6, float("nan"), float("inf"), 300.7, -1.5])
    out = []
    for dt in ("float16", "bfloat16", "int32", "int8", "uint8"):
        d = getattr(lib, dt)
        out.append(x.to(d).tolist())
        out.append(x.double().to(d).tolist())
        y = lib.zeros(6, dtype=d)
        y.copy_(x)
        out.append(y.tolist())
    y = lib.zeros(6, dtype=lib.float16, requires_grad=True) * 1
    y.copy_(x.requires_grad_())
    out.append(y.tolist())
    return out


def test_overflowing_casts_are_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        e = _casts(ember)
    t = _casts(torch)
    assert str(e) == str(t)


def _prelu_double(lib, wrg, channels):
    x = lib.tensor([[[-1.5, 2.0], [-0.5, 0.0], [0.25, -3.0]]], dtype=lib.float64,
                   requires_grad=True)
    w = lib.tensor([0.25, -0.5, 1.5][:channels], dtype=lib.float64, requires_grad=wrg)
    y = lib.nn.functional.prelu(x, w)
    up = lib.tensor([[[0.5, -1.0], [2.0, 0.75], [-0.25, 1.25]]], dtype=lib.float64,
                    requires_grad=True)
    ins = (x, w, up) if wrg else (x, up)
    grads = lib.autograd.grad((y * up).sum(), ins, create_graph=True)
    names = [type(g.grad_fn).__name__ for g in grads[:1]]
    total = sum((g * g).sum() for g in grads)
    second = lib.autograd.grad(total, ins, allow_unused=True)
    return names, [None if g is None else g.tolist() for g in grads + second]


@pytest.mark.parametrize("wrg", [False, True])
@pytest.mark.parametrize("channels", [1, 3])
def test_prelu_double_backward(wrg, channels):
    assert _prelu_double(ember, wrg, channels) == _prelu_double(torch, wrg, channels)


def _rrelu_double(lib, training):
    lib.manual_seed(0)
    x = lib.tensor([[-1.5, 2.0, -0.5], [0.25, -3.0, 1.0]], dtype=lib.float64,
                   requires_grad=True)
    y = lib.nn.functional.rrelu(x, training=training)
    g = lib.autograd.grad((y * y).sum(), x, create_graph=True)[0]
    nodes = [type(n[0]).__name__ for n in g.grad_fn.next_functions]
    gg = lib.autograd.grad(g.sum(), x)[0]
    return type(g.grad_fn).__name__, nodes, g.tolist(), gg.tolist()


@pytest.mark.parametrize("training", [False, True])
def test_rrelu_double_backward(training):
    assert _rrelu_double(ember, training) == _rrelu_double(torch, training)


def _view_inplace(lib, op):
    src = lib.tensor([[0.3, 1.7, 2.9, 0.11], [1.3, 0.2, 0.9, 2.2]], dtype=lib.float64,
                     requires_grad=True)
    w = lib.tensor([[1.23456789]], dtype=lib.float64, requires_grad=True)
    b = src.to(lib.bfloat16) * 1
    x = b[:, 1:3]
    getattr(x, op)(w)
    up = lib.tensor([[0.1, 0.7, 1.3, 2.9], [3.1, 0.37, 1.1, 0.3]], dtype=lib.bfloat16)
    (b * up).sum().backward()
    return type(b.grad_fn).__name__, w.grad.tolist(), src.grad.tolist()


@pytest.mark.parametrize("op", ["add_", "mul_", "copy_", "div_", "hypot_", "atan2_", "pow_"])
def test_inplace_on_view_wide_other(op):
    assert _view_inplace(ember, op) == _view_inplace(torch, op)
