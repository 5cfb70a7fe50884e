"""Regression tests (against torch) for session 9's conv and scatter fuzzer fixes: integer
convolutions' kernel dispatch (``slow_conv_dilated<>`` for dilated ones, only int64 transposed),
the transposed kernel's shape checks before its dtype error, oneDNN's transposed convolution
(half/bfloat16 always, float32 unless small) returning an empty output instead of "Output size
is too small", inputs with no channels or no spatial elements, and scatter's number converted
only when the index is non-empty (complex fill values of masked_fill/index_fill)."""
import itertools
import json
import sys
import warnings
from pathlib import Path

import pytest

import ember

torch = pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).parent))
from fuzz.ops import case_from_json, check_case  # noqa: E402

CASES = [
    '["F", "conv3d", [["T", [2, 1, 3, 3, 4], "int32", "u", "c", false], ["T", [1, 1, 2, 2, 1], '
    '"int32", "u", "s", false]], {"stride": 2, "padding": 1, "dilation": 2}, 300044]',
    '["F", "conv_transpose3d", [["T", [1, 1, 2, 3, 2], "float16", "u", "c", true], ["T", '
    '[1, 2, 1, 1, 1], "float16", "u", "t", true]], {"stride": 1, "padding": 1}, 300048]',
    '["F", "conv_transpose3d", [["T", [2, 1, 2, 3, 3], "int32", "u", "c", false], ["T", '
    '[1, 1, 2, 2, 1], "int32", "u", "s", false]], {"stride": 2, "padding": 1, '
    '"output_padding": 2}, 300044]',
    '["Tensor", "scatter", [["T", [3, 0], "uint8", "u", "c", false], 0, ["T", [2, 0], "int64", '
    '["idx", 3], "c", false], -1.25], {}, 300038]',
    '["Tensor", "scatter_", [["T", [3, 0], "uint8", "u", "c", false], 0, ["T", [2, 0], '
    '"int64", ["idx", 3], "c", false], -1.25], {}, 300038]',
]


@pytest.mark.parametrize("case", CASES)
def test_fuzzer_case(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert check_case(case_from_json(json.loads(case)), torch, timeout=60) is None


def _outcome(L, f):
    try:
        r = f(L)
    except Exception as e:      # noqa: BLE001
        return type(e).__name__, str(e)
    return "ok", str(r.dtype).split(".")[-1], tuple(r.shape), r.float().sum().item()


def _same(f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want, got = _outcome(torch, f), _outcome(ember, f)
    assert got == want


def _conv(nd, tr, dt, xs, ws, **kw):
    def f(L):
        x = L.ones(xs, dtype=getattr(L, dt))
        w = L.ones(ws, dtype=getattr(L, dt))
        name = ("conv_transpose%dd" if tr else "conv%dd") % nd
        return getattr(L.nn.functional, name)(x, w, **kw)
    return f


@pytest.mark.parametrize("dt", ["int8", "uint8", "int16", "int32", "int64", "bool", "float16"])
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_integer_conv_dispatch(dt, nd):
    for tr, dil, st, opad in itertools.product((False, True), (1, 2), (1, 2), (0, 1, 2)):
        if opad and not tr:
            continue
        kw = dict(stride=st, dilation=dil)
        if tr:
            kw["output_padding"] = opad
        _same(_conv(nd, tr, dt, (1, 1) + (3,) * nd, (1, 1) + (2,) * nd, **kw))
        _same(_conv(nd, tr, dt, (1, 1) + (2,) * nd, (1, 2) + (1,) * nd, padding=1, **kw))


@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float32", "float64", "int64"])
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_transposed_empty_output(dt, nd):
    for n, pad, k in [(1, 1, 1), (2, 1, 1), (2, 2, 1), (16, 1, 1), (1, 3, 4)]:
        _same(_conv(nd, True, dt, (n, 1) + (2,) * nd, (1, 2) + (k,) * nd, padding=pad))


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_no_channels_and_no_elements(nd):
    for dt in ("float32", "int32"):
        _same(_conv(nd, False, dt, (2, 0) + (5,) * nd, (3, 0) + (2,) * nd, dilation=2))
        _same(_conv(nd, False, dt, (2, 1) + (0,) * nd, (1, 1) + (1,) * nd, padding=1))
        _same(_conv(nd, True, dt, (2, 1) + (0,) * nd, (1, 1) + (2,) * nd))
    grads = []
    for L in (torch, ember):
        x = L.ones((2, 0) + (4,) * nd, requires_grad=True)
        w = L.ones((3, 0) + (2,) * nd, requires_grad=True)
        b = L.ones(3, requires_grad=True)
        y = getattr(L.nn.functional, "conv%dd" % nd)(x, w, b)
        y.sum().backward()
        grads.append((tuple(y.shape), type(y.grad_fn).__name__, tuple(x.grad.shape),
                      tuple(w.grad.shape), b.grad.tolist()))
    assert grads[0] == grads[1]


def test_onednn_dtype_messages():
    for nd, tr in itertools.product((1, 2, 3), (False, True)):
        for dt in ("float16", "bfloat16", "float32"):
            def f(L, nd=nd, tr=tr, dt=dt):
                x = L.ones((2, 1) + (3,) * nd, dtype=getattr(L, dt))
                w = L.ones((1, 1) + (2,) * nd, dtype=L.float64)
                name = ("conv_transpose%dd" if tr else "conv%dd") % nd
                return getattr(L.nn.functional, name)(x, w)
            _same(f)


@pytest.mark.parametrize("op", ["scatter", "scatter_", "value", "add"])
def test_scatter_number_checked_only_when_written(op):
    for shape, ishape, v, dt in itertools.product(
            [(3, 0), (3, 2)], [(0, 2), (1, 2), (0, 3)], [-1.25, 300, 1e40, 1 + 1j, 2.5],
            ["uint8", "int8", "int32", "bool", "float16"]):
        def f(L, shape=shape, ishape=ishape, v=v, dt=dt):
            t = L.zeros(shape, dtype=getattr(L, dt))
            i = L.zeros(ishape, dtype=L.int64)
            if op == "value":
                return L.scatter(t, 0, i, value=v)
            if op == "add":
                return t.scatter(0, i, v, reduce="add")
            return getattr(t, op)(0, i, v)
        _same(f)
    _same(lambda L: L.zeros(3, 2, dtype=L.uint8).scatter(0, L.tensor([[5, 0]]), 300))


def test_empty_index_skips_shape_checks():
    for ishape in [(0, 3), (0,), (0, 1, 1)]:
        _same(lambda L, s=ishape: L.zeros(3, 2).gather(0, L.zeros(s, dtype=L.int64)))
        _same(lambda L, s=ishape: L.zeros(3, 2).scatter(0, L.zeros(s, dtype=L.int64),
                                                          L.ones(0, 5)))
        _same(lambda L, s=ishape: L.zeros(3, 2).scatter_add(0, L.zeros(s, dtype=L.int64),
                                                              L.ones(1, 1)))


def test_complex_fill_value():
    for v, dt, shape in itertools.product([1 + 1j, 1 + 0j, 300 + 0j], ["uint8", "float32", "bool"],
                                          [(3, 0), (3, 2)]):
        _same(lambda L, v=v, dt=dt, s=shape: L.zeros(s, dtype=getattr(L, dt)).masked_fill(
            L.ones(s, dtype=L.bool), v))
        _same(lambda L, v=v, dt=dt, s=shape: L.zeros(s, dtype=getattr(L, dt)).index_fill(
            0, L.tensor([0]), v))
