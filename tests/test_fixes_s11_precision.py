"""Regression tests (against torch) for session 11's precision and autocast fixes: half and
bfloat16 products and convolutions rounded once (bias and alpha/beta in float32), ops that
autocast casts before their dtype checks, RNN dtype checks under autocast, matmul's batch
broadcast error, and the window functions' argument overloads."""
import json
import sys
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

LOW = ("bfloat16", "float16")


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _rand(shape, dtype, seed, t_major=False):
    """The same values in both libraries (rounded to ``dtype``); ``t_major``: a 2-d matrix laid
    out column-major (the transpose of a contiguous one)."""
    gen = np.random.default_rng(seed)
    if t_major:
        arr = gen.standard_normal(shape[::-1]).astype(np.float32)
        t = torch.tensor(arr).to(getattr(torch, dtype)).t()
        e = ember.tensor(arr).to(getattr(ember, dtype)).t()
        return t, e
    arr = gen.standard_normal(shape).astype(np.float32)
    return torch.tensor(arr).to(getattr(torch, dtype)), ember.tensor(arr).to(getattr(ember, dtype))


def _np(t):
    return np.asarray(t.detach().float().tolist())


def _same(t, e):
    assert str(t.dtype) == str(e.dtype)
    a, b = _np(t), _np(e)
    assert a.shape == b.shape
    assert np.array_equal(a, b, equal_nan=True), int((a != b).sum())


def _err(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


def _skip_slow_half(dtype, same_anyway=False):
    """torch runs float16 convolutions on oneDNN (one rounding, which ember reproduces) only
    where the CPU has fp16 support (AVX512-FP16 or AVX2-VNNI-2); elsewhere its slow kernels
    round the GEMM's columns, col2im's sums and the bias apart, which ember does not copy."""
    from ember.ops.conv import _cpu_has
    if dtype == "float16" and not same_anyway and not _cpu_has("fp16"):
        pytest.skip("torch's float16 convolution is not on oneDNN on this CPU (slow kernels)")


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("op", ["conv1d", "conv2d", "conv3d", "conv_transpose1d",
                                "conv_transpose2d", "conv_transpose3d"])
@pytest.mark.parametrize("bias", [True, False])
def test_low_precision_conv_rounds_once(dtype, op, bias):
    _skip_slow_half(dtype, op in ("conv1d", "conv2d"))
    nd = int(op[-2])
    spatial = (6, 5, 4)[:nd]
    x = _rand((2, 3) + spatial, dtype, 1)
    w_shape = (3, 4) if "transpose" in op else (4, 3)
    w = _rand(w_shape + (2, 3, 2)[:nd], dtype, 2)
    b = _rand((4,), dtype, 3) if bias else (None, None)
    t = getattr(torch.nn.functional, op)(x[0], w[0], b[0])
    e = getattr(ember.nn.functional, op)(x[1], w[1], b[1])
    _same(t, e)


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("op", ["conv2d", "conv_transpose2d"])
def test_low_precision_conv_gradients_round_once(dtype, op):
    _skip_slow_half(dtype)
    res = {}
    w_shape = (3, 4, 3, 3) if "transpose" in op else (4, 3, 3, 3)
    for lib, k in ((torch, 0), (ember, 1)):
        x = _rand((2, 3, 6, 6), dtype, 4)[k].requires_grad_()
        w = _rand(w_shape, dtype, 5)[k].requires_grad_()
        b = _rand((4,), dtype, 6)[k].requires_grad_()
        y = getattr(lib.nn.functional, op)(x, w, b)
        g = _rand(tuple(y.shape), dtype, 7)[k]
        y.backward(g)
        res[lib] = (y, x.grad, w.grad, b.grad)
    for t, e in zip(res[torch], res[ember]):
        _same(t, e)


def test_fuzzer_bfloat16_conv_transpose2d_class():
    sys.path.insert(0, "tests")
    from fuzz import ops as fz
    case = ["F", "conv_transpose2d", [["T", [2, 3, 4, 5], "bfloat16", "u", "s", False],
                                      ["T", [3, 2, 3, 3], "bfloat16", "u", "s", True]],
            {}, 1500065]
    assert fz.check_case(fz.case_from_json(json.loads(json.dumps(case)))) is None


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0, 1), (1, 2)])
def test_low_precision_addmm_linear_round_once(dtype, beta, alpha):
    a, m1, m2 = _rand((32, 24), dtype, 1), _rand((32, 16), dtype, 2), _rand((16, 24), dtype, 3)
    _same(torch.addmm(a[0], m1[0], m2[0], beta=beta, alpha=alpha),
          ember.addmm(a[1], m1[1], m2[1], beta=beta, alpha=alpha))
    w, b = _rand((24, 16), dtype, 4), _rand((24,), dtype, 5)
    _same(torch.nn.functional.linear(m1[0], w[0], b[0]),
          ember.nn.functional.linear(m1[1], w[1], b[1]))


@pytest.mark.parametrize("dtype", LOW)
def test_low_precision_baddbmm_rounds_once(dtype):
    a, b1, b2 = (_rand((4, 8, 8), dtype, 1), _rand((4, 8, 16), dtype, 2),
                 _rand((4, 16, 8), dtype, 3))
    for beta, alpha in ((1, 1), (0.7, 1.3)):
        _same(torch.baddbmm(a[0], b1[0], b2[0], beta=beta, alpha=alpha),
              ember.baddbmm(a[1], b1[1], b2[1], beta=beta, alpha=alpha))


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("shape", [(32, 16), (5, 7), (64, 300)])
@pytest.mark.parametrize("col_major", [False, True])
def test_low_precision_addmv_matches_torch_kernels(dtype, shape, col_major):
    # (torch's own gemv loop up to 4096 matrix entries, oneDNN above)
    m = _rand(shape, dtype, 1, t_major=col_major)
    v, c = _rand(shape[1:], dtype, 2), _rand(shape[:1], dtype, 3)
    for beta, alpha in ((1, 1), (0.7, 1.3), (0, 1.3)):
        _same(torch.addmv(c[0], m[0], v[0], beta=beta, alpha=alpha),
              ember.addmv(c[1], m[1], v[1], beta=beta, alpha=alpha))


def test_large_bfloat16_mm_keeps_its_dtype():
    a, b = _rand((128, 130), "bfloat16", 1), _rand((130, 129), "bfloat16", 2)
    t, e = torch.mm(a[0], b[0]), ember.mm(a[1], b[1])
    assert str(t.dtype) == str(e.dtype)
    np.testing.assert_allclose(_np(e), _np(t), rtol=1e-2, atol=1e-2)
    res = {}
    for lib, k in ((torch, 0), (ember, 1)):
        w = _rand((130, 129), "bfloat16", 3, t_major=True)[k].requires_grad_()
        x = a[k].detach().requires_grad_()
        (x @ w).sum().backward()
        res[lib] = (x.grad, w.grad)
    for t, e in zip(res[torch], res[ember]):
        # (long float32 sums: a last bit may differ with the summation order)
        assert str(t.dtype) == str(e.dtype)
        np.testing.assert_allclose(_np(e), _np(t), rtol=1e-2, atol=1e-2)


_AUTOCAST_CASES = {
    "cdist": lambda L, a, b, x3, vol: L.cdist(a.bfloat16(), b),
    "avg_pool3d": lambda L, a, b, x3, vol: L.nn.functional.avg_pool3d(vol.bfloat16(), 2),
    "quantile": lambda L, a, b, x3, vol: L.quantile(a.bfloat16(), 0.5),
    "quantile_q": lambda L, a, b, x3, vol: L.quantile(a.bfloat16(), L.tensor([0.25, 0.5])),
    "nanquantile": lambda L, a, b, x3, vol: L.nanquantile(a.bfloat16(), 0.5, dim=0),
    "fft": lambda L, a, b, x3, vol: L.fft.fft(a.bfloat16()),
    "rfft2": lambda L, a, b, x3, vol: L.fft.rfft2(a.bfloat16()),
    "irfft": lambda L, a, b, x3, vol: L.fft.irfft(a.bfloat16()),
    "index_copy": lambda L, a, b, x3, vol: L.index_copy(a.bfloat16(), 0, L.tensor([0, 2]),
                                                        b[:2]),
    "addbmm": lambda L, a, b, x3, vol: L.addbmm(a, x3, x3),
    "addbmm_mixed": lambda L, a, b, x3, vol: L.addbmm(a.bfloat16(), x3, x3),
    "einsum": lambda L, a, b, x3, vol: L.einsum("ij,jk->ik", a, a),
    "einsum_chain": lambda L, a, b, x3, vol: L.einsum("ij,jk,kl->il", a, a, a),
    "einsum_dot": lambda L, a, b, x3, vol: L.einsum("i,i->", a[0], a[1]),
    "einsum_outer": lambda L, a, b, x3, vol: L.einsum("i,j->ij", a[0], a[1]),
    "einsum_diag": lambda L, a, b, x3, vol: L.einsum("ii->i", a),
}


@pytest.mark.parametrize("name", sorted(_AUTOCAST_CASES))
def test_ops_cast_by_autocast_before_their_checks(name):
    res = {}
    for lib in (torch, ember):
        vals = [_rand(s, "float32", i)[0 if lib is torch else 1]
                for i, s in enumerate(((4, 4), (3, 4), (2, 4, 4), (1, 1, 4, 4, 4)))]
        with lib.autocast("cpu", dtype=lib.bfloat16):
            out = _AUTOCAST_CASES[name](lib, *vals)
        res[lib] = out
    t, e = res[torch], res[ember]
    assert str(t.dtype) == str(e.dtype)
    assert tuple(t.shape) == tuple(e.shape)
    if t.is_complex():
        t, e = torch.view_as_real(t), ember.view_as_real(e)
    np.testing.assert_allclose(_np(e), _np(t), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
def test_rnn_dtype_check_skipped_under_autocast(mode):
    res = {}
    for lib in (torch, ember):
        lib.manual_seed(0)
        m = getattr(lib.nn, mode)(4, 3)
        x = _rand((2, 5, 4), "bfloat16", 1)[0 if lib is torch else 1]
        with lib.autocast("cpu", dtype=lib.bfloat16):
            out = m(x)[0]
        res[lib] = (str(out.dtype), tuple(out.shape), _err(lambda: m(x)))
    assert res[torch] == res[ember]


@pytest.mark.parametrize("sa,sb", [((3, 4, 2, 2), (2, 2, 2, 2)), ((3, 2, 2), (4, 2, 2)),
                                   ((5, 3, 1, 2, 2), (2, 4, 2, 2)),
                                   ((3, 2, 2), (2, 2, 2, 2)), ((3, 4, 2, 5), (2, 5, 1))])
def test_matmul_batch_broadcast_error(sa, sb):
    errs = [_err(lambda: lib.matmul(lib.ones(sa), lib.ones(sb))) for lib in (torch, ember)]
    assert errs[0] == errs[1]
    assert errs[0][1].startswith("The size of tensor a")
    errs = [_err(lambda: lib.ones(sa) @ lib.ones(sb).requires_grad_()) for lib in (torch, ember)]
    assert errs[0] == errs[1]


@pytest.mark.parametrize("call", [
    "kaiser_window(6, beta=8.0)", "kaiser_window(6, 8.0)", "kaiser_window(6, True, 8.0)",
    "kaiser_window(6, periodic=False, beta=8.0)", "kaiser_window(6, False)",
    "kaiser_window(6, beta=8.0, dtype=lib.float64)", "kaiser_window(6, True, beta=8.0)",
    "hamming_window(6, alpha=0.5)", "hamming_window(6, beta=0.5)",
    "hamming_window(6, True, beta=0.4)", "hamming_window(6, True, 0.5, 0.4)",
    "hamming_window(6, alpha=0.5, beta=0.4)", "hamming_window(6, False, alpha=0.5)",
    "hann_window(6, 1)", "hann_window(6, 1.0)", "hann_window(6, periodic=False)",
    "blackman_window(6, False)", "bartlett_window(6, 0)", "kaiser_window(6)",
])
def test_window_argument_overloads(call):
    res = []
    for lib in (torch, ember):
        try:
            out = eval("lib." + call, {"lib": lib})
            res.append(("ok", str(out.dtype), np.round(_np(out), 5).tolist()))
        except TypeError as e:
            res.append(("TypeError", str(e)))
    assert res[0] == res[1]


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.7, 1.3), (0, 2)])
def test_low_precision_addbmm_rounds_per_batch(dtype, beta, alpha):
    # (torch's addbmm is a loop of addmm_ calls: each batch's sum is rounded)
    inp, b1, b2 = (_rand((8, 8), dtype, 1), _rand((4, 8, 16), dtype, 2),
                   _rand((4, 16, 8), dtype, 3))
    _same(torch.addbmm(inp[0], b1[0], b2[0], beta=beta, alpha=alpha),
          ember.addbmm(inp[1], b1[1], b2[1], beta=beta, alpha=alpha))
    row = _rand((8,), dtype, 4)
    _same(torch.addbmm(row[0], b1[0], b2[0], beta=beta, alpha=alpha),
          ember.addbmm(row[1], b1[1], b2[1], beta=beta, alpha=alpha))
