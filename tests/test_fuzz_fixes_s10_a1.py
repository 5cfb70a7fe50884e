"""Regression tests (against torch) for session 10's fuzzer fixes: atan2's zero slope where
``a**2 + b**2`` is 0, ctc_loss's gradient with infinite log-probabilities (torch's last frame and
running log-sum-exp), empty inputs and ``zero_infinity`` for a -inf loss, the view scatters'
backward for a source that needs no gradient, index_add's ``alpha * source`` for complex
tensors (all but torch's int64-index path), and roll of an empty tensor and its argument
errors."""
import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).parent))
from fuzz.ops import case_from_json, check_case  # noqa: E402

INF, NAN = math.inf, math.nan

CASES = [
    '["F", "ctc_loss", [["T", [3, 2, 4], "float32", "x", "c", true], ["T", [2, 3], "int64", '
    '["idx", 3], "c", false], [3, 3], [3, 3]], {"blank": 0, "reduction": "mean", '
    '"zero_infinity": false}, 1100073]',
    '["Tensor", "arctan2_", [["T", [2, 2, 2], "float64", "x", "c", true], ["T", [1, 1], '
    '"int64", "u", "t", false]], {}, 1100067]',
    '["torch", "atan2", [["T", [2, 2, 2], "float64", "x", "c", true], ["T", [1, 1], "int64", '
    '"u", "t", false]], {}, 1100067]',
    '["torch", "diagonal_scatter", [["T", [1, 3], "complex128", "u", "c", true], ["T", [1], '
    '"int64", ["idx", 3], "c", false]], {}, 1100058]',
    '["Tensor", "index_add_", [["T", [2, 1, 3], "complex64", "u", "c", false], -1, ["T", [3], '
    '"int32", ["idx", 3], "c", false], ["T", [2, 1, 3], "complex64", "x", "c", true]], {}, '
    '1200053]',
    '["torch", "roll", [["T", [0], "float64", "u", "s", false], 3, 2], {}, 1200036]',
]


@pytest.mark.parametrize("case", CASES)
def test_fuzzer_case(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert check_case(case_from_json(json.loads(case)), torch, timeout=60) is None


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    assert np.array_equal(np.isnan(a), np.isnan(b)), (a, b)
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else t.numpy()


# -- atan2 ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("odtype", ["int64", "int32", "float64"])
@pytest.mark.parametrize("name", ["atan2", "arctan2"])
def test_atan2_grad_at_origin(dtype, odtype, name):
    xs = [0.0, -0.0, 1e-30, 2.0, INF, NAN, 0.0, -3.0]
    os_ = [0, 0, 0, 0, 0, 0, 2, -1]
    out = []
    for lib in (torch, ember):
        x = lib.tensor(xs, dtype=getattr(lib, dtype), requires_grad=True)
        o = lib.tensor(os_, dtype=getattr(lib, odtype), requires_grad=odtype == "float64")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            getattr(lib, name)(x, o).backward(lib.full((8,), 2.0, dtype=x.dtype))
        out.append([_np(x.grad)] + ([_np(o.grad)] if odtype == "float64" else []))
    for a, b in zip(*out):
        _same(a, b)
        num = ~np.isnan(a)
        assert np.array_equal(np.signbit(a[num]), np.signbit(b[num]))


def test_atan2_inplace_grad_int_other():
    out = []
    for lib in (torch, ember):
        x = lib.tensor([0.0, -0.0, 1.0], dtype=lib.float64, requires_grad=True)
        y = x.clone()
        y.atan2_(lib.tensor([0, 0, 0]))
        y.sum().backward()
        out.append(_np(x.grad))
    _same(*out)


# -- ctc_loss ------------------------------------------------------------------------------

_LP = [[[-0.0, INF, -INF, 1.8250725], [-0.6822145, -0.44167253, 0.23123623, -0.0]],
       [[-1.6064354, -0.0, -1.0777093, 0.52253616], [-INF, -INF, 1.2864337, INF]],
       [[0.82568, INF, INF, -1.7200019], [0.91848975, 0.37017393, -INF, -1.1290723]]]


def _ctc(lib, lp, targets, il, tl, grad, **kw):
    x = lib.tensor(lp, dtype=lib.float32, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loss = lib.nn.functional.ctc_loss(x, lib.tensor(targets), il, tl, **kw)
        loss.backward(lib.tensor(grad, dtype=lib.float32))
    return _np(loss), _np(x.grad)


@pytest.mark.parametrize("grad", [[1.0, 1.0], [-0.5, 2.0]])
def test_ctc_loss_infinite_log_probs(grad):
    args = (_LP, [[0, 2, 0], [1, 1, 1]], [3, 3], [3, 3], grad)
    for a, b in zip(_ctc(torch, *args, reduction="none"), _ctc(ember, *args, reduction="none")):
        _same(a, b)


def test_ctc_loss_empty_input():
    lp = np.log(np.full((3, 2, 4), 0.25, np.float32))
    for tl in ([0, 2], [1, 2]):
        args = (lp, [[1, 2], [1, 1]], [0, 3], tl, [1.0, 1.0])
        for a, b in zip(_ctc(torch, *args, reduction="none"),
                        _ctc(ember, *args, reduction="none")):
            _same(a, b)
            assert np.array_equal(np.signbit(a), np.signbit(b))


def test_ctc_loss_zero_infinity_keeps_minus_inf_loss_grad():
    lp = [[[0.97603875, -1.0028855, -INF, 0.39016628]], [[-0.11094055, INF, -INF, INF]]]
    args = (lp, [[2]], [2], [0], 1.0)
    kw = dict(blank=1, reduction="mean", zero_infinity=True)
    for a, b in zip(_ctc(torch, *args, **kw), _ctc(ember, *args, **kw)):
        _same(a, b)


def test_ctc_loss_random_inf_nan():
    rng = np.random.RandomState(5)
    for _ in range(40):
        t, n, c, L = rng.randint(1, 5), rng.randint(1, 3), rng.randint(2, 5), rng.randint(0, 4)
        lp = rng.randn(t, n, c).astype(np.float32)
        m = rng.rand(t, n, c)
        lp[m < 0.15], lp[(m > 0.15) & (m < 0.3)], lp[m > 0.97] = INF, -INF, NAN
        args = (lp, rng.randint(0, c, size=(n, max(L, 1))),
                [int(rng.randint(0, t + 1)) for _ in range(n)],
                [int(rng.randint(0, L + 1)) for _ in range(n)], rng.randn(n).astype(np.float32))
        kw = dict(blank=int(rng.randint(0, c)), reduction="none",
                  zero_infinity=bool(rng.rand() < 0.3))
        for a, b in zip(_ctc(torch, *args, **kw), _ctc(ember, *args, **kw)):
            _same(a, b)


# -- view scatters -------------------------------------------------------------------------

@pytest.mark.parametrize("name,extra", [("diagonal_scatter", ()), ("select_scatter", (0, 1)),
                                        ("slice_scatter", (1, 0, 2))])
@pytest.mark.parametrize("src_grad", [False, True])
def test_view_scatter_backward_src_without_grad(name, extra, src_grad):
    shapes = {"diagonal_scatter": (2,), "select_scatter": (3,), "slice_scatter": (2, 2)}
    out = []
    for lib in (torch, ember):
        x = lib.tensor(np.arange(6.0).reshape(2, 3) * (1 + 1j), requires_grad=True)
        src = lib.ones(shapes[name], dtype=lib.complex128, requires_grad=src_grad)
        if not src_grad:
            src = lib.tensor(np.full(shapes[name], 2))
        try:
            y = getattr(lib, name)(x, src, *extra)
            y.abs().sum().backward()
            out.append((_np(y), _np(x.grad), None if not src_grad else _np(src.grad)))
        except RuntimeError as e:
            out.append(type(e).__name__)
    if isinstance(out[0], str):
        assert out[0] == out[1]
        return
    for a, b in zip(*out):
        if a is None:
            assert b is None
        else:
            _same(a, b)


# -- index_add -----------------------------------------------------------------------------

@pytest.mark.parametrize("shape,dim", [((3,), 0), ((), 0), ((2, 3), 0), ((2, 3), 1),
                                       ((2, 3, 2), 1), ((2, 1, 3), -1)])
@pytest.mark.parametrize("idt", ["int64", "int32"])
@pytest.mark.parametrize("alpha", [1, 2])
def test_index_add_complex_inf(shape, dim, idt, alpha):
    out = []
    for lib in (torch, ember):
        x = lib.zeros(shape, dtype=lib.complex64) + 1j
        s = lib.ones(shape, dtype=lib.complex64)
        s[(0,) * len(shape)] = complex(INF, 0)
        n = shape[dim] if shape else 1
        idx = lib.tensor(list(range(n))[::-1], dtype=getattr(lib, idt))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(_np(x.index_add(dim, idx, s, alpha=alpha)))
            x.index_add_(dim, idx, s, alpha=alpha)
            out.append(_np(x))
    _same(out[0].reshape(-1).view(np.float32), out[2].reshape(-1).view(np.float32))
    _same(out[1].reshape(-1).view(np.float32), out[3].reshape(-1).view(np.float32))


@pytest.mark.parametrize("idt", ["int64", "int32"])
@pytest.mark.parametrize("dim", [0, 1])
def test_index_select_backward_complex_inf(idt, dim):
    out = []
    for lib in (torch, ember):
        x = lib.ones(2, 3, dtype=lib.complex64, requires_grad=True)
        y = x.index_select(dim, lib.tensor([1, 0], dtype=getattr(lib, idt)))
        g = lib.ones(y.shape, dtype=lib.complex64)
        g[0, 0] = complex(INF, 0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y.backward(g)
        out.append(_np(x.grad))
    _same(out[0].view(np.float32), out[1].view(np.float32))


# -- roll ----------------------------------------------------------------------------------

ROLL_ARGS = [((0,), 3, 2), ((0,), (1, 2), (0, 5)), ((2, 0), (1, 1), (7, -9)), ((0,), 1, None),
             ((), 1, 3), ((), (1, 1), (0, 5)), ((3,), 1, 3), ((3,), (1, 2), None),
             ((3,), (), None), ((3,), (), ()), ((3,), 1, ()), ((0, 2), (1, 1), (7,)),
             ((2, 3), (1, 1), (0, 5)), ((3,), 1.5, 0), ((3,), True, 0), ((3,), [1.5], 0),
             ((3, 3), [1, 1.5], [0, 1]), ((3, 3), (1, 1), (0, 1.5)), ((3,), 1, [0.5]),
             ((3,), None, 0), ((3, 3), [1, True], [0, 1]), ((), 2, None), ((2, 3), (1, 2), (0, 0))]


@pytest.mark.parametrize("shape,shifts,dims", ROLL_ARGS)
def test_roll(shape, shifts, dims):
    out = []
    for lib in (torch, ember):
        x = lib.arange(float(np.prod(shape)), requires_grad=True)
        try:
            y = lib.roll(x.reshape(shape), shifts) if dims is None else \
                lib.roll(x.reshape(shape), shifts, dims)
            y.backward(lib.arange(float(y.numel())).reshape(y.shape))
            out.append((_np(y), _np(x.grad), type(y.grad_fn).__name__))
        except (TypeError, RuntimeError, IndexError) as e:
            out.append((type(e).__name__, str(e)))
    if isinstance(out[0][0], str):
        assert out[0] == out[1]
    else:
        _same(out[0][0], out[1][0])
        _same(out[0][1], out[1][1])
        assert out[0][2] == out[1][2]
