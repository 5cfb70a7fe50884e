"""``out=``: every ember function that takes it in torch writes its result into ``out`` with
torch's values, dtype, shape, identity and version bump; the resize warning, the dtype error,
the requires-grad error and tuple outs."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

R = np.random.RandomState(0)
A = R.rand(3, 4).astype(np.float32) + 0.5      # positive, away from 0
B = R.rand(3, 4).astype(np.float32) + 0.5
SQ = (R.rand(3, 3) + 3 * np.eye(3)).astype(np.float32)   # well conditioned
SPD = (SQ @ SQ.T).astype(np.float32)
V = R.rand(4).astype(np.float32)
W = R.rand(3).astype(np.float32)
U = (R.rand(3, 4) * 0.8 + 0.1).astype(np.float32)  # in (0, 1)
IX = np.array([[1, 6, 3], [4, 2, 7]], dtype=np.int64)
J = np.array([[5, 3, 1], [2, 6, 4]], dtype=np.int64)
BOOL = A > 1.0
B3 = R.rand(2, 3, 3).astype(np.float32)


def t(L, a):
    return L.tensor(a)


F = np.float32
# name -> (args builder, kwargs, out dtype or tuple of out dtypes (None: single float32 out))
TABLE = {
    "abs": (lambda L: (t(L, A - 1),), {}), "absolute": (lambda L: (t(L, A - 1),), {}),
    "acos": (lambda L: (t(L, U),), {}), "arccos": (lambda L: (t(L, U),), {}),
    "acosh": (lambda L: (t(L, A + 1),), {}), "asin": (lambda L: (t(L, U),), {}),
    "arcsin": (lambda L: (t(L, U),), {}), "asinh": (lambda L: (t(L, A),), {}),
    "atan": (lambda L: (t(L, A),), {}), "arctan": (lambda L: (t(L, A),), {}),
    "atanh": (lambda L: (t(L, U),), {}),
    "atan2": (lambda L: (t(L, A), t(L, B)), {}), "arctan2": (lambda L: (t(L, A), t(L, B)), {}),
    "add": (lambda L: (t(L, A), t(L, B)), {"alpha": 2}),
    "addbmm": (lambda L: (t(L, SQ), t(L, B3), t(L, B3)), {}),
    "addcdiv": (lambda L: (t(L, A), t(L, A), t(L, B)), {"value": 0.5}),
    "addcmul": (lambda L: (t(L, A), t(L, A), t(L, B)), {"value": 0.5}),
    "addmm": (lambda L: (t(L, A), t(L, SQ), t(L, A)), {}),
    "addmv": (lambda L: (t(L, W), t(L, A), t(L, V)), {}),
    "all": (lambda L: (t(L, BOOL),), {}, np.bool_), "any": (lambda L: (t(L, BOOL),), {}, np.bool_),
    "amax": (lambda L: (t(L, A), 1), {}), "amin": (lambda L: (t(L, A), 1), {}),
    "aminmax": (lambda L: (t(L, A),), {"dim": 1}, (F, F)),
    "angle": (lambda L: (t(L, A - 1),), {}),
    "arange": (lambda L: (5,), {}, np.int64),
    "baddbmm": (lambda L: (t(L, B3), t(L, B3), t(L, B3)), {}),
    "bitwise_and": (lambda L: (t(L, IX), t(L, J)), {}, np.int64),
    "bitwise_or": (lambda L: (t(L, IX), t(L, J)), {}, np.int64),
    "bitwise_xor": (lambda L: (t(L, IX), t(L, J)), {}, np.int64),
    "bitwise_not": (lambda L: (t(L, IX),), {}, np.int64),
    "bitwise_left_shift": (lambda L: (t(L, IX), 2), {}, np.int64),
    "bitwise_right_shift": (lambda L: (t(L, IX), 1), {}, np.int64),
    "bmm": (lambda L: (t(L, B3), t(L, B3)), {}),
    "bucketize": (lambda L: (t(L, A), t(L, np.array([0.7, 1.0, 1.2], np.float32))), {},
                  np.int64),
    "cat": (lambda L: ([t(L, A), t(L, B)],), {"dim": 1}),
    "concat": (lambda L: ([t(L, A), t(L, B)],), {}),
    "concatenate": (lambda L: ([t(L, A), t(L, B)],), {}),
    "ceil": (lambda L: (t(L, A * 3),), {}),
    "chain_matmul": (lambda L: (t(L, SQ), t(L, SQ), t(L, A)), {}),
    "cholesky": (lambda L: (t(L, SPD),), {}),
    "cholesky_inverse": (lambda L: (t(L, np.linalg.cholesky(SPD).astype(F)),), {}),
    "cholesky_solve": (lambda L: (t(L, A), t(L, np.linalg.cholesky(SPD).astype(F))), {}),
    "clamp": (lambda L: (t(L, A), 0.8, 1.2), {}), "clip": (lambda L: (t(L, A), 0.8, 1.2), {}),
    "clamp_max": (lambda L: (t(L, A), 1.0), {}), "clamp_min": (lambda L: (t(L, A), 1.0), {}),
    "column_stack": (lambda L: ([t(L, W), t(L, A)],), {}),
    "complex": (lambda L: (t(L, A), t(L, B)), {}, np.complex64),
    "conj_physical": (lambda L: (t(L, A),), {}),
    "cos": (lambda L: (t(L, A),), {}), "cosh": (lambda L: (t(L, A),), {}),
    "cross": (lambda L: (t(L, A[:, :3]), t(L, B[:, :3])), {"dim": 1}),
    "cummax": (lambda L: (t(L, A), 1), {}, (F, np.int64)),
    "cummin": (lambda L: (t(L, A), 1), {}, (F, np.int64)),
    "cumprod": (lambda L: (t(L, A), 1), {}), "cumsum": (lambda L: (t(L, A), 1), {}),
    "diag": (lambda L: (t(L, A),), {}),
    "digamma": (lambda L: (t(L, A),), {}),
    "div": (lambda L: (t(L, A), t(L, B)), {"rounding_mode": "floor"}),
    "divide": (lambda L: (t(L, A), t(L, B)), {}),
    "true_divide": (lambda L: (t(L, A), t(L, B)), {}),
    "dot": (lambda L: (t(L, V), t(L, V)), {}), "vdot": (lambda L: (t(L, V), t(L, V)), {}),
    "dstack": (lambda L: ([t(L, A), t(L, B)],), {}),
    "eq": (lambda L: (t(L, A), t(L, A)), {}, np.bool_),
    "ne": (lambda L: (t(L, A), t(L, B)), {}, np.bool_),
    "not_equal": (lambda L: (t(L, A), t(L, B)), {}, np.bool_),
    "ge": (lambda L: (t(L, A), t(L, B)), {}, np.bool_),
    "gt": (lambda L: (t(L, A), t(L, B)), {}, np.bool_),
    "le": (lambda L: (t(L, A), t(L, B)), {}, np.bool_),
    "lt": (lambda L: (t(L, A), t(L, B)), {}, F),    # a bool result into a float out
    "greater": (lambda L: (t(L, A), t(L, B)), {}, np.bool_),
    "greater_equal": (lambda L: (t(L, A), t(L, B)), {}, np.bool_),
    "less": (lambda L: (t(L, A), t(L, B)), {}, np.bool_),
    "less_equal": (lambda L: (t(L, A), t(L, B)), {}, np.bool_),
    "erf": (lambda L: (t(L, A),), {}), "erfc": (lambda L: (t(L, A),), {}),
    "erfinv": (lambda L: (t(L, U),), {}),
    "exp": (lambda L: (t(L, A),), {}, np.float64),     # float32 result into a float64 out
    "exp2": (lambda L: (t(L, A),), {}), "expm1": (lambda L: (t(L, A),), {}),
    "eye": (lambda L: (3,), {}), "full": (lambda L: ((2, 3), 1.5), {}),
    "ones": (lambda L: (2, 3), {}, np.int64), "zeros": (lambda L: (2, 3), {}),
    "fix": (lambda L: (t(L, A * 3),), {}), "trunc": (lambda L: (t(L, A * 3),), {}),
    "float_power": (lambda L: (t(L, A), 2), {}, np.float64),
    "floor": (lambda L: (t(L, A * 3),), {}),
    "floor_divide": (lambda L: (t(L, A * 3), t(L, B)), {}),
    "fmax": (lambda L: (t(L, A), t(L, B)), {}), "fmin": (lambda L: (t(L, A), t(L, B)), {}),
    "fmod": (lambda L: (t(L, A * 3), t(L, B)), {}),
    "remainder": (lambda L: (t(L, A * 3), t(L, B)), {}),
    "frac": (lambda L: (t(L, A * 3),), {}),
    "gather": (lambda L: (t(L, A), 1, t(L, np.array([[0, 1], [2, 3], [1, 1]]))), {}),
    "hstack": (lambda L: ([t(L, A), t(L, B)],), {}),
    "vstack": (lambda L: ([t(L, A), t(L, B)],), {}),
    "row_stack": (lambda L: ([t(L, A), t(L, B)],), {}),
    "stack": (lambda L: ([t(L, A), t(L, B)],), {"dim": 1}),
    "hypot": (lambda L: (t(L, A), t(L, B)), {}),
    "i0": (lambda L: (t(L, A),), {}),
    "igamma": (lambda L: (t(L, A), t(L, B)), {}), "igammac": (lambda L: (t(L, A), t(L, B)), {}),
    "index_select": (lambda L: (t(L, A), 1, t(L, np.array([0, 2]))), {}),
    "inner": (lambda L: (t(L, A), t(L, B)), {}),
    "inverse": (lambda L: (t(L, SQ),), {}),
    "isneginf": (lambda L: (t(L, A),), {}, np.bool_),
    "isposinf": (lambda L: (t(L, A),), {}, np.bool_),
    "kron": (lambda L: (t(L, W), t(L, V)), {}),
    "kthvalue": (lambda L: (t(L, A), 2, 1), {}, (F, np.int64)),
    "lerp": (lambda L: (t(L, A), t(L, B), 0.3), {}),
    "lgamma": (lambda L: (t(L, A),), {}),
    "linspace": (lambda L: (0, 1, 5), {}), "logspace": (lambda L: (0, 1, 5), {}),
    "log": (lambda L: (t(L, A),), {}), "log10": (lambda L: (t(L, A),), {}),
    "log1p": (lambda L: (t(L, A),), {}), "log2": (lambda L: (t(L, A),), {}),
    "logaddexp": (lambda L: (t(L, A), t(L, B)), {}),
    "logaddexp2": (lambda L: (t(L, A), t(L, B)), {}),
    "logical_and": (lambda L: (t(L, A), t(L, B - 1)), {}, np.bool_),
    "logical_or": (lambda L: (t(L, A), t(L, B)), {}, np.bool_),
    "logical_xor": (lambda L: (t(L, A), t(L, B)), {}, np.bool_),
    "logical_not": (lambda L: (t(L, BOOL),), {}, np.bool_),
    "logit": (lambda L: (t(L, U),), {}),
    "logsumexp": (lambda L: (t(L, A), 1), {}),
    "logcumsumexp": (lambda L: (t(L, A), 1), {}),
    "masked_select": (lambda L: (t(L, A), t(L, BOOL)), {}),
    "matmul": (lambda L: (t(L, SQ), t(L, A)), {}), "mm": (lambda L: (t(L, SQ), t(L, A)), {}),
    "mv": (lambda L: (t(L, A), t(L, V)), {}),
    "matrix_power": (lambda L: (t(L, SQ), 3), {}),
    "max": (lambda L: (t(L, A), 1), {}, (F, np.int64)),
    "min": (lambda L: (t(L, A), 1), {}, (F, np.int64)),
    "maximum": (lambda L: (t(L, A), t(L, B)), {}), "minimum": (lambda L: (t(L, A), t(L, B)), {}),
    "mean": (lambda L: (t(L, A), 1), {}), "nanmean": (lambda L: (t(L, A), 1), {}),
    "sum": (lambda L: (t(L, A), 1), {}), "nansum": (lambda L: (t(L, A), 1), {}),
    "prod": (lambda L: (t(L, A), 1), {}),
    "median": (lambda L: (t(L, A), 1), {}, (F, np.int64)),
    "nanmedian": (lambda L: (t(L, A), 1), {}, (F, np.int64)),
    "mode": (lambda L: (t(L, np.round(A)), 1), {}, (F, np.int64)),
    "sort": (lambda L: (t(L, A), 1), {}, (F, np.int64)),
    "topk": (lambda L: (t(L, A), 2), {}, (F, np.int64)),
    "msort": (lambda L: (t(L, A),), {}),
    "mul": (lambda L: (t(L, A), t(L, B)), {}), "multiply": (lambda L: (t(L, A), t(L, B)), {}),
    "sub": (lambda L: (t(L, A), t(L, B)), {}), "subtract": (lambda L: (t(L, A), t(L, B)), {}),
    "mvlgamma": (lambda L: (t(L, A + 2), 2), {}),
    "nan_to_num": (lambda L: (t(L, A),), {}),
    "neg": (lambda L: (t(L, A),), {}), "negative": (lambda L: (t(L, A),), {}),
    "nonzero": (lambda L: (t(L, BOOL),), {}, np.int64),
    "norm": (lambda L: (t(L, A),), {}),
    "outer": (lambda L: (t(L, W), t(L, V)), {}), "ger": (lambda L: (t(L, W), t(L, V)), {}),
    "polar": (lambda L: (t(L, A), t(L, B)), {}, np.complex64),
    "polygamma": (lambda L: (1, t(L, A)), {}),
    "pow": (lambda L: (t(L, A), 2.5), {}),
    "quantile": (lambda L: (t(L, A), 0.3), {"dim": 1}),
    "nanquantile": (lambda L: (t(L, A), 0.3), {"dim": 1}),
    "reciprocal": (lambda L: (t(L, A),), {}), "round": (lambda L: (t(L, A * 3),), {}),
    "rsqrt": (lambda L: (t(L, A),), {}), "sqrt": (lambda L: (t(L, A),), {}),
    "square": (lambda L: (t(L, A),), {}),
    "searchsorted": (lambda L: (t(L, np.array([0.7, 1.0, 1.2], np.float32)), t(L, A)), {},
                     np.int64),
    "sgn": (lambda L: (t(L, A - 1),), {}), "sign": (lambda L: (t(L, A - 1),), {}),
    "signbit": (lambda L: (t(L, A - 1),), {}, np.bool_),
    "sigmoid": (lambda L: (t(L, A),), {}),
    "sin": (lambda L: (t(L, A),), {}), "sinc": (lambda L: (t(L, A),), {}),
    "sinh": (lambda L: (t(L, A),), {}), "tan": (lambda L: (t(L, A),), {}),
    "tanh": (lambda L: (t(L, A),), {}),
    "std": (lambda L: (t(L, A), 1), {}), "var": (lambda L: (t(L, A), 1), {}),
    "take": (lambda L: (t(L, A), t(L, np.array([0, 5, 11]))), {}),
    "take_along_dim": (lambda L: (t(L, A), t(L, np.array([[0], [1], [3]])), 1), {}),
    "tensordot": (lambda L: (t(L, A), t(L, B.T.copy())), {"dims": 1}),
    "tril": (lambda L: (t(L, A),), {}), "triu": (lambda L: (t(L, A),), {}),
    "where": (lambda L: (t(L, BOOL), t(L, A), t(L, B)), {}),
    "xlogy": (lambda L: (t(L, A), t(L, B)), {}),
    "gcd": (lambda L: (t(L, IX), t(L, J)), {}, np.int64),
    "lcm": (lambda L: (t(L, IX), t(L, J)), {}, np.int64),
    "heaviside": (lambda L: (t(L, A - 1), t(L, B)), {}),
    "isin": (lambda L: (t(L, IX), t(L, J)), {}, np.bool_),
    "ldexp": (lambda L: (t(L, A), t(L, IX[0, :3].reshape(3, 1).repeat(4, 1))), {}),
    "nextafter": (lambda L: (t(L, A), t(L, B)), {}),
    "frexp": (lambda L: (t(L, A),), {}, (F, np.int32)),
    "range": (lambda L: (0, 4), {}),
    "slogdet": (lambda L: (t(L, SQ),), {}, (F, F)),
}
RANDOM = {"bernoulli", "multinomial", "normal", "rand", "randint", "randn", "randperm", "empty"}
LINALG_SIGNS = {"lu", "qr", "svd", "geqrf", "orgqr", "ormqr", "lu_solve", "lu_unpack",
                "triangular_solve"}

_torch_np = {np.float32: torch.float32, np.float64: torch.float64, np.int64: torch.int64,
             np.int32: torch.int32, np.bool_: torch.bool, np.complex64: torch.complex64}
_ember_np = {np.float32: ember.float32, np.float64: ember.float64, np.int64: ember.int64,
             np.int32: ember.int32, np.bool_: ember.bool, np.complex64: ember.complex64}


def _outs(L, dtypes, nonempty):
    table = _torch_np if L is torch else _ember_np
    shape = (0,)
    if isinstance(dtypes, tuple):
        return tuple(L.empty(shape, dtype=table[d]) for d in dtypes)
    return L.empty(shape, dtype=table[dtypes])


def _np(x):
    x = x.detach() if hasattr(x, "detach") else x
    return np.asarray(x.tolist()) if x.dtype not in (torch.complex64,) and \
        x.dtype != ember.complex64 else np.asarray(x.numpy())


def _cases():
    return [n for n, v in TABLE.items() if v is not None]


@pytest.mark.parametrize("name", _cases())
def test_out_matches_torch(name):
    if not hasattr(ember, name):
        pytest.skip("ember has no %s" % name)
    build, kwargs, *rest = TABLE[name]
    dtypes = rest[0] if rest else F
    res = []
    for L in (torch, ember):
        out = _outs(L, dtypes, False)
        versions = [o._version for o in (out if isinstance(out, tuple) else (out,))]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = getattr(L, name)(*build(L), **kwargs, out=out)
        outs = out if isinstance(out, tuple) else (out,)
        rs = tuple(r) if isinstance(out, tuple) else (r,)
        assert all(a is b for a, b in zip(rs, outs)), name
        if L is ember:
            assert all(o._version > v for o, v in zip(outs, versions)), name
        res.append([(tuple(o.shape), str(o.dtype).split(".")[-1], _np(o)) for o in outs])
    for (ts, td, tv), (es, ed, ev) in zip(*res):
        assert ts == es and td == ed, (name, ts, es, td, ed)
        np.testing.assert_allclose(ev, tv, rtol=1e-5, atol=1e-5, err_msg=name)


def _torch_takes_out(name):
    """Whether ``torch.<name>`` accepts ``out=`` (its signature in torch's override table or
    its docstring)."""
    import inspect
    import re
    from torch.overrides import get_testing_overrides
    f = getattr(torch, name)
    lam = get_testing_overrides().get(f)
    if lam is not None:
        try:
            if "out" in inspect.signature(lam).parameters:
                return True
        except (TypeError, ValueError):
            pass
    doc = f.__doc__ if isinstance(getattr(f, "__doc__", None), str) else ""
    return bool(re.search(r"\bout=", doc) or "out (Tensor" in doc or "out (tuple" in doc)


# torch's override table or docstring says ``out`` but torch rejects it.
_NOT_OUT = {"conj", "diag_embed", "empty_like", "full_like", "imag", "positive", "real",
            "resolve_conj", "resolve_neg", "squeeze", "unsqueeze", "rand_like", "randn_like",
            "empty_strided", "std_mean", "var_mean", "zeros_like", "ones_like", "trace"}


def test_every_out_function_is_covered():
    from ember.ops._out import OUT_NAMES
    missing = []
    for name in dir(torch):
        if name.startswith("_") or name in _NOT_OUT or not hasattr(ember, name):
            continue
        f = getattr(torch, name)
        if not callable(f) or isinstance(f, type) or not _torch_takes_out(name):
            continue
        if name not in OUT_NAMES:
            missing.append(name)
        elif name not in TABLE and name not in RANDOM and name not in LINALG_SIGNS:
            _generic_check(name)
    assert not missing, missing


def _generic_check(name):
    """A function missing from TABLE: called with one or two float tensors where torch accepts
    that, ``out`` compared with torch's."""
    for args in ((A,), (A, B)):
        try:
            ref = getattr(torch, name)(*[torch.tensor(a) for a in args], out=torch.empty(0))
        except Exception:     # noqa: BLE001  (other arguments needed: not checked here)
            continue
        out = ember.empty(0)
        r = getattr(ember, name)(*[ember.tensor(a) for a in args], out=out)
        assert r is out, name
        assert tuple(out.shape) == tuple(ref.shape), name
        np.testing.assert_allclose(_np(out), _np(ref), rtol=1e-5, atol=1e-5, err_msg=name)
        return


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_random_out_shape_dtype(name):
    args = {"bernoulli": lambda L: (t(L, U),), "multinomial": lambda L: (t(L, A), 2),
            "normal": lambda L: (t(L, A), t(L, B)), "rand": lambda L: (2, 3),
            "randint": lambda L: (5, (2, 3)), "randn": lambda L: (2, 3),
            "randperm": lambda L: (5,), "empty": lambda L: (2, 3)}[name]
    dt = {"multinomial": np.int64, "randint": np.int64, "randperm": np.int64}.get(name, F)
    res = []
    for L in (torch, ember):
        out = _outs(L, dt, False)
        r = getattr(L, name)(*args(L), out=out)
        assert r is out
        res.append((tuple(out.shape), str(out.dtype).split(".")[-1]))
    assert res[0] == res[1]


@pytest.mark.parametrize("name", sorted(LINALG_SIGNS))
def test_linalg_out_shapes(name):
    """Decompositions (signs may differ): ``out`` gets torch's shapes and dtypes."""
    if not hasattr(ember, name):
        pytest.skip("ember has no %s" % name)
    lu_t = torch.linalg.lu_factor(torch.tensor(SQ))
    args = {"lu": lambda L: (t(L, SQ),), "qr": lambda L: (t(L, A),), "svd": lambda L: (t(L, A),),
            "geqrf": lambda L: (t(L, A),),
            "orgqr": lambda L: (t(L, A.T.copy()), t(L, np.array([1.5, 1.2, 1.1], F))),
            "ormqr": lambda L: (t(L, SQ), t(L, np.array([1.5, 1.2, 1.1], F)), t(L, A)),
            "lu_solve": lambda L: (t(L, A), t(L, lu_t.LU.numpy()), t(L, lu_t.pivots.numpy())),
            "lu_unpack": lambda L: (t(L, lu_t.LU.numpy()), t(L, lu_t.pivots.numpy())),
            "triangular_solve": lambda L: (t(L, A), t(L, np.triu(SQ)))}[name]
    res = []
    for L in (torch, ember):
        r0 = getattr(L, name)(*args(L))
        if isinstance(r0, tuple):
            out = tuple(L.empty(0, dtype=x.dtype) for x in r0)
        else:
            out = L.empty(0, dtype=r0.dtype)
        r = getattr(L, name)(*args(L), out=out)
        outs = out if isinstance(out, tuple) else (out,)
        assert all(a is b for a, b in zip(r if isinstance(out, tuple) else (r,), outs))
        res.append([tuple(o.shape) for o in outs])
    assert res[0] == res[1]


def _both(fn):
    """``fn(L)`` for torch and ember: (exception class, message) or the result."""
    got = []
    for L in (torch, ember):
        try:
            got.append(("ok", fn(L)))
        except Exception as e:     # noqa: BLE001
            got.append((type(e).__name__, str(e)))
    return got


def test_resize_warning():
    for L in (torch, ember):
        out = L.empty(3)
        with pytest.warns(UserWarning, match=r"An output with one or more elements was resized "
                          r"since it had shape \[3\], which does not match the required output "
                          r"shape \[3, 4\]"):
            r = L.add(t(L, A), t(L, B), out=out)
        assert r is out and tuple(out.shape) == (3, 4)
        out = L.empty(0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            L.add(t(L, A), t(L, B), out=out)     # zero elements: resized silently
        assert tuple(out.shape) == (3, 4)


def test_same_shape_writes_into_memory():
    for L in (torch, ember):
        base = L.zeros(2, 3, 4)
        out = base[1]
        L.mul(t(L, A), 2, out=out)
        np.testing.assert_allclose(_np(base[1]), A * 2, rtol=1e-6)
        assert float(base[0].sum()) == 0


def test_dtype_errors():
    t1, e1 = _both(lambda L: L.add(t(L, A), t(L, B), out=L.empty(0, dtype=L.int64)))
    assert t1 == e1 and t1[1] == "result type Float can't be cast to the desired output type Long"
    t2, e2 = _both(lambda L: L.abs(t(L, A.astype(np.complex64)), out=L.empty(0, dtype=L.int64)))
    assert t2[0] == e2[0] == "ok" or t2 == e2
    t3, e3 = _both(lambda L: L.eq(t(L, IX), t(L, J), out=L.empty(0, dtype=L.float32)).dtype)
    assert t3[0] == e3[0] == "ok"
    t4, e4 = _both(lambda L: L.max(t(L, A), 1, out=(L.empty(0), L.empty(0))))
    assert t4 == e4, (t4, e4)
    t5, e5 = _both(lambda L: L.add(t(L, IX), 1, out=L.empty(0, dtype=L.bool)))
    assert t5 == e5, (t5, e5)


def test_requires_grad_error():
    msg = ("%s(): functions with out=... arguments don't support automatic differentiation, "
           "but one of the arguments requires grad.")
    for name, fn in [("add", lambda L, a: L.add(a, a, out=L.empty(0))),
                     ("abs", lambda L, a: L.absolute(a, out=L.empty(0))),
                     ("clamp", lambda L, a: L.clip(a, 0, 1, out=L.empty(0))),
                     ("cat", lambda L, a: L.cat([a, a], out=L.empty(0))),
                     ("sum", lambda L, a: L.sum(a, 0, out=L.empty(0))),
                     ("max", lambda L, a: L.max(a, 0, out=(L.empty(0),
                                                           L.empty(0, dtype=L.int64))))]:
        got = _both(lambda L: fn(L, t(L, A).requires_grad_()))
        assert got[0] == got[1] == ("RuntimeError", msg % name), got
    # an out that requires grad, and no_grad (allowed)
    got = _both(lambda L: L.add(t(L, A), 1, out=L.empty(3, 4, requires_grad=True)))
    assert got[0] == got[1] == ("RuntimeError", msg % "add")
    for L in (torch, ember):
        a = t(L, A).requires_grad_()
        with L.no_grad():
            out = L.exp(a, out=L.empty(0))
        assert not out.requires_grad and out.grad_fn is None


def test_out_type_errors():
    t1, e1 = _both(lambda L: L.add(t(L, A), 1, out=[1]))
    assert t1 == e1 == ("TypeError", "add(): argument 'out' must be Tensor, not list")


def test_tuple_outs_return_named_tuples():
    for L in (torch, ember):
        v, i = L.empty(0), L.empty(0, dtype=L.int64)
        r = L.sort(t(L, A), 1, out=(v, i))
        assert r[0] is v and r[1] is i and r.values is v and r.indices is i
        r = L.topk(t(L, A), 2, out=(v, i))
        assert r.values is v and r.indices is i and tuple(v.shape) == (3, 2)


def test_factory_takes_out_dtype():
    for L in (torch, ember):
        out = L.empty(0, dtype=L.int64)
        assert L.zeros(2, 3, out=out) is out and out.dtype == L.int64
        out = L.empty(0, dtype=L.float64)
        assert L.arange(3, out=out) is out and out.dtype == L.float64
        assert out.tolist() == [0.0, 1.0, 2.0]


def test_tensor_methods_stay_fast_paths():
    """Operators are bound to the op functions (no out= handling on the hot path)."""
    a = ember.ones(2)
    assert (a + a).tolist() == [2.0, 2.0]
