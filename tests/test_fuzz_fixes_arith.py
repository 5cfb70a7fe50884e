"""Regression tests (against torch) for the arithmetic, creation and legacy-Tensor mismatches
found by the differential fuzzer: complex add/sub as torch's ``a + alpha * b`` (inf parts of
``b`` make NaN), alpha checks, bool subtraction, ``Tensor.new``/``resize``/``resize_as``,
``eye``/``randint``/``randint_like``/``empty_strided`` argument errors, and ``binomial``
(torch's CPU sampler, bit for bit)."""
import itertools
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

INF, NAN = float("inf"), float("nan")


def _run(L, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", fn(L)
        except Exception as e:  # noqa: BLE001
            return "raise", (type(e).__name__, str(e))


def _norm(x):
    if hasattr(x, "detach"):
        x = x.detach()
        return (str(x.dtype), tuple(x.shape), x.numpy())
    if isinstance(x, (tuple, list)):
        return [_norm(v) for v in x]
    return x


def same(fn, values=True):
    """``fn(torch)`` and ``fn(ember)`` agree: the same error (class and message), or results of
    the same dtypes and shapes (and values, NaN where NaN, unless ``values`` is False)."""
    kt, rt = _run(torch, fn)
    ke, re_ = _run(ember, fn)
    assert kt == ke, (rt, re_)
    if kt == "raise":
        assert rt == re_
        return
    _check_equal(_norm(rt), _norm(re_), values)


def _check_equal(a, b, values):
    if isinstance(a, tuple) and len(a) == 3 and isinstance(a[2], np.ndarray):
        assert a[:2] == b[:2]
        if values:
            np.testing.assert_array_equal(a[2], b[2])
    elif isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _check_equal(x, y, values)
    else:
        assert a == b


def _operands(L):
    return {"b": L.tensor([True, False]), "i": L.tensor([1, 2]),
            "u": L.tensor([1, 200], dtype=L.uint8), "f": L.tensor([1.5, INF]),
            "c": L.tensor([1 + 1j, complex(INF, 0)]), "c2": L.tensor([complex(1, INF), NAN]),
            "s1": 1, "sf": 2.5, "sb": True, "sc": 1j, "sinf": INF}


_OPS = {"add": lambda L, a, b, al: L.add(a, b, alpha=al),
        "sub": lambda L, a, b, al: L.sub(a, b, alpha=al),
        "rsub": lambda L, a, b, al: L.rsub(a, b, alpha=al),
        "add_": lambda L, a, b, al: a.clone().add_(b, alpha=al),
        "sub_": lambda L, a, b, al: a.clone().sub_(b, alpha=al)}


@pytest.mark.parametrize("op", sorted(_OPS))
def test_add_sub_alpha_grid(op):
    """Every dtype pair and alpha kind: torch's values (NaN from inf parts of a complex
    ``alpha * b``), result dtypes and errors (alpha checks, bool subtraction, casts)."""
    fn = _OPS[op]
    for a, b, al in itertools.product("biufc", ["b", "i", "u", "f", "c", "c2", "s1", "sf", "sb",
                                                "sc", "sinf"],
                                      (1, 1.0, 2, 2.5, True, False, 1j, -1, 0)):
        same(lambda L: fn(L, _operands(L)[a], _operands(L)[b], al))


@pytest.mark.parametrize("expr", [
    lambda L, a: L.add(1, a), lambda L, a: L.add(0.5, a), lambda L, a: L.sub(0.5, a),
    lambda L, a: 1 - a, lambda L, a: a + INF, lambda L, a: a - INF, lambda L, a: a + 1,
    lambda L, a: L.add(complex(INF, 0), L.tensor([1.0, 2.0])),
    lambda L, a: L.rsub(L.tensor([INF, 1.0]), 1j), lambda L, a: L.add(a, INF, alpha=1j),
    lambda L, a: L.tensor([1.0, 2, 3, 4]) + a, lambda L, a: L.sub(True, L.ones(2)),
    lambda L, a: L.subtract(False, L.ones(2, dtype=L.bool))])
def test_complex_sum_nan_rule(expr):
    def fn(L):
        a = L.tensor([1 + 1j, complex(INF, 1), complex(1, INF), complex(NAN, 0)],
                     dtype=L.complex64)
        return expr(L, a)
    same(fn)


def test_add_sub_graph_and_grad():
    for L in (torch, ember):
        x = L.tensor([1.0 + 1j, 2.0], requires_grad=True)
        y = L.add(x, 2, alpha=2) + L.sub(x, L.ones(2), alpha=3)
        assert type(y.grad_fn).__name__ == "AddBackward0"
    same(lambda L: _grad(L, lambda x: L.add(x, 2, alpha=2) * L.sub(x, 1, alpha=1j)))


def _grad(L, f):
    x = L.tensor([1.0 + 1j, 2.0 - 0.5j], requires_grad=True)
    f(x).abs().sum().backward()
    return x.grad


@pytest.mark.parametrize("i", range(22))
def test_tensor_new(i):
    def fn(L):
        x = L.ones(2, 3)
        t = L.ones(2, requires_grad=True)
        calls = [lambda: x.new(t), lambda: x.new(L.ones(2, dtype=L.int32)),
                 lambda: x.new(2.5), lambda: x.new(1j), lambda: x.new(True),
                 lambda: x.new([1, 2]), lambda: x.new((2, 3)), lambda: x.new(L.Size([2, 3])),
                 lambda: x.new(2, -1), lambda: x.new(2, dtype=L.int64), lambda: x.new(2.5, 3),
                 lambda: x.new(None), lambda: x.new(x, 2),
                 lambda: L.ones(2, dtype=L.complex64).new(L.ones(2, dtype=L.int32)),
                 lambda: x.new(device="cpu"), lambda: x.new(L.ones(2), device="cpu"),
                 lambda: x.new(L.tensor(3)), lambda: x.new(2, 3.0), lambda: x.new(2, True),
                 lambda: x.new(()), lambda: x.new(np.float64(2)), lambda: x.new(np.int64(2))]
        out = calls[i]()
        return (str(out.dtype), tuple(out.shape), out.requires_grad,
                type(out.grad_fn).__name__)
    same(fn)


def test_tensor_new_alias_grad():
    def fn(L):
        t = L.tensor([1.0, 2.0], requires_grad=True)
        y = L.ones(3).new(t)
        (y * L.tensor([3.0, 4.0])).sum().backward()
        return t.grad
    same(fn)


@pytest.mark.parametrize("i", range(14))
def test_resize(i):
    def fn(L):
        x = L.arange(6.0).reshape(2, 3).requires_grad_()
        calls = [lambda: x.resize(3, 2), lambda: x.resize((3, 2)), lambda: x.resize([3, 2]),
                 lambda: x.resize(6), lambda: x.resize(4), lambda: x.resize(),
                 lambda: x.resize(-1, 2), lambda: x.resize(-2, -3), lambda: x.t().resize(3, 2),
                 lambda: x.resize_as(L.ones(3, 2)), lambda: L.ones(1).resize_as(L.ones(())),
                 lambda: L.ones(()).resize_as(L.ones(1)), lambda: x.detach().resize(2.0, 3),
                 lambda: L.ones(0).resize(0, 3)]
        out = calls[i]()
        return (out.detach().numpy().tolist(), out.requires_grad, type(out.grad_fn).__name__)
    same(fn)


def test_resize_backward():
    def fn(L):
        x = L.arange(6.0).reshape(2, 3).requires_grad_()
        x.resize(3, 2).backward(L.arange(6.0).reshape(3, 2))
        return x.grad
    same(fn)


@pytest.mark.parametrize("args", [(-2, 0.5), (2, 0.5), (0.5,), (0.5, 2), (True,), (2, True),
                                  (-2, -3), (2, 3)])
def test_eye_argument_errors(args):
    same(lambda L: L.eye(*args))


@pytest.mark.parametrize("call", [
    lambda L: L.bernoulli(L.ones(2, dtype=L.complex64), -2),
    lambda L: L.bernoulli(L.ones(0, dtype=L.complex64), -2),
    lambda L: L.bernoulli(L.ones(2, dtype=L.complex64), 0.5),
    lambda L: L.ones(2, dtype=L.complex128).bernoulli(-2)])
def test_bernoulli_checks_p_first(call):
    same(call)


@pytest.mark.parametrize("call", [
    lambda L: L.randint_like(L.ones(2, dtype=L.complex128), 1),
    lambda L: L.randint_like(L.ones(2, dtype=L.complex128), 0),
    lambda L: L.randint_like(L.ones(0, dtype=L.complex64), 1),
    lambda L: L.randint(0, 3, (2,), dtype=L.complex64),
    lambda L: L.randint_like(L.ones(2), 1.5), lambda L: L.randint_like(L.ones(2), 0, 1.5),
    lambda L: L.randint_like(L.ones(2), True), lambda L: L.randint_like(L.ones(2), L.tensor(3)),
    lambda L: L.randint(5, 1.5, ()), lambda L: L.randint(0, 3, 2), lambda L: L.randint(3),
    lambda L: L.randint(2.5, (2,)), lambda L: L.randint(3, [2.0]),
    lambda L: L.randint(3, size=(2,)), lambda L: L.randint(3, (2,), 5),
    lambda L: L.empty_strided((0, 3), (-1, 1)), lambda L: L.empty_strided((2, 3), (-1, 1)),
    lambda L: L.empty_strided((2, 3), (1,)), lambda L: L.empty_strided((1, 3), (-1, 1)),
    lambda L: L.ones(2).new_empty_strided((2, 3), (1, -1))])
def test_random_and_empty_argument_checks(call):
    same(call, values=False)


# binomial: torch's CPU sampler (BTRS / inversion on its mt19937 stream), value for value

_BINOMIAL_CASES = [
    ([5.0, 10, 100], [0.3, 0.5, 0.9]), ([0.0, 0, 3, 7], [0.5, 0.0, 1.0, -0.5]),
    ([1000.0, 1e6, 50, 20, 25], [0.3, 0.01, 0.99, 0.5, 0.6]), ([3.5, -1, 40], [0.5, 0.5, 1.5]),
    ([1e7, 12345, 77, 9], [0.4999, 0.123456, 0.87654, NAN])]


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("k", range(len(_BINOMIAL_CASES)))
def test_binomial_bit_exact(dt, k):
    counts, probs = _BINOMIAL_CASES[k]
    for seed in range(6):
        def fn(L):
            L.manual_seed(seed)
            c = L.tensor(counts * 4, dtype=getattr(L, dt))
            p = L.tensor(probs * 4, dtype=getattr(L, dt))
            return L.binomial(c, p), L.rand(2)      # (the stream after the sample too)
        same(fn)


def test_binomial_random_parameters_bit_exact():
    rng = np.random.default_rng(1)
    for it in range(12):
        c = rng.integers(0, [60, 5000, 10 ** 7][it % 3], 30).astype(float)
        p = rng.uniform(0, 1, 30)
        for dt in ("float32", "float64"):
            def fn(L):
                g = L.Generator().manual_seed(it)
                return L.binomial(L.tensor(c, dtype=getattr(L, dt)),
                                  L.tensor(p, dtype=getattr(L, dt)), generator=g)
            same(fn)


@pytest.mark.parametrize("call", [
    lambda L: L.binomial(L.ones(3), L.ones(3).double()),
    lambda L: L.binomial(L.ones(3).long(), L.ones(3)),
    lambda L: L.binomial(L.ones(3), L.ones(3).bool()),
    lambda L: L.binomial(L.ones(3).half(), L.ones(3).half()),
    lambda L: L.binomial(L.ones(3), L.ones(2)), lambda L: L.binomial(L.ones(3), 0.5),
    lambda L: L.binomial(5, L.ones(3)), lambda L: L.binomial(L.ones(3), L.ones(3), generator=5),
    lambda L: L.binomial(L.ones(0), L.ones(0)), lambda L: L.binomial(L.ones(2, 3), L.ones(3)),
    lambda L: L.binomial(L.ones(3), L.ones(2, 3)),
    lambda L: L.binomial(L.ones(3).to(L.complex64), L.ones(3))])
def test_binomial_checks(call):
    same(call, values=False)


def test_binomial_not_differentiable():
    def fn(L):
        c = L.tensor([5.0, 6.0], requires_grad=True)
        p = L.tensor([0.5, 0.5], requires_grad=True)
        out = L.binomial(c, p)
        names = (type(out.grad_fn).__name__, len(out.grad_fn.next_functions))
        out.sum().backward()
        return names
    same(fn)
    assert callable(ember.binomial)


@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16", "int64", "uint8",
                                "int8", "int32"])
def test_linspace_values_are_torchs(dt):
    # torch's CPU kernel: start + step * i for the first half, end - step * (n - 1 - i) for
    # the rest, as fused multiply-adds (each operation rounded for float16/bfloat16; integers
    # in double from the dtype's start and end, truncated)
    import numpy as np
    rng = np.random.default_rng(1)
    cases = [(-1, 1, 7), (0, 1, 10), (0.3, 7.1, 13), (-3.3, 2.2, 100), (1e-3, 5, 1000),
             (2, -7, 55), (5, 9, 1), (3, 3, 0)]
    cases += [(float(a), float(b), int(n)) for a, b, n in
              zip(rng.uniform(-100, 100, 20), rng.uniform(-100, 100, 20),
                  rng.integers(2, 2000, 20))]
    for a, b, n in cases:
        try:
            want = torch.linspace(a, b, n, dtype=getattr(torch, dt)).float().numpy()
        except RuntimeError:
            with pytest.raises(RuntimeError):
                ember.linspace(a, b, n, dtype=getattr(ember, dt))
            continue
        got = ember.linspace(a, b, n, dtype=getattr(ember, dt)).float().numpy()
        np.testing.assert_array_equal(got, want, err_msg="%r" % ((a, b, n),))
