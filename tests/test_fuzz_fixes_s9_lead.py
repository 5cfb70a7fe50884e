"""Regression tests (against torch) for session 9's lead fixes of differential-fuzzer classes:
``linalg.lstsq``'s size error for a vector ``other``, integer ``div(rounding_mode='trunc')`` at
INT64_MIN, the in-place result-type check of ``floor_divide_``/``fmod_``/``remainder_``/``pow_``
(made before the kernel's dtype check), and complex ``pow``/``reciprocal`` of a zero base (torch's
``exp(b * log(a))``: ``inf+nanj``), with their gradients."""
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

CASES = [
    '["linalg", "lstsq", [["T", [3, 0], "float64", "u", "c", true], ["T", [0], "float64", "u", '
    '"c", true], -2], {}, 200023]',
    '["opdb", "div_trunc", [1, "int64", true, "c"], {}, 200020]',
    '["Tensor", "floor_divide_", [["T", [2, 3], "float64", "x", "c", true], ["T", [2, 3], '
    '"complex64", "u", "c", false]], {}, 1064]',
    '["Tensor", "fmod_", [["T", [2, 3], "float64", "x", "c", true], ["T", [2, 3], "complex64", '
    '"u", "c", false]], {}, 1064]',
    '["Tensor", "lerp_", [["T", [3], "bool", "x", "s", false], ["T", [3], "bool", "u", "c", '
    'false], -1], {}, 1045]',
    '["Tensor", "pow_", [["T", [3], "complex64", "x", "c", true], -1], {}, 1152]',
    '["torch", "pow", [["T", [4], "float32", "u", "c", true], ["T", [4], "complex128", "x", "c", '
    'true]], {}, 1118]',
    '["torch", "pow", [0, ["T", [2, 3], "complex128", "u", "c", true]], {}, 1041]',
    '["torch", "float_power", [0, ["T", [2, 3], "complex128", "u", "c", true]], {}, 1041]',
]


@pytest.mark.parametrize("case", CASES)
def test_fuzzer_case(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert check_case(case_from_json(json.loads(case)), torch, timeout=60) is None


def test_int_trunc_division_extremes():
    a = np.array([-2**63, -2**63, 7, -7, 7, -7, -2**63, 2**63 - 1], dtype=np.int64)
    b = np.array([-4, 3, 2, 2, -2, -2, 1, -3], dtype=np.int64)
    want = torch.div(torch.tensor(a), torch.tensor(b), rounding_mode="trunc").numpy()
    got = ember.div(ember.tensor(a), ember.tensor(b), rounding_mode="trunc").numpy()
    np.testing.assert_array_equal(got, want)
    for dt in (np.uint8, np.int8, np.int16, np.int32):
        info = np.iinfo(dt)
        x = np.array([info.min, info.max, 5, info.min + 1], dtype=dt)
        y = np.array([3, 7, -2 if info.min < 0 else 2, 2], dtype=dt)
        want = torch.div(torch.tensor(x), torch.tensor(y), rounding_mode="trunc").numpy()
        got = ember.div(ember.tensor(x), ember.tensor(y), rounding_mode="trunc").numpy()
        np.testing.assert_array_equal(got, want)


ZS = [0j, complex(-0.0, 0), complex(0, -0.0), 1 + 2j, -3 + 0.5j]
WS = [-1, -2, -0.5, 0.5, 2, 2.5, 3, 0, -1 + 1j, -1j, 1j, 1 + 1j, 2 - 3j]


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_complex_pow_zero_base(dt):
    z = np.array([a for a in ZS for _ in WS], dt)
    w = np.array([b for _ in ZS for b in WS], dt)
    res = []
    for L in (torch, ember):
        a, b = L.tensor(z), L.tensor(w)
        scalar = [a.pow(float(v.real)).numpy() for v in w[:8]]
        res.append([a.pow(b).numpy(), a.reciprocal().numpy(), (0j ** b).numpy(),
                    L.pow(0, b).numpy()] + scalar)
    for x, y in zip(*res):
        np.testing.assert_allclose(y, x, rtol=2e-6, atol=0, equal_nan=True)


def test_complex_pow_exponent_grad_of_real_base():
    for L in (torch, ember):
        a = L.tensor([-1.5, 2.0, 0.0], requires_grad=True)
        b = L.tensor([0.5 + 1j, 2 - 1j, -1 + 0j], dtype=L.complex128, requires_grad=True)
        L.pow(a, b).sum().abs().backward()
        if L is torch:
            want = (a.grad.numpy(), b.grad.numpy())
        else:
            np.testing.assert_allclose(a.grad.numpy(), want[0], rtol=1e-6, equal_nan=True)
            np.testing.assert_allclose(b.grad.numpy(), want[1], rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("shapes", [((4,), (1,)), ((1,), (4,)), ((3,), (3,)), ((2, 4), (1,)),
                                    ((4,), (2, 4)), ((), ())])
@pytest.mark.parametrize("dim", [-1, 0, 5])
def test_vecdot_one_dim_is_vdot(shapes, dim):
    """Two 1-D tensors take torch's vdot path (no broadcasting, dim unchecked, VdotBackward0)."""
    res = []
    for L in (torch, ember):
        x = L.arange(1.0, 1.0 + np.prod(shapes[0])).reshape(shapes[0]).requires_grad_()
        y = L.ones(shapes[1])
        try:
            r = L.linalg.vecdot(x, y, dim=dim)
            res.append((r.shape, r.detach().numpy().tolist(), type(r.grad_fn).__name__))
        except Exception as e:  # noqa: BLE001
            res.append((type(e).__name__, str(e)))
    assert res[0] == res[1]


def test_fuzzer_accepts_torch_partial_write_before_error():
    """torch's scatter_reduce_ writes its identity into self before raising for complex amin;
    ember raises and changes nothing (the project's rule), and the fuzzer accepts that."""
    case = ('["Tensor", "scatter_reduce_", [["T", [2, 2, 2], "complex64", "u", "c", true], 0, '
            '["T", [3, 2, 2], "int64", ["idx", 2], "c", false], ["T", [3, 2, 2], "complex64", '
            '"u", "c", false], "amin"], {"include_self": false}, 300012]')
    c = case_from_json(json.loads(case))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fuzz.ops import run_case
        assert run_case(ember, c)[5] is True           # ember: raised, inputs unchanged
        assert run_case(torch, c)[5] is False          # torch: raised after writing
        assert check_case(c, torch, timeout=60) is None


def _outcome(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn()
        except Exception as e:  # noqa: BLE001
            return (type(e).__name__, str(e))
    if hasattr(r, "numpy"):
        return (str(r.dtype), r.numpy().tolist())
    return ("value", r)


_BINARY = ["add", "sub", "mul", "div", "floor_divide", "remainder", "fmod", "true_divide",
           "rsub", "pow", "atan2", "maximum", "xlogy", "copysign", "hypot", "bitwise_and", "eq",
           "lt", "ne"]
_NUMBERS = [-2, -1, 300, -300, 2**63, 2**64, -2**63 - 1, 2**40, -2.5, True]


@pytest.mark.parametrize("op", _BINARY)
def test_numbers_out_of_dtype_range(op):
    """A Python number out of the tensor dtype's range (either side): torch's wrap, float
    result, OverflowError or promotion error."""
    bad = []
    for dt in ["uint8", "int8", "int16", "int32", "int64", "bool", "float16", "float32"]:
        for sc in _NUMBERS:
            for rev in (False, True):
                res = []
                for L in (torch, ember):
                    t = L.tensor(np.array([5, 3, 1]).astype(dt))
                    f = getattr(L, op)
                    res.append(_outcome(lambda: f(sc, t) if rev else f(t, sc)))
                if op in ("sub", "rsub") and dt == "bool" and sc == 2**63 and rev:
                    continue    # (ember's promotion error before torch's bool-subtraction one)
                a, b = res
                same = a == b or (a[0] == b[0] and not isinstance(a[1], str) and np.allclose(
                    np.array(a[1], float), np.array(b[1], float), equal_nan=True))
                if not same:
                    bad.append((dt, sc, rev, a, b))
    assert not bad, bad[:3]


@pytest.mark.parametrize("expr", [
    lambda L, t: t == [1, 2], lambda L, t: t != None, lambda L, t: t == None,  # noqa: E711
    lambda L, t: t == "a", lambda L, t: t < (1, 2), lambda L, t: L.eq(t, [1, 2]),
    lambda L, t: L.eq([1, 2], t), lambda L, t: L.eq(2, t), lambda L, t: L.lt(t, None),
    lambda L, t: t + [1], lambda L, t: L.add(t, [1]), lambda L, t: L.sub(t, None),
    lambda L, t: [1] - t, lambda L, t: L.fmod(2, t), lambda L, t: L.rsub(2, t),
    lambda L, t: t == np.float32(1), lambda L, t: -2 // t.to(L.uint8),
    lambda L, t: 300 % t.to(L.uint8)])
def test_operands_torch_refuses(expr):
    """Comparisons and arithmetic take tensors and numbers only (torch's TypeError; ``==`` with
    anything else falls back to Python's identity, so ``t == None`` is False)."""
    got = [_outcome(lambda: expr(L, L.ones(2))) for L in (torch, ember)]
    if got[0][0] == "TypeError":      # (an operator's wording is Python's, a function's torch's)
        assert got[1][0] == "TypeError"
    else:
        assert got[0] == got[1]


@pytest.mark.parametrize("bounds", [(math.nan, 1.0), (-1.0, math.nan), (math.nan, math.nan)])
def test_hardtanh_nan_bound(bounds):
    # (gradients compared on torch's vectorised part: its scalar tail loop passes them)
    res = []
    for L in (torch, ember):
        x = L.linspace(-2, 2, 40)
        x[3] = math.nan
        x.requires_grad_()
        y = L.nn.functional.hardtanh(x, *bounds)
        y.backward(L.ones(40))
        res.append((y.detach().numpy(), x.grad.numpy()[:32]))
    for a, b in zip(*res):
        np.testing.assert_array_equal(a, b)


def test_vector_norm_empty_dim_errors():
    for shp in ((2, 0), (0,), (0, 3), (2, 3)):
        for d in (None, 1, (0, 1), -1, [], 0, (5, 1)):
            for o in (-1, math.inf, -1.5, 2):
                got = [_outcome(lambda: L.linalg.vector_norm(L.ones(shp), ord=o, dim=d).shape)
                       for L in (torch, ember)]
                assert got[0] == got[1], (shp, d, o)


_LSTSQ_A = [(3, 2), (2, 3), (3, 0), (0, 2), (2, 3, 2), (2, 1, 3), (1, 3, 2), (4, 2, 3, 2)]
_LSTSQ_B = [(3,), (2,), (0,), (3, 1), (3, 2), (2, 3), (1, 3), (2, 3, 1), (1, 3, 2), (3, 3, 2),
            (4, 2, 3), (2, 2, 3, 1), (1, 1)]


@pytest.mark.parametrize("sa", _LSTSQ_A)
def test_lstsq_shapes_as_torch(sa):
    """torch's rules for ``other``: a vector (1-D, or input's batch shape), else a matrix whose
    shape[:-1] is the batch when it has one dim fewer; torch's errors in torch's order."""
    for sb in _LSTSQ_B:
        got = []
        for L in (torch, ember):
            A = L.tensor(np.random.default_rng(0).standard_normal(sa))
            B = L.tensor(np.random.default_rng(1).standard_normal(sb))
            got.append(_outcome(lambda: L.linalg.lstsq(A, B).solution))
        if got[0][0] == "torch.float64":
            np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-6, atol=1e-8)
        else:
            assert got[0] == got[1], (sa, sb)


@pytest.mark.parametrize("op", ["median", "nanmedian"])
def test_median_of_empty_complex_needing_grad(op):
    for shp in [(0,), (3,), (2, 0)]:
        for kw in [{}, {"dim": 0}]:
            for rg in (True, False):
                got = [_outcome(lambda: getattr(L, op)(
                    L.zeros(shp, dtype=L.complex128, requires_grad=rg), **kw)[0].shape
                    if kw else getattr(L, op)(L.zeros(shp, dtype=L.complex128,
                                                      requires_grad=rg)).shape)
                    for L in (torch, ember)]
                assert got[0][0] == got[1][0], (shp, kw, rg, got)


def test_scatter_reduce_dim_checked_before_dtypes():
    got = [_outcome(lambda: L.zeros(2, 2, dtype=L.float64).scatter_reduce(
        4, L.zeros(2, 2, dtype=L.int64), L.zeros(2, 2), "sum")) for L in (torch, ember)]
    assert got[0] == got[1]


def _graph(fn):
    names = [type(fn).__name__]
    names += [type(n[0]).__name__ for n in fn.next_functions if n[0] is not None]
    return names


@pytest.mark.parametrize("case", ["sibling", "base", "view_of_view"])
def test_stale_view_grad_fn_regenerated_on_access(case):
    """A view whose base (or a sibling view) changed in place shows torch's regenerated node,
    AsStridedBackward0 on the base's new one, as soon as ``grad_fn`` is read; its gradient too."""
    got = []
    for L in (torch, ember):
        leaf = L.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        x = leaf.clone()
        a, b = x[:2], x[2:]
        v = b[1:] if case == "view_of_view" else b
        if case == "base":
            x.mul_(3)
        else:
            a.mul_(2)
        g = _graph(v.grad_fn)
        v.sum().backward()
        got.append((g, leaf.grad.numpy().tolist()))
    assert got[0] == got[1]


@pytest.mark.parametrize("expr", [
    lambda L, x: x.sum(1.0), lambda L, x: x.select(0, 1.0), lambda L, x: x.select(0, L.tensor(1)),
    lambda L, x: x.chunk(2.0), lambda L, x: x.view(3.0, 2), lambda L, x: x.reshape(3.0, 2),
    lambda L, x: x.repeat(2.0, 1), lambda L, x: x.expand(2.0, 3), lambda L, x: x.squeeze(True),
    lambda L, x: x.sum(True), lambda L, x: x.select(True, 0), lambda L, x: x.view(L.tensor(3), 2),
    lambda L, x: x.permute(1.0, 0), lambda L, x: x.view(np.int64(3), 2),
    lambda L, x: x.narrow(0, L.tensor(1), 1), lambda L, x: x.narrow(0, L.tensor(1.0), 1),
    lambda L, x: x.narrow(0, True, 1), lambda L, x: x.narrow(0, L.tensor([1]), 1)])
def test_int_arguments_refuse_floats_and_bools(expr):
    """Sizes, dims and indices take ints (NumPy ints, 0-d integral tensors), not floats or
    bools: torch's TypeError (or RuntimeError for a tensor start of narrow)."""
    got = [_outcome(lambda: tuple(expr(L, L.arange(6.0).reshape(2, 3)).shape))
           for L in (torch, ember)]
    assert got[0][0] == got[1][0], got


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_half_softmax_in_float32(op, dtype):
    """float16/bfloat16 softmax is computed in float32 and rounded once, as torch's CPU kernel
    (within one unit in the last place of torch's: its vectorised exp differs from NumPy's)."""
    x = np.random.default_rng(0).standard_normal((64, 10)).astype(np.float32)
    for dim in (0, 1):
        t = getattr(torch.tensor(x).to(getattr(torch, dtype)), op)(dim).float().numpy()
        e = getattr(ember.tensor(x).to(getattr(ember, dtype)), op)(dim).float().numpy()
        ulp = 2.0 ** (-10 if dtype == "float16" else -7)
        assert np.all(np.abs(t - e) <= ulp * np.maximum(np.abs(t), 2.0 ** -14))


@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16", "int64", "int32"])
def test_logspace_bit_exact(dt):
    """torch's CPU kernel: start/end in the dtype, each half counted from its own end, one
    pow in double, rounded once."""
    for (s, e, st) in [(0, 1, 5), (-2, 2, 7), (0, 3, 100), (1, 10, 33), (-5, 5, 1000),
                       (0.5, 2.5, 11), (3, -1, 9), (0, 1, 1), (0, 1, 2), (0, 1, 0)]:
        for base in (10.0, 2.0, 2.718281828, 0.5):
            t = torch.logspace(s, e, st, base=base, dtype=getattr(torch, dt)).float().numpy()
            m = ember.logspace(s, e, st, base=base, dtype=getattr(ember, dt)).float().numpy()
            np.testing.assert_array_equal(m, t)


@pytest.mark.parametrize("k", range(10))
def test_full_with_complex_and_out_of_range_values(k):
    exprs = [lambda L: L.full((2,), 1 + 2j, dtype=L.float32), lambda L: L.full((2,), 1 + 2j),
             lambda L: L.full((2,), 3 + 0j), lambda L: L.full((2,), 1e40, dtype=L.float32),
             lambda L: L.full_like(L.ones(2), 1 + 2j), lambda L: L.ones(2).new_full((2,), 1 + 2j),
             lambda L: L.full((1,), 1 + 2j, dtype=L.float16),
             lambda L: L.full((2,), 3 + 0j, dtype=L.int64),
             lambda L: L.full((2,), 1 + 2j, dtype=L.bool),
             lambda L: L.full((1,), 1e40, dtype=L.float16)]
    got = [_outcome(lambda: exprs[k](L)) for L in (torch, ember)]
    assert got[0] == got[1]


def test_bernoulli_of_empty_complex_needing_grad():
    got = [_outcome(lambda: L.bernoulli(L.zeros(0, dtype=L.complex64, requires_grad=True)).shape)
           for L in (torch, ember)]
    assert got[0] == got[1]


@pytest.mark.parametrize("k", range(4))
def test_view_scatter_casts_src_inside(k):
    """The *_scatter ops cast ``src`` inside (no node of their own, as torch): a float32 ``src``
    of a float64 input links straight to its node; a real ``src`` of a complex input fails the
    engine's complex-to-real check in backward, as torch."""
    exprs = [lambda L, x, s: L.as_strided_scatter(x, s, (2, 3), (4, 1), 1),
             lambda L, x, s: L.diagonal_scatter(x, s[0, :3], 0),
             lambda L, x, s: L.diagonal_scatter(x.real, s[0, :3], 0),
             lambda L, x, s: L.select_scatter(x.real, s[0, :3].sum() * L.ones(4), 0, 1)]
    got = []
    for L in (torch, ember):
        x, s = L.zeros(3, 4, dtype=L.complex128), L.ones(2, 3, requires_grad=True)

        def run():
            r = exprs[k](L, x, s)
            graph = _graph(r.grad_fn)
            r.abs().sum().backward()
            return graph, str(s.grad.dtype)
        got.append(_outcome(run))
    assert got[0] == got[1]


def test_eig_of_non_finite_input():
    """eig refuses inf/NaN with torch's message; eigvals gives NaN for a matrix holding an
    infinity (torch's LAPACK value) and keeps finite matrices of the batch."""
    for v in ([[1.0, math.inf], [0, 1]], [[1.0, math.nan], [0, 1]]):
        got = [_outcome(lambda: L.linalg.eig(L.tensor(v))) for L in (torch, ember)]
        assert got[0] == got[1]
    batch = [[[1.0, math.inf], [0, 1]], [[2.0, 0], [0, 3]]]
    t, e = (L.linalg.eigvals(L.tensor(batch)).numpy() for L in (torch, ember))
    np.testing.assert_allclose(e, t, equal_nan=True)


@pytest.mark.parametrize("k", range(9))
def test_index_dtype_and_check_order_leftovers(k):
    """renorm's check order, max_unpool's int64-only indices, embedding_renorm_'s Long/Int
    indices, repeat_interleave's Int/Long repeats: torch's errors."""
    exprs = [lambda L: L.renorm(L.ones(2, 1, 3, dtype=L.int32), 2, 4, 1.0),
             lambda L: L.renorm(L.ones(2, 2, dtype=L.bool), 2, 0, 1.0),
             lambda L: L.renorm(L.ones(3), -1, 0, 1.0),
             lambda L: L.nn.functional.max_unpool2d(
                 L.ones(1, 1, 1, 2), L.tensor([[[[0, 1]]]], dtype=L.int32), 2),
             lambda L: L.nn.functional.max_unpool3d(
                 L.ones(1, 1, 1, 1, 2), L.tensor([[[[[0, 1]]]]], dtype=L.int32), 2),
             lambda L: L.embedding_renorm_(L.ones(5, 3), L.tensor([1, 2], dtype=L.int32), 0.5, 2.0),
             lambda L: L.embedding_renorm_(L.ones(5, 3), L.tensor([1.0, 2.0]), 0.5, 2.0),
             lambda L: L.repeat_interleave(L.tensor([2], dtype=L.uint8)),
             lambda L: L.repeat_interleave(L.tensor([2], dtype=L.int32))]
    got = [_outcome(lambda: exprs[k](L)) for L in (torch, ember)]
    assert got[0] == got[1]


def test_l1_loss_broadcasts_before_promoting():
    """A 0-d float64 target of a float32 input: torch broadcasts first, so the loss is
    float64 (and gets ExpandBackward0)."""
    for sa in [(0,), (3,), (2, 3)]:
        got = []
        for L in (torch, ember):
            a = L.ones(sa, requires_grad=True)
            b = L.tensor(0.5, dtype=L.float64, requires_grad=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = L.nn.functional.l1_loss(a, b)
            got.append((str(r.dtype), _graph(r.grad_fn)))
        assert got[0] == got[1]


def test_pdist_zero_norm_propagates_nan():
    rows = [[[math.nan, 1.0, 2.0], [1.0, 1.0, math.inf]], [[math.inf, 1.0, 2.0], [1, 1, math.inf]],
            [[1.0, 2.0, 3.0], [1.0, 5.0, 3.0], [0.5, 2, 3]]]
    for x in rows:
        t, e = (L.nn.functional.pdist(L.tensor(x), 0).numpy() for L in (torch, ember))
        np.testing.assert_array_equal(e, t)
