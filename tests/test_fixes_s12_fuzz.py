"""Regression tests for session 12's fuzz fixes (seeds 17-18) and leftovers, against torch."""
import operator
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _outcome(lib, fn):
    """(type name, dtype, shape, values) of ``fn(lib)``, or the exception class's name."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(lib)
    except Exception as e:  # noqa: BLE001 (the class is compared)
        return ("raise", type(e).__name__)
    if not hasattr(r, "dtype"):
        return ("value", r)     # (e.g. ``t != a``: Python's identity fallback)
    v = r.detach().float() if str(r.dtype).endswith("bfloat16") else r.detach()
    return (type(r).__name__, str(r.dtype).split(".")[-1], tuple(r.shape),
            np.asarray(v.numpy()).astype(complex).round(4).tolist())


_OPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
        operator.mod, operator.pow, operator.lt, operator.eq, operator.ne]
_ARRAYS = [np.array(1.5), np.array(2), np.array(True), np.ones(3), np.array(1.5, np.float32),
           np.array(2, np.int32), np.array(1 + 1j), np.float64(1.5), np.int64(2),
           np.float32(2.5)]


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float16", "uint8"])
@pytest.mark.parametrize("op", _OPS, ids=lambda o: o.__name__)
def test_numpy_operand_operators(dtype, op):
    # torch leaves ``t op a`` to NumPy (its promotion: a 0-d float64 array makes float64), and
    # ``a op t`` raises TypeError for every operator but ==/!=.
    for arr in _ARRAYS:
        if dtype == "float16" and arr.dtype.kind == "c" and op in (operator.eq, operator.ne):
            continue    # (torch's complex32 result: ember holds no complex32, by design)
        for flip in (False, True):
            def fn(lib, arr=arr, flip=flip):
                t = lib.tensor([1, 2, 3]).to(getattr(lib, dtype))
                return op(arr, t) if flip else op(t, arr)
            assert _outcome(ember, fn) == _outcome(torch, fn), (dtype, op, repr(arr), flip)


@pytest.mark.parametrize("name", ["iadd", "isub", "imul", "itruediv", "ifloordiv", "imod",
                                  "ipow"])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
@pytest.mark.parametrize("arr", [np.array(1.5), np.array(2), np.ones(3), np.float64(2.0)],
                         ids=repr)
def test_numpy_operand_inplace_operators(name, dtype, arr):
    # torch's ``t += a`` with an array is ``t = t + a`` (a new tensor, NumPy's dtype; t kept)
    def run(lib):
        t = lib.tensor([1, 2, 3]).to(getattr(lib, dtype))
        before, keep = id(t), t
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = getattr(operator, name)(t, arr)
        except Exception as e:  # noqa: BLE001
            return ("raise", type(e).__name__, keep.tolist())
        return (id(t) == before, str(t.dtype).split(".")[-1], t.tolist(), keep.tolist())
    assert run(ember) == run(torch)


def test_numpy_operand_requires_grad_refused():
    for lib in (ember, torch):
        t = lib.ones(3, requires_grad=True)
        for op in (operator.add, operator.mul, operator.truediv, operator.pow):
            with pytest.raises(RuntimeError, match="Can't call numpy"):
                op(t, np.array(2.0))
        with pytest.raises(RuntimeError, match="Can't call numpy"):
            t2 = t * 1
            t2 += np.ones(3)


def test_numpy_operand_zero_dim_tensor():
    fn = lambda lib: lib.tensor(2.0) + np.array(1.5)  # noqa: E731
    assert _outcome(ember, fn) == _outcome(torch, fn)
    fn = lambda lib: np.ones(3) / lib.tensor([1, 2, 4])  # noqa: E731
    assert _outcome(ember, fn) == _outcome(torch, fn)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float16", "bfloat16"])
@pytest.mark.parametrize("num", [np.float64(1.5), np.int64(2), np.float32(2.0)],
                         ids=repr)
def test_numpy_number_acts_as_python_number(dtype, num):
    # a NumPy number is a Python number for torch (no NumPy promotion): pow and integer div
    for op in (operator.pow, operator.truediv, operator.mul):
        def fn(lib, op=op):
            return op(lib.tensor([1, 2, 3]).to(getattr(lib, dtype)), num)
        assert _outcome(ember, fn) == _outcome(torch, fn), (op, dtype, repr(num))


def test_numpy_number_gradient_dtype():
    for op in (operator.pow, operator.truediv, operator.mul):
        grads = []
        for lib in (ember, torch):
            t = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
            op(t, np.float64(2.5)).sum().backward()
            grads.append((str(t.grad.dtype).split(".")[-1], t.grad.numpy().round(5).tolist()))
        assert grads[0] == grads[1]


@pytest.mark.parametrize("dim", [None, 0, 1, 2, -1])
@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float32"])
def test_prod_gradient_with_zeros_and_infinities(dim, dtype):
    # torch's gradient with zeros present: exclusive products as cumprod of [1, x0, x1, ...], so
    # a complex infinity times that 1 already has a NaN imaginary part (the known fuzz case)
    x = np.array([[[-1.07123 + 1.16012j, 0, 0.29442 + 1.63882j]],
                  [[-np.inf, -1.91973 - 0.42892j, 1.692 + 0.87864j]]])
    if dtype == "float32":
        x = x.real
    x = x.astype(dtype)
    rng = np.random.default_rng(0)
    res = []
    for lib in (ember, torch):
        t = lib.tensor(x, requires_grad=True)
        out = t.prod() if dim is None else t.prod(dim)
        g = rng.standard_normal(tuple(out.shape)) + (1j if dtype != "float32" else 0) * \
            rng.standard_normal(tuple(out.shape))
        rng = np.random.default_rng(0)
        out.backward(lib.tensor(np.asarray(g).astype(dtype)))
        res.append(np.asarray(t.grad.numpy()))
    np.testing.assert_allclose(res[0], res[1], rtol=1e-5, atol=1e-6, equal_nan=True)
    assert (np.isinf(res[0]) == np.isinf(res[1])).all()
    if dtype != "float32":
        assert (np.isnan(res[0].imag) == np.isnan(res[1].imag)).all()
        assert (np.isnan(res[0].real) == np.isnan(res[1].real)).all()
