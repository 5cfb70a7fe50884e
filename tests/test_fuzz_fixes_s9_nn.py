"""Regression tests (against torch) for session 9's nn fixes of differential-fuzzer classes:
``local_response_norm``'s view error before the pooling dtype error, the empty-input return of
``scaled_dot_product_attention``, ``F.normalize``'s graph and ``out=``, ``pairwise_distance``'s
empty-dimension error for negative and infinite ``p``, batch norm's check order (the strided
training mean's dtype error, F.batch_norm's size checks), float16 batch/instance norm in float32
opmath, ``instance_norm``'s cast of running statistics, CTC's NaN for an infinite log-probability
and ``nuclear_norm`` of a matrix with an infinity."""
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).parent))
from fuzz.ops import case_from_json, check_case  # noqa: E402

CASES = [
    '["F", "local_response_norm", [["T", [1, 2, 4, 4, 3], "complex64", "u", "t", false], 1], '
    '{}, 300012]',
    '["F", "scaled_dot_product_attention", [["T", [3, 0], "float32", "u", "c", false], ["T", '
    '[3, 1], "float32", "u", "c", false], ["T", [1, 0], "float32", "u", "s", false]], {}, 300037]',
    '["torch", "instance_norm", [["T", [2, 3, 1], "float16", "u", "s", true], ["T", [3], '
    '"float16", "u", "c", true], null, ["T", [3], "float16", "u", "c", false], ["T", [3], '
    '"float16", "pos", "c", false], true, 0.1, 1e-05, false], {}, 300034]',
    '["F", "instance_norm", [["T", [2, 3, 4], "float16", "u", "c", false], ["T", [3], '
    '"float64", "u", "c", false], ["T", [3], "float64", "pos", "c", false]], {}, 200017]',
    '["torch", "nuclear_norm", [["T", [2, 3], "float64", "x", "t", true]], {}, 300048]',
    '["torch", "nuclear_norm", [["T", [2, 2, 2], "float64", "x", "c", true]], {}, 400021]',
    '["torch", "nuclear_norm", [["T", [2, 2], "float64", "x", "t", true]], {}, 200009]',
    '["torch", "nuclear_norm", [["T", [2, 3], "complex128", "x", "c", true]], {}, 1020]',
    '["torch", "pairwise_distance", [["T", [3, 0], "float32", "u", "s", false], ["T", [1, 0], '
    '"float32", "u", "c", false], -1], {}, 300037]',
    '["torch", "pairwise_distance", [["T", [0], "float32", "u", "s", true], ["T", [1], '
    '"float32", "u", "c", false], -1], {}, 400013]',
    '["F", "ctc_loss", [["T", [3, 1, 4], "float64", "x", "c", true], ["T", [1, 2], "int32", '
    '["idx", 3], "c", false], [2], [1]], {"blank": 0, "reduction": "mean", "zero_infinity": '
    'false}, 400025]',
    '["torch", "ctc_loss", [["T", [3, 1, 4], "float64", "x", "c", true], ["T", [1, 2], '
    '"int32", ["idx", 3], "c", false], [2], [1], 0, 1, false], {}, 400025]',
    '["torch", "batch_norm", [["T", [2, 3], "int64", "u", "s", false], ["T", [3], "int64", '
    '"u", "c", false], ["T", [3], "int64", "u", "c", false], ["T", [3], "int64", "u", "c", '
    'false], ["T", [3], "int64", "pos", "c", false], true, 1.0, 1e-05, false], {}, 400022]',
    '["torch", "native_batch_norm", [["T", [2, 3], "int64", "u", "s", false], ["T", [3], '
    '"int64", "u", "c", false], ["T", [3], "int64", "u", "c", false], ["T", [3], "int64", "u", '
    '"c", false], ["T", [3], "int64", "pos", "c", false], true, 1.0, 1e-05], {}, 400022]',
]


@pytest.mark.parametrize("case", CASES)
def test_fuzzer_case(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert check_case(case_from_json(json.loads(case)), torch, timeout=60) is None


def _outcome(f):
    try:
        r = f()
    except Exception as e:  # noqa: BLE001  (compared between the libraries)
        return type(e).__name__, str(e)
    r = r[0] if isinstance(r, tuple) else r
    return str(r.dtype).split(".")[-1], tuple(r.shape), r.detach().double().numpy().round(3)


def _same(a, b):
    assert len(a) == len(b) and a[:2] == b[:2]
    if len(a) == 3:
        np.testing.assert_allclose(b[2], a[2], equal_nan=True)


def _layout(L, shape, dt, lay):
    if lay == "c":
        return L.ones(shape, dtype=dt)
    if lay == "s":
        return L.ones(tuple(shape[:-1]) + (shape[-1] * 2,), dtype=dt)[..., ::2]
    return L.ones(tuple(shape[:-2]) + (shape[-1], shape[-2]), dtype=dt).transpose(-1, -2)


@pytest.mark.parametrize("dt", ["bool", "int8", "int64", "complex64", "float16"])
@pytest.mark.parametrize("shape", [(1, 2, 3), (1, 2, 3, 2), (1, 2, 3, 2, 2)])
@pytest.mark.parametrize("tr", [False, True])
def test_local_response_norm_order(dt, shape, tr):
    res = []
    for L in (torch, ember):
        x = L.ones(shape, dtype=getattr(L, dt))
        x = x.transpose(-1, -2) if tr else x
        res.append(_outcome(lambda: L.nn.functional.local_response_norm(x, 2)))
    _same(*res)


SDPA_SHAPES = [((3, 0), (3, 1), (1, 0)), ((3, 2), (0, 2), (0, 4)), ((3, 2), (4, 2), (4, 0)),
               ((0, 2), (3, 5), (3, 1)), ((3, 0), (2, 0), (2, 2)), ((3, 0), (3, 1), (1, 2)),
               ((2, 2, 3, 0), (2, 2, 3, 1), (2, 2, 1, 0))]


@pytest.mark.parametrize("shapes", SDPA_SHAPES)
def test_sdpa_empty(shapes):
    res = []
    for L in (torch, ember):
        ts = [L.rand(s, requires_grad=True) for s in shapes]
        try:
            out = L.nn.functional.scaled_dot_product_attention(*ts)
        except RuntimeError as e:
            res.append(str(e))
            continue
        out.sum().backward()
        res.append((tuple(out.shape), type(out.grad_fn).__name__,
                    [type(f).__name__ for f, _ in out.grad_fn.next_functions],
                    [tuple(t.grad.shape) for t in ts], float(out.detach().abs().sum()) if
                    out.grad_fn.name() == "AddBackward0" else None))
    assert res[0] == res[1]


def test_normalize_graph_out_and_zero_norm():
    res = []
    a = np.zeros((1, 2, 3), np.float16)
    a[0, :, 1] = [0.5, -1.0]
    for L in (torch, ember):
        x = L.tensor(a, requires_grad=True)
        y = L.nn.functional.normalize(x, 2)
        y.backward(L.ones_like(y))
        g = y.grad_fn
        names = []
        while g is not None:
            names.append(type(g).__name__)
            g = ([None] + [f for f, _ in g.next_functions if f is not None])[-1]
        o = L.empty(2, 2)
        r = L.nn.functional.normalize(L.tensor([[3., 4.], [0., 0.]]), out=o)
        res.append((names, y.detach().float().numpy(), r is o, o.numpy()))
    assert res[0][0] == res[1][0] and res[0][2] == res[1][2]
    np.testing.assert_array_equal(res[1][1], res[0][1])
    np.testing.assert_allclose(res[1][3], res[0][3])


@pytest.mark.parametrize("p", [-1, -1.5, float("inf"), float("-inf"), 0.5, 2])
@pytest.mark.parametrize("shapes", [((3, 0), (1, 0)), ((0,), (1,)), ((2, 0, 3), (2, 0, 3))])
def test_pairwise_distance_empty_dim(p, shapes):
    res = []
    for L in (torch, ember):
        a, b = L.rand(shapes[0]), L.rand(shapes[1])
        res.append(_outcome(lambda: L.pairwise_distance(a, b, p)))
        res.append(_outcome(lambda: L.nn.functional.pairwise_distance(a, b, p, keepdim=True)))
    _same(res[0], res[2])
    _same(res[1], res[3])


def _bn_calls(L, x, p, tr, stats):
    F = L.nn.functional
    rm, rv = (p(), p()) if stats else (None, None)
    return {"bn": lambda: L.batch_norm(x, p(), p(), rm, rv, tr, 0.1, 1e-5, False),
            "nbn": lambda: L.native_batch_norm(x, p(), p(), rm, rv, tr, 0.1, 1e-5),
            "Fbn": lambda: F.batch_norm(x, rm, rv, p(), p(), tr),
            "in": lambda: L.instance_norm(x, p(), p(), rm, rv, tr, 0.1, 1e-5, False)}


@pytest.mark.parametrize("dt", ["int64", "int32", "bool", "complex64"])
@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 2), (4, 3, 2, 2)])
@pytest.mark.parametrize("lay", ["c", "s", "t"])
def test_batch_norm_dtype_error_order(dt, shape, lay):
    for tr in (True, False):
        for stats in (True, False):
            res = []
            for L in (torch, ember):
                x = _layout(L, shape, getattr(L, dt), lay)
                calls = _bn_calls(L, x, lambda: L.ones(3, dtype=getattr(L, dt)), tr, stats)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res.append({k: _outcome(f)[:2] for k, f in calls.items()})
            assert res[0] == res[1], (tr, stats)


def test_batch_norm_check_order():
    res = []
    for L in (torch, ember):
        F = L.nn.functional
        out = []
        for dt in (L.int64, L.float32):
            x = L.ones(2, 3, dtype=dt)
            xt = L.ones(3, 2, dtype=dt).t()

            def p(n=3):
                return L.ones(n, dtype=dt)
            calls = [lambda: F.batch_norm(x, None, None, training=False, eps=-1),
                     lambda: F.batch_norm(x, p(), None, training=False),
                     lambda: F.batch_norm(x, p(4), None, training=False),
                     lambda: F.batch_norm(x, p(4), p(4), training=True),
                     lambda: F.batch_norm(xt, p(4), p(4), training=True),
                     lambda: F.batch_norm(L.ones(0, 3, dtype=dt), None, None, training=True),
                     lambda: F.batch_norm(L.ones(1, 3, 1, dtype=dt), None, None, training=True)]
            if dt == L.int64:   # (torch crashes on some of these with float inputs)
                calls += [lambda: L.native_batch_norm(x, None, None, None, None, False, 0.1,
                                                      1e-5),
                          lambda: L.native_batch_norm(x, None, None, p(), None, False, 0.1,
                                                      1e-5),
                          lambda: L.native_batch_norm(x, p(4), None, p(), p(), False, 0.1,
                                                      1e-5),
                          lambda: L.native_batch_norm(L.ones(0, 3, dtype=dt), None, None, None,
                                                      None, False, 0.1, 1e-5),
                          lambda: L.native_batch_norm(xt, p(4), None, None, None, True, 0.1,
                                                      1e-5),
                          lambda: L.native_batch_norm(L.ones(3, dtype=dt), None, None, None,
                                                      None, True, 0.1, 1e-5)]
            out += [_outcome(f)[:2] for f in calls]
        res.append(out)
    assert res[0] == res[1]


@pytest.mark.parametrize("mode", ["train", "eval", "train_noaffine", "train_f32", "eval_f32"])
def test_batch_norm_float16_opmath(mode):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((3, 4, 5)) * 3).astype(np.float16)
    pdt = np.float32 if "f32" in mode else np.float16
    w, b, rm = (rng.standard_normal(4).astype(pdt) for _ in range(3))
    rv = (rng.random(4) + 0.2).astype(pdt)
    res = []
    for L in (torch, ember):
        W, B, RM, RV = (L.tensor(a.copy()) for a in (w, b, rm, rv))
        if "noaffine" in mode:
            W = B = None
        out = L.batch_norm(L.tensor(x), W, B, RM, RV, mode.startswith("train"), 0.1, 1e-5,
                           False)
        res.append([out.float().numpy(), RM.float().numpy(), RV.float().numpy()])
    np.testing.assert_array_equal(res[1][0], res[0][0])
    np.testing.assert_array_equal(res[1][1], res[0][1])
    np.testing.assert_allclose(res[1][2], res[0][2], rtol=1e-6)


@pytest.mark.parametrize("xdt", ["float16", "float32", "float64"])
@pytest.mark.parametrize("pdt", ["float16", "float32", "float64"])
@pytest.mark.parametrize("sdt", ["float16", "float32", "float64"])
def test_instance_norm_stats_dtypes(xdt, pdt, sdt):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4))
    ps = [rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal(3),
          rng.random(3) + 0.5]
    for use in (True, False):
        for f in ("T", "F"):
            res = []
            for L in (torch, ember):
                X = L.tensor(x, dtype=getattr(L, xdt))
                w, b, rm, rv = (L.tensor(a, dtype=getattr(L, d))
                                for a, d in zip(ps, (pdt, pdt, sdt, sdt)))

                def call():
                    if f == "T":
                        return L.instance_norm(X, w, b, rm, rv, use, 0.1, 1e-5, False)
                    return L.nn.functional.instance_norm(X, rm, rv, w, b, use)
                r = _outcome(call)
                res.append(r + ((rm.double().numpy(), rv.double().numpy()) if len(r) == 3
                                else ()))
            _same(res[0][:3], res[1][:3])
            if len(res[0]) == 5:
                np.testing.assert_allclose(res[1][3], res[0][3], rtol=1e-3)
                np.testing.assert_allclose(res[1][4], res[0][4], rtol=1e-3)


def test_instance_norm_one_implementation():
    assert ember._torch_ns.instance_norm.__code__.co_names.count("instance_norm_cxx") == 1


@pytest.mark.parametrize("tgt", [0, 1, 2])
def test_ctc_infinite_log_prob(tgt):
    lp = np.array([[[-np.inf, 0.36, np.inf, -0.0]], [[0.48, -0.89, 0.62, -np.inf]],
                   [[-np.inf, 1.74, -0.31, 0.64]]])
    res = []
    for L in (torch, ember):
        for red in ("none", "mean", "sum"):
            r = L.nn.functional.ctc_loss(L.tensor(lp), L.tensor([[tgt + 1, 1]]), [2], [1],
                                         reduction=red)
            res.append(r.numpy())
    for a, b in zip(res[:3], res[3:]):
        np.testing.assert_array_equal(b, a)


def test_nuclear_norm_infinite():
    m = np.array([[[1., np.inf, 2.], [0., 1., 3.]], [[1., 2., 0.], [3., 4., 1.]]])
    res = []
    for L in (torch, ember):
        out = []
        for dim, keep in (((-2, -1), False), ((0, 2), True)):
            x = L.tensor(m, requires_grad=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = L.nuclear_norm(x, dim=dim, keepdim=keep)
            r.sum().backward()
            out += [r.detach().numpy(), x.grad.numpy()]
        try:
            L.nuclear_norm(L.tensor([[1., np.nan], [np.inf, 2.]]))
            out.append("returned")
        except Exception as e:  # noqa: BLE001
            out.append(type(e).__name__)
        res.append(out)
    for a, b in zip(*res):
        if isinstance(a, str):
            assert a == b
        else:
            np.testing.assert_allclose(b, a, equal_nan=True)
