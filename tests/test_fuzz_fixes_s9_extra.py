"""Regression tests (against torch) for session 9's fixes of differential-fuzzer classes in
extra/activation/reduction/sorting: softmax/log_softmax's dim check before the complex-autograd
error, amax/amin/max/min/aminmax's size checks before the complex error, trace's Bool error
first, addbmm_ of an integer input over no batch, ldexp's gradient (``grad * pow(2, other)``,
integer powers wrapping), addr's complex gradient for a real input, unique's NaNs and empty
dims, isin's ``view(-1)`` of few test elements, copysign of an unsigned tensor by a negative
number (and copysign_'s output checks before its kernel's), ldexp's ``pow(2, other)`` rounded
to ``other``'s float dtype."""
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
    '["Tensor", "addbmm_", [["T", [1, 2], "int32", "u", "s", false], ["T", [0, 1, 0], "float32", '
    '"u", "t", true], ["T", [0, 0, 2], "float32", "u", "c", true]], {}, 300028]',
    '["Tensor", "amax", [["T", [0], "complex128", "u", "c", true], -1], {}, 300039]',
    '["torch", "amin", [["T", [0], "complex128", "u", "c", true], -1], {}, 300039]',
    '["torch", "amax", [["T", [0], "complex128", "u", "c", true], 0], {}, 1018]',
    '["Tensor", "ldexp_", [["T", [3], "float32", "x", "c", true], ["T", [3], "int64", "u", "c", '
    'false]], {}, 300010]',
    '["torch", "ldexp_", [["T", [3], "float32", "x", "c", true], ["T", [3], "int64", "u", "c", '
    'false]], {}, 300010]',
    '["Tensor", "log_softmax", [["T", [0], "complex128", "u", "c", true], 1], {}, 300039]',
    '["special", "softmax", [["T", [0], "complex128", "u", "c", true], 1], {}, 300039]',
    '["torch", "softmax", [["T", [0], "complex128", "u", "c", true], 1], {}, 300039]',
    '["torch", "trace", [["T", [2, 2, 2], "bool", "u", "c", false]], {}, 300011]',
    '["torch", "unique", [["T", [3, 0], "float64", "u", "c", true]], {"dim": -2}, 300032]',
    '["Tensor", "unique", [["T", [1, 2, 4, 2], "float16", "x", "s", false]], {}, 300046]',
    '["torch", "unique_consecutive", [["T", [0], "float32", "u", "c", true]], {"dim": 0}, 300051]',
    '["torch", "isin", [NaN, ["T", [2, 2, 2], "float64", "u", "t", true]], {}, 300056]',
    '["torch", "isin", [2, ["T", [2, 3], "uint8", "u", "t", false]], {}, 200036]',
    '["Tensor", "addr", [["T", [2, 1], "complex128", "u", "c", false], ["T", [2], "float64", "u", '
    '"c", true], ["T", [1], "complex128", "u", "c", false]], {}, 400015]',
    '["Tensor", "addr_", [["T", [2, 1], "complex128", "u", "c", false], ["T", [2], "float64", "u", '
    '"c", true], ["T", [1], "complex128", "u", "c", false]], {}, 400015]',
    '["torch", "ldexp_", [["T", [1], "float64", "u", "c", true], ["T", [1], "float16", "u", "c", '
    'true]], {}, 1085]',
    '["Tensor", "copysign_", [["T", [2, 3], "float64", "x", "c", true], ["T", [2, 3], '
    '"complex64", "u", "c", false]], {}, 1064]',
]


@pytest.mark.parametrize("case", CASES)
def test_fuzzer_case(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert check_case(case_from_json(json.loads(case)), torch, timeout=60) is None


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001  (compared between the libraries)
        return type(e).__name__, str(e)
    rs = r if isinstance(r, tuple) else (r,)
    return [(tuple(x.shape), str(x.dtype).split(".")[-1], np.asarray(x.detach().tolist()))
            for x in rs]


def _same(f):
    want, got = _outcome(lambda: f(torch)), _outcome(lambda: f(ember))
    if isinstance(want, tuple) or isinstance(got, tuple):
        assert got == want
    else:
        assert [w[:2] for w in want] == [g[:2] for g in got]
        for w, g in zip(want, got):
            np.testing.assert_array_equal(g[2], w[2])


SHAPES = [(0,), (2, 0), (0, 2), (), (3,)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("dtype", ["complex128", "float32", "bool"])
def test_extreme_reductions_check_order(shape, grad, dtype):
    grad = grad and dtype != "bool"
    for dim in [None, (), -1, 0, (0,), 5]:
        for op in ("amax", "amin"):
            _same(lambda L: getattr(L, op)(L.zeros(shape, dtype=getattr(L, dtype),
                                                   requires_grad=grad),
                                           *(() if dim is None else (dim,))))
    for dim in [None, 0, -1, 5]:
        for op in ("max", "min"):
            _same(lambda L: getattr(L, op)(L.zeros(shape, dtype=getattr(L, dtype),
                                                   requires_grad=grad),
                                           *(() if dim is None else (dim,))))
        _same(lambda L: L.aminmax(L.zeros(shape, dtype=getattr(L, dtype), requires_grad=grad),
                                  dim=dim))


def test_amax_names_the_dim_as_given():
    for shape, dims in [((0, 0), (-1, 0)), ((0, 0), (0, -1)), ((3, 0), (0, -1)),
                        ((3, 0), (-2, 1))]:
        _same(lambda L: L.amax(L.zeros(shape), dims))


def test_softmax_family_checks_dim_first():
    import torch.nn.functional as TF

    import ember.nn.functional as EF
    for dim in (1, 0, -2):
        for f in (lambda L, F: L.softmax(L.zeros(0, dtype=L.complex128, requires_grad=True), dim),
                  lambda L, F: L.log_softmax(L.zeros(0, dtype=L.complex128, requires_grad=True),
                                             dim),
                  lambda L, F: F.softmin(L.zeros(0, dtype=L.complex128, requires_grad=True), dim),
                  lambda L, F: F.softmax(L.zeros(0, requires_grad=True), dim,
                                         dtype=L.complex64)):
            want = _outcome(lambda: f(torch, TF))
            got = _outcome(lambda: f(ember, EF))
            assert (got if isinstance(got, tuple) else "ok") == \
                (want if isinstance(want, tuple) else "ok")


def test_trace_bool_error_first():
    for shape in [(2, 2, 2), (2,), (), (2, 3)]:
        _same(lambda L: L.trace(L.ones(shape, dtype=L.bool)))
        _same(lambda L: L.trace(L.ones(shape)))


def test_addbmm_inplace_integer_no_batch():
    for kw in [{}, {"beta": 3}, {"beta": 0}, {"alpha": 2.5}, {"beta": 0.5}]:
        _same(lambda L: L.ones((1, 2), dtype=L.int32).addbmm_(
            L.zeros((0, 1, 0), requires_grad=True), L.zeros((0, 0, 2), requires_grad=True), **kw))


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8"])
def test_ldexp_grad_is_integer_power(dtype):
    e = np.array([0, 1, 3, 7, 8, 15, 16, 30, 31, 32, 62, 63, 64, 65])
    if dtype != "uint8":
        e = np.concatenate([e, [-1, -3]])
    grads = []
    for L in (torch, ember):
        a = L.ones(e.shape, requires_grad=True)
        b = L.tensor(e.astype(dtype))
        L.ldexp(a, b).backward(L.ones(e.shape))
        c = L.ones(e.shape, requires_grad=True)
        d = c.clone()
        d.ldexp_(b)
        d.backward(-L.ones(e.shape))
        grads.append((a.grad.numpy(), c.grad.numpy()))
    for w, g in zip(*grads):
        np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(np.signbit(g), np.signbit(w))


def test_ldexp_grad_float_and_complex_exponent():
    out = []
    for L in (torch, ember):
        a = L.ones(2, requires_grad=True)
        b = L.tensor([20.0, 3.0], dtype=L.float16)
        L.ldexp(a, b).backward(L.ones(2))
        z = L.ones(2, dtype=L.complex128, requires_grad=True)
        w = L.tensor([1 + 1j, 2 - 0.5j], requires_grad=True)
        L.ldexp(z, w).backward(L.tensor([1 + 2j, 0.5 - 1j], dtype=L.complex128))
        out.append([a.grad.numpy(), z.grad.numpy(), w.grad.numpy()])
    for w_, g in zip(*out):
        np.testing.assert_allclose(g, w_, rtol=1e-12)


def test_addr_complex_grad_for_real_input():
    def t(L, sh, dt, rg=False):
        return L.ones(sh, dtype=getattr(L, dt), requires_grad=rg)
    specs = [(("complex128", False), ("float64", True), ("complex128", False)),
             (("float64", True), ("float64", False), ("complex128", False)),
             (("complex128", False), ("complex128", False), ("float64", True)),
             (("complex128", False), ("float64", True), ("float64", True)),
             (("complex128", False), ("complex128", True), ("complex128", True))]
    for spec in specs:
        def run(L, spec=spec):
            args = [t(L, sh, dt, rg) for sh, (dt, rg) in zip(((2, 1), (2,), (1,)), spec)]
            r = L.addr(*args)
            r.backward(L.ones_like(r))
            return tuple(x.grad for x in args if x.grad is not None)
        _same(run)


def test_unique_nans_and_empty_dims():
    a = np.array([1.49, np.nan, 0.0, np.nan, -0.0, np.inf], dtype=np.float16)
    _same(lambda L: L.unique(L.tensor(a), return_inverse=True, return_counts=True))
    for shape in [(0,), (3, 0), (0, 3), (2, 0, 2), (0, 0), ()]:
        for dim in [None, 0, -1, 1, -2, 2]:
            for op in ("unique", "unique_consecutive"):
                kw = {} if dim is None else {"dim": dim}
                _same(lambda L: getattr(L, op)(L.zeros(shape), return_inverse=True,
                                               return_counts=True, **kw))


def test_isin_few_test_elements_view():
    base = np.arange(24).reshape(2, 3, 4) % 5

    def make(L, dt, layout, shape):
        a = L.tensor(base[:shape[0], :shape[1], :shape[2]].astype(dt))
        return {"t": a.transpose(-1, -2), "s": a[..., ::2], "p": a.permute(2, 0, 1),
                "e": a[:, :1, :1].expand(2, 3, 4), "c": a}[layout]
    for el in [2, 2.5, ("int64", 1), ("float32", 1), ("int64", 30)]:
        for dt in ["int64", "float64", "uint8"]:
            for layout in "ctspe":
                for shape in [(2, 3, 4), (2, 2, 2), (1, 3, 2)]:
                    def run(L, el=el, dt=dt, layout=layout, shape=shape):
                        e = el if not isinstance(el, tuple) else \
                            L.arange(el[1]).to(getattr(L, el[0]))
                        return L.isin(e, make(L, dt, layout, shape))
                    _same(run)


def test_copysign_unsigned_by_negative_number():
    for other in (-1, -1.0, 1, -300, True, -0.0):
        _same(lambda L: L.copysign(L.tensor([5, 0, 3], dtype=L.uint8), other))
    _same(lambda L: L.copysign(L.tensor([5, -2], dtype=L.int8), -1))


def test_copysign_inplace_checks_before_kernel():
    dts = ["float64", "float32", "int64", "uint8", "bool", "complex64", "float16"]
    for sd in dts:
        for od in dts + [-1, 2.5, 1j]:
            for oshape in [(3,), (2, 3), (4,)]:
                if not isinstance(od, str) and oshape != (3,):
                    continue

                def run(L, sd=sd, od=od, oshape=oshape):
                    o = od if not isinstance(od, str) else \
                        (-L.ones(oshape, dtype=L.float64)).to(getattr(L, od))
                    return L.ones(3, dtype=getattr(L, sd)).copysign_(o)
                _same(run)
    _same(lambda L: L.copysign(L.ones(3), L.ones(4)))


def test_ldexp_power_rounded_to_exponent_dtype():
    cases = [("float64", [1.0], "int64", [200]), ("float64", [1.0], "float16", [-1.3]),
             ("float16", [1.0], "float64", [-1.3]), ("float64", [1.0], "float32", [0.1]),
             ("complex128", [1 + 1j, float("inf")], "float32", [0.1, -1]),
             ("float32", [1.0], "bfloat16", [0.1]), ("bfloat16", [1.0], "float32", [0.1])]
    for adt, a, bdt, b in cases:
        _same(lambda L: L.ldexp(L.tensor(a, dtype=getattr(L, adt)),
                                L.tensor(b, dtype=getattr(L, bdt))))
